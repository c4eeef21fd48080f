"""examples/replay, run as its README says, printing what the README shows."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from schedframe.cli import main

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "examples" / "replay" / "README.md"
_BLOCK = re.compile(r"^  ```(\w+)\n(.*?)^  ```\n", re.M | re.S)


def _blocks() -> list[tuple[str, str]]:
    text = README.read_text(encoding="utf-8")
    return [
        (lang, "\n".join(line.removeprefix("  ") for line in code.splitlines()))
        for lang, code in _BLOCK.findall(text)
    ]


def _run(capsys: pytest.CaptureFixture[str], line: str) -> str:
    words = shlex.split(line)
    assert words[0] == "schedframe"
    code = main(words[1:])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_the_readmes_commands_print_what_it_shows(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    blocks = _blocks()
    assert [lang for lang, _ in blocks] == ["sh", "text", "sh", "text", "sh", "text"]
    for (_, command), (_, shown) in zip(blocks[0:4:2], blocks[1:4:2], strict=True):
        assert _run(capsys, command).rstrip("\n") == shown
    doc = json.loads(_run(capsys, blocks[4][1]))
    rows = [
        f"{d['pod']} {d['kind']} {d['recordedNode']} {d['replayedNode'] or '-'}"
        for d in doc["divergences"]
    ]
    assert "\n".join(rows) == blocks[5][1]
    (pending,) = (d for d in doc["divergences"] if d["kind"] == "pendingInReplay")
    assert pending["reason"].startswith(
        "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory."
    )


def test_the_example_trace_replays_identically_under_every_seed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No score ties in the recorded run: whatever the seed, the cluster's decisions come back.
    monkeypatch.chdir(ROOT)
    outputs = {
        _run(capsys, f"schedframe replay examples/replay/trace.jsonl --seed {seed} -o json")
        for seed in (0, 0, 1, 2)
    }
    summaries = {json.dumps(json.loads(out)["summary"] | {"seed": 0}) for out in outputs}
    assert len(outputs) == 3  # seed 0 twice: the same bytes
    assert summaries == {
        json.dumps({"events": 31, "decisions": 11, "matched": 11, "diverged": 0, "seed": 0})
    }


def test_record_py_records_a_trace_that_replays_like_the_shipped_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("kubernetes")
    pytest.importorskip("aiohttp")
    import os
    import subprocess
    import sys

    fresh = tmp_path / "trace.jsonl"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    subprocess.run(
        [sys.executable, str(ROOT / "examples" / "replay" / "record.py"), str(fresh)],
        check=True,
        env=env,
        timeout=120,
    )
    monkeypatch.chdir(ROOT)
    for config in ("", " -f examples/replay/binpack.yaml"):
        shipped = json.loads(
            _run(capsys, f"schedframe replay examples/replay/trace.jsonl{config} -o json")
        )
        again = json.loads(_run(capsys, f"schedframe replay {fresh}{config} -o json"))
        assert again["summary"] == shipped["summary"]
        assert again["divergences"] == shipped["divergences"]
