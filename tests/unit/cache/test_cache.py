"""Cache cases ported from upstream ``pkg/scheduler/backend/cache/cache_test.go``."""

from __future__ import annotations

from collections.abc import Callable

import attrs
import pytest

from schedframe.cache import Cache, CacheError, Snapshot
from schedframe.framework import ImageStateSummary, NodeInfo
from schedframe.objects import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodCondition,
    PodSpec,
    Taint,
    Volume,
)

MB = 1024 * 1024
DEFAULT_CPU = 100
DEFAULT_MEM = 200 * MB


# -- builders (upstream st.MakePod / makeBasePod) ---------------------------------------------


def base_pod(
    node: str,
    name: str,
    cpu: int | None = None,
    mem: int | None = None,
    extended: dict[str, int] | None = None,
    ports: tuple[ContainerPort, ...] = (),
) -> Pod:
    requests: dict[str, int] = {}
    if cpu is not None:
        requests["cpu"] = cpu
        requests["memory"] = mem or 0
        requests.update(extended or {})
    return Pod(
        metadata=ObjectMeta(name=name, namespace="node_info_cache_test", uid=name),
        spec=PodSpec(
            node_name=node,
            containers=(
                Container(name="container", image="pause", requests=requests, ports=ports),
            ),
        ),
    )


def port(host_port: int, host_ip: str = "127.0.0.1", protocol: str = "TCP") -> ContainerPort:
    return ContainerPort(
        container_port=host_port, host_port=host_port, host_ip=host_ip, protocol=protocol
    )


def make_pod(
    name: str,
    node: str,
    *,
    uid: str | None = None,
    affinity: bool = False,
    pvc: str | None = None,
    priority: int | None = None,
    requests: dict[str, int] | None = None,
) -> Pod:
    spec = PodSpec(
        node_name=node,
        priority=priority,
        containers=(Container(name="c", requests=requests or {}),),
        volumes=(Volume(name="v", persistent_volume_claim=pvc),) if pvc else (),
        affinity=Affinity(
            pod_affinity=PodAffinity(
                required=(
                    PodAffinityTerm(
                        label_selector=LabelSelector(
                            match_expressions=(
                                LabelSelectorRequirement(key="foo", operator="Exists"),
                            )
                        ),
                        topology_key="",
                    ),
                )
            )
        )
        if affinity
        else None,
    )
    return Pod(metadata=ObjectMeta(name=name, namespace="test-ns", uid=uid or name), spec=spec)


def make_node(
    name: str,
    *,
    allocatable: dict[str, int] | None = None,
    images: dict[str, int] | None = None,
    labels: dict[str, str] | None = None,
    taints: tuple[Taint, ...] = (),
) -> Node:
    return Node(
        metadata=ObjectMeta(name=name, uid=name, labels=labels or {}),
        spec=NodeSpec(taints=taints),
        status=NodeStatus(
            capacity=dict(allocatable or {}),
            allocatable=dict(allocatable or {}),
            images=tuple(
                ContainerImage(names=(n,), size_bytes=size) for n, size in (images or {}).items()
            ),
        ),
    )


def describe(info: NodeInfo | None) -> dict[str, object] | None:
    """The comparable content of a NodeInfo (upstream compares with cmp.Diff, sans generation)."""
    if info is None:
        return None
    return {
        "node": info.node,
        "pods": sorted(p.pod.uid for p in info.pods),
        "pod_objects": sorted((p.pod.uid, id(p.pod)) for p in info.pods),
        "affinity": sorted(p.pod.uid for p in info.pods_with_affinity),
        "anti_affinity": sorted(p.pod.uid for p in info.pods_with_required_anti_affinity),
        "requested": {k: v for k, v in info.requested.items() if v},
        "non_zero_requested": {k: v for k, v in info.non_zero_requested.items() if v},
        "used_ports": sorted(info.used_ports),
        "allocatable": dict(info.allocatable),
        "image_states": dict(info.image_states),
        "pvc_ref_counts": dict(info.pvc_ref_counts),
    }


def expected_info(
    pods: list[Pod],
    requested: dict[str, int],
    non_zero: dict[str, int],
    ports: list[tuple[str, str, int]],
    node: Node | None = None,
    images: dict[str, ImageStateSummary] | None = None,
) -> dict[str, object] | None:
    info = NodeInfo(node, pods)
    info.image_states = images or {}
    out = describe(info)
    assert out is not None
    assert out["requested"] == requested
    assert out["non_zero_requested"] == non_zero
    assert out["used_ports"] == sorted(ports)
    return out


def assert_forgotten(cache: Cache, pod: Pod) -> None:
    assert not cache.is_assumed_pod(pod)
    assert cache.get_pod(pod.uid) is None


# -- TestAssumePodScheduled ---------------------------------------------------------------------

NODE = "node"
ASSUME_PODS = [
    base_pod(NODE, "test-resource-request-and-port-0", 100, 500, ports=(port(80),)),
    base_pod(NODE, "test-resource-request-and-port-1", 100, 500, ports=(port(80),)),
    base_pod(NODE, "test-resource-request-and-port-2", 200, 1024, ports=(port(8080),)),
    base_pod(NODE, "test-nonzero-request", ports=(port(80),)),
    base_pod(NODE, "test-extended-resource-1", 100, 500, {"example.com/foo": 3}, (port(80),)),
    base_pod(NODE, "test-extended-resource-2", 200, 1024, {"example.com/foo": 5}, (port(8080),)),
]


