"""Port of upstream nodename/node_name_test.go."""

from __future__ import annotations

import pytest

from schedframe import framework as fw
from schedframe.objects import Node, ObjectMeta, Pod, PodSpec
from schedframe.runtime import Framework
from schedframe_plugins.nodename import ERR_REASON, NodeName


def pod(node: str = "") -> Pod:
    return Pod(metadata=ObjectMeta(name="p", namespace="default"), spec=PodSpec(node_name=node))


def node(name: str = "") -> Node:
    return Node(metadata=ObjectMeta(name=name))


@pytest.mark.parametrize(
    ("p", "n", "want"),
    [
        pytest.param(pod(), node(), None, id="no host specified"),
        pytest.param(pod("foo"), node("foo"), None, id="host matches"),
        pytest.param(
            pod("bar"),
            node("foo"),
            (fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON),
            id="host doesn't match",
        ),
    ],
)
def test_node_name(p: Pod, n: Node, want: tuple[object, ...] | None) -> None:
    status = NodeName(None, Framework()).filter(fw.CycleState(), p, fw.NodeInfo(n))
    assert (None if status is None else (status.code, *status.reasons)) == want


def test_events_to_register() -> None:
    events = NodeName(None, Framework()).events_to_register()
    assert [(e.event, e.queueing_hint_fn) for e in events] == [
        (fw.ClusterEvent(fw.EventResource.NODE, fw.ActionType.ADD), None)
    ]
