"""``schedframe replay`` and ``schedframe run --record-trace``: inputs, outputs, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedframe.cli import main
from schedframe.simulation import Trace, TraceEvent
from schedframe.testing.builders import make_node, make_pod

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "replay"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:  # `run` exits itself
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _trace(tmp_path: Path) -> Path:
    pod = make_pod("p").req(cpu="3").obj()
    path = tmp_path / "t.jsonl"
    Trace(
        events=(
            TraceEvent(
                time=0.0,
                type="ADDED",
                kind="Node",
                obj=make_node("n0").capacity(cpu="2", memory="4Gi", pods=10).obj(),
                initial=True,
            ),
            TraceEvent(time=1.0, type="ADDED", kind="Pod", obj=pod),
            TraceEvent(time=1.5, type="MODIFIED", kind="Pod", obj=pod.with_changes(node_name="n0")),
        ),
        source="test",
    ).write(path)
    return path


def test_json_output_is_the_same_bytes_every_time(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _trace(tmp_path)
    runs = [_run(capsys, "replay", str(path), "-o", "json") for _ in range(2)]
    assert runs[0] == runs[1]
    code, out, _ = runs[0]
    assert code == 0
    doc = json.loads(out)
    assert doc["summary"] == {"events": 3, "decisions": 1, "matched": 0, "diverged": 1, "seed": 0}
    (divergence,) = doc["divergences"]
    assert divergence["pod"] == "default/p"
    assert divergence["reason"].startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_the_table_names_the_pod_both_nodes_and_the_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = _run(capsys, "replay", str(_trace(tmp_path)))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Replayed 3 events: 1 scheduling decisions, 0 as recorded, 1 diverged."
    assert lines[4].split()[:6] == ["default/p", "n0", "(pending)", "0/1", "nodes", "are"]


def test_a_bad_trace_is_one_line_naming_file_line_and_field_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"kind":"SchedframeTrace","version":1}\n'
        '{"t":0,"type":"ADDED","kind":"Pod","object":{"metadata":{"name":"p"},'
        '"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"lots"}}}]}}}\n'
    )
    code, out, err = _run(capsys, "replay", str(path))
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"error: {path}:2: object.spec.containers[0].resources.requests.cpu: Invalid value: "
        '"lots": quantities must match the regular expression '
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    ]


def test_a_missing_trace_is_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _run(capsys, "replay", str(tmp_path / "nope.jsonl"))
    assert code == 2
    assert (
        err
        == f"error: {tmp_path / 'nope.jsonl'}: Invalid value: cannot read: No such file or directory\n"
    )


def test_a_pod_history_scenario_is_replayed_too(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "replay", str(EXAMPLE / "history.yaml"), "--seed", "3")
    assert code == 0
    assert out.splitlines()[0] == (
        "Replayed 10 events: 3 scheduling decisions, 1 as recorded, 2 diverged."
    )


def test_a_bad_history_names_the_operation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "h.yaml"
    path.write_text("kind: Scenario\noperations:\n  - {at: 1, op: drain, name: n0}\n")
    code, _, err = _run(capsys, "replay", str(path))
    assert code == 2
    assert err.startswith(f'error: {path}: operations[0].op: Unsupported value: "drain"')


def test_run_refuses_a_trace_path_it_cannot_write_before_connecting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "no-such-dir" / "t.jsonl"
    code, _, err = _run(capsys, "run", "--record-trace", str(target))
    assert code == 2
    assert err == (
        f"Error: {target}: Invalid value: cannot create the trace file (--record-trace): "
        "No such file or directory\n"
    )
