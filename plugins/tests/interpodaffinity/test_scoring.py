"""Upstream ``interpodaffinity/scoring_test.go``, ported as data, plus property tests."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedframe.cache import Snapshot
from schedframe.framework import Code, CycleState, NodeScoreList, Status
from schedframe.objects import Node, Pod
from schedframe_plugins.interpodaffinity import InterPodAffinity, InterPodAffinityArgs
from schedframe_plugins.interpodaffinity.scoring import PRE_SCORE_STATE_KEY

from ._wrappers import NAMESPACES, affinity, make_handle, node, pod, req, selector, term, weighted

SKIP = Status(Code.SKIP)

RG_CHINA = {"region": "China"}
RG_INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}

STAY_WITH_S1_IN_REGION = affinity(
    preferred=[weighted(5, term(selector(req("security", "In", "S1")), "region"))]
)
STAY_WITH_S2_IN_REGION = affinity(
    preferred=[weighted(6, term(selector(req("security", "In", "S2")), "region"))]
)
AFFINITY3 = affinity(
    preferred=[
        weighted(
            8,
            term(selector(req("security", "NotIn", "S1"), req("security", "In", "S2")), "region"),
        ),
        weighted(
            2,
            term(selector(req("security", "Exists"), req("wrongkey", "DoesNotExist")), "region"),
        ),
    ]
)
HARD_AFFINITY = affinity(
    required=[
        term(selector(req("security", "In", "S1", "value2")), "region"),
        term(selector(req("security", "Exists"), req("wrongkey", "DoesNotExist")), "region"),
    ]
)
AWAY_FROM_S1_IN_AZ = affinity(
    anti_preferred=[weighted(5, term(selector(req("security", "In", "S1")), "az"))]
)
AWAY_FROM_S2_IN_AZ = affinity(
    anti_preferred=[weighted(5, term(selector(req("security", "In", "S2")), "az"))]
)
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = affinity(
    preferred=[weighted(8, term(selector(req("security", "In", "S1")), "region"))],
    anti_preferred=[weighted(5, term(selector(req("security", "In", "S2")), "az"))],
)
_NS_SELECTOR_TERM = term(
    selector(req("security", "In", "S1")),
    "region",
    namespaces=["subteam2.team2"],
    namespace_selector=selector(req("team", "In", "team1")),
)
AFFINITY_NAMESPACE_SELECTOR = affinity(preferred=[weighted(5, _NS_SELECTOR_TERM)])
ANTI_AFFINITY_NAMESPACE_SELECTOR = affinity(anti_preferred=[weighted(5, _NS_SELECTOR_TERM)])


def run(
    plugin: InterPodAffinity, snap: Snapshot, incoming: Pod
) -> tuple[Status | None, dict[str, int] | None]:
    """PreScore, Score on every node, NormalizeScore, as the framework sequences them."""
    state = CycleState()
    nodes = snap.list()
    status = plugin.pre_score(state, incoming, nodes)
    if status is not None:
        return status, None
    names = [n.name for n in nodes]
    scores = NodeScoreList(names, [plugin.score(state, incoming, n) for n in nodes])
    assert plugin.normalize_score(state, incoming, scores) is None
    return None, dict(scores)


def check(
    incoming: Pod,
    pods: Sequence[Pod],
    nodes: Sequence[Node],
    args: InterPodAffinityArgs,
    want_status: Status | None,
    want: dict[str, int] | None,
) -> None:
    snap = Snapshot.from_objects(nodes, pods)
    plugin = InterPodAffinity(args, make_handle(snap, NAMESPACES))
    status, scores = run(plugin, snap, incoming)
    if want_status is not None:
        assert status is not None
        assert (status.code, status.reasons) == (want_status.code, want_status.reasons)
        return
    assert status is None
    assert scores == want


# --------------------------------------------------------------------------------------------
# TestPreferredAffinity
# --------------------------------------------------------------------------------------------

N3_CHINA_INDIA_AZ1 = [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)]
SUBTEAM_PODS = [
    pod(node="node1", namespace="subteam1.team1", labels=S1),
    pod(node="node1", namespace="subteam1.team1", labels=S1),
]

PREFERRED_CASES = [
    pytest.param(
        pod(labels=S1), [], N3_CHINA_INDIA_AZ1, False, SKIP, None,
        id="all nodes are same priority as Affinity is nil"),
    pytest.param(
        pod(affinity=STAY_WITH_S1_IN_REGION, labels=S1),
        [pod(node="node1", labels=S1), pod(node="node2", labels=S2),
         pod(node="node3", labels=S1)],
        N3_CHINA_INDIA_AZ1, False, None, {"node1": 100, "node2": 0, "node3": 0},
        id="Affinity: pod that matches topology key & pods in nodes will get high score "
        "comparing to otherswhich doesn't match either pods in nodes or in topology key"),
    pytest.param(
        pod(affinity=STAY_WITH_S1_IN_REGION),
        [pod(node="node1", labels=S1)],
        [node("node1", RG_CHINA), node("node2", RG_CHINA_AZ1), node("node3", RG_INDIA)],
        False, None, {"node1": 100, "node2": 100, "node3": 0},
        id="All the nodes that have the same topology key & label value with one of them has an "
        "existing pod that match the affinity rules, have the same score"),
    pytest.param(
        pod(affinity=STAY_WITH_S2_IN_REGION, labels=S1),
        [pod(node="node1", labels=S2), pod(node="node1", labels=S2),
         pod(node="node2", labels=S2), pod(node="node3", labels=S2),
         pod(node="node4", labels=S2), pod(node="node5", labels=S2)],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", RG_CHINA),
         node("node4", RG_CHINA), node("node5", RG_INDIA)],
        False, None, {"node1": 100, "node2": 0, "node3": 100, "node4": 100, "node5": 0},
        id="Affinity: nodes in one region has more matching pods comparing to other region, so "
        "the region which has more matches will get high score"),
    pytest.param(
        pod(affinity=AFFINITY3, labels=S1),
        [pod(node="node1", labels=S1), pod(node="node2", labels=S2),
         pod(node="node3", labels=S1)],
        N3_CHINA_INDIA_AZ1, False, None, {"node1": 20, "node2": 100, "node3": 0},
        id="Affinity: different Label operators and values for pod affinity scheduling "
        "preference, including some match failures "),
    pytest.param(
        pod(labels=S2),
        [pod(node="node1", affinity=STAY_WITH_S1_IN_REGION, labels=S1),
         pod(node="node2", affinity=STAY_WITH_S2_IN_REGION, labels=S2)],
        N3_CHINA_INDIA_AZ1, False, None, {"node1": 0, "node2": 100, "node3": 0},
        id="Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution "
        "in pod affinity symmetry"),
    pytest.param(
        pod(namespace="subteam1.team1", labels=S1),
        [pod(node="node1", affinity=AFFINITY_NAMESPACE_SELECTOR, labels=S1),
         pod(node="node2", affinity=STAY_WITH_S2_IN_REGION, labels=S2)],
        N3_CHINA_INDIA_AZ1, False, None, {"node1": 100, "node2": 0, "node3": 0},
        id="Affinity symmetry with namespace selector"),
    pytest.param(
        pod(namespace="subteam1.team1", labels=S1),
        [pod(node="node1", affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR, labels=S1),
         pod(node="node2", affinity=STAY_WITH_S2_IN_REGION, labels=S2)],
        N3_CHINA_INDIA_AZ1, False, None, {"node1": 0, "node2": 100, "node3": 100},
        id="AntiAffinity symmetry with namespace selector"),
    pytest.param(
        pod(labels=S1),
        [pod(node="node1", affinity=HARD_AFFINITY, labels=S1),
         pod(node="node2", affinity=HARD_AFFINITY, labels=S2)],
        N3_CHINA_INDIA_AZ1, False, None, {"node1": 100, "node2": 100, "node3": 0},
        id="Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod "
        "affinity symmetry"),
    pytest.param(
        pod(affinity=AWAY_FROM_S1_IN_AZ, labels=S1),
        [pod(node="node1", labels=S1), pod(node="node2", labels=S2)],
        [node("node1", AZ1), node("node2", RG_CHINA)],
        False, None, {"node1": 0, "node2": 100},
        id="Anti Affinity: pod that does not match existing pods in node will get high score "),
    pytest.param(
        pod(affinity=AWAY_FROM_S1_IN_AZ, labels=S1),
        [pod(node="node1", labels=S1), pod(node="node2", labels=S1)],
        [node("node1", AZ1), node("node2", RG_CHINA)],
        False, None, {"node1": 0, "node2": 100},
        id="Anti Affinity: pod that does not match topology key & match the pods in nodes will "
        "get higher score comparing to others "),
    pytest.param(
        pod(affinity=AWAY_FROM_S1_IN_AZ, labels=S1),
        [pod(node="node1", labels=S1), pod(node="node1", labels=S1),
         pod(node="node2", labels=S2)],
        [node("node1", AZ1), node("node2", RG_INDIA)],
        False, None, {"node1": 0, "node2": 100},
        id="Anti Affinity: one node has more matching pods comparing to other node, so the node "
        "which has more unmatches will get high score"),
    pytest.param(
        pod(labels=S2),
        [pod(node="node1", affinity=AWAY_FROM_S2_IN_AZ, labels=S1),
         pod(node="node2", affinity=AWAY_FROM_S1_IN_AZ, labels=S2)],
        [node("node1", AZ1), node("node2", AZ2)],
        False, None, {"node1": 0, "node2": 100},
        id="Anti Affinity symmetry: the existing pods in node which has anti affinity match will "
        "get high score"),
    pytest.param(
        pod(affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, labels=S1),
        [pod(node="node1", labels=S1), pod(node="node2", labels=S1)],
        [node("node1", RG_CHINA), node("node2", AZ1)],
        False, None, {"node1": 100, "node2": 0},
        id="Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuring"
        "Execution in both pod affinity & anti affinity"),
    pytest.param(
        pod(affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, labels=S1),
        [pod(node="node1", labels=S1), pod(node="node1", labels=S1),
         pod(node="node2", labels=S1), pod(node="node3", labels=S1),
         pod(node="node3", labels=S1), pod(node="node4", labels=S1),
         pod(node="node5", labels=S1)],
        [node("node1", RG_CHINA_AZ1), node("node2", RG_INDIA), node("node3", RG_CHINA),
         node("node4", RG_CHINA), node("node5", RG_INDIA)],
        False, None, {"node1": 100, "node2": 0, "node3": 100, "node4": 100, "node5": 0},
        id="Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to "
        "schedule and existing pods have the same labels"),
    pytest.param(
        pod(affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, labels=S1),
        [pod(node="node1", labels=S1), pod(node="node2", labels=S2),
         pod(node="node3", affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
         pod(node="node4", affinity=AWAY_FROM_S1_IN_AZ)],
        [node("node1", RG_CHINA), node("node2", AZ1), node("node3", RG_INDIA),
         node("node4", AZ2)],
        False, None, {"node1": 100, "node2": 0, "node3": 100, "node4": 0},
        id="Affinity and Anti Affinity and symmetry: considered only preferredDuringScheduling"
        "IgnoredDuringExecution in both pod affinity & anti affinity & symmetry"),
    pytest.param(
        pod(labels=S1),
        [pod(node="node1", labels=S1),
         pod(node="node2", affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ)],
        [node("node1", RG_CHINA), node("node2", RG_CHINA)],
        False, None, {"node1": 0, "node2": 0},
        id="Avoid panic when partial nodes in a topology don't have pods with affinity"),
    pytest.param(
        pod(affinity=AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1", labels=S1),
        [*SUBTEAM_PODS, pod(node="node1", namespace="subteam1.team2", labels=S1),
         pod(node="node2", namespace="subteam2.team1", labels=S1)],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        False, None, {"node1": 100, "node2": 0},
        id="Affinity with pods matching NamespaceSelector"),
    pytest.param(
        pod(affinity=AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1", labels=S1),
        [*SUBTEAM_PODS, pod(node="node1", namespace="subteam2.team2", labels=S1),
         pod(node="node2", namespace="subteam2.team1", labels=S1)],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        False, None, {"node1": 100, "node2": 0},
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields"),
    pytest.param(
        pod(affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1", labels=S1),
        [*SUBTEAM_PODS, pod(node="node1", namespace="subteam1.team2", labels=S1),
         pod(node="node2", namespace="subteam2.team1", labels=S1)],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        False, None, {"node1": 0, "node2": 100},
        id="Affinity with pods matching NamespaceSelector"),
    pytest.param(
        pod(affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1", labels=S1),
        [*SUBTEAM_PODS, pod(node="node1", namespace="subteam2.team2", labels=S1),
         pod(node="node2", namespace="subteam2.team1", labels=S1)],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        False, None, {"node1": 0, "node2": 100},
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields"),
    pytest.param(
        pod(labels=S2),
        [pod(node="node1", affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, labels=S1),
         pod(node="node2", affinity=STAY_WITH_S2_IN_REGION, labels=S2)],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        True, SKIP, None,
        id="Ignore preferred terms of existing pods"),
    pytest.param(
        pod(labels=S2),
        [pod(node="node1", affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, labels=S1),
         pod(node="node2", affinity=STAY_WITH_S2_IN_REGION, labels=S2)],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        False, None, {"node1": 0, "node2": 100},
        id="Do not ignore preferred terms of existing pods"),
    pytest.param(pod(labels=S2), [], [], False, SKIP, None, id="No nodes to score"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("incoming", "pods", "nodes", "ignore_preferred", "want_status", "want"), PREFERRED_CASES
)
def test_preferred_affinity(
    incoming: Pod,
    pods: list[Pod],
    nodes: list[Node],
    ignore_preferred: bool,
    want_status: Status | None,
    want: dict[str, int] | None,
) -> None:
    args = InterPodAffinityArgs(
        hard_pod_affinity_weight=1, ignore_preferred_terms_of_existing_pods=ignore_preferred
    )
    check(incoming, pods, nodes, args, want_status, want)


# --------------------------------------------------------------------------------------------
# TestPreferredAffinityWithHardPodAffinitySymmetricWeight
# --------------------------------------------------------------------------------------------

SERVICE_S1 = {"service": "S1"}
HARD_POD_AFFINITY = affinity(
    required=[
        term(
            selector(req("service", "In", "S1")),
            "region",
            namespaces=["", "subteam2.team2"],
            namespace_selector=selector(req("team", "In", "team1")),
        )
    ]
)
HARD_PODS = [
    pod(node="node1", affinity=HARD_POD_AFFINITY),
    pod(node="node2", affinity=HARD_POD_AFFINITY),
]

HARD_WEIGHT_CASES = [
    pytest.param(pod(labels=SERVICE_S1), 1, None, {"node1": 100, "node2": 100, "node3": 0},
                 id="with default weight"),
    pytest.param(pod(labels=SERVICE_S1), 0, SKIP, None, id="with zero weight"),
    pytest.param(pod(namespace="subteam1.team2", labels=SERVICE_S1), 1, SKIP, None,
                 id="with no matching namespace"),
    pytest.param(pod(namespace="subteam1.team1", labels=SERVICE_S1), 1, None,
                 {"node1": 100, "node2": 100, "node3": 0}, id="with matching NamespaceSelector"),
    pytest.param(pod(namespace="subteam2.team2", labels=SERVICE_S1), 1, None,
                 {"node1": 100, "node2": 100, "node3": 0}, id="with matching Namespaces"),
]  # fmt: skip


@pytest.mark.parametrize(("incoming", "weight", "want_status", "want"), HARD_WEIGHT_CASES)
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
    incoming: Pod, weight: int, want_status: Status | None, want: dict[str, int] | None
) -> None:
    args = InterPodAffinityArgs(hard_pod_affinity_weight=weight)
    check(incoming, HARD_PODS, N3_CHINA_INDIA_AZ1, args, want_status, want)


# --------------------------------------------------------------------------------------------
# Beyond the upstream tables
# --------------------------------------------------------------------------------------------


def test_raw_scores_are_signed_sums_per_topology_pair() -> None:
    incoming = pod(affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, labels=S1)
    pods = [pod(node="n1", labels=S1), pod(node="n2", labels=S2), pod(node="n2", labels=S2)]
    nodes = [node("n1", RG_CHINA_AZ1), node("n2", {"region": "China", "az": "az2"})]
    snap = Snapshot.from_objects(nodes, pods)
    plugin = InterPodAffinity(None, make_handle(snap))
    state = CycleState()
    assert plugin.pre_score(state, incoming, snap.list()) is None
    assert state[PRE_SCORE_STATE_KEY].topology_score == {
        "region": {"China": 8},
        "az": {"az2": -10},
    }
    assert [plugin.score(state, incoming, n) for n in snap.list()] == [8, -2]


def test_normalize_truncates_like_upstream_float_arithmetic() -> None:
    plugin = InterPodAffinity(None, make_handle(Snapshot()))
    state = CycleState()
    incoming = pod(affinity=STAY_WITH_S1_IN_REGION)
    snap = Snapshot.from_objects([node("n", RG_CHINA)], [pod(node="n", labels=S1)])
    plugin = InterPodAffinity(None, make_handle(snap))
    assert plugin.pre_score(state, incoming, snap.list()) is None
    scores = NodeScoreList(["a", "b", "c", "d"], [-7, 0, 3, 14])
    assert plugin.normalize_score(state, incoming, scores) is None
    # 100 * (7/21) = 33.33.., 100 * (10/21) = 47.6..
    assert scores.scores == [0, 33, 47, 100]
    equal = NodeScoreList(["a", "b"], [5, 5])
    assert plugin.normalize_score(state, incoming, equal) is None
    assert equal.scores == [0, 0]


def test_score_without_pre_score_fails() -> None:
    snap = Snapshot.from_objects([node("n")])
    plugin = InterPodAffinity(None, make_handle(snap))
    with pytest.raises(RuntimeError, match='failed to read "PreScoreInterPodAffinity"'):
        plugin.score(CycleState(), pod(), snap.get("n"))
    got = plugin.normalize_score(CycleState(), pod(), NodeScoreList(["n"], [0]))
    assert got is not None and got.code is Code.ERROR


def test_ignore_preferred_terms_still_scores_when_the_pod_has_its_own() -> None:
    incoming = pod(affinity=STAY_WITH_S2_IN_REGION, labels=S2)
    pods = [
        pod(node="node1", affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ, labels=S1),
        pod(node="node2", labels=S2),
    ]
    nodes = [node("node1", RG_CHINA), node("node2", RG_INDIA)]
    args = InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True)
    check(incoming, pods, nodes, args, None, {"node1": 0, "node2": 100})


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

_SECURITY = ("S1", "S2")


@st.composite
def _weighted_terms(draw: st.DrawFn) -> list:  # type: ignore[type-arg]
    return [
        weighted(
            draw(st.integers(1, 100)),
            term(
                selector(req("security", "In", draw(st.sampled_from(_SECURITY)))),
                draw(st.sampled_from(("region", "az"))),
            ),
        )
        for _ in range(draw(st.integers(0, 2)))
    ]


@st.composite
def _score_clusters(draw: st.DrawFn) -> tuple[list[Node], list[Pod], Pod, int]:
    nodes = []
    for i in range(draw(st.integers(1, 6))):
        labels = {}
        if draw(st.booleans()):
            labels["region"] = draw(st.sampled_from(("China", "India")))
        if draw(st.booleans()):
            labels["az"] = draw(st.sampled_from(("az1", "az2")))
        nodes.append(node(f"n{i}", labels))

    def any_pod(node_name: str) -> Pod:
        aff = draw(_weighted_terms())
        anti = draw(_weighted_terms())
        labels = {"security": draw(st.sampled_from(_SECURITY))} if draw(st.booleans()) else {}
        return pod(
            node=node_name,
            labels=labels,
            affinity=affinity(preferred=aff, anti_preferred=anti) if aff or anti else None,
        )

    pods = [
        any_pod(draw(st.sampled_from([n.metadata.name for n in nodes])))
        for _ in range(draw(st.integers(0, 8)))
    ]
    return nodes, pods, any_pod(""), draw(st.integers(0, 100))


@pytest.mark.property
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_score_clusters())
def test_normalized_scores_span_0_to_100(
    cluster: tuple[list[Node], list[Pod], Pod, int],
) -> None:
    nodes, pods, incoming, weight = cluster
    snap = Snapshot.from_objects(nodes, pods)
    plugin = InterPodAffinity(
        InterPodAffinityArgs(hard_pod_affinity_weight=weight), make_handle(snap)
    )
    status, scores = run(plugin, snap, incoming)
    if status is not None:
        assert status.code is Code.SKIP
        return
    assert scores is not None
    values = list(scores.values())
    assert all(0 <= v <= 100 for v in values)
    assert min(values) == 0
    assert max(values) in (0, 100)


@pytest.mark.property
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_score_clusters())
def test_scores_do_not_depend_on_node_order(
    cluster: tuple[list[Node], list[Pod], Pod, int],
) -> None:
    nodes, pods, incoming, _ = cluster
    results = []
    for order in (nodes, nodes[::-1]):
        snap = Snapshot.from_objects(order, pods)
        results.append(run(InterPodAffinity(None, make_handle(snap)), snap, incoming))
    (s1, d1), (s2, d2) = results
    assert (s1 is None) == (s2 is None)
    assert d1 == d2
