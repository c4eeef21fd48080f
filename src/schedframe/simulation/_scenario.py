"""Scenarios: timed operations on a cluster in virtual time, with a real scheduler watching.

A scenario is a cluster, an optional workload (the arrivals/durations generator of
:func:`load_workload`) and a list of operations, each at a virtual time: create, update or
delete a pod or a node, cordon/uncordon, taint/untaint, scale a Deployment, StatefulSet or
Job, drain a node (evictions through the eviction API, honouring PodDisruptionBudgets),
fail a node. The runner drives the public :class:`~schedframe.Scheduler` and
:class:`~schedframe.backends.MemoryBackend` API and observes the scheduler through its
observer hooks and the backend's watch.

Over 1,000 lines on purpose: the scenario file's strict decoder and the runner of each
operation are read together (each operation's fields and what it does to the cluster), and
the result tables are built from what the runner records.
"""

from __future__ import annotations

import functools
import heapq
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

import attrs

from schedframe.errors import INVALID, BackendError, ConfigError, FieldIssue, ManifestError
from schedframe.hooks import impl
from schedframe.objects import (
    Deployment,
    Job,
    Node,
    Pod,
    PodDisruptionBudget,
    StatefulSet,
    Taint,
)

if TYPE_CHECKING:
    from schedframe.backends import MemoryBackend, WatchEvent
    from schedframe.config import KubeSchedulerConfiguration
    from schedframe.runtime import Registry
    from schedframe.scheduler import Scheduler, VirtualClock
    from schedframe.simulation._workload import Workload

__all__ = [
    "OPERATIONS",
    "EVICTION_RETRY_SECONDS",
    "Operation",
    "PodEvent",
    "Scenario",
    "ScenarioResult",
    "load_scenario",
    "run_scenario",
    "scenario_from_dict",
]

#: The operations a scenario can make, by their ``op`` name.
OPERATIONS: Final = (
    "createPod",
    "updatePod",
    "deletePod",
    "createNode",
    "updateNode",
    "deleteNode",
    "cordon",
    "uncordon",
    "taint",
    "untaint",
    "scale",
    "drain",
    "failNode",
)
#: Seconds between two eviction attempts of a drain refused by a PDB (kubectl drain's).
EVICTION_RETRY_SECONDS: Final = 5.0
#: The eviction API's message when a PodDisruptionBudget refuses (HTTP 429).
PDB_REFUSAL: Final = "Cannot evict pod as it would violate the pod's disruption budget."
_UNREACHABLE: Final = "node.kubernetes.io/unreachable"
# DefaultTolerationSeconds admission: pods tolerate an unreachable node this long.
_DEFAULT_TOLERATION_SECONDS: Final = 300.0
_SCALABLE: Final = ("Deployment", "StatefulSet", "Job")


@attrs.frozen(kw_only=True)
class Operation:
    """One timed operation of a scenario.

    Attributes:
        at: virtual time, seconds.
        op: one of :data:`OPERATIONS`.
        obj: the Pod or Node of ``createPod``/``updatePod``/``createNode``/``updateNode``.
        name: the node (cordon, uncordon, taint, untaint, drain, failNode, deleteNode), the
            pod (deletePod, as ``name`` in ``namespace``) or the workload (scale).
        namespace: the pod's or workload's namespace.
        kind: ``Deployment``, ``StatefulSet`` or ``Job`` (scale).
        replicas: the new replica count (scale; a Job's parallelism).
        taint: the taint to add or remove (taint, untaint).
        evict_after: seconds after a node failure its pods are evicted (default 300, the
            DefaultTolerationSeconds admission's tolerationSeconds).
    """

    at: float
    op: str
    obj: Pod | Node | None = None
    name: str = ""
    namespace: str = "default"
    kind: str = ""
    replicas: int = 0
    taint: Taint | None = None
    evict_after: float = _DEFAULT_TOLERATION_SECONDS


@attrs.frozen(kw_only=True)
class Scenario:
    """A cluster, a workload and timed operations.

    Attributes:
        cluster: Nodes, Pods, Namespaces, PDBs, PriorityClasses and workload objects
            (Deployments, StatefulSets and Jobs are expanded into pods at time 0 and can be
            scaled).
        operations: the operations, in time order (ties keep their order).
        workload: pods arriving over time, with durations (see :func:`load_workload`).
        until: stop at this virtual time; by default when nothing is left to happen.
    """

    cluster: tuple[object, ...] = ()
    operations: tuple[Operation, ...] = ()
    workload: Workload | None = None
    until: float | None = None


