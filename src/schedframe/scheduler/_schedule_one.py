"""One pod through the scheduler: the algorithm, the scheduling cycle and the binding cycle.

Upstream: ``pkg/scheduler/schedule_one.go``. The scheduling cycle is serial, as upstream: pop
a pod, pick its profile, snapshot the cache, run PreFilter/Filter/PostFilter/PreScore/Score,
select a host, assume the pod there, Reserve and Permit. The binding cycle (WaitOnPermit,
PreBind, Bind, PostBind) runs afterwards, concurrently with the next scheduling cycles in real
mode and as an ordered task in deterministic mode (see :class:`~schedframe.scheduler.Scheduler`).

Where upstream runs Filter over nodes in parallel and cancels once enough feasible nodes are
found, this port checks nodes one by one from ``next_start_node_index`` and stops at exactly
``num_feasible_nodes_to_find`` feasible nodes: the same set upstream finds when its workers
finish in order, and the same ``next_start_node_index`` rotation.

Over 1,000 lines on purpose: upstream keeps the scheduling cycle, the binding cycle, their
failure handling and the algorithm (``schedulePod``, ``findNodesThatFitPod``,
``prioritizeNodes``) in the one file ``schedule_one.go``, and this module follows it function
by function so the two read side by side; what upstream keeps apart (the batch engine,
opportunistic batching, the plugin-result guards) lives in modules of its own.
"""

from __future__ import annotations

import heapq
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from schedframe import framework as fw
from schedframe._evolve import evolve
from schedframe.extender import (
    ExtenderError,
    HTTPExtender,
    extender_scores,
    extenders_binding,
    find_nodes_that_pass_extenders,
)
from schedframe.framework import (
    Code,
    CycleState,
    Diagnosis,
    FitError,
    NodeInfo,
    NodeToStatus,
    NominatingInfo,
    NominatingMode,
    PodInfo,
    Status,
)
from schedframe.runtime._guard import SHUTDOWN
from schedframe.runtime._metrics import FilterTally
from schedframe.scheduler._batching import OpportunisticBatch, SortedScoredNodes

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from schedframe.cache import Snapshot
    from schedframe.objects import Pod
    from schedframe.runtime import Framework
    from schedframe.scheduler._scheduler import Scheduler

    IntArray = npt.NDArray[np.int64]
    RowArray = npt.NDArray[np.intp]

__all__ = [
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT",
    "Algorithm",
    "NoNodesAvailableError",
    "NodeScore",
    "ScheduleResult",
    "SchedulingStatusError",
    "add_plugin_status",
    "num_feasible_nodes_to_find",
    "select_host",
]

log = logging.getLogger("schedframe.scheduler")

#: At least this many nodes are checked for feasibility (when the cluster has them).
MIN_FEASIBLE_NODES_TO_FIND: Final = 100
#: The adaptive percentage never goes below this.
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: Final = 5
#: How many of the best scored nodes a result reports (upstream 1.2x-1.34 ``selectHost``).
NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT: Final = 3

#: Upstream ``clearNominatedNode``.
CLEAR_NOMINATED_NODE: Final = NominatingInfo("", NominatingMode.OVERRIDE)


class NoNodesAvailableError(Exception):
    """The cluster has no nodes (upstream ``ErrNoNodesAvailable``)."""

    def __init__(self) -> None:
        super().__init__("no nodes available to schedule pods")


class SchedulingStatusError(Exception):
    """A scheduling attempt failed with an error status (plugin error, cache error...)."""

    def __init__(self, status: Status, *, feasible_nodes: Sequence[NodeInfo] = ()) -> None:
        self.status = status
        #: The nodes found feasible before a filter failed (they count in the rotation).
        self.feasible_nodes = feasible_nodes
        super().__init__(status.message())


@attrs.frozen
class NodeScore:
    """A node and its weighted total score."""

    name: str
    score: int


@attrs.frozen(kw_only=True)
class ScheduleResult:
    """What happened to one pod's latest scheduling attempt.

    The first four fields are upstream's ``ScheduleResult`` (``SuggestedHost``,
    ``EvaluatedNodes``, ``FeasibleNodes``, ``nominatingInfo``); the others record the outcome
    for the embedding program.

    Attributes:
        suggested_host: the node the algorithm picked (``""`` when none).
        evaluated_nodes: nodes filtered in the attempt (feasible + rejected).
        feasible_nodes: nodes that passed filtering.
        nominating_info: what PostFilter asked for the pod's nominated node.
        top_nodes: the best scored nodes, best first (at most three; empty when only one
            node was feasible, as it is then picked without scoring).
        pod: the pod (as assumed, when it was).
        profile: the profile's ``schedulerName``.
        outcome: ``"scheduled"`` (bound), ``"binding"`` (assumed, binding cycle under way,
            maybe waiting on Permit), ``"unschedulable"`` or ``"error"``.
        message: the FailedScheduling message for failures.
        plugins: the plugins that rejected the pod, sorted.
        attempts: scheduling attempts so far.
    """

    suggested_host: str = ""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    nominating_info: NominatingInfo | None = None
    top_nodes: tuple[NodeScore, ...] = ()
    pod: Pod | None = None
    profile: str = ""
    outcome: str = ""
    message: str = ""
    plugins: tuple[str, ...] = ()
    attempts: int = 0

    @property
    def node_name(self) -> str:
        """The node the pod is bound to, once ``outcome == "scheduled"``; ``""`` otherwise."""
        return self.suggested_host if self.outcome == "scheduled" else ""


# --------------------------------------------------------------------------------------------
# Small upstream helpers
# --------------------------------------------------------------------------------------------


