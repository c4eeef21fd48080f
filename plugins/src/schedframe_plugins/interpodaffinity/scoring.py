"""InterPodAffinity's PreScore, Score and NormalizeScore.

PreScore sums weights per topology pair: the incoming pod's preferred affinity (+) and
anti-affinity (-) terms matched by existing pods, and the existing pods' required affinity
(``hardPodAffinityWeight``), preferred affinity (+) and anti-affinity (-) terms the incoming
pod matches. A node's raw score is the sum over the pairs its labels carry; normalisation maps
the lowest raw score to 0 and the highest to 100. The weights are summed from the per-domain
sums of :mod:`._sums` (each distinct term matched once); ``score_batch`` and
``normalize_batch`` do Score and NormalizeScore over NumPy arrays.

Upstream: ``pkg/scheduler/framework/plugins/interpodaffinity/scoring.go``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Final

from schedframe import framework as fw
from schedframe.framework import (
    AffinityTerm,
    Code,
    CycleState,
    NodeInfo,
    NodeScoreList,
    PodInfo,
    Status,
    WeightedAffinityTerm,
)
from schedframe_plugins.interpodaffinity._parse import pod_parse_error
from schedframe_plugins.interpodaffinity._sums import ClusterSums, Domains, SumsCache
from schedframe_plugins.interpodaffinity.filtering import (
    NO_LABELS,
    get_namespace_labels_snapshot,
    merge_affinity_term_namespaces_if_not_empty,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from schedframe.objects import Pod

    IntArray = npt.NDArray[np.int64]
    RowArray = npt.NDArray[np.intp]

__all__ = ["PRE_SCORE_STATE_KEY", "ScoringMixin"]

#: topology key -> topology value -> summed weight.
ScoreMap = dict[str, dict[str, int]]


class _PreScoreState:
    """The summed weights per topology pair; read-only once PreScore wrote it."""

    __slots__ = ("topology_score",)

    def __init__(self, topology_score: ScoreMap) -> None:
        self.topology_score = topology_score

    def clone(self) -> _PreScoreState:
        """Shared as is: nothing changes it after PreScore (upstream returns itself too)."""
        return self


#: The key PreScore stores its state under (upstream ``PreScoreInterPodAffinity``).
PRE_SCORE_STATE_KEY: Final = fw.StateKey[_PreScoreState]("PreScoreInterPodAffinity")

_MISSING_STATE_MESSAGE: Final = (
    f'failed to read "{PRE_SCORE_STATE_KEY.name}" from cycleState: not found'
)
_SKIP: Final = Status(Code.SKIP)
_MAX_NODE_SCORE: Final = float(fw.MAX_NODE_SCORE)
#: Raw scores and their spread must stay within int64 for the batch forms.
_INT64_LIMIT: Final = 2**63


def _add_domains(scores: ScoreMap, domains: Domains, weight: int) -> None:
    # ``domains`` counts instances per domain of its key; each instance weighs ``weight``. A
    # domain gets an entry as soon as one instance is there, even when the weights cancel.
    counts = domains.values
    if not counts:
        return
    values = scores.get(domains.key)
    if values is None:
        values = scores[domains.key] = {}
    get = values.get
    for value, n in counts.items():
        values[value] = get(value, 0) + weight * n


def _merge_weighted(
    terms: Sequence[WeightedAffinityTerm], handle: fw.Handle
) -> tuple[WeightedAffinityTerm, ...]:
    merged: list[WeightedAffinityTerm] = []
    for weighted in terms:
        term: AffinityTerm = merge_affinity_term_namespaces_if_not_empty(weighted.term, handle)
        merged.append(
            weighted
            if term is weighted.term
            else WeightedAffinityTerm(term=term, weight=weighted.weight)
        )
    return tuple(merged)


def _add(scores: ScoreMap, labels: Mapping[str, str], key: str, value: int) -> None:
    topology_value = labels.get(key)
    if topology_value is None:
        return
    values = scores.get(key)
    if values is None:
        scores[key] = {topology_value: value}
    else:
        values[topology_value] = values.get(topology_value, 0) + value


def _process_terms(
    scores: ScoreMap,
    terms: Sequence[WeightedAffinityTerm],
    pod: Pod,
    namespace_labels: Mapping[str, str],
    labels: Mapping[str, str],
    sign: int,
) -> None:
    for weighted in terms:
        term = weighted.term
        if term.matches(pod, namespace_labels):
            _add(scores, labels, term.topology_key, weighted.weight * sign)


def _scores_pod_by_pod(
    nodes: Sequence[NodeInfo],
    has_constraints: bool,
    pod: Pod,
    namespace_labels: Mapping[str, str],
    preferred_affinity: Sequence[WeightedAffinityTerm],
    preferred_anti_affinity: Sequence[WeightedAffinityTerm],
    hard_weight: int,
) -> ScoreMap:
    """PreScore's sums, every existing pod on ``nodes`` against every term in turn."""
    scores: ScoreMap = {}
    for node_info in nodes:
        node = node_info.node
        if node is None:
            continue
        labels = node.metadata.labels
        if not labels:
            # A node without labels is in no topology domain.
            continue
        existing_pods = node_info.pods if has_constraints else node_info.pods_with_affinity
        for existing in existing_pods:
            other = existing.pod
            # The incoming pod's terms need no namespace labels: their selectors are folded
            # into namespaces.
            _process_terms(scores, preferred_affinity, other, NO_LABELS, labels, 1)
            _process_terms(scores, preferred_anti_affinity, other, NO_LABELS, labels, -1)
            if hard_weight > 0:
                for term in existing.required_affinity_terms:
                    if term.matches(pod, namespace_labels):
                        _add(scores, labels, term.topology_key, hard_weight)
            _process_terms(
                scores, existing.preferred_affinity_terms, pod, namespace_labels, labels, 1
            )
            _process_terms(
                scores, existing.preferred_anti_affinity_terms, pod, namespace_labels, labels, -1
            )
    return scores


def _scores_from_sums(
    sums: ClusterSums,
    pod: Pod,
    namespace_labels: Mapping[str, str],
    preferred_affinity: Sequence[WeightedAffinityTerm],
    preferred_anti_affinity: Sequence[WeightedAffinityTerm],
    hard_weight: int,
    needed: bool,
) -> ScoreMap:
    """PreScore's sums from ``sums`` (the same as :func:`_scores_pod_by_pod`): each distinct
    term matched once against each distinct kind of pod, the domains weighed in bulk.

    ``needed`` is false when no pod has affinity terms and the pod has no preferred ones:
    nothing can score then.
    """
    scores: ScoreMap = {}
    if not needed:
        return scores
    sums.sync()
    if preferred_affinity or preferred_anti_affinity:
        # The incoming pod's terms against every pod. They need no namespace labels: their
        # selectors are folded into namespaces.
        pods = sums.pods
        for terms, sign in ((preferred_affinity, 1), (preferred_anti_affinity, -1)):
            for weighted in terms:
                term = weighted.term
                key = term.topology_key
                weight = weighted.weight * sign
                for kind in pods.subjects():
                    if term.matches(sums.example(kind), NO_LABELS):
                        _add_domains(scores, pods.domains(kind, key), weight)
    # The existing pods' terms against the incoming pod.
    existing = sums.scoring_terms
    for subject in existing.subjects():
        term, weight, required = subject
        if required:
            if hard_weight <= 0:
                continue
            weight = hard_weight
        if term.matches(pod, namespace_labels):
            _add_domains(scores, existing.domains(subject, term.topology_key), weight)
    return scores


