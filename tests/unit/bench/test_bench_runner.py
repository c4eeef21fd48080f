"""Smoke test: the benchmark runner runs one small workload once and writes its JSON.

Benchmarks themselves never run in the test suite (``nox -s bench`` runs them).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    doc = json.loads(out.read_text())
    result = doc["workloads"]["SchedulingBasic/500Nodes"]
    assert doc["meta"]["runs"] == 1
    assert result["bound"] == result["measured_pods"] == 100
    assert result["pods_per_s"] > 0
    assert result["peak_rss_mib"] > 0
    assert result["latency_ms_p50"] <= result["latency_ms_p99"]


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