def num_feasible_nodes_to_find(
    profile_percentage: int | None, global_percentage: int | None, num_all_nodes: int
) -> int:
    """How many feasible nodes to find before filtering stops (upstream ``numFeasibleNodesToFind``).

    Under 100 nodes, all of them. Otherwise the profile's ``percentageOfNodesToScore`` if set,
    else the global one; 0 means adaptive, ``50 - nodes/125`` percent but at least 5 percent;
    and never fewer than 100 nodes.
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if profile_percentage is not None:
        percentage = profile_percentage
    else:
        percentage = global_percentage or 0
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        if percentage < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            percentage = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num_nodes = num_all_nodes * percentage // 100
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return MIN_FEASIBLE_NODES_TO_FIND
    return num_nodes


def select_host(
    names: Sequence[str],
    totals: Sequence[int],
    rng: random.Random,
    count: int = NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT,
) -> tuple[str, list[NodeScore]]:
    """The best scored node, ties broken at random, and the ``count`` best nodes.

    Upstream picks uniformly among the nodes sharing the highest total (a heap keyed on
    ``(TotalScore, Randomizer)``); here one draw from the injected ``rng`` picks among them, in
    node order, so the pick is uniform and reproducible with a seed (no draw for a single best
    node). The report lists the pick first, then the next best ``(name, total)`` by total and,
    among equal totals, node order (upstream 1.2x-1.34 ``numberOfHighestScoredNodesToReport``).

    Raises:
        ValueError: no nodes were given (upstream: ``empty priorityList``).
    """
    if not names:
        raise ValueError("empty priorityList")
    best_total = max(totals)
    ties = [i for i, total in enumerate(totals) if total == best_total]
    pick = ties[rng.randrange(len(ties))] if len(ties) > 1 else ties[0]
    top = [pick]
    if count > 1:
        ranked = heapq.nlargest(count, range(len(totals)), key=totals.__getitem__)
        top.extend(i for i in ranked if i != pick)
    return names[pick], [NodeScore(names[i], totals[i]) for i in top[:count]]


def _select_row(totals: IntArray, rng: random.Random, count: int) -> tuple[int, list[int]]:
    """:func:`select_host` over a NumPy array of totals: the picked index and the reported ones
    (the same draws and the same answer as :func:`select_host` on ``totals.tolist()``)."""
    import numpy as np

    ties = np.flatnonzero(totals == totals.max())
    pick = int(ties[rng.randrange(len(ties))]) if len(ties) > 1 else int(ties[0])
    top = [pick]
    if count > 1:
        if len(ties) >= count:
            # The best `count` are tied: in node order, the first of them.
            ranked = ties[:count].tolist()
        else:
            # Stable sort on -total: equal totals keep node order, as heapq.nlargest does.
            ranked = np.argsort(-totals, kind="stable")[:count].tolist()
        top.extend(i for i in ranked if i != pick)
    return pick, top[:count]


def add_plugin_status(diagnosis: Diagnosis, status: Status) -> None:
    """Upstream ``Diagnosis.AddPluginStatus``: remember which plugin rejected or parked the pod."""
    if not status.plugin:
        return
    if status.is_rejected():
        diagnosis.unschedulable_plugins.add(status.plugin)
    if status.code is Code.PENDING:
        diagnosis.pending_plugins.add(status.plugin)


def record_event(
    fwk: Framework, pod: Pod, event_type: str, reason: str, action: str, note: str
) -> None:
    """Record an event about ``pod``; a failing recorder is logged, never raised."""
    try:
        fwk.event_recorder.eventf(pod, None, event_type, reason, action, note)
    except Exception as exc:
        log.warning("recording %s event for %s failed: %s", reason, pod.key, exc)


def _go_list(items: Sequence[str]) -> str:
    """How Go's ``%v`` prints a ``[]string``: ``[a b]``."""
    return "[" + " ".join(items) + "]"


# --------------------------------------------------------------------------------------------
# The algorithm (upstream schedulePod and friends)
# --------------------------------------------------------------------------------------------


@attrs.define
class _Found:
    """What filtering found: the feasible nodes, the diagnosis and how many nodes were
    evaluated; ``rows`` and ``columns`` when the batch path found them (rows of the feasible
    nodes in the snapshot's columns)."""

    feasible: list[NodeInfo]
    diagnosis: Diagnosis
    evaluated: int
    rows: RowArray | None = None
    columns: fw.NodeColumns | None = None
    #: The extenders already filtered ``feasible`` (the nominated node path).
    extended: bool = False
    #: Opportunistic batching: the node hinted ("" for none) and the pod's signature.
    hint: str = ""
    signature: bytes | None = None


