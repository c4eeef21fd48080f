"""schedulePod: ported cases of upstream TestSchedulerSchedulePod / FitError messages."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.framework import Code, CycleState, FitError, PreFilterResult, Status
from schedframe.objects import Node, Pod
from schedframe.scheduler import NoNodesAvailableError, ScheduleResult
from schedframe.scheduler._schedule_one import Algorithm, SchedulingStatusError

from ._fakes import (
    FakeFilter,
    FalseFilter,
    MatchFilter,
    NoPodsFilter,
    NumericMap,
    ReverseNumericMap,
    TrueFilter,
    fake_pre_filter,
    make_framework,
    make_node,
    make_pod,
)


def schedule(
    plugins: Sequence[fw.Plugin],
    node_names: Sequence[str],
    pod: Pod,
    *,
    pods: Sequence[Pod] = (),
    seed: int = 0,
    **weights: int,
) -> ScheduleResult:
    nodes: list[Node] = [make_node(n) for n in node_names]
    snapshot = Snapshot.from_objects(nodes, pods)
    fwk = make_framework(plugins, snapshot, **weights)
    algo = Algorithm(snapshot, random.Random(seed))
    return algo.schedule_pod(fwk, CycleState(), pod)


def fit_error(*args: object, **kwargs: object) -> FitError:
    with pytest.raises(FitError) as info:
        schedule(*args, **kwargs)  # type: ignore[arg-type]
    return info.value


def test_false_filter_every_node() -> None:
    err = fit_error([FalseFilter()], ["node1", "node2"], make_pod("2"))
    assert str(err) == "0/2 nodes are available: 2 Nodes failed the fake plugin."
    assert err.diagnosis.unschedulable_plugins == {"FalseFilter"}
    assert err.diagnosis.node_to_status.get("node1").plugin == "FalseFilter"


def test_true_filter_any_node() -> None:
    result = schedule([TrueFilter()], ["node1", "node2"], make_pod("ignore"))
    assert result.suggested_host in {"node1", "node2"}


def test_match_filter() -> None:
    result = schedule([MatchFilter()], ["node1", "node2"], make_pod("node2"))
    assert result.suggested_host == "node2"
    assert result.evaluated_nodes == 2
    assert result.feasible_nodes == 1


def test_numeric_score_picks_highest() -> None:
    result = schedule([TrueFilter(), NumericMap()], ["3", "2", "1"], make_pod("ignore"))
    assert result.suggested_host == "3"
    assert result.evaluated_nodes == 3
    assert result.feasible_nodes == 3
    assert [n.name for n in result.top_nodes] == ["3", "2", "1"]


def test_match_filter_with_score() -> None:
    result = schedule([MatchFilter(), NumericMap()], ["3", "2", "1"], make_pod("2"))
    assert result.suggested_host == "2"


def test_weighted_reverse_score_wins() -> None:
    result = schedule(
        [TrueFilter(), NumericMap(), ReverseNumericMap()],
        ["3", "2", "1"],
        make_pod("2"),
        ReverseNumericMap=2,
    )
    assert result.suggested_host == "1"


def test_true_and_false_filter() -> None:
    err = fit_error([TrueFilter(), FalseFilter()], ["3", "2", "1"], make_pod("2"))
    assert str(err) == "0/3 nodes are available: 3 Nodes failed the fake plugin."
    assert err.diagnosis.unschedulable_plugins == {"FalseFilter"}


def test_no_pods_and_match_filters() -> None:
    pods = [make_pod("2", node_name="2")]
    err = fit_error([NoPodsFilter(), MatchFilter()], ["1", "2"], make_pod("2"), pods=pods)
    assert str(err) == "0/2 nodes are available: 2 Nodes failed the fake plugin."
    assert err.diagnosis.node_to_status.get("1").plugin == "MatchFilter"
    assert err.diagnosis.node_to_status.get("2").plugin == "NoPodsFilter"
    assert err.diagnosis.unschedulable_plugins == {"MatchFilter", "NoPodsFilter"}


def test_no_nodes() -> None:
    with pytest.raises(NoNodesAvailableError, match="no nodes available to schedule pods"):
        schedule([TrueFilter()], [], make_pod("p"))


def test_prefilter_unschedulable() -> None:
    pre = fake_pre_filter(
        "FakePreFilter",
        status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "injected unschedulable status"),
    )
    err = fit_error([pre, TrueFilter()], ["1", "2"], make_pod("p"))
    assert str(err) == "0/2 nodes are available: injected unschedulable status."
    assert err.diagnosis.unschedulable_plugins == {"FakePreFilter"}
    assert err.diagnosis.node_to_status.get("1").code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_prefilter_error() -> None:
    pre = fake_pre_filter("FakePreFilter", status=Status(Code.ERROR, "injected error status"))
    with pytest.raises(SchedulingStatusError) as info:
        schedule([pre, TrueFilter()], ["1", "2"], make_pod("p"))
    assert str(info.value) == 'running PreFilter plugin "FakePreFilter": injected error status'


def test_prefilter_result_narrows() -> None:
    pre = fake_pre_filter("FakePreFilter", result=PreFilterResult(frozenset({"node2"})))
    result = schedule([pre, TrueFilter(), NumericMap()], ["node1", "node2"], make_pod("p"))
    assert result.suggested_host == "node2"
    assert result.evaluated_nodes == 1


def test_prefilter_non_intersecting_results() -> None:
    pre1 = fake_pre_filter("FakePreFilter1")
    pre2 = fake_pre_filter("FakePreFilter2", result=PreFilterResult(frozenset({"node2"})))
    pre3 = fake_pre_filter("FakePreFilter3", result=PreFilterResult(frozenset({"node1"})))
    err = fit_error([pre1, pre2, pre3, TrueFilter()], ["node1", "node2", "node3"], make_pod("p"))
    assert str(err) == (
        "0/3 nodes are available: node(s) didn't satisfy plugin(s) "
        "[FakePreFilter2 FakePreFilter3] simultaneously."
    )
    assert err.diagnosis.unschedulable_plugins == {"FakePreFilter2", "FakePreFilter3"}


def test_prefilter_empty_node_set() -> None:
    pre = fake_pre_filter("FakePreFilter2", result=PreFilterResult(frozenset()))
    err = fit_error([pre, TrueFilter()], ["node1"], make_pod("p"))
    assert str(err) == "0/1 nodes are available: node(s) didn't satisfy plugin FakePreFilter2."


def test_prefilter_and_filter_both_reject() -> None:
    pre = fake_pre_filter("FakePreFilter", result=PreFilterResult(frozenset({"node2"})))
    flt = FakeFilter({"node2": Code.UNSCHEDULABLE})
    err = fit_error([pre, flt], ["node1", "node2"], make_pod("p"))
    assert str(err) == (
        "0/2 nodes are available: 1 injected filter status, "
        "1 node(s) didn't satisfy plugin(s) [FakePreFilter]."
    )
    assert err.diagnosis.unschedulable_plugins == {"FakePreFilter", "FakeFilter"}


def test_without_score_plugins_one_feasible_node_is_enough() -> None:
    pre = fake_pre_filter("FakePreFilter", result=PreFilterResult(frozenset({"1", "2"})))
    flt = FakeFilter({})
    result = schedule([pre, flt], ["1", "2", "3"], make_pod("p"))
    assert result.suggested_host in {"1", "2"}
    assert result.evaluated_nodes == 1
    assert flt.calls == 1


@pytest.mark.parametrize("code", [Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE])
def test_filter_rejection(code: Code) -> None:
    flt = FakeFilter({"3": code})
    err = fit_error([flt], ["3"], make_pod("p"))
    assert str(err) == "0/1 nodes are available: 1 injected filter status."
    assert err.diagnosis.unschedulable_plugins == {"FakeFilter"}


def test_filter_error() -> None:
    flt = FakeFilter({"1": Code.ERROR})
    with pytest.raises(SchedulingStatusError) as info:
        schedule([flt], ["1"], make_pod("p"))
    assert str(info.value) == 'running "FakeFilter" filter plugin: injected filter status'


def test_partial_filter_failure() -> None:
    flt = FakeFilter({"1": Code.UNSCHEDULABLE})
    result = schedule([flt, NumericMap()], ["1", "2"], make_pod("p"))
    assert result.suggested_host == "2"
    assert result.evaluated_nodes == 2
    assert result.feasible_nodes == 1


def test_filter_pending_records_pending_plugin() -> None:
    flt = FakeFilter({"1": Code.PENDING})
    err = fit_error([flt], ["1"], make_pod("p"))
    assert err.diagnosis.pending_plugins == {"FakeFilter"}
    assert err.diagnosis.unschedulable_plugins == {"FakeFilter"}


def test_nominated_node_is_tried_first() -> None:
    flt = FakeFilter({})
    result = schedule([flt, NumericMap()], ["1", "2", "3"], make_pod("p", nominated="1"))
    assert result.suggested_host == "1"
    assert flt.calls == 1


def test_nominated_node_unfit_falls_back_to_all_nodes() -> None:
    flt = FakeFilter({"1": Code.UNSCHEDULABLE})
    result = schedule([flt, NumericMap()], ["1", "2", "3"], make_pod("p", nominated="1"))
    assert result.suggested_host == "3"
    assert flt.calls == 4


def test_missing_nominated_node_is_ignored() -> None:
    result = schedule([TrueFilter(), NumericMap()], ["1", "2"], make_pod("p", nominated="gone"))
    assert result.suggested_host == "2"


def test_next_start_node_index_rotates() -> None:
    """Without score plugins the first feasible node from the rotating start index wins."""
    nodes = [make_node(str(i)) for i in range(5)]
    snapshot = Snapshot.from_objects(nodes)
    flt = FakeFilter({"1": Code.UNSCHEDULABLE})
    fwk = make_framework([flt], snapshot)
    algo = Algorithm(snapshot, random.Random(0))
    picks = []
    for _ in range(5):
        picks.append(algo.schedule_pod(fwk, CycleState(), make_pod("p")).suggested_host)
    # start 0 -> "0" (processed 1); start 1 -> "1" rejected, "2" (processed 2); start 3 -> "3";
    # start 4 -> "4"; start 0 -> "0".
    assert picks == ["0", "2", "3", "4", "0"]
    assert algo.next_start_node_index == 1


def test_percentage_of_nodes_to_score_limits_filtering() -> None:
    nodes = [make_node(f"{i:03d}") for i in range(200)]
    snapshot = Snapshot.from_objects(nodes)
    flt = FakeFilter({})
    fwk = make_framework([flt, NumericMap()], snapshot)
    fwk.percentage_of_nodes_to_score = 10
    algo = Algorithm(snapshot, random.Random(0))
    result = algo.schedule_pod(fwk, CycleState(), make_pod("p"))
    # 10% of 200 is under the minimum of 100 nodes.
    assert result.feasible_nodes == 100
    assert flt.calls == 100
    assert algo.next_start_node_index == 100
