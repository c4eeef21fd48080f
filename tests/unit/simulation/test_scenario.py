"""Scenarios: decoding with field paths, and what each operation does to the cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedframe.errors import ManifestError
from schedframe.objects import Taint
from schedframe.simulation import (
    Operation,
    Scenario,
    load_scenario,
    run_scenario,
    scenario_from_dict,
)
from schedframe.testing.builders import make_node, make_pdb, make_pod


def _nodes(n: int, cpu: str = "4") -> list[object]:
    return [make_node(f"n{i}").capacity(cpu=cpu, memory="8Gi", pods=110).obj() for i in range(n)]


def test_unknown_fields_and_bad_values_are_reported_with_their_paths() -> None:
    doc = {
        "kind": "Scenario",
        "extra": 1,
        "until": "soon",
        "operations": [
            {"at": 1, "op": "cordon"},
            {"at": 2, "op": "explode"},
            {"at": 3, "op": "scale", "kind": "Job", "name": "j", "replicas": -1, "x": 0},
            {
                "at": 4,
                "op": "createPod",
                "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}},
            },
        ],
    }
    with pytest.raises(ManifestError) as info:
        scenario_from_dict(doc, source="s.yaml")
    assert info.value.paths == [
        "extra",
        "until",
        "operations[0].name",
        "operations[1].op",
        "operations[2].x",
        "operations[2].replicas",
        "operations[3].object.kind",
    ]
    assert str(info.value).startswith("s.yaml: extra: Unknown field")


def test_a_scenario_file_names_itself_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text("kind: Scenario\ncluster: missing.yaml\n")
    with pytest.raises(ManifestError, match=r"scenario.yaml: cluster\[0\]: Not found"):
        load_scenario(path)


def test_cordon_keeps_new_pods_off_and_uncordon_lets_them_back() -> None:
    ops = (
        Operation(at=0, op="cordon", name="n0"),
        Operation(at=1, op="createPod", obj=make_pod("a").req(cpu="1").obj()),
        Operation(at=2, op="uncordon", name="n0"),
        Operation(at=3, op="createPod", obj=make_pod("b").req(cpu="1").obj()),
    )
    result = run_scenario(Scenario(cluster=tuple(_nodes(1)), operations=ops))
    events = [(e.time, e.event) for e in result.timelines["default/a"]]
    assert events[0] == (1.0, "queued")
    assert events[1][1] == "failed"
    assert "node(s) were unschedulable" in result.timelines["default/a"][1].message
    assert result.placements == {"default/a": "n0", "default/b": "n0"}
    assert ("default/a", 2.0) in [
        (k, e.time) for k, v in result.timelines.items() for e in v if e.event == "bound"
    ]


def test_a_taint_keeps_a_pending_pod_pending_with_its_reason() -> None:
    ops = (
        Operation(at=0, op="taint", name="n0", taint=Taint(key="k", effect="NoSchedule")),
        Operation(at=1, op="createPod", obj=make_pod("a").obj()),
    )
    result = run_scenario(Scenario(cluster=tuple(_nodes(1)), operations=ops))
    assert result.pending == {
        "default/a": "0/1 nodes are available: 1 node(s) had untolerated taint(s). "
        "no new claims to deallocate, preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling."
    }


def test_a_drain_is_refused_with_429_while_the_pdb_allows_no_disruption() -> None:
    cluster: list[object] = [
        *_nodes(2, cpu="2"),
        make_pod("w1").label("app", "w").req(cpu="1").node("n0").obj(),
        make_pod("w2").label("app", "w").req(cpu="1").node("n0").obj(),
        make_pdb("w").selector(app="w").min_available(2).obj(),
    ]
    result = run_scenario(
        Scenario(
            cluster=tuple(cluster), operations=(Operation(at=5, op="drain", name="n0"),), until=30
        )
    )
    for key in ("default/w1", "default/w2"):
        refused = [e for e in result.timelines[key] if e.event == "evictionRefused"]
        assert refused and refused[0].message.startswith(
            "429 Cannot evict pod as it would violate the pod's disruption budget."
        )
    assert result.placements == {"default/w1": "n0", "default/w2": "n0"}


def test_a_failed_node_s_pods_are_evicted_after_the_toleration_seconds() -> None:
    cluster: list[object] = [*_nodes(1), make_pod("p").req(cpu="1").node("n0").obj()]
    result = run_scenario(
        Scenario(cluster=tuple(cluster), operations=(Operation(at=10, op="failNode", name="n0"),))
    )
    assert [(e.time, e.event) for e in result.timelines["default/p"]] == [(310.0, "evicted")]
    assert result.placements == {}


def test_scaling_a_statefulset_down_removes_the_highest_ordinals() -> None:
    from schedframe.objects import from_dict

    sts = from_dict(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db"},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "db"}},
                "podManagementPolicy": "Parallel",
                "template": {
                    "metadata": {"labels": {"app": "db"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        }
    )
    result = run_scenario(
        Scenario(
            cluster=(*_nodes(1), sts),
            operations=(Operation(at=5, op="scale", kind="StatefulSet", name="db", replicas=1),),
        )
    )
    assert sorted(result.placements) == ["default/db-0"]
    assert result.timelines["default/db-2"][-1].event == "deleted"


def test_utilisation_and_fragmentation() -> None:
    ops = (Operation(at=1, op="createPod", obj=make_pod("a").req(cpu="3").obj()),)
    result = run_scenario(Scenario(cluster=tuple(_nodes(2)), operations=ops))
    assert [(t, u["cpu"]) for t, u in result.utilisation] == [(0.0, 0.0), (1.0, 3 / 8)]
    # 1 CPU free on one node, 4 on the other: the largest hole holds 4 of 5.
    assert result.fragmentation["cpu"] == pytest.approx(1 - 4 / 5)


def test_the_workload_generator_runs_inside_a_scenario(tmp_path: Path) -> None:
    (tmp_path / "nodes.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n"
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n'
    )
    (tmp_path / "workload.yaml").write_text(
        "kind: Workload\npods:\n  - name: job\n    count: 2\n    arrival: {at: 1, every: 2}\n"
        "    duration: 10\n    template:\n      spec:\n        containers:\n"
        '          - {name: c, image: i, resources: {requests: {cpu: "3"}}}\n'
    )
    (tmp_path / "s.yaml").write_text(
        "kind: Scenario\ncluster: nodes.yaml\nworkload: workload.yaml\n"
        "operations:\n  - {at: 20, op: cordon, name: n0}\n"
    )
    result = run_scenario(load_scenario(tmp_path / "s.yaml"))
    # job-1 waits for job-0 to complete at t=11, then runs 10 s.
    assert [(e.time, e.event) for e in result.timelines["default/job-1"]] == [
        (3.0, "queued"),
        (3.0, "failed"),
        (11.0, "bound"),
        (21.0, "completed"),
    ]
    assert result.placements == {}
    assert result.end_time == 21.0


def test_operations_the_api_refuses_are_reported_not_raised() -> None:
    ops = (
        Operation(at=1, op="cordon", name="ghost"),
        Operation(at=2, op="deletePod", name="nobody"),
        Operation(at=3, op="createPod", obj=make_pod("p").obj()),
        Operation(at=4, op="createPod", obj=make_pod("p").obj()),
        Operation(at=5, op="scale", kind="Deployment", name="web", replicas=2),
    )
    result = run_scenario(Scenario(cluster=tuple(_nodes(1)), operations=ops))
    assert result.rejected == (
        (1.0, "cordon", 'nodes "ghost" not found'),
        (2.0, "deletePod", 'pods "nobody" not found'),
        (4.0, "createPod", 'pods "p" already exists'),
        (5.0, "scale", 'deployments.apps "web" not found'),
    )
    assert result.placements == {"default/p": "n0"}


def test_the_cli_refuses_a_bad_scenario_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from schedframe.cli import main

    path = tmp_path / "s.yaml"
    path.write_text("kind: Scenario\noperations:\n  - {at: 1, op: drain, name: n, bogus: 1}\n")
    assert main(["scenario", str(path)]) == 2
    _, err = capsys.readouterr()
    assert err.splitlines() == [
        f"error: {path}: operations[0].bogus: Unknown field: drain takes at, op, name"
    ]


def test_scaling_a_deployment_down_deletes_the_unbound_pod_first() -> None:
    from schedframe.objects import from_dict

    deployment = from_dict(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [
                            {"name": "c", "image": "i", "resources": {"requests": {"cpu": "2"}}}
                        ]
                    },
                },
            },
        }
    )
    ops = (
        Operation(at=5, op="scale", kind="Deployment", name="web", replicas=2),
        Operation(at=6, op="createNode", obj=make_node("n1").capacity(cpu="4", pods=110).obj()),
        Operation(at=7, op="scale", kind="Deployment", name="web", replicas=4),
    )
    result = run_scenario(Scenario(cluster=(*_nodes(1), deployment), operations=ops))
    deleted = [k for k, v in result.timelines.items() if "deleted" in [e.event for e in v]]
    assert len(deleted) == 1
    # The pending replica went at t=5; scaling to 4 at t=7 created it (and one more) again.
    assert [(e.time, e.event) for e in result.timelines[deleted[0]]] == [
        (0.0, "queued"),
        (0.0, "failed"),
        (5.0, "deleted"),
        (7.0, "queued"),
        (7.0, "bound"),
    ]
    assert sorted(result.placements.values()) == ["n0", "n0", "n1", "n1"]