class Algorithm:
    """``schedulePod``: find the feasible nodes, score them, pick one.

    Holds the state upstream keeps on the Scheduler for it: the snapshot, the rotating
    ``next_start_node_index`` and the global ``percentageOfNodesToScore``.

    Args:
        snapshot: the snapshot every profile's Handle reads.
        rng: the seeded random source for tie-breaking.
        percentage_of_nodes_to_score: the configuration's global value (0 = adaptive).
        update_snapshot: refreshes ``snapshot`` from the cache at the start of each attempt
            (``Cache.update_snapshot``); ``None`` uses the snapshot as it is (tests).
    """

    def __init__(
        self,
        snapshot: Snapshot,
        rng: random.Random,
        *,
        percentage_of_nodes_to_score: int | None = 0,
        update_snapshot: Callable[[Snapshot], object] | None = None,
        batch: bool = True,
    ) -> None:
        self.snapshot = snapshot
        self.rng = rng
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.update_snapshot = update_snapshot
        self.next_start_node_index = 0
        #: The configured HTTP extenders (upstream ``Scheduler.Extenders``).
        self.extenders: tuple[HTTPExtender, ...] = ()
        #: Filter and score over the snapshot's NumPy columns where plugins allow it (the
        #: batch path); ``False`` runs every node through the per-node path. Both give the
        #: same placements, the same rotation and the same messages.
        self.batch = batch
        #: Opportunistic batching (:mod:`schedframe.scheduler._batching`): the scheduling
        #: cycle's number (upstream ``CurrentCycle``), the clock, and one batch per profile.
        self.current_cycle: Callable[[], int] = lambda: 0
        self.now: Callable[[], float] = time.monotonic
        self.batches: dict[str, OpportunisticBatch] = {}
        self._order_rng: random.Random | None = None

    def num_feasible_nodes_to_find(self, profile_percentage: int | None, num_all_nodes: int) -> int:
        """:func:`num_feasible_nodes_to_find` with this scheduler's global percentage."""
        return num_feasible_nodes_to_find(
            profile_percentage, self.percentage_of_nodes_to_score, num_all_nodes
        )

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: Pod) -> ScheduleResult:
        """Upstream ``schedulePod``.

        Raises:
            NoNodesAvailableError: the snapshot has no nodes.
            FitError: no node passed filtering (its diagnosis says why).
            SchedulingStatusError: a plugin failed with an error.
        """
        if self.update_snapshot is not None:
            self.update_snapshot(self.snapshot)
        num_nodes = self.snapshot.num_nodes()
        if num_nodes == 0:
            raise NoNodesAvailableError()

        found = self._pass_extenders(pod, self._find_nodes(fwk, state, pod))
        feasible = found.feasible
        if not feasible:
            raise FitError(pod, num_nodes, found.diagnosis)

        batching = fwk.features.enabled("OpportunisticBatching")
        if len(feasible) == 1:
            if batching:
                self._batch_for(fwk).store_schedule_results(
                    found.signature, found.hint, feasible[0].name, None, self.current_cycle()
                )
            return ScheduleResult(
                suggested_host=feasible[0].name,
                evaluated_nodes=found.evaluated,
                feasible_nodes=1,
            )

        if found.rows is not None and found.columns is not None and fwk.has_score_plugins():
            status = fwk.run_pre_score_plugins(state, pod, feasible)
            if status is not None and not status.is_success():
                raise SchedulingStatusError(status)
            totals = fwk.score_batch(state, pod, found.columns, found.rows)
            if totals is not None:
                pick, top = _select_row(totals, self.rng, NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT)
                if batching:
                    self._store_batch(fwk, found, [n.name for n in feasible], totals.tolist(), pick)
                return ScheduleResult(
                    suggested_host=feasible[pick].name,
                    evaluated_nodes=found.evaluated,
                    feasible_nodes=len(feasible),
                    top_nodes=tuple(NodeScore(feasible[i].name, int(totals[i])) for i in top),
                )
            # Something out of the ordinary: the per-node path says what.
            names, totals_list = self._score_nodes(fwk, state, pod, feasible)
        else:
            names, totals_list = self.prioritize_nodes(fwk, state, pod, feasible)
        host, top_scores = select_host(names, totals_list, self.rng)
        if batching:
            self._store_batch(fwk, found, names, totals_list, names.index(host))
        return ScheduleResult(
            suggested_host=host,
            evaluated_nodes=found.evaluated,
            feasible_nodes=len(feasible),
            top_nodes=tuple(top_scores),
        )

    def _batch_for(self, fwk: Framework) -> OpportunisticBatch:
        """The profile's batch (upstream: one per framework)."""
        batch = self.batches.get(fwk.profile_name)
        if batch is None:
            batch = OpportunisticBatch(
                profile_name=fwk.profile_name,
                sign=fwk.sign_pod,
                get_node=self.snapshot.get,
                run_filter_plugins=fwk.run_filter_plugins,
                now=self.now,
            )
            self.batches[fwk.profile_name] = batch
        return batch

    def _store_batch(
        self, fwk: Framework, found: _Found, names: Sequence[str], totals: Sequence[int], pick: int
    ) -> None:
        """Upstream ``StoreScheduleResults`` after scoring: the nodes not picked, best first.

        Upstream pops the pick off a heap keyed on (total, a random number per node); the
        rest keep that order. Here the pick is :func:`select_host`'s, and the rest are
        ordered by total, ties by one draw per node from a random source of their own,
        seeded from the scheduler's without drawing from it: the scheduler's draws, and so
        every placement made without a hint, are those of a run without batching.
        """
        others = [i for i in range(len(names)) if i != pick]
        if found.signature is not None:
            if self._order_rng is None:
                self._order_rng = random.Random(hash(self.rng.getstate()))
            keys = {i: self._order_rng.random() for i in others}
            others.sort(key=lambda i: (-totals[i], -keys[i]))
        self._batch_for(fwk).store_schedule_results(
            found.signature,
            found.hint,
            names[pick],
            SortedScoredNodes(names[i] for i in others),
            self.current_cycle(),
        )

    def find_nodes_that_fit_pod(
        self, fwk: Framework, state: CycleState, pod: Pod
    ) -> tuple[list[NodeInfo], Diagnosis]:
        """Upstream ``findNodesThatFitPod``: PreFilter, the nominated node first, then Filter.

        When the pod fits somewhere the diagnosis may lack the statuses of rejected nodes (the
        batch path does not compute them); when it fits nowhere it has every one.
        """
        found = self._pass_extenders(pod, self._find_nodes(fwk, state, pod))
        return found.feasible, found.diagnosis

    def _pass_extenders(self, pod: Pod, found: _Found) -> _Found:
        """Upstream ``findNodesThatPassExtenders`` after the plugins' filters. With extenders
        the batch scoring path is left, as their scores join the per-node totals."""
        if not self.extenders:
            return found
        feasible = found.feasible
        if not found.extended and feasible:
            feasible = self._extender_filter(pod, feasible, found.diagnosis)
        return _Found(
            feasible,
            found.diagnosis,
            found.evaluated,
            extended=True,
            hint=found.hint,
            signature=found.signature,
        )

    def _extender_filter(
        self, pod: Pod, feasible: list[NodeInfo], diagnosis: Diagnosis
    ) -> list[NodeInfo]:
        try:
            return find_nodes_that_pass_extenders(self.extenders, pod, feasible, diagnosis)
        except ExtenderError as exc:
            raise SchedulingStatusError(Status.from_error(exc)) from None

    def _find_nodes(self, fwk: Framework, state: CycleState, pod: Pod) -> _Found:
        diagnosis = Diagnosis()
        all_nodes = self.snapshot.list()

        pre_result, status, plugins_with_nodes = fwk.run_pre_filter_plugins(state, pod)
        diagnosis.unschedulable_plugins = set(plugins_with_nodes)
        if status is not None and not status.is_success():
            if not status.is_rejected():
                raise SchedulingStatusError(status)
            # Every node takes the PreFilter status, so preemption sees it.
            diagnosis.node_to_status.absent_nodes_status = status
            diagnosis.pre_filter_msg = status.message()
            add_plugin_status(diagnosis, status)
            return _Found([], diagnosis, 0)

        hint, signature = "", None
        if fwk.features.enabled("OpportunisticBatching"):
            hint, signature = self._batch_for(fwk).get_node_hint(pod, state, self.current_cycle())

        # A nominated node (set by an earlier preemption) is likely the only fit: try it first;
        # so is the node opportunistic batching hints at.
        if pod.status.nominated_node_name or hint:
            try:
                feasible = self.evaluate_nominated_node(fwk, state, pod, diagnosis, hint)
            except Exception as exc:  # upstream logs and carries on with all nodes
                log.info(
                    "evaluation failed on nominated node %s of pod %s: %s",
                    pod.status.nominated_node_name,
                    pod.key,
                    exc,
                )
                feasible = []
            if feasible:
                return _Found(
                    feasible,
                    diagnosis,
                    len(feasible) + len(diagnosis.node_to_status),
                    extended=bool(self.extenders),
                    hint=hint,
                    signature=signature,
                )

        nodes: Sequence[NodeInfo] = all_nodes
        if pre_result is not None and not pre_result.all_nodes():
            assert pre_result.node_names is not None
            picked: list[NodeInfo] = []
            # Upstream ranges over a Go map here (random order); sorted keeps runs reproducible.
            for name in sorted(pre_result.node_names):
                try:
                    picked.append(self.snapshot.get(name))
                except KeyError:
                    continue  # PreFilterResult may name nodes that do not exist
            nodes = picked
            diagnosis.node_to_status.absent_nodes_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"node(s) didn't satisfy plugin(s) {_go_list(sorted(plugins_with_nodes))}",
            )
        elif (
            self.batch
            and all_nodes
            and fwk.has_filter_plugins()
            and fwk.fast_paths
            and not self.extenders
        ):
            found = self._pass_filters_batch(fwk, state, pod, diagnosis)
            if found is not None:
                found.hint, found.signature = hint, signature
                return found

        feasible_nodes: list[NodeInfo] = []
        processed = 0
        try:
            feasible_nodes = self.find_nodes_that_pass_filters(fwk, state, pod, diagnosis, nodes)
        except SchedulingStatusError as exc:
            # Upstream counts the feasible nodes found before the error too.
            feasible_nodes = list(exc.feasible_nodes)
            raise
        finally:
            # Always rotate, error or not, so every node gets its turn (upstream).
            processed = len(feasible_nodes) + len(diagnosis.node_to_status)
            if all_nodes:
                self.next_start_node_index = (self.next_start_node_index + processed) % len(
                    all_nodes
                )
        return _Found(feasible_nodes, diagnosis, processed, hint=hint, signature=signature)

    def _pass_filters_batch(
        self, fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis
    ) -> _Found | None:
        """:meth:`find_nodes_that_pass_filters` over all nodes, through the batch engine
        (:meth:`BatchEngine.filter_rows <schedframe.runtime._batch.BatchEngine.filter_rows>`):
        the same feasible nodes, in the same order, the same rotation and, when no node is
        feasible, every node's status. ``None`` when the batch path does not apply (the
        per-node path then runs)."""
        started = time.perf_counter()
        recorder = fwk.metrics_recorder
        code = "Success"
        try:
            columns = self.snapshot.columns()
            n = columns.size
            num_to_find = self.num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, n)
            if not fwk.has_score_plugins():
                num_to_find = 1
            start = self.next_start_node_index % n
            tally = FilterTally() if recorder is not None else None
            found = fwk.batch.filter_rows(state, pod, columns, start, num_to_find, tally)
            if found is None:
                recorder = None  # the per-node path runs and is recorded
                return None
            if tally is not None:
                # Evaluations as the per-node path counts them, from the batch verdicts.
                visited = n if found.statuses is not None else found.processed
                if found.error is not None:
                    code = "Error"
                    visited += 1  # the node that erred was visited too
                fwk.batch.count_filter_evaluations(state, tally, start, visited, found.error)
            if found.error is not None:
                # The per-node path rotates past the nodes before the failing one.
                self.next_start_node_index = (start + found.processed) % n
                raise SchedulingStatusError(found.error)
            if found.statuses is not None:  # no node is feasible
                diagnosis.node_to_status.update(found.statuses)
                in_order = [status for _, status in found.statuses]
                for status in dict(zip(map(id, in_order), in_order, strict=True)).values():
                    add_plugin_status(diagnosis, status)  # once per distinct object, in order
                # Every node was processed: the rotation moves by n, back to where it was.
                return _Found([], diagnosis, n)
            self.next_start_node_index = (start + found.processed) % n
            return _Found(found.feasible, diagnosis, found.processed, found.rows, columns)
        finally:
            elapsed = time.perf_counter() - started
            state.durations["Filter"] = state.durations.get("Filter", 0.0) + elapsed
            if recorder is not None:
                recorder.extension_point_duration("Filter", code, fwk.profile_name, elapsed)

    def evaluate_nominated_node(
        self, fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis, hint: str = ""
    ) -> list[NodeInfo]:
        """Upstream ``evaluateNominatedNode``: filter the nominated node alone (the batching
        ``hint`` when the pod has no nominated node)."""
        node_info = self.snapshot.get(pod.status.nominated_node_name or hint)
        feasible = self.find_nodes_that_pass_filters(fwk, state, pod, diagnosis, [node_info])
        if self.extenders and feasible:
            feasible = self._extender_filter(pod, feasible, diagnosis)
        return feasible

    def find_nodes_that_pass_filters(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        diagnosis: Diagnosis,
        nodes: Sequence[NodeInfo],
    ) -> list[NodeInfo]:
        """Upstream ``findNodesThatPassFilters``: filter from ``next_start_node_index`` on,
        stopping once enough feasible nodes are found.

        Without Score plugins one feasible node is enough (there is nothing to compare).
        Rejections are recorded in ``diagnosis``; an ``Error`` from a filter raises
        :class:`SchedulingStatusError` after the nodes checked so far are recorded.
        """
        num_all = len(nodes)
        if num_all == 0:
            return []
        num_to_find = self.num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, num_all)
        if not fwk.has_score_plugins() and not any(
            e.is_filter() or e.is_prioritizer() for e in self.extenders
        ):
            num_to_find = 1
        start = self.next_start_node_index

        if not fwk.has_filter_plugins():
            return [nodes[(start + i) % num_all] for i in range(num_to_find)]

        started = time.perf_counter()
        feasible: list[NodeInfo] = []
        node_to_status = diagnosis.node_to_status
        # The framework's per-pod filter function: plugin skips and per-pod work done once.
        run = fwk.filter_function(state, pod)
        error: Status | None = None
        success = Code.SUCCESS
        error_code = Code.ERROR
        try:
            for i in range(num_all):
                node_info = nodes[(start + i) % num_all]
                status = run(node_info)
                if status is None or status.code is success:
                    feasible.append(node_info)
                    if len(feasible) >= num_to_find:
                        break
                elif status.code is error_code:
                    error = status
                    break
                else:
                    node_to_status.set(node_info.name, status)
                    add_plugin_status(diagnosis, status)
        finally:
            elapsed = time.perf_counter() - started
            state.durations["Filter"] = state.durations.get("Filter", 0.0) + elapsed
            recorder = fwk.metrics_recorder
            if recorder is not None:
                # Upstream times Filter over all nodes here: Error only when a filter erred.
                code = "Success" if error is None else "Error"
                recorder.extension_point_duration("Filter", code, fwk.profile_name, elapsed)
        if error is not None:
            raise SchedulingStatusError(error, feasible_nodes=feasible)
        return feasible

    def prioritize_nodes(
        self, fwk: Framework, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[str], list[int]]:
        """Upstream ``prioritizeNodes``: PreScore, Score, NormalizeScore and weights.

        Without Score plugins every node scores 1.
        """
        if not fwk.has_score_plugins() and not self.extenders:
            return [n.name for n in nodes], [1] * len(nodes)
        if fwk.has_score_plugins():
            status = fwk.run_pre_score_plugins(state, pod, nodes)
            if status is not None and not status.is_success():
                raise SchedulingStatusError(status)
            names, totals = self._score_nodes(fwk, state, pod, nodes)
        else:
            names, totals = [n.name for n in nodes], [0] * len(nodes)
        if self.extenders:
            added = extender_scores(self.extenders, pod, nodes)
            totals = [t + added.get(name, 0) for name, t in zip(names, totals, strict=True)]
        return names, totals

    def _score_nodes(
        self, fwk: Framework, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[str], list[int]]:
        """Score, NormalizeScore and weights, after PreScore."""
        scores, status = fwk.run_score_plugins(state, pod, nodes)
        if status is not None and not status.is_success():
            raise SchedulingStatusError(status)
        assert scores is not None
        return scores.names, scores.totals


