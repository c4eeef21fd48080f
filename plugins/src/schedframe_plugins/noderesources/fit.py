"""NodeResourcesFit: does the node have room for the pod's requests? Which node is best?

Port of upstream ``noderesources/fit.go``. Filter checks the pod count and every requested
resource against what is left on the node; a request bigger than the node's whole allocatable
is ``UnschedulableAndUnresolvable`` (preemption cannot help), anything else ``Unschedulable``.
Score applies the configured strategy (LeastAllocated, MostAllocated or
RequestedToCapacityRatio) to the non-zero requests.

With the DRAExtendedResource gate on, an extended resource a DeviceClass provides (its
``extendedResourceName`` or the implicit ``deviceclass.resource.kubernetes.io/<class>``) that
the node does not advertise in its allocatable is left to DynamicResources by Filter, and
Score counts the class's devices on the node as its allocatable amount.

Not modelled: pod-level resources (``spec.resources``) and the in-place resize status
resources; the pod's container requests are what count.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar, Final, TypeVar

import attrs

from schedframe import errors
from schedframe import framework as fw
from schedframe.objects import (
    DeviceClass,
    Node,
    Pod,
    is_extended_resource_name,
    is_scalar_resource_name,
)
from schedframe.objects.validation import label_name_issues
from schedframe_plugins import names
from schedframe_plugins._dra.cel import CELCache
from schedframe_plugins._dra.extended import (
    IMPLICIT_PREFIX,
    DRAScoreState,
    device_class_mapping,
    dra_score_state,
    dra_totals,
    is_dra_extended_resource_name,
)
from schedframe_plugins.noderesources.least_allocated import (
    least_allocated_columns_kernel,
    least_allocated_cpu_memory_kernel,
    least_resource_scorer,
)
from schedframe_plugins.noderesources.most_allocated import most_resource_scorer
from schedframe_plugins.noderesources.requested_to_capacity_ratio import (
    MAX_CUSTOM_PRIORITY_SCORE,
    requested_to_capacity_ratio_scorer,
)
from schedframe_plugins.noderesources.resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceAllocationScorer,
    ResourceSpec,
    Scorer,
    default_resources,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "ERR_REASON_TOO_MANY_PODS",
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "Fit",
    "InsufficientResource",
    "NodeResourcesFitArgs",
    "PodResourceRequest",
    "RequestedToCapacityRatioParam",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "compute_pod_resource_request",
    "fits",
    "fits_request",
]


NAME: Final = names.NODE_RESOURCES_FIT

#: The Filter reason when the node already runs as many pods as it allows.
ERR_REASON_TOO_MANY_PODS: Final = "Too many pods"

LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"
_SUPPORTED_STRATEGIES: Final = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

_CPU: Final = "cpu"
_MEMORY: Final = "memory"
_EPHEMERAL_STORAGE: Final = "ephemeral-storage"
_PODS: Final = "pods"


def insufficient_reason(resource: str) -> str:
    """``Insufficient <resource>``, the Filter reason for a resource that does not fit."""
    return f"Insufficient {resource}"


_REASON_CPU: Final = insufficient_reason(_CPU)
_REASON_MEMORY: Final = insufficient_reason(_MEMORY)
_REASON_EPHEMERAL_STORAGE: Final = insufficient_reason(_EPHEMERAL_STORAGE)


# --------------------------------------------------------------------------------------------
# Args
# --------------------------------------------------------------------------------------------


_T = TypeVar("_T")


def _as_tuple(items: Iterable[_T]) -> tuple[_T, ...]:
    # A Python function, not the builtin: attrs inspects a converter's signature, and for a
    # builtin that means parsing its text signature (tens of milliseconds at first import).
    return tuple(items)


@attrs.frozen(kw_only=True)
class UtilizationShapePoint:
    """A point of a scoring curve: ``utilization`` in percent, ``score`` on 0..10."""

    utilization: int
    score: int


@attrs.frozen(kw_only=True)
class RequestedToCapacityRatioParam:
    """The curve of the ``RequestedToCapacityRatio`` strategy."""

    shape: tuple[UtilizationShapePoint, ...] = attrs.field(default=(), converter=_as_tuple)


@attrs.frozen(kw_only=True)
class ScoringStrategy:
    """How NodeResourcesFit scores nodes (upstream ``ScoringStrategy``).

    ``resources`` defaults to cpu and memory with weight 1, and a weight of 0 reads as 1, as
    upstream's v1 defaulting does. ``type`` is not defaulted here: upstream only defaults the
    whole strategy (to LeastAllocated) when it is absent.
    """

    type: str = ""
    resources: tuple[ResourceSpec, ...] = attrs.field(
        default=DEFAULT_RESOURCES, converter=default_resources
    )
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


def _default_strategy() -> ScoringStrategy:
    return ScoringStrategy(type=LEAST_ALLOCATED)


@attrs.frozen(kw_only=True)
class NodeResourcesFitArgs:
    """Args of NodeResourcesFit (upstream ``NodeResourcesFitArgs``).

    Attributes:
        ignored_resources: extended resources Filter does not check.
        ignored_resource_groups: extended-resource prefixes (``example.com``) Filter does not
            check.
        scoring_strategy: the Score strategy; LeastAllocated over cpu and memory by default.
    """

    ignored_resources: tuple[str, ...] = attrs.field(default=(), converter=_as_tuple)
    ignored_resource_groups: tuple[str, ...] = attrs.field(default=(), converter=_as_tuple)
    scoring_strategy: ScoringStrategy = attrs.field(factory=_default_strategy)

    def validate(self) -> list[errors.FieldIssue]:
        """Upstream ``ValidateNodeResourcesFitArgs``; paths relative to the args."""
        issues: list[errors.FieldIssue] = []
        for i, res in enumerate(self.ignored_resources):
            issues.extend(_label_name_issues(f"ignoredResources[{i}]", res))
        for i, group in enumerate(self.ignored_resource_groups):
            path = f"ignoredResourceGroups[{i}]"
            if "/" in group:
                issues.append(
                    errors.FieldIssue(
                        path=path,
                        kind=errors.INVALID,
                        value=group,
                        detail="resource group name can't contain '/'",
                    )
                )
            issues.extend(_label_name_issues(path, group))
        strategy = self.scoring_strategy
        if strategy.type not in _SUPPORTED_STRATEGIES:
            issues.append(
                errors.FieldIssue(
                    path="scoringStrategy.type",
                    kind=errors.UNSUPPORTED,
                    value=strategy.type,
                    detail="supported values: "
                    + ", ".join(f'"{s}"' for s in _SUPPORTED_STRATEGIES),
                )
            )
        issues.extend(validate_resources(strategy.resources, "scoringStrategy.resources"))
        if (
            strategy.type == REQUESTED_TO_CAPACITY_RATIO
            and strategy.requested_to_capacity_ratio is None
        ):
            # Upstream does not check this and fails building the plugin; say where instead.
            issues.append(
                errors.FieldIssue(
                    path="scoringStrategy.requestedToCapacityRatio",
                    kind=errors.REQUIRED,
                    detail="scoring strategy RequestedToCapacityRatio needs a shape",
                )
            )
        if strategy.requested_to_capacity_ratio is not None:
            # Upstream reports the shape under scoringStrategy.shape.
            issues.extend(
                validate_function_shape(
                    strategy.requested_to_capacity_ratio.shape, "scoringStrategy.shape"
                )
            )
        return issues


def validate_resources(resources: Sequence[ResourceSpec], path: str) -> list[errors.FieldIssue]:
    """Upstream ``validateResources``: every weight within (0, 100]."""
    return [
        errors.FieldIssue(
            path=f"{path}[{i}].weight",
            kind=errors.INVALID,
            value=r.weight,
            detail=f"resource weight of {r.name} not in valid range (0, 100]",
        )
        for i, r in enumerate(resources)
        if r.weight <= 0 or r.weight > 100
    ]


def validate_function_shape(
    shape: Sequence[UtilizationShapePoint], path: str
) -> list[errors.FieldIssue]:
    """Upstream ``validateFunctionShape``: sorted utilisations in [0, 100], scores in [0, 10]."""
    if not shape:
        return [
            errors.FieldIssue(
                path=path, kind=errors.REQUIRED, detail="at least one point must be specified"
            )
        ]
    issues: list[errors.FieldIssue] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            issues.append(
                errors.FieldIssue(
                    path=f"{path}[{i}].utilization",
                    kind=errors.INVALID,
                    value=shape[i].utilization,
                    detail="values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            issues.append(
                errors.FieldIssue(
                    path=f"{path}[{i}].utilization",
                    kind=errors.INVALID,
                    value=point.utilization,
                    detail="not in valid range [0, 100]",
                )
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            issues.append(
                errors.FieldIssue(
                    path=f"{path}[{i}].score",
                    kind=errors.INVALID,
                    value=point.score,
                    detail=f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return issues


def _label_name_issues(path: str, value: str) -> list[errors.FieldIssue]:
    return label_name_issues(value, path)


# --------------------------------------------------------------------------------------------
# Fit computation
# --------------------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class PodResourceRequest:
    """What a pod needs on a node (upstream ``framework.Resource`` as PreFilter stores it).

    ``scalar`` holds the extended, hugepage and other scalar resources, in request order.
    """

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    scalar: dict[str, int] = attrs.field(factory=dict, hash=False)

    def is_empty(self) -> bool:
        """True when the pod requests nothing at all (no scalar resource even at zero)."""
        return (
            self.milli_cpu == 0
            and self.memory == 0
            and self.ephemeral_storage == 0
            and not self.scalar
        )


def compute_pod_resource_request(pod: Pod) -> PodResourceRequest:
    """The pod's effective requests: containers and sidecars summed, raised to the peak of any
    init container, plus overhead (upstream ``computePodResourceRequest``)."""
    requests = pod.requests
    scalar = {
        name: amount
        for name, amount in requests.items()
        if name not in (_CPU, _MEMORY, _EPHEMERAL_STORAGE, _PODS) and is_scalar_resource_name(name)
    }
    return PodResourceRequest(
        milli_cpu=requests.get(_CPU, 0),
        memory=requests.get(_MEMORY, 0),
        ephemeral_storage=requests.get(_EPHEMERAL_STORAGE, 0),
        scalar=scalar,
    )


def sign_resources(
    handle: fw.Handle, pod: Pod
) -> tuple[Sequence[fw.SignFragment], fw.Status | None]:
    """The resources fragment NodeResourcesFit and NodeResourcesBalancedAllocation sign with:
    the pod's effective requests, or no signature while the DRAExtendedResource gate is on
    (upstream ``Fit.SignPod`` / ``BalancedAllocation.SignPod``)."""
    if handle.features.enabled("DRAExtendedResource"):
        return (), fw.Status(
            fw.Code.UNSCHEDULABLE, "signature disabled when dra extended resources enabled"
        )
    request = compute_pod_resource_request(pod)
    value = {
        "MilliCPU": request.milli_cpu,
        "Memory": request.memory,
        "EphemeralStorage": request.ephemeral_storage,
        "ScalarResources": dict(sorted(request.scalar.items())),
    }
    return (fw.SignFragment(key=fw.RESOURCES_SIGNER_NAME, value=value),), None


@attrs.frozen(kw_only=True)
class InsufficientResource:
    """A resource that does not fit (upstream ``InsufficientResource``).

    ``unresolvable`` is set when the request exceeds the node's whole allocatable, so
    evicting pods cannot make room.
    """

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


def fits_request(
    pod_request: PodResourceRequest,
    node_info: fw.NodeInfo,
    ignored_resources: frozenset[str] | None = None,
    ignored_resource_groups: frozenset[str] | None = None,
    dra_resources: Container[str] | None = None,
) -> list[InsufficientResource]:
    """Every resource of ``pod_request`` that ``node_info`` cannot hold now (upstream
    ``fitsRequest``): the pod count first, then cpu, memory, ephemeral storage, scalars.

    ``dra_resources`` (DRAExtendedResource on) names the resources DeviceClasses provide; a
    request for one of them the node does not advertise is left to DynamicResources
    (upstream ``shouldDelegateResourceToDRA``)."""
    insufficient: list[InsufficientResource] = []
    allocatable = node_info.allocatable
    requested = node_info.requested

    allowed_pods = allocatable.get(_PODS, 0)
    num_pods = len(node_info.pods)
    if num_pods + 1 > allowed_pods:
        insufficient.append(
            InsufficientResource(
                resource_name=_PODS,
                reason=ERR_REASON_TOO_MANY_PODS,
                requested=1,
                used=num_pods,
                capacity=allowed_pods,
            )
        )

    if pod_request.is_empty():
        return insufficient

    for name, reason, amount in (
        (_CPU, _REASON_CPU, pod_request.milli_cpu),
        (_MEMORY, _REASON_MEMORY, pod_request.memory),
        (_EPHEMERAL_STORAGE, _REASON_EPHEMERAL_STORAGE, pod_request.ephemeral_storage),
    ):
        if amount > 0:
            capacity = allocatable.get(name, 0)
            used = requested.get(name, 0)
            if amount > capacity - used:
                insufficient.append(
                    InsufficientResource(
                        resource_name=name,
                        reason=reason,
                        requested=amount,
                        used=used,
                        capacity=capacity,
                        unresolvable=amount > capacity,
                    )
                )

    for name, amount in pod_request.scalar.items():
        if amount == 0:
            continue
        if is_extended_resource_name(name):
            if ignored_resources and name in ignored_resources:
                continue
            if ignored_resource_groups and name.split("/", 1)[0] in ignored_resource_groups:
                continue
        capacity = allocatable.get(name, 0)
        if dra_resources is not None and capacity <= 0 and name in dra_resources:
            continue
        used = requested.get(name, 0)
        if amount > capacity - used:
            insufficient.append(
                InsufficientResource(
                    resource_name=name,
                    reason=insufficient_reason(name),
                    requested=amount,
                    used=used,
                    capacity=capacity,
                    unresolvable=amount > capacity,
                )
            )
    return insufficient


def _fits_plain(request: PodResourceRequest, node_info: fw.NodeInfo) -> bool:
    """True when a request without scalar resources fits: :func:`fits_request` would find
    nothing insufficient. (False does not mean it does not fit; ask fits_request.)"""
    allocatable = node_info.allocatable
    requested = node_info.requested
    cpu = request.milli_cpu
    memory = request.memory
    storage = request.ephemeral_storage
    return (
        len(node_info.pods) < allocatable.get(_PODS, 0)
        and (cpu <= 0 or cpu <= allocatable.get(_CPU, 0) - requested.get(_CPU, 0))
        and (memory <= 0 or memory <= allocatable.get(_MEMORY, 0) - requested.get(_MEMORY, 0))
        and (
            storage <= 0
            or storage
            <= allocatable.get(_EPHEMERAL_STORAGE, 0) - requested.get(_EPHEMERAL_STORAGE, 0)
        )
    )


def fits(
    pod: Pod, node_info: fw.NodeInfo, dra_resources: Container[str] | None = None
) -> list[InsufficientResource]:
    """Upstream ``Fits``: :func:`fits_request` for ``pod``, nothing ignored."""
    return fits_request(compute_pod_resource_request(pod), node_info, dra_resources=dra_resources)


def is_fit(pod: Pod, node: Node | None, dra_resources: Container[str] | None = None) -> bool:
    """Whether ``pod`` fits an empty ``node`` (upstream ``isFit``); False for no node."""
    if node is None:
        return False
    return not fits(pod, fw.NodeInfo(node), dra_resources)


def have_any_requested_resources_increased(
    pod: Pod, original: Node, modified: Node, dra_resources: Container[str] | None = None
) -> bool:
    """Whether the node update raised the pod limit or the allocatable of a resource the pod
    requests, or the node leaves a requested resource to DRA (upstream
    ``haveAnyRequestedResourcesIncreased``)."""
    request = compute_pod_resource_request(pod)
    before = original.status.allocatable
    after = modified.status.allocatable
    if after.get(_PODS, 0) > before.get(_PODS, 0):
        return True
    if request.is_empty():
        return False
    for name, amount in (
        (_CPU, request.milli_cpu),
        (_MEMORY, request.memory),
        (_EPHEMERAL_STORAGE, request.ephemeral_storage),
    ):
        if amount > 0 and after.get(name, 0) > before.get(name, 0):
            return True
    return any(
        amount != 0
        and (
            after.get(name, 0) > before.get(name, 0)
            or (dra_resources is not None and after.get(name, 0) <= 0 and name in dra_resources)
        )
        for name, amount in request.scalar.items()
    )


# --------------------------------------------------------------------------------------------
# The plugin
# --------------------------------------------------------------------------------------------

_PRE_FILTER: Final = fw.StateKey[PodResourceRequest]("PreFilter" + NAME)
_PRE_SCORE: Final = fw.StateKey[list[int]]("PreScore" + NAME)
#: DRAExtendedResource: the resource -> DeviceClass mapping as PreFilter found it.
_DRA_MAPPING: Final = fw.StateKey["dict[str, DeviceClass]"]("PreFilterDRA" + NAME)
#: DRAExtendedResource: the DRA data Score reads (absent when no scored resource is DRA's).
_DRA_SCORE: Final = fw.StateKey[DRAScoreState]("PreScoreDRA" + NAME)


def _build_scorer(strategy: ScoringStrategy) -> Scorer:
    resources = strategy.resources
    if strategy.type == LEAST_ALLOCATED:
        return least_resource_scorer(resources)
    if strategy.type == MOST_ALLOCATED:
        return most_resource_scorer(resources)
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        param = strategy.requested_to_capacity_ratio
        if param is None:
            raise ValueError(
                "scoring strategy RequestedToCapacityRatio needs requestedToCapacityRatio.shape"
            )
        return requested_to_capacity_ratio_scorer(
            resources, [(p.utilization, p.score) for p in param.shape]
        )
    raise ValueError(f"scoring strategy {strategy.type} is not supported")


def _pod(obj: object) -> Pod:
    if not isinstance(obj, Pod):
        raise TypeError(f"expected a Pod, got {type(obj).__name__}")
    return obj


def _node(obj: object) -> Node:
    if not isinstance(obj, Node):
        raise TypeError(f"expected a Node, got {type(obj).__name__}")
    return obj


def _plain_resources(
    state: fw.CycleState, columns: fw.NodeColumns
) -> list[tuple[int, npt.NDArray[np.int64], npt.NDArray[np.int64]]] | None:
    """``(amount, allocatable, requested)`` for cpu, memory and ephemeral storage, for the
    batch forms of :class:`Fit`; ``None`` when the arrays cannot answer exactly (scalar
    resources requested, or an amount or column beyond the exact range)."""
    request = state.get(_PRE_FILTER)
    if request is None or any(request.scalar.values()) or not columns.exact:
        return None
    resources = [
        (request.milli_cpu, columns.allocatable_cpu, columns.requested_cpu),
        (request.memory, columns.allocatable_memory, columns.requested_memory),
        (
            request.ephemeral_storage,
            columns.allocatable_ephemeral_storage,
            columns.requested_ephemeral_storage,
        ),
    ]
    limit = fw.EXACT_LIMIT
    if any(not -limit < amount < limit for amount, _, _ in resources):
        return None
    return resources


class Fit(
    fw.PreFilterPlugin,
    fw.FilterPlugin,
    fw.PreScorePlugin,
    fw.ScorePlugin,
    fw.EnqueueExtensions,
):
    """Filters out nodes without room for the pod's requests; scores the rest by a strategy."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = NodeResourcesFitArgs

    def __init__(self, args: NodeResourcesFitArgs | None, handle: fw.Handle) -> None:
        args = args if args is not None else NodeResourcesFitArgs()
        issues = args.validate()
        if issues:
            raise errors.ConfigError(issues)
        self.args = args
        self._handle = handle
        self._ignored_resources = frozenset(args.ignored_resources)
        self._ignored_resource_groups = frozenset(args.ignored_resource_groups)
        self._dra_extended = handle.features.enabled("DRAExtendedResource")
        self._cel = CELCache()
        strategy = args.scoring_strategy
        self._scorer = ResourceAllocationScorer(
            strategy.type,
            _build_scorer(strategy),
            strategy.resources,
            cpu_memory_kernel=(
                least_allocated_cpu_memory_kernel(strategy.resources)
                if strategy.type == LEAST_ALLOCATED and len(strategy.resources) == 2
                else None
            ),
            columns_kernel=(
                least_allocated_columns_kernel(strategy.resources)
                if strategy.type == LEAST_ALLOCATED and len(strategy.resources) == 2
                else None
            ),
        )

    def sign_pod(self, pod: Pod) -> tuple[Sequence[fw.SignFragment], fw.Status | None]:
        """The pod's effective requests (upstream ``Fit.SignPod``)."""
        return sign_resources(self._handle, pod)

    # -- PreFilter / Filter ------------------------------------------------------------------

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Compute the pod's effective requests once for every Filter call (and, with
        DRAExtendedResource, which resources DeviceClasses provide)."""
        request = state[_PRE_FILTER] = compute_pod_resource_request(pod)
        if self._dra_extended and any(is_dra_extended_resource_name(n) for n in request.scalar):
            state[_DRA_MAPPING] = self._dra_mapping()
        return None

    def _dra_mapping(self) -> dict[str, DeviceClass]:
        return device_class_mapping(self._handle.shared_dra_manager().device_classes())

    def resource_bound(self, state: fw.CycleState) -> tuple[tuple[int, int, int], bool] | None:
        """The pod's cpu/memory/ephemeral-storage request as :meth:`filter` checks it, and
        whether that is all it asks for (the optional
        :class:`~schedframe.framework.batch.ResourceBound` fast form, which preemption reads).

        :meth:`filter` rejects a node when the pod count or one of these requests does not
        fit, whatever the arguments (they only ignore extended resources), and, for a pod
        without extended or other scalar requests, passes it otherwise. ``None`` before
        PreFilter, or for a subclass that replaced :meth:`filter` (the promise is this
        class's).
        """
        if type(self).filter is not Fit.filter:
            return None
        request = state.get(_PRE_FILTER)
        if request is None:
            return None
        return (request.milli_cpu, request.memory, request.ephemeral_storage), not request.scalar

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """Reject the node when a requested resource or the pod count does not fit."""
        request = state.get(_PRE_FILTER)
        if request is None:
            return fw.Status(
                fw.Code.ERROR, f'error reading "{_PRE_FILTER.name}" from cycleState: not found'
            )
        if not request.scalar and _fits_plain(request, node_info):
            return None
        dra_resources: Container[str] | None = None
        if self._dra_extended:
            # PreFilter's mapping; none when the pod names no extended resource (then no
            # class can provide what it asks for).
            dra_resources = state.get(_DRA_MAPPING)
        insufficient = fits_request(
            request,
            node_info,
            self._ignored_resources,
            self._ignored_resource_groups,
            dra_resources,
        )
        if not insufficient:
            return None
        code = (
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            if any(r.unresolvable for r in insufficient)
            else fw.Code.UNSCHEDULABLE
        )
        return fw.Status(code, *(r.reason for r in insufficient))

    def prepare_filter(
        self, state: fw.CycleState, pod: Pod
    ) -> Callable[[fw.NodeInfo], fw.Status | None] | None:
        """:meth:`filter` for this pod as a function of the node (the framework's per-pod
        fast path): the common case, a pod asking for cpu, memory and ephemeral storage only
        on a node with room for all, is answered inline; anything else takes :meth:`filter`.
        """
        request = state.get(_PRE_FILTER)
        if request is None or request.scalar:
            return None
        cpu = request.milli_cpu
        memory = request.memory
        storage = request.ephemeral_storage
        slow = self.filter

        def fit_filter(node_info: fw.NodeInfo) -> fw.Status | None:
            allocatable = node_info.allocatable
            requested = node_info.requested
            if (
                len(node_info.pods) < allocatable.get(_PODS, 0)
                and (cpu <= 0 or cpu <= allocatable.get(_CPU, 0) - requested.get(_CPU, 0))
                and (
                    memory <= 0 or memory <= allocatable.get(_MEMORY, 0) - requested.get(_MEMORY, 0)
                )
                and (
                    storage <= 0
                    or storage
                    <= allocatable.get(_EPHEMERAL_STORAGE, 0) - requested.get(_EPHEMERAL_STORAGE, 0)
                )
            ):
                return None
            return slow(state, pod, node_info)

        return fit_filter

    def filter_batch(
        self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns
    ) -> npt.NDArray[np.int8] | None:
        """:meth:`filter` over every node of ``columns`` (the framework's batch path), for a
        pod asking for no scalar resources: the pod count, cpu, memory and ephemeral storage
        checks of :func:`fits_request`, on arrays."""
        import numpy as np

        resources = _plain_resources(state, columns)
        if resources is None:
            return None
        fits = columns.num_pods < columns.allocatable_pods
        for amount, allocatable, requested in resources:
            if amount > 0:
                fits &= amount <= allocatable - requested
        # A bool array read as int8 is 0/1: scaled, the verdicts (FILTER_PASS is 0).
        return (~fits).view(np.int8) * np.int8(fw.FILTER_REJECT)

    def filter_batch_statuses(
        self,
        state: fw.CycleState,
        pod: Pod,
        columns: fw.NodeColumns,
        rows: npt.NDArray[np.intp],
    ) -> list[fw.Status | None] | None:
        """:meth:`filter` of the nodes at ``rows`` (the framework's batch path, for nodes the
        batch verdicts reject): nodes short of the same resources, with the same ones beyond
        their capacity, get the same status, computed once."""
        import numpy as np

        resources = _plain_resources(state, columns)
        if resources is None:
            return None
        # One bit per fact fits_request reports: too many pods, then short / beyond capacity
        # for cpu, memory and ephemeral storage.
        key = (columns.num_pods[rows] + 1 > columns.allocatable_pods[rows]).astype(np.int64)
        bit = 2
        for amount, allocatable, requested in resources:
            if amount > 0:
                capacity = allocatable[rows]
                key |= (amount > capacity - requested[rows]) * bit
                key |= (amount > capacity) * (bit * 2)
            bit *= 4
        infos = columns.infos
        _, first, which = np.unique(key, return_index=True, return_inverse=True)
        distinct = [self.filter(state, pod, infos[row]) for row in rows[first].tolist()]
        return [distinct[i] for i in which.tolist()]

    # -- PreScore / Score --------------------------------------------------------------------

    def pre_score(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.Status | None:
        """Compute the pod's non-zero request per scored resource once (and, with
        DRAExtendedResource, the DRA data when a scored resource is DRA-backed)."""
        state[_PRE_SCORE] = self._scorer.pod_requests(pod)
        dra = self._dra_score_state()
        if dra is not None:
            state[_DRA_SCORE] = dra
        return None

    def _dra_score_state(self) -> DRAScoreState | None:
        if not self._dra_extended:
            return None
        return dra_score_state(self._handle.shared_dra_manager(), self._scorer.names)

    def _dra_of(self, state: fw.CycleState, requests: list[int] | None) -> DRAScoreState | None:
        # PreScore's data, or (Score without PreScore) the same gathered now, as upstream.
        return state.get(_DRA_SCORE) if requests is not None else self._dra_score_state()

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        """The strategy's score for the node (computed on the fly without PreScore)."""
        requests = state.get(_PRE_SCORE)
        dra = self._dra_of(state, requests)
        if requests is None:
            requests = self._scorer.pod_requests(pod)
        return self._scorer.score(node_info, requests, dra_totals(dra, self._cel))

    def score_many(self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]) -> list[int]:
        """:meth:`score` of every node, in order (the framework's batch form)."""
        requests = state.get(_PRE_SCORE)
        dra = self._dra_of(state, requests)
        if requests is None:
            requests = self._scorer.pod_requests(pod)
        return self._scorer.score_many(nodes, requests, dra_totals(dra, self._cel))

    def score_batch(
        self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns, rows: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.int64] | None:
        """:meth:`score` of the nodes at ``rows`` (the framework's batch path; the
        LeastAllocated strategy on cpu and memory, ``None`` otherwise)."""
        requests = state.get(_PRE_SCORE)
        if requests is None or _DRA_SCORE in state:
            return None
        return self._scorer.score_columns(columns, rows, requests)

    # -- EnqueueExtensions -------------------------------------------------------------------

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """Deleted or scaled-down pods free room; a new or grown node may have room.

        Upstream registers the scale-down of the pod being scheduled as a ``TargetPod`` event;
        here that is the unscheduled-pod update, whose hint checks it is the same pod. With
        DRAExtendedResource a new or changed DeviceClass may provide a requested resource.
        """
        events = (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.ASSIGNED_POD, fw.ActionType.DELETE),
                self.is_schedulable_after_assigned_pod_delete,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(
                    fw.EventResource.NODE,
                    fw.ActionType.ADD | fw.ActionType.UPDATE_NODE_ALLOCATABLE,
                ),
                self.is_schedulable_after_node_change,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.ASSIGNED_POD, fw.ActionType.UPDATE_POD_SCALE_DOWN),
                self.is_schedulable_after_pod_scale_down,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(
                    fw.EventResource.UNSCHEDULABLE_POD, fw.ActionType.UPDATE_POD_SCALE_DOWN
                ),
                self.is_schedulable_after_pod_scale_down,
            ),
        )
        if not self._dra_extended:
            return events
        return (
            *events,
            fw.ClusterEventWithHint(
                fw.ClusterEvent(
                    fw.EventResource.DEVICE_CLASS, fw.ActionType.ADD | fw.ActionType.UPDATE
                ),
                self.is_schedulable_after_device_class_event,
            ),
        )

    def is_schedulable_after_device_class_event(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the added class's implicit name, or the new or changed
        ``extendedResourceName``, is a resource the pod requests (upstream
        ``isSchedulableAfterDeviceClassEvent``)."""
        if not isinstance(new_obj, DeviceClass) or not (
            old_obj is None or isinstance(old_obj, DeviceClass)
        ):
            raise TypeError(f"expected a DeviceClass, got {type(new_obj).__name__}")
        requests = pod.requests
        if old_obj is not None:
            if (old_obj.extended_resource_name or "") == (new_obj.extended_resource_name or ""):
                return fw.QueueingHint.QUEUE_SKIP
        elif IMPLICIT_PREFIX + new_obj.name in requests:
            return fw.QueueingHint.QUEUE
        name = new_obj.extended_resource_name
        if name is not None and name in requests:
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_assigned_pod_delete(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue unless the deleted pod was neither bound nor nominated anywhere."""
        deleted = _pod(old_obj)
        if deleted.node_name == "" and deleted.nominated_node_name == "":
            return fw.QueueingHint.QUEUE_SKIP
        return fw.QueueingHint.QUEUE

    def is_schedulable_after_pod_scale_down(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the pod itself shrank, or a bound pod gave back something it requests."""
        original = _pod(old_obj)
        modified = _pod(new_obj)
        if modified.uid == pod.uid:
            return fw.QueueingHint.QUEUE
        if modified.node_name == "":
            return fw.QueueingHint.QUEUE_SKIP
        before = original.requests
        after = modified.requests
        for name, amount in pod.requests.items():
            if amount == 0:
                continue
            if name not in (_CPU, _MEMORY, _EPHEMERAL_STORAGE) and not is_scalar_resource_name(
                name
            ):
                continue
            if before.get(name, 0) > after.get(name, 0):
                return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue for a new node the pod fits, or an update that grew what the pod needs."""
        modified = _node(new_obj)
        original = None if old_obj is None else _node(old_obj)
        dra_resources = (
            self._dra_mapping()
            if self._dra_extended and any(is_dra_extended_resource_name(n) for n in pod.requests)
            else None
        )
        if not is_fit(pod, modified, dra_resources):
            return fw.QueueingHint.QUEUE_SKIP
        if original is None:
            return fw.QueueingHint.QUEUE
        if not have_any_requested_resources_increased(pod, original, modified, dra_resources):
            return fw.QueueingHint.QUEUE_SKIP
        return fw.QueueingHint.QUEUE
