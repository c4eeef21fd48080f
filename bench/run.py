"""Benchmarks on kube-scheduler's own workload shapes (scheduler_perf), never part of the tests.

Each workload in ``bench/workloads/*.yaml`` is a list of scheduler_perf ops: ``createNodes``
(with upstream's ``labelNodePrepareStrategy`` and ``nodeAllocatableStrategy``, the latter
adding a CSINode per node), ``createPods`` (with ``persistentVolumeTemplate`` and
``persistentVolumeClaimTemplate``: a pre-bound claim and volume per pod), ``churn``,
``createResourceDriver`` and ``createDRAObjects``. Every run happens in a fresh subprocess,
so the peak RSS it reports is that workload's alone. In a run:

* nodes and the *init* pods are created on the in-memory backend and scheduled to completion
  before anything is measured;
* the **measured window** starts when the measured pods are created (API-side defaulting and
  the scheduler's watch handlers enqueueing them count) and ends at the last measured pod's
  binding;
* each workload runs in both modes of the default profile (``--mode`` picks one):
  **deterministic** (virtual clock, binding cycles on the scheduling thread right after their
  scheduling cycle, so a backoff costs no wall time and placements are reproducible) and
  **real** (real clock, ``Scheduler.run`` on its own thread, binding cycles on binding
  threads: what a deployment runs).

Reported per workload and mode, each the median of ``--runs`` runs with min and max: pods/s
(measured pods bound / window), CPU ms per bound pod (process CPU in the window: the figure to
trust on a shared machine), time to first binding, per-pod latency p50/p90/p99 from the pod's
first entry into the scheduling queue to its binding, and the peak RSS (largest of the runs).
Go's figures are printed beside as a reference measured elsewhere, never as a ratio.

Usage::

    python bench/run.py                                   # every workload, 5 runs, both modes
    python bench/run.py --mode real -w SchedulingBasic    # one mode
    python bench/run.py --workload SchedulingBasic        # prefix, or a glob: '*5000Nodes*'
    python bench/run.py --quick                           # 1/10 scale, one run: a smoke run
    python bench/run.py --json results.json --compare old.json
    python bench/run.py --workload SchedulingBasic/5000Nodes --profile prof.out   # cProfile
    python bench/run.py --workload SchedulingBasic/5000Nodes --metrics   # SchedulerMetrics on
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
#: Set (by ``--metrics``) for the runs to attach :class:`schedframe.metrics.SchedulerMetrics`.
METRICS_ENV = "SCHEDFRAME_BENCH_METRICS"
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

    def make_dict(
        self, template: str, *, namespace: str = "", labels: Mapping[str, str] = {}
    ) -> dict[str, Any]:
        """The manifest of the next object of ``template``, named as ``generateName`` would."""
        d = copy.deepcopy(self._templates[template])
        meta = d["metadata"]
        prefix = meta.pop("generateName")
        n = self._serial[prefix] = self._serial.get(prefix, 0) + 1
        meta["name"] = f"{prefix}{n:06d}"
        if d["kind"] == "Node":
            meta["labels"] = {**meta.get("labels", {}), HOSTNAME_LABEL: meta["name"], **labels}
        else:
            meta["namespace"] = namespace or "default"
        return d

    def make(self, template: str, *, namespace: str = "", labels: Mapping[str, str] = {}) -> Any:
        d = self.make_dict(template, namespace=namespace, labels=labels)
        return self._node(d) if d["kind"] == "Node" else self._pod(d)

    def node_dicts(self, op: Mapping[str, Any], index: int) -> list[dict[str, Any]]:
        """The manifests of a ``createNodes`` op's ``index``-th node: the node, with the label
        of ``labelNodePrepareStrategy`` and the allocatable of ``nodeAllocatableStrategy``,
        and for the latter its CSINode (scheduler_perf's node preparers)."""
        labels: dict[str, str] = {}
        strategy = op.get("labelNodePrepareStrategy")
        if strategy:
            values = strategy["labelValues"]
            labels[strategy["labelKey"]] = values[index % len(values)]
        node = self.make_dict(op["template"], labels=labels)
        allocatable = op.get("nodeAllocatableStrategy")
        if not allocatable:
            return [node]
        extra = allocatable.get("nodeAllocatable", {})
        status = node.setdefault("status", {})
        status["capacity"] = {**status.get("capacity", {}), **extra}
        if "allocatable" in status:  # else it defaults to the capacity
            status["allocatable"] = {**status["allocatable"], **extra}
        name = node["metadata"]["name"]
        drivers = [
            {"name": driver, "nodeID": name, "allocatable": {"count": int(limit["count"])}}
            for driver, limit in sorted(allocatable.get("csiNodeAllocatable", {}).items())
        ]
        csi_node = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": name},
            "spec": {"drivers": drivers},
        }
        return [node, csi_node]

    def pod_dicts(self, op: Mapping[str, Any], namespace: str) -> list[dict[str, Any]]:
        """The manifests of a ``createPods`` op's next pod: the pod, and with
        ``persistentVolumeTemplate`` first a bound PersistentVolumeClaim ``pvc-N`` and its
        PersistentVolume ``<namespace>-vol-N`` (scheduler_perf's create-with-PV strategy:
        one pre-bound volume per pod, a CSI volume's handle being the PV's name)."""
        pod = self.make_dict(op["template"], namespace=namespace)
        pv_template = op.get("persistentVolumeTemplate")
        if not pv_template:
            return [pod]
        namespace = pod["metadata"]["namespace"]
        n = self._serial[f"pvc@{namespace}"] = self._serial.get(f"pvc@{namespace}", -1) + 1
        claim_name, volume_name = f"pvc-{n}", f"{namespace}-vol-{n}"
        pv = copy.deepcopy(self._templates[pv_template])
        pv["metadata"] = {"name": volume_name}
        if "csi" in pv["spec"]:
            pv["spec"]["csi"]["volumeHandle"] = volume_name
        pv["spec"]["claimRef"] = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "namespace": namespace,
            "name": claim_name,
        }
        pv["status"] = {"phase": "Bound"}
        pvc = copy.deepcopy(self._templates[op["persistentVolumeClaimTemplate"]])
        pvc["metadata"] = {**pvc.get("metadata", {}), "name": claim_name, "namespace": namespace}
        pvc["spec"]["volumeName"] = volume_name
        pvc["status"] = {"phase": "Bound"}
        pod["spec"]["volumes"] = [
            {"name": "vol", "persistentVolumeClaim": {"claimName": claim_name}}
        ]
        return [pvc, pv, pod]

    def create_pod(self, backend: Any, op: Mapping[str, Any], namespace: str) -> Any:
        """Create an op's next pod with the objects it needs first; the stored pod."""
        return self.create_all(backend, [self.parse(m) for m in self.pod_dicts(op, namespace)])

    @staticmethod
    def create_all(backend: Any, objects: list[Any]) -> Any:
        """Create ``objects`` in order; the last one as stored (the pod of a group)."""
        created = None
        for obj in objects:
            created = backend.create(obj)
        return created

    def parse(self, manifest: dict[str, Any]) -> Any:
        kind = manifest["kind"]
        if kind == "Node":
            return self._node(manifest)
        if kind == "Pod":
            return self._pod(manifest)
        from schedframe.objects import from_dict

        return from_dict(manifest)


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


