"""Cache, snapshot and queue copies (what ``Scheduler.fork()`` starts from): copy-on-write
NodeInfos, and neither copy sees the other's later changes."""

from __future__ import annotations

from schedframe.cache import Cache, Snapshot
from schedframe.framework import NodeInfo
from schedframe.objects import Node, Pod
from schedframe.testing.builders import make_node, make_pod


def _node(name: str, *images: str) -> Node:
    wrapper = make_node(name).capacity(cpu="8", memory="8Gi", pods=110)
    for image in images:
        wrapper = wrapper.image(image, 10)
    return wrapper.obj()


def _pod(name: str, node: str, cpu: str = "1", *, anti: bool = False) -> Pod:
    wrapper = make_pod(name).req(cpu=cpu).label("app", name).node(node)
    if anti:
        wrapper = wrapper.pod_anti_affinity("kubernetes.io/hostname", {"app": "other"})
    return wrapper.obj()


def _state(cache: Cache, snapshot: Snapshot) -> list[object]:
    """What the cache and the snapshot hold, by value."""
    cache.update_snapshot(snapshot)
    columns = snapshot.columns()
    return [
        {
            name: (sorted(p.pod.key for p in info.pods), info.requested, info.node)
            for name, info in cache.dump().nodes.items()
        },
        sorted(cache.dump().assumed_pods),
        [(i.name, sorted(p.pod.key for p in i.pods), i.requested) for i in snapshot.list()],
        [i.name for i in snapshot.have_pods_with_affinity_list()],
        [i.name for i in snapshot.have_pods_with_required_anti_affinity_list()],
        columns.requested_cpu.tolist(),
        {n: sorted(s.items()) for n, s in ((i.name, i.image_states) for i in snapshot.list())},
    ]


def _built() -> tuple[Cache, Snapshot]:
    cache = Cache()
    for name in ("b", "a", "c"):
        cache.add_node(_node(name, "img"))
    cache.add_pod(_pod("p1", "a", anti=True))
    cache.add_pod(_pod("p2", "b"))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    snapshot.columns()
    cache.assume_pod(_pod("p3", "c"))  # after the snapshot: the copy has it to catch up on
    return cache, snapshot


def _copy(cache: Cache, snapshot: Snapshot) -> tuple[Cache, Snapshot]:
    cache2, snapshot2 = Cache(), Snapshot()
    cache2.copy_state(cache)
    snapshot2.copy_state(snapshot)
    return cache2, snapshot2


def test_a_copy_holds_the_same_and_shares_node_infos_until_written() -> None:
    cache, snapshot = _built()
    cache2, snapshot2 = _copy(cache, snapshot)
    assert cache2._nodes["a"] is cache._nodes["a"]
    assert snapshot2.get("a") is snapshot.get("a")
    assert _state(cache2, snapshot2) == _state(cache, snapshot)


def test_changes_to_the_copy_leave_the_original_as_it_was() -> None:
    cache, snapshot = _built()
    cache2, snapshot2 = _copy(cache, snapshot)
    before = _state(cache, snapshot)
    cache2.remove_pod(_pod("p1", "a", anti=True))
    cache2.add_pod(_pod("p4", "b", "3"))
    cache2.forget_pod(_pod("p3", "c"))
    cache2.update_node(_node("b", "img"), _node("b", "img", "other"))
    cache2.remove_node(_node("c", "img"))
    cache2.add_node(_node("d", "img"))
    after = _state(cache2, snapshot2)
    assert _state(cache, snapshot) == before
    assert after != before
    assert [i.name for i in snapshot2.have_pods_with_required_anti_affinity_list()] == []
    assert snapshot2.get("a") is not snapshot.get("a")


def test_changes_to_the_original_leave_the_copy_as_it_was() -> None:
    cache, snapshot = _built()
    cache2, snapshot2 = _copy(cache, snapshot)
    before = _state(cache2, snapshot2)
    cache.add_pod(_pod("p5", "a", "2", anti=True))
    cache.remove_pod(_pod("p2", "b"))
    cache.add_node(_node("e", "img"))  # the image's node count changes on every node
    _state(cache, snapshot)
    assert _state(cache2, snapshot2) == before
    # The original's side lists point at its own copy of the node it changed.
    (anti,) = snapshot.have_pods_with_required_anti_affinity_list()
    assert anti is snapshot.get("a") and anti is not snapshot2.get("a")


def test_each_node_info_is_copied_once_per_side() -> None:
    cache, snapshot = _built()
    cache2, _ = _copy(cache, snapshot)
    shared = cache._nodes["b"]
    cache2.add_pod(_pod("p6", "b"))
    own = cache2._nodes["b"]
    assert own is not shared and isinstance(own, NodeInfo)
    cache2.add_pod(_pod("p7", "b"))
    assert cache2._nodes["b"] is own  # its own now: changed in place
    assert sorted(p.pod.name for p in shared.pods) == ["p2"]
