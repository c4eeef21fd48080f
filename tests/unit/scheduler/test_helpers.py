"""numFeasibleNodesToFind, selectHost, truncateMessage and the event classification."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe.framework import ActionType, EventResource
from schedframe.objects import (
    Container,
    NodeCondition,
    NodeSpec,
    PodSpec,
    Taint,
    Toleration,
)
from schedframe.scheduler import NodeScore, num_feasible_nodes_to_find, select_host
from schedframe.scheduler._eventhandlers import (
    node_scheduling_properties_change,
    pod_scheduling_properties_change,
)
from schedframe.scheduler._failure import truncate_message
from schedframe.scheduler._schedule_one import _select_row

from ._fakes import make_node, make_pod


# Upstream TestNumFeasibleNodesToFind (global percentage) and the profile-level cases.
@pytest.mark.parametrize(
    ("global_pct", "profile_pct", "num_all", "want"),
    [
        (0, None, 10, 10),  # not set, nodes <= 50
        (40, None, 10, 10),  # set, nodes <= 50
        (0, None, 1000, 420),  # not set, nodes > 50
        (40, None, 1000, 400),  # set, nodes > 50
        (0, None, 6000, 300),  # not set, nodes > 50*125
        (40, None, 6000, 2400),  # set, nodes > 50*125
        (0, 40, 1000, 400),  # profile percentage set
        (40, 0, 1000, 420),  # profile 0 = adaptive, overrides global
        (0, 1, 6000, 100),  # never under 100 nodes
        (0, None, 99, 99),
        (0, None, 100, 100),
        (0, None, 5000, 500),
        (0, None, 5625, 281),
        (100, None, 2000, 2000),
    ],
)
def test_num_feasible_nodes_to_find(
    global_pct: int, profile_pct: int | None, num_all: int, want: int
) -> None:
    assert num_feasible_nodes_to_find(profile_pct, global_pct, num_all) == want


def test_select_host_highest() -> None:
    host, top = select_host(["a", "b", "c", "d"], [1, 7, 3, 7 - 1], random.Random(0))
    assert host == "b"
    assert top == [NodeScore("b", 7), NodeScore("d", 6), NodeScore("c", 3)]


def test_select_host_ties_are_random_but_seeded() -> None:
    names = ["n1", "n2", "n3", "n4"]
    totals = [5, 9, 9, 9]
    picks = Counter(select_host(names, totals, random.Random(seed))[0] for seed in range(300))
    assert set(picks) == {"n2", "n3", "n4"}  # never the lower score, every tie sometimes
    assert min(picks.values()) > 50
    first = [select_host(names, totals, random.Random(42))[0] for _ in range(3)]
    assert len(set(first)) == 1  # same seed, same pick
    rng = random.Random(7)
    seq1 = [select_host(names, totals, rng)[0] for _ in range(20)]
    rng = random.Random(7)
    seq2 = [select_host(names, totals, rng)[0] for _ in range(20)]
    assert seq1 == seq2


def test_select_host_reports_at_most_three() -> None:
    host, top = select_host(["x"], [0], random.Random(0))
    assert host == "x" and top == [NodeScore("x", 0)]
    _, top = select_host([str(i) for i in range(10)], list(range(10)), random.Random(0))
    assert [t.name for t in top] == ["9", "8", "7"]
    with pytest.raises(ValueError, match="empty priorityList"):
        select_host([], [], random.Random(0))


@given(
    # Few distinct totals, so that ties of every size (none, fewer than reported, more) occur.
    totals=st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=12),
    count=st.integers(min_value=1, max_value=4),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_select_row_picks_and_reports_as_select_host(
    totals: list[int], count: int, seed: int
) -> None:
    names = [f"n{i}" for i in range(len(totals))]
    host, top = select_host(names, totals, random.Random(seed), count)
    pick, reported = _select_row(np.array(totals, dtype=np.int64), random.Random(seed), count)
    assert names[pick] == host
    assert [NodeScore(names[i], totals[i]) for i in reported] == top


def test_truncate_message() -> None:
    assert truncate_message("short") == "short"
    long = "x" * 2000
    out = truncate_message(long)
    assert len(out) == 1024 and out.endswith(" ...")


def test_node_scheduling_properties_change() -> None:
    old = make_node("n")
    assert node_scheduling_properties_change(old, old) == []

    def actions(new: object) -> list[ActionType]:
        events = node_scheduling_properties_change(new, old)  # type: ignore[arg-type]
        assert all(e.resource is EventResource.NODE for e in events)
        return [e.action_type for e in events]

    import attrs

    more = attrs.evolve(old, status=attrs.evolve(old.status, allocatable={"cpu": 1}))
    assert actions(more) == [ActionType.UPDATE_NODE_ALLOCATABLE]
    labelled = attrs.evolve(old, metadata=attrs.evolve(old.metadata, labels={"a": "b"}))
    assert actions(labelled) == [ActionType.UPDATE_NODE_LABEL]
    tainted = attrs.evolve(old, spec=NodeSpec(taints=(Taint(key="k", effect="NoSchedule"),)))
    assert actions(tainted) == [ActionType.UPDATE_NODE_TAINT]
    cond = attrs.evolve(
        old,
        status=attrs.evolve(old.status, conditions=(NodeCondition(type="Ready", status="True"),)),
    )
    assert actions(cond) == [ActionType.UPDATE_NODE_CONDITION]
    annotated = attrs.evolve(old, metadata=attrs.evolve(old.metadata, annotations={"x": "y"}))
    assert actions(annotated) == [ActionType.UPDATE_NODE_ANNOTATION]
    # Becoming unschedulable is no event; becoming schedulable again is UpdateNodeTaint.
    cordoned = attrs.evolve(old, spec=NodeSpec(unschedulable=True))
    assert node_scheduling_properties_change(cordoned, old) == []
    assert [e.action_type for e in node_scheduling_properties_change(old, cordoned)] == [
        ActionType.UPDATE_NODE_TAINT
    ]


def test_pod_scheduling_properties_change() -> None:
    import attrs

    old = make_pod("p")
    events = pod_scheduling_properties_change(old, old)
    assert [(e.resource, e.action_type) for e in events] == [
        (EventResource.UNSCHEDULABLE_POD, ActionType.UPDATE)
    ]
    big = attrs.evolve(old, spec=PodSpec(containers=(Container(name="c", requests={"cpu": 500}),)))
    small = attrs.evolve(
        old, spec=PodSpec(containers=(Container(name="c", requests={"cpu": 100}),))
    )
    assert [e.action_type for e in pod_scheduling_properties_change(small, big)] == [
        ActionType.UPDATE_POD_SCALE_DOWN
    ]
    gated = attrs.evolve(old, spec=PodSpec(scheduling_gates=("g",)))
    assert [e.action_type for e in pod_scheduling_properties_change(old, gated)] == [
        ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    ]
    tolerating = attrs.evolve(old, spec=PodSpec(tolerations=(Toleration(key="k"),)))
    assert [e.action_type for e in pod_scheduling_properties_change(tolerating, old)] == [
        ActionType.UPDATE_POD_TOLERATION
    ]
    relabelled = attrs.evolve(old, metadata=attrs.evolve(old.metadata, labels={"a": "b"}))
    bound = relabelled.with_node_name("n")
    events = pod_scheduling_properties_change(bound, old.with_node_name("n"))
    assert [(e.resource, e.action_type) for e in events] == [
        (EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL)
    ]
