"""DefaultPreemption reads no plugin's internals: the dry-run shortcuts come from any Filter
declaring :class:`~schedframe.framework.batch.ResourceBound`, and its kept sums key on the
nominator's generation, never on the identity of a list."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from schedframe import framework as fw
from schedframe.objects import Pod
from schedframe.runtime._standalone import _SimpleNominator
from schedframe_plugins.defaultpreemption import _fit_bound, default_preemption
from schedframe_plugins.defaultpreemption.default_preemption import DefaultPreemption
from schedframe_plugins.noderesources.fit import Fit, NodeResourcesFitArgs

from ._builders import cluster, node, pod, pre_filter

_CPU: fw.StateKey[int] = fw.StateKey("CpuBound")


class CpuBound(fw.PreFilterPlugin, fw.FilterPlugin):
    """A third-party Filter keeping the ResourceBound promise for cpu and the pod count."""

    name: ClassVar[str] = "CpuBound"

    def pre_filter(self, state: fw.CycleState, pod: Pod, nodes: Any) -> None:
        state[_CPU] = pod.requests.get("cpu", 0)

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        cpu = state[_CPU]
        allocatable = node_info.allocatable
        if len(node_info.pods) + 1 > allocatable.get("pods", 0) or (
            cpu > 0 and cpu > allocatable.get("cpu", 0) - node_info.requested.get("cpu", 0)
        ):
            return fw.Status(fw.Code.UNSCHEDULABLE, "Insufficient cpu")
        return None

    def resource_bound(self, state: fw.CycleState) -> tuple[tuple[int, int, int], bool] | None:
        cpu = state.get(_CPU)
        return None if cpu is None else ((cpu, 0, 0), True)


class StricterFit(Fit):
    """A subclass replacing Fit's filter: Fit's promise no longer holds for it."""

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        return fw.Status(fw.Code.UNSCHEDULABLE, "never")


def _plan(plugin_factory: Any) -> Any:
    nodes = [node("n1", {"cpu": "2", "pods": "10"})]
    running = [pod("low", node="n1", priority=0, req={"cpu": "2"})]
    fwk, _ = cluster(nodes, running, [plugin_factory])
    preemptor = pod("high", priority=10, req={"cpu": "1"})
    state = pre_filter(fwk, preemptor)
    statuses = fw.NodeToStatus()
    statuses.set("n1", fw.Status(fw.Code.UNSCHEDULABLE, "Insufficient cpu"))
    return DefaultPreemption(None, fwk).prepare_dry_run(state, preemptor, statuses)


def test_default_preemption_does_not_import_node_resources_fit() -> None:
    for module in (default_preemption, _fit_bound):
        assert "noderesources" not in inspect.getsource(module)


def test_any_resource_bound_filter_enables_the_shortcuts() -> None:
    plan = _plan(lambda fwk: CpuBound())
    assert plan is not None
    assert not plan.cannot_help(plan._plugin._handle.snapshot_shared_lister().get("n1"))


def test_node_resources_fit_declares_its_bound() -> None:
    assert _plan(lambda fwk: Fit(NodeResourcesFitArgs(), fwk)) is not None


def test_a_fit_subclass_replacing_filter_bounds_nothing() -> None:
    fwk, _ = cluster([node("n1", {"cpu": "2", "pods": "10"})], [], [])
    plugin = StricterFit(NodeResourcesFitArgs(), fwk)
    state = fw.CycleState()
    plugin.pre_filter(state, pod("p", req={"cpu": "1"}), [])
    assert plugin.resource_bound(state) is None
    assert _plan(lambda fwk: StricterFit(NodeResourcesFitArgs(), fwk)) is None


def test_no_resource_bound_filter_means_no_shortcuts() -> None:
    class Plain(fw.FilterPlugin):
        name: ClassVar[str] = "Plain"

        def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> None:
            return None

    assert _plan(lambda fwk: Plain()) is None


def test_the_stand_alone_nominator_counts_generations() -> None:
    nominator = _SimpleNominator()
    g0 = nominator.nominated_generation()
    info = fw.PodInfo(pod("p", priority=5))
    before = nominator.nominated_generations(["n1", "n2"])
    nominator.add_nominated_pod(info, "n1")
    g1 = nominator.nominated_generation()
    assert g1 != g0
    after = nominator.nominated_generations(["n1", "n2"])
    assert after["n1"] != before["n1"] and after["n2"] == before["n2"]
    nominator.nominated_pods_for_nodes(["n1"])
    assert nominator.nominated_generation() == g1  # reading changes nothing
    nominator.delete_nominated_pod_if_exists(info.pod)
    assert nominator.nominated_generation() not in (g0, g1)
    g2 = nominator.nominated_generation()
    nominator.delete_nominated_pod_if_exists(info.pod)  # nothing to drop
    assert nominator.nominated_generation() == g2
