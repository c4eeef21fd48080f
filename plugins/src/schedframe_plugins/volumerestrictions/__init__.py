"""VolumeRestrictions: disk conflicts between pods and ReadWriteOncePod claims.

Port of upstream ``pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go``.

Two checks: in-tree disks mounted directly by pods (GCE PD and iSCSI may be shared read-only,
an AWS EBS volume never, an RBD image read-only across overlapping monitors) conflict with
those of the node's pods (``node(s) had no available disk``); and a claim with the
ReadWriteOncePod access mode already used by a pod anywhere in the cluster makes every node
Unschedulable (preemption may free it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final

import attrs

from schedframe import framework as fw
from schedframe.objects import PersistentVolumeClaim, Pod, Volume
from schedframe_plugins import names

__all__ = [
    "ERR_REASON_DISK_CONFLICT",
    "ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT",
    "VolumeRestrictions",
]

NAME: Final = names.VOLUME_RESTRICTIONS

#: The Filter reason for an in-tree disk already mounted by another pod on the node.
ERR_REASON_DISK_CONFLICT: Final = "node(s) had no available disk"
#: The Filter reason for a ReadWriteOncePod claim already used by another pod.
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT: Final = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)


def claim_not_found(name: str) -> str:
    """Upstream's NotFound error text for a claim (``persistentvolumeclaim "x" not found``)."""
    return f'persistentvolumeclaim "{name}" not found'


@attrs.define
class _PreFilterState:
    read_write_once_pod_pvcs: frozenset[str]
    conflicting_pvc_ref_count: int

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.read_write_once_pod_pvcs, self.conflicting_pvc_ref_count)

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        conflicts = sum(
            1
            for v in pod.spec.volumes
            if v.persistent_volume_claim is not None
            and v.persistent_volume_claim in self.read_write_once_pod_pvcs
        )
        self.conflicting_pvc_ref_count += multiplier * conflicts


_PRE_FILTER: Final = fw.StateKey[_PreFilterState]("PreFilter" + NAME)


def _pod(obj: object) -> Pod:
    if not isinstance(obj, Pod):
        raise TypeError(f"expected a Pod, got {type(obj).__name__}")
    return obj


