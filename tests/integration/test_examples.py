"""Every shipped example, run as its README says: placements, summaries and explanations."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from schedframe.cli import main

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def simulate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, example: str, *extra: str
) -> tuple[str, list[dict[str, object]]]:
    """Run ``schedframe simulate`` on an example; its summary and its decisions."""
    out_file = tmp_path / f"{example}.jsonl"
    folder = EXAMPLES / example
    code = main(
        [
            "simulate",
            "-c",
            str(folder / "cluster.yaml"),
            "-w",
            str(folder / "workload.yaml"),
            "--decisions",
            str(out_file),
            "--no-progress",
            *extra,
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    decisions = [json.loads(line) for line in out_file.read_text().splitlines()]
    return out, decisions


def placements(decisions: list[dict[str, object]]) -> dict[str, str]:
    return {str(d["pod"]): str(d["node"]) for d in decisions if d["event"] == "scheduled"}


def summary_row(text: str, first: str) -> list[str]:
    return next(line.split() for line in text.splitlines() if line.startswith(first + " "))


def test_basic_spreading_leaves_no_room_for_the_batch_jobs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out, decisions = simulate(
        capsys, tmp_path, "basic", "-f", str(EXAMPLES / "basic" / "spread.yaml")
    )
    placed = placements(decisions)
    assert sorted(placed) == [f"default/web-{i}" for i in range(8)]
    assert Counter(placed.values()) == {"node-a1": 2, "node-a2": 2, "node-b1": 2, "node-b2": 2}
    assert summary_row(out, "bound")[:2] == ["bound", "8"]
    assert summary_row(out, "unschedulable") == ["unschedulable", "2"]
    assert summary_row(out, "preempted") == ["preempted", "0"]
    assert summary_row(out, "Insufficient") == ["Insufficient", "cpu", "2"]
    for node in ("node-a1", "node-a2", "node-b1", "node-b2"):
        assert summary_row(out, node)[:5] == [
            node,
            node[:6].replace("node", "zone"),
            "2",
            "50%",
            "50%",
        ]


def test_basic_bin_packing_fits_the_batch_jobs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out, decisions = simulate(
        capsys, tmp_path, "basic", "-f", str(EXAMPLES / "basic" / "binpack.yaml")
    )
    placed = placements(decisions)
    web = Counter(node for pod, node in placed.items() if "web" in pod)
    batch = sorted(node for pod, node in placed.items() if "batch" in pod)
    assert sorted(web.values()) == [4, 4]
    assert batch and len(batch) == 2 and not set(batch) & set(web)
    assert [d["time"] for d in decisions if d["event"] == "completed"] == [35.0, 35.0]
    assert summary_row(out, "bound") == ["bound", "10", "running", "8,", "completed", "2"]
    assert summary_row(out, "unschedulable") == ["unschedulable", "0"]
    assert "Why pods are unschedulable" not in out


def test_basic_is_deterministic(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = str(EXAMPLES / "basic" / "binpack.yaml")
    _, one = simulate(capsys, tmp_path, "basic", "-f", config)
    _, two = simulate(capsys, tmp_path, "basic", "-f", config)
    assert one == two


def test_taints_and_affinity(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out, decisions = simulate(capsys, tmp_path, "taints-affinity")
    placed = placements(decisions)
    assert placed["default/trainer"] in ("gpu-1", "gpu-2")
    assert placed["default/db"] == "general-ssd"
    assert placed["default/web"] == "general-hdd"
    assert "default/stuck" not in placed
    assert summary_row(out, "bound")[:2] == ["bound", "3"]
    assert summary_row(out, "unschedulable") == ["unschedulable", "1"]
    reasons = out.split("Why pods are unschedulable (their last attempt):")[1].split("\n\n")[0]
    assert [line.rsplit(None, 1) for line in reasons.strip().splitlines()[2:]] == [
        ["node(s) didn't match Pod's node affinity/selector", "1"],
        ["node(s) had untolerated taint(s)", "1"],
        ["node(s) were unschedulable", "1"],
    ]


def test_explain_a_pod_that_fails_on_every_node_for_several_reasons(
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = EXAMPLES / "taints-affinity"
    code = main(
        [
            "explain",
            "stuck",
            "-c",
            str(folder / "cluster.yaml"),
            "-w",
            str(folder / "workload.yaml"),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:2] == [
        "Pod default/stuck (profile default-scheduler): stays pending. "
        "Every node was evaluated (no sampling).",
        "0/5 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match Pod's "
        "node affinity/selector, 2 node(s) had untolerated taint(s). no new claims to deallocate, "
        "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.",
    ]
    table = lines[lines.index("Nodes:") + 1 :]
    rows = {line.split()[0]: line for line in table[2:]}
    taint = "TaintToleration (UnschedulableAndUnresolvable): node(s) had untolerated taint(s)"
    selector = (
        "NodeAffinity (UnschedulableAndUnresolvable): "
        "node(s) didn't match Pod's node affinity/selector"
    )
    assert rows["gpu-1"].endswith(taint) and rows["gpu-2"].endswith(taint)
    assert rows["general-ssd"].endswith(selector) and rows["general-hdd"].endswith(selector)
    assert rows["cordoned"].endswith(
        "NodeUnschedulable (UnschedulableAndUnresolvable): node(s) were unschedulable"
    )
    assert all(" filtered " in row for row in rows.values())
    assert (
        "PostFilter (dry run, nothing evicted): Unschedulable by DynamicResources: no new claims "
        "to deallocate, preemption: 0/5 nodes are available: 5 Preemption is not helpful for "
        "scheduling."
    ) in lines


def test_explain_why_web_prefers_the_hdd_node(capsys: pytest.CaptureFixture[str]) -> None:
    folder = EXAMPLES / "taints-affinity"
    code = main(
        ["explain", "web", "-c", str(folder / "cluster.yaml"), "-w", str(folder / "workload.yaml")]
    )
    out, _ = capsys.readouterr()
    assert code == 0
    assert "would be bound to general-hdd; 2/5 nodes feasible" in out
    row = next(line for line in out.splitlines() if line.startswith("general-ssd "))
    # 663 under v1.36's BalancedAllocation (the change in balance; 686 with v1.35's formula).
    assert row.endswith("below general-hdd (663): lower on NodeAffinity -200 (0 vs 200)")


def test_zone_spread_ends_even(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out, decisions = simulate(capsys, tmp_path, "zone-spread")
    placed = placements(decisions)
    assert len(placed) == 7
    zone_of = {f"node-{z}{i}": f"zone-{z}" for z in "abc" for i in (1, 2)}
    new_per_zone = Counter(zone_of[node] for node in placed.values())
    assert new_per_zone == {"zone-a": 1, "zone-b": 3, "zone-c": 3}
    # The first six go to zone-b and zone-c; only the seventh joins the two old pods in zone-a.
    order = [zone_of[placed[f"default/web-{i}"]] for i in range(7)]
    assert "zone-a" not in order[:4]
    for zone in ("zone-a", "zone-b", "zone-c"):
        assert summary_row(out, zone)[:3] == [zone, "2", "3"]
    assert [d["time"] for d in decisions] == [float(i) for i in range(7)]


def test_preemption(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out, decisions = simulate(capsys, tmp_path, "preemption")
    story = [(d["event"], d["pod"], d.get("node"), d.get("by")) for d in decisions]
    assert story == [
        ("unschedulable", "default/critical", None, None),
        ("preempted", "default/batch", "node-1", "default/critical"),  # evicted after the cycle
        ("scheduled", "default/critical", "node-1", None),
        ("unschedulable", "default/late-batch", None, None),
    ]
    assert decisions[0]["nominatedNode"] == "node-1"
    assert decisions[3]["time"] == 5.0
    assert decisions[3]["message"] == (
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: "
        "0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    assert summary_row(out, "bound")[:2] == ["bound", "1"]
    assert summary_row(out, "unschedulable") == ["unschedulable", "1"]
    assert summary_row(out, "preempted") == ["preempted", "1"]


def test_explain_preemption_is_a_dry_run(capsys: pytest.CaptureFixture[str]) -> None:
    folder = EXAMPLES / "preemption"
    code = main(
        [
            "explain",
            "critical",
            "-c",
            str(folder / "cluster.yaml"),
            "-w",
            str(folder / "workload.yaml"),
        ]
    )
    out, _ = capsys.readouterr()
    assert code == 0
    assert (
        "PostFilter (dry run, nothing evicted): Success; would nominate node-1 and evict "
        "default/batch"
    ) in out


def test_the_readme_demo_runs_the_basic_scenario() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "demo.py")],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=300,
    )
    out = done.stdout
    spread, binpack = out.split("== Bin-packing (MostAllocated) ==")
    assert spread.startswith("== Spreading (LeastAllocated, kube-scheduler's default) ==")
    assert "Simulated 10 pods on 4 nodes" in spread and "unschedulable      2" in spread
    assert "Simulated 10 pods on 4 nodes" in binpack and "unschedulable      0" in binpack


def test_statefulset_volumes_places_every_replica(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out, decisions = simulate(capsys, tmp_path, "statefulset-volumes")
    placed = placements(decisions)
    assert sorted(placed) == [f"default/db-{i}" for i in range(4)]
    assert summary_row(out, "bound")[:2] == ["bound", "4"]
    # Two static zonal volumes per zone: two replicas per zone.
    assert Counter(node[len("node-") : -1] for node in placed.values()) == {"a": 2, "b": 2}


def test_dra_training_job_gets_gpu_halves_and_big_waits(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out, decisions = simulate(capsys, tmp_path, "dra-training")
    placed = placements(decisions)
    assert len(placed) == 3
    assert all(p.startswith("default/train-") for p in placed)
    assert Counter(placed.values()) == {"gpu-node-1": 1, "gpu-node-2": 2}
    (big,) = [d for d in decisions if d["pod"] == "default/big"]
    assert big["event"] == "unschedulable"
    assert big["message"] == (
        "0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert summary_row(out, "bound")[1] == "3"


def test_dra_explain_shows_the_failed_device_requests_per_node(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out, _ = simulate(capsys, tmp_path, "dra-training", "--explain", "default/big")
    details = out[out.index("Details of filtered nodes:") :].splitlines()
    assert details[1:7] == [
        "  gpu-node-1 (DynamicResources):",
        "    claim default/big-gpu-bdf7n, request gpu: wants 1; 1 matching device(s) on the "
        "node, 1 not allocated, 0 within the remaining shared counters",
        "  gpu-node-2 (DynamicResources):",
        "    claim default/big-gpu-bdf7n, request gpu: wants 1; 1 matching device(s) on the "
        "node, 1 not allocated, 0 within the remaining shared counters",
        "  cpu-node (DynamicResources):",
        "    claim default/big-gpu-bdf7n, request gpu: wants 1; 0 matching device(s) on the "
        "node, 0 not allocated",
    ]


def test_dra_extended_resources_come_from_devices_and_device_plugins(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out, decisions = simulate(capsys, tmp_path, "dra-extended-resources")
    placed = placements(decisions)
    assert Counter(placed.values()) == {"dra-node-1": 2, "dra-node-2": 2, "plugin-node": 1}
    (waiting,) = [d for d in decisions if d["event"] == "unschedulable"]
    assert str(waiting["message"]).startswith(
        "0/3 nodes are available: 1 Insufficient example.com/gpu, 2 cannot allocate all "
        "claims. still not schedulable, preemption: "
    )
    # explain names the pod's in-memory claim and the request Filter made for it per node
    # (container 0's second resource by name: cpu, example.com/gpu, memory).
    out, _ = simulate(capsys, tmp_path, "dra-extended-resources", "--explain", str(waiting["pod"]))
    details = out[out.index("Details of filtered nodes:") :].splitlines()
    assert details[1:5] == [
        "  dra-node-1 (DynamicResources):",
        "    claim default/<extended-resources>, request container-0-request-1: wants 1; "
        "2 matching device(s) on the node, 0 not allocated",
        "  dra-node-2 (DynamicResources):",
        "    claim default/<extended-resources>, request container-0-request-1: wants 1; "
        "2 matching device(s) on the node, 0 not allocated",
    ]
    # Without the gate the DRA nodes offer no example.com/gpu: only the device-plugin GPU.
    out, decisions = simulate(
        capsys, tmp_path, "dra-extended-resources", "--feature-gates", "DRAExtendedResource=false"
    )
    assert Counter(placements(decisions).values()) == {"plugin-node": 1}


# -- capacity questions (examples/capacity) ----------------------------------------------------

CAPACITY = EXAMPLES / "capacity"


def test_capacity_scenario_drains_through_the_pdb_and_survives_a_node_failure(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["scenario", str(CAPACITY / "scenario.yaml"), "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["pending"] == {}
    assert set(doc["placements"].values()) == {"node-1", "node-4"}
    events = Counter(e["event"] for tl in doc["timelines"].values() for e in tl)
    assert events["evictionRefused"] == 1
    assert events["evicted"] == 4  # two drained from node-3, two lost with node-2
    assert events["preempted"] == 1


def test_capacity_fit_reports_the_victim_and_its_pdb(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["fit", "-c", str(CAPACITY / "running.yaml"), str(CAPACITY / "api.yaml"), "-o", "json"]
    )
    out, _ = capsys.readouterr()
    assert code == 1
    doc = json.loads(out)
    assert doc["fits"] is False
    assert len(doc["placements"]) == 2
    assert [(v["pod"], v["pdbs"], v["violatesPdb"]) for v in doc["victims"]] == [
        ("default/batch", ["default/batch"], True)
    ]
    (reason,) = doc["pending"].values()
    assert "1 node(s) had untolerated taint(s), 2 Insufficient cpu" in reason


def test_capacity_whatif_suggests_one_node_a_toleration_or_smaller_requests(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        ["whatif", "-c", str(CAPACITY / "running.yaml"), str(CAPACITY / "api.yaml"), "--json"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    found = [(s["kind"], s["amount"], s["target"]) for s in json.loads(out)]
    assert found == [
        ("addNodes", 1, "node-1"),
        ("tolerateTaint", 1, "dedicated=infra:NoSchedule"),
        ("lowerRequest", 1000, "cpu"),
    ]


def test_capacity_compare_spread_and_binpack(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "compare",
            str(CAPACITY / "ab.yaml"),
            "-b",
            str(EXAMPLES / "basic" / "binpack.yaml"),
            "--name-a",
            "spread",
            "--name-b",
            "binpack",
            "-o",
            "json",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["pendingOnly"] == {"spread": ["default/big"], "binpack": []}
    assert doc["placementDiff"]["default/big"] == {"spread": "", "binpack": "node-3"}
    assert doc["spread"]["fragmentation"]["cpu"] > doc["binpack"]["fragmentation"]["cpu"]


def test_capacity_fork_script_discards_then_commits() -> None:
    done = subprocess.run(
        [sys.executable, str(CAPACITY / "fork.py")],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.stdout.splitlines() == [
        "without node-2, web-2 goes to: node-1",
        "and evicts: default/batch",
        "discarded; original unchanged: True",
        "committed 2 write(s)",
        "report runs on node-2 in the original cluster",
    ]
