"""The ``RequestedToCapacityRatio`` scoring strategy: a user-shaped utilisation curve.

Port of upstream ``noderesources/requested_to_capacity_ratio.go`` and of the broken-linear
function of ``plugins/helper/shape_score.go``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final

from schedframe import framework as fw
from schedframe_plugins.noderesources.resource_allocation import ResourceSpec, Scorer

__all__ = [
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MAX_UTILIZATION",
    "broken_linear_function",
    "requested_to_capacity_ratio_scorer",
]

#: The top of the score scale users write shapes in (upstream ``MaxCustomPriorityScore``).
MAX_CUSTOM_PRIORITY_SCORE: Final = 10
#: Utilisation is expressed in percent.
MAX_UTILIZATION: Final = 100


def _go_div(a: int, b: int) -> int:
    # Go's integer division truncates toward zero; Python's floors.
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _go_round(x: float) -> int:
    # Go's math.Round: halves away from zero (the values here are never negative).
    floor = math.floor(x)
    return floor + 1 if x - floor >= 0.5 else floor


def broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """The piecewise-linear function through ``(utilization, score)`` points, flat outside.

    Mirrors upstream ``helper.BuildBrokenLinearFunction``, integer arithmetic included.
    """
    points = tuple(shape)

    def function(p: int) -> int:
        for i, (utilization, score) in enumerate(points):
            if p <= utilization:
                if i == 0:
                    return score
                prev_utilization, prev_score = points[i - 1]
                return prev_score + _go_div(
                    (score - prev_score) * (p - prev_utilization), utilization - prev_utilization
                )
        return points[-1][1]

    return function


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[tuple[int, int]]
) -> Scorer:
    """A scorer mapping each resource's utilisation through ``shape`` and averaging.

    ``shape`` holds ``(utilization, score)`` points with scores on the 0..10 scale; they are
    scaled by 10 to the scheduler's 0..100. Resources whose mapped score is 0 do not count in
    the weighted average, which is rounded half away from zero.
    """
    scale = fw.MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear_function([(u, s * scale) for u, s in shape])
    weights = tuple(r.weight for r in resources)

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def scorer(
        requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
    ) -> int:
        node_score = 0
        weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            weight = weights[i]
            score = resource_score(requested[i], capacity)
            if score > 0:
                node_score += score * weight
                weight_sum += weight
        if weight_sum == 0:
            return 0
        return _go_round(node_score / weight_sum)

    return scorer
