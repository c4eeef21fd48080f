"""The ``MostAllocated`` scoring strategy: favour the fullest nodes (bin packing).

Port of upstream ``noderesources/most_allocated.go``.
"""

from __future__ import annotations

from collections.abc import Sequence

from schedframe import framework as fw
from schedframe_plugins.noderesources.resource_allocation import ResourceSpec, Scorer

__all__ = ["most_requested_score", "most_resource_scorer"]


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """A scorer averaging, with the resources' weights, the used share of each resource.

    ``sum(weight * requested * 100 // allocatable) // sum(weight)`` over the resources the node
    offers; 0 when it offers none of them.
    """
    weights = tuple(r.weight for r in resources)

    def scorer(
        requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
    ) -> int:
        node_score = 0
        weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            weight = weights[i]
            node_score += most_requested_score(requested[i], capacity) * weight
            weight_sum += weight
        if weight_sum == 0:
            return 0
        return node_score // weight_sum

    return scorer


def most_requested_score(requested: int, capacity: int) -> int:
    """The used share of ``capacity`` on the 0..100 scale.

    A request above capacity (possible because request-less pods count default amounts when
    scoring) is read as a full node.
    """
    if capacity == 0:
        return 0
    requested = min(requested, capacity)
    return requested * fw.MAX_NODE_SCORE // capacity
