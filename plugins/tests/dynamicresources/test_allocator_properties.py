"""Invariants of the structured allocator over random pools and claims (Hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe.objects import (
    CELSelector,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClass,
    DeviceRequest,
    ExactDeviceRequest,
    Node,
    ObjectMeta,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
    parse_quantity,
)
from schedframe_plugins._dra.allocator import Allocator, Features
from schedframe_plugins._dra.cel import CELCache

DRIVERS = ("a.example.com", "b.example.com")
NODE = Node(metadata=ObjectMeta(name="n1"))
CLASSES = {
    d: DeviceClass(
        metadata=ObjectMeta(name=d),
        selectors=(CELSelector(expression=f'device.driver == "{d}"'),),
    )
    for d in DRIVERS
}
_CACHE = CELCache()
# celpy raises the recursion limit when it first builds a parser; do it before Hypothesis runs.
_CACHE.get_or_compile('device.capacity["x"].mem.compareTo(quantity("1Gi")) >= 0')


@st.composite
def cluster(
    draw: st.DrawFn,
) -> tuple[list[ResourceSlice], list[ResourceClaim], set[tuple[str, str, str]]]:
    slices = []
    all_ids = []
    for i, driver in enumerate(DRIVERS):
        n = draw(st.integers(0, 4))
        devices = tuple(
            Device(
                name=f"d{j}",
                attributes={"size": DeviceAttribute(int_value=draw(st.integers(1, 3)))},
                capacity={
                    "mem": DeviceCapacity(value=parse_quantity(f"{draw(st.integers(1, 4))}Gi"))
                },
            )
            for j in range(n)
        )
        all_ids += [(driver, f"p{i}", d.name) for d in devices]
        where = draw(st.sampled_from(["n1", "n2", "all"]))
        kw = {"all_nodes": True} if where == "all" else {"node_name": where}
        slices.append(
            ResourceSlice(
                metadata=ObjectMeta(name=f"s{i}"),
                driver=driver,
                pool=ResourcePool(name=f"p{i}", generation=1),
                devices=devices,
                **kw,
            )
        )
    claims = []
    for c in range(draw(st.integers(1, 3))):
        requests = []
        for r in range(draw(st.integers(1, 2))):
            driver = draw(st.sampled_from(DRIVERS))
            selectors: tuple[CELSelector, ...] = ()
            if draw(st.booleans()):
                gi = draw(st.integers(1, 4))
                selectors = (
                    CELSelector(
                        expression=f'device.capacity["{driver}"].mem.compareTo(quantity("{gi}Gi")) >= 0'
                    ),
                )
            requests.append(
                DeviceRequest(
                    name=f"r{r}",
                    exactly=ExactDeviceRequest(
                        device_class_name=driver,
                        count=draw(st.integers(1, 2)),
                        selectors=selectors,
                        allocation_mode=draw(st.sampled_from(["ExactCount", "ExactCount", "All"])),
                    ),
                )
            )
        claims.append(
            ResourceClaim(
                metadata=ObjectMeta(name=f"c{c}", namespace="ns"), requests=tuple(requests)
            )
        )
    allocated = set(draw(st.lists(st.sampled_from(all_ids), max_size=2))) if all_ids else set()
    return slices, claims, allocated


@settings(max_examples=150, deadline=None)
@given(cluster())
def test_results_respect_counts_selectors_and_exclusivity(
    data: tuple[list[ResourceSlice], list[ResourceClaim], set[tuple[str, str, str]]],
) -> None:
    slices, claims, allocated = data
    devices = {(s.driver, s.pool.name, d.name): (s, d) for s in slices for d in s.devices}
    got = Allocator(
        features=Features(),
        allocated_devices=allocated,
        classes=CLASSES,
        slices=slices,
        cel_cache=_CACHE,
    ).allocate(NODE, claims)
    if got is None:
        return
    assert len(got) == len(claims)
    used: set[tuple[str, str, str]] = set()
    for claim, result in zip(claims, got, strict=True):
        for request in claim.requests:
            assert request.exactly is not None
            mine = [r for r in result.devices.results if r.request == request.name]
            if request.exactly.allocation_mode == "ExactCount":
                assert len(mine) == request.exactly.count
            for r in mine:
                did = (r.driver, r.pool, r.device)
                assert did not in allocated and did not in used  # never shared
                used.add(did)
                s, d = devices[did]
                assert s.driver == request.exactly.device_class_name  # the class selector
                assert s.node_name in (None, "n1")  # reachable from the node
                for sel in request.exactly.selectors:
                    gi = int(sel.expression.split('quantity("')[1].split("Gi")[0])
                    assert d.capacity["mem"].value >= parse_quantity(f"{gi}Gi")
