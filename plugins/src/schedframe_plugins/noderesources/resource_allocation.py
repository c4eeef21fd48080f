"""The scoring engine shared by NodeResourcesFit and NodeResourcesBalancedAllocation.

Port of upstream ``noderesources/resource_allocation.go``: for each configured resource it
works out the node's allocatable amount, what is already allocated there, and what would be
requested with the pod on it, then hands the three columns to a strategy function.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from schedframe import framework as fw
from schedframe.objects import Node, Pod, is_scalar_resource_name

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT_RESOURCES",
    "CpuMemoryKernel",
    "DRATotals",
    "ResourceAllocationScorer",
    "ResourceSpec",
    "Scorer",
]

_CPU: Final = "cpu"
_MEMORY: Final = "memory"
_EPHEMERAL_STORAGE: Final = "ephemeral-storage"


@attrs.frozen(kw_only=True)
class ResourceSpec:
    """One resource a scoring strategy looks at, and its weight (upstream ``ResourceSpec``)."""

    name: str
    weight: int = 1


#: ``cpu`` and ``memory`` with weight 1: upstream's ``defaultResourceSpec``.
DEFAULT_RESOURCES: Final = (ResourceSpec(name=_CPU, weight=1), ResourceSpec(name=_MEMORY, weight=1))


def default_resources(value: Iterable[ResourceSpec]) -> tuple[ResourceSpec, ...]:
    """Upstream v1 defaulting of a resource list: empty -> cpu and memory; weight 0 -> 1."""
    specs = tuple(value)
    if not specs:
        return DEFAULT_RESOURCES
    return tuple(attrs.evolve(s, weight=1) if s.weight == 0 else s for s in specs)


#: ``scorer(requested, allocated, allocatable) -> score``: each argument holds one integer per
#: configured resource; ``requested`` includes the pod, ``allocated`` does not. Resources the
#: node does not offer (allocatable 0) are zero in all three.
Scorer = Callable[[Sequence[int], Sequence[int], Sequence[int]], int]


#: ``kernel(nodes, cpu_request, memory_request, use_requested) -> scores``: a strategy's
#: batch form for the resources ``(cpu, memory)``, equal node for node to
#: :meth:`ResourceAllocationScorer.score` with its scorer.
CpuMemoryKernel = Callable[[Sequence[fw.NodeInfo], int, int, bool], list[int]]
#: ``totals(node, resource) -> (allocatable, allocated)``: the devices of the DeviceClass
#: providing ``resource`` that the node reaches, and how many of them are allocated
#: (DRAExtendedResource); ``(0, 0)`` when no class provides it.
DRATotals = Callable[[Node, str], tuple[int, int]]
#: ``kernel(columns, rows, cpu_request, memory_request, use_requested) -> scores``: the same
#: over the snapshot's NumPy columns, or ``None`` when the arrays cannot give the exact answer.
ColumnsKernel = Callable[
    [fw.NodeColumns, "npt.NDArray[np.intp]", int, int, bool], "npt.NDArray[np.int64] | None"
]


class ResourceAllocationScorer:
    """Computes a node's score from per-resource amounts (upstream ``resourceAllocationScorer``).

    Args:
        name: the strategy's name, for messages.
        scorer: the strategy function.
        resources: the resources to look at, in order.
        use_requested: read the node's and the pod's plain requests for cpu and memory
            (BalancedAllocation) instead of the non-zero ones (Fit's strategies).
    """

    __slots__ = (
        "_columns_kernel",
        "_cpu_memory_kernel",
        "_names",
        "name",
        "resources",
        "scorer",
        "use_requested",
    )

    def __init__(
        self,
        name: str,
        scorer: Scorer,
        resources: Sequence[ResourceSpec],
        *,
        use_requested: bool = False,
        cpu_memory_kernel: CpuMemoryKernel | None = None,
        columns_kernel: ColumnsKernel | None = None,
    ) -> None:
        self.name = name
        self.scorer = scorer
        self.resources = tuple(resources)
        self.use_requested = use_requested
        self._names = tuple(r.name for r in self.resources)
        # Used by score_many when the resources are exactly (cpu, memory).
        self._cpu_memory_kernel = cpu_memory_kernel if self._names == (_CPU, _MEMORY) else None
        self._columns_kernel = columns_kernel if self._names == (_CPU, _MEMORY) else None

    def pod_requests(self, pod: Pod) -> list[int]:
        """The pod's request for each configured resource (upstream
        ``calculatePodResourceRequestList``); cpu and memory use the non-zero defaults unless
        ``use_requested``."""
        requests = pod.requests if self.use_requested else pod.non_zero_requests
        return [requests.get(name, 0) for name in self._names]

    @property
    def names(self) -> tuple[str, ...]:
        """The configured resources' names, in order."""
        return self._names

    def score(
        self,
        node_info: fw.NodeInfo,
        pod_requests: Sequence[int],
        dra_totals: DRATotals | None = None,
    ) -> int:
        """The node's score for a pod whose per-resource requests are ``pod_requests``.

        With ``dra_totals`` (DRAExtendedResource), a requested scalar resource the node does
        not advertise counts the devices DRA provides for it instead, as upstream's
        ``calculateResourceAllocatableRequest``.

        Raises:
            ValueError: no resources are configured (upstream's "resources not found").
        """
        names = self._names
        if not names:
            raise ValueError("resources not found")
        n = len(names)
        requested = [0] * n
        allocated = [0] * n
        allocatable = [0] * n
        node_allocatable = node_info.allocatable
        node_requested = node_info.requested
        base = node_requested if self.use_requested else node_info.non_zero_requested
        for i in range(n):
            name = names[i]
            pod_request = pod_requests[i]
            if name == _CPU or name == _MEMORY:
                alloc = node_allocatable.get(name, 0)
                used = base.get(name, 0)
            elif name == _EPHEMERAL_STORAGE:
                alloc = node_allocatable.get(name, 0)
                used = node_requested.get(name, 0)
            elif pod_request == 0 or not is_scalar_resource_name(name):
                # A scalar resource the pod does not ask for is left out of the score, and
                # names the scheduler does not track as scalars (pods, storage) count as absent.
                continue
            else:
                alloc = node_allocatable.get(name, 0)
                if alloc == 0 and dra_totals is not None:
                    node = node_info.node
                    dra_alloc, dra_used = (0, 0) if node is None else dra_totals(node, name)
                    if dra_alloc > 0:
                        allocatable[i] = dra_alloc
                        allocated[i] = dra_used
                        requested[i] = dra_used + pod_request
                        continue
                if name not in node_allocatable:
                    continue
                used = node_requested.get(name, 0)
            if alloc == 0:
                continue
            allocatable[i] = alloc
            allocated[i] = used
            requested[i] = used + pod_request
        return self.scorer(requested, allocated, allocatable)

    def score_many(
        self,
        nodes: Sequence[fw.NodeInfo],
        pod_requests: Sequence[int],
        dra_totals: DRATotals | None = None,
    ) -> list[int]:
        """:meth:`score` of every node in ``nodes``, in order (one pass, no per-node lists
        when the strategy has a kernel for cpu and memory, which DRA never provides)."""
        kernel = self._cpu_memory_kernel
        if kernel is not None:
            return kernel(nodes, pod_requests[0], pod_requests[1], self.use_requested)
        score = self.score
        return [score(ni, pod_requests, dra_totals) for ni in nodes]

    def score_columns(
        self,
        columns: fw.NodeColumns,
        rows: npt.NDArray[np.intp],
        pod_requests: Sequence[int],
    ) -> npt.NDArray[np.int64] | None:
        """:meth:`score` of the nodes at ``rows`` of ``columns``, or ``None`` when the
        strategy has no columns kernel for its resources or the arrays are not exact."""
        kernel = self._columns_kernel
        if kernel is None or not columns.exact:
            return None
        cpu, memory = pod_requests[0], pod_requests[1]
        if not (
            -fw.EXACT_LIMIT < cpu < fw.EXACT_LIMIT and -fw.EXACT_LIMIT < memory < fw.EXACT_LIMIT
        ):
            return None
        return kernel(columns, rows, cpu, memory, self.use_requested)
