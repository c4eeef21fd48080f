"""Capacity scheduling: namespaces share a cluster through ElasticQuotas.

An **ElasticQuota** (``scheduling.x-k8s.io/v1alpha1``, the custom resource of
kubernetes-sigs/scheduler-plugins) gives its namespace ``spec.min`` (guaranteed) and
``spec.max`` (a ceiling) per resource. Importing this package declares the kind; the plugin
reads quotas and pods through ``Handle.lister``. As upstream's ``CapacityScheduling``:

* **PreFilter** rejects a pod when its namespace's used resources plus the pod's request (and
  the requests of more important pods nominated in the same namespace) would exceed the
  quota's max — ``Pod default/p is rejected in PreFilter because ElasticQuota default is
  more than Max`` — or when the sum of every quota's use would exceed the sum of every quota's
  min: a namespace may *borrow* what others leave unused, never more than the total
  guaranteed;
* **Reserve / Unreserve** account the pod against its quota at once, so the next cycle sees
  it; **AddPod / RemovePod** keep a cycle's quota snapshot in step during preemption's
  what-ifs;
* **PostFilter** preempts across quotas: a pod whose namespace is within its min reclaims
  what it lent, evicting pods of namespaces that use more than their min; a namespace over
  its min may only preempt its own lower-priority pods; pods of namespaces without a quota
  preempt by priority among themselves;
* a pod deleted or an ElasticQuota changed requeues the pods it may help.

Quantities are the scheduler's integers (cpu in milli-units). Not ported: ElasticQuota
``status.used``: upstream the ElasticQuota controller writes it, not the plugin, and the plugin
never reads it (it counts what each quota uses from the pods it sees). A controller of one's
own writes it with :class:`~schedframe.framework.CustomObjectWriter`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import ClassVar, Final

import attrs

from schedframe import framework as fw
from schedframe import preemption
from schedframe.objects import (
    CustomObject,
    ObjectMeta,
    Pod,
    PodDisruptionBudget,
    declare_custom_kind,
    parse_quantity,
    resource_amount,
)

__all__ = [
    "ELASTIC_QUOTA_KIND",
    "CapacityScheduling",
    "QuotaInfo",
    "elastic_quota",
]

NAME: Final = "CapacityScheduling"
#: The ElasticQuota custom kind, declared on import.
ELASTIC_QUOTA_KIND: Final = declare_custom_kind(
    "scheduling.x-k8s.io/v1alpha1", "ElasticQuota", plural="elasticquotas"
)
_SNAPSHOT: Final = fw.StateKey["_Snapshot"]("ElasticQuotaSnapshot")
_PREFILTER: Final = fw.StateKey["_PreFilterState"]("PreFilterCapacityScheduling")

Resources = dict[str, int]


def _resources(raw: object) -> Resources | None:
    """A ResourceList of quantities as scheduler integers; ``None`` when absent."""
    if not isinstance(raw, Mapping):
        return None
    out: Resources = {}
    for name, value in raw.items():
        if isinstance(value, str | int | float):
            out[str(name)] = resource_amount(str(name), parse_quantity(value))
    return out


def elastic_quota(
    namespace: str,
    *,
    min: Mapping[str, str | int],  # noqa: A002 - the field's name
    max: Mapping[str, str | int] | None = None,  # noqa: A002
    name: str = "quota",
) -> CustomObject:
    """An ElasticQuota object (for tests and simulations)."""
    spec: dict[str, object] = {"min": dict(min)}
    if max is not None:
        spec["max"] = dict(max)
    return CustomObject(
        api_version=ELASTIC_QUOTA_KIND.api_version,
        kind="ElasticQuota",
        metadata=ObjectMeta(name=name, namespace=namespace, uid=f"{namespace}/{name}"),
        body={"spec": spec},
    )


def _add(a: Mapping[str, int], b: Mapping[str, int]) -> Resources:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def _over(used: Mapping[str, int], limit: Mapping[str, int]) -> bool:
    """Upstream's ``cmp``: some resource of ``used`` that ``limit`` names exceeds it."""
    return any(k in limit and v > limit[k] for k, v in used.items())


