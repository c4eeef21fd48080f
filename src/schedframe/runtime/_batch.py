"""The batch engine: filtering and scoring over the snapshot's NumPy columns.

Upstream keeps its batching apart from the runner (``framework/runtime/batch.go`` beside
``framework.go``); so does schedframe. The :class:`~schedframe.runtime.Framework` runs each
extension point node by node (its ``run_*`` methods); this engine gives the same answers for
every node at once from the fast forms plugins declare (see :mod:`schedframe.framework.batch`),
falling back to the plugins' per-node methods wherever a plugin has no fast form or declines.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any, Final

import attrs

from schedframe import framework as fw
from schedframe._rows import pick
from schedframe.framework import Code, CycleState, NodeInfo, PodInfo, Status
from schedframe.framework import batch as fb
from schedframe.framework._columns import _added_sums
from schedframe.framework.batch import declares
from schedframe.runtime._guard import SHUTDOWN, bad_result, check_scores, describe, not_status
from schedframe.runtime._metrics import FilterTally, count_batch_filter, timed

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from schedframe.objects import Pod
    from schedframe.runtime._framework import Framework

    VerdictArray = npt.NDArray[np.int8]
    DeciderArray = npt.NDArray[np.int16]
    IntArray = npt.NDArray[np.int64]
    RowArray = npt.NDArray[np.intp]
    PendingArray = npt.NDArray[np.int64]
    #: ``(verdicts, deciders, what-if rows)``: see :meth:`BatchEngine.filter_batch_with_deciders`.
    BatchVerdicts = tuple[VerdictArray, DeciderArray, dict[int, tuple[fw.NodeColumns, int]]]
    WithPending = tuple[
        VerdictArray,
        DeciderArray,
        dict[int, tuple[fw.NodeColumns, int]],
        PendingArray | None,
        int | None,
    ]

__all__ = ["BatchEngine", "BatchFiltered"]

#: Filter plugins a pending mask (see ``BatchEngine._batch_verdicts``) has room for.
_MASK_BITS: Final = 62


def _fast(plugin: object, proto: type, name: str, on: bool) -> Any:
    """``plugin``'s fast form ``name`` when its class declares ``proto`` and fast paths are
    ``on``, else ``None``."""
    return getattr(plugin, name) if on and declares(plugin, proto) else None


class BatchEngine:
    """One Framework's filtering and scoring over every node at once."""

    def __init__(self, fwk: Framework) -> None:
        self._fwk = fwk
        # Preemptor priority -> the nominated pods' what-if sums kept across cycles (see
        # _nominated_verdicts).
        self._nominated_adds: dict[int, _NominatedAdds] = {}
        self._batch_filters: tuple[tuple[str, Any, Any, Any], ...] = ()
        self._batch_scores: tuple[tuple[str, Any, Any], ...] = ()

    def _try_fast(self, plugin: str, method: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``, a fast form of ``plugin``; ``None`` (its plain form is used) when it
        raises, which is counted and logged (:meth:`Framework.fast_path_failed`)."""
        try:
            return fn(*args)
        except Exception as exc:
            self._fwk.fast_path_failed(plugin, method, exc)
            return None

    def compile(self) -> None:
        """Resolve the plugins' batch forms (the Framework calls it when its plugins change)."""
        fwk = self._fwk
        on = fwk.fast_paths
        self._batch_filters = tuple(
            (
                p.name,
                p.filter,
                _fast(p, fb.BatchFilter, "filter_batch", on),
                _fast(p, fb.BatchFilterStatuses, "filter_batch_statuses", on),
            )
            for p in fwk.filter_plugins
        )
        self._batch_scores = tuple(
            (
                p.name,
                _fast(p, fb.BatchScore, "score_batch", on),
                _fast(p, fb.BatchNormalize, "normalize_batch", on),
            )
            for p in fwk.score_plugins
        )

    def filter_batch(
        self, state: CycleState, pod: Pod, columns: fw.NodeColumns
    ) -> VerdictArray | None:
        """Filter over every node of ``columns`` at once: a verdict per row.

        Each Filter plugin PreFilter did not skip gives its batch verdicts (an optional
        ``filter_batch(state, pod, columns)``; see :class:`schedframe.framework.NodeColumns`);
        a node's verdict is the first one, in plugin order, that is not ``FILTER_PASS``, as
        the per-node run stops at the first plugin that does not pass. A plugin without a batch
        form, or declining this pod, leaves ``FILTER_CHECK`` on the nodes still passing. Nodes
        with nominated pods are judged with those pods added (see
        :meth:`filter_batch_with_deciders`). The caller runs :meth:`filter_function` on
        ``FILTER_CHECK`` nodes, and :meth:`rejection_statuses` when it needs the statuses of
        rejected ones.

        Returns ``None`` when no plugin decided anything (the per-node path is then as fast).
        """
        found = self.filter_batch_with_deciders(state, pod, columns)
        return None if found is None else found[0]

    def filter_batch_with_deciders(
        self, state: CycleState, pod: Pod, columns: fw.NodeColumns
    ) -> tuple[VerdictArray, DeciderArray, dict[int, tuple[fw.NodeColumns, int]]] | None:
        """:meth:`filter_batch`, with the index (in :attr:`filter_plugins`) of the plugin
        whose verdict each row got (``-1`` for rows every plugin passes), and the what-if
        rows of nodes with nominated pods.

        A node with nominated pods (of the pod's priority or higher) passes only if it passes
        with those pods added too. When no PreFilter extension has state to update for them,
        that second verdict comes from the batch verdicts over copies of those nodes with the
        pods added; the third item maps such a node's row to ``(what-if columns, row)`` when
        it is rejected that way (its status comes from there). Otherwise those nodes are
        ``FILTER_CHECK``.
        """
        found = self._with_deciders(state, pod, columns)
        return None if found is None else found[:3]

    def _with_deciders(
        self, state: CycleState, pod: Pod, columns: fw.NodeColumns, tally: FilterTally | None = None
    ) -> WithPending | None:
        """:meth:`filter_batch_with_deciders`, the rows' pending masks and the mask all rows
        share, if they do (see :meth:`_batch_verdicts`). With a ``tally`` (evaluations are
        counted), nodes with nominated pods are left to the per-node path, which counts them."""
        found = self._batch_verdicts(state, pod, columns)
        if found is None:
            return None
        verdicts, deciders, pending, same = found
        what_if: dict[int, tuple[fw.NodeColumns, int]] = {}
        nominated = self._fwk.nominator.nominated_node_names()
        if nominated:
            import numpy as np

            index = columns.index
            known = np.fromiter((index[name] for name in nominated if name in index), dtype=np.intp)
            rows = known[verdicts[known] == fw.FILTER_PASS].tolist()
            if tally is not None:
                verdicts[known] = fw.FILTER_CHECK
                tally.nominated = known
                same = None
            elif rows:
                self._nominated_verdicts(state, pod, columns, rows, verdicts, deciders, what_if)
                same = None
        if tally is not None:
            tally.verdicts, tally.deciders = verdicts, deciders
        return verdicts, deciders, what_if, pending, same

    def _batch_verdicts(
        self, state: CycleState, pod: Pod, columns: fw.NodeColumns
    ) -> tuple[VerdictArray, DeciderArray, PendingArray | None, int | None] | None:
        """The batch verdicts and deciders of every row, and the rows' *pending* masks: bit
        ``k`` of ``pending[row]`` is set when the Filter plugin at index ``k`` did not pass the
        row in batch (no batch form, declined, or a verdict other than FILTER_PASS), i.e. when
        the per-node run of the row has to call that plugin; ``None`` when there are more
        plugins than bits; and that mask when every row has the same one and no batch verdict
        is other than FILTER_PASS (else ``None``). ``None`` when no plugin gave batch
        verdicts."""
        import numpy as np

        skip = state.skip_filter_plugins
        size = columns.size
        verdicts: VerdictArray | None = None
        deciders: DeciderArray = np.empty(size, dtype=np.int16)
        deciders.fill(-1)
        pending: PendingArray | None = (
            np.zeros(size, dtype=np.int64) if len(self._batch_filters) <= _MASK_BITS else None
        )
        decided = False
        uniform = True
        rec = self._fwk.metrics_recorder if state.record_plugin_metrics else None
        for k, (name, _, batch, _) in enumerate(self._batch_filters):
            if skip and name in skip:
                continue
            result = None
            if batch is not None:
                try:
                    if rec is not None:  # a sampled cycle: the batch call is timed as one
                        result = timed(rec, name, "Filter", batch, state, pod, columns)
                    else:
                        result = batch(state, pod, columns)
                except Exception as exc:  # the plugin's filter reports it, node by node
                    self._fwk.fast_path_failed(name, "filter_batch", exc)
                    result = None
                if result is not None and (
                    getattr(result, "shape", None) != (size,)
                    or getattr(result, "dtype", None) != np.int8
                ):
                    result = None
            if result is None:
                if verdicts is None:
                    verdicts = np.full(size, fw.FILTER_CHECK, dtype=np.int8)
                    deciders.fill(k)
                else:
                    passing = verdicts == fw.FILTER_PASS
                    verdicts[passing] = fw.FILTER_CHECK
                    deciders[passing] = k
                if pending is not None:
                    pending |= 1 << k
                continue
            decided = True
            if verdicts is None:
                verdicts = result.copy()
                if verdicts.any():  # FILTER_PASS is 0: anything else was decided here
                    uniform = False
                    deciders[verdicts != fw.FILTER_PASS] = k
                    if pending is not None:
                        pending[verdicts != fw.FILTER_PASS] |= 1 << k
            elif result.any():  # a result passing every node changes nothing
                uniform = False
                not_passed = result != fw.FILTER_PASS
                changed = (verdicts == fw.FILTER_PASS) & not_passed
                verdicts[changed] = result[changed]
                deciders[changed] = k
                if pending is not None:
                    pending[not_passed] |= 1 << k
        if not decided and verdicts is not None:
            return None  # no plugin decided anything: the per-node path is as fast
        if verdicts is None:  # no Filter plugin left after PreFilter's skips
            verdicts = np.zeros(size, dtype=np.int8)
        same = int(pending[0]) if uniform and pending is not None and size else None
        return verdicts, deciders, pending, same

    def _nominated_verdicts(
        self,
        state: CycleState,
        pod: Pod,
        columns: fw.NodeColumns,
        rows: list[int],
        verdicts: VerdictArray,
        deciders: DeciderArray,
        what_if: dict[int, tuple[fw.NodeColumns, int]],
    ) -> None:
        # Rows passing without nominated pods: decide them with those pods added.
        skip = state.skip_filter_plugins
        if any(name not in skip for name, _ in self._fwk._pre_filter_ext):
            verdicts[rows] = fw.FILTER_CHECK  # AddPod would change the state: per node
            return
        priority = pod.priority
        uid = pod.uid
        all_names = columns.names
        names = pick(all_names, rows)
        # One call (one lock) for every node. The generations are read before the lists: a
        # change in between then only makes the next read miss.
        nominator = self._fwk.nominator
        generations = nominator.nominated_generations(names)
        by_node = nominator.nominated_pods_for_nodes(names)
        kept = self._nominated_adds_for(columns, priority)
        entries = kept.entries
        added_pods: list[Sequence[PodInfo]] = []
        copied_rows: list[int] = []
        all_kept = True  # every row's sums are in kept.sums
        get = by_node.get
        for row, name in zip(rows, names, strict=True):
            infos = get(name)
            if not infos:
                continue
            entry = entries.get(row)
            generation = generations[name]
            if entry is None or entry[0] != generation or uid in entry[1]:
                entry = kept.count(row, infos, uid, generation)
                if entry[0] is None:  # the pod itself is nominated here: not kept
                    all_kept = False
            added = entry[2]
            if added is None:
                continue  # the per-node path runs the plain filters: the pass stands
            added_pods.append(added)
            copied_rows.append(row)
        if not copied_rows:
            return
        what_if_columns = fw.NodeColumns.with_pods_added(
            columns, copied_rows, added_pods, kept.sums[copied_rows] if all_kept else None
        )
        found = self._batch_verdicts(state, pod, what_if_columns)
        if found is None:
            verdicts[copied_rows] = fw.FILTER_CHECK
            return
        what_if_verdicts, what_if_deciders, _, _ = found
        import numpy as np

        verdicts[copied_rows] = what_if_verdicts
        deciders[copied_rows] = what_if_deciders
        rejected = np.flatnonzero(what_if_verdicts == fw.FILTER_REJECT).tolist()
        what_if.update((copied_rows[i], (what_if_columns, i)) for i in rejected)

    def _nominated_adds_for(self, columns: fw.NodeColumns, priority: int) -> _NominatedAdds:
        # The what-if sums kept for these columns and this priority: one set per priority
        # seen lately (a few at most), each started anew with new columns.
        by_priority = self._nominated_adds
        if len(by_priority) > _KEPT_PRIORITIES:
            by_priority.clear()
        kept = by_priority.get(priority)
        if kept is None or kept.columns is not columns:
            kept = by_priority[priority] = _NominatedAdds(columns, priority)
        return kept

    def rejection_statuses(
        self,
        state: CycleState,
        pod: Pod,
        columns: fw.NodeColumns,
        rows: RowArray,
        plugin_index: int,
    ) -> list[Status] | None:
        """The statuses of ``rows``, which the batch verdicts say the filter plugin at
        ``plugin_index`` rejects (every plugin before it passing them): what
        :meth:`run_filter_plugins` gives those nodes.

        A plugin may offer ``filter_batch_statuses(state, pod, columns, rows)`` (a status per
        row, equal to its ``filter``); otherwise its ``filter`` runs on each. ``None`` when a
        status is not a rejection after all (the caller then takes the per-node path).
        """
        name, filter_fn, _, batch = self._batch_filters[plugin_index]
        statuses: Sequence[Status | None] | None = None
        rec = self._fwk.metrics_recorder if state.record_plugin_metrics else None
        began = time.perf_counter() if rec is not None else 0.0
        try:
            if batch is not None:
                statuses = self._try_fast(
                    name, "filter_batch_statuses", batch, state, pod, columns, rows
                )
            if statuses is None or len(statuses) != len(rows):
                infos = columns.infos
                statuses = [filter_fn(state, pod, infos[r]) for r in rows.tolist()]
        except Exception:
            if rec is not None:
                rec.plugin_duration(name, "Filter", "Error", time.perf_counter() - began)
            return None
        if rec is not None:  # a sampled cycle: the statuses of the rows, timed as one call
            rec.plugin_duration(name, "Filter", "Success", time.perf_counter() - began)
        # Plugins share one Status among many nodes: check and name each object once.
        distinct = dict(zip(map(id, statuses), statuses, strict=True))
        stamped: dict[int, Status] = {}
        for key, status in distinct.items():
            if status is None or not status.is_rejected():
                return None
            stamped[key] = status if status.plugin == name else status.with_plugin(name)
        return [stamped[key] for key in map(id, statuses)]

    def score_batch(
        self, state: CycleState, pod: Pod, columns: fw.NodeColumns, rows: RowArray
    ) -> IntArray | None:
        """Score, NormalizeScore and weights over ``rows`` of ``columns``: the weighted totals.

        Equal to the totals of :meth:`run_score_plugins` on the same nodes. A plugin's batch
        forms (optional ``score_batch(state, pod, columns, rows)`` and
        ``normalize_batch(state, pod, scores)``) are used when it has them, its per-node
        methods otherwise. Returns ``None`` whenever anything is out of the ordinary (a plugin
        raising or failing, a score out of range, a value beyond int64), so that
        :meth:`run_score_plugins` reports it with its usual message.
        """
        import numpy as np

        started = time.perf_counter()
        try:
            skip = state.skip_score_plugins
            totals = np.zeros(len(rows), dtype=np.int64)
            nodes: list[NodeInfo] | None = None
            names: list[str] | None = None
            # Sampled cycles: each plugin's Score and NormalizeScore work over the rows is one
            # call (timed as one); evaluations are counted once the totals stand.
            rec = self._fwk.metrics_recorder
            sampled = rec is not None and state.record_plugin_metrics
            scored: list[int] = []
            for k, (
                (name, score_fn, normalize_fn, weight, score_many),
                (_, batch, norm_batch),
            ) in enumerate(zip(self._fwk._score_fns, self._batch_scores, strict=True)):
                if skip and name in skip:
                    continue
                scored.append(k)
                began = time.perf_counter() if sampled else 0.0
                try:
                    scores = (
                        self._try_fast(name, "score_batch", batch, state, pod, columns, rows)
                        if batch is not None
                        else None
                    )
                    if scores is None or getattr(scores, "shape", None) != (len(rows),):
                        if nodes is None:
                            nodes = pick(columns.infos, rows.tolist())
                        listed = (
                            self._try_fast(name, "score_many", score_many, state, pod, nodes)
                            if score_many is not None
                            else None
                        )
                        if listed is None:
                            listed = list(map(score_fn, repeat(state), repeat(pod), nodes))
                        if check_scores(listed, len(nodes)) is not None:
                            return None  # not one integer per node: the plain path says so
                        scores = np.array(listed, dtype=np.int64)
                    if rec is not None and sampled:
                        now = time.perf_counter()
                        rec.plugin_duration(name, "Score", "Success", now - began)
                        began = now
                    if normalize_fn is not None:
                        normalized = (
                            self._try_fast(name, "normalize_batch", norm_batch, state, pod, scores)
                            if norm_batch is not None
                            else None
                        )
                        if normalized is None or getattr(normalized, "shape", None) != (len(rows),):
                            if names is None:
                                names = [columns.names[r] for r in rows.tolist()]
                            nsl = fw.NodeScoreList(list(names), scores.tolist())
                            status = normalize_fn(state, pod, nsl)
                            if status is not None and not status.is_success():
                                return None
                            if check_scores(nsl.scores, len(names)) is not None:
                                return None
                            normalized = np.array(nsl.scores, dtype=np.int64)
                        scores = normalized
                        if rec is not None and sampled:
                            seconds = time.perf_counter() - began
                            rec.plugin_duration(name, "ScoreExtensionNormalize", "Success", seconds)
                except SHUTDOWN:
                    raise
                except BaseException:
                    return None  # the plain path reports it with its usual message
                if len(scores) and _outside_score_range(scores):
                    return None
                totals += scores * weight
            evals = self._fwk._evaluations
            if rec is not None and evals is not None:
                counts = evals.counts["Score"]
                for k in scored:
                    counts[k] += len(rows)  # the per-node path's one call per node
            return totals
        finally:
            state.durations["Score"] = time.perf_counter() - started

    def count_filter_evaluations(
        self,
        state: CycleState,
        tally: FilterTally,
        start: int,
        visited: int,
        error: Status | None,
    ) -> None:
        """Count the Filter evaluations of a :meth:`filter_rows` search that visited
        ``visited`` nodes from ``start`` on (see
        :func:`~schedframe.runtime._metrics.count_batch_filter`); nothing without a recorder."""
        evals = self._fwk._evaluations
        if evals is None or self._fwk.metrics_recorder is None:
            return
        counts, names = evals.counts["Filter"], evals.names["Filter"]
        count_batch_filter(counts, names, state.skip_filter_plugins, tally, start, visited, error)

    # -- rows from a start node on (the scheduling cycle's search) --------------------------

    def filter_rows(
        self,
        state: CycleState,
        pod: Pod,
        columns: fw.NodeColumns,
        start: int,
        num_to_find: int,
        tally: FilterTally | None = None,
    ) -> BatchFiltered | None:
        """Upstream ``findNodesThatPassFilters`` over every node of ``columns`` from row
        ``start`` on (wrapping round), stopping at ``num_to_find`` feasible nodes, with the
        batch verdicts.

        Nodes the batch verdicts pass are feasible and nodes they reject are skipped, without
        a call per node; undecided nodes take the per-node path. The feasible nodes, their
        order, the count of nodes processed and the error are those of the per-node path.
        When no node is feasible every node's status is gathered, rejected nodes' through
        :meth:`rejection_statuses`. ``None`` when the batch path does not apply (the caller
        then runs the per-node path). ``tally``, when given, receives what
        :func:`~schedframe.runtime._metrics.count_batch_filter` needs to count evaluations.
        """
        import numpy as np

        with_pending = self._with_deciders(state, pod, columns, tally)
        if with_pending is None:
            return None
        found: BatchVerdicts = with_pending[:3]
        verdicts, pending, same = with_pending[0], with_pending[3], with_pending[4]
        n = columns.size
        if same and not found[2]:
            # Every row undecided alike (plugins without batch forms, the others passing all).
            alike = self._filter_alike(state, pod, columns, pending, same, start, num_to_find)
            if alike is not None:
                got, checked_alike = alike
                if tally is not None:
                    tally.checked = checked_alike
                if got is not None:
                    return got
                return self._all_statuses(state, pod, columns, start, found, checked_alike)
        if not verdicts.any():  # FILTER_PASS is 0: every node passes (the usual case)
            # The first num_to_find nodes from start on, a run of rows (wrapping round).
            processed = min(num_to_find, n)
            stop = start + processed
            rows = np.arange(start, stop, dtype=np.intp)
            if stop <= n:
                feasible = list(columns.infos[start:stop])
            else:
                rows[rows >= n] -= n
                feasible = [*columns.infos[start:], *columns.infos[: stop - n]]
            return BatchFiltered(feasible, rows, processed)
        rotated = np.concatenate((verdicts[start:], verdicts[:start])) if start else verdicts
        candidates = np.flatnonzero(rotated != fw.FILTER_REJECT)
        head = candidates[:num_to_find]
        infos = columns.infos
        checked: dict[int, Status] = {}
        if tally is not None:
            tally.checked = checked
        if not len(candidates):
            return self._all_statuses(state, pod, columns, start, found, checked)
        if not (rotated[head] == fw.FILTER_CHECK).any():
            positions = head
            processed = int(head[-1]) + 1 if len(head) == num_to_find else n
        else:
            undecided = _Undecided(self._fwk, state, pod, columns, pending)
            kept: list[int] = []
            processed = n
            # In chunks of as many candidates as feasible nodes are still wanted: every node
            # of a chunk is one the per-node path would look at too.
            i = 0
            total = len(candidates)
            while i < total:
                chunk = candidates[i : i + num_to_find - len(kept)]
                i += len(chunk)
                chunk_rows = chunk + start
                if start:
                    chunk_rows[chunk_rows >= n] -= n
                to_check = rotated[chunk] == fw.FILTER_CHECK
                failed = undecided.failures(chunk_rows[to_check]) if to_check.any() else None
                if not failed:
                    kept.extend(chunk.tolist())
                else:
                    for pos, row in zip(chunk.tolist(), chunk_rows.tolist(), strict=True):
                        status = failed.get(row)
                        if status is None:
                            kept.append(pos)
                        elif status.code is Code.ERROR:
                            return BatchFiltered([], None, pos, error=status)
                        else:
                            checked[row] = status
                if len(kept) >= num_to_find:
                    processed = kept[-1] + 1
                    break
            if not kept:
                return self._all_statuses(state, pod, columns, start, found, checked)
            positions = np.array(kept, dtype=np.intp)
        rows = positions + start
        if start:
            rows[rows >= n] -= n
        return BatchFiltered(pick(infos, rows.tolist()), rows, processed)

    def _filter_alike(
        self,
        state: CycleState,
        pod: Pod,
        columns: fw.NodeColumns,
        pending: PendingArray | None,
        mask: int,
        start: int,
        num_to_find: int,
    ) -> tuple[BatchFiltered | None, dict[int, Status]] | None:
        """:meth:`filter_rows` when every row has the same pending ``mask`` and no batch
        verdict rejects a row: the plugins of the mask run over runs of consecutive rows from
        ``start`` on, as many at a time as feasible nodes are still wanted. Returns what was
        found (``None`` when no node is feasible) and the statuses of the rows rejected on
        the way; ``None`` when nodes have nominated pods (the caller then takes the general
        path)."""
        import numpy as np

        fwk = self._fwk
        if fwk.nominator.nominated_node_names():
            return None
        undecided = _Undecided(fwk, state, pod, columns, pending)
        chain = undecided.chain(mask)
        infos = columns.infos
        n = columns.size
        feasible: list[NodeInfo] = []
        checked: dict[int, Status] = {}
        kept_rows: list[int] | None = None  # None while every row so far is kept
        pos = 0
        while pos < n and len(feasible) < num_to_find:
            end = min(pos + num_to_find - len(feasible), n)
            a, b = start + pos, start + end
            nodes: Sequence[NodeInfo]
            rows: Sequence[int]
            if b <= n:
                nodes, rows = infos[a:b], range(a, b)
            elif a >= n:
                nodes, rows = infos[a - n : b - n], range(a - n, b - n)
            else:
                nodes, rows = [*infos[a:], *infos[: b - n]], [*range(a, n), *range(b - n)]
            failed: dict[int, Status] = {}
            undecided.run_chain(chain, rows, failed, nodes)
            if not failed:
                feasible.extend(nodes)
                if kept_rows is not None:
                    kept_rows.extend(rows)
            else:
                if kept_rows is None:
                    kept_rows = [(start + p) % n for p in range(pos)]
                for offset, (row, node_info) in enumerate(zip(rows, nodes, strict=True)):
                    status = failed.get(row)
                    if status is None:
                        feasible.append(node_info)
                        kept_rows.append(row)
                    elif status.code is Code.ERROR:
                        return BatchFiltered([], None, pos + offset, error=status), checked
                    else:
                        checked[row] = status
            pos = end
        if not feasible:
            return None, checked
        # Reaching num_to_find takes every node of the last run: it ends at the last one kept.
        processed = pos if len(feasible) >= num_to_find else n
        if kept_rows is None:
            kept = np.arange(start, start + processed, dtype=np.intp)
            kept[kept >= n] -= n
        else:
            kept = np.array(kept_rows, dtype=np.intp)
        return BatchFiltered(feasible, kept, processed), checked

    def _all_statuses(
        self,
        state: CycleState,
        pod: Pod,
        columns: fw.NodeColumns,
        start: int,
        found: BatchVerdicts,
        checked: dict[int, Status],
    ) -> BatchFiltered | None:
        """No node is feasible: every node's status, in the order the per-node path visits
        them from ``start`` (``checked`` holds the undecided nodes' statuses already found).
        ``None`` if a plugin's statuses contradict its batch verdicts."""
        import numpy as np

        fwk = self._fwk
        verdicts, deciders, what_if = found
        n = columns.size
        statuses: dict[int, Status] = dict(checked)
        rejected = verdicts == fw.FILTER_REJECT
        # Nodes with nominated pods rejected without them: the per-node path reports the run
        # with them added, which comes first there.
        row_of = columns.index
        known = np.fromiter(
            (row_of[name] for name in fwk.nominator.nominated_node_names() if name in row_of),
            dtype=np.intp,
        )
        for row in known[rejected[known]].tolist():
            if row in what_if:
                continue
            status = fwk.run_filter_plugins_with_nominated_pods(state, pod, columns.infos[row])
            if status is None or not status.is_rejected():
                return None
            statuses[row] = status
            rejected[row] = False
        if what_if:
            # Nodes rejected only with their nominated pods added: statuses from those copies.
            what_if_rows = np.fromiter(what_if, dtype=np.intp, count=len(what_if))
            rejected[what_if_rows] = False
            what_if_deciders = deciders[what_if_rows]
            for index in np.unique(what_if_deciders).tolist():
                rows_of = what_if_rows[what_if_deciders == index].tolist()
                copies = what_if[rows_of[0]][0]
                at = np.array([what_if[row][1] for row in rows_of], dtype=np.intp)
                got = self.rejection_statuses(state, pod, copies, at, index)
                if got is None:
                    return None
                statuses.update(zip(rows_of, got, strict=True))
        for index in np.unique(deciders[rejected]).tolist():
            rows = np.flatnonzero(rejected & (deciders == index))
            got = self.rejection_statuses(state, pod, columns, rows, index)
            if got is None:
                return None
            statuses.update(zip(rows.tolist(), got, strict=True))
        if len(statuses) != n:
            return None
        names = columns.names
        order = [*range(start, n), *range(start)]
        in_order = pick(statuses, order)
        named = list(zip([*names[start:], *names[:start]], in_order, strict=True))
        return BatchFiltered([], None, n, statuses=named)


def _outside_score_range(scores: IntArray) -> bool:
    """Whether a score lies outside ``[MIN_NODE_SCORE, MAX_NODE_SCORE]``: for int64 scores one
    pass, as a negative number read as unsigned is beyond any score (MIN_NODE_SCORE is 0)."""
    import numpy as np

    if fw.MIN_NODE_SCORE == 0 and scores.dtype == np.int64:
        return bool(scores.view(np.uint64).max() > fw.MAX_NODE_SCORE)
    return bool(scores.min() < fw.MIN_NODE_SCORE or scores.max() > fw.MAX_NODE_SCORE)


#: How many preemptor priorities Framework._nominated_verdicts keeps what-if sums for.
_KEPT_PRIORITIES: Final = 8


class _NominatedAdds:
    """For :meth:`BatchEngine._nominated_verdicts`: per row of one NodeColumns, the pods
    nominated to its node that a preemptor of ``priority`` counts, and what they add to the
    row, kept across scheduling cycles.

    ``entries[row]`` is ``(the node's nominated generation it was worked out at, the uids of
    the pods counted, those pods or None)``; it holds while the nominator's
    :meth:`~schedframe.framework.Nominator.nominated_generations` gives the node the same
    number, for every preemptor of ``priority`` that is not one of the pods counted (an entry
    for such a preemptor has no generation and is not kept). ``sums[row]`` is then what the
    pods add, as :meth:`NodeColumns.with_pods_added` takes it.
    """

    __slots__ = ("columns", "entries", "priority", "sums")

    def __init__(self, columns: fw.NodeColumns, priority: int) -> None:
        import numpy as np

        self.columns = columns
        self.priority = priority
        self.entries: dict[int, tuple[int | None, frozenset[str], Sequence[PodInfo] | None]] = {}
        self.sums: IntArray = np.zeros((columns.size, 7), dtype=np.int64)

    def count(
        self, row: int, infos: Sequence[PodInfo], uid: str, generation: int
    ) -> tuple[int | None, frozenset[str], Sequence[PodInfo] | None]:
        """The entry of ``row`` for ``infos``, kept unless the pod ``uid`` is among the pods
        counted (its entry, for this call only, then leaves it out)."""
        priority = self.priority
        counted = [info for info in infos if info.pod.priority >= priority]
        uids = frozenset(info.pod.uid for info in counted)
        if uid in uids:
            others = [info for info in counted if info.pod.uid != uid]
            return None, uids, others or None
        # One pod a node is the usual case: the nominator's list itself is the group.
        added = (infos if len(counted) == len(infos) else counted) or None
        entry = (generation, uids, added)
        self.entries[row] = entry
        if added is not None:
            self.sums[row] = _added_sums([added])[0]  # what the group adds to the row
        return entry


@attrs.define
class BatchFiltered:
    """What :meth:`BatchEngine.filter_rows` found, from ``start`` on.

    Either the feasible nodes (``feasible``, their ``rows`` in the columns, and ``processed``:
    how many nodes from ``start`` on the per-node path would have looked at); or ``error``, a
    filter's Error status on the node ``processed`` places after ``start``; or, when no node
    is feasible, ``statuses``: every node's ``(name, status)``, in the order the per-node
    path visits them from ``start``.
    """

    feasible: list[NodeInfo]
    rows: RowArray | None
    processed: int
    error: Status | None = None
    statuses: list[tuple[str, Status]] | None = None


class _Undecided:
    """The per-node filtering of the rows the batch verdicts left undecided.

    A row's statuses equal :meth:`Framework.run_filter_plugins_with_nominated_pods` on its
    node, but only the plugins the row's pending mask names (see
    ``BatchEngine._batch_verdicts``) are called, in plugin order: a plugin that passed the
    row in batch is not called again (its ``filter`` would pass it too). So a plugin without
    batch forms costs its own calls only, never a re-run of the plugins before it. Each
    plugin is called over many rows at once (``map``), the rows it rejects leaving the chain.
    Nodes with nominated pods take the general path, as in :meth:`Framework.filter_function`.
    """

    __slots__ = (
        "_chains",
        "_fwk",
        "_infos",
        "_nominated_rows",
        "_pending",
        "_pod",
        "_prepared",
        "_state",
    )

    def __init__(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        columns: fw.NodeColumns,
        pending: PendingArray | None,
    ) -> None:
        self._fwk = fwk
        self._state = state
        self._pod = pod
        self._infos = columns.infos
        self._pending = pending
        index = columns.index
        self._nominated_rows = frozenset(
            index[name] for name in fwk.nominator.nominated_node_names() if name in index
        )
        #: plugin index -> (name, function, whether it takes (state, pod, node_info))
        self._prepared: dict[int, tuple[str, Callable[..., Status | None], bool]] = {}
        self._chains: dict[int, list[tuple[str, Callable[..., Status | None], bool]]] = {}

    def _plugin(self, k: int) -> tuple[str, Callable[..., Status | None], bool]:
        found = self._prepared.get(k)
        if found is None:
            name, filter_fn, prepare = self._fwk._prepare_filters[k]
            fn = None
            if prepare is not None:
                try:
                    fn = prepare(self._state, self._pod)
                except Exception as exc:  # the plain filter then reports it, node by node
                    self._fwk.fast_path_failed(name, "prepare_filter", exc)
            found = (name, fn, False) if fn is not None else (name, filter_fn, True)
            self._prepared[k] = found
        return found

    def chain(self, mask: int) -> list[tuple[str, Callable[..., Status | None], bool]]:
        chain = self._chains.get(mask)
        if chain is None:
            count = len(self._fwk._prepare_filters)
            chain = self._chains[mask] = [self._plugin(k) for k in range(count) if mask >> k & 1]
        return chain

    def failures(self, rows: RowArray) -> dict[int, Status]:
        """Row -> status for the ``rows`` that do not pass (rows left out pass)."""
        fwk = self._fwk
        out: dict[int, Status] = {}
        row_list: list[int] = rows.tolist()
        nominated = self._nominated_rows
        if nominated:
            general = fwk.run_filter_plugins_with_nominated_pods
            infos = self._infos
            for row in [r for r in row_list if r in nominated]:
                status = general(self._state, self._pod, infos[row])
                if status is not None and status.code is not Code.SUCCESS:
                    out[row] = status
            row_list = [r for r in row_list if r not in nominated]
            rows = rows[[r not in nominated for r in rows.tolist()]]
        if not row_list:
            return out
        pending = self._pending
        if pending is None:  # more plugins than mask bits: the whole chain
            groups = {-1: row_list}
        else:
            masks = pending[rows]
            first = int(masks[0])
            if (masks == first).all():
                groups = {first: row_list}
            else:
                groups = {}
                for row, mask in zip(row_list, masks.tolist(), strict=True):
                    groups.setdefault(mask, []).append(row)
        for mask, group in groups.items():
            chain = (
                self.chain(mask)
                if mask >= 0
                else [self._plugin(k) for k in range(len(fwk._prepare_filters))]
            )
            self.run_chain(chain, group, out)
        return out

    def run_chain(
        self,
        chain: list[tuple[str, Callable[..., Status | None], bool]],
        rows: Sequence[int],
        out: dict[int, Status],
        nodes: Sequence[NodeInfo] | None = None,
    ) -> None:
        """Run ``chain`` over ``rows`` (whose NodeInfos are ``nodes``, if given), each row
        leaving it at its first status that is not a success, which goes into ``out``."""
        from schedframe.runtime._framework import _as_error, _raised

        state = self._state
        pod = self._pod
        skip = state.skip_filter_plugins
        infos = self._infos
        alive: Sequence[int] = rows
        success = Code.SUCCESS
        rec = self._fwk.metrics_recorder if state.record_plugin_metrics else None
        for name, fn, plain in chain:
            if skip and name in skip:
                continue
            if nodes is None:
                nodes = pick(infos, alive)
            results: list[Status | None] = []
            raised: dict[int, Status] = {}
            began = time.perf_counter() if rec is not None else 0.0
            while True:
                rest = nodes[len(results) :] if results else nodes
                try:
                    # list.extend keeps what the map gave before a call raised.
                    if plain:
                        results.extend(map(fn, repeat(state), repeat(pod), rest))
                    else:
                        results.extend(map(fn, rest))
                    break
                except SHUTDOWN:
                    raise
                except BaseException as exc:  # the call on the next node raised
                    failure = _raised(f'running "{name}" filter plugin', exc, name)
                    raised[alive[len(results)]] = failure
                    results.append(None)
            if rec is not None:  # a sampled cycle: the plugin over these rows, as one call
                elapsed = time.perf_counter() - began
                erred = bool(raised) or any(
                    not_status(s) or (s.code is Code.ERROR)
                    for s in results
                    if s is not None and (type(s) is not Status or s.code is not success)
                )
                rec.plugin_duration(name, "Filter", "Error" if erred else "Success", elapsed)
            if not raised and results.count(None) == len(results):
                continue  # every row passes (the usual case)
            survivors: list[int] = []
            for row, status in zip(alive, results, strict=True):
                if row in raised:
                    out[row] = raised[row]
                elif status is None or (isinstance(status, Status) and status.code is success):
                    survivors.append(row)
                elif not_status(status):  # the plugin's error, as the per-node path says it
                    out[row] = bad_result(
                        f'running "{name}" filter plugin',
                        name,
                        f"returned {describe(status)}, expected a Status or None",
                    )
                elif not status.is_rejected():
                    out[row] = _as_error(f'running "{name}" filter plugin', status, name)
                else:
                    out[row] = status if status.plugin == name else status.with_plugin(name)
            alive = survivors
            nodes = None
            if not alive:
                return
