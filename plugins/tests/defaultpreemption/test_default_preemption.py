"""Upstream ``defaultpreemption/default_preemption_test.go``, as data, on the real filters.

Every case runs the in-tree filter plugins (NodeResourcesFit, InterPodAffinity,
PodTopologySpread) through a real :class:`~schedframe.runtime.Framework` and evicts through a
real :class:`~schedframe.backends.MemoryBackend`.

Not ported: extender cases (extenders are not modelled), pod-group / workload-aware cases
(``SchedulingGroup`` is not modelled), the async-preemption variants and ``TestPreEnqueue``
(evictions are synchronous, see :mod:`schedframe.preemption`). Upstream's nanosecond start
times (``epochTime1`` = 1 ns) become microseconds; only their order matters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pytest

from schedframe import errors, preemption
from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.config import PluginConfig, PluginRef, Plugins, PluginSet, Profile, decode_args
from schedframe.objects import (
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    PodCondition,
    PodDisruptionBudget,
)
from schedframe.objects import TopologySpreadConstraint as TSC
from schedframe.runtime import Framework, Registry
from schedframe_plugins.defaultpreemption import (
    MSG_PREEMPTION_POLICY_NEVER,
    MSG_TERMINATING_POD_ON_NOMINATED_NODE,
    DefaultPreemption,
    DefaultPreemptionArgs,
    IsEligiblePodFunc,
    MoreImportantPodFunc,
)
from schedframe_plugins.interpodaffinity import InterPodAffinity
from schedframe_plugins.noderesources import Fit
from schedframe_plugins.podtopologyspread import PodTopologySpread

from ._builders import (
    HIGH,
    LARGE,
    LOW,
    MEDIUM,
    MID,
    NEG,
    NODE_RES,
    ONE_POD,
    SMALL,
    VERY_HIGH,
    VERY_LARGE,
    ErrorOnLabelPlugin,
    FakeFilter,
    FalseFilter,
    MatchFilter,
    PluginFactory,
    SequenceRandom,
    TrueFilter,
    cluster,
    epoch,
    node,
    pdb,
    pod,
    pre_filter,
    stored_pods,
    topo_node,
    unschedulable,
)

OVERRIDE = fw.NominatingMode.OVERRIDE
IS_VIOLATING = "test.kubernetes.io/is-violating-pdb"


def nominate(name: str) -> fw.PostFilterResult:
    """Upstream ``NewPostFilterResultWithNominatedNode``."""
    return fw.PostFilterResult(fw.NominatingInfo(name, OVERRIDE))


def fit(h: fw.Handle) -> fw.Plugin:
    return Fit(None, h)


def inter_pod_affinity(h: fw.Handle) -> fw.Plugin:
    return InterPodAffinity(None, h)


def pod_topology_spread(h: fw.Handle) -> fw.Plugin:
    return PodTopologySpread(None, h)


def error_on_label(h: fw.Handle) -> fw.Plugin:
    return ErrorOnLabelPlugin()


def spread_foo(key: str) -> TSC:
    """``SpreadConstraint(1, key, DoNotSchedule, Exists("foo"))``."""
    return TSC(
        max_skew=1,
        topology_key=key,
        when_unsatisfiable="DoNotSchedule",
        label_selector=LabelSelector(
            match_expressions=(LabelSelectorRequirement(key="foo", operator="Exists"),)
        ),
    )


SPREAD = (spread_foo("zone"), spread_foo("hostname"))
DISRUPTION_CONDITION = PodCondition(
    type="DisruptionTarget", status="True", reason="PreemptionByScheduler"
)


# --------------------------------------------------------------------------------------------
# TestPostFilter
# --------------------------------------------------------------------------------------------


@dataclass
class PostFilterCase:
    pod: Pod
    pods: list[Pod]
    nodes: list[Node]
    statuses: fw.NodeToStatus
    want_result: fw.PostFilterResult | None
    want_status: fw.Status
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    victims: list[str] = field(default_factory=list)


_n = node


POST_FILTER_CASES = [
    pytest.param(
        PostFilterCase(
            pod=pod("p", priority=HIGH),
            pods=[pod("p1", node="node1")],
            nodes=[_n("node1", ONE_POD)],
            statuses=unschedulable("node1"),
            want_result=nominate("node1"),
            want_status=fw.Status(fw.Code.SUCCESS),
            victims=["p1"],
        ),
        id="pod with higher priority can be made schedulable",
    ),
    pytest.param(
        PostFilterCase(
            pod=pod("p"),
            pods=[pod("p1", node="node1")],
            nodes=[_n("node1", ONE_POD)],
            statuses=unschedulable("node1"),
            want_result=nominate(""),
            want_status=fw.Status(
                fw.Code.UNSCHEDULABLE,
                "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
            ),
        ),
        id="pod with tied priority is still unschedulable",
    ),
    pytest.param(
        PostFilterCase(
            pod=pod("p", priority=HIGH),
            pods=[pod("p1", node="node1")],
            nodes=[_n("node1", ONE_POD)],
            statuses=fw.NodeToStatus({"node1": fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE)}),
            want_result=nominate(""),
            want_status=fw.Status(
                fw.Code.UNSCHEDULABLE,
                "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
            ),
        ),
        id="preemption should respect filteredNodesStatuses",
    ),
    pytest.param(
        PostFilterCase(
            pod=pod("p", priority=HIGH),
            pods=[pod("p1", node="node1")],
            nodes=[_n("node1", ONE_POD)],
            statuses=fw.NodeToStatus(),
            want_result=nominate(""),
            want_status=fw.Status(
                fw.Code.UNSCHEDULABLE,
                "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
            ),
        ),
        id="preemption should respect absent NodeToStatusReader entry meaning "
        "UnschedulableAndUnresolvable",
    ),
    pytest.param(
        PostFilterCase(
            pod=pod("p", priority=MID),
            pods=[pod("p1", priority=HIGH, node="node1"), pod("p2", priority=LOW, node="node2")],
            nodes=[_n("node1", ONE_POD), _n("node2", ONE_POD)],
            statuses=unschedulable("node1", "node2"),
            want_result=nominate("node2"),
            want_status=fw.Status(fw.Code.SUCCESS),
            victims=["p2"],
        ),
        id="pod can be made schedulable on one node",
    ),
    pytest.param(
        PostFilterCase(
            pod=pod("p", priority=VERY_HIGH),
            pods=[
                pod("p1", labels={IS_VIOLATING: "non-violating"}, priority=HIGH, node="node1"),
                pod("p2", labels={IS_VIOLATING: "violating"}, priority=LOW, node="node1"),
                pod("p3", labels={IS_VIOLATING: "violating"}, priority=MID, node="node2"),
            ],
            pdbs=[
                pdb(
                    "violating-pdb", match_labels={IS_VIOLATING: "violating"}, min_available="100%"
                ),
                pdb(
                    "non-violating-pdb",
                    match_labels={IS_VIOLATING: "non-violating"},
                    min_available=0,
                    allowed=(1 << 31) - 1,
                ),
            ],
            nodes=[_n("node1", ONE_POD), _n("node2", ONE_POD)],
            statuses=unschedulable("node1", "node2"),
            want_result=nominate("node2"),
            want_status=fw.Status(fw.Code.SUCCESS),
            victims=["p3"],
        ),
        id="pod can be made schedulable on minHighestPriority node",
    ),
    pytest.param(
        PostFilterCase(
            pod=pod("p", priority=HIGH, req=LARGE),
            pods=[pod("p1", node="node1"), pod("p2", node="node2")],
            nodes=[_n("node1", NODE_RES), _n("node2", NODE_RES)],
            statuses=unschedulable("node1", "node2"),
            want_result=nominate(""),
            want_status=fw.Status(
                fw.Code.UNSCHEDULABLE, "preemption: 0/2 nodes are available: 2 Insufficient cpu."
            ),
        ),
        id="no candidate nodes found, no enough resource after removing low priority pods",
    ),
    pytest.param(
        PostFilterCase(
            pod=pod("p", priority=HIGH, req=LARGE),
            pods=[
                pod("p1", node="node1", priority=HIGH),
                pod("p2", node="node2"),
                pod("p3", node="node3", priority=HIGH),
            ],
            nodes=[_n("node1", ONE_POD), _n("node2", NODE_RES), _n("node3", ONE_POD)],
            statuses=unschedulable("node1", "node2", "node3"),
            want_result=nominate(""),
            want_status=fw.Status(
                fw.Code.UNSCHEDULABLE,
                "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
                "2 No preemption victims found for incoming pod.",
            ),
        ),
        id="no candidate nodes found with mixed reasons, no lower priority pod and no enough "
        "CPU resource",
    ),
    pytest.param(
        PostFilterCase(
            pod=pod("p", priority=HIGH, req=LARGE),
            pods=[pod("p1", node="node1"), pod("p2", node="node2")],
            nodes=[_n(f"node{i}", NODE_RES) for i in range(1, 5)],
            statuses=fw.NodeToStatus(
                {
                    "node1": fw.Status(fw.Code.UNSCHEDULABLE),
                    "node2": fw.Status(fw.Code.UNSCHEDULABLE),
                    "node4": fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
                }
            ),
            want_result=nominate(""),
            want_status=fw.Status(
                fw.Code.UNSCHEDULABLE,
                "preemption: 0/4 nodes are available: 2 Insufficient cpu, "
                "2 Preemption is not helpful for scheduling.",
            ),
        ),
        id="no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes "
        "and 2 nodes don't have enough CPU resource",
    ),
    pytest.param(
        PostFilterCase(
            pod=pod("p", priority=HIGH, req=LARGE),
            pods=[pod("p1", node="node1")],
            nodes=[_n("node1", LARGE, {"error": "true"})],
            statuses=unschedulable("node1"),
            want_result=None,
            want_status=fw.Status(
                fw.Code.ERROR,
                'preemption: running RemovePod on PreFilter plugin "test-plugin": '
                "failed to remove pod: p",
            ),
        ),
        id="only one node but failed with TestPlugin",
    ),
    pytest.param(
        PostFilterCase(
            pod=pod("p", priority=HIGH, req=LARGE),
            pods=[pod("p1", node="node1"), pod("p2", node="node2", req=MEDIUM)],
            nodes=[_n("node1", LARGE, {"error": "true"}), _n("node2", LARGE)],
            statuses=unschedulable("node1", "node2"),
            want_result=nominate("node2"),
            want_status=fw.Status(fw.Code.SUCCESS),
            victims=["p2"],
        ),
        id="one failed with TestPlugin and the other pass",
    ),
]


@pytest.mark.parametrize("case", POST_FILTER_CASES)
def test_post_filter(case: PostFilterCase) -> None:
    fwk, backend = cluster(case.nodes, case.pods, [fit, error_on_label], pdbs=case.pdbs)
    plugin = DefaultPreemption(DefaultPreemptionArgs(), fwk)
    state = pre_filter(fwk, case.pod)

    result, status = plugin.post_filter(state, case.pod, case.statuses)

    assert status is not None
    if status.code is fw.Code.ERROR:
        assert status.reasons == case.want_status.reasons
    else:
        assert status == case.want_status
    assert result == case.want_result
    remaining = {p.name for p in stored_pods(backend)}
    assert sorted({p.name for p in case.pods} - remaining) == sorted(case.victims)
    chosen = state.get(preemption.CHOSEN_CANDIDATE_KEY)
    if case.victims:
        assert chosen is not None
        assert result is not None and result.nominating_info is not None
        assert chosen.name == result.nominating_info.nominated_node_name
        assert sorted(p.name for p in chosen.victims.pods) == sorted(case.victims)
    else:
        assert chosen is None


def test_post_filter_through_the_framework() -> None:
    """PostFilter as the scheduling cycle runs it: the framework keeps the clearing result."""
    p = pod("p", priority=HIGH, req=LARGE)
    fwk, _ = cluster([node("node1", NODE_RES)], [pod("p1", node="node1")], [fit])
    fwk.add_plugin(DefaultPreemption(None, fwk))
    state = pre_filter(fwk, p)
    result, status = fwk.run_post_filter_plugins(state, p, unschedulable("node1"))
    assert result == nominate("")
    assert status == fw.Status(
        fw.Code.UNSCHEDULABLE,
        "preemption: 0/1 nodes are available: 1 Insufficient cpu.",
        plugin="DefaultPreemption",
    )


# --------------------------------------------------------------------------------------------
# TestDryRunPreemption
# --------------------------------------------------------------------------------------------

Expected = list[tuple[str, list[str], int]]


@dataclass
class DryRunCase:
    node_names: list[str]
    test_pods: list[Pod]
    init_pods: list[Pod]
    plugins: list[PluginFactory]
    expected: list[Expected]
    expected_calls: list[int]
    args: DefaultPreemptionArgs | None = None
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    fake_rc: fw.Code = fw.Code.SUCCESS
    offsets: list[int] | None = None


def _pdb_app_foo(allowed: int, disrupted: Sequence[str] = ()) -> PodDisruptionBudget:
    return pdb(match_labels={"app": "foo"}, allowed=allowed, disrupted=disrupted)


_FOO = {"foo": ""}
_APP = {"app": "foo"}
_LIMIT_2 = DefaultPreemptionArgs(min_candidate_nodes_percentage=40, min_candidate_nodes_absolute=1)
_FIVE = ["node1", "node2", "node3", "node4", "node5"]

DRY_RUN_CASES = [
    pytest.param(
        DryRunCase(
            node_names=["node1", "node2"],
            test_pods=[pod("p", priority=HIGH)],
            init_pods=[
                pod("p1", node="node1", priority=MID),
                pod("p2", node="node2", priority=MID),
            ],
            plugins=[lambda h: FalseFilter()],
            expected=[[]],
            expected_calls=[2],
        ),
        id="a pod that does not fit on any node",
    ),
    pytest.param(
        DryRunCase(
            node_names=["node1", "node2"],
            test_pods=[pod("p", priority=HIGH)],
            init_pods=[
                pod("p1", node="node1", priority=MID),
                pod("p2", node="node2", priority=MID),
            ],
            plugins=[lambda h: TrueFilter()],
            fake_rc=fw.Code.UNSCHEDULABLE,
            expected=[[]],
            expected_calls=[2],
        ),
        id="a pod that fits with no preemption",
    ),
    pytest.param(
        DryRunCase(
            node_names=["node1", "node2"],
            test_pods=[pod("node1", priority=HIGH)],
            init_pods=[
                pod("p1", node="node1", priority=MID),
                pod("p2", node="node2", priority=MID),
            ],
            plugins=[lambda h: MatchFilter()],
            fake_rc=fw.Code.UNSCHEDULABLE,
            expected=[[]],
            expected_calls=[2],
        ),
        id="a pod that fits on one node with no preemption",
    ),
    pytest.param(
        DryRunCase(
            node_names=["node1", "node2"],
            test_pods=[pod("p", priority=HIGH, req=LARGE)],
            init_pods=[
                pod("p1", node="node1", priority=MID, req=LARGE),
                pod("p2", node="node2", priority=MID, req=LARGE),
            ],
            plugins=[fit],
            expected=[[("node1", ["p1"], 0), ("node2", ["p2"], 0)]],
            expected_calls=[4],
        ),
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        DryRunCase(
            node_names=["node1", "node2"],
            test_pods=[pod("p", priority=LOW, req=LARGE)],
            init_pods=[
                pod("p1", node="node1", priority=MID, req=LARGE),
                pod("p2", node="node2", priority=MID, req=LARGE),
            ],
            plugins=[fit],
            expected=[[]],
            expected_calls=[0],
        ),
        id="a pod that would fit on the nodes, but other pods running are higher priority, "
        "no preemption would happen",
    ),
    pytest.param(
        DryRunCase(
            node_names=["node1", "node2"],
            test_pods=[pod("p", priority=HIGH, req=LARGE)],
            init_pods=[
                pod("p1.1", node="node1", priority=LOW, req=SMALL),
                pod("p1.2", node="node1", priority=MID, req=LARGE),
                pod("p2", node="node2", priority=MID, req=LARGE),
            ],
            plugins=[fit],
            expected=[[("node1", ["p1.2"], 0), ("node2", ["p2"], 0)]],
            expected_calls=[5],
        ),
        id="medium priority pod is preempted, but lower priority one stays as it is small",
    ),
    pytest.param(
        DryRunCase(
            node_names=["node1", "node2"],
            test_pods=[pod("p", priority=HIGH, req=LARGE)],
            init_pods=[
                pod("p1.1", node="node1", priority=MID, req=SMALL),
                pod("p1.2", node="node1", priority=LOW, req=SMALL),
                pod("p1.3", node="node1", priority=MID, req=MEDIUM),
                pod("p1.4", node="node1", priority=HIGH, req=SMALL),
                pod("p2", node="node2", priority=HIGH, req=LARGE),
            ],
            plugins=[fit],
            expected=[[("node1", ["p1.2", "p1.3"], 0)]],
            expected_calls=[4],
        ),
        id="mixed priority pods are preempted",
    ),
    pytest.param(
        DryRunCase(
            node_names=["node1", "node2"],
            test_pods=[pod("p", priority=HIGH, req=LARGE)],
            init_pods=[
                pod("p1.1", node="node1", priority=LOW, req=SMALL, start=epoch(5)),
                pod("p1.2", node="node1", priority=LOW, req=SMALL, start=epoch(4)),
                pod("p1.3", node="node1", priority=MID, req=MEDIUM, start=epoch(3)),
                pod("p1.4", node="node1", priority=HIGH, req=SMALL, start=epoch(2)),
                pod("p2", node="node2", priority=HIGH, req=LARGE, start=epoch(1)),
            ],
            plugins=[fit],
            expected=[[("node1", ["p1.1", "p1.3"], 0)]],
            expected_calls=[4],
        ),
        id="mixed priority pods are preempted, pick later StartTime one when priorities are equal",
    ),
    pytest.param(
        DryRunCase(
            node_names=["node1", "node2"],
            test_pods=[pod("p", labels=_FOO, priority=HIGH, req=SMALL)],
            init_pods=[
                pod(
                    "p1.1",
                    node="node1",
                    labels=_FOO,
                    priority=LOW,
                    req=SMALL,
                    anti_affinity_exists=("foo", "hostname"),
                ),
                pod("p1.2", node="node1", priority=MID, req=SMALL),
                pod("p1.3", node="node1", priority=HIGH, req=SMALL),
                pod("p2", node="node2", priority=HIGH, req=SMALL),
            ],
            plugins=[fit, inter_pod_affinity],
            expected=[[("node1", ["p1.1"], 0)]],
            expected_calls=[3],
        ),
        id="pod with anti-affinity is preempted",
    ),
    pytest.param(
        DryRunCase(
            node_names=["node-a/zone1", "node-b/zone1", "node-x/zone2"],
            test_pods=[pod("p", labels=_FOO, priority=HIGH, spread=SPREAD)],
            init_pods=[
                pod("pod-a1", node="node-a", labels=_FOO, priority=MID),
                pod("pod-a2", node="node-a", labels=_FOO, priority=LOW),
                pod("pod-b1", node="node-b", labels=_FOO, priority=LOW),
                pod("pod-x1", node="node-x", labels=_FOO, priority=HIGH),
                pod("pod-x2", node="node-x", labels=_FOO, priority=HIGH),
            ],
            plugins=[pod_topology_spread],
            expected=[[("node-a", ["pod-a2"], 0), ("node-b", ["pod-b1"], 0)]],
            expected_calls=[5],
        ),
        id="preemption to resolve pod topology spread filter failure",
    ),
    pytest.param(
        DryRunCase(
            node_names=["node1", "node2"],
            test_pods=[pod("p", priority=HIGH, req=LARGE)],
            init_pods=[
                pod("p1", node="node1", priority=MID, req=LARGE),
                pod("p2", node="node2", priority=MID, req=LARGE),
            ],
            plugins=[fit],
            fake_rc=fw.Code.UNSCHEDULABLE,
            expected=[[]],
            expected_calls=[2],
        ),
        id="get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
    ),
    pytest.param(
        DryRunCase(
            node_names=["node1"],
            test_pods=[pod("p", priority=HIGH, req=VERY_LARGE)],
            init_pods=[
                pod("p1.1", node="node1", labels=_APP, priority=MID, req=MEDIUM),
                pod("p1.2", node="node1", labels=_APP, priority=MID, req=MEDIUM),
            ],
            plugins=[fit],
            pdbs=[_pdb_app_foo(1)],
            expected=[[("node1", ["p1.1", "p1.2"], 1)]],
            expected_calls=[3],
        ),
        id="preemption with violation of same pdb",
    ),
    pytest.param(
        DryRunCase(
            node_names=["node1"],
            test_pods=[pod("p", priority=HIGH, req=VERY_LARGE)],
            init_pods=[
                pod("p1.1", node="node1", labels=_APP, priority=MID, req=MEDIUM),
                pod("p1.2", node="node1", labels=_APP, priority=MID, req=MEDIUM),
            ],
            plugins=[fit],
            pdbs=[_pdb_app_foo(1, ["p2"])],
            expected=[[("node1", ["p1.1", "p1.2"], 1)]],
            expected_calls=[3],
        ),
        id="preemption with violation of the pdb with pod whose eviction was processed, the "
        "victim doesn't belong to DisruptedPods",
    ),
    pytest.param(
        DryRunCase(
            node_names=["node1"],
            test_pods=[pod("p", priority=HIGH, req=VERY_LARGE)],
            init_pods=[
                pod("p1.1", node="node1", labels=_APP, priority=MID, req=MEDIUM),
                pod("p1.2", node="node1", labels=_APP, priority=MID, req=MEDIUM),
            ],
            plugins=[fit],
            pdbs=[_pdb_app_foo(1, ["p1.2"])],
            expected=[[("node1", ["p1.1", "p1.2"], 0)]],
            expected_calls=[3],
        ),
        id="preemption with violation of the pdb with pod whose eviction was processed, the "
        "victim belongs to DisruptedPods",
    ),
    pytest.param(
        DryRunCase(
            node_names=["node1"],
            test_pods=[pod("p", priority=HIGH, req=VERY_LARGE)],
            init_pods=[
                pod("p1.1", node="node1", labels=_APP, priority=MID, req=MEDIUM),
                pod("p1.2", node="node1", labels=_APP, priority=MID, req=MEDIUM),
                pod("p1.3", node="node1", labels=_APP, priority=MID, req=MEDIUM),
            ],
            plugins=[fit],
            pdbs=[_pdb_app_foo(1, ["p1.3"])],
            expected=[[("node1", ["p1.1", "p1.2", "p1.3"], 1)]],
            expected_calls=[4],
        ),
        id="preemption with violation of the pdb with pod whose eviction was processed, the "
        "victim which belongs to DisruptedPods is treated as 'nonViolating'",
    ),
    pytest.param(
        DryRunCase(
            args=_LIMIT_2,
            node_names=_FIVE,
            test_pods=[pod("p", priority=HIGH, req=LARGE)],
            init_pods=[pod(f"p{i}", node=f"node{i}", priority=MID, req=LARGE) for i in range(1, 6)],
            plugins=[fit],
            offsets=[4],
            # cycle=0 => offset=4 => node5 (yes), node1 (yes)
            expected=[[("node1", ["p1"], 0), ("node5", ["p5"], 0)]],
            expected_calls=[4],
        ),
        id="all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
    ),
    pytest.param(
        DryRunCase(
            args=_LIMIT_2,
            node_names=_FIVE,
            test_pods=[pod("p", priority=HIGH, req=LARGE)],
            init_pods=[
                pod("p1", node="node1", priority=MID, req=LARGE),
                pod("p2", node="node2", priority=VERY_HIGH, req=LARGE),
                pod("p3", node="node3", priority=MID, req=LARGE),
                pod("p4", node="node4", priority=MID, req=LARGE),
                pod("p5", node="node5", priority=VERY_HIGH, req=LARGE),
            ],
            plugins=[fit],
            offsets=[4],
            # cycle=0 => offset=4 => node5 (no), node1 (yes), node2 (no), node3 (yes)
            expected=[[("node1", ["p1"], 0), ("node3", ["p3"], 0)]],
            expected_calls=[4],
        ),
        id="some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
    ),
    pytest.param(
        DryRunCase(
            args=_LIMIT_2,
            node_names=_FIVE,
            test_pods=[pod(f"tp{i}", priority=HIGH, req=LARGE) for i in range(1, 4)],
            init_pods=[pod(f"p{i}", node=f"node{i}", priority=MID, req=LARGE) for i in range(1, 6)],
            plugins=[fit],
            offsets=[4, 1, 3],
            expected=[
                [("node1", ["p1"], 0), ("node5", ["p5"], 0)],  # offset=4
                [("node2", ["p2"], 0), ("node3", ["p3"], 0)],  # offset=1
                [("node4", ["p4"], 0), ("node5", ["p5"], 0)],  # offset=3
            ],
            expected_calls=[4, 4, 4],
        ),
        id="preemption offset across multiple scheduling cycles and wrap around",
    ),
    pytest.param(
        DryRunCase(
            args=DefaultPreemptionArgs(
                min_candidate_nodes_percentage=40, min_candidate_nodes_absolute=2
            ),
            node_names=_FIVE,
            test_pods=[pod("p", priority=HIGH, req=LARGE)],
            init_pods=[
                pod("p1", node="node1", labels=_APP, priority=MID, req=LARGE),
                pod("p2", node="node2", labels=_APP, priority=MID, req=LARGE),
                pod("p3", node="node3", priority=MID, req=LARGE),
                pod("p4", node="node4", priority=MID, req=LARGE),
                pod("p5", node="node5", labels=_APP, priority=MID, req=LARGE),
            ],
            plugins=[fit],
            pdbs=[_pdb_app_foo(0)],
            offsets=[4],
            # offset=4 => node5 (yes, pdb), node1 (yes, pdb), node2 (no room left, pdb),
            # node3 (yes): one more candidate than asked for, to get a non-violating one.
            expected=[[("node1", ["p1"], 1), ("node3", ["p3"], 0), ("node5", ["p5"], 1)]],
            expected_calls=[8],
        ),
        id="preemption looks past numCandidates until a non-PDB violating node is found",
    ),
]


@pytest.mark.parametrize("case", DRY_RUN_CASES)
def test_dry_run_preemption(case: DryRunCase) -> None:
    nodes = [topo_node(n, VERY_LARGE) for n in case.node_names]
    fake = FakeFilter({n.metadata.name: case.fake_rc for n in nodes})
    rng = SequenceRandom(case.offsets) if case.offsets is not None else None
    pdbs = case.pdbs
    fwk, _ = cluster(nodes, case.init_pods, [lambda h: fake, *case.plugins], rng=rng)
    node_infos = sorted(fwk.snapshot_shared_lister().node_infos.list(), key=lambda ni: ni.name)
    plugin = DefaultPreemption(case.args, fwk)

    previous = 0
    for cycle, p in enumerate(case.test_pods):
        state = pre_filter(fwk, p)
        offset, num = plugin.get_offset_and_num_candidates(len(node_infos))
        got, _, _ = plugin.evaluator.dry_run_preemption(state, p, node_infos, pdbs, offset, num)
        candidates = sorted(
            (c.name, sorted(v.name for v in c.victims.pods), c.victims.num_pdb_violations)
            for c in got
        )
        assert candidates == case.expected[cycle], f"cycle {cycle}"
        assert fake.calls - previous == case.expected_calls[cycle], f"cycle {cycle}"
        previous = fake.calls


# --------------------------------------------------------------------------------------------
# TestSelectBestCandidate
# --------------------------------------------------------------------------------------------

_E = epoch(0)

SELECT_BEST_CASES = [
    pytest.param(
        ["node1", "node2"],
        pod("p", priority=HIGH, req=LARGE),
        [
            pod("p1", node="node1", priority=MID, req=LARGE, start=_E),
            pod("p2", node="node2", priority=MID, req=LARGE, start=_E),
        ],
        ["node1", "node2"],
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", priority=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", node="node1", priority=MID, req=MEDIUM, start=_E),
            pod("p1.2", node="node1", priority=MID, req=LARGE, start=_E),
            pod("p2.1", node="node2", priority=MID, req=MEDIUM, start=_E),
            pod("p2.2", node="node2", priority=LOW, req=MEDIUM, start=_E),
            pod("p3.1", node="node3", priority=LOW, req=MEDIUM, start=_E),
            pod("p3.2", node="node3", priority=LOW, req=MEDIUM, start=_E),
        ],
        ["node3"],
        id="node with min highest priority pod is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", priority=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", node="node1", priority=MID, req=MEDIUM, start=_E),
            pod("p1.2", node="node1", priority=MID, req=LARGE, start=_E),
            pod("p2.1", node="node2", priority=MID, req=LARGE, start=_E),
            pod("p2.2", node="node2", priority=LOW, req=MEDIUM, start=_E),
            pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=_E),
            pod("p3.2", node="node3", priority=MID, req=MEDIUM, start=_E),
        ],
        ["node2"],
        id="when highest priorities are the same, minimum sum of priorities is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", priority=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", node="node1", priority=MID, req=SMALL, start=_E),
            pod("p1.2", node="node1", priority=NEG, req=SMALL, start=_E),
            pod("p1.3", node="node1", priority=MID, req=SMALL, start=_E),
            pod("p1.4", node="node1", priority=NEG, req=SMALL, start=_E),
            pod("p2.1", node="node2", priority=MID, req=LARGE, start=_E),
            pod("p2.2", node="node2", priority=NEG, req=MEDIUM, start=_E),
            pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=_E),
            pod("p3.2", node="node3", priority=NEG, req=SMALL, start=_E),
            pod("p3.3", node="node3", priority=LOW, req=SMALL, start=_E),
        ],
        ["node2"],
        id="when highest priority and sum are the same, minimum number of pods is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", priority=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", node="node1", priority=MID, req=SMALL, start=_E),
            pod("p1.2", node="node1", priority=NEG, req=SMALL, start=_E),
            pod("p1.3", node="node1", priority=NEG, req=SMALL, start=_E),
            pod("p2.1", node="node2", priority=MID, req=LARGE, start=_E),
            pod("p2.2", node="node2", priority=NEG, req=MEDIUM, start=_E),
            pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=_E),
            pod("p3.2", node="node3", priority=NEG, req=SMALL, start=_E),
            pod("p3.3", node="node3", priority=LOW, req=SMALL, start=_E),
        ],
        ["node2"],
        id="sum of adjusted priorities is considered",
    ),
    pytest.param(
        ["node1", "node2", "node3", "node4"],
        pod("p", priority=VERY_HIGH, req=VERY_LARGE),
        [
            pod("p1.1", node="node1", priority=MID, req=SMALL, start=_E),
            pod("p1.2", node="node1", priority=LOW, req=SMALL, start=_E),
            pod("p1.3", node="node1", priority=LOW, req=SMALL, start=_E),
            pod("p2.1", node="node2", priority=HIGH, req=LARGE, start=_E),
            pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=_E),
            pod("p3.2", node="node3", priority=LOW, req=SMALL, start=_E),
            pod("p3.3", node="node3", priority=LOW, req=SMALL, start=_E),
            pod("p3.4", node="node3", priority=LOW, req=MEDIUM, start=_E),
            pod("p4.1", node="node4", priority=MID, req=MEDIUM, start=_E),
            pod("p4.2", node="node4", priority=MID, req=SMALL, start=_E),
            pod("p4.3", node="node4", priority=MID, req=SMALL, start=_E),
            pod("p4.4", node="node4", priority=NEG, req=SMALL, start=_E),
        ],
        ["node1"],
        id="non-overlapping lowest high priority, sum priorities, and number of pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", priority=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", node="node1", priority=MID, req=MEDIUM, start=epoch(2)),
            pod("p1.2", node="node1", priority=MID, req=MEDIUM, start=epoch(2)),
            pod("p2.1", node="node2", priority=MID, req=MEDIUM, start=epoch(3)),
            pod("p2.2", node="node2", priority=MID, req=MEDIUM, start=epoch(3)),
            pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=epoch(1)),
            pod("p3.2", node="node3", priority=MID, req=MEDIUM, start=epoch(1)),
        ],
        ["node2"],
        id="same priority, same number of victims, different start time for each node's pod",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", priority=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", node="node1", priority=MID, req=MEDIUM, start=epoch(4)),
            pod("p1.2", node="node1", priority=MID, req=MEDIUM, start=epoch(2)),
            pod("p2.1", node="node2", priority=MID, req=MEDIUM, start=epoch(5)),
            pod("p2.2", node="node2", priority=MID, req=MEDIUM, start=epoch(1)),
            pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=epoch(3)),
            pod("p3.2", node="node3", priority=MID, req=MEDIUM, start=epoch(6)),
        ],
        ["node3"],
        id="same priority, same number of victims, different start time for all pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", priority=HIGH, req=VERY_LARGE),
        [
            pod("p1.1", node="node1", priority=LOW, req=MEDIUM, start=epoch(4)),
            pod("p1.2", node="node1", priority=MID, req=MEDIUM, start=epoch(2)),
            pod("p2.1", node="node2", priority=MID, req=MEDIUM, start=epoch(6)),
            pod("p2.2", node="node2", priority=LOW, req=MEDIUM, start=epoch(1)),
            pod("p3.1", node="node3", priority=LOW, req=MEDIUM, start=epoch(3)),
            pod("p3.2", node="node3", priority=MID, req=MEDIUM, start=epoch(5)),
        ],
        ["node2"],
        id="different priority, same number of victims, different start time for all pods",
    ),
]


@pytest.mark.parametrize(("node_names", "preemptor", "pods", "expected"), SELECT_BEST_CASES)
def test_select_best_candidate(
    node_names: list[str], preemptor: Pod, pods: list[Pod], expected: list[str]
) -> None:
    fwk, _ = cluster([node(n, VERY_LARGE) for n in node_names], pods, [fit])
    node_infos = fwk.snapshot_shared_lister().node_infos.list()
    state = pre_filter(fwk, preemptor)
    plugin = DefaultPreemption(None, fwk)
    offset, num = plugin.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = plugin.evaluator.dry_run_preemption(
        state, preemptor, node_infos, [], offset, num
    )
    best = plugin.evaluator.select_candidate(candidates)
    assert best is not None and best.name in expected


# --------------------------------------------------------------------------------------------
# TestCustomSelection (IsEligiblePod) and TestCustomOrdering (MoreImportantPod)
# --------------------------------------------------------------------------------------------


def pod_label_is_eligible(key: str, val: str) -> IsEligiblePodFunc:
    def f(node_info: fw.NodeInfo, victim: fw.PodInfo, preemptor: Pod) -> bool:
        return victim.pod.labels.get(key) == val

    return f


def node_name_is_eligible(name: str) -> IsEligiblePodFunc:
    def f(node_info: fw.NodeInfo, victim: fw.PodInfo, preemptor: Pod) -> bool:
        return node_info.name == name

    return f


def priority_below_threshold_cannot_preempt(min_preempting: int) -> IsEligiblePodFunc:
    def f(node_info: fw.NodeInfo, victim: fw.PodInfo, preemptor: Pod) -> bool:
        return preemptor.priority >= min_preempting

    return f


def priority_above_threshold_cannot_be_preempted(max_preemptible: int) -> IsEligiblePodFunc:
    def f(node_info: fw.NodeInfo, victim: fw.PodInfo, preemptor: Pod) -> bool:
        return victim.pod.priority <= max_preemptible

    return f


def _v(name: str, node: str, priority: int, req: Mapping[str, str], **kw: str) -> Pod:
    return pod(name, node=node, priority=priority, req=req, start=_E, labels=kw or None)


_LABEL_PODS = [
    _v("v1", "node1", MID, LARGE, preemptible="no"),
    _v("v2", "node2", MID, LARGE, preemptible="yes"),
    _v("v3", "node3", LOW, LARGE, preemptible="yes"),
    _v("v4", "node4", LOW, LARGE),
]
_FOUR = ["node1", "node2", "node3", "node4"]
_THREE = ["node1", "node2", "node3"]


def _node_pods(v1_req: Mapping[str, str]) -> list[Pod]:
    return [
        _v("v1", "node1", HIGH, v1_req),
        _v("v2", "node1", MID, SMALL),
        _v("v3", "node1", LOW, SMALL),
        _v("v4", "node2", MID, LARGE),
        _v("v5", "node3", LOW, LARGE),
    ]


_PRIORITY_PODS = [
    _v("v1", "node1", HIGH, LARGE),
    _v("v2", "node2", MID, LARGE),
    _v("v3", "node3", LOW, LARGE),
]

CUSTOM_SELECTION_CASES = [
    pytest.param(
        pod_label_is_eligible("preemptible", "yes"),
        _FOUR,
        pod("p1", priority=HIGH, req=LARGE),
        _LABEL_PODS,
        {"node2": ["v2"], "node3": ["v3"]},
        id="filter for matching pod label: high priority",
    ),
    pytest.param(
        pod_label_is_eligible("preemptible", "yes"),
        _FOUR,
        pod("p2", priority=MID, req=LARGE),
        _LABEL_PODS,
        {"node3": ["v3"]},
        id="filter for matching pod label: mid priority",
    ),
    pytest.param(
        pod_label_is_eligible("preemptible", "yes"),
        _FOUR,
        pod("p3", priority=LOW, req=LARGE),
        _LABEL_PODS,
        {},
        id="filter for matching pod label: low priority",
    ),
    pytest.param(
        node_name_is_eligible("node1"),
        _THREE,
        pod("p3", priority=HIGH, req=LARGE),
        _node_pods(MEDIUM),
        {"node1": ["v2", "v3"]},
        id="filter for matching victim node: high priority",
    ),
    pytest.param(
        node_name_is_eligible("node1"),
        _THREE,
        pod("p3", priority=MID, req=LARGE),
        _node_pods(SMALL),
        {"node1": ["v3"]},
        id="filter for matching victim node: mid priority",
    ),
    pytest.param(
        node_name_is_eligible("node1"),
        _THREE,
        pod("p3", priority=LOW, req=LARGE),
        _node_pods(SMALL),
        {},
        id="filter for matching victim node: low priority",
    ),
    pytest.param(
        priority_below_threshold_cannot_preempt(HIGH),
        _THREE,
        pod("p1", priority=HIGH, req=LARGE),
        _PRIORITY_PODS,
        {"node2": ["v2"], "node3": ["v3"]},
        id="only pods at or above specified priority can preempted: high priority",
    ),
    pytest.param(
        priority_below_threshold_cannot_preempt(HIGH),
        _THREE,
        pod("p2", priority=MID, req=LARGE),
        _PRIORITY_PODS,
        {},
        id="only pods at or above specified priority can preempted: mid priority",
    ),
    pytest.param(
        priority_above_threshold_cannot_be_preempted(MID),
        _THREE,
        pod("p1", priority=HIGH, req=LARGE),
        _PRIORITY_PODS,
        {"node2": ["v2"], "node3": ["v3"]},
        id="only pods at or below specified priority can be preempted: high priority",
    ),
]


@pytest.mark.parametrize(
    ("eligible", "node_names", "preemptor", "pods", "expected"), CUSTOM_SELECTION_CASES
)
def test_custom_selection(
    eligible: IsEligiblePodFunc,
    node_names: list[str],
    preemptor: Pod,
    pods: list[Pod],
    expected: dict[str, list[str]],
) -> None:
    fwk, _ = cluster([node(n, VERY_LARGE) for n in node_names], pods, [fit])
    state = pre_filter(fwk, preemptor)
    node_infos = fwk.snapshot_shared_lister().node_infos.list()
    plugin = DefaultPreemption(None, fwk)
    plugin.is_eligible_pod = eligible
    offset, num = plugin.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = plugin.evaluator.dry_run_preemption(
        state, preemptor, node_infos, [], offset, num
    )
    assert len(candidates) == len(expected)
    while candidates:
        selected = plugin.evaluator.select_candidate(candidates)
        assert selected is not None and selected.name in expected
        assert [p.name for p in selected.victims.pods] == expected[selected.name]
        candidates = [c for c in candidates if c.name != selected.name]


def order_by_oldest_start(pod1: Pod, pod2: Pod) -> bool:
    return preemption.get_pod_start_time(pod1, _E) < preemption.get_pod_start_time(pod2, _E)


def order_by_pod_name(pod1: Pod, pod2: Pod) -> bool:
    return pod1.name < pod2.name


@pytest.mark.parametrize(
    ("order", "pods", "expected"),
    [
        pytest.param(
            order_by_oldest_start,
            [
                pod("v1", uid="v1", node="node1", priority=LOW, req=MEDIUM, start=epoch(2)),
                pod("v2", uid="v2", node="node1", priority=LOW, req=MEDIUM, start=epoch(0)),
                pod("v3", uid="v3", node="node1", priority=MID, req=MEDIUM, start=epoch(1)),
            ],
            ["v3", "v1"],
            id="select newest pods",
        ),
        pytest.param(
            order_by_pod_name,
            [
                pod("foo", uid="v1", node="node1", priority=LOW, req=MEDIUM, start=_E),
                pod("bar", uid="v2", node="node1", priority=LOW, req=MEDIUM, start=_E),
                pod("baz", uid="v3", node="node1", priority=MID, req=MEDIUM, start=_E),
            ],
            ["baz", "foo"],
            id="select alphabetically-last pods",
        ),
    ],
)
def test_custom_ordering(order: MoreImportantPodFunc, pods: list[Pod], expected: list[str]) -> None:
    preemptor = pod("p2", priority=HIGH, req=LARGE)
    fwk, _ = cluster([node("node1", VERY_LARGE)], pods, [fit])
    state = pre_filter(fwk, preemptor)
    node_infos = fwk.snapshot_shared_lister().node_infos.list()
    plugin = DefaultPreemption(None, fwk)
    plugin.more_important_pod = order
    offset, num = plugin.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = plugin.evaluator.dry_run_preemption(
        state, preemptor, node_infos, [], offset, num
    )
    assert len(candidates) == 1
    assert [p.name for p in candidates[0].victims.pods] == expected


# --------------------------------------------------------------------------------------------
# TestPodEligibleToPreemptOthers
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("preemptor", "pods", "node_names", "nominated_status", "expected"),
    [
        pytest.param(
            pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
            [pod("p1", priority=LOW, node="node1", terminating=True)],
            ["node1"],
            fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint"),
            (True, ""),
            id="Pod with nominated node",
        ),
        pytest.param(
            pod("p_without_nominated_node", uid="p", priority=HIGH),
            [],
            [],
            None,
            (True, ""),
            id="Pod without nominated node",
        ),
        pytest.param(
            pod("p_with_preempt_never_policy", uid="p", priority=HIGH, policy="Never"),
            [],
            [],
            None,
            (False, MSG_PREEMPTION_POLICY_NEVER),
            id="Pod with 'PreemptNever' preemption policy",
        ),
        pytest.param(
            pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
            [
                pod(
                    "p1",
                    priority=LOW,
                    node="node1",
                    terminating=True,
                    conditions=[DISRUPTION_CONDITION],
                )
            ],
            ["node1"],
            None,
            (False, MSG_TERMINATING_POD_ON_NOMINATED_NODE),
            id="preemption victim pod terminating, as indicated by the dedicated "
            "DisruptionTarget condition",
        ),
        pytest.param(
            pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
            [pod("p1", priority=LOW, node="node1", terminating=True)],
            ["node1"],
            None,
            (True, ""),
            id="non-victim Pods terminating",
        ),
    ],
)
def test_pod_eligible_to_preempt_others(
    preemptor: Pod,
    pods: list[Pod],
    node_names: list[str],
    nominated_status: fw.Status | None,
    expected: tuple[bool, str],
) -> None:
    fwk, _ = cluster([node(n) for n in node_names], pods)
    plugin = DefaultPreemption(None, fwk)
    assert plugin.pod_eligible_to_preempt_others(preemptor, nominated_status) == expected


def test_not_eligible_message_in_post_filter() -> None:
    p = pod("p", priority=HIGH, policy="Never")
    fwk, backend = cluster([node("node1", ONE_POD)], [pod("p1", node="node1")], [fit])
    result, status = DefaultPreemption(None, fwk).post_filter(
        pre_filter(fwk, p), p, unschedulable("node1")
    )
    assert result is None
    assert status == fw.Status(fw.Code.UNSCHEDULABLE, "preemption: " + MSG_PREEMPTION_POLICY_NEVER)
    assert len(stored_pods(backend)) == 1


# --------------------------------------------------------------------------------------------
# TestPreempt: the whole flow, then a second attempt that must not preempt again
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("preemptor", "pods", "node_names", "plugins", "want", "expected_victims"),
    [
        pytest.param(
            pod("p", priority=HIGH, req=VERY_LARGE, policy="PreemptLowerPriority"),
            [
                pod("p1.1", node="node1", priority=LOW, req=SMALL),
                pod("p1.2", node="node1", priority=LOW, req=SMALL),
                pod("p2.1", node="node2", priority=HIGH, req=LARGE),
                pod("p3.1", node="node3", priority=MID, req=MEDIUM),
            ],
            _THREE,
            [fit],
            "node1",
            ["p1.1", "p1.2"],
            id="basic preemption logic",
        ),
        pytest.param(
            pod("p", labels=_FOO, priority=HIGH, spread=SPREAD),
            [
                pod("p-a1", node="node-a", labels=_FOO, priority=HIGH),
                pod("p-a2", node="node-a", labels=_FOO, priority=HIGH),
                pod("p-b1", node="node-b", labels=_FOO, priority=LOW),
                pod("p-x1", node="node-x", labels=_FOO, priority=HIGH),
                pod("p-x2", node="node-x", labels=_FOO, priority=HIGH),
            ],
            ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
            [pod_topology_spread],
            "node-b",
            ["p-b1"],
            id="preemption for topology spread constraints",
        ),
        pytest.param(
            pod("p", priority=HIGH, req=VERY_LARGE, policy="Never"),
            [
                pod("p1.1", node="node1", priority=LOW, req=SMALL),
                pod("p1.2", node="node1", priority=LOW, req=SMALL),
                pod("p2.1", node="node2", priority=HIGH, req=LARGE),
                pod("p3.1", node="node3", priority=MID, req=MEDIUM),
            ],
            _THREE,
            [fit],
            None,
            [],
            id="no preempting in pod",
        ),
        pytest.param(
            pod("p", priority=HIGH, req=VERY_LARGE),
            [
                pod("p1.1", node="node1", priority=LOW, req=SMALL),
                pod("p1.2", node="node1", priority=LOW, req=SMALL),
                pod("p2.1", node="node2", priority=HIGH, req=LARGE),
                pod("p3.1", node="node3", priority=MID, req=MEDIUM),
            ],
            _THREE,
            [fit],
            "node1",
            ["p1.1", "p1.2"],
            id="PreemptionPolicy is nil",
        ),
    ],
)
def test_preempt(
    preemptor: Pod,
    pods: list[Pod],
    node_names: list[str],
    plugins: list[Callable[[fw.Handle], fw.Plugin]],
    want: str | None,
    expected_victims: list[str],
) -> None:
    nodes = [topo_node(n, VERY_LARGE) for n in node_names]
    fwk, backend = cluster(nodes, pods, plugins, graceful_deletion=True)
    state = pre_filter(fwk, preemptor)
    plugin = DefaultPreemption(None, fwk)

    res, status = plugin.evaluator.preempt(
        state, preemptor, unschedulable(*(n.metadata.name for n in nodes))
    )

    assert status is not None and status.code in (fw.Code.SUCCESS, fw.Code.UNSCHEDULABLE)
    assert res == (nominate(want) if want is not None else None)
    stored = {p.name: p for p in stored_pods(backend)}
    terminating = sorted(n for n, p in stored.items() if p.deletion_timestamp is not None)
    assert terminating == sorted(expected_victims)
    for name in expected_victims:
        (condition,) = [c for c in stored[name].status.conditions if c.type == "DisruptionTarget"]
        assert (condition.status, condition.reason, condition.message) == (
            "True",
            "PreemptionByScheduler",
            "default-scheduler: preempting to accommodate a higher priority pod",
        )
    events = [(e.regarding, e.reason, e.action, e.note) for e in backend.events]
    assert sorted(events) == sorted(
        (f"default/{v}", "Preempted", "Preempting", f"Preempted by pod p on node {want}")
        for v in expected_victims
    )
    if want is None:
        return

    # The next attempt sees the victims terminating on the nominated node: no more preemption.
    fwk.set_snapshot(Snapshot.from_objects(nodes, stored_pods(backend)))
    again = preemptor.with_nominated_node_name(want)
    state = pre_filter(fwk, again)
    res, status = plugin.evaluator.preempt(
        state, again, unschedulable(*(n.metadata.name for n in nodes))
    )
    assert res is None
    assert status == fw.Status(fw.Code.UNSCHEDULABLE, MSG_TERMINATING_POD_ON_NOMINATED_NODE)
    assert len(backend.events) == len(expected_victims)


# --------------------------------------------------------------------------------------------
# calculateNumCandidates and the args
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pct", "absolute", "num_nodes", "want"),
    [
        pytest.param(10, 100, 10, 10, id="no nodes larger than minCandidateNodesAbsolute"),
        pytest.param(10, 100, 1000, 100, id="nodes larger than minCandidateNodesAbsolute"),
        pytest.param(40, 100, 1000, 400, id="percentage dominates"),
        pytest.param(10, 1, 100, 10, id="absolute is small"),
        pytest.param(0, 1, 100, 1, id="zero percentage"),
        pytest.param(10, 0, 5, 0, id="all rounded down"),
    ],
)
def test_calculate_num_candidates(pct: int, absolute: int, num_nodes: int, want: int) -> None:
    fwk, _ = cluster([], [])
    args = DefaultPreemptionArgs(
        min_candidate_nodes_percentage=pct, min_candidate_nodes_absolute=absolute
    )
    assert DefaultPreemption(args, fwk).calculate_num_candidates(num_nodes) == want


def test_default_args() -> None:
    args = decode_args(DefaultPreemptionArgs, None, path="args")
    assert args == DefaultPreemptionArgs(
        min_candidate_nodes_percentage=10, min_candidate_nodes_absolute=100
    )
    args = decode_args(
        DefaultPreemptionArgs,
        {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        path="args",
    )
    assert args == _LIMIT_2


@pytest.mark.parametrize(
    ("data", "want"),
    [
        pytest.param(
            {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
            [],
            id="valid args (default)",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": 100},
            ["args.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"],
            id="negative minCandidateNodesPercentage",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 900, "minCandidateNodesAbsolute": 100},
            ["args.minCandidateNodesPercentage: Invalid value: 900: not in valid range [0, 100]"],
            id="minCandidateNodesPercentage over 100",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1},
            ["args.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"],
            id="negative minCandidateNodesAbsolute",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            [
                "args.minCandidateNodesPercentage: Invalid value: 0: "
                "cannot be zero at the same time as minCandidateNodesAbsolute",
                "args.minCandidateNodesAbsolute: Invalid value: 0: "
                "cannot be zero at the same time as minCandidateNodesPercentage",
            ],
            id="all zero",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
            [
                "args.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]",
                "args.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
            ],
            id="both negative",
        ),
    ],
)
def test_args_validation(data: dict[str, object], want: list[str]) -> None:
    if not want:
        decode_args(DefaultPreemptionArgs, data, path="args")
        return
    with pytest.raises(errors.ConfigError) as info:
        decode_args(DefaultPreemptionArgs, data, path="args")
    assert [str(i) for i in info.value.issues] == want


def test_invalid_args_rejected_by_plugin() -> None:
    fwk, _ = cluster([], [])
    bad = DefaultPreemptionArgs(min_candidate_nodes_percentage=0, min_candidate_nodes_absolute=0)
    with pytest.raises(errors.ConfigError):
        DefaultPreemption(bad, fwk)


# --------------------------------------------------------------------------------------------
# Built from a profile, as the scheduler builds it
# --------------------------------------------------------------------------------------------


def test_from_profile_with_plugin_config() -> None:
    """DefaultPreemption loaded through its entry point, args decoded from ``pluginConfig``,
    run by the Framework's PostFilter on the verdicts of its own filters."""
    profile = Profile(
        plugins=Plugins(
            multi_point=PluginSet(
                enabled=[
                    PluginRef(name=n)
                    for n in (
                        "PrioritySort",
                        "NodeResourcesFit",
                        "DefaultPreemption",
                        "DefaultBinder",
                    )
                ]
            )
        ),
        plugin_config=[
            PluginConfig(
                name="DefaultPreemption",
                args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
            )
        ],
    )
    nodes = [node(n, VERY_LARGE) for n in _FIVE]
    pods = [pod(f"p{i}", node=f"node{i}", priority=MID, req=LARGE) for i in range(1, 6)]
    _, backend = cluster(nodes, pods)
    fwk = Framework.from_profile(
        profile,
        Registry.discover(),
        snapshot=Snapshot.from_objects(nodes, pods),
        binder=backend,
        rng=SequenceRandom([4]),
    )
    assert fwk.plugin_args["DefaultPreemption"] == _LIMIT_2
    assert [p.name for p in fwk.post_filter_plugins] == ["DefaultPreemption"]

    preemptor = pod("p", priority=HIGH, req=LARGE)
    state = pre_filter(fwk, preemptor)
    statuses = fw.NodeToStatus()
    for ni in fwk.snapshot_shared_lister().node_infos.list():
        status = fwk.run_filter_plugins(state, preemptor, ni)
        assert status is not None
        statuses.set(ni.name, status)

    result, status = fwk.run_post_filter_plugins(state, preemptor, statuses)

    # offset 4 => node5 and node1 are the two candidates; equal on every criterion, the first
    # one found wins.
    assert (result, status) == (nominate("node5"), fw.Status(fw.Code.SUCCESS))
    assert sorted(p.name for p in stored_pods(backend)) == ["p1", "p2", "p3", "p4"]
