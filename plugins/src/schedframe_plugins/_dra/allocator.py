"""The structured-parameters allocator: which devices a pod's claims get on one node.

Upstream ``k8s.io/dynamic-resource-allocation/structured`` (the "stable" implementation,
with the features the "incubating" one adds where schedframe's gates enable them:
prioritized lists, admin access, partitionable devices, device taints and consumable
capacity). The search is upstream's: claims in order, requests in order, and for each wanted
device the candidates in pool order, slice order, device order; the first complete solution
wins, so the same device is chosen as kube-scheduler chooses it.

Pool order: upstream gathers pools in a Go map, whose iteration order is unspecified; here
pools are tried sorted by (driver, pool name), which makes results reproducible. Within a pool,
slices keep the order they were listed in and devices their order in the slice.

Consumable capacity (DRAConsumableCapacity): a device with ``allowMultipleAllocations`` is
shared, never "in use"; each allocation of it consumes capacity (a request's
``capacity.requests``, rounded up by the capacity's ``requestPolicy``, or the policy's default,
or the whole capacity) and gets its own ``shareID``. Upstream draws share IDs at random; here
they are UUIDv5 of (claim UID or name, result index, device), so runs are reproducible.
Quantities are exact fractions, so upstream's "request cannot be represented" errors for
amounts past int64 do not arise.

Devices with binding conditions are selected only with ``Features.device_binding`` (upstream's
``DeviceBindingAndStatus``: DRADeviceBindingConditions with DRAResourceClaimDeviceStatus);
without it they are never selected, as upstream. With it, a result records its device's
``bindingConditions`` and ``bindingFailureConditions``, and a device with ``bindsToNode``
restricts the allocation to the node it was allocated for (as a node-local device does).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

import attrs

from schedframe.objects import (
    AllocationResult,
    CapacityRequestPolicy,
    Device,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaimConfiguration,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    DeviceToleration,
    ExactDeviceRequest,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Quantity,
    ResourceClaim,
    ResourceSlice,
)
from schedframe_plugins._dra.cel import CELCache, CELError, DeviceView

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "AllocationError",
    "AllocationTimeout",
    "Allocator",
    "DeviceID",
    "Features",
    "Pool",
    "gather_pools",
]

#: Upstream ``resourceapi.AllocationResultsMaxSize``.
ALLOCATION_RESULTS_MAX_SIZE: Final = 32

DeviceID = tuple[str, str, str]
"""(driver, pool, device): a device, cluster-wide."""


class AllocationError(Exception):
    """Allocation cannot proceed (upstream's ``Allocate`` error), with upstream's text."""


class AllocationTimeout(AllocationError):
    """The caller's deadline passed during the search (upstream: the context's deadline,
    ``DRASchedulerFilterTimeout``)."""


@attrs.frozen(kw_only=True)
class Features:
    """Which optional allocator features are on (upstream ``structured.Features``)."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding: bool = False
    consumable_capacity: bool = False


@attrs.define(kw_only=True)
class Pool:
    """One resource pool as seen from one node (upstream ``Pool``)."""

    driver: str
    name: str
    generation: int
    slices: list[ResourceSlice]
    is_incomplete: bool = False
    is_invalid: bool = False
    invalid_reason: str = ""
    #: Counter sets of the pool's current generation, from every slice (also those whose
    #: devices this node does not reach).
    counter_sets: dict[str, dict[str, Quantity]] = attrs.field(factory=dict)
    #: Every slice of the current generation (for counters consumed by allocated devices).
    all_slices: list[ResourceSlice] = attrs.field(factory=list)

    @property
    def pool_id(self) -> str:
        """``driver/pool``, as upstream prints a pool."""
        return f"{self.driver}/{self.name}"


def node_matches(
    node: Node | None, node_name: str | None, all_nodes: bool | None, selector: NodeSelector | None
) -> bool:
    """Upstream ``NodeMatches``: a node name, all nodes, or a node selector."""
    if node_name:
        return node is not None and node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return node is not None and selector.matches(node.name, node.labels)
    return False


