"""The HTML reports of a replay and of a sweep: their figures, tables and determinism."""

from __future__ import annotations

import html
import re
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe.cli import main
from schedframe.report import render_report
from schedframe.simulation import (
    CaseResult,
    Divergence,
    ReplayResult,
    SweepCase,
    SweepResult,
    load_scenario,
    replay,
    trace_from_scenario,
)

ROOT = Path(__file__).resolve().parents[3]
REPLAY = ROOT / "examples" / "replay"


def _figure(page: str, label: str) -> str:
    found = re.search(rf'data-figure="{re.escape(label)}"><span class="v">([^<]*)</span>', page)
    assert found is not None, label
    return html.unescape(found.group(1))


def _rows(page: str, table_id: str) -> list[list[str]]:
    """The text of each body row of a table (hidden spans left out)."""
    found = re.search(rf'<table[^>]*id="{table_id}".*?<tbody>(.*?)</tbody>', page, re.S)
    assert found is not None, table_id
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", found.group(1), re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)
        rows.append(
            [
                html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"<span hidden>.*?</span>", "", c)))
                for c in cells
            ]
        )
    return rows


def _history() -> ReplayResult:
    trace = trace_from_scenario(load_scenario(REPLAY / "history.yaml"), name="history.yaml")
    return replay(trace)


# --------------------------------------------------------------------------------------------
# A replay
# --------------------------------------------------------------------------------------------


def test_a_replay_report_counts_the_divergences_by_kind() -> None:
    page = render_report(_history())
    assert "<title>schedframe replay report</title>" in page
    expected = {
        "pods": "4",
        "events replayed": "10",
        "decisions": "3",
        "as recorded": "1",
        "diverged": "2",
        "diverged: node": "1",
        "diverged: pendingInReplay": "1",
        "diverged: pendingInCluster": "0",
        "refused events": "0",
        "bound": "2",
        "pending": "1",
    }
    assert {label: _figure(page, label) for label in expected} == expected
    assert "Divergences (2)" in page
    assert "Pending pods (1)" in page


def test_a_replay_report_lists_each_divergence_with_its_message() -> None:
    page = render_report(_history())
    rows = _rows(page, "divergence-table")
    assert [r[:4] for r in rows] == [
        ["default/api-1", "node-a", "node-b", "node"],
        ["default/batch-0", "node-b", "(pending)", "pendingInReplay"],
    ]
    assert rows[0][4:] == ["", ""]
    assert rows[1][4].startswith("0/2 nodes are available: 2 Insufficient cpu")
    assert rows[1][5] == ""
    # The pending pod is explained plugin by plugin against the replay's final cluster.
    assert "NodeResourcesFit" in page and "default/batch-0" in page


def test_the_clusters_message_goes_in_its_own_column_escaped() -> None:
    result = _history()
    extra = Divergence(
        pod="default/late",
        kind="pendingInCluster",
        recorded_node="",
        replayed_node="node-a",
        reason="0/2 nodes <b>are</b> available",
    )
    page = render_report(attrs.evolve(result, divergences=(*result.divergences, extra)))
    rows = _rows(page, "divergence-table")
    assert rows[-1] == [
        "default/late",
        "(pending)",
        "node-a",
        "pendingInCluster",
        "",
        "0/2 nodes <b>are</b> available",
    ]
    assert "&lt;b&gt;are&lt;/b&gt;" in page
    assert _figure(page, "diverged: pendingInCluster") == "1"


def test_a_replay_with_no_divergence_says_so() -> None:
    result = replay(REPLAY / "trace.jsonl")
    page = render_report(result)
    assert _figure(page, "events replayed") == "31"
    assert _figure(page, "decisions") == "11"
    assert _figure(page, "as recorded") == "11"
    assert _figure(page, "diverged") == "0"
    assert "None: every decision came out as the cluster made it." in page
    assert 'id="divergence-table"' not in page


def test_refused_events_are_counted_and_listed() -> None:
    result = _history()
    refused = attrs.evolve(
        result.replay, rejected=((12.5, "ADDED Pod", 'pods "x" already exists'),)
    )
    page = render_report(attrs.evolve(result, replay=refused))
    assert _figure(page, "refused events") == "1"
    assert "Events the in-memory API refused (1)" in page
    assert "pods &quot;x&quot; already exists" in page


