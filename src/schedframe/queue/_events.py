"""The cluster events the queue and the event handlers use, and how object updates map to them.

Upstream: ``pkg/scheduler/framework/events.go`` (``EventAssignedPodAdd`` ...,
``PodSchedulingPropertiesChange``, ``NodeSchedulingPropertiesChange``) and
``scheduling_queue.go`` (``isPodUpdated``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

from schedframe.framework import ActionType, ClusterEvent, EventResource
from schedframe.objects import PodStatus

if TYPE_CHECKING:
    from schedframe.objects import Node, Pod

__all__ = [
    "BACKOFF_COMPLETE",
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
    "is_pod_updated",
    "node_scheduling_properties_change",
    "pod_scheduling_properties_change",
]

#: A scheduling attempt failed and the pod was requeued.
SCHEDULE_ATTEMPT_FAILURE: Final = "ScheduleAttemptFailure"
#: The pod finished its backoff and moved from the backoffQ to the activeQ.
BACKOFF_COMPLETE: Final = "BackoffComplete"
#: The activeQ was empty, so the pod was popped straight from the backoffQ.
POP_FROM_BACKOFF_Q: Final = "PopFromBackoffQ"
#: The pod was activated (``SchedulingQueue.activate``), usually by a plugin.
FORCE_ACTIVATE: Final = "ForceActivate"
#: The pod stayed in the unschedulable pool longer than the maximum duration.
UNSCHEDULABLE_TIMEOUT: Final = "UnschedulableTimeout"

_ASSIGNED: Final = EventResource.ASSIGNED_POD
_UNSCHEDULED: Final = EventResource.UNSCHEDULABLE_POD

EVENT_ASSIGNED_POD_ADD: Final = ClusterEvent(_ASSIGNED, ActionType.ADD)
EVENT_ASSIGNED_POD_UPDATE: Final = ClusterEvent(_ASSIGNED, ActionType.UPDATE)
EVENT_ASSIGNED_POD_DELETE: Final = ClusterEvent(_ASSIGNED, ActionType.DELETE)
EVENT_UNSCHEDULED_POD_ADD: Final = ClusterEvent(_UNSCHEDULED, ActionType.ADD)
EVENT_UNSCHEDULED_POD_UPDATE: Final = ClusterEvent(_UNSCHEDULED, ActionType.UPDATE)
EVENT_UNSCHEDULED_POD_DELETE: Final = ClusterEvent(_UNSCHEDULED, ActionType.DELETE)
EVENT_NODE_ADD: Final = ClusterEvent(EventResource.NODE, ActionType.ADD)
EVENT_NODE_DELETE: Final = ClusterEvent(EventResource.NODE, ActionType.DELETE)
#: Wildcard: moves every unschedulable pod (the periodic leftover flush).
EVENT_UNSCHEDULABLE_TIMEOUT: Final = ClusterEvent(
    EventResource.WILDCARD, ActionType.ALL, custom_label=UNSCHEDULABLE_TIMEOUT
)
#: Wildcard aimed at one pod (``new_obj``): recorded for an in-flight pod that is activated.
EVENT_FORCE_ACTIVATE: Final = ClusterEvent(
    EventResource.WILDCARD, ActionType.ALL, custom_label=FORCE_ACTIVATE
)


_EMPTY_STATUS: Final = PodStatus()


def is_pod_updated(old: Pod, new: Pod) -> bool:
    """True when the update changed more than the status and the resource version.

    Upstream ``isPodUpdated``: the status (except ``resourceClaimStatuses``, which
    DynamicResources waits for), ``resourceVersion``, ``generation``, ``managedFields`` and
    finalizers are ignored.
    """

    def strip(pod: Pod) -> Pod:
        claims = pod.status.resource_claim_statuses
        return attrs.evolve(
            pod,
            metadata=attrs.evolve(pod.metadata, resource_version=""),
            status=(
                attrs.evolve(_EMPTY_STATUS, resource_claim_statuses=claims)
                if claims
                else _EMPTY_STATUS
            ),
        )

    return strip(old) != strip(new)


def _pod_scale_down(new: Pod, old: Pod) -> bool:
    new_requests = new.requests
    for name, amount in old.requests.items():
        other = new_requests.get(name)
        if other is None or amount > other:
            return True
    return False


def pod_scheduling_properties_change(new: Pod, old: Pod) -> list[ClusterEvent]:
    """The ``Pod/UpdatePodXYZ`` events an update of a pod amounts to.

    Upstream ``PodSchedulingPropertiesChange``: the resource is ``AssignedPod`` when the new
    pod is bound and ``UnschedulablePod`` otherwise; one event per detected change, in the
    order labels, scale-down, scheduling gates eliminated, tolerations; the general
    ``Update`` action when nothing specific changed.
    """
    resource = _ASSIGNED if new.spec.node_name else _UNSCHEDULED
    actions: list[ActionType] = []
    if new.metadata.labels != old.metadata.labels:
        actions.append(ActionType.UPDATE_POD_LABEL)
    if _pod_scale_down(new, old):
        actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
    if not new.spec.scheduling_gates and old.spec.scheduling_gates:
        actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    # The API only lets tolerations be added, so a change of length is a change.
    if len(new.spec.tolerations) != len(old.spec.tolerations):
        actions.append(ActionType.UPDATE_POD_TOLERATION)
    if new.status.resource_claim_statuses != old.status.resource_claim_statuses:
        actions.append(ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    if not actions:
        actions.append(ActionType.UPDATE)
    return [ClusterEvent(resource, action) for action in actions]


def node_scheduling_properties_change(new: Node, old: Node) -> list[ClusterEvent]:
    """The ``Node/UpdateNodeXYZ`` events an update of a node amounts to (may be empty).

    Upstream ``NodeSchedulingPropertiesChange``: ``spec.unschedulable`` turning false counts as
    ``UpdateNodeTaint``; conditions compare by type and status only.
    """
    actions: list[ActionType] = []
    if new.spec.unschedulable != old.spec.unschedulable and not new.spec.unschedulable:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if new.status.allocatable != old.status.allocatable:
        actions.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if new.metadata.labels != old.metadata.labels:
        actions.append(ActionType.UPDATE_NODE_LABEL)
    if new.spec.taints != old.spec.taints:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    old_conditions = {c.type: c.status for c in old.status.conditions}
    new_conditions = {c.type: c.status for c in new.status.conditions}
    if old_conditions != new_conditions:
        actions.append(ActionType.UPDATE_NODE_CONDITION)
    if new.metadata.annotations != old.metadata.annotations:
        actions.append(ActionType.UPDATE_NODE_ANNOTATION)
    return [ClusterEvent(EventResource.NODE, action) for action in actions]
