"""Port of upstream queuesort/priority_sort_test.go."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.objects import ObjectMeta, Pod, PodSpec
from schedframe.runtime import Framework
from schedframe_plugins.queuesort import PrioritySort

LOW, HIGH = 10, 20
T1 = 1_700_000_000.0
T2 = T1 + 1.0


def queued(priority: int, timestamp: float) -> fw.QueuedPodInfo:
    pod = Pod(metadata=ObjectMeta(name="p", namespace="default"), spec=PodSpec(priority=priority))
    return fw.QueuedPodInfo(pod_info=fw.PodInfo(pod), timestamp=timestamp)


@pytest.mark.parametrize(
    ("p1", "p2", "want"),
    [
        pytest.param(
            queued(LOW, T1), queued(HIGH, T2), False, id="p1.priority less than p2.priority"
        ),
        pytest.param(
            queued(HIGH, T1), queued(LOW, T2), True, id="p1.priority greater than p2.priority"
        ),
        pytest.param(
            queued(HIGH, T1),
            queued(HIGH, T2),
            True,
            id="equal priority. p1 is added to schedulingQ earlier than p2",
        ),
        pytest.param(
            queued(HIGH, T2),
            queued(HIGH, T1),
            False,
            id="equal priority. p2 is added to schedulingQ earlier than p1",
        ),
    ],
)
def test_less(p1: fw.QueuedPodInfo, p2: fw.QueuedPodInfo, want: bool) -> None:
    assert PrioritySort(None, Framework()).less(p1, p2) is want


def queued_any(priority: int | None, timestamp: float) -> fw.QueuedPodInfo:
    pod = Pod(metadata=ObjectMeta(name="p", namespace="default"), spec=PodSpec(priority=priority))
    return fw.QueuedPodInfo(pod_info=fw.PodInfo(pod), timestamp=timestamp)


_priorities = st.one_of(
    st.none(), st.sampled_from([0, -1, 1, LOW, HIGH]), st.integers(-(2**31), 10**9)
)
_timestamps = st.one_of(st.sampled_from([T1, T2, 0.0]), st.floats(0.0, 2e9))


@given(_priorities, _timestamps, _priorities, _timestamps)
def test_sort_key_agrees_with_less(p1: int | None, t1: float, p2: int | None, t2: float) -> None:
    """``less(a, b)`` exactly when ``sort_key(a) < sort_key(b)`` (an unset priority is 0)."""
    plugin = PrioritySort(None, Framework())
    for a, b in [
        (queued_any(p1, t1), queued_any(p2, t2)),
        (queued_any(p1, t1), queued_any(p2, t1)),  # equal timestamps
        (queued_any(p1, t1), queued_any(p1, t2)),  # equal priorities
    ]:
        assert plugin.less(a, b) == (plugin.sort_key(a) < plugin.sort_key(b))
        assert plugin.less(b, a) == (plugin.sort_key(b) < plugin.sort_key(a))


def test_the_queue_uses_the_sort_key() -> None:
    fwk = Framework()
    plugin = PrioritySort(None, fwk)
    fwk.add_plugin(plugin)
    assert fwk.queue_sort_key() == plugin.sort_key
