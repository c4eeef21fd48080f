"""KeyedHeap with a ``sort_key``: the same heap, the same pops, as with ``less`` alone; and the
queue takes the QueueSort plugin's ``sort_key`` when it has one, ``less`` when not."""

from __future__ import annotations

from typing import ClassVar

from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.framework import PodInfo, QueuedPodInfo
from schedframe.objects import ObjectMeta, Pod, PodSpec
from schedframe.queue import SchedulingQueue
from schedframe.queue._heap import KeyedHeap
from schedframe.runtime import Framework

# -- the heap ----------------------------------------------------------------------------------

#: (name, priority, timestamp): PrioritySort's order over plain tuples.
Item = tuple[str, int, float]


def _less(a: Item, b: Item) -> bool:
    return a[1] > b[1] or (a[1] == b[1] and a[2] < b[2])


def _sort_key(item: Item) -> tuple[int, float]:
    return (-item[1], item[2])


def _name(item: Item) -> str:
    return item[0]


# Few names and few keys, so that updates of queued names and equal keys are common.
_NAMES = "abcdef"
_items = st.tuples(st.sampled_from(_NAMES), st.integers(-1, 1), st.sampled_from([0.0, 1.0]))
_ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), _items),
        st.tuples(st.just("delete"), st.sampled_from(_NAMES)),
        st.tuples(st.just("pop"), st.none()),
    ),
    max_size=50,
)


def _layout(heap: KeyedHeap[Item]) -> list[tuple[Item, int]]:
    entries = heap._heap
    assert [e.index for e in entries] == list(range(len(entries)))
    return [(e.item, e.seq) for e in entries]


@settings(max_examples=300)
@given(_ops)
def test_sort_key_heap_pops_as_the_less_heap(ops: list[tuple[str, object]]) -> None:
    """Random adds (new names and updates of queued ones), deletes and pops leave both heaps
    with the same layout and return the same items; equal keys pop in insertion order."""
    calls = 0

    def counting_less(a: Item, b: Item) -> bool:
        nonlocal calls
        calls += 1
        return _less(a, b)

    by_less: KeyedHeap[Item] = KeyedHeap(_name, _less)
    by_key: KeyedHeap[Item] = KeyedHeap(_name, counting_less, _sort_key)
    for op, arg in ops:
        if op == "add":
            assert isinstance(arg, tuple)
            by_less.add_or_update(arg)
            by_key.add_or_update(arg)
        elif op == "delete":
            assert isinstance(arg, str)
            assert by_key.delete(arg) == by_less.delete(arg)
        else:
            assert by_key.pop() == by_less.pop()
        assert _layout(by_key) == _layout(by_less)
        assert by_key.peek() == by_less.peek()
        assert by_key.ordered() == by_less.ordered()
    drained = [by_less.pop() for _ in range(len(by_less))]
    assert [by_key.pop() for _ in range(len(by_key))] == drained
    # The pop order is (key, arrival): sorting by key is stable, so equal keys keep it.
    popped = [item for item in drained if item is not None]
    assert popped == drained
    assert popped == sorted(popped, key=_sort_key)
    assert calls == 0  # with a sort_key, less is never called


def test_sort_key_heap_updates_keep_the_rank_and_rekey() -> None:
    heap: KeyedHeap[Item] = KeyedHeap(_name, _less, _sort_key)
    for name in "abcd":
        heap.add_or_update((name, 0, 1.0))
    heap.add_or_update(("c", 5, 1.0))  # update: moves up on its new key
    heap.add_or_update(("a", 0, 1.0))  # update, same key: keeps its place among equals
    heap.delete("b")
    heap.add_or_update(("b", 0, 1.0))  # re-added: last among equals
    assert heap.ordered() == [("c", 5, 1.0), ("a", 0, 1.0), ("d", 0, 1.0), ("b", 0, 1.0)]
    heap.add_or_update(("c", -1, 1.0))  # update: moves down
    assert [heap.pop() for _ in range(4)] == [
        ("a", 0, 1.0),
        ("d", 0, 1.0),
        ("b", 0, 1.0),
        ("c", -1, 1.0),
    ]


