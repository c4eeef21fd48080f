"""The per-domain sums and the batch forms equal the plain computations.

PreFilter and PreScore take their counts from sums kept per distinct term and per distinct kind
of pod; these tests hold them equal to the pod-by-pod loops (the plugin's own reference
functions, which the upstream tables in test_filtering cover) on generated clusters: required
and preferred affinity and anti-affinity over several topology keys, terms repeated across pods
(so the sums group them), namespaces lists, namespace selectors on both sides, pods in a
namespace nobody knows, nodes lacking a topology label or every label. ``filter_batch``,
``score_batch`` and ``normalize_batch`` give exactly what ``filter``, ``score`` and
``normalize_score`` give, also after AddPod/RemovePod moved the counts (below zero included).
A cache-driven snapshot is checked again after pods and nodes change, so the sums kept across
cycles are seen to follow, and a state taken before the change keeps its counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.cache import Cache, Snapshot
from schedframe.framework import Code, CycleState, NodeScoreList, PodInfo, Status
from schedframe.objects import LabelSelector, Namespace, Node, Pod, PodAffinityTerm
from schedframe.runtime import Framework
from schedframe_plugins.interpodaffinity import InterPodAffinity, InterPodAffinityArgs
from schedframe_plugins.interpodaffinity.filtering import (
    PRE_FILTER_STATE_KEY,
    _existing_anti_affinity_counts,
    _incoming_affinity_anti_affinity_counts,
    get_namespace_labels_snapshot,
    merge_terms,
)
from schedframe_plugins.interpodaffinity.scoring import (
    PRE_SCORE_STATE_KEY,
    _merge_weighted,
    _scores_pod_by_pod,
)

from ._wrappers import affinity, namespace, node, pod, req, selector, term, weighted

KEYS = ("hostname", "zone", "region")
NAMESPACE_NAMES = ("ns-a", "ns-b", "ns-c")
#: ns-x is in no Namespace object: its labels read as none.
POD_NAMESPACES = (*NAMESPACE_NAMES, "ns-x")
NAMESPACES: tuple[Namespace, ...] = (
    namespace("ns-a", {"team": "red"}),
    namespace("ns-b", {"team": "blue"}),
    namespace("ns-c", {"team": "red", "tier": "x"}),
)
SELECTORS: tuple[LabelSelector | None, ...] = (
    selector(match_labels={"app": "a"}),
    selector(req("app", "In", "a", "b")),
    selector(req("app", "NotIn", "a")),
    selector(req("app", "Exists")),
    selector(req("tier", "DoesNotExist")),
    LabelSelector(),  # empty: selects every pod
    None,  # missing: selects none
)
NAMESPACE_SELECTORS: tuple[LabelSelector | None, ...] = (
    None,
    None,
    LabelSelector(),  # every namespace
    selector(match_labels={"team": "red"}),
    selector(req("tier", "Exists")),
)
POD_LABELS: tuple[dict[str, str], ...] = (
    {},
    {"app": "a"},
    {"app": "b"},
    {"app": "a", "tier": "x"},
    {"tier": "x"},
)


@st.composite
def terms(draw: st.DrawFn) -> PodAffinityTerm:
    namespaces = draw(st.lists(st.sampled_from(NAMESPACE_NAMES), max_size=2, unique=True))
    return term(
        draw(st.sampled_from(SELECTORS)),
        draw(st.sampled_from(KEYS)),
        namespaces=namespaces,
        namespace_selector=draw(st.sampled_from(NAMESPACE_SELECTORS)),
    )


@st.composite
def affinities(draw: st.DrawFn) -> Any:
    # A few terms drawn from a small pool, so that pods share terms the sums group.
    pool = draw(st.lists(terms(), min_size=1, max_size=3))
    pick = st.sampled_from(pool)
    return affinity(
        required=draw(st.lists(pick, max_size=2)),
        preferred=[
            weighted(w, t) for w, t in draw(st.lists(st.tuples(_weights, pick), max_size=2))
        ],
        anti_required=draw(st.lists(pick, max_size=2)),
        anti_preferred=[
            weighted(w, t) for w, t in draw(st.lists(st.tuples(_weights, pick), max_size=2))
        ],
    )


_weights = st.sampled_from((1, 2, 3, 100))


@st.composite
def pods(draw: st.DrawFn, node_name: str, index: int) -> Pod:
    aff = draw(affinities()) if draw(st.integers(0, 3)) else None
    return pod(
        f"p{index}",
        uid=f"uid-{index}",
        namespace=draw(st.sampled_from(POD_NAMESPACES)),
        node=node_name,
        labels=draw(st.sampled_from(POD_LABELS)),
        affinity=aff,
    )


@st.composite
def nodes(draw: st.DrawFn, count: int) -> list[Node]:
    out = []
    for i in range(count):
        labels: dict[str, str] = {}
        if draw(st.integers(0, 5)):
            labels["hostname"] = f"n{i}"
        zone = draw(st.sampled_from(("z1", "z2", None)))
        if zone is not None:
            labels["zone"] = zone
        region = draw(st.sampled_from(("r1", "r2", None)))
        if region is not None:
            labels["region"] = region
        out.append(node(f"n{i}", labels))
    return out


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[Node], list[Pod], Pod]:
    node_list = draw(nodes(draw(st.integers(1, 6))))
    names = [n.metadata.name for n in node_list]
    # Several pods alike (same namespace, labels and terms) so that kinds and terms repeat.
    templates = draw(st.lists(pods("", 0), min_size=1, max_size=4))
    pod_list: list[Pod] = []
    for i in range(draw(st.integers(0, 12))):
        template = draw(st.sampled_from(templates))
        pod_list.append(
            attrs.evolve(
                template,
                metadata=attrs.evolve(template.metadata, name=f"p{i}", uid=f"uid-{i}"),
                spec=attrs.evolve(template.spec, node_name=draw(st.sampled_from(names))),
            )
        )
    incoming = draw(st.sampled_from(templates) | pods("", 99))
    incoming = attrs.evolve(
        incoming,
        metadata=attrs.evolve(incoming.metadata, name="incoming", uid="uid-incoming"),
        spec=attrs.evolve(incoming.spec, node_name=""),
    )
    return node_list, pod_list, incoming


def _plugin(snap: Snapshot, args: InterPodAffinityArgs | None = None) -> InterPodAffinity:
    return InterPodAffinity(args, Framework(snapshot=snap, namespaces=NAMESPACES))


# -- oracles ----------------------------------------------------------------------------------


def plain_pre_filter(
    plugin: InterPodAffinity, snap: Snapshot, incoming: Pod
) -> tuple[dict[tuple[str, str], int], ...] | None:
    """PreFilter's three counts, pod by pod; ``None`` for Skip."""
    handle = plugin._handle
    info = PodInfo(incoming)
    affinity_terms = merge_terms(info.required_affinity_terms, handle)
    anti_affinity_terms = merge_terms(info.required_anti_affinity_terms, handle)
    labels = get_namespace_labels_snapshot(incoming.namespace, handle)
    existing = _existing_anti_affinity_counts(
        incoming, labels, snap.have_pods_with_required_anti_affinity_list()
    )
    if not existing and not affinity_terms and not anti_affinity_terms:
        return None
    affinity, anti_affinity = _incoming_affinity_anti_affinity_counts(
        affinity_terms, anti_affinity_terms, snap.list()
    )
    return existing, affinity, anti_affinity