def gather_pools(
    slices: Sequence[ResourceSlice], node: Node | None, features: Features
) -> list[Pool]:
    """The pools with devices ``node`` reaches (upstream ``GatherPools``), in (driver, pool) order."""
    pools: dict[tuple[str, str], Pool] = {}
    for rs in slices:
        if not features.partitionable_devices and rs.per_device_node_selection is not None:
            continue
        if rs.node_name or rs.all_nodes or rs.node_selector is not None:
            if node_matches(node, rs.node_name, rs.all_nodes, rs.node_selector):
                _add_slice(pools, rs)
        elif rs.per_device_node_selection:
            for dev in rs.devices:
                if node_matches(node, dev.node_name, dev.all_nodes, dev.node_selector):
                    _add_slice(pools, rs)
                    break
    result = []
    for key in sorted(pools):
        pool = pools[key]
        first = pool.slices[0]
        complete = len(pool.slices) == first.pool.resource_slice_count
        same_generation = [
            s
            for s in slices
            if s.driver == pool.driver
            and s.pool.name == pool.name
            and s.pool.generation == pool.generation
        ]
        if any(
            s.driver == pool.driver
            and s.pool.name == pool.name
            and s.pool.generation > pool.generation
            for s in slices
        ):
            continue  # a newer generation is being published: ignore the old one
        if not complete:
            complete = len(same_generation) == first.pool.resource_slice_count
        pool.is_incomplete = not complete
        pool.all_slices = same_generation
        seen: set[str] = set()
        for s in pool.slices:
            for dev in s.devices:
                if dev.name in seen and not pool.is_invalid:
                    pool.is_invalid, pool.invalid_reason = True, f"duplicate device name {dev.name}"
                seen.add(dev.name)
        for s in same_generation:
            for cs in s.shared_counters:
                pool.counter_sets[cs.name] = {n: c.value for n, c in cs.counters.items()}
        result.append(pool)
    return result


def _add_slice(pools: dict[tuple[str, str], Pool], rs: ResourceSlice) -> None:
    key = (rs.driver, rs.pool.name)
    pool = pools.get(key)
    if pool is None:
        pools[key] = Pool(
            driver=rs.driver, name=rs.pool.name, generation=rs.pool.generation, slices=[rs]
        )
        return
    if rs.pool.generation < pool.generation:
        return
    if rs.pool.generation > pool.generation:
        pool.slices = []
        pool.generation = rs.pool.generation
    pool.slices.append(rs)


def _klog(claim: ResourceClaim) -> str:
    # klog.KObj: namespace/name, or just the name without a namespace.
    ns = claim.metadata.namespace
    return f"{ns}/{claim.name}" if ns else claim.name


@attrs.define(slots=True)
class _Req:
    """One request or subrequest being allocated (upstream ``requestData``)."""

    name: str
    class_name: str
    selectors: tuple[str, ...]
    mode: str
    count: int
    admin_access: bool
    has_admin_access: bool
    tolerations: tuple[DeviceToleration, ...]
    capacity_requests: Mapping[str, Quantity]
    parent: str | None = None
    device_class: DeviceClass | None = None
    num_devices: int = 0
    all_devices: list[tuple[DeviceID, Device, ResourceSlice, Pool]] = attrs.field(factory=list)
    selected_sub: int = 0

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


def _exact(req: DeviceRequest, e: ExactDeviceRequest) -> _Req:
    return _Req(
        name=req.name,
        class_name=e.device_class_name,
        selectors=tuple(s.expression for s in e.selectors),
        mode=e.allocation_mode,
        count=e.count,
        admin_access=bool(e.admin_access),
        has_admin_access=e.admin_access is not None,
        tolerations=e.tolerations,
        capacity_requests=e.capacity_requests,
    )


def _sub(parent: DeviceRequest, s: DeviceSubRequest) -> _Req:
    return _Req(
        name=s.name,
        class_name=s.device_class_name,
        selectors=tuple(x.expression for x in s.selectors),
        mode=s.allocation_mode,
        count=s.count,
        admin_access=False,
        has_admin_access=False,
        tolerations=s.tolerations,
        capacity_requests=s.capacity_requests,
        parent=parent.name,
    )


class _MatchAttribute:
    """``matchAttribute``: every device of the named requests has the same value."""

    def __init__(self, requests: Iterable[str], attribute: str) -> None:
        self.requests = frozenset(requests)
        self.attribute = attribute
        self.value: DeviceAttribute | None = None
        self.num = 0

    def _applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        if not sub:
            return request in self.requests
        return request in self.requests or f"{request}/{sub}" in self.requests

    def add(self, request: str, sub: str, device: Device, did: DeviceID) -> bool:
        if not self._applies(request, sub):
            return True
        attr = lookup_attribute(device, did, self.attribute)
        if attr is None:
            return False
        if self.num == 0:
            self.value, self.num = attr, 1
            return True
        assert self.value is not None
        mine = self.value
        for field in ("string_value", "int_value", "bool_value", "version_value"):
            theirs = getattr(attr, field)
            if theirs is not None:
                if getattr(mine, field) is None or getattr(mine, field) != theirs:
                    return False
                self.num += 1
                return True
        return False

    def remove(self, request: str, sub: str, device: Device, did: DeviceID) -> None:
        if self._applies(request, sub):
            self.num -= 1


class _DistinctAttribute:
    """``distinctAttribute``: the devices of the named requests all differ in the value."""

    def __init__(self, requests: Iterable[str], attribute: str) -> None:
        self.requests = frozenset(requests)
        self.attribute = attribute
        self.values: list[object] = []

    def _applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub) and f"{request}/{sub}" in self.requests)

    def add(self, request: str, sub: str, device: Device, did: DeviceID) -> bool:
        if not self._applies(request, sub):
            return True
        attr = lookup_attribute(device, did, self.attribute)
        if attr is None or attr.value in self.values:
            return False
        self.values.append(attr.value)
        return True

    def remove(self, request: str, sub: str, device: Device, did: DeviceID) -> None:
        if self._applies(request, sub):
            attr = lookup_attribute(device, did, self.attribute)
            if attr is not None and attr.value in self.values:
                self.values.remove(attr.value)


