"""The preemption library: upstream ``framework/preemption/preemption_test.go`` and
``executor_test.go`` as data, plus the node-choice criteria and PDB accounting one by one.

The Evaluator runs against a real :class:`~schedframe.runtime.Framework` (its Handle) and a real
:class:`~schedframe.backends.MemoryBackend`; the plugin policy is a small fake
:class:`~schedframe.preemption.Interface`, as upstream's ``FakePostFilterPlugin``. Not ported:
extender cases (not modelled) and the asynchronous-preemption bookkeeping (evictions are
synchronous here).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from schedframe import framework as fw
from schedframe import preemption
from schedframe.backends import MemoryBackend
from schedframe.cache import Snapshot
from schedframe.errors import BackendError
from schedframe.objects import (
    Container,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodCondition,
    PodDisruptionBudget,
    PodSpec,
    PodStatus,
)
from schedframe.preemption import Candidate, Victims
from schedframe.runtime import Framework, WaitingPod

MID, HIGH = 100, 1000
NOW = datetime(2024, 1, 1, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
CONDITION = PodCondition(
    type="DisruptionTarget",
    status="True",
    reason="PreemptionByScheduler",
    message="default-scheduler: preempting to accommodate a higher priority pod",
)


def epoch(n: int) -> datetime:
    return EPOCH + timedelta(microseconds=n)


def pod(
    name: str,
    *,
    uid: str | None = None,
    node: str = "",
    priority: int | None = None,
    containers: int = 0,
    labels: Mapping[str, str] | None = None,
    namespace: str = "default",
    start: datetime | None = None,
    nominated: str = "",
    conditions: Sequence[PodCondition] = (),
    terminating: bool = False,
) -> Pod:
    return Pod(
        metadata=ObjectMeta(
            name=name,
            namespace=namespace,
            uid=uid if uid is not None else name,
            labels=dict(labels or {}),
            deletion_timestamp=NOW - timedelta(seconds=100) if terminating else None,
        ),
        spec=PodSpec(
            node_name=node,
            priority=priority,
            containers=tuple(Container(name=f"container{i + 1}") for i in range(containers)),
        ),
        status=PodStatus(
            nominated_node_name=nominated, conditions=tuple(conditions), start_time=start
        ),
    )


def stored_pods(backend: MemoryBackend) -> list[Pod]:
    return [p for p in backend.list("Pod") if isinstance(p, Pod)]


def node(name: str) -> Node:
    res = {"pods": 32, "cpu": 500, "memory": 500}
    return Node(
        metadata=ObjectMeta(name=name, uid=name),
        status=NodeStatus(capacity=res, allocatable=res),
    )


class Clock:
    def now(self) -> float:
        return NOW.timestamp()


def cluster(
    nodes: Sequence[Node], pods: Sequence[Pod], stored: Sequence[Pod] | None = None
) -> tuple[Framework, MemoryBackend]:
    """A Framework over ``nodes``/``pods`` whose binder is a MemoryBackend holding ``stored``
    (default: the same pods)."""
    clock = Clock()
    backend = MemoryBackend([*nodes, *(pods if stored is None else stored)], clock=clock)
    fwk = Framework(
        snapshot=Snapshot.from_objects(nodes, pods),
        binder=backend,
        clock=clock,
        rng=random.Random(0),
    )
    return fwk, backend


class FakePostFilterPlugin:
    """Upstream's ``FakePostFilterPlugin``: the first pod of every node is its victim."""

    def __init__(self, num_violating_victim: int = 0, score_containers: bool = False) -> None:
        self.num_violating_victim = num_violating_victim
        self.score_containers = score_containers
        self.tried: list[str] = []

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: fw.Status | None
    ) -> tuple[bool, str]:
        return True, ""

    def select_victims_on_node(
        self,
        state: fw.CycleState,
        pod: Pod,
        node_info: fw.NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, fw.Status | None]:
        self.tried.append(node_info.name)
        return [node_info.pods[0].pod], self.num_violating_victim, None

    def ordered_score_funcs(
        self, nodes_to_victims: Mapping[str, Victims]
    ) -> list[preemption.ScoreFunc] | None:
        if not self.score_containers:
            return None

        def fewest_containers(name: str) -> int:
            pods = nodes_to_victims[name].pods
            return -sum(len(p.spec.containers) + len(p.spec.init_containers) for p in pods)

        return [fewest_containers]


