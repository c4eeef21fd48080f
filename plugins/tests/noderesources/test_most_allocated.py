"""Port of upstream noderesources/most_allocated_test.go."""

from __future__ import annotations

import pytest

from schedframe.objects import Node, Pod
from schedframe_plugins.noderesources.resource_allocation import ResourceSpec

from ._builders import EXTENDED_RES, capacity_node, make_pod, req_pod
from ._scoring import DEFAULT_RESOURCES, run_scores, specs, strategy

EXTENDED_SET = specs(("cpu", 1), ("memory", 1), (EXTENDED_RES, 1))
CPU_MEM = {"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}


def nodes(*caps: tuple[str, str]) -> list[Node]:
    return [
        capacity_node(f"node{i + 1}", {"cpu": cpu, "memory": mem})
        for i, (cpu, mem) in enumerate(caps)
    ]


def with_container(node: str = "") -> Pod:
    # st.MakePod().Container("container"): one container without requests.
    return make_pod({}, node=node)


CASES = [
    pytest.param(
        make_pod(),
        nodes(("4000", "10000"), ("4000", "10000")),
        [],
        DEFAULT_RESOURCES,
        [0, 0],
        id="nothing scheduled, nothing requested",
    ),
    pytest.param(
        req_pod(*CPU_MEM),
        nodes(("4000", "10000"), ("6000", "10000")),
        [],
        DEFAULT_RESOURCES,
        [62, 50],
        id="nothing scheduled, resources requested, differently sized nodes",
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
        [30, 42],
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
        [42, 55],
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        req_pod({"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"}),
        nodes(("5000", "10000"), ("10000", "9000")),
        [],
        DEFAULT_RESOURCES,
        [95, 75],
        id="resources requested equal node capacity",
    ),
    pytest.param(
        req_pod(*CPU_MEM),
        nodes(("4000", "10000"), ("6000", "10000")),
        [],
        specs(("memory", 2), ("cpu", 1)),
        [58, 50],
        id="nothing scheduled, resources requested, differently sized nodes (weighted)",
    ),
    pytest.param(
        with_container(),
        nodes(("250m", "1000Mi"), ("250m", "1000Mi")),
        [with_container("node1"), with_container("node1")],
        DEFAULT_RESOURCES,
        [80, 30],
        id="no resources requested, pods scheduled, nonzero request for resource",
    ),
    pytest.param(
        req_pod(*CPU_MEM),
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
        [50, 40],
        id="honor extended resource if the pod request",
    ),
    pytest.param(
        req_pod({"cpu": "3000", "memory": "4000"}, node="node1"),
        [
            capacity_node("node1", {"cpu": "6000", "memory": "10000"}),
            capacity_node("node2", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "4"}),
        ],
        [],
        specs((EXTENDED_RES, 2), ("cpu", 1), ("memory", 1)),
        [45, 45],
        id="if the node doesn't have a resource",
    ),
]


@pytest.mark.parametrize(("pod", "nodes_", "existing", "resources", "want"), CASES)
def test_most_allocated_scoring_strategy(
    pod: Pod,
    nodes_: list[Node],
    existing: list[Pod],
    resources: tuple[ResourceSpec, ...],
    want: list[int],
) -> None:
    assert run_scores(strategy("MostAllocated", resources), pod, nodes_, existing) == want
