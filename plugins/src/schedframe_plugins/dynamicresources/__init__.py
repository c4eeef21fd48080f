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

Statuses for "cannot schedule now" are UnschedulableAndUnresolvable, as upstream's
``statusUnschedulable``. Not modelled: DRA-backed extended resources (DRAExtendedResource; a
pod requesting one is refused in PreFilter, saying so), device binding conditions, consumable
capacity, the Filter timeout.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Sequence
from typing import ClassVar, Final

import attrs

from schedframe import framework as fw
from schedframe.errors import BackendError
from schedframe.objects import (
    AllocationResult,
    Node,
    NodeSelector,
    Pod,
    ResourceClaim,
    ResourceClaimConsumerReference,
)
from schedframe_plugins import names
from schedframe_plugins.dynamicresources._allocator import (
    AllocationError,
    Allocator,
    Features,
    describe_requests,
)
from schedframe_plugins.dynamicresources._cel import CELCache

__all__ = ["NO_NEW_CLAIMS", "DynamicResources", "DynamicResourcesArgs"]

NAME: Final = names.DYNAMIC_RESOURCES

#: Upstream's PostFilter reason when the pod's claims gave nothing to deallocate.
NO_NEW_CLAIMS: Final = "no new claims to deallocate"
#: Upstream ``ResourceClaimReservedForMaxSize``.
RESERVED_FOR_MAX_SIZE: Final = 256

_TEN_SECONDS: Final = datetime.timedelta(seconds=10)
#: Upstream ``resourceapi.ResourceDeviceClassPrefix``: every class's implicit extended resource.
_IMPLICIT_PREFIX: Final = "deviceclass.resource.kubernetes.io/"
_STATE: Final = fw.StateKey["_State"](NAME)


def _non_negative(
    _: object, attribute: attrs.Attribute[datetime.timedelta], value: datetime.timedelta
) -> None:
    if value < datetime.timedelta(0):
        raise ValueError("must be zero or greater")


@attrs.frozen(kw_only=True)
class DynamicResourcesArgs:
    """Upstream ``DynamicResourcesArgs`` (v1), defaulted as in v1.36 (both timeouts 10s).

    Attributes:
        filter_timeout: per-node Filter time budget (``filterTimeout``; 0 disables it). Not
            enforced: schedframe's allocator has no deadline.
        binding_timeout: how long PreBind waits for device binding conditions
            (``bindingTimeout``); binding conditions are not modelled.
    """

    filter_timeout: datetime.timedelta = attrs.field(default=_TEN_SECONDS, validator=_non_negative)
    binding_timeout: datetime.timedelta = attrs.field(default=_TEN_SECONDS, validator=_non_negative)


class _NotSchedulable(Exception):
    """A reason the pod cannot be scheduled now (upstream: errors of foreachPodResourceClaim)."""


