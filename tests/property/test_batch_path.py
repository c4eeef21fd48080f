"""The batch path (NumPy columns) schedules exactly as the per-node path does.

``Algorithm(batch=True)`` filters through ``Framework.filter_batch`` and scores through
``Framework.score_batch`` over ``Snapshot.columns()``; ``batch=False`` runs every node through
the plugins one by one. On drawn clusters, pod after pod (each placed in the cache, so the
columns are refreshed row by row), both must pick the same node with the same seed, evaluate
the same number of nodes, rotate ``next_start_node_index`` alike, report the same top nodes and
fail with the same message. Each in-tree batch method is also checked against its plugin's
per-node method.
"""

from __future__ import annotations

import functools
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.cache import Cache, Snapshot
from schedframe.config import load_config
from schedframe.framework import CycleState, FitError, NodeInfo, PodInfo
from schedframe.framework._columns import _BOOL_FIELDS, _INT_FIELDS
from schedframe.runtime import Framework, Registry
from schedframe.runtime._standalone import _SimpleNominator
from schedframe.scheduler import _schedule_one
from schedframe.scheduler._schedule_one import Algorithm, SchedulingStatusError
from schedframe.testing import strategies as sst
from schedframe.testing.builders import NodeWrapper
from schedframe_plugins.noderesources.balanced_allocation import (
    balanced_change_columns_kernel,
    balanced_change_cpu_memory_kernel,
    balanced_change_scorer,
    balanced_columns_kernel,
    balanced_cpu_memory_kernel,
)
from schedframe_plugins.noderesources.least_allocated import (
    least_allocated_columns_kernel,
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


def _outcome(algo: Algorithm, fwk: Framework, pod: Any) -> tuple[Any, ...]:
    try:
        result = algo.schedule_pod(fwk, CycleState(), pod)
    except FitError as exc:
        d = exc.diagnosis
        statuses = [
            (name, status.code, status.reasons, status.plugin)
            for name, status in d.node_to_status.items()
        ]
        return (
            "fit-error",
            str(exc),
            statuses,
            sorted(d.unschedulable_plugins),
            sorted(d.pending_plugins),
            algo.next_start_node_index,
        )
    except SchedulingStatusError as exc:
        return ("error", str(exc), algo.next_start_node_index)
    return (
        result.suggested_host,
        result.evaluated_nodes,
        result.feasible_nodes,
        result.top_nodes,
        algo.next_start_node_index,
    )


def _scheduler(cluster: Any, *, batch: bool, seed: int) -> tuple[Cache, Algorithm, Framework]:
    cache = Cache()
    for node in cluster.nodes:
        cache.add_node(node)
    for pod in cluster.pods:
        cache.add_pod(pod)
    snapshot = Snapshot()
    algo = Algorithm(
        snapshot, random.Random(seed), update_snapshot=cache.update_snapshot, batch=batch
    )
    fwk = Framework.from_profile(load_config(None).profiles[0], _registry(), snapshot=snapshot)
    return cache, algo, fwk


_NOMINATIONS = st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=4)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cluster=sst.clusters(
        min_nodes=1,
        max_nodes=12,
        max_pods=12,
        min_pending=1,
        max_pending=6,
        taints=True,
        affinities=True,
        spread=True,
    ),
    min_feasible=st.integers(min_value=1, max_value=12),
    nominated=_NOMINATIONS,
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_batch_path_schedules_like_the_per_node_path(
    cluster: Any, min_feasible: int, nominated: list[tuple[int, int]], seed: int
) -> None:
    _check_same_schedule(cluster, min_feasible, nominated, seed)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    # No pod affinity or spreading: no PreFilter extension is active, so nodes with
    # nominated pods are decided on what-if columns rather than one by one.
    cluster=sst.clusters(
        min_nodes=1, max_nodes=10, max_pods=10, min_pending=1, max_pending=6, taints=True
    ),
    min_feasible=st.integers(min_value=1, max_value=10),
    nominated=_NOMINATIONS,
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_nominated_nodes_on_what_if_columns_schedule_like_the_per_node_path(
    cluster: Any, min_feasible: int, nominated: list[tuple[int, int]], seed: int
) -> None:
    _check_same_schedule(cluster, min_feasible, nominated, seed)


