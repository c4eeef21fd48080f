"""Consumable capacity (DRAConsumableCapacity) in the structured allocator.

Cases ported as data from upstream's shared allocator test table
(``structured/internal/allocatortesting/allocator_testing.go``, the ``consumable-capacity-*``,
``allow-multiple-allocations-*`` and shared-device ``*distinct*`` cases): same names, same
fixtures. A shared device's result carries a share ID (upstream matches any value; here it is
checked to be set, and reproducible) and the capacity it consumed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe.objects import (
    AllocationResult,
    CapacityRequestPolicy,
    CELSelector,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClass,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    ExactDeviceRequest,
    Node,
    ObjectMeta,
    Quantity,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
    parse_quantity,
)
from schedframe_plugins._dra.allocator import (
    AllocationError,
    Allocator,
    DeviceID,
    Features,
)
from schedframe_plugins._dra.cel import CELCache

from .test_allocator import (
    CA,
    D1,
    DA,
    N1,
    P1,
    R1,
    REQ0,
    REQ1,
    _selector_key,
    claim,
    counters,
    dev,
    first_available,
    klass,
    local,
    node,
    rslice,
    sub,
)

CAP0, CAP1 = "capacity0", "capacity1"
D2, D3, D4 = "device-2", "device-3", "device-4"
REQ2 = "req-2"
ZERO, ONE, TWO = parse_quantity(0), parse_quantity(1), parse_quantity(2)
THREE, FOUR = parse_quantity(3), parse_quantity(4)
CC = Features(
    admin_access=False,
    prioritized_list=False,
    partitionable_devices=False,
    device_taints=False,
    consumable_capacity=True,
)
CC_PRIO_PART = attrs.evolve(CC, prioritized_list=True, partitionable_devices=True)
CC_PRIO = attrs.evolve(CC, prioritized_list=True)


def shared(d: Device) -> Device:
    return attrs.evolve(d, allow_multiple_allocations=True)


def ranged(d: Device, capacity: Mapping[str, Quantity]) -> Device:
    """upstream ``withCapacityRequestPolicyRange``: default 2, range min 2, step 2, max 4."""
    policy = CapacityRequestPolicy(
        default=TWO, valid_range_min=TWO, valid_range_step=TWO, valid_range_max=FOUR
    )
    caps = dict(d.capacity)
    for name, q in capacity.items():
        caps[name] = DeviceCapacity(value=q, request_policy=policy)
    return attrs.evolve(d, capacity=caps)


def valid_values(
    d: Device, default: Quantity, capacity: Mapping[str, Quantity], extra: Sequence[Quantity] = ()
) -> Device:
    """upstream ``withCapacityRequestPolicyValidValues``: the default is the smallest valid
    value, then ``extra``."""
    policy = CapacityRequestPolicy(default=default, valid_values=(default, *extra))
    caps = dict(d.capacity)
    for name, q in capacity.items():
        caps[name] = DeviceCapacity(value=q, request_policy=policy)
    return attrs.evolve(d, capacity=caps)


def shared_class(name: str, driver: str, allow: bool) -> DeviceClass:
    """upstream ``classWithAllowMultipleAllocations``."""
    flag = "true" if allow else "false"
    return DeviceClass(
        metadata=ObjectMeta(name=name),
        selectors=(
            CELSelector(expression=f'device.driver == "{driver}"'),
            CELSelector(expression=f"device.allowMultipleAllocations == {flag}"),
        ),
    )


def req(
    name: str, count: int = 1, cap: Quantity | None = None, *, mode: str = "ExactCount"
) -> DeviceRequest:
    return DeviceRequest(
        name=name,
        exactly=ExactDeviceRequest(
            device_class_name=CA,
            count=count,
            allocation_mode=mode,
            capacity_requests={CAP0: cap} if cap is not None else {},
        ),
    )


def all_req(name: str, cap: Quantity | None = None) -> DeviceRequest:
    return req(name, 0, cap, mode="All")


def share(request: str, device: str, **consumed: Quantity) -> tuple[Any, ...]:
    return (request, DA, P1, device, True, tuple(sorted(consumed.items())))


def whole(request: str, device: str) -> tuple[Any, ...]:
    return (request, DA, P1, device, False, ())


def result(*devices: tuple[Any, ...]) -> tuple[Any, ...]:
    return (_selector_key(local(N1)), sorted(devices))


def _actual(r: AllocationResult) -> tuple[Any, ...]:
    return (
        _selector_key(r.node_selector),
        sorted(
            (
                d.request,
                d.driver,
                d.pool,
                d.device,
                d.share_id is not None,
                tuple(sorted(d.consumed_capacity.items())),
            )
            for d in r.devices.results
        ),
    )


def cap_dev(name: str, **capacity: Quantity) -> Device:
    return dev(name, {k: str(v) for k, v in capacity.items()})


def attr_dev(name: str, **attributes: DeviceAttribute) -> Device:
    return dev(name, None, {f"{DA}/{k}": v for k, v in attributes.items()})


def pool2() -> ResourcePool:
    return ResourcePool(name=P1, generation=1, resource_slice_count=2)


STRING = f"{DA}/stringAttribute"


@attrs.frozen(kw_only=True)
class Case:
    claims: Sequence[ResourceClaim]
    classes: Sequence[DeviceClass]
    slices: Sequence[ResourceSlice]
    node: Node | None = None
    features: Features = CC
    allocated: Sequence[DeviceID] = ()
    allocated_capacity: Mapping[DeviceID, Mapping[str, Quantity]] = attrs.field(factory=dict)
    results: Sequence[tuple[Any, ...]] | None = None
    error: str | None = None


def _counter_device(name: str, **consumes: dict[str, Quantity]) -> Device:
    return attrs.evolve(
        dev(name),
        consumes_counters=tuple(
            DeviceCounterConsumption(
                counter_set=cs, counters=counters(**{k: str(v) for k, v in c.items()})
            )
            for cs, c in consumes.items()
        ),
    )


def _counter_slice(name: str, **sets: dict[str, Quantity]) -> ResourceSlice:
    return rslice(
        name,
        N1,
        pool2(),
        DA,
        counters=[
            CounterSet(name=cs, counters=counters(**{k: str(v) for k, v in c.items()}))
            for cs, c in sets.items()
        ],
    )


def _pools_device(name: str, set1: Quantity) -> Device:
    d = _counter_device(name, counterSet1={CAP0: set1}, counterSet2={CAP1: FOUR})
    return ranged(shared(d), {CAP1: FOUR})


CASES: dict[str, Case] = {
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient": Case(
        allocated_capacity={(DA, P1, D1): {CAP0: ONE}},
        claims=[claim("claim-0", all_req(REQ0, ONE))],
        classes=[klass(CA, DA)],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                shared(cap_dev(D1, capacity0=TWO)),
                shared(cap_dev(D2, capacity0=ONE)),
            )
        ],
        node=node(N1, R1),
        results=[result(share(REQ0, D1, capacity0=ONE), share(REQ0, D2, capacity0=ONE))],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient": Case(
        claims=[claim("claim-0", req(REQ0, 1, ONE), all_req(REQ1, ONE))],
        classes=[klass(CA, DA)],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                shared(cap_dev(D1, capacity0=ONE)),
                shared(cap_dev(D2, capacity0=ONE)),
            )
        ],
        node=node(N1, R1),
        results=None,
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient": Case(
        allocated_capacity={(DA, P1, D1): {CAP0: ONE}},
        claims=[claim("claim-0", all_req(REQ0, ONE))],
        classes=[klass(CA, DA)],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                shared(cap_dev(D1, capacity0=ONE)),
                shared(cap_dev(D2, capacity0=ONE)),
            )
        ],
        node=node(N1, R1),
        results=[result(share(REQ0, D2, capacity0=ONE))],
    ),
    "consumable-capacity-dedicated-device-with-consumable-capacity-request": Case(
        claims=[claim("claim-0", req(REQ0, 1, ONE))],
        classes=[shared_class(CA, DA, False)],
        slices=[rslice("slice-1", N1, P1, DA, cap_dev(D1, capacity0=ONE))],
        node=node(N1, R1),
        results=[result(whole(REQ0, D1))],
    ),
    "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request": Case(
        claims=[claim("claim-0", req(REQ0, 1, ONE)), claim("claim-1", req(REQ0, 1, ONE))],
        classes=[shared_class(CA, DA, False)],
        slices=[rslice("slice-1", N1, P1, DA, ranged(dev(D1), {CAP0: TWO}))],
        node=node(N1, R1),
        results=None,
    ),
    "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector": Case(
        claims=[claim("claim-0", req(REQ0, 1, ONE))],
        classes=[shared_class(CA, DA, False)],
        slices=[rslice("slice-1", N1, P1, DA, shared(cap_dev(D1, capacity0=ONE)))],
        node=node(N1, R1),
        results=None,
    ),
    "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated": Case(
        allocated=[(DA, P1, D1)],
        claims=[claim("claim-0", req(REQ0, 1, ONE))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, ranged(shared(dev(D1)), {CAP0: TWO}))],
        node=node(N1, R1),
        results=None,
    ),
    "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable": Case(
        allocated_capacity={(DA, P1, D1): {CAP0: ONE}},
        claims=[claim("claim-0", req(REQ0, 1, ONE))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, ranged(dev(D1), {CAP0: TWO}))],
        node=node(N1, R1),
        results=None,
    ),
    "consumable-capacity-with-partitionable-device-multiple-capacity-pools": Case(
        features=CC_PRIO_PART,
        claims=[
            claim(
                "claim-0",
                req(REQ0, 1, ONE),
                req(REQ2, 1, TWO),
                first_available(
                    REQ1,
                    sub(
                        "subreq-0",
                        CA,
                        selectors=(
                            CELSelector(
                                expression=f'device.capacity["{DA}"]["{CAP0}"]'
                                '.compareTo(quantity("4")) >= 0'
                            ),
                        ),
                        capacity_requests={CAP0: ONE},
                    ),
                    sub(
                        "subreq-1",
                        CA,
                        selectors=(
                            CELSelector(
                                expression=f'device.capacity["{DA}"]["{CAP0}"]'
                                '.compareTo(quantity("2")) >= 0'
                            ),
                        ),
                        capacity_requests={CAP0: ONE},
                    ),
                ),
            )
        ],
        classes=[klass(CA, DA)],
        slices=[
            rslice(
                "slice-1",
                N1,
                pool2(),
                DA,
                # fromCounters: each device's capacity mirrors what it consumes.
                attrs.evolve(
                    _pools_device(D1, TWO),
                    capacity={
                        CAP0: DeviceCapacity(value=TWO),
                        **_pools_device(D1, TWO).capacity,
                    },
                ),
                attrs.evolve(
                    _pools_device(D2, FOUR),
                    capacity={
                        CAP0: DeviceCapacity(value=FOUR),
                        **_pools_device(D2, FOUR).capacity,
                    },
                ),
                attrs.evolve(
                    _pools_device(D3, TWO),
                    capacity={
                        CAP0: DeviceCapacity(value=TWO),
                        **_pools_device(D3, TWO).capacity,
                    },
                ),
            ),
            _counter_slice(
                "slice-2", counterSet1={CAP0: FOUR}, counterSet2={CAP1: parse_quantity(8)}
            ),
        ],
        node=node(N1, R1),
        results=[
            result(
                share(REQ0, D1, capacity0=ONE, capacity1=TWO),
                share(REQ2, D3, capacity0=TWO, capacity1=TWO),
                share(f"{REQ1}/subreq-1", D1, capacity0=ONE, capacity1=TWO),
            )
        ],
    ),
    "consumable-capacity-disabled-feature-with-prioritized-list": Case(
        features=attrs.evolve(CC_PRIO, consumable_capacity=False, device_binding=True),
        claims=[
            claim(
                "claim-0",
                first_available(
                    REQ0,
                    sub("subReq-0", CA, capacity_requests={CAP0: ONE}),
                    sub("subReq-1", CA, capacity_requests={CAP0: ONE}),
                ),
            )
        ],
        classes=[klass(CA, DA)],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1))],
        node=node(N1, R1),
        error=(
            "claim claim-0, subrequest subReq-0: has capacity requests, but the "
            "DRAConsumableCapacity feature is disabled"
        ),
    ),
    "consumable-capacity-multi-allocatable-device-with-missing-capacity-request": Case(
        claims=[claim("claim-0", req(REQ0, 1, ONE))],
        classes=[klass(CA, DA)],
        slices=[rslice("slice-1", N1, P1, DA, shared(cap_dev(D1, capacity1=ONE)))],
        node=node(N1, R1),
        results=None,
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request": Case(  # noqa: E501
        claims=[claim("claim-0", all_req(REQ0, ONE))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, shared(cap_dev(D1, capacity1=ONE)))],
        node=node(N1, R1),
        results=None,
    ),
    "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request": Case(  # noqa: E501
        claims=[claim("claim-0", req(REQ0)), claim("claim-1", req(REQ0))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, shared(dev(D1)))],
        node=node(N1, R1),
        # Both share the device; nothing is consumed, the device has no capacity.
        results=[result(share(REQ0, D1)), result(share(REQ0, D1))],
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request": Case(
        claims=[claim("claim-0", req(REQ0)), claim("claim-1", req(REQ0))],
        classes=[shared_class(CA, DA, True)],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                shared(cap_dev(D1, capacity0=ONE)),
                shared(cap_dev(D2, capacity0=ONE)),
            )
        ],
        node=node(N1, R1),
        # Each takes a device's whole capacity.
        results=[result(share(REQ0, D1, capacity0=ONE)), result(share(REQ0, D2, capacity0=ONE))],
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block": Case(  # noqa: E501
        claims=[claim("claim-0", req(REQ0)), claim("claim-1", req(REQ0))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, shared(cap_dev(D1, capacity0=TWO)))],
        node=node(N1, R1),
        results=None,
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request": Case(
        claims=[claim("claim-0", req(REQ0, 1, ONE)), claim("claim-1", req(REQ0, 1, ONE))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, shared(cap_dev(D1, capacity0=TWO)))],
        node=node(N1, R1),
        results=[result(share(REQ0, D1, capacity0=ONE)), result(share(REQ0, D1, capacity0=ONE))],
    ),
    "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request": Case(
        claims=[claim("claim-0", req(REQ0)), claim("claim-1", req(REQ0))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, ranged(shared(dev(D1)), {CAP0: FOUR}))],
        node=node(N1, R1),
        # Both take the policy's default, 2.
        results=[result(share(REQ0, D1, capacity0=TWO)), result(share(REQ0, D1, capacity0=TWO))],
    ),
    "consumable-capacity-multi-allocatable-device-with-zero-request-policy": Case(
        claims=[claim("claim-0", req(REQ0)), claim("claim-1", req(REQ0))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, valid_values(shared(dev(D1)), ZERO, {CAP0: ONE}))],
        node=node(N1, R1),
        results=[
            result(share(REQ0, D1, capacity0=ZERO)),
            result(share(REQ0, D1, capacity0=ZERO)),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-violates-zero-request-policy": Case(
        claims=[claim("claim-0", req(REQ0, 1, ONE))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, valid_values(shared(dev(D1)), ZERO, {CAP0: ONE}))],
        node=node(N1, R1),
        results=None,
    ),
    "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request": Case(
        claims=[claim("claim-0", req(REQ0, 1, ONE)), claim("claim-1", req(REQ0, 1, ONE))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, ranged(shared(dev(D1)), {CAP0: FOUR}))],
        node=node(N1, R1),
        # Both round up to the range's minimum, 2, on the same device.
        results=[result(share(REQ0, D1, capacity0=TWO)), result(share(REQ0, D1, capacity0=TWO))],
    ),
    "consumable-capacity-multi-allocatable-device-with-range-policy-step": Case(
        claims=[claim("claim-0", req(REQ0, 1, THREE))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, ranged(shared(dev(D1)), {CAP0: FOUR}))],
        node=node(N1, R1),
        results=[result(share(REQ0, D1, capacity0=FOUR))],  # 3 rounds up to 2 + 2
    ),
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy": Case(
        claims=[claim("claim-0", req(REQ0, 1, TWO))],
        classes=[shared_class(CA, DA, True)],
        slices=[
            rslice("slice-1", N1, P1, DA, valid_values(shared(dev(D1)), ONE, {CAP0: FOUR}, [TWO]))
        ],
        node=node(N1, R1),
        results=[result(share(REQ0, D1, capacity0=TWO))],
    ),
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up": Case(
        claims=[claim("claim-0", req(REQ0, 1, TWO))],
        classes=[shared_class(CA, DA, True)],
        slices=[
            rslice(
                "slice-1", N1, P1, DA, valid_values(shared(dev(D1)), ONE, {CAP0: THREE}, [THREE])
            )
        ],
        node=node(N1, R1),
        results=[result(share(REQ0, D1, capacity0=THREE))],
    ),
    "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request": Case(
        claims=[claim("claim-0", req(REQ0, 1, ONE)), claim("claim-1", req(REQ0, 1, TWO))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, ranged(shared(dev(D1)), {CAP0: TWO}))],
        node=node(N1, R1),
        results=None,
    ),
    "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy": Case(
        claims=[claim("claim-0", req(REQ0, 1, parse_quantity(6)))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, ranged(shared(dev(D1)), {CAP0: parse_quantity(10)}))],
        node=node(N1, R1),
        results=None,  # the policy's max is 4, although 6 < 10
    ),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining": Case(
        allocated_capacity={(DA, P1, D1): {CAP0: TWO}},
        claims=[claim("claim-0", req(REQ0, 1, TWO))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, ranged(shared(dev(D1)), {CAP0: FOUR}))],
        node=node(N1, R1),
        results=[result(share(REQ0, D1, capacity0=TWO))],
    ),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device": Case(
        allocated_capacity={(DA, P1, D1): {CAP0: TWO}},
        claims=[claim("claim-0", req(REQ0, 1, TWO))],
        classes=[shared_class(CA, DA, True)],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                ranged(shared(dev(D1)), {CAP0: TWO}),
                ranged(shared(dev(D2)), {CAP0: TWO}),
            )
        ],
        node=node(N1, R1),
        results=[result(share(REQ0, D2, capacity0=TWO))],
    ),
    "consumable-capacity-with-multi-allocatable-device-backtrack": Case(
        claims=[
            claim(
                "claim-0",
                req(REQ0, 1, TWO),
                req(REQ1, 1, TWO),
                constraints=[DeviceConstraint(match_attribute=STRING)],
            ),
            claim("claim-1", req(REQ0, 1, TWO)),
        ],
        classes=[klass(CA, DA)],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                ranged(
                    shared(
                        attr_dev(
                            D2,
                            stringAttribute=DeviceAttribute(string_value="stringAttributeValue1"),
                        )
                    ),
                    {CAP0: TWO},
                ),
                ranged(
                    shared(
                        attr_dev(
                            D1,
                            stringAttribute=DeviceAttribute(string_value="stringAttributeValue2"),
                        )
                    ),
                    {CAP0: FOUR},
                ),
            )
        ],
        node=node(N1, R1),
        results=[
            result(share(REQ0, D1, capacity0=TWO), share(REQ1, D1, capacity0=TWO)),
            result(share(REQ0, D2, capacity0=TWO)),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-subrequest": Case(
        features=CC_PRIO,
        claims=[
            claim(
                "claim-0",
                first_available(
                    REQ0,
                    sub("subreq-0", CA, capacity_requests={CAP0: FOUR}),
                    sub("subreq-1", CA, capacity_requests={CAP0: TWO}),
                    sub("subreq-1", CA),
                ),
            )
        ],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, ranged(shared(dev(D1)), {CAP0: TWO}))],
        node=node(N1, R1),
        results=[result(share(f"{REQ0}/subreq-1", D1, capacity0=TWO))],
    ),
    "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity": Case(
        allocated_capacity={(DA, P1, D1): {CAP0: TWO}},
        claims=[claim("claim-0", req(REQ0, 1, TWO))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, ranged(shared(dev(D1)), {CAP0: TWO}))],
        node=node(N1, R1),
        results=None,
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity": Case(
        claims=[claim("claim-0", all_req(REQ0, TWO))],
        classes=[shared_class(CA, DA, True)],
        slices=[rslice("slice-1", N1, P1, DA, shared(cap_dev(D1, capacity0=TWO)), shared(dev(D2)))],
        node=node(N1, R1),
        results=[result(share(REQ0, D1, capacity0=TWO))],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity": Case(  # noqa: E501
        claims=[claim("claim-0", all_req(REQ0, TWO))],
        classes=[shared_class(CA, DA, True)],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                shared(cap_dev(D1, capacity0=TWO)),
                shared(cap_dev(D2, capacity0=ONE)),
            )
        ],
        node=node(N1, R1),
        results=[result(share(REQ0, D1, capacity0=TWO))],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient": Case(
        claims=[claim("claim-0", req(REQ0, 1, ONE), all_req(REQ1, ONE))],
        classes=[klass(CA, DA)],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                shared(cap_dev(D1, capacity0=TWO)),
                shared(cap_dev(D2, capacity0=ONE)),
            )
        ],
        node=node(N1, R1),
        results=[
            result(
                share(REQ0, D1, capacity0=ONE),
                share(REQ1, D1, capacity0=ONE),
                share(REQ1, D2, capacity0=ONE),
            )
        ],
    ),
    "with-distinct-constraints-attribute-not-set": Case(
        claims=[
            claim(
                "claim-0",
                req(REQ0),
                constraints=[
                    DeviceConstraint(requests=(REQ0,), distinct_attribute=f"{DA}/boolAttribute")
                ],
            )
        ],
        classes=[klass(CA, DA)],
        slices=[rslice("slice-1", N1, P1, DA, shared(dev(D1)))],
        node=node(N1, R1),
        results=None,
    ),
    "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint": Case(
        claims=[
            claim(
                "claim-0",
                req(REQ0, 1, ONE),
                req(REQ1, 1, ONE),
                constraints=[DeviceConstraint(distinct_attribute=STRING)],
            )
        ],
        classes=[shared_class(CA, DA, True)],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                ranged(
                    shared(
                        attr_dev(
                            D1,
                            stringAttribute=DeviceAttribute(string_value="stringAttributeValue"),
                        )
                    ),
                    {CAP0: TWO},
                ),
            )
        ],
        node=node(N1, R1),
        results=None,
    ),
    "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint": Case(
        claims=[
            claim(
                "claim-0",
                req(REQ0, 1, TWO),
                req(REQ1, 1, TWO),
                constraints=[DeviceConstraint(distinct_attribute=STRING)],
            )
        ],
        classes=[shared_class(CA, DA, True)],
        slices=[
            rslice(
                "slice-1",
                N1,
                pool2(),
                DA,
                ranged(
                    shared(
                        attr_dev(
                            D1,
                            stringAttribute=DeviceAttribute(string_value="stringAttributeValue1"),
                        )
                    ),
                    {CAP0: FOUR},
                ),
            ),
            rslice(
                "slice-1",
                N1,
                pool2(),
                DA,
                ranged(
                    shared(
                        attr_dev(
                            D2,
                            stringAttribute=DeviceAttribute(string_value="stringAttributeValue2"),
                        )
                    ),
                    {CAP0: FOUR},
                ),
            ),
        ],
        node=node(N1, R1),
        results=[result(share(REQ0, D1, capacity0=TWO), share(REQ1, D2, capacity0=TWO))],
    ),
    "with-distinct-constraints": Case(
        claims=[
            claim(
                "claim-0",
                req(REQ0),
                req(REQ1),
                req(REQ2),
                req("req-3"),
                constraints=[
                    DeviceConstraint(
                        requests=(REQ0, REQ1), distinct_attribute=f"{DA}/boolAttribute"
                    ),
                    DeviceConstraint(
                        requests=(REQ0, REQ1, REQ2), distinct_attribute=f"{DA}/driverVersion"
                    ),
                    DeviceConstraint(
                        requests=(REQ0, REQ1, REQ2, "req-3"), distinct_attribute=f"{DA}/numa"
                    ),
                ],
            )
        ],
        classes=[klass(CA, DA)],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                *(
                    shared(
                        attr_dev(
                            name,
                            driverVersion=DeviceAttribute(version_value=version),
                            numa=DeviceAttribute(int_value=numa),
                            boolAttribute=DeviceAttribute(bool_value=flag),
                        )
                    )
                    for name, version, numa, flag in [
                        (D1, "1.0.0", 0, True),
                        (D2, "1.0.1", 1, False),
                        (D3, "1.0.2", 2, True),
                        (D4, "1.0.0", 3, True),
                    ]
                ),
            )
        ],
        node=node(N1, R1),
        results=[result(share(REQ0, D1), share(REQ1, D2), share(REQ2, D3), share("req-3", D4))],
    ),
}


def _allocator(case: Case) -> Allocator:
    return Allocator(
        features=case.features,
        allocated_devices=set(case.allocated),
        classes={c.name: c for c in case.classes},
        slices=list(case.slices),
        cel_cache=CELCache(),
        allocated_capacity=case.allocated_capacity,
    )


@pytest.mark.parametrize("name", list(CASES))
def test_consumable_capacity_table(name: str) -> None:
    case = CASES[name]
    if case.error is not None:
        with pytest.raises(AllocationError) as info:
            _allocator(case).allocate(case.node, list(case.claims))
        assert case.error in str(info.value)
        return
    got = _allocator(case).allocate(case.node, list(case.claims))
    if case.results is None:
        assert got is None
        return
    assert got is not None
    assert [_actual(r) for r in got] == list(case.results)


def _one_shared(*claims: ResourceClaim, device: Device, features: Features = CC) -> Allocator:
    return _allocator(
        Case(
            claims=claims,
            classes=[klass(CA, DA)],
            slices=[rslice("slice-1", N1, P1, DA, device)],
            node=node(N1, R1),
            features=features,
        )
    )


def test_capacity_requests_with_the_gate_off_are_an_error_as_upstream() -> None:
    c = claim("claim-0", req(REQ0, 1, ONE))
    off = attrs.evolve(CC, consumable_capacity=False)
    with pytest.raises(AllocationError) as info:
        _one_shared(c, device=cap_dev(D1, capacity0=ONE), features=off).allocate(node(N1, R1), [c])
    assert str(info.value) == (
        "claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity "
        "feature is disabled"
    )


def test_gate_off_a_shared_device_is_allocated_whole() -> None:
    c = claim("claim-0", req(REQ0), req(REQ1))
    off = attrs.evolve(CC, consumable_capacity=False)
    device = shared(cap_dev(D1, capacity0=FOUR))
    assert _one_shared(c, device=device, features=off).allocate(node(N1, R1), [c]) is None
    # Gate on, without capacity requests each share consumes the whole capacity: two do
    # not fit; with requests of 2 each, both do.
    assert _one_shared(c, device=device).allocate(node(N1, R1), [c]) is None
    one_share = claim("claim-0", req(REQ0))
    got = _one_shared(one_share, device=device).allocate(node(N1, R1), [one_share])
    assert got is not None
    assert [_actual(r) for r in got] == [result(share(REQ0, D1, capacity0=FOUR))]
    c2 = claim("claim-0", req(REQ0, 1, TWO), req(REQ1, 1, TWO))
    got = _one_shared(c2, device=device).allocate(node(N1, R1), [c2])
    assert got is not None
    assert [_actual(r) for r in got] == [
        result(share(REQ0, D1, capacity0=TWO), share(REQ1, D1, capacity0=TWO))
    ]


def test_valid_values_round_a_request_up_and_refuse_one_above_all() -> None:
    policy = CapacityRequestPolicy(default=ONE, valid_values=(ONE, FOUR))
    device = shared(
        attrs.evolve(
            dev(D1),
            capacity={CAP0: DeviceCapacity(value=parse_quantity(8), request_policy=policy)},
        )
    )
    c = claim("claim-0", req(REQ0, 1, TWO), req(REQ1))
    got = _one_shared(c, device=device).allocate(node(N1, R1), [c])
    assert got is not None
    # 2 rounds up to 4; no request takes the default, 1.
    assert [_actual(r) for r in got] == [
        result(share(REQ0, D1, capacity0=FOUR), share(REQ1, D1, capacity0=ONE))
    ]
    too_big = claim("claim-0", req(REQ0, 1, parse_quantity(5)))
    assert _one_shared(too_big, device=device).allocate(node(N1, R1), [too_big]) is None


def test_a_request_names_a_capacity_with_or_without_the_driver_domain() -> None:
    qualified = claim(
        "claim-0",
        DeviceRequest(
            name=REQ0,
            exactly=ExactDeviceRequest(
                device_class_name=CA, capacity_requests={f"{DA}/{CAP0}": ONE}
            ),
        ),
    )
    device = shared(cap_dev(D1, capacity0=TWO))
    got = _one_shared(qualified, device=device).allocate(node(N1, R1), [qualified])
    assert got is not None
    assert [_actual(r) for r in got] == [result(share(REQ0, D1, capacity0=ONE))]
    other = claim(
        "claim-0",
        DeviceRequest(
            name=REQ0,
            exactly=ExactDeviceRequest(
                device_class_name=CA, capacity_requests={f"other.example.com/{CAP0}": ONE}
            ),
        ),
    )
    assert _one_shared(other, device=device).allocate(node(N1, R1), [other]) is None
    both = claim(
        "claim-0",
        DeviceRequest(
            name=REQ0,
            exactly=ExactDeviceRequest(
                device_class_name=CA, capacity_requests={CAP0: ONE, f"{DA}/{CAP0}": ONE}
            ),
        ),
    )
    with pytest.raises(AllocationError) as info:
        _one_shared(both, device=device).allocate(node(N1, R1), [both])
    assert str(info.value) == (f'capacity "{CAP0}" requested both as "{DA}/{CAP0}" and as "{CAP0}"')


def test_share_ids_are_unique_and_reproducible() -> None:
    c = attrs.evolve(
        claim("claim-0", req(REQ0, 2, ONE), req(REQ1, 1, ONE)),
        metadata=ObjectMeta(name="claim-0", uid="u-1"),
    )
    device = shared(cap_dev(D1, capacity0=FOUR))

    def ids() -> list[str | None]:
        got = _one_shared(c, device=device).allocate(node(N1, R1), [c])
        assert got is not None
        return [r.share_id for r in got[0].devices.results]

    first = ids()
    assert len(first) == 3 and len(set(first)) == 3 and None not in first
    assert ids() == first


@settings(max_examples=60, deadline=None)
@given(
    capacity=st.integers(1, 12),
    step=st.integers(1, 4),
    requests=st.lists(st.integers(1, 8), min_size=1, max_size=4),
    existing=st.integers(0, 6),
)
def test_shares_of_a_device_never_exceed_its_capacity(
    capacity: int, step: int, requests: list[int], existing: int
) -> None:
    # One shared device with a range policy (min 1, the step) and capacity already used by
    # other claims: the claims fit iff their rounded requests fit what is left, and what the
    # results say they consume is exactly that rounding.
    policy = CapacityRequestPolicy(
        default=ONE, valid_range_min=ONE, valid_range_step=parse_quantity(step)
    )
    device = shared(
        attrs.evolve(
            dev(D1),
            capacity={CAP0: DeviceCapacity(value=parse_quantity(capacity), request_policy=policy)},
        )
    )
    claims = [claim(f"claim-{i}", req(REQ0, 1, parse_quantity(r))) for i, r in enumerate(requests)]
    allocator = _allocator(
        Case(
            claims=claims,
            classes=[klass(CA, DA)],
            slices=[rslice("slice-1", N1, P1, DA, device)],
            node=node(N1, R1),
            allocated_capacity={(DA, P1, D1): {CAP0: parse_quantity(existing)}},
        )
    )
    rounded = [1 + -(-(r - 1) // step) * step for r in requests]
    got = allocator.allocate(node(N1, R1), claims)
    if existing + sum(rounded) > capacity:
        assert got is None
        return
    assert got is not None
    consumed = [r.devices.results[0].consumed_capacity[CAP0].value() for r in got]
    assert consumed == rounded
    share_ids = [r.devices.results[0].share_id for r in got]
    assert len(set(share_ids)) == len(share_ids)


def test_a_shared_device_in_use_keeps_its_counters_consumed() -> None:
    # device-1 and device-2 each take all 4 of the counter set: while device-1 is shared by
    # an existing claim, device-2 cannot be allocated.
    d1 = shared(_counter_device(D1, counterSet1={CAP0: FOUR}))
    d2 = attrs.evolve(
        shared(_counter_device(D2, counterSet1={CAP0: FOUR})),
        attributes={f"{DA}/second": DeviceAttribute(bool_value=True)},
    )
    wants_d2 = claim(
        "claim-0",
        DeviceRequest(
            name=REQ0,
            exactly=ExactDeviceRequest(
                device_class_name=CA,
                selectors=(CELSelector(expression=f'"second" in device.attributes["{DA}"]'),),
            ),
        ),
    )
    case = Case(
        claims=[wants_d2],
        classes=[klass(CA, DA)],
        slices=[
            rslice("slice-1", N1, pool2(), DA, d1, d2),
            _counter_slice("slice-2", counterSet1={CAP0: FOUR}),
        ],
        node=node(N1, R1),
        features=CC_PRIO_PART,
    )
    got = _allocator(case).allocate(node(N1, R1), [wants_d2])
    assert got is not None
    assert [_actual(r) for r in got] == [result(share(REQ0, D2))]
    in_use = attrs.evolve(case, allocated_capacity={(DA, P1, D1): {}})
    assert _allocator(in_use).allocate(node(N1, R1), [wants_d2]) is None
