"""``--report FILE`` on simulate, scenario and compare."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedframe.cli import main

ROOT = Path(__file__).resolve().parents[3]
BASIC = ROOT / "examples" / "basic"
CAPACITY = ROOT / "examples" / "capacity"


def test_scenario_writes_its_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "scenario.html"
    assert main(["scenario", str(CAPACITY / "scenario.yaml"), "--report", str(out)]) == 0
    assert f"Report: {out}" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    assert "<title>schedframe scenario report</title>" in page
    assert '<section id="timeline">' in page


def test_compare_writes_its_report_and_keeps_json_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ab.html"
    code = main(
        [
            "compare",
            str(CAPACITY / "ab.yaml"),
            "-b",
            str(BASIC / "binpack.yaml"),
            "--name-a",
            "spread",
            "--name-b",
            "binpack",
            "-o",
            "json",
            "--report",
            str(out),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0
    assert captured.out.lstrip().startswith("{")
    assert "Report:" not in captured.out
    assert f"Report: {out}" in captured.err
    page = out.read_text(encoding="utf-8")
    assert "<title>schedframe comparison: spread / binpack</title>" in page
    assert "<tr><td>default/big</td><td>(pending)</td><td>node-3</td></tr>" in page


def test_an_unwritable_report_fails_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no" / "such" / "dir" / "r.html"
    code = main(
        [
            "simulate",
            "-c",
            str(BASIC / "cluster.yaml"),
            "-w",
            str(BASIC / "workload.yaml"),
            "--no-progress",
            "--report",
            str(missing),
        ]
    )
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert captured.err == f"error: {missing}: cannot write: No such file or directory\n"
