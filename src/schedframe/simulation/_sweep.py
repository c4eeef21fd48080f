"""Sweeps: many scenario x configuration x seed cases, each in its own process.

A sweep spec (see :func:`load_sweep`) names inputs (scenario files, or cluster and workload
pairs as ``schedframe simulate`` takes them), configurations and seeds; its cases are their
cartesian product followed by explicit cases. :func:`sweep` runs every case in a worker
process (a spawn-started process pool, or Ray tasks with ``executor="ray"``) and gathers one
:class:`CaseResult` per case, ordered by case id whatever order they finish in.

Workers get only file paths, names and numbers (picklable, spawn-safe): each loads its inputs
itself. A case that fails (a bad configuration, an error in a plugin) is reported with its
error; it does not stop the others. The JSON of a sweep is the same byte for byte with either
executor and any number of jobs: nothing in it depends on where or when a case ran.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from schedframe.errors import (
    DUPLICATE,
    INVALID,
    NOT_FOUND,
    REQUIRED,
    UNSUPPORTED,
    FieldIssue,
    ManifestError,
    SchedframeError,
)

if TYPE_CHECKING:
    from schedframe.config import KubeSchedulerConfiguration
    from schedframe.simulation._scenario import Scenario
    from schedframe.simulation._workload import Workload

__all__ = [
    "EXECUTORS",
    "RAY_HINT",
    "CaseResult",
    "SweepCase",
    "SweepError",
    "SweepResult",
    "WORKER_DIED",
    "load_sweep",
    "placement_digest",
    "run_case",
    "sweep",
    "sweep_from_dict",
]

#: The executors :func:`sweep` knows.
EXECUTORS: Final = ("local", "ray")
#: The one-line message when ``executor="ray"`` is asked for without Ray installed.
RAY_HINT: Final = 'the ray executor needs Ray: pip install "schedframe[ray]"'

_TOP_FIELDS: Final = ("apiVersion", "kind", "scenarios", "clusters", "configs", "seeds", "cases")
_CLUSTER_FIELDS: Final = ("cluster", "workload", "until")
_CASE_FIELDS: Final = ("scenario", "cluster", "config", "seed")
_SEED_RANGE_FIELDS: Final = ("from", "count")
#: The configuration name of kube-scheduler's defaults when a spec names no configuration.
DEFAULT_CONFIG: Final = "default"


class SweepError(SchedframeError):
    """A sweep that cannot run as asked (an executor that is not installed or not known)."""


@attrs.frozen(kw_only=True)
class SweepCase:
    """One case of a sweep: an input under a configuration with a seed.

    Only paths, names and numbers: a case pickles small and loads its files in the worker.

    Attributes:
        id: the case's position in the sweep (0 for the first); results are ordered by it.
        input: the input's name in the spec.
        kind: ``scenario`` (a scenario file) or ``simulate`` (a cluster and a workload).
        scenario: the scenario file (``scenario``).
        cluster: the cluster manifests, files or folders (``simulate``).
        workload: the workload files (``simulate``).
        until: stop at this virtual time (``simulate``; a scenario has its own ``until``).
        config: the configuration's name in the spec.
        config_path: its file; ``None`` for kube-scheduler's defaults.
        seed: the scheduler's seed.
    """

    id: int
    input: str
    kind: str
    config: str
    seed: int
    scenario: str = ""
    cluster: tuple[str, ...] = ()
    workload: tuple[str, ...] = ()
    until: float | None = None
    config_path: str | None = None

    def payload(self) -> dict[str, object]:
        """What a worker gets: a plain mapping of strings and numbers."""
        return {
            "id": self.id,
            "kind": self.kind,
            "scenario": self.scenario,
            "cluster": list(self.cluster),
            "workload": list(self.workload),
            "until": self.until,
            "config": self.config_path,
            "seed": self.seed,
        }


@attrs.frozen(kw_only=True)
class CaseResult:
    """What one case came to.

    Attributes:
        case: the case.
        bound: pods bound (a scenario: bound at the end; a cluster and workload: workload
            pods bound and not preempted, running or completed).
        pending: pods never bound (a scenario: pending at the end; a cluster and workload:
            unschedulable).
        attempts: scheduling attempts.
        end_time: virtual seconds the run covered.
        placement_digest: ``sha256:`` and the hex SHA-256 of the placement table, one
            ``namespace/name<TAB>node<LF>`` line per pod, sorted (see :func:`placement_digest`).
        utilisation: ``cpu`` and ``memory`` -> ``{"end": ..., "mean": ...}``, requested /
            allocatable over the cluster at the end and its time-weighted mean.
        latency: scheduling latency percentiles of bound pods (virtual seconds; ``p50``,
            ``p90``, ``p99``, ``max``); empty when nothing was bound.
        error: why the case failed (``""`` when it ran); the other figures are then zero.
    """

    case: SweepCase
    bound: int = 0
    pending: int = 0
    attempts: int = 0
    end_time: float = 0.0
    placement_digest: str = ""
    utilisation: Mapping[str, Mapping[str, float]] = attrs.field(factory=dict)
    latency: Mapping[str, float] = attrs.field(factory=dict)
    error: str = ""

    @property
    def ok(self) -> bool:
        """True when the case ran."""
        return not self.error

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping; a failed case has its ``error`` and no figures."""
        c = self.case
        out: dict[str, object] = {
            "id": c.id,
            "input": c.input,
            "kind": c.kind,
            "config": c.config,
            "seed": c.seed,
        }
        if self.error:
            out["error"] = self.error
            return out
        out.update(
            {
                "bound": self.bound,
                "pending": self.pending,
                "attempts": self.attempts,
                "endTime": self.end_time,
                "placementDigest": self.placement_digest,
                "utilisation": {r: dict(v) for r, v in self.utilisation.items()},
                "latency": dict(self.latency),
            }
        )
        return out


@attrs.frozen(kw_only=True)
class SweepResult:
    """Every case's result, ordered by case id.

    Attributes:
        results: one per case.
        executor: the executor that ran them (not part of :meth:`to_dict`).
        jobs: how many ran at once at most (not part of :meth:`to_dict`).
        wall_seconds: how long the sweep took (not part of :meth:`to_dict`).
    """

    results: tuple[CaseResult, ...]
    executor: str = "local"
    jobs: int = 1
    wall_seconds: float = 0.0

    @property
    def errors(self) -> tuple[CaseResult, ...]:
        """The cases that failed."""
        return tuple(r for r in self.results if r.error)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping: only what the cases computed, so that it is the same with
        every executor and job count."""
        return {
            "kind": "SweepResult",
            "cases": len(self.results),
            "failed": len(self.errors),
            "results": [r.to_dict() for r in self.results],
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON, indented (what ``schedframe sweep -o json`` prints)."""
        return json.dumps(self.to_dict(), indent=2)

    def to_text(self) -> str:
        """One line per case, then the failed cases' errors."""
        from schedframe.simulation._table import format_table

        def pct(v: float | None) -> str:
            return "-" if v is None else f"{100 * v:.1f}%"

        def sec(v: float | None) -> str:
            return "-" if v is None else f"{v:g}s"

        rows = []
        for r in self.results:
            c = r.case
            if r.error:
                rows.append([c.id, c.input, c.config, c.seed, "error", "", "", "", "", "", ""])
                continue
            rows.append(
                [
                    c.id,
                    c.input,
                    c.config,
                    c.seed,
                    r.bound,
                    r.pending,
                    pct(r.utilisation.get("cpu", {}).get("end")),
                    pct(r.utilisation.get("memory", {}).get("end")),
                    sec(r.latency.get("p50")),
                    sec(r.latency.get("p99")),
                    r.placement_digest.removeprefix("sha256:")[:12],
                ]
            )
        headers = ["ID", "INPUT", "CONFIG", "SEED", "BOUND", "PENDING", "CPU", "MEMORY"]
        headers += ["P50", "P99", "PLACEMENTS"]
        lines = [
            f"Sweep: {len(self.results)} cases, {len(self.errors)} failed "
            f"({self.executor} executor, {self.jobs} jobs, {self.wall_seconds:.2f}s wall)",
            "",
            format_table(headers, rows, align="rllrrrrrrrl"),
        ]
        if self.errors:
            lines += ["", "Failed cases:"]
            for r in self.errors:
                first, *rest = r.error.splitlines() or [""]
                lines.append(f"  {r.case.id}: {first}")
                lines += [f"     {line}" for line in rest]
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The spec
# --------------------------------------------------------------------------------------------


def _issue(path: str, kind: str, detail: str = "", value: object = None) -> FieldIssue:
    if value is None:
        return FieldIssue(path=path, kind=kind, detail=detail)
    return FieldIssue(path=path, kind=kind, detail=detail, value=value)


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _paths(
    raw: object, field: str, base: Path, issues: list[FieldIssue], *, single: bool = False
) -> tuple[str, ...]:
    """A path or a list of paths relative to ``base``, each existing; absolute strings."""
    items = [raw] if isinstance(raw, str) else raw
    expected = "expected a path" if single else "expected a path or a list of paths"
    if (
        not isinstance(items, list)
        or not items
        or not all(isinstance(p, str) and p for p in items)
        or (single and len(items) != 1)
    ):
        issues.append(_issue(field, INVALID, expected, raw))
        return ()
    out = []
    for i, p in enumerate(items):
        where = field if isinstance(raw, str) else f"{field}[{i}]"
        path = (base / p).resolve()
        if not path.exists():
            issues.append(_issue(where, NOT_FOUND, "", p))
        out.append(str(path))
    return tuple(out)


def _seeds(raw: object, issues: list[FieldIssue]) -> list[int]:
    if raw is None:
        return [0]
    if isinstance(raw, Mapping):
        for key in raw:
            if key not in _SEED_RANGE_FIELDS:
                issues.append(_issue(f"seeds.{key}", "Unknown field", "expected from, count"))
        start, count = raw.get("from", 0), raw.get("count")
        ok = True
        if not _int(start) or start < 0:
            issues.append(_issue("seeds.from", INVALID, "expected an integer >= 0", start))
            ok = False
        if count is None:
            issues.append(_issue("seeds.count", REQUIRED))
            ok = False
        elif not _int(count) or count < 0:
            issues.append(_issue("seeds.count", INVALID, "expected an integer >= 0", count))
            ok = False
        return list(range(start, start + count)) if ok else []
    if not isinstance(raw, list):
        issues.append(_issue("seeds", INVALID, "expected a list of integers or {from, count}"))
        return []
    seeds = []
    for i, s in enumerate(raw):
        if not _int(s) or s < 0:
            issues.append(_issue(f"seeds[{i}]", INVALID, "expected an integer >= 0", s))
        else:
            seeds.append(s)
    return seeds


@attrs.frozen
class _Input:
    kind: str
    scenario: str = ""
    cluster: tuple[str, ...] = ()
    workload: tuple[str, ...] = ()
    until: float | None = None


def _named(raw: object, field: str, issues: list[FieldIssue]) -> Mapping[str, object]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        issues.append(_issue(field, INVALID, "expected a mapping of names", raw))
        return {}
    out = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not name:
            issues.append(_issue(field, INVALID, "names must be non-empty strings", name))
        else:
            out[name] = value
    return out


def sweep_from_dict(
    doc: Mapping[str, object], *, source: str = "<sweep>", base: Path | None = None
) -> tuple[SweepCase, ...]:
    """Decode a sweep spec strictly into its cases: unknown fields, wrong types, missing
    files and unknown names are errors with their field paths.

    Args:
        doc: the parsed document.
        source: named in errors.
        base: where the spec's paths are relative to (the current directory by default).

    Raises:
        ManifestError: every problem found, each with its field path.
    """
    base = base if base is not None else Path.cwd()
    issues: list[FieldIssue] = []
    for key in doc:
        if key not in _TOP_FIELDS:
            issues.append(
                _issue(str(key), "Unknown field", f"expected one of {', '.join(_TOP_FIELDS)}")
            )
    if doc.get("kind", "Sweep") != "Sweep":
        issues.append(_issue("kind", UNSUPPORTED, 'supported values: "Sweep"', doc.get("kind")))

    inputs: dict[str, _Input] = {}
    for name, raw in _named(doc.get("scenarios"), "scenarios", issues).items():
        (path,) = _paths(raw, f"scenarios.{name}", base, issues, single=True) or ("",)
        inputs[name] = _Input(kind="scenario", scenario=path)
    for name, raw in _named(doc.get("clusters"), "clusters", issues).items():
        field = f"clusters.{name}"
        if name in inputs:
            issues.append(_issue(field, DUPLICATE, "a scenario has this name", name))
            continue
        if not isinstance(raw, Mapping):
            issues.append(_issue(field, INVALID, "expected {cluster, workload, until}", raw))
            continue
        for key in raw:
            if key not in _CLUSTER_FIELDS:
                issues.append(
                    _issue(
                        f"{field}.{key}",
                        "Unknown field",
                        f"expected one of {', '.join(_CLUSTER_FIELDS)}",
                    )
                )
        if "cluster" not in raw:
            issues.append(_issue(f"{field}.cluster", REQUIRED))
            cluster: tuple[str, ...] = ()
        else:
            cluster = _paths(raw["cluster"], f"{field}.cluster", base, issues)
        workload: tuple[str, ...] = ()
        if raw.get("workload") is not None:
            workload = _paths(raw["workload"], f"{field}.workload", base, issues)
        until = raw.get("until")
        if until is not None and (
            not isinstance(until, int | float) or isinstance(until, bool) or until < 0
        ):
            issues.append(_issue(f"{field}.until", INVALID, "expected seconds >= 0", until))
            until = None
        inputs[name] = _Input(
            kind="simulate",
            cluster=cluster,
            workload=workload,
            until=None if until is None else float(until),
        )

    configs: dict[str, str | None] = {}
    raw_configs = doc.get("configs")
    for name, raw in _named(raw_configs, "configs", issues).items():
        if raw is None:
            configs[name] = None
        else:
            (path,) = _paths(raw, f"configs.{name}", base, issues, single=True) or ("",)
            configs[name] = path
    if raw_configs is None:
        configs[DEFAULT_CONFIG] = None

    seeds = _seeds(doc.get("seeds"), issues)

    cases: list[SweepCase] = []

    def add(name: str, config: str, seed: int) -> None:
        inp = inputs[name]
        cases.append(
            SweepCase(
                id=len(cases),
                input=name,
                kind=inp.kind,
                scenario=inp.scenario,
                cluster=inp.cluster,
                workload=inp.workload,
                until=inp.until,
                config=config,
                config_path=configs[config],
                seed=seed,
            )
        )

    for name in inputs:
        for config in configs:
            for seed in seeds:
                add(name, config, seed)

    raw_cases = doc.get("cases", [])
    if not isinstance(raw_cases, list):
        issues.append(_issue("cases", INVALID, "expected a list of cases", raw_cases))
        raw_cases = []
    for i, raw in enumerate(raw_cases):
        field = f"cases[{i}]"
        if not isinstance(raw, Mapping):
            issues.append(_issue(field, INVALID, "expected {scenario|cluster, config, seed}"))
            continue
        for key in raw:
            if key not in _CASE_FIELDS:
                issues.append(
                    _issue(
                        f"{field}.{key}",
                        "Unknown field",
                        f"expected one of {', '.join(_CASE_FIELDS)}",
                    )
                )
        ok = True
        given = [k for k in ("scenario", "cluster") if k in raw]
        if len(given) != 1:
            issues.append(_issue(field, REQUIRED, "exactly one of scenario, cluster"))
            ok = False
        else:
            key = given[0]
            name = raw[key]
            want = "scenario" if key == "scenario" else "simulate"
            if not isinstance(name, str) or name not in inputs or inputs[name].kind != want:
                issues.append(_issue(f"{field}.{key}", NOT_FOUND, f"not a name under {key}s", name))
                ok = False
        config = raw.get("config", DEFAULT_CONFIG if DEFAULT_CONFIG in configs else None)
        if not isinstance(config, str) or config not in configs:
            issues.append(_issue(f"{field}.config", NOT_FOUND, "not a name under configs", config))
            ok = False
        seed = raw.get("seed", 0)
        if not _int(seed) or seed < 0:
            issues.append(_issue(f"{field}.seed", INVALID, "expected an integer >= 0", seed))
            ok = False
        if ok:
            add(raw[given[0]], config, seed)
    if issues:
        raise ManifestError(issues, source=source)
    return tuple(cases)


def load_sweep(source: str | os.PathLike[str]) -> tuple[SweepCase, ...]:
    """Load a sweep spec (YAML) into its cases; paths in it are relative to the file.

    Raises:
        ManifestError: bad YAML or any bad field, naming the file and the field path.
    """
    from schedframe.simulation._scenario import read_yaml_mapping

    path, name, doc = read_yaml_mapping(source, "a sweep spec")
    return sweep_from_dict(doc, source=name, base=path.parent)


# --------------------------------------------------------------------------------------------
# One case, in a worker
# --------------------------------------------------------------------------------------------


def placement_digest(placements: Mapping[str, str]) -> str:
    """``sha256:<hex>`` of the placement table: ``pod<TAB>node<LF>`` lines sorted by pod."""
    table = "".join(f"{pod}\t{node}\n" for pod, node in sorted(placements.items()))
    return "sha256:" + hashlib.sha256(table.encode("utf-8")).hexdigest()


def _latency(values: Iterable[float]) -> dict[str, float]:
    from schedframe.simulation._summary import LATENCY_PERCENTILES, percentile

    ordered = sorted(values)
    if not ordered:
        return {}
    out = {f"p{p}": round(percentile(ordered, p), 6) for p in LATENCY_PERCENTILES}
    out["max"] = round(ordered[-1], 6)
    return out


# Each worker process loads an input or a configuration once, however many cases use it.
@functools.lru_cache(maxsize=64)
def _scenario(path: str) -> Scenario:
    from schedframe.simulation._scenario import load_scenario

    return load_scenario(path)


@functools.lru_cache(maxsize=64)
def _config(path: str | None) -> KubeSchedulerConfiguration:
    from schedframe.config import load_config

    return load_config(path)


@functools.lru_cache(maxsize=64)
def _cluster(paths: tuple[str, ...]) -> tuple[object, ...]:
    from schedframe.objects import load_manifests

    return tuple(obj for p in paths for obj in load_manifests(p))


@functools.lru_cache(maxsize=64)
def _workload(paths: tuple[str, ...]) -> Workload:
    from schedframe.simulation._workload import Workload, load_workload

    workload = Workload()
    for p in paths:
        workload = workload + load_workload(p)
    return workload


def _figures(payload: Mapping[str, Any]) -> dict[str, object]:
    config = _config(payload["config"])
    seed = int(payload["seed"])
    if payload["kind"] == "scenario":
        from schedframe.simulation._compare import _mean_utilisation, pod_latencies
        from schedframe.simulation._scenario import run_scenario

        result = run_scenario(_scenario(payload["scenario"]), config=config, seed=seed)
        end = result.utilisation[-1][1] if result.utilisation else {}
        mean = _mean_utilisation(result)
        return {
            "bound": len(result.placements),
            "pending": len(result.pending),
            "attempts": result.attempts,
            "endTime": round(result.end_time, 6),
            "placementDigest": placement_digest(result.placements),
            "utilisation": {
                r: {"end": round(end.get(r, 0.0), 6), "mean": round(mean.get(r, 0.0), 6)}
                for r in ("cpu", "memory")
            },
            "latency": _latency(pod_latencies(result).values()),
        }
    from schedframe.simulation._engine import simulate

    until = payload["until"]
    sim = simulate(
        cluster=_cluster(tuple(payload["cluster"])),
        workload=_workload(tuple(payload["workload"])),
        config=config,
        seed=seed,
        until=None if until is None else float(until),
    )
    summary = sim.summary()
    victims = set(sim.victims)
    placements = {p.key: p.spec.node_name for p in sim.initial_pods if p.key not in victims}
    for rec in sim.pods:
        if rec.state in ("running", "completed"):
            placements[rec.key] = rec.node

    def share(amounts: Iterable[float], capacity: Iterable[float]) -> float:
        total = sum(capacity)
        return 0.0 if total <= 0 else round(sum(amounts) / total, 6)

    return {
        "bound": summary.bound,
        "pending": summary.unschedulable,
        "attempts": summary.attempts,
        "endTime": round(summary.end_time, 6),
        "placementDigest": placement_digest(placements),
        "utilisation": {
            r: {
                "end": share(
                    (n.requested.get(r, 0) for n in summary.nodes),
                    (n.allocatable.get(r, 0) for n in summary.nodes),
                ),
                "mean": share(
                    (n.average.get(r, 0.0) for n in summary.nodes),
                    (n.allocatable.get(r, 0) for n in summary.nodes),
                ),
            }
            for r in ("cpu", "memory")
        },
        "latency": {k: round(v, 6) for k, v in summary.latency.items()},
    }


def run_case(payload: Mapping[str, Any]) -> dict[str, object]:
    """Run one case from its :meth:`SweepCase.payload` (in a worker process): its figures, or
    ``{"error": ...}``. Never raises for a failing case."""
    from schedframe.errors import ConfigError, PluginError

    try:
        return _figures(payload)
    except ConfigError as exc:
        # A configuration that loads but does not build (an unknown plugin): name its file.
        if exc.source is None and payload["config"] is not None:
            return {"error": str(exc.with_source(str(payload["config"])))}
        return {"error": str(exc)}
    except PluginError as exc:
        where = f"{payload['config']}: " if payload["config"] is not None else ""
        return {"error": f"{where}{exc}"}
    except SchedframeError as exc:
        return {"error": str(exc) or type(exc).__name__}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


# --------------------------------------------------------------------------------------------
# Executors
# --------------------------------------------------------------------------------------------


#: A case whose worker process died twice (killed, out of memory, a crash in C code).
WORKER_DIED: Final = "worker failed: the worker process died running this case, twice"


#: Why a local sweep stopped: its worker processes died before any case finished.
NO_WORKERS: Final = (
    "the worker processes died before running any case: a script that calls sweep() must "
    'do so under `if __name__ == "__main__":` (spawned workers import its main module)'
)


def _pool(
    payloads: Sequence[dict[str, object]], jobs: int, out: dict[int, dict[str, object]]
) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Run ``payloads`` in a fresh pool into ``out`` until done or a worker dies; then
    ``(suspects, untouched)``: the cases in flight when the pool broke, and those not
    submitted yet."""
    import concurrent.futures
    import multiprocessing
    from concurrent.futures.process import BrokenProcessPool

    context = multiprocessing.get_context("spawn")
    workers = max(1, min(jobs, len(payloads)))
    todo = list(reversed(payloads))
    # At most two cases per worker in flight: a dead worker breaks the pool and takes down
    # every case in flight, so few are suspects, and the queue stays full.
    inflight: dict[concurrent.futures.Future[dict[str, object]], dict[str, object]] = {}
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        while todo or inflight:
            while todo and len(inflight) < 2 * workers:
                payload = todo.pop()
                inflight[pool.submit(run_case, payload)] = payload
            done, _ = concurrent.futures.wait(
                inflight, return_when=concurrent.futures.FIRST_COMPLETED
            )
            broken = False
            for future in done:
                payload = inflight.pop(future)
                try:
                    out[int(payload["id"])] = future.result()  # type: ignore[call-overload]
                except BrokenProcessPool:
                    broken = True
                    inflight[future] = payload
            if broken:
                return list(inflight.values()), list(reversed(todo))
    return [], []


def _run_local(payloads: Sequence[dict[str, object]], jobs: int) -> dict[int, dict[str, object]]:
    out: dict[int, dict[str, object]] = {}
    todo = list(payloads)
    # A worker that dies (killed, out of memory, a crash in C code) breaks the pool: the cases
    # in flight run again each in a process of its own, so that only a case that kills its
    # worker a second time fails (as a Ray task retried once); the others in a fresh pool.
    while todo:
        suspects, todo = _pool(todo, jobs, out)
        for payload in suspects:
            again, _ = _pool([payload], 1, out)
            for dead in again:
                out[int(dead["id"])] = {"error": WORKER_DIED}  # type: ignore[call-overload]
        if suspects and all(r.get("error") == WORKER_DIED for r in out.values()):
            # Not one case ran: the workers themselves cannot start.
            raise SweepError(NO_WORKERS)
    return out


def _run_ray(
    payloads: Sequence[dict[str, object]], jobs: int, address: str | None
) -> dict[int, dict[str, object]]:
    import logging

    try:
        import ray
    except ImportError:
        raise SweepError(RAY_HINT) from None

    started = False
    if not ray.is_initialized():
        address = address or os.environ.get("RAY_ADDRESS") or None
        # Ray's own start-up notices are not the sweep's output: errors only.
        try:
            if address:
                ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
            else:
                ray.init(
                    num_cpus=jobs,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                )
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError ...
            where = f"connect to Ray at {address}" if address else "start a local Ray instance"
            raise SweepError(f"cannot {where}: {type(exc).__name__}: {exc}") from None
        started = True
    out: dict[int, dict[str, object]] = {}
    try:
        # A task whose worker dies is run once more, as the local pool does.
        task = ray.remote(num_cpus=1, max_retries=1)(run_case)
        refs = [(int(p["id"]), task.remote(p)) for p in payloads]  # type: ignore[call-overload]
        # Collected in submission order: the results are keyed by case id anyway.
        for case, ref in refs:
            try:
                out[case] = ray.get(ref)
            except ray.exceptions.WorkerCrashedError:
                out[case] = {"error": WORKER_DIED}
    finally:
        if started:
            ray.shutdown()
    return out


def _strip(text: str, prefixes: Sequence[str]) -> str:
    for prefix in prefixes:
        text = text.replace(prefix, "")
    return text


def sweep(
    cases: Sequence[SweepCase] | str | os.PathLike[str],
    *,
    executor: str = "local",
    jobs: int | None = None,
    ray_address: str | None = None,
) -> SweepResult:
    """Run every case of a sweep, each in a worker process, and gather the results.

    Args:
        cases: the cases (from :func:`load_sweep` or :func:`sweep_from_dict`), or a sweep
            spec file.
        executor: ``local`` (a process pool of spawned processes) or ``ray`` (Ray tasks;
            needs ``schedframe[ray]``).
        jobs: cases run at once at most (``local``: pool size; ``ray``: CPUs of the local
            Ray instance it starts); the machine's CPU count by default.
        ray_address: the Ray cluster to connect to (``executor="ray"``; ``RAY_ADDRESS`` by
            default). Without one, a local Ray instance is started, and shut down at the
            end; when Ray is already initialised in this process, that is used as it is.

    Returns:
        The results in case-id order, whatever order the cases finished in. A failing case
        is a result with its ``error``.

    Raises:
        ManifestError: a bad sweep spec file, naming the file and the field path.
        SweepError: an unknown executor, or Ray not installed.
    """
    import time

    if executor not in EXECUTORS:
        raise SweepError(f"unknown executor {executor!r}: expected one of {', '.join(EXECUTORS)}")
    if jobs is not None and jobs < 1:
        raise SweepError(f"jobs must be at least 1, not {jobs}")
    if isinstance(cases, str | os.PathLike):
        cases = load_sweep(cases)
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise SweepError("case ids must be unique")
    n = jobs if jobs is not None else (os.cpu_count() or 1)
    payloads = [c.payload() for c in cases]
    started = time.perf_counter()
    if executor == "ray":
        raw = _run_ray(payloads, n, ray_address)
    else:
        raw = _run_local(payloads, n)
    wall = time.perf_counter() - started
    # Workers get absolute paths; errors name files as seen from here, as the spec's own do.
    prefixes = [os.getcwd() + os.sep]
    results = []
    for case in sorted(cases, key=lambda c: c.id):
        doc = raw[case.id]
        if "error" in doc:
            results.append(CaseResult(case=case, error=_strip(str(doc["error"]), prefixes)))
            continue
        results.append(
            CaseResult(
                case=case,
                bound=int(doc["bound"]),  # type: ignore[call-overload]
                pending=int(doc["pending"]),  # type: ignore[call-overload]
                attempts=int(doc["attempts"]),  # type: ignore[call-overload]
                end_time=float(doc["endTime"]),  # type: ignore[arg-type]
                placement_digest=str(doc["placementDigest"]),
                utilisation=doc["utilisation"],  # type: ignore[arg-type]
                latency=doc["latency"],  # type: ignore[arg-type]
            )
        )
    return SweepResult(results=tuple(results), executor=executor, jobs=n, wall_seconds=wall)
