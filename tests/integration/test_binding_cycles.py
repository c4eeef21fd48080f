"""Binding cycles in real mode: the binding pool, a bound on those running, the leadership
fence, stopping with a grace period, and the bounded results/events of a daemon."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.framework import CycleState, Status
from schedframe.objects import Pod
from schedframe.runtime import Registry
from schedframe.scheduler import Scheduler

from ._support import config, make_node, make_pod, new_scheduler, profile

pytestmark = pytest.mark.integration

#: Generous: the machine is shared; nothing here measures speed.
WAIT = 30.0


class BlockingPreBind(fw.PreBindPlugin, fw.EnqueueExtensions):
    """PreBind blocks pods labelled ``block`` until :attr:`release` is set (a slow volume)."""

    name: ClassVar[str] = "TestBlockingPreBind"
    release = threading.Event()
    entered: ClassVar[list[str]] = []
    lock = threading.Lock()

    def __init__(self, args: object, handle: fw.Handle) -> None:
        self.handle = handle

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if "block" in pod.labels:
            with self.lock:
                self.entered.append(pod.name)
            self.release.wait(WAIT)
        return None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        return ()


class WaitingPermit(fw.PermitPlugin, fw.EnqueueExtensions):
    """Pods labelled ``wait`` wait on Permit (60 s)."""

    name: ClassVar[str] = "TestWaitingPermit"

    def __init__(self, args: object, handle: fw.Handle) -> None:
        self.handle = handle

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return Status.wait(60.0) if "wait" in pod.labels else None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        return ()


class HaltingReserve(fw.ReservePlugin, fw.EnqueueExtensions):
    """Halts :attr:`scheduler` when it reserves a pod labelled ``halt`` (a signal arriving
    mid-cycle); takes 50 ms to reserve a pod labelled ``slow``."""

    name: ClassVar[str] = "TestHaltingReserve"
    scheduler: ClassVar[Scheduler | None] = None

    def __init__(self, args: object, handle: fw.Handle) -> None:
        self.handle = handle

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if "halt" in pod.labels and self.scheduler is not None:
            self.scheduler.halt()
        if "slow" in pod.labels:
            time.sleep(0.05)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        return ()


@pytest.fixture(autouse=True)
def _reset_plugin() -> None:
    BlockingPreBind.release = threading.Event()
    BlockingPreBind.entered = []
    HaltingReserve.scheduler = None


def _scheduler(**kwargs: Any) -> tuple[Scheduler, Any]:
    registry = Registry.discover()
    registry.register("TestBlockingPreBind", BlockingPreBind)
    registry.register("TestWaitingPermit", WaitingPermit)
    registry.register("TestHaltingReserve", HaltingReserve)
    cfg = config(
        profile(
            plugins={
                "preBind": {"enabled": [{"name": "TestBlockingPreBind"}]},
                "permit": {"enabled": [{"name": "TestWaitingPermit"}]},
                "reserve": {"enabled": [{"name": "TestHaltingReserve"}]},
            }
        )
    )
    nodes = [make_node(f"n{i}", cpu=64000, pods=500) for i in range(4)]
    return new_scheduler(cfg, nodes, registry=registry, deterministic=False, **kwargs)


def _bound(backend: Any) -> set[str]:
    return {p.name for p in backend.list("Pod") if p.spec.node_name}


def _bound_count_is(backend: Any, n: int) -> Callable[[], bool]:
    return lambda: len(_bound(backend)) == n


def _until(predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def _run_in_background(sched: Scheduler) -> threading.Thread:
    thread = threading.Thread(target=sched.run, daemon=True)
    thread.start()
    return thread


def test_sixteen_blocked_prebinds_do_not_stop_other_bindings() -> None:
    sched, backend = _scheduler()
    for i in range(16):
        backend.create(make_pod(f"slow-{i:02d}", labels={"block": "1"}))
    loop = _run_in_background(sched)
    try:
        assert _until(lambda: len(BlockingPreBind.entered) == 16)
        for i in range(40):
            backend.create(make_pod(f"fast-{i:02d}"))
        assert _until(lambda: len(_bound(backend)) == 40)
        assert _bound(backend) == {f"fast-{i:02d}" for i in range(40)}
    finally:
        BlockingPreBind.release.set()
        assert _until(lambda: len(_bound(backend)) == 56)
        sched.stop()
        loop.join(WAIT)


def test_the_scheduling_loop_waits_while_binding_workers_cycles_run() -> None:
    sched, backend = _scheduler(binding_workers=3)
    for i in range(10):
        backend.create(make_pod(f"slow-{i}", labels={"block": "1"}))
    loop = _run_in_background(sched)
    try:
        assert _until(lambda: len(BlockingPreBind.entered) == 3)
        time.sleep(0.3)  # the loop would have started more cycles by now without the bound
        assert sched.running_binding_cycles() == 3
        assert len(BlockingPreBind.entered) == 3
        assert sched.attempts == 4  # the fourth pod's cycle waits for a binding slot
    finally:
        BlockingPreBind.release.set()
    assert _until(lambda: len(_bound(backend)) == 10)
    sched.stop()
    loop.join(WAIT)


def test_pods_waiting_on_permit_hold_no_binding_slot() -> None:
    sched, backend = _scheduler(binding_workers=1)
    for i in range(5):
        backend.create(make_pod(f"waiting-{i}", labels={"wait": "1"}))
    for i in range(5):
        backend.create(make_pod(f"free-{i}"))
    loop = _run_in_background(sched)
    try:
        assert _until(lambda: len(_bound(backend)) == 5)
        assert _bound(backend) == {f"free-{i}" for i in range(5)}
        assert sched.in_flight() == 5
        assert sched.running_binding_cycles() == 0
        fwk = sched.profiles["default-scheduler"]
        for pod in backend.list("Pod"):
            waiting = fwk.get_waiting_pod(pod.uid)
            if waiting is not None:
                waiting.allow("TestWaitingPermit")
        assert _until(lambda: len(_bound(backend)) == 10)
        assert _until(lambda: sched.in_flight() == 0)
    finally:
        sched.stop()
        loop.join(WAIT)


def test_the_loop_hands_over_the_cycles_it_holds_before_waiting_for_a_pod() -> None:
    # The loop holds binding cycles and hands them over in batches; whenever it waits for a
    # pod, none may be left held (nothing else would hand them over).
    sched, backend = _scheduler()
    queue: Any = sched.queue
    real_pop = queue.pop
    held_at_wait: list[int] = []

    def pop(block: bool = False, timeout: float | None = None) -> Any:
        if block:
            held_at_wait.append(sched._binders.held)
        return real_pop(block=block, timeout=timeout)

    queue.pop = pop
    loop = _run_in_background(sched)
    try:
        for wave in range(5):
            for i in range(wave + 1):  # 1..5 pods: fewer than a batch
                backend.create(make_pod(f"p-{wave}-{i}"))
            assert _until(_bound_count_is(backend, (wave + 1) * (wave + 2) // 2))
            time.sleep(0.05)
        assert held_at_wait and set(held_at_wait) == {0}
    finally:
        sched.stop()
        loop.join(WAIT)


def test_quick_cycles_hold_their_bindings_and_a_slow_cycle_hands_them_over() -> None:
    # A cycle as long as a hold may be followed by another: its binding, and those held
    # before it, are handed over at once rather than wait for that one too.
    sched, backend = _scheduler()
    real_start = sched.start_binding_cycle
    held_after: dict[str, int] = {}

    def start_binding_cycle(task: Callable[[], None]) -> None:
        real_start(task)
        held_after[f"#{len(held_after)}"] = sched._binders.held

    sched.start_binding_cycle = start_binding_cycle  # type: ignore[method-assign]
    for i in range(50):
        backend.create(make_pod(f"quick-{i:02d}"))
    loop = _run_in_background(sched)
    try:
        # A binding may end before its starter records what is held: wait for the records.
        assert _until(lambda: len(_bound(backend)) == 50 and len(held_after) == 50)
        assert max(held_after.values()) >= 1  # quick cycles hold
        held_after.clear()
        backend.create(make_pod("slow", labels={"slow": "1"}))
        assert _until(lambda: len(_bound(backend)) == 51 and len(held_after) == 1)
        assert held_after == {"#0": 0}
    finally:
        sched.stop()
        loop.join(WAIT)


def test_a_single_schedule_one_call_hands_over_its_binding_cycle() -> None:
    # No loop will come back: the cycle must not be left held.
    sched, backend = _scheduler()
    backend.create(make_pod("alone"))
    try:
        assert sched.schedule_one(block=True, timeout=WAIT)
        assert sched._binders.held == 0
        assert _until(lambda: _bound(backend) == {"alone"})
    finally:
        sched.stop()


def test_cycles_held_when_the_loop_is_halted_still_bind() -> None:
    sched, backend = _scheduler()
    HaltingReserve.scheduler = sched
    for i in range(3):
        backend.create(make_pod(f"a-{i}"))
    backend.create(make_pod("z-halt", labels={"halt": "1"}))
    loop = _run_in_background(sched)
    try:
        loop.join(WAIT)
        assert not loop.is_alive()
        assert sched._binders.held == 0
        assert _until(lambda: sched.in_flight() == 0)
        scheduled = {r.pod.name for r in sched.results.values() if r.pod is not None}
        assert _bound(backend) == scheduled
        assert "z-halt" in scheduled
    finally:
        sched.stop()


def test_binding_cycles_with_one_slot_never_wait_behind_a_held_one() -> None:
    # With one binding slot, the held cycle is the one running: the loop must hand it over
    # rather than wait for a slot it holds itself.
    sched, backend = _scheduler(binding_workers=1)
    for i in range(20):
        backend.create(make_pod(f"p-{i:02d}"))
    loop = _run_in_background(sched)
    try:
        assert _until(lambda: len(_bound(backend)) == 20)
    finally:
        sched.stop()
        loop.join(WAIT)


def test_closing_the_fence_abandons_binding_cycles_and_writes_nothing() -> None:
    leading = threading.Event()
    leading.set()
    sched, backend = _scheduler(fence=leading.is_set)
    for i in range(6):
        backend.create(make_pod(f"slow-{i}", labels={"block": "1"}))
    loop = _run_in_background(sched)
    try:
        assert _until(lambda: len(BlockingPreBind.entered) == 6)
        events_before = len(backend.events)
        leading.clear()  # the Lease is lost while six PreBinds block
        backend.create(make_pod("late"))
        BlockingPreBind.release.set()
        assert _until(lambda: sched.in_flight() == 0)
        assert _bound(backend) == set()
        # Forgotten in the cache, nothing written: no binding, no event, no status.
        assert all(not sched.cache.is_assumed_pod(p) for p in backend.list("Pod"))
        assert len(backend.events) == events_before
        assert all(not p.status.conditions for p in backend.list("Pod"))
        # No new scheduling cycle behind the fence.
        time.sleep(0.2)
        assert "late" not in {r.pod.name for r in sched.results.values() if r.pod is not None}
        # Nothing is lost: the abandoned pods wait in the queue, unbound.
        queued = {p.name for p in sched.queue.pending_pods()}
        assert {f"slow-{i}" for i in range(6)} | {"late"} <= queued
        # The fence opens again: every pod is scheduled and bound.
        leading.set()
        sched.queue.flush_unschedulable_pods_leftover()
        assert _until(lambda: len(_bound(backend)) == 7)
    finally:
        sched.stop()
        loop.join(WAIT)


def test_stop_with_a_grace_period_abandons_what_is_still_running() -> None:
    sched, backend = _scheduler()
    for i in range(4):
        backend.create(make_pod(f"slow-{i}", labels={"block": "1"}))
    backend.create(make_pod("quick"))
    loop = _run_in_background(sched)
    assert _until(lambda: len(BlockingPreBind.entered) == 4 and "quick" in _bound(backend))
    sched.stop(grace=0.1)
    loop.join(WAIT)
    assert not sched.may_bind()
    BlockingPreBind.release.set()
    assert _until(lambda: sched.in_flight() == 0)
    assert _bound(backend) == {"quick"}


def test_a_fence_that_raises_counts_as_lost() -> None:
    def broken() -> bool:
        raise RuntimeError("no lease")

    sched, backend = _scheduler(fence=broken)
    backend.create(make_pod("p"))
    assert sched.schedule_one() is False
    assert sched.may_bind() is False
    sched.stop()


def test_max_results_and_max_events_keep_the_latest() -> None:
    sched, backend = new_scheduler(
        config(), [make_node("n1", cpu=64000, pods=500)], max_results=10, max_events=20
    )
    for i in range(100):
        backend.create(make_pod(f"p{i:03d}"))
    sched.run_until_idle()
    assert len(sched.results) == 10
    names = sorted(r.pod.name for r in sched.results.values() if r.pod is not None)
    assert names == [f"p{i:03d}" for i in range(90, 100)]
    assert 20 <= len(sched.events) < 40
    assert sched.events[-1].regarding == "default/p099"
    assert len(_bound(backend)) == 100
    sched.stop()


def test_results_and_events_are_unbounded_by_default() -> None:
    sched, backend = new_scheduler(config(), [make_node("n1", cpu=64000, pods=500)])
    for i in range(100):
        backend.create(make_pod(f"p{i:03d}"))
    sched.run_until_idle()
    assert len(sched.results) == 100
    assert len(sched.events) == 100
    sched.stop()


@pytest.mark.parametrize("bad", [{"max_results": 0}, {"max_events": 0}])
def test_bounds_must_be_positive(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="must be at least 1"):
        new_scheduler(config(), **bad)


@pytest.mark.property
@settings(max_examples=25, deadline=None)
@given(
    max_results=st.integers(min_value=1, max_value=12),
    max_events=st.integers(min_value=1, max_value=12),
    pods=st.integers(min_value=0, max_value=30),
)
def test_bounded_results_keep_exactly_the_latest_pods(
    max_results: int, max_events: int, pods: int
) -> None:
    sched, backend = new_scheduler(
        config(),
        [make_node("n1", cpu=64000, pods=500)],
        max_results=max_results,
        max_events=max_events,
    )
    names = [f"p{i:03d}" for i in range(pods)]
    for name in names:
        backend.create(make_pod(name))
    sched.run_until_idle()
    kept = sorted(r.pod.name for r in sched.results.values() if r.pod is not None)
    assert kept == names[max(0, pods - max_results) :]
    assert len(sched.events) < 2 * max_events
    assert [e.regarding for e in sched.events] == [
        f"default/{n}" for n in names[len(names) - len(sched.events) :]
    ]
    assert len(_bound(backend)) == pods  # bounding what is kept never changes what is done
    sched.stop()