def _check_same_schedule(
    cluster: Any, min_feasible: int, nominated: list[tuple[int, int]], seed: int
) -> None:
    # Fewer nodes to find than the cluster has, so the rotation and early stop are exercised.
    original = _schedule_one.MIN_FEASIBLE_NODES_TO_FIND
    _schedule_one.MIN_FEASIBLE_NODES_TO_FIND = min_feasible  # type: ignore[misc]  # a test knob
    try:
        runs = [_scheduler(cluster, batch=batch, seed=seed) for batch in (True, False)]
        # Pods nominated to nodes (copies of running pods, of any priority): those nodes are
        # decided with the nominated pods added, per node or on what-if columns.
        candidates = [*cluster.pods, *cluster.pending]
        for pod_index, node_index in nominated:
            nominee = candidates[pod_index % len(candidates)]
            node_name = cluster.nodes[node_index % len(cluster.nodes)].metadata.name
            for _, _, fwk in runs:
                fwk.nominator.add_nominated_pod(PodInfo(nominee.with_node_name("")), node_name)
        for pod in cluster.pending:
            outcomes = [_outcome(algo, fwk, pod) for _, algo, fwk in runs]
            assert outcomes[0] == outcomes[1]
            host = outcomes[0][0]
            if isinstance(host, str) and host not in ("fit-error", "error"):
                for cache, _, _ in runs:
                    cache.assume_pod(pod.with_node_name(host))
    finally:
        _schedule_one.MIN_FEASIBLE_NODES_TO_FIND = original  # type: ignore[misc]


# A nominator that, as the scheduling queue does, hands out the same list for a node until
# the pods nominated to it change: the Framework's own stand-alone one.
_KeepingNominator = _SimpleNominator

_WHAT_IF_STEPS = st.lists(
    st.tuples(
        st.sampled_from(["none", "nominate", "drop", "self", "reorder"]),
        st.integers(0, 5),  # nominee
        st.integers(0, 3),  # node
        st.sampled_from([0, 10]),  # priority (of a new nominee, or of the next pod)
        st.integers(1, 4),  # cpu of a new nominee, or of the next pod
    ),
    min_size=1,
    max_size=12,
)


def _what_if_view(
    found: tuple[Any, Any, dict[int, tuple[fw.NodeColumns, int]]] | None,
) -> Any:
    if found is None:
        return None
    verdicts, deciders, what_if = found
    rows = {
        row: tuple(getattr(cols, field)[i].item() for field in _INT_FIELDS + _BOOL_FIELDS)
        for row, (cols, i) in what_if.items()
    }
    return verdicts.tolist(), deciders.tolist(), rows


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=_WHAT_IF_STEPS)
@example(  # n0, nominated, becomes row 4 of five: the kept sums had four rows
    steps=[("nominate", 0, 0, 0, 1), ("none", 0, 0, 0, 1), ("reorder", 0, 2, 0, 2)]
)
def test_what_if_sums_kept_across_pods_equal_fresh_ones(
    steps: list[tuple[str, int, int, int, int]],
) -> None:
    """One Framework filtering pod after pod keeps what the nominated pods add to each row
    while the nominator hands out the same lists (as the scheduling queue does); through
    nominations added, moved and dropped, other priorities, a pod that is itself one of the
    nominated ones and a new node order, its verdicts, deciders and what-if rows equal those of a Framework
    filtering the same pod for the first time."""
    from schedframe.testing.builders import PodWrapper

    nodes = [NodeWrapper(f"n{i}").capacity({"cpu": "4", "pods": "10"}).obj() for i in range(6)]
    infos = list(Snapshot.from_objects(nodes, []).list())
    snapshot = Snapshot()
    snapshot.set_node_infos(infos[:4])
    nominator = _KeepingNominator()

    def framework() -> Framework:
        fwk = Framework.from_profile(load_config(None).profiles[0], _registry(), snapshot=snapshot)
        fwk._nominator = nominator
        return fwk

    kept = framework()
    nominees: dict[int, Any] = {}
    pod = PodWrapper("p0").req({"cpu": "1"}).obj()
    for k, (op, who, where, priority, cpu) in enumerate(steps):
        if op == "nominate":
            nominees[who] = (
                PodWrapper(f"nominee{who}").priority(priority).req({"cpu": str(cpu)}).obj()
            )
            nominator.add_nominated_pod(PodInfo(nominees[who]), f"n{where}")
        elif op == "drop" and who in nominees:
            nominator.delete_nominated_pod_if_exists(nominees.pop(who))
        elif op == "reorder":  # a new node list: new columns, more or fewer rows
            snapshot.set_node_infos([*infos[where:], *infos[:where]][: 3 + cpu % 3])
        if op == "self" and who in nominees:
            pod = nominees[who]  # a pod nominated somewhere is scheduled again
        else:
            pod = PodWrapper(f"p{k}").priority(priority).req({"cpu": str(cpu)}).obj()
        views = []
        for fwk in (kept, framework()):
            state = CycleState()
            _, status, _ = fwk.run_pre_filter_plugins(state, pod)
            assert status is None or status.is_success()
            views.append(
                _what_if_view(fwk.filter_batch_with_deciders(state, pod, snapshot.columns()))
            )
        assert views[0] == views[1], k