@attrs.frozen(kw_only=True)
class PodEvent:
    """One entry of a pod's timeline.

    ``event`` is ``queued`` (created unbound), ``failed`` (an attempt found no node;
    ``message`` is upstream's FailedScheduling message), ``error``, ``bound``,
    ``preempted`` (``detail`` names the preemptor), ``evicted`` (drain or node failure),
    ``evictionRefused`` (429: a PDB refused), ``completed`` or ``deleted``.
    """

    time: float
    event: str
    node: str = ""
    message: str = ""
    attempt: int = 0

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping (empty fields left out)."""
        out: dict[str, object] = {"time": round(self.time, 6), "event": self.event}
        if self.node:
            out["node"] = self.node
        if self.message:
            out["message"] = self.message
        if self.attempt:
            out["attempt"] = self.attempt
        return out


@attrs.frozen(kw_only=True, eq=False)
class ScenarioResult:
    """What a scenario run saw.

    Attributes:
        timelines: ``namespace/name`` -> the pod's events, in order.
        placements: ``namespace/name`` -> node of every pod bound at the end.
        pending: ``namespace/name`` -> the last failure message of every pod still pending.
        utilisation: ``(time, resource -> requested/allocatable)`` after every change of
            the bound pods or the nodes (``cpu``, ``memory``, ``pods``).
        fragmentation: resource -> ``1 - largest free amount on one node / total free``
            over schedulable nodes at the end (0: all free capacity on one node).
        end_time: virtual time when the run ended.
        attempts: scheduling attempts (cycles).
        rejected: ``(time, op, message)`` of every operation the API refused (a 404 for a
            missing object, 409 for an existing one, 403 from Priority admission ...).
        final_objects: every object the backend held at the end (nodes, pods, namespaces,
            budgets ...), what :mod:`schedframe.report` draws and explains pending pods against.
        config: the configuration the scheduler ran with.
        registry: the plugin registry it was given (``None``: the installed entry points).
        seed: the scheduler's seed.
    """

    timelines: Mapping[str, tuple[PodEvent, ...]]
    placements: Mapping[str, str]
    pending: Mapping[str, str]
    utilisation: tuple[tuple[float, Mapping[str, float]], ...]
    fragmentation: Mapping[str, float]
    end_time: float
    attempts: int
    rejected: tuple[tuple[float, str, str], ...] = ()
    final_objects: tuple[object, ...] = ()
    config: KubeSchedulerConfiguration | None = None
    registry: Registry | None = None
    seed: int = 0

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping of the whole result."""
        return {
            "placements": dict(sorted(self.placements.items())),
            "pending": dict(sorted(self.pending.items())),
            "timelines": {k: [e.to_dict() for e in v] for k, v in sorted(self.timelines.items())},
            "utilisation": [
                {"time": round(t, 6), **{r: round(f, 6) for r, f in u.items()}}
                for t, u in self.utilisation
            ],
            "fragmentation": {r: round(f, 6) for r, f in self.fragmentation.items()},
            "endTime": round(self.end_time, 6),
            "attempts": self.attempts,
            "rejected": [
                {"time": round(t, 6), "op": op, "message": msg} for t, op, msg in self.rejected
            ],
        }

    def to_text(self) -> str:
        """The placement table, the pending pods with their reasons, utilisation at the end
        and fragmentation."""
        from schedframe.simulation._table import format_table

        lines = ["Placements:"]
        rows = [[pod, node] for pod, node in sorted(self.placements.items())]
        lines.append(format_table(["POD", "NODE"], rows) if rows else "  (none)")
        lines.append("")
        lines.append(f"Pending ({len(self.pending)}):")
        for pod, why in sorted(self.pending.items()):
            lines.append(f"  {pod}: {why}")
        if self.utilisation:
            t, last = self.utilisation[-1]
            used = ", ".join(f"{r} {100 * f:.1f}%" for r, f in last.items())
            lines.append("")
            lines.append(f"Utilisation at {t:g}s: {used}")
        frag = ", ".join(f"{r} {f:.3f}" for r, f in self.fragmentation.items())
        lines.append(f"Fragmentation: {frag}")
        if self.rejected:
            lines.append("")
            lines.append(f"Rejected operations ({len(self.rejected)}):")
            lines += [f"  {t:g}s {op}: {msg}" for t, op, msg in self.rejected]
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------

_TOP_FIELDS: Final = ("apiVersion", "kind", "cluster", "workload", "until", "operations")
_OP_FIELDS: Final = {
    "createPod": ("object",),
    "updatePod": ("object",),
    "deletePod": ("name", "namespace"),
    "createNode": ("object",),
    "updateNode": ("object",),
    "deleteNode": ("name",),
    "cordon": ("name",),
    "uncordon": ("name",),
    "taint": ("name", "taint"),
    "untaint": ("name", "taint"),
    "scale": ("kind", "name", "namespace", "replicas"),
    "drain": ("name",),
    "failNode": ("name", "evictAfter"),
}
_REQUIRED: Final = {"object", "name", "taint", "kind", "replicas"}


