"""Data types of the plugin contract: NodeInfo, PodInfo, results and diagnoses.

Upstream: ``k8s.io/kube-scheduler/framework`` types and ``pkg/scheduler/framework/types.go``.
"""

from __future__ import annotations

import collections
import enum
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Final

import attrs

from schedframe.framework._status import Code, Status

if TYPE_CHECKING:
    from schedframe.objects import LabelSelector, Node, Pod, PodAffinityTerm

__all__ = [
    "MAX_NODE_SCORE",
    "MAX_TOTAL_SCORE",
    "MIN_NODE_SCORE",
    "AffinityTerm",
    "Diagnosis",
    "FitError",
    "HostPortInfo",
    "ImageStateSummary",
    "NodeInfo",
    "NodeScoreList",
    "NodeToStatus",
    "NominatingInfo",
    "NominatingMode",
    "PodInfo",
    "PostFilterResult",
    "PreFilterResult",
    "QueuedPodInfo",
    "WeightedAffinityTerm",
    "normalized_image_name",
]

#: The highest score a Score plugin may give a node after normalisation.
MAX_NODE_SCORE: Final = 100
#: The lowest score a Score plugin may give a node after normalisation.
MIN_NODE_SCORE: Final = 0
#: The cap on a node's weighted total (upstream ``MaxTotalScore`` = MaxInt64).
MAX_TOTAL_SCORE: Final = (1 << 63) - 1

_DEFAULT_BIND_ALL_HOST_IP: Final = "0.0.0.0"
_generations = itertools.count(1)


def normalized_image_name(name: str) -> str:
    """Append ``:latest`` to an image name without tag or digest (upstream ``normalizedImageName``)."""
    if "@" in name:
        return name
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def next_generation() -> int:
    """A fresh, process-wide increasing generation number (upstream ``nextGeneration``)."""
    return next(_generations)


def next_generations(count: int) -> Iterator[int]:
    """``count`` fresh generation numbers, in increasing order."""
    return itertools.islice(_generations, count)


# --------------------------------------------------------------------------------------------
# Pods with their parsed affinity terms
# --------------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class AffinityTerm:
    """A pod (anti-)affinity term resolved against its owning pod (upstream ``AffinityTerm``).

    ``namespaces`` already holds the owner's namespace when the term named none and had no
    namespace selector; ``namespace_selector`` is ``None`` when it selects no namespace
    (upstream ``labels.Nothing()``).
    """

    namespaces: frozenset[str]
    selector: LabelSelector
    topology_key: str
    namespace_selector: LabelSelector | None

    def matches(self, pod: Pod, namespace_labels: Mapping[str, str] | None) -> bool:
        """True when ``pod`` is selected: its namespace is covered and its labels match."""
        # Unknown namespace labels read as no labels: an empty selector still matches them.
        if pod.namespace in self.namespaces or (
            self.namespace_selector is not None
            and self.namespace_selector.matches(namespace_labels or {})
        ):
            return self.selector.matches(pod.labels)
        return False


@attrs.frozen(kw_only=True)
class WeightedAffinityTerm:
    """A preferred (anti-)affinity term with its weight."""

    term: AffinityTerm
    weight: int


def _affinity_term(pod: Pod, term: PodAffinityTerm) -> AffinityTerm:
    from schedframe.objects import LabelSelector, LabelSelectorRequirement

    namespaces = frozenset(term.namespaces)
    if not namespaces and term.namespace_selector is None:
        namespaces = frozenset((pod.namespace,))
    selector = term.label_selector if term.label_selector is not None else None
    if selector is None:
        # A nil label selector selects nothing; an impossible requirement says so.
        selector = LabelSelector(
            match_expressions=(LabelSelectorRequirement(key="", operator="In", values=()),)
        )
    # matchLabelKeys / mismatchLabelKeys are merged into the selector with the owner's values,
    # as kube-apiserver does when the pod is created (MatchLabelKeysInPodAffinity).
    extra = tuple(
        LabelSelectorRequirement(key=k, operator="In", values=(pod.labels[k],))
        for k in term.match_label_keys
        if k in pod.labels
    ) + tuple(
        LabelSelectorRequirement(key=k, operator="NotIn", values=(pod.labels[k],))
        for k in term.mismatch_label_keys
        if k in pod.labels
    )
    if extra:
        selector = attrs.evolve(selector, match_expressions=selector.match_expressions + extra)
    return AffinityTerm(
        namespaces=namespaces,
        selector=selector,
        topology_key=term.topology_key,
        namespace_selector=term.namespace_selector,
    )


