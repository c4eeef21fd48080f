"""Sweeps: the spec's cases, per-case results and errors, and the local process pool."""

from __future__ import annotations

import json
import logging
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from schedframe.cli import main
from schedframe.errors import ManifestError
from schedframe.simulation import (
    WORKER_DIED,
    SweepError,
    load_scenario,
    load_sweep,
    placement_digest,
    run_scenario,
    sweep,
    sweep_from_dict,
)

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "sweep"
EXAMPLE = ROOT / "examples" / "sweep" / "sweep.yaml"


def test_the_cases_are_the_product_in_spec_order_then_the_explicit_ones() -> None:
    cases = load_sweep(EXAMPLE)
    assert [(c.id, c.input, c.config, c.seed) for c in cases] == [
        (0, "ab", "spread", 0),
        (1, "ab", "spread", 1),
        (2, "ab", "spread", 2),
        (3, "ab", "binpack", 0),
        (4, "ab", "binpack", 1),
        (5, "ab", "binpack", 2),
        (6, "basic", "spread", 0),
        (7, "basic", "spread", 1),
        (8, "basic", "spread", 2),
        (9, "basic", "binpack", 0),
        (10, "basic", "binpack", 1),
        (11, "basic", "binpack", 2),
        (12, "ab", "binpack", 42),
    ]
    assert {c.kind for c in cases if c.input == "ab"} == {"scenario"}
    basic = cases[6]
    assert basic.kind == "simulate"
    assert basic.cluster == (str((ROOT / "examples/basic/cluster.yaml").resolve()),)
    assert basic.workload == (str((ROOT / "examples/basic/workload.yaml").resolve()),)
    assert basic.config_path == str((ROOT / "examples/basic/spread.yaml").resolve())


def test_seeds_default_to_zero_and_a_range_counts_up() -> None:
    doc: dict[str, object] = {"clusters": {"c": {"cluster": "nodes.yaml"}}}
    assert [(c.config, c.seed) for c in sweep_from_dict(doc, base=FIXTURES)] == [("default", 0)]
    doc["seeds"] = {"from": 3, "count": 2}
    assert [c.seed for c in sweep_from_dict(doc, base=FIXTURES)] == [3, 4]


@pytest.mark.parametrize(
    ("doc", "errors"),
    [
        (
            {"kind": "Sweeps", "extra": 1},
            [
                "extra: Unknown field: expected one of apiVersion, kind, scenarios, clusters, "
                "configs, seeds, cases",
                'kind: Unsupported value: "Sweeps": supported values: "Sweep"',
            ],
        ),
        (
            {"scenarios": {"a": "missing.yaml"}, "configs": {"x": ["a.yaml", "b.yaml"]}},
            [
                'scenarios.a: Not found: "missing.yaml"',
                "configs.x: Invalid value: ['a.yaml', 'b.yaml']: expected a path",
            ],
        ),
        (
            {
                "clusters": {"c": {"workload": "pods.yaml", "until": -1, "nodes": 2}},
                "seeds": [0, -1, "x"],
            },
            [
                "clusters.c.nodes: Unknown field: expected one of cluster, workload, until",
                "clusters.c.cluster: Required value",
                "clusters.c.until: Invalid value: -1: expected seconds >= 0",
                "seeds[1]: Invalid value: -1: expected an integer >= 0",
                'seeds[2]: Invalid value: "x": expected an integer >= 0',
            ],
        ),
        (
            {
                "scenarios": {"s": "scenario.yaml"},
                "clusters": {"s": {"cluster": "nodes.yaml"}},
                "seeds": {"count": -2, "step": 1},
            },
            [
                'clusters.s: Duplicate value: "s": a scenario has this name',
                "seeds.step: Unknown field: expected from, count",
                "seeds.count: Invalid value: -2: expected an integer >= 0",
            ],
        ),
        (
            {
                "scenarios": {"s": "scenario.yaml"},
                "configs": {"d": None},
                "cases": [
                    {"scenario": "nope", "config": "d"},
                    {"cluster": "s", "config": "d", "seed": 1.5},
                    {"scenario": "s", "cluster": "s"},
                    {"scenario": "s", "colour": "red"},
                ],
            },
            [
                'cases[0].scenario: Not found: "nope": not a name under scenarios',
                'cases[1].cluster: Not found: "s": not a name under clusters',
                "cases[1].seed: Invalid value: 1.5: expected an integer >= 0",
                "cases[2]: Required value: exactly one of scenario, cluster",
                "cases[2].config: Not found: not a name under configs",
                "cases[3].colour: Unknown field: expected one of scenario, cluster, config, seed",
                "cases[3].config: Not found: not a name under configs",
            ],
        ),
    ],
)
def test_bad_specs_name_the_file_and_every_field_path(
    tmp_path: Path, doc: dict[str, object], errors: list[str]
) -> None:
    spec = tmp_path / "spec.yaml"
    for name in ("scenario.yaml", "nodes.yaml", "pods.yaml"):
        (tmp_path / name).write_text((FIXTURES / name).read_text())
    spec.write_text(json.dumps(doc))
    with pytest.raises(ManifestError) as info:
        load_sweep(spec)
    assert str(info.value).splitlines() == [f"{spec}: {e}" for e in errors]


def test_a_bad_spec_is_exit_code_2_and_one_line_per_issue(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("kind: Sweep\nconfigs: {a: nowhere.yaml}\n")
    assert main(["sweep", str(spec)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f'error: {spec}: configs.a: Not found: "nowhere.yaml"\n'


def test_a_failing_case_is_reported_with_its_error_and_the_others_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["sweep", "tests/fixtures/sweep/failing.yaml", "-j", "2", "-o", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert (doc["cases"], doc["failed"]) == (3, 1)
    ok, failed, ok2 = doc["results"]
    assert failed == {
        "id": 1,
        "input": "tiny",
        "kind": "scenario",
        "config": "broken",
        "seed": 1,
        "error": "tests/fixtures/sweep/broken-config.yaml: "
        'profiles[0].plugins.filter.enabled[0].name: Not found: "NoSuchPlugin": no plugin '
        'named "NoSuchPlugin" is installed; available: '
        + failed["error"].split("available: ", 1)[1],
    }
    assert "NoSuchPlugin" not in failed["error"].split("available: ", 1)[1]
    for case in (ok, ok2):
        assert "error" not in case
        assert (case["bound"], case["pending"]) == (3, 0)


def test_a_case_reports_what_the_scenario_run_saw() -> None:
    (case,) = [c for c in load_sweep(FIXTURES / "hundred.yaml") if c.id == 28]
    assert (case.input, case.config, case.seed) == ("tiny", "binpack", 3)
    (result,) = sweep([case], jobs=1).results
    direct = run_scenario(
        load_scenario(FIXTURES / "scenario.yaml"), config=FIXTURES / "binpack.yaml", seed=3
    )
    assert result.placement_digest == placement_digest(direct.placements)
    assert (result.bound, result.pending) == (len(direct.placements), len(direct.pending))
    # CPU: 1 of 4 from t=1, 1.5 from t=2, 3 from t=3, the end: a mean of (0.25 + 0.375) / 3.
    assert result.to_dict()["utilisation"] == {
        "cpu": {"end": 0.75, "mean": 0.208333},
        "memory": {"end": 0.0, "mean": 0.0},
    }
    assert result.latency == {"p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0}


def test_a_cluster_and_workload_case_counts_the_pod_left_pending() -> None:
    cases = [c for c in load_sweep(FIXTURES / "hundred.yaml") if c.input == "pair"]
    spread, binpack = cases[0], cases[25]
    assert (spread.config, binpack.config) == ("default", "binpack")
    a, b = sweep([spread, binpack], jobs=2).results
    assert (a.bound, a.pending, b.bound, b.pending) == (2, 1, 3, 0)
    assert a.placement_digest != b.placement_digest


def test_the_placement_digest_is_sha256_of_the_sorted_table() -> None:
    import hashlib

    table = "default/a\tn2\ndefault/b\tn1\n"
    assert placement_digest({"default/b": "n1", "default/a": "n2"}) == (
        "sha256:" + hashlib.sha256(table.encode()).hexdigest()
    )


def test_json_is_byte_identical_whatever_the_job_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    one = sweep(EXAMPLE, jobs=1)
    three = sweep(EXAMPLE, jobs=3)
    assert [r.case.id for r in three.results] == list(range(13))
    assert one.to_json() == three.to_json()
    assert not one.errors
    # Seeds break ties between equal nodes: not every seed places alike.
    assert len({r.placement_digest for r in one.results if r.case.input == "basic"}) > 1


def test_the_out_file_holds_the_json_and_the_table_is_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sweep.json"
    spec = FIXTURES / "failing.yaml"
    assert main(["sweep", str(spec), "--jobs", "1", "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert text.startswith("Sweep: 3 cases, 1 failed (local executor, 1 jobs, ")
    assert "Failed cases:\n  1: " in text
    doc = json.loads(out.read_text())
    assert [r["id"] for r in doc["results"]] == [0, 1, 2]


def test_an_unwritable_out_file_is_refused_before_the_sweep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "no" / "such" / "dir.json"
    assert main(["sweep", str(FIXTURES / "failing.yaml"), "--out", str(out)]) == 2
    assert capsys.readouterr() == ("", f"error: {out}: cannot write: No such file or directory\n")


def test_the_ray_executor_without_ray_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray: ImportError
    assert main(["sweep", str(FIXTURES / "failing.yaml"), "--executor", "ray"]) == 2
    assert capsys.readouterr().err == (
        'error: the ray executor needs Ray: pip install "schedframe[ray]"\n'
    )


class _Ref:
    def __init__(self, value: dict[str, object] | BaseException) -> None:
        self.value = value


class _FakeRay(types.ModuleType):
    """What the ray executor uses of Ray, recording the calls; tasks run in this process."""

    class WorkerCrashedError(Exception):
        pass

    def __init__(self, *, initialized: bool = False, crash: int | None = None) -> None:
        super().__init__("ray")
        self.calls: list[tuple[str, dict[str, object]]] = []
        self.initialized = initialized
        self.crash = crash
        self.exceptions = types.SimpleNamespace(WorkerCrashedError=self.WorkerCrashedError)

    def is_initialized(self) -> bool:
        return self.initialized

    def init(self, **kwargs: object) -> None:
        self.calls.append(("init", kwargs))
        if kwargs.get("address") == "nowhere:1":
            raise ConnectionError("Could not find any running Ray instance.")
        self.initialized = True

    def shutdown(self) -> None:
        self.calls.append(("shutdown", {}))
        self.initialized = False

    def remote(self, **options: object) -> Callable[[Callable[..., Any]], Any]:
        self.calls.append(("remote", options))

        def wrap(fn: Callable[..., Any]) -> Any:
            def submit(payload: dict[str, Any]) -> _Ref:
                if payload["id"] == self.crash:
                    return _Ref(self.WorkerCrashedError("worker died"))
                return _Ref(fn(payload))

            return types.SimpleNamespace(remote=submit)

        return wrap

    def get(self, ref: _Ref) -> dict[str, object]:
        if isinstance(ref.value, BaseException):
            raise ref.value
        return ref.value


_QUIET = {"log_to_driver": False, "logging_level": logging.ERROR}


@pytest.mark.parametrize(
    ("env", "address", "init"),
    [
        (None, None, {"num_cpus": 3, "include_dashboard": False, **_QUIET}),
        ("ray://head:10001", None, {"address": "ray://head:10001", **_QUIET}),
        ("ray://head:10001", "10.0.0.1:6379", {"address": "10.0.0.1:6379", **_QUIET}),
    ],
)
def test_the_ray_executor_starts_or_connects_and_shuts_down_what_it_started(
    monkeypatch: pytest.MonkeyPatch, env: str | None, address: str | None, init: dict[str, object]
) -> None:
    fake = _FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    if env is None:
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
    else:
        monkeypatch.setenv("RAY_ADDRESS", env)
    cases = load_sweep(FIXTURES / "failing.yaml")
    result = sweep(cases, executor="ray", jobs=3, ray_address=address)
    assert fake.calls == [
        ("init", init),
        ("remote", {"num_cpus": 1, "max_retries": 1}),
        ("shutdown", {}),
    ]
    assert [r.case.id for r in result.results] == [0, 1, 2]
    assert [bool(r.error) for r in result.results] == [False, True, False]


def test_the_ray_executor_leaves_an_initialised_ray_as_it_found_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = _FakeRay(initialized=True, crash=2)
    monkeypatch.setitem(sys.modules, "ray", fake)
    result = sweep(load_sweep(FIXTURES / "failing.yaml"), executor="ray")
    assert fake.calls == [("remote", {"num_cpus": 1, "max_retries": 1})]
    assert fake.initialized
    # A task whose worker died (after Ray's one retry) fails its case only.
    assert result.results[2].error == WORKER_DIED
    assert not result.results[0].error


def test_a_ray_cluster_that_cannot_be_reached_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", _FakeRay())
    spec = str(FIXTURES / "failing.yaml")
    assert main(["sweep", spec, "--executor", "ray", "--ray-address", "nowhere:1"]) == 2
    assert capsys.readouterr().err == (
        "error: cannot connect to Ray at nowhere:1: "
        "ConnectionError: Could not find any running Ray instance.\n"
    )


def test_bad_executor_jobs_and_options_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SweepError, match="unknown executor 'dask'"):
        sweep([], executor="dask")
    with pytest.raises(SweepError, match="jobs must be at least 1, not 0"):
        sweep([], jobs=0)
    assert main(["sweep", str(EXAMPLE), "--ray-address", "auto"]) == 2
    assert "--ray-address needs --executor ray" in capsys.readouterr().err
