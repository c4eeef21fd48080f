"""DynamicResources: Dynamic Resource Allocation (DRA) with structured parameters.

Upstream ``pkg/scheduler/framework/plugins/dynamicresources``. A pod's ``spec.resourceClaims``
name ResourceClaims (directly, or through a template whose claim the resourceclaim controller
created and recorded in ``status.resourceClaimStatuses``). The plugin

* **PreEnqueue**: keeps the pod out of the active queue while a claim is missing, being
  deleted, or (for a template's claim) not owned by the pod;
* **PreFilter**: skips pods without claims; refuses claims in use by too many consumers,
  claims whose allocation is in flight, and requests naming missing DeviceClasses; builds
  the structured allocator (:mod:`._allocator`) for the claims not allocated yet;
* **Filter**: an allocated claim's node selector must match the node; the unallocated claims
  must all be allocatable on the node (the result is kept for Reserve);
* **PostFilter**: deallocates one allocated claim that was unavailable on some node and that
  no other pod uses (upstream's texts: ``no new claims to deallocate``,
  ``deallocation of ResourceClaim completed``, ``still not schedulable``);
* **Reserve/Unreserve**: records the chosen node's allocation as in flight (its devices count
  as in use for later pods) / drops it and removes the pod from ``reservedFor``;
* **PreBind**: writes each claim's allocation and adds the pod to ``status.reservedFor``;
* **queueing hints**: claim, pod, DeviceClass, ResourceSlice and node events.

With DRAExtendedResource, a pod requesting an extended resource that a DeviceClass provides
(its ``extendedResourceName``, or ``deviceclass.resource.kubernetes.io/<class>``) gets a
special claim, as upstream: PreFilter finds the one a prior cycle made (owned by the pod,
annotated ``resource.kubernetes.io/extended-resource-claim``) or starts one in memory
(``<extended-resources>``); Filter gives it, per node, one request per container and
resource the node does not advertise (``container-<i>-request-<j>``, exactly that many devices
of the class) and allocates it with the pod's claims; PreBind creates it (``generateName``
``<pod>-extended-resources-``), writes its allocation and reservation and records it in the
pod's ``status.extendedResourceClaimStatus``; PostFilter and Unreserve delete a created one.

With DRADeviceBindingConditions and DRAResourceClaimDeviceStatus, an allocated claim whose
devices have binding conditions is unavailable on every node (Filter) once a binding failure
condition is true in ``status.devices`` or the conditions are not all true ``bindingTimeout``
after ``allocationTimestamp``; the allocator picks devices with binding conditions (recording
them in the result); PreBind stamps ``allocationTimestamp`` on the claims it writes, records a
``BindingConditionsPending`` event and polls the claims (at once, then every 5 seconds) until
every binding condition is true, failing with upstream's texts for a failed or timed-out
binding or once ``bindingTimeout`` has passed (``device binding timeout``). The wait sleeps
on the scheduler's clock; the virtual clock of deterministic mode cannot sleep (PreBind runs on
the thread that moves it), so there a claim not ready at the first poll fails PreBind at once,
with a message saying so.

Statuses for "cannot schedule now" are UnschedulableAndUnresolvable, as upstream's
``statusUnschedulable``. With DRAConsumableCapacity, devices that allow multiple allocations
are shared by capacity (see the allocator). Not modelled: cancelling a Filter call (upstream:
its context).

Before PreBind writes an allocation it adds the ``resource.kubernetes.io/delete-protection``
finalizer to the claim with an ``Update`` (when missing), as upstream; Reserve's in-flight
claim carries it too. Deallocation (PostFilter) leaves it, as upstream: the resourceclaim
controller removes it. Deleting the claim of a pod's DRA-backed extended resources removes it
first (an ``Update``), then deletes.
"""

from __future__ import annotations

import datetime
import json
import math
import threading
import typing
from collections.abc import Sequence
from typing import ClassVar, Final

import attrs

from schedframe import errors
from schedframe import framework as fw
from schedframe.config import format_duration
from schedframe.errors import BackendError
from schedframe.objects import (
    AllocationResult,
    ContainerExtendedResourceRequest,
    DeviceClass,
    DeviceRequest,
    ExactDeviceRequest,
    Node,
    NodeSelector,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodExtendedResourceClaimStatus,
    ResourceClaim,
    ResourceClaimConsumerReference,
)
from schedframe_plugins import names
from schedframe_plugins._dra.allocator import (
    AllocationError,
    AllocationTimeout,
    Allocator,
    Features,
    describe_requests,
)
from schedframe_plugins._dra.cel import CELCache
from schedframe_plugins._dra.extended import (
    device_class_mapping,
    is_dra_extended_resource_name,
)
from schedframe_plugins._helper import default_normalize_score

__all__ = [
    "DELETE_PROTECTION_FINALIZER",
    "EXTENDED_RESOURCE_CLAIM_ANNOTATION",
    "NO_NEW_CLAIMS",
    "SPECIAL_CLAIM_NAME",
    "DynamicResources",
    "DynamicResourcesArgs",
]

NAME: Final = names.DYNAMIC_RESOURCES

#: Upstream's PostFilter reason when the pod's claims gave nothing to deallocate.
NO_NEW_CLAIMS: Final = "no new claims to deallocate"
#: Upstream ``ResourceClaimReservedForMaxSize``.
RESERVED_FOR_MAX_SIZE: Final = 256

_TEN_SECONDS: Final = datetime.timedelta(seconds=10)
#: Upstream's DynamicResourcesBindingTimeoutDefault: ten minutes.
_TEN_MINUTES: Final = datetime.timedelta(minutes=10)
#: Seconds between PreBind's polls of the binding conditions (upstream: 5s).
BINDING_POLL_INTERVAL: Final = 5.0
#: Upstream ``specialClaimInMemName``: the name of a pod's extended-resource claim until PreBind
#: creates it (deliberately not a valid object name).
SPECIAL_CLAIM_NAME: Final = "<extended-resources>"
#: Upstream ``resourceapi.Finalizer``: added to a claim before its allocation is written.
DELETE_PROTECTION_FINALIZER: Final = "resource.kubernetes.io/delete-protection"
#: Upstream ``resourceapi.ExtendedResourceClaimAnnotation``.
EXTENDED_RESOURCE_CLAIM_ANNOTATION: Final = "resource.kubernetes.io/extended-resource-claim"
_STATE: Final = fw.StateKey["_State"](NAME)


