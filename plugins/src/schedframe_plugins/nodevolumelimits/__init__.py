"""NodeVolumeLimits (``CSILimits``): the node's CSI attach limits must hold the pod's volumes.

Port of upstream ``pkg/scheduler/framework/plugins/nodevolumelimits/csi.go``.

Limitation: schedframe does not model PersistentVolumeClaims, PersistentVolumes,
StorageClasses or CSINode objects. What can be seen is handled as upstream does: a pod without
claims is skipped (PreFilter returns Skip), and Filter finds that a claim the pod references
does not exist, which upstream reports as UnschedulableAndUnresolvable
``looking up PVC <namespace>/<name>: persistentvolumeclaim "<name>" not found``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final

from schedframe import framework as fw
from schedframe.objects import Pod
from schedframe_plugins import names

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "CSILimits"]

NAME: Final = names.NODE_VOLUME_LIMITS

#: The Filter reason when the node's attach limit would be exceeded.
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: Final = "node(s) exceed max volume count"


def _pod(obj: object) -> Pod:
    if not isinstance(obj, Pod):
        raise TypeError(f"expected a Pod, got {type(obj).__name__}")
    return obj


class CSILimits(fw.PreFilterPlugin, fw.FilterPlugin, fw.EnqueueExtensions):
    """Rejects nodes whose CSI volume limits the pod's new volumes would exceed."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self._handle = handle

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Skip pods with no claim-backed volume."""
        if any(v.persistent_volume_claim is not None for v in pod.spec.volumes):
            return None
        return fw.Status(fw.Code.SKIP)

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """Look the pod's claims up; none can be found, so the pod cannot run yet."""
        for volume in pod.spec.volumes:
            claim = volume.persistent_volume_claim
            if claim is None:
                continue
            if claim == "":
                return fw.Status(fw.Code.ERROR, "PersistentVolumeClaim had no name")
            return fw.Status(
                fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f'looking up PVC {pod.namespace}/{claim}: persistentvolumeclaim "{claim}" '
                "not found",
            )
        return None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """A new CSINode, a deleted pod holding volumes, the missing claim being created."""
        return (
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.EventResource.CSI_NODE, fw.ActionType.ADD)),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.DELETE),
                self.is_schedulable_after_pod_deleted,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.PERSISTENT_VOLUME_CLAIM, fw.ActionType.ADD),
                self.is_schedulable_after_pvc_added,
            ),
        )

    def is_schedulable_after_pod_deleted(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when a placed pod with a claim-backed volume went away."""
        deleted = _pod(old_obj)
        if not deleted.spec.volumes or deleted.node_name == "":
            return fw.QueueingHint.QUEUE_SKIP
        if any(v.persistent_volume_claim is not None for v in deleted.spec.volumes):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pvc_added(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the new claim (anything with ``namespace`` and ``name``) is the pod's."""
        namespace = getattr(new_obj, "namespace", None)
        claim = getattr(new_obj, "name", None)
        if not isinstance(namespace, str) or not isinstance(claim, str):
            raise TypeError(f"expected a PersistentVolumeClaim, got {type(new_obj).__name__}")
        if namespace != pod.namespace:
            return fw.QueueingHint.QUEUE_SKIP
        if any(v.persistent_volume_claim == claim for v in pod.spec.volumes):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP
