"""Coscheduling: schedule a gang of pods all together, or not at all.

A gang is a **PodGroup** (``scheduling.x-k8s.io/v1alpha1``, the custom resource of
kubernetes-sigs/scheduler-plugins): ``spec.minMember`` pods must run together, and they wait at
most ``spec.scheduleTimeoutSeconds`` for each other. A pod joins the group with the label
``scheduling.x-k8s.io/pod-group: <PodGroup name>`` (same namespace). Importing this package
declares the PodGroup kind, so PodGroup manifests load and backends store them; the plugin
reads them, and the pods, through ``Handle.lister``. Then:

* **QueueSort** keeps siblings together in the active queue: higher priority first, then by
  the PodGroup's creation time (a pod's first attempt for a pod without a group), then by
  group, then by pod name;
* **PreFilter** rejects a member whose PodGroup does not exist, or has fewer pods than
  ``minMember`` (counted with the pod lister, as upstream);
* **Permit** makes each member wait until ``minMember`` siblings are assumed, then allows them
  all at once, so they are bound together; a member that waits asks for its siblings to be
  moved back to the active queue;
* a member that waits longer than the timeout is rejected, and its **Unreserve** rejects every
  waiting sibling: the whole gang goes back to the queue, and nothing of it is bound;
* **PostFilter** rejects the waiting siblings as soon as a member fits nowhere (unless enough
  members are already assumed), and, with ``podGroupBackoffSeconds``, keeps the whole group
  out for that long: PreFilter rejects its members until then;
* a PodGroup created or changed, or a new member, requeues the members it may help.

* **PostBind** updates the PodGroup's ``status`` through the backend's
  :class:`~schedframe.framework.CustomObjectWriter` (the ``podgroups/status`` subresource):
  ``scheduled`` counts the bound members, ``phase`` becomes ``Scheduling`` (and
  ``scheduleStartTime`` is set, once) while fewer than ``minMember`` are bound, then
  ``Scheduled`` — what the plugin's PostBind writes in scheduler-plugins' PodGroup KEP (42).
  Upstream wrote only when the phase changed (its count then lagged until the controller
  recounted); here every bind is written, so ``scheduled`` is exact. Needs RBAC ``get`` and
  ``update`` on ``podgroups/status`` (group ``scheduling.x-k8s.io``) on a real cluster.

A port of kubernetes-sigs/scheduler-plugins' ``coscheduling``. Not ported: ``minResources``
(the pre-check of the cluster's free capacity) and the PodGroup *controller*: upstream it
watches the group's pods and owns the rest of the status — ``Pending`` until ``minMember``
pods exist, then ``PreScheduling``; ``Running`` once ``minMember`` pods run, with the
``running``, ``succeeded`` and ``failed`` counts; ``Finished`` or ``Failed`` as they end.
The example's simulate script shows how a controller would do it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import ClassVar, Final

import attrs

from schedframe import framework as fw
from schedframe.errors import INVALID, BackendError, FieldIssue
from schedframe.objects import CustomObject, Pod, declare_custom_kind

__all__ = [
    "POD_GROUP",
    "POD_GROUP_KIND",
    "Coscheduling",
    "CoschedulingArgs",
    "group_name",
    "pod_group",
    "pod_group_status_after_bind",
]

#: The label naming a pod's PodGroup.
POD_GROUP: Final = "scheduling.x-k8s.io/pod-group"
#: The PodGroup custom kind, declared on import.
POD_GROUP_KIND: Final = declare_custom_kind(
    "scheduling.x-k8s.io/v1alpha1", "PodGroup", plural="podgroups"
)

NAME: Final = "Coscheduling"
_STATUS_ATTEMPTS: Final = 5
_CONFLICT_PAUSE: Final = 0.05
log = logging.getLogger(__name__)
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
    #: ``None`` when the PodGroup does not exist, or its ``minMember`` is not a positive
    #: integer (see ``problem``).
    min_member: int | None
    #: ``spec.scheduleTimeoutSeconds``, when set.
    timeout: float | None = None
    created: float | None = None
    problem: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def group_name(pod: Pod) -> str | None:
    """``namespace/name`` of the pod's PodGroup, ``None`` for a pod of no group."""
    name = pod.metadata.labels.get(POD_GROUP)
    return f"{pod.metadata.namespace}/{name}" if name else None


