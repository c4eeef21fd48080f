"""The HTML report: its figures, explanations, escaping, caps and determinism."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe.objects import Pod, load_manifests
from schedframe.report import (
    Report,
    ReportOptions,
    Section,
    register_result_kind,
    render_report,
    write_report,
)
from schedframe.report._svg import MAX_POINTS, downsample
from schedframe.simulation import (
    Operation,
    PodEvent,
    Scenario,
    ScenarioResult,
    SimulationResult,
    compare_scenario,
    load_workload,
    run_scenario,
    simulate,
)
from schedframe.testing.builders import make_node, make_pod

ROOT = Path(__file__).resolve().parents[3]
BASIC = ROOT / "examples" / "basic"
BINPACK = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
            ],
        }
    ],
}


def _basic() -> SimulationResult:
    return simulate(
        cluster=load_manifests(BASIC / "cluster.yaml"),
        workload=load_workload(BASIC / "workload.yaml"),
        config=BASIC / "spread.yaml",
    )


def _figure(page: str, label: str) -> str:
    found = re.search(rf'data-figure="{re.escape(label)}"><span class="v">([^<]*)</span>', page)
    assert found is not None, label
    return html.unescape(found.group(1))


def _scenario() -> Scenario:
    nodes = tuple(
        make_node(f"n{i}").zone(f"z{i}").capacity(cpu="4", memory="8Gi", pods=110).obj()
        for i in range(2)
    )
    ops = (
        Operation(at=1, op="createPod", obj=make_pod("s1").req(cpu="1").obj()),
        Operation(at=2, op="createPod", obj=make_pod("s2").req(cpu="1").obj()),
        Operation(at=5, op="createPod", obj=make_pod("big").req(cpu="4").obj()),
    )
    return Scenario(cluster=nodes, operations=ops)


def test_a_simulation_report_shows_the_summary_figures() -> None:
    result = _basic()
    page = render_report(result)
    summary = result.summary()
    assert _figure(page, "bound") == "8" == str(summary.bound)
    assert _figure(page, "pending") == "2"
    assert _figure(page, "preempted") == "0"
    assert _figure(page, "cpu used (end)") == "50.0%"
    assert _figure(page, "latency p99") == "0s"
    assert page.startswith("<!DOCTYPE html>")
    for section in ("summary", "utilisation", "placement", "timeline", "pending"):
        assert f'<section id="{section}">' in page


def test_pending_pods_are_explained_per_plugin_against_the_final_cluster() -> None:
    page = render_report(_basic())
    # The two batch pods share a template: one explanation, the other named under it.
    assert '<h3>default/batch-0</h3><p class="note">The same explanation holds for 1 more' in page
    assert "default/batch-1." in page
    row = "<tr><td>NodeResourcesFit</td><td>Unschedulable</td><td>Insufficient cpu</td>"
    assert row in page
    assert "0/4 nodes are available: 4 Insufficient cpu, 4 Insufficient memory." in page


def test_the_same_inputs_give_byte_identical_pages() -> None:
    assert render_report(_basic()) == render_report(_basic())


def test_the_page_fetches_nothing() -> None:
    page = render_report(_basic())
    urls = set(re.findall(r"https?://[^\s\"'<>]+", page))
    assert urls == {"http://www.w3.org/2000/svg"}  # the SVG namespace, never fetched
    assert not re.search(r"\s(src|href)=\"(?!#|data:)", page)
    assert "default-src &#x27;none&#x27;" in page  # a CSP that forbids any fetch


def test_text_is_escaped_everywhere() -> None:
    evil = '<img src=x onerror="alert(1)">&'
    result = ScenarioResult(
        timelines={
            "default/p": (
                PodEvent(time=0, event="queued"),
                PodEvent(time=1, event="failed", message=evil, attempt=1),
            )
        },
        placements={},
        pending={"default/p": evil},
        utilisation=((0.0, {"cpu": 0.0}),),
        fragmentation={"cpu": 0.0},
        end_time=1.0,
        attempts=1,
        rejected=((0.5, "deletePod", evil),),
    )
    page = render_report(result, title=evil)
    assert "<img" not in page
    assert html.escape(evil, quote=True) in page
    assert f"<title>{html.escape(evil, quote=True)}</title>" in page


def test_a_result_without_final_objects_says_it_cannot_explain() -> None:
    result = ScenarioResult(
        timelines={},
        placements={},
        pending={"default/p": "0/1 nodes are available"},
        utilisation=(),
        fragmentation={},
        end_time=0.0,
        attempts=0,
    )
    page = render_report(result)
    assert page.count("carries no final cluster state") == 2  # placement map and pending


def test_a_scenario_report_has_timelines_and_explanations() -> None:
    result = run_scenario(_scenario())
    page = render_report(result)
    assert _figure(page, "bound") == "2"
    assert _figure(page, "pending") == "1"
    assert "zone z0: 1 nodes" in page
    assert '<span class="state s-pending">pending</span>' in page
    assert "0/2 nodes are available: 2 Insufficient cpu." in page
    assert "<td>NodeResourcesFit</td><td>Unschedulable</td><td>Insufficient cpu</td>" in page


def test_a_comparison_report_shows_both_runs_and_the_diff() -> None:
    cmp = compare_scenario(_scenario(), None, BINPACK, names=("spread", "binpack"))
    page = render_report(cmp)
    assert "<tr><td>default/big</td><td>(pending)</td><td>n0</td></tr>" in page
    assert "Pending only with spread (1)" in page
    assert "Pending only with binpack (0)" in page
    assert '<section id="a-pending"><h2>spread: pending (1)</h2>' in page
    assert '<section id="b-pending"><h2>binpack: pending (0)</h2>' in page
    assert page.count('class="pod moved"') >= 1


def test_big_tables_are_capped_with_a_note() -> None:
    page = render_report(_basic(), max_rows=3)
    assert "Showing the first 3 of 10 pods; the other 7 are not in this page" in page
    assert "Showing the first 3 of 4 nodes" in page


def test_pending_pods_beyond_max_explained_are_listed_with_their_message() -> None:
    page = render_report(_basic(), max_explained=0)
    assert "2 more pending pods are listed with their last message only" in page
    assert "<h3>default/batch-0</h3>" not in page


def test_bad_options_and_unknown_results_are_errors() -> None:
    with pytest.raises(ValueError, match="max_rows must be at least 1"):
        render_report(_basic(), max_rows=0)
    with pytest.raises(TypeError, match="no report for a dict"):
        render_report({})


def test_write_report_writes_the_page(tmp_path: Path) -> None:
    result = _basic()
    out = write_report(result, tmp_path / "r.html", title="Run 1")
    assert out.read_text(encoding="utf-8") == render_report(result, title="Run 1")


class _Custom:
    def __init__(self, text: str) -> None:
        self.text = text


def test_other_result_kinds_can_be_added() -> None:
    def build(result: _Custom, options: ReportOptions) -> Report:
        body = f"<p>{html.escape(result.text)}</p>"
        return Report(
            title="custom", subtitle="sub", sections=(Section(id="one", title="One", html=body),)
        )

    register_result_kind(_Custom, build)
    page = render_report(_Custom("a < b"))
    assert '<section id="one"><h2>One</h2>\n<p>a &lt; b</p>' in page
    assert '<a href="#one">One</a>' in page
    with pytest.raises(ValueError, match="section id"):
        Section(id="Bad Id", title="", html="")


@st.composite
def _points(draw: st.DrawFn) -> list[tuple[float, float]]:
    """Up to 5,000 step points in time order (built from a seed: large lists stay cheap)."""
    rnd = draw(st.randoms(use_true_random=False))
    n = draw(st.integers(1, 5000))
    return sorted((rnd.uniform(0, 1000), rnd.random()) for _ in range(n))


@given(_points())
def test_downsampling_keeps_the_ends_and_every_extreme(pts: list[tuple[float, float]]) -> None:
    kept = downsample(pts, 1000.0, 100)
    if len(pts) <= MAX_POINTS:
        assert kept == pts
        return
    assert len(kept) <= 4 * 100
    assert kept[0] == pts[0] and kept[-1] == pts[-1]
    assert max(v for _, v in kept) == max(v for _, v in pts)
    assert min(v for _, v in kept) == min(v for _, v in pts)
    assert kept == sorted(kept, key=lambda p: p[0])


def test_preemption_shows_in_the_figures_the_timeline_and_the_map() -> None:
    example = ROOT / "examples" / "preemption"
    result = simulate(
        cluster=load_manifests(example / "cluster.yaml"),
        workload=load_workload(example / "workload.yaml"),
    )
    initial = {p.key for p in result.initial_pods}
    final = {o.key for o in result.final_objects if isinstance(o, Pod)}
    assert initial - set(result.victims) <= final  # cluster pods are kept
    page = render_report(result)
    assert _figure(page, "preempted") == "1"
    assert '<li class="ev-preempted">0s preempted from node-1: by default/critical</li>' in page
    # Pods that were running before the run are drawn apart from the run's own.
    assert page.count('class="pod cl"') == 3


@given(st.tuples(st.text(), st.text()).map(lambda ab: f"{ab[0]}<x-evil a='1'>{ab[1]}"))
def test_no_message_reaches_the_page_unescaped(message: str) -> None:
    result = ScenarioResult(
        timelines={"default/p": (PodEvent(time=1, event="failed", message=message, attempt=1),)},
        placements={},
        pending={"default/p": message},
        utilisation=(),
        fragmentation={},
        end_time=1.0,
        attempts=1,
    )
    page = render_report(result, title=message)
    assert "<x-evil" not in page
    assert html.escape(message, quote=True) in page
