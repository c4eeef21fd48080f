"""examples/sweep and the sweeps guide's Python block run as written."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from schedframe.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_the_sweep_example_spreads_or_packs_as_its_readme_says(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["sweep", "examples/sweep/sweep.yaml", "--jobs", "2", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["cases"], doc["failed"]) == (13, 0)
    counts = {
        (r["input"], r["config"], r["seed"]): (r["bound"], r["pending"]) for r in doc["results"]
    }
    for seed in (0, 1, 2):
        assert counts["ab", "spread", seed] == (3, 1)
        assert counts["ab", "binpack", seed] == (4, 0)
        assert counts["basic", "spread", seed] == (8, 2)
        assert counts["basic", "binpack", seed] == (10, 0)
    assert counts["ab", "binpack", 42] == (4, 0)
    digests = {r["placementDigest"] for r in doc["results"] if r["input"] == "basic"}
    assert len(digests) == 6  # every seed places the basic workload differently


def test_the_sweeps_guides_python_block_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    text = (ROOT / "docs" / "guides" / "sweeps.md").read_text(encoding="utf-8")
    (code,) = re.findall(r"^```python\n(.*?)^```\n", text, flags=re.M | re.S)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/guides/sweeps.md", "exec"), {"__name__": "__docs__"})
    assert out.getvalue().startswith("Sweep: 13 cases, 0 failed (local executor, 2 jobs, ")
    assert "ab binpack 42 4 0\n" in out.getvalue()
