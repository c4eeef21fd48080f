"""The structured allocator against upstream's shared allocator test table.

Cases ported as data from upstream
``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/
allocator_testing.go`` (same names, same fixtures: nodes, classes, slices, claims, expected
results or error substrings). Results compare as upstream's matcher does: per claim, the
device results in any order and the node selector.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import pytest

from schedframe.objects import (
    AllocationResult,
    CELSelector,
    Counter,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaimConfiguration,
    DeviceClass,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ExactDeviceRequest,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
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

R1, R2, N1, N2 = "region-1", "region-2", "node-1", "node-2"
CA, CB, DA, DB = "class-a", "class-b", "driver-a", "driver-b"
P1, P2, P3, P4 = "pool-1", "pool-2", "pool-3", "pool-4"
REQ0, REQ1 = "req-0", "req-1"
D1, D2 = "device-1", "device-2"
NONE = Features(
    admin_access=False, prioritized_list=False, partitionable_devices=False, device_taints=False
)


def node(name: str, region: str) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels={"region": region, "planet": "earth"}))


def klass(name: str, driver: str) -> DeviceClass:
    return DeviceClass(
        metadata=ObjectMeta(name=name),
        selectors=(CELSelector(expression=f'device.driver == "{driver}"'),),
    )


def label_selector(key: str, *values: str) -> NodeSelector:
    req = NodeSelectorRequirement(key=key, operator="In", values=values)
    return NodeSelector(node_selector_terms=(NodeSelectorTerm(match_expressions=(req,)),))


def local(name: str) -> NodeSelector:
    req = NodeSelectorRequirement(key="metadata.name", operator="In", values=(name,))
    return NodeSelector(node_selector_terms=(NodeSelectorTerm(match_fields=(req,)),))


def dev(
    name: str,
    capacity: dict[str, str] | None = None,
    attributes: dict[str, DeviceAttribute] | None = None,
    **extra: Any,
) -> Device:
    return Device(
        name=name,
        attributes=attributes or {},
        capacity={k: DeviceCapacity(value=parse_quantity(v)) for k, v in (capacity or {}).items()},
        **extra,
    )


def rslice(
    name: str,
    where: str | NodeSelector,
    pool: str | ResourcePool,
    driver: str,
    *devices: Device,
    counters: Sequence[CounterSet] = (),
) -> ResourceSlice:
    p = pool if isinstance(pool, ResourcePool) else ResourcePool(name=pool, generation=1)
    kwargs: dict[str, Any] = {}
    if isinstance(where, NodeSelector):
        kwargs["node_selector"] = where
    elif where == "all":
        kwargs["all_nodes"] = True
    elif where == "per-device":
        kwargs["per_device_node_selection"] = True
    else:
        kwargs["node_name"] = where
    return ResourceSlice(
        metadata=ObjectMeta(name=name),
        driver=driver,
        pool=p,
        devices=devices,
        shared_counters=tuple(counters),
        **kwargs,
    )


def one(
    name: str, where: str | NodeSelector, pool: str | ResourcePool, driver: str
) -> ResourceSlice:
    return rslice(name, where, pool, driver, dev(D1))


def exact(
    name: str, cls: str, count: int = 1, *selectors: str, mode: str = "ExactCount", **kw: Any
) -> DeviceRequest:
    return DeviceRequest(
        name=name,
        exactly=ExactDeviceRequest(
            device_class_name=cls,
            count=count,
            allocation_mode=mode,
            selectors=tuple(CELSelector(expression=s) for s in selectors),
            **kw,
        ),
    )


def first_available(name: str, *subs: DeviceSubRequest) -> DeviceRequest:
    return DeviceRequest(name=name, first_available=subs)


def sub(
    name: str, cls: str, count: int = 1, mode: str = "ExactCount", **kw: Any
) -> DeviceSubRequest:
    return DeviceSubRequest(
        name=name, device_class_name=cls, count=count, allocation_mode=mode, **kw
    )


def claim(
    name: str, *requests: DeviceRequest, constraints: Sequence[DeviceConstraint] = ()
) -> ResourceClaim:
    return ResourceClaim(
        metadata=ObjectMeta(name=name), requests=requests, constraints=tuple(constraints)
    )


def simple_claim(name: str, request: str, cls: str) -> ResourceClaim:
    return claim(name, exact(request, cls))


def res(
    request: str, driver: str, pool: str, device: str, admin: bool = False, **kw: Any
) -> tuple[Any, ...]:
    return (request, driver, pool, device, admin, tuple(sorted(kw.items())))


def result(selector: NodeSelector | None, *devices: tuple[Any, ...]) -> tuple[Any, ...]:
    return (_selector_key(selector), sorted(devices))


def _selector_key(sel: NodeSelector | None) -> object:
    if sel is None:
        return None
    return sorted(
        (
            sorted((r.key, r.operator, tuple(sorted(r.values))) for r in t.match_expressions),
            sorted((r.key, r.operator, tuple(sorted(r.values))) for r in t.match_fields),
        )
        for t in sel.node_selector_terms
    )


def _actual(r: AllocationResult) -> tuple[Any, ...]:
    devices = []
    for d in r.devices.results:
        kw = {}
        if d.tolerations:
            kw["tolerations"] = d.tolerations
        devices.append(res(d.request, d.driver, d.pool, d.device, bool(d.admin_access), **kw))
    return result(r.node_selector, *devices)


@attrs.frozen(kw_only=True)
class Case:
    claims: Sequence[ResourceClaim] = ()
    classes: Sequence[DeviceClass] = ()
    slices: Sequence[ResourceSlice] = ()
    node: Node | None = None
    features: Features = NONE
    allocated: Sequence[DeviceID] = ()
    results: Sequence[tuple[Any, ...]] | None = None
    error: str | None = None


def mem(q: str) -> str:
    return f'device.capacity["{DA}"].memory.compareTo(quantity("{q}")) >= 0'


SMALL_LARGE = [exact(REQ0, CA, 1, mem("1Gi")), exact(REQ1, CA, 1, mem("2Gi"))]
NOSCHED = DeviceTaint(key="taint-key", value="taint-value", effect="NoSchedule")
NOEXEC = DeviceTaint(key="taint-key", value="taint-value-2", effect="NoExecute")
TOL_NOSCHED = DeviceToleration(key="taint-key", operator="Exists", effect="NoSchedule")
TOL_NOEXEC = DeviceToleration(
    key="taint-key", operator="Equal", value="taint-value-2", effect="NoExecute"
)
ADMIN = Features(
    admin_access=True, prioritized_list=False, partitionable_devices=False, device_taints=False
)
PRIO = Features(
    admin_access=False, prioritized_list=True, partitionable_devices=False, device_taints=False
)
PART = Features(
    admin_access=False, prioritized_list=False, partitionable_devices=True, device_taints=False
)
TAINTS = Features(
    admin_access=False, prioritized_list=False, partitionable_devices=False, device_taints=True
)


def _attrs(**values: Any) -> dict[str, DeviceAttribute]:
    out = {}
    for name, value in values.items():
        key = f"{DA}/{name}"
        if isinstance(value, bool):
            out[key] = DeviceAttribute(bool_value=value)
        elif isinstance(value, int):
            out[key] = DeviceAttribute(int_value=value)
        elif name == "driverVersion":
            out[key] = DeviceAttribute(version_value=value)
        else:
            out[key] = DeviceAttribute(string_value=value)
    return out


def counters(**values: str) -> dict[str, Counter]:
    return {k: Counter(value=parse_quantity(v)) for k, v in values.items()}


CASES: dict[str, Case] = {
    "empty": Case(results=None),
    "simple": Case(
        claims=[simple_claim("claim-0", REQ0, CA)],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
        results=[result(local(N1), res(REQ0, DA, P1, D1))],
    ),
    "other-node": Case(
        claims=[simple_claim("claim-0", REQ0, CA)],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DB), one("slice-2", N2, P2, DA)],
        node=node(N2, R2),
        results=[result(local(N2), res(REQ0, DA, P2, D1))],
    ),
    "small-and-large": Case(
        claims=[claim("claim-0", *SMALL_LARGE)],
        classes=[klass(CA, DA)],
        slices=[
            rslice("slice-1", N1, P1, DA, dev(D1, {"memory": "1Gi"}), dev(D2, {"memory": "2Gi"}))
        ],
        node=node(N1, R1),
        results=[result(local(N1), res(REQ0, DA, P1, D1), res(REQ1, DA, P1, D2))],
    ),
    "small-and-large-backtrack-requests": Case(
        claims=[claim("claim-0", *SMALL_LARGE)],
        classes=[klass(CA, DA)],
        slices=[
            rslice("slice-1", N1, P1, DA, dev(D2, {"memory": "2Gi"}), dev(D1, {"memory": "1Gi"}))
        ],
        node=node(N1, R1),
        results=[result(local(N1), res(REQ0, DA, P1, D1), res(REQ1, DA, P1, D2))],
    ),
    "small-and-large-backtrack-claims": Case(
        claims=[claim("claim-0", SMALL_LARGE[0]), claim("claim-1", SMALL_LARGE[1])],
        classes=[klass(CA, DA)],
        slices=[
            rslice("slice-1", N1, P1, DA, dev(D2, {"memory": "2Gi"}), dev(D1, {"memory": "1Gi"}))
        ],
        node=node(N1, R1),
        results=[
            result(local(N1), res(REQ0, DA, P1, D1)),
            result(local(N1), res(REQ1, DA, P1, D2)),
        ],
    ),
    "devices-split-across-different-slices": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 2))],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA), one("slice-2", N1, P2, DA)],
        node=node(N1, R1),
        results=[result(local(N1), res(REQ0, DA, P1, D1), res(REQ0, DA, P2, D1))],
    ),
    "obsolete-slice": Case(
        claims=[simple_claim("claim-0", REQ0, CA)],
        classes=[klass(CA, DA)],
        slices=[
            rslice(
                "slice-1-obsolete",
                N1,
                ResourcePool(name=P1, generation=1, resource_slice_count=2),
                DA,
                dev(D1),
            ),
            rslice(
                "slice-1-obsolete",
                N1,
                ResourcePool(name=P1, generation=2, resource_slice_count=2),
                DA,
                dev(D2),
            ),
        ],
        node=node(N1, R1),
        results=None,
    ),
    "duplicate-slice": Case(
        claims=[simple_claim("claim-0", REQ0, CA)],
        classes=[klass(CA, DA)],
        slices=[
            one("slice-1", N1, ResourcePool(name=P1, generation=1, resource_slice_count=2), DA),
            one("slice-1-2", N1, ResourcePool(name=P1, generation=1, resource_slice_count=2), DA),
        ],
        node=node(N1, R1),
        error="invalid resource pools were encountered",
    ),
    "no-slices": Case(
        claims=[simple_claim("claim-0", REQ0, CA)], classes=[klass(CA, DA)], node=node(N1, R1)
    ),
    "not-enough-suitable-devices": Case(
        claims=[simple_claim("claim-0", REQ0, CA), simple_claim("claim-0", REQ1, CA)],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
    ),
    "no-classes": Case(
        claims=[simple_claim("claim-0", REQ0, CA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
        error="could not retrieve device class class-a",
    ),
    "unknown-class": Case(
        claims=[simple_claim("claim-0", REQ0, "unknown-class")],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
        error="could not retrieve device class unknown-class",
    ),
    "empty-class": Case(
        claims=[simple_claim("claim-0", REQ0, "")],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
        error="claim claim-0, request req-0: missing device class name (unsupported request type?)",
    ),
    "no-claims-to-allocate": Case(
        classes=[klass(CA, DA)], slices=[one("slice-1", N1, P1, DA)], node=node(N1, R1), results=[]
    ),
    "all-devices-single": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 0, mode="All"))],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
        results=[result(local(N1), res(REQ0, DA, P1, D1))],
    ),
    "all-devices-many": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 0, mode="All"))],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA), one("slice-1", N1, P2, DA)],
        node=node(N1, R1),
        results=[result(local(N1), res(REQ0, DA, P1, D1), res(REQ0, DA, P2, D1))],
    ),
    "all-devices-of-the-incomplete-pool": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 1, mode="All"))],
        classes=[klass(CA, DA)],
        slices=[
            one("slice-1", N1, ResourcePool(name=P1, generation=1, resource_slice_count=2), DA)
        ],
        node=node(N1, R1),
        error="claim claim-0, request req-0: asks for all devices, but resource pool "
        "driver-a/pool-1 is currently being updated",
    ),
    "all-devices-plus-another": Case(
        claims=[
            claim("claim-0", exact(REQ0, CA, 0, mode="All")),
            claim("claim-1", exact(REQ0, CB, 1)),
        ],
        classes=[klass(CA, DA), klass(CB, DB)],
        slices=[one("slice-1", N1, P1, DA), one("slice-1", N1, P1, DB)],
        node=node(N1, R1),
        results=[
            result(local(N1), res(REQ0, DA, P1, D1)),
            result(local(N1), res(REQ0, DB, P1, D1)),
        ],
    ),
    "all-devices-plus-another-reversed": Case(
        claims=[
            claim("claim-1", exact(REQ0, CB, 1)),
            claim("claim-0", exact(REQ0, CA, 0, mode="All")),
        ],
        classes=[klass(CA, DA), klass(CB, DB)],
        slices=[one("slice-1", N1, P1, DA), one("slice-1", N1, P1, DB)],
        node=node(N1, R1),
        results=[
            result(local(N1), res(REQ0, DB, P1, D1)),
            result(local(N1), res(REQ0, DA, P1, D1)),
        ],
    ),
    "all-devices-many-plus-another": Case(
        claims=[
            claim("claim-0", exact(REQ0, CA, 0, mode="All")),
            claim("claim-1", exact(REQ0, CB, 1)),
        ],
        classes=[klass(CA, DA), klass(CB, DB)],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1), dev(D2)), one("slice-1", N1, P1, DB)],
        node=node(N1, R1),
        results=[
            result(local(N1), res(REQ0, DA, P1, D1), res(REQ0, DA, P1, D2)),
            result(local(N1), res(REQ0, DB, P1, D1)),
        ],
    ),
    "all-devices-no-solution": Case(
        claims=[
            claim("claim-1", exact(REQ0, CA, 1)),
            claim("claim-0", exact(REQ0, CA, 0, mode="All")),
        ],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
    ),
    "all-devices-no-solution-reversed": Case(
        claims=[
            claim("claim-0", exact(REQ0, CA, 0, mode="All")),
            claim("claim-1", exact(REQ0, CA, 1)),
        ],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
    ),
    "all-devices-slice-without-devices": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 0, mode="All"))],
        classes=[klass(CA, DA)],
        slices=[rslice("slice-1", N1, P1, DA)],
        node=node(N1, R1),
    ),
    "all-devices-no-slices": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 0, mode="All"))],
        classes=[klass(CA, DA)],
        node=node(N1, R1),
    ),
    "all-devices-some-allocated": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 0, mode="All"))],
        allocated=[(DA, P1, D1)],
        classes=[klass(CA, DA)],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1), dev(D2))],
        node=node(N1, R1),
    ),
    "all-devices-some-allocated-admin-access": Case(
        features=ADMIN,
        claims=[claim("claim-0", exact(REQ0, CA, 1, mode="All", admin_access=True))],
        allocated=[(DA, P1, D1)],
        classes=[klass(CA, DA)],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1), dev(D2))],
        node=node(N1, R1),
        results=[result(local(N1), res(REQ0, DA, P1, D1, True), res(REQ0, DA, P1, D2, True))],
    ),
    "all-devices-some-allocating-admin-access": Case(
        features=ADMIN,
        claims=[
            claim(
                "claim-0",
                exact(REQ0, CA, 1, admin_access=True),
                exact(REQ1, CA, 1, mode="All", admin_access=True),
            )
        ],
        classes=[klass(CA, DA)],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1), dev(D2))],
        node=node(N1, R1),
    ),
    "count-devices-some-allocated-admin-access": Case(
        features=ADMIN,
        claims=[claim("claim-0", exact(REQ0, CA, 2, admin_access=True))],
        allocated=[(DA, P1, D1)],
        classes=[klass(CA, DA)],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1), dev(D2))],
        node=node(N1, R1),
        results=[result(local(N1), res(REQ0, DA, P1, D1, True), res(REQ0, DA, P1, D2, True))],
    ),
    "separate-claims-share-device-admin-access": Case(
        features=ADMIN,
        claims=[
            claim("claim-0", exact(REQ0, CA, 1, admin_access=True)),
            claim("claim-1", exact(REQ0, CA, 1, admin_access=True)),
        ],
        classes=[klass(CA, DA)],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1), dev(D2))],
        node=node(N1, R1),
        results=[
            result(local(N1), res(REQ0, DA, P1, D1, True)),
            result(local(N1), res(REQ0, DA, P1, D1, True)),
        ],
    ),
    "admin-access-claims-device-allocating-for-non-admin-access": Case(
        features=ADMIN,
        claims=[
            simple_claim("claim-0", REQ0, CA),
            claim("claim-1", exact(REQ0, CA, 1, admin_access=True)),
        ],
        classes=[klass(CA, DA)],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1), dev(D2))],
        node=node(N1, R1),
        results=[
            result(local(N1), res(REQ0, DA, P1, D1)),
            result(local(N1), res(REQ0, DA, P1, D1, True)),
        ],
    ),
    "all-devices-slice-without-devices-prioritized-list": Case(
        features=PRIO,
        claims=[
            claim(
                "claim-0",
                first_available(REQ0, sub("subReq-0", CA, 0, mode="All"), sub("subReq-1", CB, 1)),
            )
        ],
        classes=[klass(CA, DA), klass(CB, DB)],
        slices=[rslice("slice-1", N1, P1, DA), one("slice-2", N1, P2, DB)],
        node=node(N1, R1),
        results=[result(local(N1), res("req-0/subReq-1", DB, P2, D1))],
    ),
    "all-devices-no-slices-prioritized-list": Case(
        features=PRIO,
        claims=[
            claim(
                "claim-0",
                first_available(REQ0, sub("subReq-0", CA, 0, mode="All"), sub("subReq-1", CB, 1)),
            )
        ],
        classes=[klass(CA, DA), klass(CB, DB)],
        slices=[one("slice-2", N1, P2, DB)],
        node=node(N1, R1),
        results=[result(local(N1), res("req-0/subReq-1", DB, P2, D1))],
    ),
    "all-devices-some-allocated-prioritized-list": Case(
        features=PRIO,
        claims=[
            claim(
                "claim-0",
                first_available(REQ0, sub("subReq-0", CA, 0, mode="All"), sub("subReq-1", CB, 1)),
            )
        ],
        allocated=[(DA, P1, D1)],
        classes=[klass(CA, DA), klass(CB, DB)],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1), dev(D2)), one("slice-2", N1, P2, DB)],
        node=node(N1, R1),
        results=[result(local(N1), res("req-0/subReq-1", DB, P2, D1))],
    ),
    "network-attached-device": Case(
        claims=[simple_claim("claim-0", REQ0, CA)],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", label_selector("region", R1), P1, DA)],
        node=node(N1, R1),
        results=[result(label_selector("region", R1), res(REQ0, DA, P1, D1))],
    ),
    "unsuccessful-allocation-network-attached-device": Case(
        claims=[simple_claim("claim-0", REQ0, CA)],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", label_selector("region", R1), P1, DA)],
        node=node(N2, R2),
    ),
    "many-network-attached-devices": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 4))],
        classes=[klass(CA, DA)],
        slices=[
            one("slice-1", label_selector("region", R1), P1, DA),
            one("slice-1", "all", P2, DA),
            one("slice-1", label_selector("planet", "earth"), P3, DA),
            one("slice-1", local(N1), P4, DA),
        ],
        node=node(N1, R1),
        results=[
            result(
                NodeSelector(
                    node_selector_terms=(
                        NodeSelectorTerm(
                            match_expressions=(
                                NodeSelectorRequirement(key="region", operator="In", values=(R1,)),
                                NodeSelectorRequirement(
                                    key="planet", operator="In", values=("earth",)
                                ),
                            ),
                            match_fields=(
                                NodeSelectorRequirement(
                                    key="metadata.name", operator="In", values=(N1,)
                                ),
                            ),
                        ),
                    )
                ),
                res(REQ0, DA, P1, D1),
                res(REQ0, DA, P2, D1),
                res(REQ0, DA, P3, D1),
                res(REQ0, DA, P4, D1),
            )
        ],
    ),
    "local-and-network-attached-devices": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 2))],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", label_selector("region", R1), P1, DA), one("slice-1", N1, P2, DA)],
        node=node(N1, R1),
        results=[result(local(N1), res(REQ0, DA, P1, D1), res(REQ0, DA, P2, D1))],
    ),
    "several-different-drivers": Case(
        claims=[simple_claim("claim-0", REQ0, CA), simple_claim("claim-0", REQ0, CB)],
        classes=[klass(CA, DA), klass(CB, DB)],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1), dev(D2)), one("slice-1", N1, P1, DB)],
        node=node(N1, R1),
        results=[
            result(local(N1), res(REQ0, DA, P1, D1)),
            result(local(N1), res(REQ0, DB, P1, D1)),
        ],
    ),
    "already-allocated-devices": Case(
        claims=[simple_claim("claim-0", REQ0, CA)],
        allocated=[(DA, P1, D1), (DA, P1, D2)],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
    ),
    "admin-access-disabled": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 1, admin_access=True))],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
        error="claim claim-0, request req-0: admin access is requested, but the feature is disabled",
    ),
    "prioritized-list-disabled": Case(
        claims=[claim("claim-0", first_available(REQ0, sub("subReq-0", CA, 1)))],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
        error="claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList "
        "feature is disabled",
    ),
    "prioritized-list-first-unavailable": Case(
        features=PRIO,
        claims=[
            claim("claim-0", first_available(REQ0, sub("subReq-0", CB, 1), sub("subReq-1", CA, 1)))
        ],
        classes=[klass(CA, DA), klass(CB, DB)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
        results=[result(local(N1), res("req-0/subReq-1", DA, P1, D1))],
    ),
    "prioritized-list-too-many-devices": Case(
        features=PRIO,
        claims=[
            claim("claim-0", first_available(REQ0, sub("subReq-0", CA, 2), sub("subReq-1", CA, 1)))
        ],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
        results=[result(local(N1), res("req-0/subReq-1", DA, P1, D1))],
    ),
    "too-many-devices-single-request": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 33))],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
        error="claim claim-0: number of requested devices 33 exceeds the claim limit of 32",
    ),
    "constraint-match-string": Case(
        claims=[
            claim(
                "claim-0",
                exact(REQ0, CA, 1),
                exact(REQ1, CA, 1),
                constraints=[DeviceConstraint(match_attribute=f"{DA}/stringAttribute")],
            )
        ],
        classes=[klass(CA, DA)],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                dev("device-0", attributes=_attrs(stringAttribute="stringAttributeValue")),
                dev(D1, attributes=_attrs(stringAttribute="stringAttributeValue2")),
                dev(D2, attributes=_attrs(stringAttribute="stringAttributeValue")),
            )
        ],
        node=node(N1, R1),
        results=[result(local(N1), res(REQ0, DA, P1, "device-0"), res(REQ1, DA, P1, D2))],
    ),
    "with-constraint-not-matching-int-attribute": Case(
        claims=[
            claim(
                "claim-0",
                exact(REQ0, CA, 1),
                exact(REQ1, CB, 1),
                constraints=[DeviceConstraint(match_attribute=f"{DA}/numa")],
            )
        ],
        classes=[klass(CA, DA), klass(CB, DB)],
        slices=[
            rslice("slice-1", N1, P1, DA, dev(D1, attributes=_attrs(numa=1))),
            rslice(
                "slice-1",
                N1,
                P1,
                DB,
                dev(D1, attributes={f"{DA}/numa": DeviceAttribute(int_value=2)}),
            ),
        ],
        node=node(N1, R1),
    ),
    "with-constraint-non-existent-attribute": Case(
        claims=[
            claim(
                "claim-0",
                exact(REQ0, CA, 1),
                constraints=[DeviceConstraint(match_attribute=f"{DA}/NonExistentAttribute")],
            )
        ],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
    ),
    # schedframe's own case: celpy does not type-check, so an undeclared variable fails at run
    # time (upstream reports a compile error).
    "undeclared-variable-is-a-runtime-error": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 1, "noSuchVar"))],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
        error="claim claim-0: selector #0 on device driver-a/pool-1/device-1: CEL runtime error",
    ),
    "missing-attribute-runtime-error": Case(
        claims=[claim("claim-0", exact(REQ0, CA, 1, f'device.attributes["{DA}"].nosuch == 1'))],
        classes=[klass(CA, DA)],
        slices=[one("slice-1", N1, P1, DA)],
        node=node(N1, R1),
        error="claim claim-0: selector #0 on device driver-a/pool-1/device-1: CEL runtime "
        "error: no such key: nosuch",
    ),
    "tainted-device-disabled": Case(
        claims=[simple_claim("claim-0", REQ0, CA)],
        classes=[klass(CA, DA)],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1, taints=(NOSCHED,)))],
        node=node(N1, R1),
        results=[result(local(N1), res(REQ0, DA, P1, D1))],
    ),
    "tainted-device-enabled": Case(
        features=TAINTS,
        claims=[simple_claim("claim-0", REQ0, CA)],
        classes=[klass(CA, DA)],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1, taints=(NOSCHED,)))],
        node=node(N1, R1),
    ),
    "tainted-device-tolerated": Case(
        features=TAINTS,
        claims=[claim("claim-0", exact(REQ0, CA, 1, tolerations=(TOL_NOSCHED, TOL_NOEXEC)))],
        classes=[klass(CA, DA)],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1, taints=(NOSCHED, NOEXEC)))],
        node=node(N1, R1),
        results=[
            result(
                local(N1),
                res(REQ0, DA, P1, D1, tolerations=(TOL_NOSCHED, TOL_NOEXEC)),
            )
        ],
    ),
    "tainted-device-one-of-two-tolerated": Case(
        features=TAINTS,
        claims=[claim("claim-0", exact(REQ0, CA, 1, tolerations=(TOL_NOSCHED,)))],
        classes=[klass(CA, DA)],
        slices=[rslice("slice-1", N1, P1, DA, dev(D1, taints=(NOSCHED, NOEXEC)))],
        node=node(N1, R1),
    ),
    "partitionable-devices-disabled": Case(
        claims=[simple_claim("claim-0", REQ0, CA)],
        classes=[klass(CA, DA)],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                dev(
                    D1,
                    consumes_counters=(
                        DeviceCounterConsumption(
                            counter_set="counter-set-1", counters=counters(memory="4Gi")
                        ),
                    ),
                ),
                counters=[CounterSet(name="counter-set-1", counters=counters(memory="8Gi"))],
            )
        ],
        node=node(N1, R1),
    ),
    "partitionable-devices-counters-exhausted": Case(
        features=PART,
        claims=[claim("claim-0", exact(REQ0, CA, 3))],
        classes=[klass(CA, DA)],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                *(
                    dev(
                        f"device-{i}",
                        consumes_counters=(
                            DeviceCounterConsumption(
                                counter_set="counter-set-1", counters=counters(memory="4Gi")
                            ),
                        ),
                    )
                    for i in range(3)
                ),
                counters=[CounterSet(name="counter-set-1", counters=counters(memory="8Gi"))],
            )
        ],
        node=node(N1, R1),
    ),
    "partitionable-devices-fit": Case(
        features=PART,
        claims=[claim("claim-0", exact(REQ0, CA, 2))],
        classes=[klass(CA, DA)],
        allocated=[(DA, P1, "device-0")],
        slices=[
            rslice(
                "slice-1",
                N1,
                P1,
                DA,
                dev(
                    "device-0",
                    consumes_counters=(
                        DeviceCounterConsumption(
                            counter_set="counter-set-1", counters=counters(memory="4Gi")
                        ),
                    ),
                ),
                dev(
                    "device-1",
                    consumes_counters=(
                        DeviceCounterConsumption(
                            counter_set="counter-set-1", counters=counters(memory="6Gi")
                        ),
                    ),
                ),
                dev(
                    "device-2",
                    consumes_counters=(
                        DeviceCounterConsumption(
                            counter_set="counter-set-1", counters=counters(memory="2Gi")
                        ),
                    ),
                ),
                dev(
                    "device-3",
                    consumes_counters=(
                        DeviceCounterConsumption(
                            counter_set="counter-set-1", counters=counters(memory="2Gi")
                        ),
                    ),
                ),
                counters=[CounterSet(name="counter-set-1", counters=counters(memory="8Gi"))],
            )
        ],
        node=node(N1, R1),
        results=[result(local(N1), res(REQ0, DA, P1, "device-2"), res(REQ0, DA, P1, "device-3"))],
    ),
    "per-device-node-selection": Case(
        features=PART,
        claims=[simple_claim("claim-0", REQ0, CA)],
        classes=[klass(CA, DA)],
        slices=[
            rslice("slice-1", "per-device", P1, DA, dev(D1, node_name=N2), dev(D2, node_name=N1)),
        ],
        node=node(N1, R1),
        results=[result(local(N1), res(REQ0, DA, P1, D2))],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_allocator_table(name: str) -> None:
    case = CASES[name]
    allocator = Allocator(
        features=case.features,
        allocated_devices=set(case.allocated),
        classes={c.name: c for c in case.classes},
        slices=list(case.slices),
        cel_cache=CELCache(),
    )
    if case.error is not None:
        with pytest.raises(AllocationError) as info:
            allocator.allocate(case.node, list(case.claims))
        assert case.error in str(info.value)
        return
    got = allocator.allocate(case.node, list(case.claims))
    if case.results is None:
        assert got is None or not case.claims
        return
    assert got is not None
    assert [_actual(r) for r in got] == list(case.results)


def test_each_expression_is_compiled_once() -> None:
    cache = CELCache()
    case = CASES["small-and-large"]
    for _ in range(3):
        Allocator(
            features=NONE,
            allocated_devices=set(),
            classes={c.name: c for c in case.classes},
            slices=list(case.slices),
            cel_cache=cache,
        ).allocate(case.node, list(case.claims))
    assert len(cache) == 3  # the class selector and the two request selectors


# -- more of upstream's cases: configuration in the result, constraints of other types ---------


def _cfg(driver: str, attribute: str, requests: tuple[str, ...] = ()) -> DeviceClaimConfiguration:
    return DeviceClaimConfiguration(
        requests=requests, driver=driver, parameters={attribute: attribute + "Value"}
    )


def test_class_and_claim_config_go_into_the_result() -> None:
    # Upstream "with-class-device-config" and "claim-with-device-config".
    cls = attrs.evolve(klass(CA, DA), config=(_cfg(DA, "classAttribute"),))
    c = attrs.evolve(simple_claim("claim-0", REQ0, CA), config=(_cfg(DA, "deviceAttribute"),))
    got = Allocator(
        features=NONE,
        allocated_devices=set(),
        classes={CA: cls},
        slices=[one("slice-1", N1, P1, DA)],
        cel_cache=CELCache(),
    ).allocate(node(N1, R1), [c])
    assert got is not None
    (result,) = got
    # Both apply to every request of the claim, so their request lists are emptied.
    assert result.devices.config == (_cfg(DA, "classAttribute"), _cfg(DA, "deviceAttribute"))


def test_config_for_one_request_keeps_its_request_list() -> None:
    c = claim(
        "claim-0",
        exact(REQ0, CA),
        exact(REQ1, CA),
    )
    c = attrs.evolve(c, config=(_cfg(DA, "a", (REQ0,)),))
    got = Allocator(
        features=NONE,
        allocated_devices=set(),
        classes={CA: klass(CA, DA)},
        slices=[rslice("slice-1", N1, P1, DA, dev(D1), dev(D2))],
        cel_cache=CELCache(),
    ).allocate(node(N1, R1), [c])
    assert got is not None
    assert got[0].devices.config == (_cfg(DA, "a", (REQ0,)),)


@pytest.mark.parametrize(
    ("attribute", "values", "expected"),
    [
        ("boolAttribute", (True, False, True), ["device-0", D2]),
        ("driverVersion", ("1.0.0", "2.0.0", "1.0.0"), ["device-0", D2]),
        ("numa", (1, 2, 2), [D1, D2]),
    ],
)
def test_match_attribute_of_each_type(
    attribute: str, values: tuple[object, ...], expected: list[str]
) -> None:
    # Upstream "with-constraint-bool-attribute" / "-version-attribute" / "-int-attribute".
    devices = [
        dev(name, attributes=_attrs(**{attribute: v}))
        for name, v in zip(("device-0", D1, D2), values, strict=True)
    ]
    c = claim(
        "claim-0",
        exact(REQ0, CA),
        exact(REQ1, CA),
        constraints=[DeviceConstraint(match_attribute=f"{DA}/{attribute}")],
    )
    # For numa, device-0 (numa 1) has no partner: backtracking picks the pair with numa 2.
    got = Allocator(
        features=NONE,
        allocated_devices=set(),
        classes={CA: klass(CA, DA)},
        slices=[rslice("slice-1", N1, P1, DA, *devices)],
        cel_cache=CELCache(),
    ).allocate(node(N1, R1), [c])
    assert got is not None
    assert [r.device for r in got[0].devices.results] == expected
