"""Upstream ``interpodaffinity/filtering_test.go``, ported as data, plus property tests."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.framework import Code, CycleState, PodInfo, Status
from schedframe.objects import LabelSelector, Namespace, Node, Pod
from schedframe_plugins.interpodaffinity import InterPodAffinity
from schedframe_plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_STATE_KEY,
    _incoming_affinity_anti_affinity_counts,
    _PreFilterState,
)

from ._wrappers import (
    NAMESPACES,
    REQUIRED,
    affinity,
    both_sides,
    make_handle,
    make_pod,
    namespace,
    node,
    pod,
    req,
    selector,
    term,
)

AFFINITY = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
ANTI = Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
EXISTING = Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
SKIP = Status(Code.SKIP)


def verdict(status: object) -> tuple[Code, tuple[str, ...]] | None:
    """A comparable form of a plugin answer: ``None`` for success."""
    if status is None or isinstance(status, fw.PreFilterResult):
        return None
    assert isinstance(status, Status)
    if status.is_success():
        return None
    return status.code, status.reasons


def setup(
    nodes: Sequence[Node], pods: Sequence[Pod], namespaces: Sequence[Namespace] = NAMESPACES
) -> tuple[InterPodAffinity, Snapshot]:
    snap = Snapshot.from_objects(nodes, pods)
    return InterPodAffinity(None, make_handle(snap, namespaces)), snap


# --------------------------------------------------------------------------------------------
# TestRequiredAffinitySingleNode
# --------------------------------------------------------------------------------------------

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
EXISTING_POD = make_pod().labels(POD_LABEL).node("node1").obj()
NODE1 = node("node1", {"region": "r1", "zone": "z11"})
IN_SECURITYSCAN = selector(req("service", "In", "securityscan", "value2"))
TEAM1 = selector(req("team", "In", "team1"))

SINGLE_NODE_CASES = [
    pytest.param(pod(), [], SKIP, None,
                 id="A pod that has no required pod affinity scheduling rules can schedule onto a "
                 "node with no existing pods"),
    pytest.param(
        make_pod().labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED).obj(),
        [EXISTING_POD], None, None,
        id="satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In "
        "operator that matches the existing pod"),
    pytest.param(
        make_pod().labels(POD_LABEL2)
        .pod_affinity_not_in("service", "region", ["securityscan3", "value3"], REQUIRED).obj(),
        [EXISTING_POD], None, None,
        id="satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity "
        "using not in operator in labelSelector that matches the existing pod"),
    pytest.param(
        both_sides(labels=POD_LABEL2, affinity_terms=[
            term(IN_SECURITYSCAN, namespaces=["DiffNameSpace"])]),
        [make_pod().namespace("ns").label("service", "securityscan").node("node1").obj()],
        None, AFFINITY,
        id="Does not satisfy the PodAffinity with labelSelector because of diff Namespace"),
    pytest.param(
        make_pod().labels(POD_LABEL)
        .pod_affinity_in("service", "", ["antivirusscan", "value2"], REQUIRED).obj(),
        [EXISTING_POD], None, AFFINITY,
        id="Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing "
        "pod"),
    pytest.param(
        both_sides(labels=POD_LABEL2, affinity_terms=[
            term(selector(req("service", "Exists"), req("wrongkey", "DoesNotExist")), "region"),
            term(selector(req("service", "In", "securityscan"),
                          req("service", "NotIn", "WrongValue")), "region"),
        ]),
        [EXISTING_POD], None, None,
        id="satisfies the PodAffinity with different label Operators in multiple "
        "RequiredDuringSchedulingIgnoredDuringExecution "),
    pytest.param(
        both_sides(labels=POD_LABEL2, affinity_terms=[
            term(selector(req("service", "Exists"), req("wrongkey", "DoesNotExist")), "region"),
            term(selector(req("service", "In", "securityscan2"),
                          req("service", "NotIn", "WrongValue")), "region"),
        ]),
        [EXISTING_POD], None, AFFINITY,
        id="The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot "
        "schedule onto the node because one of the matchExpression item don't match."),
    pytest.param(
        make_pod().labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED).obj(),
        [EXISTING_POD], None, None,
        id="satisfies the PodAffinity and PodAntiAffinity with the existing pod"),
    pytest.param(
        make_pod().labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED).obj(),
        [make_pod().node("node1").labels(POD_LABEL)
         .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED).obj()],
        None, None,
        id="satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the "
        "existing pod"),
    pytest.param(
        make_pod().labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED).obj(),
        [EXISTING_POD], None, ANTI,
        id="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing "
        "pod"),
    pytest.param(
        make_pod().labels(POD_LABEL)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED).obj(),
        [make_pod().labels(POD_LABEL).node("node1")
         .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED).obj()],
        None, EXISTING,
        id="satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity "
        "symmetry with the existing pod"),
    pytest.param(
        make_pod().labels(POD_LABEL)
        .pod_affinity_not_in("service", "region", ["securityscan", "value2"], REQUIRED).obj(),
        [make_pod().label("service", "securityscan").node("node2").obj()],
        None, AFFINITY,
        id="pod matches its own Label in PodAffinity and that matches the existing pod Labels"),
    pytest.param(
        make_pod().labels(POD_LABEL).obj(),
        [make_pod().node("node1").labels(POD_LABEL)
         .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED).obj()],
        None, EXISTING,
        id="verify that PodAntiAffinity from existing pod is respected when pod has no "
        "AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing "
        "pod"),
    pytest.param(
        make_pod().labels(POD_LABEL).obj(),
        [make_pod().node("node1").labels(POD_LABEL)
         .pod_anti_affinity_not_in("service", "zone", ["securityscan", "value2"], REQUIRED)
         .obj()],
        SKIP, None,
        id="verify that PodAntiAffinity from existing pod is respected when pod has no "
        "AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod"),
    pytest.param(
        make_pod().labels(POD_LABEL)
        .pod_anti_affinity_exists("service", "region", REQUIRED)
        .pod_anti_affinity_exists("security", "region", REQUIRED).obj(),
        [make_pod().node("node1").labels(POD_LABEL2)
         .pod_anti_affinity_exists("security", "zone", REQUIRED).obj()],
        None, ANTI,
        id="satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity "
        "symmetry with incoming pod"),
    pytest.param(
        make_pod().labels(POD_LABEL)
        .pod_anti_affinity_exists("service", "zone", REQUIRED)
        .pod_anti_affinity_exists("security", "zone", REQUIRED).obj(),
        [make_pod().node("node1").labels(POD_LABEL2)
         .pod_anti_affinity_exists("security", "zone", REQUIRED).obj()],
        None, ANTI,
        id="PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each "
        "other on AffinityTerms"),
    pytest.param(
        make_pod().labels(POD_LABEL2)
        .pod_anti_affinity_exists("security", "zone", REQUIRED).obj(),
        [make_pod().node("node1").labels(POD_LABEL)
         .pod_anti_affinity_exists("service", "zone", REQUIRED)
         .pod_anti_affinity_exists("security", "zone", REQUIRED).obj()],
        None, EXISTING,
        id="PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each "
        "other on AffinityTerms"),
    pytest.param(
        make_pod().labels({"abc": "", "xyz": ""})
        .pod_anti_affinity_exists("abc", "zone", REQUIRED)
        .pod_anti_affinity_exists("def", "zone", REQUIRED).obj(),
        [make_pod().node("node1").labels({"def": "", "xyz": ""})
         .pod_anti_affinity_exists("abc", "zone", REQUIRED)
         .pod_anti_affinity_exists("def", "zone", REQUIRED).obj()],
        None, ANTI,
        id="PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each "
        "other on AffinityTerms"),
    pytest.param(
        make_pod().labels({"def": "", "xyz": ""})
        .pod_anti_affinity_exists("abc", "zone", REQUIRED)
        .pod_anti_affinity_exists("def", "zone", REQUIRED).obj(),
        [make_pod().node("node1").labels({"abc": "", "xyz": ""})
         .pod_anti_affinity_exists("abc", "zone", REQUIRED)
         .pod_anti_affinity_exists("def", "zone", REQUIRED).obj()],
        None, ANTI,
        id="PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each "
        "other on AffinityTerms"),
    pytest.param(
        both_sides(labels=POD_LABEL2, affinity_terms=[
            term(IN_SECURITYSCAN, "region", namespace_selector=TEAM1)]),
        [pod(namespace="subteam1.team1", node="node1", labels=POD_LABEL)],
        None, None,
        id="affinity with NamespaceSelector"),
    pytest.param(
        both_sides(labels=POD_LABEL2, affinity_terms=[
            term(IN_SECURITYSCAN, "region", namespace_selector=TEAM1)]),
        [pod(namespace="subteam1.team2", node="node1", labels=POD_LABEL)],
        None, AFFINITY,
        id="affinity with non-matching NamespaceSelector"),
    pytest.param(
        both_sides(namespace="subteam1.team1", labels=POD_LABEL2, anti_affinity_terms=[
            term(IN_SECURITYSCAN, "zone", namespace_selector=TEAM1)]),
        [pod(namespace="subteam2.team1", node="node1", labels=POD_LABEL)],
        None, ANTI,
        id="anti-affinity with matching NamespaceSelector"),
    pytest.param(
        both_sides(namespace="subteam1.team1", labels=POD_LABEL2, anti_affinity_terms=[
            term(IN_SECURITYSCAN, "zone", namespace_selector=LabelSelector())]),
        [pod(namespace="subteam2.team1", node="node1", labels=POD_LABEL)],
        None, ANTI,
        id="anti-affinity with matching all NamespaceSelector"),
    pytest.param(
        both_sides(namespace="subteam1.team1", labels=POD_LABEL2, anti_affinity_terms=[
            term(IN_SECURITYSCAN, "zone", namespace_selector=TEAM1)]),
        [pod(namespace="subteam1.team2", node="node1", labels=POD_LABEL)],
        None, None,
        id="anti-affinity with non-matching NamespaceSelector"),
]  # fmt: skip


@pytest.mark.parametrize(("incoming", "pods", "want_pre_filter", "want_filter"), SINGLE_NODE_CASES)
def test_required_affinity_single_node(
    incoming: Pod,
    pods: list[Pod],
    want_pre_filter: Status | None,
    want_filter: Status | None,
) -> None:
    plugin, snap = setup([NODE1], pods)
    state = CycleState()
    got = plugin.pre_filter(state, incoming, snap.list())
    assert verdict(got) == verdict(want_pre_filter)
    if got is not None:
        return
    assert verdict(plugin.filter(state, incoming, snap.get("node1"))) == verdict(want_filter)


# --------------------------------------------------------------------------------------------
# TestRequiredAffinityMultipleNodes
# --------------------------------------------------------------------------------------------

RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}


def _hosts(*zones: str) -> list[Node]:
    names = ["nodeA", "nodeB", "nodeC"]
    return [
        node(names[i], {"region": "r1", "zone": z, "hostname": names[i]})
        for i, z in enumerate(zones)
    ]


MULTI_NODE_CASES = [
    pytest.param(
        make_pod().pod_affinity_in("foo", "region", ["bar"], REQUIRED).obj(),
        [make_pod().name("p1").node("node1").labels({"foo": "bar"}).obj()],
        [node("node1", RG_CHINA), node("node2", RG_CHINA_AZ1), node("node3", RG_INDIA)],
        None, [None, None, AFFINITY],
        id="A pod can be scheduled onto all the nodes that have the same topology key & label "
        "value with one of them has an existing pod that matches the affinity rules"),
    pytest.param(
        make_pod().labels({"foo": "bar", "service": "securityscan"})
        .pod_affinity_in("foo", "zone", ["bar"], REQUIRED)
        .pod_affinity_in("service", "zone", ["securityscan"], REQUIRED).obj(),
        [make_pod().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
        [node("nodeA", {"zone": "az1", "hostname": "h1"}),
         node("nodeB", {"zone": "az2", "hostname": "h2"})],
        None, [None, None],
        id="The affinity rule is to schedule all of the pods of this collection to the same zone. "
        "The first pod of the collection should not be blocked from being scheduled onto any "
        "node, even there's no existing pod that matches the rule anywhere."),
    pytest.param(
        make_pod().labels({"foo": "bar", "service": "securityscan"})
        .pod_affinity_in("foo", "zone", ["bar"], REQUIRED)
        .pod_affinity_in("service", "zone", ["securityscan"], REQUIRED).obj(),
        [make_pod().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
        [node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}),
         node("nodeB", {"zoneLabel": "az2", "hostname": "h2"})],
        None, [AFFINITY, AFFINITY],
        id="The first pod of the collection can only be scheduled on nodes labelled with the "
        "requested topology keys"),
    pytest.param(
        make_pod().pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED).obj(),
        [make_pod().node("nodeA").labels({"foo": "abc"}).obj()],
        [node("nodeA", {"region": "r1", "hostname": "nodeA"}),
         node("nodeB", {"region": "r1", "hostname": "nodeB"})],
        None, [ANTI, ANTI],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
        "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and "
        "nodeB."),
    pytest.param(
        make_pod().pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED)
        .pod_anti_affinity_in("service", "zone", ["securityscan"], REQUIRED).obj(),
        [make_pod().node("nodeA").labels({"foo": "abc", "service": "securityscan"}).obj()],
        _hosts("z1", "z2"),
        None, [ANTI, ANTI],
        id="This test ensures that anti-affinity matches a pod when any term of the anti-affinity "
        "rule matches a pod."),
    pytest.param(
        make_pod().pod_anti_affinity_in("foo", "region", ["abc"], REQUIRED).obj(),
        [make_pod().node("nodeA").labels({"foo": "abc"}).obj()],
        [node("nodeA", RG_CHINA), node("nodeB", RG_CHINA_AZ1), node("nodeC", RG_INDIA)],
        None, [ANTI, ANTI, None],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
        "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB "
        "but can be scheduled onto nodeC"),
    pytest.param(
        make_pod().namespace("NS1").labels({"foo": "123"})
        .pod_anti_affinity_in("foo", "region", ["bar"], REQUIRED).obj(),
        [make_pod().node("nodeA").namespace("NS1").labels({"foo": "bar"}).obj(),
         make_pod().node("nodeC").namespace("NS2")
         .pod_anti_affinity_in("foo", "region", ["123"], REQUIRED).obj()],
        [node("nodeA", RG_CHINA), node("nodeB", RG_CHINA_AZ1), node("nodeC", RG_INDIA)],
        None, [ANTI, ANTI, None],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
        "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but "
        "can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod "
        "affinity rule but in different namespace)"),
    pytest.param(
        make_pod().label("foo", "").obj(),
        [make_pod().node("nodeA")
         .pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED).obj()],
        _hosts("z1", "z1"),
        SKIP, [None, None],
        id="Test existing pod's anti-affinity: if an existing pod has a term with invalid "
        "topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the "
        "term is also checked"),
    pytest.param(
        make_pod().node("nodeA")
        .pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED).obj(),
        [make_pod().node("nodeA").labels({"foo": ""}).obj()],
        _hosts("z1", "z1"),
        None, [None, None],
        id="Test incoming pod's anti-affinity: even if labelSelector matches, we still check if "
        "topologyKey matches"),
    pytest.param(
        make_pod().label("foo", "").label("bar", "").obj(),
        [make_pod().node("nodeA").pod_anti_affinity_exists("foo", "zone", REQUIRED).obj(),
         make_pod().node("nodeA").pod_anti_affinity_exists("bar", "region", REQUIRED).obj()],
        _hosts("z1", "z2"),
        None, [EXISTING, EXISTING],
        id="Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it "
        "violates each existingPod's terms on all nodes"),
    pytest.param(
        make_pod().pod_anti_affinity_exists("foo", "zone", REQUIRED)
        .pod_anti_affinity_exists("bar", "region", REQUIRED).obj(),
        [make_pod().node("nodeA").labels({"foo": ""}).obj(),
         make_pod().node("nodeB").labels({"bar": ""}).obj()],
        _hosts("z1", "z2"),
        None, [ANTI, ANTI],
        id="Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at "
        "least violates one anti-affinity rule of existingPod"),
    pytest.param(
        make_pod().label("foo", "").label("bar", "").obj(),
        [make_pod().node("nodeA")
         .pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED)
         .pod_anti_affinity_exists("bar", "zone", REQUIRED).obj()],
        _hosts("z1", "z2"),
        None, [EXISTING, None],
        id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, "
        "it's counted as a single term match - case when one term has invalid topologyKey"),
    pytest.param(
        make_pod().pod_anti_affinity_exists("foo", "invalid-node-label", REQUIRED)
        .pod_anti_affinity_exists("bar", "zone", REQUIRED).obj(),
        [make_pod().name("podA").node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        _hosts("z1", "z2"),
        None, [ANTI, None],
        id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, "
        "it's counted as a single term match - case when one term has invalid topologyKey"),
    pytest.param(
        make_pod().label("foo", "").label("bar", "").obj(),
        [make_pod().node("nodeA")
         .pod_anti_affinity_exists("foo", "region", REQUIRED)
         .pod_anti_affinity_exists("bar", "zone", REQUIRED).obj()],
        _hosts("z1", "z2"),
        None, [EXISTING, EXISTING],
        id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, "
        "it's counted as a single term match - case when all terms have valid topologyKey"),
    pytest.param(
        make_pod().pod_anti_affinity_exists("foo", "region", REQUIRED)
        .pod_anti_affinity_exists("bar", "zone", REQUIRED).obj(),
        [make_pod().node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        _hosts("z1", "z2"),
        None, [ANTI, ANTI],
        id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, "
        "it's counted as a single term match - case when all terms have valid topologyKey"),
    pytest.param(
        make_pod().label("foo", "").label("bar", "").obj(),
        [make_pod().node("nodeA")
         .pod_anti_affinity_exists("foo", "zone", REQUIRED)
         .pod_anti_affinity_exists("labelA", "zone", REQUIRED).obj(),
         make_pod().node("nodeB")
         .pod_anti_affinity_exists("bar", "zone", REQUIRED)
         .pod_anti_affinity_exists("labelB", "zone", REQUIRED).obj()],
        _hosts("z1", "z2", "z3"),
        None, [EXISTING, EXISTING, None],
        id="Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one "
        "anti-affinity term matches incoming pod, so incoming pod can only be scheduled to "
        "nodeC"),
    pytest.param(
        make_pod().pod_affinity_exists("foo", "region", REQUIRED)
        .pod_affinity_exists("bar", "zone", REQUIRED).obj(),
        [make_pod().name("pod1").labels({"foo": "", "bar": ""}).node("nodeA").obj()],
        _hosts("z1", "z1"),
        None, [None, None],
        id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then "
        "check if all topologyKeys match"),
    pytest.param(
        make_pod().pod_affinity_exists("foo", "region", REQUIRED)
        .pod_affinity_exists("bar", "zone", REQUIRED).obj(),
        [make_pod().node("nodeA").name("pod1").labels({"foo": ""}).obj(),
         make_pod().node("nodeB").name("pod2").labels({"bar": ""}).obj()],
        _hosts("z1", "z2"),
        None, [AFFINITY, AFFINITY],
        id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then "
        "check if all topologyKeys match, and the match logic should be satisfied on the same "
        "pod"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("incoming", "pods", "nodes", "want_pre_filter", "want_filters"), MULTI_NODE_CASES
)
def test_required_affinity_multiple_nodes(
    incoming: Pod,
    pods: list[Pod],
    nodes: list[Node],
    want_pre_filter: Status | None,
    want_filters: list[Status | None],
) -> None:
    plugin, snap = setup(nodes, pods, [namespace("NS1")])
    state = CycleState()
    got = plugin.pre_filter(state, incoming, snap.list())
    assert verdict(got) == verdict(want_pre_filter)
    if got is not None:
        return
    for n, want in zip(nodes, want_filters, strict=True):
        got_filter = plugin.filter(state, incoming, snap.get(n.metadata.name))
        assert verdict(got_filter) == verdict(want), n.metadata.name


# --------------------------------------------------------------------------------------------
# TestPreFilterDisabled
# --------------------------------------------------------------------------------------------


def test_pre_filter_disabled() -> None:
    plugin, _ = setup([], [])
    got = plugin.filter(CycleState(), pod(), fw.NodeInfo(node("")))
    assert got is not None
    assert got.code is Code.ERROR
    assert got.reasons == ('error reading "PreFilterInterPodAffinity" from cycleState: not found',)


def test_add_pod_without_pre_filter_is_an_error() -> None:
    plugin, _ = setup([], [])
    info = fw.NodeInfo(node("n"))
    for got in (
        plugin.add_pod(CycleState(), pod(), PodInfo(pod()), info),
        plugin.remove_pod(CycleState(), pod(), PodInfo(pod()), info),
    ):
        assert got is not None and got.code is Code.ERROR
        assert (
            got.message() == 'error reading "PreFilterInterPodAffinity" from cycleState: not found'
        )


# --------------------------------------------------------------------------------------------
# TestPreFilterStateAddRemovePod
# --------------------------------------------------------------------------------------------

SELECTOR1 = {"foo": "bar"}
ANTI_FOO_BAR = [term(selector(req("foo", "In", "bar")), "region")]
COMPLEX_TERMS = [
    term(selector(req("foo", "In", "bar", "buzz")), "region"),
    term(selector(req("service", "NotIn", "bar", "security", "test")), "zone"),
]
ADD_REMOVE_NODES = [
    node("nodeA", {"region": "r1", "zone": "z11"}),
    node("nodeB", {"region": "r1", "zone": "z12"}),
    node("nodeC", {"region": "r2", "zone": "z21"}),
]

ADD_REMOVE_CASES = [
    pytest.param(
        pod("pending", labels=SELECTOR1, affinity=affinity(anti_required=ANTI_FOO_BAR)),
        [pod("p1", labels=SELECTOR1, node="nodeA"),
         pod("p2", node="nodeC", affinity=affinity(anti_required=ANTI_FOO_BAR))],
        pod("addedPod", labels=SELECTOR1, node="nodeB",
            affinity=affinity(anti_required=ANTI_FOO_BAR)),
        {("region", "r1"): 2},
        {},
        id="preFilterState anti-affinity terms are updated correctly after adding and removing a "
        "pod"),
    pytest.param(
        pod("pending", labels=SELECTOR1, affinity=affinity(anti_required=COMPLEX_TERMS)),
        [pod("p1", labels=SELECTOR1, node="nodeA"),
         pod("p2", node="nodeC", affinity=affinity(anti_required=ANTI_FOO_BAR))],
        pod("addedPod", labels=SELECTOR1, node="nodeA",
            affinity=affinity(anti_required=COMPLEX_TERMS)),
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
        {},
        id="preFilterState anti-affinity terms are updated correctly after adding and removing a "
        "pod"),
    pytest.param(
        pod("pending", labels=SELECTOR1, affinity=affinity(required=COMPLEX_TERMS)),
        [pod("p1", labels=SELECTOR1, node="nodeA"),
         pod("p2", node="nodeC",
             affinity=affinity(required=COMPLEX_TERMS, anti_required=ANTI_FOO_BAR))],
        pod("addedPod", labels=SELECTOR1, node="nodeA",
            affinity=affinity(anti_required=COMPLEX_TERMS)),
        {},
        {("region", "r1"): 2, ("zone", "z11"): 2},
        id="preFilterState matching pod affinity and anti-affinity are updated correctly after "
        "adding and removing a pod"),
]  # fmt: skip


def _counts(s: _PreFilterState) -> tuple[dict[tuple[str, str], int], ...]:
    return (s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts)


def _pre_filter_state(
    pending: Pod, pods: Sequence[Pod]
) -> tuple[InterPodAffinity, CycleState, _PreFilterState, Snapshot]:
    plugin, snap = setup(ADD_REMOVE_NODES, pods, [])
    state = CycleState()
    assert plugin.pre_filter(state, pending, snap.list()) is None
    return plugin, state, state[PRE_FILTER_STATE_KEY], snap


@pytest.mark.parametrize(
    ("pending", "existing", "added", "want_anti_affinity", "want_affinity"), ADD_REMOVE_CASES
)
def test_pre_filter_state_add_remove_pod(
    pending: Pod,
    existing: list[Pod],
    added: Pod,
    want_anti_affinity: dict[tuple[str, str], int],
    want_affinity: dict[tuple[str, str], int],
) -> None:
    # The state PreFilter computes with every pod, the added one included.
    _, _, all_pods_state, _ = _pre_filter_state(pending, [*existing, added])
    # The state computed without the added pod, then updated incrementally.
    plugin, state, s, snap = _pre_filter_state(pending, existing)
    original = s.clone()

    node_info = snap.get(added.spec.node_name)
    assert plugin.add_pod(state, pending, PodInfo(added), node_info) is None
    new = state[PRE_FILTER_STATE_KEY]
    assert new.anti_affinity_counts == want_anti_affinity
    assert new.affinity_counts == want_affinity
    assert _counts(all_pods_state) == _counts(s)

    assert plugin.remove_pod(state, pending, PodInfo(added), node_info) is None
    assert _counts(original) == _counts(s)


# --------------------------------------------------------------------------------------------
# TestPreFilterStateClone
# --------------------------------------------------------------------------------------------


def test_pre_filter_state_clone() -> None:
    source = _PreFilterState(
        pod=pod(),
        affinity_terms=(),
        anti_affinity_terms=(),
        namespace_labels={},
        existing_anti_affinity_counts={("name", "node1"): 1, ("name", "node2"): 1},
        affinity_counts={("name", "nodeA"): 1, ("name", "nodeC"): 2},
        anti_affinity_counts={("name", "nodeN"): 3, ("name", "nodeM"): 1},
    )
    clone = source.clone()
    assert clone is not source
    assert _counts(clone) == _counts(source)
    for a, b in zip(_counts(clone), _counts(source), strict=True):
        assert a is not b
    clone.affinity_counts[("name", "nodeA")] = 5
    assert source.affinity_counts[("name", "nodeA")] == 1


def test_cycle_state_clone_copies_the_counts() -> None:
    pending = pod("pending", labels=SELECTOR1, affinity=affinity(anti_required=ANTI_FOO_BAR))
    added = pod("added", labels=SELECTOR1, node="nodeB")
    plugin, state, s, snap = _pre_filter_state(pending, [pod("p1", labels=SELECTOR1, node="nodeA")])
    copy = state.clone()
    assert plugin.add_pod(copy, pending, PodInfo(added), snap.get("nodeB")) is None
    assert copy[PRE_FILTER_STATE_KEY].anti_affinity_counts == {("region", "r1"): 2}
    assert s.anti_affinity_counts == {("region", "r1"): 1}


# --------------------------------------------------------------------------------------------
# TestGetTPMapMatchingIncomingAffinityAntiAffinity
# --------------------------------------------------------------------------------------------


def _normal(*labels: str) -> Pod:
    w = make_pod().name("normal").node("nodeA")
    for label in labels:
        w.label(label, "")
    return w.obj()


NORMAL_A, NORMAL_B, NORMAL_AB = _normal("aaa"), _normal("bbb"), _normal("aaa", "bbb")
NODE_A = node("nodeA", {"hostname": "nodeA"})
ON_A = {("hostname", "nodeA"): 1}

INCOMING_COUNT_CASES = [
    pytest.param([], make_pod().name("aaa-normal").obj(), {}, {}, id="nil test"),
    pytest.param([NORMAL_A], make_pod().name("aaa-normal").obj(), {}, {},
                 id="incoming pod without affinity/anti-affinity causes a no-op"),
    pytest.param(
        [NORMAL_B],
        make_pod().name("aaa-anti").pod_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_anti_affinity_exists("aaa", "hostname", REQUIRED).obj(),
        {}, {},
        id="no pod has label that violates incoming pod's affinity and anti-affinity"),
    pytest.param(
        [NORMAL_A],
        make_pod().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_anti_affinity_exists("aaa", "hostname", REQUIRED).obj(),
        ON_A, ON_A,
        id="existing pod matches incoming pod's affinity and anti-affinity - single term case"),
    pytest.param(
        [NORMAL_AB],
        make_pod().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_affinity_exists("bbb", "hostname", REQUIRED)
        .pod_anti_affinity_exists("aaa", "hostname", REQUIRED).obj(),
        {("hostname", "nodeA"): 2}, ON_A,
        id="existing pod matches incoming pod's affinity and anti-affinity - multiple terms case"),
    pytest.param(
        [NORMAL_A],
        make_pod().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_affinity_exists("bbb", "hostname", REQUIRED)
        .pod_anti_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_anti_affinity_exists("bbb", "hostname", REQUIRED).obj(),
        {}, ON_A,
        id="existing pod not match incoming pod's affinity but matches anti-affinity"),
    pytest.param(
        [NORMAL_AB],
        make_pod().name("anaffi-antiaffiti").pod_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_affinity_exists("ccc", "hostname", REQUIRED)
        .pod_anti_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_anti_affinity_exists("ccc", "hostname", REQUIRED).obj(),
        {}, ON_A,
        id="incoming pod's anti-affinity has more than one term - existing pod violates partial "
        "term - case 1"),
    pytest.param(
        [NORMAL_B],
        make_pod().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_affinity_exists("bbb", "hostname", REQUIRED)
        .pod_anti_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_anti_affinity_exists("bbb", "hostname", REQUIRED).obj(),
        {}, ON_A,
        id="incoming pod's anti-affinity has more than one term - existing pod violates partial "
        "term - case 2"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("existing", "incoming", "want_affinity", "want_anti_affinity"), INCOMING_COUNT_CASES
)
def test_get_incoming_affinity_anti_affinity_counts(
    existing: list[Pod],
    incoming: Pod,
    want_affinity: dict[tuple[str, str], int],
    want_anti_affinity: dict[tuple[str, str], int],
) -> None:
    snap = Snapshot.from_objects([NODE_A], existing)
    info = PodInfo(incoming)
    got = _incoming_affinity_anti_affinity_counts(
        info.required_affinity_terms, info.required_anti_affinity_terms, snap.list()
    )
    assert got == (want_affinity, want_anti_affinity)


# --------------------------------------------------------------------------------------------
# Beyond the upstream tables
# --------------------------------------------------------------------------------------------


def test_self_affinity_exception_only_when_nothing_matches_anywhere() -> None:
    """A pod matching its own affinity passes anywhere only while no pod matches the terms."""
    incoming = (
        make_pod().label("app", "web").pod_affinity_in("app", "zone", ["web"], REQUIRED).obj()
    )
    nodes = [node("n1", {"zone": "z1"}), node("n2", {"zone": "z2"}), node("n3", {})]
    for pods, want in (
        ([], [None, None, AFFINITY]),
        ([pod("web", node="n1", labels={"app": "web"})], [None, AFFINITY, AFFINITY]),
    ):
        plugin, snap = setup(nodes, pods)
        state = CycleState()
        assert plugin.pre_filter(state, incoming, snap.list()) is None
        got = [verdict(plugin.filter(state, incoming, snap.get(n.metadata.name))) for n in nodes]
        assert got == [verdict(w) for w in want]


def test_existing_pod_namespace_selector_uses_incoming_namespace_labels() -> None:
    """An existing pod's anti-affinity term with a namespace selector sees the incoming pod's
    namespace labels."""
    existing = pod(
        node="node1",
        namespace="other",
        affinity=affinity(anti_required=[term(IN_SECURITYSCAN, "zone", namespace_selector=TEAM1)]),
    )
    plugin, snap = setup([NODE1], [existing])
    for ns, want in (("subteam1.team1", EXISTING), ("subteam1.team2", SKIP), ("unknown", SKIP)):
        incoming = pod(namespace=ns, labels=POD_LABEL)
        state = CycleState()
        got = plugin.pre_filter(state, incoming, snap.list())
        if want is SKIP:
            assert verdict(got) == verdict(SKIP), ns
        else:
            assert got is None
            assert verdict(plugin.filter(state, incoming, snap.get("node1"))) == verdict(want)


def test_nominated_pods_are_counted_through_the_framework() -> None:
    """The runtime adds nominated pods on a cloned state through AddPod."""
    from schedframe.runtime import Framework

    incoming = (
        make_pod()
        .name("web")
        .uid("web")
        .pod_anti_affinity_in("app", "hostname", ["db"], REQUIRED)
        .obj()
    )
    nodes = [node("n1", {"hostname": "n1"}), node("n2", {"hostname": "n2"})]
    snap = Snapshot.from_objects(nodes, [])
    framework = Framework(snapshot=snap)
    plugin = InterPodAffinity(None, framework)
    framework.add_plugin(plugin)
    nominated = make_pod().name("db").uid("db").label("app", "db").nominated("n1").obj()
    framework.nominator.add_nominated_pod(PodInfo(nominated), "n1")

    state = CycleState()
    _, status, _ = framework.run_pre_filter_plugins(state, incoming)
    assert status is None
    got = framework.run_filter_plugins_with_nominated_pods(state, incoming, snap.get("n1"))
    assert got is not None
    assert (got.code, got.reasons, got.plugin) == (
        Code.UNSCHEDULABLE,
        (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,),
        "InterPodAffinity",
    )
    assert framework.run_filter_plugins_with_nominated_pods(state, incoming, snap.get("n2")) is None
    # The cycle's own state never saw the nominated pod.
    assert state[PRE_FILTER_STATE_KEY].anti_affinity_counts == {}


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

_KEYS = ("zone", "region", "hostname")
_APPS = ("a", "b", "c")


@st.composite
def _terms(draw: st.DrawFn) -> list:  # type: ignore[type-arg]
    out = []
    for _ in range(draw(st.integers(0, 2))):
        app = draw(st.sampled_from(_APPS))
        op = draw(st.sampled_from(("In", "NotIn", "Exists")))
        sel = selector(req("app", op)) if op == "Exists" else selector(req("app", op, app))
        out.append(term(sel, draw(st.sampled_from(_KEYS))))
    return out


@st.composite
def _pods(draw: st.DrawFn, node_name: str, index: int) -> Pod:
    labels = {"app": draw(st.sampled_from(_APPS))} if draw(st.booleans()) else {}
    aff = draw(_terms())
    anti = draw(_terms())
    return pod(
        f"p{index}",
        uid=f"uid-{index}",
        node=node_name,
        labels=labels,
        affinity=affinity(required=aff, anti_required=anti) if aff or anti else None,
    )


@st.composite
def _clusters(draw: st.DrawFn) -> tuple[list[Node], list[Pod], Pod]:
    nodes = []
    for i in range(draw(st.integers(1, 5))):
        labels = {"hostname": f"n{i}"}
        if draw(st.booleans()):
            labels["zone"] = draw(st.sampled_from(("z1", "z2")))
        if draw(st.booleans()):
            labels["region"] = draw(st.sampled_from(("r1", "r2")))
        nodes.append(node(f"n{i}", labels))
    pods = [
        draw(_pods(draw(st.sampled_from([n.metadata.name for n in nodes])), i))
        for i in range(draw(st.integers(0, 6)))
    ]
    return nodes, pods, draw(_pods("", 99))


def _verdicts(nodes: list[Node], pods: list[Pod], incoming: Pod) -> dict[str, object]:
    plugin, snap = setup(nodes, pods)
    state = CycleState()
    pre = plugin.pre_filter(state, incoming, snap.list())
    if pre is not None:
        return {"prefilter": verdict(pre)}
    return {n.metadata.name: verdict(plugin.filter(state, incoming, snap.get(n.metadata.name)))
            for n in nodes}  # fmt: skip


@pytest.mark.property
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_clusters())
def test_filter_verdict_does_not_depend_on_node_order(
    cluster: tuple[list[Node], list[Pod], Pod],
) -> None:
    nodes, pods, incoming = cluster
    assert _verdicts(nodes, pods, incoming) == _verdicts(nodes[::-1], pods[::-1], incoming)


@pytest.mark.property
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_clusters(), st.data())
def test_add_pod_equals_recomputing_and_remove_pod_undoes_it(
    cluster: tuple[list[Node], list[Pod], Pod], data: st.DataObject
) -> None:
    nodes, pods, incoming = cluster
    if not pods:
        return
    added = pods[data.draw(st.integers(0, len(pods) - 1))]
    rest = [p for p in pods if p is not added]
    plugin, snap = setup(nodes, rest)
    state = CycleState()
    if plugin.pre_filter(state, incoming, snap.list()) is not None:
        return  # Skip: the extensions are not called
    full_plugin, full_snap = setup(nodes, pods)
    full_state = CycleState()
    if full_plugin.pre_filter(full_state, incoming, full_snap.list()) is not None:
        return
    before = _counts(state[PRE_FILTER_STATE_KEY].clone())
    copy = state.clone()
    node_info = snap.get(added.spec.node_name)
    assert plugin.add_pod(copy, incoming, PodInfo(added), node_info) is None
    assert _counts(copy[PRE_FILTER_STATE_KEY]) == _counts(full_state[PRE_FILTER_STATE_KEY])
    # The original state is untouched by updates on its clone.
    assert _counts(state[PRE_FILTER_STATE_KEY]) == before
    assert plugin.remove_pod(copy, incoming, PodInfo(added), node_info) is None
    assert _counts(copy[PRE_FILTER_STATE_KEY]) == before