@pytest.mark.parametrize(
    ("pods", "requested", "non_zero", "ports"),
    [
        pytest.param(
            [ASSUME_PODS[0]],
            {"cpu": 100, "memory": 500},
            {"cpu": 100, "memory": 500},
            [("127.0.0.1", "TCP", 80)],
            id="assumed one pod with resource request and used ports",
        ),
        pytest.param(
            [ASSUME_PODS[1], ASSUME_PODS[2]],
            {"cpu": 300, "memory": 1524},
            {"cpu": 300, "memory": 1524},
            [("127.0.0.1", "TCP", 80), ("127.0.0.1", "TCP", 8080)],
            id="node requested resource are equal to the sum of the assumed pods requested "
            "resource, node contains host ports defined by pods",
        ),
        pytest.param(
            [ASSUME_PODS[3]],
            {},
            {"cpu": DEFAULT_CPU, "memory": DEFAULT_MEM},
            [("127.0.0.1", "TCP", 80)],
            id="assumed pod without resource request",
        ),
        pytest.param(
            [ASSUME_PODS[4]],
            {"cpu": 100, "memory": 500, "example.com/foo": 3},
            {"cpu": 100, "memory": 500},
            [("127.0.0.1", "TCP", 80)],
            id="assumed one pod with extended resource",
        ),
        pytest.param(
            [ASSUME_PODS[4], ASSUME_PODS[5]],
            {"cpu": 300, "memory": 1524, "example.com/foo": 8},
            {"cpu": 300, "memory": 1524},
            [("127.0.0.1", "TCP", 80), ("127.0.0.1", "TCP", 8080)],
            id="assumed two pods with extended resources",
        ),
    ],
)
def test_assume_pod_scheduled(
    pods: list[Pod],
    requested: dict[str, int],
    non_zero: dict[str, int],
    ports: list[tuple[str, str, int]],
) -> None:
    cache = Cache()
    for pod in pods:
        cache.assume_pod(pod)
        # pod already in cache so can't be assumed
        with pytest.raises(CacheError, match="is in the cache, so can't be assumed"):
            cache.assume_pod(pod)
    assert describe(cache.get_node_info(NODE)) == expected_info(pods, requested, non_zero, ports)
    for pod in pods:
        cache.forget_pod(pod)
        assert_forgotten(cache, pod)
    assert cache.get_node_info(NODE) is None  # no Node and no pods: gone


def test_assume_pod_error_message() -> None:
    cache = Cache()
    pod = ASSUME_PODS[0]
    cache.assume_pod(pod)
    with pytest.raises(CacheError) as info:
        cache.assume_pod(pod)
    assert str(info.value) == (
        "pod test-resource-request-and-port-0(node_info_cache_test/"
        "test-resource-request-and-port-0) is in the cache, so can't be assumed"
    )


def test_assume_pod_without_node_is_refused() -> None:
    with pytest.raises(CacheError, match="has no node name"):
        Cache().assume_pod(base_pod("", "p"))


# -- TestAddPodWillConfirm / TestDump ---------------------------------------------------------


def test_add_pod_will_confirm() -> None:
    """Two pods were assumed at the same time, but only the first is Add()ed and confirmed."""
    pods = [
        base_pod(NODE, "test-1", 100, 500, ports=(port(80),)),
        base_pod(NODE, "test-2", 200, 1024, ports=(port(8080),)),
    ]
    cache = Cache()
    for pod in pods:
        cache.assume_pod(pod)
    cache.add_pod(pods[0])
    # pod already in added state
    with pytest.raises(CacheError, match="was already in added state"):
        cache.add_pod(pods[0])
    for pod in pods:
        if cache.is_assumed_pod(pod):
            cache.forget_pod(pod)
    assert describe(cache.get_node_info(NODE)) == expected_info(
        [pods[0]],
        {"cpu": 100, "memory": 500},
        {"cpu": 100, "memory": 500},
        [("127.0.0.1", "TCP", 80)],
    )


def test_dump() -> None:
    pods = [
        base_pod(NODE, "test-1", 100, 500, ports=(port(80),)),
        base_pod(NODE, "test-2", 200, 1024, ports=(port(80),)),
    ]
    cache = Cache()
    for pod in pods:
        cache.assume_pod(pod)
    cache.add_pod(pods[0])
    dump = cache.dump()
    assert set(dump.nodes) == {NODE}
    assert cache.node_count() == len(dump.nodes)
    assert describe(dump.nodes[NODE]) == describe(cache.get_node_info(NODE))
    assert dump.assumed_pods == {"test-2"}
    # A dump is a copy: changing the cache afterwards leaves it alone.
    cache.forget_pod(pods[1])
    assert len(dump.nodes[NODE].pods) == 2


def test_add_pod_always_updates_pod_info_in_node_info() -> None:
    p1 = base_pod("node1", "test-1", 100, 500, ports=(port(80, host_ip=""),))
    p2 = p1.with_condition(PodCondition(type="PodScheduled", status="True"))
    cache = Cache()
    cache.assume_pod(p1)
    cache.add_pod(p2)
    info = cache.get_node_info("node1")
    assert info is not None
    assert [p.pod for p in info.pods] == [p2]
    assert describe(info) == expected_info(
        [p2], {"cpu": 100, "memory": 500}, {"cpu": 100, "memory": 500}, [("0.0.0.0", "TCP", 80)]
    )


def test_add_pod_will_replace_assumed() -> None:
    assumed = base_pod("assumed-node-1", "test-1", 100, 500, ports=(port(80, host_ip=""),))
    added = base_pod("actual-node", "test-1", 100, 500, ports=(port(80, host_ip=""),))
    updated = base_pod("actual-node", "test-1", 200, 500, ports=(port(90, host_ip=""),))
    cache = Cache()
    cache.assume_pod(assumed)
    cache.add_pod(added)
    cache.update_pod(added, updated)
    assert cache.get_node_info("assumed-node-1") is None
    assert describe(cache.get_node_info("actual-node")) == expected_info(
        [updated],
        {"cpu": 200, "memory": 500},
        {"cpu": 200, "memory": 500},
        [("0.0.0.0", "TCP", 90)],
    )
    assert not cache.is_assumed_pod(updated)


