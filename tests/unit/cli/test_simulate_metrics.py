"""``schedframe simulate --metrics FILE`` and entry-point observers in simulations."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from schedframe.cli import EXIT_BAD_INPUT, main

from .test_cli import files, run  # noqa: F401  (fixture)


def test_simulate_writes_the_metrics_exposition(
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    target = tmp_path / "metrics.prom"
    code, out, err = run(
        capsys,
        "simulate",
        "-c",
        files["cluster"],
        "-w",
        files["workload"],
        "--metrics",
        str(target),
    )
    assert code == 0, err
    assert f"Metrics: {target}" in out
    values = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(target.read_text())
        for s in family.samples
    }
    scheduled = (("profile", "default-scheduler"), ("result", "scheduled"))
    unschedulable = (("profile", "default-scheduler"), ("result", "unschedulable"))
    assert values[("scheduler_schedule_attempts_total", scheduled)] == 2
    assert values[("scheduler_schedule_attempts_total", unschedulable)] >= 1
    assert values[("scheduler_pending_pods", (("queue", "unschedulable"),))] == 1


def test_simulate_metrics_to_an_unwritable_file_fails_before_running(
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    target = tmp_path / "missing" / "metrics.prom"
    code = main(
        ["simulate", "-c", files["cluster"], "-w", files["workload"], "--metrics", str(target)]
    )
    _, err = capsys.readouterr()
    assert code == EXIT_BAD_INPUT
    assert err.strip().endswith(f"{target}: cannot write: No such file or directory")


def test_simulate_loads_entry_point_observers(
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    import schedframe.hooks

    original = schedframe.hooks.plugin_manager
    asked: list[bool] = []

    def recording(*, load_entry_points: bool = True) -> object:
        asked.append(load_entry_points)
        return original(load_entry_points=False)

    monkeypatch.setattr(schedframe.hooks, "plugin_manager", recording)
    code, _, err = run(capsys, "simulate", "-c", files["cluster"], "-w", files["workload"])
    assert code == 0, err
    assert asked == [True]