# --------------------------------------------------------------------------------------------
# TestDryRunPreemption / TestSelectCandidate (library, fake plugin)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("num_violating", "expected"),
    [
        pytest.param(0, [("node1", ["p1"], 0), ("node2", ["p2"], 0)], id="no pdb violation"),
        pytest.param(
            1, [("node1", ["p1"], 1), ("node2", ["p2"], 1)], id="pdb violation on each node"
        ),
    ],
)
def test_dry_run_preemption(num_violating: int, expected: list[tuple[str, list[str], int]]) -> None:
    nodes = [node("node1"), node("node2")]
    fwk, _ = cluster(
        nodes, [pod("p1", node="node1", priority=MID), pod("p2", node="node2", priority=MID)]
    )
    ev = preemption.Evaluator("FakePostFilter", fwk, FakePostFilterPlugin(num_violating))
    infos = sorted(fwk.snapshot_shared_lister().node_infos.list(), key=lambda ni: ni.name)
    got, statuses, err = ev.dry_run_preemption(
        fw.CycleState(), pod("p", priority=HIGH), infos, [], 0, len(infos)
    )
    assert err is None and len(statuses) == 0
    assert (
        sorted(
            (c.name, sorted(p.name for p in c.victims.pods), c.victims.num_pdb_violations)
            for c in got
        )
        == expected
    )


def test_select_candidate_with_ordered_score_funcs() -> None:
    """Upstream ``TestSelectCandidate``: "pod has different number of containers on each node"."""
    pods = [
        pod("p1.1", node="node1", priority=MID, containers=2),
        pod("p2.1", node="node2", priority=MID, containers=1),
        pod("p3.1", node="node3", priority=MID, containers=3),
    ]
    fwk, _ = cluster([node("node1"), node("node2"), node("node3")], pods)
    ev = preemption.Evaluator(
        "FakePreemptionScorePostFilter",
        fwk,
        FakePostFilterPlugin(num_violating_victim=1, score_containers=True),
    )
    infos = fwk.snapshot_shared_lister().node_infos.list()
    for p in pods:
        candidates, _, _ = ev.dry_run_preemption(fw.CycleState(), p, infos, [], 0, len(infos))
        best = ev.select_candidate(candidates)
        assert best is not None and best.name == "node2"


def test_select_candidate_edge_cases() -> None:
    fwk, _ = cluster([], [])
    ev = preemption.Evaluator("X", fwk, FakePostFilterPlugin())
    assert ev.select_candidate([]) is None
    only = Candidate("n", Victims([pod("v")]))
    assert ev.select_candidate([only]) is only


# --------------------------------------------------------------------------------------------
# TestNodesWherePreemptionMightHelp: only Unschedulable nodes are tried
# --------------------------------------------------------------------------------------------