# -- TestUpdatePod / TestUpdatePodAndGet ------------------------------------------------------


def test_update_pod() -> None:
    """Add a pod and then update it twice."""
    pods = [
        base_pod(NODE, "test", 100, 500, ports=(port(80),)),
        base_pod(NODE, "test", 200, 1024, ports=(port(8080),)),
    ]
    to_update = [pods[0], pods[1], pods[0]]
    want = [
        expected_info(
            [pods[1]],
            {"cpu": 200, "memory": 1024},
            {"cpu": 200, "memory": 1024},
            [("127.0.0.1", "TCP", 8080)],
        ),
        expected_info(
            [pods[0]],
            {"cpu": 100, "memory": 500},
            {"cpu": 100, "memory": 500},
            [("127.0.0.1", "TCP", 80)],
        ),
    ]
    cache = Cache()
    cache.add_pod(pods[0])
    for j in range(1, len(to_update)):
        cache.update_pod(to_update[j - 1], to_update[j])
        assert describe(cache.get_node_info(NODE)) == want[j - 1], f"update {j}"


@pytest.mark.parametrize(
    ("update", "assume"),
    [
        pytest.param(0, True, id="do not update pod when pod information has not changed"),
        pytest.param(1, False, id="update  pod when pod information changed"),
    ],
)
def test_update_pod_and_get(update: int, assume: bool) -> None:
    pods = [
        base_pod(NODE, "test", 100, 500, ports=(port(80),)),
        base_pod(NODE, "test", 200, 1024, ports=(port(8080),)),
    ]
    pod, to_update = pods[0], pods[update]
    cache = Cache()
    # an unknown pod can be neither got nor updated
    assert cache.get_pod(to_update.uid) is None
    with pytest.raises(CacheError, match="is not added to scheduler cache, so cannot be updated"):
        cache.update_pod(pod, to_update)
    if assume:
        cache.assume_pod(pod)
    else:
        cache.add_pod(pod)
        cache.update_pod(pod, to_update)
    assert cache.get_pod(pod.uid) is to_update


def test_update_assumed_pod_is_refused() -> None:
    cache = Cache()
    pod = base_pod(NODE, "test", 100, 500)
    cache.assume_pod(pod)
    with pytest.raises(CacheError) as info:
        cache.update_pod(pod, pod)
    assert str(info.value) == "assumed pod test(node_info_cache_test/test) should not be updated"


def test_update_pod_to_another_node_is_corruption() -> None:
    cache = Cache()
    pod = base_pod(NODE, "test", 100, 500)
    cache.add_pod(pod)
    with pytest.raises(CacheError, match="Scheduler cache is corrupted"):
        cache.update_pod(pod, pod.with_node_name("elsewhere"))


# -- TestEphemeralStorageResource / TestRemovePod / TestForgetPod ------------------------------


def test_ephemeral_storage_resource() -> None:
    pod = Pod(
        metadata=ObjectMeta(
            name="pod-with-ephemeral-storage",
            namespace="default-namespace",
            uid="pod-with-ephemeral-storage",
        ),
        spec=PodSpec(
            node_name=NODE,
            containers=(Container(name="c", requests={"ephemeral-storage": 500}),),
        ),
    )
    cache = Cache()
    cache.add_pod(pod)
    assert describe(cache.get_node_info(NODE)) == expected_info(
        [pod], {"ephemeral-storage": 500}, {"cpu": DEFAULT_CPU, "memory": DEFAULT_MEM}, []
    )
    cache.remove_pod(pod)
    assert cache.get_pod(pod.uid) is None


@pytest.mark.parametrize(
    "assume", [pytest.param(False, id="bound"), pytest.param(True, id="assumed")]
)
def test_remove_pod(assume: bool) -> None:
    pod = base_pod("node-1", "test", 100, 500, ports=(port(80),))
    nodes = [make_node("node-1"), make_node("node-2")]
    cache = Cache()
    # Add/Assume pod succeeds even before adding the nodes.
    if assume:
        cache.assume_pod(pod)
    else:
        cache.add_pod(pod)
    assert describe(cache.get_node_info("node-1")) == expected_info(
        [pod], {"cpu": 100, "memory": 500}, {"cpu": 100, "memory": 500}, [("127.0.0.1", "TCP", 80)]
    )
    for n in nodes:
        cache.add_node(n)
    cache.remove_pod(pod)
    assert cache.get_pod(pod.uid) is None
    # removing a pod already removed is an error
    with pytest.raises(CacheError) as info:
        cache.remove_pod(pod)
    assert str(info.value) == (
        "pod test(node_info_cache_test/test) is not found in scheduler cache, so cannot be "
        "removed from it"
    )
    # The node that owned the pod is at the head of the list.
    assert cache._recency()[0] == "node-1"


def test_remove_pod_with_stale_empty_node_name() -> None:
    """A missed delete hands over the last known state, possibly without nodeName."""
    cache = Cache()
    pod = base_pod(NODE, "test", 100, 500)
    cache.add_pod(pod)
    cache.remove_pod(pod.with_node_name(""))
    assert cache.get_pod(pod.uid) is None


def test_remove_pod_from_another_node_is_corruption() -> None:
    cache = Cache()
    pod = base_pod(NODE, "test", 100, 500)
    cache.add_pod(pod)
    with pytest.raises(CacheError, match="Scheduler cache is corrupted"):
        cache.remove_pod(pod.with_node_name("elsewhere"))
    assert cache.get_pod(pod.uid) is pod