def _issue(path: str, kind: str, detail: str = "", value: object = None) -> FieldIssue:
    if value is None:
        return FieldIssue(path=path, kind=kind, detail=detail)
    return FieldIssue(path=path, kind=kind, detail=detail, value=value)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def scenario_from_dict(
    doc: Mapping[str, object], *, source: str = "<scenario>", base: Path | None = None
) -> Scenario:
    """Decode a scenario document strictly: unknown fields, wrong types, bad operations and
    bad embedded manifests are errors with their field paths.

    Args:
        doc: the parsed document.
        source: named in errors.
        base: where ``cluster`` and ``workload`` paths are relative to.

    Raises:
        ManifestError: every problem found, each with its field path.
    """
    from schedframe.objects import from_dict, load_manifests
    from schedframe.simulation._workload import load_workload

    base = base if base is not None else Path.cwd()
    issues: list[FieldIssue] = []
    for key in doc:
        if key not in _TOP_FIELDS:
            issues.append(
                _issue(str(key), "Unknown field", f"expected one of {', '.join(_TOP_FIELDS)}")
            )
    if doc.get("kind", "Scenario") != "Scenario":
        issues.append(
            _issue("kind", "Unsupported value", 'supported values: "Scenario"', doc.get("kind"))
        )
    cluster: list[object] = []
    raw_cluster = doc.get("cluster", [])
    paths = [raw_cluster] if isinstance(raw_cluster, str) else raw_cluster
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        issues.append(_issue("cluster", INVALID, "expected a path or a list of paths", raw_cluster))
    else:
        for i, p in enumerate(paths):
            path = base / p
            if not path.exists():
                issues.append(_issue(f"cluster[{i}]", "Not found", "", str(p)))
                continue
            cluster.extend(load_manifests(path))
    workload = None
    raw_workload = doc.get("workload")
    if raw_workload is not None:
        if not isinstance(raw_workload, str):
            issues.append(_issue("workload", INVALID, "expected a path", raw_workload))
        elif not (base / raw_workload).exists():
            issues.append(_issue("workload", "Not found", "", raw_workload))
        else:
            workload = load_workload(base / raw_workload)
    until = doc.get("until")
    if until is not None and (not _number(until) or float(until) < 0):  # type: ignore[arg-type]
        issues.append(_issue("until", INVALID, "expected a number of seconds >= 0", until))
    operations: list[Operation] = []
    raw_ops = doc.get("operations", [])
    if not isinstance(raw_ops, list):
        issues.append(_issue("operations", INVALID, "expected a list", raw_ops))
        raw_ops = []
    for i, raw in enumerate(raw_ops):
        path = f"operations[{i}]"
        if not isinstance(raw, Mapping):
            issues.append(_issue(path, INVALID, "expected a mapping", raw))
            continue
        op = raw.get("op")
        if op not in _OP_FIELDS:
            issues.append(
                _issue(
                    f"{path}.op",
                    "Unsupported value" if op is not None else "Required value",
                    "supported values: " + ", ".join(f'"{o}"' for o in OPERATIONS),
                    op,
                )
            )
            continue
        allowed = ("at", "op", *_OP_FIELDS[op])
        before = len(issues)
        for key in raw:
            if key not in allowed:
                issues.append(
                    _issue(f"{path}.{key}", "Unknown field", f"{op} takes {', '.join(allowed)}")
                )
        for key in _OP_FIELDS[op]:
            if key in _REQUIRED and key not in raw:
                issues.append(_issue(f"{path}.{key}", "Required value", f"{op} needs {key}"))
        at = raw.get("at", 0)
        if not _number(at) or at < 0:
            issues.append(_issue(f"{path}.at", INVALID, "expected a number of seconds >= 0", at))
        fields: dict[str, object] = {"at": float(at) if _number(at) else 0.0, "op": op}
        if "object" in raw:
            want = Pod if op.endswith("Pod") else Node
            obj = raw["object"]
            if not isinstance(obj, Mapping):
                issues.append(_issue(f"{path}.object", INVALID, "expected a manifest", obj))
            else:
                try:
                    decoded = from_dict(obj)
                except ManifestError as exc:
                    issues.extend(exc.with_prefix(f"{path}.object").issues)
                else:
                    if not isinstance(decoded, want):
                        issues.append(
                            _issue(
                                f"{path}.object.kind",
                                INVALID,
                                f"{op} needs a {want.__name__}",
                                obj.get("kind"),
                            )
                        )
                    fields["obj"] = decoded
        for key in ("name", "namespace", "kind"):
            if key in raw:
                value = raw[key]
                if not isinstance(value, str) or not value:
                    issues.append(
                        _issue(f"{path}.{key}", INVALID, "expected a non-empty string", value)
                    )
                else:
                    fields[key] = value
        if op == "scale" and "kind" in fields and fields["kind"] not in _SCALABLE:
            issues.append(
                _issue(
                    f"{path}.kind",
                    "Unsupported value",
                    "supported values: " + ", ".join(f'"{k}"' for k in _SCALABLE),
                    fields["kind"],
                )
            )
        if "replicas" in raw:
            value = raw["replicas"]
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                issues.append(
                    _issue(f"{path}.replicas", INVALID, "expected an integer >= 0", value)
                )
            else:
                fields["replicas"] = value
        if "evictAfter" in raw:
            value = raw["evictAfter"]
            if not _number(value) or value < 0:
                issues.append(
                    _issue(
                        f"{path}.evictAfter", INVALID, "expected a number of seconds >= 0", value
                    )
                )
            else:
                fields["evict_after"] = float(value)
        if "taint" in raw:
            taint = _taint(raw["taint"], f"{path}.taint", issues)
            if taint is not None:
                fields["taint"] = taint
        if len(issues) == before:
            operations.append(Operation(**fields))  # type: ignore[arg-type]
    if issues:
        raise ManifestError(issues, source=source)
    operations.sort(key=lambda o: o.at)
    return Scenario(
        cluster=tuple(cluster),
        operations=tuple(operations),
        workload=workload,
        until=None if until is None else float(until),  # type: ignore[arg-type]
    )


def _taint(raw: object, path: str, issues: list[FieldIssue]) -> Taint | None:
    if not isinstance(raw, Mapping):
        issues.append(_issue(path, INVALID, "expected a mapping with key, value, effect", raw))
        return None
    ok = True
    for key in raw:
        if key not in ("key", "value", "effect"):
            issues.append(_issue(f"{path}.{key}", "Unknown field", "expected key, value, effect"))
            ok = False
    key = raw.get("key")
    if not isinstance(key, str) or not key:
        issues.append(_issue(f"{path}.key", "Required value", "a taint needs a key"))
        ok = False
    value = raw.get("value", "")
    if not isinstance(value, str):
        issues.append(_issue(f"{path}.value", INVALID, "expected a string", value))
        ok = False
    effect = raw.get("effect", "NoSchedule")
    effects = ("NoSchedule", "PreferNoSchedule", "NoExecute")
    if effect not in effects:
        issues.append(
            _issue(
                f"{path}.effect",
                "Unsupported value",
                "supported values: " + ", ".join(f'"{e}"' for e in effects),
                effect,
            )
        )
        ok = False
    if not ok:
        return None
    return Taint(key=str(key), value=str(value), effect=str(effect))


def read_yaml_mapping(
    source: str | os.PathLike[str], what: str
) -> tuple[Path, str, Mapping[str, object]]:
    """Read a YAML file that must hold one mapping (a scenario, a sweep spec): its path, its
    name for messages, and the mapping.

    Raises:
        ManifestError: the file cannot be read, is not YAML, or is not a mapping (``what``
            names the kind of file in the message: "a scenario must be a mapping").
    """
    from schedframe._yaml import load_strict

    path = Path(source)
    name = os.fspath(source)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"cannot read: {exc.strerror}", source=name) from None
    doc = load_strict(text, name)
    if not isinstance(doc, Mapping):
        raise ManifestError(f"{what} must be a mapping", source=name)
    return path, name, doc


def load_scenario(source: str | os.PathLike[str]) -> Scenario:
    """Load a scenario file (YAML); ``cluster`` and ``workload`` paths are relative to it.

    Raises:
        ManifestError: bad YAML or any bad field, naming the file and the field path.
    """
    path, name, doc = read_yaml_mapping(source, "a scenario")
    try:
        return scenario_from_dict(doc, source=name, base=path.parent)
    except ManifestError as exc:
        if exc.source is None or exc.source == "<scenario>":
            raise exc.with_source(name) from None
        raise


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------


def _owner_key(pod: Pod) -> str:
    refs = pod.metadata.owner_references
    return f"{pod.namespace}/{refs[0].kind}/{refs[0].name}" if refs else ""


