"""InterPodAffinity's PreFilter, PreFilterExtensions and Filter.

PreFilter counts, per topology pair ``(topology key, node label value)``:

* how many existing pods have a required anti-affinity term the incoming pod matches;
* how many existing pods match the incoming pod's required affinity terms (a pod counts only
  when it matches *all* of them, once per term);
* how many existing pods match each of the incoming pod's required anti-affinity terms.

Filter then answers each node with a few dictionary lookups on the node's labels, and
``filter_batch`` answers every node at once from the snapshot's label columns.

The counts are not taken pod by pod: :mod:`._sums` keeps, across pods, the per-domain counts of
each distinct existing term and of each distinct kind of pod, so PreFilter matches each of
those once and takes its domains in bulk. The pod-by-pod functions remain as the reference
(and for node listers other than a Snapshot).

Upstream: ``pkg/scheduler/framework/plugins/interpodaffinity/filtering.go``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Final

import attrs

from schedframe import framework as fw
from schedframe.framework import AffinityTerm, Code, CycleState, NodeInfo, PodInfo, Status
from schedframe_plugins.interpodaffinity._parse import pod_parse_error
from schedframe_plugins.interpodaffinity._sums import ClusterSums, Domains, SumsCache, sum_domains

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from schedframe.objects import Node, Pod

    BoolArray = npt.NDArray[np.bool_]
    CodeArray = npt.NDArray[np.int32]
    VerdictArray = npt.NDArray[np.int8]

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "PRE_FILTER_STATE_KEY",
    "FilteringMixin",
    "get_namespace_labels_snapshot",
    "merge_affinity_term_namespaces_if_not_empty",
    "pod_matches_all_affinity_terms",
    "pod_matches_any_affinity_terms",
]

#: The node hosts (or shares a topology domain with) an existing pod whose required
#: anti-affinity selects the incoming pod.
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: Final = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
#: The incoming pod's required affinity is not met in the node's topology domains.
ERR_REASON_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod affinity rules"
#: The incoming pod's required anti-affinity selects a pod in one of the node's domains.
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod anti-affinity rules"

#: Namespace labels where upstream passes a nil label set: a nil set matches as an empty one.
NO_LABELS: Final[Mapping[str, str]] = {}

#: ``(topology key, topology value)``; a node label item is directly such a pair.
TopologyPair = tuple[str, str]
TopologyCounts = dict[TopologyPair, int]


class _CountParts:
    """The :class:`Domains` PreFilter took each of its three counts from: a count is their
    sum, so a pair counts (positively) when one of them has its value. All are shared, hence
    never change."""

    __slots__ = ("affinity", "anti_affinity", "existing_anti_affinity")

    def __init__(
        self,
        existing_anti_affinity: list[Domains],
        affinity: list[Domains],
        anti_affinity: list[Domains],
    ) -> None:
        for domains in (*existing_anti_affinity, *affinity, *anti_affinity):
            domains.shared = True
        self.existing_anti_affinity = existing_anti_affinity
        self.affinity = affinity
        self.anti_affinity = anti_affinity


class _PreFilterState:
    """What PreFilter computed for one pod; AddPod/RemovePod update the counts in place.

    The counts may be given as :class:`_CountParts`, and are then added up on first use (the
    batch filter reads the parts and never needs them).
    """

    __slots__ = (
        "_affinity_counts",
        "_anti_affinity_counts",
        "_existing_anti_affinity_counts",
        "affinity_keys",
        "affinity_terms",
        "anti_affinity_keys",
        "anti_affinity_terms",
        "matches_own_affinity",
        "namespace_labels",
        "parts",
        "pod",
    )

    def __init__(
        self,
        *,
        pod: Pod,
        affinity_terms: tuple[AffinityTerm, ...],
        anti_affinity_terms: tuple[AffinityTerm, ...],
        namespace_labels: Mapping[str, str],
        existing_anti_affinity_counts: TopologyCounts | None = None,
        affinity_counts: TopologyCounts | None = None,
        anti_affinity_counts: TopologyCounts | None = None,
        parts: _CountParts | None = None,
    ) -> None:
        self.pod = pod
        # The incoming pod's required terms, namespace selectors already folded into namespaces.
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.affinity_keys = tuple(t.topology_key for t in affinity_terms)
        self.anti_affinity_keys = tuple(t.topology_key for t in anti_affinity_terms)
        # The pod matching its own affinity terms never changes, so it is decided once here.
        self.matches_own_affinity = pod_matches_all_affinity_terms(affinity_terms, pod)
        self.namespace_labels = namespace_labels
        if parts is None and (
            existing_anti_affinity_counts is None
            or affinity_counts is None
            or anti_affinity_counts is None
        ):
            raise TypeError("_PreFilterState needs the three counts or their parts")
        self._existing_anti_affinity_counts = existing_anti_affinity_counts
        self._affinity_counts = affinity_counts
        self._anti_affinity_counts = anti_affinity_counts
        # Where the counts come from; dropped once the counts are updated.
        self.parts = parts

    @property
    def existing_anti_affinity_counts(self) -> TopologyCounts:
        """Pairs -> existing pods whose required anti-affinity selects the incoming pod."""
        counts = self._existing_anti_affinity_counts
        if counts is None:
            assert self.parts is not None
            counts = self._existing_anti_affinity_counts = sum_domains(
                self.parts.existing_anti_affinity
            )
        return counts

    @property
    def affinity_counts(self) -> TopologyCounts:
        """Pairs -> existing pods matching all the incoming pod's required affinity terms
        (once per term)."""
        counts = self._affinity_counts
        if counts is None:
            assert self.parts is not None
            counts = self._affinity_counts = sum_domains(self.parts.affinity)
        return counts

    @property
    def anti_affinity_counts(self) -> TopologyCounts:
        """Pairs -> existing pods matching each of the incoming pod's required anti-affinity
        terms."""
        counts = self._anti_affinity_counts
        if counts is None:
            assert self.parts is not None
            counts = self._anti_affinity_counts = sum_domains(self.parts.anti_affinity)
        return counts

    def clone(self) -> _PreFilterState:
        """A copy whose counts can be updated without touching this one."""
        other = _PreFilterState.__new__(_PreFilterState)
        other.pod = self.pod
        other.affinity_terms = self.affinity_terms
        other.anti_affinity_terms = self.anti_affinity_terms
        other.affinity_keys = self.affinity_keys
        other.anti_affinity_keys = self.anti_affinity_keys
        other.matches_own_affinity = self.matches_own_affinity
        other.namespace_labels = self.namespace_labels
        other._existing_anti_affinity_counts = _copy(self._existing_anti_affinity_counts)
        other._affinity_counts = _copy(self._affinity_counts)
        other._anti_affinity_counts = _copy(self._anti_affinity_counts)
        other.parts = self.parts
        return other

    def update_with_pod(self, pod_info: PodInfo, node: Node, multiplier: int) -> None:
        """Account ``pod_info`` as added to (``+1``) or removed from (``-1``) ``node``."""
        labels = node.metadata.labels
        counts = self.existing_anti_affinity_counts
        affinity_counts = self.affinity_counts
        anti_affinity_counts = self.anti_affinity_counts
        self.parts = None
        for term in pod_info.required_anti_affinity_terms:
            if term.matches(self.pod, self.namespace_labels):
                _update(counts, labels, term.topology_key, multiplier)
        other = pod_info.pod
        if pod_matches_all_affinity_terms(self.affinity_terms, other):
            for key in self.affinity_keys:
                _update(affinity_counts, labels, key, multiplier)
        # The incoming pod's terms have their namespace selectors folded into namespaces, so
        # the other pod's namespace labels are not needed.
        for term in self.anti_affinity_terms:
            if term.matches(other, NO_LABELS):
                _update(anti_affinity_counts, labels, term.topology_key, multiplier)


def _copy(counts: TopologyCounts | None) -> TopologyCounts | None:
    return None if counts is None else dict(counts)


#: The key PreFilter stores its state under (upstream ``PreFilterInterPodAffinity``).
PRE_FILTER_STATE_KEY: Final = fw.StateKey[_PreFilterState]("PreFilterInterPodAffinity")

_MISSING_STATE_MESSAGE: Final = (
    f'error reading "{PRE_FILTER_STATE_KEY.name}" from cycleState: not found'
)
_AFFINITY_NOT_MATCH: Final = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH
)
_ANTI_AFFINITY_NOT_MATCH: Final = Status(
    Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH
)
_EXISTING_ANTI_AFFINITY_NOT_MATCH: Final = Status(
    Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
)
_SKIP: Final = Status(Code.SKIP)


def _missing_state() -> Status:
    return Status.from_error(RuntimeError(_MISSING_STATE_MESSAGE))


def _update(counts: TopologyCounts, labels: Mapping[str, str], key: str, value: int) -> None:
    # A node without the topology key is in no domain of that key and counts nowhere.
    topology_value = labels.get(key)
    if topology_value is None:
        return
    pair = (key, topology_value)
    count = counts.get(pair, 0) + value
    if count == 0:
        # Removals can bring a pair back to zero; such pairs are dropped, as upstream does.
        counts.pop(pair, None)
    else:
        counts[pair] = count


def pod_matches_all_affinity_terms(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """True when ``terms`` is not empty and ``pod`` matches every one of them.

    The terms are taken to be an incoming pod's, whose namespace selectors are already folded
    into their namespaces (or select everything), so no namespace labels are consulted.
    """
    if not terms:
        return False
    for term in terms:
        if not term.matches(pod, NO_LABELS):
            return False
    return True


def pod_matches_any_affinity_terms(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """True when ``pod`` matches at least one of ``terms`` (the anti-affinity reading)."""
    for term in terms:
        if term.matches(pod, NO_LABELS):
            return True
    return False


def merge_affinity_term_namespaces_if_not_empty(
    term: AffinityTerm, handle: fw.Handle
) -> AffinityTerm:
    """Fold a term's namespace selector into its namespaces, for an incoming pod's term.

    A missing selector (selects nothing) and an empty one (selects everything) are kept as
    they are; any other selector is replaced by the names of the namespaces it selects now,
    so matching the term later needs no namespace labels (upstream
    ``mergeAffinityTermNamespacesIfNotEmpty``).
    """
    selector = term.namespace_selector
    if selector is None or selector.is_empty:
        return term
    selected = {ns.name for ns in handle.namespaces() if selector.matches(ns.labels)}
    return attrs.evolve(term, namespaces=term.namespaces | selected, namespace_selector=None)


def merge_terms(terms: Iterable[AffinityTerm], handle: fw.Handle) -> tuple[AffinityTerm, ...]:
    """:func:`merge_affinity_term_namespaces_if_not_empty` over ``terms``."""
    return tuple(merge_affinity_term_namespaces_if_not_empty(t, handle) for t in terms)


def get_namespace_labels_snapshot(namespace: str, handle: fw.Handle) -> Mapping[str, str]:
    """The labels of ``namespace``; an unknown namespace has none (upstream logs and goes on)."""
    ns = handle.namespace(namespace)
    if ns is None:
        return NO_LABELS
    return ns.labels


def _existing_anti_affinity_counts(
    pod: Pod, namespace_labels: Mapping[str, str], nodes: Iterable[NodeInfo]
) -> TopologyCounts:
    # The plain computation, pod by pod: PreFilter takes the same counts from the
    # ClusterSums (tests hold the two equal).
    counts: TopologyCounts = {}
    for node_info in nodes:
        node = node_info.node
        if node is None:
            continue
        labels = node.metadata.labels
        for existing in node_info.pods_with_required_anti_affinity:
            for term in existing.required_anti_affinity_terms:
                if term.matches(pod, namespace_labels):
                    _update(counts, labels, term.topology_key, 1)
    return counts


def _incoming_affinity_anti_affinity_counts(
    affinity_terms: tuple[AffinityTerm, ...],
    anti_affinity_terms: tuple[AffinityTerm, ...],
    nodes: Iterable[NodeInfo],
) -> tuple[TopologyCounts, TopologyCounts]:
    # The plain computation, pod by pod (see _existing_anti_affinity_counts).
    affinity: TopologyCounts = {}
    anti_affinity: TopologyCounts = {}
    if not affinity_terms and not anti_affinity_terms:
        return affinity, anti_affinity
    affinity_keys = tuple(t.topology_key for t in affinity_terms)
    for node_info in nodes:
        node = node_info.node
        if node is None:
            continue
        labels = node.metadata.labels
        for existing in node_info.pods:
            other = existing.pod
            if affinity_terms and pod_matches_all_affinity_terms(affinity_terms, other):
                for key in affinity_keys:
                    _update(affinity, labels, key, 1)
            for term in anti_affinity_terms:
                if term.matches(other, NO_LABELS):
                    _update(anti_affinity, labels, term.topology_key, 1)
    return affinity, anti_affinity


def _same_nodes(nodes: Sequence[NodeInfo], listed: Sequence[NodeInfo]) -> bool:
    # PreFilter is handed the snapshot's own list; anything else is counted pod by pod.
    if nodes is listed:
        return True
    return len(nodes) == len(listed) and list(nodes) == list(listed)


def _pre_filter_from_sums(
    sums: ClusterSums,
    pod: Pod,
    namespace_labels: Mapping[str, str],
    affinity_terms: tuple[AffinityTerm, ...],
    anti_affinity_terms: tuple[AffinityTerm, ...],
    any_required_anti_affinity: bool,
) -> _PreFilterState | None:
    """PreFilter's state from ``sums``: each distinct existing anti-affinity term matched once,
    each distinct kind of pod (namespace and labels) matched once against the pod's terms, the
    domains taken in bulk. ``None`` for Skip."""
    if not any_required_anti_affinity and not affinity_terms and not anti_affinity_terms:
        return None
    sums.sync()
    existing: list[Domains] = []
    if any_required_anti_affinity:
        terms = sums.existing_anti_affinity
        for term in terms.subjects():
            if term.matches(pod, namespace_labels):
                domains = terms.domains(term, term.topology_key)
                if domains.values:
                    existing.append(domains)
    if not existing and not affinity_terms and not anti_affinity_terms:
        return None

    affinity: list[Domains] = []
    anti_affinity: list[Domains] = []
    if affinity_terms or anti_affinity_terms:
        pods = sums.pods
        affinity_keys = tuple(t.topology_key for t in affinity_terms)
        for kind in pods.subjects():
            example = sums.example(kind)
            if affinity_terms and pod_matches_all_affinity_terms(affinity_terms, example):
                affinity.extend(pods.domains(kind, key) for key in affinity_keys)
            for term in anti_affinity_terms:
                if term.matches(example, NO_LABELS):
                    anti_affinity.append(pods.domains(kind, term.topology_key))
    return _PreFilterState(
        pod=pod,
        affinity_terms=affinity_terms,
        anti_affinity_terms=anti_affinity_terms,
        namespace_labels=namespace_labels,
        parts=_CountParts(
            existing,
            [d for d in affinity if d.values],
            [d for d in anti_affinity if d.values],
        ),
    )


def _satisfy_pod_affinity(state: _PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = state.affinity_counts
    pods_exist = True
    for key in state.affinity_keys:
        value = labels.get(key)
        if value is None:
            # The node must carry every topology key the affinity names.
            return False
        if counts.get((key, value), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        # The first pod of a group with affinity to itself: when nothing in the cluster
        # matches the terms yet but the pod matches them, any node with the keys will do.
        return not counts and state.matches_own_affinity
    return True


def _satisfy_pod_anti_affinity(state: _PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = state.anti_affinity_counts
    if counts:
        for key in state.anti_affinity_keys:
            value = labels.get(key)
            if value is not None and counts.get((key, value), 0) > 0:
                return False
    return True


def _satisfy_existing_pods_anti_affinity(state: _PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = state.existing_anti_affinity_counts
    if not counts:
        return True
    # Any pair shared by the node's labels and the counts rejects the node; walk the
    # shorter of the two.
    if len(labels) <= len(counts):
        for item in labels.items():
            if counts.get(item, 0) > 0:
                return False
    else:
        for (key, value), count in counts.items():
            if count > 0 and labels.get(key) == value:
                return False
    return True


def _has_required_terms(pod: Pod) -> bool:
    """Whether the pod has a required pod-affinity or pod-anti-affinity term."""
    affinity = pod.spec.affinity
    if affinity is None:
        return False
    return bool(
        (affinity.pod_affinity is not None and affinity.pod_affinity.required)
        or (affinity.pod_anti_affinity is not None and affinity.pod_anti_affinity.required)
    )


class FilteringMixin:
    """PreFilter, PreFilterExtensions and Filter of :class:`InterPodAffinity`."""

    _handle: fw.Handle
    _sums: SumsCache

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> fw.PreFilterResult | Status | None:
        """Count the pairs Filter needs; Skip when neither side has required terms.

        A pod whose terms do not parse (a bad label value, key or operator) is
        UnschedulableAndUnresolvable ``parsing pod: ...``, as upstream's ``NewPodInfo`` fails.
        """
        parse_error = pod_parse_error(pod)
        if parse_error is not None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"parsing pod: {parse_error}")
        handle = self._handle
        lister = handle.snapshot_shared_lister().node_infos
        if not _has_required_terms(pod) and not lister.have_pods_with_required_anti_affinity_list():
            return _SKIP  # what the counts below would come to, without building them

        pod_info = PodInfo(pod)
        affinity_terms = merge_terms(pod_info.required_affinity_terms, handle)
        anti_affinity_terms = merge_terms(pod_info.required_anti_affinity_terms, handle)
        namespace_labels = get_namespace_labels_snapshot(pod.namespace, handle)

        cache = self._sums
        with cache.lock:
            sums = cache.of(lister)
            if sums is not None and _same_nodes(nodes, lister.list()):
                state_value = _pre_filter_from_sums(
                    sums,
                    pod,
                    namespace_labels,
                    affinity_terms,
                    anti_affinity_terms,
                    bool(lister.have_pods_with_required_anti_affinity_list()),
                )
                if state_value is None:
                    return _SKIP
                state[PRE_FILTER_STATE_KEY] = state_value
                return None

        existing = _existing_anti_affinity_counts(
            pod, namespace_labels, lister.have_pods_with_required_anti_affinity_list()
        )
        if not existing and not affinity_terms and not anti_affinity_terms:
            return _SKIP
        affinity, anti_affinity = _incoming_affinity_anti_affinity_counts(
            affinity_terms, anti_affinity_terms, nodes
        )
        state[PRE_FILTER_STATE_KEY] = _PreFilterState(
            pod=pod,
            affinity_terms=affinity_terms,
            anti_affinity_terms=anti_affinity_terms,
            namespace_labels=namespace_labels,
            existing_anti_affinity_counts=existing,
            affinity_counts=affinity,
            anti_affinity_counts=anti_affinity,
        )
        return None

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Count ``pod_info_to_add`` as running on ``node_info``."""
        return _update_state(state, pod_info_to_add, node_info, 1)

    def remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        """Stop counting ``pod_info_to_remove`` on ``node_info``."""
        return _update_state(state, pod_info_to_remove, node_info, -1)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Check the pod's affinity, its anti-affinity, then the existing pods' anti-affinity."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _missing_state()
        node = node_info.node
        if node is None:
            return Status(Code.ERROR, "node not found")
        labels = node.metadata.labels
        if s.affinity_keys and not _satisfy_pod_affinity(s, labels):
            return _AFFINITY_NOT_MATCH
        if not _satisfy_pod_anti_affinity(s, labels):
            return _ANTI_AFFINITY_NOT_MATCH
        if not _satisfy_existing_pods_anti_affinity(s, labels):
            return _EXISTING_ANTI_AFFINITY_NOT_MATCH
        return None

    def filter_batch(
        self, state: CycleState, pod: Pod, columns: fw.NodeColumns
    ) -> VerdictArray | None:
        """:meth:`filter` over every row of ``columns``: the same three checks, on the rows'
        label codes. Rows without a Node stay FILTER_CHECK (:meth:`filter` reports them)."""
        import numpy as np

        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return None
        parts = s.parts
        if parts is not None:
            existing = _Positive.of_parts(parts.existing_anti_affinity)
            affinity = _Positive.of_parts(parts.affinity)
            anti_affinity = _Positive.of_parts(parts.anti_affinity)
        else:
            existing = _Positive.of_counts(s.existing_anti_affinity_counts)
            affinity = _Positive.of_counts(s.affinity_counts)
            anti_affinity = _Positive.of_counts(s.anti_affinity_counts)

        size = columns.size
        reject = np.zeros(size, dtype=np.bool_)
        # Codes of one key column looked at; a row without a Node has -1 in every column.
        probe: CodeArray | None = None

        if s.affinity_keys:
            missing = np.zeros(size, dtype=np.bool_)
            all_exist = np.ones(size, dtype=np.bool_)
            for key in s.affinity_keys:
                column = columns.labels(key)
                codes = probe = column.codes
                missing |= codes < 0
                all_exist &= affinity.mask(column)[codes]
            if affinity.empty and s.matches_own_affinity:
                reject |= missing
            else:
                reject |= missing | ~all_exist

        if not anti_affinity.empty:
            for key in s.anti_affinity_keys:
                column = columns.labels(key)
                codes = probe = column.codes
                reject |= anti_affinity.mask(column)[codes]

        if not existing.empty:
            for key in existing.keys():
                column = columns.labels(key)
                codes = probe = column.codes
                reject |= existing.mask(column)[codes]

        if probe is None and s.anti_affinity_keys:
            probe = columns.labels(s.anti_affinity_keys[0]).codes
        verdicts = np.where(reject, np.int8(fw.FILTER_REJECT), np.int8(fw.FILTER_PASS))
        infos = columns.infos
        if probe is None:
            unknown = [row for row, info in enumerate(infos) if info.node is None]
        else:
            unknown = [row for row in np.flatnonzero(probe < 0).tolist() if infos[row].node is None]
        if unknown:
            verdicts[unknown] = fw.FILTER_CHECK
        return verdicts.astype(np.int8, copy=False)


class _Positive:
    """Which pairs one of PreFilter's counts counts positively, key by key, as masks over a
    label column's codes (see :meth:`Domains.mask`)."""

    __slots__ = ("_by_key", "_parts", "empty")

    def __init__(
        self,
        empty: bool,
        parts: Sequence[Domains] | None,
        by_key: dict[str, list[str]] | None,
    ) -> None:
        #: The counts hold no pair at all.
        self.empty = empty
        self._parts = parts
        self._by_key = by_key

    @classmethod
    def of_parts(cls, parts: Sequence[Domains]) -> _Positive:
        """From :class:`_CountParts` (every pair of every part positive)."""
        return cls(not parts, parts, None)

    @classmethod
    def of_counts(cls, counts: TopologyCounts) -> _Positive:
        """From a count dict, which AddPod/RemovePod may have brought below 1 in places."""
        by_key: dict[str, list[str]] = {}
        for (key, value), n in counts.items():
            if n > 0:
                values = by_key.get(key)
                if values is None:
                    by_key[key] = [value]
                else:
                    values.append(value)
        return cls(not counts, None, by_key)

    def keys(self) -> Iterable[str]:
        """The keys with a positive pair."""
        if self._parts is not None:
            return dict.fromkeys(d.key for d in self._parts)
        assert self._by_key is not None
        return self._by_key.keys()

    def mask(self, column: fw.LabelColumn) -> BoolArray:
        """True at the codes of the values of ``column.key`` counted positively; read-only."""
        import numpy as np

        key = column.key
        if self._parts is not None:
            masks = [d.mask(column) for d in self._parts if d.key == key]
        else:
            assert self._by_key is not None
            values = self._by_key.get(key)
            masks = [_value_mask(column, values)] if values else []
        if not masks:
            return np.zeros(len(column.values) + 1, dtype=np.bool_)
        combined = masks[0]
        for more in masks[1:]:
            combined = combined | more
        return combined


def _value_mask(column: fw.LabelColumn, values: Collection[str]) -> BoolArray:
    # As Domains.mask: True at the codes of ``values``, with a last entry, False, for -1.
    import numpy as np

    missing = len(column.values)
    mask = np.zeros(missing + 1, dtype=np.bool_)
    mask[list(map(column.code_of.get, values, repeat(missing, len(values))))] = True
    mask[missing] = False
    return mask


def _update_state(
    state: CycleState, pod_info: PodInfo, node_info: NodeInfo, multiplier: int
) -> Status | None:
    s = state.get(PRE_FILTER_STATE_KEY)
    if s is None:
        return _missing_state()
    node = node_info.node
    if node is not None:
        s.update_with_pod(pod_info, node, multiplier)
    return None