def plain_pre_score(
    plugin: InterPodAffinity, snap: Snapshot, incoming: Pod
) -> dict[str, dict[str, int]] | None:
    """PreScore's sums, pod by pod; ``None`` for Skip."""
    handle = plugin._handle
    aff = incoming.spec.affinity
    has_constraints = aff is not None and (
        (aff.pod_affinity is not None and len(aff.pod_affinity.preferred) > 0)
        or (aff.pod_anti_affinity is not None and len(aff.pod_anti_affinity.preferred) > 0)
    )
    if plugin.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
        return None
    info = PodInfo(incoming)
    scores = _scores_pod_by_pod(
        snap.list() if has_constraints else snap.have_pods_with_affinity_list(),
        has_constraints,
        incoming,
        get_namespace_labels_snapshot(incoming.namespace, handle),
        _merge_weighted(info.preferred_affinity_terms, handle),
        _merge_weighted(info.preferred_anti_affinity_terms, handle),
        plugin.args.hard_pod_affinity_weight,
    )
    return scores or None


def _counts(state: CycleState) -> tuple[dict[tuple[str, str], int], ...]:
    s = state[PRE_FILTER_STATE_KEY]
    return s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts


def _rejected(status: Status | None) -> bool:
    return status is not None and status.code in (
        Code.UNSCHEDULABLE,
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    )