def _batch_methods(fwk: Framework, name: str) -> Any:
    return getattr(type(fwk.plugins[name]), name, None)


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
def test_each_batch_method_agrees_with_its_per_node_method(cluster: Any) -> None:
    snapshot = Snapshot.from_objects(cluster.nodes, cluster.pods)
    columns = snapshot.columns()
    infos = snapshot.list()
    pod = cluster.pending[0]
    fwk = Framework.from_profile(load_config(None).profiles[0], _registry(), snapshot=snapshot)
    state = CycleState()
    _, status, _ = fwk.run_pre_filter_plugins(state, pod)
    if status is None or status.is_success():
        for plugin in fwk.filter_plugins:
            batch = getattr(plugin, "filter_batch", None)
            if batch is None or plugin.name in state.skip_filter_plugins:
                continue
            verdicts = batch(state, pod, columns)
            if verdicts is None:
                continue
            assert verdicts.dtype == np.int8 and verdicts.shape == (columns.size,)
            for row, verdict in enumerate(verdicts.tolist()):
                result = plugin.filter(state, pod, infos[row])
                if verdict == fw.FILTER_PASS:
                    assert result is None or result.is_success(), (plugin.name, row)
                elif verdict == fw.FILTER_REJECT:
                    assert result is not None and result.is_rejected(), (plugin.name, row)
    fwk.run_pre_score_plugins(state, pod, infos)
    rows = np.arange(columns.size, dtype=np.intp)[::-1].copy()  # any order of rows
    for scorer in fwk.score_plugins:
        batch = getattr(scorer, "score_batch", None)
        if batch is None or scorer.name in state.skip_score_plugins:
            continue
        try:
            expected = [scorer.score(state, pod, infos[r]) for r in rows.tolist()]
        except Exception:
            continue
        scores = batch(state, pod, columns, rows)
        if scores is None:
            continue
        assert scores.tolist() == expected, scorer.name
        normalize = getattr(scorer, "normalize_batch", None)
        if normalize is not None:
            nsl = fw.NodeScoreList([infos[r].name for r in rows.tolist()], list(expected))
            scorer.normalize_score(state, pod, nsl)  # type: ignore[attr-defined]
            assert normalize(state, pod, scores).tolist() == nsl.scores, scorer.name


# -- the columns kernels on arbitrary integers ---------------------------------------------------

_AMOUNT = st.one_of(
    st.integers(min_value=-(10**6), max_value=10**6),
    st.integers(min_value=0, max_value=2**60),
    st.integers(min_value=2**52, max_value=2**56),
    st.just(0),
)


def _info(name: str, allocatable: tuple[int, int], requested: tuple[int, int], nz: Any) -> Any:
    info = NodeInfo(NodeWrapper(name).obj())
    info.allocatable = {"cpu": allocatable[0], "memory": allocatable[1]}
    info.requested = {"cpu": requested[0], "memory": requested[1]}
    info.non_zero_requested = {"cpu": nz[0], "memory": nz[1]}
    return info


_PAIR = st.tuples(_AMOUNT, _AMOUNT)


@settings(max_examples=300, deadline=None)
@given(
    nodes=st.lists(st.tuples(_PAIR, _PAIR, _PAIR), min_size=1, max_size=6),
    cpu=_AMOUNT,
    memory=_AMOUNT,
    weights=st.tuples(st.integers(1, 100), st.integers(1, 100)),
    use_requested=st.booleans(),
)
def test_columns_kernels_match_the_per_node_kernels(
    nodes: list[Any], cpu: int, memory: int, weights: tuple[int, int], use_requested: bool
) -> None:
    infos = [_info(f"n{i}", *amounts) for i, amounts in enumerate(nodes)]
    snapshot = Snapshot()
    snapshot.set_node_infos(infos)
    columns = snapshot.columns()
    rows = np.arange(len(infos), dtype=np.intp)
    resources = (
        ResourceSpec(name="cpu", weight=weights[0]),
        ResourceSpec(name="memory", weight=weights[1]),
    )
    exact = columns.exact and all(-fw.EXACT_LIMIT < v < fw.EXACT_LIMIT for v in (cpu, memory))
    least = least_allocated_columns_kernel(resources)(columns, rows, cpu, memory, use_requested)
    balanced = balanced_columns_kernel(columns, rows, cpu, memory, use_requested)
    if not exact:
        # Beyond the exact range the scorer declines and the per-node kernels answer.
        scorer = ResourceAllocationScorer(
            "LeastAllocated",
            least_resource_scorer(resources),
            resources,
            columns_kernel=least_allocated_columns_kernel(resources),
        )
        assert scorer.score_columns(columns, rows, [cpu, memory]) is None
        return
    assert least is not None
    assert least.tolist() == least_allocated_cpu_memory_kernel(resources)(
        infos, cpu, memory, use_requested
    )
    if balanced is not None:
        assert balanced.tolist() == balanced_cpu_memory_kernel(infos, cpu, memory, use_requested)
    change = balanced_change_columns_kernel(columns, rows, cpu, memory, use_requested)
    if change is not None:
        per_node = balanced_change_cpu_memory_kernel(infos, cpu, memory, use_requested)
        assert change.tolist() == per_node
        plain = ResourceAllocationScorer(
            "BalancedAllocation",
            balanced_change_scorer,
            (ResourceSpec(name="cpu"), ResourceSpec(name="memory")),
            use_requested=use_requested,
        )
        assert per_node == [plain.score(info, [cpu, memory]) for info in infos]