def lookup_attribute(device: Device, did: DeviceID, name: str) -> DeviceAttribute | None:
    """The attribute ``name`` (fully qualified), as upstream ``lookupAttribute``."""
    found = device.attributes.get(name)
    if found is not None:
        return found
    domain, sep, ident = name.partition("/")
    if not sep or domain != did[0]:
        return None
    return device.attributes.get(ident)


class _Stop(Exception):
    pass


class _MaxSizeExceeded(Exception):
    pass


class Allocator:
    """Allocates claims on a node from the given slices (upstream ``structured.Allocator``).

    Args:
        features: which optional features are enabled.
        allocated_devices: devices already allocated to other claims (in use).
        classes: the DeviceClasses by name.
        slices: every ResourceSlice.
        cel_cache: compiled selectors, shared between allocations.
        allocated_capacity: per shared device, the capacity its existing allocations consume
            (upstream ``AggregatedCapacity``); names with or without the driver as domain.
    """

    def __init__(
        self,
        *,
        features: Features,
        allocated_devices: frozenset[DeviceID] | set[DeviceID],
        classes: Mapping[str, DeviceClass],
        slices: Sequence[ResourceSlice],
        cel_cache: CELCache,
        allocated_capacity: Mapping[DeviceID, Mapping[str, Quantity]] | None = None,
    ) -> None:
        self.features = features
        self.allocated_capacity: dict[DeviceID, dict[str, Quantity]] = {
            did: {_qualify(n, did[0]): q for n, q in caps.items()}
            for did, caps in (allocated_capacity or {}).items()
        }
        self.allocated_devices = allocated_devices
        self.classes = classes
        self.slices = slices
        self.cel_cache = cel_cache
        self._available_counters: dict[tuple[str, str], dict[str, dict[str, Quantity]]] = {}
        #: Upstream ``numAllocateOneInvocations``: the work done so far.
        self.num_allocate_one_invocations = 0

    def allocate(
        self,
        node: Node | None,
        claims: Sequence[ResourceClaim],
        *,
        expired: Callable[[], bool] | None = None,
    ) -> list[AllocationResult] | None:
        """One allocation result per claim, or None when the claims do not fit on ``node``.

        ``expired``, when given, is asked before each step of the search (upstream checks its
        context there) and stops the search when it answers True.

        Raises:
            AllocationTimeout: ``expired`` answered True.
            AllocationError: when allocation cannot proceed at all (upstream's error texts).
        """
        return _Run(self, node, claims, expired).run()


