"""The activeQ and the in-flight bookkeeping (upstream ``active_queue.go``).

Popped pods are *in flight* until ``done``. Events that arrive meanwhile are appended to one
log shared by all in-flight pods, so a requeued pod can replay exactly the events that happened
after it was popped; entries no in-flight pod needs any more are pruned from the front.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from schedframe.framework import ClusterEvent, QueuedPodInfo
from schedframe.objects import Pod
from schedframe.queue._heap import KeyedHeap, split_counter

__all__ = ["ActiveQueue", "InFlightEvent"]


@attrs.frozen
class InFlightEvent:
    """A cluster event recorded while pods were in flight (upstream ``clusterEvent``)."""

    event: ClusterEvent
    old_obj: object = None
    new_obj: object = None


def _uid(qpi: QueuedPodInfo) -> str:
    return qpi.pod.uid


class ActiveQueue:
    """The activeQ heap, the in-flight pods and the in-flight event log. Not locked."""

    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        sort_key: Callable[[QueuedPodInfo], Any] | None = None,
    ) -> None:
        # With the QueueSort plugin's sort_key the heap compares keys; the order is less's.
        self.heap: KeyedHeap[QueuedPodInfo] = KeyedHeap(_uid, less, sort_key)
        # Log entries in arrival order: a Pod marks where that pod went in flight.
        self._log: OrderedDict[int, Pod | InFlightEvent] = OrderedDict()
        self._in_flight: dict[str, int] = {}
        self._ids = itertools.count()
        self.scheduling_cycle = 0

    def copy_state(
        self, other: ActiveQueue, convert: Callable[[QueuedPodInfo], QueuedPodInfo]
    ) -> None:
        """Make this (empty) queue hold what ``other`` holds (its entries through
        ``convert``): the heap, the in-flight pods, the event log and the cycle count."""
        self.heap.copy_state(other.heap, convert)
        self._log = OrderedDict(other._log)  # pods and events are immutable values
        self._in_flight = dict(other._in_flight)
        self._ids, other._ids = split_counter(other._ids)
        self.scheduling_cycle = other.scheduling_cycle

    def move_to_in_flight(self, qpi: QueuedPodInfo, track: bool = True) -> bool:
        """Count the attempt and mark the pod in flight; False if it already was (a bug).

        With ``track`` false (no queueing hints) only the attempt and the cycle are counted."""
        qpi.attempts += 1
        uid = qpi.pod.uid
        if not track:
            self.scheduling_cycle += 1
            return True
        if uid in self._in_flight:
            return False
        entry = next(self._ids)
        self._log[entry] = qpi.pod
        self._in_flight[uid] = entry
        self.scheduling_cycle += 1
        return True

    def is_in_flight(self, uid: str) -> bool:
        """True between pop and done."""
        return uid in self._in_flight

    def add_events_if_pod_in_flight(
        self, old_pod: Pod | None, new_pod: Pod, events: Iterable[ClusterEvent]
    ) -> bool:
        """Record ``events`` about ``new_pod`` if that pod is in flight."""
        if new_pod.uid not in self._in_flight:
            return False
        for event in events:
            self._log[next(self._ids)] = InFlightEvent(event, old_pod, new_pod)
        return True

    def add_event_if_any_in_flight(
        self, old_obj: object, new_obj: object, event: ClusterEvent
    ) -> bool:
        """Record ``event`` if any pod is in flight."""
        if not self._in_flight:
            return False
        self._log[next(self._ids)] = InFlightEvent(event, old_obj, new_obj)
        return True

    def cluster_events_for_pod(self, uid: str) -> list[InFlightEvent] | None:
        """Events recorded since ``uid`` was popped; ``None`` if it is not in flight."""
        start = self._in_flight.get(uid)
        if start is None:
            return None
        return [
            value
            for entry, value in self._log.items()
            if entry > start and isinstance(value, InFlightEvent)
        ]

    def done(self, uid: str) -> None:
        """The pod left its scheduling cycle: forget it, and the events nobody needs now."""
        entry = self._in_flight.pop(uid, None)
        if entry is None:
            return
        del self._log[entry]
        while self._log:
            first = next(iter(self._log))
            if not isinstance(self._log[first], InFlightEvent):
                break
            del self._log[first]

    def done_all(self) -> None:
        """``done`` for every in-flight pod (on close)."""
        for uid in list(self._in_flight):
            self.done(uid)

    def in_flight_pods(self) -> list[Pod]:
        """The in-flight pods, in pop order."""
        return [p for p in self._log.values() if isinstance(p, Pod)]

    def in_flight_log(self) -> list[Pod | InFlightEvent]:
        """The whole log: in-flight pods and the events recorded since the oldest was popped."""
        return list(self._log.values())
