"""DRA-backed extended resources (DRAExtendedResource) in NodeResourcesFit and
NodeResourcesBalancedAllocation: upstream fit_test.go and balanced_allocation_test.go cases
as data (the cases with ``draExtendedResourceEnabled`` / ``draObjects``)."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence

import pytest

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.features import FeatureGates
from schedframe.objects import (
    AllocationResult,
    CELSelector,
    Device,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceClass,
    DeviceRequestAllocationResult,
    ObjectMeta,
    Pod,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
)
from schedframe.runtime import ClusterView, Framework
from schedframe_plugins._dra.extended import (
    IMPLICIT_PREFIX,
    device_class_mapping,
    is_dra_extended_resource_name,
)
from schedframe_plugins.noderesources import (
    BalancedAllocation,
    Fit,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
)
from schedframe_plugins.noderesources.fit import (
    InsufficientResource,
    compute_pod_resource_request,
    fits_request,
)

from ._builders import (
    DRA_EXT,
    EXT_A,
    EXT_B,
    allocatable,
    make_node,
    make_node_resources,
    make_pod,
    req_pod,
    res,
)

CLASS = "device-class-name"
DRIVER = "test-driver"
#: Upstream ``deviceClassWithExtendResourceName``.
DRA_CLASS = DeviceClass(metadata=ObjectMeta(name=CLASS), extended_resource_name=DRA_EXT)

U = fw.Code.UNSCHEDULABLE
UU = fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def gates(on: bool) -> FeatureGates:
    return FeatureGates(emulated_version="1.36", overrides={"DRAExtendedResource": on})


def handle(on: bool, dra: Sequence[object] = (), snapshot: Snapshot | None = None) -> Framework:
    return Framework(snapshot=snapshot, cluster=ClusterView(dra=list(dra)), features=gates(on))


def node_slice(
    node: str, *devices: str, attrs: Mapping[str, DeviceAttribute] | None = None
) -> ResourceSlice:
    """Upstream st.MakeResourceSlice(node, driver).Device(...)...: a pool named after the node."""
    return ResourceSlice(
        metadata=ObjectMeta(name=f"{node}-{DRIVER}"),
        driver=DRIVER,
        pool=ResourcePool(name=node, generation=1),
        node_name=node,
        devices=tuple(Device(name=d, attributes=dict(attrs or {})) for d in devices),
    )


def insufficient(name: str, requested: int, used: int, capacity: int) -> InsufficientResource:
    return InsufficientResource(
        resource_name=name,
        reason=f"Insufficient {name}",
        requested=requested,
        used=used,
        capacity=capacity,
        unresolvable=requested > capacity,
    )


# --------------------------------------------------------------------------------------------
# Filter (upstream TestEnoughRequests, the DRA cases)
# --------------------------------------------------------------------------------------------

# gate, pod, existing pod's requests, want status, want insufficient resources
ENOUGH_REQUESTS = [
    pytest.param(
        True,
        make_pod(res(a=1)),
        [res()],
        None,
        [],
        id="extended resource backed by device plugin",
    ),
    pytest.param(
        True,
        make_pod(res(1, 1, dra=1)),
        [res()],
        None,
        [],
        id="extended resource backed by DRA",
    ),
    # Upstream runs this one without a DRA manager (the kubelet's path); the scheduler always
    # has one, and the resource is node-allocatable anyway.
    pytest.param(
        True,
        make_pod(res(1, 1, a=1)),
        [res()],
        None,
        [],
        id="extended resource backed by DRA, nil draManager",
    ),
    pytest.param(
        False,
        make_pod(res(1, 1, dra=1)),
        [res()],
        (UU, f"Insufficient {DRA_EXT}"),
        [insufficient(DRA_EXT, 1, 0, 0)],
        id="extended resource backed by DRA not enabled",
    ),
    pytest.param(
        True,
        make_pod(res(1, 1, b=1)),
        [res()],
        (UU, f"Insufficient {EXT_B}"),
        [insufficient(EXT_B, 1, 0, 0)],
        id="extended resource NOT backed by DRA",
    ),
    pytest.param(
        True,
        make_pod(res(dra=1)),
        [res(dra=0)],
        None,
        [],
        id="extended resource was backed by Device Plugin (Allocatable: 0)",
    ),
    pytest.param(
        True,
        make_pod(res(a=1)),
        [res(a=0)],
        None,
        [],
        id="extended resource was backed by Device Plugin (Allocatable: 0), global cache",
    ),
    # Not upstream's: the implicit name of the class, and a class-provided resource the node
    # advertises (then the node's allocatable counts, not DRA).
    pytest.param(
        True,
        make_pod({"cpu": 1, "memory": 1, IMPLICIT_PREFIX + CLASS: 2}),
        [res()],
        None,
        [],
        id="implicit deviceclass.resource.kubernetes.io name backed by DRA",
    ),
]


def _pod_with(requests: Mapping[str, int]) -> Pod:
    return make_pod(dict(requests))


@pytest.mark.parametrize(("on", "pod", "existing", "want", "want_insufficient"), ENOUGH_REQUESTS)
def test_enough_requests(
    on: bool,
    pod: Pod,
    existing: list[dict[str, int]],
    want: tuple[fw.Code | str, ...] | None,
    want_insufficient: list[InsufficientResource],
) -> None:
    node_info = fw.NodeInfo(
        make_node("node", allocatable(10, 20, 32, 5, 20, 5)), [make_pod(*existing)]
    )
    plugin = Fit(NodeResourcesFitArgs(), handle(on, [DRA_CLASS]))
    state = fw.CycleState()
    assert plugin.pre_filter(state, pod, [node_info]) is None
    status = plugin.filter(state, pod, node_info)
    if want is None:
        assert status is None
    else:
        assert status is not None
        assert (status.code, *status.reasons) == want
    mapping = device_class_mapping([DRA_CLASS]) if on else None
    got = fits_request(compute_pod_resource_request(pod), node_info, dra_resources=mapping)
    assert got == want_insufficient


def test_node_advertising_the_resource_counts_its_allocatable() -> None:
    # A class provides the resource, but the node advertises it: device-plugin accounting.
    node_info = fw.NodeInfo(make_node("node", {"pods": 32, DRA_EXT: 1}), [make_pod({DRA_EXT: 1})])
    pod = make_pod({DRA_EXT: 1})
    plugin = Fit(NodeResourcesFitArgs(), handle(True, [DRA_CLASS]))
    state = fw.CycleState()
    plugin.pre_filter(state, pod, [node_info])
    status = plugin.filter(state, pod, node_info)
    assert status is not None
    assert (status.code, *status.reasons) == (U, f"Insufficient {DRA_EXT}")


# --------------------------------------------------------------------------------------------
# Score (upstream TestFitScore and TestNodeResourcesBalancedAllocation, the DRA cases)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("run_pre_score", [True, False], ids=["", "if PreScore is not called"])
def test_fit_score_least_allocated_with_extended_resources(run_pre_score: bool) -> None:
    nodes = [make_node("node1", {"pods": 32}), make_node("node2", {"pods": 32})]
    snap = Snapshot.from_objects(nodes)
    dra = [
        DRA_CLASS,
        node_slice("node1", "device-1", "device-2", "device-3"),
        node_slice("node2", "device-1", "device-2"),
    ]
    strategy = ScoringStrategy(
        type="LeastAllocated", resources=(ResourceSpec(name=DRA_EXT, weight=1),)
    )
    plugin = Fit(NodeResourcesFitArgs(scoring_strategy=strategy), handle(True, dra, snap))
    pod = req_pod({DRA_EXT: "1"})
    state = fw.CycleState()
    if run_pre_score:
        assert plugin.pre_score(state, pod, snap.list()) is None
    # node1: (3 - 1) / 3 -> 66; node2: (2 - 1) / 2 -> 50
    assert [plugin.score(state, pod, snap.get(n.name)) for n in nodes] == [66, 50]
    assert plugin.score_many(state, pod, snap.list()) == [66, 50]


CPU_AND_MEMORY = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})
CPU_ONLY = ({"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})


@pytest.mark.parametrize("run_pre_score", [True, False], ids=["", "if PreScore not called"])
def test_balanced_allocation_include_dra_resource(run_pre_score: bool) -> None:
    nodes = [
        make_node_resources("node1", 3500, 40000, {}),
        make_node_resources("node2", 3500, 40000, {}),
    ]
    existing = [req_pod(*CPU_ONLY, node="node1"), req_pod(*CPU_AND_MEMORY, node="node2")]
    snap = Snapshot.from_objects(nodes, existing)
    devices = [f"device-{i}" for i in range(1, 9)]
    args = NodeResourcesBalancedAllocationArgs(
        resources=(
            ResourceSpec(name="cpu", weight=1),
            ResourceSpec(name="memory", weight=1),
            ResourceSpec(name=DRA_EXT, weight=1),
        )
    )
    plugin = BalancedAllocation(
        args, handle(True, [DRA_CLASS, node_slice("node1", *devices)], snap)
    )
    pod = req_pod({DRA_EXT: "1"})
    state = fw.CycleState()
    if run_pre_score:
        assert plugin.pre_score(state, pod, snap.list()) is None
    # node1: cpu 3000/3500, memory 0/40000, DRA 0 -> 1 of 8: 60 -> 62, 50 + (50 + 2) / 2 = 76
    # node2: no device reaches it, cpu 3000/3500, memory 5000/40000: 63 -> 63, 75
    assert [plugin.score(state, pod, snap.get(n.name)) for n in nodes] == [76, 75]
    assert plugin.score_many(state, pod, snap.list()) == [76, 75]


def test_allocated_devices_count_as_requested() -> None:
    # Two of node1's three devices are allocated: LeastAllocated (3 - 2 - 1) / 3 -> 0.
    nodes = [make_node("node1", {"pods": 32})]
    snap = Snapshot.from_objects(nodes)
    allocated = ResourceClaim(
        metadata=ObjectMeta(name="c", namespace="default", uid="c"),
        allocation=AllocationResult(
            devices=DeviceAllocationResult(
                results=tuple(
                    DeviceRequestAllocationResult(
                        request="r", driver=DRIVER, pool="node1", device=f"device-{i}"
                    )
                    for i in (1, 2)
                )
            )
        ),
    )
    dra = [DRA_CLASS, node_slice("node1", "device-1", "device-2", "device-3"), allocated]
    strategy = ScoringStrategy(
        type="LeastAllocated", resources=(ResourceSpec(name=DRA_EXT, weight=1),)
    )
    plugin = Fit(NodeResourcesFitArgs(scoring_strategy=strategy), handle(True, dra, snap))
    pod = req_pod({DRA_EXT: "1"})
    state = fw.CycleState()
    plugin.pre_score(state, pod, snap.list())
    assert plugin.score(state, pod, snap.get("node1")) == 0


def test_class_selectors_pick_the_devices_counted() -> None:
    nodes = [make_node("node1", {"pods": 32})]
    snap = Snapshot.from_objects(nodes)
    selective = DeviceClass(
        metadata=ObjectMeta(name=CLASS),
        extended_resource_name=DRA_EXT,
        selectors=(CELSelector(expression=f'device.attributes["{DRIVER}"].big'),),
    )
    big = node_slice(
        "node1", "device-1", "device-2", attrs={"big": DeviceAttribute(bool_value=True)}
    )
    small = ResourceSlice(
        metadata=ObjectMeta(name="small"),
        driver=DRIVER,
        pool=ResourcePool(name="small", generation=1),
        node_name="node1",
        devices=(Device(name="d", attributes={"big": DeviceAttribute(bool_value=False)}),),
    )
    strategy = ScoringStrategy(
        type="MostAllocated", resources=(ResourceSpec(name=DRA_EXT, weight=1),)
    )
    plugin = Fit(
        NodeResourcesFitArgs(scoring_strategy=strategy),
        handle(True, [selective, big, small], snap),
    )
    pod = req_pod({DRA_EXT: "1"})
    state = fw.CycleState()
    plugin.pre_score(state, pod, snap.list())
    # Two devices match the class: 1 of 2 requested -> 50.
    assert plugin.score(state, pod, snap.get("node1")) == 50


def test_gate_off_scores_without_dra() -> None:
    nodes = [make_node("node1", {"pods": 32})]
    snap = Snapshot.from_objects(nodes)
    strategy = ScoringStrategy(
        type="LeastAllocated", resources=(ResourceSpec(name=DRA_EXT, weight=1),)
    )
    dra = [DRA_CLASS, node_slice("node1", "device-1", "device-2", "device-3")]
    plugin = Fit(NodeResourcesFitArgs(scoring_strategy=strategy), handle(False, dra, snap))
    pod = req_pod({DRA_EXT: "1"})
    state = fw.CycleState()
    plugin.pre_score(state, pod, snap.list())
    assert plugin.score(state, pod, snap.get("node1")) == 0


# --------------------------------------------------------------------------------------------
# Events and hints (upstream TestEventsToRegister, Test_isSchedulableAfterDeviceClassChange)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("on", [True, False])
def test_events_to_register(on: bool) -> None:
    events = [e.event for e in Fit(None, handle(on)).events_to_register()]
    device_class = fw.ClusterEvent(
        fw.EventResource.DEVICE_CLASS, fw.ActionType.ADD | fw.ActionType.UPDATE
    )
    assert (device_class in events) is on
    if on:
        assert events[-1] == device_class


def _class(name: str = "", ern: str | None = None) -> DeviceClass:
    return DeviceClass(metadata=ObjectMeta(name=name), extended_resource_name=ern)


GPU = "example.com/gpu"
Q, SKIP = fw.QueueingHint.QUEUE, fw.QueueingHint.QUEUE_SKIP

DEVICE_CLASS_CHANGE = [
    pytest.param(
        make_pod(res(mem=2)),
        _class(),
        _class(),
        SKIP,
        id="skip-queue-on-class-nil-extended-resource-name-pointer",
    ),
    pytest.param(
        make_pod(res(mem=2)),
        _class(ern=GPU),
        _class(ern=GPU),
        SKIP,
        id="skip-queue-on-class-same-extended-resource-name",
    ),
    pytest.param(
        _pod_with({IMPLICIT_PREFIX + "gpuclass": 1}),
        None,
        _class("gpuclass", GPU),
        Q,
        id="queue-on-class-add-with-implicit-extended-resource-name",
    ),
    pytest.param(
        _pod_with({IMPLICIT_PREFIX + "gpuclass": 1}),
        None,
        _class("myclass", GPU),
        SKIP,
        id="skip-on-class-add-with-implicit-extended-resource-name-not-matching",
    ),
    pytest.param(
        _pod_with({"example.com/othergpu": 1}),
        None,
        _class("myclass", GPU),
        SKIP,
        id="skip-on-class-add-with-explicit-extended-resource-name-not-matching",
    ),
    pytest.param(
        _pod_with({IMPLICIT_PREFIX + "gpuclass": 1}),
        _class("gpuclass"),
        _class("gpuclass", GPU),
        SKIP,
        id="skip-on-class-update-with-implicit-extended-resource-name",
    ),
    pytest.param(
        _pod_with({GPU: 1}),
        None,
        _class(ern=GPU),
        Q,
        id="queue-on-class-add-with-extended-resource-name",
    ),
    pytest.param(
        _pod_with({GPU: 1}),
        _class(ern="example.com/gpu1"),
        _class(ern=GPU),
        Q,
        id="queue-on-class-update-with-extended-resource-name",
    ),
]


@pytest.mark.parametrize(("pod", "old", "new", "want"), DEVICE_CLASS_CHANGE)
def test_is_schedulable_after_device_class_change(
    pod: Pod, old: DeviceClass | None, new: DeviceClass, want: fw.QueueingHint
) -> None:
    # Upstream builds the plugin with the gate off and calls the hint directly.
    assert Fit(None, handle(False)).is_schedulable_after_device_class_event(pod, old, new) == want


@pytest.mark.parametrize(
    ("old", "new"),
    [(None, "not-a-class"), ("not-a-class", _class())],
    ids=["backoff-wrong-new-object", "backoff-wrong-old-object"],
)
def test_device_class_hint_wrong_objects(old: object, new: object) -> None:
    with pytest.raises(TypeError):
        Fit(None, handle(True)).is_schedulable_after_device_class_event(make_pod(), old, new)


def test_node_change_queues_for_a_node_leaving_the_resource_to_dra() -> None:
    plugin = Fit(None, handle(True, [DRA_CLASS]))
    pod = make_pod({DRA_EXT: 1})
    before = make_node("n", {"pods": 32, "cpu": 1000})
    after = make_node("n", {"pods": 32, "cpu": 1000, "memory": 5})
    assert plugin.is_schedulable_after_node_change(pod, None, after) == Q
    assert plugin.is_schedulable_after_node_change(pod, before, after) == Q
    off = Fit(None, handle(False, [DRA_CLASS]))
    assert off.is_schedulable_after_node_change(pod, None, after) == SKIP


# --------------------------------------------------------------------------------------------
# The resource -> DeviceClass resolution (upstream ExtendedResourceCache)
# --------------------------------------------------------------------------------------------


def _at(name: str, ern: str | None, second: int) -> DeviceClass:
    ts = datetime.datetime(2026, 1, 1, 0, 0, second, tzinfo=datetime.UTC)
    return DeviceClass(
        metadata=ObjectMeta(name=name, creation_timestamp=ts), extended_resource_name=ern
    )


def test_newest_class_wins_an_explicit_name_then_lowest_name() -> None:
    old, new, new_b = _at("z-old", GPU, 1), _at("b", GPU, 2), _at("a", GPU, 2)
    assert device_class_mapping([old, new])[GPU] is new
    assert device_class_mapping([new, old])[GPU] is new
    assert device_class_mapping([new, new_b])[GPU] is new_b
    assert device_class_mapping([new_b, new])[GPU] is new_b
    # Every class keeps its implicit name.
    mapping = device_class_mapping([old, new, new_b])
    assert {k for k in mapping if k.startswith(IMPLICIT_PREFIX)} == {
        IMPLICIT_PREFIX + n for n in ("z-old", "b", "a")
    }


@pytest.mark.parametrize(
    ("name", "want"),
    [
        (EXT_A, True),
        (IMPLICIT_PREFIX + "gpu", True),
        ("kubernetes.io/something", False),
        ("cpu", False),
        ("hugepages-2Mi", False),
    ],
)
def test_is_dra_extended_resource_name(name: str, want: bool) -> None:
    assert is_dra_extended_resource_name(name) is want