# -- the queue -----------------------------------------------------------------------------------


class _Clock:
    def now(self) -> float:
        return 1_700_000_000.0


class LowFirst(fw.QueueSortPlugin):
    """A third-party QueueSort without ``sort_key``: lower priority first."""

    name: ClassVar[str] = "LowFirst"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return a.pod.priority < b.pod.priority


class KeyedHighFirst(fw.QueueSortPlugin):
    """PrioritySort's order, with its ``sort_key``."""

    name: ClassVar[str] = "KeyedHighFirst"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        p1, p2 = a.pod.priority, b.pod.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

    def sort_key(self, qpi: QueuedPodInfo) -> tuple[int, float]:
        return (-qpi.pod.priority, qpi.timestamp)


def _queue(plugin: fw.QueueSortPlugin) -> tuple[SchedulingQueue, Framework]:
    fwk = Framework(profile_name="default-scheduler", clock=_Clock())
    fwk.add_plugin(plugin)
    return SchedulingQueue(frameworks={"default-scheduler": fwk}, clock=_Clock()), fwk


def _pod(name: str, priority: int | None) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="ns", uid=name), spec=PodSpec(priority=priority)
    )


def _drain(q: SchedulingQueue) -> list[str]:
    out = []
    while (qpi := q.pop()) is not None:
        out.append(qpi.pod.name)
    return out


def test_queue_sort_without_sort_key_orders_by_less() -> None:
    q, fwk = _queue(LowFirst())
    assert fwk.queue_sort_key() is None
    assert q._active.heap._sort_key is None
    for name, priority in [("a", 5), ("b", None), ("c", -3), ("d", 5), ("e", 0)]:
        q.add(_pod(name, priority))
    # c (-3), then b and e (0, by arrival), then a and d (5, by arrival).
    assert [p.name for p in q.active_pods()] == ["c", "b", "e", "a", "d"]
    assert _drain(q) == ["c", "b", "e", "a", "d"]


def test_queue_sort_with_sort_key_keys_the_active_and_backoff_heaps() -> None:
    plugin = KeyedHighFirst()
    q, fwk = _queue(plugin)
    assert fwk.queue_sort_key() == plugin.sort_key
    assert q._active.heap._sort_key == plugin.sort_key
    assert q._backoff._pod_q._sort_key is not None and q._backoff._error_q._sort_key is not None
    for name, priority in [("a", 5), ("b", None), ("c", -3), ("d", 5), ("e", 0)]:
        q.add(_pod(name, priority))
    assert _drain(q) == ["a", "d", "b", "e", "c"]


def test_update_in_the_active_queue_rekeys_the_pod() -> None:
    """A pod updated in the activeQ is re-keyed (an update goes through add_or_update)."""
    q, _ = _queue(KeyedHighFirst())
    low, high = _pod("low", 1), _pod("high", 2)
    q.add(low)
    q.add(high)
    raised = Pod(metadata=low.metadata, spec=PodSpec(priority=3))
    q.update(low, raised)
    assert _drain(q) == ["low", "high"]


def test_instance_attribute_sort_key_is_ignored() -> None:
    """Only a method of the plugin's class counts, as for the other optional methods."""
    plugin = LowFirst()
    plugin.sort_key = lambda qpi: 0  # type: ignore[attr-defined]
    q, fwk = _queue(plugin)
    assert fwk.queue_sort_key() is None and q._active.heap._sort_key is None


def test_queued_pod_info_keys_follow_the_plugin() -> None:
    info = QueuedPodInfo(pod_info=PodInfo(_pod("p", None)), timestamp=2.0)
    assert KeyedHighFirst().sort_key(info) == (0, 2.0)