U, UU = fw.Code.UNSCHEDULABLE, fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        pytest.param(
            {
                "node1": (UU, "node(s) didn't match Pod's node affinity/selector"),
                "node2": (UU, "node(s) didn't match the requested node name"),
                "node3": (UU, "node(s) had untolerated taint"),
                "node4": (UU, "node(s) didn't match pod affinity rules"),
            },
            set(),
            id="No node should be attempted",
        ),
        pytest.param(
            {
                "node1": (U, "node(s) didn't match pod anti-affinity rules"),
                "node2": (UU, "node(s) didn't match the requested node name"),
                "node3": (UU, "node(s) were unschedulable"),
                "node4": (U, "Unschedulable"),
            },
            {"node1", "node4"},
            id="ErrReasonAntiAffinityRulesNotMatch should be tried as it indicates that the pod "
            "is unschedulable due to inter-pod anti-affinity",
        ),
        pytest.param(
            {
                "node1": (UU, "node(s) didn't match pod affinity rules"),
                "node2": (U, "node(s) didn't match pod anti-affinity rules"),
                "node3": (U, "Unschedulable"),
                "node4": (U, "Unschedulable"),
            },
            {"node2", "node3", "node4"},
            id="ErrReasonAffinityRulesNotMatch should not be tried as it indicates that the pod "
            "is unschedulable due to inter-pod affinity, but ErrReasonAntiAffinityRulesNotMatch "
            "should be tried as it indicates that the pod is unschedulable due to inter-pod "
            "anti-affinity",
        ),
        pytest.param(
            {
                "node1": (UU, "node(s) had no available disk"),
                "node2": (U, "Insufficient memory"),
                "node3": (U, "Unschedulable"),
                "node4": (U, "Unschedulable"),
            },
            {"node2", "node3", "node4"},
            id="Mix of failed predicates works fine",
        ),
        pytest.param(
            {
                "node1": (UU, "node(s) had unknown conditions"),
                "node2": (U, "Unschedulable"),
                "node3": (U, "Unschedulable"),
                "node4": (U, "Unschedulable"),
            },
            {"node2", "node3", "node4"},
            id="Node condition errors should be considered unresolvable",
        ),
        pytest.param(
            {
                "node1": (UU, "node(s) had no available volume zone"),
                "node2": (UU, "node(s) had volume node affinity conflict"),
                "node3": (UU, "node(s) didn't find available persistent volumes to bind"),
                "node4": (U, "Unschedulable"),
            },
            {"node4"},
            id="ErrVolume... errors should not be tried as it indicates that the pod is "
            "unschedulable due to no matching volumes for pod on node",
        ),
        pytest.param(
            {
                "node1": (U, "node(s) didn't match pod topology spread constraints"),
                "node2": (UU, "node(s) didn't match the requested node name"),
                "node3": (U, "node(s) didn't match pod topology spread constraints"),
                "node4": (U, "Unschedulable"),
            },
            {"node1", "node3", "node4"},
            id="ErrReasonConstraintsNotMatch should be tried as it indicates that the pod is "
            "unschedulable due to topology spread constraints",
        ),
        pytest.param(
            {"node1": (U, ""), "node2": (UU, ""), "node3": (U, ""), "node4": (UU, "")},
            {"node1", "node3"},
            id="UnschedulableAndUnresolvable status should be skipped but Unschedulable should "
            "be tried",
        ),
        pytest.param(
            {
                "node1": (U, ""),
                "node2": (
                    UU,
                    "node(s) didn't match pod topology spread constraints (missing required label)",
                ),
                "node3": (U, ""),
                "node4": (UU, ""),
            },
            {"node1", "node3"},
            id="ErrReasonNodeLabelNotMatch should not be tried as it indicates that the pod is "
            "unschedulable due to node doesn't have the required label",
        ),
    ],
)
def test_nodes_where_preemption_might_help(
    statuses: dict[str, tuple[fw.Code, str]], expected: set[str]
) -> None:
    names = ["node1", "node2", "node3", "node4"]
    fwk, _ = cluster([node(n) for n in names], [pod(f"v{n}", node=n) for n in names])
    plugin = FakePostFilterPlugin()
    ev = preemption.Evaluator("Fake", fwk, plugin)
    m = fw.NodeToStatus({n: fw.Status(code, msg) for n, (code, msg) in statuses.items()})
    ev.find_candidates(fw.CycleState(), fwk.snapshot_shared_lister().node_infos.list(), pod("p"), m)
    assert set(plugin.tried) == expected


def test_find_candidates_without_nodes() -> None:
    fwk, _ = cluster([], [])
    ev = preemption.Evaluator("Fake", fwk, FakePostFilterPlugin())
    state = fw.CycleState()
    result, status = ev.preempt(state, pod("p", priority=HIGH), fw.NodeToStatus())
    assert result is None
    assert status is not None
    assert (status.code, status.reasons) == (fw.Code.ERROR, ("no nodes available",))


# --------------------------------------------------------------------------------------------
# TestPrepareCandidate (synchronous mode)
# --------------------------------------------------------------------------------------------

_VICTIM1 = pod("victim1", node="node1", priority=MID, containers=1)
_VICTIM2 = pod("victim2", node="node1", priority=50000, containers=1)
_VICTIM1_COND = pod("victim1", node="node1", priority=MID, containers=1, conditions=[CONDITION])
_NOT_FOUND = pod("not-found-victim", uid="victim1", node="node1", priority=MID, containers=1)
_FAIL = pod("fail-victim", uid="victim1", node="node1", priority=MID, containers=1)
_TERMINATING = pod(
    "victim1-with-deletion-timestamp", node="node1", priority=MID, containers=1, terminating=True
)
_PREEMPTOR = pod("preemptor", priority=HIGH, containers=1)