# --------------------------------------------------------------------------------------------
# scheduleOne: the scheduling cycle and the binding cycle
# --------------------------------------------------------------------------------------------


def _rejection_fit_error(pod: Pod, node_name: str, status: Status) -> Status:
    """Reserve/Permit rejections become a one-node FitError, as upstream does."""
    diagnosis = Diagnosis(node_to_status=NodeToStatus())
    diagnosis.node_to_status.set(node_name, status)
    add_plugin_status(diagnosis, status)
    fit = FitError(pod, 1, diagnosis)
    return Status(status.code, error=fit)


def schedule_one(sched: Scheduler, qpi: fw.QueuedPodInfo) -> None:
    """Upstream ``ScheduleOne`` for a popped pod: the scheduling cycle, then binding."""
    pod = qpi.pod
    fwk = sched.profiles.get(pod.spec.scheduler_name)
    if fwk is None:
        # Only pods naming one of our profiles are queued; this would be a bug.
        log.error('profile not found for scheduler name "%s"', pod.spec.scheduler_name)
        sched.queue.done(pod.uid)
        return
    if skip_pod_schedule(sched, fwk, pod):
        sched.queue.done(pod.uid)
        return

    start = time.perf_counter()
    state = CycleState()
    recorder = fwk.metrics_recorder
    if recorder is not None:
        # Upstream samples plugin durations in pluginMetricsSamplePercent of the cycles.
        state.record_plugin_metrics = recorder.sample_cycle()
    result, assumed_qpi, status = scheduling_cycle(sched, state, fwk, qpi, start)
    durations = dict(state.durations)
    durations["Total"] = time.perf_counter() - start
    if status is not None and not status.is_success():
        sched.failure_handler(fwk, assumed_qpi, status, result.nominating_info, start)
        label = "unschedulable" if status.is_rejected() else "error"
        sched.observers.cycle_finished(
            pod=pod,
            profile=fwk.profile_name,
            result=label,
            durations=durations,
        )
        return
    sched.record_result(
        evolve(
            result,
            pod=assumed_qpi.pod,
            profile=fwk.profile_name,
            outcome="binding",
            attempts=assumed_qpi.attempts,
        )
    )
    sched.observers.cycle_finished(
        pod=pod,
        profile=fwk.profile_name,
        result="scheduled",
        durations=durations,
    )
    sched.start_binding_cycle(
        lambda: binding_cycle_start(sched, state, fwk, result, assumed_qpi, start)
    )


