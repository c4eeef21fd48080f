"""PrioritySort: the active queue pops higher priority first, then the earlier arrival.

Port of upstream ``pkg/scheduler/framework/plugins/queuesort/priority_sort.go``.
"""

from __future__ import annotations

from typing import ClassVar, Final

from schedframe import framework as fw
from schedframe_plugins import names

__all__ = ["PrioritySort"]

NAME: Final = names.PRIORITY_SORT


class PrioritySort(fw.QueueSortPlugin):
    """Orders pods by ``spec.priority`` (higher first), ties by queue timestamp (earlier first)."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self._handle = handle

    def less(self, a: fw.QueuedPodInfo, b: fw.QueuedPodInfo) -> bool:
        """True when ``a`` should be scheduled before ``b``."""
        p1 = a.pod.priority
        p2 = b.pod.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

    def sort_key(self, qpi: fw.QueuedPodInfo) -> tuple[int, float]:
        """``(-priority, timestamp)``: ``less(a, b)`` exactly when ``sort_key(a) < sort_key(b)``
        (the queue compares these instead of calling ``less``)."""
        return (-qpi.pod.priority, qpi.timestamp)
