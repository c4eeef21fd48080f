"""What a resource-bound Filter is sure to reject, read off sums instead of a NodeInfo copy.

A Filter plugin declaring :class:`~schedframe.framework.batch.ResourceBound` (NodeResourcesFit
does) promises to reject a node when the pod count or one of the pod's cpu, memory and
ephemeral-storage requests does not fit, and, for a pod asking for nothing else, to pass it
otherwise. DefaultPreemption uses that promise to skip work whose result it knows: a node where
the preemptor would not fit even with every lower-priority pod gone cannot be a candidate, and
a victim put back after which the preemptor no longer fits stays a victim. When the Filter
runs, a rejection by it means the whole Filter run fails, so these answers are "certainly
fails"; for a pod asking for nothing else they are also "fits" when they find nothing exceeded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from schedframe import framework as fw

__all__ = [
    "FitRequest",
    "Remainders",
    "exceeds",
    "node_exceeds",
]

CPU: Final = "cpu"
MEMORY: Final = "memory"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"
PODS: Final = "pods"

#: The preemptor's ``(milli_cpu, memory, ephemeral_storage)`` as a resource-bound Filter
#: checks it (:meth:`ResourceBound.resource_bound <schedframe.framework.batch.ResourceBound>`).
FitRequest = tuple[int, int, int]


def exceeds(
    request: FitRequest,
    allocatable: Mapping[str, int],
    num_pods: int,
    used_cpu: int,
    used_memory: int,
    used_storage: int,
) -> bool:
    """True when a resource-bound Filter rejects a node holding ``num_pods`` pods that use
    these amounts (False means "not known", not "fits")."""
    cpu, memory, storage = request
    return (
        num_pods + 1 > allocatable.get(PODS, 0)
        or (cpu > 0 and cpu > allocatable.get(CPU, 0) - used_cpu)
        or (memory > 0 and memory > allocatable.get(MEMORY, 0) - used_memory)
        or (storage > 0 and storage > allocatable.get(EPHEMERAL_STORAGE, 0) - used_storage)
    )


def node_exceeds(request: FitRequest, node_info: fw.NodeInfo) -> bool:
    """:func:`exceeds` for the node as it is."""
    requested = node_info.requested
    return exceeds(
        request,
        node_info.allocatable,
        len(node_info.pods),
        requested.get(CPU, 0),
        requested.get(MEMORY, 0),
        requested.get(EPHEMERAL_STORAGE, 0),
    )


class Remainders:
    """What stays on a node once its pods below a priority are gone: ``(number of such pods,
    pods left, cpu, memory, ephemeral storage requested by those left)``.

    Sums are kept per node name and reused while the NodeInfo's generation and the priority
    are the ones they were computed for: a generation names one content of one node (every
    change draws a new one; a copy keeps its source's), so a match means the same pods.
    """

    __slots__ = ("_by_node",)

    def __init__(self) -> None:
        self._by_node: dict[str, tuple[int, int, tuple[int, int, int, int, int]]] = {}

    def of(self, node_info: fw.NodeInfo, priority: int) -> tuple[int, int, int, int, int]:
        """The remainder of ``node_info`` without its pods of priority below ``priority``."""
        name = node_info.name
        generation = node_info.generation
        cached = self._by_node.get(name)
        if cached is not None and cached[0] == generation and cached[1] == priority:
            return cached[2]
        requested = node_info.requested
        cpu = requested.get(CPU, 0)
        memory = requested.get(MEMORY, 0)
        storage = requested.get(EPHEMERAL_STORAGE, 0)
        pods = node_info.pods
        lower = 0
        for info in pods:
            pod = info.pod
            if pod.priority < priority:
                lower += 1
                r = pod.requests
                cpu -= r.get(CPU, 0)
                memory -= r.get(MEMORY, 0)
                storage -= r.get(EPHEMERAL_STORAGE, 0)
        result = (lower, len(pods) - lower, cpu, memory, storage)
        self._by_node[name] = (generation, priority, result)
        return result
