"""The metric families of upstream ``pkg/scheduler/metrics/metrics.go`` and their observer."""

from __future__ import annotations

import bisect
import math
import random
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Final, Literal, final

import attrs

from schedframe.hooks import impl

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric
    from prometheus_client.registry import CollectorRegistry

    from schedframe.objects import Pod
    from schedframe.scheduler import Scheduler

__all__ = [
    "EXTENSION_POINTS",
    "FAMILIES",
    "PLUGIN_METRICS_SAMPLE_PERCENT",
    "Family",
    "SchedulerMetrics",
    "exponential_buckets",
]

#: Upstream's ``pluginMetricsSamplePercent``: the share of scheduling attempts whose
#: per-plugin durations are recorded.
PLUGIN_METRICS_SAMPLE_PERCENT: Final = 10

#: The values of the ``extension_point`` label (upstream ``ExtentionPoints``).
EXTENSION_POINTS: Final = (
    "PreFilter",
    "Filter",
    "PreFilterExtensionAddPod",
    "PreFilterExtensionRemovePod",
    "PostFilter",
    "PreScore",
    "Score",
    "ScoreExtensionNormalize",
    "PreBind",
    "PreBindPreFlight",
    "Bind",
    "PostBind",
    "Reserve",
    "Unreserve",
    "Permit",
)


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """Upstream ``ExponentialBuckets``: ``count`` bounds, each ``factor`` times the previous,
    computed by repeated multiplication as Go does (so the floats are the same)."""
    out: list[float] = []
    value = float(start)
    for _ in range(count):
        out.append(value)
        value *= factor
    return tuple(out)


@attrs.frozen(kw_only=True)
class Family:
    """One metric family as upstream declares it.

    Attributes:
        name: the exposed name (counters end in ``_total``).
        kind: ``counter``, ``gauge`` or ``histogram``.
        help: upstream's help text.
        labels: the label names, in upstream's order.
        buckets: histogram upper bounds (``+Inf`` is implied).
    """

    name: str
    kind: Literal["counter", "gauge", "histogram"]
    help: str
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] = ()


_F = Family
#: Every family :class:`SchedulerMetrics` exposes, by name.
FAMILIES: Final[Mapping[str, Family]] = {
    f.name: f
    for f in (
        _F(
            name="scheduler_schedule_attempts_total",
            kind="counter",
            help="Number of attempts to schedule pods, by the result. 'unschedulable' means a "
            "pod could not be scheduled, while 'error' means an internal scheduler problem.",
            labels=("result", "profile"),
        ),
        _F(
            name="scheduler_event_handling_duration_seconds",
            kind="histogram",
            help="Event handling latency in seconds.",
            labels=("event",),
            buckets=exponential_buckets(0.0001, 2, 12),
        ),
        _F(
            name="scheduler_scheduling_attempt_duration_seconds",
            kind="histogram",
            help="Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            labels=("result", "profile"),
            buckets=exponential_buckets(0.001, 2, 15),
        ),
        _F(
            name="scheduler_preemption_victims",
            kind="histogram",
            help="Number of selected preemption victims for preemption initiated by a single pod",
            buckets=exponential_buckets(1, 2, 7),
        ),
        _F(
            name="scheduler_preemption_attempts_total",
            kind="counter",
            help="Total preemption attempts in the cluster till now",
        ),
        _F(
            name="scheduler_pending_pods",
            kind="gauge",
            help="Number of pending pods, by the queue type. 'active' means number of pods in "
            "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number "
            "of pods in unschedulablePods that the scheduler attempted to schedule and failed; "
            "'gated' is the number of unschedulable pods that the scheduler never attempted to "
            "schedule because they are gated.",
            labels=("queue",),
        ),
        _F(
            name="scheduler_pod_scheduling_sli_duration_seconds",
            kind="histogram",
            help="E2e latency for a pod being scheduled, from the time the pod enters the "
            "scheduling queue and might involve multiple scheduling attempts.",
            labels=("attempts",),
            buckets=exponential_buckets(0.01, 2, 20),
        ),
        _F(
            name="scheduler_pod_scheduling_attempts",
            kind="histogram",
            help="Number of attempts to successfully schedule a pod.",
            buckets=exponential_buckets(1, 2, 5),
        ),
        _F(
            name="scheduler_pod_scheduled_after_flush_total",
            kind="counter",
            help="Number of pods that were successfully scheduled after being flushed from "
            "unschedulablePods due to timeout. This metric helps detect potential queueing "
            "hint misconfigurations or event handling issues.",
        ),
        _F(
            name="scheduler_framework_extension_point_duration_seconds",
            kind="histogram",
            help="Latency for running all plugins of a specific extension point.",
            labels=("extension_point", "status", "profile"),
            buckets=exponential_buckets(0.0001, 2, 12),
        ),
        _F(
            name="scheduler_plugin_execution_duration_seconds",
            kind="histogram",
            help="Duration for running a plugin at a specific extension point.",
            labels=("plugin", "extension_point", "status"),
            buckets=exponential_buckets(0.00001, 1.5, 20),
        ),
        _F(
            name="scheduler_queue_incoming_pods_total",
            kind="counter",
            help="Number of pods added to scheduling queues by event and queue type.",
            labels=("queue", "event"),
        ),
        _F(
            name="scheduler_unschedulable_pods",
            kind="gauge",
            help="The number of unschedulable pods broken down by plugin name. A pod will "
            "increment the gauge for all plugins that caused it to not schedule and so this "
            "metric have meaning only when broken down by plugin.",
            labels=("plugin", "profile"),
        ),
        _F(
            name="scheduler_plugin_evaluation_total",
            kind="counter",
            help="Number of attempts to schedule pods by each plugin and the extension point "
            "(available only in PreFilter, Filter, PreScore, and Score).",
            labels=("plugin", "extension_point", "profile"),
        ),
        _F(
            name="scheduler_resourceclaim_creates_total",
            kind="counter",
            help="Number of ResourceClaims creation requests within scheduler",
            labels=("status",),
        ),
    )
}

