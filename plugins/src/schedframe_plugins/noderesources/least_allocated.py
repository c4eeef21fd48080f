"""The ``LeastAllocated`` scoring strategy: favour nodes with the most room left.

Port of upstream ``noderesources/least_allocated.go``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from schedframe import framework as fw
from schedframe_plugins.noderesources.resource_allocation import (
    ColumnsKernel,
    CpuMemoryKernel,
    ResourceSpec,
    Scorer,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "least_allocated_columns_kernel",
    "least_allocated_cpu_memory_kernel",
    "least_requested_score",
    "least_resource_scorer",
]


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """A scorer averaging, with the resources' weights, the unused share of each resource.

    ``sum(weight * (allocatable - requested) * 100 // allocatable) // sum(weight)`` over the
    resources the node offers; 0 when it offers none of them.
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
            node_score += least_requested_score(requested[i], capacity) * weight
            weight_sum += weight
        if weight_sum == 0:
            return 0
        return node_score // weight_sum

    return scorer


def least_requested_score(requested: int, capacity: int) -> int:
    """The unused share of ``capacity`` on the 0..100 scale; 0 when over-requested."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * fw.MAX_NODE_SCORE // capacity


def least_allocated_cpu_memory_kernel(resources: Sequence[ResourceSpec]) -> CpuMemoryKernel:
    """:func:`least_resource_scorer` for the resources ``(cpu, memory)``, over many nodes.

    The same integer arithmetic, node for node, without building three lists per node.
    """
    w_cpu, w_memory = (r.weight for r in resources)
    max_score = fw.MAX_NODE_SCORE

    def kernel(
        nodes: Sequence[fw.NodeInfo], cpu_request: int, memory_request: int, use_requested: bool
    ) -> list[int]:
        out: list[int] = []
        append = out.append
        for ni in nodes:
            allocatable = ni.allocatable
            base = ni.requested if use_requested else ni.non_zero_requested
            node_score = 0
            weight_sum = 0
            capacity = allocatable.get("cpu", 0)
            if capacity != 0:
                requested = base.get("cpu", 0) + cpu_request
                if requested <= capacity:
                    node_score += (capacity - requested) * max_score // capacity * w_cpu
                weight_sum += w_cpu
            capacity = allocatable.get("memory", 0)
            if capacity != 0:
                requested = base.get("memory", 0) + memory_request
                if requested <= capacity:
                    node_score += (capacity - requested) * max_score // capacity * w_memory
                weight_sum += w_memory
            append(node_score // weight_sum if weight_sum != 0 else 0)
        return out

    return kernel


def least_allocated_columns_kernel(resources: Sequence[ResourceSpec]) -> ColumnsKernel:
    """:func:`least_allocated_cpu_memory_kernel` over the snapshot's NumPy columns: the same
    integer arithmetic (floor division, as Python's) element for element."""
    w_cpu, w_memory = (r.weight for r in resources)
    max_score = fw.MAX_NODE_SCORE

    def kernel(
        columns: fw.NodeColumns,
        rows: npt.NDArray[np.intp],
        cpu_request: int,
        memory_request: int,
        use_requested: bool,
    ) -> npt.NDArray[np.int64]:
        import numpy as np

        node_score: npt.NDArray[np.int64] | int = 0
        # The weights summed over the resources the nodes offer: a number while every node
        # offers each resource (the usual case, fewer array operations), else an array.
        weight_sum: npt.NDArray[np.int64] | int = 0
        for allocatable, base, request, weight in (
            (
                columns.allocatable_cpu,
                columns.requested_cpu if use_requested else columns.non_zero_requested_cpu,
                cpu_request,
                w_cpu,
            ),
            (
                columns.allocatable_memory,
                columns.requested_memory if use_requested else columns.non_zero_requested_memory,
                memory_request,
                w_memory,
            ),
        ):
            capacity = allocatable[rows]
            requested = base[rows] + request
            if capacity.all():
                share = (capacity - requested) * max_score // capacity
                node_score = node_score + np.where(requested <= capacity, share, 0) * weight
                weight_sum = weight_sum + weight
                continue
            offered = capacity != 0
            room = offered & (requested <= capacity)
            share = (capacity - requested) * max_score // np.where(offered, capacity, 1)
            node_score = node_score + np.where(room, share, 0) * weight
            weight_sum = weight_sum + offered * weight
        if isinstance(weight_sum, int):
            if weight_sum == 0 or isinstance(node_score, int):
                return np.zeros(len(rows), dtype=np.int64)
            return node_score // weight_sum
        return np.where(weight_sum != 0, node_score // np.where(weight_sum != 0, weight_sum, 1), 0)

    return kernel