class _Run:
    """One ``Allocate`` call (upstream's unexported ``allocator``)."""

    def __init__(
        self,
        a: Allocator,
        node: Node | None,
        claims: Sequence[ResourceClaim],
        expired: Callable[[], bool] | None = None,
    ) -> None:
        self.a = a
        self.expired = expired
        self.node = node
        self.claims = claims
        self.pools: list[Pool] = []
        self.request_data: dict[tuple[int, int, int], _Req] = {}
        self.constraints: list[list[_MatchAttribute | _DistinctAttribute]] = []
        self.matches: dict[tuple[DeviceID, tuple[int, int, int]], bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.consumed: dict[tuple[str, str], dict[str, dict[str, Quantity]]] = {}
        #: Shared devices: capacity consumed by this run's allocations (qualified names),
        #: how many of them use each device, and what each result consumes.
        self.allocating_capacity: dict[DeviceID, dict[str, Quantity]] = {}
        self.shared_uses: dict[DeviceID, int] = {}
        self.consumed_by_result: dict[tuple[int, int], dict[str, Quantity]] = {}
        self.results: list[list[tuple[_Req, DeviceID, Device, ResourceSlice]]] = [
            [] for _ in claims
        ]

    # -- set-up -----------------------------------------------------------------------------

    def run(self) -> list[AllocationResult] | None:
        try:
            self.pools = gather_pools(self.a.slices, self.node, self.a.features)
        except ValueError as exc:  # pragma: no cover - node selectors are validated on load
            raise AllocationError(f"gather pool information: {exc}") from exc
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, request in enumerate(claim.requests):
                if request.first_available:
                    if not self.a.features.prioritized_list:
                        raise AllocationError(
                            f"claim {_klog(claim)}, request {request.name}: has subrequests, "
                            "but the DRAPrioritizedList feature is disabled"
                        )
                    least = None
                    if not self.a.features.consumable_capacity:
                        for sub in request.first_available:
                            if sub.capacity_requests:
                                raise AllocationError(
                                    f"claim {_klog(claim)}, subrequest {sub.name}: has "
                                    "capacity requests, but the DRAConsumableCapacity feature "
                                    "is disabled"
                                )
                    for si, sub in enumerate(request.first_available):
                        data = self._validate(_sub(request, sub), ci)
                        self.request_data[(ci, ri, si)] = data
                        least = data.num_devices if least is None else min(least, data.num_devices)
                    min_devices += least or 0
                else:
                    assert request.exactly is not None
                    if (
                        request.exactly.capacity_requests
                        and not self.a.features.consumable_capacity
                    ):
                        raise AllocationError(
                            f"claim {_klog(claim)}, request {request.name}: has capacity "
                            "requests, but the DRAConsumableCapacity feature is disabled"
                        )
                    data = self._validate(_exact(request, request.exactly), ci)
                    self.request_data[(ci, ri, 0)] = data
                    min_devices += data.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {_klog(claim)}: number of requested devices {min_devices} exceeds "
                    f"the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            constraints: list[_MatchAttribute | _DistinctAttribute] = []
            for i, con in enumerate(claim.constraints):
                if con.match_attribute is not None:
                    constraints.append(_MatchAttribute(con.requests, con.match_attribute))
                elif con.distinct_attribute is not None:
                    constraints.append(_DistinctAttribute(con.requests, con.distinct_attribute))
                else:
                    raise AllocationError(
                        f"claim {_klog(claim)}, constraint #{i}: empty constraint "
                        "(unsupported constraint type?)"
                    )
            self.constraints.append(constraints)
        try:
            done = self._allocate_one(0, 0, 0, 0, False)
        except _Stop:
            return None
        except _MaxSizeExceeded as exc:
            raise AllocationError("allocation max size exceeded") from exc
        if not done:
            if any(p.is_invalid for p in self.pools):
                raise AllocationError("invalid resource pools were encountered")
            return None
        return [self._result(ci, claim) for ci, claim in enumerate(self.claims)]

    def _validate(self, req: _Req, ci: int) -> _Req:
        claim = self.claims[ci]
        if not self.a.features.admin_access and req.has_admin_access:
            raise AllocationError(
                f"claim {_klog(claim)}, request {req.name}: admin access is requested, "
                "but the feature is disabled"
            )
        if not req.class_name:
            raise AllocationError(
                f"claim {_klog(claim)}, request {req.name}: missing device class name "
                "(unsupported request type?)"
            )
        device_class = self.a.classes.get(req.class_name)
        if device_class is None:
            raise AllocationError(
                f"claim {_klog(claim)}, request {req.name}: could not retrieve device class "
                f'{req.class_name}: deviceclass.resource.k8s.io "{req.class_name}" not found'
            )
        req.device_class = device_class
        if req.mode == "ExactCount":
            req.num_devices = req.count
        elif req.mode == "All":
            key = (ci, -1, -1)
            for pool in self.pools:
                if pool.is_incomplete:
                    raise AllocationError(
                        f"claim {_klog(claim)}, request {req.name}: asks for all devices, but "
                        f"resource pool {pool.pool_id} is currently being updated"
                    )
                if pool.is_invalid:
                    raise AllocationError(
                        f"claim {_klog(claim)}, request {req.name}: asks for all devices, but "
                        f"resource pool {pool.pool_id} is currently invalid"
                    )
                for rs in pool.slices:
                    for dev in rs.devices:
                        did = (rs.driver, rs.pool.name, dev.name)
                        if not self._selectable(key, req, rs, dev, did, cache=False):
                            continue
                        if self._shared(dev) and self._consumes(req, dev, did, {}) is None:
                            continue  # its capacity is used up by existing allocations
                        req.all_devices.append((did, dev, rs, pool))
            req.num_devices = len(req.all_devices)
        else:
            raise AllocationError(
                f"claim {_klog(claim)}, request {req.name}: unsupported count mode {req.mode}"
            )
        return req

    # -- the search -------------------------------------------------------------------------

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        self.a.num_allocate_one_invocations += 1
        if self.expired is not None and self.expired():
            raise AllocationTimeout("filter operation aborted: context deadline exceeded")
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False)
            except _MaxSizeExceeded:
                return False
        key = (ci, ri, si)
        data = self.request_data[key]
        if not in_sub and data.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.request_data:
                try:
                    ok = self._allocate_one(ci, ri, sub, di, True)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    data.selected_sub = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False
        if data.mode == "All" and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded
        if data.mode == "All":
            did, dev, rs, pool = data.all_devices[di]
            ok, undo = self._allocate_device(ci, key, data, did, dev, rs, pool, must=True)
            if not ok:
                return False
            try:
                done = self._allocate_one(ci, ri, si, di + 1, in_sub)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        for pool in self.pools:
            if pool.is_incomplete or pool.is_invalid:
                continue
            for rs in pool.slices:
                for dev in rs.devices:
                    did = (pool.driver, pool.name, dev.name)
                    if self._shared(dev):
                        if did in self.a.allocated_devices:
                            continue
                    elif data.admin_access:
                        if ci in self.allocating.get(did, ()):
                            continue
                    elif self._in_use(did):
                        continue
                    if not self._selectable(key, data, rs, dev, did):
                        continue
                    ok, undo = self._allocate_device(ci, key, data, did, dev, rs, pool, must=False)
                    if not ok:
                        continue
                    try:
                        done = self._allocate_one(ci, ri, si, di + 1, in_sub)
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _in_use(self, did: DeviceID) -> bool:
        return (
            did in self.a.allocated_devices
            or bool(self.allocating.get(did))
            or did in self.a.allocated_capacity
        )

    def _shared(self, dev: Device) -> bool:
        return self.a.features.consumable_capacity and bool(dev.allow_multiple_allocations)

    def _consumes(
        self,
        data: _Req,
        dev: Device,
        did: DeviceID,
        allocating: Mapping[str, Quantity],
    ) -> dict[str, Quantity] | None:
        """What one more allocation of ``dev`` for ``data`` consumes, per capacity (keyed as
        the device names it), or None when a requested capacity is missing, a request breaks
        a capacity's policy or the capacity left is too small (upstream
        ``CmpRequestOverCapacity``)."""
        driver = did[0]
        resolved = _resolve_capacity(dev, driver)
        requests: dict[str, Quantity] = {}
        for name, amount in data.capacity_requests.items():
            key = _resolve_request_name(name, driver, dev.capacity)
            if key is None:
                return None
            if key in requests:
                other = key if name != key else key.partition("/")[2]
                ident = key.partition("/")[2]
                raise AllocationError(
                    f'capacity "{ident}" requested both as "{name}" and as "{other}"'
                )
            requests[key] = amount
        consumed = {key: _consumed(requests.get(key), cap) for key, (_n, cap) in resolved.items()}
        existing = self.a.allocated_capacity.get(did, {})
        out: dict[str, Quantity] = {}
        for key, (own_name, cap) in resolved.items():
            amount = consumed[key]
            if _violates_policy(amount, cap.request_policy):
                return None
            total = amount.amount + allocating.get(key, _ZERO).amount
            total += existing.get(key, _ZERO).amount
            if total > cap.value.amount:
                return None
            out[own_name] = amount
        return out

    def _selectable(
        self,
        key: tuple[int, int, int],
        data: _Req,
        rs: ResourceSlice,
        dev: Device,
        did: DeviceID,
        *,
        cache: bool = True,
    ) -> bool:
        if not self.a.features.device_binding and dev.binding_conditions:
            return False
        mkey = (did, key)
        if cache and mkey in self.matches:
            return self.matches[mkey]
        result = self._selectable_uncached(key, data, rs, dev, did)
        if cache:
            self.matches[mkey] = result
        return result

    def _selectable_uncached(
        self, key: tuple[int, int, int], data: _Req, rs: ResourceSlice, dev: Device, did: DeviceID
    ) -> bool:
        view = DeviceView(
            driver=did[0],
            attributes=dev.attributes,
            capacity=dev.capacity,
            allow_multiple_allocations=bool(dev.allow_multiple_allocations),
        )
        if data.device_class is not None and not self._selectors_match(
            key[0],
            dev,
            view,
            did,
            data.device_class,
            [s.expression for s in data.device_class.selectors],
        ):
            return False
        if not self._selectors_match(key[0], dev, view, did, None, list(data.selectors)):
            return False
        if rs.per_device_node_selection:
            return node_matches(self.node, dev.node_name, dev.all_nodes, dev.node_selector)
        return True

    def _selectors_match(
        self,
        ci: int,
        dev: Device,
        view: DeviceView,
        did: DeviceID,
        device_class: DeviceClass | None,
        expressions: list[str],
    ) -> bool:
        owner = (
            f"class {device_class.name}"
            if device_class is not None
            else f"claim {_klog(self.claims[ci])}"
        )
        for i, expression in enumerate(expressions):
            compiled = self.a.cel_cache.get_or_compile(expression)
            if compiled.error is not None:
                raise AllocationError(
                    f"{owner}: selector #{i}: CEL compile error: {compiled.error}"
                )
            try:
                if not compiled.device_matches_memo(dev, view):
                    return False
            except CELError as exc:
                raise AllocationError(
                    f"{owner}: selector #{i} on device {'/'.join(did)}: CEL runtime error: {exc}"
                ) from exc
        return True

    def _allocate_device(
        self,
        ci: int,
        key: tuple[int, int, int],
        data: _Req,
        did: DeviceID,
        dev: Device,
        rs: ResourceSlice,
        pool: Pool,
        *,
        must: bool,
    ) -> tuple[bool, Callable[[], None]]:
        claim = self.claims[ci]
        nothing: Callable[[], None] = lambda: None  # noqa: E731
        shared = self._shared(dev)
        if shared:
            # Never in use through shares (each consumes capacity), only when a claim from
            # before it allowed multiple allocations has it whole.
            if did in self.a.allocated_devices:
                return False, nothing
        elif data.admin_access:
            if ci in self.allocating.get(did, ()):
                return False, nothing
        elif self._in_use(did):
            return False, nothing
        consumed: dict[str, Quantity] | None = None
        if self.a.features.consumable_capacity:
            allocating = self.allocating_capacity.get(did, {})
            consumed = self._consumes(data, dev, did, allocating)
            if consumed is None:
                return False, nothing
        # A shared device's counters are taken by its first allocation only.
        takes_counters = bool(dev.consumes_counters) and not (
            shared and (self.shared_uses.get(did, 0) or did in self.a.allocated_capacity)
        )
        if dev.consumes_counters and not self.a.features.partitionable_devices:
            return False, nothing
        if takes_counters and not self._take_counters(pool, dev):
            return False, nothing
        base, sub = (data.parent, data.name) if data.parent else (data.name, "")
        if self.a.features.device_taints and _taint_prevents(dev, data.tolerations):
            if takes_counters:
                self._give_counters(pool, dev)
            return False, nothing
        added: list[_MatchAttribute | _DistinctAttribute] = []
        for con in self.constraints[ci]:
            if not con.add(base, sub, dev, did):
                if must:
                    raise AllocationError(
                        f"claim {_klog(claim)}, request {data.name}: cannot add device "
                        f"{'/'.join(did)} because a claim constraint would not be satisfied"
                    )
                for done in added:
                    done.remove(base, sub, dev, did)
                if takes_counters:
                    self._give_counters(pool, dev)
                return False, nothing
            added.append(con)
        if shared:
            assert consumed is not None
            self.shared_uses[did] = self.shared_uses.get(did, 0) + 1
            _add_into(self.allocating_capacity.setdefault(did, {}), consumed, did[0])
        else:
            self.allocating.setdefault(did, set()).add(ci)
        before = len(self.results[ci])
        self.results[ci].append((data, did, dev, rs))
        if shared:
            self.consumed_by_result[(ci, before)] = consumed or {}

        def undo() -> None:
            for con in self.constraints[ci]:
                con.remove(base, sub, dev, did)
            if shared:
                self.shared_uses[did] -= 1
                _sub_from(self.allocating_capacity[did], consumed or {}, did[0])
                self.consumed_by_result.pop((ci, before), None)
            else:
                self.allocating[did].discard(ci)
            if takes_counters:
                self._give_counters(pool, dev)
            del self.results[ci][before:]

        return True, undo

    # -- counters ---------------------------------------------------------------------------

    def _available(self, pool: Pool) -> dict[str, dict[str, Quantity]]:
        key = (pool.driver, pool.name)
        avail = self.a._available_counters.get(key)
        if avail is None:
            avail = {name: dict(cs) for name, cs in pool.counter_sets.items()}
            for rs in pool.all_slices:
                for dev in rs.devices:
                    did = (rs.driver, rs.pool.name, dev.name)
                    # A shared device's counters are consumed while any share of it exists.
                    if did not in self.a.allocated_devices and did not in (
                        self.a.allocated_capacity
                    ):
                        continue
                    for cc in dev.consumes_counters:
                        counters = avail.get(cc.counter_set, {})
                        for name, c in cc.counters.items():
                            if name in counters:
                                counters[name] = counters[name] - c.value
            self.a._available_counters[key] = avail
        return avail

    def _take_counters(self, pool: Pool, dev: Device) -> bool:
        avail = self._available(pool)
        consumed = self.consumed.setdefault((pool.driver, pool.name), {})
        for cc in dev.consumes_counters:
            per_set = consumed.setdefault(cc.counter_set, {})
            for name, c in cc.counters.items():
                per_set[name] = per_set[name] + c.value if name in per_set else c.value
        for set_name, counters in avail.items():
            used = consumed.get(set_name, {})
            for name, amount in counters.items():
                taken = used.get(name)
                if taken is not None and amount.amount < taken.amount:
                    self._give_counters(pool, dev)
                    return False
        return True

    def _give_counters(self, pool: Pool, dev: Device) -> None:
        consumed = self.consumed[(pool.driver, pool.name)]
        for cc in dev.consumes_counters:
            per_set = consumed[cc.counter_set]
            for name, c in cc.counters.items():
                per_set[name] = per_set[name] - c.value

    # -- results ----------------------------------------------------------------------------

    def _result(self, ci: int, claim: ResourceClaim) -> AllocationResult:
        results = []
        binding = self.a.features.device_binding
        for i, (data, did, dev, _rs) in enumerate(self.results[ci]):
            consumed = self.consumed_by_result.get((ci, i))
            share_id = None
            if consumed is not None:
                owner = claim.metadata.uid or _klog(claim)
                share_id = str(uuid.uuid5(_SHARE_NAMESPACE, f"{owner}/{i}/{'/'.join(did)}"))
            results.append(
                DeviceRequestAllocationResult(
                    request=data.full_name,
                    driver=did[0],
                    pool=did[1],
                    device=did[2],
                    admin_access=True if data.admin_access else None,
                    tolerations=data.tolerations,
                    share_id=share_id,
                    consumed_capacity=consumed or {},
                    binding_conditions=dev.binding_conditions if binding else (),
                    binding_failure_conditions=(dev.binding_failure_conditions if binding else ()),
                )
            )
        config: list[DeviceClaimConfiguration] = []
        ranges: dict[str, tuple[int, int]] = {}
        for ri in range(len(claim.requests)):
            data = self.request_data[(ci, ri, 0)]
            if data.parent is not None:
                data = self.request_data[(ci, ri, data.selected_sub)]
            dc = data.device_class
            if dc is None:
                continue
            if dc.name in ranges:
                start, end = ranges[dc.name]
                for i in range(start, end):
                    config[i] = attrs.evolve(
                        config[i], requests=(*config[i].requests, data.full_name)
                    )
                continue
            start = len(config)
            for cfg in dc.config:
                config.append(attrs.evolve(cfg, requests=(data.full_name,)))
            ranges[dc.name] = (start, len(config))
        for cfg in claim.config:
            if not cfg.requests:
                config.append(cfg)
                continue
            for ri, request in enumerate(claim.requests):
                if request.name in cfg.requests:
                    config.append(cfg)
                    continue
                data = self.request_data[(ci, ri, 0)]
                if data.parent is None:
                    continue
                chosen = request.first_available[data.selected_sub]
                if f"{request.name}/{chosen.name}" in cfg.requests:
                    config.append(cfg)
        n = len(claim.requests)
        config = [attrs.evolve(c, requests=()) if len(c.requests) == n else c for c in config]
        return AllocationResult(
            devices=DeviceAllocationResult(results=tuple(results), config=tuple(config)),
            node_selector=self._node_selector(ci),
        )

    def _node_selector(self, ci: int) -> NodeSelector | None:
        fields: list[NodeSelectorRequirement] = []
        expressions: list[NodeSelectorRequirement] = []
        for _data, _did, dev, rs in self.results[ci]:
            if rs.per_device_node_selection:
                node_name, selector = dev.node_name, dev.node_selector
            else:
                node_name, selector = rs.node_name, rs.node_selector
            if node_name or (self.a.features.device_binding and dev.binds_to_node):
                # Local to the node, or bound to it once allocated: the node allocated for.
                return NodeSelector(
                    node_selector_terms=(
                        NodeSelectorTerm(
                            match_fields=(
                                NodeSelectorRequirement(
                                    key="metadata.name",
                                    operator="In",
                                    values=(self.node.name if self.node else node_name or "",),
                                ),
                            )
                        ),
                    )
                )
            if selector is not None and len(selector.node_selector_terms) == 1:
                term = selector.node_selector_terms[0]
                _add_new(term.match_fields, fields)
                _add_new(term.match_expressions, expressions)
            elif selector is not None and len(selector.node_selector_terms) > 1:
                raise AllocationError(
                    "create NodeSelector for claim "
                    f"{self.claims[ci].name}: unsupported ResourceSlice.NodeSelector with "
                    f"{len(selector.node_selector_terms)} terms"
                )
        if fields or expressions:
            return NodeSelector(
                node_selector_terms=(
                    NodeSelectorTerm(
                        match_expressions=tuple(expressions), match_fields=tuple(fields)
                    ),
                )
            )
        return None


