"""Port of upstream noderesources/fit_test.go (Filter, Score, queueing hints, isFit)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe import errors
from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.config import decode_args
from schedframe.features import FeatureGates
from schedframe.objects import Node, Pod
from schedframe.runtime import Framework
from schedframe_plugins.noderesources import (
    Fit,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from schedframe_plugins.noderesources.fit import (
    InsufficientResource,
    compute_pod_resource_request,
    fits_request,
    have_any_requested_resources_increased,
    is_fit,
)

from ._builders import (
    DRA_EXT,
    EXT_A,
    EXT_B,
    HUGE_A,
    K8S_IO_A,
    K8S_IO_B,
    allocatable,
    amounts,
    capacity_node,
    make_node,
    make_pod,
    req_pod,
    res,
)


def insufficient(
    name: str, requested: int, used: int, capacity: int, unresolvable: bool = False
) -> InsufficientResource:
    reason = "Too many pods" if name == "pods" else f"Insufficient {name}"
    return InsufficientResource(
        resource_name=name,
        reason=reason,
        requested=requested,
        used=used,
        capacity=capacity,
        unresolvable=unresolvable,
    )


def new_plugin(args: NodeResourcesFitArgs | None = None, snapshot: Snapshot | None = None) -> Fit:
    return Fit(args, Framework(snapshot=snapshot))


U = fw.Code.UNSCHEDULABLE
UU = fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE

# pod, existing pod on the node, args, want status (code, reasons) or None, want insufficient
ENOUGH_REQUESTS = [
    pytest.param(
        make_pod(), [res(10, 20)], None, None, [], id="no resources requested always fits"
    ),
    pytest.param(
        make_pod(res(1, 1)),
        [res(10, 20)],
        None,
        (U, "Insufficient cpu", "Insufficient memory"),
        [insufficient("cpu", 1, 10, 10), insufficient("memory", 1, 20, 20)],
        id="too many resources fails",
    ),
    pytest.param(
        make_pod(res(1, 1), init=[res(3, 1)]),
        [res(8, 19)],
        None,
        (U, "Insufficient cpu"),
        [insufficient("cpu", 3, 8, 10)],
        id="too many resources fails due to init container cpu",
    ),
    pytest.param(
        make_pod(res(1, 1), init=[res(3, 1), res(2, 1)]),
        [res(8, 19)],
        None,
        (U, "Insufficient cpu"),
        [insufficient("cpu", 3, 8, 10)],
        id="too many resources fails due to highest init container cpu",
    ),
    pytest.param(
        make_pod(res(1, 1), init=[res(1, 3)]),
        [res(9, 19)],
        None,
        (U, "Insufficient memory"),
        [insufficient("memory", 3, 19, 20)],
        id="too many resources fails due to init container memory",
    ),
    pytest.param(
        make_pod(res(1, 1), init=[res(1, 3), res(1, 2)]),
        [res(9, 19)],
        None,
        (U, "Insufficient memory"),
        [insufficient("memory", 3, 19, 20)],
        id="too many resources fails due to highest init container memory",
    ),
    pytest.param(
        make_pod(res(1, 1), init=[res(1, 1)]),
        [res(9, 19)],
        None,
        None,
        [],
        id="init container fits because it's the max, not sum, of containers and init containers",
    ),
    pytest.param(
        make_pod(res(1, 1), init=[res(1, 1), res(1, 1)]),
        [res(9, 19)],
        None,
        None,
        [],
        id="multiple init containers fit because it's the max, not sum, of containers and init containers",
    ),
    pytest.param(make_pod(res(1, 1)), [res(5, 5)], None, None, [], id="both resources fit"),
    pytest.param(
        make_pod(res(2, 1)),
        [res(9, 5)],
        None,
        (U, "Insufficient cpu"),
        [insufficient("cpu", 2, 9, 10)],
        id="one resource memory fits",
    ),
    pytest.param(
        make_pod(res(1, 2)),
        [res(5, 19)],
        None,
        (U, "Insufficient memory"),
        [insufficient("memory", 2, 19, 20)],
        id="one resource cpu fits",
    ),
    pytest.param(make_pod(res(5, 1)), [res(5, 19)], None, None, [], id="equal edge case"),
    pytest.param(
        make_pod(res(4, 1), init=[res(5, 1)]),
        [res(5, 19)],
        None,
        None,
        [],
        id="equal edge case for init container",
    ),
    pytest.param(make_pod(res(a=1)), [res()], None, None, [], id="extended resource fits"),
    pytest.param(
        make_pod(res(), init=[res(a=1)]),
        [res()],
        None,
        None,
        [],
        id="extended resource fits for init container",
    ),
    pytest.param(
        make_pod(res(1, 1, a=10)),
        [res(0, 0, a=0)],
        None,
        (UU, f"Insufficient {EXT_A}"),
        [insufficient(EXT_A, 10, 0, 5, True)],
        id="extended resource capacity enforced",
    ),
    pytest.param(
        make_pod(res(), init=[res(1, 1, a=10)]),
        [res(0, 0, a=0)],
        None,
        (UU, f"Insufficient {EXT_A}"),
        [insufficient(EXT_A, 10, 0, 5, True)],
        id="extended resource capacity enforced for init container",
    ),
    pytest.param(
        make_pod(res(1, 1, a=1)),
        [res(0, 0, a=5)],
        None,
        (U, f"Insufficient {EXT_A}"),
        [insufficient(EXT_A, 1, 5, 5)],
        id="extended resource allocatable enforced",
    ),
    pytest.param(
        make_pod(res(), init=[res(1, 1, a=1)]),
        [res(0, 0, a=5)],
        None,
        (U, f"Insufficient {EXT_A}"),
        [insufficient(EXT_A, 1, 5, 5)],
        id="extended resource allocatable enforced for init container",
    ),
    pytest.param(
        make_pod(res(1, 1, a=3), res(1, 1, a=3)),
        [res(0, 0, a=2)],
        None,
        (UU, f"Insufficient {EXT_A}"),
        [insufficient(EXT_A, 6, 2, 5, True)],
        id="extended resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        make_pod(res(), init=[res(1, 1, a=3), res(1, 1, a=3)]),
        [res(0, 0, a=2)],
        None,
        None,
        [],
        id="extended resource allocatable admits multiple init containers",
    ),
    pytest.param(
        make_pod(res(), init=[res(1, 1, a=6), res(1, 1, a=3)]),
        [res(0, 0, a=2)],
        None,
        (UU, f"Insufficient {EXT_A}"),
        [insufficient(EXT_A, 6, 2, 5, True)],
        id="extended resource allocatable enforced for multiple init containers",
    ),
    pytest.param(
        make_pod(res(1, 1, b=1)),
        [res()],
        None,
        (UU, f"Insufficient {EXT_B}"),
        [insufficient(EXT_B, 1, 0, 0, True)],
        id="extended resource allocatable enforced for unknown resource",
    ),
    pytest.param(
        make_pod(res(), init=[res(1, 1, b=1)]),
        [res()],
        None,
        (UU, f"Insufficient {EXT_B}"),
        [insufficient(EXT_B, 1, 0, 0, True)],
        id="extended resource allocatable enforced for unknown resource for init container",
    ),
    pytest.param(
        make_pod(res(1, 1, kia=10)),
        [res()],
        None,
        (UU, f"Insufficient {K8S_IO_A}"),
        [insufficient(K8S_IO_A, 10, 0, 0, True)],
        id="kubernetes.io resource capacity enforced",
    ),
    pytest.param(
        make_pod(res(), init=[res(1, 1, kib=10)]),
        [res()],
        None,
        (UU, f"Insufficient {K8S_IO_B}"),
        [insufficient(K8S_IO_B, 10, 0, 0, True)],
        id="kubernetes.io resource capacity enforced for init container",
    ),
    pytest.param(
        make_pod(res(1, 1, hp=10)),
        [res(0, 0, hp=0)],
        None,
        (UU, f"Insufficient {HUGE_A}"),
        [insufficient(HUGE_A, 10, 0, 5, True)],
        id="hugepages resource capacity enforced",
    ),
    pytest.param(
        make_pod(res(), init=[res(1, 1, hp=10)]),
        [res(0, 0, hp=0)],
        None,
        (UU, f"Insufficient {HUGE_A}"),
        [insufficient(HUGE_A, 10, 0, 5, True)],
        id="hugepages resource capacity enforced for init container",
    ),
    pytest.param(
        make_pod(res(1, 1, hp=3), res(1, 1, hp=3)),
        [res(0, 0, hp=2)],
        None,
        (UU, f"Insufficient {HUGE_A}"),
        [insufficient(HUGE_A, 6, 2, 5, True)],
        id="hugepages resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        make_pod(res(1, 1, b=1)),
        [res()],
        NodeResourcesFitArgs(ignored_resources=("example.com/bbb",)),  # type: ignore[arg-type]  # mypy: generic converter
        None,
        [],
        id="skip checking ignored extended resource",
    ),
    pytest.param(
        make_pod(res(1, 1), overhead={"cpu": 3, "memory": 13}),
        [res(5, 5)],
        None,
        None,
        [],
        id="resources + pod overhead fits",
    ),
    pytest.param(
        make_pod(res(1, 1), overhead={"cpu": 1, "memory": 15}),
        [res(5, 5)],
        None,
        (U, "Insufficient memory"),
        [insufficient("memory", 16, 5, 20)],
        id="requests + overhead does not fit for memory",
    ),
    pytest.param(
        make_pod(res(1, 1, b=1, kia=1)),
        [res()],
        NodeResourcesFitArgs(ignored_resource_groups=("example.com",)),  # type: ignore[arg-type]  # mypy: generic converter
        (UU, f"Insufficient {K8S_IO_A}"),
        [insufficient(K8S_IO_A, 1, 0, 0, True)],
        id="skip checking ignored extended resource via resource groups",
    ),
    pytest.param(
        make_pod(res(1, 1, a=0)),
        [res(0, 0, a=6)],
        None,
        None,
        [],
        id="skip checking extended resource request with quantity zero via resource groups",
    ),
    pytest.param(
        make_pod(res(a=1)),
        [res(20, 30, a=1)],
        None,
        None,
        [],
        id="skip checking resource request with quantity zero",
    ),
    pytest.param(
        make_pod(res(1, 1, dra=1)),
        [res()],
        None,
        (UU, f"Insufficient {DRA_EXT}"),
        [insufficient(DRA_EXT, 1, 0, 0, True)],
        id="extended resource backed by DRA not enabled",
    ),
    # Pod-level resources (spec.resources, feature PodLevelResources on).
    pytest.param(
        make_pod(res(1, 1), pod_level={"cpu": 1, "memory": 2}),
        [res(5, 5)],
        None,
        None,
        [],
        id="both pod-level and container-level resources fit",
    ),
    pytest.param(
        make_pod(res(1, 1), pod_level={"cpu": 7, "memory": 2}),
        [res(5, 5)],
        None,
        (U, "Insufficient cpu"),
        [insufficient("cpu", 7, 5, 10)],
        id="pod-level cpu resource not fit",
    ),
    pytest.param(
        make_pod(res(1, 1), pod_level={"cpu": 3, "memory": 2}),
        [res(5, 19)],
        None,
        (U, "Insufficient memory"),
        [insufficient("memory", 2, 19, 20)],
        id="pod-level memory resource not fit",
    ),
    pytest.param(
        make_pod(pod_level={"cpu": 3, "memory": 2, HUGE_A: 5}),
        [],
        None,
        None,
        [],
        id="pod-level hugepages resource fit",
    ),
    pytest.param(
        make_pod(res(1, 1, hp=3), pod_level={"cpu": 3, "memory": 2, HUGE_A: 5}),
        [],
        None,
        None,
        [],
        id="both pod-level and container-level hugepages resource fit",
    ),
    pytest.param(
        make_pod(pod_level={"cpu": 3, "memory": 2, HUGE_A: 10}),
        [],
        None,
        (UU, f"Insufficient {HUGE_A}"),
        [insufficient(HUGE_A, 10, 0, 5, True)],
        id="pod-level hugepages resource not fit",
    ),
    pytest.param(
        make_pod(res(1, 1), init=[res(1, 1)], pod_level={"cpu": 3, "memory": 2}),
        [res(5, 19)],
        None,
        (U, "Insufficient memory"),
        [insufficient("memory", 2, 19, 20)],
        id="one pod-level cpu resource fits and all init and non-init containers resources fit",
    ),
]


def _node_info(existing: Sequence[Mapping[str, int]], alloc: Mapping[str, int]) -> fw.NodeInfo:
    return fw.NodeInfo(make_node("node", alloc), [make_pod(*existing)] if existing else [])


def _check(status: fw.Status | None, want: tuple[fw.Code | str, ...] | None) -> None:
    if want is None:
        assert status is None
    else:
        assert status is not None
        assert (status.code, *status.reasons) == want


@pytest.mark.parametrize(("pod", "existing", "args", "want", "want_insufficient"), ENOUGH_REQUESTS)
def test_enough_requests(
    pod: Pod,
    existing: list[dict[str, int]],
    args: NodeResourcesFitArgs | None,
    want: tuple[fw.Code, ...] | None,
    want_insufficient: list[InsufficientResource],
) -> None:
    node_info = _node_info(existing, allocatable(10, 20, 32, 5, 20, 5))
    plugin = new_plugin(args)
    state = fw.CycleState()
    assert plugin.pre_filter(state, pod, [node_info]) is None
    _check(plugin.filter(state, pod, node_info), want)
    got = fits_request(
        compute_pod_resource_request(pod),
        node_info,
        frozenset(plugin.args.ignored_resources),
        frozenset(plugin.args.ignored_resource_groups),
    )
    assert got == want_insufficient


def test_pre_filter_disabled() -> None:
    node_info = fw.NodeInfo(make_node("node"))
    status = new_plugin().filter(fw.CycleState(), make_pod(), node_info)
    assert status is not None and status.code is fw.Code.ERROR
    assert (
        status.message() == 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'
    )


@pytest.mark.parametrize(
    ("pod", "existing"),
    [
        pytest.param(
            make_pod(),
            [res(10, 20)],
            id="even without specified resources, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            make_pod(res(1, 1)),
            [res(5, 5)],
            id="even if both resources fit, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            make_pod(res(5, 1)),
            [res(5, 19)],
            id="even for equal edge case, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            make_pod(res(5, 1), init=[res(5, 1)]),
            [res(5, 19)],
            id="even for equal edge case, predicate fails when there's no space for additional pod due to init container",
        ),
    ],
)
def test_not_enough_requests(pod: Pod, existing: list[dict[str, int]]) -> None:
    node_info = _node_info(existing, allocatable(10, 20, 1, 0, 0, 0))
    plugin = new_plugin()
    state = fw.CycleState()
    plugin.pre_filter(state, pod, [node_info])
    _check(plugin.filter(state, pod, node_info), (U, "Too many pods"))


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param(
            make_pod(res(1, 1)), [res(2, 10)], None, id="empty storage requested, and pod fits"
        ),
        pytest.param(
            make_pod(res(eph=25)),
            [res(2, 2)],
            (UU, "Insufficient ephemeral-storage"),
            id="storage ephemeral local storage request exceeds allocatable",
        ),
        pytest.param(
            make_pod(res(eph=5)),
            [res(2, 2, eph=10)],
            None,
            id="ephemeral local storage is sufficient",
        ),
        pytest.param(make_pod(res(eph=10)), [res(2, 2)], None, id="pod fits"),
    ],
)
def test_storage_requests(
    pod: Pod, existing: list[dict[str, int]], want: tuple[fw.Code, ...] | None
) -> None:
    node_info = _node_info(existing, allocatable(10, 20, 32, 5, 20, 5))
    plugin = new_plugin()
    state = fw.CycleState()
    plugin.pre_filter(state, pod, [node_info])
    _check(plugin.filter(state, pod, node_info), want)


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(
            make_pod({}),
            None,
            id="allow pod without restartable init containers if sidecar containers is enabled",
        ),
        pytest.param(
            make_pod({}, sidecars=[{}]),
            None,
            id="allow pod with restartable init containers if sidecar containers is enabled",
        ),
        pytest.param(
            make_pod({"cpu": 1}, sidecars=[{"cpu": 1}]),
            None,
            id="allow pod if the total requested resources do not exceed the node's allocatable resources",
        ),
        pytest.param(
            make_pod({"cpu": 1}, sidecars=[{"cpu": 2}]),
            (UU, "Insufficient cpu"),
            id="not allow pod if the total requested resources do exceed the node's allocatable resources",
        ),
    ],
)
def test_restartable_init_containers(pod: Pod, want: tuple[fw.Code, ...] | None) -> None:
    node_info = fw.NodeInfo(make_node("node", allocatable(2, 0, 1, 0, 0, 0)))
    plugin = new_plugin()
    state = fw.CycleState()
    assert plugin.pre_filter(state, pod, [node_info]) is None
    _check(plugin.filter(state, pod, node_info), want)


# --------------------------------------------------------------------------------------------
# Score (TestFitScore)
# --------------------------------------------------------------------------------------------

DEFAULT_RESOURCES = (ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1))


def _rtcr(*points: tuple[int, int]) -> ScoringStrategy:
    return ScoringStrategy(
        type="RequestedToCapacityRatio",
        resources=DEFAULT_RESOURCES,
        requested_to_capacity_ratio=RequestedToCapacityRatioParam(
            shape=tuple(UtilizationShapePoint(utilization=u, score=s) for u, s in points)  # type: ignore[misc]  # mypy: generic converter
        ),
    )


def _two_nodes(cpu2: str = "6000") -> list[Node]:
    return [
        capacity_node("node1", {"cpu": "4000", "memory": "10000"}),
        capacity_node("node2", {"cpu": cpu2, "memory": "10000"}),
    ]


def _existing() -> list[Pod]:
    return [
        req_pod({"cpu": "2000", "memory": "4000"}, node="node1"),
        req_pod({"cpu": "1000", "memory": "2000"}, node="node2"),
    ]


_SIDECAR_EXISTING = [
    make_pod(
        amounts({"cpu": "1000", "memory": "2000"}),
        sidecars=[amounts({"cpu": "1000", "memory": "2000"})],
        node="node1",
    ),
    req_pod({"cpu": "1000", "memory": "2000"}, node="node2"),
]

FIT_SCORE = [
    pytest.param(
        req_pod({"cpu": "3000", "memory": "5000"}),
        _two_nodes(),
        _existing(),
        _rtcr((0, 10), (100, 0)),
        True,
        [10, 32],
        id="test case for ScoringStrategy RequestedToCapacityRatio case1",
    ),
    pytest.param(
        req_pod({"cpu": "3000", "memory": "5000"}),
        _two_nodes(),
        _existing(),
        _rtcr((0, 0), (100, 10)),
        True,
        [95, 68],
        id="test case for ScoringStrategy RequestedToCapacityRatio case2",
    ),
    pytest.param(
        req_pod({"cpu": "1000", "memory": "2000"}),
        _two_nodes(),
        _existing(),
        ScoringStrategy(type="MostAllocated", resources=DEFAULT_RESOURCES),
        True,
        [67, 36],
        id="test case for ScoringStrategy MostAllocated",
    ),
    pytest.param(
        req_pod({"cpu": "1000", "memory": "2000"}),
        _two_nodes(),
        _existing(),
        ScoringStrategy(type="LeastAllocated", resources=DEFAULT_RESOURCES),
        True,
        [32, 63],
        id="test case for ScoringStrategy LeastAllocated",
    ),
    pytest.param(
        req_pod({"cpu": "3000", "memory": "5000"}),
        _two_nodes(),
        _existing(),
        _rtcr((0, 10), (100, 0)),
        False,
        [10, 32],
        id="test case for ScoringStrategy RequestedToCapacityRatio case1 if PreScore is not called",
    ),
    pytest.param(
        req_pod({"cpu": "1000", "memory": "2000"}),
        _two_nodes(),
        _existing(),
        ScoringStrategy(type="MostAllocated", resources=DEFAULT_RESOURCES),
        False,
        [67, 36],
        id="test case for ScoringStrategy MostAllocated if PreScore is not called",
    ),
    pytest.param(
        req_pod({"cpu": "1000", "memory": "2000"}),
        _two_nodes(),
        _existing(),
        ScoringStrategy(type="LeastAllocated", resources=DEFAULT_RESOURCES),
        False,
        [32, 63],
        id="test case for ScoringStrategy LeastAllocated if PreScore is not called",
    ),
    pytest.param(
        req_pod({"cpu": "1000", "memory": "2000"}),
        _two_nodes("4000"),
        _SIDECAR_EXISTING,
        ScoringStrategy(type="MostAllocated", resources=DEFAULT_RESOURCES),
        True,
        [67, 45],
        id="test case for ScoringStrategy MostAllocated with sidecar container",
    ),
    pytest.param(
        req_pod({"cpu": "1000", "memory": "2000"}),
        _two_nodes("4000"),
        _SIDECAR_EXISTING,
        ScoringStrategy(type="LeastAllocated", resources=DEFAULT_RESOURCES),
        True,
        [32, 55],
        id="test case for ScoringStrategy LeastAllocated with sidecar container",
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "strategy", "run_pre_score", "want"), FIT_SCORE
)
def test_fit_score(
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    strategy: ScoringStrategy,
    run_pre_score: bool,
    want: list[int],
) -> None:
    snap = Snapshot.from_objects(nodes, existing)
    plugin = new_plugin(NodeResourcesFitArgs(scoring_strategy=strategy), snap)
    state = fw.CycleState()
    got = []
    for node in nodes:
        if run_pre_score:
            assert plugin.pre_score(state, pod, snap.list()) is None
        got.append(plugin.score(state, pod, snap.get(node.name)))
    assert got == want


# --------------------------------------------------------------------------------------------
# Events and queueing hints
# --------------------------------------------------------------------------------------------


def test_events_to_register() -> None:
    # DRAExtendedResource off (its DeviceClass event: test_dra_extended_resources.py).
    gates = FeatureGates(overrides={"DRAExtendedResource": False})
    events = [e.event for e in Fit(None, Framework(features=gates)).events_to_register()]
    assert events == [
        fw.ClusterEvent(fw.EventResource.ASSIGNED_POD, fw.ActionType.DELETE),
        fw.ClusterEvent(
            fw.EventResource.NODE, fw.ActionType.ADD | fw.ActionType.UPDATE_NODE_ALLOCATABLE
        ),
        fw.ClusterEvent(fw.EventResource.ASSIGNED_POD, fw.ActionType.UPDATE_POD_SCALE_DOWN),
        fw.ClusterEvent(fw.EventResource.UNSCHEDULABLE_POD, fw.ActionType.UPDATE_POD_SCALE_DOWN),
    ]
    assert all(e.queueing_hint_fn is not None for e in new_plugin().events_to_register())


def _pod_hint(pod: Pod, old: object, new: object) -> fw.QueueingHint:
    plugin = new_plugin()
    if new is None:
        return plugin.is_schedulable_after_assigned_pod_delete(pod, old, new)
    return plugin.is_schedulable_after_pod_scale_down(pod, old, new)


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            req_pod({"cpu": "1"}, name="pod1"),
            req_pod({"cpu": "1"}, name="pod2", node="fake"),
            None,
            fw.QueueingHint.QUEUE,
            id="queue-on-other-pod-deleted",
        ),
        pytest.param(
            make_pod(),
            make_pod(),
            None,
            fw.QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-unscheduled-pod-deleted",
        ),
        pytest.param(
            req_pod({"cpu": "1"}, name="pod1", uid="uid0"),
            req_pod({"cpu": "2"}, name="pod2", uid="uid1"),
            req_pod({"cpu": "1"}, name="pod2", uid="uid1"),
            fw.QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-other-unscheduled-pod",
        ),
        pytest.param(
            req_pod({"cpu": "1"}, name="pod1", uid="pod1"),
            req_pod({"memory": "2"}, name="pod2", uid="pod2", node="fake"),
            req_pod({"memory": "1"}, name="pod2", uid="pod2", node="fake"),
            fw.QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-other-pod-unrelated-resource-scaled-down",
        ),
        pytest.param(
            req_pod({"cpu": "1"}, name="pod1", uid="pod1"),
            req_pod({"cpu": "2"}, name="pod2", uid="pod2", node="fake"),
            req_pod({"cpu": "1"}, name="pod2", uid="pod2", node="fake"),
            fw.QueueingHint.QUEUE,
            id="queue-on-other-pod-some-resource-scale-down",
        ),
        pytest.param(
            req_pod({"cpu": "1"}, name="pod1", uid="pod1"),
            req_pod({"cpu": "2"}, name="pod1", uid="pod1"),
            req_pod({"cpu": "1"}, name="pod1", uid="pod1"),
            fw.QueueingHint.QUEUE,
            id="queue-on-target-pod-some-resource-scale-down",
        ),
    ],
)
def test_is_schedulable_after_pod_change(
    pod: Pod, old: Pod, new: Pod | None, want: fw.QueueingHint
) -> None:
    assert _pod_hint(pod, old, new) == want


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param("not-a-pod", None, id="backoff-wrong-old-object"),
        pytest.param(None, "not-a-pod", id="backoff-wrong-new-object"),
    ],
)
def test_pod_hint_wrong_objects(old: object, new: object) -> None:
    # A hint that raises is read as Queue by the framework.
    with pytest.raises(TypeError):
        _pod_hint(make_pod(), old, new)


_POD_MEM2_A1 = make_pod(res(mem=2, a=1))

NODE_CHANGE = [
    pytest.param(
        make_pod(res(mem=2)),
        None,
        capacity_node(capacity={"memory": "1"}),
        fw.QueueingHint.QUEUE_SKIP,
        id="skip-queue-on-node-add-without-sufficient-resources",
    ),
    pytest.param(
        make_pod(res(a=1)),
        None,
        capacity_node(capacity={EXT_B: "1"}),
        fw.QueueingHint.QUEUE_SKIP,
        id="skip-queue-on-node-add-without-required-resource-type",
    ),
    pytest.param(
        _POD_MEM2_A1,
        None,
        capacity_node(capacity={"memory": "4", EXT_A: "2"}),
        fw.QueueingHint.QUEUE,
        id="queue-on-node-add-with-sufficient-resources",
    ),
    pytest.param(
        _POD_MEM2_A1,
        capacity_node(capacity={"memory": "2", EXT_A: "2"}),
        capacity_node(capacity={"memory": "2", EXT_A: "1", EXT_B: "2"}),
        fw.QueueingHint.QUEUE_SKIP,
        id="skip-queue-on-node-unrelated-changes",
    ),
    pytest.param(
        _POD_MEM2_A1,
        capacity_node(capacity={"memory": "2", EXT_A: "1"}),
        capacity_node(capacity={"memory": "2", EXT_A: "2"}),
        fw.QueueingHint.QUEUE,
        id="queue-on-pod-requested-resources-increase",
    ),
    pytest.param(
        _POD_MEM2_A1,
        capacity_node(capacity={"memory": "4", EXT_A: "2"}),
        capacity_node(capacity={"memory": "1", EXT_A: "2"}),
        fw.QueueingHint.QUEUE_SKIP,
        id="skip-queue-on-node-changes-from-suitable-to-unsuitable",
    ),
    pytest.param(
        _POD_MEM2_A1,
        capacity_node(capacity={"memory": "1", EXT_A: "2"}),
        capacity_node(capacity={"memory": "4", EXT_A: "2"}),
        fw.QueueingHint.QUEUE,
        id="queue-on-node-changes-from-unsuitable-to-suitable",
    ),
]


@pytest.mark.parametrize(("pod", "old", "new", "want"), NODE_CHANGE)
def test_is_schedulable_after_node_change(
    pod: Pod, old: Node | None, new: Node, want: fw.QueueingHint
) -> None:
    assert new_plugin().is_schedulable_after_node_change(pod, old, new) == want


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(None, "not-a-node", id="backoff-wrong-new-object"),
        pytest.param("not-a-node", make_node(), id="backoff-wrong-old-object"),
    ],
)
def test_node_hint_wrong_objects(old: object, new: object) -> None:
    with pytest.raises(TypeError):
        new_plugin().is_schedulable_after_node_change(make_pod(), old, new)


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(make_pod(), None, False, id="nil node"),
        pytest.param(
            req_pod({"cpu": "2"}),
            capacity_node(capacity={"cpu": "1"}),
            False,
            id="insufficient resource",
        ),
        pytest.param(
            req_pod({"cpu": "1"}),
            capacity_node(capacity={"cpu": "2"}),
            True,
            id="sufficient resource",
        ),
    ],
)
def test_is_fit(pod: Pod, node: Node | None, want: bool) -> None:
    assert is_fit(pod, node) is want


def _cap(**kw: str) -> Node:
    names = {"pods": "pods", "cpu": "cpu", "mem": "memory", "eph": "ephemeral-storage", "a": EXT_A}
    return capacity_node(capacity={names[k]: v for k, v in kw.items()})


@pytest.mark.parametrize(
    ("pod", "original", "modified", "want"),
    [
        pytest.param(
            make_pod(res()),
            _cap(pods="1", cpu="1", mem="1", eph="1", a="1"),
            _cap(pods="1", cpu="2", mem="2", eph="2", a="2"),
            False,
            id="no-requested-resources",
        ),
        pytest.param(
            make_pod(res()),
            _cap(pods="1", cpu="1", mem="1", eph="1", a="1"),
            _cap(pods="2", cpu="1", mem="1", eph="1", a="1"),
            True,
            id="no-requested-resources-pods-increased",
        ),
        pytest.param(
            make_pod(res(2, 2, 2, a=2)),
            _cap(cpu="1", mem="2", eph="3"),
            _cap(cpu="1", mem="2", eph="1"),
            False,
            id="scalar-resources-not-in-node",
        ),
        pytest.param(
            make_pod(res(2, 2, 2, a=2)),
            _cap(cpu="1", mem="2", eph="3", a="4"),
            _cap(cpu="1", mem="2", eph="1", a="1"),
            False,
            id="requested-resources-decreased",
        ),
        pytest.param(
            make_pod(res(2, 2, 2, a=2)),
            _cap(cpu="1", mem="2", eph="3", a="4"),
            _cap(cpu="3", mem="4", eph="3", a="4"),
            True,
            id="requested-resources-increased",
        ),
        pytest.param(
            make_pod(res(2, 2)),
            _cap(cpu="1", mem="2", eph="3", a="4"),
            _cap(cpu="1", mem="2", eph="1", a="1"),
            False,
            id="non-requested-resources-decreased",
        ),
        pytest.param(
            make_pod(res(2, 2)),
            _cap(cpu="1", mem="2", eph="3", a="4"),
            _cap(cpu="1", mem="2", eph="5", a="6"),
            False,
            id="non-requested-resources-increased",
        ),
    ],
)
def test_have_any_requested_resources_increased(
    pod: Pod, original: Node, modified: Node, want: bool
) -> None:
    assert have_any_requested_resources_increased(pod, original, modified) is want


# --------------------------------------------------------------------------------------------
# Args
# --------------------------------------------------------------------------------------------


def test_default_args() -> None:
    args = decode_args(NodeResourcesFitArgs, None, path="args")
    assert args.scoring_strategy.type == "LeastAllocated"
    assert args.scoring_strategy.resources == DEFAULT_RESOURCES


def test_weight_zero_defaults_to_one() -> None:
    args = decode_args(
        NodeResourcesFitArgs,
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}]}},
        path="args",
    )
    assert args.scoring_strategy.resources == (ResourceSpec(name="cpu", weight=1),)


@pytest.mark.parametrize(
    ("data", "want"),
    [
        pytest.param(
            {"scoringStrategy": {"type": "Foo"}},
            [
                'args.scoringStrategy.type: Unsupported value: "Foo": supported values: '
                '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
            ],
            id="unsupported strategy",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}],
                }
            },
            [
                "args.scoringStrategy.resources[0].weight: Invalid value: -1: "
                "resource weight of memory not in valid range (0, 100]"
            ],
            id="resource with negative weight",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 101}],
                }
            },
            [
                "args.scoringStrategy.resources[1].weight: Invalid value: 101: "
                "resource weight of cpu not in valid range (0, 100]"
            ],
            id="resource weight larger than MaxNodeScore",
        ),
        pytest.param(
            {"ignoredResourceGroups": ["example.com/aa"]},
            [
                'args.ignoredResourceGroups[0]: Invalid value: "example.com/aa": '
                "resource group name can't contain '/'"
            ],
            id="group with slash",
        ),
        pytest.param(
            {"ignoredResources": ["-bad"]},
            [
                'args.ignoredResources[0]: Invalid value: "-bad": name part must consist of '
                "alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
                "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ],
            id="bad ignored resource name",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 50, "score": 11}, {"utilization": 10, "score": 1}]
                    },
                }
            },
            [
                "args.scoringStrategy.shape[1].utilization: Invalid value: 10: "
                "values must be sorted in increasing order",
                "args.scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
            ],
            id="bad shape",
        ),
    ],
)
def test_args_validation(data: dict[str, object], want: list[str]) -> None:
    with pytest.raises(errors.ConfigError) as info:
        decode_args(NodeResourcesFitArgs, data, path="args")
    assert [str(i) for i in info.value.issues] == want


def test_invalid_args_rejected_by_plugin() -> None:
    bad = NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy(
            type="LeastAllocated", resources=(ResourceSpec(name="cpu", weight=101),)
        )
    )
    with pytest.raises(errors.ConfigError):
        new_plugin(bad)


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------


@pytest.mark.property
@given(
    cpu=st.integers(0, 20),
    mem=st.integers(0, 40),
    used_cpu=st.integers(0, 20),
    used_mem=st.integers(0, 40),
)
def test_filter_agrees_with_arithmetic(cpu: int, mem: int, used_cpu: int, used_mem: int) -> None:
    pod = make_pod(res(cpu, mem))
    node_info = _node_info([res(used_cpu, used_mem)], allocatable(10, 20, 32, 5, 20, 5))
    plugin = new_plugin()
    state = fw.CycleState()
    plugin.pre_filter(state, pod, [node_info])
    status = plugin.filter(state, pod, node_info)
    fits_now = (cpu == 0 or cpu <= 10 - used_cpu) and (mem == 0 or mem <= 20 - used_mem)
    assert (status is None) == fits_now
    if status is not None:
        unresolvable = cpu > 10 or mem > 20
        assert (status.code is UU) == unresolvable


@pytest.mark.property
@given(
    kind=st.sampled_from(["LeastAllocated", "MostAllocated"]),
    cpu=st.integers(0, 8000),
    mem=st.integers(0, 8000),
    used=st.integers(0, 8000),
)
def test_scores_in_range(kind: str, cpu: int, mem: int, used: int) -> None:
    nodes = [capacity_node("n", {"cpu": "4", "memory": "4000"})]
    snap = Snapshot.from_objects(nodes, [make_pod(res(used, used), node="n")])
    plugin = new_plugin(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(type=kind)), snap)
    state = fw.CycleState()
    pod = make_pod(res(cpu, mem))
    plugin.pre_score(state, pod, snap.list())
    assert 0 <= plugin.score(state, pod, snap.get("n")) <= fw.MAX_NODE_SCORE
