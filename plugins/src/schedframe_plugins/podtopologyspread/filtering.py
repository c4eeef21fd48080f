"""Hard spreading: PreFilter, its AddPod/RemovePod extensions, and Filter.

Upstream ``podtopologyspread/filtering.go``. PreFilter counts, per ``DoNotSchedule``
constraint and topology value, the matching pods on eligible nodes, and keeps the two smallest
counts (the "critical paths"); Filter then only looks up the node's domain count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from schedframe import framework as fw
from schedframe.objects import Node, Pod
from schedframe_plugins import names
from schedframe_plugins.nodeaffinity import RequiredNodeAffinity
from schedframe_plugins.podtopologyspread.common import (
    NODE_INCLUSION_POLICY_HONOR,
    SpreadConstraint,
    count_pods_match_selector,
    node_labels_match_spread_constraints,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "PRE_FILTER_STATE_KEY",
    "CriticalPaths",
    "PreFilterState",
]

#: A node would break a ``DoNotSchedule`` constraint's ``maxSkew``.
ERR_REASON_CONSTRAINTS_NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
#: A node lacks a constraint's topology key.
ERR_REASON_NODE_LABEL_NOT_MATCH: Final = (
    ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
)

_MAX_INT32: Final = 2**31 - 1


class CriticalPaths:
    """The two topology values with the fewest matching pods (upstream ``criticalPaths``).

    ``num0`` is always the minimum; ``num1 >= num0`` but is not guaranteed to be the second
    minimum. Two entries suffice because preemption evaluates one node at a time, each on its
    own copy of the state.
    """

    __slots__ = ("num0", "num1", "value0", "value1")

    def __init__(
        self, value0: str = "", num0: int = _MAX_INT32, value1: str = "", num1: int = _MAX_INT32
    ) -> None:
        self.value0 = value0
        self.num0 = num0
        self.value1 = value1
        self.num1 = num1

    def copy(self) -> CriticalPaths:
        """An independent copy."""
        return CriticalPaths(self.value0, self.num0, self.value1, self.num1)

    def update(self, value: str, num: int) -> None:
        """Record that ``value`` now has ``num`` matching pods."""
        if value == self.value0 or value == self.value1:
            if value == self.value0:
                self.num0 = num
            else:
                self.num1 = num
            if self.num0 > self.num1:
                self.value0, self.num0, self.value1, self.num1 = (
                    self.value1,
                    self.num1,
                    self.value0,
                    self.num0,
                )
        elif num < self.num0:
            self.value1, self.num1 = self.value0, self.num0
            self.value0, self.num0 = value, num
        elif num < self.num1:
            self.value1, self.num1 = value, num

    def as_tuple(self) -> tuple[tuple[str, int], tuple[str, int]]:
        """``((value0, num0), (value1, num1))``."""
        return ((self.value0, self.num0), (self.value1, self.num1))

    def __repr__(self) -> str:
        return f"CriticalPaths({self.as_tuple()!r})"


class PreFilterState:
    """What Filter needs, per pod (upstream ``preFilterState``).

    ``tp_value_to_match_num[i]`` maps each topology value of constraint ``i`` (over eligible
    nodes) to its number of matching pods; ``critical_paths[i]`` holds its two smallest counts.
    ``self_match[i]`` is 1 when the incoming pod matches constraint ``i``'s selector.
    AddPod/RemovePod change the counts, so the framework clones this state first.
    """

    __slots__ = (
        "coded_counts",
        "constraints",
        "critical_paths",
        "required_node_affinity",
        "self_match",
        "tp_value_to_match_num",
    )

    def __init__(
        self,
        constraints: list[SpreadConstraint],
        critical_paths: list[CriticalPaths],
        tp_value_to_match_num: list[dict[str, int]],
        self_match: list[int],
        required_node_affinity: RequiredNodeAffinity,
    ) -> None:
        self.constraints = constraints
        self.critical_paths = critical_paths
        self.tp_value_to_match_num = tp_value_to_match_num
        self.self_match = self_match
        self.required_node_affinity = required_node_affinity
        #: The batch path's copy of ``tp_value_to_match_num`` indexed by label code (one
        #: ``(LabelColumn, array)`` per constraint), left by the columnar PreFilter for
        #: ``filter_batch``; dropped whenever the counts change, as they only do in
        #: :func:`update_with_pod`.
        self.coded_counts: list[tuple[fw.LabelColumn, npt.NDArray[np.int64]]] | None = None

    def clone(self) -> PreFilterState:
        """A copy whose counts can change independently; constraints are shared."""
        return PreFilterState(
            self.constraints,
            [p.copy() for p in self.critical_paths],
            [dict(m) for m in self.tp_value_to_match_num],
            self.self_match,
            self.required_node_affinity,
        )

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum for constraint ``i``: 0 while there are fewer than
        ``min_domains`` eligible domains."""
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return self.critical_paths[i].num0