_Labels = tuple[str, ...]


@attrs.define
class _Histogram:
    counts: list[int]
    total: float = 0.0


@final
class SchedulerMetrics:
    """The metrics of one scheduler: an observer (register it on the scheduler's hooks, or
    call :meth:`attach`) and a ``prometheus_client`` registry of its own.

    Fed by the observer hooks: attempts by result, attempt and end-to-end durations,
    preemption attempts and victims, unschedulable pods by rejecting plugin, event handling
    durations; read from the scheduler's queue at scrape time: pending pods by queue,
    incoming pods by queue and event, pods scheduled after a flush. As every profile's
    :attr:`~schedframe.runtime.Framework.metrics_recorder` (set by :meth:`attach`): every
    extension point's runs with the status they returned, and the plugin durations of the
    cycles sampled (``plugin_sample_percent`` of them, upstream's
    ``pluginMetricsSamplePercent``, drawn from a random source of their own seeded with the
    scheduler's seed, so placements do not change); read from the profiles at scrape time:
    plugin evaluations.

    Args:
        plugin_sample_percent: percent of scheduling cycles whose plugin durations are
            recorded, 0 to 100.

    Raises:
        ImportError: prometheus-client is not installed (``pip install 'schedframe[metrics]'``).
        ValueError: ``plugin_sample_percent`` is outside 0..100.
    """

    def __init__(self, *, plugin_sample_percent: int = PLUGIN_METRICS_SAMPLE_PERCENT) -> None:
        from prometheus_client.registry import CollectorRegistry

        if not 0 <= plugin_sample_percent <= 100:
            raise ValueError(
                "SchedulerMetrics: plugin_sample_percent must be within 0..100, "
                f"got {plugin_sample_percent}"
            )
        #: Percent of scheduling cycles whose plugin durations are recorded.
        self.plugin_sample_percent = plugin_sample_percent
        self._sampler = random.Random(0)

        self._lock = threading.Lock()
        self._counters: dict[str, dict[_Labels, float]] = {}
        self._histograms: dict[str, dict[_Labels, _Histogram]] = {}
        # uid -> (profile, rejecting plugins) of pods whose last attempt was rejected.
        self._unschedulable: dict[str, tuple[str, tuple[str, ...]]] = {}
        self._flushed: set[str] = set()
        self._scheduler: Scheduler | None = None
        self.registry: CollectorRegistry = CollectorRegistry(auto_describe=False)
        self.registry.register(_Collector(self))

    # -- wiring ------------------------------------------------------------------------------

    def attach(self, scheduler: Scheduler) -> None:
        """Observe ``scheduler``: register on its hooks and read its queue at scrape time.

        Raises:
            ValueError: the scheduler was built without a plugin manager (``hooks=``).
        """
        if scheduler.hooks is None:
            raise ValueError(
                "SchedulerMetrics.attach: the scheduler has no observer hooks; build it with "
                "hooks=schedframe.hooks.plugin_manager()"
            )
        scheduler.hooks.register(self, name=f"schedframe-metrics-{id(self)}")
        self._scheduler = scheduler
        # Seeded from the scheduler's seed, apart from its rng: sampling draws nothing from
        # the source that breaks ties, so placements are those of a run without metrics.
        self._sampler = random.Random(scheduler.seed)
        for fwk in scheduler.profiles.values():
            fwk.metrics_recorder = self
        queue = scheduler.queue
        if hasattr(queue, "on_incoming"):
            queue.on_incoming = self._on_incoming

    def exposition(self) -> str:
        """The registry in the Prometheus text format (version 0.0.4), numbers spelled as Go's
        client spells them (``10``, not ``10.0``), as kube-scheduler serves them."""
        lines: list[str] = []
        for metric in self.registry.collect():
            name = metric.name + "_total" if metric.type == "counter" else metric.name
            lines.append(f"# HELP {name} {_escape_help(metric.documentation)}")
            lines.append(f"# TYPE {name} {metric.type}")
            for sample in metric.samples:
                if sample.name.endswith("_created"):
                    continue
                # Go's client sorts label names, and appends ``le`` last.
                pairs = sorted((k, v) for k, v in sample.labels.items() if k != "le")
                if "le" in sample.labels:
                    pairs.append(("le", sample.labels["le"]))
                labels = ",".join(f'{k}="{_escape_label(v)}"' for k, v in pairs)
                labelled = f"{sample.name}{{{labels}}}" if labels else sample.name
                lines.append(f"{labelled} {_go_float(float(sample.value))}")
        return "\n".join(lines) + "\n"

    # -- recording ---------------------------------------------------------------------------

    def _inc(self, name: str, labels: _Labels = (), value: float = 1.0) -> None:
        with self._lock:
            series = self._counters.setdefault(name, {})
            series[labels] = series.get(labels, 0.0) + value

    def _observe(self, name: str, labels: _Labels, value: float) -> None:
        bounds = FAMILIES[name].buckets
        with self._lock:
            series = self._histograms.setdefault(name, {})
            hist = series.get(labels)
            if hist is None:
                hist = series[labels] = _Histogram([0] * (len(bounds) + 1))
            hist.counts[bisect.bisect_left(bounds, value)] += 1
            hist.total += value

    def sample_cycle(self) -> bool:
        """Whether the scheduling cycle starting now records plugin durations (upstream
        ``rand.Intn(100) < pluginMetricsSamplePercent``); one draw per cycle."""
        return self._sampler.randrange(100) < self.plugin_sample_percent

    def plugin_duration(
        self, plugin: str, extension_point: str, status: str, seconds: float
    ) -> None:
        """One plugin call of a sampled cycle (upstream ``ObservePluginDurationAsync``)."""
        self._observe(
            "scheduler_plugin_execution_duration_seconds",
            (plugin, extension_point, status),
            seconds,
        )

    def extension_point_duration(
        self, extension_point: str, status: str, profile: str, seconds: float
    ) -> None:
        """One run of an extension point (upstream ``FrameworkExtensionPointDuration``)."""
        self._observe(
            "scheduler_framework_extension_point_duration_seconds",
            (extension_point, status, profile),
            seconds,
        )

    def resource_claim_created(self, status: str) -> None:
        """DynamicResources created (``success``) or failed to create (``failure``) a
        ResourceClaim for a pod's DRA-backed extended resources (upstream
        ``ResourceClaimCreatesTotal``)."""
        self._inc("scheduler_resourceclaim_creates_total", (status,))

    def _on_incoming(self, pod: Pod, queue: str, event: str) -> None:
        self._inc("scheduler_queue_incoming_pods_total", (queue, event))
        if event == "UnschedulableTimeout":
            with self._lock:
                self._flushed.add(pod.uid)

    # -- observer hooks ----------------------------------------------------------------------

    @impl
    def schedframe_pod_scheduled(
        self, pod: Pod, profile: str, attempts: int, queued_seconds: float | None
    ) -> None:
        """Upstream counts ``scheduled`` once the binding succeeded."""
        self._inc("scheduler_schedule_attempts_total", ("scheduled", profile))
        self._observe("scheduler_pod_scheduling_attempts", (), float(attempts))
        if queued_seconds is not None:
            self._observe(
                "scheduler_pod_scheduling_sli_duration_seconds", (str(attempts),), queued_seconds
            )
        with self._lock:
            self._unschedulable.pop(pod.uid, None)
            flushed = pod.uid in self._flushed
            self._flushed.discard(pod.uid)
        if flushed:
            self._inc("scheduler_pod_scheduled_after_flush_total")

    @impl
    def schedframe_pod_unschedulable(self, pod: Pod, profile: str, plugins: Sequence[str]) -> None:
        self._inc("scheduler_schedule_attempts_total", ("unschedulable", profile))
        with self._lock:
            self._unschedulable[pod.uid] = (profile, tuple(plugins))

    @impl
    def schedframe_scheduling_error(self, pod: Pod, profile: str) -> None:
        self._inc("scheduler_schedule_attempts_total", ("error", profile))

    @impl
    def schedframe_cycle_finished(
        self, profile: str, result: str, durations: Mapping[str, float]
    ) -> None:
        total = durations.get("Total")
        if total is not None:
            self._observe("scheduler_scheduling_attempt_duration_seconds", (result, profile), total)

    @impl
    def schedframe_preemption_attempted(self) -> None:
        self._inc("scheduler_preemption_attempts_total")

    @impl
    def schedframe_preemption(self, victims: Sequence[Pod]) -> None:
        self._observe("scheduler_preemption_victims", (), float(len(victims)))

    @impl
    def schedframe_event_handled(self, event: str, seconds: float) -> None:
        self._observe("scheduler_event_handling_duration_seconds", (event,), seconds)

    # -- scrape ------------------------------------------------------------------------------

    def _gauges(self) -> dict[str, dict[_Labels, float]]:
        sched = self._scheduler
        if sched is None:
            return {}
        queue = sched.queue
        pool = queue.unschedulable_pods()
        gated_pods = getattr(queue, "gated_pods", None)
        gated = {p.uid for p in gated_pods()} if callable(gated_pods) else set()
        pending: dict[_Labels, float] = {
            ("active",): float(len(queue.active_pods())),
            ("backoff",): float(len(queue.backoff_pods())),
            ("unschedulable",): float(len(pool) - len(gated)),
            ("gated",): float(len(gated)),
        }
        waiting = {p.uid for p in queue.pending_pods()}
        by_plugin: dict[_Labels, float] = {}
        with self._lock:
            for uid in list(self._unschedulable):
                if uid not in waiting:
                    del self._unschedulable[uid]  # deleted, or bound by someone else
                    continue
                profile, plugins = self._unschedulable[uid]
                for plugin in plugins:
                    key = (plugin, profile)
                    by_plugin[key] = by_plugin.get(key, 0.0) + 1.0
        return {"scheduler_pending_pods": pending, "scheduler_unschedulable_pods": by_plugin}

    def collect(self) -> Iterator[Metric]:
        """Every family, in upstream's order, as ``prometheus_client`` metric families."""
        from prometheus_client.metrics_core import (
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )

        gauges = self._gauges()
        evaluations: dict[_Labels, float] = {}
        if self._scheduler is not None:
            for profile, fwk in self._scheduler.profiles.items():
                for (plugin, point), count in fwk.plugin_evaluations().items():
                    evaluations[(plugin, point, profile)] = float(count)
        with self._lock:
            counters = {k: dict(v) for k, v in self._counters.items()}
            histograms = {
                k: {lab: (list(h.counts), h.total) for lab, h in v.items()}
                for k, v in self._histograms.items()
            }
        if evaluations:
            counters["scheduler_plugin_evaluation_total"] = evaluations
        for family in FAMILIES.values():
            labels = list(family.labels)
            if family.kind == "counter":
                counter = CounterMetricFamily(family.name, family.help, labels=labels)
                for values, value in sorted(counters.get(family.name, {}).items()):
                    counter.add_metric(list(values), value)
                if not family.labels and not counters.get(family.name):
                    counter.add_metric([], 0.0)
                yield counter
            elif family.kind == "gauge":
                gauge = GaugeMetricFamily(family.name, family.help, labels=labels)
                for values, value in sorted(gauges.get(family.name, {}).items()):
                    gauge.add_metric(list(values), value)
                yield gauge
            else:
                hist = HistogramMetricFamily(family.name, family.help, labels=labels)
                series = histograms.get(family.name, {})
                if not family.labels and not series:
                    series = {(): ([0] * (len(family.buckets) + 1), 0.0)}
                for values, (counts, total) in sorted(series.items()):
                    cumulative, running = [], 0
                    for bound, count in zip((*family.buckets, float("inf")), counts, strict=True):
                        running += count
                        cumulative.append((_go_float(bound), float(running)))
                    hist.add_metric(list(values), cumulative, total)
                yield hist


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _escape_label(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _go_float(value: float) -> str:
    """A bucket bound as Go's ``strconv.FormatFloat(v, 'g', -1, 64)`` spells it."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


@final
class _Collector:
    """Adapts :class:`SchedulerMetrics` to prometheus_client's collector protocol."""

    def __init__(self, metrics: SchedulerMetrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        return self._metrics.collect()
