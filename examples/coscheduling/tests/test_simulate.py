"""The simulate example: a gang starts all together once there is room; one too big never
starts at all."""

from __future__ import annotations

from pathlib import Path

from schedframe_coscheduling import Coscheduling

from schedframe.objects import load_manifests
from schedframe.runtime import Registry
from schedframe.simulation import load_workload, simulate

HERE = Path(__file__).resolve().parents[1] / "simulate"


def test_the_simulation_binds_whole_gangs_only() -> None:
    registry = Registry.discover()
    registry.register("Coscheduling", Coscheduling, replace=True)
    result = simulate(
        cluster=load_manifests(HERE / "cluster.yaml"),
        workload=load_workload(HERE / "workload.yaml"),
        config=HERE / "config.yaml",
        registry=registry,
        until=120,
    )
    records = {r.key: r for r in result.pods}
    train = [records[f"default/train-{i}"] for i in range(3)]
    assert all(r.bound_at is not None for r in train)
    # All three together, after the prep pods finished at t=20.
    assert len({r.bound_at for r in train}) == 1
    assert train[0].bound_at is not None and train[0].bound_at >= 20
    assert all(records[f"default/big-{i}"].bound_at is None for i in range(5))