@pytest.mark.parametrize(
    ("victims", "stored", "fail", "deleted", "status"),
    [
        pytest.param([], [_VICTIM1], None, [], None, id="no victims"),
        pytest.param(
            [_VICTIM1], [_VICTIM1], None, ["victim1"], None, id="one victim without condition"
        ),
        pytest.param(
            [_TERMINATING],
            [_TERMINATING],
            None,
            [],
            None,
            id="one victim, but victim is already being deleted",
        ),
        pytest.param(
            [_NOT_FOUND], [], None, [], None, id="one victim, but victim is already deleted"
        ),
        pytest.param(
            [_VICTIM1_COND],
            [_VICTIM1_COND],
            None,
            ["victim1"],
            None,
            id="one victim with same condition",
        ),
        pytest.param(
            [_VICTIM1_COND],
            [],
            None,
            [],
            None,
            id="one victim, not-found victim error is ignored when patching",
        ),
        pytest.param(
            [_FAIL],
            [_FAIL],
            "delete pod failed",
            [],
            fw.Status(fw.Code.ERROR, "delete pod failed"),
            id="one victim, but pod deletion failed",
        ),
        pytest.param(
            [_VICTIM1],
            [],
            None,
            [],
            None,
            id="one victim, not-found victim error is ignored when deleting",
        ),
        pytest.param(
            [_FAIL],
            [_FAIL],
            "patch pod status failed",
            [],
            fw.Status(fw.Code.ERROR, "patch pod status failed"),
            id="one victim, but patch pod failed",
        ),
        pytest.param(
            [_FAIL, _VICTIM2],
            [_FAIL, _VICTIM2],
            "patch pod status failed",
            [],
            fw.Status(fw.Code.ERROR, "patch pod status failed"),
            id="two victims without condition, one passes successfully and the second fails",
        ),
    ],
)
def test_prepare_candidate(
    victims: list[Pod],
    stored: list[Pod],
    fail: str | None,
    deleted: list[str],
    status: fw.Status | None,
) -> None:
    fwk, backend = cluster([node("node1")], stored)
    if fail is not None:
        backend.inject_failure("delete_pod", error=BackendError(fail))
    ev = preemption.Evaluator("FakePreemptionScorePostFilter", fwk, FakePostFilterPlugin())
    before = {p.name for p in stored_pods(backend)}

    got = ev.prepare_candidate(Candidate("node1", Victims(victims)), _PREEMPTOR, "test-plugin")

    if status is None:
        assert got is None
    else:
        assert got is not None and (got.code, got.reasons) == (status.code, status.reasons)
    after = {p.name for p in stored_pods(backend)}
    assert sorted(before - after) == deleted
    assert [e.regarding for e in backend.events] == [f"default/{d}" for d in deleted]


def test_preempt_pod_deletes_with_condition_and_records_event() -> None:
    fwk, backend = cluster([node("node1")], [_VICTIM1])
    deleted: list[tuple[Pod, PodCondition | None]] = []

    class Recorder:
        def delete_pod(self, pod: Pod, *, condition: PodCondition | None = None) -> None:
            deleted.append((pod, condition))
            backend.delete_pod(pod, condition=condition)

    fwk._binder = Recorder()  # type: ignore[assignment]
    ev = preemption.Evaluator("DefaultPreemption", fwk, FakePostFilterPlugin())
    c = Candidate("node1", Victims([_VICTIM1]))
    ev.preempt_pod(c, _PREEMPTOR, _VICTIM1, "DefaultPreemption")
    assert deleted == [(_VICTIM1, CONDITION)]
    (event,) = backend.events
    assert (event.regarding, event.type, event.reason, event.action, event.note) == (
        "default/victim1",
        "Normal",
        "Preempted",
        "Preempting",
        "Preempted by pod preemptor on node node1",
    )


class _NoTimers:
    def call_later(self, delay: float, callback: object) -> _NoTimers:
        return self

    def cancel(self) -> None:
        pass


def test_waiting_victim_is_preempted_in_memory_not_deleted() -> None:
    """WaitingPod.Preempt (upstream #135719): the waiting victim leaves Permit with an Error
    (error backoff, not the unschedulable pool) and is not deleted."""
    fwk, backend = cluster([node("node1")], [_VICTIM1])
    waiting = WaitingPod(_VICTIM1, {"Gate": 60.0}, _NoTimers(), "node1")
    fwk.waiting_pods.add(waiting)
    ev = preemption.Evaluator("DefaultPreemption", fwk, FakePostFilterPlugin())
    status = ev.prepare_candidate(
        Candidate("node1", Victims([_VICTIM1])), _PREEMPTOR, "DefaultPreemption"
    )
    assert status is None
    assert waiting.status == fw.Status(fw.Code.ERROR, "preempted", plugin="DefaultPreemption")
    assert [p.name for p in stored_pods(backend)] == ["victim1"]
    assert [(e.reason, e.note) for e in backend.events] == [
        (
            "Preempted",
            f"Preempted by pod {_PREEMPTOR.uid} on node node1 (in kube-scheduler memory).",
        )
    ]