def _have_overlap(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return bool(set(a) & set(b))


def is_volume_conflict(volume: Volume, existing: Pod) -> bool:
    """Upstream ``isVolumeConflict``: ``volume`` cannot be mounted beside ``existing``'s."""
    disk = volume.disk
    if disk is None:
        return False
    for other in existing.spec.volumes:
        e = other.disk
        if e is None or e.kind != disk.kind:
            continue
        if disk.kind in ("gcePersistentDisk", "iscsi"):
            if disk.name == e.name and not (disk.read_only and e.read_only):
                return True
        elif disk.kind == "awsElasticBlockStore":
            if disk.name == e.name:
                return True
        elif disk.kind == "rbd" and (
            _have_overlap(disk.monitors, e.monitors)
            and disk.pool == e.pool
            and disk.name == e.name
            and not (disk.read_only and e.read_only)
        ):
            return True
    return False


def needs_restrictions_check(volume: Volume) -> bool:
    """Upstream ``needsRestrictionsCheck``: a GCE PD, AWS EBS, RBD or iSCSI volume."""
    return volume.disk is not None and volume.disk.kind in (
        "gcePersistentDisk",
        "awsElasticBlockStore",
        "rbd",
        "iscsi",
    )


def satisfy_volume_conflicts(pod: Pod, node_info: fw.NodeInfo) -> bool:
    """Upstream ``satisfyVolumeConflicts``."""
    for volume in pod.spec.volumes:
        if not needs_restrictions_check(volume):
            continue
        for existing in node_info.pods:
            if is_volume_conflict(volume, existing.pod):
                return False
    return True


def _claims(pod: Pod) -> set[str]:
    return {v.persistent_volume_claim for v in pod.spec.volumes if v.persistent_volume_claim}


class VolumeRestrictions(
    fw.PreFilterPlugin, fw.PreFilterExtensions, fw.FilterPlugin, fw.EnqueueExtensions
):
    """Rejects nodes where the pod's volumes would conflict with those already in use."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self._handle = handle

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Find the pod's ReadWriteOncePod claims and whether another pod uses them; Skip
        when there is nothing to check."""
        needs_check = any(needs_restrictions_check(v) for v in pod.spec.volumes)
        lister = self._handle.storage_lister()
        rwop: set[str] = set()
        for volume in pod.spec.volumes:
            name = volume.persistent_volume_claim
            if name is None:
                continue
            pvc: PersistentVolumeClaim | None = lister.persistent_volume_claim(pod.namespace, name)
            if pvc is None:
                return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, claim_not_found(name))
            if "ReadWriteOncePod" in pvc.access_modes:
                rwop.add(pvc.name)
        shared = self._handle.snapshot_shared_lister()
        conflicts = sum(1 for c in rwop if shared.is_pvc_used_by_pods(f"{pod.namespace}/{c}"))
        if not needs_check and conflicts == 0:
            return fw.Status(fw.Code.SKIP)
        state[_PRE_FILTER] = _PreFilterState(frozenset(rwop), conflicts)
        return None

    def add_pod(
        self,
        state: fw.CycleState,
        pod_to_schedule: Pod,
        pod_info_to_add: fw.PodInfo,
        node_info: fw.NodeInfo,
    ) -> fw.Status | None:
        """Count the added pod's uses of the pod's ReadWriteOncePod claims."""
        s = state.get(_PRE_FILTER)
        if s is None:
            return fw.Status(fw.Code.ERROR, f'cannot read "{_PRE_FILTER.name}" from cycleState')
        s.update_with_pod(pod_info_to_add.pod, 1)
        return None

    def remove_pod(
        self,
        state: fw.CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: fw.PodInfo,
        node_info: fw.NodeInfo,
    ) -> fw.Status | None:
        """Uncount the removed pod's uses of the pod's ReadWriteOncePod claims."""
        s = state.get(_PRE_FILTER)
        if s is None:
            return fw.Status(fw.Code.ERROR, f'cannot read "{_PRE_FILTER.name}" from cycleState')
        s.update_with_pod(pod_info_to_remove.pod, -1)
        return None

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """Unschedulable when a disk conflicts with the node's pods' or a ReadWriteOncePod
        claim of the pod is in use."""
        if not satisfy_volume_conflicts(pod, node_info):
            return fw.Status(fw.Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
        s = state.get(_PRE_FILTER)
        if s is None:
            return fw.Status(fw.Code.ERROR, f'cannot read "{_PRE_FILTER.name}" from cycleState')
        if s.conflicting_pvc_ref_count > 0:
            return fw.Status(fw.Code.UNSCHEDULABLE, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """A deleted pod may release a volume; a new node; the missing claim being created."""
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.DELETE),
                self.is_schedulable_after_pod_deleted,
            ),
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.EventResource.NODE, fw.ActionType.ADD)),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.PERSISTENT_VOLUME_CLAIM, fw.ActionType.ADD),
                self.is_schedulable_after_persistent_volume_claim_added,
            ),
        )

    def is_schedulable_after_persistent_volume_claim_added(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the new claim is one the pod references in its namespace."""
        if not isinstance(new_obj, PersistentVolumeClaim):
            raise TypeError(f"expected a PersistentVolumeClaim, got {type(new_obj).__name__}")
        if new_obj.namespace != pod.namespace:
            return fw.QueueingHint.QUEUE_SKIP
        return fw.QueueingHint.QUEUE if new_obj.name in _claims(pod) else fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pod_deleted(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the deleted pod, in the same namespace, used one of the pod's claims."""
        deleted = _pod(old_obj)
        if deleted.namespace != pod.namespace:
            return fw.QueueingHint.QUEUE_SKIP
        if not satisfy_volume_conflicts(pod, fw.NodeInfo(None, [deleted])):
            return fw.QueueingHint.QUEUE
        if _claims(deleted) & _claims(pod):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP
