"""``schedframe run``: schedule a real cluster's pods (kube-scheduler's ``app.Run``).

Exposed as the click command :data:`run_command`; the main CLI adds it as ``run``.

Order of events, as upstream: load and validate the configuration; connect (kubeconfig, else
in-cluster, else the default kubeconfig); serve ``/healthz`` and ``/metrics``; list every kind
and start the watches (after winning leader election instead, with
``delayCacheUntilActive``); win leader election if enabled; build the Scheduler on the
backend and run it until SIGTERM/SIGINT; then stop scheduling, let binding cycles finish,
release the Lease, close the watches.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import FrameType
from typing import Any, Final

import click

from schedframe._cli_gates import gate_options, gate_settings
from schedframe.errors import ConfigError, SchedframeError

__all__ = ["run_command"]

log = logging.getLogger("schedframe.backends.kubernetes")

#: kube-scheduler's secure port number, served here as plain HTTP on loopback.
DEFAULT_PORT: Final = 10259
EXIT_BAD_INPUT: Final = 2


@contextmanager
def _signals(stop: threading.Event) -> Iterator[None]:
    """SIGTERM and SIGINT set ``stop`` (main thread only; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        log.info("received %s; shutting down", signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _configure_logging(verbosity: int) -> None:
    root = logging.getLogger()
    if root.handlers:
        return  # the host application configured logging
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity < 4 else logging.DEBUG
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname).1s %(name)s] %(message)s",
    )
    if verbosity < 6:
        logging.getLogger("urllib3").setLevel(logging.WARNING)


def run(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    config_file: str | None = None,
    bind_address: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    leader_elect: bool | None = None,
    binding_workers: int = 16,
    sync_timeout: float = 120.0,
    stop: threading.Event | None = None,
    on_serving: Callable[[int], None] | None = None,
    feature_gates: Mapping[str, bool] | None = None,
    emulated_version: str | None = None,
) -> None:
    """Run a scheduler against a cluster until ``stop`` is set (or SIGTERM/SIGINT).

    ``feature_gates`` and ``emulated_version`` are ``--feature-gates``/``--emulated-version``.

    Raises:
        ConfigError: the configuration file is invalid.
        BackendError: the cluster cannot be reached or listed.
        LeaderElectionLost: this replica lost its Lease (scheduling stopped first).
    """
    from schedframe import hooks
    from schedframe.backends.kubernetes._backend import KubernetesBackend
    from schedframe.backends.kubernetes._leaderelection import LeaderElectionLost, LeaderElector
    from schedframe.backends.kubernetes._metrics import HealthServer, Metrics
    from schedframe.config import load_config
    from schedframe.scheduler import Scheduler

    stop = stop if stop is not None else threading.Event()
    config = load_config(
        config_file, feature_gates=feature_gates, emulated_version=emulated_version
    )
    elect = config.leader_election.leader_elect if leader_elect is None else leader_elect
    backend = KubernetesBackend.from_config(config, kubeconfig=kubeconfig, context=context)
    transport = backend.transport
    log.info(
        "API server %s (TLS verification %s)",
        transport.host,
        "on" if transport.verify_ssl or not transport.host.startswith("https") else "OFF",
    )
    metrics = Metrics()
    _register_backend_metrics(metrics, backend)
    server = HealthServer(metrics, address=bind_address, port=port)
    server.checks["informers"] = backend.healthy
    elector: LeaderElector | None = None
    sched: Scheduler | None = None
    lost: list[LeaderElectionLost] = []
    try:
        server.start()
        log.info("serving /healthz and /metrics on http://%s:%d", bind_address, server.port)
        if on_serving is not None:
            on_serving(server.port)
        if not config.delay_cache_until_active:
            _start(backend, sync_timeout, stop)
        if elect and not stop.is_set():
            elector = LeaderElector.from_config(transport, config.leader_election)
            server.checks["leaderElection"] = elector.healthy
            leading = elector
            metrics.describe(
                "leader_election_master_status",
                "gauge",
                "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
                "backup, 1 indicates master. 'name' is the string used to identify the lease.",
            )
            metrics.add_collector(
                lambda: [
                    (
                        "leader_election_master_status",
                        {"name": leading.name},
                        1.0 if leading.is_leader() else 0.0,
                    )
                ]
            )

            def on_lost(exc: LeaderElectionLost) -> None:
                lost.append(exc)
                stop.set()

            if elector.acquire(stop):
                elector.start_renewing(on_lost)
            else:
                log.info("stopped before becoming the leader")
        if config.delay_cache_until_active and not stop.is_set():
            _start(backend, sync_timeout, stop)
        if not stop.is_set():
            manager = hooks.plugin_manager()
            sched = Scheduler(config, backend, hooks=manager, binding_workers=binding_workers)
            _serve_scheduler_metrics(metrics, sched)
            log.info("scheduling pods of %s", ", ".join(sorted(sched.profiles)))
            while not stop.is_set():
                sched.run(duration=0.5)
    finally:
        if sched is not None:
            sched.stop()  # no new cycles; binding cycles in flight finish
        if elector is not None:
            elector.stop()  # releases the Lease
        backend.close()
        server.stop()
    if lost:
        raise lost[0]


def _serve_scheduler_metrics(metrics: Any, sched: Any) -> None:
    """Upstream's scheduler families (schedframe.metrics) on /metrics; without the
    ``metrics`` extra, the few counted here."""
    try:
        from schedframe.metrics import SchedulerMetrics
    except ImportError:  # pragma: no cover - prometheus-client is an extra
        from schedframe.backends.kubernetes._metrics import MetricsObserver

        log.warning("prometheus-client is not installed: pip install 'schedframe[metrics]'")
        sched.hooks.register(MetricsObserver(metrics))
        _register_queue_metrics(metrics, sched)
        return
    scheduler_metrics = SchedulerMetrics()
    scheduler_metrics.attach(sched)
    metrics.add_exposition(scheduler_metrics.exposition)


def _start(backend: Any, timeout: float, stop: threading.Event) -> None:
    """List and start watching; a stop requested meanwhile is a clean exit, not an error."""
    from schedframe.errors import BackendError

    try:
        backend.start(timeout=timeout, stop=stop)
    except BackendError:
        if stop.is_set():
            return
        raise


def _register_backend_metrics(metrics: Any, backend: Any) -> None:
    metrics.describe(
        "schedframe_reflector_lists_total", "counter", "Lists done by the reflectors, by kind."
    )
    metrics.describe(
        "schedframe_reflector_relists_after_expiry_total",
        "counter",
        "Relists after 410 Gone/Expired, by kind.",
    )
    metrics.describe(
        "schedframe_reflector_watch_events_total", "counter", "Watch events applied, by kind."
    )
    metrics.describe(
        "schedframe_reflector_errors_total", "counter", "List or watch failures, by kind."
    )
    metrics.describe("schedframe_bindings_total", "counter", "Binding requests, by outcome.")
    metrics.describe("schedframe_events_total", "counter", "Events written, by outcome.")

    def collect() -> list[tuple[str, dict[str, str], float]]:
        samples: list[tuple[str, dict[str, str], float]] = []
        for kind, reflector in backend.reflectors.items():
            stats = reflector.stats
            labels = {"kind": kind}
            samples.append(("schedframe_reflector_lists_total", labels, float(stats.lists)))
            samples.append(
                (
                    "schedframe_reflector_relists_after_expiry_total",
                    labels,
                    float(stats.relists_after_expiry),
                )
            )
            samples.append(
                ("schedframe_reflector_watch_events_total", labels, float(stats.watch_events))
            )
            samples.append(("schedframe_reflector_errors_total", labels, float(stats.errors)))
        for outcome, count in dict(backend.bind_counts).items():
            samples.append(("schedframe_bindings_total", {"outcome": outcome}, float(count)))
        for outcome, count in dict(backend.event_sink.counts).items():
            samples.append(("schedframe_events_total", {"outcome": outcome}, float(count)))
        return samples

    metrics.add_collector(collect)


