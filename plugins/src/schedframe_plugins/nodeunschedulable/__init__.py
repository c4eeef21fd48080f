"""NodeUnschedulable: cordoned nodes take only pods that tolerate the unschedulable taint.

Port of upstream ``pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar, Final

from schedframe import framework as fw
from schedframe.objects import Node, Pod, Taint
from schedframe_plugins import names

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["ERR_REASON_UNKNOWN_CONDITION", "ERR_REASON_UNSCHEDULABLE", "NodeUnschedulable"]

NAME: Final = names.NODE_UNSCHEDULABLE

#: Kept for parity with upstream; not returned by this plugin.
ERR_REASON_UNKNOWN_CONDITION: Final = "node(s) had unknown conditions"
#: The Filter reason for a cordoned node.
ERR_REASON_UNSCHEDULABLE: Final = "node(s) were unschedulable"

#: The taint a pod must tolerate to land on a node with ``spec.unschedulable`` set.
_UNSCHEDULABLE_TAINT: Final = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


def _tolerates_unschedulable(pod: Pod) -> bool:
    return any(t.tolerates(_UNSCHEDULABLE_TAINT) for t in pod.spec.tolerations)


def _as(obj: object, kind: type) -> object:
    if not isinstance(obj, kind):
        raise TypeError(f"expected a {kind.__name__}, got {type(obj).__name__}")
    return obj


def _fits_any(node_info: fw.NodeInfo) -> fw.Status | None:
    return None


class NodeUnschedulable(fw.FilterPlugin, fw.EnqueueExtensions):
    """Rejects cordoned nodes unless the pod tolerates ``node.kubernetes.io/unschedulable``."""

    name: ClassVar[str] = NAME
    #: Filter reads the Node object only, never the pods on it.
    filter_reads_node_pods: ClassVar[bool] = False
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self._handle = handle

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """UnschedulableAndUnresolvable for a cordoned node the pod does not tolerate."""
        node = node_info.node
        if node is None or not node.spec.unschedulable:
            return None
        if _tolerates_unschedulable(pod):
            return None
        return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)

    def prepare_filter(
        self, state: fw.CycleState, pod: Pod
    ) -> Callable[[fw.NodeInfo], fw.Status | None] | None:
        """:meth:`filter` for this pod (the framework's per-pod fast path): the pod's
        tolerations are looked at once."""
        if _tolerates_unschedulable(pod):
            return _fits_any

        def unschedulable_filter(node_info: fw.NodeInfo) -> fw.Status | None:
            node = node_info.node
            if node is None or not node.spec.unschedulable:
                return None
            return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)

        return unschedulable_filter

    def filter_batch(
        self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns
    ) -> npt.NDArray[np.int8]:
        """:meth:`filter` over every node of ``columns`` (the framework's batch path)."""
        import numpy as np

        if _tolerates_unschedulable(pod):
            return np.zeros(columns.size, dtype=np.int8)
        return columns.unschedulable.view(np.int8) * np.int8(fw.FILTER_REJECT)

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """An uncordoned or new schedulable node, or a new toleration on the pod itself."""
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(
                    fw.EventResource.NODE, fw.ActionType.ADD | fw.ActionType.UPDATE_NODE_TAINT
                ),
                self.is_schedulable_after_node_change,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.UPDATE_POD_TOLERATION),
                self.is_schedulable_after_pod_toleration_change,
            ),
        )

    def is_schedulable_after_pod_toleration_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the rejected pod itself now tolerates the unschedulable taint."""
        if old_obj is not None:
            _as(old_obj, Pod)
        modified = _as(new_obj, Pod)
        assert isinstance(modified, Pod)
        if modified.uid == pod.uid and _tolerates_unschedulable(modified):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue for a schedulable new node, or a node that was uncordoned."""
        modified = _as(new_obj, Node)
        original = None if old_obj is None else _as(old_obj, Node)
        assert isinstance(modified, Node)
        if original is None:
            schedulable = not modified.spec.unschedulable
        else:
            assert isinstance(original, Node)
            schedulable = original.spec.unschedulable and not modified.spec.unschedulable
        return fw.QueueingHint.QUEUE if schedulable else fw.QueueingHint.QUEUE_SKIP