def pod_group(
    namespace: str,
    name: str,
    min_member: int,
    *,
    schedule_timeout_seconds: int | None = None,
) -> CustomObject:
    """A PodGroup object (for tests and simulations)."""
    from schedframe.objects import ObjectMeta

    spec: dict[str, object] = {"minMember": min_member}
    if schedule_timeout_seconds is not None:
        spec["scheduleTimeoutSeconds"] = schedule_timeout_seconds
    return CustomObject(
        api_version=POD_GROUP_KIND.api_version,
        kind="PodGroup",
        metadata=ObjectMeta(name=name, namespace=namespace, uid=f"{namespace}/{name}"),
        body={"spec": spec},
    )


def pod_group_status_after_bind(
    status: Mapping[str, object], min_member: int, now: float
) -> dict[str, object]:
    """The PodGroup ``status`` once one more member is bound: ``scheduled`` plus one;
    ``phase`` ``Scheduled`` when that reaches ``min_member``, else ``Scheduling`` with
    ``scheduleStartTime`` set to ``now`` (seconds since the epoch) unless already set."""
    out = {k: _plain(v) for k, v in status.items()}
    previous = out.get("scheduled")
    scheduled = (previous if isinstance(previous, int) and previous > 0 else 0) + 1
    out["scheduled"] = scheduled
    if scheduled >= min_member:
        out["phase"] = "Scheduled"
    else:
        out["phase"] = "Scheduling"
        if not out.get("scheduleStartTime"):
            when = datetime.fromtimestamp(now, UTC)
            out["scheduleStartTime"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    return out


def _plain(value: object) -> object:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _positive(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return None
    return value


def _same_group(pod: Pod, group: _Group) -> bool:
    return pod.metadata.namespace == group.namespace and pod.metadata.labels.get(POD_GROUP) == (
        group.name
    )


class Coscheduling(
    fw.QueueSortPlugin,
    fw.PreFilterPlugin,
    fw.PostFilterPlugin,
    fw.ReservePlugin,
    fw.PermitPlugin,
    fw.PostBindPlugin,
    fw.EnqueueExtensions,
):
    """Gang scheduling by pod-group labels (see the module docstring)."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type] = CoschedulingArgs

    def __init__(self, args: CoschedulingArgs, handle: fw.Handle) -> None:
        self._handle = handle
        self._pod_groups = handle.lister("PodGroup")
        self._pods = handle.lister("Pod")
        self._timeout = float(args.permit_waiting_time_seconds)
        self._backoff = float(args.pod_group_backoff_seconds)
        # Group key -> until when PreFilter keeps the group out (upstream backedOffPG).
        self._backed_off: dict[str, float] = {}
        # Group key -> when its first member was first queued (the group's place in the queue).
        self._first_seen: dict[str, float] = {}
        # PostBind runs on the binding threads: one status write at a time.
        self._status_lock = threading.Lock()
        # Group key -> (the resourceVersion the last status write replaced, what it stored).
        self._written: dict[str, tuple[str, CustomObject]] = {}

    def _group(self, pod: Pod) -> _Group | None:
        name = pod.metadata.labels.get(POD_GROUP)
        if not name:
            return None
        ns = pod.metadata.namespace
        pg = self._pod_groups.get(name, ns)
        if not isinstance(pg, CustomObject):
            return _Group(ns, name, None, problem=f'PodGroup "{ns}/{name}" not found')
        created = pg.metadata.creation_timestamp
        stamp = None if created is None else created.timestamp()
        min_member = _positive(pg.spec.get("minMember"))
        if min_member is None:
            problem = f'PodGroup "{ns}/{name}" has an invalid minMember (want a positive integer)'
            return _Group(ns, name, None, created=stamp, problem=problem)
        raw_timeout = _positive(pg.spec.get("scheduleTimeoutSeconds"))
        timeout = None if raw_timeout is None else float(raw_timeout)
        return _Group(ns, name, min_member, timeout=timeout, created=stamp)

    def _members(self, group: _Group) -> list[Pod]:
        return [
            p
            for p in self._pods.list(group.namespace)
            if isinstance(p, Pod)
            and _same_group(p, group)
            and p.metadata.deletion_timestamp is None
        ]

    # -- QueueSort ---------------------------------------------------------------------------

    def _sort_key(self, qpi: fw.QueuedPodInfo) -> tuple[int, float, str, str]:
        pod = qpi.pod
        seen = qpi.initial_attempt_timestamp
        when = qpi.timestamp if seen is None else seen
        group = self._group(pod)
        if group is None:
            return (-pod.priority, when, pod.key, pod.key)
        # Only ever set once per group, so the keys of queued pods never change.
        first = self._first_seen.setdefault(
            group.key, when if group.created is None else group.created
        )
        return (-pod.priority, first, group.key, pod.key)

    def less(self, a: fw.QueuedPodInfo, b: fw.QueuedPodInfo) -> bool:
        """Higher priority first; then the group (or pod) seen first; siblings side by side."""
        return self._sort_key(a) < self._sort_key(b)

    # -- PreFilter -----------------------------------------------------------------------------

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Reject a member whose group has fewer known members than its min-member."""
        group = self._group(pod)
        if group is None:
            return fw.Status(fw.Code.SKIP)
        if group.min_member is None:
            return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, group.problem)
        until = self._backed_off.get(group.key)
        if until is not None and self._handle.clock.now() < until:
            return fw.Status(
                fw.Code.UNSCHEDULABLE, f'pod group "{group.key}" failed recently; backing off'
            )
        total = len(self._members(group))
        if total < group.min_member:
            return fw.Status(
                fw.Code.UNSCHEDULABLE,
                f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods "
                f"number: {total}, minMember of group: {group.min_member}",
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
        group = self._group(pod)
        if group is None or group.min_member is None or group.min_member <= 1:
            return None, fw.Status(fw.Code.UNSCHEDULABLE)
        assigned = self._assigned(pod, group)
        missing = group.min_member - assigned
        if missing <= 0 or missing * 10 <= group.min_member:
            return None, fw.Status(fw.Code.UNSCHEDULABLE)
        self._reject_waiting(group, pod, f"pod group member {pod.name} is unschedulable")
        # Back off only a group that has all its members: a missing member is not a failure.
        if self._backoff > 0 and len(self._members(group)) >= group.min_member:
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
        group = self._group(pod)
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
        group = self._group(pod)
        if group is None or group.min_member is None or group.min_member <= 1:
            return None
        if self._assigned(pod, group) + 1 < group.min_member:
            # Bring the siblings rejected earlier (too few members then) back to the queue.
            for sibling in self._members(group):
                if sibling.uid != pod.uid:
                    state.pods_to_activate[sibling.uid] = sibling
            return fw.Status.wait(self._timeout if group.timeout is None else group.timeout)

        def allow(wp: fw.WaitingPod) -> None:
            if _same_group(wp.pod, group):
                wp.allow(NAME)

        self._handle.iterate_over_waiting_pods(allow)
        return None

    # -- EnqueueExtensions ---------------------------------------------------------------------

    # -- PostBind -----------------------------------------------------------------------------

    def post_bind(self, state: fw.CycleState, pod: Pod, node_name: str) -> None:
        """Count the bound member in its PodGroup's ``status`` (see the module docstring).
        A failed write is logged, never fatal (PostBind is informational)."""
        group = self._group(pod)
        binder = self._handle.binder
        if group is None or group.min_member is None:
            return
        if not isinstance(binder, fw.CustomObjectWriter):
            log.warning("the backend cannot write PodGroup status; %s not updated", group.key)
            return
        with self._status_lock:
            for attempt in range(_STATUS_ATTEMPTS):
                pg = self._pod_groups.get(group.name, group.namespace)
                if not isinstance(pg, CustomObject):
                    return
                # The watch may not have brought this plugin's own last write yet: when the
                # lister still holds the version that write replaced, start from the write.
                replaced, written = self._written.get(group.key, ("", pg))
                if replaced and pg.metadata.resource_version == replaced:
                    pg = written
                status = pod_group_status_after_bind(
                    pg.status, group.min_member, self._handle.clock.now()
                )
                try:
                    stored = binder.update_custom_object_status(pg, status)
                except BackendError as exc:
                    if exc.reason != "Conflict":
                        log.warning("PodGroup %s status not updated: %s", group.key, exc)
                        return
                    # Another writer (the controller): let the watch catch up, then retry.
                    time.sleep(_CONFLICT_PAUSE * (attempt + 1))
                    continue
                self._written[group.key] = (pg.metadata.resource_version, stored)
                return
            log.warning("PodGroup %s status not updated: conflicts", group.key)

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """A new member or PodGroup may complete the group; a new node, or a pod leaving one,
        frees room."""
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent("PodGroup", fw.ActionType.ADD | fw.ActionType.UPDATE),
                self.is_schedulable_after_pod_group_change,
            ),
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
        name = pod.metadata.labels.get(POD_GROUP)
        if (
            name
            and isinstance(new_obj, Pod)
            and new_obj.metadata.namespace == pod.metadata.namespace
            and new_obj.metadata.labels.get(POD_GROUP) == name
        ):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pod_group_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the rejected pod's own PodGroup was created or changed."""
        if (
            isinstance(new_obj, CustomObject)
            and new_obj.metadata.namespace == pod.metadata.namespace
            and new_obj.metadata.name == pod.metadata.labels.get(POD_GROUP)
        ):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP
