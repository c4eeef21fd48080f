"""SchedulingGates: pods with ``spec.schedulingGates`` stay out of the active queue.

Port of upstream ``pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final

from schedframe import framework as fw
from schedframe.objects import Pod
from schedframe_plugins import names

__all__ = ["SchedulingGates"]

NAME: Final = names.SCHEDULING_GATES


class SchedulingGates(fw.PreEnqueuePlugin, fw.EnqueueExtensions):
    """Gates a pod while it has scheduling gates."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self._handle = handle

    def pre_enqueue(self, pod: Pod) -> fw.Status | None:
        """UnschedulableAndUnresolvable ``waiting for scheduling gates: [a b]`` while gated."""
        gates = pod.spec.scheduling_gates
        if not gates:
            return None
        return fw.Status(
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            f"waiting for scheduling gates: [{' '.join(gates)}]",
        )

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """The pod's own gates being removed (upstream registers it for the target pod)."""
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(
                    fw.EventResource.POD, fw.ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
                ),
                self.is_schedulable_after_update_pod_scheduling_gates_eliminated,
            ),
        )

    def is_schedulable_after_update_pod_scheduling_gates_eliminated(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue only when the update is to the gated pod itself."""
        if not isinstance(new_obj, Pod):
            raise TypeError(f"expected a Pod, got {type(new_obj).__name__}")
        if old_obj is not None and not isinstance(old_obj, Pod):
            raise TypeError(f"expected a Pod, got {type(old_obj).__name__}")
        if new_obj.uid != pod.uid:
            return fw.QueueingHint.QUEUE_SKIP
        return fw.QueueingHint.QUEUE