def test_a_replay_report_is_the_same_twice() -> None:
    assert render_report(_history()) == render_report(_history())


def test_replay_report_from_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "replay.html"
    code = main(
        [
            "replay",
            str(REPLAY / "trace.jsonl"),
            "-f",
            str(REPLAY / "binpack.yaml"),
            "--report",
            str(out),
        ]
    )
    assert code == 0
    assert f"Report: {out}" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    assert _figure(page, "diverged") == "6"
    assert _figure(page, "diverged: node") == "6"
    assert [r[0] for r in _rows(page, "divergence-table")] == [
        "default/batch-0",
        "default/web-0",
        "default/web-1",
        "default/web-2",
        "default/web-3",
        "default/web-5",
    ]


def test_an_unwritable_replay_report_fails_before_the_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "missing" / "r.html"
    code = main(["replay", str(REPLAY / "trace.jsonl"), "--report", str(bad)])
    assert code == 2
    err = capsys.readouterr().err
    assert f"{bad}: cannot write" in err
    assert "Traceback" not in err


# --------------------------------------------------------------------------------------------
# A sweep
# --------------------------------------------------------------------------------------------


def _case(
    i: int, config: str, seed: int, bound: int, pending: int, cpu: float, *, error: str = ""
) -> CaseResult:
    case = SweepCase(id=i, input="ab", kind="scenario", config=config, seed=seed)
    if error:
        return CaseResult(case=case, error=error)
    return CaseResult(
        case=case,
        bound=bound,
        pending=pending,
        attempts=bound + pending,
        end_time=10.0,
        placement_digest=f"sha256:{i:064x}",
        utilisation={"cpu": {"end": cpu, "mean": cpu / 2}, "memory": {"end": 0.25, "mean": 0.1}},
        latency={"p50": 0.5, "p90": 1.0, "p99": 2.0, "max": 2.5},
    )


def _sweep(**kw: object) -> SweepResult:
    results = (
        _case(0, "spread", 0, 3, 1, 0.25),
        _case(1, "spread", 1, 2, 2, 0.125),
        _case(2, "spread", 2, 4, 0, 0.5),
        _case(3, "binpack", 0, 4, 0, 0.75),
        _case(4, "binpack", 1, 0, 0, 0.0, error="boom <here>\nsecond line"),
    )
    return SweepResult(results=results, **kw)  # type: ignore[arg-type]


def test_a_sweep_report_summarises_each_configuration_over_its_seeds() -> None:
    page = render_report(_sweep())
    assert "<title>schedframe sweep report</title>" in page
    figs = {k: _figure(page, k) for k in ("cases", "ran", "failed", "inputs", "configs", "seeds")}
    assert figs == {
        "cases": "5",
        "ran": "4",
        "failed": "1",
        "inputs": "1",
        "configs": "2",
        "seeds": "3",
    }
    assert _rows(page, "config-table") == [
        # input, config, cases, failed, seeds, bound mean/min/max, pending mean/min/max,
        # cpu mean/min/max, memory mean/min/max
        ["ab", "spread", "3", "0", "0, 1, 2", "3", "2", "4", "1", "0", "2"]
        + ["29.2%", "12.5%", "50.0%", "25.0%", "25.0%", "25.0%"],
        ["ab", "binpack", "2", "1", "0, 1", "4", "4", "4", "0", "0", "0"]
        + ["75.0%", "75.0%", "75.0%", "25.0%", "25.0%", "25.0%"],
    ]


def test_a_sweep_report_lists_every_case() -> None:
    page = render_report(_sweep())
    rows = _rows(page, "cases-table")
    assert len(rows) == 5
    assert rows[0] == [
        "0",
        "ab",
        "scenario",
        "spread",
        "0",
        "3",
        "1",
        "25.0%",
        "12.5%",
        "25.0%",
        "10.0%",
        "0.5s",
        "1s",
        "2s",
        "2.5s",
        "0" * 12,
        "",
    ]
    assert rows[4][:5] == ["4", "ab", "scenario", "binpack", "1"]
    assert rows[4][-1] == "boom <here>"
    assert "boom &lt;here&gt;\nsecond line" in page  # the whole error, in the failed list
    # Percentages and durations sort as numbers.
    assert '<td data-sort="0.125">12.5%</td>' in page
    assert 'data-filter="cases-table"' in page
    # The full digest is in the page, for the filter box and the tooltip.
    assert f"sha256:{3:064x}" in page


def test_a_sweep_report_charts_the_configurations() -> None:
    page = render_report(_sweep())
    charts = re.findall(r"<svg.*?</svg>", page, re.S)
    assert len(charts) == 2
    assert "ab / spread cpu used (end): mean 29.2%, min 12.5%, max 50.0%" in charts[0]
    assert "ab / binpack pending: mean 0, min 0, max 0" in charts[1]


def test_a_sweep_report_is_the_same_whatever_ran_it() -> None:
    local = render_report(_sweep(executor="local", jobs=2, wall_seconds=1.5))
    ray = render_report(_sweep(executor="ray", jobs=7, wall_seconds=99.0))
    assert local == ray


def test_sweep_report_from_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "sweep.yaml"
    spec.write_text(
        "kind: Sweep\n"
        f"scenarios: {{ab: {ROOT / 'examples' / 'capacity' / 'ab.yaml'}}}\n"
        f"configs: {{spread: {ROOT / 'examples' / 'basic' / 'spread.yaml'}}}\n"
        "seeds: [0, 1]\n",
        encoding="utf-8",
    )
    out = tmp_path / "sweep.html"
    code = main(["sweep", str(spec), "-j", "1", "--report", str(out)])
    assert code == 0
    assert f"Report: {out}" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    assert _figure(page, "cases") == "2"
    assert _rows(page, "config-table")[0][:11] == [
        "ab",
        "spread",
        "2",
        "0",
        "0, 1",
        "3",
        "3",
        "3",
        "1",
        "1",
        "1",
    ]


_NAMES = st.text(alphabet="ab<>&\"' /", min_size=1, max_size=8)


@st.composite
def _sweeps(draw: st.DrawFn) -> SweepResult:
    n = draw(st.integers(min_value=0, max_value=8))
    results = []
    for i in range(n):
        case = SweepCase(
            id=i,
            input=draw(_NAMES),
            kind="scenario",
            config=draw(_NAMES),
            seed=draw(st.integers(min_value=0, max_value=3)),
        )
        if draw(st.booleans()):
            results.append(CaseResult(case=case, error=draw(_NAMES)))
            continue
        results.append(
            CaseResult(
                case=case,
                bound=draw(st.integers(min_value=0, max_value=50)),
                pending=draw(st.integers(min_value=0, max_value=50)),
                placement_digest="sha256:" + "0" * 64,
                utilisation={"cpu": {"end": draw(st.floats(0, 1)), "mean": 0.5}},
                latency={"p50": draw(st.floats(0, 100))},
            )
        )
    return SweepResult(results=tuple(results))


@settings(max_examples=40, deadline=None)
@given(_sweeps(), st.sampled_from(["local", "ray"]), st.integers(1, 64), st.floats(0, 1e4))
def test_any_sweeps_page_is_escaped_and_the_same_for_every_executor(
    result: SweepResult, executor: str, jobs: int, wall: float
) -> None:
    page = render_report(result)
    other = attrs.evolve(result, executor=executor, jobs=jobs, wall_seconds=wall)
    assert render_report(other) == page
    # Names and errors never open a tag: the page's only script is its own.
    assert page.count("<script") == 1
    assert "<>" not in page.split("<script>")[0]
    groups = _rows(page, "config-table")
    assert len(groups) == len({(r.case.input, r.case.config) for r in result.results})
    for row in groups:
        if row[5] != "-":  # bound mean, min, max of the cases that ran
            assert float(row[6]) <= float(row[5]) <= float(row[7])


def test_many_configurations_widen_the_chart_and_slant_its_labels() -> None:
    results = tuple(
        _case(i, f"a-rather-long-configuration-name-{i}", 0, 1, 0, 0.5) for i in range(30)
    )
    page = render_report(SweepResult(results=results))
    first = re.search(r'<svg[^>]*viewBox="0 0 (\d+) (\d+)"', page)
    assert first is not None
    assert int(first.group(1)) == 52 + 150 + 40 * 30
    assert 'transform="rotate(-35 ' in page
    assert "ab / a-rather-long-configuration-name-29" in page
