"""Upstream ``podtopologyspread/scoring_test.go``: PreScore state, Score and NormalizeScore.

Scores go through PreScore (on the candidate nodes) -> Score per candidate -> NormalizeScore and
are compared with upstream's ``want`` lists. Cases whose default constraints take their selector
from a Service/ReplicaSet are in ``test_default_constraints.py``.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.objects import LabelSelector, Node, Pod
from schedframe_plugins.podtopologyspread import PodTopologySpread, PodTopologySpreadArgs
from schedframe_plugins.podtopologyspread.common import SpreadConstraint
from schedframe_plugins.podtopologyspread.scoring import (
    PRE_SCORE_STATE_KEY,
    go_log,
    go_round,
    topology_normalizing_weight,
)

from ._builders import (
    BAR,
    DNS,
    FOO,
    HONOR,
    HOSTNAME,
    IGNORE,
    SA,
    UNSCHEDULABLE_TAINTS,
    ZONE,
    cluster,
    labels_sel,
    node,
    pod,
    run_scores,
    spread,
)


def C(
    max_skew: int,
    key: str,
    selector: LabelSelector | None,
    *,
    aff: str = HONOR,
    taints: str = IGNORE,
) -> SpreadConstraint:
    return SpreadConstraint(
        max_skew=max_skew,
        topology_key=key,
        selector=selector,
        min_domains=1,
        node_affinity_policy=aff,
        node_taints_policy=taints,
    )


def hn(
    name: str, extra: Mapping[str, str] | None = None, *, taints: bool = False, **labels: str
) -> Node:
    """A node labelled ``kubernetes.io/hostname=<name>`` plus ``extra`` and ``labels``."""
    return node(
        name, {HOSTNAME: name, **(extra or {}), **labels}, UNSCHEDULABLE_TAINTS if taints else ()
    )


def on(
    counts: Mapping[str, int], labels: Mapping[str, str] | None = None, ns: str = ""
) -> list[Pod]:
    """``counts[node]`` pods named ``p-<node suffix><i>`` on each node, labelled ``foo``."""
    out = []
    for node_name, n in counts.items():
        suffix = node_name.removeprefix("node-")
        for i in range(1, n + 1):
            out.append(pod(f"p-{suffix}{i}", ns=ns, node=node_name, labels=labels or {"foo": ""}))
    return out


def _plugin(handle: fw.Handle, args: PodTopologySpreadArgs | None = None) -> PodTopologySpread:
    return PodTopologySpread(args or PodTopologySpreadArgs(defaulting_type="List"), handle)


# -- PreScore ---------------------------------------------------------------------------------


def test_pre_score_skip_without_soft_constraints() -> None:
    """Upstream "the pod doesn't have soft topology spread Constraints"."""
    snap, handle = cluster([hn("node-a"), hn("node-b")])
    state = fw.CycleState()
    status = _plugin(handle).pre_score(state, pod("p", ns="default"), snap.list())
    assert status == fw.Status(fw.Code.SKIP)


def test_pre_score_skip_default_constraints_without_workloads() -> None:
    """Upstream "default constraints and a replicaset that doesn't match": without a workload
    object selecting the pod, default constraints have no selector and PreScore skips."""
    snap, handle = cluster([node("node-a", {"planet": "mars"})])
    args = PodTopologySpreadArgs(
        defaulting_type="List", default_constraints=(spread(2, "planet", SA, None),)
    )
    state = fw.CycleState()
    p = pod("p", ns="default", labels={"foo": "bar", "baz": "sup"})
    assert _plugin(handle, args).pre_score(state, p, snap.list()) == fw.Status(fw.Code.SKIP)


def test_pre_score_skip_system_defaults_without_workloads() -> None:
    """System defaulting, as upstream's "system default constraints and a replicaset" minus the
    ReplicaSet: the system constraints select nothing, so PreScore skips."""
    snap, handle = cluster([hn("node-a", {ZONE: "mars"})])
    plugin = PodTopologySpread(PodTopologySpreadArgs(), handle)
    state = fw.CycleState()
    p = pod("p", ns="default", labels={"foo": "tar"})
    assert plugin.pre_score(state, p, snap.list()) == fw.Status(fw.Code.SKIP)


def test_pre_score_skip_without_nodes() -> None:
    snap, handle = cluster([])
    p = pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", SA, FOO)])
    assert _plugin(handle).pre_score(fw.CycleState(), p, []) == fw.Status(fw.Code.SKIP)


ABX = [
    hn("node-a", zone="zone1"),
    hn("node-b", zone="zone1"),
    hn("node-x", zone="zone2"),
]
ABX_FOO = [
    hn("node-a", zone="zone1", foo=""),
    hn("node-b", zone="zone1", foo=""),
    hn("node-x", zone="zone2"),
]

# (pod, nodes, want constraints, ignored nodes, counts per constraint, weights as sizes)
PRE_SCORE_STATE_CASES = [
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            spreads=[spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, FOO)],
        ),
        ABX,
        [C(1, "zone", FOO), C(1, HOSTNAME, FOO)],
        set(),
        [{"zone1": 0, "zone2": 0}, {}],
        [2, 3],
        id="normal case",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", SA, None)]),
        ABX,
        [C(1, "zone", None)],
        set(),
        [{"zone1": 0, "zone2": 0}],
        [2],
        id="null selector",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            spreads=[spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, BAR)],
        ),
        [hn("node-a", zone="zone1"), hn("node-b", zone="zone1"), hn("node-x")],
        [C(1, "zone", FOO), C(1, HOSTNAME, BAR)],
        {"node-x"},
        [{"zone1": 0}, {}],
        [1, 2],
        id="node-x doesn't have label zone",
    ),
    pytest.param(
        pod(
            "p",
            ns="default",
            labels={"foo": "bar", "baz": "sup"},
            spreads=[
                spread(1, "zone", DNS, BAR),
                spread(2, "planet", SA, labels_sel(baz="sup")),
            ],
        ),
        [node("node-a", {"planet": "mars", "galaxy": "andromeda"})],
        [C(2, "planet", labels_sel(baz="sup"))],
        set(),
        [{"mars": 0}],
        [1],
        id="default constraints and a replicaset, but pod has constraints",
    ),
    pytest.param(
        pod(
            "p", labels={"foo": ""}, node_selector={"foo": ""}, spreads=[spread(1, "zone", SA, BAR)]
        ),
        ABX_FOO,
        [C(1, "zone", BAR)],
        set(),
        [{"zone1": 0, "zone2": 0}],
        [2],
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            node_selector={"foo": ""},
            spreads=[spread(1, "zone", SA, BAR, None, IGNORE)],
        ),
        ABX_FOO,
        [C(1, "zone", BAR, aff=IGNORE)],
        set(),
        [{"zone1": 0, "zone2": 0}],
        [2],
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        pod(
            "p", labels={"foo": ""}, affinity_in=("foo", [""]), spreads=[spread(1, "zone", SA, BAR)]
        ),
        ABX_FOO,
        [C(1, "zone", BAR)],
        set(),
        [{"zone1": 0, "zone2": 0}],
        [2],
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            affinity_in=("foo", [""]),
            spreads=[spread(1, "zone", SA, BAR, None, IGNORE)],
        ),
        ABX_FOO,
        [C(1, "zone", BAR, aff=IGNORE)],
        set(),
        [{"zone1": 0, "zone2": 0}],
        [2],
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", SA, BAR, None, None, HONOR)]),
        [*ABX_FOO[:2], hn("node-x", taints=True, zone="zone2")],
        [C(1, "zone", BAR, taints=HONOR)],
        set(),
        [{"zone1": 0, "zone2": 0}],
        [2],
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", SA, BAR)]),
        [*ABX_FOO[:2], hn("node-x", taints=True, zone="zone2")],
        [C(1, "zone", BAR)],
        set(),
        [{"zone1": 0, "zone2": 0}],
        [2],
        id="NodeTaintsPolicy ignored",
    ),
]


@pytest.mark.parametrize(
    ("p", "nodes", "constraints", "ignored", "counts", "sizes"), PRE_SCORE_STATE_CASES
)
def test_pre_score_state_empty_nodes(
    p: Pod,
    nodes: list[Node],
    constraints: list[SpreadConstraint],
    ignored: set[str],
    counts: list[dict[str, int]],
    sizes: list[int],
) -> None:
    snap, handle = cluster(nodes)
    state = fw.CycleState()
    assert _plugin(handle).pre_score(state, p, snap.list()) is None
    s = state[PRE_SCORE_STATE_KEY]
    assert s.constraints == constraints
    assert s.ignored_nodes == ignored
    assert s.topology_value_to_pod_counts == counts
    assert s.topology_normalizing_weight == [topology_normalizing_weight(n) for n in sizes]


# -- Score -------------------------------------------------------------------------------------

HOST_FOO = [spread(1, HOSTNAME, SA, FOO)]
ZONE_HOST_FOO = [spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, FOO)]
ZONE_FOO_HOST_BAR = [spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, BAR)]
HN_ABCD = [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")]


def zh(name: str, zone: str) -> Node:
    """A node with ``zone`` and hostname labels."""
    return hn(name, zone=zone)


ZONED_ABXY = [
    zh("node-a", "zone1"),
    zh("node-b", "zone1"),
    zh("node-x", "zone2"),
    zh("node-y", "zone2"),
]

# (pod, existing pods, candidate nodes, other nodes, want)
SCORE_CASES = [
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=HOST_FOO),
        [],
        [hn("node-a"), hn("node-b")],
        [],
        {"node-a": 100, "node-b": 100},
        id="one constraint on node, no existing pods",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=HOST_FOO),
        on({"node-a": 2, "node-b": 1}),
        [hn("node-a")],
        [hn("node-b")],
        {"node-a": 100},
        id="one constraint on node, only one node is candidate",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=HOST_FOO),
        on({"node-a": 1, "node-b": 1}),
        [hn("node-a"), hn("node-b")],
        [],
        {"node-a": 100, "node-b": 100},
        id="one constraint on node, all nodes have the same number of matching pods",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=HOST_FOO),
        on({"node-a": 2, "node-b": 1, "node-d": 3}),
        HN_ABCD,
        [],
        {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
        id="one constraint on node, all 4 nodes are candidates",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, HOSTNAME, SA, None)]),
        on({"node-a": 2, "node-b": 1, "node-d": 3}),
        HN_ABCD,
        [],
        {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
        id="one constraint on node, null selector",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(2, HOSTNAME, SA, FOO)]),
        on({"node-a": 2, "node-b": 1, "node-d": 3}),
        HN_ABCD,
        [],
        {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
        id="one constraint on node, all 4 nodes are candidates, maxSkew=2",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(3, HOSTNAME, SA, FOO)]),
        on({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}),
        HN_ABCD,
        [],
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
        id="one constraint on node, all 4 nodes are candidates, maxSkew=3",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=HOST_FOO),
        on({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        [hn("node-a"), hn("node-b"), hn("node-x")],
        [hn("node-y")],
        {"node-a": 33, "node-b": 83, "node-x": 100},
        id="one constraint on node, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=HOST_FOO),
        on({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        [hn("node-a"), node("node-b", {"n": "node-b"}), hn("node-x")],
        [hn("node-y")],
        {"node-a": 16, "node-b": 0, "node-x": 100},
        id="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "zone", SA, FOO)]),
        on({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        ZONED_ABXY[:3],
        ZONED_ABXY[3:],
        {"node-a": 75, "node-b": 75, "node-x": 100},
        id="one constraint on zone, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=ZONE_HOST_FOO),
        on({"node-a": 2, "node-b": 1, "node-x": 2, "node-y": 4}),
        [ZONED_ABXY[0], ZONED_ABXY[2]],
        [ZONED_ABXY[1], ZONED_ABXY[3]],
        {"node-a": 100, "node-x": 63},
        id="two Constraints on zone and node, 2 out of 4 nodes are candidates",
    ),
    pytest.param(
        pod("p", labels={"foo": "", "bar": ""}, spreads=ZONE_FOO_HOST_BAR),
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": "", "bar": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
            pod("p-y2", node="node-y", labels={"bar": ""}),
        ],
        ZONED_ABXY,
        [],
        {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
        id="two Constraints on zone and node, with different labelSelectors",
    ),
    pytest.param(
        pod("p", labels={"foo": "", "bar": ""}, spreads=ZONE_FOO_HOST_BAR),
        [
            pod("p-b1", node="node-b", labels={"bar": ""}),
            pod("p-x1", node="node-x", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": "", "bar": ""}),
        ],
        ZONED_ABXY,
        [],
        {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
        id="two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
    ),
    pytest.param(
        pod("p", labels={"foo": "", "bar": ""}, spreads=ZONE_FOO_HOST_BAR),
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": "", "bar": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
            pod("p-y2", node="node-y", labels={"bar": ""}),
        ],
        ZONED_ABXY[:3],
        ZONED_ABXY[3:],
        {"node-a": 50, "node-b": 25, "node-x": 100},
        id="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=HOST_FOO),
        [
            pod("p-a1", ns="ns1", node="node-a", labels={"foo": ""}),
            pod("p-a2", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-b2", node="node-b", labels={"foo": ""}),
        ],
        [hn("node-a"), hn("node-b")],
        [],
        {"node-a": 100, "node-b": 33},
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=HOST_FOO),
        [
            pod("p-a", node="node-a", labels={"foo": ""}, terminating=True),
            pod("p-b", node="node-b", labels={"foo": ""}),
        ],
        [hn("node-a"), hn("node-b")],
        [],
        {"node-a": 100, "node-b": 0},
        id="terminating Pods should be excluded",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(2, "node", SA, FOO, 10)]),
        on({"node-a": 2, "node-b": 2, "node-c": 1}),
        [node(n, {"node": n}) for n in ("node-a", "node-b", "node-c")],
        [],
        {"node-a": 75, "node-b": 75, "node-c": 100},
        id="minDomains has no effect when ScheduleAnyway",
    ),
]

POLICY_SCORE_PODS = on({"node-a": 2, "node-b": 1, "node-c": 1})
POLICY_SCORE_NODES = [
    node("node-a", {"node": "node-a", "foo": ""}),
    node("node-b", {"node": "node-b", "foo": ""}),
    node("node-c", {"node": "node-c"}),
]
TAINT_SCORE_NODES = [
    node("node-a", {"node": "node-a"}),
    node("node-b", {"node": "node-b"}),
    node("node-c", {"node": "node-c"}, UNSCHEDULABLE_TAINTS),
]
MLK_PODS = [
    pod("p-a1", node="node-a", labels={"foo": ""}),
    pod("p-b1", node="node-b", labels={"foo": "", "bar": ""}),
    pod("p-y1", node="node-c", labels={"foo": ""}),
    pod("p-y2", node="node-c", labels={"bar": ""}),
]
ZONED_ABCD = [
    zh("node-a", "zone1"),
    zh("node-b", "zone1"),
    zh("node-c", "zone2"),
    zh("node-d", "zone2"),
]

SCORE_CASES += [
    pytest.param(
        pod(
            "p", labels={"foo": ""}, node_selector={"foo": ""}, spreads=[spread(1, "node", SA, FOO)]
        ),
        POLICY_SCORE_PODS,
        POLICY_SCORE_NODES,
        [],
        {"node-a": 0, "node-b": 33, "node-c": 100},
        id="NodeAffinityPolicy honoed with labelSelectors",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            node_selector={"foo": ""},
            spreads=[spread(1, "node", SA, FOO, None, IGNORE)],
        ),
        POLICY_SCORE_PODS,
        POLICY_SCORE_NODES,
        [],
        {"node-a": 66, "node-b": 100, "node-c": 100},
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        pod(
            "p", labels={"foo": ""}, affinity_in=("foo", [""]), spreads=[spread(1, "node", SA, FOO)]
        ),
        POLICY_SCORE_PODS,
        POLICY_SCORE_NODES,
        [],
        {"node-a": 0, "node-b": 33, "node-c": 100},
        id="NodeAffinityPolicy honoed with nodeAffinity",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": ""},
            affinity_in=("foo", [""]),
            spreads=[spread(1, "node", SA, FOO, None, IGNORE)],
        ),
        POLICY_SCORE_PODS,
        POLICY_SCORE_NODES,
        [],
        {"node-a": 66, "node-b": 100, "node-c": 100},
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "node", SA, FOO, None, None, HONOR)]),
        POLICY_SCORE_PODS,
        TAINT_SCORE_NODES,
        [],
        {"node-a": 0, "node-b": 33, "node-c": 100},
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        pod("p", labels={"foo": ""}, spreads=[spread(1, "node", SA, FOO)]),
        POLICY_SCORE_PODS,
        TAINT_SCORE_NODES,
        [],
        {"node-a": 66, "node-b": 100, "node-c": 100},
        id="NodeTaintsPolicy ignored",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": "", "bar": ""},
            spreads=[
                spread(1, "zone", SA, LabelSelector(), match_label_keys=["foo"]),
                spread(1, HOSTNAME, SA, LabelSelector(), match_label_keys=["bar"]),
            ],
        ),
        MLK_PODS,
        ZONED_ABCD,
        [],
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    pytest.param(
        pod(
            "p",
            labels={"foo": "", "bar": "", "baz": ""},
            spreads=[
                spread(1, "zone", SA, FOO),
                spread(1, HOSTNAME, SA, BAR, match_label_keys=["baz"]),
            ],
        ),
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": "", "bar": "", "baz": ""}),
            pod("p-c1", node="node-c", labels={"foo": ""}),
            pod("p-c2", node="node-c", labels={"bar": ""}),
            pod("p-d3", node="node-c", labels={"bar": "", "baz": ""}),
        ],
        ZONED_ABCD,
        [],
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
]


@pytest.mark.parametrize(("p", "existing", "nodes", "failed", "want"), SCORE_CASES)
def test_pod_topology_spread_score(
    p: Pod,
    existing: list[Pod],
    nodes: list[Node],
    failed: list[Node],
    want: dict[str, int],
) -> None:
    # Upstream runs this table with defaultingType System.
    snap, handle = cluster([*nodes, *failed], existing)
    plugin = PodTopologySpread(PodTopologySpreadArgs(), handle)
    candidates = [snap.get(n.name) for n in nodes]
    state = fw.CycleState()
    assert plugin.pre_score(state, p, candidates) is None
    assert dict(run_scores(plugin, state, p, candidates)) == want


# -- arithmetic and properties -----------------------------------------------------------------


def test_go_log_matches_go_bit_for_bit() -> None:
    """Go's math.Log differs from the C library in the last bit for some inputs (log(3))."""
    assert go_log(3.0) == 1.0986122886681096
    assert go_log(14.0) == 2.639057329615259
    assert go_log(1.0) == 0.0