def test_victim_no_longer_waiting_is_deleted() -> None:
    """Preempt returns False for a pod already allowed: the victim is deleted instead."""
    fwk, backend = cluster([node("node1")], [_VICTIM1])
    waiting = WaitingPod(_VICTIM1, {"Gate": 60.0}, _NoTimers(), "node1")
    waiting.allow("Gate")
    fwk.waiting_pods.add(waiting)
    ev = preemption.Evaluator("DefaultPreemption", fwk, FakePostFilterPlugin())
    assert waiting.preempt("DefaultPreemption", "preempted") is False
    ev.prepare_candidate(Candidate("node1", Victims([_VICTIM1])), _PREEMPTOR, "DefaultPreemption")
    assert waiting.status == fw.Status(fw.Code.SUCCESS)
    assert stored_pods(backend) == []


def test_async_preemption_of_a_waiting_last_victim_activates_the_preemptor() -> None:
    """No deletion event follows an in-memory preemption, so the preemptor is activated."""
    fwk, backend, tasks, activated = _async_cluster([_VICTIM1])
    waiting = WaitingPod(_VICTIM1, {"Gate": 60.0}, _NoTimers(), "node1")
    fwk.waiting_pods.add(waiting)
    ev = preemption.Evaluator("DefaultPreemption", fwk, FakePostFilterPlugin())
    ev.prepare_candidate_async(Candidate("node1", Victims([_VICTIM1])), _PREEMPTOR, "DP")
    tasks.pop()()
    assert waiting.status == fw.Status(fw.Code.ERROR, "preempted", plugin="DP")
    assert activated == [["preemptor"]]


def test_lower_priority_nominated_pods_lose_their_nomination() -> None:
    low = pod("low", priority=MID, nominated="node1")
    high = pod("high", priority=HIGH + 1, nominated="node1")
    other = pod("other", priority=MID, nominated="node2")
    fwk, backend = cluster([node("node1"), node("node2")], [_VICTIM1], [_VICTIM1, low, high, other])
    for p in (low, high):
        fwk.nominator.add_nominated_pod(fw.PodInfo(p), "node1")
    fwk.nominator.add_nominated_pod(fw.PodInfo(other), "node2")
    ev = preemption.Evaluator("DefaultPreemption", fwk, FakePostFilterPlugin())

    assert ev.prepare_candidate(Candidate("node1", Victims([_VICTIM1])), _PREEMPTOR, "x") is None

    nominated = {p.name: p.status.nominated_node_name for p in stored_pods(backend)}
    assert nominated == {"low": "", "high": "node1", "other": "node2"}
    assert [
        p.name
        for p in preemption.get_lower_priority_nominated_pods(fwk.nominator, _PREEMPTOR, "node1")
    ] == ["low"]


def test_chosen_candidate_is_recorded_only_on_success() -> None:
    fwk, backend = cluster([node("node1")], [_VICTIM1])
    ev = preemption.Evaluator("Fake", fwk, FakePostFilterPlugin(), async_preemption=False)
    state = fw.CycleState()
    state[preemption.CHOSEN_CANDIDATE_KEY] = Candidate("stale", Victims([]))
    m = fw.NodeToStatus({"node1": fw.Status(fw.Code.UNSCHEDULABLE)})

    backend.inject_failure("delete_pod", error=BackendError("boom"))
    result, status = ev.preempt(state, _PREEMPTOR, m)
    assert result is None and status is not None
    assert (status.code, status.reasons) == (fw.Code.ERROR, ("boom",))
    assert preemption.CHOSEN_CANDIDATE_KEY not in state

    result, status = ev.preempt(state, _PREEMPTOR, m)
    assert result == fw.PostFilterResult(fw.NominatingInfo("node1", fw.NominatingMode.OVERRIDE))
    assert status == fw.Status(fw.Code.SUCCESS)
    assert state[preemption.CHOSEN_CANDIDATE_KEY] == Candidate("node1", Victims([_VICTIM1]))