def test_forget_pod() -> None:
    pod = base_pod(NODE, "test", 100, 500, ports=(port(80),))
    cache = Cache()
    cache.assume_pod(pod)
    assert cache.is_assumed_pod(pod)
    assumed = cache.get_pod(pod.uid)
    assert assumed is not None
    assert (assumed.namespace, assumed.name) == (pod.namespace, pod.name)
    cache.forget_pod(pod)
    assert_forgotten(cache, pod)
    # forgetting a pod already forgotten is not an error
    cache.forget_pod(pod)


def test_forget_pod_errors() -> None:
    cache = Cache()
    pod = base_pod(NODE, "test", 100, 500)
    cache.add_pod(pod)
    with pytest.raises(CacheError) as info:
        cache.forget_pod(pod)
    assert str(info.value) == (
        "pod test(node_info_cache_test/test) is not assumed, so it cannot be removed or forgotten"
    )
    with pytest.raises(CacheError) as info:
        cache.forget_pod(pod.with_node_name("other"))
    assert str(info.value) == (
        "pod test(node_info_cache_test/test) was assumed on other but assigned to node"
    )


def test_assumed_pods_never_expire() -> None:
    """Upstream's TTL is 0: finishing the binding does not start an expiry."""
    cache = Cache()
    pod = base_pod(NODE, "test", 100, 500)
    cache.assume_pod(pod)
    cache.finish_binding(pod)
    assert cache.is_assumed_pod(pod)
    assert cache.pod_count() == 1
    cache.add_pod(pod)
    assert not cache.is_assumed_pod(pod)
    cache.finish_binding(pod)  # no longer assumed: nothing to do


# -- TestNodeOperators ----------------------------------------------------------------------------

RESOURCES_1 = {"cpu": 1000, "memory": 1, "example.com/foo": 1}
RESOURCES_2 = {"cpu": 500, "memory": 1, "example.com/foo": 2}
TAINTS = (Taint(key="test-key", value="test-value", effect="PreferNoSchedule"),)
IMAGES_1 = {
    "gcr.io/80:latest": 80 * MB,
    "gcr.io/80:v1": 80 * MB,
    "gcr.io/300:latest": 300 * MB,
    "gcr.io/300:v1": 300 * MB,
}
IMAGES_2 = {
    "gcr.io/600:latest": 600 * MB,
    "gcr.io/80:latest": 80 * MB,
    "gcr.io/900:latest": 900 * MB,
}


def _op_node(i: int, resources: dict[str, int], images: dict[str, int]) -> Node:
    return make_node(f"test-node-{i}", allocatable=resources, images=images, taints=TAINTS)


def _op_pod(name: str, with_port: bool) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, uid=name),
        spec=PodSpec(
            node_name="test-node-1",
            containers=(
                Container(
                    name="c",
                    requests={"cpu": 500, "memory": 1},
                    ports=(ContainerPort(name="http", container_port=80, host_port=80),)
                    if with_port
                    else (),
                ),
            ),
        ),
    )


def check_image_state_summary(infos: dict[str, NodeInfo], *names: str) -> bool:
    """Every node holding an image reports the same summary for it."""
    for name in names:
        seen = {info.image_states[name] for info in infos.values() if name in info.image_states}
        if len(seen) > 1:
            return False
    return True


def build_image_states(nodes: list[Node]) -> dict[str, ImageStateSummary]:
    holders: dict[str, set[str]] = {}
    sizes: dict[str, int] = {}
    for n in nodes:
        for image in n.status.images:
            for name in image.names:
                holders.setdefault(name, set()).add(n.metadata.name)
                sizes.setdefault(name, image.size_bytes)
    return {k: ImageStateSummary(size=sizes[k], num_nodes=len(v)) for k, v in holders.items()}