MODES = ("deterministic", "real")
#: Every mode ``--mode`` takes: "kubernetes" runs the Kubernetes backend against the fake API
#: server (pods pre-created; not part of "both").
ALL_MODES = (*MODES, "kubernetes")
#: Real mode: a run is over when no pod was bound for this long (wall seconds) and every
#: measured pod has a result.
REAL_QUIET_S = 2.0
#: Real mode: how often the waiting thread looks (the window ends at the last binding's
#: timestamp, not at the look; waking more often takes the GIL from the scheduler).
REAL_POLL_S = 0.02
#: Real mode: never wait longer than this for one phase.
REAL_PHASE_TIMEOUT_S = 240.0


def run_once(
    workload: Workload, scale: float, profile: str | None = None, mode: str = "deterministic"
) -> dict[str, Any]:
    """Run ``workload`` once in this process, in ``mode``; returns its figures."""
    import threading

    started = time.perf_counter()
    from schedframe.scheduler import Scheduler
    from schedframe.scheduler._clock import VirtualClock

    imported = time.perf_counter()
    config, registry = _config_with(workload.get("extraPlugins", ()))
    real = mode == "real"
    metrics = bool(os.environ.get(METRICS_ENV))  # --metrics: SchedulerMetrics attached
    if metrics:
        from schedframe.hooks import plugin_manager
        from schedframe.metrics import SchedulerMetrics
    sched = Scheduler.from_config(
        config,
        deterministic=not real,
        seed=0,
        registry=registry,
        hooks=plugin_manager(load_entry_points=False) if metrics else None,
    )
    if metrics:
        SchedulerMetrics().attach(sched)
    built = time.perf_counter()
    backend: Any = sched.backend
    clock = sched.clock
    assert real or isinstance(clock, VirtualClock)
    objects = _Objects()
    perf = time.perf_counter

    # When each pod first entered the queue, and when it was bound (for latency).
    entered: dict[str, float] = {}
    bound_at: dict[str, float] = {}
    queue: Any = sched.queue
    real_add = queue.add

    def add(pod: Any) -> None:
        entered.setdefault(pod.uid, perf())
        real_add(pod)

    queue.add = add
    real_record = sched.record_result

    # Real mode: the pods a phase waits for, and how many of them are bound (counted here, so
    # that the waiting thread's polls cost nothing beside the scheduler's work).
    watching: set[str] = set()
    watched_bound = [0]

    def record_result(result: Any) -> None:
        if result.outcome == "scheduled":
            uid = result.pod.uid
            if uid not in bound_at and uid in watching:
                watched_bound[0] += 1
            bound_at[uid] = perf()
        real_record(result)

    sched.record_result = record_result  # type: ignore[method-assign]

    # Which pod each scheduling attempt was about (for churn counted in cycles).
    popped: list[Any] = [None]
    real_pop = queue.pop

    def pop(block: bool = False, timeout: float | None = None) -> Any:
        qpi = real_pop(block=block, timeout=timeout)
        popped[0] = qpi
        return qpi

    queue.pop = pop
    on_attempt_hook: list[Callable[[str], None] | None] = [None]
    real_schedule_one = sched.schedule_one

    def schedule_one(*, block: bool = False, timeout: float | None = None) -> bool:
        did = real_schedule_one(block=block, timeout=timeout)
        hook = on_attempt_hook[0]
        if did and hook is not None and popped[0] is not None:
            hook(popped[0].pod.uid)
        return did

    sched.schedule_one = schedule_one  # type: ignore[method-assign]

    def drain_deterministic(on_attempt: Callable[[str], None] | None = None) -> int:
        """``Scheduler.run_until_idle``, counting scheduling attempts."""
        assert isinstance(clock, VirtualClock)
        on_attempt_hook[0] = on_attempt
        cycles = 0
        bound_before = sched._bound
        last_progress = clock.now()
        try:
            while True:
                if schedule_one():
                    cycles += 1
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
        finally:
            on_attempt_hook[0] = None

    def settle_real(uids: set[str], on_attempt: Callable[[str], None] | None = None) -> int:
        """Real mode: wait until every pod of ``uids`` is bound, or (when nothing was bound
        for ``REAL_QUIET_S``) has a result and no binding is in flight."""
        on_attempt_hook[0] = on_attempt
        deadline = perf() + REAL_PHASE_TIMEOUT_S
        last_count, last_change = -1, perf()

        def recount() -> int:
            watched_bound[0] = sum(1 for u in uids if u in bound_at)
            return watched_bound[0]

        watching.clear()
        watching.update(uids)
        recount()  # a binding racing this may be counted twice: checked by recount below
        try:
            while perf() < deadline:
                time.sleep(REAL_POLL_S)
                done = watched_bound[0]
                if done >= len(uids) and recount() == len(uids):
                    return len(uids)
                now = perf()
                if done != last_count:
                    last_count, last_change = done, now
                if now - last_change < REAL_QUIET_S:
                    continue
                results = sched.results
                if sched.in_flight() == 0 and all(
                    (r := results.get(u)) is not None and r.outcome != "binding" for u in uids
                ):
                    return done
            return sum(1 for u in uids if u in bound_at)
        finally:
            on_attempt_hook[0] = None

    runner: threading.Thread | None = None
    if real:
        runner = threading.Thread(target=sched.run, name="bench-scheduler", daemon=True)
        runner.start()

    churn: dict[str, Any] | None = None
    result: dict[str, Any] = {}
    for op in workload["ops"]:
        kind = op["op"]
        if kind == "createNodes":
            for i in range(scaled(op["count"], scale)):
                for manifest in objects.node_dicts(op, i):
                    backend.create(objects.parse(manifest))
            if not real:
                drain_deterministic()
        elif kind == "churn":
            churn = op
        elif kind == "createResourceDriver":
            _create_resource_driver(backend, op)
            if not real:
                drain_deterministic()
        elif kind == "createDRAObjects":
            _create_dra_objects(backend, op)
            if not real:
                drain_deterministic()
        elif kind == "createPods" and not op.get("collectMetrics"):
            created = [
                objects.create_pod(backend, op, op.get("namespace", ""))
                for _ in range(scaled(op["count"], scale))
            ]
            if op.get("skipWaitToCompletion"):
                # As upstream, in both modes: not waited for (gated pods never get a result).
                # Their attempts fall in the next op's window, as they do on a real clock.
                pass
            elif real:
                settle_real({p.uid for p in created})
            else:
                drain_deterministic()
        elif kind == "createPods":
            settle: Callable[..., int]
            if real:
                settle = lambda uids, on_attempt: settle_real(uids, on_attempt)  # noqa: E731
            else:
                settle = lambda uids, on_attempt: drain_deterministic(on_attempt)  # noqa: E731
            result = _measure(
                sched,
                backend,
                objects,
                op,
                scaled(op["count"], scale),
                churn,
                settle,
                profile,
                entered,
                bound_at,
            )
        else:
            raise SystemExit(f"{workload['name']}: unknown op {kind!r}")
    result["mode"] = mode
    result["import_s"] = imported - started
    result["build_s"] = built - imported
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sched.stop()
    if runner is not None:
        runner.join(timeout=10)
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
    settle: Callable[..., int],
    profile: str | None,
    entered: Mapping[str, float],
    bound_at: Mapping[str, float],
) -> dict[str, Any]:
    namespace = op.get("namespace", "")
    # Each pod last, after the volume objects it needs (created in the window, as upstream).
    pods = [[objects.parse(m) for m in objects.pod_dicts(op, namespace)] for _ in range(count)]
    churned: list[Any] = []
    state = {"cycles": 0, "churns": 0}
    every = int(churn["everyCycles"]) if churn else 0

    def on_attempt(uid: str) -> None:
        state["cycles"] += 1
        if every and state["cycles"] % every == 0:
            _recreate(backend, objects, churn, churned)
            state["churns"] += 1

    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    gc_before = _gc_collections()
    threads0 = _thread_cpu()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    measured = {objects.create_all(backend, group).uid for group in pods}
    created = time.perf_counter()
    settle(measured, on_attempt)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    threads = {k: v - threads0.get(k, 0.0) for k, v in _thread_cpu().items()}
    if profiler is not None:
        assert profile is not None
        profiler.disable()
        profiler.dump_stats(profile)

    binds = sorted(t for uid, t in bound_at.items() if uid in measured)
    bound = len(binds)
    # The window: from the first measured pod's creation to its last binding.
    span = (binds[-1] - wall0) if binds else wall
    latencies = sorted(
        (bound_at[uid] - entered[uid]) * 1000
        for uid in measured
        if uid in bound_at and uid in entered
    )
    return {
        "measured_pods": count,
        "bound": bound,
        "cycles": state["cycles"],
        "churns": state["churns"],
        "wall_s": wall,
        "span_s": span,
        "create_s": created - wall0,
        "first_binding_s": (binds[0] - wall0) if binds else 0.0,
        "cpu_s": cpu,
        "pods_per_s": bound / span if span > 0 else 0.0,
        "cpu_ms_per_pod": cpu * 1000 / bound if bound else 0.0,
        "latency_ms_p50": _percentile(latencies, 0.50),
        "latency_ms_p90": _percentile(latencies, 0.90),
        "latency_ms_p99": _percentile(latencies, 0.99),
        "gc_collections": _gc_collections() - gc_before,
        # CPU ms per bound pod by thread role (clock-tick resolution, 10 ms).
        **{f"cpu_ms_per_pod_{k}": v * 1000 / bound if bound else 0.0 for k, v in threads.items()},
    }


