"""The backoffQ: pods waiting out their backoff (upstream ``backoff_queue.go``).

Two heaps ordered by backoff expiry: one for pods a plugin rejected, one for pods whose
attempt ended in an error. With ``SchedulerPopFromBackoffQ`` the expiry is truncated to a 1 s
ordering window, and pods of one window are ordered as the activeQ orders them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from schedframe.framework import Clock, PodInfo, QueuedPodInfo
from schedframe.objects import Pod
from schedframe.queue._heap import KeyedHeap, _Entry

__all__ = ["BACKOFF_ORDERING_WINDOW", "BackoffQueue", "is_error_pod", "set_pod"]

#: The ordering window of the backoffQ, and the period of its flush (upstream
#: ``backoffQOrderingWindowDuration``, KEP-5142).
BACKOFF_ORDERING_WINDOW: Final = 1.0

#: "No backoff": before any time (upstream's zero ``time.Time``).
_NO_BACKOFF: Final = -math.inf


def _uid(qpi: QueuedPodInfo) -> str:
    return qpi.pod.uid


def _ns(seconds: float) -> int:
    return round(seconds * 1_000_000_000)


def is_error_pod(qpi: QueuedPodInfo) -> bool:
    """True when no plugin rejected the pod: its attempt ended in an error."""
    return not qpi.unschedulable_plugins and not qpi.pending_plugins


class BackoffQueue:
    """The podBackoffQ and the podErrorBackoffQ, used as one queue. Not locked."""

    def __init__(
        self,
        clock: Clock,
        initial_backoff: float,
        max_backoff: float,
        active_less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        pop_from_backoff_q: bool,
        active_sort_key: Callable[[QueuedPodInfo], Any] | None = None,
    ) -> None:
        self._clock = clock
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self._initial_ns = _ns(initial_backoff)
        self._max_ns = _ns(max_backoff)
        self._active_less = active_less
        self._active_sort_key = active_sort_key
        self._aligned = pop_from_backoff_q
        # Each heap's sort key orders exactly as its ``less`` does (``backoff_time`` depends
        # on the timestamp and counts, which change only while the pod is out of the queue).
        if pop_from_backoff_q:
            self._pod_q: KeyedHeap[QueuedPodInfo] = KeyedHeap(
                _uid,
                self._less_with_priority,
                None if active_sort_key is None else self._key_with_priority,
            )
        else:
            self._pod_q = KeyedHeap(_uid, self._less_completed, self.backoff_time)
        self._error_q: KeyedHeap[QueuedPodInfo] = KeyedHeap(
            _uid, self._less_completed, self.backoff_time
        )

    # -- backoff arithmetic --------------------------------------------------------------------

    def align_to_window(self, t: float) -> float:
        """Truncate ``t`` to its ordering window (only with SchedulerPopFromBackoffQ)."""
        if not self._aligned:
            return t
        return math.floor(t / BACKOFF_ORDERING_WINDOW) * BACKOFF_ORDERING_WINDOW

    def calculate_backoff_duration(self, count: int) -> float:
        """``initial * 2**(count-1)`` capped at the maximum; 0 for ``count == 0``.

        Computed on integer nanoseconds with upstream's shift-and-compare, so it cannot
        overflow and rounds as upstream does.
        """
        if count <= 0:
            return 0.0
        shift = count - 1
        if self._initial_ns > (self._max_ns >> shift):
            return self._max_ns / 1_000_000_000
        return (self._initial_ns << shift) / 1_000_000_000

    def backoff_time(self, qpi: QueuedPodInfo) -> float:
        """When the pod's backoff ends (cached in ``qpi.backoff_expiration``).

        The count is ``unschedulable_count``, or ``consecutive_errors_count`` when that is
        positive; a pod with a zero count, or a queue with a zero maximum, has no backoff.
        """
        if self._max_ns == 0:
            return _NO_BACKOFF
        count = qpi.unschedulable_count
        if qpi.consecutive_errors_count > 0:
            count = qpi.consecutive_errors_count
        if count == 0:
            return _NO_BACKOFF
        if qpi.backoff_expiration is None:
            duration = self.calculate_backoff_duration(count)
            qpi.backoff_expiration = self.align_to_window(qpi.timestamp + duration)
        return qpi.backoff_expiration

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """True while the backoff lasts; a pod whose expiry is in the current window still waits."""
        return not self.backoff_time(qpi) < self.align_to_window(self._clock.now())

    def completion_time(self, qpi: QueuedPodInfo) -> float:
        """The earliest clock reading at which :meth:`is_backing_off` turns false."""
        bo = self.backoff_time(qpi)
        if bo == _NO_BACKOFF:
            return self._clock.now()
        if self._aligned:
            return bo + BACKOFF_ORDERING_WINDOW
        return math.nextafter(bo, math.inf)

    def _less_with_priority(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        bo1 = self.backoff_time(a)
        bo2 = self.backoff_time(b)
        if bo1 != bo2:
            return bo1 < bo2
        return self._active_less(a, b)

    def _less_completed(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.backoff_time(a) < self.backoff_time(b)

    def _key_with_priority(self, qpi: QueuedPodInfo) -> tuple[float, Any]:
        # The sort key of _less_with_priority: by expiry, then as the activeQ orders.
        assert self._active_sort_key is not None
        return (self.backoff_time(qpi), self._active_sort_key(qpi))

    def copy_state(
        self, other: BackoffQueue, convert: Callable[[QueuedPodInfo], QueuedPodInfo]
    ) -> None:
        """Make this (empty) queue hold what ``other`` holds, entries through ``convert``
        (expiries included: they are cached on the entries)."""
        self._pod_q.copy_state(other._pod_q, convert)
        self._error_q.copy_state(other._error_q, convert)

    # -- the queue ---------------------------------------------------------------------------

    def add(self, qpi: QueuedPodInfo) -> None:
        """Add to the error heap when no plugin rejected the pod, else to the backoff heap."""
        uid = qpi.pod.uid
        if is_error_pod(qpi):
            self._pod_q.delete(uid)
            self._error_q.add_or_update(qpi)
        else:
            self._error_q.delete(uid)
            self._pod_q.add_or_update(qpi)

    def update(self, new_pod: Pod, uid: str) -> QueuedPodInfo | None:
        """Replace the pod of the entry ``uid``, keeping its place; ``None`` when absent."""
        for heap in (self._pod_q, self._error_q):
            qpi = heap.get(uid)
            if qpi is not None:
                set_pod(qpi, new_pod)
                heap.add_or_update(qpi)
                return qpi
        return None

    def delete(self, uid: str) -> QueuedPodInfo | None:
        """Remove the entry ``uid`` from whichever heap holds it."""
        qpi = self._pod_q.delete(uid)
        if qpi is None:
            qpi = self._error_q.delete(uid)
        return qpi

    def get(self, uid: str) -> QueuedPodInfo | None:
        """The entry ``uid``, if queued."""
        qpi = self._pod_q.get(uid)
        return qpi if qpi is not None else self._error_q.get(uid)

    def entry_getters(
        self,
    ) -> tuple[
        Callable[[str], _Entry[QueuedPodInfo] | None], Callable[[str], _Entry[QueuedPodInfo] | None]
    ]:
        """The two heaps' ``uid -> entry`` lookups (see :meth:`KeyedHeap.entry_getter`)."""
        return self._pod_q.entry_getter(), self._error_q.entry_getter()

    def __contains__(self, uid: object) -> bool:
        return uid in self._pod_q or uid in self._error_q

    def __len__(self) -> int:
        return len(self._pod_q) + len(self._error_q)

    def len_backoff(self) -> int:
        """Pods in the podBackoffQ only (the ones Pop may take when the activeQ is empty)."""
        return len(self._pod_q)

    def pop_backoff(self) -> QueuedPodInfo | None:
        """Pop the head of the podBackoffQ, backoff done or not (never the error heap)."""
        return self._pod_q.pop()

    def pop_all_backoff_completed(self) -> list[QueuedPodInfo]:
        """Pop every pod whose backoff is over: the podBackoffQ's first, then the error heap's."""
        popped: list[QueuedPodInfo] = []
        for heap in (self._pod_q, self._error_q):
            while True:
                head = heap.peek()
                if head is None or self.is_backing_off(head):
                    break
                heap.pop()
                popped.append(head)
        return popped

    def ordered(self) -> list[QueuedPodInfo]:
        """The podBackoffQ in pop order, then the error heap in pop order."""
        return self._pod_q.ordered() + self._error_q.ordered()

    def next_completion(self) -> float | None:
        """The earliest time a flush would move a pod out, or ``None`` when empty."""
        times = [
            self.completion_time(head)
            for head in (self._pod_q.peek(), self._error_q.peek())
            if head is not None
        ]
        return min(times) if times else None


def set_pod(qpi: QueuedPodInfo, pod: Pod) -> None:
    """Point ``qpi`` at the new version of its pod (upstream ``QueuedPodInfo.Update``)."""
    if qpi.pod_info.pod is not pod:
        qpi.pod_info = PodInfo(pod)
