"""Dynamic Resource Allocation objects (``resource.k8s.io/v1``).

DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate, with the fields the
structured-parameters allocator and the DynamicResources plugin read. Opaque driver
configuration (``config[].opaque``) is kept as the raw mapping the manifest gave, because
neither the scheduler nor the allocator interprets it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Final

import attrs

from schedframe.objects._meta import NodeSelector, ObjectMeta
from schedframe.objects._quantity import Quantity

__all__ = [
    "ALLOCATION_MODES",
    "AllocatedDeviceStatus",
    "AllocationResult",
    "CapacityRequestPolicy",
    "CELSelector",
    "Counter",
    "CounterSet",
    "Device",
    "DeviceAllocationResult",
    "DeviceAttribute",
    "DeviceCapacity",
    "DeviceClaimConfiguration",
    "DeviceClass",
    "DeviceCondition",
    "DeviceConstraint",
    "DeviceCounterConsumption",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSubRequest",
    "DeviceTaint",
    "DeviceToleration",
    "ExactDeviceRequest",
    "ResourceClaim",
    "ResourceClaimConsumerReference",
    "ResourceClaimTemplate",
    "ResourceSlice",
    "ResourcePool",
]

#: ``allocationMode`` values, in upstream order.
ALLOCATION_MODES: Final = ("ExactCount", "All")


class _Named:
    __slots__ = ()
    metadata: ObjectMeta

    @property
    def name(self) -> str:
        """The object's name."""
        return self.metadata.name

    @property
    def namespace(self) -> str:
        """The object's namespace (empty for cluster-scoped kinds)."""
        return self.metadata.namespace


@attrs.frozen(kw_only=True)
class CELSelector:
    """``selectors[].cel.expression``: a CEL expression over one ``device``."""

    expression: str


@attrs.frozen(kw_only=True)
class DeviceClaimConfiguration:
    """One ``config[]`` entry: for ``requests`` (all when empty), opaque driver parameters."""

    requests: tuple[str, ...] = ()
    driver: str = ""
    parameters: Mapping[str, object] = attrs.field(factory=dict, hash=False)


@attrs.frozen(kw_only=True)
class DeviceClass(_Named):
    """A DeviceClass (cluster-scoped): selectors every device of the class must match.

    Attributes:
        extended_resource_name: ``spec.extendedResourceName``: the extended resource a pod may
            request in place of a claim (DRAExtendedResource).
    """

    metadata: ObjectMeta
    selectors: tuple[CELSelector, ...] = ()
    config: tuple[DeviceClaimConfiguration, ...] = ()
    extended_resource_name: str | None = None


@attrs.frozen(kw_only=True)
class DeviceAttribute:
    """One typed attribute value; exactly one of the four is set."""

    int_value: int | None = None
    bool_value: bool | None = None
    string_value: str | None = None
    version_value: str | None = None

    @property
    def value(self) -> int | bool | str | None:
        """The value that is set (a version as its string)."""
        for v in (self.int_value, self.bool_value, self.string_value, self.version_value):
            if v is not None:
                return v
        return None


@attrs.frozen(kw_only=True)
class CapacityRequestPolicy:
    """``requestPolicy`` of a consumable capacity (DRAConsumableCapacity)."""

    default: Quantity | None = None
    valid_values: tuple[Quantity, ...] = ()
    valid_range_min: Quantity | None = None
    valid_range_max: Quantity | None = None
    valid_range_step: Quantity | None = None


@attrs.frozen(kw_only=True)
class DeviceCapacity:
    """One capacity of a device."""

    value: Quantity
    request_policy: CapacityRequestPolicy | None = None


@attrs.frozen(kw_only=True)
class Counter:
    """One counter amount."""

    value: Quantity


@attrs.frozen(kw_only=True)
class CounterSet:
    """``sharedCounters[]``: named counters devices of the pool draw on."""

    name: str
    counters: Mapping[str, Counter] = attrs.field(factory=dict, hash=False)


@attrs.frozen(kw_only=True)
class DeviceCounterConsumption:
    """``consumesCounters[]``: what a device takes from one counter set when allocated."""

    counter_set: str
    counters: Mapping[str, Counter] = attrs.field(factory=dict, hash=False)


@attrs.frozen(kw_only=True)
class DeviceTaint:
    """A device taint (DRADeviceTaints): ``NoSchedule`` or ``NoExecute``."""

    key: str
    value: str = ""
    effect: str
    time_added: datetime | None = None


@attrs.frozen(kw_only=True)
class DeviceToleration:
    """A toleration of device taints, with the pod toleration semantics (Exists/Equal)."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: DeviceTaint) -> bool:
        """Whether this toleration tolerates ``taint`` (upstream ``resourceclaim.ToleratesTaint``)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


@attrs.frozen(kw_only=True)
class Device:
    """One device of a ResourceSlice.

    ``node_name`` / ``node_selector`` / ``all_nodes`` are set only on slices with
    ``perDeviceNodeSelection``.
    """

    name: str
    attributes: Mapping[str, DeviceAttribute] = attrs.field(factory=dict, hash=False)
    capacity: Mapping[str, DeviceCapacity] = attrs.field(factory=dict, hash=False)
    consumes_counters: tuple[DeviceCounterConsumption, ...] = ()
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: tuple[DeviceTaint, ...] = ()
    binds_to_node: bool | None = None
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    allow_multiple_allocations: bool | None = None