def check_filter_batch(
    plugin: InterPodAffinity, state: CycleState, incoming: Pod, snap: Snapshot
) -> None:
    """filter_batch decides every row, as filter does."""
    columns = snap.columns()
    verdicts = plugin.filter_batch(state, incoming, columns)
    assert verdicts is not None
    assert verdicts.dtype == np.int8 and verdicts.shape == (columns.size,)
    for row, info in enumerate(columns.infos):
        status = plugin.filter(state, incoming, info)
        if verdicts[row] == fw.FILTER_PASS:
            assert status is None or status.is_success(), (info.name, status)
        else:
            assert verdicts[row] == fw.FILTER_REJECT, info.name
            assert _rejected(status), (info.name, status)


def check_cycle(plugin: InterPodAffinity, snap: Snapshot, incoming: Pod) -> None:
    """One pod's cycle, sums against pod-by-pod loops and batch against per-node."""
    state = CycleState()
    got = plugin.pre_filter(state, incoming, snap.list())
    want = plain_pre_filter(plugin, snap, incoming)
    if want is None:
        assert isinstance(got, Status) and got.code == Code.SKIP
    else:
        assert got is None
        check_filter_batch(plugin, state, incoming, snap)
        assert _counts(state) == want

    score_state = CycleState()
    got_score = plugin.pre_score(score_state, incoming, snap.list())
    want_score = plain_pre_score(plugin, snap, incoming)
    if want_score is None:
        assert got_score is not None and got_score.code == Code.SKIP
        return
    assert got_score is None
    assert score_state[PRE_SCORE_STATE_KEY].topology_score == want_score
    columns = snap.columns()
    rows = np.arange(columns.size, dtype=np.intp)[::-1]  # any order
    scores = plugin.score_batch(score_state, incoming, columns, rows)
    assert scores is not None and scores.dtype == np.int64
    want_scores = [plugin.score(score_state, incoming, columns.infos[r]) for r in rows]
    assert scores.tolist() == want_scores
    normalized = plugin.normalize_batch(score_state, incoming, scores)
    listed = NodeScoreList([columns.names[r] for r in rows], list(want_scores))
    assert plugin.normalize_score(score_state, incoming, listed) is None
    assert normalized is not None and normalized.tolist() == listed.scores


# -- properties -------------------------------------------------------------------------------

ARGS = st.builds(
    InterPodAffinityArgs,
    hard_pod_affinity_weight=st.sampled_from((0, 1, 7)),
    ignore_preferred_terms_of_existing_pods=st.booleans(),
)


@pytest.mark.property
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), ARGS)
def test_sums_and_batch_equal_the_plain_computations(
    cluster: tuple[list[Node], list[Pod], Pod], args: InterPodAffinityArgs
) -> None:
    node_list, pod_list, incoming = cluster
    snap = Snapshot.from_objects(node_list, pod_list)
    check_cycle(_plugin(snap, args), snap, incoming)