_ZERO: Final = Quantity(amount=0)
#: Namespace of the reproducible share IDs (UUIDv5).
_SHARE_NAMESPACE: Final = uuid.uuid5(uuid.NAMESPACE_URL, "https://schedframe.dev/dra/share-id")


def _qualify(name: str, driver: str) -> str:
    """A capacity name with the driver as domain when it has none."""
    return name if "/" in name else f"{driver}/{name}"


def _resolve_capacity(dev: Device, driver: str) -> dict[str, tuple[str, DeviceCapacity]]:
    """The device's capacities by qualified name, each with the name the device gives it;
    an entry qualified with the driver's domain wins over an unqualified one."""
    out: dict[str, tuple[str, DeviceCapacity]] = {}
    prefix = f"{driver}/"
    for name, cap in dev.capacity.items():
        if name.startswith(prefix):
            out[name] = (name, cap)
    for name, cap in dev.capacity.items():
        key = _qualify(name, driver)
        if not name.startswith(prefix) and key not in out:
            out[key] = (name, cap)
    return out


def _resolve_request_name(
    name: str, driver: str, capacity: Mapping[str, DeviceCapacity]
) -> str | None:
    """The qualified capacity a request's name refers to, or None (upstream
    ``resolveCapacityName``)."""
    if name in capacity:
        return _qualify(name, driver)
    domain, sep, ident = name.partition("/")
    if sep:
        return name if domain == driver and ident in capacity else None
    qualified = f"{driver}/{name}"
    return qualified if qualified in capacity else None


