"""Devices with binding conditions in the structured allocator (DRADeviceBindingConditions
with DRAResourceClaimDeviceStatus: upstream's ``DeviceBindingAndStatus``).

Cases ported as data from upstream's shared allocator test table
(``structured/internal/allocatortesting/allocator_testing.go``: ``device-binding-conditions``,
``binding-conditions-*``, ``node-restriction`` and ``partitionable-devices-with-binding-
conditions*``), same names and fixtures. A result records its device's binding and binding
failure conditions; a device that ``bindsToNode`` restricts the allocation to the node.
Results are compared as sets of devices per claim, as in ``test_allocator.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import pytest

from schedframe.objects import (
    AllocationResult,
    CounterSet,
    Device,
    DeviceClass,
    DeviceCounterConsumption,
    DeviceTaint,
    DeviceToleration,
    Node,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
)
from schedframe_plugins._dra.allocator import Allocator, Features
from schedframe_plugins._dra.cel import CELCache
from schedframe_plugins.dynamicresources import DynamicResources

from .test_allocator import (
    CA,
    D1,
    D2,
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
    exact,
    klass,
    label_selector,
    local,
    node,
    rslice,
)

D3 = "device-3"
CS1, CS2 = "counter-set-1", "counter-set-2"
BINDING = Features(
    admin_access=False,
    prioritized_list=False,
    partitionable_devices=False,
    device_taints=False,
    device_binding=True,
)
NO_BINDING = attrs.evolve(BINDING, device_binding=False)
PART_BINDING = attrs.evolve(BINDING, partitionable_devices=True)
PART_BINDING_TAINTS = attrs.evolve(PART_BINDING, device_taints=True)
TAINT_KEY1 = DeviceTaint(key="key1", value="value1", effect="NoSchedule")
TOL_KEY1 = DeviceToleration(key="key1", operator="Exists", effect="NoSchedule")


def bound(d: Device, conditions: Sequence[str], failures: Sequence[str]) -> Device:
    """Upstream ``withBindingConditions``."""
    return attrs.evolve(
        d, binding_conditions=tuple(conditions), binding_failure_conditions=tuple(failures)
    )


def memory(name: str, counter_set: str, amount: str) -> Device:
    """A partition consuming ``amount`` of memory from ``counter_set``."""
    return dev(
        name,
        consumes_counters=(
            DeviceCounterConsumption(counter_set=counter_set, counters=counters(memory=amount)),
        ),
    )


def counter_slice(name: str, pool: ResourcePool, counter_set: str) -> ResourceSlice:
    return rslice(
        name, N1, pool, DA, counters=[CounterSet(name=counter_set, counters=counters(memory="8Gi"))]
    )


def pool(count: int) -> ResourcePool:
    """Upstream ``resourcePool(pool1, count)``."""
    return ResourcePool(name=P1, generation=1, resource_slice_count=count)


def res(
    request: str,
    device: str,
    conditions: Sequence[str] = (),
    failures: Sequence[str] = (),
    tolerations: Sequence[DeviceToleration] = (),
) -> tuple[Any, ...]:
    """Upstream ``deviceRequestAllocationResultWithBindingConditions`` (driver-a, pool-1)."""
    return (request, DA, P1, device, tuple(conditions), tuple(failures), tuple(tolerations))


def result(*devices: tuple[Any, ...]) -> tuple[Any, ...]:
    return (_selector_key(local(N1)), sorted(devices))


def _actual(r: AllocationResult) -> tuple[Any, ...]:
    devices = [
        (
            d.request,
            d.driver,
            d.pool,
            d.device,
            d.binding_conditions,
            d.binding_failure_conditions,
            d.tolerations,
        )
        for d in r.devices.results
    ]
    return (_selector_key(r.node_selector), sorted(devices))


@attrs.frozen(kw_only=True)
class Case:
    claims: Sequence[ResourceClaim]
    classes: Sequence[DeviceClass] = (klass(CA, DA),)
    slices: Sequence[ResourceSlice]
    node: Node = node(N1, R1)
    features: Features = BINDING
    results: Sequence[tuple[Any, ...]] | None = None


PREPARE = (["IsPrepare"], ["BindingFailed"])

CASES: dict[str, Case] = {
    "device-binding-conditions": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 1))],
        slices=[rslice("slice-1", N1, P1, DA, bound(dev(D1), *PREPARE))],
        results=[result(res(REQ0, D1, *PREPARE))],
    ),
    "binding-conditions-multiple-devices": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 2), exact(REQ1, CA, 1))],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                bound(dev(D1), *PREPARE),
                bound(dev(D2), ["IsPrepare2"], ["BindingFailed2"]),
                bound(dev(D3), ["IsPrepare3"], ["BindingFailed3"]),
            )
        ],
        results=[
            result(
                res(REQ0, D1, *PREPARE),
                res(REQ0, D2, ["IsPrepare2"], ["BindingFailed2"]),
                res(REQ1, D3, ["IsPrepare3"], ["BindingFailed3"]),
            )
        ],
    ),
    "binding-conditions-with-and-without": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 1), exact(REQ1, CA, 1))],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1), bound(dev(D2), *PREPARE))],
        results=[result(res(REQ0, D1), res(REQ1, D2, *PREPARE))],
    ),
    "binding-conditions-without-feature-gate": Case(
        features=NO_BINDING,
        claims=[claim("claim-0", exact(REQ0, CA, 1))],
        slices=[rslice("slice-1", N1, P1, DA, bound(dev(D1), *PREPARE))],
        results=None,
    ),
    # The slice selects nodes by label; the device binds to the node it is allocated for.
    "node-restriction": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 1))],
        slices=[
            rslice(
                "slice-1", label_selector("planet", "earth"), P1, DA, dev(D1, binds_to_node=True)
            )
        ],
        results=[result(res(REQ0, D1))],
    ),
    "partitionable-devices-with-binding-conditions": Case(
        features=PART_BINDING,
        claims=[claim("claim-0", exact(REQ0, CA, 1))],
        slices=[
            rslice("slice-1", N1, pool(2), DA, bound(memory(D1, CS1, "4Gi"), *PREPARE)),
            counter_slice("slice-2", pool(2), CS1),
        ],
        results=[result(res(REQ0, D1, *PREPARE))],
    ),
    "partitionable-devices-with-binding-conditions-multiple": Case(
        features=PART_BINDING,
        claims=[claim("claim-0", exact(REQ0, CA, 2))],
        slices=[
            rslice(
                "slice-1",
                N1,
                pool(2),
                DA,
                bound(memory(D1, CS1, "4Gi"), *PREPARE),
                bound(memory(D2, CS1, "4Gi"), ["IsPrepare2"], ["BindingFailed2"]),
            ),
            counter_slice("slice-2", pool(2), CS1),
        ],
        results=[
            result(res(REQ0, D1, *PREPARE), res(REQ0, D2, ["IsPrepare2"], ["BindingFailed2"]))
        ],
    ),
    "partitionable-devices-with-binding-conditions-some-devices-no-conditions": Case(
        features=PART_BINDING,
        claims=[claim("claim-0", exact(REQ0, CA, 3))],
        slices=[
            rslice(
                "slice-1",
                N1,
                pool(2),
                DA,
                bound(memory(D1, CS1, "2Gi"), *PREPARE),
                memory(D2, CS1, "2Gi"),
                bound(memory(D3, CS1, "4Gi"), ["IsReady"], ["BindingTimeout"]),
            ),
            counter_slice("slice-2", pool(2), CS1),
        ],
        results=[
            result(
                res(REQ0, D1, *PREPARE),
                res(REQ0, D2),
                res(REQ0, D3, ["IsReady"], ["BindingTimeout"]),
            )
        ],
    ),
    "partitionable-devices-with-binding-conditions-multi-slices": Case(
        features=PART_BINDING,
        claims=[claim("claim-0", exact(REQ0, CA, 2))],
        slices=[
            rslice("slice-4", N1, pool(4), DA, bound(memory(D1, CS1, "4Gi"), *PREPARE)),
            counter_slice("slice-3", pool(4), CS1),
            rslice("slice-2", N1, pool(4), DA, memory(D2, CS2, "4Gi")),
            counter_slice("slice-1", pool(4), CS2),
        ],
        results=[result(res(REQ0, D2), res(REQ0, D1, *PREPARE))],
    ),
    "partitionable-devices-with-binding-conditions-and-taints": Case(
        features=PART_BINDING_TAINTS,
        claims=[claim("claim-0", exact(REQ0, CA, 2))],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                attrs.evolve(bound(memory(D1, CS1, "4Gi"), *PREPARE), taints=(TAINT_KEY1,)),
                memory(D2, CS1, "4Gi"),
            ),
            counter_slice("slice-2", ResourcePool(name=P1, generation=1), CS1),
        ],
        results=None,
    ),
    "partitionable-devices-with-binding-conditions-and-taints-tolerated": Case(
        features=PART_BINDING_TAINTS,
        claims=[claim("claim-0", exact(REQ0, CA, 2, tolerations=(TOL_KEY1,)))],
        slices=[
            rslice(
                "slice-1",
                N1,
                pool(2),
                DA,
                attrs.evolve(bound(memory(D1, CS1, "4Gi"), *PREPARE), taints=(TAINT_KEY1,)),
                memory(D2, CS1, "4Gi"),
            ),
            counter_slice("slice-2", pool(2), CS1),
        ],
        results=[
            result(
                res(REQ0, D1, *PREPARE, tolerations=[TOL_KEY1]),
                res(REQ0, D2, tolerations=[TOL_KEY1]),
            )
        ],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_binding_conditions_table(name: str) -> None:
    case = CASES[name]
    allocator = Allocator(
        features=case.features,
        allocated_devices=set(),
        classes={c.name: c for c in case.classes},
        slices=list(case.slices),
        cel_cache=CELCache(),
    )
    got = allocator.allocate(case.node, list(case.claims))
    if case.results is None:
        assert got is None
        return
    assert got is not None
    assert [_actual(r) for r in got] == list(case.results)


def test_binds_to_node_is_ignored_with_the_gate_off() -> None:
    """Without DeviceBindingAndStatus the allocation keeps the slice's node selector."""
    allocator = Allocator(
        features=NO_BINDING,
        allocated_devices=set(),
        classes={CA: klass(CA, DA)},
        slices=[
            rslice(
                "slice-1", label_selector("planet", "earth"), P1, DA, dev(D1, binds_to_node=True)
            )
        ],
        cel_cache=CELCache(),
    )
    got = allocator.allocate(node(N1, R1), [claim("claim-0", exact(REQ0, CA, 1))])
    assert got is not None
    assert got[0].node_selector == label_selector("planet", "earth")


@pytest.mark.parametrize(("version", "on"), [("1.35", False), ("1.36", True)])
def test_plugin_passes_the_gates_to_the_allocator(version: str, on: bool) -> None:
    from schedframe.features import FeatureGates
    from schedframe.runtime import ClusterView, Framework
    from schedframe_plugins.dynamicresources import DynamicResourcesArgs

    handle = Framework(cluster=ClusterView(), features=FeatureGates(emulated_version=version))
    pl = DynamicResources(DynamicResourcesArgs(), handle)
    assert pl._features.device_binding is on
