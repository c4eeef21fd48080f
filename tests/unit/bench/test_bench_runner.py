"""Smoke test: the benchmark runner runs one small workload once and writes its JSON.

Benchmarks themselves never run in the test suite (``nox -s bench`` runs them).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]


def test_runner_runs_one_quick_workload(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "run.py"),
            "--quick",
            "--workload",
            "SchedulingBasic/500Nodes",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "SchedulingBasic/500Nodes" in proc.stdout
    assert "measured elsewhere" in proc.stdout and "xGo" not in proc.stdout
    doc = json.loads(out.read_text())
    assert doc["meta"]["runs"] == 1
    by_mode = doc["workloads"]["SchedulingBasic/500Nodes"]
    assert list(by_mode) == ["deterministic", "real"]
    for result in by_mode.values():
        assert result["bound"] == result["measured_pods"] == 100
        assert result["pods_per_s"] > 0
        assert result["peak_rss_mib"] > 0
        assert 0 < result["first_binding_s"] <= result["span_s"]
        assert 0 < result["latency_ms_p50"] <= result["latency_ms_p99"]


def test_startup_probe_times_each_step_in_fresh_processes(tmp_path: Path) -> None:
    out = tmp_path / "startup.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "startup.py"), "--runs", "1", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    steps = json.loads(out.read_text())["steps"]
    assert list(steps) == [
        "import schedframe",
        "import config, runtime",
        "import objects",
        "first build",
        "build again",
        "import to first build",
        "first build, objects not imported",
        "import to first build, objects not imported",
    ]
    assert all(step["runs"] == 1 and step["median_ms"] > 0 for step in steps.values())
    first = steps["import to first build"]["median_ms"]
    parts = ("import schedframe", "import config, runtime", "import objects", "first build")
    assert abs(first - sum(steps[p]["median_ms"] for p in parts)) < 1e-6
    assert "first build" in proc.stdout


def test_startup_probe_rejects_zero_runs() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "startup.py"), "--runs", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "--runs must be at least 1" in proc.stderr


def _load_runner() -> Any:
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(bound: int, pods_per_s: float, rss: float) -> dict[str, Any]:
    return {
        "measured_pods": 10,
        "bound": bound,
        "pods_per_s": pods_per_s,
        "cpu_ms_per_pod": pods_per_s / 100,
        "latency_ms_p50": 1.0,
        "latency_ms_p90": 2.0,
        "latency_ms_p99": 3.0,
        "wall_s": 1.0,
        "span_s": 1.0,
        "first_binding_s": 0.1,
        "create_s": 0.5,
        "build_s": 0.2,
        "peak_rss_mib": rss,
    }


def test_aggregate_takes_every_figure_from_all_runs() -> None:
    runner = _load_runner()
    agg = runner.aggregate([_run(10, 100.0, 50.0), _run(7, 300.0, 70.0), _run(9, 200.0, 60.0)])
    # bound came from the first run only before: 10, although one run bound 7.
    assert agg["bound"] == 9.0
    assert (agg["bound_min"], agg["bound_max"]) == (7, 10)
    assert agg["bound_all_runs"] == [10, 7, 9]
    assert (agg["pods_per_s"], agg["pods_per_s_min"], agg["pods_per_s_max"]) == (200.0, 100, 300)
    assert agg["cpu_ms_per_pod"] == 2.0
    assert agg["peak_rss_mib"] == 70.0
    assert agg["runs"] == 3


def test_aggregate_refuses_runs_of_different_sizes() -> None:
    runner = _load_runner()
    other = {**_run(10, 1.0, 1.0), "measured_pods": 20}
    with pytest.raises(ValueError, match="different sizes"):
        runner.aggregate([_run(10, 1.0, 1.0), other])


def test_runner_runs_the_kubernetes_backend_against_the_fake_api_server(tmp_path: Path) -> None:
    pytest.importorskip("aiohttp")
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "run.py"),
            "--quick",
            "--mode",
            "kubernetes",
            "--workload",
            "SchedulingBasic/500Nodes",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())["workloads"]["SchedulingBasic/500Nodes"]["kubernetes"]
    # Init and measured pods are all pre-created: 50 + 100 at 1/10 scale.
    assert result["bound"] == result["measured_pods"] == 150
    assert 0 < result["sync_s"] < result["first_binding_s"] <= result["span_s"]


def test_deterministic_mode_leaves_skip_wait_pods_to_the_measured_window() -> None:
    # As upstream and as real mode: a createPods op with skipWaitToCompletion is not waited
    # for, so its pods' first attempts fall in the measured op's window. Deterministic mode
    # drained them first before, and its window held only the measured pods' attempts.
    runner = _load_runner()
    workload = {
        "name": "Unschedulable/tiny",
        "ops": [
            {"op": "createNodes", "count": 5, "template": "node-default"},
            {
                "op": "createPods",
                "count": 3,
                "template": "pod-large-cpu",
                "namespace": "sched-0",
                "skipWaitToCompletion": True,
            },
            {
                "op": "createPods",
                "count": 4,
                "template": "pod-default",
                "namespace": "sched-1",
                "collectMetrics": True,
            },
        ],
    }
    result = runner.run_once(workload, 1.0, mode="deterministic")
    assert result["bound"] == result["measured_pods"] == 4
    assert result["cycles"] == 3 + 4


def test_csi_volume_strategies_make_upstreams_objects() -> None:
    runner = _load_runner()
    objects = runner._Objects()
    node_op = {
        "template": "node-default",
        "nodeAllocatableStrategy": {
            "nodeAllocatable": {"attachable-volumes-csi-ebs.csi.aws.com": "39"},
            "csiNodeAllocatable": {"ebs.csi.aws.com": {"count": 39}},
        },
    }
    node, csi_node = objects.node_dicts(node_op, 0)
    name = node["metadata"]["name"]
    assert node["status"]["capacity"]["attachable-volumes-csi-ebs.csi.aws.com"] == "39"
    assert node["status"]["capacity"]["cpu"] == "4"  # the template's capacity stays
    assert csi_node["metadata"] == {"name": name}
    assert csi_node["spec"]["drivers"] == [
        {"name": "ebs.csi.aws.com", "nodeID": name, "allocatable": {"count": 39}}
    ]
    pod_op = {
        "template": "pod-default",
        "persistentVolumeTemplate": "pv-csi",
        "persistentVolumeClaimTemplate": "pvc",
    }
    for n in range(2):  # claim and volume N for the N-th pod of a namespace, bound together
        pvc, pv, pod = objects.pod_dicts(pod_op, "sched-1")
        assert (pvc["metadata"]["name"], pvc["metadata"]["namespace"]) == (f"pvc-{n}", "sched-1")
        assert pvc["spec"]["volumeName"] == pv["metadata"]["name"] == f"sched-1-vol-{n}"
        assert pv["spec"]["csi"] == {
            "driver": "ebs.csi.aws.com",
            "volumeHandle": f"sched-1-vol-{n}",
        }
        assert pv["spec"]["claimRef"]["name"] == f"pvc-{n}"
        assert pv["status"] == pvc["status"] == {"phase": "Bound"}
        assert pod["spec"]["volumes"] == [
            {"name": "vol", "persistentVolumeClaim": {"claimName": f"pvc-{n}"}}
        ]
    assert objects.pod_dicts(pod_op, "sched-0")[0]["metadata"]["name"] == "pvc-0"


def test_csi_volume_limits_bind_in_the_runner() -> None:
    # Two nodes with room for one CSI volume each: the third pod's volume fits nowhere.
    runner = _load_runner()
    workload = {
        "name": "SchedulingCSIPVs/tiny",
        "ops": [
            {
                "op": "createNodes",
                "count": 2,
                "template": "node-default",
                "nodeAllocatableStrategy": {
                    "nodeAllocatable": {"attachable-volumes-csi-ebs.csi.aws.com": "1"},
                    "csiNodeAllocatable": {"ebs.csi.aws.com": {"count": 1}},
                },
            },
            {
                "op": "createPods",
                "count": 3,
                "template": "pod-default",
                "namespace": "sched-1",
                "persistentVolumeTemplate": "pv-csi",
                "persistentVolumeClaimTemplate": "pvc",
                "collectMetrics": True,
            },
        ],
    }
    result = runner.run_once(workload, 1.0, mode="deterministic")
    assert (result["bound"], result["measured_pods"]) == (2, 3)
