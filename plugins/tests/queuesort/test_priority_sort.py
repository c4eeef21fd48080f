"""Port of upstream queuesort/priority_sort_test.go."""

from __future__ import annotations

import pytest

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
