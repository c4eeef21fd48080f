"""Replay: what is input and what is outcome in a trace, and the divergence report."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from schedframe.backends import MemoryBackend
from schedframe.config import load_config
from schedframe.objects import Pod, PodCondition
from schedframe.scheduler import Scheduler, VirtualClock
from schedframe.simulation import (
    Divergence,
    Trace,
    TraceEvent,
    TraceRecorder,
    load_trace,
    replay,
)
from schedframe.testing.builders import make_node, make_pod

MOST_ALLOCATED = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {"scoringStrategy": {"type": "MostAllocated"}},
                }
            ],
        }
    ],
}
NO_PREEMPTION = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}},
        }
    ],
}


def _node(name: str, cpu: str) -> object:
    return make_node(name).capacity(cpu=cpu, memory="8Gi", pods=110).obj()


def _added(t: float, obj: object, *, initial: bool = False) -> TraceEvent:
    kind = "Pod" if isinstance(obj, Pod) else "Node"
    return TraceEvent(time=t, type="ADDED", kind=kind, obj=obj, initial=initial)


def _pod_event(t: float, event_type: str, pod: Pod) -> TraceEvent:
    return TraceEvent(time=t, type=event_type, kind="Pod", obj=pod)


def _record(tmp_path: Path, seed: int = 0) -> Path:
    """A deterministic scheduler's run on the memory backend, recorded: six pods arriving
    one a second on three nodes of 2, 3 and 4 cpus, then the first one deleted."""
    clock = VirtualClock(start=0.0)
    backend = MemoryBackend([_node(f"n{i}", str(2 + i)) for i in range(3)], clock=clock)
    sched = Scheduler(load_config(None), backend, clock=clock, deterministic=True, seed=seed)
    path = tmp_path / "trace.jsonl"
    with TraceRecorder(path, source="memory", clock=clock.now).attach(backend):
        for i in range(6):
            clock.advance_to(float(i + 1))
            backend.create(make_pod(f"p{i}").req(cpu="500m").obj())
            sched.run_until_idle()
        clock.advance_to(10.0)
        first = backend.get("Pod", "p0", "default")
        assert isinstance(first, Pod)
        backend.delete(first)
        sched.run_until_idle()
    sched.stop()
    return path


def test_a_trace_replayed_under_its_own_configuration_matches_byte_for_byte(
    tmp_path: Path,
) -> None:
    path = _record(tmp_path)
    first = replay(path)
    assert (first.decisions, first.matched, first.divergences) == (6, 6, ())
    assert first.events == 16  # 3 nodes; 6 pods added and bound; 1 deleted
    again = json.dumps(replay(load_trace(path)).to_dict())
    assert json.dumps(first.to_dict()) == again
    assert first.to_text() == (
        "Replayed 16 events: 6 scheduling decisions, 6 as recorded, 0 diverged."
    )


def test_another_scoring_strategy_reports_the_pods_it_moves(tmp_path: Path) -> None:
    result = replay(_record(tmp_path), MOST_ALLOCATED)
    # LeastAllocated (recorded) spreads over the bigger nodes; MostAllocated packs n0 (2
    # cpus) first: four pods of 500m fill it, the fifth and sixth go to the next fullest.
    recorded = {e.pod: e.recorded_node for e in result.divergences}
    assert {d.pod: d.replayed_node for d in result.divergences} == {
        pod: "n0" if pod < "default/p4" else "n1" for pod in recorded
    }
    assert all(d.kind == "node" for d in result.divergences)
    assert result.replay.placements["default/p4"] == "n1"
    assert result.changed == frozenset(recorded)
    assert result.matched == 6 - len(recorded)


def test_pods_bound_before_recording_stay_and_are_not_decisions() -> None:
    trace = Trace(
        events=(
            _added(0.0, _node("n0", "2"), initial=True),
            _added(0.0, _node("n1", "8"), initial=True),
            _added(0.0, make_pod("old").req(cpu="1").node("n0").obj(), initial=True),
        )
    )
    result = replay(trace)
    assert (result.decisions, result.divergences) == (0, ())
    assert result.replay.placements == {"default/old": "n0"}


def test_another_schedulers_bindings_are_input() -> None:
    other = make_pod("other").scheduler_name("someone-else").req(cpu="1").obj()
    trace = Trace(
        events=(
            _added(0.0, _node("n0", "2"), initial=True),
            _added(1.0, other),
            _pod_event(2.0, "MODIFIED", other.with_changes(node_name="n0")),
            _added(3.0, make_pod("mine").req(cpu="1500m").obj()),
        )
    )
    result = replay(trace)
    assert result.replay.placements == {"default/other": "n0"}
    assert result.decisions == 1
    # The cluster never bound it, and neither did the replay: no divergence.
    assert result.divergences == ()
    assert result.matched == 1
    assert result.replay.pending["default/mine"].startswith(
        "0/1 nodes are available: 1 Insufficient cpu."
    )


def test_a_pod_the_replay_cannot_place_reports_its_last_failure() -> None:
    pod = make_pod("big").req(cpu="3").obj()
    trace = Trace(
        events=(
            _added(0.0, _node("n0", "2"), initial=True),
            _added(1.0, pod),
            _pod_event(1.1, "MODIFIED", pod.with_changes(node_name="n0")),
        )
    )
    (divergence,) = replay(trace).divergences
    assert divergence.kind == "pendingInReplay"
    assert (divergence.recorded_node, divergence.replayed_node) == ("n0", "")
    assert divergence.reason.startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_a_pod_the_cluster_left_pending_reports_its_recorded_condition() -> None:
    pod = make_pod("p").req(cpu="1").obj()
    failed = pod.with_changes(
        status={
            "conditions": (
                PodCondition(
                    type="PodScheduled",
                    status="False",
                    reason="Unschedulable",
                    message="0/1 nodes are available: 1 node(s) were unschedulable.",
                ),
            )
        }
    )
    trace = Trace(
        events=(
            _added(0.0, _node("n0", "2"), initial=True),
            _added(1.0, pod),
            _pod_event(1.1, "MODIFIED", failed),
        )
    )
    result = replay(trace)
    assert result.divergences == (
        Divergence(
            pod="default/p",
            kind="pendingInCluster",
            recorded_node="",
            replayed_node="n0",
            reason="0/1 nodes are available: 1 node(s) were unschedulable.",
        ),
    )
    assert result.to_dict()["divergences"] == [
        {
            "pod": "default/p",
            "kind": "pendingInCluster",
            "recordedNode": "",
            "replayedNode": "n0",
            "reason": "0/1 nodes are available: 1 node(s) were unschedulable.",
        }
    ]


def test_the_clusters_preemptions_are_decided_again_not_replayed() -> None:
    victim = make_pod("low").priority(0).req(cpu="2").node("n0").obj()
    high = make_pod("high").priority(100).req(cpu="2").obj()
    evicted = victim.with_changes(
        status={
            "conditions": (
                PodCondition(
                    type="DisruptionTarget",
                    status="True",
                    reason="PreemptionByScheduler",
                    message="default-scheduler: preempting to accommodate a higher priority pod",
                ),
            )
        }
    )
    trace = Trace(
        events=(
            _added(0.0, _node("n0", "2"), initial=True),
            _added(0.0, victim, initial=True),
            _added(1.0, high),
            _pod_event(1.1, "DELETED", evicted),
            _pod_event(1.2, "MODIFIED", high.with_changes(node_name="n0")),
        )
    )
    assert replay(trace).divergences == ()
    # Without preemption the victim stays, so the preemptor cannot be placed.
    (divergence,) = replay(trace, NO_PREEMPTION).divergences
    assert (divergence.pod, divergence.kind) == ("default/high", "pendingInReplay")
    assert divergence.reason.startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_an_owners_change_is_replayed_at_its_time_and_status_writes_are_not() -> None:
    gated = make_pod("g").scheduling_gates("wait").req(cpu="1").obj()
    released = make_pod("g").req(cpu="1").obj()
    running = released.with_changes(node_name="n0", status={"phase": "Running"})
    trace = Trace(
        events=(
            _added(0.0, _node("n0", "2"), initial=True),
            _added(1.0, gated),
            _pod_event(5.0, "MODIFIED", released),
            _pod_event(5.1, "MODIFIED", released.with_changes(node_name="n0")),
            _pod_event(6.0, "MODIFIED", running),
        )
    )
    result = replay(trace)
    assert result.divergences == ()
    bound = [e for e in result.replay.timelines["default/g"] if e.event == "bound"]
    assert [(e.time, e.node) for e in bound] == [(5.0, "n0")]


def test_the_text_report_lists_each_divergence() -> None:
    pod = make_pod("p").req(cpu="3").obj()
    trace = Trace(
        events=(
            _added(0.0, _node("n0", "2"), initial=True),
            _added(1.0, pod),
            _pod_event(1.1, "MODIFIED", pod.with_changes(node_name="n0")),
        )
    )
    lines = replay(trace).to_text().splitlines()
    assert lines[0] == "Replayed 3 events: 1 scheduling decisions, 0 as recorded, 1 diverged."
    assert lines[2].split() == ["POD", "RECORDED", "REPLAYED", "REASON"]
    assert lines[4].split()[:3] == ["default/p", "n0", "(pending)"]


@pytest.mark.parametrize("seed", [0, 7])
def test_the_same_seed_replays_a_recording_made_with_it(tmp_path: Path, seed: int) -> None:
    result = replay(_record(tmp_path, seed), seed=seed)
    assert result.divergences == ()


def test_a_name_reused_is_compared_by_its_last_pod() -> None:
    first = make_pod("p").uid("one").req(cpu="1").obj()
    second = make_pod("p").uid("two").req(cpu="3").obj()
    trace = Trace(
        events=(
            _added(0.0, _node("n0", "2"), initial=True),
            _added(1.0, first),
            _pod_event(1.1, "MODIFIED", first.with_changes(node_name="n0")),
            _pod_event(2.0, "DELETED", first.with_changes(node_name="n0")),
            _added(3.0, second),  # too big for n0: pending in the cluster and in the replay
        )
    )
    result = replay(trace)
    assert (result.decisions, result.matched, result.divergences) == (1, 1, ())
    events = [(e.time, e.event) for e in result.replay.timelines["default/p"]]
    assert events[:4] == [(1.0, "queued"), (1.0, "bound"), (2.0, "deleted"), (3.0, "queued")]


def test_an_event_the_backend_refuses_is_reported_not_fatal() -> None:
    pod = make_pod("p").req(cpu="1").obj()
    trace = Trace(
        events=(
            _added(0.0, _node("n0", "2"), initial=True),
            TraceEvent(
                time=3.0,
                type="ADDED",
                kind="Pod",
                obj=attrs.evolve(
                    pod, spec=attrs.evolve(pod.spec, priority_class_name="gold", priority=None)
                ),
            ),
        )
    )
    result = replay(trace)
    assert result.replay.rejected == (
        (3.0, "ADDED Pod", 'pods "p" is forbidden: no PriorityClass with name gold was found'),
    )
    assert result.to_text().splitlines()[-2:] == [
        "Events the in-memory API refused (1):",
        '  3s ADDED Pod: pods "p" is forbidden: no PriorityClass with name gold was found',
    ]
