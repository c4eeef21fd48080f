"""Cluster events and queueing hints (upstream ``ClusterEvent``, ``ActionType``, ``QueueingHint``).

Plugins that can reject a pod declare, through ``events_to_register``, which cluster changes may
make a rejected pod schedulable again, and optionally a hint function that looks at the change
and answers :attr:`QueueingHint.QUEUE` or :attr:`QueueingHint.QUEUE_SKIP`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import attrs

if TYPE_CHECKING:
    from schedframe.objects import Pod

__all__ = [
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "EventResource",
    "QueueingHint",
    "QueueingHintFn",
]


class ActionType(enum.IntFlag):
    """What changed about a resource; bits combine (upstream values and order)."""

    NONE = 0
    ADD = 1 << 0
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    #: A change of the node's taints or of ``spec.unschedulable``.
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_NODE_DECLARED_FEATURE = 1 << 7
    UPDATE_POD_LABEL = 1 << 8
    #: Some resource request of the pod went down.
    UPDATE_POD_SCALE_DOWN = 1 << 9
    UPDATE_POD_TOLERATION = 1 << 10
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 11
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 12
    ALL = (1 << 13) - 1
    UPDATE = ALL & ~(ADD | DELETE)

    def label(self) -> str:
        """Upstream's spelling (``UpdateNodeTaint``), used in event labels and metrics."""
        return _ACTION_LABELS.get(self, self.name or "")


_ACTION_LABELS: Final = {
    ActionType.ADD: "Add",
    ActionType.DELETE: "Delete",
    ActionType.UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable",
    ActionType.UPDATE_NODE_LABEL: "UpdateNodeLabel",
    ActionType.UPDATE_NODE_TAINT: "UpdateNodeTaint",
    ActionType.UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    ActionType.UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
    ActionType.UPDATE_NODE_DECLARED_FEATURE: "UpdateNodeDeclaredFeature",
    ActionType.UPDATE_POD_LABEL: "UpdatePodLabel",
    ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    ActionType.UPDATE_POD_TOLERATION: "UpdatePodToleration",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM: "UpdatePodGeneratedResourceClaim",
    ActionType.ALL: "All",
    ActionType.UPDATE: "Update",
}


class EventResource(enum.StrEnum):
    """The kind of object an event is about (upstream ``EventResource`` strings)."""

    POD = "Pod"
    #: A pod already bound to a node (scheduler-internal; upstream ``assignedPod``).
    ASSIGNED_POD = "AssignedPod"
    #: A pod not bound yet (scheduler-internal; upstream ``unschedulablePod``).
    UNSCHEDULABLE_POD = "UnschedulablePod"
    NODE = "Node"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    CSI_NODE = "storage.k8s.io/CSINode"
    CSI_DRIVER = "storage.k8s.io/CSIDriver"
    VOLUME_ATTACHMENT = "storage.k8s.io/VolumeAttachment"
    CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
    STORAGE_CLASS = "storage.k8s.io/StorageClass"
    RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
    RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
    DEVICE_CLASS = "resource.k8s.io/DeviceClass"
    #: Matches every resource; a wildcard *event* moves every unschedulable pod.
    WILDCARD = "*"


class QueueingHint(enum.IntEnum):
    """A hint's answer: may this event make the rejected pod schedulable?"""

    QUEUE_SKIP = 0
    QUEUE = 1

    def __str__(self) -> str:
        return "QueueSkip" if self is QueueingHint.QUEUE_SKIP else "Queue"


#: ``hint(pod, old_obj, new_obj)``: ``old_obj`` is None for an add, ``new_obj`` None for a delete.
#: An exception raised by a hint is read as ``QUEUE`` so no pod is stranded.
QueueingHintFn = Callable[["Pod", object, object], QueueingHint]


@attrs.frozen
class ClusterEvent:
    """A kind of change: ``ClusterEvent(EventResource.NODE, ActionType.ADD)``.

    ``resource`` is an :class:`EventResource`, or the name of any other kind the backend
    watches (a declared custom kind, ``"PodGroup"``; upstream spells these
    ``"podgroups.v1alpha1.scheduling.x-k8s.io"``): the scheduler raises
    ``ClusterEvent("PodGroup", ActionType.ADD)`` when a PodGroup is created, ``UPDATE`` and
    ``DELETE`` likewise, so a plugin registers it with a queueing hint as for a node event.

    .. versionchanged:: 0.2
       ``resource`` may name a custom kind.
    """

    resource: EventResource | str
    action_type: ActionType
    #: Replaces :meth:`label` for special events (``UnschedulableTimeout``, ``ForceActivate``).
    custom_label: str = ""

    def label(self) -> str:
        """``NodeAdd``, ``AssignedPodDelete``, ... as upstream logs and metrics spell it."""
        if self.custom_label:
            return self.custom_label
        return f"{self.resource}{self.action_type.label()}"

    def is_wildcard(self) -> bool:
        """True for the event that matches every registration (``*``/All)."""
        return self.resource is EventResource.WILDCARD and self.action_type == ActionType.ALL

    def matches(self, incoming: ClusterEvent) -> bool:
        """True when ``incoming`` is of interest to a plugin that registered this event.

        Upstream ``MatchClusterEvents``: the resources match, the actions share a bit, and the
        incoming action is no wider than the registered one. An update that amounts to no
        specific ``UpdatePodXYZ`` arrives as the general ``Update`` (upstream's former
        ``updatePodOther``), so it reaches only plugins that registered the general
        ``Update`` (or ``All``), not one that registered, say, ``UpdatePodToleration``.
        """
        if self.resource is not EventResource.WILDCARD and self.resource != incoming.resource:
            # A registration for Pod also covers the scheduler-internal pod sub-resources.
            if not (
                self.resource is EventResource.POD
                and incoming.resource
                in (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULABLE_POD)
            ):
                return False
        action = incoming.action_type
        return bool(self.action_type & action) and action <= self.action_type


@attrs.frozen
class ClusterEventWithHint:
    """A registration: the event, and the hint to run when it happens (``None`` = always queue)."""

    event: ClusterEvent
    queueing_hint_fn: QueueingHintFn | None = None
