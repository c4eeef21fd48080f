"""DefaultPreemption's fast paths give the general path's answers.

* The dry-run shortcuts (``prepare_dry_run``) rule out only nodes whose dry run yields no
  candidate and select the same victims with fewer Filter runs, so the Evaluator finds the
  same candidates with them as without them, and the same statuses and errors when there are
  none. When every other Filter reads the node only, victims are chosen by arithmetic on the
  snapshot's NodeInfo (``victims_in_place``): the same victims, and the NodeInfo unchanged.
* Victims are ordered by a sort key (:func:`schedframe.preemption.importance_key`) while
  ``more_important_pod`` is the default: the same order as the pairwise predicate.
* :func:`~schedframe.preemption.pick_one_node_for_preemption` converts start times once; its
  choice is the one of the criteria written out with ``get_earliest_pod_start_time``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import ClassVar

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe import preemption
from schedframe.objects import Node, Pod, PodDisruptionBudget
from schedframe.preemption import Victims
from schedframe.runtime import Framework
from schedframe_plugins.defaultpreemption import DefaultPreemption, DefaultPreemptionArgs
from schedframe_plugins.defaultpreemption._fit_bound import Remainders
from schedframe_plugins.noderesources import Fit

from ._builders import (
    NOW,
    ErrorOnLabelPlugin,
    KeepingNominator,
    PluginFactory,
    SequenceRandom,
    cluster,
    node,
    pdb,
    pod,
    pre_filter,
)

PRIORITIES = st.sampled_from([-10, 0, 10, 100, 1000])
STARTS = st.one_of(st.none(), st.integers(0, 5).map(lambda s: NOW - timedelta(seconds=10 * s)))


class RejectLabelled(fw.FilterPlugin):
    """Rejects nodes labelled ``reject=true`` (a Filter that evictions cannot satisfy)."""

    name: ClassVar[str] = "RejectLabelled"

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        node = node_info.node
        if node is not None and node.labels.get("reject") == "true":
            return fw.Status(fw.Code.UNSCHEDULABLE, "labelled reject")
        return None


class RejectLabelledNodeOnly(RejectLabelled):
    """:class:`RejectLabelled`, declaring that its Filter reads the node only."""

    filter_reads_node_pods: ClassVar[bool] = False


Cluster = tuple[list[Node], list[Pod], list[PodDisruptionBudget], Pod, list[tuple[Pod, str]]]


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    """Nodes with pods of mixed priorities, requests (cpu, memory, ephemeral storage) and start
    times, pods nominated to some nodes, maybe a PDB, and a preemptor."""
    nodes: list[Node] = []
    pods: list[Pod] = []
    nominated: list[tuple[Pod, str]] = []
    for i in range(draw(st.integers(1, 6))):
        name = f"node{i}"
        labels = {}
        if draw(st.integers(0, 5)) == 0:
            labels["reject"] = "true"
        if draw(st.integers(0, 7)) == 0:
            labels["error"] = "true"
        capacity = {
            "cpu": f"{draw(st.integers(2, 10)) * 100}m",
            "memory": str(draw(st.integers(2, 10)) * 100),
            "ephemeral-storage": str(draw(st.integers(0, 10)) * 100),
            "pods": draw(st.sampled_from(["1", "2", "3", "32"])),
        }
        nodes.append(node(name, capacity, labels))
        for j in range(draw(st.integers(0, 4))):
            pods.append(
                pod(
                    f"p{i}-{j}",
                    node=name,
                    priority=draw(PRIORITIES),
                    req=_requests(draw),
                    labels={"app": "x"} if draw(st.booleans()) else None,
                    start=draw(STARTS),
                )
            )
        for j in range(draw(st.integers(0, 2))):
            nominee = pod(f"n{i}-{j}", priority=draw(PRIORITIES), req=_requests(draw))
            nominated.append((nominee, name))
    pdbs = []
    if draw(st.booleans()):
        pdbs.append(pdb("budget", match_labels={"app": "x"}, allowed=draw(st.integers(0, 2))))
    preemptor = pod(
        "preemptor",
        priority=draw(st.sampled_from([0, 100, 1000, 1000])),
        req=_requests(draw, low=1),
    )
    preemptor_nominated: bool = draw(st.booleans())
    if preemptor_nominated:
        # The preemptor itself may already be nominated somewhere.
        nominated.append((preemptor, draw(st.sampled_from(nodes)).metadata.name))
    return nodes, pods, pdbs, preemptor, nominated


def _requests(draw: st.DrawFn, *, low: int = 0) -> dict[str, str]:
    req = {"cpu": f"{draw(st.integers(low, 8)) * 100}m"}
    if draw(st.booleans()):
        req["memory"] = str(draw(st.integers(0, 6)) * 100)
    if draw(st.booleans()):
        req["ephemeral-storage"] = str(draw(st.integers(0, 6)) * 100)
    return req


def _framework(
    data: Cluster,
    *,
    extension: bool,
    rng: random.Random | None = None,
    extra: fw.FilterPlugin | None = None,
    node_only: bool = False,
) -> tuple[Framework, fw.CycleState, fw.NodeToStatus]:
    nodes, pods, pdbs, preemptor, nominated = data
    reject = RejectLabelledNodeOnly if node_only else RejectLabelled
    factories: list[PluginFactory] = [lambda h: reject(), lambda h: Fit(None, h)]
    if extension:
        factories.append(lambda h: ErrorOnLabelPlugin())
    if extra is not None:
        factories.insert(0, lambda h: extra)
    fwk, _ = cluster(nodes, pods, factories, pdbs=pdbs, rng=rng)
    for nominee, node_name in nominated:
        fwk.nominator.add_nominated_pod(fw.PodInfo(nominee), node_name)
    state = pre_filter(fwk, preemptor)
    statuses = fw.NodeToStatus()
    for ni in fwk.snapshot_shared_lister().node_infos.list():
        status = fwk.run_filter_plugins_with_nominated_pods(state, preemptor, ni)
        if status is not None and not status.is_success():
            # Unresolvable verdicts are kept too: the Evaluator must pass over those nodes.
            statuses.set(ni.name, status)
    return fwk, state, statuses


def _without_shortcuts(plugin: DefaultPreemption) -> DefaultPreemption:
    def none(state: fw.CycleState, pod: Pod, m: fw.NodeToStatus) -> preemption.DryRun | None:
        return None

    plugin.prepare_dry_run = none  # type: ignore[method-assign]
    return plugin


def _status_view(status: fw.Status) -> tuple[fw.Code, str, str]:
    return status.code, status.message(), status.plugin


@pytest.mark.property
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.booleans())
def test_nodes_passed_over_yield_no_candidate(data: Cluster, extension: bool) -> None:
    fwk, state, statuses = _framework(data, extension=extension)
    preemptor, pdbs = data[3], data[2]
    plugin = DefaultPreemption(None, fwk)
    plan = plugin.prepare_dry_run(state, preemptor, statuses)
    assert plan is not None
    for ni in fwk.snapshot_shared_lister().node_infos.list():
        if not plan.cannot_help(ni):
            event("kept")
            continue
        lower = any(p.pod.priority < preemptor.priority for p in ni.pods)
        event("passed over: " + ("does not fit" if lower else "no lower-priority pod"))
        victims, _, status = plugin.select_victims_on_node(
            state.clone(), preemptor, ni.clone(), pdbs
        )
        assert not victims or (status is not None and not status.is_success())


class CountingFilter(fw.FilterPlugin):
    """Passes every node; counts its calls."""

    name: ClassVar[str] = "CountingFilter"

    def __init__(self) -> None:
        self.calls = 0

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        self.calls += 1
        return None


@pytest.mark.property
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.booleans())
def test_plan_selects_the_victims_of_the_plugin(data: Cluster, extension: bool) -> None:
    """The plan's victim selection answers as the plugin's, with no more Filter runs."""
    counter = CountingFilter()
    fwk, state, statuses = _framework(data, extension=extension, extra=counter)
    preemptor, pdbs = data[3], data[2]
    plugin = DefaultPreemption(None, fwk)
    plan = plugin.prepare_dry_run(state, preemptor, statuses)
    assert plan is not None
    for ni in fwk.snapshot_shared_lister().node_infos.list():
        before = counter.calls
        want = plugin.select_victims_on_node(state.clone(), preemptor, ni.clone(), pdbs)
        full_calls = counter.calls - before
        before = counter.calls
        got = plan.select_victims_on_node(state.clone(), preemptor, ni.clone(), pdbs)
        plan_calls = counter.calls - before
        assert got[:2] == want[:2]
        assert (got[2] is None) == (want[2] is None)
        if got[2] is not None and want[2] is not None:
            assert _status_view(got[2]) == _status_view(want[2])
        assert plan_calls <= full_calls
        if plan_calls < full_calls:
            event("filter runs skipped")


@pytest.mark.property
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_victims_in_place_are_those_of_the_copying_path(data: Cluster) -> None:
    """With only node-reading filters besides NodeResourcesFit, the arithmetic answers as the
    plugin's own selection on copies wherever it answers, and leaves the NodeInfo as it was."""
    fwk, state, statuses = _framework(data, extension=False, node_only=True)
    preemptor, pdbs = data[3], data[2]
    plugin = DefaultPreemption(None, fwk)
    plan = plugin.prepare_dry_run(state, preemptor, statuses)
    assert plan is not None
    in_place = getattr(plan, "victims_in_place")  # noqa: B009 - optional DryRun method
    for ni in fwk.snapshot_shared_lister().node_infos.list():
        before = (ni.generation, list(ni.pods), dict(ni.requested))
        got = in_place(state, preemptor, ni, pdbs)
        assert (ni.generation, list(ni.pods), dict(ni.requested)) == before
        if got is None:
            event("copying path")
            continue
        event("in place" + (" with victims" if got[0] else ""))
        assert got == plugin.select_victims_on_node(state.clone(), preemptor, ni.clone(), pdbs)


