"""The Evaluator: find nodes where evicting lower-priority pods makes room, pick one, evict.

Upstream: ``Evaluator`` in ``pkg/scheduler/framework/preemption/preemption.go`` and
``executor.go`` (``Preempt``, ``findCandidates``, ``DryRunPreemption``, ``SelectCandidate``,
``prepareCandidate``, ``PreemptPod``).

Documented divergences, none of them observable in what ends up in the cluster on our backends:

* **Asynchronous evictions** (``async_preemption=True``, upstream's
  ``SchedulerAsyncPreemption``, on by default since v1.33): the victims are evicted by a task
  the handle runs off the scheduling cycle (``handle.run_async``: the scheduler's workers, or,
  in deterministic mode, right after the current cycle); meanwhile
  :meth:`Evaluator.is_pod_running_preemption` is true for the preemptor, which
  DefaultPreemption's PreEnqueue turns into a gate. A handle without ``run_async`` runs the
  task at once. With ``async_preemption=False`` the victims are evicted before
  :meth:`Evaluator.preempt` returns (upstream with the gate off).
* **Serial dry run.** Candidates are searched node by node, as upstream does with
  ``parallelism: 1``; the search stops as soon as enough candidates are found. With a
  plugin's :class:`~schedframe.preemption.DryRun` shortcuts (DefaultPreemption: nodes where
  the preemptor would still not fit NodeResourcesFit's pod count, cpu, memory or ephemeral
  storage with every lower-priority pod gone, and reprieves after which it certainly does
  not fit), nodes that cannot become candidates are passed over and Filter runs whose
  verdict is known are skipped. The candidates are the same; Filter plugins are called
  fewer times (upstream's count varies too, with its parallel search stopping early), and
  when candidates are found the returned statuses leave the passed-over nodes out.
* **No re-read of the preemptor.** Upstream first re-reads the preemptor from the informer;
  the Handle has no pod lister, so the pod handed to PostFilter is used.
* **Extender candidates in node-name order.** After ``ProcessPreemption`` upstream rebuilds
  the candidate list from a map (random order); here it is sorted by node name.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final, cast

from schedframe.errors import BackendError
from schedframe.framework import (
    Code,
    CycleState,
    Diagnosis,
    FitError,
    Handle,
    NodeInfo,
    NodeToStatus,
    NominatingInfo,
    NominatingMode,
    PostFilterResult,
    Status,
)
from schedframe.framework.batch import DryRunPreparer, declares
from schedframe.objects import PodCondition
from schedframe.preemption._types import (
    CHOSEN_CANDIDATE_KEY,
    Candidate,
    DryRun,
    Interface,
    PreemptionError,
    Victims,
    VictimsInPlace,
)
from schedframe.preemption._util import (
    get_lower_priority_nominated_pods,
    pick_one_node_for_preemption,
)

if TYPE_CHECKING:
    from schedframe.objects import Pod, PodDisruptionBudget

__all__ = [
    "DISRUPTION_TARGET",
    "MSG_NO_CANDIDATE",
    "MSG_NOT_HELPFUL",
    "REASON_PREEMPTION_BY_SCHEDULER",
    "Evaluator",
    "PreemptPodFunc",
]

log = logging.getLogger("schedframe.preemption")

#: The pod condition type set on victims before they are deleted.
DISRUPTION_TARGET: Final = "DisruptionTarget"
#: Its reason when the scheduler preempts (upstream ``v1.PodReasonPreemptionByScheduler``).
REASON_PREEMPTION_BY_SCHEDULER: Final = "PreemptionByScheduler"
#: The status of nodes preemption did not try (UnschedulableAndUnresolvable ones).
MSG_NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
#: Returned when selection yields no node.
MSG_NO_CANDIDATE: Final = "no candidate node for preemption"

#: ``preempt_pod(candidate, preemptor, victim, plugin_name)``: evicts one victim; raises on
#: failure; returns True when the victim was preempted in the scheduler's memory only (a
#: waiting pod), without a deletion (upstream's ``PreemptPod`` field, replaceable in tests).
PreemptPodFunc = Callable[[Candidate, "Pod", "Pod", str], "bool | None"]


class Evaluator:
    """Runs preemption for a PostFilter plugin (upstream ``preemption.Evaluator``).

    Args:
        plugin_name: the plugin on whose behalf victims are preempted (waiting victims are
            rejected in its name).
        handle: the plugin's Handle: snapshot, filters, binder, nominator, PDBs, clock, rng.
        interface: the plugin's policy (eligibility, victims per node, candidate count).
        async_preemption: evict the victims off the scheduling cycle (upstream's
            ``SchedulerAsyncPreemption`` gate, on by default); see
            :meth:`prepare_candidate_async`.

    Attributes:
        preempt_pod: evicts one victim; the default preempts a waiting (Permit) victim in
            memory (``WaitingPod.preempt``: it goes back to the backoffQ) or else deletes it
            through the binder after adding the ``DisruptionTarget`` condition, then records a
            ``Preempted`` event on it. Replace it to intercept evictions.
    """

    def __init__(
        self,
        plugin_name: str,
        handle: Handle,
        interface: Interface,
        *,
        async_preemption: bool = True,
    ) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.interface = interface
        self.async_preemption = async_preemption
        self.preempt_pod: PreemptPodFunc = self._preempt_pod
        self._mu = threading.Lock()
        # Preemptors whose victims are being evicted off the cycle (upstream ``preempting``).
        self._preempting: set[str] = set()
        # Preemptor uid -> (namespace, name) of its last victim, while that one is evicted.
        self._last_victim_pending: dict[str, tuple[str, str]] = {}

    def now(self) -> datetime:
        """The scheduler's clock as an aware datetime (start time of pods not started yet)."""
        return datetime.fromtimestamp(self.handle.clock.now(), tz=UTC)

    # -- the whole flow --------------------------------------------------------------------

    def preempt(
        self, state: CycleState, pod: Pod, m: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Try to make room for ``pod``; the PostFilter answer (upstream ``Preempt``).

        Returns:
            One of the following.

            * ``(None, Error)``: a transient failure; the nominated node is left as is.
            * ``(None, Unschedulable)``: the pod may not preempt now (e.g. its victims are
              still terminating); the nominated node is left as is.
            * ``(PostFilterResult(NominatingInfo("", OVERRIDE)), Unschedulable)``: preemption
              cannot help; the message is a FitError-style histogram of why, per node.
            * ``(PostFilterResult(NominatingInfo(node, OVERRIDE)), Success)``: victims on
              ``node`` were preempted; the chosen :class:`Candidate` is recorded in ``state``
              under :data:`CHOSEN_CANDIDATE_KEY`.
        """
        del state[CHOSEN_CANDIDATE_KEY]

        # 1) Is the pod allowed to preempt?
        nominated_status = m.get(pod.status.nominated_node_name)
        ok, msg = self.interface.pod_eligible_to_preempt_others(pod, nominated_status)
        if not ok:
            log.debug("pod %s is not eligible for preemption: %s", pod.key, msg)
            return None, Status(Code.UNSCHEDULABLE, msg)

        # 2) Find candidates.
        all_nodes = self.handle.snapshot_shared_lister().node_infos.list()
        candidates, node_statuses, err = self.find_candidates(state, all_nodes, pod, m)
        if err is not None and not candidates:
            return None, Status.from_error(err)

        if not candidates:
            log.debug("no preemption candidate for pod %s", pod.key)
            statuses = node_statuses if node_statuses is not None else NodeToStatus()
            statuses.absent_nodes_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NOT_HELPFUL
            )
            fit = FitError(pod, len(all_nodes), Diagnosis(node_to_status=statuses))
            # Clear a nomination left from an earlier attempt, as upstream does.
            return (
                PostFilterResult(NominatingInfo("", NominatingMode.OVERRIDE)),
                Status(Code.UNSCHEDULABLE, fit.message()),
            )

        # 3) The extenders that support preemption may drop candidates or change victims.
        candidates, status = self.call_extenders(pod, candidates)
        if status is not None:
            return None, status

        # 4) Pick the best candidate.
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, MSG_NO_CANDIDATE)
        log.debug("preemption target for pod %s is node %s", pod.key, best.name)

        # 5) Evict the victims and clear lower-priority nominations on the node.
        if self.async_preemption:
            self.prepare_candidate_async(best, pod, self.plugin_name)
        else:
            status = self.prepare_candidate(best, pod, self.plugin_name)
            if status is not None and not status.is_success():
                return None, status

        state[CHOSEN_CANDIDATE_KEY] = best
        return (
            PostFilterResult(NominatingInfo(best.name, NominatingMode.OVERRIDE)),
            Status(Code.SUCCESS),
        )

    def call_extenders(
        self, pod: Pod, candidates: list[Candidate]
    ) -> tuple[list[Candidate], Status | None]:
        """Upstream ``callExtenders``: pass the candidates through the scheduler's extenders
        (``ProcessPreemption``); the error Status of a failing non-ignorable one."""
        extenders = self.handle.extenders
        if not extenders:
            return candidates, None
        from schedframe.extender import call_extenders

        lister = self.handle.snapshot_shared_lister().node_infos
        victims = {c.name: (c.victims.pods, c.victims.num_pdb_violations) for c in candidates}
        infos = {name: lister.get(name) for name in victims}
        kept, status = call_extenders(extenders, pod, victims, infos)
        if status is not None:
            return [], status
        # Upstream rebuilds the list from a map; node name order keeps runs reproducible.
        return [
            Candidate(name=name, victims=Victims(pods=pods, num_pdb_violations=violations))
            for name, (pods, violations) in sorted(kept.items())
        ], None

    # -- candidates ------------------------------------------------------------------------

    def find_candidates(
        self, state: CycleState, all_nodes: Sequence[NodeInfo], pod: Pod, m: NodeToStatus
    ) -> tuple[list[Candidate], NodeToStatus | None, Exception | None]:
        """Dry-run preemption on the nodes whose filter verdict was ``Unschedulable``.

        Nodes marked UnschedulableAndUnresolvable (or absent from ``m``, which reads as such)
        are not tried: evicting pods cannot help there.

        When the interface offers shortcuts (a :class:`~schedframe.preemption.DryRun`), nodes
        they rule out are passed over without a dry run. The candidates are the same; the
        statuses and errors returned alongside them then cover only the nodes dry-run. If no
        candidate is found, every node is dry-run again without shortcuts, so the statuses and
        errors explaining why are complete and in node order.
        """
        if not all_nodes:
            return [], None, PreemptionError(["no nodes available"])
        unschedulable = Code.UNSCHEDULABLE
        potential = m.node_infos_with_code(unschedulable, all_nodes)
        if not potential:
            log.debug("preemption will not help schedule pod %s on any node", pod.key)
            return [], NodeToStatus(), None
        pdbs = list(self.handle.pod_disruption_budgets())
        offset, num_candidates = self.interface.get_offset_and_num_candidates(len(potential))
        plan: DryRun | None = (
            cast("DryRunPreparer", self.interface).prepare_dry_run(state, pod, m)
            if self.handle.fast_paths and declares(self.interface, DryRunPreparer)
            else None
        )
        if plan is not None:
            found = self._dry_run(state, pod, potential, pdbs, offset, num_candidates, plan)
            if found[0]:
                return found
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], NodeToStatus, Exception | None]:
        """Simulate preemption on ``potential_nodes``, starting at ``offset`` and wrapping.

        Each node is tried on copies of its NodeInfo and of ``state``. The search stops once at
        least one non-violating candidate is found and the two kinds together number
        ``num_candidates``; each kind keeps at most ``num_candidates``. Candidates that violate
        no PDB come first. Nodes that cannot help get their status in the returned map;
        ``Error`` statuses are also aggregated into the returned exception.
        """
        return self._dry_run(state, pod, potential_nodes, pdbs, offset, num_candidates, None)

    def _dry_run(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
        plan: DryRun | None,
    ) -> tuple[list[Candidate], NodeToStatus, Exception | None]:
        # dry_run_preemption; nodes the plan rules out are skipped (they would not have
        # become candidates, so the candidates and the stopping point are unchanged).
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses = NodeToStatus()
        errors: list[str] = []
        select_victims = (plan or self.interface).select_victims_on_node
        cannot_help = plan.cannot_help if plan is not None else None
        in_place = (
            cast("VictimsInPlace", plan).victims_in_place
            if plan is not None and declares(plan, VictimsInPlace)
            else None
        )
        n = len(potential_nodes)
        for i in range(n):
            node_info = potential_nodes[(offset + i) % n]
            if cannot_help is not None and cannot_help(node_info):
                continue
            name = node_info.name
            found = in_place(state, pod, node_info, pdbs) if in_place is not None else None
            if found is None:
                found = select_victims(state.clone(), pod, node_info.clone(), pdbs)
            pods, num_violations, status = found
            succeeded = status is None or status.is_success()
            if succeeded and pods:
                c = Candidate(name, Victims(pods, num_violations))
                target = non_violating if num_violations == 0 else violating
                if len(target) < num_candidates:
                    target.append(c)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if succeeded:
                status = Status(Code.ERROR, f'expected at least one victim pod on node "{name}"')
            assert status is not None
            if status.code is Code.ERROR:
                errors.append(status.message())
            statuses.set(name, status)
        err = PreemptionError(errors) if errors else None
        return non_violating + violating, statuses, err

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """The best candidate by the plugin's score functions or the default criteria."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        victims_map = self.interface.candidates_to_victims_map(candidates)
        score_funcs = self.interface.ordered_score_funcs(victims_map)
        node = pick_one_node_for_preemption(victims_map, score_funcs, self.now())
        victims = victims_map.get(node)
        if victims is not None:
            return Candidate(node, victims)
        log.error("no preemption candidate was selected among %d; using the first", len(candidates))
        return candidates[0]

    # -- acting on the choice --------------------------------------------------------------

    def prepare_candidate(self, c: Candidate, pod: Pod, plugin_name: str) -> Status | None:
        """Preempt every victim of ``c`` not already terminating, then clear the nominated
        node of lower-priority pods nominated to ``c.name`` (a failure there is only logged).

        Returns an ``Error`` status for the first victim that could not be preempted.
        """
        for victim in c.victims.pods:
            if victim.deletion_timestamp is not None:
                log.debug("victim %s is already being deleted", victim.key)
                continue
            try:
                self.preempt_pod(c, pod, victim, plugin_name)
            except Exception as exc:
                log.error("preempting %s for %s failed: %s", victim.key, pod.key, exc)
                return Status.from_error(exc)

        for nominated in get_lower_priority_nominated_pods(self.handle.nominator, pod, c.name):
            try:
                self.handle.binder.patch_pod_status(nominated, nominated_node_name="")
            except Exception as exc:
                log.error("cannot clear the nominatedNodeName of %s: %s", nominated.key, exc)
        return None

    def prepare_candidate_async(self, c: Candidate, pod: Pod, plugin_name: str) -> None:
        """Evict the victims of ``c`` off the scheduling cycle (upstream
        ``prepareCandidateAsync``).

        Victims already terminating are skipped; with none left nothing happens. Otherwise
        the preemptor is marked as preempting now, and a task (``handle.run_async``) clears
        the nominated node of lower-priority pods nominated to ``c.name``, evicts every victim
        but the last, then - if those all went - records the last one as pending and evicts
        it, and finally unmarks the preemptor. If any step failed, the preemptor is activated
        so it is not left in the unschedulable pool; so it is too when the last victim was
        preempted in memory (a waiting pod), which sends no deletion event.
        """
        victims = [v for v in c.victims.pods if v.deletion_timestamp is None]
        for skipped in c.victims.pods:
            if skipped.deletion_timestamp is not None:
                log.debug("victim %s is already being deleted", skipped.key)
        if not victims:
            return
        uid = pod.uid
        with self._mu:
            self._preempting.add(uid)

        def evict() -> None:
            failed = False
            try:
                for nominated in get_lower_priority_nominated_pods(
                    self.handle.nominator, pod, c.name
                ):
                    try:
                        self.handle.binder.patch_pod_status(nominated, nominated_node_name="")
                    except Exception as exc:
                        log.error(
                            "cannot clear the nominatedNodeName of %s: %s", nominated.key, exc
                        )
                        failed = True
                preempt_last = True
                for victim in victims[:-1]:
                    try:
                        self.preempt_pod(c, pod, victim, plugin_name)
                    except Exception as exc:
                        log.error(
                            "async preemption of %s for %s failed: %s", victim.key, pod.key, exc
                        )
                        failed = True
                        preempt_last = False
                        break
                if preempt_last:
                    last = victims[-1]
                    with self._mu:
                        self._last_victim_pending[uid] = (last.namespace, last.name)
                    try:
                        if self.preempt_pod(c, pod, last, plugin_name):
                            # Preempted in memory: no deletion event will requeue the preemptor.
                            failed = True
                    except Exception as exc:
                        log.error(
                            "async preemption of %s for %s failed: %s", last.key, pod.key, exc
                        )
                        failed = True
            finally:
                with self._mu:
                    self._preempting.discard(uid)
                    self._last_victim_pending.pop(uid, None)
            if failed:
                # The preemptor might otherwise wait in the pool for an event that never comes.
                self.handle.activate([pod])

        run_async: Callable[[Callable[[], None]], None] | None = getattr(
            self.handle, "run_async", None
        )
        if run_async is None:
            evict()
        else:
            run_async(evict)

    def is_pod_running_preemption(self, uid: str) -> bool:
        """Whether the pod's victims are still being evicted (upstream
        ``IsPodRunningPreemption``).

        Once only the last victim is left, its eviction counts as done as soon as the pod
        lister (``handle.get_pod``) shows it gone or terminating, so a deletion event that
        reaches the queue before the task finishes does not find the preemptor still gated. A
        handle without a pod lister reports the last victim as gone.
        """
        with self._mu:
            if uid not in self._preempting:
                return False
            pending = self._last_victim_pending.get(uid)
        if pending is None:
            return True
        get_pod: Callable[[str, str], Pod | None] | None = getattr(self.handle, "get_pod", None)
        victim = get_pod(*pending) if get_pod is not None else None
        return victim is not None and victim.deletion_timestamp is None

    def _preempt_pod(self, c: Candidate, preemptor: Pod, victim: Pod, plugin_name: str) -> bool:
        waiting = self.handle.get_waiting_pod(victim.uid)
        in_memory = waiting is not None and waiting.preempt(plugin_name, "preempted")
        note = f"Preempted by pod {preemptor.uid} on node {c.name}"
        if in_memory:
            log.debug("preemptor %s preempted waiting pod %s", preemptor.key, victim.key)
            note += " (in kube-scheduler memory)."
        else:
            condition = PodCondition(
                type=DISRUPTION_TARGET,
                status="True",
                reason=REASON_PREEMPTION_BY_SCHEDULER,
                message=(
                    f"{preemptor.spec.scheduler_name}: "
                    "preempting to accommodate a higher priority pod"
                ),
            )
            try:
                self.handle.binder.delete_pod(victim, condition=condition)
            except BackendError as exc:
                if exc.code != 404:
                    raise
                log.debug("victim %s is already deleted", victim.key)
                return False
        self.handle.event_recorder.eventf(
            victim, preemptor, "Normal", "Preempted", "Preempting", note
        )
        return in_memory