def skip_pod_schedule(sched: Scheduler, fwk: Framework, pod: Pod) -> bool:
    """Upstream ``skipPodSchedule``: pods being deleted, and pods already assumed."""
    if pod.deletion_timestamp is not None:
        record_event(
            fwk,
            pod,
            "Warning",
            "FailedScheduling",
            "Scheduling",
            f"skip schedule deleting pod: {pod.namespace}/{pod.name}",
        )
        return True
    try:
        return sched.cache.is_assumed_pod(pod)
    except Exception:
        log.exception("failed to check whether pod %s is assumed", pod.key)
        return False


def scheduling_cycle(
    sched: Scheduler,
    state: CycleState,
    fwk: Framework,
    qpi: fw.QueuedPodInfo,
    start: float,
) -> tuple[ScheduleResult, fw.QueuedPodInfo, Status | None]:
    """Upstream ``schedulingCycle``: schedulePod (+ PostFilter), assume, Reserve, Permit."""
    pod = qpi.pod
    algo_started = time.perf_counter()
    try:
        result = sched.algorithm.schedule_pod(fwk, state, pod)
    except NoNodesAvailableError as exc:
        status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, error=exc)
        return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), qpi, status
    except FitError as fit:
        state.durations["SchedulingAlgorithm"] = time.perf_counter() - algo_started
        if not fwk.has_post_filter_plugins():
            status = Status(Code.UNSCHEDULABLE, error=fit)
            return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), qpi, status
        sched.observers.preemption_attempted(pod=pod, profile=fwk.profile_name)
        post_result, post_status = fwk.run_post_filter_plugins(
            state, pod, fit.diagnosis.node_to_status
        )
        fit.diagnosis.post_filter_msg = post_status.message()
        fit.args = (fit.message(),)
        if post_status.code is Code.ERROR:
            log.error("PostFilter for pod %s failed: %s", pod.key, post_status.message())
        nominating = post_result.nominating_info if post_result is not None else None
        victims = sched.preemption_victims(pod.uid, state)
        if victims and nominating is not None and nominating.nominated_node_name:
            sched.observers.preemption(
                preemptor=pod,
                node_name=nominating.nominated_node_name,
                victims=victims,
                profile=fwk.profile_name,
            )
        status = Status(Code.UNSCHEDULABLE, error=fit)
        return ScheduleResult(nominating_info=nominating), qpi, status
    except SchedulingStatusError as exc:
        log.error("error selecting node for pod %s: %s", pod.key, exc)
        return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), qpi, exc.status
    except Exception as exc:  # a bug or a cache failure: an error status, never a crash
        log.exception("error selecting node for pod %s", pod.key)
        return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), qpi, Status.from_error(exc)
    state.durations["SchedulingAlgorithm"] = time.perf_counter() - algo_started

    host = result.suggested_host
    assumed_pod = pod.with_node_name(host)
    assumed_qpi = evolve(
        qpi,
        pod_info=PodInfo(assumed_pod),
        unschedulable_plugins=set(qpi.unschedulable_plugins),
        pending_plugins=set(qpi.pending_plugins),
    )
    try:
        sched.assume(assumed_pod)
    except Exception as exc:
        # Most probably a bug in retrying; the error path retries the pod.
        log.exception("scheduler cache AssumePod failed for %s", pod.key)
        return (
            ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE),
            assumed_qpi,
            Status.from_error(exc),
        )

    try:
        reserve = fwk.run_reserve_plugins_reserve(state, assumed_pod, host)
        if reserve is not None and not reserve.is_success():
            fwk.run_reserve_plugins_unreserve(state, assumed_pod, host)
            sched.forget(assumed_pod)
            if reserve.is_rejected():
                reserve = _rejection_fit_error(pod, host, reserve)
            return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), assumed_qpi, reserve

        permit = fwk.run_permit_plugins(state, assumed_pod, host)
    except BaseException as exc:
        # The runners turn a plugin's failure into a status; what still escapes is the
        # process's shutdown or a bug. Either way the pod is released and requeued first.
        _release_and_requeue(sched, state, fwk, assumed_qpi, host, exc, start)
        raise
    if permit is not None and not permit.is_wait() and not permit.is_success():
        fwk.run_reserve_plugins_unreserve(state, assumed_pod, host)
        sched.forget(assumed_pod)
        if permit.is_rejected():
            permit = _rejection_fit_error(pod, host, permit)
        return ScheduleResult(nominating_info=CLEAR_NOMINATED_NODE), assumed_qpi, permit

    if state.pods_to_activate:
        sched.queue.activate(list(state.pods_to_activate.values()))
        state.pods_to_activate.clear()
    return result, assumed_qpi, None