def test_dry_run_errors_are_aggregated() -> None:
    class Failing(FakePostFilterPlugin):
        def select_victims_on_node(
            self,
            state: fw.CycleState,
            pod: Pod,
            node_info: fw.NodeInfo,
            pdbs: Sequence[PodDisruptionBudget],
        ) -> tuple[list[Pod], int, fw.Status | None]:
            if node_info.name == "node3":
                return [], 0, None  # success without victims is an error too
            return [], 0, fw.Status(fw.Code.ERROR, f"boom on {node_info.name[:4]}")

    names = ["node1", "node2", "node3"]
    fwk, _ = cluster([node(n) for n in names], [])
    ev = preemption.Evaluator("Fake", fwk, Failing())
    infos = fwk.snapshot_shared_lister().node_infos.list()
    got, statuses, err = ev.dry_run_preemption(fw.CycleState(), _PREEMPTOR, infos, [], 0, 3)
    assert got == [] and len(statuses) == 3
    assert str(err) == '[boom on node, expected at least one victim pod on node "node3"]'
    result, status = ev.preempt(
        fw.CycleState(), _PREEMPTOR, fw.NodeToStatus({n: fw.Status(U) for n in names})
    )
    assert result is None and status is not None
    assert status.code is fw.Code.ERROR and status.message() == str(err)
    assert str(preemption.PreemptionError(["only"])) == "only"


# --------------------------------------------------------------------------------------------
# pickOneNodeForPreemption: each criterion on its own
# --------------------------------------------------------------------------------------------


def _victims(*specs: tuple[int, datetime | None], violations: int = 0) -> Victims:
    return Victims(
        [pod(f"v{i}", priority=p, start=s) for i, (p, s) in enumerate(specs)], violations
    )


@pytest.mark.parametrize(
    ("nodes_to_victims", "want"),
    [
        pytest.param({}, "", id="no candidates"),
        pytest.param(
            {
                "a": _victims((0, None), violations=2),
                "b": _victims((500, None), (400, None), violations=1),
            },
            "b",
            id="1. fewest PDB violations first",
        ),
        pytest.param(
            {"a": _victims((200, None)), "b": _victims((100, None), (100, None), (100, None))},
            "b",
            id="2. lowest highest-priority victim",
        ),
        pytest.param(
            {"a": _victims((100, None), (50, None)), "b": _victims((100, None), (10, None))},
            "b",
            id="3. smallest sum of priorities",
        ),
        pytest.param(
            {"a": _victims((-100, None), (-100, None)), "b": _victims((-100, None))},
            "b",
            id="3. sum shifted by MaxInt32+1 so negative priorities count",
        ),
        pytest.param(
            {
                "a": _victims((100, None), (0, None), (0, None)),
                "b": _victims((100, None), (0, None)),
            },
            "b",
            id="3/4. the extra pod raises the shifted sum",
        ),
        pytest.param(
            {
                "a": _victims((100, epoch(1)), (0, epoch(9))),
                "b": _victims((100, epoch(5)), (0, epoch(0))),
            },
            "b",
            id="5. latest start of the highest-priority victims",
        ),
        pytest.param(
            {
                "a": _victims((100, epoch(4)), (100, epoch(2))),
                "b": _victims((100, epoch(1)), (100, epoch(6))),
            },
            "a",
            id="5. the earliest start among equal highest priorities counts",
        ),
        pytest.param(
            {"a": _victims((100, epoch(3))), "b": _victims((100, epoch(3)))},
            "a",
            id="6. first remaining node",
        ),
        pytest.param(
            {"a": _victims((100, epoch(3))), "b": _victims((100, None))},
            "b",
            id="5. a victim not started yet counts as starting now",
        ),
    ],
)
def test_pick_one_node_for_preemption(nodes_to_victims: dict[str, Victims], want: str) -> None:
    assert preemption.pick_one_node_for_preemption(nodes_to_victims, None, NOW) == want


def test_pick_one_node_custom_score_funcs() -> None:
    victims = {"a": _victims((0, None)), "b": _victims((9, None)), "c": _victims((9, None))}
    calls: list[str] = []

    def prefer_b_or_c(n: str) -> int:
        calls.append(n)
        return 1 if n in "bc" else 0

    assert preemption.pick_one_node_for_preemption(victims, [prefer_b_or_c], NOW) == "b"
    assert calls == ["a", "b", "c"]


