"""NodePorts: the pod's host ports must be free on the node.

Port of upstream ``pkg/scheduler/framework/plugins/nodeports/node_ports.go``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar, Final

from schedframe import framework as fw
from schedframe.objects import Pod
from schedframe_plugins import names
from schedframe_plugins._signers import host_ports_signer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["ERR_REASON", "NodePorts", "fits", "fits_ports"]

NAME: Final = names.NODE_PORTS

#: The Filter reason when a wanted host port is taken.
ERR_REASON: Final = "node(s) didn't have free ports for the requested pod ports"

HostPort = tuple[str, str, int]

_PRE_FILTER: Final = fw.StateKey[tuple[HostPort, ...]]("PreFilter" + NAME)


def fits_ports(wanted: Iterable[HostPort], in_use: fw.HostPortInfo) -> bool:
    """True when none of ``wanted`` (ip, protocol, port) conflicts with ``in_use``."""
    return not any(in_use.check_conflict(ip, protocol, port) for ip, protocol, port in wanted)


def fits(pod: Pod, node_info: fw.NodeInfo) -> bool:
    """Upstream ``Fits``: the pod's host ports are all free on the node."""
    return fits_ports(pod.host_ports, node_info.used_ports)


def _deleted_pod(obj: object) -> Pod:
    if not isinstance(obj, Pod):
        raise TypeError(f"expected a Pod, got {type(obj).__name__}")
    return obj


class NodePorts(fw.PreFilterPlugin, fw.FilterPlugin, fw.EnqueueExtensions):
    """Rejects nodes where one of the pod's host ports is already in use."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self._handle = handle

    def sign_pod(self, pod: Pod) -> tuple[Sequence[fw.SignFragment], fw.Status | None]:
        """The pod's host ports (upstream ``NodePorts.SignPod``)."""
        return (fw.SignFragment(key=fw.HOST_PORTS_SIGNER_NAME, value=host_ports_signer(pod)),), None

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Record the pod's host ports; Skip when it has none."""
        ports = pod.host_ports
        if not ports:
            return fw.Status(fw.Code.SKIP)
        state[_PRE_FILTER] = ports
        return None

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """Unschedulable when a wanted host port is taken on the node."""
        wanted = state.get(_PRE_FILTER)
        if wanted is None:
            return fw.Status(
                fw.Code.ERROR, f'reading "{_PRE_FILTER.name}" from cycleState: not found'
            )
        if not fits_ports(wanted, node_info.used_ports):
            return fw.Status(fw.Code.UNSCHEDULABLE, ERR_REASON)
        return None

    def filter_batch(
        self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns
    ) -> npt.NDArray[np.int8] | None:
        """:meth:`filter` over every node of ``columns`` (the framework's batch path): nodes
        with no host port taken pass; the others are checked one by one."""
        import numpy as np

        if state.get(_PRE_FILTER) is None:
            return None
        return columns.used_ports.view(np.int8) * np.int8(fw.FILTER_CHECK)

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """A deleted pod may free a port; a new node always may (no hint needed)."""
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.DELETE),
                self.is_schedulable_after_pod_deleted,
            ),
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.EventResource.NODE, fw.ActionType.ADD)),
        )

    def is_schedulable_after_pod_deleted(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue only when the deleted pod was placed and held a port this pod wants."""
        deleted = _deleted_pod(old_obj)
        if deleted.node_name == "" and deleted.nominated_node_name == "":
            return fw.QueueingHint.QUEUE_SKIP
        ports = deleted.host_ports
        if not ports:
            return fw.QueueingHint.QUEUE_SKIP
        in_use = fw.HostPortInfo()
        for ip, protocol, port in ports:
            in_use.add(ip, protocol, port)
        if fits_ports(pod.host_ports, in_use):
            return fw.QueueingHint.QUEUE_SKIP
        return fw.QueueingHint.QUEUE
