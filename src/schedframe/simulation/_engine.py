"""The simulate engine: a real :class:`~schedframe.Scheduler` on a :class:`MemoryBackend`, in
virtual time.

The scheduler runs in deterministic mode (a :class:`VirtualClock`, a seeded random source,
binding cycles as ordered tasks). The engine creates each pod at its arrival time, deletes it
``duration`` seconds after it was bound (it "completed"), and lets the scheduler work between
those moments until it is idle. Everything the scheduler decides is observed through the
public observer hooks and the backend's watch, never by reaching into the loop.
"""

from __future__ import annotations

import collections
import functools
import heapq
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from schedframe.errors import DUPLICATE, ConfigError, FieldIssue, ManifestError, PluginError
from schedframe.framework import FitError
from schedframe.hooks import impl
from schedframe.objects import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    CustomObject,
    Namespace,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    StorageClass,
    VolumeAttachment,
)
from schedframe.objects._resource import (
    DeviceClass,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from schedframe.scheduler import Scheduler, VirtualClock
from schedframe.simulation._controllers import daemon_set_pods
from schedframe.simulation._state import final_objects
from schedframe.simulation._workload import MAX_SECONDS, Arrival, Workload, _controlled

# The storage kinds a cluster brings along (the volume plugins read them).
_STORAGE_TYPES: Final = (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)

if TYPE_CHECKING:
    from schedframe import framework as fw
    from schedframe.backends import WatchEvent
    from schedframe.config import KubeSchedulerConfiguration
    from schedframe.explain import Explanation
    from schedframe.metrics import SchedulerMetrics
    from schedframe.runtime import Framework, Registry
    from schedframe.simulation._summary import Summary

__all__ = [
    "DEFAULT_MAX_VIRTUAL_TIME",
    "Decision",
    "PodRecord",
    "Progress",
    "SimulationResult",
    "UsageChange",
    "simulate",
]

_DISRUPTION_TARGET = "DisruptionTarget"

#: How far in virtual time :func:`simulate` runs at most unless told otherwise: one year.
DEFAULT_MAX_VIRTUAL_TIME = 365 * 24 * 3600.0


@attrs.frozen(kw_only=True)
class Decision:
    """One thing the scheduler decided (or that happened to a pod) during a simulation.

    Attributes:
        time: virtual time, seconds.
        event: ``scheduled`` (bound), ``unschedulable`` (an attempt found no node), ``error``
            (an attempt failed), ``preempted`` (evicted to make room for ``by``) or
            ``completed`` (ran its duration and was deleted).
        pod: ``namespace/name``.
        node: the node (bound to, preempted from, completed on).
        attempt: the scheduling attempt (1 for the first).
        message: upstream's FailedScheduling message, for failures.
        plugins: the plugins that rejected the pod, for failures.
        reasons: ``(reason, nodes)`` pairs of the failure, most nodes first.
        nominated_node: the node preemption nominated the pod to, if any.
        latency: seconds from arrival to binding, for ``scheduled``.
        by: the preemptor, for ``preempted``.
        evaluated_nodes: nodes filtered in the attempt, for ``scheduled``.
        feasible_nodes: nodes that passed filtering, for ``scheduled``.
        top_nodes: ``(node, total score)`` of the best nodes, for ``scheduled``.
    """

    time: float
    event: str
    pod: str
    node: str = ""
    attempt: int = 0
    message: str = ""
    plugins: tuple[str, ...] = ()
    reasons: tuple[tuple[str, int], ...] = ()
    nominated_node: str = ""
    latency: float | None = None
    by: str = ""
    evaluated_nodes: int | None = None
    feasible_nodes: int | None = None
    top_nodes: tuple[tuple[str, int], ...] = ()

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping (empty fields left out)."""
        out: dict[str, object] = {"time": round(self.time, 6), "event": self.event, "pod": self.pod}
        if self.node:
            out["node"] = self.node
        if self.attempt:
            out["attempt"] = self.attempt
        if self.message:
            out["message"] = self.message
        if self.plugins:
            out["plugins"] = list(self.plugins)
        if self.reasons:
            out["reasons"] = dict(self.reasons)
        if self.nominated_node:
            out["nominatedNode"] = self.nominated_node
        if self.latency is not None:
            out["latency"] = round(self.latency, 6)
        if self.by:
            out["by"] = self.by
        if self.evaluated_nodes is not None:
            out["evaluatedNodes"] = self.evaluated_nodes
        if self.feasible_nodes is not None:
            out["feasibleNodes"] = self.feasible_nodes
        if self.top_nodes:
            out["topNodes"] = [{"node": n, "score": s} for n, s in self.top_nodes]
        return out


@attrs.define
class PodRecord:
    """What happened to one workload pod.

    ``state`` is one of ``pending`` (arrived, never bound: unschedulable), ``running``
    (bound at the end), ``completed``, ``preempted`` and ``not-arrived`` (its arrival lies
    after the end of the run).
    """

    key: str
    arrival: float
    duration: float | None = None
    arrived: bool = False
    node: str = ""
    bound_at: float | None = None
    completed_at: float | None = None
    preempted_at: float | None = None
    preempted_by: str = ""
    attempts: int = 0
    last_outcome: str = ""
    last_message: str = ""
    last_reasons: tuple[tuple[str, int], ...] = ()

    @property
    def state(self) -> str:
        """``pending``, ``running``, ``completed``, ``preempted`` or ``not-arrived``."""
        if not self.arrived:
            return "not-arrived"
        if self.preempted_at is not None:
            return "preempted"
        if self.completed_at is not None:
            return "completed"
        if self.bound_at is not None:
            return "running"
        return "pending"

    @property
    def latency(self) -> float | None:
        """Seconds from arrival to binding (virtual time)."""
        return None if self.bound_at is None else self.bound_at - self.arrival


@attrs.frozen
class UsageChange:
    """A node's requested resources changed at ``time`` (a pod was bound or left)."""

    time: float
    node: str
    requested: Mapping[str, int]


@attrs.frozen(kw_only=True)
class Progress:
    """Where a running simulation is, for progress displays."""

    time: float
    arrived: int
    total: int
    bound: int
    pending: int
    attempts: int
    wall_seconds: float
    done: bool = False


@attrs.frozen(kw_only=True, eq=False)
class SimulationResult:
    """Everything a simulation saw, to summarise, export, plot and explain.

    Attributes:
        config: the configuration the scheduler ran with.
        nodes: the cluster's nodes.
        namespaces: the cluster's namespaces.
        pdbs: the cluster's PodDisruptionBudgets.
        workloads: the cluster's Services, ReplicationControllers, ReplicaSets and
            StatefulSets (default spreading's selectors).
        initial_pods: pods bound when the run started (part of the cluster).
        pods: a record per workload pod, in arrival order.
        decisions: every decision, in order.
        usage: every change of a node's requested resources, in order (initial usage at 0).
        victims: ``namespace/name`` of every preempted pod (cluster pods included).
        end_time: virtual time when the run ended.
        wall_seconds: wall-clock seconds the run took.
        attempts: scheduling attempts (cycles).
        seed: the scheduler's seed.
        profiles: the configured ``schedulerName``\\ s.
        registry: the plugin registry used (for :meth:`explain`).
        captured: the cluster as each pod of ``capture`` saw it at its first attempt:
            ``key -> (pod, bound pods)``.
        tie_breaks: for each captured pod, the scheduler's random state and next start node
            index when that attempt began (``random.Random.getstate()``, int).
        captured_dra: for each captured pod, the DRA objects (DeviceClasses, ResourceSlices,
            ResourceClaims, templates) as that attempt saw them; the pod's own claims without
            the allocation the attempt itself made.
        unsettled: why the run ended before the scenario settled, one sentence each (the
            ``max_virtual_time`` limit reached with work left; pods that could not settle,
            see :attr:`Scheduler.stalled_pods <schedframe.scheduler.Scheduler.stalled_pods>`);
            empty when it ran to its natural end or to ``until``.
        final_objects: every object the backend held at the end (nodes, pods bound and
            pending, namespaces, budgets, storage and DRA objects ...), what
            :mod:`schedframe.report` explains pending pods against.
    """

    config: KubeSchedulerConfiguration
    nodes: tuple[Node, ...]
    namespaces: tuple[Namespace, ...] = ()
    pdbs: tuple[PodDisruptionBudget, ...] = ()
    workloads: tuple[object, ...] = ()
    initial_pods: tuple[Pod, ...] = ()
    pods: tuple[PodRecord, ...] = ()
    decisions: tuple[Decision, ...] = ()
    usage: tuple[UsageChange, ...] = ()
    victims: tuple[str, ...] = ()
    end_time: float = 0.0
    wall_seconds: float = 0.0
    attempts: int = 0
    seed: int = 0
    profiles: tuple[str, ...] = ()
    registry: Registry | None = None
    captured: Mapping[str, tuple[Pod, tuple[Pod, ...]]] = attrs.field(factory=dict)
    tie_breaks: Mapping[str, tuple[object, int]] = attrs.field(factory=dict)
    captured_dra: dict[str, tuple[object, ...]] = attrs.field(factory=dict)
    unsettled: tuple[str, ...] = ()
    final_objects: tuple[object, ...] = ()

    def placements(self) -> dict[str, str]:
        """``pod -> node`` of every workload pod that was bound (whatever happened later)."""
        return {r.key: r.node for r in self.pods if r.bound_at is not None}

    def pod(self, key: str) -> PodRecord:
        """The record of one workload pod; ``KeyError`` if there is none."""
        for r in self.pods:
            if r.key == key:
                return r
        raise KeyError(key)

    def summary(self) -> Summary:
        """Counts, reasons, utilisation and latencies (see :class:`Summary`)."""
        from schedframe.simulation._summary import summarize

        return summarize(self)

    def explain(self, key: str) -> Explanation:
        """Explain the first scheduling attempt of pod ``key`` (it must have been captured).

        Runs :func:`schedframe.explain.explain` on the cluster as the pod saw it, with the
        scheduler's random state and node start index of that moment, so even a tie is
        broken as the simulation broke it.

        Raises:
            KeyError: the pod was not in ``capture`` or was never attempted.
        """
        from schedframe.explain import explain

        pod, bound = self.captured[key]
        dra = self.captured_dra.get(key, ())
        rng: random.Random | None = None
        start_index = 0
        if key in self.tie_breaks:
            state, start_index = self.tie_breaks[key]
            rng = random.Random()
            rng.setstate(state)  # type: ignore[arg-type]
        return explain(
            pod,
            nodes=self.nodes,
            pods=bound,
            namespaces=self.namespaces,
            pdbs=self.pdbs,
            workloads=(*self.workloads, *dra),
            config=self.config,
            registry=self.registry,
            seed=self.seed,
            rng=rng,
            start_index=start_index,
        )

    def write_jsonl(self, path: str | os.PathLike[str]) -> None:
        """Write every decision as one JSON object per line."""
        import json

        with open(path, "w", encoding="utf-8") as out:
            for d in self.decisions:
                out.write(json.dumps(d.to_dict(), sort_keys=False) + "\n")


# --------------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------------


class _SimScheduler(Scheduler):
    """A Scheduler that keeps the FitError of each failed attempt for the reasons table."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.fit_errors: dict[str, FitError] = {}
        super().__init__(*args, **kwargs)

    def failure_handler(
        self,
        fwk: Framework,
        qpi: fw.QueuedPodInfo,
        status: fw.Status,
        nominating_info: fw.NominatingInfo | None,
        start: float,
    ) -> None:
        err = status.as_error()
        if isinstance(err, FitError):
            self.fit_errors[qpi.pod.uid] = err
        else:
            self.fit_errors.pop(qpi.pod.uid, None)
        super().failure_handler(fwk, qpi, status, nominating_info, start)


def _add(total: dict[str, int], amounts: Mapping[str, int], sign: int) -> None:
    for name, value in amounts.items():
        total[name] = total.get(name, 0) + sign * value


class _Engine:
    """Runs one simulation; the hook methods are its observer plugin."""

    def __init__(
        self,
        *,
        config: KubeSchedulerConfiguration,
        cluster: Sequence[object],
        workload: Workload,
        registry: Registry,
        seed: int,
        until: float | None,
        progress: Callable[[Progress], None] | None,
        progress_interval: float,
        capture: Iterable[str],
        max_virtual_time: float = MAX_SECONDS,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        from schedframe.backends import MemoryBackend
        from schedframe.hooks import plugin_manager

        self.config = config
        self.registry = registry
        self.seed = seed
        self.until = until
        self.max_virtual_time = max_virtual_time
        self.unsettled: list[str] = []
        self.stalled: set[str] = set()
        self.progress = progress
        self.progress_interval = progress_interval
        self.capture = set(capture)

        self.nodes = tuple(o for o in cluster if isinstance(o, Node))
        self.namespaces = tuple(o for o in cluster if isinstance(o, Namespace))
        self.pdbs = tuple(o for o in cluster if isinstance(o, PodDisruptionBudget))
        # Succeeded and Failed pods neither run nor wait: the scheduler never sees them.
        cluster_pods = [
            o
            for o in cluster
            if isinstance(o, Pod) and o.status.phase not in ("Succeeded", "Failed")
        ]
        self.initial_pods = tuple(p for p in cluster_pods if p.spec.node_name)
        # Unbound pods of the cluster are pending work: they arrive at time 0.
        unbound = [Arrival(time=0.0, pod=p) for p in cluster_pods if not p.spec.node_name]
        # DaemonSets of the workload: one pod per node they should run on.
        daemons = Workload()
        for ds in workload.daemon_sets:
            pods = daemon_set_pods(ds, self.nodes)
            daemons = daemons + _controlled(ds, pods, len(pods), "workload")
        self.arrivals = Workload(tuple(unbound)) + workload + daemons
        # Pods whose controller creates them later (OrderedReady, Job parallelism), by owner.
        self.waiting: dict[str, collections.deque[Arrival]] = {}
        self.group_of = {a.pod.uid: a.group for a in self.arrivals.arrivals if a.group}
        self.due_now = False

        self.records: dict[str, PodRecord] = {}
        initial_uids = {p.uid for p in self.initial_pods}
        for a in self.arrivals.arrivals:
            uid = a.pod.uid
            if uid in self.records or uid in initial_uids:
                issue = FieldIssue(
                    path="metadata.name",
                    kind=DUPLICATE,
                    value=a.pod.key,
                    detail="a pod of this namespace and name (or uid) is already in the cluster or workload",
                )
                raise ManifestError([issue], source="workload")
            self.records[uid] = PodRecord(key=a.pod.key, arrival=a.time, duration=a.duration)

        # PriorityClasses for Priority admission; the objects default spreading reads.
        self.priority_classes = tuple(o for o in cluster if isinstance(o, PriorityClass))
        self.listed = tuple(
            o
            for o in cluster
            if isinstance(
                o, Service | ReplicationController | ReplicaSet | StatefulSet | CustomObject
            )
            or isinstance(o, _STORAGE_TYPES)
            # The DRA objects DynamicResources reads (claims from templates are made by the
            # memory backend's resourceclaim controller).
            or isinstance(o, DeviceClass | ResourceSlice | ResourceClaim | ResourceClaimTemplate)
        ) + tuple(workload.objects)
        # Admission rejects a pod now, with its message, rather than when it arrives.
        from schedframe.backends import admit_priority

        for a in self.arrivals.arrivals:
            admit_priority(a.pod, self.priority_classes)

        self.clock = VirtualClock(start=0.0)
        static: list[object] = [
            *self.priority_classes,
            *self.namespaces,
            *self.nodes,
            *self.pdbs,
            *self.listed,
            *self.initial_pods,
        ]
        self.backend = MemoryBackend(static, clock=self.clock)
        # Installed observers (group schedframe.hooks) watch simulations too.
        pm = plugin_manager()
        pm.register(self, name="schedframe-simulation")
        self.sched = _SimScheduler(
            config,
            self.backend,
            registry=registry,
            clock=self.clock,
            seed=seed,
            deterministic=True,
            hooks=pm,
        )
        if metrics is not None:
            metrics.attach(self.sched)

        self.decisions: list[Decision] = []
        self.usage: list[UsageChange] = []
        self.requested: dict[str, dict[str, int]] = {n.metadata.name: {} for n in self.nodes}
        self.bound: dict[str, Pod] = {}  # uid -> bound pod, as the backend has it
        self.completing: set[str] = set()
        self.deleted_in_cycle: list[Pod] = []
        self.victims_reported = 0
        self.victims: list[str] = []
        self.captured: dict[str, tuple[Pod, tuple[Pod, ...]]] = {}
        self.captured_dra: dict[str, tuple[object, ...]] = {}
        self.tie_breaks: dict[str, tuple[object, int]] = {}
        self.wakeups: list[float] = []
        self.arrived = 0
        self.bound_count = 0
        self.cycles = 0
        self.started = time.perf_counter()
        self.last_progress = self.started

        # The scheduler's random state and next start node index when the next cycle begins,
        # so a captured attempt can be explained with the very same tie-break.
        self.cycle_rng_state: object = self.sched.rng.getstate()
        self.cycle_start_index = 0
        self.subscription = self.backend.subscribe(self._on_watch)
        for node in self.nodes:
            self.usage.append(
                UsageChange(0.0, node.metadata.name, dict(self.requested[node.metadata.name]))
            )
        for a in self.arrivals.arrivals:
            if a.wait_for:
                self.waiting.setdefault(a.group, collections.deque()).append(a)
            else:
                self._at(a.time, functools.partial(self._arrive, a))

    # -- time --------------------------------------------------------------------------------

    def _at(self, when: float, fn: Callable[[], None]) -> None:
        self.clock.call_at(when, fn)
        heapq.heappush(self.wakeups, when)

    def _next_wakeup(self) -> float | None:
        now = self.clock.now()
        if self.due_now:  # a pod released during this instant is still to be created
            self.due_now = False
            return now
        while self.wakeups and self.wakeups[0] <= now:
            heapq.heappop(self.wakeups)
        return self.wakeups[0] if self.wakeups else None

    def run(self) -> SimulationResult:
        try:
            while True:
                self.clock.run_due()
                self._run_until_idle()
                nxt = self._next_wakeup()
                if nxt is None:
                    break
                if self.until is not None and nxt > self.until:
                    self.clock.advance_to(self.until)
                    self._run_until_idle()
                    break
                if nxt > self.max_virtual_time:
                    self.clock.advance_to(self.max_virtual_time)
                    self._run_until_idle()
                    left = sum(1 for r in self.records.values() if not r.arrived)
                    self.unsettled.append(
                        f"stopped at the maximum virtual time of {self.max_virtual_time:g}s "
                        f"with work left (next event at {nxt:g}s; {left} pod(s) not arrived "
                        "yet); raise --max-virtual-time or set --until"
                    )
                    break
                self.clock.advance_to(nxt)
        finally:
            self.sched.stop()
            self.subscription.cancel()
        wall = time.perf_counter() - self.started
        if self.progress is not None:
            self.progress(self._progress(wall, done=True))
        for rec in self.records.values():
            if rec.arrived and rec.bound_at is None and not rec.last_outcome:
                rec.last_outcome = "never-attempted"
        self._explain_never_attempted()
        return SimulationResult(
            config=self.config,
            nodes=self.nodes,
            namespaces=self.namespaces,
            pdbs=self.pdbs,
            workloads=self.listed,
            initial_pods=self.initial_pods,
            pods=tuple(self.records.values()),
            decisions=tuple(self.decisions),
            usage=tuple(self.usage),
            victims=tuple(self.victims),
            end_time=self.clock.now(),
            wall_seconds=wall,
            attempts=self.sched.attempts,
            seed=self.seed,
            profiles=tuple(p.scheduler_name for p in self.config.profiles),
            registry=self.registry,
            captured=dict(self.captured),
            tie_breaks=dict(self.tie_breaks),
            captured_dra=dict(self.captured_dra),
            unsettled=tuple(self.unsettled) + self._stalled_text(),
            final_objects=final_objects(self.backend),
        )

    def _run_until_idle(self) -> None:
        self.sched.run_until_idle()
        self.stalled.update(self.sched.stalled_pods)

    def _stalled_text(self) -> tuple[str, ...]:
        """The pods some run gave up on and that were still not bound at the end."""
        bound = {r.key for r in self.records.values() if r.bound_at is not None}
        stuck = sorted(self.stalled - bound)
        if not stuck:
            return ()
        shown = ", ".join(stuck[:10]) + (f" and {len(stuck) - 10} more" if len(stuck) > 10 else "")
        return (
            f"{len(stuck)} pod(s) could not settle (retried with no pod bound for a minute of "
            f"virtual time, e.g. a Permit plugin that always waits or a persistent error): {shown}",
        )

    def _explain_never_attempted(self) -> None:
        profiles = {p.scheduler_name for p in self.config.profiles}
        for a in self.arrivals.arrivals:
            rec = self.records[a.pod.uid]
            if rec.last_outcome != "never-attempted":
                continue
            name = a.pod.spec.scheduler_name
            if name not in profiles:
                rec.last_message = f'no profile has schedulerName "{name}"'
            elif a.pod.spec.scheduling_gates:
                gates = ", ".join(a.pod.spec.scheduling_gates)
                rec.last_message = f"scheduling gated ({gates})"
            else:
                rec.last_message = "never attempted"

    # -- the workload ------------------------------------------------------------------------

    def _arrive(self, arrival: Arrival) -> None:
        rec = self.records[arrival.pod.uid]
        rec.arrived = True
        self.arrived += 1
        self.backend.create(arrival.pod)

    def _release(self, uid: str, reason: str) -> None:
        """A pod of ``uid``'s controller was bound or completed: the controller creates the
        next pod that waited on that."""
        queue = self.waiting.get(self.group_of.get(uid, ""))
        if not queue or queue[0].wait_for != reason:
            return
        arrival = queue.popleft()
        now = self.clock.now()
        self.records[arrival.pod.uid].arrival = now
        self.clock.call_at(now, functools.partial(self._arrive, arrival))
        self.due_now = True

    def _complete(self, uid: str) -> None:
        pod = self.bound.get(uid)
        rec = self.records.get(uid)
        if pod is None or rec is None or rec.preempted_at is not None:
            return
        self.completing.add(uid)
        try:
            self.backend.delete(pod)
        finally:
            self.completing.discard(uid)

    # -- the backend's watch -----------------------------------------------------------------

    def _on_watch(self, event: WatchEvent) -> None:
        obj = event.obj
        if not isinstance(obj, Pod):
            return
        now = self.clock.now()
        if event.type == "DELETED":
            held = self.bound.pop(obj.uid, None)
            if held is None:
                return
            self._usage(held, -1, now)
            rec = self.records.get(obj.uid)
            if obj.uid in self.completing:
                if rec is not None:
                    rec.completed_at = now
                self.decisions.append(
                    Decision(time=now, event="completed", pod=obj.key, node=held.spec.node_name)
                )
                self._release(obj.uid, "completed")
            elif any(
                c.type == _DISRUPTION_TARGET and c.status == "True" for c in obj.status.conditions
            ):
                self.victims.append(obj.key)
                if rec is not None:
                    rec.preempted_at = now
                self.deleted_in_cycle.append(held)
            return
        if obj.spec.node_name and obj.uid not in self.bound:
            self.bound[obj.uid] = obj
            self._usage(obj, +1, now)
        elif obj.spec.node_name:
            self.bound[obj.uid] = obj

    def _usage(self, pod: Pod, sign: int, now: float) -> None:
        node = pod.spec.node_name
        req = self.requested.get(node)
        if req is None:
            return
        _add(req, pod.requests, sign)
        self.usage.append(UsageChange(now, node, dict(req)))

    # -- observer hooks ----------------------------------------------------------------------

    @impl
    def schedframe_pod_scheduled(self, pod: Pod, node_name: str, attempts: int) -> None:
        now = self.clock.now()
        rec = self.records.get(pod.uid)
        result = self.sched.results.get(pod.uid)
        latency = None
        if rec is not None:
            rec.node = node_name
            rec.bound_at = now
            rec.attempts = attempts
            rec.last_outcome = "scheduled"
            rec.last_message = ""
            latency = now - rec.arrival
            if rec.duration is not None:
                uid = pod.uid
                self._at(now + rec.duration, lambda: self._complete(uid))
            self._release(pod.uid, "bound")
        self.bound_count += 1
        self.decisions.append(
            Decision(
                time=now,
                event="scheduled",
                pod=pod.key,
                node=node_name,
                attempt=attempts,
                latency=latency,
                evaluated_nodes=None if result is None else result.evaluated_nodes,
                feasible_nodes=None if result is None else result.feasible_nodes,
                top_nodes=()
                if result is None
                else tuple((n.name, n.score) for n in result.top_nodes),
            )
        )

    @impl
    def schedframe_pod_unschedulable(
        self, pod: Pod, message: str, plugins: Sequence[str], attempts: int
    ) -> None:
        self._report_victims(pod)
        fit = self.sched.fit_errors.pop(pod.uid, None)
        reasons: tuple[tuple[str, int], ...] = ()
        if fit is not None:
            hist = fit.reasons_histogram()
            reasons = tuple(sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])))
        result = self.sched.results.get(pod.uid)
        nominated = ""
        if result is not None and result.nominating_info is not None:
            nominated = result.nominating_info.nominated_node_name
        rec = self.records.get(pod.uid)
        if rec is not None:
            rec.attempts = attempts
            rec.last_outcome = "unschedulable"
            rec.last_message = message
            rec.last_reasons = reasons
        self.decisions.append(
            Decision(
                time=self.clock.now(),
                event="unschedulable",
                pod=pod.key,
                attempt=attempts,
                message=message,
                plugins=tuple(plugins),
                reasons=reasons,
                nominated_node=nominated,
            )
        )

    @impl
    def schedframe_scheduling_error(self, pod: Pod, message: str) -> None:
        rec = self.records.get(pod.uid)
        result = self.sched.results.get(pod.uid)
        attempt = result.attempts if result is not None else 0
        if rec is not None:
            rec.attempts = attempt
            rec.last_outcome = "error"
            rec.last_message = message
            rec.last_reasons = ()
        self.decisions.append(
            Decision(
                time=self.clock.now(), event="error", pod=pod.key, attempt=attempt, message=message
            )
        )

    def _report_victims(self, preemptor: Pod) -> None:
        """Victims deleted since the last report were evicted by ``preemptor``'s PostFilter."""
        now = self.clock.now()
        for victim in self.deleted_in_cycle[self.victims_reported :]:
            rec = self.records.get(victim.uid)
            if rec is not None:
                rec.preempted_by = preemptor.key
            self.decisions.append(
                Decision(
                    time=now,
                    event="preempted",
                    pod=victim.key,
                    node=victim.spec.node_name,
                    by=preemptor.key,
                )
            )
        self.victims_reported = len(self.deleted_in_cycle)

    def _dra_as_seen_by(self, pod: Pod) -> tuple[object, ...]:
        """The DRA objects now, with ``pod``'s own claims as they were before its attempt."""
        out: list[object] = []
        for kind in ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"):
            for obj in self.backend.list(kind):
                if (
                    isinstance(obj, ResourceClaim)
                    and obj.is_reserved_for(pod.uid)
                    and len(obj.reserved_for) == 1
                ):
                    obj = attrs.evolve(obj, allocation=None, reserved_for=())
                out.append(obj)
        return tuple(out)

    @impl
    def schedframe_cycle_finished(self, pod: Pod) -> None:
        self.cycles += 1
        self._report_victims(pod)
        if pod.key in self.capture and pod.key not in self.captured:
            # The cluster as this attempt saw it: bound pods, plus the victims it just evicted.
            seen = [p for p in self.bound.values() if p.uid != pod.uid]
            seen.extend(self.deleted_in_cycle)
            self.captured[pod.key] = (pod, tuple(seen))
            self.captured_dra[pod.key] = self._dra_as_seen_by(pod)
            self.tie_breaks[pod.key] = (self.cycle_rng_state, self.cycle_start_index)
        self.cycle_rng_state = self.sched.rng.getstate()
        self.cycle_start_index = self.sched.algorithm.next_start_node_index
        self.deleted_in_cycle = []
        self.victims_reported = 0
        if self.progress is not None and self.cycles % 64 == 0:
            wall = time.perf_counter()
            if wall - self.last_progress >= self.progress_interval:
                self.last_progress = wall
                self.progress(self._progress(wall - self.started))

    def _progress(self, wall: float, *, done: bool = False) -> Progress:
        bound = sum(1 for r in self.records.values() if r.bound_at is not None)
        pending = sum(1 for r in self.records.values() if r.arrived and r.bound_at is None)
        return Progress(
            time=self.clock.now(),
            arrived=self.arrived,
            total=len(self.records),
            bound=bound,
            pending=pending,
            attempts=self.cycles,
            wall_seconds=wall,
            done=done,
        )


def simulate(
    *,
    cluster: Iterable[object],
    workload: Workload | Iterable[Arrival] = (),
    config: KubeSchedulerConfiguration
    | str
    | os.PathLike[str]
    | Mapping[str, object]
    | None = None,
    registry: Registry | None = None,
    seed: int = 0,
    until: float | None = None,
    progress: Callable[[Progress], None] | None = None,
    progress_interval: float = 0.5,
    capture: Iterable[str] = (),
    max_virtual_time: float = DEFAULT_MAX_VIRTUAL_TIME,
    metrics: SchedulerMetrics | None = None,
) -> SimulationResult:
    """Run a workload on a cluster with a real scheduler in deterministic virtual time.

    Args:
        cluster: Nodes, Namespaces, PodDisruptionBudgets and Pods; PriorityClasses (every
            pod goes through Priority admission); Services, ReplicationControllers,
            ReplicaSets and StatefulSets (default spreading's selectors); the storage kinds
            (PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers,
            CSIStorageCapacities, VolumeAttachments), which the in-memory backend's storage
            controller binds and provisions as the cluster's controllers would; objects of
            declared custom kinds (what plugins list, PodGroups, ElasticQuotas). Other objects
            (Deployments, Jobs, DaemonSets of a dump: their pods are in it) are ignored. Pods
            with ``spec.nodeName`` are already running; unbound ones arrive at time 0;
            Succeeded and Failed ones are left out, as the scheduler never sees them.
        workload: the pods to schedule and when (see :func:`load_workload`); its
            DaemonSets are expanded here, one pod per node that admits them.
        config: a ``KubeSchedulerConfiguration``, a path, a mapping, or ``None`` for
            kube-scheduler's defaults.
        registry: where plugins come from; by default every installed entry point.
        seed: seeds the scheduler's random source (tie-breaking between equal scores).
        until: stop at this virtual time (seconds); by default the run ends when every
            arrival and completion has happened and the scheduler is idle.
        progress: called now and then (every ``progress_interval`` wall seconds at most) and
            once at the end, with a :class:`Progress`.
        progress_interval: wall seconds between progress calls.
        capture: ``namespace/name`` of pods whose first attempt should be explainable
            afterwards with :meth:`SimulationResult.explain`.
        max_virtual_time: never run past this virtual time (seconds, default
            :data:`~schedframe.simulation.DEFAULT_MAX_VIRTUAL_TIME`, one year; at most
            ``1e10``, about 317 years, as objects carry datetimes); a run stopped by it says
            so in the ``unsettled`` field of :class:`SimulationResult`.
        metrics: upstream's scheduler metrics to feed (``schedframe[metrics]``); read them
            with :meth:`~schedframe.metrics.SchedulerMetrics.exposition` after the run.
            Observers installed in the ``schedframe.hooks`` entry-point group are loaded too
            (unless ``SCHEDFRAME_DISABLE_HOOK_AUTOLOAD`` is set).

    Returns:
        The :class:`SimulationResult`; the same inputs always give the same result (wall
        times aside).

    Raises:
        ConfigError: the configuration is invalid or names an unknown plugin (the message
            names the file when ``config`` is a path).
        PluginError: a plugin failed to build.
        BackendError: Priority admission rejects a pod (403 ``Forbidden``: an unknown
            ``priorityClassName``, or a ``spec.priority`` the class contradicts).
    """
    from schedframe.config import KubeSchedulerConfiguration, load_config
    from schedframe.runtime import Registry

    for name, limit in (("until", until), ("max_virtual_time", max_virtual_time)):
        if limit is not None and not 0 <= limit <= MAX_SECONDS:
            raise ValueError(f"{name} must be between 0 and {MAX_SECONDS:g} seconds, not {limit!r}")

    source = (
        None
        if isinstance(config, KubeSchedulerConfiguration | Mapping) or config is None
        else os.fspath(config)
    )
    cfg = config if isinstance(config, KubeSchedulerConfiguration) else load_config(config)
    if not isinstance(workload, Workload):
        workload = Workload(tuple(sorted(workload, key=lambda a: a.time)))
    reg = registry if registry is not None else Registry.discover()
    try:
        engine = _Engine(
            config=cfg,
            cluster=list(cluster),
            workload=workload,
            registry=reg,
            seed=seed,
            until=until,
            progress=progress,
            progress_interval=progress_interval,
            capture=capture,
            max_virtual_time=max_virtual_time,
            metrics=metrics,
        )
    except ConfigError as exc:
        if exc.source is None and source is not None:
            raise exc.with_source(source) from None
        raise
    except PluginError as exc:
        if source is not None:
            raise PluginError(f"{source}: {exc}") from exc
        raise
    return engine.run()
