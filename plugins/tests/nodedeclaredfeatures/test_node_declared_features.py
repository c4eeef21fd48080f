"""NodeDeclaredFeatures: upstream nodedeclaredfeatures_test.go cases, with v1.36's registry."""

from __future__ import annotations

from typing import Any

import pytest

from schedframe import framework as fw
from schedframe.features import FeatureGates
from schedframe.objects import Node, Pod, node_from_dict, pod_from_dict
from schedframe.runtime import Framework
from schedframe_plugins.nodedeclaredfeatures import (
    RESTART_ALL_CONTAINERS,
    USER_NAMESPACES_HOST_NETWORK,
    NodeDeclaredFeatures,
    infer_for_scheduling,
)


def pod(uid: str = "p", **spec: Any) -> Pod:
    body: dict[str, Any] = {"containers": [{"name": "c"}]}
    body.update(spec)
    return pod_from_dict({"metadata": {"name": uid, "uid": uid}, "spec": body})


def node(*declared: str) -> Node:
    return node_from_dict(
        {"metadata": {"name": "n"}, "status": {"declaredFeatures": list(declared)}}
    )


RESTART_ALL = pod(
    containers=[
        {
            "name": "c",
            "restartPolicy": "Always",
            "restartPolicyRules": [
                {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}
            ],
        }
    ]
)
HOST_NETWORK_USERNS = pod(hostNetwork=True, hostUsers=False)


def plugin(version: str = "1.36", **overrides: bool) -> NodeDeclaredFeatures:
    gates = FeatureGates(emulated_version=version, overrides=overrides)
    return NodeDeclaredFeatures(None, Framework(features=gates))


@pytest.mark.parametrize(
    ("p", "version", "expected"),
    [
        pytest.param(pod(), "1.36", frozenset(), id="plain pod needs nothing"),
        pytest.param(RESTART_ALL, "1.36", {RESTART_ALL_CONTAINERS}, id="restart all containers"),
        pytest.param(
            HOST_NETWORK_USERNS, "1.36", {USER_NAMESPACES_HOST_NETWORK}, id="host network userns"
        ),
        pytest.param(pod(hostNetwork=True), "1.36", frozenset(), id="host network alone"),
        pytest.param(pod(hostUsers=False), "1.36", frozenset(), id="user namespace alone"),
        pytest.param(RESTART_ALL, "1.35", frozenset(), id="1.35 registry infers nothing"),
    ],
)
def test_inference(p: Pod, version: str, expected: frozenset[str]) -> None:
    assert infer_for_scheduling(p, version) == expected


def test_pre_filter_skips_pods_without_requirements_and_when_disabled() -> None:
    status = plugin().pre_filter(fw.CycleState(), pod(), [])
    assert isinstance(status, fw.Status) and status.code is fw.Code.SKIP
    off = plugin(NodeDeclaredFeatures=False).pre_filter(fw.CycleState(), RESTART_ALL, [])
    assert isinstance(off, fw.Status) and off.code is fw.Code.SKIP


@pytest.mark.parametrize(
    ("p", "declared", "expected"),
    [
        pytest.param(RESTART_ALL, (RESTART_ALL_CONTAINERS,), None, id="node declares it"),
        pytest.param(
            RESTART_ALL,
            (),
            "node declared features check failed - unsatisfied requirements: "
            "RestartAllContainersOnContainerExits",
            id="node declares nothing",
        ),
        pytest.param(
            pod(
                hostNetwork=True,
                hostUsers=False,
                containers=[
                    {"name": "c", "restartPolicyRules": [{"action": "RestartAllContainers"}]}
                ],
            ),
            ("Other",),
            "node declared features check failed - unsatisfied requirements: "
            "RestartAllContainersOnContainerExits, UserNamespacesHostNetworkSupport",
            id="two missing, sorted",
        ),
    ],
)
def test_filter(p: Pod, declared: tuple[str, ...], expected: str | None) -> None:
    pl = plugin()
    state = fw.CycleState()
    assert pl.pre_filter(state, p, []) is None
    info = fw.NodeInfo()
    info.set_node(node(*declared))
    status = pl.filter(state, p, info)
    if expected is None:
        assert status is None
    else:
        assert status is not None
        assert status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (expected,)


def test_queueing_hints() -> None:
    pl = plugin()
    assert pl.is_schedulable_after_node_change(RESTART_ALL, None, node()) is fw.QueueingHint.QUEUE
    assert (
        pl.is_schedulable_after_node_change(RESTART_ALL, node("A"), node("A"))
        is fw.QueueingHint.QUEUE_SKIP
    )
    assert (
        pl.is_schedulable_after_node_change(RESTART_ALL, node(), node("A")) is fw.QueueingHint.QUEUE
    )
    other = pod(uid="other")
    assert (
        pl.is_schedulable_after_pod_update(RESTART_ALL, other, other) is fw.QueueingHint.QUEUE_SKIP
    )
    same = pod(uid="p")
    assert pl.is_schedulable_after_pod_update(same, same, same) is fw.QueueingHint.QUEUE_SKIP
    assert pl.is_schedulable_after_pod_update(same, same, RESTART_ALL) is fw.QueueingHint.QUEUE
    assert plugin(NodeDeclaredFeatures=False).events_to_register() == ()


def test_declared_features_update_is_its_own_node_event() -> None:
    from schedframe.scheduler._eventhandlers import node_scheduling_properties_change

    events = node_scheduling_properties_change(node("A"), node())
    assert [e.action_type for e in events] == [fw.ActionType.UPDATE_NODE_DECLARED_FEATURE]
