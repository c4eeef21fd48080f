"""BackoffQueue: upstream backoff_queue_test.go, plus the heap under it."""

from __future__ import annotations

import math

import pytest

from schedframe.framework import PodInfo, QueuedPodInfo
from schedframe.objects import ObjectMeta, Pod, PodSpec
from schedframe.queue._backoff import BackoffQueue
from schedframe.queue._heap import KeyedHeap

T0 = 1_700_000_000.0
NS = 1e-9


class FakeClock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def now(self) -> float:
        return self.t


def make_pod(name: str, priority: int | None = None) -> Pod:
    return Pod(metadata=ObjectMeta(name=name, uid=name), spec=PodSpec(priority=priority))


def priority_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    p1, p2 = a.pod.priority, b.pod.priority
    return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)


def make_qpi(
    name: str, timestamp: float, count: int = 1, *plugins: str, priority: int | None = None
) -> QueuedPodInfo:
    return QueuedPodInfo(
        pod_info=PodInfo(make_pod(name, priority)),
        timestamp=timestamp,
        attempts=count,
        unschedulable_count=count if plugins else 0,
        consecutive_errors_count=0 if plugins else count,
        unschedulable_plugins=set(plugins),
    )


@pytest.mark.parametrize(
    ("initial", "maximum", "count", "want"),
    [
        pytest.param(1 * NS, 32 * NS, 0, 0.0, id="no backoff"),
        pytest.param(1 * NS, 32 * NS, 16, 32 * NS, id="normal"),
        pytest.param(1 * NS, (2**31 - 1) * NS, 32, (2**31 - 1) * NS, id="overflow_32bit"),
        pytest.param(1 * NS, (2**63 - 1) * NS, 64, (2**63 - 1) * NS, id="overflow_64bit"),
        pytest.param(1.0, 10.0, 1, 1.0, id="default 1st"),
        pytest.param(1.0, 10.0, 4, 8.0, id="default 4th"),
        pytest.param(1.0, 10.0, 5, 10.0, id="default 5th capped"),
        pytest.param(1.0, 10.0, 1000, 10.0, id="huge count"),
    ],
)
def test_calculate_backoff_duration(
    initial: float, maximum: float, count: int, want: float
) -> None:
    """TestBackoffQueue_calculateBackoffDuration (the count is the unschedulable count)."""
    bq = BackoffQueue(FakeClock(), initial, maximum, priority_less, True)
    assert bq.calculate_backoff_duration(count) == pytest.approx(want, rel=1e-12, abs=0)


def test_backoff_count_uses_errors_when_positive() -> None:
    bq = BackoffQueue(FakeClock(), 1.0, 10.0, priority_less, False)
    info = make_qpi("p", T0, 3, "plugin")
    info.consecutive_errors_count = 1
    assert bq.backoff_time(info) == T0 + 1.0  # one error, not three rejections
    info.backoff_expiration = None
    info.consecutive_errors_count = 0
    assert bq.backoff_time(info) == T0 + 4.0


PODS = {
    "pod0": ("pod0", T0 - 2, "plugin"),
    "pod1": ("pod1", T0 + 1, "plugin"),
    "pod2": ("pod2", T0 - 2),
    "pod3": ("pod3", T0 + 1),
}


@pytest.mark.parametrize("pop_from_backoff_q", [True, False])
@pytest.mark.parametrize(
    ("in_backoff", "want"),
    [
        pytest.param([], [], id="Both queues empty, no pods moved to activeQ"),
        pytest.param(["pod0", "pod1"], ["pod0"], id="Pods only in backoffQ, some pods moved to activeQ"),
        pytest.param(["pod2", "pod3"], ["pod2"], id="Pods only in errorBackoffQ, some pods moved to activeQ"),
        pytest.param(["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"], id="Pods in both queues, some pods moved to activeQ"),
        pytest.param(["pod0", "pod2"], ["pod0", "pod2"], id="Pods in both queues, all pods moved to activeQ"),
        pytest.param(["pod1", "pod3"], [], id="Pods in both queues, no pods moved to activeQ"),
    ],
)  # fmt: skip
def test_pop_all_backoff_completed(
    in_backoff: list[str], want: list[str], pop_from_backoff_q: bool
) -> None:
    """TestBackoffQueue_popEachBackoffCompleted."""
    bq = BackoffQueue(FakeClock(T0 + 0.5), 1.0, 10.0, priority_less, pop_from_backoff_q)
    for name in in_backoff:
        pod_name, ts, *plugins = PODS[name]
        bq.add(make_qpi(str(pod_name), float(ts), 1, *map(str, plugins)))
    got = [info.pod.name for info in bq.pop_all_backoff_completed()]
    assert got == want
    assert len(bq) == len(in_backoff) - len(want)