def test_earliest_pod_start_time_and_importance() -> None:
    v = _victims((100, epoch(5)), (100, epoch(2)), (50, epoch(0)), (200, epoch(7)))
    assert preemption.get_earliest_pod_start_time(v, NOW) == epoch(7)
    v = _victims((100, epoch(5)), (100, epoch(2)), (50, epoch(0)), (100, epoch(3)))
    assert preemption.get_earliest_pod_start_time(v, NOW) == epoch(2)
    assert preemption.get_earliest_pod_start_time(Victims([]), NOW) is None
    old, young = pod("old", priority=1, start=epoch(1)), pod("young", priority=1, start=epoch(2))
    assert preemption.more_important_pod(old, young, NOW)
    assert not preemption.more_important_pod(young, old, NOW)
    assert preemption.more_important_pod(pod("hi", priority=2), old, NOW)
    assert preemption.more_important_pod(young, pod("unstarted", priority=1), NOW)
    ordered = preemption.sort_by_importance(
        [young, pod("hi", priority=2), old], lambda a, b: preemption.more_important_pod(a, b, NOW)
    )
    assert [p.name for p in ordered] == ["hi", "old", "young"]


# --------------------------------------------------------------------------------------------
# filterPodsWithPDBViolation
# --------------------------------------------------------------------------------------------


def _pdb(
    *,
    labels: Mapping[str, str] | None = {"app": "foo"},  # noqa: B006
    namespace: str = "default",
    allowed: int = 0,
    disrupted: Sequence[str] = (),
    selector: LabelSelector | None = None,
) -> PodDisruptionBudget:
    if selector is None and labels is not None:
        selector = LabelSelector(match_labels=dict(labels))
    return PodDisruptionBudget(
        metadata=ObjectMeta(name="pdb", namespace=namespace),
        selector=selector,
        disruptions_allowed=allowed,
        disrupted_pods=dict.fromkeys(disrupted, NOW),
    )


_APP = {"app": "foo"}


@pytest.mark.parametrize(
    ("pods", "pdbs", "violating"),
    [
        pytest.param(
            [pod("a", labels=_APP), pod("b", labels=_APP), pod("c", labels=_APP)],
            [_pdb(allowed=1)],
            ["b", "c"],
            id="budget spent in order",
        ),
        pytest.param(
            [pod("a", labels=_APP), pod("b", labels=_APP)],
            [_pdb(allowed=0, disrupted=["a"])],
            ["b"],
            id="already disrupted pods do not spend the budget",
        ),
        pytest.param([pod("a", labels=_APP)], [_pdb(namespace="other")], [], id="other namespace"),
        pytest.param([pod("a")], [_pdb(labels=None, selector=LabelSelector())], [], id="no labels"),
        pytest.param(
            [pod("a", labels=_APP)],
            [_pdb(labels=None, selector=LabelSelector())],
            [],
            id="empty selector matches nothing",
        ),
        pytest.param(
            [pod("a", labels=_APP)], [_pdb(labels=None)], [], id="nil selector matches nothing"
        ),
        pytest.param(
            [pod("a", labels=_APP)],
            [
                _pdb(
                    labels=None,
                    selector=LabelSelector(
                        match_expressions=(LabelSelectorRequirement(key="app", operator="Exists"),)
                    ),
                ),
                _pdb(allowed=5),
            ],
            ["a"],
            id="one violated budget among several is enough",
        ),
    ],
)
def test_filter_pods_with_pdb_violation(
    pods: list[Pod], pdbs: list[PodDisruptionBudget], violating: list[str]
) -> None:
    infos = [fw.PodInfo(p) for p in pods]
    got_violating, got_ok = preemption.filter_pods_with_pdb_violation(infos, pdbs)
    assert [i.pod.name for i in got_violating] == violating
    assert [i.pod.name for i in got_ok] == [p.name for p in pods if p.name not in violating]


# --------------------------------------------------------------------------------------------
# Asynchronous preemption (upstream SchedulerAsyncPreemption, executor_test.go)
# --------------------------------------------------------------------------------------------


def _async_cluster(
    victims: Sequence[Pod],
) -> tuple[Framework, MemoryBackend, list[Callable[[], None]], list[list[str]]]:
    """A Framework whose ``run_async`` queues the task and whose pod lister reads the backend;
    returns the tasks and the activations."""
    clock = Clock()
    backend = MemoryBackend([node("node1"), *victims], clock=clock)
    tasks: list[Callable[[], None]] = []
    activated: list[list[str]] = []

    def lister(namespace: str, name: str) -> Pod | None:
        found = [p for p in stored_pods(backend) if (p.namespace, p.name) == (namespace, name)]
        return found[0] if found else None

    fwk = Framework(
        snapshot=Snapshot.from_objects([node("node1")], victims),
        binder=backend,
        clock=clock,
        rng=random.Random(0),
        async_runner=tasks.append,
        pod_lister=lister,
        activator=lambda pods: activated.append([p.name for p in pods]),
    )
    return fwk, backend, tasks, activated


