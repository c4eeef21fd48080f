"""NodeResourcesBalancedAllocation: favour nodes whose resources the pod leaves evenly used.

Port of upstream ``noderesources/balanced_allocation.go``. The *balance* of a node is
``int((1 - std) * 100)``, where ``std`` is the standard deviation of the requested fractions
(each capped at 1) of the configured resources. Up to v1.35 the score is the balance with the
pod placed. From v1.36 (kubernetes PR #135573) it is the change the pod makes to the balance,
``50 + (50 + with_pod - without_pod) / 2`` in integer arithmetic, so that a node the pod makes
more balanced wins over one it leaves as unbalanced as it was. Which one runs follows the
emulated version (``handle.features``). Pods that request none of the resources (best-effort
pods) are not scored at all (PreScore returns Skip). With the DRAExtendedResource gate on, a
configured extended resource that a DeviceClass provides and the node does not advertise
counts the class's devices on the node (and how many are allocated), as NodeResourcesFit's
scoring does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar, Final

import attrs

from schedframe import errors
from schedframe import framework as fw
from schedframe.objects import Pod
from schedframe_plugins import names
from schedframe_plugins._dra.cel import CELCache
from schedframe_plugins._dra.extended import DRAScoreState, dra_score_state, dra_totals
from schedframe_plugins.noderesources.fit import sign_resources
from schedframe_plugins.noderesources.resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceAllocationScorer,
    ResourceSpec,
    default_resources,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "BalancedAllocation",
    "NodeResourcesBalancedAllocationArgs",
    "balanced_change_columns_kernel",
    "balanced_change_cpu_memory_kernel",
    "balanced_change_scorer",
    "balanced_columns_kernel",
    "balanced_cpu_memory_kernel",
    "balanced_resource_score",
    "balanced_resource_scorer",
]

NAME: Final = names.NODE_RESOURCES_BALANCED_ALLOCATION


@attrs.frozen(kw_only=True)
class NodeResourcesBalancedAllocationArgs:
    """Args of NodeResourcesBalancedAllocation: the resources to balance (cpu and memory)."""

    resources: tuple[ResourceSpec, ...] = attrs.field(
        default=DEFAULT_RESOURCES, converter=default_resources
    )

    def validate(self) -> list[errors.FieldIssue]:
        """Upstream ``ValidateNodeResourcesBalancedAllocationArgs``: unique names, weight 1."""
        issues: list[errors.FieldIssue] = []
        seen: set[str] = set()
        for i, resource in enumerate(self.resources):
            if resource.name in seen:
                issues.append(
                    errors.FieldIssue(
                        path=f"resources[{i}].name", kind=errors.DUPLICATE, value=resource.name
                    )
                )
            else:
                seen.add(resource.name)
            if resource.weight != 1:
                issues.append(
                    errors.FieldIssue(
                        path=f"resources[{i}].weight",
                        kind=errors.INVALID,
                        value=resource.weight,
                        detail="must be 1",
                    )
                )
        return issues


def balanced_resource_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """``int((1 - std) * 100)`` over the requested fractions (each capped at 1) of the
    resources the node offers; two resources use ``|f1 - f2| / 2``, one or none score 100."""
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        fraction = min(req / alloc, 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * fw.MAX_NODE_SCORE)


def balanced_resource_scorer(
    requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
) -> int:
    """Upstream ``balancedResourceScorer`` up to v1.35: the balance with the pod placed."""
    return balanced_resource_score(requested, allocatable)


_HALF: Final = fw.MAX_NODE_SCORE // 2


def _change(with_pod: int, without_pod: int) -> int:
    # Go's integer division truncates toward zero; Python's // floors.
    delta = _HALF + with_pod - without_pod
    quotient = abs(delta) // 2
    return _HALF + (quotient if delta >= 0 else -quotient)


def balanced_change_scorer(
    requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
) -> int:
    """Upstream ``balancedResourceScorer`` from v1.36: how much the pod improves the balance,
    ``50 + (50 + with_pod - without_pod) / 2`` (Go integer division)."""
    return _change(
        balanced_resource_score(requested, allocatable),
        balanced_resource_score(allocated, allocatable),
    )


def balanced_cpu_memory_kernel(
    nodes: Sequence[fw.NodeInfo], cpu_request: int, memory_request: int, use_requested: bool
) -> list[int]:
    """:func:`balanced_resource_scorer` for the resources ``(cpu, memory)``, over many nodes:
    the same float arithmetic, node for node, without building lists per node."""
    max_score = fw.MAX_NODE_SCORE
    out: list[int] = []
    append = out.append
    for ni in nodes:
        allocatable = ni.allocatable
        base = ni.requested if use_requested else ni.non_zero_requested
        cpu = allocatable.get("cpu", 0)
        memory = allocatable.get("memory", 0)
        if cpu != 0 and memory != 0:
            f_cpu = min((base.get("cpu", 0) + cpu_request) / cpu, 1.0)
            f_memory = min((base.get("memory", 0) + memory_request) / memory, 1.0)
            append(int((1 - abs((f_cpu - f_memory) / 2)) * max_score))
        else:  # one fraction or none: no spread
            append(int((1 - 0.0) * max_score))
    return out


def balanced_columns_kernel(
    columns: fw.NodeColumns,
    rows: npt.NDArray[np.intp],
    cpu_request: int,
    memory_request: int,
    use_requested: bool,
) -> npt.NDArray[np.int64] | None:
    """:func:`balanced_cpu_memory_kernel` over the snapshot's NumPy columns: the same float
    operations in the same order, element for element; ``None`` when an amount is too large
    for float64 to hold exactly (Python divides integers exactly)."""
    import numpy as np

    if use_requested:
        base_cpu, base_memory = columns.requested_cpu, columns.requested_memory
    else:
        base_cpu, base_memory = columns.non_zero_requested_cpu, columns.non_zero_requested_memory
    cpu = columns.allocatable_cpu[rows]
    memory = columns.allocatable_memory[rows]
    used_cpu = base_cpu[rows] + cpu_request
    used_memory = base_memory[rows] + memory_request
    limit = fw.EXACT_LIMIT
    if len(rows) and (
        int(np.abs(used_cpu).max()) >= limit or int(np.abs(used_memory).max()) >= limit
    ):
        return None
    both = (cpu != 0) & (memory != 0)
    if both.all():  # the usual case: every node offers both (fewer array operations)
        f_cpu = np.minimum(used_cpu / cpu, 1.0)
        f_memory = np.minimum(used_memory / memory, 1.0)
        return ((1 - np.abs((f_cpu - f_memory) / 2)) * fw.MAX_NODE_SCORE).astype(np.int64)
    f_cpu = np.minimum(used_cpu / np.where(both, cpu, 1), 1.0)
    f_memory = np.minimum(used_memory / np.where(both, memory, 1), 1.0)
    scores = ((1 - np.abs((f_cpu - f_memory) / 2)) * fw.MAX_NODE_SCORE).astype(np.int64)
    return np.where(both, scores, int((1 - 0.0) * fw.MAX_NODE_SCORE))


def balanced_change_cpu_memory_kernel(
    nodes: Sequence[fw.NodeInfo], cpu_request: int, memory_request: int, use_requested: bool
) -> list[int]:
    """:func:`balanced_change_scorer` for the resources ``(cpu, memory)``, over many nodes."""
    max_score = fw.MAX_NODE_SCORE
    out: list[int] = []
    append = out.append
    for ni in nodes:
        allocatable = ni.allocatable
        base = ni.requested if use_requested else ni.non_zero_requested
        cpu = allocatable.get("cpu", 0)
        memory = allocatable.get("memory", 0)
        if cpu != 0 and memory != 0:
            used_cpu = base.get("cpu", 0)
            used_memory = base.get("memory", 0)
            f_cpu = min((used_cpu + cpu_request) / cpu, 1.0)
            f_memory = min((used_memory + memory_request) / memory, 1.0)
            with_pod = int((1 - abs((f_cpu - f_memory) / 2)) * max_score)
            f_cpu = min(used_cpu / cpu, 1.0)
            f_memory = min(used_memory / memory, 1.0)
            without_pod = int((1 - abs((f_cpu - f_memory) / 2)) * max_score)
            append(_change(with_pod, without_pod))
        else:  # one fraction or none: no spread either way
            append(_change(max_score, max_score))
    return out


def balanced_change_columns_kernel(
    columns: fw.NodeColumns,
    rows: npt.NDArray[np.intp],
    cpu_request: int,
    memory_request: int,
    use_requested: bool,
) -> npt.NDArray[np.int64] | None:
    """:func:`balanced_change_cpu_memory_kernel` over the snapshot's NumPy columns."""
    import numpy as np

    with_pod = balanced_columns_kernel(columns, rows, cpu_request, memory_request, use_requested)
    without_pod = balanced_columns_kernel(columns, rows, 0, 0, use_requested)
    if with_pod is None or without_pod is None:
        return None
    delta = _HALF + with_pod - without_pod
    change: npt.NDArray[np.int64] = (_HALF + np.sign(delta) * (np.abs(delta) // 2)).astype(np.int64)
    return change


def _is_best_effort(pod_requests: Iterable[int]) -> bool:
    return all(r == 0 for r in pod_requests)


_PRE_SCORE: Final = fw.StateKey[list[int]]("PreScore" + NAME)
_DRA_SCORE: Final = fw.StateKey[DRAScoreState]("PreScoreDRA" + NAME)


class BalancedAllocation(fw.PreScorePlugin, fw.ScorePlugin):
    """Scores nodes by how evenly their resources would be used with the pod placed."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = NodeResourcesBalancedAllocationArgs

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None, handle: fw.Handle) -> None:
        args = args if args is not None else NodeResourcesBalancedAllocationArgs()
        issues = args.validate()
        if issues:
            raise errors.ConfigError(issues)
        self.args = args
        self._handle = handle
        self._dra_extended = handle.features.enabled("DRAExtendedResource")
        self._cel = CELCache()
        if handle.features.at_least("1.36"):
            self._scorer = ResourceAllocationScorer(
                NAME,
                balanced_change_scorer,
                args.resources,
                use_requested=True,
                cpu_memory_kernel=balanced_change_cpu_memory_kernel,
                columns_kernel=balanced_change_columns_kernel,
            )
        else:
            self._scorer = ResourceAllocationScorer(
                NAME,
                balanced_resource_scorer,
                args.resources,
                use_requested=True,
                cpu_memory_kernel=balanced_cpu_memory_kernel,
                columns_kernel=balanced_columns_kernel,
            )

    def sign_pod(self, pod: Pod) -> tuple[Sequence[fw.SignFragment], fw.Status | None]:
        """The pod's effective requests (upstream ``BalancedAllocation.SignPod``)."""
        return sign_resources(self._handle, pod)

    def pre_score(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.Status | None:
        """Compute the pod's requests once; Skip for a pod requesting none of the resources,
        so request-less pods do not all pile onto the same node."""
        requests = self._scorer.pod_requests(pod)
        if _is_best_effort(requests):
            return fw.Status(fw.Code.SKIP)
        state[_PRE_SCORE] = requests
        dra = self._dra_score_state()
        if dra is not None:
            state[_DRA_SCORE] = dra
        return None

    def _dra_score_state(self) -> DRAScoreState | None:
        if not self._dra_extended:
            return None
        return dra_score_state(self._handle.shared_dra_manager(), self._scorer.names)

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        """The balance score; 0 for a best-effort pod scored without PreScore."""
        requests = state.get(_PRE_SCORE)
        if requests is None:
            requests = self._scorer.pod_requests(pod)
            if _is_best_effort(requests):
                return 0
            dra = self._dra_score_state()
        else:
            dra = state.get(_DRA_SCORE)
        return self._scorer.score(node_info, requests, dra_totals(dra, self._cel))

    def score_many(self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]) -> list[int]:
        """:meth:`score` of every node, in order (the framework's batch form)."""
        requests = state.get(_PRE_SCORE)
        if requests is None:
            requests = self._scorer.pod_requests(pod)
            if _is_best_effort(requests):
                return [0] * len(nodes)
            dra = self._dra_score_state()
        else:
            dra = state.get(_DRA_SCORE)
        return self._scorer.score_many(nodes, requests, dra_totals(dra, self._cel))

    def score_batch(
        self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns, rows: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.int64] | None:
        """:meth:`score` of the nodes at ``rows`` (the framework's batch path)."""
        requests = state.get(_PRE_SCORE)
        if requests is None or _DRA_SCORE in state:
            return None
        return self._scorer.score_columns(columns, rows, requests)
