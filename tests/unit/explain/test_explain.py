"""schedframe.explain: every node's verdict, every plugin's score, the pick and the why-nots."""

from __future__ import annotations

import json
import random
from typing import ClassVar

import pytest

from schedframe import framework as fw
from schedframe.errors import ConfigError
from schedframe.explain import Explanation, explain, node_zone
from schedframe.framework import Code, CycleState, NodeInfo, Status
from schedframe.objects import Pod
from schedframe.runtime import Registry
from schedframe.scheduler import select_host

from ._builders import node, pod

GPU_TAINT = {"key": "gpu", "value": "true", "effect": "NoSchedule"}


def test_feasible_nodes_get_every_plugins_raw_normalized_and_weighted_score() -> None:
    nodes = [node("n1", zone="a"), node("n2", zone="b")]
    busy = pod("busy", cpu="2", node_name="n1")
    result = explain(pod("p", cpu="1"), nodes=nodes, pods=[busy])

    assert result.chosen == "n2"
    assert result.feasible == ("n2", "n1")
    n1, n2 = result.node("n1"), result.node("n2")
    assert (n1.rank, n2.rank) == (2, 1)
    for n in (n1, n2):
        assert n.feasible and n.code == "Success" and n.zone in ("a", "b")
        assert n.total == sum(s.weighted for s in n.scores)
        for s in n.scores:
            assert s.weighted == s.normalized * s.weight
    fit = n2.score("NodeResourcesFit")
    assert fit is not None and fit.weight == 1
    taint = n2.score("TaintToleration")
    assert taint is not None and (taint.raw, taint.normalized, taint.weight) == (0, 100, 3)
    assert ("TaintToleration", 3) in result.score_plugins
    assert n2.why_not == "" and n2.chosen
    assert n1.total is not None and n2.total is not None
    assert n1.why_not.startswith(f"scored {n1.total}, {n2.total - n1.total} below n2")
    assert "lower on NodeResourcesFit" in n1.why_not
    assert result.message == "" and result.error == "" and result.schedulable


def test_several_failing_reasons_give_upstreams_fit_error_and_per_node_verdicts() -> None:
    nodes = [
        node("gpu", taints=[GPU_TAINT], labels={"disk": "ssd"}),
        node("small", cpu="500m", labels={"disk": "ssd"}),
        node("hdd", labels={"disk": "hdd"}),
        node("cordoned", unschedulable=True, labels={"disk": "ssd"}),
    ]
    stuck = pod("stuck", cpu="1", spec={"nodeSelector": {"disk": "ssd"}})
    result = explain(stuck, nodes=nodes)

    assert result.chosen is None and not result.schedulable
    assert result.message == (
        "0/4 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node "
        "affinity/selector, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable. "
        "no new claims to deallocate, preemption: 0/4 nodes are available: "
        "4 Preemption is not helpful for scheduling."
    )
    verdicts = {n.name: (n.plugin, n.code, n.reasons) for n in result.nodes}
    assert verdicts == {
        "gpu": (
            "TaintToleration",
            "UnschedulableAndUnresolvable",
            ("node(s) had untolerated taint(s)",),
        ),
        "small": ("NodeResourcesFit", "UnschedulableAndUnresolvable", ("Insufficient cpu",)),
        "hdd": (
            "NodeAffinity",
            "UnschedulableAndUnresolvable",
            ("node(s) didn't match Pod's node affinity/selector",),
        ),
        "cordoned": (
            "NodeUnschedulable",
            "UnschedulableAndUnresolvable",
            ("node(s) were unschedulable",),
        ),
    }
    assert result.node("hdd").why_not == (
        "NodeAffinity (UnschedulableAndUnresolvable): "
        "node(s) didn't match Pod's node affinity/selector"
    )
    assert all(not n.feasible and n.total is None and not n.scores for n in result.nodes)
    assert result.post_filter is not None
    # Upstream names the first PostFilter plugin that rejected: DynamicResources runs first.
    assert result.post_filter.plugin == "DynamicResources"
    assert result.post_filter.victims == ()


def test_nodes_cut_by_a_pre_filter_result_are_unschedulable_and_unresolvable() -> None:
    nodes = [node("n1"), node("n2"), node("n3")]
    pinned = pod(
        "pinned",
        spec={
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["n2"]}
                                ]
                            }
                        ]
                    }
                }
            }
        },
    )
    result = explain(pinned, nodes=nodes)

    assert result.pre_filter.narrowed_to == ("n2",)
    assert result.pre_filter.narrowed_by == ("NodeAffinity",)
    assert result.chosen == "n2"
    for name in ("n1", "n3"):
        n = result.node(name)
        assert n.cut_by_pre_filter and n.code == "UnschedulableAndUnresolvable"
        assert n.reasons == ("node(s) didn't satisfy plugin(s) [NodeAffinity]",)
        assert n.why_not.startswith("PreFilter (UnschedulableAndUnresolvable)")


def test_ties_are_broken_like_select_host_with_the_seed() -> None:
    nodes = [node(f"n{i}") for i in range(5)]
    for seed in range(6):
        result = explain(pod("p"), nodes=nodes, seed=seed)
        names = [n.name for n in result.nodes]
        expected, _ = select_host(
            names, [result.node(n).total or 0 for n in names], random.Random(seed)
        )
        assert result.chosen == expected
        loser = next(n for n in result.nodes if not n.chosen)
        assert loser.why_not == (
            f"tied with {expected} at {loser.total}; lost the random tie-break (seed {seed})"
        )


