"""The scheduling queue: which pod the scheduler tries next, and when a rejected pod comes back.

Upstream: ``pkg/scheduler/backend/queue`` (``PriorityQueue``, the backoff and active queues, the
nominator) with queueing hints and ``SchedulerPopFromBackoffQ`` enabled (each can be turned off:
``queueing_hints=False``, ``pop_from_backoff_q=False``); the test seams are in
:mod:`schedframe.testing.queue`::

    queue = SchedulingQueue(frameworks={"default-scheduler": fwk}, clock=clock)
    queue.add(pod)
    qpi = queue.pop()
    ...                                   # the scheduling cycle rejects it
    qpi.unschedulable_plugins = {"NodeResourcesFit"}
    queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    queue.node_added(node)                # NodeResourcesFit's hint may requeue it
"""

from __future__ import annotations

from schedframe.queue._active import InFlightEvent
from schedframe.queue._backoff import BACKOFF_ORDERING_WINDOW
from schedframe.queue._events import (
    BACKOFF_COMPLETE,
    EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_ASSIGNED_POD_UPDATE,
    EVENT_FORCE_ACTIVATE,
    EVENT_NODE_ADD,
    EVENT_NODE_DELETE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_DELETE,
    EVENT_UNSCHEDULED_POD_UPDATE,
    FORCE_ACTIVATE,
    POP_FROM_BACKOFF_Q,
    SCHEDULE_ATTEMPT_FAILURE,
    UNSCHEDULABLE_TIMEOUT,
    is_pod_updated,
    node_scheduling_properties_change,
    pod_scheduling_properties_change,
)
from schedframe.queue._precheck import admission_check, pre_check_for_node
from schedframe.queue._scheduling_queue import (
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
    QueueError,
    QueueingHintMap,
    QueueingStrategy,
    SchedulingQueue,
    build_queueing_hint_map,
)

__all__ = [
    "BACKOFF_COMPLETE",
    "BACKOFF_ORDERING_WINDOW",
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
    "EVENT_ASSIGNED_POD_ADD",
    "EVENT_ASSIGNED_POD_DELETE",
    "EVENT_ASSIGNED_POD_UPDATE",
    "EVENT_FORCE_ACTIVATE",
    "EVENT_NODE_ADD",
    "EVENT_NODE_DELETE",
    "EVENT_UNSCHEDULABLE_TIMEOUT",
    "EVENT_UNSCHEDULED_POD_ADD",
    "EVENT_UNSCHEDULED_POD_DELETE",
    "EVENT_UNSCHEDULED_POD_UPDATE",
    "FORCE_ACTIVATE",
    "POP_FROM_BACKOFF_Q",
    "SCHEDULE_ATTEMPT_FAILURE",
    "UNSCHEDULABLE_TIMEOUT",
    "InFlightEvent",
    "QueueError",
    "QueueingHintMap",
    "QueueingStrategy",
    "SchedulingQueue",
    "admission_check",
    "build_queueing_hint_map",
    "is_pod_updated",
    "node_scheduling_properties_change",
    "pod_scheduling_properties_change",
    "pre_check_for_node",
]
