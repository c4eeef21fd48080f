"""simulate(): the real scheduler on the memory backend, in virtual time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schedframe.errors import ConfigError, ManifestError
from schedframe.simulation import Arrival, Progress, Workload, simulate

from ..explain._builders import node, pod

BINPACK: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {"scoringStrategy": {"type": "MostAllocated"}},
                }
            ]
        }
    ],
}


def arrivals(*items: tuple[float, Any, float | None]) -> Workload:
    return Workload(tuple(Arrival(time=t, pod=p, duration=d) for t, p, d in items))


def test_pods_are_bound_and_the_summary_counts_them() -> None:
    nodes = [node("n1", cpu="2", zone="a"), node("n2", cpu="2", zone="b")]
    wl = arrivals(*((0.0, pod(f"p{i}"), None) for i in range(5)))
    result = simulate(cluster=nodes, workload=wl)

    assert len(result.placements()) == 4
    assert sorted(result.placements().values()) == ["n1", "n1", "n2", "n2"]
    summary = result.summary()
    assert (summary.pods, summary.bound, summary.unschedulable, summary.preempted) == (5, 4, 1, 0)
    assert summary.reasons == (("Insufficient cpu", 1),)
    assert [n.utilisation("cpu") for n in summary.nodes] == [1.0, 1.0]
    assert [(z.zone, z.pods) for z in summary.zones] == [("a", 2), ("b", 2)]
    assert summary.latency == {"p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0}
    assert summary.attempts == result.attempts == 5
    pending = [r for r in result.pods if r.state == "pending"]
    assert len(pending) == 1
    assert pending[0].last_message == "0/2 nodes are available: 2 Insufficient cpu. " + (
        "no new claims to deallocate, preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )


def test_same_inputs_same_decisions() -> None:
    nodes = [node(f"n{i}") for i in range(4)]
    wl = arrivals(*((float(i), pod(f"p{i}"), 3.0) for i in range(12)))
    one = simulate(cluster=nodes, workload=wl, seed=3)
    two = simulate(cluster=nodes, workload=wl, seed=3)
    assert [d.to_dict() for d in one.decisions] == [d.to_dict() for d in two.decisions]


def test_completions_free_resources_and_latency_is_virtual_time() -> None:
    nodes = [node("n1", cpu="1")]
    wl = arrivals((0.0, pod("first"), 10.0), (2.0, pod("second"), None))
    result = simulate(cluster=nodes, workload=wl)

    first, second = result.pod("default/first"), result.pod("default/second")
    assert first.state == "completed" and first.completed_at == 10.0
    assert second.state == "running" and second.bound_at == 10.0
    assert second.latency == 8.0
    events = [(d.time, d.event, d.pod) for d in result.decisions]
    assert events[0] == (0.0, "scheduled", "default/first")
    assert (2.0, "unschedulable", "default/second") in events
    assert events[-2:] == [
        (10.0, "completed", "default/first"),
        (10.0, "scheduled", "default/second"),
    ]
    summary = result.summary()
    assert summary.latency["max"] == 8.0
    assert summary.completed == 1 and summary.running == 1
    assert result.end_time == 10.0
    (usage,) = summary.nodes
    assert usage.peak["cpu"] == 1000
    assert usage.average["cpu"] == pytest.approx(1000 * (10 - 2) / 10 + 1000 * 2 / 10)


def test_until_stops_the_run_and_later_pods_have_not_arrived() -> None:
    wl = arrivals((0.0, pod("a"), None), (50.0, pod("b"), None))
    result = simulate(cluster=[node("n1")], workload=wl, until=20)
    assert result.end_time == 20.0
    assert result.pod("default/b").state == "not-arrived"
    assert result.summary().not_arrived == 1


def test_preemption_is_recorded_with_its_preemptor() -> None:
    cluster = [node("n1", cpu="2"), pod("low", cpu="2", node_name="n1", priority=0)]
    wl = arrivals((0.0, pod("high", cpu="2", priority=100), None))
    result = simulate(cluster=cluster, workload=wl)

    assert result.victims == ("default/low",)
    assert result.placements() == {"default/high": "n1"}
    preempted = [d for d in result.decisions if d.event == "preempted"]
    assert [(d.pod, d.node, d.by) for d in preempted] == [("default/low", "n1", "default/high")]
    kinds = [d.event for d in result.decisions]
    # Asynchronous preemption (upstream's default): the victim goes after the attempt ended.
    assert kinds == ["unschedulable", "preempted", "scheduled"]
    assert result.decisions[0].nominated_node == "n1"
    summary = result.summary()
    assert (summary.bound, summary.preempted) == (1, 1)
    assert summary.nodes[0].pods == 1


def test_unbound_cluster_pods_are_scheduled_at_time_zero() -> None:
    result = simulate(cluster=[node("n1"), pod("waiting")])
    assert result.placements() == {"default/waiting": "n1"}


def test_pods_of_unknown_schedulers_are_reported_as_never_attempted() -> None:
    other = pod("other", spec={"schedulerName": "my-scheduler"})
    result = simulate(cluster=[node("n1")], workload=arrivals((0.0, other, None)))
    record = result.pod("default/other")
    assert record.state == "pending"
    assert record.last_message == 'no profile has schedulerName "my-scheduler"'
    assert result.summary().reasons == (('no profile has schedulerName "my-scheduler"', 1),)


def test_a_captured_pod_can_be_explained_as_it_saw_the_cluster() -> None:
    nodes = [node("n1"), node("n2")]
    wl = arrivals(*((0.0, pod(f"p{i}"), None) for i in range(3)))
    result = simulate(cluster=nodes, workload=wl, config=BINPACK, capture=["default/p2"])
    explanation = result.explain("default/p2")
    assert explanation.chosen == result.placements()["default/p2"]
    _, seen = result.captured["default/p2"]
    assert sorted(p.name for p in seen) == ["p0", "p1"]
    with pytest.raises(KeyError):
        result.explain("default/p0")


def test_jsonl_has_one_decision_per_line(tmp_path: Path) -> None:
    nodes = [node("n1", cpu="8"), node("n2")]
    result = simulate(cluster=nodes, workload=arrivals((0.0, pod("a"), 1.0)))
    out = tmp_path / "d.jsonl"
    result.write_jsonl(out)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [d["event"] for d in lines] == ["scheduled", "completed"]
    first = lines[0]
    assert first["node"] == "n1" and first["latency"] == 0.0 and first["attempt"] == 1
    assert (first["evaluatedNodes"], first["feasibleNodes"]) == (2, 2)
    assert [t["node"] for t in first["topNodes"]] == ["n1", "n2"]
    assert lines[1] == {"time": 1.0, "event": "completed", "pod": "default/a", "node": "n1"}


def test_progress_is_reported_at_the_end() -> None:
    seen: list[Progress] = []
    simulate(cluster=[node("n1")], workload=arrivals((0.0, pod("a"), None)), progress=seen.append)
    assert seen[-1].done and seen[-1].bound == 1 and seen[-1].total == 1


def test_a_pod_twice_is_an_error() -> None:
    with pytest.raises(ManifestError, match="workload: metadata.name: Duplicate value"):
        simulate(
            cluster=[node("n1"), pod("a", node_name="n1")],
            workload=arrivals((0.0, pod("a"), None)),
        )


def test_config_errors_from_building_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n  - plugins:\n      filter:\n        enabled: [{name: Nope}]\n"
    )
    with pytest.raises(ConfigError) as info:
        simulate(cluster=[node("n1")], config=path)
    assert str(info.value).startswith(
        f'{path}: profiles[0].plugins.filter.enabled[0].name: Not found: "Nope"'
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_explanations_replay_the_simulated_tie_breaks(seed: int) -> None:
    nodes = [node(f"n{i}", zone=f"z{i % 3}") for i in range(7)]
    wl = arrivals(*((float(i // 3), pod(f"p{i}"), 4.0) for i in range(15)))
    keys = [a.pod.key for a in wl]
    result = simulate(cluster=nodes, workload=wl, seed=seed, capture=keys)
    placed = result.placements()
    assert len(placed) == 15
    assert {key: result.explain(key).chosen for key in keys} == placed
