"""preCheckForNode / AdmissionCheck: which pool pods a node event moves without queueing
hints (upstream eventhandlers.go)."""

from __future__ import annotations

import pytest

from schedframe.framework import NodeInfo
from schedframe.objects import (
    Affinity,
    Container,
    ContainerPort,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodSpec,
    Taint,
    Toleration,
)
from schedframe.queue import admission_check, pre_check_for_node


def _node(*, cpu: int = 1000, pods: int = 10, taints: tuple[Taint, ...] = ()) -> Node:
    alloc = {"cpu": cpu, "memory": 1 << 30, "pods": pods}
    return Node(
        metadata=ObjectMeta(name="n1", labels={"zone": "a"}),
        spec=NodeSpec(taints=taints),
        status=NodeStatus(capacity=dict(alloc), allocatable=dict(alloc)),
    )


def _pod(
    name: str = "p",
    *,
    cpu: int = 100,
    host_port: int = 0,
    node_name: str = "",
    node_selector: dict[str, str] | None = None,
    zone_in: tuple[str, ...] | None = None,
    tolerations: tuple[Toleration, ...] = (),
    node: str = "",
) -> Pod:
    affinity = None
    if zone_in is not None:
        term = NodeSelectorTerm(
            match_expressions=(NodeSelectorRequirement(key="zone", operator="In", values=zone_in),)
        )
        affinity = Affinity(
            node_affinity=NodeAffinity(required=NodeSelector(node_selector_terms=(term,)))
        )
    ports = (ContainerPort(container_port=80, host_port=host_port),) if host_port else ()
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", uid=name),
        spec=PodSpec(
            node_name=node_name or node,
            node_selector=dict(node_selector or {}),
            affinity=affinity,
            tolerations=tolerations,
            containers=(Container(name="c", requests={"cpu": cpu}, ports=ports),),
        ),
    )


NO_SCHEDULE = Taint(key="k", value="v", effect="NoSchedule")
NO_EXECUTE = Taint(key="k", value="v", effect="NoExecute")
RUNNING = _pod("running", cpu=600, host_port=8080, node="n1")


@pytest.mark.parametrize(
    ("node", "pod", "want"),
    [
        pytest.param(_node(), _pod(), True, id="fits"),
        pytest.param(_node(), _pod(cpu=500), False, id="insufficient cpu"),
        pytest.param(_node(pods=1), _pod(), False, id="too many pods"),
        pytest.param(_node(), _pod(host_port=8080), False, id="host port taken"),
        pytest.param(_node(), _pod(host_port=9090), True, id="other host port"),
        pytest.param(_node(), _pod(node_name="n2"), False, id="other nodeName"),
        pytest.param(_node(), _pod(node_selector={"zone": "b"}), False, id="nodeSelector"),
        pytest.param(_node(), _pod(zone_in=("a",)), True, id="required affinity matches"),
        pytest.param(_node(), _pod(zone_in=("b",)), False, id="required affinity does not"),
        pytest.param(_node(taints=(NO_SCHEDULE,)), _pod(), False, id="untolerated NoSchedule"),
        pytest.param(
            _node(taints=(NO_SCHEDULE,)),
            _pod(tolerations=(Toleration(key="k", operator="Exists"),)),
            True,
            id="tolerated NoSchedule",
        ),
        pytest.param(_node(taints=(NO_EXECUTE,)), _pod(), True, id="NoExecute is not checked"),
    ],
)
def test_pre_check_for_node(node: Node, pod: Pod, want: bool) -> None:
    info = NodeInfo(node, [RUNNING])
    assert pre_check_for_node(info)(pod) is want
    if node.spec.taints == ():
        assert admission_check(pod, info) is want