def _release_and_requeue(
    sched: Scheduler,
    state: CycleState,
    fwk: Framework,
    assumed_qpi: fw.QueuedPodInfo,
    host: str,
    exc: BaseException,
    start: float,
) -> None:
    """Unreserve, forget and requeue (error backoff) a pod whose scheduling cycle was cut short."""
    assumed_pod = assumed_qpi.pod
    log.error("scheduling cycle of pod %s interrupted: %r", assumed_pod.key, exc)
    try:
        fwk.run_reserve_plugins_unreserve(state, assumed_pod, host)
    except BaseException:
        log.exception("Unreserve of pod %s failed", assumed_pod.key)
    sched.forget(assumed_pod)
    sched.failure_handler(fwk, assumed_qpi, Status.from_error(exc), CLEAR_NOMINATED_NODE, start)


def binding_cycle_start(
    sched: Scheduler,
    state: CycleState,
    fwk: Framework,
    result: ScheduleResult,
    assumed_qpi: fw.QueuedPodInfo,
    start: float,
) -> None:
    """The first half of upstream ``bindingCycle``: PreBindPreFlight and the nominated node
    (with ``NominatedNodeNameForExpectation``), then wait on Permit (without blocking)."""
    if sched.nominated_node_name_for_expectation:
        failed = nominate_for_expectation(sched, state, fwk, result, assumed_qpi)
        if failed is not None:
            handle_binding_cycle_error(sched, state, fwk, assumed_qpi, start, result, failed)
            sched.binding_cycle_ended()
            return

    owner = threading.get_ident()
    registering = True
    went_on = False

    def permitted(permit_status: Status | None) -> None:
        nonlocal went_on

        def finish() -> None:
            binding_cycle_finish(sched, state, fwk, result, assumed_qpi, start, permit_status)

        if registering and threading.get_ident() == owner:
            went_on = True
            finish()  # not waiting (or resolved at once): go on in this binding task
        else:
            # Resolved later, by a timer or by whoever allowed/rejected the pod: never run
            # the bind in their thread.
            sched.continue_binding_cycle(finish)

    try:
        fwk.when_permitted(assumed_qpi.pod, permitted)
    except SHUTDOWN:
        raise  # from the binding cycle run in place, which already requeued the pod
    except BaseException as exc:
        log.exception("waiting on permit for pod %s failed", assumed_qpi.pod.key)
        permitted(Status.from_error(exc))
    finally:
        registering = False
    if not went_on:
        sched.binding_cycle_parked()  # waiting on Permit holds no thread and no slot