class PodInfo:
    """A pod with its affinity terms parsed once (upstream ``PodInfo``).

    Built once per pod object by the cache and the queue, and shared by every NodeInfo and
    snapshot that holds the pod.
    """

    __slots__ = ("__dict__", "pod")

    def __init__(self, pod: Pod) -> None:
        self.pod = pod

    def __repr__(self) -> str:
        return f"PodInfo({self.pod.key})"

    @cached_property
    def _request_sums(self) -> tuple[int, int, int, int, int, bool]:
        # What the pod adds to a node's columns (see ``_columns``): requested cpu, memory
        # and ephemeral storage, non-zero cpu and memory, whether it takes a host port.
        pod = self.pod
        requests = pod.requests
        non_zero = pod.non_zero_requests
        return (
            requests.get("cpu", 0),
            requests.get("memory", 0),
            requests.get("ephemeral-storage", 0),
            non_zero.get("cpu", 0),
            non_zero.get("memory", 0),
            bool(pod.host_ports),  # host_ports lists taken ports only
        )

    @cached_property
    def required_affinity_terms(self) -> tuple[AffinityTerm, ...]:
        """Required pod-affinity terms."""
        aff = self.pod.spec.affinity
        if aff is None or aff.pod_affinity is None:
            return ()
        return tuple(_affinity_term(self.pod, t) for t in aff.pod_affinity.required)

    @cached_property
    def required_anti_affinity_terms(self) -> tuple[AffinityTerm, ...]:
        """Required pod-anti-affinity terms."""
        aff = self.pod.spec.affinity
        if aff is None or aff.pod_anti_affinity is None:
            return ()
        return tuple(_affinity_term(self.pod, t) for t in aff.pod_anti_affinity.required)

    @cached_property
    def preferred_affinity_terms(self) -> tuple[WeightedAffinityTerm, ...]:
        """Preferred pod-affinity terms with weights."""
        aff = self.pod.spec.affinity
        if aff is None or aff.pod_affinity is None:
            return ()
        return tuple(
            WeightedAffinityTerm(term=_affinity_term(self.pod, w.term), weight=w.weight)
            for w in aff.pod_affinity.preferred
        )

    @cached_property
    def preferred_anti_affinity_terms(self) -> tuple[WeightedAffinityTerm, ...]:
        """Preferred pod-anti-affinity terms with weights."""
        aff = self.pod.spec.affinity
        if aff is None or aff.pod_anti_affinity is None:
            return ()
        return tuple(
            WeightedAffinityTerm(term=_affinity_term(self.pod, w.term), weight=w.weight)
            for w in aff.pod_anti_affinity.preferred
        )


# --------------------------------------------------------------------------------------------
# NodeInfo
# --------------------------------------------------------------------------------------------


@attrs.frozen
class ImageStateSummary:
    """An image on a node: its size, and on how many nodes of the cluster it is."""

    size: int
    num_nodes: int


