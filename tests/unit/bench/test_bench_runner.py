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