def _consumed(requested: Quantity | None, cap: DeviceCapacity) -> Quantity:
    """What one allocation consumes of ``cap`` (upstream ``calculateConsumedCapacity``)."""
    policy = cap.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return cap.value
    if policy is None:
        return requested
    if policy.valid_range_min is not None:
        low = policy.valid_range_min
        if requested.amount < low.amount:
            return low
        step = policy.valid_range_step
        if step is None:
            return requested
        # Upstream rounds with Value() (integers, rounded up) on this path.
        added = requested.value() - low.value()
        n = -(-added // step.value())
        return Quantity(amount=low.value() + step.value() * n, format=step.format)
    for value in policy.valid_values:
        if requested.amount <= value.amount:
            return value
    return requested


def _violates_policy(amount: Quantity, policy: CapacityRequestPolicy | None) -> bool:
    """Upstream ``violatesPolicy``."""
    if policy is None:
        return False
    if policy.default is not None and amount.amount == policy.default.amount:
        return False
    if policy.valid_range_min is not None:
        if policy.valid_range_max is not None and amount.amount > policy.valid_range_max.amount:
            return True
        step = policy.valid_range_step
        if step is not None:
            return (amount.value() - policy.valid_range_min.value()) % step.value() != 0
        return False
    if policy.valid_values:
        return all(amount.amount != v.amount for v in policy.valid_values)
    return False


def _add_into(total: dict[str, Quantity], amounts: Mapping[str, Quantity], driver: str) -> None:
    for name, q in amounts.items():
        key = _qualify(name, driver)
        total[key] = total[key] + q if key in total else q


def _sub_from(total: dict[str, Quantity], amounts: Mapping[str, Quantity], driver: str) -> None:
    for name, q in amounts.items():
        key = _qualify(name, driver)
        total[key] = Quantity(amount=total[key].amount - q.amount, format=total[key].format)


def _add_new(
    source: Iterable[NodeSelectorRequirement], into: list[NodeSelectorRequirement]
) -> None:
    for req in source:
        if not any(
            r.key == req.key and r.operator == req.operator and set(r.values) == set(req.values)
            for r in into
        ):
            into.append(req)


def _taint_prevents(dev: Device, tolerations: Sequence[DeviceToleration]) -> bool:
    for taint in dev.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(
            t.tolerates(taint) for t in tolerations
        ):
            return True
    return False


def _counters_fit(available: Mapping[str, Mapping[str, Quantity]], dev: Device) -> bool:
    for cc in dev.consumes_counters:
        counters = available.get(cc.counter_set, {})
        for name, c in cc.counters.items():
            left = counters.get(name)
            if left is not None and left.amount < c.value.amount:
                return False
    return True


def describe_requests(
    allocator: Allocator, node: Node | None, claims: Sequence[ResourceClaim]
) -> list[str]:
    """For ``explain``: per request of each claim, how many devices on ``node`` match its
    class and selectors, and how many of those are not allocated to other claims.

    A request whose selectors fail to evaluate is reported with the error. This is a summary
    of the node's devices, not a replay of the search: constraints, counters and taints can
    still make a request fail when free matching devices exist.
    """
    lines: list[str] = []
    pools = gather_pools(allocator.slices, node, allocator.features)
    for claim in claims:
        for request in claim.requests:
            subs = (
                [_sub(request, s) for s in request.first_available]
                if request.first_available
                else ([_exact(request, request.exactly)] if request.exactly is not None else [])
            )
            for req in subs:
                run = _Run(allocator, node, [claim])
                run.pools = pools
                prefix = f"claim {_klog(claim)}, request {req.full_name}"
                req.device_class = allocator.classes.get(req.class_name)
                if req.device_class is None:
                    lines.append(f"{prefix}: device class {req.class_name} does not exist")
                    continue
                matching = free = fitting = 0
                partitionable = False
                try:
                    for pool in pools:
                        for rs in pool.slices:
                            for dev in rs.devices:
                                did = (rs.driver, rs.pool.name, dev.name)
                                if not run._selectable((0, 0, 0), req, rs, dev, did, cache=False):
                                    continue
                                matching += 1
                                if did in allocator.allocated_devices:
                                    continue
                                free += 1
                                if dev.consumes_counters:
                                    partitionable = True
                                    fitting += _counters_fit(run._available(pool), dev)
                except AllocationError as exc:
                    lines.append(f"{prefix}: {exc}")
                    continue
                wanted = "all" if req.mode == "All" else str(req.count)
                text = (
                    f"{prefix}: wants {wanted}; {matching} matching device(s) on the node, "
                    f"{free} not allocated"
                )
                if partitionable:
                    text += f", {fitting} within the remaining shared counters"
                lines.append(text)
    return lines