def pod_request(pod: Pod) -> Resources:
    """Upstream ``computePodResourceRequest``: containers summed, init containers as a floor,
    overhead added (the pod's effective requests)."""
    return dict(pod.requests)


@attrs.define
class QuotaInfo:
    """One namespace's quota and what its pods use (upstream ``ElasticQuotaInfo``).

    ``max`` ``None`` is unbounded.
    """

    namespace: str
    min: Resources
    max: Resources | None
    used: Resources = attrs.field(factory=dict)
    pods: set[str] = attrs.field(factory=set)

    def clone(self) -> QuotaInfo:
        return QuotaInfo(self.namespace, self.min, self.max, dict(self.used), set(self.pods))

    def used_over_min_with(self, request: Mapping[str, int]) -> bool:
        return _over(_add(self.used, request), self.min)

    def used_over_max_with(self, request: Mapping[str, int]) -> bool:
        return self.max is not None and _over(_add(self.used, request), self.max)

    def used_over_min(self) -> bool:
        return _over(self.used, self.min)

    def add_pod(self, pod: Pod) -> None:
        if pod.uid not in self.pods:
            self.pods.add(pod.uid)
            self.used = _add(self.used, pod_request(pod))

    def remove_pod(self, pod: Pod) -> None:
        if pod.uid in self.pods:
            self.pods.discard(pod.uid)
            self.used = _add(self.used, {k: -v for k, v in pod_request(pod).items()})


@attrs.define
class _Snapshot:
    infos: dict[str, QuotaInfo]

    def clone(self) -> _Snapshot:
        return _Snapshot({ns: info.clone() for ns, info in self.infos.items()})

    def aggregated_used_over_min_with(self, request: Mapping[str, int]) -> bool:
        used: Resources = dict(request)
        minimum: Resources = {}
        for info in self.infos.values():
            used = _add(used, info.used)
            minimum = _add(minimum, info.min)
        return _over(used, minimum)


@attrs.frozen
class _PreFilterState:
    pod_req: Resources
    in_quota_with_pod: Resources
    all_with_pod: Resources


