"""PodTopologySpread over the snapshot's NumPy columns (the batch path).

Imported lazily by the plugin's methods, never at framework build time, so NumPy is only
loaded once a scheduler works on columns. Everything here gives exactly what the per-node code
in :mod:`.filtering` and :mod:`.scoring` gives; the property tests in
``plugins/tests/podtopologyspread/test_batch.py`` hold the two side by side.

The expensive part of PreFilter and PreScore is counting, on every node, the pods a selector
matches. :class:`RowCounts` keeps those counts per row and recounts only the rows whose
NodeInfo generation moved since the last cycle: a generation is process-wide unique per change
(a clone keeps its source's generation and contents), so an unchanged generation means the
same pods and the same count.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import Final

import numpy as np
import numpy.typing as npt

from schedframe import framework as fw
from schedframe.objects import LabelSelector, Node, Pod
from schedframe_plugins.nodeaffinity import RequiredNodeAffinity
from schedframe_plugins.podtopologyspread.common import (
    LABEL_HOSTNAME,
    NODE_INCLUSION_POLICY_HONOR,
    SpreadConstraint,
    count_pods_match_selector,
)
from schedframe_plugins.podtopologyspread.filtering import (
    CriticalPaths,
    PreFilterState,
)
from schedframe_plugins.podtopologyspread.scoring import PreScoreState
from schedframe_plugins.tainttoleration import (
    do_not_schedule_taints_filter,
    find_matching_untolerated_taint,
)

__all__ = [
    "RowCounts",
    "critical_paths",
    "filter_verdicts",
    "normalize_scores",
    "pre_filter_state",
    "pre_score_counts",
    "score_rows",
]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_MAX_INT32: Final = 2**31 - 1
# Counts and scores beyond this are left to the per-node path (Python integers): sums of a few
# of them, and ``MAX_NODE_SCORE`` times them, still fit in int64 and float64 holds them exactly.
_SAFE: Final = 2**52
# Up to this many domains, critical paths come from the update loop itself.
_SHORT: Final = 16

#: (selector's canonical form, namespace): what a per-row count depends on besides the node.
_Key = tuple[tuple[tuple[str, str], ...], tuple[object, ...], str]


def _selector_key(selector: LabelSelector, namespace: str) -> _Key:
    return (tuple(sorted(selector.match_labels.items())), selector.match_expressions, namespace)


class RowCounts:
    """Per row of a node list, the pods a ``(selector, namespace)`` counts there (the value of
    :func:`~.common.count_pods_match_selector` on the row's pods), kept across cycles.

    Holds the last ``limit`` selectors used; a row is recounted when its NodeInfo's generation
    changed since it was counted (see the module docstring).
    """

    __slots__ = ("_entries", "_limit")

    def __init__(self, limit: int = 32) -> None:
        self._entries: dict[_Key, tuple[IntArray, IntArray]] = {}
        self._limit = limit

    @staticmethod
    def generations(columns: fw.NodeColumns) -> IntArray:
        """The rows' current generations (pass them to :meth:`counts`; do not modify)."""
        return columns.generations.copy()

    def counts(
        self,
        infos: Sequence[fw.NodeInfo],
        generations: IntArray,
        selector: LabelSelector | None,
        namespace: str,
    ) -> IntArray:
        """The per-row counts for ``selector`` in ``namespace`` (read-only: do not modify)."""
        n = len(infos)
        if selector is None or selector.is_empty:
            return np.zeros(n, dtype=np.int64)
        key = _selector_key(selector, namespace)
        entry = self._entries.pop(key, None)
        if entry is None or len(entry[0]) != n:
            counts = np.fromiter(
                (count_pods_match_selector(info.pods, selector, namespace) for info in infos),
                dtype=np.int64,
                count=n,
            )
        else:
            seen, counts = entry
            if seen is not generations:
                for row in np.flatnonzero(seen != generations).tolist():
                    counts[row] = count_pods_match_selector(infos[row].pods, selector, namespace)
        self._entries[key] = (generations, counts)  # most recently used last
        while len(self._entries) > self._limit:
            del self._entries[next(iter(self._entries))]
        return counts


def _included(
    pod: Pod, node: Node, required: RequiredNodeAffinity, affinity: bool, taints: bool
) -> bool:
    # SpreadConstraint.match_node_inclusion_policies with the two policies as flags.
    if affinity and not required.matches(node):
        return False
    return not (
        taints
        and find_matching_untolerated_taint(
            node.spec.taints, pod.spec.tolerations, do_not_schedule_taints_filter
        )
        is not None
    )


class _Inclusion:
    """Per-row masks of the nodes the inclusion policies keep, one per policy pair, built on
    demand from a base mask (rows outside it are never looked at)."""

    __slots__ = ("_base", "_columns", "_masks", "_pod", "_required")

    def __init__(
        self, pod: Pod, required: RequiredNodeAffinity, columns: fw.NodeColumns, base: BoolArray
    ) -> None:
        self._pod = pod
        self._required = required
        self._columns = columns
        self._base = base
        self._masks: dict[tuple[bool, bool], BoolArray] = {}

    def mask(self, c: SpreadConstraint) -> BoolArray:
        affinity = (
            c.node_affinity_policy == NODE_INCLUSION_POLICY_HONOR
            and not self._required.matches_every_node
        )
        taints = c.node_taints_policy == NODE_INCLUSION_POLICY_HONOR
        if not affinity and not taints:
            return self._base
        mask = self._masks.get((affinity, taints))
        if mask is None:
            mask = self._base.copy()
            # Without NoSchedule/NoExecute taints a node passes the taint policy untouched.
            candidates = mask if affinity else mask & self._columns.hard_taints
            infos = self._columns.infos
            pod = self._pod
            required = self._required
            for row in np.flatnonzero(candidates).tolist():
                node = infos[row].node
                if node is None or not _included(pod, node, required, affinity, taints):
                    mask[row] = False
            self._masks[(affinity, taints)] = mask
        return mask


def critical_paths(
    values: Sequence[str],
    nums: Sequence[int],
    *,
    array: IntArray | None = None,
    loop_below: int = _SHORT,
) -> CriticalPaths:
    """What :meth:`CriticalPaths.update` leaves after ``(values[i], nums[i])`` in order, the
    values distinct, computed without the loop.

    The update keeps the first minimum in slot 0; slot 1 ends with the first minimum of the
    sequence made of slot 0's holder just before the global minimum arrived (the first
    minimum of the prefix) followed by everything after the global minimum. Sequences up to
    ``loop_below`` long run the update loop, which is quicker there. ``array``, when given,
    holds ``nums`` as int64 already.
    """
    k = len(nums)
    if (
        k <= loop_below
        or "" in values
        or (max(nums) if array is None else int(array.max())) >= _MAX_INT32
    ):
        # Few domains: the loop is quicker. The empty value is the slots' initial name and
        # counts at MaxInt32 never enter: leave those to the update itself too.
        paths = CriticalPaths()
        for value, num in zip(values, nums, strict=True):
            paths.update(value, num)
        return paths
    arr = np.asarray(nums, dtype=np.int64) if array is None else array
    i0 = int(np.argmin(arr))
    second = -1
    if i0 > 0:
        second = int(np.argmin(arr[:i0]))
    if i0 + 1 < k:
        j = i0 + 1 + int(np.argmin(arr[i0 + 1 :]))
        if second < 0 or arr[j] < arr[second]:
            second = j
    if second < 0:
        return CriticalPaths(values[i0], int(arr[i0]))
    return CriticalPaths(values[i0], int(arr[i0]), values[second], int(arr[second]))


def _domain_totals(
    codes: npt.NDArray[np.int32], weights: IntArray, size: int
) -> tuple[npt.NDArray[np.intp], IntArray | None]:
    """The codes present, in order of first appearance, and the summed weights of every code
    (``None`` beyond float64's exact range, then the caller sums in Python)."""
    n = len(codes)
    if not n:
        return np.zeros(0, dtype=np.intp), np.zeros(size, dtype=np.int64)
    first = np.full(size, n, dtype=np.intp)
    np.minimum.at(first, codes, np.arange(n, dtype=np.intp))
    present = np.flatnonzero(first < n)
    order = present[np.argsort(first[present], kind="stable")]
    if int(weights.sum()) >= _SAFE:
        return order, None
    return order, np.bincount(codes, weights=weights, minlength=size).astype(np.int64)


def _python_totals(
    codes: npt.NDArray[np.int32], weights: IntArray, order: npt.NDArray[np.intp]
) -> list[int]:
    # Exact sums for counts beyond float64 (never with real pod counts).
    totals: dict[int, int] = dict.fromkeys(order.tolist(), 0)
    for code, w in zip(codes.tolist(), weights.tolist(), strict=True):
        totals[code] += w
    return list(totals.values())


def _labels_and_inclusion(
    pod: Pod,
    required: RequiredNodeAffinity,
    constraints: Sequence[SpreadConstraint],
    columns: fw.NodeColumns,
) -> tuple[list[fw.LabelColumn], _Inclusion]:
    """Each constraint's label column, and the inclusion policies over the rows carrying
    every topology key (a node-less row carries none)."""
    labels = [columns.labels(c.topology_key) for c in constraints]
    base = np.ones(columns.size, dtype=np.bool_)
    for column in labels:
        base &= column.codes >= 0
    return labels, _Inclusion(pod, required, columns, base)


def pre_filter_state(
    pod: Pod,
    constraints: list[SpreadConstraint],
    columns: fw.NodeColumns,
    row_counts: RowCounts,
) -> PreFilterState:
    """:func:`~.filtering.cal_pre_filter_state` over every row of ``columns``; the state also
    carries the counts by label code for :func:`filter_verdicts`."""
    required = RequiredNodeAffinity(pod)
    infos = columns.infos
    labels, inclusion = _labels_and_inclusion(pod, required, constraints, columns)
    generations = row_counts.generations(columns)
    namespace = pod.namespace
    counts: list[dict[str, int]] = []
    paths: list[CriticalPaths] = []
    coded: list[tuple[fw.LabelColumn, IntArray]] | None = []
    for c, column in zip(constraints, labels, strict=True):
        mask = inclusion.mask(c)
        codes = column.codes[mask]
        weights = row_counts.counts(infos, generations, c.selector, namespace)[mask]
        size = len(column.values)
        order, by_code = _domain_totals(codes, weights, size)
        ordered: IntArray | None = None
        if by_code is None:
            totals = _python_totals(codes, weights, order)
            coded = None
        else:
            ordered = by_code[order]
            totals = ordered.tolist()
            if coded is not None:
                # One spare slot, 0, for the rows lacking the label (code -1).
                coded.append((column, np.append(by_code, 0)))
        names = list(map(column.values.__getitem__, order.tolist()))
        counts.append(dict(zip(names, totals, strict=True)))
        paths.append(critical_paths(names, totals, array=ordered))
    self_match = [1 if c.matches(pod.labels) else 0 for c in constraints]
    s = PreFilterState(constraints, paths, counts, self_match, required)
    s.coded_counts = coded
    return s


def _node_less(columns: fw.NodeColumns, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
    """The rows (of ``rows``) whose NodeInfo has no Node."""
    infos = columns.infos
    return np.array([r for r in rows.tolist() if infos[r].node is None], dtype=np.intp).reshape(-1)


def _table(counts: dict[str, int], code_of: dict[str, int], size: int) -> IntArray | None:
    """``counts`` indexed by label code, with one spare slot at the end (index ``-1``, for the
    rows lacking the label, and ``size``, for values no row has) left at 0."""
    table = np.zeros(size + 1, dtype=np.int64)
    if not counts:
        return table
    if max(counts.values()) >= _SAFE or min(counts.values()) <= -_SAFE:
        return None
    codes = np.fromiter(
        map(code_of.get, counts, repeat(size, len(counts))), dtype=np.intp, count=len(counts)
    )
    table[codes] = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
    table[size] = 0
    return table


def filter_verdicts(s: PreFilterState, columns: fw.NodeColumns) -> npt.NDArray[np.int8] | None:
    """:func:`~.filtering.filter_node`'s verdict on every row: REJECT for a missing topology
    key or a broken ``maxSkew``, PASS otherwise, CHECK on node-less rows (an error there)."""
    size = columns.size
    reject = np.zeros(size, dtype=np.bool_)
    missing_first: BoolArray | None = None
    coded = s.coded_counts
    for i, c in enumerate(s.constraints):
        column = columns.labels(c.topology_key)
        codes = column.codes
        table: IntArray | None
        if (
            coded is not None
            and coded[i][0] is column
            and len(coded[i][1]) == len(column.values) + 1
        ):
            table = coded[i][1]  # PreFilter's own counts, by code
        else:
            table = _table(s.tp_value_to_match_num[i], column.code_of, len(column.values))
        if table is None:
            return None
        offset = s.self_match[i] - s.min_match_num(i, c.min_domains)
        if not (-_SAFE < offset < _SAFE and -_SAFE < c.max_skew < _SAFE):
            return None
        missing = codes < 0
        if missing_first is None:
            missing_first = missing
        reject |= missing
        reject |= table[codes] + offset > c.max_skew
    verdicts = reject.view(np.int8) * np.int8(fw.FILTER_REJECT)
    # A row without a Node has no labels at all, so it misses the first key (or, with no
    # constraints, every row is a candidate).
    candidates = (
        np.flatnonzero(missing_first)
        if missing_first is not None
        else np.arange(size, dtype=np.intp)
    )
    if len(candidates):
        verdicts[_node_less(columns, candidates)] = fw.FILTER_CHECK
    return verdicts


def pre_score_counts(
    s: PreScoreState, pod: Pod, columns: fw.NodeColumns, row_counts: RowCounts
) -> None:
    """PreScore's counting loop over every row of ``columns`` (every topology key required):
    add each row's matching pods to its registered domain."""
    constraints = s.constraints
    required = RequiredNodeAffinity(pod)
    infos = columns.infos
    labels, inclusion = _labels_and_inclusion(pod, required, constraints, columns)
    generations: IntArray | None = None
    namespace = pod.namespace
    for i, c in enumerate(constraints):
        domains = s.topology_value_to_pod_counts[i]
        if not domains:
            continue  # hostname constraints register nothing; Score counts on the node
        column = labels[i]
        code_of = column.code_of
        registered = np.zeros(len(column.values) + 1, dtype=np.bool_)
        for value in domains:
            code = code_of.get(value)
            if code is not None:
                registered[code] = True
        codes = column.codes
        mask = inclusion.mask(c) & registered[codes]
        if generations is None:
            generations = row_counts.generations(columns)
        per_row = row_counts.counts(infos, generations, c.selector, namespace)
        weights = per_row[mask]
        order, by_code = _domain_totals(codes[mask], weights, len(column.values))
        if by_code is None:
            totals = _python_totals(codes[mask], weights, order)
        else:
            totals = by_code[order].tolist()
        for code, total in zip(order.tolist(), totals, strict=True):
            domains[column.values[code]] += total


def score_rows(
    s: PreScoreState,
    pod: Pod,
    columns: fw.NodeColumns,
    rows: npt.NDArray[np.intp],
    row_counts: RowCounts,
) -> IntArray | None:
    """:func:`~.scoring.score_node` of each row in ``rows``; ``None`` when a row has no Node
    (the per-node path raises) or a score would leave the exact range."""
    rows = np.asarray(rows, dtype=np.intp)
    n = len(rows)
    constraints = s.constraints
    if not n:
        return np.zeros(0, dtype=np.int64)
    if not constraints:
        if len(_node_less(columns, rows)):
            return None
        return np.zeros(n, dtype=np.int64)
    infos = columns.infos
    generations: IntArray | None = None
    score = np.zeros(n, dtype=np.float64)
    for i, c in enumerate(constraints):
        column = columns.labels(c.topology_key)
        codes = column.codes[rows]
        present = codes >= 0
        if i == 0 and not present.all() and len(_node_less(columns, rows[~present])):
            return None
        if c.topology_key == LABEL_HOSTNAME:
            if generations is None:
                generations = row_counts.generations(columns)
            per_row = row_counts.counts(infos, generations, c.selector, pod.namespace)
            cnt = per_row[rows]
        else:
            table = _table(s.topology_value_to_pod_counts[i], column.code_of, len(column.values))
            if table is None:
                return None
            cnt = table[codes]
        if len(cnt) and int(np.abs(cnt).max()) >= _SAFE:
            return None
        # Same float64 steps as the per-node sum: cnt * weight + (maxSkew - 1), then added.
        term = cnt.astype(np.float64) * s.topology_normalizing_weight[i] + float(c.max_skew - 1)
        score = np.where(present, score + term, score)
    if not np.isfinite(score).all() or float(np.abs(score).max()) >= _SAFE:
        return None
    # go_round: half away from zero.
    whole = np.trunc(score)
    whole += np.where(np.abs(score - whole) >= 0.5, np.sign(score), 0.0)
    result = whole.astype(np.int64)
    if s.ignored_nodes:
        index = columns.index
        ignored = [index[name] for name in s.ignored_nodes if name in index]
        if ignored:
            result[np.isin(rows, np.array(ignored, dtype=np.intp))] = 0
    return result


def normalize_scores(s: PreScoreState, scores: IntArray) -> IntArray | None:
    """:func:`~.scoring.normalize` over an array; ``None`` when some node is ignored (the
    per-node form needs the names) or a value leaves the exact range."""
    if s.ignored_nodes:
        return None
    values = np.asarray(scores, dtype=np.int64)
    if not len(values):
        return values.copy()
    lo = int(values.min())
    hi = int(values.max())
    if not -_SAFE < lo or not hi < _SAFE:
        return None
    # The per-node loop starts from MaxInt64 and 0.
    min_score = lo
    max_score = max(0, hi)
    invalid = values == -1
    if max_score == 0:
        out = np.full(len(values), fw.MAX_NODE_SCORE, dtype=np.int64)
    else:
        out = fw.MAX_NODE_SCORE * (max_score + min_score - values) // max_score
    out[invalid] = 0
    return out