@pytest.mark.parametrize(
    ("nodes", "pods"),
    [
        pytest.param(
            [
                _op_node(1, RESOURCES_1, IMAGES_1),
                _op_node(2, RESOURCES_2, IMAGES_2),
                _op_node(3, RESOURCES_1, IMAGES_1),
                _op_node(4, RESOURCES_2, IMAGES_2),
            ],
            [_op_pod("pod1", True)],
            id="operate the node with one pod",
        ),
        pytest.param(
            [
                _op_node(1, RESOURCES_1, IMAGES_1),
                _op_node(2, RESOURCES_2, IMAGES_2),
                _op_node(3, RESOURCES_1, IMAGES_1),
            ],
            [_op_pod("pod1", False), _op_pod("pod2", False)],
            id="operate the node with two pods",
        ),
    ],
)
def test_node_operators(nodes: list[Node], pods: list[Pod]) -> None:
    node = nodes[0]
    states = build_image_states(nodes)
    images = {
        name: states[name] for image in node.status.images for name in image.names if name in states
    }
    expected = NodeInfo(node, pods)
    expected.image_states = images

    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for p in pods:
        cache.add_pod(p)

    # Step 1: the node was added into the cache.
    got = cache.get_node_info(node.metadata.name)
    assert got is not None
    assert cache._tree.num_nodes == len(nodes) == len(cache._tree.list())
    assert describe(got) == describe(expected)
    live = cache.dump().nodes
    assert check_image_state_summary(live, "gcr.io/80:latest", "gcr.io/300:latest")
    assert got.image_states["gcr.io/80:latest"].num_nodes == len(nodes)

    # Step 2: a snapshot holds a copy of every node.
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    assert len(snapshot._by_name) == len(nodes)
    snap_node = snapshot.get(node.metadata.name)
    assert describe(snap_node) == describe(expected)
    assert snap_node.generation == got.generation
    assert check_image_state_summary(snapshot._by_name, "gcr.io/80:latest", "gcr.io/300:latest")

    # Step 3: updating the node bumps its generation.
    updated = attrs.evolve(
        node,
        status=attrs.evolve(node.status, allocatable={**node.status.allocatable, "memory": 1}),
    )
    cache.update_node(node, updated)
    got2 = cache.get_node_info(node.metadata.name)
    assert got2 is not None
    assert got2.generation > got.generation
    expected.set_node(updated)
    assert describe(got2) == describe(expected)
    assert check_image_state_summary(cache.dump().nodes, "gcr.io/80:latest", "gcr.io/300:latest")
    assert cache._tree.num_nodes == len(nodes) == len(cache._tree.list())

    # Step 4: the node can be removed even if it still has pods; a ghost remains.
    cache.remove_node(updated)
    ghost = cache.get_node_info(node.metadata.name)
    assert ghost is not None and ghost.node is None
    with pytest.raises(CacheError, match='node "test-node-1" in group "" was not found'):
        cache.remove_node(updated)
    assert cache._tree.num_nodes == len(nodes) - 1 == len(cache._tree.list())
    remaining = {k: v for k, v in cache.dump().nodes.items() if v.node is not None}
    assert check_image_state_summary(remaining, "gcr.io/80:latest", "gcr.io/300:latest")
    assert remaining["test-node-2"].image_states["gcr.io/80:latest"].num_nodes == len(nodes) - 1
    for p in pods:
        assert cache.get_pod(p.uid) is not None

    # Step 5: removing the pods of the removed node still succeeds, and drops the ghost.
    for p in pods:
        cache.remove_pod(p)
        assert cache.get_pod(p.uid) is None
    assert cache.get_node_info(node.metadata.name) is None


def test_remove_unknown_node() -> None:
    with pytest.raises(CacheError) as info:
        Cache().remove_node(make_node("n"))
    assert str(info.value) == "node n is not found"


# -- TestSchedulerCache_UpdateSnapshot ----------------------------------------------------------

NODES = [make_node(f"test-node{i}", allocatable={"cpu": 1000, "memory": 1}) for i in range(10)]
UPDATED_NODES = [
    attrs.evolve(n, status=attrs.evolve(n.status, allocatable={"cpu": 2000, "memory": 1}))
    for n in NODES
]
PODS = [make_pod(f"test-pod{i}", f"test-node{i % 10}", uid=f"test-puid{i}") for i in range(20)]
UPDATED_PODS = [attrs.evolve(p, spec=attrs.evolve(p.spec, priority=1000)) for p in PODS]
PODS_WITH_AFFINITY = [
    make_pod(f"p-affinity-{i}", f"test-node{i}", uid=f"puid-affinity-{i}", affinity=True)
    for i in range(2)
]
PODS_WITH_PVC = [
    make_pod(f"p-pvc-{i}", f"test-node{i % 2}", uid=f"puid-pvc-{i}", pvc=f"test-pvc{i % 4}")
    for i in range(8)
]


def compare_cache_with_snapshot(cache: Cache, snapshot: Snapshot) -> None:
    """Upstream compareCacheWithNodeInfoSnapshot."""
    tree = cache._tree
    assert len(snapshot._by_name) == tree.num_nodes
    for name, info in cache.dump().nodes.items():
        want = info if info.node is not None else None
        got = snapshot._by_name.get(name)
        assert describe(got) == describe(want), name
        if want is not None and got is not None:
            assert got.generation == want.generation
    assert len(snapshot.list()) == tree.num_nodes
    expected_list = [snapshot._by_name[n] for n in tree.list()]
    assert all(a is b for a, b in zip(snapshot.list(), expected_list, strict=True))
    expected_affinity = [i for i in expected_list if i.pods_with_affinity]
    assert all(
        a is b
        for a, b in zip(snapshot.have_pods_with_affinity_list(), expected_affinity, strict=True)
    )
    for info in expected_list:
        for key in info.pvc_ref_counts:
            assert snapshot.is_pvc_used_by_pods(key)


Op = tuple[str, int]
_OPS: dict[str, Callable[[Cache, Snapshot, int], None]] = {
    "addNode": lambda c, s, i: c.add_node(NODES[i]),
    "removeNode": lambda c, s, i: c.remove_node(NODES[i]),
    "updateNode": lambda c, s, i: c.update_node(NODES[i], UPDATED_NODES[i]),
    "addPod": lambda c, s, i: c.add_pod(PODS[i]),
    "assumePod": lambda c, s, i: c.assume_pod(PODS[i]),
    "forgetPod": lambda c, s, i: c.forget_pod(PODS[i]),
    "addPodWithAffinity": lambda c, s, i: c.add_pod(PODS_WITH_AFFINITY[i]),
    "addPodWithPVC": lambda c, s, i: c.add_pod(PODS_WITH_PVC[i]),
    "removePod": lambda c, s, i: c.remove_pod(PODS[i]),
    "removePodWithAffinity": lambda c, s, i: c.remove_pod(PODS_WITH_AFFINITY[i]),
    "removePodWithPVC": lambda c, s, i: c.remove_pod(PODS_WITH_PVC[i]),
    "updatePod": lambda c, s, i: c.update_pod(PODS[i], UPDATED_PODS[i]),
}


def _snap() -> Op:
    return ("updateSnapshot", -1)