class CapacityScheduling(
    fw.PreFilterPlugin,
    fw.PreFilterExtensions,
    fw.PostFilterPlugin,
    fw.ReservePlugin,
    fw.EnqueueExtensions,
):
    """ElasticQuota min/max per namespace, borrowing and preemption across quotas."""

    name: ClassVar[str] = NAME

    def __init__(self, args: object, handle: fw.Handle) -> None:
        self._handle = handle
        self._quotas = handle.lister("ElasticQuota")
        self._pods = handle.lister("Pod")
        # Pods assumed by Reserve and not yet seen bound by the pod lister, by namespace.
        self._reserved: dict[str, dict[str, Pod]] = {}
        self._evaluator = preemption.Evaluator(NAME, handle, _Preemptor(self))

    # -- the quotas ----------------------------------------------------------------------------

    def _infos(self) -> dict[str, QuotaInfo]:
        """Every namespace's quota, with the use of its bound and reserved pods."""
        infos: dict[str, QuotaInfo] = {}
        for obj in self._quotas.list():
            if not isinstance(obj, CustomObject):
                continue
            ns = obj.metadata.namespace
            if ns in infos:
                continue  # only one ElasticQuota per namespace is supported, as upstream
            minimum = _resources(obj.spec.get("min")) or {}
            infos[ns] = QuotaInfo(ns, minimum, _resources(obj.spec.get("max")))
        for ns, info in infos.items():
            for p in self._pods.list(ns):
                if (
                    isinstance(p, Pod)
                    and p.spec.node_name
                    and p.status.phase in ("Pending", "Running", "")
                ):
                    info.add_pod(p)
        for ns, reserved in self._reserved.items():
            for uid, p in list(reserved.items()):
                current = self._pods.get(p.name, ns)
                if not isinstance(current, Pod) or current.uid != uid or current.spec.node_name:
                    del reserved[uid]  # deleted, or bound and counted above
                elif ns in infos:
                    infos[ns].add_pod(p)  # assumed, its binding in flight
        return infos

    # -- PreFilter -----------------------------------------------------------------------------

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Reject a pod over its quota's max, or over the sum of every quota's min."""
        snapshot = _Snapshot(self._infos())
        state[_SNAPSHOT] = snapshot
        request = pod_request(pod)
        info = snapshot.infos.get(pod.namespace)
        if info is None:
            state[_PREFILTER] = _PreFilterState(request, {}, {})
            return None
        in_quota: Resources = {}
        everywhere: Resources = {}
        for node_info in nodes:
            for nominated in self._handle.nominator.nominated_pods_for_node(node_info.name):
                p = nominated.pod
                other = snapshot.infos.get(p.namespace)
                if p.uid == pod.uid or other is None:
                    continue
                if p.namespace == pod.namespace and p.priority >= pod.priority:
                    in_quota = _add(in_quota, pod_request(p))
                    everywhere = _add(everywhere, pod_request(p))
                elif p.namespace != pod.namespace and not other.used_over_min():
                    everywhere = _add(everywhere, pod_request(p))
        in_quota = _add(in_quota, request)
        everywhere = _add(everywhere, request)
        state[_PREFILTER] = _PreFilterState(request, in_quota, everywhere)
        if info.used_over_max_with(in_quota):
            return fw.Status(
                fw.Code.UNSCHEDULABLE,
                f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because ElasticQuota "
                f"{info.namespace} is more than Max",
            )
        if snapshot.aggregated_used_over_min_with(everywhere):
            return fw.Status(
                fw.Code.UNSCHEDULABLE,
                f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because total "
                "ElasticQuota used is more than min",
            )
        return None

    def pre_filter_extensions(self) -> fw.PreFilterExtensions | None:
        """AddPod / RemovePod keep the cycle's quota snapshot in step."""
        return self

    def add_pod(
        self,
        state: fw.CycleState,
        pod_to_schedule: Pod,
        pod_info_to_add: fw.PodInfo,
        node_info: fw.NodeInfo,
    ) -> fw.Status | None:
        """Count the added pod against its quota in the cycle's snapshot."""
        snapshot = state.get(_SNAPSHOT)
        if snapshot is not None:
            info = snapshot.infos.get(pod_info_to_add.pod.namespace)
            if info is not None:
                info.add_pod(pod_info_to_add.pod)
        return None

    def remove_pod(
        self,
        state: fw.CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: fw.PodInfo,
        node_info: fw.NodeInfo,
    ) -> fw.Status | None:
        """Release the removed pod's use in the cycle's snapshot."""
        snapshot = state.get(_SNAPSHOT)
        if snapshot is not None:
            info = snapshot.infos.get(pod_info_to_remove.pod.namespace)
            if info is not None:
                info.remove_pod(pod_info_to_remove.pod)
        return None

    # -- PostFilter ----------------------------------------------------------------------------

    def post_filter(
        self, state: fw.CycleState, pod: Pod, filtered_node_status_map: fw.NodeToStatus
    ) -> tuple[fw.PostFilterResult | None, fw.Status | None]:
        """Preempt across quotas (see the module docstring)."""
        return self._evaluator.preempt(state, pod, filtered_node_status_map)

    # -- Reserve -------------------------------------------------------------------------------

    def reserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> fw.Status | None:
        """Count the pod against its quota until it is seen bound."""
        self._reserved.setdefault(pod.namespace, {})[pod.uid] = pod
        return None

    def unreserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> None:
        """The pod was not bound after all: release its use."""
        self._reserved.get(pod.namespace, {}).pop(pod.uid, None)

    # -- EnqueueExtensions ---------------------------------------------------------------------

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """A pod deleted frees quota; any ElasticQuota change may admit a pod."""
        return (
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.DELETE)),
            fw.ClusterEventWithHint(fw.ClusterEvent("ElasticQuota", fw.ActionType.ALL)),
        )


