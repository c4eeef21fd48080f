"""Upstream ``podtopologyspread/plugin_test.go``: queueing hints, events, args and defaults."""

from __future__ import annotations

import pytest

from schedframe import framework as fw
from schedframe.errors import ConfigError
from schedframe.objects import Node, Pod, Toleration
from schedframe_plugins.podtopologyspread import (
    SYSTEM_DEFAULT_CONSTRAINTS,
    PodTopologySpread,
    PodTopologySpreadArgs,
)

from ._builders import (
    BAR,
    DNS,
    FOO,
    HONOR,
    SA,
    UNSCHEDULABLE_TAINTS,
    cluster,
    node,
    pod,
    spread,
)

Q = fw.QueueingHint.QUEUE
SKIP = fw.QueueingHint.QUEUE_SKIP

ZONE_FOO = [spread(1, "zone", DNS, FOO)]
ZONE_NODE_FOO = [spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]
ZONE_FOO_NODE_BAR = [spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]


def _plugin() -> PodTopologySpread:
    _, handle = cluster([])
    return PodTopologySpread(PodTopologySpreadArgs(defaulting_type="List"), handle)


NODE_CHANGE_CASES = [
    pytest.param(
        pod("p", spreads=ZONE_FOO),
        node("node-a", {"zone": "zone1"}),
        node("node-a", {"zone": "zone2"}),
        Q,
        id="node updates label which matches topologyKey",
    ),
    pytest.param(
        pod("p", spreads=ZONE_FOO),
        node("node-a", {"foo": "bar1"}),
        node("node-a", {"foo": "bar2"}),
        SKIP,
        id="node that doesn't match topologySpreadConstraints updates non-related label",
    ),
    pytest.param(
        pod("p", spreads=ZONE_NODE_FOO),
        node("node-a", {"zone": "zone1", "node": "node1", "foo": "bar"}),
        node("node-a", {"zone": "zone1", "node": "node1"}),
        # Upstream expects Queue here although no topology key changed; the newest upstream
        # hint answers QueueSkip for it (only topology keys and taints matter).
        SKIP,
        id="node that match topologySpreadConstraints adds non-related label",
    ),
    pytest.param(
        pod("p", spreads=ZONE_FOO),
        None,
        node("node-a", {"foo": "bar"}),
        SKIP,
        id="create node with non-related labels",
    ),
    pytest.param(
        pod("p", spreads=ZONE_FOO),
        None,
        node("node-a", {"zone": "zone1"}),
        Q,
        id="create node with related labels",
    ),
    pytest.param(
        pod("p", spreads=ZONE_FOO),
        node("node-a", {"foo": "bar"}),
        None,
        SKIP,
        id="delete node with non-related labels",
    ),
    pytest.param(
        pod("p", spreads=ZONE_FOO),
        node("node-a", {"zone": "zone1"}),
        None,
        Q,
        id="delete node with related labels",
    ),
    pytest.param(
        pod("p", spreads=ZONE_NODE_FOO),
        None,
        node("node-a", {"zone": "zone1"}),
        SKIP,
        id="add node with related labels that only match one of topologySpreadConstraints",
    ),
    pytest.param(
        pod("p", spreads=ZONE_NODE_FOO),
        None,
        node("node-a", {"zone": "zone1", "node": "node1"}),
        Q,
        id="add node with related labels that match all topologySpreadConstraints",
    ),
    pytest.param(
        pod("p", spreads=ZONE_NODE_FOO),
        node("node-a", {"zone": "zone1"}),
        node("node-a", {"zone": "zone1"}),
        SKIP,
        id="update node with related labels that only match one of topologySpreadConstraints",
    ),
    pytest.param(
        pod("p", spreads=ZONE_NODE_FOO),
        node("node-a", {"zone": "zone1", "node": "node1"}),
        node("node-a", {"zone": "zone1", "node": "node2"}),
        Q,
        id="update node with related labels that match all topologySpreadConstraints",
    ),
    # Taint changes (newest upstream hint; no upstream table case in the version ported).
    pytest.param(
        pod("p", spreads=ZONE_FOO),
        node("node-a", {"zone": "zone1"}),
        node("node-a", {"zone": "zone1"}, UNSCHEDULABLE_TAINTS),
        Q,
        id="schedframe: taints of a node with the topology keys change",
    ),
    pytest.param(
        pod("p", spreads=ZONE_FOO),
        node("node-a", {"foo": ""}),
        node("node-a", {"foo": ""}, UNSCHEDULABLE_TAINTS),
        SKIP,
        id="schedframe: taints of a node without the topology keys change",
    ),
]


