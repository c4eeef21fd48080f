"""Fork, commit, revert: a fork never changes its original until it is committed, and
committing it equals running the same thing on the original."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe.backends import MemoryBackend, canonical_state
from schedframe.cache import Cache
from schedframe.errors import BackendError
from schedframe.objects import Node, Pod
from schedframe.scheduler import Scheduler, VirtualClock, canonical_scheduler_state
from schedframe.testing.builders import make_node, make_pdb, make_pod

pytestmark = pytest.mark.property

Op = tuple[str, int, int]

ops = st.lists(
    st.tuples(
        st.sampled_from(["pod", "delete", "cordon", "uncordon", "node", "run", "advance"]),
        st.integers(0, 5),
        st.integers(1, 4),
    ),
    max_size=12,
)


def _cluster() -> list[object]:
    nodes: list[object] = [
        make_node(f"n{i}")
        .capacity(cpu="4", memory="8Gi", pods=110)
        .label("zone", f"z{i % 2}")
        .obj()
        for i in range(3)
    ]
    running: list[object] = [
        make_pod(f"r{i}").req(cpu="1").label("app", "web").node(f"n{i % 3}").obj() for i in range(4)
    ]
    return [*nodes, *running, make_pdb("web").selector(app="web").min_available(3).obj()]


def _original(pending: int) -> Scheduler:
    clock = VirtualClock()
    backend = MemoryBackend(_cluster(), clock=clock)
    sched = Scheduler.from_config(None, backend, deterministic=True, clock=clock, seed=7)
    for i in range(pending):
        backend.create(make_pod(f"q{i}").req(cpu="3").priority(10).obj())
    sched.run_until_idle()
    return sched


def _apply(sched: Scheduler, steps: list[Op]) -> None:
    """Run ``steps`` on ``sched`` and its backend; same steps, same writes."""
    backend = sched.backend
    assert isinstance(backend, MemoryBackend)
    for n, (op, a, b) in enumerate(steps):
        if op == "pod":
            backend.create(make_pod(f"p{n}").req(cpu=str(b)).priority(a * 100).obj())
        elif op == "delete":
            pods = [p for p in backend.list("Pod") if isinstance(p, Pod)]
            if pods:
                backend.delete(pods[a % len(pods)])
        elif op in ("cordon", "uncordon"):
            nodes = [x for x in backend.list("Node") if isinstance(x, Node)]
            node = nodes[a % len(nodes)]
            backend.update(
                make_node(node.metadata.name)
                .capacity(cpu="4", memory="8Gi", pods=110)
                .labels(node.metadata.labels)
                .unschedulable(op == "cordon")
                .obj()
            )
        elif op == "node":
            if backend.get("Node", f"x{a}") is None:
                backend.create(make_node(f"x{a}").capacity(cpu=str(b), memory="8Gi").obj())
        elif op == "advance":
            clock = sched.clock
            assert isinstance(clock, VirtualClock)
            clock.advance(float(b))
            sched.run_until_idle()
        else:
            sched.run_until_idle()
    sched.run_until_idle()


@given(steps=ops, pending=st.integers(0, 2))
def test_a_discarded_fork_leaves_the_original_byte_identical(steps: list[Op], pending: int) -> None:
    sched = _original(pending)
    before = canonical_scheduler_state(sched)
    fork = sched.fork()
    _apply(fork, steps)
    fork.stop()
    assert isinstance(fork.backend, MemoryBackend)
    fork.backend.discard()  # type: ignore[attr-defined]
    assert canonical_scheduler_state(sched) == before


@given(steps=ops)
def test_committing_a_fork_equals_running_on_the_original(steps: list[Op]) -> None:
    direct = _original(0)
    _apply(direct, steps)

    original = _original(0)
    fork = original.fork()
    _apply(fork, steps)
    fork.stop()
    backend = fork.backend
    assert isinstance(backend, MemoryBackend)
    backend.commit()  # type: ignore[attr-defined]
    assert isinstance(original.backend, MemoryBackend)
    assert isinstance(direct.backend, MemoryBackend)
    assert canonical_state(original.backend) == canonical_state(direct.backend)
    assert canonical_state(original.backend) == canonical_state(backend)
    # The original scheduler saw the committed writes: its cache is the direct run's.
    original.run_until_idle()
    assert _cache_lines(original) == _cache_lines(direct)


def _cache_lines(sched: Scheduler) -> list[str]:
    lines = canonical_scheduler_state(sched).decode().splitlines()
    return [line for line in lines if line.startswith(("node ", "  pod ", "assumed "))]


def _writes(backend: MemoryBackend) -> list[Callable[[], object]]:
    return [
        lambda: backend.create(make_pod("late").obj()),
        lambda: backend.delete(make_pod("r0").obj()),
    ]


@pytest.mark.parametrize("write", [0, 1])
def test_a_fork_of_a_changed_cluster_does_not_commit(write: int) -> None:
    backend = MemoryBackend(_cluster())
    fork = backend.fork()
    fork.create(make_pod("mine").obj())
    _writes(backend)[write]()
    before = canonical_state(backend)
    with pytest.raises(BackendError, match="modified since the fork") as info:
        fork.commit()
    assert info.value.code == 409
    assert canonical_state(backend) == before


def test_a_closed_fork_refuses_writes() -> None:
    backend = MemoryBackend(_cluster())
    fork = backend.fork()
    fork.discard()
    with pytest.raises(BackendError, match="this fork was discarded") as info:
        fork.create(make_pod("late").obj())
    assert info.value.code == 410


def test_the_original_scheduler_sees_the_committed_writes() -> None:
    sched = _original(0)
    fork = sched.fork()
    assert isinstance(fork.backend, MemoryBackend)
    fork.backend.create(make_pod("big").req(cpu="3").obj())
    fork.run_until_idle()
    fork.stop()
    placed = fork.placements()["default/big"]
    fork.backend.commit()  # type: ignore[attr-defined]
    sched.run_until_idle()
    dump = cast("Cache", sched.cache).dump()
    assert "default/big" in {pi.pod.key for pi in dump.nodes[placed].pods}
    assert sched.queue.pending_pods() == []


def test_a_fork_of_a_fork_commits_through_to_the_original() -> None:
    backend = MemoryBackend(_cluster())
    outer = backend.fork()
    inner = outer.fork()
    inner.create(make_pod("deep").obj())
    inner.commit()
    assert backend.get("Pod", "deep") is None
    outer.commit()
    assert backend.get("Pod", "deep") is not None
    assert canonical_state(backend) == canonical_state(outer)
