"""The HTML report of an example, opened in a real headless Chromium.

Debian's chromium is driven through the DevTools protocol (``_browser.py``): the page must
render with no console error or uncaught exception, fetch nothing but itself, and show the
summary figures and a pending pod's per-plugin reasons. Without chromium the test skips, but
fails under CI (``CI=true``), where ``nox -s tests`` installs it.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from schedframe.cli import main

from ._browser import PageRun, find_chromium, load_page

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
BASIC = ROOT / "examples" / "basic"


@pytest.fixture(scope="module")
def chromium() -> str:
    found = find_chromium()
    if found is None:
        why = "chromium is not installed (apt-get install chromium; nox -s tests does it)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{why}: the browser test must run in CI")
        pytest.skip(why)
    return found


# Things the page's script must have done: sort a table, filter one.
_SORT_THEN_READ = """(() => {
  const th = document.querySelector('#nodes-table th:nth-child(6)');
  th.click(); th.click();
  return th.className;
})()"""
_FILTER = """(() => {
  const box = document.querySelector('input[data-filter="timeline-table"]');
  box.value = 'batch';
  box.dispatchEvent(new Event('input'));
  const rows = Array.from(document.querySelectorAll('#timeline-table tbody tr'));
  return rows.filter(r => r.style.display !== 'none').length;
})()"""


def test_the_report_of_an_example_renders_cleanly_in_chromium(
    chromium: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.html"
    code = main(
        [
            "simulate",
            "-c",
            str(BASIC / "cluster.yaml"),
            "-w",
            str(BASIC / "workload.yaml"),
            "-f",
            str(BASIC / "spread.yaml"),
            "--no-progress",
            "--report",
            str(report),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert f"Report: {report}" in out

    url = report.resolve().as_uri()
    run = load_page(chromium, url, (_SORT_THEN_READ, _FILTER))

    assert run.exceptions == ()
    assert run.console_errors == ()
    assert run.log_errors == ()
    assert run.failed_requests == ()
    assert run.requests == (url,)

    text = run.text
    # The summary figures, as rendered: value above label.
    for value, label in (("10", "pods"), ("8", "bound"), ("2", "pending"), ("0", "preempted")):
        assert f"{value}\n{label}" in text
    assert "50.0%\ncpu used (end)" in text
    assert "Pending pods (2)" in text
    # A pending pod's per-plugin reasons.
    assert "default/batch-0" in text
    assert "NodeResourcesFit\tUnschedulable\tInsufficient cpu\t4" in text
    assert "NodeResourcesFit\tUnschedulable\tInsufficient memory\t4" in text
    # The script ran: a column sorted descending, a filter leaving the two batch pods.
    assert run.evaluated == ("desc", 2)

    shot = tmp_path / "report.png"
    shot.write_bytes(run.screenshot)
    assert run.screenshot[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", run.screenshot[16:24])
    assert (width, height) == (1280, 900)


REPLAY = ROOT / "examples" / "replay"
SWEEP = ROOT / "examples" / "sweep"


def _clean(run: PageRun, url: str) -> None:
    assert run.exceptions == ()
    assert run.console_errors == ()
    assert run.log_errors == ()
    assert run.failed_requests == ()
    assert run.requests == (url,)
    assert run.screenshot[:8] == b"\x89PNG\r\n\x1a\n"


_FILTER_DIVERGENCES = """(() => {
  const box = document.querySelector('input[data-filter="divergence-table"]');
  box.value = 'web';
  box.dispatchEvent(new Event('input'));
  const rows = Array.from(document.querySelectorAll('#divergence-table tbody tr'));
  return rows.filter(r => r.style.display !== 'none').length;
})()"""


def test_the_report_of_a_replay_renders_cleanly_in_chromium(
    chromium: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "replay.html"
    code = main(
        [
            "replay",
            str(REPLAY / "trace.jsonl"),
            "-f",
            str(REPLAY / "binpack.yaml"),
            "--report",
            str(report),
        ]
    )
    assert code == 0
    assert f"Report: {report}" in capsys.readouterr().out
    url = report.resolve().as_uri()
    run = load_page(chromium, url, (_FILTER_DIVERGENCES,))
    _clean(run, url)
    text = run.text
    for value, label in (
        ("31", "events replayed"),
        ("11", "decisions"),
        ("5", "as recorded"),
        ("6", "diverged"),
        ("6", "diverged: node"),
        ("0", "refused events"),
    ):
        assert f"{value}\n{label}" in text
    assert "Divergences (6)" in text
    assert "default/batch-0\tnode-c\tnode-b\tnode" in text
    assert "Pending pods (1)" in text
    # The pending pod's per-plugin reasons.
    assert "default/huge-0" in text
    assert "NodeResourcesFit\tUnschedulableAndUnresolvable\tInsufficient cpu\t3" in text
    # The filter left the five web pods.
    assert run.evaluated == (5,)


_SORT_CASES = """(() => {
  const th = Array.from(document.querySelectorAll('#cases-table th'))
    .find(h => h.textContent === 'cpu mean');
  th.click(); th.click();
  return document.querySelector('#cases-table tbody tr td').textContent;
})()"""
_FILTER_CASES = """(() => {
  const box = document.querySelector('input[data-filter="cases-table"]');
  box.value = 'binpack';
  box.dispatchEvent(new Event('input'));
  const rows = Array.from(document.querySelectorAll('#cases-table tbody tr'));
  return rows.filter(r => r.style.display !== 'none').length;
})()"""


def test_the_report_of_a_sweep_renders_cleanly_in_chromium(
    chromium: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    report = tmp_path / "sweep.html"
    code = main(["sweep", str(SWEEP / "sweep.yaml"), "-j", "2", "--report", str(report)])
    assert code == 0
    assert f"Report: {report}" in capsys.readouterr().out
    url = report.resolve().as_uri()
    run = load_page(chromium, url, (_SORT_CASES, _FILTER_CASES))
    _clean(run, url)
    text = run.text
    for value, label in (("13", "cases"), ("13", "ran"), ("0", "failed"), ("2", "configs")):
        assert f"{value}\n{label}" in text
    assert "Cases (13)" in text
    # Per configuration over its seeds: bound, pending and CPU mean / min / max.
    assert "basic\tspread\t3\t0\t0, 1, 2\t8\t8\t8\t2\t2\t2\t50.0%" in text
    assert "ab\tbinpack\t4\t0\t0, 1, 2, 42\t4\t4\t4\t0\t0\t0\t58.3%" in text
    # Sorted by mean CPU, descending: a binpack case of basic comes first; seven binpack rows.
    assert run.evaluated == ("9", 7)
