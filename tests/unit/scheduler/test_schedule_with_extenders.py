"""schedulePod with HTTP extenders: upstream TestSchedulerWithExtenders, ported as data.

Each upstream fake extender is a real HTTP extender here (the testing kit's ExtenderServer):
``TruePredicateExtender`` keeps every node, ``FalsePredicateExtender`` none,
``Node1PredicateExtender`` node1 only, ``ErrorPredicateExtender`` answers HTTP 500; the
prioritizers give a node 10 x their weight (1 x weight to the others) and
``ErrorPrioritizerExtender`` answers 500.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import ClassVar

import attrs
import pytest

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.config import Extender, ExtenderManagedResource
from schedframe.extender import HTTPExtender
from schedframe.framework import CycleState, FitError, NodeInfo, Status
from schedframe.objects import Pod
from schedframe.scheduler import ScheduleResult
from schedframe.scheduler._schedule_one import Algorithm, SchedulingStatusError
from schedframe.testing.extender import ExtenderServer, keep_nodes, node_names, score_nodes

from ._fakes import FakeFilter, NumericMap, TrueFilter, make_framework, make_node, make_pod


class EqualPrioritizer(fw.ScorePlugin):
    name: ClassVar[str] = "EqualPrioritizerPlugin"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 1


class Node2Prioritizer(fw.ScorePlugin):
    name: ClassVar[str] = "Node2Prioritizer"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return fw.MAX_NODE_SCORE if node_info.name == "node2" else 0


@attrs.frozen(kw_only=True)
class Fake:
    """One upstream FakeExtender."""

    predicate: str = ""  # true | false | node1 | node2 | error
    prioritizer: str = ""  # node1 | node2 | error
    priority_weight: int = 1
    weight: int = 0
    uninterested: bool = False
    ignorable: bool = False
    binder: bool = False


_KEEP: dict[str, Callable[[str], bool]] = {
    "true": lambda n: True,
    "false": lambda n: False,
    "node1": lambda n: n == "node1",
    "node2": lambda n: n == "node2",
}


def _serve(stack: ExitStack, fake: Fake) -> HTTPExtender:
    server = ExtenderServer(bind=lambda args: {})
    if fake.predicate:
        server.verbs["filter"] = keep_nodes(_KEEP.get(fake.predicate, _KEEP["true"]))
        if fake.predicate == "error":
            server.fault("filter", status=500)
    if fake.prioritizer:
        best = fake.prioritizer
        server.verbs["prioritize"] = score_nodes(
            {best: 10 * fake.priority_weight}, default=fake.priority_weight
        )
        if fake.prioritizer == "error":
            server.fault("prioritize", status=500)
    stack.enter_context(server)
    return HTTPExtender(
        Extender(
            url_prefix=server.url,
            filter_verb="filter" if fake.predicate else "",
            prioritize_verb="prioritize" if fake.prioritizer else "",
            bind_verb="bind" if fake.binder else "",
            weight=fake.weight,
            ignorable=fake.ignorable,
            managed_resources=(
                [ExtenderManagedResource(name="example.com/unrequested")]
                if fake.uninterested
                else []
            ),
            http_timeout=5.0,
        )
    )


def schedule(
    plugins: Sequence[fw.Plugin], fakes: Sequence[Fake], nodes: Sequence[str], **weights: int
) -> ScheduleResult:
    snapshot = Snapshot.from_objects([make_node(n) for n in nodes], [])
    fwk = make_framework(plugins, snapshot, **weights)
    algo = Algorithm(snapshot, random.Random(0))
    with ExitStack() as stack:
        algo.extenders = tuple(_serve(stack, f) for f in fakes)
        return algo.schedule_pod(fwk, CycleState(), make_pod("ignored"))


CASES = [
    pytest.param(
        [TrueFilter()],
        [Fake(predicate="true"), Fake(predicate="error")],
        ["node1", "node2"],
        {},
        SchedulingStatusError,
        id="test 1",
    ),
    pytest.param(
        [TrueFilter()],
        [Fake(predicate="true"), Fake(predicate="false")],
        ["node1", "node2"],
        {},
        FitError,
        id="test 2",
    ),
    pytest.param(
        [TrueFilter(), EqualPrioritizer()],
        [Fake(predicate="true"), Fake(predicate="node1")],
        ["node1", "node2"],
        {},
        ("node1", 2, 1),
        id="test 3",
    ),
    pytest.param(
        [TrueFilter()],
        [Fake(predicate="node2"), Fake(predicate="node1")],
        ["node1", "node2"],
        {},
        FitError,
        id="test 4",
    ),
    pytest.param(
        [TrueFilter()],
        [Fake(predicate="true", prioritizer="error", priority_weight=10, weight=1)],
        ["node1"],
        {},
        ("node1", 1, 1),
        id="test 5",
    ),
    pytest.param(
        [TrueFilter()],
        [
            Fake(predicate="true", prioritizer="node1", priority_weight=10, weight=1),
            Fake(predicate="true", prioritizer="node2", priority_weight=10, weight=5),
        ],
        ["node1", "node2"],
        {},
        ("node2", 2, 2),
        id="test 6",
    ),
    pytest.param(
        [TrueFilter(), Node2Prioritizer()],
        [Fake(predicate="true", prioritizer="node1", priority_weight=10, weight=1)],
        ["node1", "node2"],
        {"Node2Prioritizer": 20},
        ("node2", 2, 2),
        id="test 7",
    ),
    pytest.param(
        [TrueFilter(), Node2Prioritizer()],
        [Fake(predicate="error", prioritizer="error", priority_weight=10, uninterested=True)],
        ["node1", "node2"],
        {},
        ("node2", 2, 2),
        id="test 8",
    ),
    pytest.param(
        [TrueFilter(), EqualPrioritizer()],
        [Fake(predicate="error", ignorable=True), Fake(predicate="node1")],
        ["node1", "node2"],
        {},
        ("node1", 2, 1),
        id="test 9",
    ),
    pytest.param(
        [TrueFilter()],
        [Fake(predicate="true"), Fake(predicate="node1")],
        ["node1", "node2"],
        {},
        ("node1", 2, 1),
        id="test 10 - no scoring, extender filters configured, multiple feasible nodes are "
        "evaluated",
    ),
    pytest.param(
        [],
        [Fake(binder=True)],
        ["node1", "node2"],
        {},
        ("node1", 1, 1),
        id="test 11 - no scoring, no prefilters or  extender filters configured, a single "
        "feasible node is evaluated",
    ),
]


@pytest.mark.parametrize(("plugins", "fakes", "nodes", "weights", "want"), CASES)
def test_scheduler_with_extenders(
    plugins: list[fw.Plugin],
    fakes: list[Fake],
    nodes: list[str],
    weights: dict[str, int],
    want: tuple[str, int, int] | type[Exception],
) -> None:
    if isinstance(want, type):
        with pytest.raises(want):
            schedule(plugins, fakes, nodes, **weights)
        return
    result = schedule(plugins, fakes, nodes, **weights)
    assert (result.suggested_host, result.evaluated_nodes, result.feasible_nodes) == want


def test_extender_filter_failures_in_the_fit_error() -> None:
    # upstream reports extender reasons beside the plugins' in the FitError histogram
    with pytest.raises(FitError) as info:
        schedule([TrueFilter()], [Fake(predicate="false")], ["node1", "node2"])
    err = info.value
    assert str(err) == "0/2 nodes are available: 2 rejected by extender."
    assert err.diagnosis.unschedulable_plugins == {"Extender"}
    assert err.diagnosis.node_to_status.get("node1") == Status(
        fw.Code.UNSCHEDULABLE, "rejected by extender"
    )


def test_with_extender_which_filters_out_some_nodes() -> None:
    # upstream TestSchedulerSchedulePod "test with extender which filters out some Nodes"
    snapshot = Snapshot.from_objects([make_node(n) for n in ("1", "2", "3")], [])
    fwk = make_framework([FakeFilter({"3": fw.Code.UNSCHEDULABLE}), NumericMap()], snapshot)
    algo = Algorithm(snapshot, random.Random(0))

    def reject_all(args: dict[str, object]) -> object:
        names = [str(n) for n in node_names(args)]
        return {
            "nodes": {"metadata": {}, "items": []},
            "failedNodes": {n: f'FakeExtender: node "{n}" failed' for n in names},
        }

    with ExtenderServer(filter=reject_all) as server:
        algo.extenders = (HTTPExtender(Extender(url_prefix=server.url, filter_verb="filter")),)
        with pytest.raises(FitError) as info:
            algo.schedule_pod(fwk, CycleState(), make_pod("test-filter"))
        # The extender only sees what the plugins kept.
        assert node_names(server.calls[0][1]) == ["1", "2"]
    diagnosis = info.value.diagnosis
    statuses = dict(diagnosis.node_to_status.items())
    assert statuses == {
        "1": Status(fw.Code.UNSCHEDULABLE, 'FakeExtender: node "1" failed'),
        "2": Status(fw.Code.UNSCHEDULABLE, 'FakeExtender: node "2" failed'),
        "3": Status(fw.Code.UNSCHEDULABLE, "injected filter status", plugin="FakeFilter"),
    }
    assert statuses["3"].plugin == "FakeFilter" and statuses["1"].plugin == ""
    assert diagnosis.unschedulable_plugins == {"FakeFilter", "Extender"}
    assert str(info.value) == (
        '0/3 nodes are available: 1 FakeExtender: node "1" failed, '
        '1 FakeExtender: node "2" failed, 1 injected filter status.'
    )


def test_unresolvable_extender_reasons_follow_the_plugins_reasons() -> None:
    # upstream findNodesThatPassExtenders: aggregated reasons, then the unresolvable code
    snapshot = Snapshot.from_objects([make_node(n) for n in ("1", "2")], [])
    fwk = make_framework([TrueFilter(), NumericMap()], snapshot)
    algo = Algorithm(snapshot, random.Random(0))

    def split(args: dict[str, object]) -> object:
        return {
            "nodenames": [],
            "failedNodes": {"1": "soft", "2": "ignored: also unresolvable"},
            "failedAndUnresolvableNodes": {"2": "hard"},
        }

    with ExtenderServer(filter=split) as server:
        algo.extenders = (
            HTTPExtender(
                Extender(url_prefix=server.url, filter_verb="filter", node_cache_capable=True)
            ),
        )
        with pytest.raises(FitError) as info:
            algo.schedule_pod(fwk, CycleState(), make_pod("p"))
    statuses = dict(info.value.diagnosis.node_to_status.items())
    assert statuses == {
        "1": Status(fw.Code.UNSCHEDULABLE, "soft"),
        "2": Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "hard"),
    }
