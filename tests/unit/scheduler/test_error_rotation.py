"""The rotation after a filter error counts the nodes found feasible before it (upstream
findNodesThatFitPod: ``len(feasibleNodes) + NodeToStatus.Len()``, error or not)."""

from __future__ import annotations

import random
from typing import ClassVar

import pytest

from schedframe import framework as fw
from schedframe.cache import Cache, Snapshot
from schedframe.config import load_config
from schedframe.framework import CycleState, NodeInfo
from schedframe.objects import Pod
from schedframe.runtime import Framework, Registry
from schedframe.scheduler._schedule_one import Algorithm, SchedulingStatusError
from schedframe.testing.builders import NodeWrapper, PodWrapper


class _FailsOnSecond(fw.FilterPlugin):
    name: ClassVar[str] = "FailsOnSecond"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> fw.Status | None:
        if node_info.name == "node-001":
            return fw.Status(fw.Code.ERROR, "backend down")
        return None


@pytest.mark.parametrize("batch", [True, False])
def test_nodes_found_feasible_before_an_error_count_in_the_rotation(batch: bool) -> None:
    # Upstream findNodesThatFitPod adds len(feasibleNodes) + NodeToStatus.Len() to
    # nextStartNodeIndex, error or not: node-000 passed, node-001 failed -> 1.
    cache = Cache()
    for i in range(3):
        cache.add_node(NodeWrapper(f"node-{i:03d}").capacity(cpu="4", pods=110).obj())
    snapshot = Snapshot()
    algo = Algorithm(snapshot, random.Random(0), update_snapshot=cache.update_snapshot, batch=batch)
    fwk = Framework.from_profile(
        load_config(None).profiles[0], Registry.discover(), snapshot=snapshot
    )
    plugin = _FailsOnSecond()
    fwk.plugins[plugin.name] = plugin
    fwk.filter_plugins.append(plugin)
    fwk._compile()
    with pytest.raises(SchedulingStatusError, match="backend down"):
        algo.schedule_pod(fwk, CycleState(), PodWrapper("p").obj())
    assert algo.next_start_node_index == 1