UPDATE_SNAPSHOT_CASES = [
    pytest.param([], [], 0, set(), id="Empty cache"),
    pytest.param([("addNode", 1)], [1], 0, set(), id="Single node"),
    pytest.param(
        [("addNode", 1), _snap(), ("removeNode", 1), ("addNode", 1)],
        [1],
        0,
        set(),
        id="Add node, remove it, add it again",
    ),
    pytest.param(
        [("addNode", 1), _snap(), ("addNode", 2), ("removeNode", 1)],
        [2],
        0,
        set(),
        id="Add node and remove it in the same cycle, add it again",
    ),
    pytest.param(
        [("addNode", 0), _snap(), ("addNode", 1), _snap(), ("addNode", 2), _snap(), ("addNode", 3)],
        [3, 2, 1, 0],
        0,
        set(),
        id="Add a few nodes, and snapshot in the middle",
    ),
    pytest.param(
        [("addNode", 0), ("addNode", 2), ("addNode", 5), ("addNode", 6)],
        [6, 5, 2, 0],
        0,
        set(),
        id="Add a few nodes, and snapshot in the end",
    ),
    pytest.param(
        [("addNode", 0), ("addNode", 1), ("addNode", 5), _snap(), ("updateNode", 1)],
        [1, 5, 0],
        0,
        set(),
        id="Update some nodes",
    ),
    pytest.param(
        [
            ("addNode", 0),
            ("addNode", 2),
            ("addNode", 5),
            ("addNode", 6),
            _snap(),
            ("removeNode", 0),
            ("removeNode", 2),
            ("removeNode", 5),
            ("removeNode", 6),
        ],
        [],
        0,
        set(),
        id="Add a few nodes, and remove all of them",
    ),
    pytest.param(
        [
            ("addNode", 0),
            ("addNode", 2),
            ("addNode", 5),
            ("addNode", 6),
            _snap(),
            ("removeNode", 0),
            ("removeNode", 6),
        ],
        [5, 2],
        0,
        set(),
        id="Add a few nodes, and remove some of them",
    ),
    pytest.param(
        [
            ("addNode", 2),
            ("addNode", 5),
            ("addNode", 6),
            _snap(),
            ("removeNode", 2),
            ("removeNode", 5),
            ("removeNode", 6),
            _snap(),
            ("addNode", 7),
            ("addNode", 9),
        ],
        [9, 7],
        0,
        set(),
        id="Add a few nodes, remove all of them, and add more",
    ),
    pytest.param(
        [("addNode", 8), ("updateNode", 2), ("updateNode", 8), _snap(), ("addNode", 1)],
        [1, 8, 2],
        0,
        set(),
        id="Update nodes in particular order",
    ),
    pytest.param(
        [("addNode", 0), ("addNode", 2), ("addNode", 8), _snap(), ("addPod", 8), ("addPod", 2)],
        [2, 8, 0],
        0,
        set(),
        id="Add some nodes and some pods",
    ),
    pytest.param(
        [("addNode", 0), ("addPod", 0), ("addNode", 2), ("addNode", 4), ("updatePod", 0)],
        [0, 4, 2],
        0,
        set(),
        id="Updating a pod moves its node to the head",
    ),
    pytest.param(
        [("addNode", 0), ("addPod", 1), ("updatePod", 1), ("addNode", 1)],
        [1, 0],
        0,
        set(),
        id="Add pod before its node",
    ),
    pytest.param(
        [
            ("addNode", 0),
            ("addNode", 1),
            ("addPod", 1),
            ("addPod", 11),
            _snap(),
            ("removeNode", 1),
            _snap(),
            ("updatePod", 1),
            ("updatePod", 11),
            ("removePod", 1),
            ("removePod", 11),
        ],
        [0],
        0,
        set(),
        id="Remove node before its pods",
    ),
    pytest.param(
        [("addNode", 0), ("addPodWithAffinity", 0), _snap(), ("addNode", 1)],
        [1, 0],
        1,
        set(),
        id="Add Pods with affinity",
    ),
    pytest.param(
        [("addNode", 0), ("addPodWithPVC", 0), _snap(), ("addNode", 1)],
        [1, 0],
        0,
        {"test-ns/test-pvc0"},
        id="Add Pods with PVC",
    ),
    pytest.param(
        [
            ("addNode", 0),
            ("addPodWithAffinity", 0),
            _snap(),
            ("addNode", 1),
            ("addPodWithAffinity", 1),
            _snap(),
        ],
        [1, 0],
        2,
        set(),
        id="Add multiple nodes with pods with affinity",
    ),
    pytest.param(
        [
            ("addNode", 0),
            ("addPodWithPVC", 0),
            _snap(),
            ("addNode", 1),
            ("addPodWithPVC", 1),
            _snap(),
        ],
        [1, 0],
        0,
        {"test-ns/test-pvc0", "test-ns/test-pvc1"},
        id="Add multiple nodes with pods with PVC",
    ),
    pytest.param(
        [
            ("addNode", 0),
            ("addNode", 1),
            ("addPodWithAffinity", 0),
            _snap(),
            ("removePodWithAffinity", 0),
            _snap(),
        ],
        [0, 1],
        0,
        set(),
        id="Add then Remove pods with affinity",
    ),
    pytest.param(
        [
            ("addNode", 0),
            ("addPodWithPVC", 0),
            _snap(),
            ("removePodWithPVC", 0),
            ("addPodWithPVC", 2),
            _snap(),
        ],
        [0],
        0,
        {"test-ns/test-pvc2"},
        id="Add then Remove pod with PVC",
    ),
    pytest.param(
        [
            ("addNode", 0),
            ("addPodWithPVC", 0),
            _snap(),
            ("removePodWithPVC", 0),
            ("addPodWithPVC", 0),
            _snap(),
        ],
        [0],
        0,
        {"test-ns/test-pvc0"},
        id="Add then Remove pod with PVC and add same pod again",
    ),
    pytest.param(
        [
            ("addNode", 0),
            ("addNode", 1),
            ("addPodWithPVC", 0),
            ("addPodWithPVC", 1),
            _snap(),
            ("removePodWithPVC", 0),
            ("removePodWithPVC", 1),
            ("addPodWithPVC", 2),
            ("addPodWithPVC", 3),
            _snap(),
        ],
        [1, 0],
        0,
        {"test-ns/test-pvc2", "test-ns/test-pvc3"},
        id="Add and Remove multiple pods with PVC with same ref count length different content",
    ),
    pytest.param(
        [
            ("addNode", 0),
            ("addNode", 1),
            ("addPodWithPVC", 0),
            ("addPodWithPVC", 1),
            ("addPodWithPVC", 2),
            _snap(),
            ("removePodWithPVC", 0),
            ("removePodWithPVC", 1),
            _snap(),
            ("addPodWithPVC", 0),
            _snap(),
            ("addPodWithPVC", 3),
            ("addPodWithPVC", 4),
            ("addPodWithPVC", 5),
            _snap(),
            ("removePodWithPVC", 0),
            ("removePodWithPVC", 3),
            ("removePodWithPVC", 4),
            _snap(),
        ],
        [0, 1],
        0,
        {"test-ns/test-pvc1", "test-ns/test-pvc2"},
        id="Add and Remove multiple pods with PVC",
    ),
    pytest.param(
        [
            ("addNode", 0),
            ("addNode", 2),
            ("addNode", 4),
            ("addNode", 8),
            _snap(),
            ("assumePod", 8),
            ("assumePod", 0),
            ("forgetPod", 0),
            _snap(),
        ],
        [0, 8, 4, 2],
        0,
        set(),
        id="Assume and forget in cache",
    ),
]


@pytest.mark.parametrize(
    ("operations", "expected", "expected_have_affinity", "expected_used_pvcs"),
    UPDATE_SNAPSHOT_CASES,
)
def test_update_snapshot(
    operations: list[Op],
    expected: list[int],
    expected_have_affinity: int,
    expected_used_pvcs: set[str],
) -> None:
    cache = Cache()
    snapshot = Snapshot()
    for name, i in operations:
        if name == "updateSnapshot":
            cache.update_snapshot(snapshot)
            compare_cache_with_snapshot(cache, snapshot)
        else:
            _OPS[name](cache, snapshot, i)

    # The cache's recency order, most recent first.
    assert cache.node_count() == len(expected)
    recency = cache._recency()
    for name, want in zip(recency, expected, strict=True):
        info = cache.get_node_info(name)
        assert info is not None
        if info.node is not None:
            assert name == NODES[want].metadata.name

    assert len(snapshot.have_pods_with_affinity_list()) == expected_have_affinity
    assert {k for k, v in snapshot._pvc_counts.items() if v > 0} == expected_used_pvcs

    cache.update_snapshot(snapshot)
    compare_cache_with_snapshot(cache, snapshot)


# -- TestSchedulerCache_updateNodeInfoSnapshotList: zone interleaving ---------------------------

ZONED = [
    make_node(
        f"node-{i}",
        labels={
            "topology.kubernetes.io/region": f"region-{zone}",
            "topology.kubernetes.io/zone": f"zone-{zone}",
        },
    )
    for i, zone in enumerate([0, 0, 1, 1, 1, 1, 1, 1])
]


@pytest.mark.parametrize(
    ("operations", "expected"),
    [
        pytest.param([], [], id="Empty cache"),
        pytest.param([0], ["node-0"], id="Single node"),
        pytest.param([0, None, 1], ["node-0", "node-1"], id="Two nodes"),
        pytest.param(
            [2, 3, None, 4, 0],
            ["node-2", "node-0", "node-3", "node-4"],
            id="bug 91601, two nodes, update the snapshot and add two nodes in different zones",
        ),
        pytest.param(
            [2, 3, 4, 5, None, 6, 0],
            ["node-2", "node-0", "node-3", "node-4", "node-5", "node-6"],
            id="bug 91601, 6 nodes, one in a different zone",
        ),
        pytest.param(
            [2, None, 3, 4, None, 5, 6, 0, 1],
            ["node-2", "node-0", "node-3", "node-1", "node-4", "node-5", "node-6"],
            id="bug 91601, 7 nodes, two in a different zone",
        ),
        pytest.param(
            [2, 1, None, 3, 4, None, 5, 6, 0],
            ["node-2", "node-1", "node-3", "node-0", "node-4", "node-5", "node-6"],
            id="bug 91601, 7 nodes, two in a different zone, different zone order",
        ),
    ],
)
def test_snapshot_node_list_interleaves_zones(
    operations: list[int | None], expected: list[str]
) -> None:
    cache = Cache()
    snapshot = Snapshot()
    for op in operations:
        if op is None:
            cache.update_snapshot(snapshot)
            compare_cache_with_snapshot(cache, snapshot)
        else:
            cache.add_node(ZONED[op])
    cache.update_snapshot(snapshot)
    compare_cache_with_snapshot(cache, snapshot)
    assert [info.name for info in snapshot.list()] == expected


def test_zone_change_reorders_snapshot() -> None:
    """Upstream keeps the old order until a node comes or goes; here the list follows the tree."""
    cache = Cache()
    snapshot = Snapshot()
    for n in ZONED[:4]:
        cache.add_node(n)
    cache.update_snapshot(snapshot)
    assert [i.name for i in snapshot.list()] == ["node-0", "node-2", "node-1", "node-3"]
    moved = attrs.evolve(
        ZONED[1],
        metadata=attrs.evolve(ZONED[1].metadata, labels={"topology.kubernetes.io/zone": "zone-9"}),
    )
    cache.update_node(ZONED[1], moved)
    cache.update_snapshot(snapshot)
    assert [i.name for i in snapshot.list()] == cache._tree.list()
    compare_cache_with_snapshot(cache, snapshot)