@pytest.mark.parametrize(
    ("pop_from_backoff_q", "want"),
    [
        pytest.param(True, ["pod5", "pod4", "pod2", "pod3"], id="Pods with the same window are ordered by priority if PopFromBackoffQ is enabled"),
        # Upstream lists pod4 before pod3: equal expiries fall out of Go's heap in an
        # implementation-defined order; ours breaks such ties by insertion order.
        pytest.param(False, ["pod5", "pod3", "pod4", "pod2"], id="Pods priority doesn't matter if PopFromBackoffQ is disabled"),
    ],
)  # fmt: skip
def test_backoff_queue_ordering(pop_from_backoff_q: bool, want: list[str]) -> None:
    """TestBackoffQueueOrdering."""
    clock = FakeClock(T0)
    bq = BackoffQueue(clock, 1.0, 10.0, priority_less, pop_from_backoff_q)
    for name, ts, prio in [
        ("pod0", T0, 1),
        ("pod1", T0 - 1, 1),
        ("pod2", T0 - 2 + 0.001, 2),
        ("pod3", T0 - 2, 1),
        ("pod4", T0 - 2, 2),
        ("pod5", T0 - 3, 1),
    ]:
        bq.add(make_qpi(name, ts, 1, "plugin", priority=prio))
    assert [i.pod.name for i in bq.pop_all_backoff_completed()] == want


def test_is_backing_off_window_edges() -> None:
    clock = FakeClock(T0 + 0.4)
    bq = BackoffQueue(clock, 1.0, 10.0, priority_less, True)
    info = make_qpi("p", T0 + 0.4, 1, "plugin")
    assert bq.backoff_time(info) == T0 + 1  # truncated to the window
    for t, backing_off in [(T0 + 1.4, True), (T0 + 1.999, True), (T0 + 2.0, False)]:
        clock.t = t
        assert bq.is_backing_off(info) is backing_off
    assert bq.completion_time(info) == T0 + 2
    fresh = make_qpi("q", T0, 0, "plugin")
    assert bq.backoff_time(fresh) == -math.inf and not bq.is_backing_off(fresh)


def test_add_moves_between_heaps_and_update_delete() -> None:
    bq = BackoffQueue(FakeClock(), 1.0, 10.0, priority_less, True)
    info = make_qpi("p", T0, 1)
    bq.add(info)
    assert bq.len_backoff() == 0 and len(bq) == 1  # error heap
    info.unschedulable_plugins = {"x"}
    bq.add(info)
    assert bq.len_backoff() == 1 and len(bq) == 1
    new_pod = make_pod("p", 7)
    updated = bq.update(new_pod, "p")
    assert updated is info and info.pod is new_pod
    assert bq.update(new_pod, "missing") is None
    assert bq.pop_backoff() is info and len(bq) == 0
    assert bq.delete("p") is None


# -- the keyed heap --------------------------------------------------------------------------


def test_heap_basic_operations() -> None:
    heap: KeyedHeap[tuple[str, int]] = KeyedHeap(lambda x: x[0], lambda a, b: a[1] < b[1])
    for item in [("a", 5), ("b", 3), ("c", 9), ("d", 1), ("e", 3)]:
        heap.add_or_update(item)
    assert len(heap) == 5 and "b" in heap and heap.get("c") == ("c", 9)
    assert heap.peek() == ("d", 1)
    heap.add_or_update(("c", 0))  # update moves it up
    assert heap.ordered() == [("c", 0), ("d", 1), ("b", 3), ("e", 3), ("a", 5)]
    assert heap.delete("b") == ("b", 3) and heap.delete("b") is None
    assert [heap.pop() for _ in range(4)] == [("c", 0), ("d", 1), ("e", 3), ("a", 5)]
    assert heap.pop() is None and heap.peek() is None


def test_heap_ties_keep_insertion_order_across_updates() -> None:
    heap: KeyedHeap[tuple[str, int]] = KeyedHeap(lambda x: x[0], lambda a, b: a[1] < b[1])
    for name in "abcdef":
        heap.add_or_update((name, 1))
    heap.add_or_update(("a", 1))  # in-place update keeps its rank
    heap.delete("b")
    heap.add_or_update(("b", 1))  # re-added: goes last among equals
    assert [heap.pop() for _ in range(6)] == [(n, 1) for n in "acdefb"]