#: The Kubernetes backend's client limits in the bench: high enough not to be the bottleneck
#: (scheduler_perf's client is unthrottled).
KUBE_QPS = 100000.0
KUBE_BURST = 100000


def _manifests(workload: Workload, scale: float) -> tuple[list[dict[str, Any]], int]:
    """Every node and pod of ``workload`` as manifests (init and measured pods alike: against
    the API server all pods are pre-created), and how many pods."""
    objects = _Objects()
    out: list[dict[str, Any]] = []
    pods = 0
    for op in workload["ops"]:
        if op["op"] == "createNodes":
            for i in range(scaled(op["count"], scale)):
                out.extend(objects.node_dicts(op, i))
        elif op["op"] == "createPods":
            for _ in range(scaled(op["count"], scale)):
                out.extend(objects.pod_dicts(op, op.get("namespace", "")))
                pods += 1
        elif op["op"] != "churn":
            raise SystemExit(f"{workload['name']}: unknown op {op['op']!r}")
    return out, pods


def _serve(manifests: list[dict[str, Any]], conn: Any) -> None:
    """The fake API server's process: create every object, say where to connect, serve until
    told to stop, then report the server's CPU seconds."""
    import tempfile

    from schedframe.testing.fakeapi import FakeAPIServer

    fake = FakeAPIServer(bookmark_interval=5.0, window_size=max(1000, 2 * len(manifests)))
    try:
        namespaces = {m["metadata"]["namespace"] for m in manifests if m["kind"] == "Pod"}
        for ns in sorted(namespaces - {"default"}):
            fake.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for m in manifests:
            fake.create(m)
    except Exception as exc:  # reported by the parent
        conn.send(f"error: {exc}")
        return
    fake.start()
    path = Path(tempfile.mkdtemp()) / "kubeconfig"
    fake.write_kubeconfig(path)
    cpu0 = time.process_time()
    conn.send(str(path))
    conn.recv()  # stop
    conn.send({"server_cpu_s": time.process_time() - cpu0, "bindings": len(fake.bindings)})
    fake.stop()


