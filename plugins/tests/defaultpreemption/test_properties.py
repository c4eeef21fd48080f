"""Properties of DefaultPreemption on random clusters, with the real NodeResourcesFit filter.

Whatever the cluster, a successful preemption evicts only pods of strictly lower priority than
the preemptor, all from the nominated node; once they are gone the preemptor passes the
filters there, and each victim is needed (putting any one back makes the preemptor unfit
again; resource fit is monotone, so the greedy reprieve guarantees it). A failed preemption
evicts nothing.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe import preemption
from schedframe.cache import Snapshot
from schedframe.objects import Node, Pod, PodDisruptionBudget
from schedframe_plugins.defaultpreemption import DefaultPreemption
from schedframe_plugins.noderesources import Fit

from ._builders import cluster, node, pdb, pod, pre_filter, stored_pods

PRIORITIES = st.sampled_from([-10, 0, 10, 100, 1000])


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[Node], list[Pod], list[PodDisruptionBudget], Pod]:
    nodes: list[Node] = []
    pods: list[Pod] = []
    for i in range(draw(st.integers(1, 4))):
        name = f"node{i}"
        cpu = draw(st.integers(2, 10)) * 100
        max_pods = draw(st.sampled_from(["2", "3", "32"]))
        nodes.append(node(name, {"cpu": f"{cpu}m", "memory": "1Gi", "pods": max_pods}))
        for j in range(draw(st.integers(0, 4))):
            labels = {"app": "x"} if draw(st.booleans()) else None
            pods.append(
                pod(
                    f"p{i}-{j}",
                    node=name,
                    priority=draw(PRIORITIES),
                    req={"cpu": f"{draw(st.integers(0, 4)) * 100}m"},
                    labels=labels,
                )
            )
    pdbs = []
    if draw(st.booleans()):
        pdbs.append(pdb("budget", match_labels={"app": "x"}, allowed=draw(st.integers(0, 2))))
    preemptor = pod(
        "preemptor",
        priority=draw(PRIORITIES),
        req={"cpu": f"{draw(st.integers(1, 8)) * 100}m"},
    )
    return nodes, pods, pdbs, preemptor


def _fits(nodes: list[Node], pods: list[Pod], preemptor: Pod, node_name: str) -> bool:
    fwk, _ = cluster(nodes, pods, [lambda h: Fit(None, h)])
    state = pre_filter(fwk, preemptor)
    node_info = fwk.snapshot_shared_lister().node_infos.get(node_name)
    status = fwk.run_filter_plugins(state, preemptor, node_info)
    return status is None or status.is_success()


@pytest.mark.property
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_victims_are_lower_priority_and_make_room(
    data: tuple[list[Node], list[Pod], list[PodDisruptionBudget], Pod],
) -> None:
    nodes, pods, pdbs, preemptor = data
    fwk, backend = cluster(nodes, pods, [lambda h: Fit(None, h)], pdbs=pdbs)
    state = pre_filter(fwk, preemptor)
    # The filter verdicts of the scheduling cycle: nodes that fit are left out (read as
    # UnschedulableAndUnresolvable), as upstream only preempts where filtering failed.
    statuses = fw.NodeToStatus()
    for ni in fwk.snapshot_shared_lister().node_infos.list():
        status = fwk.run_filter_plugins(state, preemptor, ni)
        if status is not None and not status.is_success():
            statuses.set(ni.name, status)

    result, status = DefaultPreemption(None, fwk).post_filter(state, preemptor, statuses)

    stored = {p.name for p in stored_pods(backend)}
    if status is None or not status.is_success():
        event("no preemption")
        assert stored == {p.name for p in pods}
        return
    event("preempted")
    chosen = state[preemption.CHOSEN_CANDIDATE_KEY]
    assert result == fw.PostFilterResult(fw.NominatingInfo(chosen.name, fw.NominatingMode.OVERRIDE))
    victims = {v.name for v in chosen.victims.pods}
    assert victims
    assert all(v.priority < preemptor.priority for v in chosen.victims.pods)
    assert all(v.spec.node_name == chosen.name for v in chosen.victims.pods)
    assert stored == {p.name for p in pods} - victims
    assert statuses.get(chosen.name).code is fw.Code.UNSCHEDULABLE

    remaining = [p for p in pods if p.name not in victims]
    assert _fits(nodes, remaining, preemptor, chosen.name)
    for victim in chosen.victims.pods:
        assert not _fits(nodes, [*remaining, victim], preemptor, chosen.name)


@pytest.mark.property
@settings(max_examples=50, deadline=None)
@given(clusters())
def test_snapshot_is_left_untouched(
    data: tuple[list[Node], list[Pod], list[PodDisruptionBudget], Pod],
) -> None:
    """The dry runs work on copies: the cycle's snapshot is unchanged afterwards."""
    nodes, pods, pdbs, preemptor = data
    fwk, _ = cluster(nodes, pods, [lambda h: Fit(None, h)], pdbs=pdbs)
    before = {
        ni.name: (sorted(p.pod.name for p in ni.pods), dict(ni.requested))
        for ni in fwk.snapshot_shared_lister().node_infos.list()
    }
    state = pre_filter(fwk, preemptor)
    statuses = fw.NodeToStatus({n.metadata.name: fw.Status(fw.Code.UNSCHEDULABLE) for n in nodes})
    DefaultPreemption(None, fwk).post_filter(state, preemptor, statuses)
    after = {
        ni.name: (sorted(p.pod.name for p in ni.pods), dict(ni.requested))
        for ni in fwk.snapshot_shared_lister().node_infos.list()
    }
    assert after == before
    assert isinstance(fwk.snapshot_shared_lister(), Snapshot)
