"""Upstream ``tainttoleration/taint_toleration_test.go``: Score, Filter and queueing hints."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.objects import Node, NodeSpec, ObjectMeta, Pod, PodSpec, Taint, Toleration
from schedframe.runtime import Framework
from schedframe_plugins.tainttoleration import TaintToleration

NS = "NoSchedule"
PNS = "PreferNoSchedule"


def node_with_taints(name: str, taints: Sequence[Taint]) -> Node:
    return Node(metadata=ObjectMeta(name=name), spec=NodeSpec(taints=tuple(taints)))


def pod_with_tolerations(name: str, tolerations: Sequence[Toleration], uid: str = "") -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="ns-1", uid=uid),
        spec=PodSpec(tolerations=tuple(tolerations)),
    )


def taint(key: str, value: str, effect: str) -> Taint:
    return Taint(key=key, value=value, effect=effect)


def tol(key: str, value: str = "", effect: str = "", operator: str = "Equal") -> Toleration:
    return Toleration(key=key, operator=operator, value=value, effect=effect)


def plugin(nodes: Sequence[Node] = ()) -> TaintToleration:
    return TaintToleration(None, Framework(snapshot=Snapshot.from_objects(nodes)))


CPU_ARM = taint("cpu-type", "arm64", PNS)
DISK_SSD = taint("disk-type", "ssd", PNS)

SCORE_CASES = [
    pytest.param(
        pod_with_tolerations("pod1", [tol("foo", "bar", PNS)]),
        [
            node_with_taints("nodeA", [taint("foo", "bar", PNS)]),
            node_with_taints("nodeB", [taint("foo", "blah", PNS)]),
        ],
        {"nodeA": 100, "nodeB": 0},
        id="node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
    ),
    pytest.param(
        pod_with_tolerations("pod1", [tol("cpu-type", "arm64", PNS), tol("disk-type", "ssd", PNS)]),
        [
            node_with_taints("nodeA", []),
            node_with_taints("nodeB", [CPU_ARM]),
            node_with_taints("nodeC", [CPU_ARM, DISK_SSD]),
        ],
        {"nodeA": 100, "nodeB": 100, "nodeC": 100},
        id="the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many tolerable taints a node has",
    ),
    pytest.param(
        pod_with_tolerations("pod1", [tol("foo", "bar", PNS)]),
        [
            node_with_taints("nodeA", []),
            node_with_taints("nodeB", [CPU_ARM]),
            node_with_taints("nodeC", [CPU_ARM, DISK_SSD]),
        ],
        {"nodeA": 100, "nodeB": 50, "nodeC": 0},
        id="the more intolerable taints a node has, the lower score it gets.",
    ),
    pytest.param(
        pod_with_tolerations("pod1", [tol("cpu-type", "arm64", NS), tol("disk-type", "ssd", NS)]),
        [
            node_with_taints("nodeA", []),
            node_with_taints("nodeB", [taint("cpu-type", "arm64", NS)]),
            node_with_taints("nodeC", [CPU_ARM, DISK_SSD]),
        ],
        {"nodeA": 100, "nodeB": 100, "nodeC": 0},
        id="only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations priority function",
    ),
    pytest.param(
        pod_with_tolerations("pod1", []),
        [node_with_taints("nodeA", []), node_with_taints("nodeB", [CPU_ARM])],
        {"nodeA": 100, "nodeB": 0},
        id="Default behaviour No taints and tolerations, lands on node with no taints",
    ),
]


@pytest.mark.parametrize(("p", "nodes", "want"), SCORE_CASES)
def test_taint_toleration_score(p: Pod, nodes: list[Node], want: dict[str, int]) -> None:
    pl = plugin(nodes)
    infos = Snapshot.from_objects(nodes).list()
    state = fw.CycleState()
    assert pl.pre_score(state, p, infos) is None
    scores = fw.NodeScoreList([i.name for i in infos], [pl.score(state, p, i) for i in infos])
    assert pl.normalize_score(state, p, scores) is None
    assert dict(scores) == want


def untolerated(key: str, value: str) -> fw.Status:
    return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint(s)")


DEDICATED_USER1 = taint("dedicated", "user1", NS)

FILTER_CASES = [
    pytest.param(
        pod_with_tolerations("pod1", []),
        node_with_taints("nodeA", [DEDICATED_USER1]),
        untolerated("dedicated", "user1"),
        id="A pod having no tolerations can't be scheduled onto a node with nonempty taints",
    ),
    pytest.param(
        pod_with_tolerations("pod1", [tol("dedicated", "user1", NS)]),
        node_with_taints("nodeA", [DEDICATED_USER1]),
        None,
        id="A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
    ),
    pytest.param(
        pod_with_tolerations("pod1", [tol("dedicated", "user2", NS)]),
        node_with_taints("nodeA", [DEDICATED_USER1]),
        untolerated("dedicated", "user1"),
        id="A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
    ),
    pytest.param(
        pod_with_tolerations("pod1", [tol("foo", effect=NS, operator="Exists")]),
        node_with_taints("nodeA", [taint("foo", "bar", NS)]),
        None,
        id="A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the node",
    ),
    pytest.param(
        pod_with_tolerations(
            "pod1", [tol("dedicated", "user2", NS), tol("foo", effect=NS, operator="Exists")]
        ),
        node_with_taints("nodeA", [taint("dedicated", "user2", NS), taint("foo", "bar", NS)]),
        None,
        id="A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be scheduled onto the node",
    ),
    pytest.param(
        pod_with_tolerations("pod1", [tol("foo", "bar", PNS)]),
        node_with_taints("nodeA", [taint("foo", "bar", NS)]),
        untolerated("foo", "bar"),
        id="A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match, can't be scheduled onto the node",
    ),
    pytest.param(
        pod_with_tolerations("pod1", [tol("foo", "bar")]),
        node_with_taints("nodeA", [taint("foo", "bar", NS)]),
        None,
        id="The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
    ),
    pytest.param(
        pod_with_tolerations("pod1", [tol("dedicated", "user2", NS)]),
        node_with_taints("nodeA", [taint("dedicated", "user1", PNS)]),
        None,
        id="The pod has a toleration that key and value don't match the taint on the node, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
    ),
    pytest.param(
        pod_with_tolerations("pod1", []),
        node_with_taints("nodeA", [taint("dedicated", "user1", PNS)]),
        None,
        id="The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
    ),
]


@pytest.mark.parametrize(("p", "node", "want"), FILTER_CASES)
def test_taint_toleration_filter(p: Pod, node: Node, want: fw.Status | None) -> None:
    assert plugin().filter(fw.CycleState(), p, fw.NodeInfo(node)) == want


POD_USER2 = pod_with_tolerations("pod1", [tol("dedicated", "user2", NS)])
Q = fw.QueueingHint.QUEUE
QS = fw.QueueingHint.QUEUE_SKIP

NODE_CHANGE_CASES = [
    pytest.param(
        None,
        node_with_taints("nodeA", [DEDICATED_USER1]),
        QS,
        id="skip-queue-on-untoleratedtaint-node-added",
    ),
    pytest.param(
        None,
        node_with_taints("nodeA", [taint("dedicated", "user2", NS)]),
        Q,
        id="queue-on-toleratedtaint-node-added",
    ),
    pytest.param(
        node_with_taints("nodeA", [DEDICATED_USER1]),
        node_with_taints("nodeA", [DEDICATED_USER1, taint("dedicated", "user3", NS)]),
        QS,
        id="skip-unrelated-change",
    ),
    pytest.param(
        node_with_taints("nodeA", [DEDICATED_USER1]),
        node_with_taints("nodeA", [taint("dedicated", "user2", NS)]),
        Q,
        id="queue-on-taint-change",
    ),
]


@pytest.mark.parametrize(("old", "new", "want"), NODE_CHANGE_CASES)
def test_is_schedulable_after_node_change(
    old: Node | None, new: Node, want: fw.QueueingHint
) -> None:
    assert plugin().is_schedulable_after_node_change(POD_USER2, old, new) is want


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(None, "not-a-node", id="backoff-wrong-new-object"),
        pytest.param(
            "not-a-node",
            node_with_taints("nodeA", [DEDICATED_USER1]),
            id="backoff-wrong-old-object",
        ),
    ],
)
def test_is_schedulable_after_node_change_errors(old: object, new: object) -> None:
    # The error makes the framework queue the pod (upstream returns Queue with the error).
    with pytest.raises(TypeError):
        plugin().is_schedulable_after_node_change(POD_USER2, old, new)


def _p(name: str, uid: str, tolerations: Sequence[Toleration] = ()) -> Pod:
    return pod_with_tolerations(name, tolerations, uid=uid)


@pytest.mark.parametrize(
    ("p", "old", "new", "want"),
    [
        pytest.param(
            _p("pod-1", "uid0"),
            _p("pod-2", "uid1"),
            _p("pod-2", "uid1", [tol("foo", effect=NS)]),
            QS,
            id="skip-updates-other-pod",
        ),
        pytest.param(
            _p("pod-1", "uid0"),
            _p("pod-1", "uid0"),
            _p("pod-1", "uid0", [tol("foo", effect=NS)]),
            Q,
            id="queue-on-toleration-added",
        ),
    ],
)
def test_is_schedulable_after_pod_toleration_change(
    p: Pod, old: Pod, new: Pod, want: fw.QueueingHint
) -> None:
    assert plugin().is_schedulable_after_pod_toleration_change(p, old, new) is want


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(None, "not-a-pod", id="backoff-wrong-new-object"),
        pytest.param("not-a-pod", _p("pod-1", "uid0"), id="backoff-wrong-old-object"),
    ],
)
def test_is_schedulable_after_pod_toleration_change_errors(old: object, new: object) -> None:
    with pytest.raises(TypeError):
        plugin().is_schedulable_after_pod_toleration_change(_p("pod-1", "uid0"), old, new)


def test_events_to_register() -> None:
    a = fw.ActionType
    events = plugin().events_to_register()
    assert [e.event for e in events] == [
        fw.ClusterEvent(fw.EventResource.NODE, a.ADD | a.UPDATE_NODE_TAINT),
        fw.ClusterEvent(fw.EventResource.POD, a.UPDATE_POD_TOLERATION),
    ]
    assert all(e.queueing_hint_fn is not None for e in events)


def test_score_without_pre_score_is_an_error() -> None:
    node = node_with_taints("nodeA", [])
    with pytest.raises(RuntimeError, match='failed to read "PreScoreTaintToleration"'):
        plugin([node]).score(fw.CycleState(), pod_with_tolerations("p", []), fw.NodeInfo(node))


_effects = st.sampled_from([NS, PNS, "NoExecute"])
_taints = st.lists(
    st.builds(taint, st.sampled_from(["a", "b", "c"]), st.sampled_from(["", "x", "y"]), _effects),
    max_size=4,
)
_tolerations = st.lists(
    st.builds(
        tol,
        st.sampled_from(["", "a", "b"]),
        st.sampled_from(["", "x"]),
        st.sampled_from(["", NS, PNS, "NoExecute"]),
        st.sampled_from(["Equal", "Exists"]),
    ),
    max_size=3,
)


@pytest.mark.property
@given(st.lists(_taints, min_size=1, max_size=5), _tolerations)
def test_normalized_scores_within_bounds_and_order_independent(
    node_taints: list[list[Taint]], tolerations: list[Toleration]
) -> None:
    nodes = [node_with_taints(f"n{i}", t) for i, t in enumerate(node_taints)]
    p = pod_with_tolerations("p", tolerations)
    pl = plugin(nodes)
    infos = Snapshot.from_objects(nodes).list()
    state = fw.CycleState()
    pl.pre_score(state, p, infos)
    raw = [pl.score(state, p, i) for i in infos]
    scores = fw.NodeScoreList([i.name for i in infos], list(raw))
    pl.normalize_score(state, p, scores)
    assert all(0 <= s <= fw.MAX_NODE_SCORE for s in scores.scores)
    # Fewer intolerable taints never scores lower; none at all scores the maximum.
    for r1, s1 in zip(raw, scores.scores, strict=True):
        for r2, s2 in zip(raw, scores.scores, strict=True):
            if r1 < r2:
                assert s1 >= s2
        if r1 == 0:
            assert s1 == fw.MAX_NODE_SCORE
    # A node's filter verdict depends on that node alone.
    verdicts = {i.name: pl.filter(state, p, i) for i in infos}
    assert {i.name: pl.filter(state, p, i) for i in reversed(infos)} == verdicts


class _Clock:
    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def now(self) -> float:
        return self.t


_REJECTED = pod_with_tolerations("p", [], uid="uid-p")


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param(
            Pod(
                metadata=ObjectMeta(
                    name="p", namespace="ns-1", uid="uid-p", annotations={"a": "b"}
                ),
                spec=PodSpec(),
            ),
            "unschedulable",
            id="annotation only: stays in the pool",
        ),
        pytest.param(
            pod_with_tolerations("p", [tol("k", "v", NS)], uid="uid-p"),
            "backoff",
            id="toleration added: requeued",
        ),
    ],
)
def test_pod_update_requeues_only_on_a_toleration_change(new: Pod, want: str) -> None:
    """An update with no specific UpdatePodXYZ change arrives as the general Pod/Update, which
    TaintToleration (registered for UpdatePodToleration only) is not asked about."""
    from schedframe.queue import SchedulingQueue
    from schedframe_plugins.queuesort import PrioritySort

    clock = _Clock()
    fwk = Framework(profile_name="default-scheduler", clock=clock)
    fwk.add_plugin(PrioritySort(None, fwk))
    fwk.add_plugin(TaintToleration(None, fwk))
    q = SchedulingQueue(frameworks={"default-scheduler": fwk}, clock=clock)
    q.add(_REJECTED)
    info = q.pop()
    assert info is not None
    info.unschedulable_plugins = {"TaintToleration"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    q.update(_REJECTED, new)
    where = {
        "unschedulable": q.unschedulable_pods(),
        "backoff": q.backoff_pods(),
        "active": q.active_pods(),
    }
    assert [name for name, pods in where.items() if pods] == [want]