class HostPortInfo:
    """Host ports in use on a node, ``ip -> {(protocol, port)}`` (upstream ``HostPortInfo``)."""

    __slots__ = ("_ports",)

    def __init__(self) -> None:
        self._ports: dict[str, set[tuple[str, int]]] = {}

    def add(self, ip: str, protocol: str, port: int) -> None:
        """Record a port; an empty ip means all addresses, an empty protocol means TCP."""
        if port <= 0:
            return
        self._ports.setdefault(ip or _DEFAULT_BIND_ALL_HOST_IP, set()).add(
            (protocol or "TCP", port)
        )

    def remove(self, ip: str, protocol: str, port: int) -> None:
        """Forget a port recorded by :meth:`add`."""
        if port <= 0:
            return
        ip = ip or _DEFAULT_BIND_ALL_HOST_IP
        entries = self._ports.get(ip)
        if entries is not None:
            entries.discard((protocol or "TCP", port))
            if not entries:
                del self._ports[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """True when the port is taken: on that ip, or on 0.0.0.0, or anywhere if ip is 0.0.0.0."""
        if port <= 0:
            return False
        ip = ip or _DEFAULT_BIND_ALL_HOST_IP
        pp = (protocol or "TCP", port)
        if ip == _DEFAULT_BIND_ALL_HOST_IP:
            return any(pp in entries for entries in self._ports.values())
        for key in (ip, _DEFAULT_BIND_ALL_HOST_IP):
            entries = self._ports.get(key)
            if entries is not None and pp in entries:
                return True
        return False

    def __len__(self) -> int:
        return sum(len(v) for v in self._ports.values())

    def __iter__(self) -> Iterator[tuple[str, str, int]]:
        for ip, entries in self._ports.items():
            for protocol, port in entries:
                yield ip, protocol, port

    def copy(self) -> HostPortInfo:
        """An independent copy."""
        other = HostPortInfo()
        other._ports = {ip: set(entries) for ip, entries in self._ports.items()}
        return other


class NodeInfo:
    """What the scheduler knows about one node: the node, its pods and their sums.

    Plugins read NodeInfos from the snapshot and must not change them; the framework hands a
    plugin a modified *copy* when it evaluates nominated pods or preemption victims.

    Attributes:
        node: the Node, or ``None`` for a node already deleted that still has pods; changed
            through :meth:`set_node` and :meth:`remove_node`.
        name: the node's name, ``""`` when the node is gone (kept with ``node``).
        pods: every pod on the node, assumed ones included.
        pods_with_affinity: the pods that have pod affinity or anti-affinity terms.
        pods_with_required_anti_affinity: the pods with required anti-affinity terms.
        used_ports: host ports taken on the node.
        requested: the sum of the pods' effective requests (``cpu`` in millicores).
        non_zero_requested: ``cpu`` and ``memory`` summed with the non-zero defaults applied,
            used for scoring so many request-less pods do not pile onto one node.
        allocatable: the node's allocatable resources (``cpu`` in millicores).
        image_states: images on the node by normalised name.
        pvc_ref_counts: ``namespace/claim`` -> number of pods on the node using it.
        generation: bumped on every change; the snapshot copies only changed nodes.
    """

    __slots__ = (
        "allocatable",
        "generation",
        "image_states",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "pvc_ref_counts",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node | None = None, pods: Iterable[PodInfo | Pod] = ()) -> None:
        self.node: Node | None = None
        self.name = ""
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested: dict[str, int] = {}
        self.non_zero_requested: dict[str, int] = {}
        self.allocatable: dict[str, int] = {}
        self.image_states: dict[str, ImageStateSummary] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        self.generation = next_generation()
        if node is not None:
            self.set_node(node)
        for pod in pods:
            self.add_pod(pod)

    def set_node(self, node: Node) -> None:
        """Set (or replace) the Node object."""
        self.node = node
        self.name = node.metadata.name
        self.allocatable = dict(node.status.allocatable)
        self.generation = next_generation()

    def remove_node(self) -> None:
        """Drop the Node object, keeping the pods (a "ghost" node until they go)."""
        self.node = None
        self.name = ""
        self.generation = next_generation()

    def add_pod(self, pod: PodInfo | Pod) -> None:
        """Account a pod on this node (upstream ``AddPodInfo``)."""
        info = pod if isinstance(pod, PodInfo) else PodInfo(pod)
        p = info.pod
        self.pods.append(info)
        if p.has_affinity:
            self.pods_with_affinity.append(info)
        if p.has_required_anti_affinity:
            self.pods_with_required_anti_affinity.append(info)
        self._update(p, +1)

    def remove_pod(self, pod: Pod) -> None:
        """Remove a pod by uid (upstream ``RemovePod``); raises ``KeyError`` if it is not here."""
        uid = pod.uid
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            _swap_remove(lst, uid)
        removed = _swap_remove(self.pods, uid)
        if removed is None:
            raise KeyError(f"no corresponding pod {pod.key} in pods of node {self.name}")
        self._update(removed.pod, -1)

    def _update(self, pod: Pod, sign: int) -> None:
        # Inlined sums (this runs for every pod added or removed, preemption dry runs included).
        requested = self.requested
        for name, value in pod.requests.items():
            requested[name] = requested.get(name, 0) + sign * value
        nz = pod.non_zero_requests
        non_zero = self.non_zero_requested
        non_zero["cpu"] = non_zero.get("cpu", 0) + sign * nz.get("cpu", 0)
        non_zero["memory"] = non_zero.get("memory", 0) + sign * nz.get("memory", 0)
        for ip, protocol, port in pod.host_ports:
            if sign > 0:
                self.used_ports.add(ip, protocol, port)
            else:
                self.used_ports.remove(ip, protocol, port)
        for volume in pod.spec.volumes:
            if volume.persistent_volume_claim:
                key = f"{pod.namespace}/{volume.persistent_volume_claim}"
                count = self.pvc_ref_counts.get(key, 0) + sign
                if count > 0:
                    self.pvc_ref_counts[key] = count
                else:
                    self.pvc_ref_counts.pop(key, None)
        self.generation = next_generation()

    def clone(self) -> NodeInfo:
        """An independent copy sharing the (immutable) Node and PodInfos (upstream ``Snapshot``)."""
        other = NodeInfo.__new__(NodeInfo)
        other.node = self.node
        other.name = self.name
        other.pods = list(self.pods)
        other.pods_with_affinity = list(self.pods_with_affinity)
        other.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        other.used_ports = self.used_ports.copy()
        other.requested = dict(self.requested)
        other.non_zero_requested = dict(self.non_zero_requested)
        other.allocatable = self.allocatable
        other.image_states = self.image_states
        other.pvc_ref_counts = dict(self.pvc_ref_counts)
        other.generation = self.generation
        return other

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)}, requested={self.requested})"