@pytest.mark.parametrize(("p", "old", "new", "want"), NODE_CHANGE_CASES)
def test_is_schedulable_after_node_change(
    p: Pod, old: Node | None, new: Node | None, want: fw.QueueingHint
) -> None:
    assert _plugin().is_schedulable_after_node_change(p, old, new) is want


def _assigned(labels: dict[str, str] | None = None, ns: str = "") -> Pod:
    return pod("", ns=ns, node="fake-node", labels=labels)


def _unassigned(labels: dict[str, str]) -> Pod:
    return pod("", labels=labels)


FOO_POD = pod("p", labels={"foo": ""}, spreads=ZONE_FOO)
MULTI_POD = pod("p", labels={"foo": ""}, spreads=ZONE_FOO_NODE_BAR)

POD_CHANGE_CASES = [
    pytest.param(
        FOO_POD,
        None,
        _assigned(labels={"foo": ""}),
        Q,
        id="add pod with labels match topologySpreadConstraints selector",
    ),
    pytest.param(FOO_POD, None, _unassigned({"foo": ""}), SKIP, id="add un-scheduled pod"),
    pytest.param(
        FOO_POD,
        _unassigned({"bar": ""}),
        _unassigned({"foo": ""}),
        SKIP,
        id="update un-scheduled pod",
    ),
    pytest.param(FOO_POD, _unassigned({"foo": ""}), None, SKIP, id="delete un-scheduled pod"),
    pytest.param(
        FOO_POD,
        None,
        _assigned(ns="fake-namespace", labels={"foo": ""}),
        SKIP,
        id="add pod with different namespace",
    ),
    pytest.param(
        FOO_POD,
        None,
        _assigned(labels={"bar": ""}),
        SKIP,
        id="add pod with labels don't match topologySpreadConstraints selector",
    ),
    pytest.param(
        FOO_POD,
        _assigned(labels={"foo": ""}),
        None,
        Q,
        id="delete pod with labels that match topologySpreadConstraints selector",
    ),
    pytest.param(
        FOO_POD,
        _assigned(labels={"bar": ""}),
        None,
        SKIP,
        id="delete pod with labels that don't match topologySpreadConstraints selector",
    ),
    pytest.param(
        FOO_POD,
        _assigned(labels={"foo": "", "bar": "bar1"}),
        _assigned(labels={"foo": "", "bar": "bar2"}),
        SKIP,
        id="update pod's non-related label",
    ),
    pytest.param(
        FOO_POD,
        _assigned(),
        _assigned(labels={"foo": ""}),
        Q,
        id="add pod's label that matches topologySpreadConstraints selector",
    ),
    pytest.param(
        FOO_POD,
        _assigned(labels={"foo": ""}),
        _assigned(),
        Q,
        id="delete pod label that matches topologySpreadConstraints selector",
    ),
    pytest.param(
        FOO_POD,
        _assigned(labels={"foo": "foo1"}),
        _assigned(labels={"foo": "foo2"}),
        SKIP,
        id="change pod's label that matches topologySpreadConstraints selector",
    ),
    pytest.param(
        FOO_POD,
        _assigned(labels={"foo": "", "bar": "bar1"}),
        _assigned(labels={"foo": "", "bar": "bar2"}),
        SKIP,
        id="change pod's label that doesn't match topologySpreadConstraints selector",
    ),
    pytest.param(
        MULTI_POD,
        _assigned(labels={"foo": ""}),
        _assigned(labels={"foo": "", "bar": "bar2"}),
        Q,
        id="add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints",
    ),
    pytest.param(
        MULTI_POD,
        _assigned(labels={"foo": ""}),
        _assigned(labels={"foo": "", "baz": ""}),
        SKIP,
        id="change pod's label that doesn't match topologySpreadConstraints selector with multi topologySpreadConstraints",
    ),
    pytest.param(
        MULTI_POD,
        _assigned(labels={"foo": "", "bar": ""}),
        _assigned(labels={"foo": "", "bar": "bar2"}),
        SKIP,
        id="change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints",
    ),
]


