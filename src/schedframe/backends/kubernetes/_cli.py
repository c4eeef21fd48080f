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
from schedframe.errors import BackendError, ConfigError, SchedframeError

__all__ = ["run_command"]

log = logging.getLogger("schedframe.backends.kubernetes")

#: kube-scheduler's secure port number, served here as plain HTTP on loopback.
DEFAULT_PORT: Final = 10259
EXIT_BAD_INPUT: Final = 2
#: Exit status when the Lease is lost (kube-scheduler exits 1).
EXIT_LEASE_LOST: Final = 1
#: Binding cycles running at once (pods waiting on Permit excluded).
DEFAULT_BINDING_WORKERS: Final = 256
#: Seconds binding cycles get to finish on SIGTERM before they are abandoned.
SHUTDOWN_GRACE: Final = 2.0
#: A daemon keeps the results of this many pods and about this many events (memory bound).
MAX_RESULTS: Final = 1_000
MAX_EVENTS: Final = 1_000


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
    binding_workers: int = DEFAULT_BINDING_WORKERS,
    sync_timeout: float = 120.0,
    stop: threading.Event | None = None,
    on_serving: Callable[[int], None] | None = None,
    feature_gates: Mapping[str, bool] | None = None,
    emulated_version: str | None = None,
    shutdown_grace: float = SHUTDOWN_GRACE,
    record_trace: str | None = None,
) -> None:
    """Run a scheduler against a cluster until ``stop`` is set (or SIGTERM/SIGINT).

    Everything is validated before anything starts (the whole configuration, every profile's
    plugins built with their args, the leader-election settings, the kubeconfig): a bad input
    never gets as far as serving the port, listing or taking the Lease.

    Leadership is a fence: the binding cycles check it, and when the Lease is lost nothing more
    is bound or written (binding cycles in flight are abandoned; an API call already sent may
    complete) and :class:`LeaderElectionLost` is raised at once. When ``stop`` is set,
    scheduling stops, binding cycles get ``shutdown_grace`` seconds to finish (the rest are
    abandoned), then the Lease is released.

    ``feature_gates`` and ``emulated_version`` are ``--feature-gates``/``--emulated-version``.
    ``record_trace`` writes the backend's watch events to that trace file from the moment
    scheduling starts (:class:`~schedframe.simulation.TraceRecorder`), for
    :func:`~schedframe.simulation.replay`.

    Raises:
        ConfigError: the configuration file is invalid.
        BackendError: the cluster cannot be reached or listed.
        LeaderElectionLost: this replica lost its Lease.
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
    recorder: Any = None
    if record_trace is not None:
        from schedframe.simulation._trace import TraceRecorder

        # Created (and closed) now, so that a path that cannot be written is bad input.
        recorder = TraceRecorder(record_trace, source="kubernetes")
        try:
            recorder.open().close()
        except OSError as exc:
            raise ConfigError(
                f"cannot create the trace file (--record-trace): {exc.strerror}",
                source=record_trace,
            ) from None
    elect = config.leader_election.leader_elect if leader_elect is None else leader_elect
    backend = KubernetesBackend.from_config(config, kubeconfig=kubeconfig, context=context)
    transport = backend.transport
    elector: LeaderElector | None = None
    if elect:
        try:
            elector = LeaderElector.from_config(transport, config.leader_election)
        except ValueError as exc:
            backend.close()
            raise ConfigError(str(exc), source=config_file) from None
    abandoned = threading.Event()
    leader = elector

    def fence() -> bool:
        return not abandoned.is_set() and (leader is None or leader.leading())

    metrics = Metrics()
    manager = hooks.plugin_manager()
    try:
        # Builds every profile's plugins with their args: the last of the validation.
        sched = Scheduler(
            config,
            backend,
            hooks=manager,
            binding_workers=binding_workers,
            max_results=MAX_RESULTS,
            max_events=MAX_EVENTS,
            fence=fence,
        )
    except BaseException:
        backend.close()
        raise
    backend.fence = fence
    log.info(
        "API server %s (TLS verification %s)",
        transport.host,
        "on" if transport.verify_ssl or not transport.host.startswith("https") else "OFF",
    )
    _register_backend_metrics(metrics, backend)
    _serve_scheduler_metrics(metrics, sched)
    server = HealthServer(metrics, address=bind_address, port=port)
    server.checks["informers"] = backend.healthy
    lost: list[LeaderElectionLost] = []
    loop: threading.Thread | None = None

    def on_lost(exc: LeaderElectionLost) -> None:
        # The fence is already closed (the elector marks the loss first); stop binding now.
        lost.append(exc)
        sched.abandon()
        stop.set()

    try:
        server.start()
        log.info("serving /healthz and /metrics on http://%s:%d", bind_address, server.port)
        if on_serving is not None:
            on_serving(server.port)
        _warm_up()
        if not config.delay_cache_until_active:
            _start(backend, sync_timeout, stop)
        if elector is not None and not stop.is_set():
            server.checks["leaderElection"] = elector.healthy
            register_leader_metrics(metrics, elector)
            if elector.acquire(stop):
                elector.start_renewing(on_lost)
            else:
                log.info("stopped before becoming the leader")
        if config.delay_cache_until_active and not stop.is_set():
            _start(backend, sync_timeout, stop)
        if not stop.is_set():
            log.info("scheduling pods of %s", ", ".join(sorted(sched.profiles)))
            if recorder is not None:
                # Before the first cycle: the trace's initial objects are the listed state.
                recorder.attach(backend)
            # The loop runs on its own thread so that this one answers signals and the loss
            # of the Lease at once, even while the loop waits for a binding slot.
            loop = threading.Thread(
                target=_schedule, args=(sched, stop), name="schedframe-scheduling", daemon=True
            )
            loop.start()
            while not stop.wait(0.2):
                pass
    finally:
        if lost:
            # As kube-scheduler: log and exit now; nothing more is written (no event flush;
            # the Lease is not ours to release).
            log.error("leaderelection lost")
            sched.abandon()
            if loop is not None:
                loop.join(0.5)
            sched.stop(grace=0.0)
            backend.close(flush=False)
        else:
            sched.halt()  # no new scheduling cycle from now on
            if loop is not None:
                loop.join(0.5)  # the current scheduling cycle ends
            sched.stop(grace=shutdown_grace)  # binding cycles finish, or are abandoned
            abandoned.set()
            if loop is not None:
                loop.join(1.0)
            if elector is not None:
                elector.stop()  # releases the Lease
            backend.close()
        if recorder is not None:
            recorder.close()
        server.stop()
    if lost:
        raise lost[0]


def _exit_now(code: int) -> None:
    """Exit at once, as kube-scheduler does when it loses its Lease (``klog.Fatal``): the logs
    are flushed, but no interpreter shutdown waits on a reflector or a request in flight."""
    import os

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _warm_up() -> None:
    """Import what the first scheduling cycle needs (numpy, for the node columns of the batch
    filters) on a thread of its own while the lists are in flight, instead of after them."""

    def load() -> None:
        try:
            import schedframe.framework._columns  # noqa: F401
        except ImportError:  # pragma: no cover - numpy is a dependency; the cycle reports it
            pass

    threading.Thread(target=load, name="schedframe-warm-up", daemon=True).start()


def _schedule(sched: Any, stop: threading.Event) -> None:
    while not stop.is_set() and not sched.halted:
        sched.run(duration=0.2)  # behind a closed fence it waits, without cycles


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


def register_leader_metrics(metrics: Any, elector: Any) -> None:
    """``leader_election_master_status``: 1 while ``elector`` leads, 0 otherwise (back to 0
    as soon as the Lease is lost, whether to another holder or to a renew deadline)."""
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
                {"name": elector.name},
                1.0 if elector.is_leader() else 0.0,
            )
        ]
    )


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
    default=DEFAULT_BINDING_WORKERS,
    show_default=True,
    help="Binding cycles running at once, each on a thread of its own (pods waiting on "
    "Permit excluded); the scheduling loop waits beyond it.",
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
@click.option(
    "--record-trace",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    metavar="FILE",
    help="Record the watch events the scheduler sees to this trace file (JSON Lines), "
    "for `schedframe replay`.",
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
    record_trace: str | None,
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
                record_trace=record_trace,
            )
    except ConfigError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except BackendError as exc:
        # A kubeconfig that cannot be used is bad input; an unreachable cluster is not.
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT if exc.reason == "InvalidConfiguration" else 1)
    except ImportError as exc:
        raise click.ClickException(
            f"the Kubernetes backend needs its extra ({exc}): pip install 'schedframe[kubernetes]'"
        ) from None
    except SchedframeError as exc:  # LeaderElectionLost among others: exit 1 at once
        click.echo(f"Error: {exc}", err=True)
        from schedframe.backends.kubernetes._leaderelection import LeaderElectionLost

        if isinstance(exc, LeaderElectionLost):
            _exit_now(EXIT_LEASE_LOST)
        sys.exit(EXIT_LEASE_LOST)
    except OSError as exc:  # e.g. the port is taken
        raise click.ClickException(f"{type(exc).__name__}: {exc}") from None
