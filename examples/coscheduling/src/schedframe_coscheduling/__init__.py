"""Coscheduling: schedule a gang of pods all together, or not at all.

Pods join a gang (a *pod group*) with the label ``scheduling.x-k8s.io/pod-group: <name>``; the
gang's size is the annotation (or label) ``scheduling.x-k8s.io/min-member: "<n>"``. Then:

* **QueueSort** keeps siblings together in the active queue: higher priority first, then by
  when the group was first seen, then by group, then by pod name;
* **PreFilter** rejects a pod whose group has fewer known members than ``min-member``;
* **Permit** makes each member wait until ``min-member`` siblings are assumed on nodes, then
  allows them all at once, so they are bound together; a member that waits asks for its
  siblings to be moved back to the active queue;
* a member that waits longer than ``permitWaitingTimeSeconds`` is rejected, and its
  **Unreserve** rejects every waiting sibling: the whole gang goes back to the queue, and
  nothing of it is bound;
* **PostFilter** rejects the waiting siblings as soon as a member fits nowhere (unless enough
  members are already assumed), and, with ``podGroupBackoffSeconds``, keeps the whole group
  out for that long: PreFilter rejects its members until then.

A port of the idea of kubernetes-sigs/scheduler-plugins' ``coscheduling``, driven by labels
instead of a PodGroup object. Members are counted from what the plugin sees: pods entering the
queue (PreEnqueue), pods on nodes and pods waiting on Permit. The Handle offers no pod lister,
so a member deleted while still pending keeps counting until the plugin is rebuilt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final

import attrs

from schedframe import framework as fw
from schedframe.errors import INVALID, FieldIssue
from schedframe.objects import Pod

__all__ = [
    "MIN_MEMBER",
    "POD_GROUP",
    "Coscheduling",
    "CoschedulingArgs",
    "group_of",
]

#: The label naming a pod's group.
POD_GROUP: Final = "scheduling.x-k8s.io/pod-group"
#: The annotation (or label) giving the group's minimum number of members.
MIN_MEMBER: Final = "scheduling.x-k8s.io/min-member"

NAME: Final = "Coscheduling"
_WAIT_REASON: Final = "waiting for the pod group's members"


@attrs.frozen(kw_only=True)
class CoschedulingArgs:
    """Arguments (``pluginConfig[].args``, camelCase ``permitWaitingTimeSeconds``)."""

    #: How long a member waits on Permit for its siblings before the gang is rejected.
    permit_waiting_time_seconds: int = 60
    #: How long a group stays out after a member was found unschedulable (0: not at all).
    #: Without it a gang that cannot fit is retried back to back.
    pod_group_backoff_seconds: int = 0

    def validate(self) -> list[FieldIssue]:
        """Reject a wait shorter than a second, and a negative backoff."""
        issues = []
        if self.permit_waiting_time_seconds < 1:
            issues.append(
                FieldIssue(
                    path="permitWaitingTimeSeconds",
                    kind=INVALID,
                    value=self.permit_waiting_time_seconds,
                    detail="must be at least 1",
                )
            )
        if self.pod_group_backoff_seconds < 0:
            issues.append(
                FieldIssue(
                    path="podGroupBackoffSeconds",
                    kind=INVALID,
                    value=self.pod_group_backoff_seconds,
                    detail="must not be negative",
                )
            )
        return issues


@attrs.frozen
class _Group:
    namespace: str
    name: str
    #: ``None`` when the min-member annotation is not a positive integer.
    min_member: int | None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def group_of(pod: Pod) -> tuple[str, int | None] | None:
    """``(namespace/group, min_member)`` of a gang member, ``None`` for other pods.

    ``min_member`` is 1 when the annotation and label are absent, ``None`` when present but not
    a positive integer.
    """
    group = _group(pod)
    return None if group is None else (group.key, group.min_member)


def _group(pod: Pod) -> _Group | None:
    name = pod.metadata.labels.get(POD_GROUP)
    if not name:
        return None
    raw = pod.metadata.annotations.get(MIN_MEMBER, pod.metadata.labels.get(MIN_MEMBER))
    min_member: int | None = 1
    if raw is not None:
        min_member = int(raw) if raw.isdigit() and int(raw) > 0 else None
    return _Group(pod.metadata.namespace, name, min_member)


def _same_group(pod: Pod, group: _Group) -> bool:
    return pod.metadata.namespace == group.namespace and pod.metadata.labels.get(POD_GROUP) == (
        group.name
    )


class Coscheduling(
    fw.QueueSortPlugin,
    fw.PreEnqueuePlugin,
    fw.PreFilterPlugin,
    fw.PostFilterPlugin,
    fw.ReservePlugin,
    fw.PermitPlugin,
    fw.EnqueueExtensions,
):
    """Gang scheduling by pod-group labels (see the module docstring)."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type] = CoschedulingArgs

    def __init__(self, args: CoschedulingArgs, handle: fw.Handle) -> None:
        self._handle = handle
        self._timeout = float(args.permit_waiting_time_seconds)
        self._backoff = float(args.pod_group_backoff_seconds)
        # Group key -> until when PreFilter keeps the group out (upstream backedOffPG).
        self._backed_off: dict[str, float] = {}
        # Group key -> when its first member was first queued (the group's place in the queue).
        self._first_seen: dict[str, float] = {}
        # Group key -> the members seen entering the queue, by uid.
        self._members: dict[str, dict[str, Pod]] = {}

    # -- QueueSort ---------------------------------------------------------------------------

    def _sort_key(self, qpi: fw.QueuedPodInfo) -> tuple[int, float, str, str]:
        pod = qpi.pod
        seen = qpi.initial_attempt_timestamp
        when = qpi.timestamp if seen is None else seen
        group = _group(pod)
        if group is None:
            return (-pod.priority, when, pod.key, pod.key)
        # Only ever set once per group, so the keys of queued pods never change.
        first = self._first_seen.setdefault(group.key, when)
        return (-pod.priority, first, group.key, pod.key)

    def less(self, a: fw.QueuedPodInfo, b: fw.QueuedPodInfo) -> bool:
        """Higher priority first; then the group (or pod) seen first; siblings side by side."""
        return self._sort_key(a) < self._sort_key(b)

    # -- PreEnqueue: count the members ---------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> fw.Status | None:
        """Note the pod as a member of its group; never gates it."""
        group = _group(pod)
        if group is not None:
            self._members.setdefault(group.key, {})[pod.uid] = pod
        return None

    def _known_members(self, pod: Pod, group: _Group) -> int:
        uids = set(self._members.get(group.key, {}))
        uids.add(pod.uid)
        for info in self._handle.snapshot_shared_lister().node_infos.list():
            uids.update(p.pod.uid for p in info.pods if _same_group(p.pod, group))

        def add(wp: fw.WaitingPod) -> None:
            if _same_group(wp.pod, group):
                uids.add(wp.pod.uid)

        self._handle.iterate_over_waiting_pods(add)
        return len(uids)

    # -- PreFilter -----------------------------------------------------------------------------

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Reject a member whose group has fewer known members than its min-member."""
        group = _group(pod)
        if group is None:
            return fw.Status(fw.Code.SKIP)
        if group.min_member is None:
            return fw.Status(
                fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f'pod group "{group.key}" has an invalid {MIN_MEMBER} (want a positive integer)',
            )
        until = self._backed_off.get(group.key)
        if until is not None and self._handle.clock.now() < until:
            return fw.Status(
                fw.Code.UNSCHEDULABLE, f'pod group "{group.key}" failed recently; backing off'
            )
        total = self._known_members(pod, group)
        if total < group.min_member:
            return fw.Status(
                fw.Code.UNSCHEDULABLE,
                f'pod group "{group.key}" has {total} member(s), fewer than its min-member '
                f"{group.min_member}",
            )
        return None

    # -- PostFilter ----------------------------------------------------------------------------

    def post_filter(
        self, state: fw.CycleState, pod: Pod, filtered_node_status_map: fw.NodeToStatus
    ) -> tuple[fw.PostFilterResult | None, fw.Status | None]:
        """A member fits nowhere: release its waiting siblings now rather than at the timeout.

        As upstream, the group is left alone when enough members are assumed already, or when
        at most a tenth of min-member is missing (later members may still make it).
        """
        group = _group(pod)
        if group is None or group.min_member is None or group.min_member <= 1:
            return None, fw.Status(fw.Code.UNSCHEDULABLE)
        assigned = self._assigned(pod, group)
        missing = group.min_member - assigned
        if missing <= 0 or missing * 10 <= group.min_member:
            return None, fw.Status(fw.Code.UNSCHEDULABLE)
        self._reject_waiting(group, pod, f"pod group member {pod.name} is unschedulable")
        # Back off only a group that has all its members: a missing member is not a failure.
        if self._backoff > 0 and self._known_members(pod, group) >= group.min_member:
            self._backed_off[group.key] = self._handle.clock.now() + self._backoff
        return None, fw.Status(
            fw.Code.UNSCHEDULABLE,
            f'pod group "{group.key}" rejected: member {pod.name} is unschedulable',
        )

    def _assigned(self, pod: Pod, group: _Group) -> int:
        # Assumed siblings (waiting ones included) are on their nodes in the snapshot; the pod
        # itself is not, as the snapshot was taken before it was assumed.
        return sum(
            1
            for info in self._handle.snapshot_shared_lister().node_infos.list()
            for p in info.pods
            if p.pod.uid != pod.uid and _same_group(p.pod, group)
        )

    # -- Reserve / Unreserve -------------------------------------------------------------------

    def reserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> fw.Status | None:
        """Nothing to claim: the assumed pod itself is what siblings count."""
        return None

    def unreserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> None:
        """The member is rejected (its wait ran out, or binding failed): reject the siblings
        still waiting, so no part of the gang is bound without the rest."""
        group = _group(pod)
        if group is not None and group.min_member is not None and group.min_member > 1:
            self._reject_waiting(group, pod, f"pod group member {pod.name} was rejected")

    def _reject_waiting(self, group: _Group, pod: Pod, message: str) -> int:
        siblings: list[fw.WaitingPod] = []

        def collect(wp: fw.WaitingPod) -> None:
            if wp.pod.uid != pod.uid and _same_group(wp.pod, group):
                siblings.append(wp)

        self._handle.iterate_over_waiting_pods(collect)
        for wp in siblings:
            wp.reject(NAME, message)
        return len(siblings)

    # -- Permit --------------------------------------------------------------------------------

    def permit(self, state: fw.CycleState, pod: Pod, node_name: str) -> fw.Status | None:
        """Wait until min-member siblings are assumed, then allow them all."""
        group = _group(pod)
        if group is None or group.min_member is None or group.min_member <= 1:
            return None
        if self._assigned(pod, group) + 1 < group.min_member:
            # Bring the siblings rejected earlier (too few members then) back to the queue.
            for uid, sibling in self._members.get(group.key, {}).items():
                if uid != pod.uid:
                    state.pods_to_activate[uid] = sibling
            return fw.Status.wait(self._timeout)

        def allow(wp: fw.WaitingPod) -> None:
            if _same_group(wp.pod, group):
                wp.allow(NAME)

        self._handle.iterate_over_waiting_pods(allow)
        return None

    # -- EnqueueExtensions ---------------------------------------------------------------------

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """A new member may complete the group; a new node, or a pod leaving one, frees room."""
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.ADD),
                self.is_schedulable_after_pod_added,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(
                    fw.EventResource.NODE,
                    fw.ActionType.ADD | fw.ActionType.UPDATE_NODE_ALLOCATABLE,
                )
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.ASSIGNED_POD, fw.ActionType.DELETE)
            ),
        )

    def is_schedulable_after_pod_added(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the new pod joins the rejected pod's group."""
        group = _group(pod)
        if group is not None and isinstance(new_obj, Pod) and _same_group(new_obj, group):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP
