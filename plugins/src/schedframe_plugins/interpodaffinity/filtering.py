"""InterPodAffinity's PreFilter, PreFilterExtensions and Filter.

PreFilter counts, per topology pair ``(topology key, node label value)``:

* how many existing pods have a required anti-affinity term the incoming pod matches;
* how many existing pods match the incoming pod's required affinity terms (a pod counts only
  when it matches *all* of them, once per term);
* how many existing pods match each of the incoming pod's required anti-affinity terms.

Filter then answers each node with a few dictionary lookups on the node's labels.

Upstream: ``pkg/scheduler/framework/plugins/interpodaffinity/filtering.go``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from schedframe import framework as fw
from schedframe.framework import AffinityTerm, Code, CycleState, NodeInfo, PodInfo, Status

if TYPE_CHECKING:
    from schedframe.objects import Node, Pod

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


class _PreFilterState:
    """What PreFilter computed for one pod; AddPod/RemovePod update the counts in place."""

    __slots__ = (
        "affinity_counts",
        "affinity_keys",
        "affinity_terms",
        "anti_affinity_counts",
        "anti_affinity_keys",
        "anti_affinity_terms",
        "existing_anti_affinity_counts",
        "matches_own_affinity",
        "namespace_labels",
        "pod",
    )

    def __init__(
        self,
        *,
        pod: Pod,
        affinity_terms: tuple[AffinityTerm, ...],
        anti_affinity_terms: tuple[AffinityTerm, ...],
        namespace_labels: Mapping[str, str],
        existing_anti_affinity_counts: TopologyCounts,
        affinity_counts: TopologyCounts,
        anti_affinity_counts: TopologyCounts,
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
        self.existing_anti_affinity_counts = existing_anti_affinity_counts
        self.affinity_counts = affinity_counts
        self.anti_affinity_counts = anti_affinity_counts

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
        other.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
        other.affinity_counts = dict(self.affinity_counts)
        other.anti_affinity_counts = dict(self.anti_affinity_counts)
        return other

    def update_with_pod(self, pod_info: PodInfo, node: Node, multiplier: int) -> None:
        """Account ``pod_info`` as added to (``+1``) or removed from (``-1``) ``node``."""
        labels = node.metadata.labels
        counts = self.existing_anti_affinity_counts
        for term in pod_info.required_anti_affinity_terms:
            if term.matches(self.pod, self.namespace_labels):
                _update(counts, labels, term.topology_key, multiplier)
        other = pod_info.pod
        if pod_matches_all_affinity_terms(self.affinity_terms, other):
            for key in self.affinity_keys:
                _update(self.affinity_counts, labels, key, multiplier)
        # The incoming pod's terms have their namespace selectors folded into namespaces, so
        # the other pod's namespace labels are not needed.
        for term in self.anti_affinity_terms:
            if term.matches(other, NO_LABELS):
                _update(self.anti_affinity_counts, labels, term.topology_key, multiplier)


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


class FilteringMixin:
    """PreFilter, PreFilterExtensions and Filter of :class:`InterPodAffinity`."""

    _handle: fw.Handle

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> fw.PreFilterResult | Status | None:
        """Count the pairs Filter needs; Skip when neither side has required terms."""
        handle = self._handle
        lister = handle.snapshot_shared_lister().node_infos
        nodes_with_required_anti_affinity = lister.have_pods_with_required_anti_affinity_list()

        pod_info = PodInfo(pod)
        affinity_terms = merge_terms(pod_info.required_affinity_terms, handle)
        anti_affinity_terms = merge_terms(pod_info.required_anti_affinity_terms, handle)
        namespace_labels = get_namespace_labels_snapshot(pod.namespace, handle)

        existing = _existing_anti_affinity_counts(
            pod, namespace_labels, nodes_with_required_anti_affinity
        )
        affinity, anti_affinity = _incoming_affinity_anti_affinity_counts(
            affinity_terms, anti_affinity_terms, nodes
        )
        if not existing and not affinity_terms and not anti_affinity_terms:
            return _SKIP

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
