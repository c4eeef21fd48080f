"""What NodeResourcesFit's Filter is sure to reject, read off sums instead of a NodeInfo copy.

DefaultPreemption uses it to skip work whose result it knows: a node where the preemptor would
not fit even with every lower-priority pod gone cannot be a candidate, and a victim put back
after which the preemptor no longer fits stays a victim. Only the pod-count, cpu, memory and
ephemeral-storage checks of :func:`~schedframe_plugins.noderesources.fit.fits_request` are
modelled; each one failing makes that Filter reject, whatever the plugin's arguments (they
only ignore extended resources). When the Filter runs, a rejection by it means the whole
Filter run fails, so these answers are "certainly fails"; for a pod asking for nothing else
(see :func:`request_of`) they are also "fits" when they find nothing exceeded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from schedframe import framework as fw
from schedframe_plugins.noderesources import fit as _fit

__all__ = [
    "FitRequest",
    "Remainders",
    "exceeds",
    "fit_filter",
    "node_exceeds",
    "request_of",
]

CPU: Final = "cpu"
MEMORY: Final = "memory"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"
PODS: Final = "pods"

#: The preemptor's ``(milli_cpu, memory, ephemeral_storage)`` as NodeResourcesFit's Filter
#: reads it from the cycle state.
FitRequest = tuple[int, int, int]


def fit_filter(filter_plugins: Sequence[object]) -> _fit.Fit | None:
    """The in-tree NodeResourcesFit among ``filter_plugins``, with its own ``filter``."""
    for plugin in filter_plugins:
        if isinstance(plugin, _fit.Fit) and getattr(plugin.filter, "__func__", None) is (
            _fit.Fit.filter
        ):
            return plugin
    return None


def request_of(state: fw.CycleState) -> tuple[FitRequest, bool] | None:
    """What NodeResourcesFit's PreFilter stored for the pod, or ``None`` if nothing; with
    whether that is all the pod asks for (no extended or other scalar resources: the Filter
    then fails exactly when :func:`exceeds` says so)."""
    request = state.get(_fit._PRE_FILTER)
    if request is None:
        return None
    return (request.milli_cpu, request.memory, request.ephemeral_storage), not request.scalar


def exceeds(
    request: FitRequest,
    allocatable: Mapping[str, int],
    num_pods: int,
    used_cpu: int,
    used_memory: int,
    used_storage: int,
) -> bool:
    """True when NodeResourcesFit's Filter rejects a node holding ``num_pods`` pods that use
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