def run_kube(workload: Workload, scale: float) -> dict[str, Any]:
    """The workload against the testing kit's fake API server (``schedframe.testing.fakeapi``)
    in another process: every node and pod pre-created, then the scheduler (Kubernetes
    backend, real mode) starts; figures from its start to the last binding."""
    import multiprocessing
    import threading

    if any(op["op"] == "churn" for op in workload["ops"]):
        raise SystemExit(f"{workload['name']}: churn is not run against the API server")
    manifests, pod_count = _manifests(workload, scale)
    ctx = multiprocessing.get_context("fork")  # before any thread of ours exists
    ours, theirs = ctx.Pipe()
    server = ctx.Process(target=_serve, args=(manifests, theirs), daemon=True)
    server.start()
    del manifests
    if not ours.poll(300):
        raise SystemExit(f"{workload['name']}: the fake API server did not start")
    kubeconfig = ours.recv()
    if kubeconfig.startswith("error: "):
        raise SystemExit(f"{workload['name']}: fake API server: {kubeconfig[7:]}")

    from schedframe.backends.kubernetes import KubernetesBackend
    from schedframe.scheduler import Scheduler

    config, registry = _config_with(workload.get("extraPlugins", ()))
    perf = time.perf_counter
    bound_at: list[float] = []
    lock = threading.Lock()
    wall0, cpu0 = perf(), time.process_time()
    backend = KubernetesBackend.from_kubeconfig(kubeconfig, qps=KUBE_QPS, burst=KUBE_BURST)
    backend.start(timeout=60)
    synced = perf()
    sched = Scheduler.from_config(config, backend, registry=registry)
    real_record = sched.record_result

    def record_result(result: Any) -> None:
        if result.outcome == "scheduled":
            with lock:
                bound_at.append(perf())
        real_record(result)

    sched.record_result = record_result  # type: ignore[method-assign]
    runner = threading.Thread(target=sched.run, name="bench-scheduler", daemon=True)
    runner.start()
    deadline = wall0 + REAL_PHASE_TIMEOUT_S
    last, last_change = -1, perf()
    while perf() < deadline:
        time.sleep(0.005)
        n = len(bound_at)
        if n >= pod_count:
            break
        if n != last:
            last, last_change = n, perf()
        elif perf() - last_change > REAL_QUIET_S * 5:
            break
    cpu = time.process_time() - cpu0
    sched.stop()
    runner.join(timeout=10)
    backend.close()
    ours.send("stop")
    server_figures = ours.recv()
    server.join(timeout=10)
    binds = sorted(bound_at)
    span = (binds[-1] - wall0) if binds else perf() - wall0
    return {
        "mode": "kubernetes",
        "measured_pods": pod_count,
        "bound": len(binds),
        "span_s": span,
        "wall_s": span,
        "sync_s": synced - wall0,
        "first_binding_s": (binds[0] - wall0) if binds else 0.0,
        "cpu_s": cpu,
        "pods_per_s": len(binds) / span if span > 0 else 0.0,
        "cpu_ms_per_pod": cpu * 1000 / len(binds) if binds else 0.0,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        **server_figures,
    }


