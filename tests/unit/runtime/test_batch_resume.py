"""A plugin without batch forms costs its own calls: the batch engine resumes a node at the
first plugin that did not decide it and never calls again the plugins that passed it."""

from __future__ import annotations

import logging
import random
from typing import Any, ClassVar

import pytest

from schedframe import framework as fw
from schedframe.cache import Cache, Snapshot
from schedframe.config import load_config
from schedframe.framework import CycleState, NodeInfo
from schedframe.objects import Pod
from schedframe.runtime import Framework, Registry
from schedframe.scheduler._schedule_one import Algorithm
from schedframe.testing.builders import NodeWrapper, PodWrapper


class _Noop(fw.FilterPlugin):
    name: ClassVar[str] = "Noop"

    def __init__(self) -> None:
        self.nodes: list[str] = []

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> fw.Status | None:
        self.nodes.append(node_info.name)
        return None


def _setup(num_nodes: int, at: int | None = None) -> tuple[Algorithm, Framework, _Noop, list[str]]:
    cache = Cache()
    for i in range(num_nodes):
        cache.add_node(NodeWrapper(f"node-{i:03d}").capacity(cpu="4", memory="8Gi", pods=110).obj())
    snapshot = Snapshot()
    algo = Algorithm(snapshot, random.Random(0), update_snapshot=cache.update_snapshot)
    fwk = Framework.from_profile(
        load_config(None).profiles[0], Registry.discover(), snapshot=snapshot
    )
    noop = _Noop()
    fwk.plugins[noop.name] = noop
    if at is None:
        fwk.filter_plugins.append(noop)
    else:
        fwk.filter_plugins.insert(at, noop)
    per_node: list[str] = []
    for plugin in fwk.filter_plugins:
        if plugin is noop:
            continue

        def spy(
            state: Any, pod: Any, node_info: Any, _p: Any = plugin, _f: Any = plugin.filter
        ) -> Any:
            per_node.append(_p.name)
            return _f(state, pod, node_info)

        plugin.filter = spy  # type: ignore[method-assign]
        if hasattr(type(plugin), "prepare_filter"):

            def prepare(state: Any, pod: Any, _p: Any = plugin) -> Any:
                def run(node_info: Any) -> None:
                    per_node.append(_p.name)

                return run

            plugin.prepare_filter = prepare  # type: ignore[attr-defined]
    fwk._compile()
    return algo, fwk, noop, per_node


def test_a_noop_filter_last_is_the_only_plugin_called_node_by_node() -> None:
    algo, fwk, noop, per_node = _setup(300)
    pod = PodWrapper("p").req(cpu="100m").obj()
    result = algo.schedule_pod(fwk, CycleState(), pod)
    # 300 nodes: 48 percent of them (144) are enough (upstream numFeasibleNodesToFind).
    assert result.feasible_nodes == 144
    assert len(noop.nodes) == 144
    assert per_node == []


def test_a_noop_filter_first_does_not_make_the_others_run_node_by_node() -> None:
    algo, fwk, noop, per_node = _setup(300, at=0)
    pod = PodWrapper("p").req(cpu="100m").obj()
    algo.schedule_pod(fwk, CycleState(), pod)
    assert len(noop.nodes) == 144
    assert per_node == []


def test_the_per_node_path_calls_every_plugin() -> None:
    # The contrast: without the batch engine every plugin runs on every node looked at.
    algo, fwk, noop, per_node = _setup(300)
    algo.batch = False
    algo.schedule_pod(fwk, CycleState(), PodWrapper("p").req(cpu="100m").obj())
    assert len(noop.nodes) == 144
    # (PreFilter skips some plugins for this pod; the others run on each node looked at.)
    assert per_node and len(per_node) % 144 == 0


class _BrokenBatch(fw.FilterPlugin):
    name: ClassVar[str] = "BrokenBatch"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> fw.Status | None:
        return None

    def filter_batch(self, state: CycleState, pod: Pod, columns: fw.NodeColumns) -> Any:
        raise ValueError("no columns today")


def test_a_batch_method_that_raises_is_counted_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    algo, fwk, noop, _ = _setup(300)
    broken = _BrokenBatch()
    fwk.plugins[broken.name] = broken
    fwk.filter_plugins.append(broken)
    fwk._compile()
    with caplog.at_level(logging.DEBUG, logger="schedframe.runtime"):
        for i in range(3):
            result = algo.schedule_pod(fwk, CycleState(), PodWrapper(f"p{i}").obj())
            assert result.feasible_nodes == 144  # the plain filter answered instead
    assert fwk.fast_path_failures == {("BrokenBatch", "filter_batch"): 3}
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1  # once per plugin and method; the rest at DEBUG
    assert (
        warnings[0]
        .getMessage()
        .startswith(
            'fast form filter_batch of plugin "BrokenBatch" raised (ValueError: no columns today)'
        )
    )


def test_fast_paths_off_uses_no_fast_form() -> None:
    algo, fwk, noop, per_node = _setup(300)
    slow = Framework.from_profile(
        load_config(None).profiles[0],
        Registry.discover(),
        snapshot=algo.snapshot,
        fast_paths=False,
    )
    assert slow.batch._batch_filters and all(
        batch is None and statuses is None for _, _, batch, statuses in slow.batch._batch_filters
    )
    assert all(prepare is None for _, _, prepare in slow._prepare_filters)
    assert all(entry[4] is None for entry in slow._score_fns)
    assert slow.queue_sort_key() is None and fwk.queue_sort_key() is not None
    pod = PodWrapper("p").req(cpu="100m").obj()
    assert (
        algo.schedule_pod(slow, CycleState(), pod).suggested_host
        == algo.__class__(algo.snapshot, random.Random(0), update_snapshot=algo.update_snapshot)
        .schedule_pod(fwk, CycleState(), pod)
        .suggested_host
    )