@pytest.mark.property
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.data())
def test_filter_batch_after_add_and_remove_pod(
    cluster: tuple[list[Node], list[Pod], Pod], data: st.DataObject
) -> None:
    """Counts moved by AddPod/RemovePod (also below zero: removing a pod never counted)."""
    node_list, pod_list, incoming = cluster
    snap = Snapshot.from_objects(node_list, pod_list)
    plugin = _plugin(snap)
    state = CycleState()
    if plugin.pre_filter(state, incoming, snap.list()) is not None:
        return
    before = _counts(state)
    extra = data.draw(st.lists(pods("", 50), min_size=1, max_size=3))
    copy = state.clone()
    for i, other in enumerate(extra):
        info = snap.get(data.draw(st.sampled_from(node_list)).metadata.name)
        other_info = PodInfo(
            attrs.evolve(other, metadata=attrs.evolve(other.metadata, uid=f"extra-{i}"))
        )
        if data.draw(st.booleans()):
            assert plugin.add_pod(copy, incoming, other_info, info) is None
        else:
            assert plugin.remove_pod(copy, incoming, other_info, info) is None
        check_filter_batch(plugin, copy, incoming, snap)
    # The cycle's own state is untouched, and still answered from PreFilter's sums.
    assert _counts(state) == before
    check_filter_batch(plugin, state, incoming, snap)


@pytest.mark.property
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_counts_built_on_first_use_equal_counts_built_at_once(
    cluster: tuple[list[Node], list[Pod], Pod],
) -> None:
    """The state keeps its sums' parts; the counts it adds up later (after other pods' cycles
    changed the sums) are those of its own cycle."""
    node_list, pod_list, incoming = cluster
    cache = Cache()
    for n in node_list:
        cache.add_node(n)
    for p in pod_list[1:]:
        cache.add_pod(p)
    snap = Snapshot()
    cache.update_snapshot(snap)
    plugin = _plugin(snap)
    state = CycleState()
    if plugin.pre_filter(state, incoming, snap.list()) is not None:
        return
    want = plain_pre_filter(plugin, snap, incoming)
    if pod_list:
        cache.add_pod(pod_list[0])
    for p in pod_list[1:3]:
        cache.remove_pod(p)
    cache.update_snapshot(snap)
    check_cycle(plugin, snap, incoming)
    assert _counts(state) == want


def changes(
    node_list: Sequence[Node], pod_list: Sequence[Pod], first: int
) -> st.SearchStrategy[list[Any]]:
    """Cache operations: pods added, removed or relabelled, nodes relabelled, added, removed.
    New pods and nodes are numbered from ``first``."""

    @st.composite
    def build(draw: st.DrawFn) -> list[Any]:
        ops: list[Any] = []
        placed = list(pod_list)
        live = list(node_list)
        for i in range(draw(st.integers(1, 5))):
            kind = draw(
                st.sampled_from(
                    ("add_pod", "remove_pod", "relabel_pod", "relabel_node", "add_node", "rm_node")
                )
            )
            if kind == "add_pod" and live:
                new = draw(pods(draw(st.sampled_from(live)).metadata.name, first + i))
                placed.append(new)
                ops.append(("add_pod", new))
            elif kind == "remove_pod" and placed:
                gone = draw(st.sampled_from(placed))
                placed.remove(gone)
                ops.append(("remove_pod", gone))
            elif kind == "relabel_pod" and placed:
                old = draw(st.sampled_from(placed))
                new = attrs.evolve(
                    old,
                    metadata=attrs.evolve(
                        old.metadata, labels=dict(draw(st.sampled_from(POD_LABELS)))
                    ),
                )
                placed[placed.index(old)] = new
                ops.append(("update_pod", (old, new)))
            elif kind == "relabel_node" and live:
                old_node = draw(st.sampled_from(live))
                new_node = draw(nodes(1))[0]
                new_node = node(old_node.metadata.name, new_node.metadata.labels)
                live[live.index(old_node)] = new_node
                ops.append(("update_node", (old_node, new_node)))
            elif kind == "add_node":
                new_node = node(f"m{first + i}", draw(nodes(1))[0].metadata.labels)
                live.append(new_node)
                ops.append(("add_node", new_node))
            elif kind == "rm_node" and len(live) > 1:
                gone_node = draw(st.sampled_from(live))
                live.remove(gone_node)
                for p in [p for p in placed if p.spec.node_name == gone_node.metadata.name]:
                    placed.remove(p)
                    ops.append(("remove_pod", p))
                ops.append(("remove_node", gone_node))
        return ops

    return build()