class _Run:
    """One scenario run; the hook methods are its observer plugin."""

    def __init__(
        self,
        scenario: Scenario,
        config: KubeSchedulerConfiguration,
        registry: Registry | None,
        seed: int,
    ) -> None:
        from schedframe.backends import MemoryBackend
        from schedframe.hooks import plugin_manager
        from schedframe.objects import DaemonSet
        from schedframe.scheduler import Scheduler, VirtualClock
        from schedframe.simulation._controllers import controller_pods, daemon_set_pods

        self.config = config
        self.registry = registry
        self.seed = seed
        self.clock: VirtualClock = VirtualClock(start=0.0)
        self.wakeups: list[float] = []
        self.timelines: dict[str, list[PodEvent]] = {}
        self.durations: dict[str, float] = {}
        self.completing: set[str] = set()
        self.evicting: set[str] = set()
        self.until = scenario.until
        #: scalable workloads: ``namespace/Kind/name`` -> (object, its pods' names in order).
        self.controllers: dict[str, tuple[object, list[Pod]]] = {}
        self.counter = 0
        static: list[object] = []
        pods: list[Pod] = []
        nodes = [o for o in scenario.cluster if isinstance(o, Node)]
        for obj in scenario.cluster:
            if isinstance(obj, Deployment | StatefulSet | Job):
                extra, made, _ = controller_pods(obj)
                static.extend(extra)
                pods.extend(made)
                self.controllers[f"{obj.namespace}/{type(obj).__name__}/{obj.name}"] = (obj, made)
            elif isinstance(obj, DaemonSet):
                pods.extend(daemon_set_pods(obj, nodes))
            elif isinstance(obj, Pod):
                if obj.status.phase not in ("Succeeded", "Failed"):
                    (pods if not obj.spec.node_name else static).append(obj)
            else:
                static.append(obj)
        self.backend: MemoryBackend = MemoryBackend(static, clock=self.clock)
        self.utilisation: list[tuple[float, Mapping[str, float]]] = []
        self.rejected: list[tuple[float, str, str]] = []
        self.subscription = self.backend.subscribe(self._on_watch)
        pm = plugin_manager(load_entry_points=False)
        pm.register(self, name="schedframe-scenario")
        self.sched: Scheduler = Scheduler(
            config,
            self.backend,
            registry=registry,
            clock=self.clock,
            seed=seed,
            deterministic=True,
            hooks=pm,
        )
        for pod in pods:
            self._at(0.0, functools.partial(self._create, pod))
        if scenario.workload is not None:
            for arrival in scenario.workload.arrivals:
                if arrival.duration is not None:
                    self.durations[arrival.pod.key] = arrival.duration
                self._at(arrival.time, functools.partial(self._create, arrival.pod))
        for op in scenario.operations:
            self._at(op.at, functools.partial(self._operate, op))
        self._sample()

    # -- time ----------------------------------------------------------------------------

    def _at(self, when: float, fn: Callable[[], None]) -> None:
        self.clock.call_at(when, fn)
        heapq.heappush(self.wakeups, when)

    def run(self) -> ScenarioResult:
        from schedframe.simulation._state import final_objects

        try:
            while True:
                self.clock.run_due()
                self.sched.run_until_idle()
                now = self.clock.now()
                while self.wakeups and self.wakeups[0] <= now:
                    heapq.heappop(self.wakeups)
                if not self.wakeups:
                    break
                nxt = self.wakeups[0]
                if self.until is not None and nxt > self.until:
                    self.clock.advance_to(self.until)
                    self.sched.run_until_idle()
                    break
                self.clock.advance_to(nxt)
        finally:
            self.sched.stop()
            self.subscription.cancel()
        placements: dict[str, str] = {}
        pending: dict[str, str] = {}
        for obj in self.backend.list("Pod"):
            assert isinstance(obj, Pod)
            if obj.spec.node_name:
                placements[obj.key] = obj.spec.node_name
            else:
                failed = [
                    e for e in self.timelines.get(obj.key, ()) if e.event in ("failed", "error")
                ]
                pending[obj.key] = failed[-1].message if failed else "never attempted"
        return ScenarioResult(
            timelines={k: tuple(v) for k, v in self.timelines.items()},
            placements=placements,
            pending=pending,
            utilisation=tuple(self.utilisation),
            fragmentation=self._fragmentation(),
            end_time=self.clock.now(),
            attempts=self.sched.attempts,
            rejected=tuple(self.rejected),
            final_objects=final_objects(self.backend),
            config=self.config,
            registry=self.registry,
            seed=self.seed,
        )

    # -- bookkeeping ---------------------------------------------------------------------

    def _note(self, key: str, event: str, **fields: object) -> None:
        self.timelines.setdefault(key, []).append(
            PodEvent(time=self.clock.now(), event=event, **fields)  # type: ignore[arg-type]
        )

    def _nodes(self) -> list[Node]:
        return [n for n in self.backend.list("Node") if isinstance(n, Node)]

    def _bound(self) -> list[Pod]:
        return [p for p in self.backend.list("Pod") if isinstance(p, Pod) and p.spec.node_name]

    def _sample(self) -> None:
        nodes = {n.metadata.name: n for n in self._nodes()}
        used: dict[str, int] = {}
        for pod in self._bound():
            if pod.spec.node_name in nodes:
                for r, v in pod.requests.items():
                    used[r] = used.get(r, 0) + v
                used["pods"] = used.get("pods", 0) + 1
        sample: dict[str, float] = {}
        for r in ("cpu", "memory", "pods"):
            total = sum(n.allocatable.get(r, 0) for n in nodes.values())
            sample[r] = used.get(r, 0) / total if total else 0.0
        now = self.clock.now()
        if self.utilisation and self.utilisation[-1][0] == now:
            self.utilisation[-1] = (now, sample)
        else:
            self.utilisation.append((now, sample))

    def _fragmentation(self) -> dict[str, float]:
        nodes = [n for n in self._nodes() if not n.spec.unschedulable]
        used: dict[str, dict[str, int]] = {n.metadata.name: {} for n in nodes}
        for pod in self._bound():
            if pod.spec.node_name in used:
                for r, v in pod.requests.items():
                    used[pod.spec.node_name][r] = used[pod.spec.node_name].get(r, 0) + v
        out: dict[str, float] = {}
        for r in ("cpu", "memory"):
            free = [
                max(0, n.allocatable.get(r, 0) - used[n.metadata.name].get(r, 0)) for n in nodes
            ]
            total = sum(free)
            out[r] = 0.0 if total == 0 else 1.0 - max(free) / total
        return out

    # -- operations ----------------------------------------------------------------------

    def _create(self, pod: Pod) -> None:
        self.backend.create(pod)

    def _operate(self, op: Operation) -> None:
        try:
            self._apply(op)
        except BackendError as exc:
            self.rejected.append((self.clock.now(), op.op, str(exc)))

    def _apply(self, op: Operation) -> None:
        b = self.backend
        if op.op in ("createPod", "createNode"):
            if isinstance(op.obj, Pod):
                b.create(op.obj)
            elif isinstance(op.obj, Node):
                b.create(op.obj)
                self._sample()
        elif op.op in ("updatePod", "updateNode"):
            if isinstance(op.obj, Pod):
                b.apply(op.obj)
            elif isinstance(op.obj, Node):
                b.apply(op.obj)
        elif op.op == "deletePod":
            pod = b.get("Pod", op.name, op.namespace)
            if not isinstance(pod, Pod):
                raise _not_found("pods", op.name)
            b.delete(pod)
        elif op.op == "deleteNode":
            node = b.get("Node", op.name)
            if not isinstance(node, Node):
                raise _not_found("nodes", op.name)
            b.delete(node)
            self._sample()
        elif op.op in ("cordon", "uncordon"):
            self._edit_node(
                op.name,
                lambda n: attrs.evolve(
                    n, spec=attrs.evolve(n.spec, unschedulable=op.op == "cordon")
                ),
            )
        elif op.op in ("taint", "untaint"):
            assert op.taint is not None
            taint = op.taint
            if op.op == "taint":
                self._edit_node(
                    op.name,
                    lambda n: _with_taints(
                        n, (*[t for t in n.spec.taints if not t.matches(taint)], taint)
                    ),
                )
            else:
                self._edit_node(
                    op.name,
                    lambda n: _with_taints(
                        n, tuple(t for t in n.spec.taints if not t.matches(taint))
                    ),
                )
        elif op.op == "scale":
            self._scale(op)
        elif op.op == "drain":
            self._edit_node(
                op.name, lambda n: attrs.evolve(n, spec=attrs.evolve(n.spec, unschedulable=True))
            )
            self._drain(op.name)
        elif op.op == "failNode":
            self._fail(op)

    def _edit_node(self, name: str, change: Callable[[Node], Node]) -> None:
        node = self.backend.get("Node", name)
        if not isinstance(node, Node):
            raise _not_found("nodes", name)
        self.backend.update(change(node))

    def _scale(self, op: Operation) -> None:
        from schedframe.simulation._controllers import controller_pods

        key = f"{op.namespace}/{op.kind}/{op.name}"
        held = self.controllers.get(key)
        if held is None:
            resource = {"Deployment": "deployments.apps", "StatefulSet": "statefulsets.apps"}
            raise _not_found(resource.get(op.kind, "jobs.batch"), op.name)
        obj, made = held
        if isinstance(obj, Job):
            scaled: object = attrs.evolve(obj, parallelism=op.replicas, completions=op.replicas)
        else:
            scaled = attrs.evolve(obj, replicas=op.replicas)  # type: ignore[misc]
        _, want, _ = controller_pods(scaled)
        self.controllers[key] = (scaled, want)
        owners = {ref.uid for ref in (want[0].metadata.owner_references if want else ())}
        if not owners and made:
            owners = {ref.uid for ref in made[0].metadata.owner_references}
        live = [
            p
            for p in self.backend.list("Pod")
            if isinstance(p, Pod)
            and p.namespace == op.namespace
            and any(ref.uid in owners for ref in p.metadata.owner_references)
        ]
        names = {p.name for p in live}
        if isinstance(obj, StatefulSet):
            # Ordinals 0..n-1: create the missing ones, delete the highest ones first.
            keep = {p.name for p in want}
            for pod in want:
                if pod.name not in names:
                    self.backend.create(pod)
            for pod in sorted(live, key=lambda p: _ordinal(p.name), reverse=True):
                if pod.name not in keep:
                    self.backend.delete(pod)
            return
        # A ReplicaSet (a Deployment's) or a Job: create pods up to the count, under names not
        # in use; scaling down deletes unbound pods first, then the newest (upstream ranks
        # unassigned pods first and, among equals, the most recently created).
        missing = len(want) - len(live)
        for pod in want:
            if missing <= 0:
                break
            if pod.name not in names:
                self.backend.create(pod)
                missing -= 1
        if missing < 0:
            ranked = sorted(
                live,
                key=lambda p: (bool(p.spec.node_name), -int(p.metadata.resource_version or 0)),
            )
            for pod in ranked[:-missing]:
                self.backend.delete(pod)

    def _disruptions_allowed(self, pdb: PodDisruptionBudget, pods: Sequence[Pod]) -> int:
        """The disruption controller's ``disruptionsAllowed`` for ``pdb`` now: healthy
        (bound) matching pods minus the desired healthy count; the expected count is the
        number of matching pods (bound or not)."""
        if pdb.selector is None:
            return 0
        matching = [
            p for p in pods if p.namespace == pdb.namespace and pdb.selector.matches(p.labels)
        ]
        healthy = sum(1 for p in matching if p.spec.node_name)
        expected = len(matching)
        if pdb.min_available is not None:
            desired = _scaled(pdb.min_available, expected, up=True)
        elif pdb.max_unavailable is not None:
            desired = expected - _scaled(pdb.max_unavailable, expected, up=True)
        else:
            desired = expected
        return max(0, healthy - desired)

    def _evict(self, pod: Pod) -> bool:
        """The eviction API: False (HTTP 429) when a PDB does not allow the disruption."""
        pods = [p for p in self.backend.list("Pod") if isinstance(p, Pod)]
        for pdb in self.backend.list("PodDisruptionBudget"):
            assert isinstance(pdb, PodDisruptionBudget)
            if (
                pdb.selector is None
                or pdb.namespace != pod.namespace
                or not pdb.selector.matches(pod.labels)
            ):
                continue
            if self._disruptions_allowed(pdb, pods) < 1:
                self._note(
                    pod.key,
                    "evictionRefused",
                    node=pod.spec.node_name,
                    message=f"429 {PDB_REFUSAL} (PodDisruptionBudget {pdb.namespace}/{pdb.name})",
                )
                return False
        self.evicting.add(pod.key)
        try:
            self.backend.delete(pod)
        finally:
            self.evicting.discard(pod.key)
        self._replace(pod)
        return True

    def _drain(self, node: str) -> None:
        left = [
            p
            for p in self._bound()
            if p.spec.node_name == node
            and not any(r.kind == "DaemonSet" for r in p.metadata.owner_references)
        ]
        refused = [p for p in left if not self._evict(p)]
        if refused:
            self._at(self.clock.now() + EVICTION_RETRY_SECONDS, lambda: self._drain(node))

    def _fail(self, op: Operation) -> None:
        self._edit_node(
            op.name,
            lambda n: _with_taints(
                n,
                (
                    *n.spec.taints,
                    Taint(key=_UNREACHABLE, effect="NoSchedule"),
                    Taint(key=_UNREACHABLE, effect="NoExecute"),
                ),
            ),
        )
        name = op.name

        def evict() -> None:
            for pod in self._bound():
                if pod.spec.node_name != name or _tolerates_unreachable(pod):
                    continue
                self.evicting.add(pod.key)
                try:
                    self.backend.delete(pod)
                finally:
                    self.evicting.discard(pod.key)
                self._replace(pod)

        self._at(self.clock.now() + op.evict_after, evict)

    def _replace(self, pod: Pod) -> None:
        """A controller recreates an evicted pod: a StatefulSet under the same name, a
        ReplicaSet (a Deployment's) or Job under a new one."""
        refs = pod.metadata.owner_references
        if not refs:
            return
        ref = refs[0]
        if ref.kind == "StatefulSet":
            fresh = pod.with_changes(
                node_name="",
                metadata={"resource_version": "", "uid": ""},
                status={"conditions": (), "nominated_node_name": ""},
            )
        elif ref.kind in ("ReplicaSet", "Job"):
            self.counter += 1
            name = f"{pod.name}-r{self.counter}"
            fresh = pod.with_changes(
                node_name="",
                metadata={"name": name, "resource_version": "", "uid": ""},
                status={"conditions": (), "nominated_node_name": ""},
            )
        else:
            return
        self.backend.create(fresh)

    # -- the backend's watch -------------------------------------------------------------

    def _on_watch(self, event: WatchEvent) -> None:
        obj = event.obj
        if not isinstance(obj, Pod):
            return
        if event.type == "ADDED" and not obj.spec.node_name:
            self._note(obj.key, "queued")
        elif event.type == "DELETED":
            node = (event.old if isinstance(event.old, Pod) else obj).spec.node_name
            if obj.key in self.completing:
                self._note(obj.key, "completed", node=node)
            elif obj.key in self.evicting:
                self._note(obj.key, "evicted", node=node)
            elif any(
                c.type == "DisruptionTarget" and c.status == "True" for c in obj.status.conditions
            ):
                pass  # reported with its preemptor by the preemption hook
            else:
                self._note(obj.key, "deleted", node=node)
            if node:
                self._sample()

    # -- observer hooks ------------------------------------------------------------------

    @impl
    def schedframe_pod_scheduled(self, pod: Pod, node_name: str, attempts: int) -> None:
        self._note(pod.key, "bound", node=node_name, attempt=attempts)
        self._sample()
        duration = self.durations.get(pod.key)
        if duration is not None:
            key = pod.key
            self._at(self.clock.now() + duration, lambda: self._complete(key))

    def _complete(self, key: str) -> None:
        ns, name = key.split("/", 1)
        pod = self.backend.get("Pod", name, ns)
        if isinstance(pod, Pod) and pod.spec.node_name:
            self.completing.add(key)
            try:
                self.backend.delete(pod)
            finally:
                self.completing.discard(key)

    @impl
    def schedframe_pod_unschedulable(self, pod: Pod, message: str, attempts: int) -> None:
        self._note(pod.key, "failed", message=message, attempt=attempts)

    @impl
    def schedframe_scheduling_error(self, pod: Pod, message: str) -> None:
        self._note(pod.key, "error", message=message)

    @impl
    def schedframe_preemption(self, preemptor: Pod, node_name: str, victims: Sequence[Pod]) -> None:
        for victim in victims:
            self._note(victim.key, "preempted", node=node_name, message=f"by {preemptor.key}")