@pytest.mark.property
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.data())
def test_remembered_victims_in_place_equal_a_fresh_selection(
    data: Cluster, steps: st.DataObject
) -> None:
    """One plugin answering for preemptors one after another (as in a scheduler) reuses its
    arithmetic selections only while they would come out the same: through node changes,
    other preemptors, nominations, PDBs and the clock moving, every answer equals that of a
    plugin seeing the cluster for the first time."""
    fwk, _, _ = _framework(data, extension=False, node_only=True)
    nodes, _, pdbs, first, _ = data
    shared = DefaultPreemption(None, fwk)
    lister = fwk.snapshot_shared_lister().node_infos
    clock = fwk.clock
    for step in range(steps.draw(st.integers(1, 6), label="steps")):
        preemptor = first
        if step:
            preemptor = pod(
                f"preemptor{step}",
                priority=steps.draw(st.sampled_from([0, 100, 1000])),
                req=steps.draw(st.builds(dict, cpu=st.sampled_from(["100m", "300m", "800m"]))),
            )
            change = steps.draw(st.sampled_from(["none", "pod", "nominate", "pdb", "clock"]))
            target = lister.get(steps.draw(st.sampled_from(nodes)).metadata.name)
            if change == "pod":
                target.add_pod(pod(f"new{step}", node=target.name, priority=0, req={"cpu": "100m"}))
            elif change == "nominate":
                nominee = pod(f"nominee{step}", priority=1000, req={"cpu": "100m"})
                fwk.nominator.add_nominated_pod(fw.PodInfo(nominee), target.name)
            elif change == "pdb":
                pdbs = [] if pdbs else [pdb("budget", match_labels={"app": "x"}, allowed=0)]
            elif change == "clock":  # back before the started pods: unstarted ones go first
                clock.t -= 60  # type: ignore[attr-defined]
        state = pre_filter(fwk, preemptor)
        m = fw.NodeToStatus({n.metadata.name: fw.Status(fw.Code.UNSCHEDULABLE) for n in nodes})
        plans = [
            p.prepare_dry_run(state, preemptor, m) for p in (shared, DefaultPreemption(None, fwk))
        ]
        plan_a, plan_b = plans
        assert plan_a is not None and plan_b is not None
        for ni in lister.list():
            got, want = (
                getattr(plan, "victims_in_place")(state, preemptor, ni, pdbs)  # noqa: B009
                for plan in (plan_a, plan_b)
            )
            assert got == want, (step, ni.name)
            if got is not None:
                event("answered in place")


