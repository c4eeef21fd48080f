"""GangScheduling: all-or-nothing scheduling of a Workload's gang pod groups (GenericWorkload).

Port of upstream v1.35 ``pkg/scheduler/framework/plugins/gangscheduling``. A pod whose
``spec.workloadRef`` names a pod group with a ``gang`` policy of a
:class:`~schedframe.objects.Workload`:

* **PreEnqueue** keeps it out of the active queue until its Workload exists, names the group,
  and at least ``minCount`` pods of the group exist;
* **Reserve** / **Unreserve** count it as assumed, or no longer;
* **Permit** makes it wait until ``minCount`` pods of the group are assumed or assigned (then
  every waiting member is allowed), activating the group's unscheduled pods meanwhile.

The group's wait is bounded by one deadline, :data:`SCHEDULING_TIMEOUT` seconds after its first
pod waited (upstream ``PodGroupInfo.SchedulingTimeout``): at that instant every waiting
member is rejected together, so the whole group goes back to the queue. Pods without a
``workloadRef``, and basic groups, are not this plugin's business.

Pod groups are read as upstream's workload manager keeps them: the pods ``Handle.lister(Pod)``
reports (finished ones excluded), with the same Workload, pod group and replica key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final

from schedframe import framework as fw
from schedframe.objects import Pod, Workload, WorkloadReference
from schedframe_plugins import names

__all__ = ["SCHEDULING_TIMEOUT", "GangScheduling"]

NAME: Final = names.GANG_SCHEDULING
#: Seconds a gang may wait at Permit, from its first waiting pod (upstream: 5 minutes).
SCHEDULING_TIMEOUT: Final = 300.0

_Key = tuple[str, str, str, str]
_FINISHED: Final = frozenset({"Succeeded", "Failed"})


def _key(namespace: str, ref: WorkloadReference) -> _Key:
    return (namespace, ref.name, ref.pod_group, ref.pod_group_replica_key)


def _same_workload_ref(a: Pod, b: Pod) -> bool:
    """Upstream ``matchingWorkloadReference``: same namespace, Workload, group and replica."""
    return (
        a.spec.workload_ref is not None
        and b.spec.workload_ref is not None
        and a.namespace == b.namespace
        and a.spec.workload_ref == b.spec.workload_ref
    )


class GangScheduling(fw.PreEnqueuePlugin, fw.ReservePlugin, fw.PermitPlugin, fw.EnqueueExtensions):
    """Gang scheduling on the Workload API (see the module docstring)."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self._handle = handle
        self._workloads = handle.lister(Workload)
        self._pods = handle.lister(Pod)
        self._assumed: dict[_Key, set[str]] = {}
        self._deadline: dict[_Key, float] = {}

    # -- the group ---------------------------------------------------------------------------

    def _members(self, namespace: str, ref: WorkloadReference) -> list[Pod]:
        return [
            p
            for p in self._pods.list(namespace)
            if p.spec.workload_ref == ref and p.status.phase not in _FINISHED
        ]

    def _policy(self, pod: Pod, ref: WorkloadReference) -> tuple[int | None, fw.Status | None]:
        """The group's minCount (None: not a gang), or the status when it cannot be known."""
        workload = self._workloads.get(ref.name, pod.namespace)
        if workload is None:
            return None, fw.Status(
                fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f'waiting for pods\'s workload "{ref.name}" to appear in scheduling queue',
            )
        group = workload.pod_group(ref.pod_group)
        if group is None:
            return None, fw.Status(
                fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f'pod group "{ref.pod_group}" doesn\'t exist for a workload "{workload.name}"',
            )
        return (None if group.gang is None else group.gang.min_count), None

    # -- PreEnqueue --------------------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> fw.Status | None:
        """Gate the pod until its Workload and group exist and minCount pods of it do."""
        ref = pod.spec.workload_ref
        if ref is None:
            return None
        min_count, status = self._policy(pod, ref)
        if status is not None or min_count is None:
            return status
        if len(self._members(pod.namespace, ref)) < min_count:
            return fw.Status(
                fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                "waiting for minCount pods from a gang to appear in scheduling queue",
            )
        return None

    # -- Reserve -----------------------------------------------------------------------------

    def reserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> fw.Status | None:
        """Count the pod as assumed in its group."""
        ref = pod.spec.workload_ref
        if ref is not None:
            self._assumed.setdefault(_key(pod.namespace, ref), set()).add(pod.uid)
        return None

    def unreserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> None:
        """Forget the pod as assumed; a group with none left loses its deadline."""
        ref = pod.spec.workload_ref
        if ref is None:
            return
        key = _key(pod.namespace, ref)
        assumed = self._assumed.get(key)
        if assumed is not None:
            assumed.discard(pod.uid)
            if not assumed:
                del self._assumed[key]
                self._deadline.pop(key, None)

    # -- Permit ------------------------------------------------------------------------------

    def permit(self, state: fw.CycleState, pod: Pod, node_name: str) -> fw.Status | None:
        """Wait until minCount pods of the group are assumed or assigned, then allow them all."""
        ref = pod.spec.workload_ref
        if ref is None:
            return None
        workload = self._workloads.get(ref.name, pod.namespace)
        if workload is None:
            return fw.Status.from_error(
                LookupError(
                    f"failed to get workload {pod.namespace}/{ref.name}: "
                    f'workload.scheduling.k8s.io "{ref.name}" not found'
                )
            )
        group = workload.pod_group(ref.pod_group)
        if group is None:
            return fw.Status.from_error(
                LookupError(
                    f'pod group "{ref.pod_group}" doesn\'t exist for a workload "{workload.name}"'
                )
            )
        if group.gang is None:
            return None
        key = _key(pod.namespace, ref)
        members = self._members(pod.namespace, ref)
        assumed = self._assumed.get(key, set())
        present = {p.uid for p in members}
        ready = {uid for uid in assumed if uid in present} | {
            p.uid for p in members if p.spec.node_name
        }
        if len(ready) < group.gang.min_count:
            unscheduled = [p for p in members if not p.spec.node_name and p.uid not in assumed]
            self._handle.activate(unscheduled)
            now = self._handle.clock.now()
            deadline = self._deadline.setdefault(key, now + SCHEDULING_TIMEOUT)
            return fw.Status(
                fw.Code.WAIT,
                "waiting for minCount pods from a gang to be waiting on permit",
                timeout=max(0.0, deadline - now),
            )
        for uid in assumed:
            waiting = self._handle.get_waiting_pod(uid)
            if waiting is not None:
                waiting.allow(NAME)
        return None

    # -- EnqueueExtensions -------------------------------------------------------------------

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """A pod of the same group, or the pod's Workload, being added."""
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.ADD),
                self.is_schedulable_after_pod_added,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent("Workload", fw.ActionType.ADD),
                self.is_schedulable_after_workload_added,
            ),
        )

    def is_schedulable_after_pod_added(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the added pod belongs to the same group."""
        if not isinstance(new_obj, Pod):
            raise TypeError(f"expected a Pod, got {type(new_obj).__name__}")
        if _same_workload_ref(pod, new_obj):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_workload_added(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the added Workload is the one the pod names."""
        if not isinstance(new_obj, Workload):
            raise TypeError(f"expected a Workload, got {type(new_obj).__name__}")
        ref = pod.spec.workload_ref
        if ref is None or pod.namespace != new_obj.namespace or ref.name != new_obj.name:
            return fw.QueueingHint.QUEUE_SKIP
        return fw.QueueingHint.QUEUE