def _recreate(
    backend: Any, objects: _Objects, churn: Mapping[str, Any] | None, live: list[Any]
) -> None:
    """scheduler_perf's churn op: in ``recreate`` mode delete last round's objects and make
    new ones; in ``create`` mode only make new ones."""
    assert churn is not None
    mode = churn.get("mode", "recreate")
    if mode not in ("recreate", "create"):
        raise SystemExit(f"churn: unknown mode {mode!r}")
    if mode == "create":
        live.clear()
    for obj in live:
        try:
            backend.delete(obj)
        except Exception:  # a pod preempted or already gone
            pass
    live.clear()
    for template in churn["templates"]:
        live.append(backend.create(objects.make(template, namespace="churn")))


def _thread_cpu() -> dict[str, float]:
    """CPU seconds (user + system) of this process's threads so far, by role: the scheduling
    loop, the binding pool, the main thread (creates the pods), the rest (timers). Linux only
    (``/proc/self/task``); empty elsewhere."""
    import threading

    tick = os.sysconf("SC_CLK_TCK")
    names = {t.native_id: t.name for t in threading.enumerate()}
    out: dict[str, float] = {}
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            stat = Path(f"/proc/self/task/{tid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        cpu = (int(fields[11]) + int(fields[12])) / tick
        name = names.get(int(tid), "")
        role = (
            "scheduler"
            if name == "bench-scheduler"
            else "binding"
            if name.startswith("schedframe-binding")
            else "main"
            if name == "MainThread"
            else "other"
        )
        out[role] = out.get(role, 0.0) + cpu
    return out


def _gc_collections() -> int:
    import gc

    return sum(s["collections"] for s in gc.get_stats())


# -- the parent: runs, aggregation, table, JSON --------------------------------------------------


def _child(name: str, scale: float, mode: str) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name, "--scale", str(scale)]
    cmd += ["--mode", mode]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{name}: run failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