def _non_negative(
    _: object, attribute: attrs.Attribute[datetime.timedelta], value: datetime.timedelta
) -> None:
    if value < datetime.timedelta(0):
        raise ValueError("must be zero or greater")


@attrs.frozen(kw_only=True)
class DynamicResourcesArgs:
    """Upstream ``DynamicResourcesArgs`` (v1), defaulted as in v1.36: ``filterTimeout`` 10s,
    ``bindingTimeout`` 10 minutes (upstream's DynamicResourcesBindingTimeoutDefault).

    Attributes:
        filter_timeout: per-node Filter time budget (``filterTimeout``; 0 disables it), with
            DRASchedulerFilterTimeout, on the scheduler's clock: the virtual clock of a
            simulation does not move during a cycle, so there it never runs out.
        binding_timeout: how long PreBind waits for device binding conditions
            (``bindingTimeout``), and how long after ``allocationTimestamp`` a claim's
            binding times out. With DRADeviceBindingConditions and DRAResourceClaimDeviceStatus
            on, less than one second is refused when the plugin is built, as upstream's
            ValidateDynamicResourcesArgs does.
    """

    filter_timeout: datetime.timedelta = attrs.field(default=_TEN_SECONDS, validator=_non_negative)
    binding_timeout: datetime.timedelta = attrs.field(default=_TEN_MINUTES, validator=_non_negative)


@typing.runtime_checkable
class _SleepingClock(typing.Protocol):
    """A clock PreBind can wait on: :class:`~schedframe.scheduler.RealClock` (the binding
    thread sleeps) or a test clock whose ``sleep`` moves its own time."""

    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class _NotSchedulable(Exception):
    """A reason the pod cannot be scheduled now (upstream: errors of foreachPodResourceClaim)."""