PRE_FILTER_STATE_KEY: Final = fw.StateKey[PreFilterState]("PreFilter" + names.POD_TOPOLOGY_SPREAD)


def cal_pre_filter_state(
    pod: Pod, constraints: list[SpreadConstraint], all_nodes: Sequence[fw.NodeInfo]
) -> PreFilterState:
    """Count matching pods per constraint and topology value (upstream ``calPreFilterState``)."""
    required = RequiredNodeAffinity(pod)
    counts: list[dict[str, int]] = [{} for _ in constraints]
    namespace = pod.namespace
    # Per constraint, once: the counts to add to, and whether the inclusion policies can
    # exclude a node at all (not when neither is Honor, or Honor has nothing to check).
    per_constraint = [
        (
            c,
            counts[i],
            c.topology_key,
            c.selector,
            (
                c.node_affinity_policy == NODE_INCLUSION_POLICY_HONOR
                and not required.matches_every_node
            )
            or c.node_taints_policy == NODE_INCLUSION_POLICY_HONOR,
        )
        for i, c in enumerate(constraints)
    ]
    for info in all_nodes:
        node = info.node
        if node is None:
            continue
        labels = node.metadata.labels
        # The node must carry every constraint's topology key to take part at all.
        if not node_labels_match_spread_constraints(labels, constraints):
            continue
        pods = info.pods
        for c, m, topology_key, selector, check_policies in per_constraint:
            if check_policies and not c.match_node_inclusion_policies(pod, node, required):
                continue
            value = labels[topology_key]
            count = count_pods_match_selector(pods, selector, namespace) if pods else 0
            m[value] = m.get(value, 0) + count
    paths: list[CriticalPaths] = []
    for m in counts:
        p = CriticalPaths()
        for value, num in m.items():
            p.update(value, num)
        paths.append(p)
    self_match = [1 if c.matches(pod.labels) else 0 for c in constraints]
    return PreFilterState(constraints, paths, counts, self_match, required)


def update_with_pod(
    s: PreFilterState, updated_pod: Pod, preemptor_pod: Pod, node: Node | None, delta: int
) -> None:
    """Account ``updated_pod`` added to (``delta=1``) or removed from (``-1``) ``node``."""
    if updated_pod.namespace != preemptor_pod.namespace or node is None:
        return
    labels = node.metadata.labels
    if not node_labels_match_spread_constraints(labels, s.constraints):
        return
    pod_labels = updated_pod.labels
    s.coded_counts = None
    for i, c in enumerate(s.constraints):
        if not c.matches(pod_labels):
            continue
        if not c.match_node_inclusion_policies(preemptor_pod, node, s.required_node_affinity):
            continue
        value = labels[c.topology_key]
        m = s.tp_value_to_match_num[i]
        m[value] = m.get(value, 0) + delta
        s.critical_paths[i].update(value, m[value])


def not_found(key: fw.StateKey[PreFilterState]) -> RuntimeError:
    """Upstream's error when PreFilter's state is missing."""
    return RuntimeError(f'reading "{key.name}" from cycleState: not found')


def filter_node(s: PreFilterState, node: Node) -> fw.Status | None:
    """Filter's verdict for one node (upstream ``Filter`` after the state lookup)."""
    if not s.constraints:
        return None
    labels = node.metadata.labels
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return fw.Status(
                fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH
            )
        # judging criteria: existing matches + self-match (1 or 0) - global minimum <= maxSkew
        skew = (
            s.tp_value_to_match_num[i].get(value, 0)
            + s.self_match[i]
            - s.min_match_num(i, c.min_domains)
        )
        if skew > c.max_skew:
            return fw.Status(fw.Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
    return None


def node_filter(s: PreFilterState) -> Callable[[Node], fw.Status | None]:
    """:func:`filter_node` for a fixed state, with each constraint's per-pod part (its
    counts, self-match and global minimum) worked out once."""
    checks = tuple(
        (
            c.topology_key,
            s.tp_value_to_match_num[i],
            s.self_match[i] - s.min_match_num(i, c.min_domains),
            c.max_skew,
        )
        for i, c in enumerate(s.constraints)
    )

    def check(node: Node) -> fw.Status | None:
        labels = node.metadata.labels
        for topology_key, counts, offset, max_skew in checks:
            value = labels.get(topology_key)
            if value is None:
                return fw.Status(
                    fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH
                )
            if counts.get(value, 0) + offset > max_skew:
                return fw.Status(fw.Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    return check
