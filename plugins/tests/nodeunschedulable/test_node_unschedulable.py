"""Port of upstream nodeunschedulable/node_unschedulable_test.go."""

from __future__ import annotations

import pytest

from schedframe import framework as fw
from schedframe.objects import Node, NodeSpec, ObjectMeta, Pod, PodSpec, Taint, Toleration
from schedframe.runtime import Framework
from schedframe_plugins.nodeunschedulable import ERR_REASON_UNSCHEDULABLE, NodeUnschedulable

UNSCHEDULABLE_KEY = "node.kubernetes.io/unschedulable"


def node(unschedulable: bool, *taints: Taint) -> Node:
    return Node(
        metadata=ObjectMeta(name="n"), spec=NodeSpec(unschedulable=unschedulable, taints=taints)
    )


def pod(uid: str = "", *tolerations: Toleration) -> Pod:
    return Pod(
        metadata=ObjectMeta(name="p", namespace="default", uid=uid),
        spec=PodSpec(tolerations=tolerations),
    )


def toleration(key: str) -> Toleration:
    """Upstream st.MakePod().Toleration(key): Exists, NoSchedule."""
    return Toleration(key=key, operator="Exists", effect="NoSchedule")


def plugin() -> NodeUnschedulable:
    return NodeUnschedulable(None, Framework())


@pytest.mark.parametrize(
    ("p", "n", "want"),
    [
        pytest.param(
            pod(),
            node(True),
            (fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE),
            id="Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        pytest.param(pod(), node(False), None, id="Schedule pod to normal node"),
        pytest.param(
            pod("", Toleration(key=UNSCHEDULABLE_KEY, effect="NoSchedule")),
            node(True),
            None,
            id="Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
        ),
    ],
)
def test_node_unschedulable(p: Pod, n: Node, want: tuple[object, ...] | None) -> None:
    status = plugin().filter(fw.CycleState(), p, fw.NodeInfo(n))
    assert (None if status is None else (status.code, *status.reasons)) == want


NOT_READY = Taint(key="node.kubernetes.io/not-ready", effect="NoExecute")


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            None,
            node(True),
            fw.QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-unschedulable-node-added",
        ),
        pytest.param(
            None, node(False), fw.QueueingHint.QUEUE, id="queue-on-schedulable-node-added"
        ),
        pytest.param(
            node(True),
            node(True, NOT_READY),
            fw.QueueingHint.QUEUE_SKIP,
            id="skip-unrelated-change-unschedulable-true",
        ),
        pytest.param(
            node(False),
            node(False, NOT_READY),
            fw.QueueingHint.QUEUE_SKIP,
            id="skip-unrelated-change-unschedulable-false",
        ),
        pytest.param(
            node(True), node(False), fw.QueueingHint.QUEUE, id="queue-on-unschedulable-field-change"
        ),
    ],
)
def test_is_schedulable_after_node_change(
    old: Node | None, new: Node, want: fw.QueueingHint
) -> None:
    assert plugin().is_schedulable_after_node_change(pod(), old, new) == want


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(None, "not-a-node", id="error-wrong-new-object"),
        pytest.param("not-a-node", node(True), id="error-wrong-old-object"),
    ],
)
def test_node_hint_wrong_objects(old: object, new: object) -> None:
    with pytest.raises(TypeError):
        plugin().is_schedulable_after_node_change(pod(), old, new)


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            pod("different-uid"),
            pod("different-uid", toleration(UNSCHEDULABLE_KEY)),
            fw.QueueingHint.QUEUE_SKIP,
            id="skip-different-pod-update",
        ),
        pytest.param(
            pod("uid"),
            pod("uid", toleration(UNSCHEDULABLE_KEY)),
            fw.QueueingHint.QUEUE,
            id="queue-when-the-unsched-pod-gets-toleration",
        ),
        pytest.param(
            pod("uid"),
            pod("uid", toleration("unrelated-key")),
            fw.QueueingHint.QUEUE_SKIP,
            id="skip-when-the-unsched-pod-gets-unrelated-toleration",
        ),
    ],
)
def test_is_schedulable_after_pod_toleration_change(
    old: Pod, new: Pod, want: fw.QueueingHint
) -> None:
    assert plugin().is_schedulable_after_pod_toleration_change(pod("uid"), old, new) == want


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(None, "not-a-pod", id="error-wrong-new-object"),
        pytest.param("not-a-pod", pod(), id="error-wrong-old-object"),
    ],
)
def test_pod_hint_wrong_objects(old: object, new: object) -> None:
    with pytest.raises(TypeError):
        plugin().is_schedulable_after_pod_toleration_change(pod(), old, new)


def test_events_to_register() -> None:
    assert [e.event for e in plugin().events_to_register()] == [
        fw.ClusterEvent(fw.EventResource.NODE, fw.ActionType.ADD | fw.ActionType.UPDATE_NODE_TAINT),
        fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.UPDATE_POD_TOLERATION),
    ]
