"""NodeName: a pod naming a node in ``spec.nodeName`` fits only that node.

Port of upstream ``pkg/scheduler/framework/plugins/nodename/node_name.go``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar, Final

from schedframe import framework as fw
from schedframe.objects import Pod
from schedframe_plugins import names

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["ERR_REASON", "NodeName", "fits"]

NAME: Final = names.NODE_NAME

#: The Filter reason for any other node.
ERR_REASON: Final = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: fw.NodeInfo) -> bool:
    """True when the pod names no node, or names this one."""
    wanted = pod.spec.node_name
    return not wanted or wanted == node_info.name


def _fits_any(node_info: fw.NodeInfo) -> fw.Status | None:
    return None


class NodeName(fw.FilterPlugin, fw.EnqueueExtensions):
    """Rejects every node but the one named in ``spec.nodeName``."""

    name: ClassVar[str] = NAME
    #: Filter reads the Node object only, never the pods on it.
    filter_reads_node_pods: ClassVar[bool] = False
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self._handle = handle

    def sign_pod(self, pod: Pod) -> tuple[Sequence[fw.SignFragment], fw.Status | None]:
        """The requested node name (upstream ``NodeName.SignPod``)."""
        return (fw.SignFragment(key=fw.NODE_NAME_SIGNER_NAME, value=pod.spec.node_name),), None

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """UnschedulableAndUnresolvable for a node other than the requested one."""
        if fits(pod, node_info):
            return None
        return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)

    def prepare_filter(
        self, state: fw.CycleState, pod: Pod
    ) -> Callable[[fw.NodeInfo], fw.Status | None] | None:
        """:meth:`filter` for this pod (the framework's per-pod fast path): a pod naming no
        node fits every node."""
        if pod.spec.node_name:
            return None
        return _fits_any

    def filter_batch(
        self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns
    ) -> npt.NDArray[np.int8]:
        """:meth:`filter` over every node of ``columns`` (the framework's batch path)."""
        import numpy as np

        wanted = pod.spec.node_name
        if not wanted:
            return np.zeros(columns.size, dtype=np.int8)
        verdicts = np.full(columns.size, fw.FILTER_REJECT, dtype=np.int8)
        row = columns.index.get(wanted)
        if row is not None:
            verdicts[row] = fw.FILTER_PASS
        return verdicts

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """Only a new node (the named one appearing) can help; no hint is needed."""
        return (fw.ClusterEventWithHint(fw.ClusterEvent(fw.EventResource.NODE, fw.ActionType.ADD)),)