#: Figures aggregated as the median of all runs, with their min and max beside.
MEDIAN_KEYS = (
    "bound",
    "pods_per_s",
    "cpu_ms_per_pod",
    "latency_ms_p50",
    "latency_ms_p90",
    "latency_ms_p99",
    "wall_s",
    "span_s",
    "first_binding_s",
    "create_s",
    "build_s",
    "sync_s",
    "server_cpu_s",
)


def aggregate(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Every figure from all runs: the median of the runs with its min and max (``KEY_min``,
    ``KEY_max``); peak RSS is the largest of the runs. A run missing a key (an older results
    file) leaves that key out."""
    out: dict[str, Any] = {"runs": len(runs), "measured_pods": runs[0]["measured_pods"]}
    if any(r["measured_pods"] != out["measured_pods"] for r in runs):
        raise ValueError("runs of different sizes cannot be aggregated")
    for key in MEDIAN_KEYS:
        values = [r[key] for r in runs if key in r]
        if len(values) != len(runs):
            continue
        out[key] = float(statistics.median(values))
        out[f"{key}_min"] = min(values)
        out[f"{key}_max"] = max(values)
    out["bound_all_runs"] = [r["bound"] for r in runs]
    out["peak_rss_mib"] = max(r["peak_rss_mib"] for r in runs)
    out["per_run"] = runs
    return out


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


#: Where the Go figures of a workload's ``go`` block come from: measured elsewhere, another
#: day, another machine state. Shown beside ours for reference, never divided into them.
GO_REFERENCE = (
    "Go: kube-scheduler v1.30.6 reference, measured elsewhere (2-core machine, in-process fake "
    "API, /work/shared/reference/benchmark-workloads.md, recorded 2026-11-23); not a same-run "
    "ratio"
)


def _table(
    results: Mapping[str, Mapping[str, dict[str, Any]]],
    workloads: Mapping[str, Workload],
    previous: Mapping[str, Any] | None,
    scale: float = 1.0,
) -> Iterator[str]:
    head = ["workload", "mode", "pods", "pods/s", "(min-max)", "CPU ms/pod", "1st bind s"]
    head += ["p50 ms", "p90 ms", "p99 ms", "RSS MiB", "Go ref pods/s", "Go CPU ms", "Go MiB"]
    if previous is not None:
        head.append("vs prev")
    rows = [head]
    for name, by_mode in results.items():
        # Go's figures are for the full-scale shapes only.
        go = (workloads[name].get("go") or {}) if scale == 1 else {}
        for mode, r in by_mode.items():
            bound = r["bound_all_runs"]
            row = [
                name,
                mode,
                f"{min(bound)}/{r['measured_pods']}",
                f"{r['pods_per_s']:.0f}",
                f"{r['pods_per_s_min']:.0f}-{r['pods_per_s_max']:.0f}",
                f"{r['cpu_ms_per_pod']:.2f}",
                f"{r['first_binding_s']:.3f}",
                *(_cell(r, f"latency_ms_p{q}", ".0f") for q in (50, 90, 99)),
                f"{r['peak_rss_mib']:.0f}",
                f"{go.get('pods_per_s', '-')}",
                f"{go.get('cpu_ms_per_pod', '-')}",
                f"{go.get('peak_rss_mib', '-')}",
            ]
            if previous is not None:
                old = _previous(previous, name, mode)
                row.append(f"{r['pods_per_s'] / old['pods_per_s']:.2f}x" if old else "-")
            rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    for row in rows:
        yield _row(row, widths)


def _cell(r: Mapping[str, Any], key: str, fmt: str) -> str:
    return format(r[key], fmt) if key in r else "-"


def _previous(previous: Mapping[str, Any], name: str, mode: str) -> Mapping[str, Any] | None:
    """A workload's figures in ``mode`` from an older results file (files written before the
    modes existed hold deterministic figures directly)."""
    old = previous.get(name)
    if not old:
        return None
    if "pods_per_s" in old:
        return old if mode == "deterministic" else None
    found = old.get(mode)
    return found if isinstance(found, Mapping) else None


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
    parser.add_argument(
        "--mode",
        choices=(*ALL_MODES, "both"),
        default="both",
        help="deterministic (virtual clock, bindings inline), real (real clock, binding "
        "threads), both of those (the default), or kubernetes (the Kubernetes backend "
        "against the testing kit's fake API server in another process, pods pre-created)",
    )
    parser.add_argument(
        "--metrics", action="store_true", help="attach SchedulerMetrics (as `schedframe run`)"
    )
    parser.add_argument("--child", metavar="NAME", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.metrics:
        os.environ[METRICS_ENV] = "1"  # inherited by the child runs

    workloads = load_workloads()
    scale = args.scale if args.scale is not None else (QUICK_SCALE if args.quick else 1.0)
    if args.child:
        if args.mode == "kubernetes":
            print(json.dumps(run_kube(workloads[args.child], scale)))
        else:
            print(json.dumps(run_once(workloads[args.child], scale, mode=args.mode)))
        return 0
    if args.list:
        for name, w in workloads.items():
            print(f"{name}  ({w['file']})")
        return 0
    names = select(workloads, args.workload)
    if args.profile:
        mode = "deterministic" if args.mode == "both" else args.mode
        r = run_once(workloads[names[0]], scale, profile=args.profile, mode=mode)
        print(json.dumps(r, indent=1))
        print(f"profile written to {args.profile} (python -m pstats {args.profile})")
        return 0
    runs = args.runs if args.runs is not None else (1 if args.quick else DEFAULT_RUNS)
    previous = None
    if args.compare:
        previous = json.loads(Path(args.compare).read_text())["workloads"]

    modes = MODES if args.mode == "both" else (args.mode,)
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for name in names:
        # The modes' runs interleave (deterministic, real, deterministic, ...), so that a
        # neighbour's load on a shared machine falls on both modes alike.
        per_mode: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
        for i in range(runs):
            for mode in modes:
                r = _child(name, scale, mode)
                per_mode[mode].append(r)
                print(
                    f"  {name} [{mode}] run {i + 1}/{runs}: {r['pods_per_s']:.0f} pods/s, "
                    f"{r['cpu_ms_per_pod']:.2f} CPU ms/pod, {r['peak_rss_mib']:.0f} MiB",
                    file=sys.stderr,
                    flush=True,
                )
        results[name] = {mode: aggregate(per_run) for mode, per_run in per_mode.items()}

    how = (
        "default profile; deterministic = memory backend, virtual clock, bindings inline; "
        "real = memory backend, real clock, binding threads; kubernetes = Kubernetes backend "
        "against the fake API server in another process, every pod pre-created, window from "
        "the scheduler's start to the last binding"
    )
    print(f"\nschedframe bench: {runs} run(s) each, scale {scale:g}, {how}")
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs")
    print(f"pods/s and CPU ms/pod: medians of the runs; {GO_REFERENCE}\n")
    for line in _table(results, workloads, previous, scale):
        print(line)
    if args.json:
        doc = {
            "meta": run_meta("bench/run.py", runs=runs, scale=scale, modes=list(modes), how=how),
            "workloads": results,
        }
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
