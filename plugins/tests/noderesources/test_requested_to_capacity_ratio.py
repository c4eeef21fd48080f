"""Port of upstream noderesources/requested_to_capacity_ratio_test.go."""

from __future__ import annotations

import pytest

from schedframe.objects import Node, Pod
from schedframe_plugins.noderesources.requested_to_capacity_ratio import broken_linear_function

from ._builders import capacity_node, make_node_resources, make_pod, req_pod
from ._scoring import DEFAULT_RESOURCES, run_scores, specs, strategy

SHAPE = [(0, 10), (100, 0)]
MEM = 10000 * 1024 * 1024


def nodes(*caps: tuple[str, str]) -> list[Node]:
    return [
        capacity_node(f"node{i + 1}", {"cpu": cpu, "memory": mem})
        for i, (cpu, mem) in enumerate(caps)
    ]


@pytest.mark.parametrize(
    ("pod", "nodes_", "existing", "want"),
    [
        pytest.param(
            make_pod(),
            nodes(("4000", "10000"), ("4000", "10000")),
            [make_pod(node="node1"), make_pod(node="node1")],
            [100, 100],
            id="nothing scheduled, nothing requested (default - least requested nodes have priority)",
        ),
        pytest.param(
            req_pod({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}),
            nodes(("4000", "10000"), ("6000", "10000")),
            [make_pod(node="node1"), make_pod(node="node1")],
            [38, 50],
            id="nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have priority)",
        ),
        pytest.param(
            make_pod(),
            nodes(("4000", "10000"), ("6000", "10000")),
            [
                req_pod({"cpu": "3000", "memory": "5000"}, node="node1"),
                req_pod({"cpu": "3000", "memory": "5000"}, node="node2"),
            ],
            [38, 50],
            id="no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
        ),
    ],
)
def test_requested_to_capacity_ratio_scoring_strategy(
    pod: Pod, nodes_: list[Node], existing: list[Pod], want: list[int]
) -> None:
    scoring = strategy("RequestedToCapacityRatio", DEFAULT_RESOURCES, SHAPE)
    assert run_scores(scoring, pod, nodes_, existing) == want


@pytest.mark.parametrize(
    ("points", "assertions"),
    [
        pytest.param(
            [(10, 1), (90, 9)],
            [
                (-10, 1),
                (0, 1),
                (9, 1),
                (10, 1),
                (15, 1),
                (19, 1),
                (20, 2),
                (89, 8),
                (90, 9),
                (99, 9),
                (100, 9),
                (110, 9),
            ],
            id="case_0",
        ),
        pytest.param(
            [(0, 2), (40, 10), (100, 0)],
            [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
            id="case_1",
        ),
        pytest.param(
            [(0, 2), (40, 2), (100, 2)],
            [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)],
            id="case_2",
        ),
    ],
)
def test_broken_linear_function(
    points: list[tuple[int, int]], assertions: list[tuple[int, int]]
) -> None:
    function = broken_linear_function(points)
    for p, expected in assertions:
        assert function(p) == expected, p


def _single_nodes() -> list[Node]:
    return [
        make_node_resources("node1", 4000, MEM, {"intel.com/foo": 8}),
        make_node_resources("node2", 4000, MEM, {"intel.com/foo": 4}),
    ]


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param(make_pod(), [], [0, 0], id="nothing scheduled, nothing requested"),
        pytest.param(
            req_pod({"intel.com/foo": "2"}),
            [make_pod()],
            [2, 5],
            id="resources requested, pods scheduled with less resources",
        ),
        pytest.param(
            req_pod({"intel.com/foo": "2"}),
            [req_pod({"intel.com/foo": "2"}, node="node2")],
            [2, 10],
            id="resources requested, pods scheduled with resources, on node with existing pod running ",
        ),
        pytest.param(
            req_pod({"intel.com/foo": "4"}),
            [make_pod()],
            [5, 10],
            id="resources requested, pods scheduled with more resources",
        ),
    ],
)
def test_resource_bin_packing_single_extended(
    pod: Pod, existing: list[Pod], want: list[int]
) -> None:
    scoring = strategy("RequestedToCapacityRatio", specs(("intel.com/foo", 1)), [(0, 0), (100, 1)])
    assert run_scores(scoring, pod, _single_nodes(), existing) == want


def _multiple_nodes() -> list[Node]:
    return [
        make_node_resources("node1", 4000, MEM, {"intel.com/foo": 8, "intel.com/bar": 4}),
        make_node_resources("node2", 4000, MEM, {"intel.com/foo": 4, "intel.com/bar": 8}),
    ]


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param(make_pod(), [], [0, 0], id="nothing scheduled, nothing requested"),
        pytest.param(
            req_pod({"intel.com/foo": "2", "intel.com/bar": "2"}),
            [make_pod()],
            [4, 3],
            id="resources requested, pods scheduled with less resources",
        ),
        pytest.param(
            req_pod({"intel.com/foo": "2", "intel.com/bar": "2"}),
            [req_pod({"intel.com/foo": "4", "intel.com/bar": "2"}, node="node2")],
            [4, 7],
            id="resources requested, pods scheduled with resources, on node with existing pod running ",
        ),
        pytest.param(
            req_pod({"intel.com/foo": "4", "intel.com/bar": "2"}),
            [make_pod()],
            [5, 5],
            id="resources requested, pods scheduled with more resources",
        ),
    ],
)
def test_resource_bin_packing_multiple_extended(
    pod: Pod, existing: list[Pod], want: list[int]
) -> None:
    scoring = strategy(
        "RequestedToCapacityRatio",
        specs(("intel.com/foo", 3), ("intel.com/bar", 5)),
        [(0, 0), (100, 1)],
    )
    assert run_scores(scoring, pod, _multiple_nodes(), existing) == want