@pytest.mark.property
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.data())
def test_remembered_nominated_sums_equal_fresh_ones(data: Cluster, steps: st.DataObject) -> None:
    """With a nominator that hands out the same list while a node's nominations stay (as the
    scheduling queue does), one plugin answering for preemptors one after another reuses the
    sums of nominated pods only while they come out the same: through nominations, new
    versions of nominated pods, their removal, other priorities and a preemptor that is itself
    one of the nominated pods, every node's room, verdict and victims equal those of a plugin
    seeing the cluster for the first time."""
    nodes, pods, pdbs, first, nominated = data
    fwk, _ = cluster(
        nodes,
        pods,
        [lambda h: RejectLabelledNodeOnly(), lambda h: Fit(None, h)],
        pdbs=pdbs,
        nominator=KeepingNominator(),
    )
    nominees: dict[str, Pod] = {}
    for nominee, node_name in nominated:
        fwk.nominator.add_nominated_pod(fw.PodInfo(nominee), node_name)
        nominees[nominee.name] = nominee
    shared = DefaultPreemption(None, fwk)
    lister = fwk.snapshot_shared_lister().node_infos
    names = [n.metadata.name for n in nodes]
    m = fw.NodeToStatus({name: fw.Status(fw.Code.UNSCHEDULABLE) for name in names})
    preemptor = first
    for step in range(steps.draw(st.integers(1, 8), label="steps")):
        if step:
            change = steps.draw(st.sampled_from(["none", "nominate", "version", "drop", "self"]))
            target = steps.draw(st.sampled_from(names))
            priority = steps.draw(PRIORITIES)
            cpu = steps.draw(st.sampled_from(["100m", "300m", "800m"]))
            if change == "nominate":
                nominee = pod(f"nominee{step}", priority=priority, req={"cpu": cpu})
                fwk.nominator.add_nominated_pod(fw.PodInfo(nominee), target)
                nominees[nominee.name] = nominee
            elif nominees and change in ("version", "drop", "self"):
                name = steps.draw(st.sampled_from(sorted(nominees)))
                nominee = nominees[name]
                where = fwk.nominator._node_of.get(nominee.uid)  # type: ignore[attr-defined]
                if change == "version" and where is not None:
                    nominee = pod(name, priority=nominee.priority, req={"cpu": cpu})
                    fwk.nominator.add_nominated_pod(fw.PodInfo(nominee), where)
                    nominees[name] = nominee
                elif change == "drop":
                    fwk.nominator.delete_nominated_pod_if_exists(nominee)
                    del nominees[name]
                elif change == "self":  # the next preemptor is one of the nominated pods
                    preemptor = nominee
                    change = "kept"
            if change != "kept":
                preemptor = pod(f"preemptor{step}", priority=priority, req={"cpu": cpu})
        state = pre_filter(fwk, preemptor)
        plans = [
            p.prepare_dry_run(state, preemptor, m) for p in (shared, DefaultPreemption(None, fwk))
        ]
        plan_a, plan_b = plans
        assert plan_a is not None and plan_b is not None
        for ni in lister.list():
            got, want = (
                (
                    plan._room(ni),  # type: ignore[attr-defined]
                    plan.cannot_help(ni),
                    getattr(plan, "victims_in_place")(state, preemptor, ni, pdbs),  # noqa: B009
                )
                for plan in (plan_a, plan_b)
            )
            assert got == want, (step, ni.name)