@pytest.mark.parametrize(("p", "old", "new", "want"), POD_CHANGE_CASES)
def test_is_schedulable_after_pod_change(
    p: Pod, old: Pod | None, new: Pod | None, want: fw.QueueingHint
) -> None:
    assert _plugin().is_schedulable_after_pod_change(p, old, new) is want


def test_target_pod_new_toleration_queues_only_with_taints_policy_honor() -> None:
    """The rejected pod got a toleration: that can help only a ``nodeTaintsPolicy: Honor``
    constraint (newest upstream hint)."""
    toleration = Toleration(key="node.kubernetes.io/unschedulable", operator="Exists")
    honor = pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO, None, None, HONOR)])
    honor_new = pod(
        "p",
        labels={"foo": ""},
        tolerations=[toleration],
        spreads=[spread(1, "zone", DNS, FOO, None, None, HONOR)],
    )
    assert _plugin().is_schedulable_after_pod_change(honor, honor, honor_new) is Q
    ignore = pod("p", labels={"foo": ""}, spreads=ZONE_FOO)
    ignore_new = pod("p", labels={"foo": ""}, tolerations=[toleration], spreads=ZONE_FOO)
    assert _plugin().is_schedulable_after_pod_change(ignore, ignore, ignore_new) is SKIP


def test_hints_reject_wrong_object_types() -> None:
    """A non-nil object of the wrong type is an error; the framework reads it as Queue."""
    plugin = _plugin()
    with pytest.raises(TypeError):
        plugin.is_schedulable_after_node_change(FOO_POD, None, "not-a-node")
    with pytest.raises(TypeError):
        plugin.is_schedulable_after_pod_change(FOO_POD, "not-a-pod", FOO_POD)


def test_events_to_register() -> None:
    a = fw.ActionType
    events = _plugin().events_to_register()
    assert [e.event for e in events] == [
        fw.ClusterEvent(
            fw.EventResource.POD, a.ADD | a.UPDATE_POD_LABEL | a.UPDATE_POD_TOLERATION | a.DELETE
        ),
        fw.ClusterEvent(
            fw.EventResource.NODE, a.ADD | a.DELETE | a.UPDATE_NODE_LABEL | a.UPDATE_NODE_TAINT
        ),
    ]
    assert all(e.queueing_hint_fn is not None for e in events)


def test_system_default_constraints() -> None:
    """``defaultingType: System`` uses hostname (maxSkew 3) and zone (maxSkew 5), ScheduleAnyway."""
    assert [
        (c.max_skew, c.topology_key, c.when_unsatisfiable) for c in SYSTEM_DEFAULT_CONSTRAINTS
    ] == [
        (3, "kubernetes.io/hostname", SA),
        (5, "topology.kubernetes.io/zone", SA),
    ]
    assert PodTopologySpreadArgs().defaulting_type == "System"


def test_invalid_args_refused_at_construction() -> None:
    _, handle = cluster([])
    args = PodTopologySpreadArgs(default_constraints=(spread(1, "zone", SA, None),))
    with pytest.raises(ConfigError, match="when .defaultConstraints are not empty"):
        PodTopologySpread(args, handle)
