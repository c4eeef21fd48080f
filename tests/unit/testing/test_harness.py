"""run_plugins reports every Filter verdict and every score, per node and plugin."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import attrs
import pytest

from schedframe import framework as fw
from schedframe.config import Profile
from schedframe.framework import Code
from schedframe.objects import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
)
from schedframe.testing import strategies as sst
from schedframe.testing.builders import make_node, make_pod
from schedframe.testing.harness import build_framework, run_plugins

NODES = [
    make_node("small").capacity(cpu="1", memory="1Gi").zone("a").taint("gpu").obj(),
    make_node("big").capacity(cpu="4", memory="8Gi").zone("b").obj(),
    make_node("mid").capacity(cpu="2", memory="4Gi").zone("a").obj(),
]
RUNNING = [make_pod("x").req(cpu="1500m").node("mid").obj()]
POD = make_pod("p").req(cpu="1", memory="1Gi").obj()


def test_every_filter_runs_on_every_node() -> None:
    result = run_plugins(["NodeResourcesFit", "TaintToleration"], POD, nodes=NODES, pods=RUNNING)
    assert result.nodes == ("small", "big", "mid")
    assert result.codes("small") == {
        "NodeResourcesFit": Code.SUCCESS,
        "TaintToleration": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    }
    assert result.codes("mid") == {
        "NodeResourcesFit": Code.UNSCHEDULABLE,
        "TaintToleration": Code.SUCCESS,
    }
    assert result.feasible == ("big",)
    status = result.status("mid")
    assert status is not None and status.reasons == ("Insufficient cpu",)
    assert status.plugin == "NodeResourcesFit"
    assert result.status("big") is None


def test_raw_and_normalized_scores_and_weights() -> None:
    result = run_plugins(
        ["NodeResourcesFit", "TaintToleration"],
        POD,
        nodes=NODES[1:],
        weights={"TaintToleration": 3},
        args={"NodeResourcesFit": {"scoringStrategy": {"type": "MostAllocated"}}},
    )
    assert result.feasible == ("big", "mid")
    assert result.raw_scores["big"]["TaintToleration"] == 0
    assert result.scores["big"]["TaintToleration"] == 100
    assert result.weights == {"NodeResourcesFit": 1, "TaintToleration": 3}
    fit = {n: result.scores[n]["NodeResourcesFit"] for n in result.feasible}
    assert fit["mid"] > fit["big"]  # MostAllocated prefers the fuller node
    for n in result.feasible:
        assert result.totals[n] == fit[n] + 3 * 100
    assert result.best() == ["mid"]
    assert "NodeResourcesFit(raw/norm)" in result.table()


def test_a_whole_profile_runs_as_the_scheduler_builds_it() -> None:
    result = run_plugins(Profile(), POD, nodes=NODES, pods=RUNNING)
    assert result.feasible == ("big",)
    assert "PodTopologySpread" in result.weights
    assert result.best() == ["big"]


def test_prefilter_results_exclude_nodes() -> None:
    term = NodeSelectorTerm(
        match_fields=(NodeSelectorRequirement(key="metadata.name", operator="In", values=("big",)),)
    )
    affinity = Affinity(
        node_affinity=NodeAffinity(required=NodeSelector(node_selector_terms=(term,)))
    )
    pinned = make_pod("pinned").obj()
    pinned = attrs.evolve(pinned, spec=attrs.evolve(pinned.spec, affinity=affinity))
    result = run_plugins(["NodeAffinity"], pinned, nodes=NODES)
    assert result.excluded == ("small", "mid")
    assert result.filter.keys() == {"big"}
    status = result.status("small")
    assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_a_failed_prefilter_stops_before_filter() -> None:
    pod = make_pod("p").pvc("data").obj()
    result = run_plugins(["VolumeBinding", "NodeResourcesFit"], pod, nodes=NODES)
    assert result.pre_filter_status is not None
    assert result.pre_filter_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert result.filter == {} and result.feasible == ()


class Raises(fw.FilterPlugin):
    """A Filter plugin that raises on every node."""

    name: ClassVar[str] = "Raises"

    def __init__(self, args: None, handle: fw.Handle) -> None:
        pass

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        raise RuntimeError("boom")


class Skips(fw.PreFilterPlugin, fw.FilterPlugin):
    """Skips its Filter."""

    name: ClassVar[str] = "Skips"

    def __init__(self, args: None, handle: fw.Handle) -> None:
        pass

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        return fw.Status(fw.Code.SKIP)

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        raise AssertionError("skipped plugins are not run")


def test_plugin_classes_errors_and_skips() -> None:
    result = run_plugins([Raises, Skips], POD, nodes=NODES[:1])
    status = result.filter["small"]["Raises"]
    assert status is not None and status.code is Code.ERROR
    assert status.message() == 'running "Raises" filter plugin: RuntimeError: boom'
    assert "Skips" not in result.filter["small"] and result.skipped_filter == {"Skips"}


def test_a_cluster_can_be_given_whole() -> None:
    cluster = sst.Cluster(nodes=tuple(NODES), pods=tuple(RUNNING))
    result = run_plugins("NodeResourcesFit", POD, cluster=cluster)
    assert result.feasible == ("small", "big")


def test_classes_need_a_name() -> None:
    with pytest.raises(TypeError, match="no class attribute 'name'"):
        build_framework([object], snapshot=sst.Cluster().snapshot())  # type: ignore[list-item]


def test_explain_and_the_harness_share_the_cycle_driver() -> None:
    # One cycle driver (runtime/_cycle.py): neither re-implements PreFilter, Filter or Score.
    import inspect

    from schedframe import explain
    from schedframe.testing import conformance, harness

    for module in (explain, harness):
        source = inspect.getsource(module)
        assert "cycle.pre_filter(" in source
        for runner in ("run_pre_filter_plugins(", "run_pre_score_plugins(", "run_score_plugins("):
            assert runner not in source, (module.__name__, runner)
    # The kit drives the plugin under test itself; the framework's verdicts come from the driver.
    for module in (explain, conformance):
        source = inspect.getsource(module)
        assert "cycle.filter_nodes(" in source
        assert "run_filter_plugins_with_nominated_pods(" not in source
