"""Plugins without batch forms among plugins with them: the batch path resumes at the
plugin that did not decide a node, and still schedules exactly as the per-node path does.

Third-party Filter and Score plugins with plain per-node methods only (rejecting some nodes,
returning errors, raising) are put at drawn places in the default profile's chains; the batch
path (``Algorithm(batch=True)``) and the per-node path (``batch=False``) must give the same
outcome pod after pod (host, nodes evaluated, rotation, top nodes, FitError text and every
node's status). A plugin without batch forms is called only on nodes it has to judge.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.cache import Cache, Snapshot
from schedframe.config import load_config
from schedframe.framework import CycleState, NodeInfo
from schedframe.objects import Pod
from schedframe.runtime import Framework, Registry
from schedframe.scheduler import _schedule_one
from schedframe.scheduler._schedule_one import Algorithm
from schedframe.testing import strategies as sst

from .test_batch_path import _outcome

pytestmark = pytest.mark.property


class _Rejects(fw.FilterPlugin):
    """Rejects the nodes whose index is in ``rejected``; an error or a raise on others."""

    name: ClassVar[str] = "ThirdPartyFilter"

    def __init__(self, rejected: set[int], errors: set[int], raises: set[int]) -> None:
        self.rejected = rejected
        self.errors = errors
        self.raises = raises
        self.calls = 0

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> fw.Status | None:
        self.calls += 1
        index = int(node_info.name.rsplit("-", 1)[1])
        if index in self.raises:
            raise RuntimeError(f"broken on {node_info.name}")
        if index in self.errors:
            return fw.Status(fw.Code.ERROR, "backend down")
        if index in self.rejected:
            return fw.Status(fw.Code.UNSCHEDULABLE, "third party says no")
        return None


class _Scores(fw.ScorePlugin):
    name: ClassVar[str] = "ThirdPartyScore"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return int(node_info.name.rsplit("-", 1)[1]) * 7 % 101


def _build(
    cluster: Any, *, batch: bool, seed: int, filter_at: int, plugin: _Rejects, score: bool
) -> tuple[Cache, Algorithm, Framework]:
    cache = Cache()
    for node in cluster.nodes:
        cache.add_node(node)
    for pod in cluster.pods:
        cache.add_pod(pod)
    snapshot = Snapshot()
    algo = Algorithm(
        snapshot, random.Random(seed), update_snapshot=cache.update_snapshot, batch=batch
    )
    fwk = Framework.from_profile(
        load_config(None).profiles[0], Registry.discover(), snapshot=snapshot
    )
    fwk.plugins[plugin.name] = plugin
    fwk.filter_plugins.insert(filter_at % (len(fwk.filter_plugins) + 1), plugin)
    if score:
        scorer = _Scores()
        fwk.plugins[scorer.name] = scorer
        fwk.score_plugins.append(scorer)
        fwk.score_weights[scorer.name] = 2
    fwk._compile()
    return cache, algo, fwk


_INDICES = st.sets(st.integers(0, 11), max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cluster=sst.clusters(
        min_nodes=1,
        max_nodes=12,
        max_pods=10,
        min_pending=1,
        max_pending=5,
        taints=True,
        affinities=True,
    ),
    min_feasible=st.integers(min_value=1, max_value=12),
    filter_at=st.integers(0, 20),
    rejected=_INDICES,
    errors=st.sets(st.integers(0, 11), max_size=1),
    raises=st.sets(st.integers(0, 11), max_size=1),
    score=st.booleans(),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_mixed_chains_schedule_like_the_per_node_path(
    cluster: Any,
    min_feasible: int,
    filter_at: int,
    rejected: set[int],
    errors: set[int],
    raises: set[int],
    score: bool,
    seed: int,
) -> None:
    original = _schedule_one.MIN_FEASIBLE_NODES_TO_FIND
    _schedule_one.MIN_FEASIBLE_NODES_TO_FIND = min_feasible  # type: ignore[misc]
    try:
        plugins = [_Rejects(rejected, errors, raises) for _ in range(2)]
        runs = [
            _build(cluster, batch=b, seed=seed, filter_at=filter_at, plugin=p, score=score)
            for b, p in zip((True, False), plugins, strict=True)
        ]
        for pod in cluster.pending:
            outcomes = [_outcome(algo, fwk, pod) for _, algo, fwk in runs]
            assert outcomes[0] == outcomes[1]
            host = outcomes[0][0]
            if isinstance(host, str) and host not in ("fit-error", "error"):
                for cache, _, _ in runs:
                    cache.assume_pod(pod.with_node_name(host))
        if not errors and not raises:
            # Without failures, the batch path calls the plugin without batch forms no more
            # than the per-node path (after a failure it may have judged a few more nodes of
            # the same run, as upstream's parallel workers do before they are cancelled).
            assert plugins[0].calls <= plugins[1].calls
    finally:
        _schedule_one.MIN_FEASIBLE_NODES_TO_FIND = original  # type: ignore[misc]