def nominate_for_expectation(
    sched: Scheduler,
    state: CycleState,
    fwk: Framework,
    result: ScheduleResult,
    assumed_qpi: fw.QueuedPodInfo,
) -> Status | None:
    """Upstream's ``NominatedNodeNameForExpectation`` step of ``bindingCycle``.

    PreBindPreFlight runs first; an Error (or a rejection, which it does not support) fails
    the binding cycle. When some PreBind plugin will work, or the pod waits on Permit, the
    pod's ``nominatedNodeName`` is set to the chosen node, telling other components (a
    cluster autoscaler) where it is about to go; a failing write is only logged.
    """
    assumed = assumed_qpi.pod
    host = result.suggested_host
    try:
        status = fwk.run_pre_bind_pre_flights(state, assumed, host)
    except Exception as exc:
        return Status.from_error(exc)
    if status is not None and (status.code is Code.ERROR or status.is_rejected()):
        return status
    if status is None or status.is_success() or fwk.will_wait_on_permit(assumed):
        target = sched.pod_store.get(assumed.namespace, assumed.name) or assumed
        if target.status.nominated_node_name != host:
            try:
                sched.backend.patch_pod_status(target, nominated_node_name=host)
            except Exception as exc:
                log.error(
                    "failed to update the nominated node name of pod %s to %s: %s",
                    assumed.key,
                    host,
                    exc,
                )
    return None


def binding_cycle_finish(
    sched: Scheduler,
    state: CycleState,
    fwk: Framework,
    result: ScheduleResult,
    assumed_qpi: fw.QueuedPodInfo,
    start: float,
    permit_status: Status | None,
) -> None:
    """The rest of upstream ``bindingCycle``, then ``handleBindingCycleError`` on failure.

    Behind the leadership fence (:meth:`Scheduler.may_bind` false) the cycle is abandoned
    instead: before PreBind, before Bind, or when a failure is seen after the fence closed.
    A shutdown exception (``KeyboardInterrupt``, ``SystemExit``) from a plugin is re-raised once
    the pod is handed back.
    """
    if not sched.may_bind():
        abandon_binding_cycle(sched, state, fwk, assumed_qpi, result)
        sched.binding_cycle_ended()
        return
    shutdown: BaseException | None = None
    try:
        try:
            status = binding_cycle(sched, state, fwk, result, assumed_qpi, permit_status)
        except BaseException as exc:  # never lose the pod: an error status, then requeue
            log.exception("binding cycle of pod %s failed", assumed_qpi.pod.key)
            status = Status.from_error(exc)
            if isinstance(exc, SHUTDOWN):
                shutdown = exc  # the process is stopping: re-raised once the pod is requeued
        if status is not None and not status.is_success():
            if status is _ABANDONED or not sched.may_bind():
                abandon_binding_cycle(sched, state, fwk, assumed_qpi, result)
            else:
                handle_binding_cycle_error(sched, state, fwk, assumed_qpi, start, result, status)
    finally:
        sched.binding_cycle_ended()
    if shutdown is not None:
        raise shutdown