def _apply(cache: Cache, op: str, arg: Any) -> None:
    if op in ("update_pod", "update_node"):
        getattr(cache, op)(*arg)
    else:
        getattr(cache, op)(arg)


@pytest.mark.property
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.data())
def test_sums_follow_incremental_snapshot_updates(
    cluster: tuple[list[Node], list[Pod], Pod], data: st.DataObject
) -> None:
    node_list, pod_list, incoming = cluster
    cache = Cache()
    for n in node_list:
        cache.add_node(n)
    for p in pod_list:
        cache.add_pod(p)
    snap = Snapshot()
    cache.update_snapshot(snap)
    plugin = _plugin(snap)
    check_cycle(plugin, snap, incoming)
    for round_ in (1, 2):
        for op, arg in data.draw(changes(node_list, pod_list, 100 * round_)):
            _apply(cache, op, arg)
        cache.update_snapshot(snap)
        # The same plugin, whose sums were taken before the changes.
        check_cycle(plugin, snap, incoming)
        node_list = [info.node for info in snap.list() if info.node is not None]
        pod_list = [pi.pod for info in snap.list() for pi in info.pods]


# -- pieces -----------------------------------------------------------------------------------


class _Lister:
    """A node-info lister that is no Snapshot: the plugin then counts pod by pod."""

    def __init__(self, snap: Snapshot) -> None:
        self._snap = snap

    @property
    def node_infos(self) -> _Lister:
        return self

    def list(self) -> Sequence[fw.NodeInfo]:
        return self._snap.list()

    def get(self, name: str) -> fw.NodeInfo:
        return self._snap.get(name)

    def have_pods_with_affinity_list(self) -> Sequence[fw.NodeInfo]:
        return self._snap.have_pods_with_affinity_list()

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[fw.NodeInfo]:
        return self._snap.have_pods_with_required_anti_affinity_list()


class _Handle:
    def __init__(self, snap: Snapshot) -> None:
        self._lister = _Lister(snap)
        self._framework = Framework(snapshot=snap, namespaces=NAMESPACES)

    def snapshot_shared_lister(self) -> _Lister:
        return self._lister

    def namespaces(self) -> Iterable[Namespace]:
        return self._framework.namespaces()

    def namespace(self, name: str) -> Namespace | None:
        return self._framework.namespace(name)


@pytest.mark.property
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_other_listers_are_counted_pod_by_pod(cluster: tuple[list[Node], list[Pod], Pod]) -> None:
    node_list, pod_list, incoming = cluster
    snap = Snapshot.from_objects(node_list, pod_list)
    plugin = InterPodAffinity(None, _Handle(snap))  # type: ignore[arg-type]
    check_cycle(plugin, snap, incoming)


def test_rows_without_a_node_are_left_to_filter() -> None:
    """A NodeInfo whose Node is gone: filter reports an error, so the batch does not decide."""
    incoming = pod(
        "in",
        labels={"app": "a"},
        affinity=affinity(anti_required=[term(selector(req("app", "Exists")), "hostname")]),
    )
    snap = Snapshot.from_objects(
        [node("n0", {"hostname": "n0"}), node("n1", {"hostname": "n1"})],
        [pod("p", uid="p", node="n0", labels={"app": "a"})],
    )
    plugin = _plugin(snap)
    state = CycleState()
    assert plugin.pre_filter(state, incoming, snap.list()) is None
    ghost = fw.NodeInfo()
    columns = fw.NodeColumns([*snap.list(), ghost])
    verdicts = plugin.filter_batch(state, incoming, columns)
    assert verdicts is not None
    assert verdicts.tolist() == [fw.FILTER_REJECT, fw.FILTER_PASS, fw.FILTER_CHECK]
    assert plugin.filter(state, incoming, ghost) == Status(Code.ERROR, "node not found")

    score_state = CycleState()
    score_state[PRE_SCORE_STATE_KEY] = _score_state({"hostname": {"n0": 3}})
    rows = np.arange(3, dtype=np.intp)
    assert plugin.score_batch(score_state, incoming, columns, rows) is None
    assert plugin.score_batch(score_state, incoming, columns, rows[:2]).tolist() == [3, 0]  # type: ignore[union-attr]