def _swap_remove(lst: list[PodInfo], uid: str) -> PodInfo | None:
    # Upstream removes by moving the last element into the hole; order follows that. A
    # node's pods have distinct uids, so where the search starts changes nothing but its
    # cost: it starts at the end, where the pod a binding confirms (assumed last) usually is.
    for i in range(len(lst) - 1, -1, -1):
        info = lst[i]
        if info.pod.uid == uid:
            last = lst.pop()
            if i < len(lst):
                lst[i] = last
            return info
    return None


# --------------------------------------------------------------------------------------------
# Queue items
# --------------------------------------------------------------------------------------------


@attrs.define(kw_only=True, eq=False)
class QueuedPodInfo:
    """A pod in the scheduling queue, with its queueing history (upstream ``QueuedPodInfo``)."""

    pod_info: PodInfo
    #: When the pod was (last) added to the queue; QueueSort orders ties by it.
    timestamp: float
    #: When the pod first entered the queue.
    initial_attempt_timestamp: float | None = None
    #: Scheduling attempts so far.
    attempts: int = 0
    #: Attempts that ended unschedulable; drives the backoff.
    unschedulable_count: int = 0
    #: Attempts in a row that ended in an error; drives the error backoff.
    consecutive_errors_count: int = 0
    #: Plugins that rejected the pod in its last attempt.
    unschedulable_plugins: set[str] = attrs.Factory(set)
    #: Plugins that returned Pending in its last attempt.
    pending_plugins: set[str] = attrs.Factory(set)
    #: The PreEnqueue plugin that gates the pod, if any.
    gating_plugin: str = ""
    #: When the current backoff ends, aligned to the ordering window (``None`` = not computed).
    backoff_expiration: float | None = None

    @property
    def pod(self) -> Pod:
        """The queued pod."""
        return self.pod_info.pod

    @property
    def gated(self) -> bool:
        """True while a PreEnqueue plugin keeps the pod out of the active queue."""
        return bool(self.gating_plugin)


# --------------------------------------------------------------------------------------------
# Extension point results
# --------------------------------------------------------------------------------------------


@attrs.frozen
class PreFilterResult:
    """Nodes a PreFilter plugin narrowed the search to; ``None`` means all nodes."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        """True when the result does not narrow anything."""
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        """Intersect two results (upstream ``PreFilterResult.Merge``)."""
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return other
        assert self.node_names is not None and other.node_names is not None
        return PreFilterResult(self.node_names & other.node_names)


class NominatingMode(enum.Enum):
    """What to do with the pod's nominated node after PostFilter."""

    NOOP = 0
    OVERRIDE = 1


@attrs.frozen
class NominatingInfo:
    """The nominated node PostFilter asks for (upstream ``NominatingInfo``)."""

    nominated_node_name: str = ""
    mode: NominatingMode = NominatingMode.NOOP


@attrs.frozen
class PostFilterResult:
    """A successful PostFilter's answer, e.g. the node preemption made room on."""

    nominating_info: NominatingInfo | None = None


class NodeScoreList:
    """Scores of one plugin for the feasible nodes, in node order, modified in place by Normalize.

    Columnar on purpose: ``names[i]`` got ``scores[i]``. Iterating yields ``(name, score)``.
    """

    __slots__ = ("names", "scores")

    def __init__(self, names: Sequence[str], scores: list[int]) -> None:
        self.names = names
        self.scores = scores

    def __len__(self) -> int:
        return len(self.scores)

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return zip(self.names, self.scores, strict=True)

    def __repr__(self) -> str:
        return f"NodeScoreList({dict(self)!r})"