# -- incremental behaviour ------------------------------------------------------------------------


def test_update_snapshot_copies_only_changed_node_infos() -> None:
    cache = Cache()
    snapshot = Snapshot()
    for n in NODES:
        cache.add_node(n)
    cache.update_snapshot(snapshot)
    before = {name: snapshot.get(name) for name in snapshot._by_name}
    generations = {name: info.generation for name, info in before.items()}
    node_list = snapshot.list()
    affinity_list = snapshot.have_pods_with_affinity_list()

    cache.add_pod(PODS[3])
    cache.update_snapshot(snapshot)
    # Same objects everywhere; only test-node3 was copied into.
    assert snapshot.list() is node_list
    assert snapshot.have_pods_with_affinity_list() is affinity_list
    for name, info in before.items():
        assert snapshot.get(name) is info
        changed = info.generation != generations[name]
        assert changed == (name == "test-node3")
    assert [p.pod.uid for p in snapshot.get("test-node3").pods] == ["test-puid3"]

    # A node starting to hold affinity pods rebuilds the side lists, not the node list.
    cache.add_pod(PODS_WITH_AFFINITY[1])
    cache.update_snapshot(snapshot)
    assert snapshot.list() is node_list
    assert [i.name for i in snapshot.have_pods_with_affinity_list()] == ["test-node1"]

    # Nothing changed: nothing copied.
    gen = snapshot.generation
    cache.update_snapshot(snapshot)
    assert snapshot.generation == gen


def test_snapshot_excludes_ghost_nodes() -> None:
    cache = Cache()
    snapshot = Snapshot()
    cache.add_node(NODES[0])
    cache.add_node(NODES[1])
    cache.add_pod(PODS[1])
    cache.update_snapshot(snapshot)
    cache.remove_node(NODES[1])
    cache.update_snapshot(snapshot)
    assert [i.name for i in snapshot.list()] == ["test-node0"]
    with pytest.raises(KeyError, match="nodeinfo not found"):
        snapshot.get("test-node1")
    assert cache.node_count() == 2  # the ghost
    assert cache.pod_count() == 1
    # The node comes back: its pod is still accounted.
    cache.add_node(NODES[1])
    cache.update_snapshot(snapshot)
    assert [p.pod.uid for p in snapshot.get("test-node1").pods] == ["test-puid1"]
    compare_cache_with_snapshot(cache, snapshot)


def test_inconsistent_snapshot_is_rebuilt_and_reported() -> None:
    cache = Cache()
    snapshot = Snapshot()
    cache.add_node(NODES[0])
    cache.update_snapshot(snapshot)
    snapshot._node_list = []  # corrupt it behind the cache's back
    cache.add_pod(PODS[0])
    with pytest.raises(CacheError, match="snapshot state is not consistent"):
        cache.update_snapshot(snapshot)
    assert [i.name for i in snapshot.list()] == ["test-node0"]
    cache.update_snapshot(snapshot)


# -- image states ---------------------------------------------------------------------------------


def test_image_states_count_nodes_and_normalise_names() -> None:
    cache = Cache()
    snapshot = Snapshot()
    cache.add_node(make_node("a", images={"nginx": 10, "redis:7": 20}))
    cache.add_node(make_node("b", images={"nginx:latest": 10}))
    cache.update_snapshot(snapshot)
    assert snapshot.get("a").image_states == {
        "nginx:latest": ImageStateSummary(size=10, num_nodes=2),
        "redis:7": ImageStateSummary(size=20, num_nodes=1),
    }
    assert snapshot.get("b").image_states == {
        "nginx:latest": ImageStateSummary(size=10, num_nodes=2)
    }

    # A third node with nginx changes the count seen on a and b, although they did not change.
    cache.add_node(make_node("c", images={"docker.io/library/nginx@sha256:abc": 5, "nginx": 10}))
    cache.update_snapshot(snapshot)
    for name in "abc":
        assert snapshot.get(name).image_states["nginx:latest"].num_nodes == 3
    assert snapshot.get("c").image_states["docker.io/library/nginx@sha256:abc"].num_nodes == 1

    # Removing a node (even one left as a ghost) drops its images.
    cache.add_pod(make_pod("p", "c"))
    cache.remove_node(make_node("c", images={"nginx": 10}))
    cache.update_node(make_node("a", images={"nginx": 10}), make_node("a", images={"redis:7": 20}))
    cache.update_snapshot(snapshot)
    assert snapshot.get("b").image_states == {
        "nginx:latest": ImageStateSummary(size=10, num_nodes=1)
    }
    assert snapshot.get("a").image_states == {"redis:7": ImageStateSummary(size=20, num_nodes=1)}
    assert set(cache._images) == {"nginx:latest", "redis:7"}


def test_node_update_without_image_change_touches_no_other_node() -> None:
    cache = Cache()
    snapshot = Snapshot()
    cache.add_node(make_node("a", images={"nginx": 10}))
    cache.add_node(make_node("b", images={"nginx": 10}))
    cache.update_snapshot(snapshot)
    gen_b = snapshot.get("b").generation
    cache.update_node(
        make_node("a", images={"nginx": 10}),
        make_node("a", images={"nginx": 10}, labels={"x": "y"}),
    )
    cache.update_snapshot(snapshot)
    assert snapshot.get("b").generation == gen_b
    a = snapshot.get("a").node
    assert a is not None and a.labels == {"x": "y"}