def _klog(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


@attrs.define(kw_only=True)
class _Extended:
    """Upstream ``draExtendedResource``: what PreFilter found for DRA-backed resources."""

    #: Resource name -> the DeviceClass providing it.
    mapping: dict[str, DeviceClass]
    #: The pod's requests of such names (extended or implicit), as PreFilter computed them.
    requests: dict[str, int]
    #: The uid the special claim had in PreFilter (its in-flight allocation's key).
    initial_uid: str
    #: The claim made for each node Filter passed (``None``: nothing to allocate there).
    node_claims: dict[str, ResourceClaim | None] = attrs.field(factory=dict)


@attrs.define(kw_only=True)
class _State:
    """Upstream ``stateData``: the pod's claims and what Filter/Reserve found.

    With a DRA-backed extended resource, the special claim is the last of ``claims``.
    """

    claims: list[ResourceClaim] = attrs.field(factory=list)
    extended: _Extended | None = None
    available_on: list[NodeSelector | None] = attrs.field(factory=list)
    allocations: list[AllocationResult | None] = attrs.field(factory=list)
    allocator: Allocator | None = None
    to_allocate: list[ResourceClaim] = attrs.field(factory=list)
    unavailable: set[int] = attrs.field(factory=set)
    node_allocations: dict[str, list[AllocationResult]] = attrs.field(factory=dict)
    #: Nodes where allocation failed, and unavailable allocated claims by node (``explain``).
    failed_nodes: dict[str, Node] = attrs.field(factory=dict)
    unavailable_on: dict[str, tuple[int, ...]] = attrs.field(factory=dict)
    lock: threading.Lock = attrs.field(factory=threading.Lock)

    def clone(self) -> _State:
        """Shared, as upstream's ``Clone`` returns the same pointer."""
        return self

    def release_filter_results(self) -> None:
        """Drop what only Filter, Score and Reserve read (the allocator, and every node's
        allocations and failures): the binding cycle keeps the state alive, and these are
        the bulk of it."""
        self.allocator = None
        self.node_allocations = {}
        self.failed_nodes = {}
        self.unavailable_on = {}

    @property
    def extended_index(self) -> int | None:
        """The index of the special claim in ``claims``, if the pod has one."""
        return len(self.claims) - 1 if self.extended is not None and self.claims else None

    @property
    def extended_claim(self) -> ResourceClaim | None:
        """The special claim (upstream ``claims.extendedResourceClaim()``)."""
        i = self.extended_index
        return None if i is None else self.claims[i]

    @property
    def no_user_claim(self) -> bool:
        """Whether the special claim is the pod's only claim."""
        return len(self.claims) == (1 if self.extended is not None else 0)


@typing.runtime_checkable
class _ClaimCreateRecorder(typing.Protocol):
    """A metrics recorder that counts the claims DynamicResources creates."""

    def resource_claim_created(self, status: str) -> None:
        """One creation request: ``success`` or ``failure``."""


#: Upstream ``resourceapi.FirstAvailableDeviceRequestMaxSize``.
FIRST_AVAILABLE_MAX_SIZE: Final = 8


def _prioritized_list_score(
    claims: Sequence[ResourceClaim], allocations: Sequence[AllocationResult]
) -> int:
    """Upstream ``computeScore``: a claim allocated before this cycle brings its own
    allocation; the others take this node's results in order."""
    score = 0
    pending = 0
    for claim in claims:
        allocation = claim.allocation
        if allocation is None:
            if pending >= len(allocations):
                raise fw.StatusError(
                    fw.Status(
                        fw.Code.ERROR,
                        f"number of allocations {len(allocations)} is smaller than number "
                        "of claims",
                    )
                )
            allocation = allocations[pending]
            pending += 1
        chosen = {r.request for r in allocation.devices.results if "/" in r.request}
        for request in claim.requests:
            for i, sub in enumerate(request.first_available):
                if f"{request.name}/{sub.name}" in chosen:
                    score += FIRST_AVAILABLE_MAX_SIZE - i
    return score


class DynamicResources(
    fw.PreEnqueuePlugin,
    fw.PreFilterPlugin,
    fw.FilterPlugin,
    fw.PostFilterPlugin,
    fw.PreScorePlugin,
    fw.ScorePlugin,
    fw.ReservePlugin,
    fw.PreBindPlugin,
    fw.EnqueueExtensions,
    fw.SignPlugin,
    fw.FilterDetailsPlugin,
):
    """Allocates the pod's ResourceClaims as kube-scheduler does."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type] = DynamicResourcesArgs

    def __init__(self, args: DynamicResourcesArgs, handle: fw.Handle) -> None:
        self._args = args
        self._handle = handle
        gates = handle.features
        # Upstream's factory: with the gate off the plugin exists but does nothing.
        self._enabled = gates.enabled("DynamicResourceAllocation")
        self._features = Features(
            admin_access=gates.enabled("DRAAdminAccess"),
            prioritized_list=gates.enabled("DRAPrioritizedList"),
            partitionable_devices=gates.enabled("DRAPartitionableDevices"),
            device_taints=gates.enabled("DRADeviceTaints"),
            consumable_capacity=gates.enabled("DRAConsumableCapacity"),
            device_binding=gates.enabled("DRADeviceBindingConditions")
            and gates.enabled("DRAResourceClaimDeviceStatus"),
        )
        self._queueing_hints = gates.enabled("SchedulerQueueingHints")
        self._filter_timeout = gates.enabled("DRASchedulerFilterTimeout")
        # Score came with v1.36 (and scores only with DRAPrioritizedList).
        self._scores = gates.at_least("1.36") and gates.enabled("DRAPrioritizedList")
        self._extended_resources = gates.enabled("DRAExtendedResource")
        self._binding_conditions = gates.enabled("DRADeviceBindingConditions") and gates.enabled(
            "DRAResourceClaimDeviceStatus"
        )
        if self._binding_conditions and args.binding_timeout < datetime.timedelta(seconds=1):
            raise errors.ConfigError(
                [
                    errors.FieldIssue(
                        path="bindingTimeout",
                        kind=errors.INVALID,
                        value=format_duration(args.binding_timeout.total_seconds()),
                        detail="must be at least 1 second",
                    )
                ]
            )
        self._cel = CELCache()

    @property
    def _dra(self) -> fw.SharedDRAManager:
        return self._handle.shared_dra_manager()

    # -- claims of a pod ----------------------------------------------------------------------

    def _pod_claims(self, pod: Pod) -> list[ResourceClaim]:
        """Upstream ``foreachPodResourceClaim``: each claim, or :class:`_NotSchedulable`."""
        statuses = dict(pod.status.resource_claim_statuses)
        claims = []
        for ref in pod.spec.resource_claims:
            must_check_owner = False
            if ref.resource_claim_name is not None:
                claim_name: str | None = ref.resource_claim_name
            elif ref.resource_claim_template_name is not None:
                if ref.name not in statuses:
                    raise _NotSchedulable(
                        f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet'
                    )
                claim_name = statuses[ref.name]
                must_check_owner = True
            else:
                raise _NotSchedulable(
                    f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim {ref.name!r}: '
                    "none of the supported fields are set"
                )
            if claim_name is None:
                continue  # the controller decided no claim is needed
            claim = self._dra.resource_claim(pod.namespace, claim_name)
            if claim is None:
                raise _NotSchedulable(f'resourceclaim.resource.k8s.io "{claim_name}" not found')
            if claim.is_deleted:
                raise _NotSchedulable(f'resourceclaim "{claim.name}" is being deleted')
            if must_check_owner:
                owner = claim.metadata.controller_ref
                if owner is None or owner.uid != pod.uid:
                    raise _NotSchedulable(
                        f"ResourceClaim {_klog(claim.namespace, claim.name)} was not created "
                        f"for pod {pod.namespace}/{pod.name} (pod is not owner)"
                    )
            claims.append(claim)
        return claims

    # -- PreEnqueue ---------------------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> fw.Status | None:
        """UnschedulableAndUnresolvable while a claim is missing or not usable."""
        if not self._enabled or not pod.spec.resource_claims:
            return None
        try:
            self._pod_claims(pod)
        except _NotSchedulable as exc:
            return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(exc))
        return None

    # -- PreFilter ----------------------------------------------------------------------------

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Skip without claims; otherwise check the claims and prepare the allocator."""
        if not self._enabled:
            return fw.Status(fw.Code.SKIP)
        s = _State()
        state.write(_STATE, s)
        try:
            claims = self._pod_claims(pod) if pod.spec.resource_claims else []
        except _NotSchedulable as exc:
            return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(exc))
        extended_claim = self._pre_filter_extended(pod, s)
        if extended_claim is not None:
            claims.append(extended_claim)
        if not claims:
            s.extended = None
            return fw.Status(fw.Code.SKIP)
        unresolvable = fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        to_allocate = []
        for claim in claims:
            allocation = claim.allocation
            if (
                allocation is not None
                and len(claim.reserved_for) >= RESERVED_FOR_MAX_SIZE
                and not claim.is_reserved_for(pod.uid)
            ):
                return fw.Status(unresolvable, "resourceclaim in use")
            s.allocations.append(None)
            if allocation is not None:
                s.available_on.append(allocation.node_selector)
                continue
            s.available_on.append(None)
            to_allocate.append(claim)
            if self._dra.claim_has_pending_allocation(claim.metadata.uid):
                return fw.Status(
                    unresolvable,
                    f"resource claim {_klog(claim.namespace, claim.name)} is in the process "
                    "of being allocated",
                )
            if claim is extended_claim:
                # Filter makes the special claim's requests (and rejects a stale one).
                continue
            for request in claim.requests:
                if not request.first_available:
                    assert request.exactly is not None
                    status = self._validate_class(request.exactly.device_class_name, request.name)
                    if status is not None:
                        return status
                    continue
                if not self._features.prioritized_list:
                    return fw.Status(
                        unresolvable,
                        f"resource claim {_klog(claim.namespace, claim.name)}, request "
                        f"{request.name}: has subrequests, but the DRAPrioritizedList feature "
                        "is disabled",
                    )
                for sub in request.first_available:
                    status = self._validate_class(
                        sub.device_class_name, f"{request.name}/{sub.name}"
                    )
                    if status is not None:
                        return status
        if to_allocate:
            s.allocator = Allocator(
                features=self._features,
                allocated_devices=self._dra.list_all_allocated_devices(),
                classes={c.name: c for c in self._dra.device_classes()},
                slices=self._dra.resource_slices(),
                cel_cache=self._cel,
                allocated_capacity=(
                    self._dra.list_allocated_capacity()
                    if self._features.consumable_capacity
                    else None
                ),
            )
            s.to_allocate = to_allocate
        s.claims = claims
        return None

    def _pre_filter_extended(self, pod: Pod, s: _State) -> ResourceClaim | None:
        """Upstream ``preFilterExtendedResources``: the pod's special claim (a prior cycle's,
        or a new one in memory) when it requests a resource a DeviceClass provides."""
        if not self._extended_resources:
            return None
        requests = {
            name: amount
            for name, amount in pod.requests.items()
            if is_dra_extended_resource_name(name)
        }
        if not any(requests.values()):
            return None
        mapping = device_class_mapping(self._dra.device_classes())
        if not any(amount != 0 and name in mapping for name, amount in requests.items()):
            return None
        for claim in self._dra.resource_claims():
            if claim.metadata.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
                continue
            if any(
                ref.name == pod.name and ref.controller and ref.uid == pod.uid
                for ref in claim.metadata.owner_references
            ):
                s.extended = _Extended(
                    mapping=mapping, requests=requests, initial_uid=claim.metadata.uid
                )
                return claim
        uid = f"{pod.uid}/{SPECIAL_CLAIM_NAME}"
        s.extended = _Extended(mapping=mapping, requests=requests, initial_uid=uid)
        owner = OwnerReference(
            api_version="v1", kind="Pod", name=pod.name, uid=pod.uid, controller=True
        )
        return ResourceClaim(
            metadata=ObjectMeta(
                name=SPECIAL_CLAIM_NAME,
                namespace=pod.namespace,
                uid=uid,
                generate_name=f"{pod.name}-extended-resources-",
                owner_references=(owner,),
                annotations={EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
            )
        )

    def _filter_extended(
        self, s: _State, pod: Pod, node_info: fw.NodeInfo
    ) -> tuple[ResourceClaim | None, fw.Status | None]:
        """Upstream ``filterExtendedResources``: the special claim as this node needs it
        (``None`` when nothing is to be allocated through it), or why the node does not do."""
        ext, claim = s.extended, s.extended_claim
        if ext is None or claim is None:
            return None, None
        unresolvable = fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        if claim.requests:
            # A prior cycle's claim: PostFilter deletes it, and the pod tries anew.
            return None, fw.Status(unresolvable, "cannot schedule extended resource claim")
        allocatable = node_info.allocatable
        from_dra: list[str] = []
        for name, amount in ext.requests.items():
            if amount == 0:
                continue
            if name in ext.mapping:
                if allocatable.get(name, 0) <= 0:
                    from_dra.append(name)
            elif name not in allocatable:
                return None, fw.Status(unresolvable, "cannot fit resource")
        if s.no_user_claim and not from_dra:
            return None, None
        node_claim = attrs.evolve(claim, requests=_device_requests(pod, from_dra, ext.mapping))
        if claim.allocation is not None:
            return None, None
        return node_claim, None

    def _validate_class(self, class_name: str, request: str) -> fw.Status | None:
        if not class_name:
            return fw.Status(fw.Code.ERROR, f"request {request}: unsupported request type")
        if self._dra.device_class(class_name) is None:
            return fw.Status(
                fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"request {request}: device class {class_name} does not exist",
            )
        return None

    def pre_filter_extensions(self) -> fw.PreFilterExtensions | None:
        """None, as upstream."""
        return None

    # -- Filter -------------------------------------------------------------------------------

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """Allocated claims must reach the node; the others must be allocatable on it."""
        if not self._enabled:
            return None
        s = state.get(_STATE)
        if s is None or not s.claims:
            return None
        node = node_info.node
        assert node is not None
        node_claim, status = self._filter_extended(s, pod, node_info)
        if status is not None:
            return status
        if node_claim is None and s.no_user_claim:
            # Only the special claim, and the node advertises every resource it covers:
            # NodeResourcesFit checks those.
            return None
        unavailable = [
            i
            for i, selector in enumerate(s.available_on)
            if (selector is not None and not selector.matches(node.name, node.labels))
            or self._binding_unavailable(s.claims[i])
        ]
        allocations: list[AllocationResult] | None = None
        if s.extended is not None:
            with s.lock:
                s.extended.node_claims[node.name] = node_claim
        if s.allocator is not None:
            to_allocate = self._claims_for_node(s, node_claim)
            try:
                result = s.allocator.allocate(node, to_allocate, expired=self._deadline())
            except AllocationTimeout:
                return fw.Status(
                    fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "timed out trying to allocate devices"
                )
            except AllocationError as exc:
                return fw.Status(fw.Code.ERROR, str(exc))
            if result is None or len(result) != len(to_allocate):
                with s.lock:
                    s.failed_nodes[node.name] = node
                return fw.Status(
                    fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims"
                )
            allocations = result
        if unavailable:
            with s.lock:
                s.unavailable.update(unavailable)
                s.unavailable_on[node.name] = tuple(unavailable)
            return fw.Status(
                fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim not available on the node"
            )
        if allocations is not None:
            with s.lock:
                s.node_allocations[node.name] = allocations
        return None

    def _deadline(self) -> typing.Callable[[], bool] | None:
        """Upstream's Filter timeout (DRASchedulerFilterTimeout, ``filterTimeout``; 0 turns it
        off), measured on the scheduler's clock from now."""
        timeout = self._args.filter_timeout.total_seconds()
        if not self._filter_timeout or timeout <= 0:
            return None
        clock = self._handle.clock
        deadline = clock.now() + timeout
        return lambda: clock.now() >= deadline

    def _binding_unavailable(self, claim: ResourceClaim) -> bool:
        """Whether an allocated claim's binding failed or timed out (upstream Filter: the
        claim is then unavailable, for PostFilter to deallocate)."""
        if not self._binding_conditions or claim.allocation is None:
            return False
        try:
            ready = _ready_for_binding(claim)
        except _NotSchedulable:
            return True
        return not ready and self._binding_timed_out(claim)

    def _binding_timed_out(self, claim: ResourceClaim) -> bool:
        """Upstream ``isClaimTimeout``: ``bindingTimeout`` has passed since the allocation of a
        claim whose devices have binding conditions."""
        allocation = claim.allocation
        if allocation is None or allocation.allocation_timestamp is None:
            return False
        if not any(r.binding_conditions for r in allocation.devices.results):
            return False
        deadline = allocation.allocation_timestamp + self._args.binding_timeout
        return deadline.timestamp() < self._handle.clock.now()

    @staticmethod
    def _claims_for_node(s: _State, node_claim: ResourceClaim | None) -> list[ResourceClaim]:
        """The claims to allocate on a node: the special one as that node needs it."""
        special = s.extended_claim
        if special is None or node_claim is None:
            return s.to_allocate
        return [node_claim if c is special else c for c in s.to_allocate]

    # -- PostFilter ---------------------------------------------------------------------------

    def post_filter(
        self, state: fw.CycleState, pod: Pod, filtered_node_status_map: fw.NodeToStatus
    ) -> tuple[fw.PostFilterResult | None, fw.Status | None]:
        """Deallocate one claim that was unavailable and that no other pod uses."""
        if not self._enabled:
            return None, fw.Status(fw.Code.UNSCHEDULABLE, "plugin disabled")
        s = state.get(_STATE)
        if s is None or not s.claims:
            return None, fw.Status(fw.Code.UNSCHEDULABLE, NO_NEW_CLAIMS)
        special = s.extended_claim
        created = special is not None and special.name != SPECIAL_CLAIM_NAME
        # Upstream iterates a Go set (random order); the lowest index is taken here.
        for index in sorted(s.unavailable):
            claim = s.claims[index]
            if claim is special:
                if created:
                    break
                continue
            reserved = claim.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == pod.uid):
                cleared = attrs.evolve(claim, allocation=None, reserved_for=(), devices=())
                try:
                    self._dra.update_claim_status(cleared)
                except BackendError as exc:
                    return None, fw.Status(fw.Code.ERROR, str(exc))
                return None, fw.Status(
                    fw.Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed"
                )
        if special is not None and created:
            # A prior cycle's extended-resource claim: delete it, and start anew.
            try:
                self._delete_claim(special)
            except BackendError as exc:
                return None, fw.Status(fw.Code.ERROR, str(exc))
            return None, fw.Status(fw.Code.UNSCHEDULABLE, "deletion of ResourceClaim completed")
        return None, fw.Status(fw.Code.UNSCHEDULABLE, "still not schedulable")

    # -- scoring ------------------------------------------------------------------------------

    def pre_score(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.Status | None:
        """Skip when Score would give every node 0: the plugin off, DRAPrioritizedList off,
        or no claims (upstream has no PreScore; its Score returns 0 in those cases); and before
        v1.36, whose DynamicResources has no Score."""
        if not self._enabled or not self._scores:
            return fw.Status(fw.Code.SKIP)
        s = state.get(_STATE)
        if s is None or not s.claims:
            return fw.Status(fw.Code.SKIP)
        return None

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        """Upstream ``Score``: per ``firstAvailable`` request, ``8 - i`` for the ``i``-th
        alternative chosen on this node (earlier alternatives score higher), summed over
        the pod's claims; 0 without allocations for the node."""
        if not self._enabled or not self._scores:
            return 0
        s = state.get(_STATE)
        if s is None or not s.claims:
            return 0
        node = node_info.node
        allocations = s.node_allocations.get(node.name) if node is not None else None
        if allocations is None:
            return 0
        return _prioritized_list_score(s.claims, allocations)

    def normalize_score(
        self, state: fw.CycleState, pod: Pod, scores: fw.NodeScoreList
    ) -> fw.Status | None:
        """Scale to 0..100, the highest score getting 100 (upstream
        ``DefaultNormalizeScore(MaxNodeScore, false)``)."""
        if not self._enabled:
            return None
        default_normalize_score(fw.MAX_NODE_SCORE, False, scores)
        return None

    # -- Reserve / Unreserve ------------------------------------------------------------------

    def reserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> fw.Status | None:
        """Record the node's allocation of each unallocated claim as in flight."""
        if not self._enabled:
            return None
        s = state.get(_STATE)
        if s is None or not s.claims:
            return None
        pending = sum(1 for c in s.claims if c.allocation is None)
        if pending == 0 or s.allocator is None:
            return None
        special = s.extended_claim
        allocations = s.node_allocations.get(node_name)
        if not allocations:
            if all(c is special for c in s.to_allocate):
                # Only the special claim, which the node's device plugins satisfy.
                return None
            return fw.Status(fw.Code.ERROR, "claim allocation not found for node")
        if len(allocations) != len(s.to_allocate) or len(allocations) != pending:
            return fw.Status(
                fw.Code.ERROR,
                f"internal error, have {len(allocations)} allocations, "
                f"{len(s.to_allocate)} claims to allocate, want {pending} claims",
            )
        for claim, allocation in zip(s.to_allocate, allocations, strict=True):
            index = next(i for i, c in enumerate(s.claims) if c is claim)
            s.allocations[index] = allocation
            if claim is special and s.extended is not None:
                claim = s.extended.node_claims.get(node_name) or claim
            self._dra.signal_claim_pending_allocation(
                claim.metadata.uid, attrs.evolve(_protected(claim), allocation=allocation)
            )
        s.release_filter_results()
        return None

    def unreserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> None:
        """Drop in-flight allocations; remove the pod from claims reserved for it."""
        if not self._enabled:
            return
        s = state.get(_STATE)
        if s is None or not s.claims:
            return
        special_index = s.extended_index
        for index, claim in enumerate(s.claims):
            if index == special_index:
                continue
            if self._dra.remove_claim_pending_allocation(claim.metadata.uid):
                self._dra.assumed_claim_restore(claim.namespace, claim.name)
            current = self._dra.resource_claim(claim.namespace, claim.name) or claim
            if current.allocation is not None and current.is_reserved_for(pod.uid):
                kept = tuple(r for r in current.reserved_for if r.uid != pod.uid)
                try:
                    self._dra.update_claim_status(attrs.evolve(current, reserved_for=kept))
                except BackendError:
                    pass  # upstream logs it; the next attempt retries
        special = s.extended_claim
        if special is None or s.extended is None:
            return
        if self._dra.remove_claim_pending_allocation(s.extended.initial_uid):
            self._dra.assumed_claim_restore(special.namespace, special.name)
        if special.name == SPECIAL_CLAIM_NAME:
            return  # never created
        try:
            self._delete_claim(special)
        except BackendError:
            pass  # upstream logs it; PostFilter deletes it on the next attempt

    # -- PreBind ------------------------------------------------------------------------------

    def pre_bind_pre_flight(
        self, state: fw.CycleState, pod: Pod, node_name: str
    ) -> fw.Status | None:
        """Skip when the pod has no claims (or the plugin is off): PreBind has nothing to write
        then, so the binding cycle need not set ``nominatedNodeName`` for it first (upstream
        ``PreBindPreFlight``)."""
        if not self._enabled:
            return fw.Status(fw.Code.SKIP)
        s = state.get(_STATE)
        if s is None or not s.claims:
            return fw.Status(fw.Code.SKIP)
        return None

    def pre_bind(self, state: fw.CycleState, pod: Pod, node_name: str) -> fw.Status | None:
        """Write each claim's allocation (if Reserve made one) and reserve it for the pod."""
        if not self._enabled:
            return None
        s = state.get(_STATE)
        if s is None or not s.claims:
            return None
        for index, claim in enumerate(s.claims):
            if claim.is_reserved_for(pod.uid):
                continue
            allocation = s.allocations[index]
            try:
                if index == s.extended_index:
                    s.claims[index] = self._bind_extended_claim(s, index, pod, node_name)
                else:
                    s.claims[index] = self._bind_claim(claim, allocation, pod)
            except _NotSchedulable as exc:
                return fw.Status(fw.Code.ERROR, str(exc))
            finally:
                if allocation is not None:
                    self._dra.remove_claim_pending_allocation(claim.metadata.uid)
        if not self._binding_conditions or not any(
            c.allocation is not None
            and any(r.binding_conditions for r in c.allocation.devices.results)
            for c in s.claims
        ):
            return None
        return self._wait_for_binding_conditions(s, pod, node_name)

    def _wait_for_binding_conditions(self, s: _State, pod: Pod, node_name: str) -> fw.Status | None:
        """Upstream's wait in PreBind: poll at once and then every 5 seconds (on a fixed grid
        from the start, as a Go ticker) until every claim is ready, a binding failed or timed
        out (upstream's texts), or ``bindingTimeout`` has passed since the wait began
        (``device binding timeout``). The scheduler's clock sleeps between polls; a clock
        without ``sleep`` (the virtual clock of deterministic mode, where PreBind runs on the
        thread that moves time) cannot wait, and PreBind then fails saying so."""
        self._handle.event_recorder.eventf(
            pod,
            None,
            "Normal",
            "BindingConditionsPending",
            "Scheduling",
            f"waiting for binding conditions for device on node {node_name}",
        )
        clock = self._handle.clock
        start = clock.now()
        deadline = start + self._args.binding_timeout.total_seconds()
        polls = 0
        while True:
            try:
                pending = self._claim_not_ready(s)
            except _NotSchedulable as exc:
                return fw.Status(fw.Code.ERROR, str(exc))
            if pending is None:
                return None
            if not isinstance(clock, _SleepingClock):
                return fw.Status(
                    fw.Code.ERROR,
                    f"claim {pending}: waiting for device binding conditions "
                    f"(DRADeviceBindingConditions) needs a clock that can sleep; "
                    f"{type(clock).__name__} cannot (deterministic mode does not wait in PreBind)",
                )
            now = clock.now()
            polls = max(polls + 1, math.floor((now - start) / BINDING_POLL_INTERVAL) + 1)
            tick = start + polls * BINDING_POLL_INTERVAL
            if tick >= deadline:
                clock.sleep(max(deadline - now, 0.0))
                return fw.Status(fw.Code.ERROR, "device binding timeout")
            clock.sleep(tick - now)

    def _claim_not_ready(self, s: _State) -> str | None:
        """Upstream ``isPodReadyForBinding``: re-read each claim; the name of the first one not
        ready yet, or ``None`` when all are.

        Raises:
            _NotSchedulable: a claim is gone, its binding failed or timed out.
        """
        for index, claim in enumerate(s.claims):
            current = self._dra.resource_claim(claim.namespace, claim.name)
            if current is None:
                raise _NotSchedulable(f'resourceclaim.resource.k8s.io "{claim.name}" not found')
            s.claims[index] = current
            if _ready_for_binding(current):
                continue
            if self._binding_timed_out(current):
                raise _NotSchedulable(f"claim {current.name} binding timeout")
            return current.name
        return None

    def _bind_extended_claim(
        self, s: _State, index: int, pod: Pod, node_name: str
    ) -> ResourceClaim:
        """Upstream ``bindClaim`` for the special claim: create it (when this cycle made it),
        write its allocation and reservation, and record it in the pod's status."""
        claim = s.claims[index]
        allocation = s.allocations[index]
        if allocation is None and not claim.requests:
            return claim  # the node's device plugins provide everything
        if claim.name == SPECIAL_CLAIM_NAME:
            node_claim = s.extended.node_claims.get(node_name) if s.extended else None
            if node_claim is None:
                raise _NotSchedulable(f"extended resource claim not found for node {node_name}")
            meta = attrs.evolve(node_claim.metadata, name="", uid="")
            try:
                claim = self._dra.create_claim(
                    attrs.evolve(node_claim, metadata=meta, allocation=None)
                )
            except BackendError as exc:
                self._count_claim_create("failure")
                raise _NotSchedulable(
                    f"create claim for extended resources {_klog(meta.namespace, '')}: {exc}"
                ) from exc
            self._count_claim_create("success")
            # Unreserve deletes the created claim if binding fails from here on.
            s.claims[index] = claim
        written = self._bind_claim(claim, allocation, pod)
        s.claims[index] = written
        status = PodExtendedResourceClaimStatus(
            resource_claim_name=written.name, request_mappings=_request_mappings(written, pod)
        )
        try:
            self._dra.patch_pod_extended_resource_claim_status(pod, status)
        except BackendError as exc:
            raise _NotSchedulable(
                f"update pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus: {exc}"
            ) from exc
        return written

    def _count_claim_create(self, status: str) -> None:
        """``scheduler_resourceclaim_creates_total{status}``, when the profile's metrics
        recorder counts claim creations (:class:`~schedframe.metrics.SchedulerMetrics` does)."""
        recorder = getattr(self._handle, "metrics_recorder", None)
        if isinstance(recorder, _ClaimCreateRecorder):
            recorder.resource_claim_created(status)

    def _bind_claim(
        self, claim: ResourceClaim, allocation: AllocationResult | None, pod: Pod
    ) -> ResourceClaim:
        current = self._dra.resource_claim(claim.namespace, claim.name) or claim
        key = _klog(claim.namespace, claim.name)
        if current.is_deleted:
            raise _NotSchedulable(f"claim {key} got deleted in the meantime")
        if allocation is not None:
            if current.allocation is not None:
                raise _NotSchedulable(f"claim {key} got allocated elsewhere in the meantime")
            if DELETE_PROTECTION_FINALIZER not in current.metadata.finalizers:
                # A normal update first: the status write cannot change metadata.
                try:
                    current = self._dra.update_claim(_protected(current))
                except BackendError as exc:
                    raise _NotSchedulable(f"add finalizer to claim {key}: {exc}") from exc
            current = attrs.evolve(current, allocation=allocation)
        ref = ResourceClaimConsumerReference(resource="pods", name=pod.name, uid=pod.uid)
        updated = attrs.evolve(current, reserved_for=(*current.reserved_for, ref))
        if (
            self._binding_conditions
            and updated.allocation is not None
            and updated.allocation.allocation_timestamp is None
        ):
            now = datetime.datetime.fromtimestamp(int(self._handle.clock.now()), tz=datetime.UTC)
            updated = attrs.evolve(
                updated, allocation=attrs.evolve(updated.allocation, allocation_timestamp=now)
            )
        try:
            written = self._dra.update_claim_status(updated)
        except BackendError as exc:
            what = "allocation and reservation" if allocation is not None else "reservation"
            raise _NotSchedulable(f"add {what} to claim {key}: {exc}") from exc
        if allocation is not None:
            self._dra.assume_claim_after_api_call(written)
        return written

    def _delete_claim(self, claim: ResourceClaim) -> None:
        """Upstream ``deleteClaim``: an ``Update`` without the delete-protection finalizer (to
        unblock the removal), then the ``Delete``.

        Raises:
            BackendError: the failed write; the update's says ``update resourceclaim``.
        """
        current = self._dra.resource_claim(claim.namespace, claim.name) or claim
        kept = tuple(f for f in current.metadata.finalizers if f != DELETE_PROTECTION_FINALIZER)
        try:
            current = self._dra.update_claim(
                attrs.evolve(current, metadata=attrs.evolve(current.metadata, finalizers=kept))
            )
        except BackendError as exc:
            raise BackendError(
                f"update resourceclaim {current.namespace}/{current.name}: {exc}",
                reason=exc.reason,
                code=exc.code,
            ) from exc
        self._dra.delete_claim(current)

    # -- events -------------------------------------------------------------------------------

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """Node additions and label changes, claim, pod-claim, class and slice changes."""
        if not self._enabled:
            return ()
        r, a = fw.EventResource, fw.ActionType
        node_actions = a.ADD | a.UPDATE_NODE_LABEL
        if not self._queueing_hints:
            node_actions |= a.UPDATE_NODE_TAINT
        return (
            fw.ClusterEventWithHint(fw.ClusterEvent(r.NODE, node_actions)),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(r.RESOURCE_CLAIM, a.ADD | a.UPDATE),
                self.is_schedulable_after_claim_change,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(r.POD, a.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                self.is_schedulable_after_pod_change,
            ),
            fw.ClusterEventWithHint(fw.ClusterEvent(r.DEVICE_CLASS, a.ADD | a.UPDATE)),
            fw.ClusterEventWithHint(fw.ClusterEvent(r.RESOURCE_SLICE, a.ADD | a.UPDATE)),
        )

    def is_schedulable_after_claim_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Upstream ``isSchedulableAfterClaimChange``."""
        if not isinstance(new_obj, ResourceClaim) or not (
            old_obj is None or isinstance(old_obj, ResourceClaim)
        ):
            raise TypeError(f"expected a ResourceClaim, got {type(new_obj).__name__}")
        try:
            claims = self._pod_claims(pod)
        except _NotSchedulable:
            return fw.QueueingHint.QUEUE_SKIP
        uses = any(c.metadata.uid == new_obj.metadata.uid for c in claims)
        if old_obj is not None and old_obj.allocation is not None and new_obj.allocation is None:
            return fw.QueueingHint.QUEUE  # deallocated: devices became free
        if not uses:
            return fw.QueueingHint.QUEUE_SKIP
        if old_obj is None:
            return fw.QueueingHint.QUEUE
        if (old_obj.allocation, old_obj.reserved_for, old_obj.devices) == (
            new_obj.allocation,
            new_obj.reserved_for,
            new_obj.devices,
        ):
            return fw.QueueingHint.QUEUE_SKIP
        return fw.QueueingHint.QUEUE

    def is_schedulable_after_pod_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Upstream ``isSchedulableAfterPodChange``: the pod's own generated claims appeared."""
        if not isinstance(new_obj, Pod):
            raise TypeError(f"expected a Pod, got {type(new_obj).__name__}")
        if new_obj.uid != pod.uid:
            return fw.QueueingHint.QUEUE_SKIP
        try:
            self._pod_claims(new_obj)
        except _NotSchedulable:
            return fw.QueueingHint.QUEUE_SKIP
        return fw.QueueingHint.QUEUE

    def sign_pod(self, pod: Pod) -> tuple[Sequence[fw.SignFragment], fw.Status | None]:
        """No fragment; a pod with claims is not signable (upstream ``SignPod``)."""
        if pod.spec.resource_claims:
            return (), fw.Status(
                fw.Code.UNSCHEDULABLE, "pods with dra resource claims are not signable"
            )
        return (), None

    def filter_details(self, state: fw.CycleState, pod: Pod, node_name: str) -> Sequence[str]:
        """Which device requests failed on a node Filter rejected, and why (``explain``)."""
        s = state.get(_STATE)
        if s is None:
            return ()
        lines = [
            f"claim {_klog(s.claims[i].namespace, s.claims[i].name)}: allocated to devices "
            "whose node selector does not match this node"
            for i in s.unavailable_on.get(node_name, ())
        ]
        node = s.failed_nodes.get(node_name)
        if node is not None and s.allocator is not None:
            node_claim = s.extended.node_claims.get(node_name) if s.extended else None
            lines += describe_requests(s.allocator, node, self._claims_for_node(s, node_claim))
        return tuple(lines)


def _containers_requests(pod: Pod) -> list[tuple[str, list[str], dict[str, int]]]:
    """Init containers then containers: name, sorted request names, requests."""
    containers = (*pod.spec.init_containers, *pod.spec.containers)
    return [(c.name, sorted(c.requests), dict(c.requests)) for c in containers]


def _device_requests(
    pod: Pod, resources: Sequence[str], mapping: dict[str, DeviceClass]
) -> tuple[DeviceRequest, ...]:
    """Upstream ``createDeviceRequests``: one request per container and resource to take
    from DRA, named ``container-<i>-request-<j>`` (``i`` counts init containers first, ``j``
    is the resource's place among the container's sorted request names), for as many devices
    of the providing class as the container requests; sorted by name."""
    requests = []
    for name in resources:
        device_class = mapping.get(name)
        if device_class is None:
            continue
        for i, (_, keys, amounts) in enumerate(_containers_requests(pod)):
            count = amounts.get(name, 0)
            if count == 0:
                continue
            requests.append(
                DeviceRequest(
                    name=f"container-{i}-request-{keys.index(name)}",
                    exactly=ExactDeviceRequest(
                        device_class_name=device_class.name,
                        allocation_mode="ExactCount",
                        count=count,
                    ),
                )
            )
    return tuple(sorted(requests, key=lambda r: r.name))


def _request_mappings(
    claim: ResourceClaim, pod: Pod
) -> tuple[ContainerExtendedResourceRequest, ...]:
    """Upstream ``createRequestMappings``: which request of the claim serves which
    container's resource (containers in order, each container's resources by name)."""
    names = {r.name for r in claim.requests}
    mappings = []
    for i, (container, keys, _) in enumerate(_containers_requests(pod)):
        for j, resource in enumerate(keys):
            request = f"container-{i}-request-{j}"
            if request in names:
                mappings.append(
                    ContainerExtendedResourceRequest(
                        container_name=container, resource_name=resource, request_name=request
                    )
                )
    return tuple(mappings)


def _protected(claim: ResourceClaim) -> ResourceClaim:
    """``claim`` with the delete-protection finalizer appended when it lacks it."""
    finalizers = claim.metadata.finalizers
    if DELETE_PROTECTION_FINALIZER in finalizers:
        return claim
    meta = attrs.evolve(claim.metadata, finalizers=(*finalizers, DELETE_PROTECTION_FINALIZER))
    return attrs.evolve(claim, metadata=meta)


def _ready_for_binding(claim: ResourceClaim) -> bool:
    """Upstream ``isClaimReadyForBinding``: every binding condition of the allocated devices
    is true in ``status.devices`` (no device with conditions: ready).

    Raises:
        _NotSchedulable: a binding failure condition is true (upstream's text).
    """
    allocation = claim.allocation
    if allocation is None:
        return False
    for result in allocation.devices.results:
        if not result.binding_conditions:
            continue
        status = next(
            (
                d
                for d in claim.devices
                if (d.driver, d.pool, d.device) == (result.driver, result.pool, result.device)
            ),
            None,
        )
        if status is None:
            return False
        conditions = {c.type: c for c in status.conditions}
        for name in result.binding_failure_conditions:
            failed = conditions.get(name)
            if failed is not None and failed.status == "True":
                raise _NotSchedulable(
                    f"claim {claim.name} binding failed: reason={failed.reason}, "
                    f"message={json.dumps(failed.message)}"
                )
        for name in result.binding_conditions:
            condition = conditions.get(name)
            if condition is None or condition.status != "True":
                return False
    return True
