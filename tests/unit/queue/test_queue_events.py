"""How pod and node updates map to cluster events (upstream events_test.go) and isPodUpdated."""

from __future__ import annotations

import attrs
import pytest

from schedframe.framework import ActionType, ClusterEvent, EventResource
from schedframe.objects import (
    Container,
    Node,
    NodeCondition,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodSpec,
    PodStatus,
    Taint,
    Toleration,
)
from schedframe.queue import (
    EVENT_FORCE_ACTIVATE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    is_pod_updated,
    node_scheduling_properties_change,
    pod_scheduling_properties_change,
)

A = ActionType
UNSCHED, ASSIGNED = EventResource.UNSCHEDULABLE_POD, EventResource.ASSIGNED_POD


def pod(
    *,
    labels: dict[str, str] | None = None,
    cpu: int = 1000,
    memory: int | None = None,
    gates: tuple[str, ...] = (),
    tolerations: int = 0,
    node: str = "",
) -> Pod:
    requests = {"cpu": cpu} if memory is None else {"cpu": cpu, "memory": memory}
    return Pod(
        metadata=ObjectMeta(name="p", namespace="ns", uid="u", labels=labels or {}),
        spec=PodSpec(
            node_name=node,
            containers=(Container(name="c", requests=requests),),
            scheduling_gates=gates,
            tolerations=tuple(Toleration(key=f"k{i}") for i in range(tolerations)),
        ),
    )


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(pod(), pod(), [(UNSCHED, A.UPDATE)], id="no change: general Update"),
        pytest.param(pod(), pod(labels={"a": "b"}), [(UNSCHED, A.UPDATE_POD_LABEL)], id="labels"),
        pytest.param(pod(cpu=1000), pod(cpu=500), [(UNSCHED, A.UPDATE_POD_SCALE_DOWN)], id="cpu scaled down"),
        pytest.param(pod(cpu=500), pod(cpu=1000), [(UNSCHED, A.UPDATE)], id="cpu scaled up"),
        pytest.param(pod(memory=10), pod(), [(UNSCHED, A.UPDATE_POD_SCALE_DOWN)], id="request removed"),
        pytest.param(pod(gates=("g",)), pod(), [(UNSCHED, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)], id="gates eliminated"),
        pytest.param(pod(gates=("g", "h")), pod(gates=("g",)), [(UNSCHED, A.UPDATE)], id="one gate removed"),
        pytest.param(pod(), pod(tolerations=1), [(UNSCHED, A.UPDATE_POD_TOLERATION)], id="toleration added"),
        pytest.param(
            pod(gates=("g",), cpu=2),
            pod(labels={"x": "y"}, cpu=1, tolerations=1),
            [(UNSCHED, a) for a in (A.UPDATE_POD_LABEL, A.UPDATE_POD_SCALE_DOWN, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, A.UPDATE_POD_TOLERATION)],
            id="all, in upstream order",
        ),
        pytest.param(pod(node="n"), pod(node="n", labels={"a": "b"}), [(ASSIGNED, A.UPDATE_POD_LABEL)], id="assigned pod"),
    ],
)  # fmt: skip
def test_pod_scheduling_properties_change(
    old: Pod, new: Pod, want: list[tuple[EventResource, ActionType]]
) -> None:
    assert pod_scheduling_properties_change(new, old) == [ClusterEvent(r, a) for r, a in want]