def test_empty_snapshot_has_empty_columns() -> None:
    columns = Snapshot.from_objects([]).columns()
    assert columns.size == 0 and columns.exact and columns.requested_cpu.tolist() == []


def test_columns_follow_the_cache_row_by_row() -> None:
    cache = Cache()
    for i in range(3):
        cache.add_node(
            NodeWrapper(f"n{i}").capacity({"cpu": "4", "memory": "8Gi", "pods": "10"}).obj()
        )
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    columns = snapshot.columns()
    assert columns.requested_cpu.tolist() == [0, 0, 0]
    from schedframe.testing.builders import PodWrapper

    pod = PodWrapper("p").req({"cpu": "500m"}).obj().with_node_name("n1")
    cache.assume_pod(pod)
    cache.update_snapshot(snapshot)
    assert snapshot.columns() is columns  # same node list: refreshed in place
    row = columns.index["n1"]
    assert columns.requested_cpu[row] == 500 and columns.num_pods[row] == 1
    assert columns.requested_cpu.sum() == 500
    cache.add_node(NodeWrapper("n3").capacity({"cpu": "1"}).obj())
    cache.update_snapshot(snapshot)
    rebuilt = snapshot.columns()
    assert rebuilt is not columns and rebuilt.size == 4
    assert rebuilt.allocatable_cpu[rebuilt.index["n3"]] == 1000


def test_columns_hold_values_beyond_int64_as_inexact_rows() -> None:
    info = _info("big", (2**70, 4), (0, 0), (0, 0))
    small = _info("small", (4000, 8), (100, 0), (100, 0))
    snapshot = Snapshot()
    snapshot.set_node_infos([info, small])
    columns = snapshot.columns()
    assert not columns.exact
    assert columns.allocatable_cpu.tolist() == [0, 4000]
    assert columns.allocatable_memory.tolist() == [4, 8]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cluster=sst.clusters(min_nodes=1, max_nodes=6, max_pods=8, max_pending=4, taints=True),
    picks=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), max_size=6),
)
def test_what_if_columns_equal_columns_of_the_copies(
    cluster: Any, picks: list[tuple[int, int]]
) -> None:
    snapshot = Snapshot.from_objects(cluster.nodes, cluster.pods)
    base = snapshot.columns()
    added: dict[int, list[PodInfo]] = {}
    for row, pod in picks:
        if cluster.pending:
            added.setdefault(row % base.size, []).append(
                PodInfo(cluster.pending[pod % len(cluster.pending)])
            )
    rows = sorted(added)
    what_if = fw.NodeColumns.with_pods_added(base, rows, [added[r] for r in rows])
    copies = []
    for r in rows:
        copy = snapshot.list()[r].clone()
        for info in added[r]:
            copy.add_pod(info)
        copies.append(copy)
    expected = fw.NodeColumns(copies)
    assert what_if.size == expected.size and what_if.names == expected.names
    assert what_if.exact == expected.exact
    for field in _INT_FIELDS + _BOOL_FIELDS:
        assert getattr(what_if, field).tolist() == getattr(expected, field).tolist(), field
    for key in ("topology.kubernetes.io/zone", "kubernetes.io/hostname", "missing"):
        got, want = what_if.labels(key), expected.labels(key)
        assert [got.values[c] if c >= 0 else None for c in got.codes.tolist()] == [
            want.values[c] if c >= 0 else None for c in want.codes.tolist()
        ]
    for i, copy in enumerate(copies):
        made = what_if.infos[i]
        assert made.requested == copy.requested and len(made.pods) == len(copy.pods)
        assert made is what_if.infos[i]  # made once
