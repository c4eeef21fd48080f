"""The simulate example: team-b reclaims its guaranteed share from team-a by preemption."""

from __future__ import annotations

from pathlib import Path

from schedframe_capacityscheduling import CapacityScheduling

from schedframe.objects import load_manifests
from schedframe.runtime import Registry
from schedframe.simulation import load_workload, simulate

HERE = Path(__file__).resolve().parents[1] / "simulate"


def test_the_simulation_shows_borrowing_then_reclaiming() -> None:
    registry = Registry.discover()
    registry.register("CapacityScheduling", CapacityScheduling, replace=True)
    result = simulate(
        cluster=load_manifests(HERE / "cluster.yaml"),
        workload=load_workload(HERE / "workload.yaml"),
        config=HERE / "config.yaml",
        registry=registry,
    )
    running = {r.key for r in result.pods if r.state == "running"}
    # team-b got its two pods in; team-a kept two of the four it had borrowed room for.
    assert {"team-b/b-0", "team-b/b-1"} <= running
    assert len([k for k in running if k.startswith("team-a/")]) == 2
    assert len(result.victims) == 2
    assert all(v.startswith("team-a/") for v in result.victims)