def _score_state(scores: Mapping[str, dict[str, int]]) -> Any:
    from schedframe_plugins.interpodaffinity.scoring import _PreScoreState

    return _PreScoreState(dict(scores))


@pytest.mark.parametrize(
    "scores",
    [[], [5], [3, 3, 3], [-7, 0, 12, 5], [2**62, -(2**62), 0], [1, 2**53 + 1, 2**53 + 3]],
)
def test_normalize_batch_equals_normalize_score(scores: list[int]) -> None:
    snap = Snapshot.from_objects([node("n0")])
    plugin = _plugin(snap)
    state = CycleState()
    state[PRE_SCORE_STATE_KEY] = _score_state({"zone": {"z1": 1}})
    got = plugin.normalize_batch(state, pod(), np.array(scores, dtype=np.int64))
    listed = NodeScoreList([f"n{i}" for i in range(len(scores))], list(scores))
    assert plugin.normalize_score(state, pod(), listed) is None
    if got is None:
        assert max(scores) - min(scores) >= 2**63
    else:
        assert got.tolist() == listed.scores


def test_normalize_batch_declines_a_spread_beyond_int64() -> None:
    snap = Snapshot.from_objects([node("n0")])
    plugin = _plugin(snap)
    state = CycleState()
    state[PRE_SCORE_STATE_KEY] = _score_state({"zone": {"z1": 1}})
    scores = np.array([-(2**63), 2**63 - 1], dtype=np.int64)
    assert plugin.normalize_batch(state, pod(), scores) is None


def test_score_batch_declines_weights_beyond_int64() -> None:
    snap = Snapshot.from_objects([node("n0", {"zone": "z1", "region": "r1"})])
    plugin = _plugin(snap)
    state = CycleState()
    state[PRE_SCORE_STATE_KEY] = _score_state({"zone": {"z1": 2**62}, "region": {"r1": 2**62}})
    columns = snap.columns()
    assert plugin.score_batch(state, pod(), columns, np.arange(1, dtype=np.intp)) is None
    assert plugin.score(state, pod(), snap.list()[0]) == 2**63


@given(
    steps=st.lists(
        st.tuples(st.sampled_from(("z1", "z2", "z3", "z9")), st.sampled_from((1, 2, -1))),
        max_size=12,
    ),
    cut=st.integers(0, 12),
)
def test_domains_mask_follows_the_counts(steps: list[tuple[str, int]], cut: int) -> None:
    """A mask built once is kept up to date by later counts (z9 is in no node's labels)."""
    from schedframe_plugins.interpodaffinity._sums import Domains

    infos = [fw.NodeInfo(node(f"n{i}", {"zone": z})) for i, z in enumerate(("z1", "z2", "z3"))]
    column = fw.LabelColumn("zone", infos)
    domains = Domains("zone")
    counts: dict[str, int] = {}
    for i, (value, n) in enumerate(steps):
        if i == cut:
            domains.mask(column)
            domains.shared = True
            domains = domains.copy()
        if counts.get(value, 0) + n < 0:
            continue  # the sums never count below zero
        counts[value] = counts.get(value, 0) + n
        domains.add(value, n)
    positive = {v for v, n in counts.items() if n}
    assert domains.values == {v: n for v, n in counts.items() if n}
    assert domains.pairs() == {("zone", v): n for v, n in counts.items() if n}
    want = [column.values[c] in positive for c in column.codes.tolist()]
    assert domains.mask(column)[column.codes].tolist() == want