def test_async_preemption_evicts_off_the_cycle() -> None:
    victims = [_VICTIM1, _VICTIM2]
    fwk, backend, tasks, activated = _async_cluster(victims)
    ev = preemption.Evaluator("Fake", fwk, FakePostFilterPlugin())
    state = fw.CycleState()
    m = fw.NodeToStatus({"node1": fw.Status(fw.Code.UNSCHEDULABLE)})
    result, status = ev.preempt(state, _PREEMPTOR, m)
    assert result == fw.PostFilterResult(fw.NominatingInfo("node1", fw.NominatingMode.OVERRIDE))
    assert status == fw.Status(fw.Code.SUCCESS)
    # Nothing evicted yet: the preemptor is running preemption until the task has run.
    assert sorted(p.name for p in stored_pods(backend)) == ["victim1", "victim2"]
    assert ev.is_pod_running_preemption(_PREEMPTOR.uid)
    assert len(tasks) == 1
    tasks.pop()()
    assert [p.name for p in stored_pods(backend)] == ["victim2"]  # the fake's one victim went
    assert not ev.is_pod_running_preemption(_PREEMPTOR.uid)
    assert activated == []


def test_async_preemption_last_victim_counts_as_done_once_gone() -> None:
    """IsPodRunningPreemption while the last victim is evicted: running until the lister
    shows it gone or terminating."""
    first = pod("first", node="node1", priority=MID, containers=1)
    last = pod("last", node="node1", priority=MID, containers=1)
    fwk, backend, tasks, _ = _async_cluster([first, last])
    ev = preemption.Evaluator("Fake", fwk, FakePostFilterPlugin())
    seen: list[tuple[str, bool, bool]] = []
    evict = ev.preempt_pod

    def observing(c: Candidate, preemptor: Pod, victim: Pod, plugin: str) -> None:
        before = ev.is_pod_running_preemption(preemptor.uid)
        evict(c, preemptor, victim, plugin)
        seen.append((victim.name, before, ev.is_pod_running_preemption(preemptor.uid)))

    ev.preempt_pod = observing
    ev.prepare_candidate_async(Candidate("node1", Victims([first, last])), _PREEMPTOR, "Fake")
    tasks.pop()()
    assert seen == [("first", True, True), ("last", True, False)]
    assert not ev.is_pod_running_preemption(_PREEMPTOR.uid)


def test_async_preemption_failure_activates_the_preemptor() -> None:
    victims = [
        pod("a", node="node1", priority=MID, containers=1),
        pod("b", node="node1", priority=MID, containers=1),
    ]
    fwk, backend, tasks, activated = _async_cluster(victims)
    ev = preemption.Evaluator("Fake", fwk, FakePostFilterPlugin())
    backend.inject_failure("delete_pod", error=BackendError("boom"))
    ev.prepare_candidate_async(Candidate("node1", Victims(victims)), _PREEMPTOR, "Fake")
    tasks.pop()()
    # The first eviction failed: the last victim is not tried, the preemptor is activated.
    assert sorted(p.name for p in stored_pods(backend)) == ["a", "b"]
    assert activated == [["preemptor"]]
    assert not ev.is_pod_running_preemption(_PREEMPTOR.uid)


def test_async_preemption_skips_terminating_victims() -> None:
    fwk, backend, tasks, _ = _async_cluster([_TERMINATING])
    ev = preemption.Evaluator("Fake", fwk, FakePostFilterPlugin())
    ev.prepare_candidate_async(Candidate("node1", Victims([_TERMINATING])), _PREEMPTOR, "Fake")
    assert tasks == [] and not ev.is_pod_running_preemption(_PREEMPTOR.uid)


def test_async_preemption_without_a_runner_evicts_at_once() -> None:
    fwk, backend = cluster([node("node1")], [_VICTIM1])
    ev = preemption.Evaluator("Fake", fwk, FakePostFilterPlugin())
    ev.prepare_candidate_async(Candidate("node1", Victims([_VICTIM1])), _PREEMPTOR, "Fake")
    assert stored_pods(backend) == []
    assert not ev.is_pod_running_preemption(_PREEMPTOR.uid)
