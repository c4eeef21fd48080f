"""Sweeps on a local Ray instance give the process pool's results, byte for byte.

Ray starts once for the module (slow on a small machine). Without Ray installed these tests
skip, except in CI (``CI=true``), where a missing Ray is a failure: the test sessions install
the ``ray`` extra.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from schedframe.cli import main
from schedframe.report import render_report
from schedframe.simulation import sweep

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "sweep"
EXAMPLE = ROOT / "examples" / "sweep" / "sweep.yaml"


def _ray() -> ModuleType:
    try:
        ray = importlib.import_module("ray")
    except ImportError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail('Ray is not installed, and CI must run this test: pip install ".[ray]"')
        pytest.skip('Ray is not installed (pip install "schedframe[ray]")')
    return ray


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[ModuleType]:
    ray = _ray()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.mark.usefixtures("at_root")
def test_a_hundred_cases_on_ray_match_the_process_pool(ray_instance: ModuleType) -> None:
    spec = FIXTURES / "hundred.yaml"
    local = sweep(spec, executor="local", jobs=2)
    on_ray = sweep(spec, executor="ray", jobs=2)
    assert len(on_ray.results) == 100
    assert not on_ray.errors
    assert on_ray.to_json() == local.to_json()
    # So is the HTML report, byte for byte.
    assert render_report(on_ray) == render_report(local)
    # The sweep used the instance it found, and left it running.
    assert ray_instance.is_initialized()
    # Not a constant: the seeds and the configurations change placements.
    assert len({r.placement_digest for r in on_ray.results}) > 2


@pytest.mark.usefixtures("at_root")
def test_failing_cases_are_reported_alike(ray_instance: ModuleType) -> None:
    spec = FIXTURES / "failing.yaml"
    local, on_ray = sweep(spec, jobs=1), sweep(spec, executor="ray")
    assert [r.case.id for r in on_ray.errors] == [1]
    assert on_ray.to_json() == local.to_json()


@pytest.mark.usefixtures("at_root")
def test_the_cli_prints_the_same_json_with_either_executor(
    ray_instance: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sweep", "examples/sweep/sweep.yaml", "-o", "json", "-j", "2"]) == 0
    local = capsys.readouterr().out
    code = main(["sweep", "examples/sweep/sweep.yaml", "--executor", "ray", "-o", "json"])
    assert code == 0
    assert capsys.readouterr().out == local
    assert json.loads(local)["cases"] == 13
