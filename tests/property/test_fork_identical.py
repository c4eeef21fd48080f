"""A fork behaves as its original would: the same operations after the fork give the same
decisions and the same state, pods in backoff or unschedulable at the fork included; and after
the fork, neither side's changes reach the other's cache, snapshot or queue."""

from __future__ import annotations

import threading
from typing import cast

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from schedframe.backends import BackendFork, MemoryBackend, WatchEvent
from schedframe.cache import Cache
from schedframe.objects import Node, Pod, PodDisruptionBudget
from schedframe.queue import SchedulingQueue
from schedframe.scheduler import Scheduler, VirtualClock, canonical_scheduler_state
from schedframe.scheduler._protocols import CacheLike
from schedframe.testing.builders import make_node, make_pdb, make_pod

pytestmark = pytest.mark.property

Op = tuple[str, int, int]

_OPS = [
    "pod",
    "pod",
    "big",
    "gated",
    "ungate",
    "delete",
    "cordon",
    "uncordon",
    "node",
    "bignode",
    "one",
    "run",
    "advance",
    "wait",
]

ops = st.lists(
    st.tuples(st.sampled_from(_OPS), st.integers(0, 5), st.integers(1, 4)),
    max_size=14,
)


def _cluster() -> list[Node | Pod | PodDisruptionBudget]:
    nodes: list[Node | Pod | PodDisruptionBudget] = [
        make_node(f"n{i}")
        .capacity(cpu="4", memory="8Gi", pods=110)
        .label("zone", f"z{i % 2}")
        .obj()
        for i in (3, 1, 10, 2)  # out of name order
    ]
    running: list[Node | Pod | PodDisruptionBudget] = [
        make_pod(f"r{i}").req(cpu="1").label("app", "web").node(f"n{(1, 2, 3)[i % 3]}").obj()
        for i in range(4)
    ]
    return [*nodes, *running, make_pdb("web").selector(app="web").min_available(3).obj()]


def _scheduler(*, graceful: bool = False) -> Scheduler:
    clock = VirtualClock(start=1000.0)
    backend = MemoryBackend(clock=clock, graceful_deletion=graceful)
    sched = Scheduler.from_config(None, backend, deterministic=True, clock=clock, seed=3)
    for obj in _cluster():  # after the scheduler: its node tree has them in arrival order
        backend.create(obj)
    return sched


