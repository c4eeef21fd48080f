"""The scheduling cycle's fast paths give exactly what the per-node paths give.

The Framework runs Filter through a per-pod function (``Framework.filter_function``, with the
in-tree plugins' optional ``prepare_filter``) and Score through the plugins' optional batch
form (``score_many``) and a vectorised weighted sum. Each is checked against the plain
per-node path on drawn clusters, and the two resource-scoring kernels against the generic
scorer on arbitrary integers (zero and negative allocatable, amounts past 2**53 included).
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedframe.cache import Snapshot
from schedframe.config import load_config
from schedframe.framework import CycleState, NodeInfo, Status
from schedframe.runtime import Framework, Registry
from schedframe.testing import strategies as sst
from schedframe_plugins.noderesources.balanced_allocation import (
    balanced_cpu_memory_kernel,
    balanced_resource_scorer,
)
from schedframe_plugins.noderesources.least_allocated import (
    least_allocated_cpu_memory_kernel,
    least_resource_scorer,
)
from schedframe_plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    ResourceSpec,
)

pytestmark = pytest.mark.property


@functools.cache
def _registry() -> Registry:
    return Registry.discover()


def _framework(snapshot: Snapshot, *, fast: bool) -> Framework:
    # fast=False: the per-node paths only (no prepared filters, no batch scores).
    return Framework.from_profile(
        load_config(None).profiles[0], _registry(), snapshot=snapshot, fast_paths=fast
    )


def _key(status: Status | None) -> tuple[Any, ...] | None:
    if status is None:
        return None
    return (status.code, status.reasons, status.plugin, status.message())


def _cycle(fwk: Framework, pod: Any) -> CycleState:
    state = CycleState()
    fwk.run_pre_filter_plugins(state, pod)
    return state


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cluster=sst.clusters(
        min_nodes=1,
        max_nodes=8,
        max_pods=10,
        min_pending=1,
        max_pending=1,
        taints=True,
        affinities=True,
        spread=True,
    )
)
def test_filter_function_matches_per_node_filters(cluster: Any) -> None:
    snapshot = Snapshot.from_objects(cluster.nodes, cluster.pods)
    pod = cluster.pending[0]
    fast = _framework(snapshot, fast=True)
    slow = _framework(snapshot, fast=False)
    fast_state, slow_state = _cycle(fast, pod), _cycle(slow, pod)
    run = fast.filter_function(fast_state, pod)
    for node_info in snapshot.list():
        expected = slow.run_filter_plugins_with_nominated_pods(slow_state, pod, node_info)
        assert _key(run(node_info)) == _key(expected)
        # Each prepared filter alone equals its plugin's filter.
        for plugin in fast.filter_plugins:
            prepare = getattr(plugin, "prepare_filter", None)
            if prepare is None or plugin.name in fast_state.skip_filter_plugins:
                continue
            fn = prepare(fast_state, pod)
            if fn is not None:
                assert _key(fn(node_info)) == _key(plugin.filter(fast_state, pod, node_info))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cluster=sst.clusters(
        min_nodes=1,
        max_nodes=8,
        max_pods=10,
        min_pending=1,
        max_pending=1,
        taints=True,
        affinities=True,
        spread=True,
    )
)
def test_batch_scores_match_per_node_scores(cluster: Any) -> None:
    snapshot = Snapshot.from_objects(cluster.nodes, cluster.pods)
    pod = cluster.pending[0]
    nodes = list(snapshot.list())
    results = []
    for fast in (True, False):
        fwk = _framework(snapshot, fast=fast)
        state = _cycle(fwk, pod)
        fwk.run_pre_score_plugins(state, pod, nodes)
        scores, status = fwk.run_score_plugins(state, pod, nodes, keep_raw=True)
        results.append(
            (
                _key(status),
                None
                if scores is None
                else (
                    scores.names,
                    scores.totals,
                    [(p.plugin, p.weight, p.raw, p.normalized) for p in scores.by_plugin],
                ),
            )
        )
        if fast:
            for plugin in fwk.score_plugins:
                many = getattr(plugin, "score_many", None)
                if many is None or plugin.name in state.skip_score_plugins:
                    continue
                try:
                    expected = [plugin.score(state, pod, ni) for ni in nodes]
                except Exception:
                    continue  # the framework then takes the per-node path
                assert many(state, pod, nodes) == expected
    assert results[0] == results[1]


# -- the resource-scoring kernels on arbitrary integers -----------------------------------------

_AMOUNT = st.one_of(
    st.integers(min_value=-(10**6), max_value=10**6),
    st.integers(min_value=0, max_value=2**70),
    st.just(0),
)
_RESOURCES = st.sampled_from(["cpu", "memory", "pods", "ephemeral-storage"])


def _node_info(allocatable: dict[str, int], requested: dict[str, int], nz: dict[str, int]) -> Any:
    info = NodeInfo()
    info.allocatable = allocatable
    info.requested = requested
    info.non_zero_requested = nz
    return info


_NODE_INFOS = st.builds(
    _node_info,
    st.dictionaries(_RESOURCES, _AMOUNT, max_size=4),
    st.dictionaries(_RESOURCES, _AMOUNT, max_size=4),
    st.dictionaries(_RESOURCES, _AMOUNT, max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(
    nodes=st.lists(_NODE_INFOS, max_size=6),
    cpu=_AMOUNT,
    memory=_AMOUNT,
    weights=st.tuples(st.integers(1, 100), st.integers(1, 100)),
    use_requested=st.booleans(),
)
def test_least_allocated_kernel_matches_scorer(
    nodes: list[Any], cpu: int, memory: int, weights: tuple[int, int], use_requested: bool
) -> None:
    resources = (
        ResourceSpec(name="cpu", weight=weights[0]),
        ResourceSpec(name="memory", weight=weights[1]),
    )
    generic = ResourceAllocationScorer(
        "LeastAllocated", least_resource_scorer(resources), resources, use_requested=use_requested
    )
    fast = ResourceAllocationScorer(
        "LeastAllocated",
        least_resource_scorer(resources),
        resources,
        use_requested=use_requested,
        cpu_memory_kernel=least_allocated_cpu_memory_kernel(resources),
    )
    expected = [generic.score(ni, [cpu, memory]) for ni in nodes]
    assert fast.score_many(nodes, [cpu, memory]) == expected


@settings(max_examples=300, deadline=None)
@given(
    nodes=st.lists(_NODE_INFOS, max_size=6),
    cpu=_AMOUNT,
    memory=_AMOUNT,
    use_requested=st.booleans(),
)
def test_balanced_kernel_matches_scorer(
    nodes: list[Any], cpu: int, memory: int, use_requested: bool
) -> None:
    resources = (ResourceSpec(name="cpu"), ResourceSpec(name="memory"))
    generic = ResourceAllocationScorer(
        "Balanced", balanced_resource_scorer, resources, use_requested=use_requested
    )
    fast = ResourceAllocationScorer(
        "Balanced",
        balanced_resource_scorer,
        resources,
        use_requested=use_requested,
        cpu_memory_kernel=balanced_cpu_memory_kernel,
    )
    expected = [generic.score(ni, [cpu, memory]) for ni in nodes]
    assert fast.score_many(nodes, [cpu, memory]) == expected