class _Preemptor:
    """Upstream's ``preemptor``: which pods a preemptor may evict, quota by quota."""

    def __init__(self, plugin: CapacityScheduling) -> None:
        self._plugin = plugin

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes

    def candidates_to_victims_map(
        self, candidates: Sequence[preemption.Candidate]
    ) -> dict[str, preemption.Victims]:
        return {c.name: c.victims for c in candidates}

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: fw.Status | None
    ) -> tuple[bool, str]:
        if pod.spec.preemption_policy == "Never":
            return False, "not eligible due to preemptionPolicy=Never."
        return True, ""

    def ordered_score_funcs(
        self, nodes_to_victims: Mapping[str, preemption.Victims]
    ) -> list[preemption.ScoreFunc] | None:
        return None

    def select_victims_on_node(
        self,
        state: fw.CycleState,
        pod: Pod,
        node_info: fw.NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, fw.Status | None]:
        handle = self._plugin._handle
        snapshot = state.get(_SNAPSHOT)
        prefilter = state.get(_PREFILTER)
        if snapshot is None or prefilter is None:
            return [], 0, fw.Status(fw.Code.UNSCHEDULABLE, "Failed to read preFilterState")
        infos = snapshot.infos
        mine = infos.get(pod.namespace)
        potential: list[fw.PodInfo] = []
        if mine is not None:
            over_min = mine.used_over_min_with(prefilter.in_quota_with_pod)
            for info in node_info.pods:
                theirs = infos.get(info.pod.namespace)
                if theirs is None:
                    continue
                if over_min:
                    # Beyond its guarantee: only its own, less important pods.
                    if info.pod.namespace == pod.namespace and info.pod.priority < pod.priority:
                        potential.append(info)
                elif info.pod.namespace != pod.namespace and theirs.used_over_min():
                    # Within its guarantee: reclaim from quotas that borrow.
                    potential.append(info)
        else:
            potential = [
                info
                for info in node_info.pods
                if info.pod.namespace not in infos and info.pod.priority < pod.priority
            ]
        if not potential:
            return (
                [],
                0,
                fw.Status(
                    fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f"No victims found on node {node_info.name} for preemptor pod {pod.name}",
                ),
            )
        for info in potential:
            status = _remove(handle, state, pod, info, node_info)
            if status is not None:
                return [], 0, status
        status = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if status is not None and not status.is_success():
            return [], 0, status
        if mine is not None and (
            mine.used_over_max_with(prefilter.pod_req)
            or snapshot.aggregated_used_over_min_with(prefilter.pod_req)
        ):
            return [], 0, fw.Status(fw.Code.UNSCHEDULABLE, "global quota max exceeded")
        now = datetime.fromtimestamp(handle.clock.now(), tz=UTC)
        key = preemption.importance_key(now)
        potential.sort(key=lambda info: key(info.pod))
        violating, non_violating = preemption.filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[Pod] = []
        num_violating = 0
        for group, counts in ((violating, True), (non_violating, False)):
            for info in group:
                node_info.add_pod(info)
                handle.run_pre_filter_extension_add_pod(state, pod, info, node_info)
                fit = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
                fits = fit is None or fit.is_success()
                over = mine is not None and (
                    mine.used_over_max_with(prefilter.in_quota_with_pod)
                    or snapshot.aggregated_used_over_min_with(prefilter.all_with_pod)
                )
                if not fits or over:
                    status = _remove(handle, state, pod, info, node_info)
                    if status is not None:
                        return [], 0, status
                    victims.append(info.pod)
                    if counts:
                        num_violating += 1
        return victims, num_violating, None


def _remove(
    handle: fw.Handle, state: fw.CycleState, pod: Pod, info: fw.PodInfo, node_info: fw.NodeInfo
) -> fw.Status | None:
    node_info.remove_pod(info.pod)
    status = handle.run_pre_filter_extension_remove_pod(state, pod, info, node_info)
    if status is not None and not status.is_success():
        return status
    return None