#: What :func:`binding_cycle` returns when the fence closed between PreBind and Bind.
_ABANDONED: Final = Status(Code.ERROR, "binding abandoned: leadership lost or shutting down")


def abandon_binding_cycle(
    sched: Scheduler,
    state: CycleState,
    fwk: Framework,
    qpi: fw.QueuedPodInfo,
    result: ScheduleResult,
) -> None:
    """Drop a binding cycle behind the closed fence: unreserve, forget the assumed pod, hand
    it back to the queue (nothing is lost should the fence open again), and write nothing: no
    binding, status or event (the replica that holds the Lease schedules the pod)."""
    assumed = qpi.pod
    log.info("binding of pod %s abandoned (not the leader, or shutting down)", assumed.key)
    try:
        fwk.run_reserve_plugins_unreserve(state, assumed, result.suggested_host)
    except Exception:
        log.exception("unreserve of abandoned pod %s failed", assumed.key)
    sched.forget(assumed)
    cached = sched.pod_store.get(assumed.namespace, assumed.name)
    if cached is not None and cached.uid == assumed.uid and not cached.spec.node_name:
        qpi.pod_info = PodInfo(cached)
        try:
            sched.queue.add_unschedulable_if_not_present(qpi, sched.queue.scheduling_cycle)
        except Exception:  # already queued again (an update re-added it): nothing is lost
            log.debug("abandoned pod %s is already queued", assumed.key)
    try:
        sched.queue.done(assumed.uid)
    except Exception:
        log.exception("queue Done of abandoned pod %s failed", assumed.key)


def binding_cycle(
    sched: Scheduler,
    state: CycleState,
    fwk: Framework,
    result: ScheduleResult,
    assumed_qpi: fw.QueuedPodInfo,
    permit_status: Status | None,
) -> Status | None:
    """Upstream ``bindingCycle`` after ``WaitOnPermit``: PreBind, Bind, PostBind."""
    assumed = assumed_qpi.pod
    host = result.suggested_host
    if permit_status is not None and not permit_status.is_success():
        if permit_status.is_rejected():
            plugins = {permit_status.plugin} if permit_status.plugin else set()
            diagnosis = Diagnosis(unschedulable_plugins=plugins)
            diagnosis.node_to_status.set(host, permit_status)
            fit = FitError(assumed, 1, diagnosis)
            return Status(permit_status.code, error=fit)
        return permit_status

    # From here on a failure is not "unschedulable": the pod goes to backoff (upstream).
    sched.queue.done(assumed.uid)

    status = fwk.run_pre_bind_plugins(state, assumed, host)
    if status is not None and not status.is_success():
        return status
    if not sched.may_bind():
        return _ABANDONED
    status = bind(sched, fwk, state, assumed, host)
    if status is not None and not status.is_success():
        return status

    sched.record_result(
        evolve(
            result,
            pod=assumed,
            profile=fwk.profile_name,
            outcome="scheduled",
            attempts=assumed_qpi.attempts,
        )
    )
    first = assumed_qpi.initial_attempt_timestamp
    sched.observers.pod_scheduled(
        pod=assumed,
        node_name=host,
        profile=fwk.profile_name,
        attempts=assumed_qpi.attempts,
        queued_seconds=None if first is None else sched.clock.now() - first,
    )
    fwk.run_post_bind_plugins(state, assumed, host)
    if state.pods_to_activate:
        sched.queue.activate(list(state.pods_to_activate.values()))
    return None


def bind(
    sched: Scheduler, fwk: Framework, state: CycleState, assumed: Pod, host: str
) -> Status | None:
    """Upstream ``bind`` + ``finishBinding``: a binder extender first, else the Bind plugins."""
    status: Status | None
    try:
        bound, status = extenders_binding(sched.algorithm.extenders, assumed, host)
        if not bound:
            status = fwk.run_bind_plugins(state, assumed, host)
    except Exception as exc:
        status = Status.from_error(exc)
    try:
        sched.cache.finish_binding(assumed)
    except Exception:
        log.exception("scheduler cache FinishBinding failed for %s", assumed.key)
    if status is not None and not status.is_success():
        log.info("failed to bind pod %s: %s", assumed.key, status.message())
        return status
    record_event(
        fwk,
        assumed,
        "Normal",
        "Scheduled",
        "Binding",
        f"Successfully assigned {assumed.namespace}/{assumed.name} to {host}",
    )
    return None


def handle_binding_cycle_error(
    sched: Scheduler,
    state: CycleState,
    fwk: Framework,
    qpi: fw.QueuedPodInfo,
    start: float,
    result: ScheduleResult,
    status: Status,
) -> None:
    """Upstream ``handleBindingCycleError``: unreserve, forget, wake others, requeue."""
    from schedframe.scheduler._eventhandlers import EVENT_ASSIGNED_POD_DELETE

    assumed = qpi.pod
    host = result.suggested_host
    fwk.run_reserve_plugins_unreserve(state, assumed, host)
    deferred_move = False
    if sched.forget(assumed):
        # Forgetting frees what the assumed pod held: like an assigned pod deletion.
        if status.is_rejected():
            deferred_move = True  # after requeueing, and never moving the pod itself
        else:
            sched.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, assumed, None, None
            )
    try:
        sched.failure_handler(fwk, qpi, status, CLEAR_NOMINATED_NODE, start)
    finally:
        if deferred_move:
            uid = assumed.uid
            sched.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, assumed, None, lambda p: p.uid != uid
            )
