"""The example extender: its verbs, and schedframe simulate running against it."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

import extender  # noqa: E402

from schedframe.cli import main  # noqa: E402


def node(name: str, **labels: str) -> dict[str, object]:
    return {"metadata": {"name": name, "labels": labels}}


def test_filter_rejects_nodes_under_maintenance() -> None:
    result = extender.filter_nodes(
        {"pod": {}, "nodes": {"items": [node("a"), node("b", **{extender.MAINTENANCE: "true"})]}}
    )
    assert [n["metadata"]["name"] for n in result["nodes"]["items"]] == ["a"]
    assert result["failedNodes"] == {"b": "node(s) under maintenance"}


def test_filter_needs_whole_nodes() -> None:
    assert extender.filter_nodes({"pod": {}, "nodenames": ["a"]}) == {
        "error": "this extender needs whole nodes: set nodeCacheCapable: false"
    }


def test_prioritize_scores_tiers() -> None:
    nodes = [
        node("g", **{extender.TIER: "gold"}),
        node("s", **{extender.TIER: "silver"}),
        node("x"),
    ]
    assert extender.prioritize_nodes({"pod": {}, "nodes": {"items": nodes}}) == [
        {"host": "g", "score": 10},
        {"host": "s", "score": 5},
        {"host": "x", "score": 0},
    ]


@pytest.fixture
def url() -> Iterator[str]:
    server = extender.serve(0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _config(tmp_path: Path, url: str, **more: object) -> str:
    config = yaml.safe_load((HERE / "config.yaml").read_text())
    config["extenders"][0].update(urlPrefix=url, **more)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def _simulate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, config: str
) -> tuple[int, list[dict[str, object]]]:
    out_file = tmp_path / "decisions.jsonl"
    code = main(
        [
            "simulate",
            "-c",
            str(HERE / "cluster.yaml"),
            "-w",
            str(HERE / "workload.yaml"),
            "-f",
            config,
            "--decisions",
            str(out_file),
            "--no-progress",
        ]
    )
    capsys.readouterr()
    return code, [json.loads(line) for line in out_file.read_text().splitlines()]


def test_simulate_against_the_extender(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, url: str
) -> None:
    code, decisions = _simulate(capsys, tmp_path, _config(tmp_path, url))
    assert code == 0
    placed = {d["pod"]: d["node"] for d in decisions if d["event"] == "scheduled"}
    assert placed == {f"default/web-{i}": "silver-1" for i in range(4)}


def test_an_unreachable_ignorable_extender_is_skipped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dead = "http://127.0.0.1:9"  # discard port: nothing listens
    code, decisions = _simulate(capsys, tmp_path, _config(tmp_path, dead, ignorable=True))
    assert code == 0
    placed = {d["node"] for d in decisions if d["event"] == "scheduled"}
    # Without the extender nothing keeps gold-1 out, and the default plugins spread.
    assert len([d for d in decisions if d["event"] == "scheduled"]) == 4
    assert "gold-1" in placed