def test_post_filter_is_a_dry_run_reporting_victims_and_nomination() -> None:
    nodes = [node("n1", cpu="2")]
    victim = pod("low", cpu="2", node_name="n1", priority=0)
    high = pod("high", cpu="2", priority=100)
    result = explain(high, nodes=nodes, pods=[victim])

    assert result.chosen is None
    assert result.post_filter is not None
    assert result.post_filter.code == "Success"
    assert result.post_filter.nominated_node == "n1"
    assert result.post_filter.victims == ("default/low",)
    assert result.message == "0/1 nodes are available: 1 Insufficient cpu."
    assert explain(high, nodes=nodes, pods=[victim], post_filter=False).post_filter is None


def test_a_fitting_nominated_node_is_taken_first() -> None:
    nodes = [node("n1"), node("n2", cpu="8")]
    result = explain(pod("p", nominated="n1"), nodes=nodes)
    assert result.chosen == "n1" and result.nominated_node == "n1"
    assert "nominated node n1 fits and is taken first" in result.node("n2").why_not


def test_nominated_pods_count_on_their_node() -> None:
    nodes = [node("n1", cpu="2"), node("n2", cpu="2")]
    waiting = pod("waiting", cpu="2", priority=10, nominated="n1")
    result = explain(pod("p", cpu="2"), nodes=nodes, pods=[waiting])
    assert result.chosen == "n2"
    assert result.node("n1").reasons == ("Insufficient cpu",)


def test_a_bound_pod_is_explained_as_if_pending_and_never_counts_itself() -> None:
    nodes = [node("n1", cpu="1")]
    bound = pod("p", cpu="1", node_name="n1")
    result = explain(bound, nodes=nodes, pods=[bound])
    assert result.chosen == "n1"


def test_no_nodes() -> None:
    result = explain(pod("p"), nodes=[])
    assert result.chosen is None
    assert result.message == "no nodes available to schedule pods"


def test_an_unknown_profile_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match='profiles: Not found: "other"'):
        explain(pod("p"), nodes=[node("n1")], profile="other")


def test_an_unknown_plugin_in_the_config_is_a_config_error_with_its_path() -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}}],
    }
    with pytest.raises(ConfigError, match=r"profiles\[0\]\.plugins\.filter\.enabled\[0\]\.name"):
        explain(pod("p"), nodes=[node("n1")], config=config)


class _Broken(fw.FilterPlugin):
    name: ClassVar[str] = "Broken"

    def __init__(self, args: object, handle: object) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        if node.name == "n2":
            raise RuntimeError("boom")
        return None


def test_a_plugin_error_fails_the_attempt_and_is_reported() -> None:
    registry = Registry.discover()
    registry.register("Broken", _Broken)
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"filter": {"enabled": [{"name": "Broken"}]}}}],
    }
    result = explain(pod("p"), nodes=[node("n1"), node("n2")], config=config, registry=registry)
    assert result.chosen is None
    assert result.error == 'running "Broken" filter plugin: RuntimeError: boom'
    assert result.message == result.error
    assert result.node("n2").code == str(Code.ERROR)
    assert result.node("n1").feasible


def test_to_dict_is_json_ready_and_complete() -> None:
    result = explain(pod("p"), nodes=[node("n1", zone="a"), node("n2", taints=[GPU_TAINT])])
    data = json.loads(json.dumps(result.to_dict()))
    assert data["chosen"] == "n1"
    assert data["numNodes"] == 2
    n1, n2 = data["nodes"]
    assert n1["zone"] == "a" and n1["chosen"] is True
    assert {"plugin", "weight", "raw", "normalized", "weighted"} <= set(n1["scores"][0])
    assert n2["plugin"] == "TaintToleration" and "scores" not in n2
    assert isinstance(result, Explanation)


def test_node_zone_reads_the_topology_label_then_the_beta_one() -> None:
    assert node_zone(node("n", zone="z1")) == "z1"
    assert node_zone(node("n", labels={"failure-domain.beta.kubernetes.io/zone": "old"})) == "old"
    assert node_zone(node("n")) == ""


def test_start_index_and_rng_replay_a_schedulers_draws() -> None:
    nodes = [node(f"n{i}") for i in range(4)]
    names = [n.metadata.name for n in nodes]
    for start in range(4):
        rng = random.Random(9)
        state = rng.getstate()
        visit = names[start:] + names[:start]
        expected, _ = select_host(visit, [1] * 4, rng)
        replay = random.Random()
        replay.setstate(state)
        result = explain(pod("p"), nodes=nodes, rng=replay, start_index=start)
        assert result.chosen == expected


class _Detailed(fw.FilterPlugin):
    """Rejects n2; its filter_details misbehaves as ``mode`` says."""

    name: ClassVar[str] = "Detailed"
    mode: ClassVar[str] = "ok"

    def __init__(self, args: object, handle: object) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        return Status(Code.UNSCHEDULABLE, "no") if node.name == "n2" else None

    def filter_details(self, state: CycleState, pod: Pod, node_name: str) -> object:
        if self.mode == "raises":
            raise KeyError("gone")
        if self.mode == "not lines":
            return 42
        return [f"why {node_name}"]


@pytest.mark.parametrize(
    ("mode", "details"),
    [
        ("ok", ("why n2",)),
        ("raises", ("(filter_details of Detailed failed: KeyError: 'gone')",)),
        ("not lines", ("(filter_details of Detailed returned int (42), not lines)",)),
    ],
)
def test_filter_details_are_guarded_like_plugin_results(
    mode: str, details: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_Detailed, "mode", mode)
    registry = Registry.discover()
    registry.register("Detailed", _Detailed)
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"filter": {"enabled": [{"name": "Detailed"}]}}}],
    }
    result = explain(pod("p"), nodes=[node("n1"), node("n2")], config=config, registry=registry)
    assert result.chosen == "n1"
    assert result.node("n2").details == details
