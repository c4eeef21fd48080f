"""Port of upstream noderesources/least_allocated_test.go."""

from __future__ import annotations

import pytest

from schedframe.objects import Node, Pod
from schedframe_plugins.noderesources.least_allocated import least_resource_scorer
from schedframe_plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    ResourceSpec,
)

from ._builders import EXTENDED_RES, capacity_node, make_pod, req_pod
from ._scoring import DEFAULT_RESOURCES, run_scores, specs, strategy

EXTENDED_SET = specs(("cpu", 1), ("memory", 1), (EXTENDED_RES, 1))
CPU_MEM = {"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}


def nodes(*caps: tuple[str, str]) -> list[Node]:
    return [
        capacity_node(f"node{i + 1}", {"cpu": cpu, "memory": mem})
        for i, (cpu, mem) in enumerate(caps)
    ]


CASES = [
    pytest.param(
        make_pod(),
        nodes(("4000", "10000"), ("4000", "10000")),
        [],
        DEFAULT_RESOURCES,
        [100, 100],
        id="nothing scheduled, nothing requested",
    ),
    pytest.param(
        req_pod(*CPU_MEM),
        nodes(("4000", "10000"), ("6000", "10000")),
        [],
        DEFAULT_RESOURCES,
        [37, 50],
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        make_pod(),
        nodes(("4000", "10000"), ("4000", "10000")),
        [
            make_pod(node="node1"),
            make_pod(node="node1"),
            make_pod(node="node2"),
            make_pod(node="node2"),
        ],
        DEFAULT_RESOURCES,
        [100, 100],
        id="no resources requested, pods scheduled",
    ),
    pytest.param(
        make_pod(),
        nodes(("10000", "20000"), ("10000", "20000")),
        [
            req_pod({"cpu": "3000", "memory": "0"}, node="node1"),
            req_pod({"cpu": "3000", "memory": "0"}, node="node1"),
            req_pod({"cpu": "3000", "memory": "0"}, node="node2"),
            req_pod({"cpu": "3000", "memory": "5000"}, node="node2"),
        ],
        DEFAULT_RESOURCES,
        [70, 57],
        id="no resources requested, pods scheduled with resources",
    ),
    pytest.param(
        req_pod(*CPU_MEM),
        nodes(("10000", "20000"), ("10000", "20000")),
        [
            req_pod({"cpu": "3000", "memory": "0"}, node="node1"),
            req_pod({"cpu": "3000", "memory": "5000"}, node="node2"),
        ],
        DEFAULT_RESOURCES,
        [57, 45],
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        req_pod(*CPU_MEM),
        nodes(("10000", "20000"), ("10000", "50000")),
        [
            req_pod({"cpu": "3000", "memory": "0"}, node="node1"),
            req_pod({"cpu": "3000", "memory": "5000"}, node="node2"),
        ],
        DEFAULT_RESOURCES,
        [57, 60],
        id="resources requested, pods scheduled with resources, differently sized nodes",
    ),
    pytest.param(
        req_pod({"cpu": "3000", "memory": "0"}),
        nodes(("4000", "10000"), ("4000", "10000")),
        [
            req_pod({"cpu": "3000", "memory": "0"}, node="node1"),
            req_pod({"cpu": "3000", "memory": "5000"}, node="node2"),
        ],
        DEFAULT_RESOURCES,
        [50, 25],
        id="requested resources exceed node capacity",
    ),
    pytest.param(
        make_pod(),
        [capacity_node("node1"), capacity_node("node2")],
        [
            req_pod({"cpu": "3000", "memory": "0"}, node="node1"),
            req_pod({"cpu": "3000", "memory": "5000"}, node="node2"),
        ],
        DEFAULT_RESOURCES,
        [0, 0],
        id="zero node resources, pods scheduled with resources",
    ),
    pytest.param(
        req_pod(*CPU_MEM, node="node1"),
        nodes(("4000", "10000"), ("6000", "10000")),
        [],
        specs(("memory", 2), ("cpu", 1)),
        [41, 50],
        id="nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
    ),
    pytest.param(
        req_pod(*CPU_MEM, node="node1"),
        [
            capacity_node("node1", {"cpu": "6000", "memory": "10000"}),
            capacity_node("node2", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "4"}),
        ],
        [],
        EXTENDED_SET,
        [50, 50],
        id="bypass extended resource if the pod does not request",
    ),
    pytest.param(
        req_pod({"cpu": "3000", "memory": "5000", EXTENDED_RES: "2"}, node="node1"),
        [
            capacity_node("node1", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "4"}),
            capacity_node("node2", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "10"}),
        ],
        [],
        EXTENDED_SET,
        [50, 60],
        id="honor extended resource if the pod requests",
    ),
    pytest.param(
        req_pod({"cpu": "3000", "memory": "4000"}, node="node1"),
        [
            capacity_node("node1", {"cpu": "6000", "memory": "10000"}),
            capacity_node("node2", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "4"}),
        ],
        [],
        specs((EXTENDED_RES, 2), ("cpu", 1), ("memory", 1)),
        [55, 55],
        id="if the node doesn't have a resource",
    ),
]


@pytest.mark.parametrize(("pod", "nodes_", "existing", "resources", "want"), CASES)
def test_least_allocated_scoring_strategy(
    pod: Pod,
    nodes_: list[Node],
    existing: list[Pod],
    resources: tuple[ResourceSpec, ...],
    want: list[int],
) -> None:
    assert run_scores(strategy("LeastAllocated", resources), pod, nodes_, existing) == want


def test_resources_not_set_is_an_error() -> None:
    # Upstream "Resources not set, pods scheduled with error": v1 defaulting fills an empty
    # list, so only the engine itself can be given none; it fails like upstream's Score.
    scorer = ResourceAllocationScorer("LeastAllocated", least_resource_scorer(()), ())
    node = capacity_node("node1", {"cpu": "4000", "memory": "10000"})
    from schedframe import framework as fw

    with pytest.raises(ValueError, match="resources not found"):
        scorer.score(fw.NodeInfo(node), [])