@attrs.frozen(kw_only=True)
class ResourcePool:
    """``spec.pool``: which pool a slice belongs to and which generation it describes."""

    name: str
    generation: int = 0
    resource_slice_count: int = 1


@attrs.frozen(kw_only=True)
class ResourceSlice(_Named):
    """A ResourceSlice (cluster-scoped): some devices of one driver's pool.

    Exactly one of ``node_name``, ``node_selector``, ``all_nodes`` and
    ``per_device_node_selection`` says which nodes reach the devices.
    """

    metadata: ObjectMeta
    driver: str
    pool: ResourcePool
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: tuple[Device, ...] = ()
    shared_counters: tuple[CounterSet, ...] = ()


@attrs.frozen(kw_only=True)
class DeviceSubRequest:
    """One ``firstAvailable[]`` alternative of a request."""

    name: str
    device_class_name: str
    selectors: tuple[CELSelector, ...] = ()
    allocation_mode: str = "ExactCount"
    count: int = 1
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity_requests: Mapping[str, Quantity] = attrs.field(factory=dict, hash=False)


@attrs.frozen(kw_only=True)
class ExactDeviceRequest:
    """``requests[].exactly``: a request for devices of one class."""

    device_class_name: str
    selectors: tuple[CELSelector, ...] = ()
    allocation_mode: str = "ExactCount"
    count: int = 1
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity_requests: Mapping[str, Quantity] = attrs.field(factory=dict, hash=False)


@attrs.frozen(kw_only=True)
class DeviceRequest:
    """``spec.devices.requests[]``: exactly one of ``exactly`` and ``first_available``."""

    name: str
    exactly: ExactDeviceRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()


@attrs.frozen(kw_only=True)
class DeviceConstraint:
    """``spec.devices.constraints[]``: ``matchAttribute`` (or ``distinctAttribute``)."""

    requests: tuple[str, ...] = ()
    match_attribute: str | None = None
    distinct_attribute: str | None = None


@attrs.frozen(kw_only=True)
class DeviceRequestAllocationResult:
    """One allocated device: ``status.allocation.devices.results[]``."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    share_id: str | None = None
    consumed_capacity: Mapping[str, Quantity] = attrs.field(factory=dict, hash=False)


@attrs.frozen(kw_only=True)
class DeviceAllocationResult:
    """``status.allocation.devices``."""

    results: tuple[DeviceRequestAllocationResult, ...] = ()
    config: tuple[DeviceClaimConfiguration, ...] = ()


@attrs.frozen(kw_only=True)
class AllocationResult:
    """``status.allocation``: the devices and the nodes that reach all of them."""

    devices: DeviceAllocationResult = attrs.field(factory=DeviceAllocationResult)
    node_selector: NodeSelector | None = None
    allocation_timestamp: datetime | None = None


@attrs.frozen(kw_only=True)
class ResourceClaimConsumerReference:
    """``status.reservedFor[]``: who uses the claim (a pod, normally)."""

    resource: str
    name: str
    uid: str
    api_group: str = ""


@attrs.frozen(kw_only=True)
class DeviceCondition:
    """One ``status.devices[].conditions[]`` entry (a ``metav1.Condition``): binding
    conditions are read from these (DRADeviceBindingConditions)."""

    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: datetime | None = None
    observed_generation: int | None = None


@attrs.frozen(kw_only=True)
class AllocatedDeviceStatus:
    """``status.devices[]``: a driver's report on one allocated device.

    ``data`` and ``network_data`` are kept as the API server sent them (the scheduler does not
    read them) so that a status write sends them back unchanged.
    """

    driver: str
    pool: str
    device: str
    share_id: str | None = None
    conditions: tuple[DeviceCondition, ...] = ()
    data: object = attrs.field(default=None, hash=False)
    network_data: Mapping[str, object] | None = attrs.field(default=None, hash=False)


@attrs.frozen(kw_only=True)
class ResourceClaim(_Named):
    """A ResourceClaim: device requests, and once allocated, which devices it got."""

    metadata: ObjectMeta
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[DeviceClaimConfiguration, ...] = ()
    allocation: AllocationResult | None = None
    reserved_for: tuple[ResourceClaimConsumerReference, ...] = ()
    devices: tuple[AllocatedDeviceStatus, ...] = ()

    def is_reserved_for(self, uid: str) -> bool:
        """Whether ``status.reservedFor`` names the pod with ``uid``."""
        return any(ref.uid == uid for ref in self.reserved_for)

    @property
    def is_deleted(self) -> bool:
        """Whether the claim carries a deletion timestamp."""
        return self.metadata.deletion_timestamp is not None


@attrs.frozen(kw_only=True)
class ResourceClaimTemplate(_Named):
    """A ResourceClaimTemplate: the claim a pod's ``resourceClaimTemplateName`` makes.

    Attributes:
        claim_metadata: the labels and annotations of each claim made from it.
        claim: the spec of each claim, as a metadata-less :class:`ResourceClaim`.
    """

    metadata: ObjectMeta
    claim_metadata: ObjectMeta = attrs.field(factory=lambda: ObjectMeta(name=""))
    claim: ResourceClaim = attrs.field(factory=lambda: ResourceClaim(metadata=ObjectMeta(name="")))