def _apply(sched: Scheduler, steps: list[Op], tag: str) -> None:
    """Run ``steps`` on ``sched`` and its backend, without running to idle at the end (so pods
    may be left in backoff or unschedulable); same steps, same writes and calls."""
    backend = sched.backend
    clock = sched.clock
    assert isinstance(backend, MemoryBackend) and isinstance(clock, VirtualClock)
    for n, (op, a, b) in enumerate(steps):
        name = f"{tag}{n}"
        if op == "pod":
            backend.create(make_pod(name).req(cpu=str(b)).priority(a * 100).obj())
        elif op == "big":
            backend.create(make_pod(name).req(cpu=str(4 + b)).obj())
        elif op == "gated":
            backend.create(make_pod(name).req(cpu="1").scheduling_gates("example.com/g").obj())
        elif op == "ungate":
            gated = [
                p
                for p in backend.list("Pod")
                if isinstance(p, Pod) and p.spec.scheduling_gates and not p.spec.node_name
            ]
            if gated:
                backend.update(make_pod(gated[a % len(gated)].name).req(cpu="1").obj())
        elif op == "delete":
            pods = [p for p in backend.list("Pod") if isinstance(p, Pod)]
            if pods:
                backend.delete(pods[a % len(pods)])
        elif op in ("cordon", "uncordon"):
            nodes = [x for x in backend.list("Node") if isinstance(x, Node)]
            node = nodes[a % len(nodes)]
            backend.update(
                make_node(node.metadata.name)
                .capacity(cpu=str(node.status.allocatable["cpu"] // 1000), memory="8Gi", pods=110)
                .labels(node.metadata.labels)
                .unschedulable(op == "cordon")
                .obj()
            )
        elif op == "node":
            if backend.get("Node", f"x{a}") is None:
                backend.create(make_node(f"x{a}").capacity(cpu=str(b + 3), memory="8Gi").obj())
        elif op == "bignode":  # fits every "big" pod: moves them to the backoffQ
            if backend.get("Node", f"y{a}") is None:
                backend.create(make_node(f"y{a}").capacity(cpu="9", memory="8Gi").obj())
        elif op == "one":
            sched.schedule_one()
        elif op == "run":
            sched.run_until_idle()
        elif op == "advance":
            clock.advance(b * 0.7)
        else:
            clock.advance(100.0 * b)


def _decisions(sched: Scheduler) -> dict[str, tuple[str, str, str, tuple[str, ...], int]]:
    return {
        uid: (r.suggested_host, r.outcome, r.message, r.plugins, r.attempts)
        for uid, r in sched.results.items()
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=ops, backoff=st.booleans(), graceful=st.booleans(), nested=st.booleans(), after=ops)
def test_a_fork_decides_as_its_original_would(
    before: list[Op], backoff: bool, graceful: bool, nested: bool, after: list[Op]
) -> None:
    original = _scheduler(graceful=graceful)
    if backoff:  # end with pods in backoff: rejected, then moved by a node they fit
        before = [*before, ("big", 0, 1), ("run", 0, 0), ("bignode", 5, 0)]
    _apply(original, before, "a")
    for queue in ("backoff", "unschedulable", "active"):
        if getattr(original.queue, f"{queue}_pods")():
            event(f"pods {queue} at the fork")
    if original.queue.nominated_node_names():
        event("nominated pods at the fork")
    if any(isinstance(p, Pod) and p.deletion_timestamp for p in original.backend.list("Pod")):
        event("pods in their grace period at the fork")
    fork = original.fork()
    if nested:  # a fork of the fork
        fork = fork.fork()
    assert canonical_scheduler_state(fork) == canonical_scheduler_state(original)
    seen = dict(original.results)

    _apply(original, after, "b")
    _apply(fork, after, "b")
    assert canonical_scheduler_state(fork) == canonical_scheduler_state(original)
    original.run_until_idle()
    fork.run_until_idle()
    assert canonical_scheduler_state(fork) == canonical_scheduler_state(original)
    # The fork's results are the attempts made after the fork: the original's, one for one.
    attempted = {uid for uid, result in original.results.items() if seen.get(uid) is not result}
    assert set(fork.results) == attempted
    assert _decisions(fork) == {u: d for u, d in _decisions(original).items() if u in attempted}


def test_pods_in_backoff_stay_in_backoff_in_the_fork() -> None:
    sched = _scheduler()
    backend = sched.backend
    assert isinstance(backend, MemoryBackend)
    backend.create(make_pod("big").req(cpu="5").obj())
    sched.run_until_idle()
    assert [p.name for p in sched.queue.unschedulable_pods()] == ["big"]
    # A node it fits moves it to the backoffQ, where it waits out its backoff.
    backend.create(make_node("large").capacity(cpu="8", memory="8Gi").obj())
    assert [p.name for p in sched.queue.backoff_pods()] == ["big"]

    fork = sched.fork()
    assert [p.name for p in fork.queue.backoff_pods()] == ["big"]
    queue = cast("SchedulingQueue", fork.queue)
    mine = queue.get_queued_pod_info("default/big")
    theirs = cast("SchedulingQueue", sched.queue).get_queued_pod_info("default/big")
    assert mine is not None and theirs is not None and mine is not theirs
    assert (mine.attempts, mine.timestamp, mine.unschedulable_plugins) == (
        theirs.attempts,
        theirs.timestamp,
        theirs.unschedulable_plugins,
    )
    assert queue.backoff_time(mine) == cast("SchedulingQueue", sched.queue).backoff_time(theirs)
    assert mine.attempts == 1
    assert fork.queue.next_wakeup() == sched.queue.next_wakeup()
    # Both retry it at the same virtual time, with the same attempt count.
    for s in (sched, fork):
        s.run_until_idle()
    assert sched.clock.now() == fork.clock.now()
    assert sched.results["default/big"].attempts == fork.results["default/big"].attempts == 2
    assert sched.placements()["default/big"] == fork.placements()["default/big"] == "large"


def test_changes_after_the_fork_stay_on_their_side() -> None:
    sched = _scheduler()
    backend = sched.backend
    assert isinstance(backend, MemoryBackend)
    backend.create(make_pod("big").req(cpu="5").obj())
    backend.create(make_pod("w").req(cpu="1").obj())
    sched.run_until_idle()
    fork = sched.fork()
    fork_backend = fork.backend
    assert isinstance(fork_backend, BackendFork)
    mine = cast("Cache", fork.cache)
    theirs = cast("Cache", sched.cache)
    assert mine._nodes["n1"] is theirs._nodes["n1"]  # shared until one side changes it
    before_original = canonical_scheduler_state(sched)
    before_fork = canonical_scheduler_state(fork)

    # The fork fills a node, deletes a running pod, adds a node and runs: the original's
    # cache, snapshot and queue do not move.
    fork_backend.create(make_pod("f1").req(cpu="3").obj())
    fork_backend.delete(make_pod("r0").obj())
    fork_backend.create(make_node("big-node").capacity(cpu="8", memory="8Gi").obj())
    fork.run_until_idle()
    assert fork.placements()["default/big"] == "big-node"
    assert canonical_scheduler_state(sched) == before_original
    assert mine._nodes["n1"] is not theirs._nodes["n1"]  # the fork removed r0 from n1

    # The original changes too: the fork's state (backend aside) does not move.
    after_fork = canonical_scheduler_state(fork)
    backend.create(make_pod("o1").req(cpu="2").obj())
    backend.delete(make_pod("r1").obj())
    sched.run_until_idle()
    assert canonical_scheduler_state(fork) == after_fork
    assert after_fork != before_fork
    assert "big-node" not in theirs.dump().nodes


def test_a_fork_starts_from_the_original_node_order() -> None:
    sched = _scheduler()
    fork = sched.fork()
    for s in (sched, fork):
        backend = s.backend
        assert isinstance(backend, MemoryBackend)
        backend.create(make_pod("x").req(cpu="1").obj())
        s.run_until_idle()
    assert [i.name for i in fork.snapshot.list()] == [i.name for i in sched.snapshot.list()]
    assert [i.name for i in sched.snapshot.list()] == ["n3", "n1", "n10", "n2"]  # arrival


def test_victims_in_their_grace_period_go_in_the_fork_when_they_would_in_the_original() -> None:
    sched = _scheduler(graceful=True)
    backend = sched.backend
    assert isinstance(backend, MemoryBackend)
    for i, name in enumerate(("n3", "n1", "n10", "n2")):
        backend.create(make_pod(f"filler{i}").req(cpu="2").node(name).obj())
    backend.create(make_pod("vip").req(cpu="3").priority(1000).obj())
    sched.run_until_idle()
    # Preemption evicted a victim, which has 30 s to go; the preemptor waits, nominated.
    terminating = [
        p for p in backend.list("Pod") if isinstance(p, Pod) and p.deletion_timestamp is not None
    ]
    assert len(terminating) == 1
    nominated = sched.queue.nominated_node_names()
    assert len(nominated) == 1
    fork = sched.fork()
    assert fork.queue.nominated_node_names() == nominated
    for s in (sched, fork):
        clock = s.clock
        assert isinstance(clock, VirtualClock)
        clock.advance(31.0)
        s.run_until_idle()
    assert fork.placements()["default/vip"] == sched.placements()["default/vip"]
    assert nominated == {sched.placements()["default/vip"]}
    assert canonical_scheduler_state(fork) == canonical_scheduler_state(sched)


def test_the_fork_flushes_on_the_original_grid_and_order() -> None:
    sched = _scheduler(graceful=True)
    backend = sched.backend
    clock = sched.clock
    assert isinstance(backend, MemoryBackend) and isinstance(clock, VirtualClock)
    backend.create(make_pod("big").req(cpu="5").obj())
    sched.run_until_idle()  # the periodic flushes start at 1000.0: due at 1001.0, 1002.0, ...
    clock.advance(0.7)
    backend.delete(make_pod("r0").obj())  # in its grace period until 1030.7
    backend.create(make_node("large").capacity(cpu="8", memory="8Gi").obj())
    assert [p.name for p in sched.queue.backoff_pods()] == ["big"]

    fork = sched.fork()
    fork_clock = fork.clock
    assert isinstance(fork_clock, VirtualClock)
    assert fork_clock.next_deadline() == clock.next_deadline() == 1002.0
    fork_backend = fork.backend
    assert isinstance(fork_backend, BackendFork)
    key = ("default", "r0")
    theirs = [*sched._timers, backend._finalizing[key][2]]
    mine = [*fork._timers, fork_backend._finalizing[key][2]]

    def ranks(clock: VirtualClock, timers: list[object]) -> list[int]:
        order = [clock.order_of(t) for t in timers]  # type: ignore[arg-type]
        return sorted(range(len(timers)), key=lambda i: order[i] or 0)

    assert ranks(fork_clock, mine) == ranks(clock, theirs)
    for s in (sched, fork):
        s_clock = s.clock
        assert isinstance(s_clock, VirtualClock)
        s_clock.advance(40.0)
    assert fork.queue.active_pods() == sched.queue.active_pods()
    assert fork_backend.get("Pod", "r0") is None and backend.get("Pod", "r0") is None


def test_a_scheduler_whose_cache_was_replaced_does_not_fork() -> None:
    sched = _scheduler()
    sched.cache = cast("CacheLike", _WrappedCache(sched.cache))
    with pytest.raises(TypeError, match="cannot fork a scheduler whose queue or cache was"):
        sched.fork()


class _WrappedCache:
    """A cache wrapper (what an embedding program might install): not a Cache to copy."""

    def __init__(self, inner: object) -> None:
        self.inner = inner


def test_a_fork_made_in_a_watch_callback_gets_the_writes_not_delivered_yet() -> None:
    sched = _scheduler()
    backend = sched.backend
    assert isinstance(backend, MemoryBackend)
    forks: list[Scheduler] = []

    def watcher(event: WatchEvent) -> None:
        if event.type == "ADDED" and isinstance(event.obj, Pod) and event.obj.name == "trigger":
            backend.create(make_pod("late").req(cpu="1").obj())  # delivered after this event
            forks.append(sched.fork())

    backend.subscribe(watcher)
    backend.create(make_pod("trigger").req(cpu="1").obj())
    (fork,) = forks
    assert [p.name for p in fork.queue.active_pods()] == ["trigger", "late"]
    assert canonical_scheduler_state(fork) == canonical_scheduler_state(sched)


def test_a_scheduler_does_not_fork_during_a_scheduling_cycle() -> None:
    sched = _scheduler()
    backend = sched.backend
    assert isinstance(backend, MemoryBackend)
    backend.create(make_pod("p").req(cpu="1").obj())
    popped = sched.queue.pop()
    assert popped is not None
    with pytest.raises(RuntimeError, match="during the scheduling cycle of pod default/p"):
        sched.fork()


def test_a_fork_taken_while_another_thread_writes_is_of_one_instant() -> None:
    backend = MemoryBackend([make_node("n").capacity(cpu="1000", pods=100000).obj()])
    sched = Scheduler.from_config(None, backend)  # real mode: writers on other threads
    stop = threading.Event()

    def write() -> None:
        n = 0
        while not stop.is_set():
            backend.create(make_pod(f"w{n}").req(cpu="1m").node("n").obj())
            n += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        for _ in range(20):
            fork = sched.fork()
            fork_backend = fork.backend
            assert isinstance(fork_backend, BackendFork)
            stored = {p.key for p in fork_backend.list("Pod") if isinstance(p, Pod)}
            cached = {pi.pod.key for pi in cast("Cache", fork.cache).dump().nodes["n"].pods}
            assert cached == stored
            fork.stop()
            fork_backend.discard()
    finally:
        stop.set()
        writer.join()
        sched.stop()
