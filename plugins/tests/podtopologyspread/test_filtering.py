"""Upstream ``podtopologyspread/filtering_test.go``: PreFilter state, AddPod/RemovePod, Filter.

Upstream's state is compared through what Filter relies on: per hard constraint, the resolved
constraint, the matching-pod count of every eligible topology value, and the two critical
paths (normalised like upstream's ``criticalPaths.sort`` so equal counts compare in name order).
Cases with Services (default constraints take their selector from them) are in
``test_default_constraints.py``; cases with a feature gate switched off are not ported:
schedframe runs with the features' default (on).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.objects import LabelSelector, LabelSelectorRequirement, Node, Pod, Toleration
from schedframe_plugins.podtopologyspread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PodTopologySpread,
    PodTopologySpreadArgs,
)
from schedframe_plugins.podtopologyspread.common import SpreadConstraint
from schedframe_plugins.podtopologyspread.filtering import PRE_FILTER_STATE_KEY

from ._builders import (
    BAR,
    DNS,
    FOO,
    HONOR,
    IGNORE,
    SA,
    UNSCHEDULABLE_TAINTS,
    cluster,
    labels_sel,
    node,
    pod,
    spread,
    zn,
)

MAX_INT32 = 2**31 - 1
Paths = tuple[tuple[str, int], tuple[str, int]]
Expected = list[tuple[SpreadConstraint, dict[str, int], Paths]]


def C(
    max_skew: int,
    key: str,
    selector: LabelSelector | None,
    *,
    min_domains: int = 1,
    aff: str = HONOR,
    taints: str = IGNORE,
) -> SpreadConstraint:
    """An expected resolved constraint (upstream ``topologySpreadConstraint``)."""
    return SpreadConstraint(
        max_skew=max_skew,
        topology_key=key,
        selector=selector,
        min_domains=min_domains,
        node_affinity_policy=aff,
        node_taints_policy=taints,
    )


def _norm(paths: Paths) -> Paths:
    # Upstream criticalPaths.sort: with equal counts, order the values by name.
    (v0, n0), (v1, n1) = paths
    if n0 == n1 and v0 > v1:
        v0, v1 = v1, v0
    return ((v0, n0), (v1, n1))


def _plugin(snapshot_handle: fw.Handle) -> PodTopologySpread:
    return PodTopologySpread(PodTopologySpreadArgs(defaulting_type="List"), snapshot_handle)


def _state_of(state: fw.CycleState) -> Expected:
    s = state[PRE_FILTER_STATE_KEY]
    return [
        (c, dict(m), _norm(p.as_tuple()))
        for c, m, p in zip(s.constraints, s.tp_value_to_match_num, s.critical_paths, strict=True)
    ]


def _expect(expected: Expected) -> Expected:
    return [(c, m, _norm(p)) for c, m, p in expected]


NODES_AB_XY = [
    zn("node-a", "zone1"),
    zn("node-b", "zone1"),
    zn("node-x", "zone2"),
    zn("node-y", "zone2"),
]
FOO_PODS_A2_B1_Y2 = [
    pod("p-a1", node="node-a", labels={"foo": ""}),
    pod("p-a2", node="node-a", labels={"foo": ""}),
    pod("p-b1", node="node-b", labels={"foo": ""}),
    pod("p-y1", node="node-y", labels={"foo": ""}),
    pod("p-y2", node="node-y", labels={"foo": ""}),
]
FOO_PODS_A2_B1_Y4 = [
    *FOO_PODS_A2_B1_Y2,
    pod("p-y3", node="node-y", labels={"foo": ""}),
    pod("p-y4", node="node-y", labels={"foo": ""}),
]
FOO_A_PODS = [
    pod("p-a1", node="node-a", labels={"foo": "a"}),
    pod("p-a2", node="node-a", labels={"foo": "a"}),
    pod("p-b1", node="node-b", labels={"foo": "a"}),
    pod("p-y1", node="node-y", labels={"foo": "a"}),
    pod("p-y2", node="node-y", labels={"foo": "a"}),
]
POLICY_NODES = [
    node("node-a", {"node": "node-a", "foo": ""}),
    node("node-b", {"node": "node-b", "foo": ""}),
    node("node-c", {"node": "node-c", "bar": ""}),
]
POLICY_PODS = [
    pod("p-a", node="node-a", labels={"bar": ""}),
    pod("p-b", node="node-b", labels={"bar": ""}),
    pod("p-c", node="node-b", labels={"bar": ""}),
    pod("p-d", node="node-c"),
]
TAINT_NODES = [
    node("node-a", {"node": "node-a"}),
    node("node-b", {"node": "node-b"}),
    node("node-c", {"node": "node-c", "bar": ""}, UNSCHEDULABLE_TAINTS),
]


def _sel(*reqs: tuple[str, str, Sequence[str]]) -> LabelSelector:
    return LabelSelector(
        match_expressions=tuple(
            LabelSelectorRequirement(key=k, operator=op, values=tuple(v)) for k, op, v in reqs
        )
    )


PRE_FILTER_STATE_CASES = [
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(5, "zone", DNS, labels_sel(foo="bar"))]),
        NODES_AB_XY,
        [],
        [
            (
                C(5, "zone", labels_sel(foo="bar")),
                {"zone1": 0, "zone2": 0},
                (("zone1", 0), ("zone2", 0)),
            )
        ],
        id="clean cluster with one spreadConstraint",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        NODES_AB_XY,
        FOO_PODS_A2_B1_Y2,
        [(C(1, "zone", FOO), {"zone1": 3, "zone2": 2}, (("zone2", 2), ("zone1", 3)))],
        id="normal case with one spreadConstraint",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, None)]),
        NODES_AB_XY,
        FOO_PODS_A2_B1_Y2,
        [(C(1, "zone", None), {"zone1": 0, "zone2": 0}, (("zone2", 0), ("zone1", 0)))],
        id="normal case with null label selector",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        [*NODES_AB_XY, zn("node-o", "zone3"), zn("node-p", "zone3")],
        FOO_PODS_A2_B1_Y2,
        [
            (
                C(1, "zone", FOO),
                {"zone1": 3, "zone2": 2, "zone3": 0},
                (("zone3", 0), ("zone2", 2)),
            )
        ],
        id="normal case with one spreadConstraint, on a 3-zone cluster",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        NODES_AB_XY,
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-a2", ns="ns1", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-y1", ns="ns2", node="node-y", labels={"foo": ""}),
            pod("p-y2", node="node-y", labels={"foo": ""}),
        ],
        [(C(1, "zone", FOO), {"zone1": 2, "zone2": 1}, (("zone2", 1), ("zone1", 2)))],
        id="namespace mismatch doesn't count",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)],
        ),
        NODES_AB_XY,
        FOO_PODS_A2_B1_Y4,
        [
            (C(1, "zone", FOO), {"zone1": 3, "zone2": 4}, (("zone1", 3), ("zone2", 4))),
            (
                C(1, "node", FOO),
                {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4},
                (("node-x", 0), ("node-b", 1)),
            ),
        ],
        id="normal case with two spreadConstraints",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            spreads=[
                spread(1, "zone", SA, FOO),
                spread(1, "zone", DNS, FOO),
                spread(1, "node", SA, FOO),
                spread(1, "node", DNS, FOO),
            ],
        ),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        FOO_PODS_A2_B1_Y4,
        [
            (C(1, "zone", FOO), {"zone1": 3, "zone2": 4}, (("zone1", 3), ("zone2", 4))),
            (
                C(1, "node", FOO),
                {"node-a": 2, "node-b": 1, "node-y": 4},
                (("node-b", 1), ("node-a", 2)),
            ),
        ],
        id="soft spreadConstraints should be bypassed",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": "", "bar": ""},
            spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)],
        ),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [
            pod("p-a", node="node-a", labels={"foo": ""}),
            pod("p-b", node="node-b", labels={"bar": ""}),
        ],
        [
            (C(1, "zone", FOO), {"zone1": 1, "zone2": 0}, (("zone2", 0), ("zone1", 1))),
            (
                C(1, "node", BAR),
                {"node-a": 0, "node-b": 1, "node-y": 0},
                (("node-a", 0), ("node-y", 0)),
            ),
        ],
        id="different labelSelectors - simple version",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": "", "bar": ""},
            spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)],
        ),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-a2", node="node-a", labels={"foo": "", "bar": ""}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
            pod("p-y2", node="node-y", labels={"foo": "", "bar": ""}),
            pod("p-y3", node="node-y", labels={"foo": ""}),
            pod("p-y4", node="node-y", labels={"foo": "", "bar": ""}),
        ],
        [
            (C(1, "zone", FOO), {"zone1": 3, "zone2": 4}, (("zone1", 3), ("zone2", 4))),
            (
                C(1, "node", BAR),
                {"node-a": 1, "node-b": 0, "node-y": 2},
                (("node-b", 0), ("node-a", 1)),
            ),
        ],
        id="different labelSelectors - complex pods",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            affinity_not_in=("node", ["node-x"]),
            spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)],
        ),
        NODES_AB_XY,
        FOO_PODS_A2_B1_Y4,
        [
            (C(1, "zone", FOO), {"zone1": 3, "zone2": 4}, (("zone1", 3), ("zone2", 4))),
            (
                C(1, "node", FOO),
                {"node-a": 2, "node-b": 1, "node-y": 4},
                (("node-b", 1), ("node-a", 2)),
            ),
        ],
        id="two spreadConstraints, and with podAffinity",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)],
        ),
        NODES_AB_XY,
        FOO_PODS_A2_B1_Y4,
        [
            (C(1, "zone", FOO), {"zone1": 3, "zone2": 4}, (("zone1", 3), ("zone2", 4))),
            (
                C(1, "node", FOO),
                {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4},
                (("node-x", 0), ("node-b", 1)),
            ),
        ],
        id="TpKeyToDomainsNum is calculated when MinDomains is enabled",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            node_selector={"foo": ""},
            spreads=[spread(1, "node", DNS, BAR)],
        ),
        POLICY_NODES,
        POLICY_PODS,
        [(C(1, "node", BAR), {"node-a": 1, "node-b": 2}, (("node-a", 1), ("node-b", 2)))],
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            node_selector={"foo": ""},
            spreads=[spread(1, "node", DNS, BAR, None, IGNORE)],
        ),
        POLICY_NODES,
        POLICY_PODS,
        [
            (
                C(1, "node", BAR, aff=IGNORE),
                {"node-a": 1, "node-b": 2, "node-c": 0},
                (("node-c", 0), ("node-a", 1)),
            )
        ],
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            affinity_in=("foo", [""]),
            spreads=[spread(1, "node", DNS, BAR)],
        ),
        POLICY_NODES,
        [
            pod("p-a", node="node-a", labels={"bar": ""}),
            pod("p-c", node="node-b", labels={"bar": ""}),
            pod("p-d", node="node-b", labels={"bar": ""}),
            pod("p-e", node="node-c"),
        ],
        [(C(1, "node", BAR), {"node-a": 1, "node-b": 2}, (("node-a", 1), ("node-b", 2)))],
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            affinity_in=("foo", [""]),
            spreads=[spread(1, "node", DNS, BAR, None, IGNORE)],
        ),
        POLICY_NODES,
        POLICY_PODS,
        [
            (
                C(1, "node", BAR, aff=IGNORE),
                {"node-a": 1, "node-b": 2, "node-c": 0},
                (("node-c", 0), ("node-a", 1)),
            )
        ],
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "node", DNS, BAR)]),
        TAINT_NODES,
        POLICY_PODS,
        [
            (
                C(1, "node", BAR),
                {"node-a": 1, "node-b": 2, "node-c": 0},
                (("node-c", 0), ("node-a", 1)),
            )
        ],
        id="NodeTaintsPolicy ignored",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "node", DNS, BAR, None, None, HONOR)]),
        TAINT_NODES,
        POLICY_PODS,
        [
            (
                C(1, "node", BAR, taints=HONOR),
                {"node-a": 1, "node-b": 2},
                (("node-a", 1), ("node-b", 2)),
            )
        ],
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            tolerations=[Toleration(key="node.kubernetes.io/unschedulable", operator="Exists")],
            spreads=[spread(1, "node", DNS, BAR, None, None, HONOR)],
        ),
        TAINT_NODES,
        POLICY_PODS,
        [
            (
                C(1, "node", BAR, taints=HONOR),
                {"node-a": 1, "node-b": 2, "node-c": 0},
                (("node-c", 0), ("node-a", 1)),
            )
        ],
        id="NodeTaintsPolicy honored with tolerated taints",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            node_selector={"foo": ""},
            spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO, None, IGNORE)],
        ),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", foo=""),
        ],
        [
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-b2", node="node-b", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"foo": ""}),
        ],
        [
            (C(1, "zone", FOO), {"zone1": 0, "zone2": 1}, (("zone1", 0), ("zone2", 1))),
            (
                C(1, "node", FOO, aff=IGNORE),
                {"node-a": 0, "node-b": 2, "node-x": 1},
                (("node-a", 0), ("node-x", 1)),
            ),
        ],
        id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            spreads=[spread(1, "zone", DNS, FOO, None, None, HONOR), spread(1, "node", DNS, FOO)],
        ),
        [
            zn("node-a", "zone1", foo=""),
            node("node-b", {"zone": "zone1", "node": "node-b"}, UNSCHEDULABLE_TAINTS),
            zn("node-x", "zone2", foo=""),
        ],
        [
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-b2", node="node-b", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"foo": ""}),
        ],
        [
            (
                C(1, "zone", FOO, taints=HONOR),
                {"zone1": 0, "zone2": 1},
                (("zone1", 0), ("zone2", 1)),
            ),
            (
                C(1, "node", FOO),
                {"node-a": 0, "node-b": 2, "node-x": 1},
                (("node-a", 0), ("node-x", 1)),
            ),
        ],
        id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            node_selector={"foo": ""},
            spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)],
        ),
        [
            zn("node-a", "zone1"),
            node("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}, UNSCHEDULABLE_TAINTS),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2"),
        ],
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-a2", node="node-a", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
        ],
        [
            (C(1, "zone", FOO), {"zone1": 0, "zone2": 1}, (("zone1", 0), ("zone2", 1))),
            (C(1, "node", FOO), {"node-b": 0, "node-x": 1}, (("node-b", 0), ("node-x", 1))),
        ],
        id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            node_selector={"foo": ""},
            spreads=[
                spread(1, "zone", DNS, FOO, None, IGNORE),
                spread(1, "node", DNS, FOO, None, None, HONOR),
            ],
        ),
        [
            zn("node-a", "zone1"),
            node("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}, UNSCHEDULABLE_TAINTS),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2", foo=""),
        ],
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-a2", node="node-a", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"foo": ""}),
            pod("p-x2", node="node-x", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
        ],
        [
            (
                C(1, "zone", FOO, aff=IGNORE),
                {"zone1": 2, "zone2": 3},
                (("zone1", 2), ("zone2", 3)),
            ),
            (
                C(1, "node", FOO, taints=HONOR),
                {"node-x": 2, "node-y": 1},
                (("node-y", 1), ("node-x", 2)),
            ),
        ],
        id="two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": "", "bar": "a"},
            spreads=[spread(1, "zone", DNS, FOO, match_label_keys=["bar"])],
        ),
        NODES_AB_XY,
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-a2", node="node-a", labels={"foo": "", "bar": "a"}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": "", "bar": "a"}),
            pod("p-y2", node="node-y", labels={"bar": ""}),
        ],
        [
            (
                C(1, "zone", _sel(("bar", "In", ["a"]), ("foo", "Exists", []))),
                {"zone1": 1, "zone2": 1},
                (("zone2", 1), ("zone1", 1)),
            )
        ],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": "a"},
            spreads=[spread(1, "zone", DNS, LabelSelector(), match_label_keys=["foo"])],
        ),
        NODES_AB_XY,
        FOO_A_PODS,
        [
            (
                C(1, "zone", _sel(("foo", "In", ["a"]))),
                {"zone1": 3, "zone2": 2},
                (("zone2", 2), ("zone1", 3)),
            )
        ],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            spreads=[spread(1, "zone", DNS, None, match_label_keys=["bar"])],
        ),
        NODES_AB_XY,
        FOO_A_PODS,
        [(C(1, "zone", None), {"zone1": 0, "zone2": 0}, (("zone2", 0), ("zone1", 0)))],
        id="key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
    ),
    pytest.param(
        pod(
            "p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO, match_label_keys=["bar"])]
        ),
        NODES_AB_XY,
        FOO_A_PODS,
        [(C(1, "zone", FOO), {"zone1": 3, "zone2": 2}, (("zone2", 2), ("zone1", 3)))],
        id="key in matchLabelKeys is ignored when it isn't exist in pod.labels",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}),
        [zn("node-a", "zone1")],
        [],
        None,
        id="skip if not specified",
    ),
]


@pytest.mark.parametrize(("p", "nodes", "existing", "want"), PRE_FILTER_STATE_CASES)
def test_pre_filter_state(
    p: Pod, nodes: list[Node], existing: list[Pod], want: Expected | None
) -> None:
    snap, handle = cluster(nodes, existing)
    plugin = _plugin(handle)
    state = fw.CycleState()
    result = plugin.pre_filter(state, p, snap.list())
    if want is None:
        assert result == fw.Status(fw.Code.SKIP)
        assert PRE_FILTER_STATE_KEY not in state
        return
    assert result is None
    assert _state_of(state) == _expect(want)


def test_pre_filter_state_default_constraints_without_workloads_are_skipped() -> None:
    """Upstream "default constraints and a service" without the Service: the default
    constraints get an empty selector and are skipped, as upstream does for a pod no Service
    selects ("default constraints and a service that doesn't match")."""
    snap, handle = cluster([zn("node-a", "zone1")])
    args = PodTopologySpreadArgs(
        defaulting_type="List",
        default_constraints=(
            spread(3, "node", DNS, None),
            spread(2, "node", SA, None),
            spread(5, "rack", DNS, None),
        ),
    )
    plugin = PodTopologySpread(args, handle)
    state = fw.CycleState()
    p = pod("p", labels={"foo": "bar", "baz": "kar"})
    assert plugin.pre_filter(state, p, snap.list()) == fw.Status(fw.Code.SKIP)


# Upstream gate-off cases whose expectation is what the (always on) features give as well.
PRE_FILTER_STATE_GATE_OFF_CASES = [
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            node_selector={"foo": ""},
            spreads=[spread(1, "node", DNS, BAR)],
        ),
        POLICY_NODES,
        POLICY_PODS,
        [(C(1, "node", BAR), {"node-a": 1, "node-b": 2}, (("node-a", 1), ("node-b", 2)))],
        id="feature gate disabled with NodeAffinityPolicy",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "node", DNS, BAR)]),
        TAINT_NODES,
        POLICY_PODS,
        [
            (
                C(1, "node", BAR),
                {"node-a": 1, "node-b": 2, "node-c": 0},
                (("node-c", 0), ("node-a", 1)),
            )
        ],
        id="feature gate disabled with NodeTaintsPolicy",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            spreads=[spread(1, "zone", DNS, None, match_label_keys=["bar"])],
        ),
        NODES_AB_XY,
        FOO_A_PODS,
        [(C(1, "zone", None), {"zone1": 0, "zone2": 0}, (("zone2", 0), ("zone1", 0)))],
        id="no pod is matched when LabelSelector is nil when feature gate disabled",
    ),
]


def test_pre_filter_state_default_constraints_but_pod_has_constraints() -> None:
    """Upstream "default constraints and a service, but pod has constraints": the pod's own
    hard constraint wins (no node, so no domain and untouched critical paths)."""
    snap, handle = cluster([])
    args = PodTopologySpreadArgs(
        defaulting_type="List", default_constraints=(spread(2, "node", DNS, None),)
    )
    p = pod(
        "p",
        labels={"foo": "bar", "baz": "tar"},
        spreads=[
            spread(1, "zone", DNS, labels_sel(baz="tar")),
            spread(2, "planet", SA, labels_sel(fot="rok")),
        ],
    )
    state = fw.CycleState()
    assert PodTopologySpread(args, handle).pre_filter(state, p, snap.list()) is None
    assert _state_of(state) == [
        (C(1, "zone", labels_sel(baz="tar")), {}, (("", MAX_INT32), ("", MAX_INT32)))
    ]


def test_pre_filter_state_default_soft_constraints_skip() -> None:
    """Upstream "default soft constraints and a service": no hard constraint, so Skip."""
    snap, handle = cluster([])
    args = PodTopologySpreadArgs(
        defaulting_type="List", default_constraints=(spread(2, "node", SA, None),)
    )
    state = fw.CycleState()
    p = pod("p", labels={"foo": "bar"})
    assert PodTopologySpread(args, handle).pre_filter(state, p, snap.list()) == fw.Status(
        fw.Code.SKIP
    )


@pytest.mark.parametrize(("p", "nodes", "existing", "want"), PRE_FILTER_STATE_GATE_OFF_CASES)
def test_pre_filter_state_gate_off_cases(
    p: Pod, nodes: list[Node], existing: list[Pod], want: Expected
) -> None:
    test_pre_filter_state(p, nodes, existing, want)


ONE_NODE_FOO = [spread(1, "node", DNS, FOO)]
ZONE_NODE_FOO = [spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]
ZONE_FOO_NODE_BAR = [spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]
AFFINITY_NODES = [zn("node-a", "zone1", foo="bar"), zn("node-b", "zone2", foo="")]
TAINTED_A_NODES = [
    node("node-a", {"zone": "zone1", "node": "node-a"}, UNSCHEDULABLE_TAINTS),
    zn("node-b", "zone2"),
]
UNSCHEDULABLE_TOLERATION = Toleration(key="node.kubernetes.io/unschedulable", operator="Exists")

ADD_POD_CASES = [
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=ONE_NODE_FOO),
        pod("p-a1", node="node-a", labels={"foo": ""}),
        [],
        0,
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        [(C(1, "node", FOO), {"node-a": 1, "node-b": 0}, (("node-b", 0), ("node-a", 1)))],
        id="node a and b both impact current min match",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=ONE_NODE_FOO),
        pod("p-a1", node="node-a", labels={"foo": ""}),
        [pod("p-b1", node="node-b", labels={"foo": ""})],
        0,
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        [(C(1, "node", FOO), {"node-a": 1, "node-b": 1}, (("node-a", 1), ("node-b", 1)))],
        id="only node a impacts current min match",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=ONE_NODE_FOO),
        pod("p-a1", ns="ns1", node="node-a", labels={"foo": ""}),
        [pod("p-b1", node="node-b", labels={"foo": ""})],
        0,
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        [(C(1, "node", FOO), {"node-a": 0, "node-b": 1}, (("node-a", 0), ("node-b", 1)))],
        id="add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=ONE_NODE_FOO),
        pod("p-b2", node="node-b", labels={"foo": ""}),
        [pod("p-b1", node="node-b", labels={"foo": ""})],
        1,
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        [(C(1, "node", FOO), {"node-a": 0, "node-b": 2}, (("node-a", 0), ("node-b", 2)))],
        id="add pod on non-critical node won't trigger re-calculation",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=ZONE_NODE_FOO),
        pod("p-a1", node="node-a", labels={"foo": ""}),
        [],
        0,
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        [
            (C(1, "zone", FOO), {"zone1": 1, "zone2": 0}, (("zone2", 0), ("zone1", 1))),
            (C(1, "node", FOO), {"node-a": 1, "node-x": 0}, (("node-x", 0), ("node-a", 1))),
        ],
        id="node a and x both impact topologyKeyToMinPodsMap on zone and node",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=ZONE_NODE_FOO),
        pod("p-a1", node="node-a", labels={"foo": ""}),
        [pod("p-x1", node="node-x", labels={"foo": ""})],
        0,
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        [
            (C(1, "zone", FOO), {"zone1": 1, "zone2": 1}, (("zone1", 1), ("zone2", 1))),
            (C(1, "node", FOO), {"node-a": 1, "node-x": 1}, (("node-a", 1), ("node-x", 1))),
        ],
        id="only node a impacts topologyKeyToMinPodsMap on zone and node",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=ZONE_NODE_FOO),
        pod("p-a1", node="node-a", labels={"foo": ""}),
        [
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-b2", node="node-b", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"foo": ""}),
        ],
        0,
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        [
            (C(1, "zone", FOO), {"zone1": 3, "zone2": 1}, (("zone2", 1), ("zone1", 3))),
            (
                C(1, "node", FOO),
                {"node-a": 1, "node-b": 2, "node-x": 1},
                (("node-a", 1), ("node-x", 1)),
            ),
        ],
        id="node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
    ),
    pytest.param(
        pod("p", labels={"foo": "", "bar": ""}, spreads=ZONE_FOO_NODE_BAR),
        pod("p-a1", node="node-a", labels={"foo": ""}),
        [
            pod("p-b1", node="node-b", labels={"foo": "", "bar": ""}),
            pod("p-x1", node="node-x", labels={"foo": "", "bar": ""}),
            pod("p-x2", node="node-x", labels={"bar": ""}),
        ],
        0,
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        [
            (C(1, "zone", FOO), {"zone1": 2, "zone2": 1}, (("zone2", 1), ("zone1", 2))),
            (
                C(1, "node", BAR),
                {"node-a": 0, "node-b": 1, "node-x": 2},
                (("node-a", 0), ("node-b", 1)),
            ),
        ],
        id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
    ),
    pytest.param(
        pod("p", labels={"foo": "", "bar": ""}, spreads=ZONE_FOO_NODE_BAR),
        pod("p-a1", node="node-a", labels={"foo": "", "bar": ""}),
        [
            pod("p-b1", node="node-b", labels={"bar": ""}),
            pod("p-x1", node="node-x", labels={"foo": "", "bar": ""}),
            pod("p-x2", node="node-x", labels={"bar": ""}),
        ],
        0,
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        [
            (C(1, "zone", FOO), {"zone1": 1, "zone2": 1}, (("zone1", 1), ("zone2", 1))),
            (
                C(1, "node", BAR),
                {"node-a": 1, "node-b": 1, "node-x": 2},
                (("node-a", 1), ("node-b", 1)),
            ),
        ],
        id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            affinity_not_in=("foo", ["bar"]),
            spreads=[spread(1, "zone", DNS, FOO)],
        ),
        pod("p-a1", node="node-a", labels={"foo": "", "zone": "zone1"}),
        [
            pod("p-a2", node="node-a", labels={"foo": "", "zone": "zone1"}),
            pod("p-b1", node="node-b", labels={"foo": "", "zone": "zone2"}),
        ],
        0,
        AFFINITY_NODES,
        [(C(1, "zone", FOO), {"zone2": 1}, (("zone2", 1), ("", MAX_INT32)))],
        id="add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            affinity_not_in=("foo", ["bar"]),
            spreads=[spread(1, "zone", DNS, FOO)],
        ),
        pod("p-a1", node="node-a", labels={"foo": "", "zone": "zone1"}),
        [
            pod("p-a2", node="node-a", labels={"foo": "", "zone": "zone1"}),
            pod("p-b1", node="node-b", labels={"foo": "", "zone": "zone2"}),
        ],
        0,
        AFFINITY_NODES,
        [(C(1, "zone", FOO), {"zone2": 1}, (("zone2", 1), ("", MAX_INT32)))],
        id="add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        pod("p-b1", node="node-b", labels={"foo": "", "zone": "zone2"}),
        [
            pod("p-a1", node="node-a", labels={"foo": "", "zone": "zone1"}),
            pod("p-b2", node="node-b", labels={"foo": "", "zone": "zone2"}),
        ],
        1,
        AFFINITY_NODES,
        [(C(1, "zone", FOO), {"zone1": 1, "zone2": 2}, (("zone1", 1), ("zone2", 2)))],
        id="add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        pod("p-b1", node="node-b", labels={"foo": "", "zone": "zone2"}),
        [
            pod("p-a1", node="node-a", labels={"foo": "", "zone": "zone1"}),
            pod("p-b2", node="node-b", labels={"foo": "", "zone": "zone2"}),
        ],
        1,
        AFFINITY_NODES,
        [(C(1, "zone", FOO), {"zone1": 1, "zone2": 2}, (("zone1", 1), ("zone2", 2)))],
        id="add a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        pod("p-b1", node="node-b", labels={"zone": "zone2"}),
        [
            pod("p-a1", node="node-a", labels={"foo": "", "zone": "zone1"}),
            pod("p-b2", node="node-b", labels={"foo": "", "zone": "zone2"}),
        ],
        1,
        AFFINITY_NODES,
        [(C(1, "zone", FOO), {"zone1": 1, "zone2": 1}, (("zone1", 1), ("zone2", 1)))],
        id="add a label selector not matched pod when with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        pod("p-b1", node="node-b", labels={"foo": "", "zone": "zone2"}),
        [
            pod("p-a1", node="node-a", labels={"foo": "", "zone": "zone1"}),
            pod("p-b2", node="node-b", labels={"foo": "", "zone": "zone2"}),
        ],
        1,
        TAINTED_A_NODES,
        [(C(1, "zone", FOO), {"zone1": 1, "zone2": 2}, (("zone1", 1), ("zone2", 2)))],
        id="add a pod when scheduling taint untolerated pod with NodeInclusionPolicy disabled",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            tolerations=[UNSCHEDULABLE_TOLERATION],
            spreads=[spread(1, "zone", DNS, FOO)],
        ),
        pod("p-b1", node="node-b", labels={"foo": "", "zone": "zone2"}),
        [
            pod("p-a1", node="node-a", labels={"foo": "", "zone": "zone1"}),
            pod("p-b2", node="node-b", labels={"foo": "", "zone": "zone2"}),
        ],
        1,
        TAINTED_A_NODES,
        [(C(1, "zone", FOO), {"zone1": 1, "zone2": 2}, (("zone1", 1), ("zone2", 2)))],
        id="add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
    ),
]


@pytest.mark.parametrize(
    ("preemptor", "added", "existing", "node_idx", "nodes", "want"), ADD_POD_CASES
)
def test_pre_filter_state_add_pod(
    preemptor: Pod,
    added: Pod,
    existing: list[Pod],
    node_idx: int,
    nodes: list[Node],
    want: Expected,
) -> None:
    snap, handle = cluster(nodes, existing)
    plugin = _plugin(handle)
    state = fw.CycleState()
    assert plugin.pre_filter(state, preemptor, snap.list()) is None
    node_info = snap.get(nodes[node_idx].name)
    assert plugin.add_pod(state, preemptor, fw.PodInfo(added), node_info) is None
    assert _state_of(state) == _expect(want)


REMOVE_NODES_ABX = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")]

# (preemptor, nodes, existing, deleted index or pod, node index, want)
REMOVE_POD_CASES = [
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        REMOVE_NODES_ABX,
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"foo": ""}),
        ],
        0,
        0,
        [(C(1, "zone", FOO), {"zone1": 1, "zone2": 1}, (("zone1", 1), ("zone2", 1)))],
        id="one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        NODES_AB_XY,
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
        ],
        0,
        0,
        [(C(1, "zone", FOO), {"zone1": 1, "zone2": 2}, (("zone1", 1), ("zone2", 2)))],
        id="one spreadConstraint on node, topologyKeyToMinPodsMap changed",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        NODES_AB_XY,
        [
            pod("p-a0", node="node-a", labels={"bar": ""}),
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
        ],
        0,
        0,
        [(C(1, "zone", FOO), {"zone1": 2, "zone2": 2}, (("zone1", 2), ("zone2", 2)))],
        id="delete an irrelevant pod won't help",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        NODES_AB_XY,
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
        ],
        pod("p-a0", node="node-a", labels={"bar": ""}),
        0,
        [(C(1, "zone", FOO), {"zone1": 2, "zone2": 2}, (("zone1", 2), ("zone2", 2)))],
        id="delete a non-existing pod won't help",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=ZONE_NODE_FOO),
        REMOVE_NODES_ABX,
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-a2", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"foo": ""}),
            pod("p-x2", node="node-x", labels={"foo": ""}),
        ],
        3,
        2,
        [
            (C(1, "zone", FOO), {"zone1": 3, "zone2": 1}, (("zone2", 1), ("zone1", 3))),
            (
                C(1, "node", FOO),
                {"node-a": 2, "node-b": 1, "node-x": 1},
                (("node-b", 1), ("node-x", 1)),
            ),
        ],
        id="two spreadConstraints",
    ),
    *(
        pytest.param(
            pod(
                "p",
                labels={"foo": ""},
                affinity_not_in=("foo", ["bar"]),
                spreads=[spread(1, "zone", DNS, FOO)],
            ),
            AFFINITY_NODES,
            [
                pod("p-a2", node="node-a", labels={"foo": "", "zone": "zone1"}),
                pod("p-b1", node="node-b", labels={"foo": "", "zone": "zone2"}),
            ],
            pod("p-a1", node="node-a", labels={"foo": "", "zone": "zone1"}),
            0,
            [(C(1, "zone", FOO), {"zone2": 1}, (("zone2", 1), ("", MAX_INT32)))],
            id="remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy "
            + gate,
        )
        for gate in ("disabled", "enabled")
    ),
    *(
        pytest.param(
            pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
            AFFINITY_NODES,
            [
                pod("p-a1", node="node-a", labels={"foo": "", "zone": "zone1"}),
                pod("p-b2", node="node-b", labels={"foo": "", "zone": "zone2"}),
            ],
            pod("p-b1", node="node-b", labels={"foo": "", "zone": "zone2"}),
            1,
            [(C(1, "zone", FOO), {"zone1": 1, "zone2": 0}, (("zone2", 0), ("zone1", 1)))],
            id="remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy "
            + gate,
        )
        for gate in ("disabled", "enabled")
    ),
]


@pytest.mark.parametrize(
    ("preemptor", "nodes", "existing", "deleted", "node_idx", "want"), REMOVE_POD_CASES
)
def test_pre_filter_state_remove_pod(
    preemptor: Pod,
    nodes: list[Node],
    existing: list[Pod],
    deleted: int | Pod,
    node_idx: int,
    want: Expected,
) -> None:
    snap, handle = cluster(nodes, existing)
    plugin = _plugin(handle)
    state = fw.CycleState()
    assert plugin.pre_filter(state, preemptor, snap.list()) is None
    deleted_pod = existing[deleted] if isinstance(deleted, int) else deleted
    node_info = snap.get(nodes[node_idx].name)
    assert plugin.remove_pod(state, preemptor, fw.PodInfo(deleted_pod), node_info) is None
    assert _state_of(state) == _expect(want)


def test_clone_isolates_add_pod() -> None:
    """AddPod on a cloned CycleState leaves the original counts alone (preemption what-ifs)."""
    snap, handle = cluster(NODES_AB_XY, FOO_PODS_A2_B1_Y2)
    plugin = _plugin(handle)
    state = fw.CycleState()
    p = pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)])
    assert plugin.pre_filter(state, p, snap.list()) is None
    before = _state_of(state)
    copy = state.clone()
    added = pod("p-x9", node="node-x", labels={"foo": ""})
    assert plugin.add_pod(copy, p, fw.PodInfo(added), snap.get("node-x")) is None
    assert _state_of(state) == before
    assert _state_of(copy)[0][1] == {"zone1": 3, "zone2": 3}


S = None
U = fw.Status(fw.Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
UU = fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
Want = Mapping[str, fw.Status | None]


def _filter_all(p: Pod, nodes: Sequence[Node], existing: Sequence[Pod]) -> dict[str, object]:
    snap, handle = cluster(nodes, existing)
    plugin = _plugin(handle)
    state = fw.CycleState()
    result = plugin.pre_filter(state, p, snap.list())
    assert result is None, result
    return {info.name: plugin.filter(state, p, info) for info in snap.list()}


FOO_PODS_A2_B1_Y3 = [
    pod("p-a1", node="node-a", labels={"foo": ""}),
    pod("p-a2", node="node-a", labels={"foo": ""}),
    pod("p-b1", node="node-b", labels={"foo": ""}),
    pod("p-y1", node="node-y", labels={"foo": ""}),
    pod("p-y2", node="node-y", labels={"foo": ""}),
    pod("p-y3", node="node-y", labels={"foo": ""}),
]

SINGLE_CONSTRAINT_CASES = [
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        NODES_AB_XY,
        [],
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
        id="no existing pods",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, BAR)]),
        NODES_AB_XY,
        [],
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
        id="no existing pods, incoming pod doesn't match itself",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        NODES_AB_XY,
        [
            pod("p-a1", ns="ns1", node="node-a", labels={"foo": ""}),
            pod("p-b1", ns="ns2", node="node-a", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
        ],
        {"node-a": S, "node-b": S, "node-x": U, "node-y": U},
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, None)]),
        NODES_AB_XY,
        [
            pod("p-x1", node="node-x", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
        ],
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
        id="existing pods do not match null selector",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        NODES_AB_XY,
        FOO_PODS_A2_B1_Y3,
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
        id="pods spread across zones as 3/3, all nodes fit",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", DNS, FOO)]),
        [
            zn("node-a", "zone1"),
            node("node-b", {"zon": "zone1", "node": "node-b"}),
            zn("node-x", "zone2"),
            zn("node-y", "zone2"),
        ],
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
        ],
        {"node-a": S, "node-b": UU, "node-x": U, "node-y": U},
        id="pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "rack", DNS, FOO)]),
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        [],
        {"node-a": UU, "node-x": UU},
        id="pod cannot be scheduled as all nodes don't have label 'rack'",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "node", DNS, FOO)]),
        NODES_AB_XY,
        FOO_PODS_A2_B1_Y3,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        id="pods spread across nodes as 2/1/0/3, only node-x fits",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(2, "node", DNS, FOO)]),
        NODES_AB_XY,
        FOO_PODS_A2_B1_Y3,
        {"node-a": U, "node-b": S, "node-x": S, "node-y": U},
        id="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
    ),
    pytest.param(
        pod("p", labels={"bar": ""}, spreads=[spread(1, "node", DNS, FOO)]),
        NODES_AB_XY,
        FOO_PODS_A2_B1_Y3,
        {"node-a": U, "node-b": S, "node-x": S, "node-y": U},
        id="pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            affinity_in=("node", ["node-a", "node-y"]),
            spreads=[spread(1, "node", DNS, FOO)],
        ),
        NODES_AB_XY,
        FOO_PODS_A2_B1_Y3,
        # node-b and node-x fit here: NodeAffinity's own Filter is not run in this test.
        {"node-a": S, "node-b": S, "node-x": S, "node-y": U},
        id="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "node", DNS, FOO)]),
        [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"})],
        [
            pod("p-a", node="node-a", labels={"foo": ""}, terminating=True),
            pod("p-b", node="node-b", labels={"foo": ""}),
        ],
        {"node-a": S, "node-b": U},
        id="terminating Pods should be excluded",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            affinity_not_in=("node", ["node-b"]),
            spreads=[spread(1, "zone", DNS, FOO)],
        ),
        NODES_AB_XY,
        [
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-b2", node="node-b", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
        ],
        {"node-a": S, "node-b": S, "node-x": U, "node-y": U},
        id="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(2, "node", DNS, FOO, 4)]),
        [node(n, {"node": n}) for n in ("node-a", "node-b", "node-c")],
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-a2", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-b2", node="node-b", labels={"foo": ""}),
            pod("p-c1", node="node-c", labels={"foo": ""}),
        ],
        {"node-a": U, "node-b": U, "node-c": S},
        id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(2, "node", DNS, FOO, 2)]),
        [node(n, {"node": n}) for n in ("node-a", "node-b", "node-c")],
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-a2", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-b2", node="node-b", labels={"foo": ""}),
            pod("p-c1", node="node-c", labels={"foo": ""}),
        ],
        {"node-a": S, "node-b": S, "node-c": S},
        id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(2, "zone", DNS, FOO, 3)]),
        NODES_AB_XY,
        [
            pod("p-b1", node="node-a", labels={"foo": ""}),
            pod("p-b2", node="node-b", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
        ],
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
        id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(2, "zone", DNS, FOO, 1)]),
        NODES_AB_XY,
        [
            pod("p-b1", node="node-a", labels={"foo": ""}),
            pod("p-b2", node="node-b", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
        ],
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
        id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
    ),
]

POLICY_FILTER_NODES = [
    node("node-a", {"node": "node-a", "foo": ""}),
    node("node-b", {"node": "node-b", "foo": ""}),
    node("node-x", {"node": "node-x", "foo": ""}),
    node("node-y", {"node": "node-y"}),
]
TAINT_FILTER_NODES = [
    *POLICY_FILTER_NODES[:3],
    node("node-y", {"node": "node-y"}, UNSCHEDULABLE_TAINTS),
]
POLICY_FILTER_PODS = [
    pod("p-b1", node="node-a", labels={"foo": ""}),
    pod("p-b2", node="node-b", labels={"foo": ""}),
    pod("p-y1", node="node-y", labels={"foo": ""}),
]
SINGLE_CONSTRAINT_CASES += [
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            node_selector={"foo": ""},
            spreads=[spread(1, "node", DNS, FOO)],
        ),
        POLICY_FILTER_NODES,
        POLICY_FILTER_PODS,
        # node-y passes here only because NodeAffinity's own Filter is not run.
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            node_selector={"foo": ""},
            spreads=[spread(1, "node", DNS, FOO, None, IGNORE)],
        ),
        POLICY_FILTER_NODES,
        POLICY_FILTER_PODS,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            affinity_in=("foo", [""]),
            spreads=[spread(1, "node", DNS, FOO)],
        ),
        POLICY_FILTER_NODES,
        POLICY_FILTER_PODS,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            affinity_in=("foo", [""]),
            spreads=[spread(1, "node", DNS, FOO, None, IGNORE)],
        ),
        POLICY_FILTER_NODES,
        POLICY_FILTER_PODS,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        id="NodeAffinityPolicy ignored with labelSelectors",  # upstream repeats this name
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "node", DNS, FOO, None, None, HONOR)]),
        TAINT_FILTER_NODES,
        POLICY_FILTER_PODS,
        # node-y passes here only because TaintToleration's own Filter is not run.
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "node", DNS, FOO)]),
        TAINT_FILTER_NODES,
        POLICY_FILTER_PODS,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        id="NodeTaintsPolicy ignored",
    ),
]


@pytest.mark.parametrize(("p", "nodes", "existing", "want"), SINGLE_CONSTRAINT_CASES)
def test_single_constraint(p: Pod, nodes: list[Node], existing: list[Pod], want: Want) -> None:
    assert _filter_all(p, nodes, existing) == dict(want)


ZONE_FOO_NODE_IGNORE = [spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO, None, IGNORE)]
FOO_A1_B1_Y1 = [
    pod("p-a1", node="node-a", labels={"foo": ""}),
    pod("p-b1", node="node-b", labels={"foo": ""}),
    pod("p-y1", node="node-y", labels={"foo": ""}),
]

MULTIPLE_CONSTRAINTS_CASES = [
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=ZONE_NODE_FOO),
        NODES_AB_XY,
        FOO_PODS_A2_B1_Y3,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        id="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=ZONE_NODE_FOO),
        NODES_AB_XY,
        [*FOO_PODS_A2_B1_Y3, pod("p-y4", node="node-y", labels={"foo": ""})],
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
        id="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
    ),
    pytest.param(
        pod("p", labels={"foo": "", "bar": ""}, spreads=ZONE_FOO_NODE_BAR),
        NODES_AB_XY,
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"bar": ""}),
        ],
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        id="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
    ),
    pytest.param(
        pod("p", labels={"foo": "", "bar": ""}, spreads=ZONE_FOO_NODE_BAR),
        NODES_AB_XY,
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"bar": ""}),
            pod("p-y1", node="node-y", labels={"bar": ""}),
        ],
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
        id="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
    ),
    pytest.param(
        pod("p", labels={"foo": "", "bar": ""}, spreads=ZONE_FOO_NODE_BAR),
        NODES_AB_XY,
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-a2", node="node-a", labels={"foo": "", "bar": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
            pod("p-y2", node="node-y", labels={"foo": "", "bar": ""}),
            pod("p-y3", node="node-y", labels={"foo": ""}),
        ],
        {"node-a": U, "node-b": S, "node-x": U, "node-y": U},
        id="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
    ),
    pytest.param(
        pod("p", labels={"bar": ""}, spreads=ZONE_FOO_NODE_BAR),
        NODES_AB_XY,
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"bar": ""}),
            pod("p-y1", node="node-y", labels={"bar": ""}),
        ],
        {"node-a": S, "node-b": S, "node-x": U, "node-y": U},
        id="Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=ZONE_NODE_FOO),
        [
            zn("node-a", "zone1"),
            zn("node-b", "zone1"),
            node("node-x", {"zone": "zone2"}),
            zn("node-y", "zone2"),
        ],
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-y3", node="node-y", labels={"foo": ""}),
        ],
        {"node-a": U, "node-b": S, "node-x": UU, "node-y": U},
        id="two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, node_selector={"foo": ""}, spreads=ZONE_FOO_NODE_IGNORE),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1", foo=""),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2"),
        ],
        FOO_A1_B1_Y1,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            spreads=[spread(1, "zone", DNS, FOO, None, None, HONOR), spread(1, "node", DNS, FOO)],
        ),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1", foo=""),
            zn("node-x", "zone2", foo=""),
            node("node-y", {"zone": "zone2", "node": "node-y"}, UNSCHEDULABLE_TAINTS),
        ],
        FOO_A1_B1_Y1,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, node_selector={"foo": ""}, spreads=ZONE_NODE_FOO),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", foo=""),
            node("node-y", {"zone": "zone2", "node": "node-y", "foo": ""}, UNSCHEDULABLE_TAINTS),
        ],
        FOO_A1_B1_Y1,
        {"node-a": U, "node-b": S, "node-x": S, "node-y": U},
        id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            node_selector={"foo": ""},
            spreads=[
                spread(1, "zone", DNS, FOO, None, None, HONOR),
                spread(1, "node", DNS, FOO, None, IGNORE),
            ],
        ),
        [
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", foo=""),
            node("node-y", {"zone": "zone2", "node": "node-y", "foo": ""}, UNSCHEDULABLE_TAINTS),
        ],
        FOO_A1_B1_Y1,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        id="two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
    ),
]


@pytest.mark.parametrize(("p", "nodes", "existing", "want"), MULTIPLE_CONSTRAINTS_CASES)
def test_multiple_constraints(p: Pod, nodes: list[Node], existing: list[Pod], want: Want) -> None:
    assert _filter_all(p, nodes, existing) == dict(want)


def test_pre_filter_disabled() -> None:
    """Filter without PreFilter's state is an error naming the missing key."""
    snap, handle = cluster([])
    plugin = _plugin(handle)
    info = fw.NodeInfo(node("n"))
    status = plugin.filter(fw.CycleState(), pod("p"), info)
    assert status is not None
    assert status.code is fw.Code.ERROR
    assert status.message() == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


@pytest.mark.property
@given(
    st.dictionaries(st.sampled_from(["node-a", "node-b", "node-x", "node-y"]), st.integers(0, 4)),
    st.integers(1, 3),
    st.permutations(range(4)),
)
def test_filter_verdict_independent_of_node_order(
    counts: dict[str, int], max_skew: int, order: list[int]
) -> None:
    existing = [
        pod(f"p-{name}-{i}", node=name, labels={"foo": ""})
        for name, n in counts.items()
        for i in range(n)
    ]
    p = pod(
        "p",
        labels={"foo": ""},
        spreads=[spread(max_skew, "zone", DNS, FOO), spread(max_skew, "node", DNS, FOO)],
    )
    forward = _filter_all(p, NODES_AB_XY, existing)
    shuffled = _filter_all(p, [NODES_AB_XY[i] for i in order], existing)
    assert shuffled == forward
    # Every node carries both topology keys, so a rejection is always the maxSkew one.
    assert all(v in (S, U) for v in forward.values())