def node(
    *,
    unschedulable: bool = False,
    cpu: int = 4000,
    labels: dict[str, str] | None = None,
    taints: tuple[Taint, ...] = (),
    ready: str = "True",
    reason: str = "",
    annotations: dict[str, str] | None = None,
) -> Node:
    return Node(
        metadata=ObjectMeta(name="n", labels=labels or {}, annotations=annotations or {}),
        spec=NodeSpec(unschedulable=unschedulable, taints=taints),
        status=NodeStatus(
            allocatable={"cpu": cpu},
            conditions=(NodeCondition(type="Ready", status=ready, reason=reason),),
        ),
    )


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(node(), node(), [], id="no change"),
        pytest.param(node(unschedulable=True), node(), [A.UPDATE_NODE_TAINT], id="became schedulable"),
        pytest.param(node(), node(unschedulable=True), [], id="became unschedulable"),
        pytest.param(node(), node(cpu=8000), [A.UPDATE_NODE_ALLOCATABLE], id="allocatable"),
        pytest.param(node(), node(labels={"z": "1"}), [A.UPDATE_NODE_LABEL], id="labels"),
        pytest.param(node(taints=(Taint(key="k", effect="NoSchedule"),)), node(), [A.UPDATE_NODE_TAINT], id="taints"),
        pytest.param(node(ready="False"), node(), [A.UPDATE_NODE_CONDITION], id="condition status"),
        pytest.param(node(reason="a"), node(reason="b"), [], id="condition reason only"),
        pytest.param(node(), node(annotations={"a": "b"}), [A.UPDATE_NODE_ANNOTATION], id="annotations"),
        pytest.param(
            node(unschedulable=True, taints=(Taint(key="k", effect="NoSchedule"),)),
            node(),
            [A.UPDATE_NODE_TAINT, A.UPDATE_NODE_TAINT],
            id="unschedulable and taints",
        ),
    ],
)  # fmt: skip
def test_node_scheduling_properties_change(old: Node, new: Node, want: list[ActionType]) -> None:
    got = node_scheduling_properties_change(new, old)
    assert got == [ClusterEvent(EventResource.NODE, a) for a in want]


def test_is_pod_updated_ignores_status_and_resource_version() -> None:
    base = pod()
    assert not is_pod_updated(base, base)
    status_only = attrs.evolve(base, status=PodStatus(nominated_node_name="n1", phase="Pending"))
    assert not is_pod_updated(base, status_only)
    rv = attrs.evolve(base, metadata=attrs.evolve(base.metadata, resource_version="42"))
    assert not is_pod_updated(base, rv)
    assert is_pod_updated(base, pod(labels={"a": "b"}))
    annotated = attrs.evolve(base, metadata=attrs.evolve(base.metadata, annotations={"a": "b"}))
    assert is_pod_updated(base, annotated)


def test_special_events() -> None:
    assert EVENT_UNSCHEDULABLE_TIMEOUT.is_wildcard() and EVENT_FORCE_ACTIVATE.is_wildcard()
    assert EVENT_UNSCHEDULABLE_TIMEOUT.label() == "UnschedulableTimeout"
    assert EVENT_FORCE_ACTIVATE.label() == "ForceActivate"
    assert EVENT_UNSCHEDULABLE_TIMEOUT != EVENT_FORCE_ACTIVATE


_NODE, _POD, _ALL_RES = EventResource.NODE, EventResource.POD, EventResource.WILDCARD


@pytest.mark.parametrize(
    ("registered", "incoming", "want"),
    [
        pytest.param((_ALL_RES, A.ALL), (_POD, A.UPDATE_POD_LABEL), True, id="wildcard registration"),
        pytest.param((_NODE, A.ADD), (_NODE, A.ADD), True, id="same resource and action"),
        pytest.param((_NODE, A.UPDATE), (_NODE, A.UPDATE_NODE_LABEL), True, id="incoming more specific"),
        pytest.param((_NODE, A.UPDATE_NODE_LABEL), (_NODE, A.UPDATE), False, id="incoming less specific"),
        pytest.param((_POD, A.UPDATE_POD_TOLERATION), (UNSCHED, A.UPDATE), False, id="general pod update, specific registration"),
        pytest.param((_POD, A.UPDATE), (UNSCHED, A.UPDATE), True, id="general pod update, general registration"),
        pytest.param((_POD, A.ALL), (ASSIGNED, A.UPDATE), True, id="All covers the general update"),
        pytest.param((_POD, A.ADD | A.UPDATE_POD_LABEL), (UNSCHED, A.UPDATE), False, id="a union narrower than Update"),
        pytest.param((_POD, A.UPDATE_POD_LABEL), (ASSIGNED, A.UPDATE_POD_LABEL), True, id="Pod covers AssignedPod"),
        pytest.param((_NODE, A.ADD), (_POD, A.ADD), False, id="different resource"),
        pytest.param((_NODE, A.ADD), (_NODE, A.DELETE), False, id="different action"),
        pytest.param((_NODE, A.ADD), (_ALL_RES, A.ALL), False, id="incoming wildcard, specific registration"),
    ],
)  # fmt: skip
def test_cluster_event_matches(
    registered: tuple[EventResource, ActionType],
    incoming: tuple[EventResource, ActionType],
    want: bool,
) -> None:
    """Upstream TestMatchClusterEvents: the incoming action must be no wider than the registered."""
    assert ClusterEvent(*registered).matches(ClusterEvent(*incoming)) is want