def test_remembered_victims_in_place_follow_each_input() -> None:
    """Each input of the arithmetic selection, changed alone, changes the answer, and the
    plugin that answered before answers anew."""
    nodes = [node("n1", {"cpu": "4"})]
    early, late = NOW - timedelta(seconds=20), NOW - timedelta(seconds=10)
    pods = [
        pod("a", node="n1", priority=0, req={"cpu": "2"}, start=early),
        pod("b", node="n1", priority=0, req={"cpu": "2"}, start=late, labels={"app": "x"}),
    ]
    preemptor = pod("high", priority=10, req={"cpu": "2"})
    fwk, _ = cluster(nodes, pods, [lambda h: Fit(None, h)])
    plugin = DefaultPreemption(None, fwk)
    n1 = fwk.snapshot_shared_lister().node_infos.get("n1")
    m = fw.NodeToStatus({"n1": fw.Status(fw.Code.UNSCHEDULABLE)})

    def victims(pdbs: Sequence[PodDisruptionBudget] = ()) -> list[str]:
        state = pre_filter(fwk, preemptor)
        plan = plugin.prepare_dry_run(state, preemptor, m)
        assert plan is not None
        got = getattr(plan, "victims_in_place")(state, preemptor, n1, pdbs)  # noqa: B009
        return [p.name for p in got[0]]

    # "a" started first: more important, reprieved; "b" goes.
    assert victims() == ["b"]
    # A PDB protecting "b": pods whose eviction would violate it are reprieved first.
    assert victims([pdb("budget", match_labels={"app": "x"}, allowed=0)]) == ["a"]
    assert victims() == ["b"]
    # The same sums but another pod: "c" (started before "a") takes "b"'s place.
    n1.remove_pod(pods[1])
    n1.add_pod(pod("c", node="n1", priority=0, req={"cpu": "2"}, start=early - timedelta(1)))
    assert victims() == ["a"]
    # A nominated pod the filters count takes the room of one reprieve: both go.
    fwk.nominator.add_nominated_pod(fw.PodInfo(pod("n", priority=10, req={"cpu": "1"})), "n1")
    assert victims() == ["c", "a"] or victims() == ["a", "c"]
    fwk.nominator.delete_nominated_pod_if_exists(pod("n", priority=10))
    assert victims() == ["a"]
    # A pod not started yet counts as started now: with the clock moved back before "a" and
    # "c" started, it is the most important.
    n1.remove_pod(pods[0])
    n1.add_pod(pod("d", node="n1", priority=0, req={"cpu": "2"}))
    assert victims() == ["d"]  # started "now", after "c"
    fwk.clock.t = (early - timedelta(days=2)).timestamp()  # type: ignore[attr-defined]
    assert victims() == ["c"]


