"""Tests of NodeResourcesBalancedAllocation: upstream balanced_allocation_test.go cases as data."""

from __future__ import annotations

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
    BalancedAllocation,
    NodeResourcesBalancedAllocationArgs,
    ResourceSpec,
)
from schedframe_plugins.noderesources.balanced_allocation import (
    balanced_change_scorer,
    balanced_resource_score,
    balanced_resource_scorer,
)

from ._builders import EXTENDED_RES, make_node_resources, make_pod, req_pod

CPU_AND_MEMORY = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})
CPU_ONLY = ({"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})


def node(name: str, cpu: int, mem: int, ext: int | None = None) -> Node:
    return make_node_resources(name, cpu, mem, {} if ext is None else {EXTENDED_RES: ext})


def plugin(
    snap: Snapshot,
    args: NodeResourcesBalancedAllocationArgs | None = None,
    version: str = "1.35",
) -> BalancedAllocation:
    gates = FeatureGates(emulated_version=version)
    return BalancedAllocation(args, Framework(snapshot=snap, features=gates))


# Upstream's cases (balanced_allocation_test.go). ``want`` is the v1.34/v1.35 score (the
# balance with the pod); ``want_136`` the v1.36 one, 50 + (50 + with - without) / 2, where
# ``without`` is the node's balance before the pod (worked out in each comment).
CASES = [
    # node1: cpu 3000/4000=.75, memory 5000/10000=.5, std .125 -> 87; node2: .5, .5 -> 100
    pytest.param(
        req_pod(*CPU_AND_MEMORY),
        [node("node1", 4000, 10000), node("node2", 6000, 10000)],
        [],
        [87, 100],
        # without the pod both nodes are empty (100): 50 + (50 - 13) / 2 = 68; 50 + 50 / 2 = 75
        [68, 75],
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    # node1: .6, .25 -> std .175 -> 82; node2: .6, .5 -> std .05 -> 95
    pytest.param(
        req_pod(*CPU_AND_MEMORY),
        [node("node1", 10000, 20000), node("node2", 10000, 20000)],
        [req_pod(*CPU_ONLY, node="node1"), req_pod(*CPU_AND_MEMORY, node="node2")],
        [82, 95],
        # without: node1 .3, 0 -> 85, 50 + 47 / 2 = 73; node2 .3, .25 -> 97, 50 + 48 / 2 = 74
        [73, 74],
        id="resources requested, pods scheduled with resources",
    ),
    # node1: .6, .25 -> 82; node2: .6, .2 -> std .2 -> 80
    pytest.param(
        req_pod(*CPU_AND_MEMORY),
        [node("node1", 10000, 20000), node("node2", 10000, 50000)],
        [req_pod(*CPU_ONLY, node="node1"), req_pod(*CPU_AND_MEMORY, node="node2")],
        [82, 80],
        # without: node1 85 -> 73; node2 .3, .1 -> 90, 50 + 40 / 2 = 70
        [73, 70],
        id="resources requested, pods scheduled with resources, differently sized nodes",
    ),
    # node1: cpu 6000/6000=1, memory 0 -> std .5 -> 50; node2: 1, .5 -> std .25 -> 75
    pytest.param(
        req_pod(*CPU_ONLY),
        [node("node1", 6000, 10000), node("node2", 6000, 10000)],
        [req_pod(*CPU_ONLY, node="node1"), req_pod(*CPU_AND_MEMORY, node="node2")],
        [50, 75],
        # without: node1 .5, 0 -> 75, 50 + 25 / 2 = 62; node2 .5, .5 -> 100, 50 + 25 / 2 = 62
        [62, 62],
        id="requested resources at node capacity",
    ),
    # Nodes without allocatable give no fraction at all: std 0 -> 100.
    pytest.param(
        req_pod(*CPU_AND_MEMORY),
        [node("node1", 0, 0), node("node2", 0, 0)],
        [req_pod(*CPU_ONLY, node="node1"), req_pod(*CPU_AND_MEMORY, node="node2")],
        [100, 100],
        [75, 75],
        id="zero node resources, pods scheduled with resources",
    ),
    # Pod-level resources (spec.resources) replace the containers' requests, for the pod
    # scored and for the pods already on a node: the cases above with the requests moved.
    pytest.param(
        make_pod({"cpu": 100, "memory": 100}, pod_level={"cpu": 3000, "memory": 5000}),
        [node("node1", 4000, 10000), node("node2", 6000, 10000)],
        [],
        [87, 100],
        [68, 75],
        id="pod-level requests, differently sized nodes",
    ),
    pytest.param(
        make_pod({"cpu": 1000, "memory": 5000}, pod_level={"cpu": 3000}),
        [node("node1", 4000, 10000), node("node2", 6000, 10000)],
        [],
        [87, 100],
        [68, 75],
        id="pod-level cpu request, container memory request",
    ),
    pytest.param(
        req_pod(*CPU_AND_MEMORY),
        [node("node1", 10000, 20000), node("node2", 10000, 20000)],
        [
            req_pod(*CPU_ONLY, node="node1"),
            make_pod(
                {"cpu": 1, "memory": 1}, pod_level={"cpu": 3000, "memory": 5000}, node="node2"
            ),
        ],
        [82, 95],
        [73, 74],
        id="a scheduled pod's pod-level requests count on its node",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "want", "want_136"), CASES)
@pytest.mark.parametrize("run_pre_score", [True, False], ids=["", "PreScore not called"])
@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36"])
def test_node_resources_balanced_allocation(
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    want: list[int],
    want_136: list[int],
    run_pre_score: bool,
    version: str,
) -> None:
    snap = Snapshot.from_objects(nodes, existing)
    p = plugin(snap, version=version)
    state = fw.CycleState()
    if run_pre_score:
        assert p.pre_score(state, pod, snap.list()) is None
    expected = want_136 if version == "1.36" else want
    assert [p.score(state, pod, snap.get(n.name)) for n in nodes] == expected
    # The batch forms give the same scores.
    assert p.score_many(state, pod, snap.list()) == expected


def test_three_resources_use_standard_deviation() -> None:
    # cpu .75, memory .5, extended .5 -> mean 7/12, std sqrt(1/72) ~= .1179 -> 88.
    nodes = [node("node1", 4000, 10000, ext=4)]
    snap = Snapshot.from_objects(nodes)
    args = NodeResourcesBalancedAllocationArgs(
        resources=(
            ResourceSpec(name="cpu"),
            ResourceSpec(name="memory"),
            ResourceSpec(name=EXTENDED_RES),
        )
    )
    pod = req_pod({"cpu": "3", "memory": "5000", EXTENDED_RES: "2"})
    p = plugin(snap, args)
    state = fw.CycleState()
    p.pre_score(state, pod, snap.list())
    assert p.score(state, pod, snap.get("node1")) == 88
    # v1.36: the empty node's balance is 100, so 50 + (50 + 88 - 100) / 2 = 69.
    p = plugin(snap, args, version="1.36")
    state = fw.CycleState()
    p.pre_score(state, pod, snap.list())
    assert p.score(state, pod, snap.get("node1")) == 69


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(make_pod(), id="nothing scheduled, nothing requested"),
        pytest.param(make_pod({}), id="best-effort pod with a container"),
    ],
)
def test_best_effort_pod_is_skipped(pod: Pod) -> None:
    nodes = [node("node1", 4000, 10000), node("node2", 4000, 10000)]
    snap = Snapshot.from_objects(nodes)
    p = plugin(snap)
    state = fw.CycleState()
    status = p.pre_score(state, pod, snap.list())
    assert status is not None and status.code is fw.Code.SKIP
    # Score without PreScore gives best-effort pods 0, as upstream does.
    assert p.score(fw.CycleState(), pod, snap.get("node1")) == 0


def test_balanced_resource_scorer_uses_requests_with_the_pod() -> None:
    assert balanced_resource_scorer([5, 5], [0, 0], [10, 10]) == 100
    assert balanced_resource_scorer([10, 0], [0, 0], [10, 10]) == 50
    assert balanced_resource_scorer([20, 0], [0, 0], [10, 10]) == 50  # fractions capped at 1


@pytest.mark.parametrize(
    ("requested", "allocated", "allocatable", "want"),
    [
        pytest.param([5, 5], [0, 0], [10, 10], 75, id="balanced stays balanced"),
        pytest.param([5, 5], [5, 0], [10, 10], 87, id="pod evens the node out: 50 + 75 / 2"),
        pytest.param([10, 0], [0, 0], [10, 10], 50, id="pod unbalances an empty node"),
        pytest.param([10, 0], [5, 5], [10, 10], 50, id="balanced node made lopsided"),
        # with 51, without 100: 50 + (50 + 51 - 100) / 2 = 50 + 1 / 2 = 50 (integer division)
        pytest.param([100, 2], [0, 0], [100, 100], 50, id="odd difference rounds down"),
    ],
)
def test_balanced_change_scorer(
    requested: list[int], allocated: list[int], allocatable: list[int], want: int
) -> None:
    assert balanced_change_scorer(requested, allocated, allocatable) == want


@pytest.mark.parametrize(
    ("data", "want"),
    [
        pytest.param(
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]},
            ['args.resources[1].name: Duplicate value: "cpu"'],
            id="duplicated resource name",
        ),
        pytest.param(
            {"resources": [{"name": "cpu", "weight": 2}]},
            ["args.resources[0].weight: Invalid value: 2: must be 1"],
            id="weight is not 1",
        ),
    ],
)
def test_args_validation(data: dict[str, object], want: list[str]) -> None:
    with pytest.raises(errors.ConfigError) as info:
        decode_args(NodeResourcesBalancedAllocationArgs, data, path="args")
    assert [str(i) for i in info.value.issues] == want


def test_default_args() -> None:
    args = decode_args(NodeResourcesBalancedAllocationArgs, {}, path="args")
    assert args.resources == (ResourceSpec(name="cpu"), ResourceSpec(name="memory"))


@pytest.mark.property
@given(
    st.lists(
        st.tuples(st.integers(0, 100), st.integers(0, 100), st.integers(0, 100)),
        min_size=1,
        max_size=5,
    )
)
def test_scores_within_range(columns: list[tuple[int, int, int]]) -> None:
    allocated = [min(a, c) for a, _, c in columns]
    requested = [a + r for a, (_, r, _) in zip(allocated, columns, strict=True)]
    allocatable = [c for _, _, c in columns]
    assert 0 <= balanced_resource_score(requested, allocatable) <= 100
    assert balanced_resource_scorer(requested, allocated, allocatable) == balanced_resource_score(
        requested, allocatable
    )
    # The balance with the pod is at least 50 (two fractions differ by at most 1, more
    # resources spread less), so the v1.36 score lies in [50, 100].
    assert 50 <= balanced_change_scorer(requested, allocated, allocatable) <= 100