class NodeToStatus:
    """Filter verdicts by node name, with one status for nodes not listed (upstream ``NodeToStatus``).

    Nodes absent from the map (cut out by a PreFilterResult, or never evaluated) take
    ``absent_nodes_status``: UnschedulableAndUnresolvable by default.
    """

    __slots__ = ("_changes", "_statuses", "absent_nodes_status")

    def __init__(self, statuses: Mapping[str, Status] | None = None) -> None:
        self._statuses: dict[str, Status] = dict(statuses or {})
        self.absent_nodes_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        # Counts the writes, so a FitError can tell its reasons are still those it counted.
        self._changes = 0

    def get(self, node_name: str) -> Status:
        """The status of ``node_name`` (the absent status when not listed)."""
        return self._statuses.get(node_name, self.absent_nodes_status)

    def set(self, node_name: str, status: Status) -> None:
        """Record ``status`` for ``node_name``."""
        self._statuses[node_name] = status
        self._changes += 1

    def update(self, pairs: Iterable[tuple[str, Status]]) -> None:
        """:meth:`set` for each ``(node name, status)`` pair, in order."""
        self._statuses.update(pairs)
        self._changes += 1

    def __len__(self) -> int:
        return len(self._statuses)

    def items(self) -> Iterable[tuple[str, Status]]:
        """The explicitly listed nodes and their statuses."""
        return self._statuses.items()

    def statuses(self) -> Iterable[Status]:
        """The explicitly listed nodes' statuses, in the order of :meth:`items`."""
        return self._statuses.values()

    def node_names_with_code(self, code: Code, all_nodes: Iterable[str]) -> list[str]:
        """Names among ``all_nodes`` whose status has ``code`` (upstream ``NodesForStatusCode``)."""
        return [name for name in all_nodes if self.get(name).code is code]

    def node_infos_with_code(self, code: Code, node_infos: Iterable[NodeInfo]) -> list[NodeInfo]:
        """The NodeInfos among ``node_infos`` whose node's status has ``code``, in order."""
        get = self._statuses.get
        absent = self.absent_nodes_status
        return [ni for ni in node_infos if get(ni.name, absent).code is code]

    def copy(self) -> NodeToStatus:
        """An independent copy."""
        other = NodeToStatus(self._statuses)
        other.absent_nodes_status = self.absent_nodes_status
        return other


@attrs.define(kw_only=True)
class Diagnosis:
    """Why a pod found no node: every node's verdict and the plugins that rejected it."""

    node_to_status: NodeToStatus = attrs.Factory(NodeToStatus)
    unschedulable_plugins: set[str] = attrs.Factory(set)
    pending_plugins: set[str] = attrs.Factory(set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


class FitError(Exception):
    """No node fits the pod; ``str()`` is upstream's ``FailedScheduling`` message, byte for byte.

    ``0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.
    preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.``
    """

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        # The reasons part of the message with what it was counted from: the scheduler asks
        # for the message again once PostFilter has added its own, over the same statuses.
        self._reasons: tuple[NodeToStatus, tuple[int, Status, int], str] | None = None
        super().__init__(self.message())

    def reasons_histogram(self) -> dict[str, int]:
        """How many nodes gave each reason (absent nodes counted with the absent status)."""
        d = self.diagnosis
        # Many nodes share one Status object (the batch path makes one per distinct verdict):
        # count the objects first, then their reasons.
        statuses = list(d.node_to_status.statuses())
        times = collections.Counter(map(id, statuses))
        shared = dict(zip(map(id, statuses), statuses, strict=True))
        counts: dict[str, int] = {}
        for key, n in times.items():
            for reason in shared[key].reasons:
                counts[reason] = counts.get(reason, 0) + n
        missing = self.num_all_nodes - len(d.node_to_status)
        if missing > 0:
            for reason in d.node_to_status.absent_nodes_status.reasons:
                counts[reason] = counts.get(reason, 0) + missing
        return counts

    def message(self) -> str:
        """The message kube-scheduler puts in the FailedScheduling event and condition."""
        d = self.diagnosis
        msg = f"0/{self.num_all_nodes} nodes are available:"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            msg += self._reasons_text()
        if d.post_filter_msg:
            # No period of its own: PostFilter's message (preemption's own FitError) ends in one.
            msg += f" {d.post_filter_msg}"
        return msg

    def _reasons_text(self) -> str:
        """`` 1 node(s) had untolerated taint(s), 2 Insufficient cpu.``: the counted reasons,
        sorted, as the message has them (empty when there are none); counted again only
        when the statuses, the absent status or the node count changed since last time."""
        statuses = self.diagnosis.node_to_status
        key = (statuses._changes, statuses.absent_nodes_status, self.num_all_nodes)
        kept = self._reasons
        if kept is not None and kept[0] is statuses and kept[1] == key:
            return kept[2]
        parts = sorted(f"{n} {reason}" for reason, n in self.reasons_histogram().items())
        text = f" {', '.join(parts)}." if parts else ""
        self._reasons = (statuses, key, text)
        return text