def test_victims_in_place_are_remembered_across_clocks_when_no_pod_started() -> None:
    """With no lower-priority pod started (the in-memory backend starts none), the order does
    not depend on the clock, so the answer is reused as the real clock moves on between
    preemptors; with a started and an unstarted pod, the clock still counts."""
    nodes = [node("n1", {"cpu": "4"})]
    pods = [
        pod("a", node="n1", priority=0, req={"cpu": "2"}),
        pod("b", node="n1", priority=0, req={"cpu": "2"}),
    ]
    preemptor = pod("high", priority=10, req={"cpu": "2"})
    fwk, _ = cluster(nodes, pods, [lambda h: Fit(None, h)])
    plugin = DefaultPreemption(None, fwk)
    n1 = fwk.snapshot_shared_lister().node_infos.get("n1")
    m = fw.NodeToStatus({"n1": fw.Status(fw.Code.UNSCHEDULABLE)})

    def victims() -> list[str]:
        state = pre_filter(fwk, preemptor)
        plan = plugin.prepare_dry_run(state, preemptor, m)
        assert plan is not None
        got = getattr(plan, "victims_in_place")(state, preemptor, n1, [])  # noqa: B009
        return [p.name for p in got[0]]

    assert victims() == ["b"]
    assert plugin._in_place["n1"].now is None
    remembered = plugin._in_place["n1"]
    fwk.clock.t += 3600  # type: ignore[attr-defined]
    assert victims() == ["b"]
    assert plugin._in_place["n1"] is remembered  # reused, not worked out again
    # One started, one not: the unstarted one counts as started at the clock's now.
    n1.remove_pod(pods[0])
    n1.add_pod(pod("a", node="n1", priority=0, req={"cpu": "2"}, start=NOW))
    assert victims() == ["b"]
    assert plugin._in_place["n1"].now is not None


