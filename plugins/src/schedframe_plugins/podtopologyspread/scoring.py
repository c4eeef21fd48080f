"""Soft spreading: PreScore, Score and NormalizeScore (upstream ``podtopologyspread/scoring.go``).

PreScore counts, per ``ScheduleAnyway`` constraint, the matching pods of every topology value
present among the feasible nodes, and weighs each constraint by ``log(domains + 2)``; Score
sums ``count * weight + (maxSkew - 1)`` over the node's domains (hostname counts are taken on
the node itself) and rounds; NormalizeScore reverses, so the emptiest domain scores highest.
The arithmetic follows upstream's float64/int64 steps exactly, including Go's ``math.Log``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from schedframe import framework as fw
from schedframe_plugins import names
from schedframe_plugins.podtopologyspread.common import (
    LABEL_HOSTNAME,
    SpreadConstraint,
    count_pods_match_selector,
)

__all__ = [
    "PRE_SCORE_STATE_KEY",
    "PreScoreState",
    "go_log",
    "go_round",
    "topology_normalizing_weight",
]

_INVALID_SCORE: Final = -1
_MAX_INT64: Final = (1 << 63) - 1

# Go's math.Log (FreeBSD e_log.c); the amd64 assembly performs the same operations in order.
_LN2_HI: Final = 6.93147180369123816490e-01
_LN2_LO: Final = 1.90821492927058770002e-10
_L1: Final = 6.666666666666735130e-01
_L2: Final = 3.999999999940941908e-01
_L3: Final = 2.857142874366239149e-01
_L4: Final = 2.222219843214978396e-01
_L5: Final = 1.818357216161805012e-01
_L6: Final = 1.531383769920937332e-01
_L7: Final = 1.479819860511658591e-01
_HALF_SQRT2: Final = math.sqrt(2) / 2


def go_log(x: float) -> float:
    """Natural logarithm computed as Go's ``math.Log`` does, bit for bit.

    The platform ``log`` may differ from Go's in the last bit, which can flip a rounded score.
    """
    if math.isnan(x) or x == math.inf:
        return x
    if x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    f1, ki = math.frexp(x)
    if f1 < _HALF_SQRT2:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def go_round(x: float) -> int:
    """Go's ``math.Round`` (half away from zero) converted to an integer."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += 1 if x > 0 else -1
    return int(t)


def topology_normalizing_weight(size: int) -> float:
    """The weight of a topology with ``size`` values: ``log(size + 2)``.

    Keeps the counts of small topologies from being drowned by big ones when summed.
    """
    return go_log(float(size + 2))


class PreScoreState:
    """What Score and NormalizeScore need (upstream ``preScoreState``); read-only once built.

    ``topology_value_to_pod_counts[i]`` maps each topology value of constraint ``i`` present
    among the feasible nodes to its matching pod count (hostname constraints are counted in
    Score instead); ``ignored_nodes`` lack a required topology key and score 0.
    """

    __slots__ = (
        "constraints",
        "ignored_nodes",
        "topology_normalizing_weight",
        "topology_value_to_pod_counts",
    )

    def __init__(self) -> None:
        self.constraints: list[SpreadConstraint] = []
        self.ignored_nodes: set[str] = set()
        self.topology_value_to_pod_counts: list[dict[str, int]] = []
        self.topology_normalizing_weight: list[float] = []


PRE_SCORE_STATE_KEY: Final = fw.StateKey[PreScoreState]("PreScore" + names.POD_TOPOLOGY_SPREAD)


def init_pre_score_state(
    s: PreScoreState,
    constraints: list[SpreadConstraint],
    filtered_nodes: Sequence[fw.NodeInfo],
    require_all_topologies: bool,
) -> None:
    """Register the feasible nodes' topology values and the constraints' weights."""
    s.constraints = constraints
    if not constraints:
        return
    counts: list[dict[str, int]] = [{} for _ in constraints]
    topo_size = [0] * len(constraints)
    for info in filtered_nodes:
        node = info.node
        if node is None:
            continue
        labels = node.metadata.labels
        if require_all_topologies and not all(c.topology_key in labels for c in constraints):
            # Nodes missing a required topology key are not scored.
            s.ignored_nodes.add(node.metadata.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key == LABEL_HOSTNAME:
                continue  # per-node counts are taken in Score
            value = labels.get(c.topology_key, "")
            if value not in counts[i]:
                counts[i][value] = 0
                topo_size[i] += 1
    s.topology_value_to_pod_counts = counts
    weights: list[float] = []
    for i, c in enumerate(constraints):
        size = topo_size[i]
        if c.topology_key == LABEL_HOSTNAME:
            size = len(filtered_nodes) - len(s.ignored_nodes)
        weights.append(topology_normalizing_weight(size))
    s.topology_normalizing_weight = weights


def score_node(s: PreScoreState, node_info: fw.NodeInfo, namespace: str) -> int:
    """Score's raw value for one node (upstream ``Score`` after the state lookup)."""
    node = node_info.node
    if node is None:
        raise ValueError("node not found")
    if node.metadata.name in s.ignored_nodes:
        return 0
    labels = node.metadata.labels
    score = 0.0
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            continue
        if c.topology_key == LABEL_HOSTNAME:
            cnt = count_pods_match_selector(node_info.pods, c.selector, namespace)
        else:
            cnt = s.topology_value_to_pod_counts[i].get(value, 0)
        # scoreForCount: float64(cnt)*weight + float64(maxSkew-1), then accumulated.
        score += float(cnt) * s.topology_normalizing_weight[i] + float(c.max_skew - 1)
    return go_round(score)


def normalize(s: PreScoreState, scores: fw.NodeScoreList) -> None:
    """Reverse and scale the raw scores in place (upstream ``NormalizeScore``)."""
    values = scores.scores
    ignored = s.ignored_nodes
    min_score = _MAX_INT64
    max_score = 0
    for i, name in enumerate(scores.names):
        if name in ignored:
            values[i] = _INVALID_SCORE
            continue
        v = values[i]
        if v < min_score:
            min_score = v
        if v > max_score:
            max_score = v
    for i, v in enumerate(values):
        if v == _INVALID_SCORE:
            values[i] = 0
        elif max_score == 0:
            values[i] = fw.MAX_NODE_SCORE
        else:
            # int64 division; every operand is non-negative, so // truncates like Go.
            values[i] = fw.MAX_NODE_SCORE * (max_score + min_score - v) // max_score
