"""VolumeZone: the node's zone labels must match those of the pod's bound volumes.

Port of upstream ``pkg/scheduler/framework/plugins/volumezone/volume_zone.go``: PreFilter
reads the zone and region labels of the PersistentVolumes bound to the pod's claims (claims
of a WaitForFirstConsumer class that are not bound yet are skipped: VolumeBinding places
them), and Filter rejects nodes whose labels do not match them. A node without any zone or
region label accepts every pod (single-zone clusters).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final

from schedframe import framework as fw
from schedframe.objects import PersistentVolume, PersistentVolumeClaim, Pod, StorageClass
from schedframe_plugins import names

__all__ = ["ERR_REASON_CONFLICT", "TOPOLOGY_LABELS", "VolumeZone"]

NAME: Final = names.VOLUME_ZONE

#: The Filter reason when a volume's zone does not match the node's.
ERR_REASON_CONFLICT: Final = "node(s) had no available volume zone"
#: The volume labels compared with the node's, in upstream's order.
TOPOLOGY_LABELS: Final = (
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
)
_GA: Final = {
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}

# (volume name, label key, allowed values) per zone or region label of a bound volume.
_Topologies = tuple[tuple[str, str, frozenset[str]], ...]
_PRE_FILTER: Final = fw.StateKey[_Topologies]("PreFilter" + NAME)


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """Upstream ``LabelZonesToSet``: the ``__``-separated zones, or ``None`` when one is
    empty (the label is then ignored)."""
    zones = [z.strip() for z in value.split("__")]
    if any(not z for z in zones):
        return None
    return frozenset(zones)


def pv_topologies(pv: PersistentVolume) -> _Topologies:
    """Upstream ``getPVTopologies``: the volume's zone and region labels."""
    result = []
    for key in TOPOLOGY_LABELS:
        value = pv.metadata.labels.get(key)
        if value is None:
            continue
        zones = label_zones_to_set(value)
        if zones is not None:
            result.append((pv.name, key, zones))
    return tuple(result)


def _unresolvable(message: str) -> fw.Status:
    return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


class VolumeZone(fw.PreFilterPlugin, fw.FilterPlugin, fw.EnqueueExtensions):
    """Rejects nodes in another zone than the pod's bound volumes."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self._handle = handle

    def _topologies(self, pod: Pod) -> _Topologies | fw.Status:
        """Upstream ``getPVbyPod``."""
        lister = self._handle.storage_lister()
        result: list[tuple[str, str, frozenset[str]]] = []
        for volume in pod.spec.volumes:
            claim = volume.persistent_volume_claim
            if claim is None:
                continue
            if claim == "":
                return _unresolvable("PersistentVolumeClaim had no name")
            pvc = lister.persistent_volume_claim(pod.namespace, claim)
            if pvc is None:
                return _unresolvable(f'persistentvolumeclaim "{claim}" not found')
            if not pvc.volume_name:
                cls_name = pvc.class_name
                if not cls_name:
                    return _unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name"
                    )
                cls = lister.storage_class(cls_name)
                if cls is None:
                    return _unresolvable(f'storageclass.storage.k8s.io "{cls_name}" not found')
                if cls.volume_binding_mode == "WaitForFirstConsumer":
                    continue  # VolumeBinding places unbound delayed claims
                return _unresolvable("PersistentVolume had no name")
            pv = lister.persistent_volume(pvc.volume_name)
            if pv is None:
                return _unresolvable(f'persistentvolume "{pvc.volume_name}" not found')
            result.extend(pv_topologies(pv))
        return tuple(result)

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Collect the zones of the pod's bound volumes; Skip when there are none."""
        found = self._topologies(pod)
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
            found = self._topologies(pod)
            if isinstance(found, fw.Status):
                return found
            topologies = found
        node = node_info.node
        labels = node.labels if node is not None else {}
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None  # a node without zone labels: a single-zone cluster
        for _, key, values in topologies:
            value = labels.get(key)
            if value is None:
                value = labels.get(_GA.get(key, key))
            if value is None or value not in values:
                return _unresolvable(ERR_REASON_CONFLICT)
        return None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """New WaitForFirstConsumer classes, node additions or label changes, claims and
        volumes."""
        r = fw.EventResource
        a = fw.ActionType
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(r.STORAGE_CLASS, a.ADD),
                self.is_schedulable_after_storage_class_added,
            ),
            fw.ClusterEventWithHint(fw.ClusterEvent(r.NODE, a.ADD | a.UPDATE_NODE_LABEL)),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(r.PERSISTENT_VOLUME_CLAIM, a.ADD | a.UPDATE),
                self.is_schedulable_after_persistent_volume_claim_change,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(r.PERSISTENT_VOLUME, a.ADD | a.UPDATE),
                self.is_schedulable_after_persistent_volume_change,
            ),
        )

    def is_schedulable_after_persistent_volume_claim_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the claim is one the pod names."""
        if not isinstance(new_obj, PersistentVolumeClaim):
            raise TypeError(f"expected a PersistentVolumeClaim, got {type(new_obj).__name__}")
        if new_obj.namespace == pod.namespace and any(
            v.persistent_volume_claim == new_obj.name for v in pod.spec.volumes
        ):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_storage_class_added(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the new class waits for the first consumer."""
        if not isinstance(new_obj, StorageClass):
            raise TypeError(f"expected a StorageClass, got {type(new_obj).__name__}")
        if new_obj.volume_binding_mode == "WaitForFirstConsumer":
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_persistent_volume_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue on a new volume, or when a volume's zone labels change."""
        if not isinstance(new_obj, PersistentVolume):
            raise TypeError(f"expected a PersistentVolume, got {type(new_obj).__name__}")
        if old_obj is None:
            return fw.QueueingHint.QUEUE
        if not isinstance(old_obj, PersistentVolume):
            raise TypeError(f"expected a PersistentVolume, got {type(old_obj).__name__}")
        if pv_topologies(old_obj) != pv_topologies(new_obj):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP
