"""Benchmarks on kube-scheduler's own workload shapes (scheduler_perf), never part of the tests.

Each workload in ``bench/workloads/*.yaml`` is a list of scheduler_perf ops (``createNodes``,
``createPods``, ``churn``). Every run happens in a fresh subprocess, so the peak RSS it reports
is that workload's alone. In a run:

* nodes and the *init* pods are created on the in-memory backend and scheduled to completion
  before anything is measured;
* the **measured window** starts when the measured pods are created (API-side defaulting and
  the scheduler's watch handlers enqueueing them count) and ends when the scheduler is idle:
  every measured pod bound, or parked as unschedulable;
* the scheduler runs the default profile in **deterministic mode** (virtual clock, binding
  cycles run on the scheduling thread right after their scheduling cycle, no threads), so a
  backoff costs no wall time and runs are reproducible placement for placement.

Reported per workload: pods/s (measured pods bound / window wall time, median of ``--runs``),
CPU ms per bound pod (process CPU in the window), per-pod latency p50/p90/p99 (the wall time
the scheduler spent on the pod: its scheduling cycles and its binding cycle, summed over its
attempts) and the peak RSS of the run's process.

Usage::

    python bench/run.py                                   # every workload, 5 runs each
    python bench/run.py --workload SchedulingBasic        # prefix, or a glob: '*5000Nodes*'
    python bench/run.py --quick                           # 1/10 scale, one run: a smoke run
    python bench/run.py --json results.json --compare old.json
    python bench/run.py --workload SchedulingBasic/5000Nodes --profile prof.out   # cProfile
"""

from __future__ import annotations

import argparse
import copy
import fnmatch
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
WORKLOADS = HERE / "workloads"
TEMPLATES = WORKLOADS / "templates.yaml"
QUICK_SCALE = 0.1
DEFAULT_RUNS = 5
#: Go's zone label, and the hostname label the node preparer sets.
HOSTNAME_LABEL = "kubernetes.io/hostname"

Workload = dict[str, Any]


# -- workloads -----------------------------------------------------------------------------------


def load_workloads() -> dict[str, Workload]:
    """Every workload of ``bench/workloads/*.yaml`` (``templates.yaml`` aside), by name."""
    workloads: dict[str, Workload] = {}
    for path in sorted(WORKLOADS.glob("*.yaml")):
        if path == TEMPLATES:
            continue
        for workload in yaml.safe_load(path.read_text()) or ():
            name = workload["name"]
            if name in workloads:
                raise SystemExit(f"{path}: workload {name!r} defined twice")
            workload["file"] = path.name
            workloads[name] = workload
    return workloads


def select(workloads: Mapping[str, Workload], patterns: list[str]) -> list[str]:
    """Names matching any pattern: an exact name (that one only), a prefix, or a glob."""
    if not patterns:
        return list(workloads)
    chosen: list[str] = []
    for pattern in patterns:
        hits = [pattern] if pattern in workloads else []  # an exact name means that one only
        hits = hits or [
            n for n in workloads if n.startswith(pattern) or fnmatch.fnmatchcase(n, pattern)
        ]
        if not hits:
            raise SystemExit(f"no workload matches {pattern!r}; known: {', '.join(workloads)}")
        chosen.extend(h for h in hits if h not in chosen)
    return chosen


def scaled(count: int, scale: float) -> int:
    return max(1, round(count * scale)) if scale != 1 else count


# -- one run, inside a fresh process -------------------------------------------------------------


class _Objects:
    """Builds objects from the templates, each one parsed from its own manifest dict."""

    def __init__(self) -> None:
        from schedframe.objects import node_from_dict, pod_from_dict

        self._templates: dict[str, dict[str, Any]] = yaml.safe_load(TEMPLATES.read_text())
        self._node = node_from_dict
        self._pod = pod_from_dict
        self._serial: dict[str, int] = {}

    def make(self, template: str, *, namespace: str = "", labels: Mapping[str, str] = {}) -> Any:
        d = copy.deepcopy(self._templates[template])
        meta = d["metadata"]
        prefix = meta.pop("generateName")
        n = self._serial[prefix] = self._serial.get(prefix, 0) + 1
        meta["name"] = f"{prefix}{n:06d}"
        if d["kind"] == "Node":
            meta["labels"] = {**meta.get("labels", {}), HOSTNAME_LABEL: meta["name"], **labels}
            return self._node(d)
        meta["namespace"] = namespace or "default"
        return self._pod(d)


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    k = (len(sorted_values) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def _config_with(extra: list[str] | tuple[str, ...]) -> tuple[Any, Any]:
    """The configuration and registry of a run: kube-scheduler's defaults, plus the no-op
    out-of-tree plugins of ``bench/noop_plugins.py`` a workload names in ``extraPlugins``
    (enabled at their extension point, after the default plugins)."""
    if not extra:
        return None, None
    sys.path.insert(0, str(HERE))
    import noop_plugins

    from schedframe.runtime import Registry

    registry = Registry.discover()
    points: dict[str, list[dict[str, str]]] = {}
    for name in extra:
        factory, point = noop_plugins.PLUGINS[name]
        registry.register(name, factory, replace=True)
        points.setdefault(point, []).append({"name": name})
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {point: {"enabled": names} for point, names in points.items()},
            }
        ],
    }
    return config, registry


def run_once(workload: Workload, scale: float, profile: str | None = None) -> dict[str, Any]:
    """Run ``workload`` once in this process; returns its figures."""
    started = time.perf_counter()
    from schedframe.scheduler import Scheduler
    from schedframe.scheduler._clock import VirtualClock

    imported = time.perf_counter()
    config, registry = _config_with(workload.get("extraPlugins", ()))
    sched = Scheduler.from_config(config, deterministic=True, seed=0, registry=registry)
    built = time.perf_counter()
    backend: Any = sched.backend
    clock = sched.clock
    assert isinstance(clock, VirtualClock)
    objects = _Objects()

    # Which pod each scheduling attempt was about (for per-pod latency).
    popped: list[Any] = [None]
    queue: Any = sched.queue
    real_pop = queue.pop

    def pop(block: bool = False, timeout: float | None = None) -> Any:
        qpi = real_pop(block=block, timeout=timeout)
        popped[0] = qpi
        return qpi

    queue.pop = pop

    def drain(on_attempt: Callable[[str, float], None] | None = None) -> int:
        """``Scheduler.run_until_idle``, timing every scheduling attempt."""
        cycles = 0
        bound_before = sched._bound
        last_progress = clock.now()
        perf = time.perf_counter
        schedule_one = sched.schedule_one
        while True:
            t0 = perf()
            did = schedule_one()
            dt = perf() - t0
            if did:
                cycles += 1
                if on_attempt is not None and popped[0] is not None:
                    on_attempt(popped[0].pod.uid, dt)
                continue
            if sched._bound != bound_before:
                bound_before = sched._bound
                last_progress = clock.now()
            in_flight = sched.in_flight()
            if not in_flight and not sched.queue.backoff_pods():
                return cycles
            if clock.now() - last_progress >= 600:
                return cycles
            deadline = clock.next_deadline()
            if deadline is None:
                return cycles
            clock.advance_to(deadline)

    churn: dict[str, Any] | None = None
    result: dict[str, Any] = {}
    for op in workload["ops"]:
        kind = op["op"]
        if kind == "createNodes":
            strategy = op.get("labelNodePrepareStrategy")
            for i in range(scaled(op["count"], scale)):
                labels = {}
                if strategy:
                    values = strategy["labelValues"]
                    labels[strategy["labelKey"]] = values[i % len(values)]
                backend.create(objects.make(op["template"], labels=labels))
            drain()
        elif kind == "churn":
            churn = op
        elif kind == "createResourceDriver":
            _create_resource_driver(backend, op)
            drain()
        elif kind == "createDRAObjects":
            _create_dra_objects(backend, op)
            drain()
        elif kind == "createPods" and not op.get("collectMetrics"):
            for _ in range(scaled(op["count"], scale)):
                backend.create(objects.make(op["template"], namespace=op.get("namespace", "")))
            drain()
        elif kind == "createPods":
            result = _measure(
                sched, backend, objects, op, scaled(op["count"], scale), churn, drain, profile
            )
        else:
            raise SystemExit(f"{workload['name']}: unknown op {kind!r}")
    result["import_s"] = imported - started
    result["build_s"] = built - imported
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sched.stop()
    return result


_DRA_CLASS = "test-class"


def _create_resource_driver(backend: Any, op: Mapping[str, Any]) -> None:
    """scheduler_perf's createResourceDriver: one ResourceSlice per matching node, with
    ``maxClaimsPerNode`` devices of the driver (no attributes: any device fits)."""
    from schedframe.objects import from_dict

    driver = op["driverName"]
    for n in backend.list("Node"):
        if not fnmatch.fnmatch(n.name, op["nodes"]):
            continue
        devices = [{"name": f"instance-{i}"} for i in range(int(op["maxClaimsPerNode"]))]
        backend.create(
            from_dict(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": {"name": f"{n.name}-{driver}"},
                    "spec": {
                        "driver": driver,
                        "pool": {"name": n.name, "generation": 1, "resourceSliceCount": 1},
                        "nodeName": n.name,
                        "devices": devices,
                    },
                }
            )
        )
    backend.create(
        from_dict(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": _DRA_CLASS},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
            }
        )
    )


def _create_dra_objects(backend: Any, op: Mapping[str, Any]) -> None:
    """The claim template (one device of the test class) in each namespace."""
    from schedframe.objects import from_dict

    for namespace in op["namespaces"]:
        backend.create(
            from_dict(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaimTemplate",
                    "metadata": {"name": "test-claim-template", "namespace": namespace},
                    "spec": {
                        "spec": {
                            "devices": {
                                "requests": [
                                    {"name": "req-0", "exactly": {"deviceClassName": _DRA_CLASS}}
                                ]
                            }
                        }
                    },
                }
            )
        )


def _measure(
    sched: Any,
    backend: Any,
    objects: _Objects,
    op: Mapping[str, Any],
    count: int,
    churn: Mapping[str, Any] | None,
    drain: Callable[..., int],
    profile: str | None,
) -> dict[str, Any]:
    namespace = op.get("namespace", "")
    pods = [objects.make(op["template"], namespace=namespace) for _ in range(count)]
    measured = {f"{p.namespace}/{p.name}" for p in pods}  # the memory backend's uids
    spent: dict[str, float] = {}
    churned: list[Any] = []
    state = {"cycles": 0, "churns": 0}
    every = int(churn["everyCycles"]) if churn else 0

    def on_attempt(uid: str, dt: float) -> None:
        if uid in measured:
            spent[uid] = spent.get(uid, 0.0) + dt
        if every:
            state["cycles"] += 1
            if state["cycles"] % every == 0:
                _recreate(backend, objects, churn, churned)
                state["churns"] += 1

    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    gc_before = _gc_collections()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for pod in pods:
        backend.create(pod)
    created = time.perf_counter()
    cycles = drain(on_attempt)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    if profiler is not None:
        assert profile is not None
        profiler.disable()
        profiler.dump_stats(profile)

    bound = sum(
        1
        for uid in measured
        if (r := sched.results.get(uid)) is not None and r.outcome == "scheduled"
    )
    latencies = sorted(v * 1000 for uid, v in spent.items() if uid in measured)
    return {
        "measured_pods": count,
        "bound": bound,
        "cycles": cycles,
        "churns": state["churns"],
        "wall_s": wall,
        "create_s": created - wall0,
        "cpu_s": cpu,
        "pods_per_s": bound / wall if wall > 0 else 0.0,
        "cpu_ms_per_pod": cpu * 1000 / bound if bound else 0.0,
        "latency_ms_p50": _percentile(latencies, 0.50),
        "latency_ms_p90": _percentile(latencies, 0.90),
        "latency_ms_p99": _percentile(latencies, 0.99),
        "gc_collections": _gc_collections() - gc_before,
    }


def _recreate(
    backend: Any, objects: _Objects, churn: Mapping[str, Any] | None, live: list[Any]
) -> None:
    """scheduler_perf's churn op in ``recreate`` mode: delete last round's objects, make new."""
    assert churn is not None
    for obj in live:
        try:
            backend.delete(obj)
        except Exception:  # a pod preempted or already gone
            pass
    live.clear()
    for template in churn["templates"]:
        live.append(backend.create(objects.make(template, namespace="churn")))


def _gc_collections() -> int:
    import gc

    return sum(s["collections"] for s in gc.get_stats())


# -- the parent: runs, aggregation, table, JSON --------------------------------------------------


def _child(name: str, scale: float) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name, "--scale", str(scale)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{name}: run failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def aggregate(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over runs (max for peak RSS)."""

    def med(key: str) -> float:
        return float(statistics.median(r[key] for r in runs))

    return {
        "runs": len(runs),
        "measured_pods": runs[0]["measured_pods"],
        "bound": runs[0]["bound"],
        "pods_per_s": med("pods_per_s"),
        "pods_per_s_min": min(r["pods_per_s"] for r in runs),
        "pods_per_s_max": max(r["pods_per_s"] for r in runs),
        "cpu_ms_per_pod": med("cpu_ms_per_pod"),
        "latency_ms_p50": med("latency_ms_p50"),
        "latency_ms_p90": med("latency_ms_p90"),
        "latency_ms_p99": med("latency_ms_p99"),
        "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
        "wall_s": med("wall_s"),
        "create_s": med("create_s"),
        "build_s": med("build_s"),
        "per_run": runs,
    }


def _git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=HERE,
            capture_output=True,
            text=True,
            check=False,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=HERE,
            capture_output=True,
            text=True,
            check=False,
        )
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except OSError:
        return "unknown"


def run_meta(script: str, **fields: Any) -> dict[str, Any]:
    """The ``meta`` block of a results file: where, when and how the figures were made."""
    return {
        "commit": _git_commit(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        **fields,
        "command": " ".join(["python", script, *sys.argv[1:]]),
    }


def _row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(
        c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
    )


def _table(
    results: Mapping[str, dict[str, Any]],
    workloads: Mapping[str, Workload],
    previous: Mapping[str, Any] | None,
    scale: float = 1.0,
) -> Iterator[str]:
    head = ["workload", "pods", "pods/s", "Go", "xGo", "CPU ms/pod", "Go", "p50 ms", "p90 ms"]
    head += ["p99 ms", "RSS MiB", "Go"]
    if previous is not None:
        head.append("vs prev")
    rows = [head]
    for name, r in results.items():
        # Go's figures are for the full-scale shapes only.
        go = (workloads[name].get("go") or {}) if scale == 1 else {}
        gps = go.get("pods_per_s")
        row = [
            name,
            f"{r['bound']}/{r['measured_pods']}",
            f"{r['pods_per_s']:.0f}",
            f"{gps}" if gps else "-",
            f"{r['pods_per_s'] / gps:.2f}" if gps else "-",
            f"{r['cpu_ms_per_pod']:.2f}",
            f"{go.get('cpu_ms_per_pod', '-')}",
            f"{r['latency_ms_p50']:.2f}",
            f"{r['latency_ms_p90']:.2f}",
            f"{r['latency_ms_p99']:.2f}",
            f"{r['peak_rss_mib']:.0f}",
            f"{go.get('peak_rss_mib', '-')}",
        ]
        if previous is not None:
            old = previous.get(name)
            row.append(f"{r['pods_per_s'] / old['pods_per_s']:.2f}x" if old else "-")
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    for row in rows:
        yield _row(row, widths)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", "-w", action="append", default=[], help="name/prefix/glob")
    parser.add_argument(
        "--runs", type=int, default=None, help=f"runs each (default {DEFAULT_RUNS})"
    )
    parser.add_argument("--quick", action="store_true", help="1/10 scale and one run: a smoke run")
    parser.add_argument("--scale", type=float, default=None, help="multiply every count")
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    parser.add_argument("--compare", metavar="FILE", help="a previous --json file to compare with")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    parser.add_argument("--profile", metavar="FILE", help="cProfile the window, in this process")
    parser.add_argument("--child", metavar="NAME", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    workloads = load_workloads()
    scale = args.scale if args.scale is not None else (QUICK_SCALE if args.quick else 1.0)
    if args.child:
        print(json.dumps(run_once(workloads[args.child], scale)))
        return 0
    if args.list:
        for name, w in workloads.items():
            print(f"{name}  ({w['file']})")
        return 0
    names = select(workloads, args.workload)
    if args.profile:
        r = run_once(workloads[names[0]], scale, profile=args.profile)
        print(json.dumps(r, indent=1))
        print(f"profile written to {args.profile} (python -m pstats {args.profile})")
        return 0
    runs = args.runs if args.runs is not None else (1 if args.quick else DEFAULT_RUNS)
    previous = None
    if args.compare:
        previous = json.loads(Path(args.compare).read_text())["workloads"]

    results: dict[str, dict[str, Any]] = {}
    for name in names:
        per_run = []
        for i in range(runs):
            r = _child(name, scale)
            per_run.append(r)
            print(
                f"  {name} run {i + 1}/{runs}: {r['pods_per_s']:.0f} pods/s, "
                f"{r['cpu_ms_per_pod']:.2f} CPU ms/pod, {r['peak_rss_mib']:.0f} MiB",
                file=sys.stderr,
                flush=True,
            )
        results[name] = aggregate(per_run)

    mode = "deterministic (virtual clock, bindings inline), default profile, memory backend"
    print(f"\nschedframe bench: {runs} run(s) each, scale {scale:g}, {mode}")
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs\n")
    for line in _table(results, workloads, previous, scale):
        print(line)
    if args.json:
        doc = {
            "meta": run_meta("bench/run.py", runs=runs, scale=scale, mode=mode),
            "workloads": results,
        }
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