def _register_queue_metrics(metrics: Any, sched: Any) -> None:
    metrics.describe(
        "scheduler_pending_pods",
        "gauge",
        "Number of pending pods, by the queue type. 'active' means number of pods in "
        "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of "
        "pods in unschedulablePods that the scheduler attempted to schedule and failed; "
        "'gated' is the number of unschedulable pods that the scheduler never attempted to "
        "schedule because they are gated.",
    )

    def collect() -> list[tuple[str, dict[str, str], float]]:
        queue = sched.queue
        counts = {
            "active": len(queue.active_pods()),
            "backoff": len(queue.backoff_pods()),
            "unschedulable": len(queue.unschedulable_pods()),
        }
        gated = getattr(queue, "gated_pods", None)
        if callable(gated):
            counts["gated"] = len(gated())
        return [("scheduler_pending_pods", {"queue": q}, float(n)) for q, n in counts.items()]

    metrics.add_collector(collect)


@click.command("run")
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="Kubeconfig of the cluster (default: clientConnection.kubeconfig, then the pod's "
    "service account, then $KUBECONFIG or ~/.kube/config).",
)
@click.option("--context", default=None, help="Kubeconfig context (default: the current one).")
@click.option(
    "-f",
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="KubeSchedulerConfiguration file (default: kube-scheduler's defaults).",
)
@click.option(
    "--bind-address",
    default="127.0.0.1",
    show_default=True,
    help="Address of the /healthz and /metrics endpoints (plain HTTP).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port of /healthz and /metrics; 0 picks a free port.",
)
@click.option(
    "--leader-elect/--no-leader-elect",
    default=None,
    help="Override leaderElection.leaderElect from the configuration.",
)
@click.option(
    "--binding-workers",
    type=click.IntRange(1),
    default=16,
    show_default=True,
    help="Concurrent binding cycles.",
)
@click.option(
    "--sync-timeout",
    type=click.FloatRange(min=1.0),
    default=120.0,
    show_default=True,
    help="Seconds to wait for the first list of every kind.",
)
@click.option(
    "-v",
    "--v",
    "verbosity",
    type=click.IntRange(0, 10),
    default=2,
    show_default=True,
    help="Log verbosity (0 warnings, 2 info, 4+ debug), when logging is not yet configured.",
)
@gate_options
def run_command(
    kubeconfig: str | None,
    context: str | None,
    config_file: str | None,
    bind_address: str,
    port: int,
    leader_elect: bool | None,
    binding_workers: int,
    sync_timeout: float,
    verbosity: int,
) -> None:
    """Schedule the pods of a Kubernetes cluster (a second scheduler next to kube-scheduler,
    for the profiles' schedulerNames). Stops cleanly on SIGTERM or SIGINT."""
    _configure_logging(verbosity)
    stop = threading.Event()
    try:
        feature_gates, emulated_version = gate_settings()
        with _signals(stop):
            run(
                feature_gates=feature_gates,
                emulated_version=emulated_version,
                kubeconfig=kubeconfig,
                context=context,
                config_file=config_file,
                bind_address=bind_address,
                port=port,
                leader_elect=leader_elect,
                binding_workers=binding_workers,
                sync_timeout=sync_timeout,
                stop=stop,
            )
    except ConfigError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except ImportError as exc:
        raise click.ClickException(
            f"the Kubernetes backend needs its extra ({exc}): pip install 'schedframe[kubernetes]'"
        ) from None
    except SchedframeError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:  # e.g. the port is taken
        raise click.ClickException(f"{type(exc).__name__}: {exc}") from None