def test_victims_in_place_only_when_the_other_filters_read_the_node_only() -> None:
    nodes = [node("n1", {"cpu": "4", "example.com/gpu": "2"})]
    pods = [
        pod("a", node="n1", priority=0, req={"cpu": "2"}, start=NOW - timedelta(seconds=9)),
        pod("b", node="n1", priority=0, req={"cpu": "1"}, start=NOW - timedelta(seconds=5)),
        pod("c", node="n1", priority=5, req={"cpu": "1"}),
    ]
    preemptor = pod("high", priority=10, req={"cpu": "2"})
    m = fw.NodeToStatus({"n1": fw.Status(fw.Code.UNSCHEDULABLE)})

    def plan_for(
        factories: list[PluginFactory], preemptor: Pod = preemptor
    ) -> tuple[Framework, fw.CycleState, preemption.DryRun]:
        fwk, _ = cluster(nodes, pods, factories)
        state = pre_filter(fwk, preemptor)
        plan = DefaultPreemption(None, fwk).prepare_dry_run(state, preemptor, m)
        assert plan is not None
        return fwk, state, plan

    def answer(factories: list[PluginFactory], preemptor: Pod = preemptor) -> object:
        fwk, state, plan = plan_for(factories, preemptor)
        ni = fwk.snapshot_shared_lister().node_infos.get("n1")
        return getattr(plan, "victims_in_place")(state, preemptor, ni, [])  # noqa: B009

    # Reprieved most important first: "c" (priority 5, 1 cpu) fits back, then "a" (the older
    # priority-0 pod, 2 cpu) would leave 1 cpu for the preemptor's 2: a victim; then "b" fits.
    got = answer([lambda h: RejectLabelledNodeOnly(), lambda h: Fit(None, h)])
    assert got == ([pods[0]], 0, None)
    # A Filter that may read the pods on the node: the copying path.
    assert answer([lambda h: RejectLabelled(), lambda h: Fit(None, h)]) is None
    # An AddPod/RemovePod extension running this cycle: the copying path.
    assert answer([lambda h: ErrorOnLabelPlugin(), lambda h: Fit(None, h)]) is None
    # An extended resource in the request: NodeResourcesFit checks more than the sums.
    gpu = pod("gpu", priority=10, req={"cpu": "2", "example.com/gpu": "1"})
    assert answer([lambda h: Fit(None, h)], gpu) is None
    # The node-reading Filter rejects the node: the copying path reports its status.
    nodes[0] = node("n1", {"cpu": "4"}, {"reject": "true"})
    assert answer([lambda h: RejectLabelledNodeOnly(), lambda h: Fit(None, h)]) is None


@pytest.mark.property
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    clusters(),
    st.booleans(),
    st.integers(0, 5),
    st.integers(1, 4),
    st.booleans(),
)
def test_candidates_are_those_of_the_full_dry_run(
    data: Cluster, extension: bool, offset_seed: int, absolute: int, node_only: bool
) -> None:
    """find_candidates with the shortcuts equals the full dry run (same offset and count)."""
    args = DefaultPreemptionArgs(
        min_candidate_nodes_percentage=0, min_candidate_nodes_absolute=absolute
    )
    results = []
    for shortcuts in (True, False):
        fwk, state, statuses = _framework(
            data,
            extension=extension,
            rng=SequenceRandom([offset_seed] * 2),
            node_only=node_only,
        )
        plugin = DefaultPreemption(args, fwk)
        if not shortcuts:
            _without_shortcuts(plugin)
        all_nodes = fwk.snapshot_shared_lister().node_infos.list()
        results.append(plugin.evaluator.find_candidates(state, all_nodes, data[3], statuses))
    (fast, fast_statuses, fast_err), (full, full_statuses, full_err) = results
    assert fast == full
    event("candidates" if full else "no candidate")
    if not full:
        assert fast_statuses is not None and full_statuses is not None
        assert [(n, _status_view(s)) for n, s in fast_statuses.items()] == [
            (n, _status_view(s)) for n, s in full_statuses.items()
        ]
        assert str(fast_err) == str(full_err)


@pytest.mark.property
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.booleans())
def test_preemption_outcome_is_unchanged_by_the_shortcuts(data: Cluster, node_only: bool) -> None:
    """The PostFilter answer and the chosen candidate, with shortcuts or without."""
    outcomes = []
    for shortcuts in (True, False):
        fwk, state, statuses = _framework(
            data, extension=False, rng=random.Random(7), node_only=node_only
        )
        plugin = DefaultPreemption(None, fwk)
        if not shortcuts:
            _without_shortcuts(plugin)
        result, status = plugin.post_filter(state, data[3], statuses)
        chosen = state.get(preemption.CHOSEN_CANDIDATE_KEY)
        outcomes.append((result, None if status is None else _status_view(status), chosen))
    assert outcomes[0] == outcomes[1]