class ScoringMixin:
    """PreScore, Score and NormalizeScore of :class:`InterPodAffinity`."""

    _handle: fw.Handle
    _hard_pod_affinity_weight: int
    _ignore_preferred_terms_of_existing_pods: bool
    _sums: SumsCache

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Sum the weights per topology pair; Skip when no term matched anywhere."""
        affinity = pod.spec.affinity
        has_preferred_affinity = (
            affinity is not None
            and affinity.pod_affinity is not None
            and len(affinity.pod_affinity.preferred) > 0
        )
        has_preferred_anti_affinity = (
            affinity is not None
            and affinity.pod_anti_affinity is not None
            and len(affinity.pod_anti_affinity.preferred) > 0
        )
        has_constraints = has_preferred_affinity or has_preferred_anti_affinity

        # Optionally leave existing pods' preferences out when the pod has none of its own.
        if self._ignore_preferred_terms_of_existing_pods and not has_constraints:
            return _SKIP

        # Upstream parses the pod here too (normally PreFilter has refused it already).
        parse_error = pod_parse_error(pod)
        if parse_error is not None:
            return Status(Code.ERROR, f"failed to parse pod: {parse_error}")

        handle = self._handle
        lister = handle.snapshot_shared_lister().node_infos
        if not has_constraints and not lister.have_pods_with_affinity_list():
            return _SKIP  # no term anywhere: what the sums below would come to

        pod_info = PodInfo(pod)
        preferred_affinity = _merge_weighted(pod_info.preferred_affinity_terms, handle)
        preferred_anti_affinity = _merge_weighted(pod_info.preferred_anti_affinity_terms, handle)
        namespace_labels = get_namespace_labels_snapshot(pod.namespace, handle)
        hard_weight = self._hard_pod_affinity_weight

        cache = self._sums
        with cache.lock:
            sums = cache.of(lister)
            if sums is not None:
                scores = _scores_from_sums(
                    sums,
                    pod,
                    namespace_labels,
                    preferred_affinity if has_constraints else (),
                    preferred_anti_affinity if has_constraints else (),
                    hard_weight,
                    has_constraints or bool(lister.have_pods_with_affinity_list()),
                )
            else:
                # Without preferred terms of its own, only pods with affinity terms can score.
                scores = _scores_pod_by_pod(
                    lister.list() if has_constraints else lister.have_pods_with_affinity_list(),
                    has_constraints,
                    pod,
                    namespace_labels,
                    preferred_affinity,
                    preferred_anti_affinity,
                    hard_weight,
                )

        if not scores:
            return _SKIP
        state[PRE_SCORE_STATE_KEY] = _PreScoreState(scores)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """The summed weight of the topology pairs on the node (negative for anti-affinity)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            raise RuntimeError(_MISSING_STATE_MESSAGE)
        node = node_info.node
        if node is None:
            raise RuntimeError("node not found")
        labels = node.metadata.labels
        total = 0
        for key, values in s.topology_score.items():
            value = labels.get(key)
            if value is not None:
                total += values.get(value, 0)
        return total

    def normalize_score(self, state: CycleState, pod: Pod, scores: NodeScoreList) -> Status | None:
        """Map raw scores linearly so the lowest becomes 0 and the highest 100."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return Status.from_error(RuntimeError(_MISSING_STATE_MESSAGE))
        if not s.topology_score:
            return None
        values = scores.scores
        if not values:
            return None
        lowest = min(values)
        spread = max(values) - lowest
        if spread > 0:
            # Float arithmetic then truncation, exactly as upstream computes it.
            divisor = float(spread)
            values[:] = [int(_MAX_NODE_SCORE * (float(v - lowest) / divisor)) for v in values]
        else:
            values[:] = [0] * len(values)
        return None

    def score_batch(
        self, state: CycleState, pod: Pod, columns: fw.NodeColumns, rows: RowArray
    ) -> IntArray | None:
        """:meth:`score` of ``rows``: per topology key, the weights looked up by label code.

        ``None`` when a row has no Node (:meth:`score` raises) or a sum might leave int64.
        """
        import numpy as np

        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return None
        totals = np.zeros(len(rows), dtype=np.int64)
        bound = 0
        probe = None
        for key, values in s.topology_score.items():
            if not values:
                continue
            bound += max(map(abs, values.values()))
            if bound >= _INT64_LIMIT:
                return None
            column = columns.labels(key)
            # One extra entry, 0, answers code -1 (label missing) and takes the values no
            # node has.
            missing = len(column.values)
            weights = np.zeros(missing + 1, dtype=np.int64)
            weights[list(map(column.code_of.get, values, repeat(missing, len(values))))] = list(
                values.values()
            )
            weights[missing] = 0
            codes = column.codes[rows]
            probe = codes
            totals += weights[codes]
        infos = columns.infos
        candidates = rows.tolist() if probe is None else rows[probe < 0].tolist()
        if any(infos[row].node is None for row in candidates):
            return None
        return totals

    def normalize_batch(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray | None:
        """:meth:`normalize_score` on an array, with the same float operations."""
        import numpy as np

        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return None
        if not s.topology_score or not len(scores):
            return scores
        lowest = int(scores.min())
        spread = int(scores.max()) - lowest
        if spread <= 0:
            return np.zeros(len(scores), dtype=np.int64)
        if spread >= _INT64_LIMIT:
            return None
        shifted = (scores - lowest).astype(np.float64)
        scaled: IntArray = (_MAX_NODE_SCORE * (shifted / float(spread))).astype(np.int64)
        return scaled
