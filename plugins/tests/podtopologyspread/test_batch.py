"""The batch path equals the per-node path.

PreFilter and PreScore counted over the snapshot's NumPy columns give the same states as the
per-node loops (dict order and critical paths included); ``filter_batch``, ``score_batch`` and
``normalize_batch`` give exactly what ``filter``, ``score`` and ``normalize_score`` give, on
generated clusters: several zones, hostnames and racks, nodes missing labels (or carrying an
empty value), taints, node affinity, terminating pods and other namespaces, several
constraints of both kinds, ``minDomains``, both inclusion policies and ``matchLabelKeys``.
A cache-driven snapshot is checked again after pods and nodes change, so the per-row counts
kept across cycles are seen to follow the changes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.cache import Cache, Snapshot
from schedframe.objects import (
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from schedframe.runtime import Framework
from schedframe_plugins.podtopologyspread import PodTopologySpread, PodTopologySpreadArgs, _columnar
from schedframe_plugins.podtopologyspread import plugin as plugin_module
from schedframe_plugins.podtopologyspread.filtering import (
    PRE_FILTER_STATE_KEY,
    CriticalPaths,
    PreFilterState,
    cal_pre_filter_state,
)
from schedframe_plugins.podtopologyspread.scoring import PRE_SCORE_STATE_KEY, PreScoreState

from ._builders import DNS, HONOR, HOSTNAME, IGNORE, SA, ZONE, exists, labels_sel, node, pod, spread

RACK = "rack"
KEYS = (ZONE, HOSTNAME, RACK)
SELECTORS: tuple[LabelSelector | None, ...] = (
    labels_sel(app="a"),
    exists("app"),
    labels_sel(tier="x"),
    LabelSelector(
        match_expressions=(LabelSelectorRequirement(key="app", operator="In", values=("a", "b")),)
    ),
    LabelSelector(),  # empty: counts nothing
    None,  # missing: matches nothing
)
POD_LABELS: tuple[dict[str, str], ...] = (
    {},
    {"app": "a"},
    {"app": "b"},
    {"app": "a", "tier": "x"},
    {"tier": "x"},
)
TAINTS: tuple[tuple[Taint, ...], ...] = (
    (),
    (Taint(key="dedicated", value="x", effect="NoSchedule"),),
    (Taint(key="soft", effect="PreferNoSchedule"),),
    (Taint(key="gone", effect="NoExecute"),),
)
TOLERATIONS: tuple[tuple[Toleration, ...], ...] = (
    (),
    (Toleration(key="dedicated", operator="Equal", value="x", effect="NoSchedule"),),
    (Toleration(operator="Exists"),),
)
NAMESPACES = ("", "", "other")


@contextmanager
def columnar(enabled: bool) -> Iterator[None]:
    """Force PreFilter/PreScore onto the columnar (or the per-node) counting."""
    saved = plugin_module.COLUMNAR_MIN_NODES
    plugin_module.COLUMNAR_MIN_NODES = 0 if enabled else 1 << 30
    try:
        yield
    finally:
        plugin_module.COLUMNAR_MIN_NODES = saved


# -- generated clusters -----------------------------------------------------------------------


@st.composite
def cluster_nodes(draw: st.DrawFn, *, max_nodes: int = 12) -> list[Node]:
    n = draw(st.integers(1, max_nodes))
    # Half the clusters label every node fully (so Score has domains to compare); the other
    # half leave labels out now and then, or set an empty zone.
    sparse = draw(st.booleans())
    nodes = []
    for i in range(n):
        name = f"node-{i}"
        labels: dict[str, str] = {HOSTNAME: name}
        zone = draw(st.sampled_from(("z1", "z2", "z3", "", None) if sparse else ("z1", "z2", "z3")))
        if zone is not None:
            labels[ZONE] = zone
        if sparse and not draw(st.integers(0, 4)):
            del labels[HOSTNAME]
        rack = draw(st.sampled_from(("r1", "r2", None) if sparse else ("r1", "r2")))
        if rack is not None:
            labels[RACK] = rack
        nodes.append(node(name, labels, draw(st.sampled_from(TAINTS))))
    return nodes


@st.composite
def placed_pods(draw: st.DrawFn, nodes: Sequence[Node], prefix: str = "p") -> list[Pod]:
    placements = draw(
        st.lists(
            st.tuples(
                st.integers(0, len(nodes) - 1),
                st.sampled_from(POD_LABELS),
                st.sampled_from(NAMESPACES),
                st.integers(0, 5),
            ),
            max_size=30,
        )
    )
    return [
        pod(
            f"{prefix}-{i}",
            ns=ns,
            labels=labels,
            node=nodes[row].metadata.name,
            terminating=flag == 0,
        )
        for i, (row, labels, ns, flag) in enumerate(placements)
    ]


def constraints() -> st.SearchStrategy[TopologySpreadConstraint]:
    return st.builds(
        spread,
        max_skew=st.integers(1, 3),
        key=st.sampled_from(KEYS),
        when=st.sampled_from((DNS, SA)),
        selector=st.sampled_from(SELECTORS),
        min_domains=st.sampled_from((None, 1, 2, 4)),
        affinity_policy=st.sampled_from((None, HONOR, IGNORE)),
        taints_policy=st.sampled_from((None, HONOR, IGNORE)),
        match_label_keys=st.sampled_from(((), ("app",), ("tier", "app"))),
    )


@st.composite
def incoming_pods(draw: st.DrawFn) -> Pod:
    affinity = draw(st.integers(0, 3))
    return pod(
        "incoming",
        ns=draw(st.sampled_from(NAMESPACES)),
        labels=draw(st.sampled_from(POD_LABELS)),
        spreads=draw(
            st.lists(constraints(), min_size=draw(st.sampled_from((0, 1, 1))), max_size=3)
        ),
        node_selector={RACK: "r1"} if affinity == 1 else None,
        affinity_in=(ZONE, ("z1", "z2")) if affinity == 2 else None,
        affinity_not_in=(ZONE, ("z3",)) if affinity == 3 else None,
        tolerations=draw(st.sampled_from(TOLERATIONS)),
    )


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Node], list[Pod], Pod, list[int], str]:
    nodes = draw(cluster_nodes())
    pods = draw(placed_pods(nodes))
    incoming = draw(incoming_pods())
    # The feasible nodes PreScore and Score see, as rows in some order.
    rows = draw(st.permutations(range(len(nodes))))
    feasible = rows[: draw(st.integers(0, len(nodes)))]
    defaulting = draw(st.sampled_from(("System", "List")))
    return nodes, pods, incoming, list(feasible), defaulting


# -- comparisons ------------------------------------------------------------------------------


def _pre_filter_view(s: PreFilterState) -> list[Any]:
    return [
        (c, list(m.items()), p.as_tuple(), sm)
        for c, m, p, sm in zip(
            s.constraints, s.tp_value_to_match_num, s.critical_paths, s.self_match, strict=True
        )
    ]


def _pre_score_view(s: PreScoreState) -> list[Any]:
    return [
        s.constraints,
        sorted(s.ignored_nodes),
        [list(m.items()) for m in s.topology_value_to_pod_counts],
        s.topology_normalizing_weight,
    ]


def _is_rejection(status: fw.Status | None) -> bool:
    return status is not None and status.code in (
        fw.Code.UNSCHEDULABLE,
        fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    )


def _new_plugin(handle: fw.Handle, defaulting: str) -> PodTopologySpread:
    return PodTopologySpread(PodTopologySpreadArgs(defaulting_type=defaulting), handle)


def assert_filter_equal(
    plugin: PodTopologySpread,
    state: fw.CycleState,
    incoming: Pod,
    infos: Sequence[fw.NodeInfo],
    columns: fw.NodeColumns,
) -> None:
    verdicts = plugin.filter_batch(state, incoming, columns)
    assert verdicts is not None
    assert verdicts.dtype == np.int8
    assert verdicts.shape == (columns.size,)
    for row, info in enumerate(infos):
        status = plugin.filter(state, incoming, info)
        want = fw.FILTER_REJECT if _is_rejection(status) else fw.FILTER_PASS
        if want == fw.FILTER_PASS:
            assert status is None or status.is_success()
        assert verdicts[row] == want, (row, info.name, status)
    event(f"filter: {sorted(set(verdicts.tolist()))}")


def check_cycle(
    plugin: PodTopologySpread, snap: Snapshot, incoming: Pod, feasible_rows: Sequence[int]
) -> None:
    """One scheduling cycle's worth of PodTopologySpread, batch against per-node."""
    infos = snap.list()
    columns = snap.columns()

    # PreFilter: the columnar state equals the per-node one.
    state = fw.CycleState()
    with columnar(True):
        status = plugin.pre_filter(state, incoming, infos)
    constraints = plugin.get_constraints(incoming)
    if constraints:
        assert status is None
        expected = cal_pre_filter_state(incoming, constraints, infos)
        assert _pre_filter_view(state[PRE_FILTER_STATE_KEY]) == _pre_filter_view(expected)

        # Filter: every row decided, and as the per-node filter decides; again after
        # AddPod/RemovePod changed the counts (preemption's dry runs).
        assert_filter_equal(plugin, state, incoming, infos, columns)
        extra = pod("extra", ns=incoming.namespace, labels={"app": "a", "tier": "x"})
        target = infos[len(infos) // 2]
        assert plugin.add_pod(state, incoming, fw.PodInfo(extra), target) is None
        assert_filter_equal(plugin, state, incoming, infos, columns)
        for victim in target.pods[:1]:
            assert plugin.remove_pod(state, incoming, victim, target) is None
            assert_filter_equal(plugin, state, incoming, infos, columns)
    else:
        assert isinstance(status, fw.Status) and status.is_skip()

    # PreScore: the columnar counting equals the per-node loop.
    feasible = [infos[r] for r in feasible_rows]
    batch_state, node_state = fw.CycleState(), fw.CycleState()
    with columnar(True):
        batch_status = plugin.pre_score(batch_state, incoming, feasible)
    with columnar(False):
        node_status = plugin.pre_score(node_state, incoming, feasible)
    assert (batch_status is None) == (node_status is None)
    if node_status is not None:
        assert batch_status is not None and batch_status.is_skip() and node_status.is_skip()
        return
    s = batch_state[PRE_SCORE_STATE_KEY]
    assert _pre_score_view(s) == _pre_score_view(node_state[PRE_SCORE_STATE_KEY])

    # Score and NormalizeScore.
    rows = np.array(feasible_rows, dtype=np.intp)
    scores = plugin.score_batch(batch_state, incoming, columns, rows)
    want_scores = [plugin.score(node_state, incoming, info) for info in feasible]
    assert scores is not None
    assert scores.dtype == np.int64
    assert scores.tolist() == want_scores
    event(f"score: {min(len(set(want_scores)), 3)} distinct raw scores")
    normalized = plugin.normalize_batch(batch_state, incoming, scores)
    nsl = fw.NodeScoreList([i.name for i in feasible], list(want_scores))
    assert plugin.normalize_score(node_state, incoming, nsl) is None
    if normalized is None:
        assert s.ignored_nodes  # the only reason to decline here
        event("normalize: declined (ignored nodes)")
    else:
        assert normalized.tolist() == nsl.scores
        event(f"normalize: {len(set(nsl.scores))} distinct scores")


@given(case=cases())
@settings(max_examples=300, deadline=None)
def test_batch_equals_per_node(case: tuple[list[Node], list[Pod], Pod, list[int], str]) -> None:
    nodes, pods, incoming, feasible, defaulting = case
    snap = Snapshot.from_objects(nodes, pods)
    plugin = _new_plugin(Framework(snapshot=snap), defaulting)
    check_cycle(plugin, snap, incoming, feasible)


@st.composite
def changes(draw: st.DrawFn, nodes: list[Node], pods: list[Pod]) -> list[tuple[str, Any]]:
    """Cache operations: pods added, removed or relabelled, nodes relabelled."""
    ops: list[tuple[str, Any]] = []
    for p in draw(placed_pods(nodes, prefix="new")):
        ops.append(("add_pod", p))
    for p in pods:
        choice = draw(st.integers(0, 4))
        if choice == 0:
            ops.append(("remove_pod", p))
        elif choice == 1:
            ops.append(("relabel_pod", (p, draw(st.sampled_from(POD_LABELS)))))
    for n in nodes:
        if draw(st.integers(0, 3)) == 0:
            labels = dict(n.metadata.labels)
            zone = draw(st.sampled_from(("z1", "z4", None)))
            if zone is None:
                labels.pop(ZONE, None)
            else:
                labels[ZONE] = zone
            ops.append(("relabel_node", (n, labels)))
    return ops


def _apply(cache: Cache, op: str, arg: Any) -> None:
    if op == "add_pod":
        cache.add_pod(arg)
    elif op == "remove_pod":
        cache.remove_pod(arg)
    elif op == "relabel_pod":
        old, labels = arg
        new = attrs.evolve(old, metadata=attrs.evolve(old.metadata, labels=dict(labels)))
        cache.update_pod(old, new)
    else:
        old, labels = arg
        cache.update_node(old, node(old.metadata.name, labels, old.spec.taints))


@given(case=cases(), data=st.data())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_batch_follows_incremental_snapshot_updates(
    case: tuple[list[Node], list[Pod], Pod, list[int], str], data: st.DataObject
) -> None:
    nodes, pods, incoming, feasible, defaulting = case
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for p in pods:
        cache.add_pod(p)
    snap = Snapshot()
    cache.update_snapshot(snap)
    plugin = _new_plugin(Framework(snapshot=snap), defaulting)
    check_cycle(plugin, snap, incoming, feasible)
    for op, arg in data.draw(changes(nodes, pods)):
        _apply(cache, op, arg)
    cache.update_snapshot(snap)
    # The same plugin, whose per-row counts were taken before the changes.
    rows = [r for r in feasible if r < len(snap.list())]
    check_cycle(plugin, snap, incoming, rows)


# -- pieces -----------------------------------------------------------------------------------


@given(
    entries=st.lists(
        st.tuples(st.sampled_from(("", "a", "b", "c", "d", "e", "f", "g", "h")), st.integers(0, 3)),
        max_size=9,
        unique_by=lambda e: e[0],
    ),
    big=st.booleans(),
)
@settings(max_examples=500)
@example(entries=[("a", 2), ("b", 1), ("c", 2)], big=False)  # slot 1 keeps the earlier tie
@example(entries=[("a", 3), ("b", 2), ("c", 2)], big=False)  # ...and takes a later one
@example(entries=[("a", 1), ("", 0), ("b", 0)], big=False)
def test_critical_paths_equal_the_update_sequence(
    entries: list[tuple[str, int]], big: bool
) -> None:
    if big and entries:
        entries[-1] = (entries[-1][0], 2**31 - 1)
    expected = CriticalPaths()
    for value, num in entries:
        expected.update(value, num)
    values = [v for v, _ in entries]
    nums = [n for _, n in entries]
    for loop_below in (0, 16):
        got = _columnar.critical_paths(values, nums, loop_below=loop_below)
        assert got.as_tuple() == expected.as_tuple()


def test_node_less_row_is_left_to_filter() -> None:
    infos = [fw.NodeInfo(node("a", {ZONE: "z1"})), fw.NodeInfo(), fw.NodeInfo(node("b", {}))]
    columns = fw.NodeColumns(infos)
    incoming = pod("in", spreads=[spread(1, ZONE, DNS, labels_sel(app="a"))])
    plugin = _new_plugin(Framework(snapshot=Snapshot.from_objects([])), "List")
    state = fw.CycleState()
    state[PRE_FILTER_STATE_KEY] = cal_pre_filter_state(
        incoming, plugin.get_constraints(incoming), infos
    )
    verdicts = plugin.filter_batch(state, incoming, columns)
    assert verdicts is not None
    assert verdicts.tolist() == [fw.FILTER_PASS, fw.FILTER_CHECK, fw.FILTER_REJECT]
    status = plugin.filter(state, incoming, infos[1])
    assert status is not None and status.code == fw.Code.ERROR


def test_row_counts_follow_generations() -> None:
    labelled = pod("x", labels={"app": "a"}, node="a")
    infos = [fw.NodeInfo(node("a")), fw.NodeInfo(node("b"))]
    snap = Snapshot()
    snap.set_node_infos(infos)
    memo = _columnar.RowCounts(limit=1)
    sel = labels_sel(app="a")

    def gens() -> Any:
        return memo.generations(snap.columns())

    assert memo.counts(infos, gens(), sel, "").tolist() == [0, 0]
    infos[0].add_pod(labelled)
    snap.node_changed("a")  # what the cache says when it updates a NodeInfo in place
    assert memo.counts(infos, gens(), sel, "").tolist() == [1, 0]
    assert memo.counts(infos, gens(), sel, "other").tolist() == [0, 0]
    infos[0].remove_pod(labelled)
    infos[1].add_pod(labelled)
    snap.node_changed("a")
    snap.node_changed("b")
    assert memo.counts(infos, gens(), sel, "").tolist() == [0, 1]
    alone = Snapshot()
    alone.set_node_infos(infos[:1])
    assert memo.counts(infos[:1], memo.generations(alone.columns()), sel, "").tolist() == [0]


def test_declines_without_state() -> None:
    snap = Snapshot.from_objects([node("a", {ZONE: "z1"})])
    plugin = _new_plugin(Framework(snapshot=snap), "List")
    state = fw.CycleState()
    columns = snap.columns()
    incoming = pod("in")
    assert plugin.filter_batch(state, incoming, columns) is None
    rows = np.array([0], dtype=np.intp)
    assert plugin.score_batch(state, incoming, columns, rows) is None
    assert plugin.normalize_batch(state, incoming, np.array([3], dtype=np.int64)) is None


@pytest.mark.parametrize("count", [1, 3])
def test_columnar_pre_filter_used_on_large_snapshots(count: int) -> None:
    # Above the threshold PreFilter counts over the columns (and gives the same state).
    nodes = [
        node(f"n{i}", {ZONE: f"z{i % 3}", HOSTNAME: f"n{i}"})
        for i in range(plugin_module.COLUMNAR_MIN_NODES)
    ]
    pods = [pod(f"p{i}", labels={"app": "a"}, node=f"n{i % 7}") for i in range(count * 10)]
    snap = Snapshot.from_objects(nodes, pods)
    plugin = _new_plugin(Framework(snapshot=snap), "List")
    incoming = pod("in", labels={"app": "a"}, spreads=[spread(count, ZONE, DNS, exists("app"))])
    state = fw.CycleState()
    assert plugin.pre_filter(state, incoming, snap.list()) is None
    assert plugin._row_counts is not None  # the columnar path ran
    expected = cal_pre_filter_state(incoming, plugin.get_constraints(incoming), snap.list())
    assert _pre_filter_view(state[PRE_FILTER_STATE_KEY]) == _pre_filter_view(expected)