def _klog(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


@attrs.define(kw_only=True)
class _State:
    """Upstream ``stateData``: the pod's claims and what Filter/Reserve found."""

    claims: list[ResourceClaim] = attrs.field(factory=list)
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
        )
        self._queueing_hints = gates.enabled("SchedulerQueueingHints")
        self._extended_resources = gates.enabled("DRAExtendedResource")
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
        refused = self._dra_extended_resource(pod)
        if refused is not None:
            return refused
        if not pod.spec.resource_claims:
            return fw.Status(fw.Code.SKIP)
        try:
            claims = self._pod_claims(pod)
        except _NotSchedulable as exc:
            return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(exc))
        if not claims:
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
            )
            s.to_allocate = to_allocate
        s.claims = claims
        return None

    def _dra_extended_resource(self, pod: Pod) -> fw.Status | None:
        """Refuse, loudly, a pod requesting an extended resource a DeviceClass provides.

        With DRAExtendedResource upstream allocates such a resource from devices on nodes
        that do not advertise it; schedframe does not model that, so rather than schedule the
        pod as if the resource were node-allocatable, PreFilter says so.
        """
        if not self._extended_resources or not self._dra.device_classes():
            return None
        names = {
            c.extended_resource_name: c.name
            for c in self._dra.device_classes()
            if c.extended_resource_name
        }
        for resource in pod.requests:
            cls = names.get(resource)
            if cls is None and resource.startswith(_IMPLICIT_PREFIX):
                candidate = resource[len(_IMPLICIT_PREFIX) :]
                cls = candidate if self._dra.device_class(candidate) is not None else None
            if cls is not None:
                return fw.Status(
                    fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f"extended resource {resource} is provided by DeviceClass {cls} "
                    "(DRAExtendedResource), which schedframe does not model",
                )
        return None

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
        unavailable = [
            i
            for i, selector in enumerate(s.available_on)
            if selector is not None and not selector.matches(node.name, node.labels)
        ]
        allocations: list[AllocationResult] | None = None
        if s.allocator is not None:
            try:
                result = s.allocator.allocate(node, s.to_allocate)
            except AllocationError as exc:
                return fw.Status(fw.Code.ERROR, str(exc))
            if result is None or len(result) != len(s.to_allocate):
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
        # Upstream iterates a Go set (random order); the lowest index is taken here.
        for index in sorted(s.unavailable):
            claim = s.claims[index]
            reserved = claim.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == pod.uid):
                cleared = attrs.evolve(claim, allocation=None, reserved_for=())
                try:
                    self._dra.update_claim_status(cleared)
                except BackendError as exc:
                    return None, fw.Status(fw.Code.ERROR, str(exc))
                return None, fw.Status(
                    fw.Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed"
                )
        return None, fw.Status(fw.Code.UNSCHEDULABLE, "still not schedulable")

    # -- scoring (none) -----------------------------------------------------------------------

    def pre_score(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.Status | None:
        """Skip: upstream's DynamicResources does not score."""
        return fw.Status(fw.Code.SKIP)

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        """0 (never called: PreScore skips)."""
        return 0

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
        allocations = s.node_allocations.get(node_name)
        if allocations is None:
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
            self._dra.signal_claim_pending_allocation(
                claim.metadata.uid, attrs.evolve(claim, allocation=allocation)
            )
        return None

    def unreserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> None:
        """Drop in-flight allocations; remove the pod from claims reserved for it."""
        if not self._enabled:
            return
        s = state.get(_STATE)
        if s is None or not s.claims:
            return
        for claim in s.claims:
            if self._dra.remove_claim_pending_allocation(claim.metadata.uid):
                self._dra.assumed_claim_restore(claim.namespace, claim.name)
            current = self._dra.resource_claim(claim.namespace, claim.name) or claim
            if current.allocation is not None and current.is_reserved_for(pod.uid):
                kept = tuple(r for r in current.reserved_for if r.uid != pod.uid)
                try:
                    self._dra.update_claim_status(attrs.evolve(current, reserved_for=kept))
                except BackendError:
                    pass  # upstream logs it; the next attempt retries

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
                s.claims[index] = self._bind_claim(claim, allocation, pod)
            except _NotSchedulable as exc:
                return fw.Status(fw.Code.ERROR, str(exc))
            finally:
                if allocation is not None:
                    self._dra.remove_claim_pending_allocation(claim.metadata.uid)
        return None

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
            current = attrs.evolve(current, allocation=allocation)
        ref = ResourceClaimConsumerReference(resource="pods", name=pod.name, uid=pod.uid)
        updated = attrs.evolve(current, reserved_for=(*current.reserved_for, ref))
        try:
            written = self._dra.update_claim_status(updated)
        except BackendError as exc:
            what = "allocation and reservation" if allocation is not None else "reservation"
            raise _NotSchedulable(f"add {what} to claim {key}: {exc}") from exc
        if allocation is not None:
            self._dra.assume_claim_after_api_call(written)
        return written

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
            lines += describe_requests(s.allocator, node, s.to_allocate)
        return tuple(lines)
