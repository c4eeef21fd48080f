"""VolumeZone: the node's zone labels must match those of the pod's bound volumes.

Port of upstream ``pkg/scheduler/framework/plugins/volumezone/volume_zone.go``.

Limitation: schedframe does not model PersistentVolumeClaims, PersistentVolumes or
StorageClasses. What can be seen is handled as upstream does: a pod without claims has no
volume topology, so PreFilter returns Skip (and Filter passes), and a pod that references a
claim is UnschedulableAndUnresolvable with upstream's
``persistentvolumeclaim "<name>" not found``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final

from schedframe import framework as fw
from schedframe.objects import Pod
from schedframe_plugins import names

__all__ = ["ERR_REASON_CONFLICT", "VolumeZone"]

NAME: Final = names.VOLUME_ZONE

#: The Filter reason when a volume's zone does not match the node's.
ERR_REASON_CONFLICT: Final = "node(s) had no available volume zone"

# The pod's volume topologies: always empty until volumes are modelled.
_PRE_FILTER: Final = fw.StateKey[tuple[tuple[str, frozenset[str]], ...]]("PreFilter" + NAME)


def _topologies(pod: Pod) -> tuple[tuple[str, frozenset[str]], ...] | fw.Status:
    for volume in pod.spec.volumes:
        claim = volume.persistent_volume_claim
        if claim is None:
            continue
        if claim == "":
            return fw.Status(
                fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolumeClaim had no name"
            )
        return fw.Status(
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f'persistentvolumeclaim "{claim}" not found'
        )
    return ()


class VolumeZone(fw.PreFilterPlugin, fw.FilterPlugin, fw.EnqueueExtensions):
    """Rejects nodes in another zone than the pod's bound volumes."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self._handle = handle

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Collect the zones of the pod's volumes; Skip when there are none."""
        found = _topologies(pod)
        if isinstance(found, fw.Status):
            return found
        if not found:
            return fw.Status(fw.Code.SKIP)
        state[_PRE_FILTER] = found
        return None

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """UnschedulableAndUnresolvable when a volume's zone label does not match the node."""
        if not pod.spec.volumes:
            return None
        topologies = state.get(_PRE_FILTER)
        if topologies is None:
            found = _topologies(pod)
            if isinstance(found, fw.Status):
                return found
            topologies = found
        node = node_info.node
        labels = node.labels if node is not None else {}
        for key, values in topologies:
            if labels.get(key) not in values:
                return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """New storage classes, node additions or label changes, claims and volumes."""
        r = fw.EventResource
        a = fw.ActionType
        return (
            fw.ClusterEventWithHint(fw.ClusterEvent(r.STORAGE_CLASS, a.ADD)),
            fw.ClusterEventWithHint(fw.ClusterEvent(r.NODE, a.ADD | a.UPDATE_NODE_LABEL)),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(r.PERSISTENT_VOLUME_CLAIM, a.ADD | a.UPDATE),
                self.is_schedulable_after_persistent_volume_claim_change,
            ),
            fw.ClusterEventWithHint(fw.ClusterEvent(r.PERSISTENT_VOLUME, a.ADD | a.UPDATE)),
        )

    def is_schedulable_after_persistent_volume_claim_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the claim (anything with ``namespace`` and ``name``) is one the pod uses."""
        namespace = getattr(new_obj, "namespace", None)
        claim = getattr(new_obj, "name", None)
        if not isinstance(namespace, str) or not isinstance(claim, str):
            raise TypeError(f"expected a PersistentVolumeClaim, got {type(new_obj).__name__}")
        if namespace == pod.namespace and any(
            v.persistent_volume_claim == claim for v in pod.spec.volumes
        ):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP
