"""DefaultPreemption: when no node fits, evict lower-priority pods somewhere to make room.

Port of upstream ``defaultpreemption/default_preemption.go``. The plugin supplies the policy
(:class:`schedframe.preemption.Interface`) and the library's
:class:`~schedframe.preemption.Evaluator` does the search, the choice and the evictions:

* a pod may preempt unless its ``preemptionPolicy`` is ``Never`` or a victim of its earlier
  preemption is still terminating on its nominated node;
* on a node, every lower-priority pod is removed; if the preemptor then fits, victims are
  reprieved one by one, most important first, PDB-violating ones before the others, so as few
  and as unimportant pods as possible are evicted;
* the dry run looks for ``max(N * minCandidateNodesPercentage / 100,
  minCandidateNodesAbsolute)`` candidates (at most N), from a random offset drawn from the
  scheduler's seeded ``rng``.

When a Filter declaring a resource bound (:class:`~schedframe.framework.batch.ResourceBound`:
NodeResourcesFit) filters the preemptor, the dry run skips work whose outcome that Filter
already decides (:meth:`DefaultPreemption.prepare_dry_run`): nodes where the preemptor would
not fit even with every lower-priority pod gone are passed over, and a reprieved pod after
which it no longer fits stays a victim without a Filter run. When every other Filter running
for the preemptor declares that it reads the node only (``filter_reads_node_pods = False``),
there are no AddPod/RemovePod extensions in play and the pod asks for plain resources, the
victims are worked out by arithmetic on the snapshot, without copying the node. The
candidates, and so the nomination and the victims, are those of the full dry run.

Victims are evicted asynchronously, as upstream with ``SchedulerAsyncPreemption`` (on by
default): the Evaluator evicts them off the scheduling cycle, and this plugin's PreEnqueue
keeps the preemptor out of the activeQ and the backoffQ until they are gone
(``UnschedulableAndUnresolvable``: "waiting for the preemption for this pod to be finished").
It registers ``Pod/Delete`` with a hint that always answers QueueSkip, so a victim's deletion
re-runs the gate but the requeue itself is left to the plugins that rejected the pod. With
``async_preemption=False`` the victims are evicted within PostFilter, PreEnqueue admits
every pod and no event is registered (upstream with the gate off).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar, Final, NamedTuple, cast

import attrs

from schedframe import errors, preemption
from schedframe import framework as fw
from schedframe.framework.batch import NodeOnlyFilter, ResourceBound, declares
from schedframe.objects import Pod
from schedframe_plugins import names
from schedframe_plugins.defaultpreemption import _fit_bound

if TYPE_CHECKING:
    from schedframe.objects import PodDisruptionBudget

__all__ = [
    "MSG_NO_VICTIMS",
    "MSG_PREEMPTION_POLICY_NEVER",
    "MSG_TERMINATING_POD_ON_NOMINATED_NODE",
    "MSG_WAITING_FOR_PREEMPTION",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "IsEligiblePodFunc",
    "MoreImportantPodFunc",
    "pod_terminating_by_preemption",
]

NAME: Final = names.DEFAULT_PREEMPTION

#: Why a pod with ``preemptionPolicy: Never`` does not preempt.
MSG_PREEMPTION_POLICY_NEVER: Final = "not eligible due to preemptionPolicy=Never."
#: Why a pod whose earlier victims are still terminating does not preempt again.
MSG_TERMINATING_POD_ON_NOMINATED_NODE: Final = (
    "not eligible due to a terminating pod on the nominated node."
)
#: The status of a node without lower-priority pods.
MSG_NO_VICTIMS: Final = "No preemption victims found for incoming pod"
#: PreEnqueue's reason while the pod's victims are being evicted.
MSG_WAITING_FOR_PREEMPTION: Final = "waiting for the preemption for this pod to be finished"

_PREEMPT_NEVER: Final = "Never"

#: ``is_eligible_pod(node_info, victim, preemptor)``: may ``victim`` be preempted by
#: ``preemptor``, on top of having a lower priority?
IsEligiblePodFunc = Callable[[fw.NodeInfo, fw.PodInfo, Pod], bool]
#: ``more_important_pod(pod1, pod2)``: is ``pod1`` more important (reprieved first)?
MoreImportantPodFunc = Callable[[Pod, Pod], bool]
# A Filter plugin's ``filter``.
NodeFilter = Callable[[fw.CycleState, Pod, fw.NodeInfo], "fw.Status | None"]


@attrs.frozen(kw_only=True)
class DefaultPreemptionArgs:
    """Args of DefaultPreemption (upstream ``DefaultPreemptionArgs``).

    Attributes:
        min_candidate_nodes_percentage: the share of the potential nodes, in percent, the dry
            run tries to find candidates on.
        min_candidate_nodes_absolute: the least number of candidates to look for.
    """

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    def validate(self) -> list[errors.FieldIssue]:
        """Upstream ``ValidateDefaultPreemptionArgs``; paths relative to the args."""
        issues: list[errors.FieldIssue] = []
        pct, absolute = self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        pct_path, abs_path = "minCandidateNodesPercentage", "minCandidateNodesAbsolute"
        if pct < 0 or pct > 100:
            issues.append(
                errors.FieldIssue(
                    path=pct_path,
                    kind=errors.INVALID,
                    value=pct,
                    detail="not in valid range [0, 100]",
                )
            )
        if absolute < 0:
            issues.append(
                errors.FieldIssue(
                    path=abs_path,
                    kind=errors.INVALID,
                    value=absolute,
                    detail="not in valid range [0, inf)",
                )
            )
        if pct == 0 and absolute == 0:
            issues.append(
                errors.FieldIssue(
                    path=pct_path,
                    kind=errors.INVALID,
                    value=pct,
                    detail="cannot be zero at the same time as minCandidateNodesAbsolute",
                )
            )
            issues.append(
                errors.FieldIssue(
                    path=abs_path,
                    kind=errors.INVALID,
                    value=absolute,
                    detail="cannot be zero at the same time as minCandidateNodesPercentage",
                )
            )
        return issues


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """True when ``pod`` is being deleted because the scheduler preempted it."""
    if pod.deletion_timestamp is None:
        return False
    for condition in pod.status.conditions:
        if condition.type == preemption.DISRUPTION_TARGET:
            return (
                condition.status == "True"
                and condition.reason == preemption.REASON_PREEMPTION_BY_SCHEDULER
            )
    return False


def _always_eligible(node_info: fw.NodeInfo, victim: fw.PodInfo, preemptor: Pod) -> bool:
    return True


class DefaultPreemption(fw.PostFilterPlugin, fw.PreEnqueuePlugin, fw.EnqueueExtensions):
    """Preempts lower-priority pods so that an unschedulable pod fits on some node.

    ``async_preemption`` (upstream's ``SchedulerAsyncPreemption`` gate, on by default) evicts
    the victims off the scheduling cycle and gates the preemptor in PreEnqueue meanwhile;
    ``None`` (the default) reads the gate from ``handle.features``.

    Attributes:
        evaluator: the library Evaluator doing the search and the evictions.
        is_eligible_pod: extra veto on victims (default: every lower-priority pod qualifies).
            Customisations should still let system pods preempt ordinary ones.
        more_important_pod: the order in which victims are reprieved (default: higher
            priority first, then the longer-running pod).
    """

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = DefaultPreemptionArgs

    def __init__(
        self,
        args: DefaultPreemptionArgs | None,
        handle: fw.Handle,
        *,
        async_preemption: bool | None = None,
    ) -> None:
        args = args if args is not None else DefaultPreemptionArgs()
        issues = args.validate()
        if issues:
            raise errors.ConfigError(issues)
        self.args = args
        self._handle = handle
        if async_preemption is None:
            async_preemption = handle.features.enabled("SchedulerAsyncPreemption")
        self.async_preemption = async_preemption
        self.evaluator = preemption.Evaluator(NAME, handle, self, async_preemption=async_preemption)
        self.is_eligible_pod: IsEligiblePodFunc = _always_eligible
        self.more_important_pod: MoreImportantPodFunc = self._more_important_pod
        # The bound default, when a subclass did not override it: victims are then sorted by
        # a key (same order) instead of by pairwise comparisons.
        self._default_more_important: MoreImportantPodFunc | None = (
            self.more_important_pod
            if type(self)._more_important_pod is DefaultPreemption._more_important_pod
            else None
        )
        self._remainders = _fit_bound.Remainders()
        # node name -> the last arithmetic victim selection on it (see _DryRun.victims_in_place)
        self._in_place: dict[str, _InPlace] = {}
        # node name -> the last sums of the pods nominated to it (see _DryRun._nominated_sums)
        self._nominated_kept: dict[str, _NominatedSums] = {}

    def _more_important_pod(self, pod1: Pod, pod2: Pod) -> bool:
        return preemption.more_important_pod(pod1, pod2, self.evaluator.now())

    # -- PreEnqueue and its events -------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> fw.Status | None:
        """Gate the pod while its victims are being evicted (upstream ``PreEnqueue``)."""
        if self.async_preemption and self.evaluator.is_pod_running_preemption(pod.uid):
            return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_WAITING_FOR_PREEMPTION)
        return None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """``Pod/Delete`` (a victim went), hinted QueueSkip; nothing without async preemption."""
        if not self.async_preemption:
            return ()
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.DELETE),
                self.is_pod_schedulable_after_pod_deletion,
            ),
        )

    def is_pod_schedulable_after_pod_deletion(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Always QueueSkip: the plugins whose rejection preemption resolves decide the
        requeue (upstream ``isPodSchedulableAfterPodDeletion``)."""
        return fw.QueueingHint.QUEUE_SKIP

    # -- PostFilter --------------------------------------------------------------------------

    def post_filter(
        self, state: fw.CycleState, pod: Pod, filtered_node_status_map: fw.NodeToStatus
    ) -> tuple[fw.PostFilterResult | None, fw.Status | None]:
        """Preempt for ``pod``; failure messages are prefixed with ``preemption: ``."""
        result, status = self.evaluator.preempt(state, pod, filtered_node_status_map)
        if status is not None:
            msg = status.message()
            if msg:
                return result, fw.Status(status.code, "preemption: " + msg)
        return result, status

    # -- preemption.Interface ----------------------------------------------------------------

    def calculate_num_candidates(self, num_nodes: int) -> int:
        """How many candidates the dry run should find among ``num_nodes`` potential nodes."""
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random offset in ``[0, num_nodes)`` from the scheduler's rng, and the count."""
        return self._handle.rng.randrange(num_nodes), self.calculate_num_candidates(num_nodes)

    def candidates_to_victims_map(
        self, candidates: Sequence[preemption.Candidate]
    ) -> dict[str, preemption.Victims]:
        """Node name -> victims (one candidate per node)."""
        return {c.name: c.victims for c in candidates}

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: fw.Status | None
    ) -> tuple[bool, str]:
        """Whether ``pod`` should preempt, and if not, why.

        Not with ``preemptionPolicy: Never``; not while a lower-priority pod preempted for it
        is still terminating on its nominated node, unless that node has become
        UnschedulableAndUnresolvable for it.
        """
        if pod.spec.preemption_policy == _PREEMPT_NEVER:
            return False, MSG_PREEMPTION_POLICY_NEVER
        nominated = pod.status.nominated_node_name
        if nominated:
            if (
                nominated_node_status is not None
                and nominated_node_status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            ):
                return True, ""
            try:
                node_info = self._handle.snapshot_shared_lister().node_infos.get(nominated)
            except KeyError:
                node_info = None
            if node_info is not None:
                for info in node_info.pods:
                    if self._is_preemption_allowed(
                        node_info, info, pod
                    ) and pod_terminating_by_preemption(info.pod):
                        return False, MSG_TERMINATING_POD_ON_NOMINATED_NODE
        return True, ""

    def select_victims_on_node(
        self,
        state: fw.CycleState,
        pod: Pod,
        node_info: fw.NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, fw.Status | None]:
        """The fewest, least important pods to evict from ``node_info`` for ``pod`` to fit.

        Every eligible lower-priority pod is removed (through the PreFilter extensions too);
        if the pod still does not fit, the node cannot help. Otherwise the removed pods are
        added back one at a time, most important first, PDB-violating ones before the rest,
        and each one that makes the pod unfit again becomes a victim.
        """
        return self._select_victims(state, pod, node_info, pdbs, None)

    def _select_victims(
        self,
        state: fw.CycleState,
        pod: Pod,
        node_info: fw.NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
        fit_request: _fit_bound.FitRequest | None,
    ) -> tuple[list[Pod], int, fw.Status | None]:
        # select_victims_on_node. With ``fit_request`` (NodeResourcesFit filters this cycle
        # and reads that request), a reprieve after which that Filter certainly rejects the
        # node leaves the pod a victim without running the filters: their verdict is known.
        handle = self._handle
        if self._only_priority_decides():
            priority = pod.priority
            potential = [info for info in node_info.pods if info.pod.priority < priority]
        else:
            allowed = self._is_preemption_allowed
            potential = [info for info in node_info.pods if allowed(node_info, info, pod)]
        if not potential:
            return [], 0, fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NO_VICTIMS)

        add_extension = handle.run_pre_filter_extension_add_pod
        for info in potential:
            status = _remove(handle, state, pod, info, node_info)
            if status is not None:
                return [], 0, status

        # Without pods nominated to the node, filtering "with nominated pods" is plain
        # filtering; the nominations do not change during the dry run.
        node = node_info.node
        if node and node.metadata.name in handle.nominator.nominated_node_names():
            run_filters = handle.run_filter_plugins_with_nominated_pods
        else:
            run_filters = handle.run_filter_plugins

        # Affinity of the preemptor to a victim is not considered: it would not fit here.
        status = run_filters(state, pod, node_info)
        if status is not None and not status.is_success():
            return [], 0, status

        potential = self._by_importance(potential)
        violating, non_violating = _split_by_pdbs(potential, pdbs)

        # Reprieve: put each pod back; the ones after which the pod no longer fits are victims.
        victims: list[fw.PodInfo] = []
        num_violating = 0
        for group, counts_violation in ((violating, True), (non_violating, False)):
            for info in group:
                node_info.add_pod(info)
                status = add_extension(state, pod, info, node_info)
                if status is not None and not status.is_success():
                    return [], 0, _as_error(status)
                if fit_request is None or not _fit_bound.node_exceeds(fit_request, node_info):
                    fit = run_filters(state, pod, node_info)
                    if fit is None or fit.is_success():
                        continue
                status = _remove(handle, state, pod, info, node_info)
                if status is not None:
                    return [], 0, status
                victims.append(info)
                if counts_violation:
                    num_violating += 1

        if violating and non_violating:
            victims = self._by_importance(victims)
        return [info.pod for info in victims], num_violating, None

    def prepare_dry_run(
        self, state: fw.CycleState, pod: Pod, m: fw.NodeToStatus
    ) -> preemption.DryRun | None:
        """Shortcuts for the Evaluator's dry run when NodeResourcesFit filters ``pod``
        (see :class:`schedframe.preemption.DryRun`).

        A node is passed over when it has no lower-priority pod, or when NodeResourcesFit's
        Filter rejects it with all of them gone, with or without the pods nominated to it that
        the filters would count; and during the reprieve, a victim put back after which that
        Filter rejects the node stays a victim without a Filter run. ``None`` (no shortcuts)
        when the victim selection or eligibility was customised, or NodeResourcesFit does not
        filter in this cycle.
        """
        select = getattr(self.select_victims_on_node, "__func__", None)
        if select is not DefaultPreemption.select_victims_on_node:
            return None
        if not self._only_priority_decides():
            return None
        found = self._resource_bound(state)
        if found is None:
            return None  # no resource-bound Filter (NodeResourcesFit) runs in this cycle
        bound, (request, plain) = found
        node_only = self._node_only_filters(state, bound) if plain else None
        return _DryRun(self, pod, request, node_only)

    def _resource_bound(
        self, state: fw.CycleState
    ) -> tuple[fw.FilterPlugin, tuple[_fit_bound.FitRequest, bool]] | None:
        """The first Filter plugin running this cycle that declares
        :class:`~schedframe.framework.batch.ResourceBound` and bounds the pod, with its bound."""
        for plugin in self._handle.cycle_filter_plugins(state):
            if declares(plugin, ResourceBound):
                found = cast("ResourceBound", plugin).resource_bound(state)
                if found is not None:
                    return plugin, found
        return None

    def _node_only_filters(
        self, state: fw.CycleState, fit: fw.FilterPlugin
    ) -> tuple[NodeFilter, ...] | None:
        """The ``filter`` of every Filter plugin but ``fit`` running this cycle, when each
        of them reads the node only and no AddPod/RemovePod extension runs: victims can then
        be chosen by arithmetic. ``None`` otherwise."""
        handle = self._handle
        if handle.cycle_has_pre_filter_extensions(state):
            return None
        others: list[NodeFilter] = []
        for plugin in handle.cycle_filter_plugins(state):
            if plugin is fit:
                continue
            if not (
                declares(plugin, NodeOnlyFilter)
                and cast("NodeOnlyFilter", plugin).filter_reads_node_pods is False
            ):
                return None
            others.append(plugin.filter)
        return tuple(others)

    def _only_priority_decides(self) -> bool:
        """Whether every lower-priority pod may be a victim (no extra eligibility veto)."""
        return (
            self.is_eligible_pod is _always_eligible
            and type(self)._is_preemption_allowed is DefaultPreemption._is_preemption_allowed
        )

    def _by_importance(self, infos: list[fw.PodInfo]) -> list[fw.PodInfo]:
        """``infos`` most important first (by the key while the order is the default one)."""
        order = self._importance_order()
        if order is not None:
            return sorted(infos, key=lambda info: order(info.pod))
        more_important = self.more_important_pod
        return preemption.sort_by_importance(infos, lambda a, b: more_important(a.pod, b.pod))

    def _importance_order(
        self, now: datetime | None = None
    ) -> Callable[[Pod], tuple[int, int]] | None:
        """A sort key equal to :attr:`more_important_pod` while it is the default one; ``None``
        after it was replaced (the predicate is then used pairwise). ``now`` defaults to the
        evaluator's clock."""
        if self.more_important_pod != self._default_more_important:
            return None
        return preemption.importance_key(self.evaluator.now() if now is None else now)

    def ordered_score_funcs(
        self, nodes_to_victims: Mapping[str, preemption.Victims]
    ) -> list[preemption.ScoreFunc] | None:
        """None: the library's default criteria pick the node."""
        return None

    def _is_preemption_allowed(
        self, node_info: fw.NodeInfo, victim: fw.PodInfo, preemptor: Pod
    ) -> bool:
        return victim.pod.priority < preemptor.priority and self.is_eligible_pod(
            node_info, victim, preemptor
        )


class _DryRun:
    """DefaultPreemption's dry-run shortcuts for one preemptor (see ``prepare_dry_run``)."""

    __slots__ = (
        "_added",
        "_by_node",
        "_memo",
        "_node_only",
        "_nominated",
        "_nominated_kept",
        "_generations",
        "_now",
        "_nominator",
        "_order",
        "_plugin",
        "_priority",
        "_remainder_of",
        "_request",
        "_uid",
    )

    def __init__(
        self,
        plugin: DefaultPreemption,
        pod: Pod,
        request: _fit_bound.FitRequest,
        node_only: tuple[NodeFilter, ...] | None,
    ) -> None:
        self._plugin = plugin
        self._request = request
        self._priority = pod.priority
        self._uid = pod.uid
        self._nominator = plugin._handle.nominator
        # Nominations do not change during the dry run.
        self._nominated = self._nominator.nominated_node_names()
        self._generations: dict[str, int] = {}
        self._added: dict[str, tuple[int, int, int, int] | None] = {}
        self._by_node: dict[str, list[fw.PodInfo]] | None = None
        self._remainder_of = plugin._remainders.of
        self._node_only = node_only
        self._now = plugin.evaluator.now()
        self._order = plugin._importance_order(self._now) if node_only is not None else None
        self._memo = plugin._in_place
        self._nominated_kept = plugin._nominated_kept

    def _nominated_sums(self, node_name: str) -> tuple[int, int, int, int] | None:
        """``(count, cpu, memory, storage)`` of the pods nominated to ``node_name`` that the
        filters count for this preemptor (priority at least its own, not itself), read and
        kept for the dry run; ``None`` when there are none.

        The sums are also kept across dry runs, per node, with the node's nominated generation
        (``nominated_generations``) they were taken at: while it stays the same the node's
        nominated pods did not change, so a later preemptor of the same priority reuses them
        unless it is one of the pods counted.
        """
        added = self._added
        by_node = self._by_node
        if by_node is None:  # every nominated node's pods at once: one read of the queue
            # The generations first: a change in between only makes the kept sums miss later.
            self._generations = self._nominator.nominated_generations(self._nominated)
            by_node = self._by_node = self._nominator.nominated_pods_for_nodes(self._nominated)
        infos = by_node.get(node_name)
        generation = self._generations.get(node_name)
        if infos is None:  # not read in bulk: nothing kept for it
            infos = self._nominator.nominated_pods_for_node(node_name)
            generation = None
        priority = self._priority
        uid = self._uid
        kept = self._nominated_kept.get(node_name)
        if (
            kept is not None
            and generation is not None
            and kept.generation == generation
            and kept.priority == priority
            and uid not in kept.uids
        ):
            sums = kept.sums
        else:
            sums, uids = _sums_at_or_above(infos, priority)
            if uid in uids:  # the preemptor is nominated here: it does not count for itself
                sums, _ = _sums_at_or_above([i for i in infos if i.pod.uid != uid], priority)
            elif generation is not None:
                self._nominated_kept[node_name] = _NominatedSums(generation, priority, uids, sums)
        added[node_name] = sums
        return sums

    def _room(self, node_info: fw.NodeInfo) -> tuple[int, int, int, int, int]:
        """``(lower-priority pods, pods, cpu, memory, storage)`` the filters see on the node
        with every lower-priority pod gone: what stays, plus the nominated pods they count
        (filtering runs with those first; it passes without them if it passes with them, the
        sums only growing)."""
        lower, count, cpu, memory, storage = self._remainder_of(node_info, self._priority)
        name = node_info.name  # "" for a node gone, never nominated to
        if name not in self._nominated:
            return lower, count, cpu, memory, storage
        added = self._added
        sums = added[name] if name in added else self._nominated_sums(name)
        if sums is not None:
            count += sums[0]
            cpu += sums[1]
            memory += sums[2]
            storage += sums[3]
        return lower, count, cpu, memory, storage

    def cannot_help(self, node_info: fw.NodeInfo) -> bool:
        lower, count, cpu, memory, storage = self._room(node_info)
        # No victims (unresolvable), or NodeResourcesFit rejects the node even without them.
        return not lower or _fit_bound.exceeds(
            self._request, node_info.allocatable, count, cpu, memory, storage
        )

    def select_victims_on_node(
        self,
        state: fw.CycleState,
        pod: Pod,
        node_info: fw.NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, fw.Status | None]:
        return self._plugin._select_victims(state, pod, node_info, pdbs, self._request)

    def victims_in_place(
        self,
        state: fw.CycleState,
        pod: Pod,
        node_info: fw.NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, fw.Status | None] | None:
        """``select_victims_on_node``'s answer, worked out from sums without copying or
        changing ``node_info`` (the snapshot's): every other Filter running this cycle looks
        at the node only, so its verdict stays what it is now however many pods go, and
        NodeResourcesFit's verdict is arithmetic on the plain resources. ``None`` when the
        node has to take the copying path (those filters reject it, or the preemptor would
        not fit with every lower-priority pod gone: the status then comes from a real run).
        """
        node_only = self._node_only
        order = self._order
        node = node_info.node
        if node_only is None or order is None or node is None:
            return None
        try:
            for filter_fn in node_only:
                status = filter_fn(state, pod, node_info)
                if status is not None and not status.is_success():
                    return None
        except Exception:
            return None
        room = self._room(node_info)
        lower, count, cpu, memory, storage = room
        request = self._request
        allocatable = node_info.allocatable
        exceeds = _fit_bound.exceeds
        if not lower or exceeds(request, allocatable, count, cpu, memory, storage):
            return None
        # The selection below depends on nothing else than these (the node's pods and
        # allocatable through its generation; the clock only for pods not started yet).
        priority = self._priority
        inputs = (node_info.generation, priority, request, room, tuple(pdbs))
        memo = self._memo.get(node.metadata.name)
        if (
            memo is not None
            and memo.inputs == inputs
            and (memo.now is None or memo.now == self._now)
        ):
            return list(memo.victims), memo.num_violating, None
        potential = [info for info in node_info.pods if info.pod.priority < priority]
        potential.sort(key=lambda info: order(info.pod))
        violating, non_violating = _split_by_pdbs(potential, pdbs)
        victims: list[fw.PodInfo] = []
        num_violating = 0
        for group, counts_violation in ((violating, True), (non_violating, False)):
            for info in group:
                r = info.pod.requests
                with_it = (
                    count + 1,
                    cpu + r.get(_fit_bound.CPU, 0),
                    memory + r.get(_fit_bound.MEMORY, 0),
                    storage + r.get(_fit_bound.EPHEMERAL_STORAGE, 0),
                )
                if exceeds(request, allocatable, *with_it):
                    victims.append(info)
                    if counts_violation:
                        num_violating += 1
                else:  # reprieved: it stays on the node
                    count, cpu, memory, storage = with_it
        if violating and non_violating:
            victims.sort(key=lambda info: order(info.pod))
        pods = [info.pod for info in victims]
        # The clock orders a pod not started yet (it counts as started now) against started
        # ones only: with none started, or all, the answer holds at any time (real mode's
        # clock moves on between preemptors; the in-memory backend never starts a pod).
        started = sum(1 for info in potential if info.pod.status.start_time is not None)
        now = self._now if 0 < started < len(potential) else None
        self._memo[node.metadata.name] = _InPlace(inputs, now, tuple(pods), num_violating)
        return pods, num_violating, None


def _sums_at_or_above(
    infos: Sequence[fw.PodInfo], priority: int
) -> tuple[tuple[int, int, int, int] | None, frozenset[str]]:
    """``(count, cpu, memory, storage)`` of the pods in ``infos`` of ``priority`` or more
    (``None`` when there are none), and their uids."""
    count = cpu = memory = storage = 0
    uids: list[str] = []
    for info in infos:
        other = info.pod
        if other.priority >= priority:
            count += 1
            uids.append(other.uid)
            r = other.requests
            cpu += r.get(_fit_bound.CPU, 0)
            memory += r.get(_fit_bound.MEMORY, 0)
            storage += r.get(_fit_bound.EPHEMERAL_STORAGE, 0)
    return ((count, cpu, memory, storage) if count else None), frozenset(uids)


class _NominatedSums(NamedTuple):
    """The sums of the pods nominated to one node that a preemptor of ``priority`` counts."""

    generation: int  # the node's nominated generation they were taken at
    priority: int
    uids: frozenset[str]  # the pods counted: a preemptor among them needs its own sums
    sums: tuple[int, int, int, int] | None


class _InPlace(NamedTuple):
    """One arithmetic victim selection: what it was computed from, and its answer."""

    inputs: tuple[object, ...]
    now: datetime | None  # the clock, when a pod not started yet made the order depend on it
    victims: tuple[Pod, ...]
    num_violating: int


def _remove(
    handle: fw.Handle, state: fw.CycleState, pod: Pod, info: fw.PodInfo, node_info: fw.NodeInfo
) -> fw.Status | None:
    """Take ``info`` off the node and through the RemovePod extensions; a failure's status."""
    try:
        node_info.remove_pod(info.pod)
    except KeyError as exc:
        return fw.Status.from_error(exc)
    status = handle.run_pre_filter_extension_remove_pod(state, pod, info, node_info)
    if status is not None and not status.is_success():
        return _as_error(status)
    return None


def _split_by_pdbs(
    pods: list[fw.PodInfo], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[fw.PodInfo], list[fw.PodInfo]]:
    """``(the pods whose eviction would violate a PDB, the others)``, each in ``pods``'s order."""
    if not pdbs:
        return [], pods
    return preemption.filter_pods_with_pdb_violation(pods, pdbs)


def _as_error(status: fw.Status | None) -> fw.Status | None:
    """A failed PreFilter extension as an Error status carrying its message (upstream
    ``AsStatus(status.AsError())``)."""
    if status is None or status.is_success():
        return None
    return fw.Status(fw.Code.ERROR, status.message(), error=status.error)
