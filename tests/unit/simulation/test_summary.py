"""The summary as text and data, and its small helpers."""

from __future__ import annotations

import json

import pytest

from schedframe.simulation import Arrival, Workload, format_table, simulate
from schedframe.simulation._summary import percentile

from ..explain._builders import node, pod


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert [percentile(values, p) for p in (50, 90, 99, 100)] == [50.0, 90.0, 99.0, 100.0]
    assert percentile([7.0], 50) == 7.0


def test_format_table_aligns_columns() -> None:
    text = format_table(["name", "n"], [["a", 1], ["bbb", None]], align="lr")
    assert text.splitlines() == ["name  n", "----  -", "a     1", "bbb   -"]


def _result() -> object:
    cluster = [
        node("n1", cpu="2", zone="a", extra={"nvidia.com/gpu": "2"}),
        node("n2", cpu="2", zone="b"),
    ]
    wl = Workload(
        tuple(
            Arrival(time=float(i), pod=pod(f"p{i}", cpu="1"), duration=4.0 if i < 2 else None)
            for i in range(6)
        )
        + (Arrival(time=6.0, pod=pod("huge", cpu="3")),)
    )
    return simulate(cluster=cluster, workload=wl)


def test_text_shows_counts_reasons_nodes_zones_and_latency() -> None:
    from schedframe.simulation import SimulationResult

    result = _result()
    assert isinstance(result, SimulationResult)
    text = result.summary().to_text()
    lines = text.splitlines()
    assert lines[0].startswith("Simulated 7 pods on 2 nodes (profiles: default-scheduler; seed 0)")
    assert any(line.startswith("bound") and "completed 2" in line for line in lines)
    assert "Why pods are unschedulable (their last attempt):" in text
    assert "Insufficient cpu" in text
    header = next(line for line in lines if line.startswith("node "))
    assert header.split() == [
        "node", "zone", "pods", "cpu", "memory", "nvidia.com/gpu",
        "cpu", "avg", "memory", "avg", "nvidia.com/gpu", "avg",
        "cpu", "peak", "memory", "peak", "nvidia.com/gpu", "peak",
    ]  # fmt: skip
    assert "Zones:" in text
    assert "Scheduling latency (arrival to binding, virtual time): p50" in text


def test_to_dict_is_json_ready() -> None:
    from schedframe.simulation import SimulationResult

    result = _result()
    assert isinstance(result, SimulationResult)
    summary = result.summary()
    data = json.loads(json.dumps(summary.to_dict()))
    assert data["pods"] == 7
    assert data["bound"] + data["unschedulable"] == 7
    assert [n["name"] for n in data["nodes"]] == ["n1", "n2"]
    assert data["nodes"][0]["allocatable"]["nvidia.com/gpu"] == 2
    assert data["latency"]["max"] == pytest.approx(max(r.latency or 0 for r in result.pods))
    assert summary.pods_per_second > 0 and summary.attempts_per_second > 0
