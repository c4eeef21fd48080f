"""Seams into a :class:`~schedframe.queue.SchedulingQueue` for table-driven queue tests.

Upstream's ``scheduling_queue_test.go`` sets a case up by writing straight into the queue's
parts (``q.activeQ.add``, ``q.backoffQ.add``, ``q.unschedulablePods.addOrUpdate``), drains the
backoffQ with ``popAllBackoffCompleted`` and asserts which part holds each pod. These functions
do the same to a schedframe queue, so upstream's cases port as data::

    from schedframe.testing import queue as qt

    qt.put_in_unschedulable_pods(queue, qpi)
    queue.move_all_to_active_or_backoff_queue(event)
    assert qt.location(queue, qpi.pod) == qt.BACKOFF_Q

They bypass PreEnqueue, the hints and the nominator, exactly as upstream's direct writes do;
they are for tests, never for a running scheduler.
"""

from __future__ import annotations

from typing import Final

from schedframe.framework import QueuedPodInfo
from schedframe.objects import Pod
from schedframe.queue import SchedulingQueue

__all__ = [
    "ACTIVE_Q",
    "BACKOFF_Q",
    "IN_FLIGHT",
    "UNSCHEDULABLE_PODS",
    "discard_backoff_completed",
    "location",
    "pop_backoff_completed",
    "put_in_active_q",
    "put_in_backoff_q",
    "put_in_unschedulable_pods",
]

#: :func:`location` of a pod in the activeQ (upstream's ``activeQ`` queue name).
ACTIVE_Q: Final = "activeQ"
#: :func:`location` of a pod in the backoffQ, error backoff included (upstream ``backoffQ``).
BACKOFF_Q: Final = "backoffQ"
#: :func:`location` of a pod in the unschedulable pool (upstream ``unschedulablePods``).
UNSCHEDULABLE_PODS: Final = "unschedulablePods"
#: :func:`location` of a popped pod whose attempt is not done yet.
IN_FLIGHT: Final = "inFlight"


def _forget_memo(queue: SchedulingQueue) -> None:
    # A direct write changes what the queue holds behind the nominated-pods memo.
    queue._nominated_memo.clear()


def _check_absent(queue: SchedulingQueue, qpi: QueuedPodInfo) -> None:
    where = location(queue, qpi.pod)
    if where is not None and where != IN_FLIGHT:
        raise ValueError(f"pod {qpi.pod.key} is already in {where}")


def put_in_active_q(queue: SchedulingQueue, qpi: QueuedPodInfo) -> None:
    """Put ``qpi`` into the activeQ as is (upstream ``q.activeQ.add``): no PreEnqueue, no
    nomination. Wakes a blocked :meth:`~schedframe.queue.SchedulingQueue.pop`.

    Raises:
        ValueError: the pod is already queued somewhere.
    """
    with queue._cond:
        _check_absent(queue, qpi)
        queue._active.heap.add_or_update(qpi)
        _forget_memo(queue)
        queue._cond.notify_all()


def put_in_backoff_q(queue: SchedulingQueue, qpi: QueuedPodInfo) -> None:
    """Put ``qpi`` into the backoffQ as is (upstream ``q.backoffQ.add``): into the error heap
    when no plugin rejected it, else the backoff heap; its expiry follows its counts and
    timestamp.

    Raises:
        ValueError: the pod is already queued somewhere.
    """
    with queue._cond:
        _check_absent(queue, qpi)
        queue._backoff.add(qpi)
        _forget_memo(queue)
        queue._cond.notify_all()


def put_in_unschedulable_pods(queue: SchedulingQueue, qpi: QueuedPodInfo) -> None:
    """Put ``qpi`` into the unschedulable pool as is (upstream
    ``q.unschedulablePods.addOrUpdate``).

    Raises:
        ValueError: the pod is already queued somewhere.
    """
    with queue._lock:
        _check_absent(queue, qpi)
        queue._unschedulable[qpi.pod.uid] = qpi
        _forget_memo(queue)


def pop_backoff_completed(queue: SchedulingQueue) -> list[QueuedPodInfo]:
    """Take every backoffQ entry whose backoff is over out of the queue and return them, the
    backoff heap's first, then the error heap's (upstream ``q.backoffQ.popAllBackoffCompleted``).
    Unlike :meth:`~schedframe.queue.SchedulingQueue.flush_backoff_q_completed` nothing goes
    to the activeQ."""
    with queue._lock:
        popped = queue._backoff.pop_all_backoff_completed()
        _forget_memo(queue)
        return popped


def discard_backoff_completed(queue: SchedulingQueue) -> int:
    """:func:`pop_backoff_completed`, dropping the entries; returns how many were dropped."""
    return len(pop_backoff_completed(queue))


def location(queue: SchedulingQueue, pod: Pod | str) -> str | None:
    """Which part of the queue holds the pod (or the pod with that uid): :data:`ACTIVE_Q`,
    :data:`BACKOFF_Q`, :data:`UNSCHEDULABLE_PODS`, :data:`IN_FLIGHT`, or ``None``.

    A popped pod that a test (or a bug) also put back into a queue reports the queue.
    """
    uid = pod if isinstance(pod, str) else pod.uid
    with queue._lock:
        if uid in queue._active.heap:
            return ACTIVE_Q
        if uid in queue._backoff:
            return BACKOFF_Q
        if uid in queue._unschedulable:
            return UNSCHEDULABLE_PODS
        if queue._active.is_in_flight(uid):
            return IN_FLIGHT
        return None
