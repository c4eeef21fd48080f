"""Upstream ``nodeaffinity/node_affinity_test.go`` (TestNodeAffinity, TestNodeAffinityPriority,
Test_isSchedulableAfterNodeChange) and ``validation_pluginargs_test.go``'s NodeAffinityArgs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.config import decode_args
from schedframe.errors import ConfigError
from schedframe.objects import (
    Affinity,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    Pod,
    PodSpec,
    PreferredSchedulingTerm,
)
from schedframe.objects import NodeAffinity as NodeAffinitySpec
from schedframe.runtime import Framework
from schedframe_plugins.nodeaffinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NodeAffinity,
    NodeAffinityArgs,
)

NAME = "metadata.name"


def req(key: str, op: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key=key, operator=op, values=values)


def term(
    *exprs: NodeSelectorRequirement, fields: Sequence[NodeSelectorRequirement] = ()
) -> NodeSelectorTerm:
    return NodeSelectorTerm(match_expressions=exprs, match_fields=tuple(fields))


def pref(weight: int, *exprs: NodeSelectorRequirement) -> PreferredSchedulingTerm:
    return PreferredSchedulingTerm(weight=weight, preference=term(*exprs))


def make_pod(
    *terms: NodeSelectorTerm,
    node_selector: Mapping[str, str] | None = None,
    preferred: Sequence[PreferredSchedulingTerm] = (),
    affinity_without_required: bool = False,
) -> Pod:
    affinity = None
    if terms or preferred or affinity_without_required:
        affinity = Affinity(
            node_affinity=NodeAffinitySpec(
                required=NodeSelector(node_selector_terms=terms) if terms else None,
                preferred=tuple(preferred),
            )
        )
    return Pod(
        metadata=ObjectMeta(name="p", namespace="default", uid="p"),
        spec=PodSpec(node_selector=dict(node_selector or {}), affinity=affinity),
    )


def make_node(name: str = "", labels: Mapping[str, str] | None = None) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels=dict(labels or {})))


def plugin(args: NodeAffinityArgs | None = None, nodes: Sequence[Node] = ()) -> NodeAffinity:
    return NodeAffinity(
        args or NodeAffinityArgs(), Framework(snapshot=Snapshot.from_objects(nodes))
    )


def added_required(*terms: NodeSelectorTerm) -> NodeAffinityArgs:
    return NodeAffinityArgs(
        added_affinity=NodeAffinitySpec(required=NodeSelector(node_selector_terms=terms))
    )


POD_STATUS = fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
SKIP = fw.Status(fw.Code.SKIP)


def result(*names: str) -> fw.PreFilterResult:
    return fw.PreFilterResult(frozenset(names))


# (pod, node labels, node name, want filter status, want PreFilter answer, args, run PreFilter)
NODE_AFFINITY_CASES = [
    pytest.param(
        make_pod(node_selector={"foo": "bar"}),
        {},
        "",
        POD_STATUS,
        None,
        None,
        True,
        id="missing labels",
    ),
    pytest.param(
        make_pod(node_selector={"foo": "bar"}),
        {"foo": "bar"},
        "",
        None,
        None,
        None,
        True,
        id="same labels",
    ),
    pytest.param(
        make_pod(node_selector={"foo": "bar"}),
        {"foo": "bar", "baz": "blah"},
        "",
        None,
        None,
        None,
        True,
        id="node labels are superset",
    ),
    pytest.param(
        make_pod(node_selector={"foo": "bar", "baz": "blah"}),
        {"foo": "bar"},
        "",
        POD_STATUS,
        None,
        None,
        True,
        id="node labels are subset",
    ),
    pytest.param(
        make_pod(term(req("foo", "In", "bar", "value2"))),
        {"foo": "bar"},
        "",
        None,
        None,
        None,
        True,
        id="Pod with matchExpressions using In operator that matches the existing node",
    ),
    pytest.param(
        make_pod(term(req("kernel-version", "Gt", "0204"))),
        {"kernel-version": "0206"},
        "",
        None,
        None,
        None,
        True,
        id="Pod with matchExpressions using Gt operator that matches the existing node",
    ),
    pytest.param(
        make_pod(term(req("mem-type", "NotIn", "DDR", "DDR2"))),
        {"mem-type": "DDR3"},
        "",
        None,
        None,
        None,
        True,
        id="Pod with matchExpressions using NotIn operator that matches the existing node",
    ),
    pytest.param(
        make_pod(term(req("GPU", "Exists"))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        None,
        None,
        None,
        True,
        id="Pod with matchExpressions using Exists operator that matches the existing node",
    ),
    pytest.param(
        make_pod(term(req("foo", "In", "value1", "value2"))),
        {"foo": "bar"},
        "",
        POD_STATUS,
        None,
        None,
        True,
        id="Pod with affinity that don't match node's labels won't schedule onto the node",
    ),
    pytest.param(
        make_pod(term()),
        {"foo": "bar"},
        "",
        POD_STATUS,
        None,
        None,
        True,
        id="Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
    ),
    pytest.param(
        make_pod(),
        {"foo": "bar"},
        "",
        None,
        SKIP,
        None,
        True,
        id="Pod with no Affinity will schedule onto a node",
    ),
    pytest.param(
        make_pod(affinity_without_required=True),
        {"foo": "bar"},
        "",
        None,
        SKIP,
        None,
        True,
        id="Pod with Affinity but nil NodeSelector will schedule onto a node",
    ),
    pytest.param(
        make_pod(term(req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER"))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        None,
        None,
        None,
        True,
        id="Pod with multiple matchExpressions ANDed that matches the existing node",
    ),
    pytest.param(
        make_pod(term(req("GPU", "Exists"), req("GPU", "In", "AMD", "INTER"))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        POD_STATUS,
        None,
        None,
        True,
        id="Pod with multiple matchExpressions ANDed that doesn't match the existing node",
    ),
    pytest.param(
        make_pod(
            term(req("foo", "In", "bar", "value2")), term(req("diffkey", "In", "wrong", "value2"))
        ),
        {"foo": "bar"},
        "",
        None,
        None,
        None,
        True,
        id="Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node",
    ),
    pytest.param(
        make_pod(term(req("foo", "Exists")), node_selector={"foo": "bar"}),
        {"foo": "bar"},
        "",
        None,
        None,
        None,
        True,
        id="Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, will schedule onto the node",
    ),
    pytest.param(
        make_pod(term(req("foo", "Exists")), node_selector={"foo": "bar"}),
        {"foo": "barrrrrr"},
        "",
        POD_STATUS,
        None,
        None,
        True,
        id="Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are deprecating) is not satisfied, won't schedule onto the node",
    ),
    pytest.param(
        make_pod(term(req("foo", "NotIn", "invalid value: ___@#$%^"))),
        {"foo": "bar"},
        "",
        POD_STATUS,
        None,
        None,
        True,
        id="Pod with an invalid value in Affinity term won't be scheduled onto the node",
    ),
    pytest.param(
        make_pod(term(fields=[req(NAME, "In", "node1")])),
        {},
        "node1",
        None,
        result("node1"),
        None,
        True,
        id="Pod with matchFields using In operator that matches the existing node",
    ),
    pytest.param(
        make_pod(term(fields=[req(NAME, "In", "node1")])),
        {},
        "node2",
        POD_STATUS,
        result("node1"),
        None,
        True,
        id="Pod with matchFields using In operator that does not match the existing node",
    ),
    pytest.param(
        make_pod(
            term(fields=[req(NAME, "In", "node1"), req(NAME, "In", "node2")]),
            term(req("foo", "In", "bar")),
        ),
        {"foo": "bar"},
        "node2",
        None,
        None,
        None,
        True,
        id="Pod with two terms: matchFields does not match, but matchExpressions matches",
    ),
    pytest.param(
        make_pod(term(req("foo", "In", "bar"), fields=[req(NAME, "In", "node1")])),
        {"foo": "bar"},
        "node2",
        POD_STATUS,
        result("node1"),
        None,
        True,
        id="Pod with one term: matchFields does not match, but matchExpressions matches",
    ),
    pytest.param(
        make_pod(term(req("foo", "In", "bar"), fields=[req(NAME, "In", "node1")])),
        {"foo": "bar"},
        "node1",
        None,
        result("node1"),
        None,
        True,
        id="Pod with one term: both matchFields and matchExpressions match",
    ),
    pytest.param(
        make_pod(
            term(fields=[req(NAME, "In", "node1")]), term(req("foo", "In", "not-match-to-bar"))
        ),
        {"foo": "bar"},
        "node2",
        POD_STATUS,
        None,
        None,
        True,
        id="Pod with two terms: both matchFields and matchExpressions do not match",
    ),
    pytest.param(
        make_pod(term(fields=[req(NAME, "In", "node1")]), term(fields=[req(NAME, "In", "node2")])),
        {},
        "node2",
        None,
        result("node1", "node2"),
        None,
        True,
        id="Pod with two terms of node.Name affinity",
    ),
    pytest.param(
        make_pod(term(fields=[req(NAME, "In", "node1"), req(NAME, "In", "node2")])),
        {"foo": "bar"},
        "node2",
        POD_STATUS,
        fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT),
        None,
        True,
        id="Pod with two conflicting mach field requirements",
    ),
    pytest.param(
        make_pod(term(req("zone", "In", "foo"))),
        {"zone": "foo"},
        "node2",
        None,
        None,
        added_required(term(fields=[req(NAME, "In", "node2")])),
        True,
        id="Matches added affinity and Pod's node affinity",
    ),
    pytest.param(
        make_pod(term(req("zone", "In", "bar"))),
        {"zone": "foo"},
        "node2",
        POD_STATUS,
        None,
        added_required(term(fields=[req(NAME, "In", "node2")])),
        True,
        id="Matches added affinity but not Pod's node affinity",
    ),
    pytest.param(
        make_pod(),
        {"zone": "foo"},
        "node2",
        fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED),
        None,
        added_required(term(req("zone", "In", "bar"))),
        True,
        id="Doesn't match added affinity",
    ),
    pytest.param(
        make_pod(node_selector={"foo": "bar"}),
        {"foo": "bar", "baz": "blah"},
        "",
        None,
        None,
        None,
        False,
        id="Matches node selector correctly even if PreFilter is not called",
    ),
    pytest.param(
        make_pod(term(req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER"))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        None,
        None,
        None,
        False,
        id="Matches node affinity correctly even if PreFilter is not called",
    ),
]


@pytest.mark.parametrize(
    ("p", "labels", "node_name", "want", "want_pre_filter", "args", "run_pre_filter"),
    NODE_AFFINITY_CASES,
)
def test_node_affinity(
    p: Pod,
    labels: dict[str, str],
    node_name: str,
    want: fw.Status | None,
    want_pre_filter: fw.PreFilterResult | fw.Status | None,
    args: NodeAffinityArgs | None,
    run_pre_filter: bool,
) -> None:
    pl = plugin(args)
    state = fw.CycleState()
    if run_pre_filter:
        assert pl.pre_filter(state, p, []) == want_pre_filter
    info = fw.NodeInfo(make_node(node_name, labels))
    assert pl.filter(state, p, info) == want


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY1 = (pref(2, req("foo", "In", "bar")),)
AFFINITY2 = (
    pref(2, req("foo", "In", "bar")),
    pref(4, req("key", "In", "value")),
    pref(5, req("foo", "In", "bar"), req("key", "In", "value"), req("az", "In", "az1")),
)


def nodes_of(*named: tuple[str, dict[str, str]]) -> list[Node]:
    return [make_node(name, labels) for name, labels in named]


# (pod, nodes, want scores or None, args, run PreScore, want PreScore status)
PRIORITY_CASES = [
    pytest.param(
        make_pod(),
        nodes_of(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)),
        {"node1": 0, "node2": 0, "node3": 0},
        None,
        False,
        None,
        id="all nodes are same priority as NodeAffinity is nil",
    ),
    pytest.param(
        make_pod(),
        nodes_of(("node1", LABEL1)),
        None,
        None,
        True,
        SKIP,
        id="Skip is returned in PreScore when NodeAffinity is nil",
    ),
    pytest.param(
        make_pod(preferred=[pref(2, req("invalid key", "In", "bar"))]),
        nodes_of(("node1", LABEL1)),
        None,
        None,
        True,
        fw.Status(
            fw.Code.ERROR,
            '[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist '
            "of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
            "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        id="PreScore returns error when an incoming Pod has a broken affinity",
    ),
    pytest.param(
        make_pod(preferred=AFFINITY1),
        nodes_of(("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)),
        {"node1": 0, "node2": 0, "node3": 0},
        None,
        True,
        None,
        id="no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",
    ),
    pytest.param(
        make_pod(preferred=AFFINITY1),
        nodes_of(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)),
        {"node1": 100, "node2": 0, "node3": 0},
        None,
        True,
        None,
        id="only node1 matches the preferred scheduling requirements of pod",
    ),
    pytest.param(
        make_pod(preferred=AFFINITY2),
        nodes_of(("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)),
        {"node1": 18, "node5": 100, "node2": 36},
        None,
        True,
        None,
        id="all nodes matches the preferred scheduling requirements of pod but with different priorities ",
    ),
    pytest.param(
        make_pod(),
        nodes_of(("node1", LABEL1), ("node2", LABEL2)),
        {"node1": 100, "node2": 0},
        NodeAffinityArgs(added_affinity=NodeAffinitySpec(preferred=AFFINITY1)),
        True,
        None,
        id="added affinity",
    ),
    pytest.param(
        make_pod(preferred=AFFINITY1),
        nodes_of(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)),
        {"node1": 40, "node2": 60, "node3": 100},
        NodeAffinityArgs(
            added_affinity=NodeAffinitySpec(preferred=(pref(3, req("key", "In", "value")),))
        ),
        True,
        None,
        id="added affinity and pod has default affinity",
    ),
    pytest.param(
        make_pod(preferred=AFFINITY2),
        nodes_of(("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)),
        {"node1": 18, "node5": 100, "node2": 36},
        None,
        True,
        None,
        id="calculate the priorities correctly even if PreScore is not called",
    ),
    pytest.param(
        make_pod(preferred=AFFINITY2),
        nodes_of(("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)),
        {"node1": 18, "node5": 100, "node2": 36},
        None,
        False,
        None,
        id="schedframe: scores without PreScore fall back to parsing the pod's terms",
    ),
]


@pytest.mark.parametrize(
    ("p", "nodes", "want", "args", "run_pre_score", "want_pre_score"), PRIORITY_CASES
)
def test_node_affinity_priority(
    p: Pod,
    nodes: list[Node],
    want: dict[str, int] | None,
    args: NodeAffinityArgs | None,
    run_pre_score: bool,
    want_pre_score: fw.Status | None,
) -> None:
    pl = plugin(args, nodes)
    snap = Snapshot.from_objects(nodes)
    state = fw.CycleState()
    if run_pre_score:
        status = pl.pre_score(state, p, snap.list())
        if want_pre_score is None:
            assert status is None
        else:
            assert status is not None
            assert status.code is want_pre_score.code
            assert status.message() == want_pre_score.message()
            return
    infos = snap.list()
    scores = fw.NodeScoreList([i.name for i in infos], [pl.score(state, p, i) for i in infos])
    assert pl.normalize_score(state, p, scores) is None
    assert dict(scores) == want


POD_WITH_NODE_AFFINITY = make_pod(term(req("foo", "In", "bar")))
ADDED_FOO_BAR = added_required(term(req("foo", "In", "bar")))
Q = fw.QueueingHint.QUEUE
QS = fw.QueueingHint.QUEUE_SKIP

HINT_CASES = [
    pytest.param(None, None, make_node(), QS, id="skip-queue-on-add"),
    pytest.param(None, None, make_node("", {"foo": "bar"}), Q, id="queue-on-add"),
    pytest.param(None, make_node(), make_node(), QS, id="skip-unrelated-changes"),
    pytest.param(
        None, make_node(), make_node("", {"k": "v"}), QS, id="skip-unrelated-changes-on-labels"
    ),
    pytest.param(
        None,
        make_node("", {"foo": "bar"}),
        make_node("", {"k": "v"}),
        QS,
        id="skip-labels-changes-on-node-from-suitable-to-unsuitable",
    ),
    pytest.param(
        None,
        make_node(),
        make_node("", {"foo": "bar"}),
        Q,
        id="queue-on-labels-change-makes-pod-schedulable",
    ),
    pytest.param(
        ADDED_FOO_BAR,
        None,
        make_node(),
        QS,
        id="skip-queue-on-add-scheduler-enforced-node-affinity",
    ),
    pytest.param(
        ADDED_FOO_BAR,
        None,
        make_node("", {"foo": "bar"}),
        Q,
        id="queue-on-add-scheduler-enforced-node-affinity",
    ),
]


@pytest.mark.parametrize(("args", "old", "new", "want"), HINT_CASES)
def test_is_schedulable_after_node_change(
    args: NodeAffinityArgs | None, old: Node | None, new: Node, want: fw.QueueingHint
) -> None:
    assert plugin(args).is_schedulable_after_node_change(POD_WITH_NODE_AFFINITY, old, new) is want


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(None, "not-a-node", id="backoff-wrong-new-object"),
        pytest.param("not-a-node", make_node(), id="backoff-wrong-old-object"),
    ],
)
def test_is_schedulable_after_node_change_errors(old: object, new: object) -> None:
    # An error from a hint makes the framework queue the pod.
    with pytest.raises(TypeError):
        plugin().is_schedulable_after_node_change(POD_WITH_NODE_AFFINITY, old, new)


def test_events_to_register() -> None:
    (event,) = plugin().events_to_register()
    assert event.event == fw.ClusterEvent(
        fw.EventResource.NODE, fw.ActionType.ADD | fw.ActionType.UPDATE_NODE_LABEL
    )
    assert event.queueing_hint_fn is not None


# -- args ---------------------------------------------------------------------------------------

VALID_ADDED = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "label-1", "operator": "In", "values": ["label-1-val"]}]}
        ]
    },
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {
            "weight": 1,
            "preference": {
                "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]
            },
        }
    ],
}
INVALID_ADDED = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {
                "matchExpressions": [
                    {"key": "invalid/label/key", "operator": "In", "values": ["label-1-val"]}
                ]
            }
        ]
    },
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {
            "weight": 1,
            "preference": {
                "matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["node-1", "node-2"]}
                ]
            },
        }
    ],
}


def test_validate_node_affinity_args_empty() -> None:
    """Upstream TestValidateNodeAffinityArgs "empty"."""
    assert decode_args(NodeAffinityArgs, {}, path="args") == NodeAffinityArgs()
    assert NodeAffinityArgs().validate() == []


def test_validate_node_affinity_args_valid_added_affinity() -> None:
    """Upstream TestValidateNodeAffinityArgs "valid added affinity"; addedAffinity is camelCase."""
    args = decode_args(NodeAffinityArgs, {"addedAffinity": VALID_ADDED}, path="args")
    assert args.added_affinity == NodeAffinitySpec(
        required=NodeSelector(node_selector_terms=(term(req("label-1", "In", "label-1-val")),)),
        preferred=(
            PreferredSchedulingTerm(weight=1, preference=term(fields=[req(NAME, "In", "node-1")])),
        ),
    )
    assert args.validate() == []


def test_validate_node_affinity_args_invalid_added_affinity() -> None:
    """Upstream TestValidateNodeAffinityArgs "invalid added affinity": both bad fields named."""
    with pytest.raises(ConfigError) as info:
        decode_args(NodeAffinityArgs, {"addedAffinity": INVALID_ADDED}, path="")
    assert [(i.path, i.kind) for i in info.value.issues] == [
        (
            "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            ".matchExpressions[0].key",
            "Invalid value",
        ),
        (
            "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values",
            "Invalid value",
        ),
    ]


def test_validate_directly_built_args() -> None:
    """Args built in Python (not decoded) get the same upstream validation."""
    args = NodeAffinityArgs(
        added_affinity=NodeAffinitySpec(
            required=NodeSelector(node_selector_terms=(term(req("invalid/label/key", "In", "v")),)),
            preferred=(
                PreferredSchedulingTerm(
                    weight=1, preference=term(fields=[req(NAME, "In", "node-1", "node-2")])
                ),
            ),
        )
    )
    issues = args.validate()
    assert [str(i) for i in issues][1] == (
        "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values: "
        'Invalid value: []string{"node-1", "node-2"}: must have one element'
    )
    assert issues[0].path == (
        "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].key"
    )
    with pytest.raises(ConfigError):
        plugin(args)


def test_added_affinity_round_trips_through_encode() -> None:
    from schedframe.config import encode_args

    args = decode_args(NodeAffinityArgs, {"addedAffinity": VALID_ADDED}, path="args")
    assert decode_args(NodeAffinityArgs, encode_args(args), path="args") == args


# -- properties ---------------------------------------------------------------------------------

_labels = st.dictionaries(
    st.sampled_from(["foo", "key", "az"]), st.sampled_from(["bar", "value", "az1"])
)


@pytest.mark.property
@given(
    st.lists(_labels, min_size=1, max_size=6),
    st.lists(
        st.tuples(
            st.integers(1, 100),
            st.sampled_from(["foo", "key", "az"]),
            st.sampled_from(["bar", "value", "az1"]),
        ),
        max_size=4,
    ),
)
def test_normalized_scores_within_bounds(
    node_labels: list[dict[str, str]], prefs: list[tuple[int, str, str]]
) -> None:
    nodes = [make_node(f"n{i}", labels) for i, labels in enumerate(node_labels)]
    p = make_pod(preferred=[pref(w, req(k, "In", v)) for w, k, v in prefs])
    pl = plugin(None, nodes)
    state = fw.CycleState()
    infos = Snapshot.from_objects(nodes).list()
    status = pl.pre_score(state, p, infos)
    if status is not None:
        assert status.code is fw.Code.SKIP
        return
    scores = fw.NodeScoreList([i.name for i in infos], [pl.score(state, p, i) for i in infos])
    pl.normalize_score(state, p, scores)
    assert all(0 <= s <= fw.MAX_NODE_SCORE for s in scores.scores)
    assert max(scores.scores) in (0, fw.MAX_NODE_SCORE)