def test_no_shortcuts_when_the_policy_is_customised_or_fit_does_not_filter() -> None:
    nodes = [node("n1", {"cpu": "1"})]
    pods = [pod("low", node="n1", priority=0, req={"cpu": "1"})]
    preemptor = pod("high", priority=10, req={"cpu": "1"})
    m = fw.NodeToStatus({"n1": fw.Status(fw.Code.UNSCHEDULABLE)})

    fwk, _ = cluster(nodes, pods, [lambda h: Fit(None, h)])
    state = pre_filter(fwk, preemptor)
    assert DefaultPreemption(None, fwk).prepare_dry_run(state, preemptor, m) is not None

    custom = DefaultPreemption(None, fwk)
    custom.is_eligible_pod = lambda node_info, victim, p: True
    assert custom.prepare_dry_run(state, preemptor, m) is None

    class OwnVictims(DefaultPreemption):
        def select_victims_on_node(
            self,
            state: fw.CycleState,
            pod: Pod,
            node_info: fw.NodeInfo,
            pdbs: Sequence[PodDisruptionBudget],
        ) -> tuple[list[Pod], int, fw.Status | None]:
            return super().select_victims_on_node(state, pod, node_info, pdbs)

    assert OwnVictims(None, fwk).prepare_dry_run(state, preemptor, m) is None

    skipped = state.clone()
    skipped.skip_filter_plugins.add(Fit.name)
    assert DefaultPreemption(None, fwk).prepare_dry_run(skipped, preemptor, m) is None

    # NodeResourcesFit's request is in the state, but the profile does not filter with it.
    pre_filter_only, _ = cluster(nodes, pods)
    state = fw.CycleState()
    Fit(None, pre_filter_only).pre_filter(state, preemptor, [])
    assert DefaultPreemption(None, pre_filter_only).prepare_dry_run(state, preemptor, m) is None


def test_nominated_pods_the_filters_count_take_room() -> None:
    """Nominated pods of at least the preemptor's priority, other than the preemptor itself,
    take room; lower-priority ones do not."""
    nodes = [node(f"n{i}", {"cpu": "4"}) for i in range(4)]
    pods = [pod(f"low{i}", node=f"n{i}", priority=0, req={"cpu": "3"}) for i in range(4)]
    preemptor = pod("high", priority=10, req={"cpu": "3"})
    fwk, _ = cluster(nodes, pods, [lambda h: Fit(None, h)])
    fwk.nominator.add_nominated_pod(fw.PodInfo(pod("same", priority=10, req={"cpu": "2"})), "n0")
    fwk.nominator.add_nominated_pod(fw.PodInfo(pod("lower", priority=5, req={"cpu": "2"})), "n1")
    fwk.nominator.add_nominated_pod(fw.PodInfo(pod("small", priority=99, req={"cpu": "1"})), "n2")
    fwk.nominator.add_nominated_pod(fw.PodInfo(preemptor), "n3")
    state = pre_filter(fwk, preemptor)
    m = fw.NodeToStatus({n.metadata.name: fw.Status(fw.Code.UNSCHEDULABLE) for n in nodes})
    plugin = DefaultPreemption(None, fwk)
    plan = plugin.prepare_dry_run(state, preemptor, m)
    assert plan is not None
    lister = fwk.snapshot_shared_lister().node_infos
    assert [plan.cannot_help(lister.get(f"n{i}")) for i in range(4)] == [
        True,
        False,
        False,
        False,
    ]
    for i in range(4):
        victims, _, status = plugin.select_victims_on_node(
            state.clone(), preemptor, lister.get(f"n{i}").clone(), []
        )
        assert bool(victims) == (i != 0), (i, status)


def test_remainders_follow_node_changes_and_priority() -> None:
    n = fw.NodeInfo(node("n1", {"cpu": "4"}))
    n.add_pod(pod("a", node="n1", priority=0, req={"cpu": "1", "memory": "100"}))
    n.add_pod(pod("b", node="n1", priority=5, req={"cpu": "2"}))
    remainders = Remainders()
    assert remainders.of(n, 1) == (1, 1, 2000, 0, 0)
    assert remainders.of(n, 10) == (2, 0, 0, 0, 0)
    copy = n.clone()  # same generation, same pods
    assert remainders.of(copy, 10) == (2, 0, 0, 0, 0)
    n.add_pod(pod("c", node="n1", priority=0, req={"ephemeral-storage": "50"}))
    assert remainders.of(n, 10) == (3, 0, 0, 0, 0)
    assert remainders.of(n, 1) == (2, 1, 2000, 0, 0)
    n.remove_pod(pod("b", node="n1"))
    assert remainders.of(n, 1) == (2, 0, 0, 0, 0)
    assert remainders.of(copy, 1) == (1, 1, 2000, 0, 0)


