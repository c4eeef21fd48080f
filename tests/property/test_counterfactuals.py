"""A counterfactual's answer is verified by scheduling it: the suggested change makes the
pods schedule, and no smaller change of the same kind does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe.objects import Pod
from schedframe.scheduler import Scheduler
from schedframe.simulation import cluster_scheduler, counterfactuals, try_change
from schedframe.simulation._whatif import _new_nodes, _with_request
from schedframe.testing.builders import make_node, make_pod

pytestmark = pytest.mark.property


def _sched(free: list[int]) -> Scheduler:
    """Nodes of 4 CPUs with ``4 - free[i]`` CPUs already taken."""
    objects: list[object] = []
    for i, f in enumerate(free):
        objects.append(make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods=110).obj())
        if f < 4:
            objects.append(make_pod(f"run{i}").req(cpu=str(4 - f)).node(f"n{i}").obj())
    return cluster_scheduler(objects)


def _pods(n: int, cpu: int) -> list[Pod]:
    return [make_pod(f"ask{i}").req(cpu=f"{cpu}").obj() for i in range(n)]


@settings(max_examples=15)
@given(
    free=st.lists(st.integers(0, 4), min_size=1, max_size=3),
    n=st.integers(1, 4),
    cpu=st.integers(1, 4),
)
def test_the_nodes_to_add_are_the_fewest_that_make_the_pods_schedule(
    free: list[int], n: int, cpu: int
) -> None:
    sched = _sched(free)
    pods = _pods(n, cpu)
    found = counterfactuals(pods, sched, kinds=["addNodes"], max_nodes=4)
    if try_change(sched, pods) is not None:
        assert found == []
        return
    (s,) = found
    shape = make_node("shape").capacity(cpu="4", memory="8Gi", pods=110).obj()
    assert try_change(sched, pods, nodes=_new_nodes(shape, s.amount)) is not None
    assert try_change(sched, pods, nodes=_new_nodes(shape, s.amount - 1)) is None


@settings(max_examples=15)
@given(free=st.lists(st.integers(0, 4), min_size=1, max_size=3), n=st.integers(1, 3))
def test_the_lowered_request_is_the_largest_that_schedules(free: list[int], n: int) -> None:
    sched = _sched(free)
    pods = _pods(n, 4)
    found = counterfactuals(pods, sched, kinds=["lowerRequest"])
    if try_change(sched, pods) is not None:
        assert found == []
        return
    if not found:  # not even the smallest step fits: nothing to verify but that
        assert try_change(sched, [_with_request(p, "cpu", 10) for p in pods]) is None
        return
    (s,) = found
    assert try_change(sched, [_with_request(p, "cpu", s.amount) for p in pods]) is not None
    assert try_change(sched, [_with_request(p, "cpu", s.amount + 10) for p in pods]) is None


def test_tolerating_the_taint_is_suggested_and_verified() -> None:
    sched = cluster_scheduler(
        [make_node("n0").capacity(cpu="4", memory="8Gi").taint("team", "a").obj()]
    )
    (s,) = counterfactuals([make_pod("p").obj()], sched, kinds=["tolerateTaint"])
    assert (s.kind, s.target, dict(s.placements)) == (
        "tolerateTaint",
        "team=a:NoSchedule",
        {"default/p": "n0"},
    )


def test_the_smallest_max_skew_that_schedules() -> None:
    objects: list[object] = [
        make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods=110).label("zone", f"z{i}").obj()
        for i in range(2)
    ]
    objects += [make_pod(f"w{i}").label("app", "w").node("n0").obj() for i in range(3)]
    objects.append(make_pod("filler").req(cpu="4").node("n1").obj())  # n1 is full
    sched = cluster_scheduler(objects)
    pod = (
        make_pod("new")
        .req(cpu="1")
        .label("app", "w")
        .spread_constraint(1, "zone", {"app": "w"})
        .obj()
    )
    (s,) = counterfactuals([pod], sched, kinds=["raiseMaxSkew"])
    # z0 has 3 pods, z1 none: the new pod on n0 makes a skew of 4.
    assert (s.amount, dict(s.placements)) == (4, {"default/new": "n0"})

    def with_skew(k: int) -> Pod:
        return (
            make_pod("new")
            .req(cpu="1")
            .label("app", "w")
            .spread_constraint(k, "zone", {"app": "w"})
            .obj()
        )

    assert try_change(sched, [with_skew(4)]) is not None
    assert try_change(sched, [with_skew(3)]) is None


def test_moving_one_pod_makes_room() -> None:
    sched = cluster_scheduler(
        [
            make_node("n0").capacity(cpu="4", memory="8Gi", pods=110).obj(),
            make_node("n1").capacity(cpu="4", memory="8Gi", pods=110).obj(),
            make_pod("a").req(cpu="2").node("n0").obj(),
            make_pod("b").req(cpu="2").node("n1").obj(),
        ]
    )
    (s,) = counterfactuals([make_pod("big").req(cpu="4").obj()], sched, kinds=["movePod"])
    assert s.target == "default/a"
    assert s.placements == {"default/big": "n0", "default/a": "n1"}