def _ordinal(name: str) -> int:
    tail = name.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else -1


def _not_found(resource: str, name: str) -> BackendError:
    # apimachinery's NotFound text, as kube-apiserver answers a request for a missing object.
    return BackendError(f'{resource} "{name}" not found', reason="NotFound", code=404)


def _with_taints(node: Node, taints: Iterable[Taint]) -> Node:
    return attrs.evolve(node, spec=attrs.evolve(node.spec, taints=tuple(taints)))


def _tolerates_unreachable(pod: Pod) -> bool:
    return any(
        (t.key in ("", _UNREACHABLE))
        and t.effect in ("", "NoExecute")
        and t.toleration_seconds is None
        and (t.operator == "Exists" or t.key == _UNREACHABLE)
        for t in pod.spec.tolerations
    )


def _scaled(value: int | str, total: int, *, up: bool) -> int:
    if isinstance(value, int):
        return value
    pct = int(value.rstrip("%"))
    exact = pct * total / 100
    return math.ceil(exact) if up else math.floor(exact)


def run_scenario(
    scenario: Scenario,
    *,
    config: KubeSchedulerConfiguration
    | str
    | os.PathLike[str]
    | Mapping[str, object]
    | None = None,
    registry: Registry | None = None,
    seed: int = 0,
) -> ScenarioResult:
    """Run a scenario with a real scheduler in deterministic virtual time.

    Args:
        scenario: what to run (see :func:`load_scenario`).
        config: a ``KubeSchedulerConfiguration``, a path, a mapping or ``None`` (defaults).
        registry: where plugins come from; every installed entry point by default.
        seed: seeds the scheduler's random source.

    Raises:
        ConfigError: a bad configuration.
    """
    return _Run(scenario, run_config(config), registry, seed).run()


def run_config(
    config: KubeSchedulerConfiguration | Mapping[str, object] | str | os.PathLike[str] | None,
) -> KubeSchedulerConfiguration:
    """The configuration a run uses: ``config`` as given, loaded from a mapping or a file, or
    the defaults for ``None``.

    Raises:
        ConfigError: a bad configuration, naming the file it came from.
    """
    from schedframe.config import KubeSchedulerConfiguration, load_config

    if isinstance(config, KubeSchedulerConfiguration):
        return config
    source = None if isinstance(config, Mapping) or config is None else os.fspath(config)
    try:
        return load_config(config)
    except ConfigError as exc:
        if exc.source is None and source is not None:
            raise exc.with_source(source) from None
        raise