# -- victim order -----------------------------------------------------------------------------


@st.composite
def pod_lists(draw: st.DrawFn) -> list[Pod]:
    return [
        pod(f"p{i}", priority=draw(PRIORITIES), start=draw(STARTS))
        for i in range(draw(st.integers(0, 8)))
    ]


@pytest.mark.property
@settings(max_examples=300, deadline=None)
@given(pod_lists())
def test_importance_key_sorts_as_the_predicate(pods: list[Pod]) -> None:
    by_predicate = preemption.sort_by_importance(
        pods, lambda a, b: preemption.more_important_pod(a, b, NOW)
    )
    assert sorted(pods, key=preemption.importance_key(NOW)) == by_predicate


@pytest.mark.property
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.booleans())
def test_victims_are_those_of_the_pairwise_order(data: Cluster, extension: bool) -> None:
    """select_victims_on_node with the key sort equals it with an equivalent predicate set by
    hand (which takes the pairwise sort)."""
    fwk, state, _ = _framework(data, extension=extension)
    keyed = DefaultPreemption(None, fwk)
    pairwise = DefaultPreemption(None, fwk)
    now = pairwise.evaluator.now()
    pairwise.more_important_pod = lambda a, b: preemption.more_important_pod(a, b, now)
    for ni in fwk.snapshot_shared_lister().node_infos.list():
        got = keyed.select_victims_on_node(state.clone(), data[3], ni.clone(), data[2])
        want = pairwise.select_victims_on_node(state.clone(), data[3], ni.clone(), data[2])
        assert got[:2] == want[:2]
        assert (got[2] is None) == (want[2] is None)
        if got[2] is not None and want[2] is not None:
            assert _status_view(got[2]) == _status_view(want[2])


# -- node choice ------------------------------------------------------------------------------


def _reference_pick(nodes_to_victims: Mapping[str, Victims], now: datetime) -> str:
    """pick_one_node_for_preemption's default criteria, start times as datetimes."""
    min_int64 = -(1 << 63)

    def latest_start(name: str) -> int:
        earliest = preemption.get_earliest_pod_start_time(nodes_to_victims[name], now)
        if earliest is None:
            return min_int64
        return (earliest - datetime(1970, 1, 1, tzinfo=earliest.tzinfo)) // timedelta(
            microseconds=1
        )

    funcs = (
        lambda n: -nodes_to_victims[n].num_pdb_violations,
        lambda n: -nodes_to_victims[n].pods[0].priority,
        lambda n: -sum(p.priority + (1 << 31) for p in nodes_to_victims[n].pods),
        lambda n: -len(nodes_to_victims[n].pods),
        latest_start,
    )
    candidates = list(nodes_to_victims)
    if not candidates:
        return ""
    for f in funcs:
        best = max(f(n) for n in candidates)
        candidates = [n for n in candidates if f(n) == best]
        if len(candidates) == 1:
            break
    return candidates[0]


@st.composite
def victim_maps(draw: st.DrawFn) -> dict[str, Victims]:
    out: dict[str, Victims] = {}
    for i in range(draw(st.integers(0, 5))):
        pods = draw(pod_lists())
        if not pods:
            continue
        pods = preemption.sort_by_importance(
            pods, lambda a, b: preemption.more_important_pod(a, b, NOW)
        )
        out[f"node{i}"] = Victims(pods, draw(st.integers(0, 2)))
    return out


@pytest.mark.property
@settings(max_examples=300, deadline=None)
@given(victim_maps())
def test_node_choice_matches_the_criteria(nodes_to_victims: dict[str, Victims]) -> None:
    assert preemption.pick_one_node_for_preemption(nodes_to_victims, None, NOW) == _reference_pick(
        nodes_to_victims, NOW
    )
