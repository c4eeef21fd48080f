"""Per-domain sums over a snapshot's nodes, kept up to date node by node.

PreFilter and PreScore ask the same questions of every pod: which existing pods (or which
existing pods' terms) match it, and how many of those sit in each topology domain. Pods are
mostly copies of one another, so the questions have few distinct subjects: a few distinct
terms, a few distinct (namespace, labels) pairs. :class:`ClusterSums` keeps, per subject, how
many instances each topology domain holds (:class:`Domains`), and recounts only the nodes whose
NodeInfo changed since the previous pod. A pod then matches each distinct subject once and takes
its domains in bulk, instead of walking every pod of the cluster.

A :class:`Domains` handed to a pod's CycleState is *shared*: the sums never change it again but
update a copy, so the state can read it (and build its counts from it) whenever it likes.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Final, Generic, TypeVar

from schedframe.framework import AffinityTerm, LabelColumn, NodeInfo

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from schedframe.cache import Snapshot
    from schedframe.objects import Pod

    BoolArray = npt.NDArray[np.bool_]

__all__ = [
    "ClusterSums",
    "Domains",
    "NodeSums",
    "PairCounts",
    "PodKind",
    "ScoringTerm",
    "SumsCache",
    "sum_domains",
]

K = TypeVar("K", bound=Hashable)

#: ``(topology key, topology value)`` -> count.
PairCounts = dict[tuple[str, str], int]

#: What decides whether an incoming pod's term selects a pod: its namespace and its labels.
PodKind = tuple[str, frozenset[tuple[str, str]]]
#: An existing pod's scoring term: the term, its signed weight (0 for a required affinity term,
#: which weighs ``hardPodAffinityWeight``) and whether it is such a required term.
ScoringTerm = tuple[AffinityTerm, int, bool]

_NO_LABELS: Final[Mapping[str, str]] = {}


class Domains:
    """The instances of one subject per domain of one topology key.

    :attr:`values` maps each domain (topology value) holding instances to how many, never
    to 0; :meth:`pairs` gives the same as PreFilter's counts, and :meth:`mask` marks the values'
    codes in a label column, for the batch forms.
    """

    __slots__ = ("_mask", "key", "shared", "values")

    def __init__(self, key: str) -> None:
        self.key = key
        self.values: dict[str, int] = {}
        #: Handed out for keeps: the sums update a copy from now on.
        self.shared = False
        # The last mask built, with the column it is for (one attribute: set in one step).
        self._mask: tuple[LabelColumn, BoolArray] | None = None

    def add(self, value: str, n: int) -> None:
        """Count ``n`` more (or fewer) instances in the domain ``value`` (never when shared)."""
        values = self.values
        before = values.get(value, 0)
        count = before + n
        if count:
            values[value] = count
        else:
            del values[value]
        cached = self._mask
        if cached is not None and (before == 0) != (count == 0):
            column, mask = cached
            code = column.code_of.get(value)
            if code is None or code >= len(mask) - 1:
                self._mask = None  # the column learnt values since: build it again
            else:
                mask[code] = count != 0

    def copy(self) -> Domains:
        """An unshared copy."""
        other = Domains(self.key)
        other.values = dict(self.values)
        cached = self._mask
        if cached is not None:
            other._mask = (cached[0], cached[1].copy())
        return other

    def pairs(self) -> PairCounts:
        """The counts by topology pair, a new dict."""
        key = self.key
        return {(key, value): n for value, n in self.values.items()}

    def mask(self, column: LabelColumn) -> BoolArray:
        """True at the codes (in ``column``, a column of :attr:`key`) of the values counted.

        One entry more than the column has values, False: code -1 (label missing) reads it.
        Read-only. Kept while the column learns no new value (codes never change).
        """
        cached = self._mask
        if cached is not None and cached[0] is column and len(cached[1]) == len(column.values) + 1:
            return cached[1]
        import numpy as np

        missing = len(column.values)
        mask = np.zeros(missing + 1, dtype=np.bool_)
        values = self.values
        if values:
            mask[list(map(column.code_of.get, values, repeat(missing, len(values))))] = True
            mask[missing] = False
        self._mask = (column, mask)
        return mask


class NodeSums(Generic[K]):
    """Per subject, the nodes holding it and its :class:`Domains` per topology key.

    The owner tells it what each node holds (:meth:`add_node`, :meth:`remove_node`); the
    Domains of a (subject, key) are built on first request and kept up to date after.
    """

    __slots__ = ("_holders", "_labels", "_views")

    def __init__(self) -> None:
        # Subject -> the nodes holding it, with their instance counts.
        self._holders: dict[K, dict[NodeInfo, int]] = {}
        # NodeInfo -> the labels it was counted with.
        self._labels: dict[NodeInfo, Mapping[str, str]] = {}
        # Subject -> topology key -> Domains.
        self._views: dict[K, dict[str, Domains]] = {}

    def __len__(self) -> int:
        return len(self._holders)

    def subjects(self) -> Iterable[K]:
        """The subjects some node holds."""
        return self._holders.keys()

    def domains(self, subject: K, key: str) -> Domains:
        """The instances of ``subject`` per domain of ``key``. Set ``shared`` on it to keep it
        past the next change of the sums; otherwise read it right away."""
        views = self._views.get(subject)
        if views is None:
            views = self._views[subject] = {}
        view = views.get(key)
        if view is None:
            view = views[key] = Domains(key)
            labels_of = self._labels
            for info, n in self._holders.get(subject, {}).items():
                value = labels_of[info].get(key)
                if value is not None:
                    view.add(value, n)
        return view

    def add_node(
        self, info: NodeInfo, labels: Mapping[str, str], contribution: Mapping[K, int]
    ) -> None:
        """Count what ``info`` holds, ``contribution`` (subject -> instances)."""
        if contribution:
            self._labels[info] = labels
            self._apply(info, labels, contribution, 1)

    def remove_node(
        self, info: NodeInfo, labels: Mapping[str, str], contribution: Mapping[K, int]
    ) -> None:
        """Stop counting ``contribution``, as :meth:`add_node` was told it."""
        if contribution:
            self._apply(info, labels, contribution, -1)
            del self._labels[info]

    def _apply(
        self, info: NodeInfo, labels: Mapping[str, str], contribution: Mapping[K, int], sign: int
    ) -> None:
        holders_of = self._holders
        views_of = self._views
        for subject, n in contribution.items():
            holders = holders_of.get(subject)
            if sign > 0:
                if holders is None:
                    holders = holders_of[subject] = {}
                holders[info] = n
            else:
                assert holders is not None
                del holders[info]
                if not holders:
                    del holders_of[subject]
                    views_of.pop(subject, None)
                    continue
            views = views_of.get(subject)
            if views:
                for key, view in views.items():
                    value = labels.get(key)
                    if value is not None:
                        if view.shared:
                            view = views[key] = view.copy()
                        view.add(value, sign * n)


def sum_domains(parts: Sequence[Domains]) -> PairCounts:
    """The counts of ``parts`` added up by topology pair, a new dict."""
    if len(parts) == 1:
        return parts[0].pairs()
    total: PairCounts = {}
    get = total.get
    for domains in parts:
        key = domains.key
        for value, n in domains.values.items():
            pair = (key, value)
            total[pair] = get(pair, 0) + n
    return total


# --------------------------------------------------------------------------------------------
# What one node holds
# --------------------------------------------------------------------------------------------


def _required_anti_affinity_terms(info: NodeInfo) -> dict[AffinityTerm, int]:
    out: dict[AffinityTerm, int] = {}
    for pod_info in info.pods_with_required_anti_affinity:
        for term in pod_info.required_anti_affinity_terms:
            out[term] = out.get(term, 0) + 1
    return out


def _scoring_terms(info: NodeInfo) -> dict[ScoringTerm, int]:
    out: dict[ScoringTerm, int] = {}
    for pod_info in info.pods_with_affinity:
        for term in pod_info.required_affinity_terms:
            key: ScoringTerm = (term, 0, True)
            out[key] = out.get(key, 0) + 1
        for weighted in pod_info.preferred_affinity_terms:
            key = (weighted.term, weighted.weight, False)
            out[key] = out.get(key, 0) + 1
        for weighted in pod_info.preferred_anti_affinity_terms:
            key = (weighted.term, -weighted.weight, False)
            out[key] = out.get(key, 0) + 1
    return out


class _Entry:
    """What a node was counted with."""

    __slots__ = ("anti_affinity", "generation", "kinds", "labels", "scoring")

    def __init__(
        self,
        generation: int,
        labels: Mapping[str, str],
        anti_affinity: dict[AffinityTerm, int],
        kinds: dict[PodKind, int],
        scoring: dict[ScoringTerm, int],
    ) -> None:
        self.generation = generation
        self.labels = labels
        self.anti_affinity = anti_affinity
        self.kinds = kinds
        self.scoring = scoring


class ClusterSums:
    """The sums of one :class:`~schedframe.cache.Snapshot`, over every node it lists.

    Attributes:
        snapshot: the snapshot the sums belong to.
        existing_anti_affinity: existing pods' required anti-affinity terms.
        pods: existing pods by :data:`PodKind`; :meth:`example` gives a pod of a kind.
        scoring_terms: existing pods' required affinity and preferred terms.

    Call :meth:`sync` before reading. Every node of ``snapshot.list()`` is counted: the
    snapshot's lists of nodes with (anti-)affinity pods are those nodes of it, and the nodes
    left out hold nothing these sums count.
    """

    __slots__ = (
        "_entries",
        "_examples",
        "_generation",
        "_nodes",
        "_source",
        "_threshold",
        "existing_anti_affinity",
        "pods",
        "scoring_terms",
        "snapshot",
    )

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.existing_anti_affinity: NodeSums[AffinityTerm] = NodeSums()
        self.pods: NodeSums[PodKind] = NodeSums()
        self.scoring_terms: NodeSums[ScoringTerm] = NodeSums()
        self._examples: dict[PodKind, Pod] = {}
        self._entries: dict[NodeInfo, _Entry] = {}
        # The node list counted (a copy) and the snapshot's list object it was read from.
        self._nodes: list[NodeInfo] = []
        self._source: Sequence[NodeInfo] | None = None
        self._threshold = -1
        self._generation = -1

    def sync(self) -> None:
        """Count the snapshot's nodes as they are now: nodes gone are dropped, new ones and
        changed ones (a ``generation`` past every one seen before) counted again.

        Generations come from one process-wide counter and every change of a NodeInfo takes a
        fresh one, so no other node can have changed. A snapshot the cache keeps changes only
        when the cache updates it, which moves ``snapshot.generation``: while that stays (and
        is not 0, as in a snapshot built by hand) nothing needs looking at.
        """
        import numpy as np

        snapshot = self.snapshot
        generation = snapshot.generation
        current = snapshot.list()
        if generation and generation == self._generation and current is self._source:
            return
        entries = self._entries
        if current != self._nodes:  # NodeInfos compare by identity
            added = [info for info in current if info not in entries]
            if len(entries) + len(added) != len(current):
                keep = set(current)
                for info in [info for info in entries if info not in keep]:
                    self._remove(info)
            for info in added:
                self._add(info)
            self._nodes = list(current)
        self._source = current
        threshold = self._threshold
        columns = snapshot.columns()
        if columns.infos is current:  # the columns hold every row's generation
            changed = [current[r] for r in np.flatnonzero(columns.generations > threshold).tolist()]
        else:
            changed = [info for info in current if info.generation > threshold]
        for info in changed:
            entry = entries.get(info)
            if entry is None or entry.generation != info.generation:
                if entry is not None:
                    self._remove(info)
                self._add(info)
            if info.generation > threshold:
                threshold = info.generation
        self._threshold = threshold
        self._generation = generation
        if len(self._examples) > 64 + 2 * len(self.pods):
            examples = self._examples
            self._examples = {kind: examples[kind] for kind in self.pods.subjects()}

    def example(self, kind: PodKind) -> Pod:
        """A pod of ``kind``: matching it against a term is matching any pod of the kind."""
        return self._examples[kind]

    def _add(self, info: NodeInfo) -> None:
        node = info.node
        if node is None:
            # A node already deleted is in no topology domain.
            self._entries[info] = _Entry(info.generation, _NO_LABELS, {}, {}, {})
            return
        labels = node.metadata.labels
        entry = self._entries[info] = _Entry(
            info.generation,
            labels,
            _required_anti_affinity_terms(info) if info.pods_with_required_anti_affinity else {},
            self._pod_kinds(info),
            _scoring_terms(info) if info.pods_with_affinity else {},
        )
        self.existing_anti_affinity.add_node(info, labels, entry.anti_affinity)
        self.pods.add_node(info, labels, entry.kinds)
        self.scoring_terms.add_node(info, labels, entry.scoring)

    def _remove(self, info: NodeInfo) -> None:
        entry = self._entries.pop(info)
        self.existing_anti_affinity.remove_node(info, entry.labels, entry.anti_affinity)
        self.pods.remove_node(info, entry.labels, entry.kinds)
        self.scoring_terms.remove_node(info, entry.labels, entry.scoring)

    def _pod_kinds(self, info: NodeInfo) -> dict[PodKind, int]:
        out: dict[PodKind, int] = {}
        examples = self._examples
        for pod_info in info.pods:
            pod = pod_info.pod
            kind = (pod.metadata.namespace, frozenset(pod.metadata.labels.items()))
            n = out.get(kind)
            if n is None:
                out[kind] = 1
                if kind not in examples:
                    examples[kind] = pod
            else:
                out[kind] = n + 1
        return out


class SumsCache:
    """The :class:`ClusterSums` of the snapshot a plugin instance last read.

    Hold :attr:`lock` while syncing and reading the sums.
    """

    __slots__ = ("_sums", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._sums: ClusterSums | None = None

    def of(self, lister: object) -> ClusterSums | None:
        """The sums of ``lister`` (call :meth:`ClusterSums.sync` before reading them);
        ``None`` when it is no Snapshot (callers then count pod by pod)."""
        from schedframe.cache import Snapshot

        if not isinstance(lister, Snapshot):
            return None
        sums = self._sums
        if sums is None or sums.snapshot is not lister:
            sums = self._sums = ClusterSums(lister)
        return sums