@pytest.mark.parametrize(
    ("x", "want"),
    [(0.5, 1), (1.5, 2), (2.5, 3), (-0.5, -1), (2.4999999, 2), (0.49999999999999994, 0)],
)
def test_go_round_half_away_from_zero(x: float, want: int) -> None:
    assert go_round(x) == want


_counts = st.dictionaries(
    st.sampled_from(["node-a", "node-b", "node-c", "node-d"]), st.integers(0, 6)
)
_zones = st.lists(st.sampled_from(["z1", "z2", "z3"]), min_size=4, max_size=4)


@pytest.mark.property
@given(_counts, _zones, st.integers(1, 5), st.integers(1, 5))
def test_scores_within_bounds(
    counts: dict[str, int], zones: list[str], zone_skew: int, host_skew: int
) -> None:
    names = ["node-a", "node-b", "node-c", "node-d"]
    nodes = [hn(n, zone=z) for n, z in zip(names, zones, strict=True)]
    p = pod(
        "p",
        labels={"foo": ""},
        spreads=[spread(zone_skew, "zone", SA, FOO), spread(host_skew, HOSTNAME, SA, FOO)],
    )
    snap, handle = cluster(nodes, on(counts))
    plugin = PodTopologySpread(PodTopologySpreadArgs(), handle)
    state = fw.CycleState()
    assert plugin.pre_score(state, p, snap.list()) is None
    scores = run_scores(plugin, state, p, snap.list())
    assert all(0 <= s <= fw.MAX_NODE_SCORE for s in scores.scores)
    assert fw.MAX_NODE_SCORE in scores.scores
