"""The report guide's code runs as written, and its commands too."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from schedframe.cli import main

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "guides" / "report.md"


def _blocks(lang: str) -> list[str]:
    text = GUIDE.read_text(encoding="utf-8")
    parts = text.split(f"```{lang}\n")[1:]
    return [p.split("```", 1)[0] for p in parts]


def test_the_guides_python_and_commands_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__report_guide__"}
    python = _blocks("python")
    assert len(python) == 3
    for code in python:
        exec(compile(code, str(GUIDE), "exec"), namespace)
    assert (tmp_path / "spread.html").exists()
    commands = [
        shlex.split(line)
        for block in _blocks("sh")
        for line in block.replace("\\\n", " ").splitlines()
    ]
    assert [c[1] for c in commands] == ["simulate", "scenario", "compare", "replay", "sweep"]
    for words in commands:
        assert main(words[1:]) == 0, words
    for name in ("spread.html", "scenario.html", "ab.html", "replay.html", "sweep.html"):
        assert (tmp_path / name).read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    capsys.readouterr()
