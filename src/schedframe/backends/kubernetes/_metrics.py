"""``/healthz`` and Prometheus-text ``/metrics`` for ``schedframe run``, from the stdlib.

A handful of upstream metric names (``scheduler_schedule_attempts_total{result,profile}``,
``scheduler_pending_pods{queue}``, ``leader_election_master_status{name}``) plus the
backend's own counters. Served over plain HTTP on 127.0.0.1 by default; nothing served
carries credentials.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Final

from schedframe import hooks

if TYPE_CHECKING:
    from schedframe.objects import Pod

__all__ = ["HealthServer", "Metrics", "MetricsObserver", "Sample"]

log = logging.getLogger("schedframe.backends.kubernetes")

Sample = tuple[str, Mapping[str, str], float]
_CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{k}="{_escape(str(v))}"' for k, v in sorted(labels.items()))
    return "{" + inner + "}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class Metrics:
    """Counters plus gauges read at scrape time, rendered in the Prometheus text format."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._meta: dict[str, tuple[str, str]] = {}
        self._counters: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        self._collectors: list[Callable[[], Iterable[Sample]]] = []
        self._expositions: list[Callable[[], str]] = []

    def describe(self, name: str, kind: str, help_text: str) -> None:
        """Declare ``name`` as a ``counter`` or ``gauge`` with its help text."""
        with self._lock:
            self._meta[name] = (kind, help_text)

    def inc(self, name: str, labels: Mapping[str, str] | None = None, value: float = 1.0) -> None:
        """Add ``value`` to counter ``name`` with ``labels``."""
        key = (name, tuple(sorted((labels or {}).items())))
        with self._lock:
            self._counters[key] = self._counters.get(key, 0.0) + value

    def add_collector(self, collect: Callable[[], Iterable[Sample]]) -> None:
        """Register a function giving ``(name, labels, value)`` samples at scrape time."""
        with self._lock:
            self._collectors.append(collect)

    def add_exposition(self, render: Callable[[], str]) -> None:
        """Append the text ``render()`` gives (a whole exposition, e.g. a prometheus_client
        registry's) to every scrape."""
        with self._lock:
            self._expositions.append(render)

    def value(self, name: str, labels: Mapping[str, str] | None = None) -> float:
        """A counter's current value (0 when never incremented)."""
        key = (name, tuple(sorted((labels or {}).items())))
        with self._lock:
            return self._counters.get(key, 0.0)

    def render(self) -> str:
        """The exposition text."""
        samples: dict[str, list[tuple[Mapping[str, str], float]]] = {}
        with self._lock:
            for (name, label_items), value in self._counters.items():
                samples.setdefault(name, []).append((dict(label_items), value))
            collectors = list(self._collectors)
            meta = dict(self._meta)
        for collect in collectors:
            try:
                for name, labels, value in collect():
                    samples.setdefault(name, []).append((labels, value))
            except Exception:
                log.exception("a metrics collector failed")
        lines: list[str] = []
        for name in sorted(samples):
            kind, help_text = meta.get(name, ("untyped", ""))
            if help_text:
                lines.append(f"# HELP {name} {help_text}")
            lines.append(f"# TYPE {name} {kind}")
            for sample_labels, value in sorted(samples[name], key=lambda s: sorted(s[0].items())):
                lines.append(f"{name}{_labels(sample_labels)} {_number(value)}")
        text = "\n".join(lines) + "\n"
        with self._lock:
            expositions = list(self._expositions)
        for render in expositions:
            try:
                text += render()
            except Exception:
                log.exception("a metrics exposition failed")
        return text


class MetricsObserver:
    """A schedframe observer (pluggy) counting scheduling attempts by result and profile."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        metrics.describe(
            "scheduler_schedule_attempts_total",
            "counter",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
            "could not be scheduled, while 'error' means an internal scheduler problem.",
        )

    @hooks.impl
    def schedframe_cycle_finished(
        self, pod: Pod, profile: str, result: str, durations: Mapping[str, float]
    ) -> None:
        self.metrics.inc(
            "scheduler_schedule_attempts_total", {"result": result, "profile": profile}
        )


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path in ("/healthz", "/livez", "/readyz"):
            failed = self.server.failing_checks()
            if failed:
                body = "".join(f"[-]{name} failed\n" for name in failed) + "healthz check failed\n"
                self._send(500, body, "text/plain; charset=utf-8")
            else:
                self._send(200, "ok", "text/plain; charset=utf-8")
        elif path == "/metrics":
            self._send(200, self.server.metrics.render(), _CONTENT_TYPE)
        else:
            self._send(404, "404 page not found\n", "text/plain; charset=utf-8")

    def _send(self, code: int, body: str, content_type: str) -> None:
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("health server: " + format, *args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        metrics: Metrics,
        checks: Mapping[str, Callable[[], bool]],
    ) -> None:
        self.metrics = metrics
        self.checks = checks  # shared with HealthServer.checks: later additions count
        super().__init__(address, _Handler)

    def failing_checks(self) -> list[str]:
        failed = []
        for name, check in self.checks.items():
            try:
                ok = check()
            except Exception:
                ok = False
            if not ok:
                failed.append(name)
        return failed


class HealthServer:
    """Serve ``/healthz`` (200 ``ok`` when every check passes) and ``/metrics``.

    Args:
        address: the bind address (``127.0.0.1`` by default, loopback only).
        port: the port (0 picks a free one; see :attr:`port` after :meth:`start`).
        metrics: what ``/metrics`` renders.
        checks: named health checks.
    """

    def __init__(
        self,
        metrics: Metrics,
        *,
        address: str = "127.0.0.1",
        port: int = 10259,
        checks: Mapping[str, Callable[[], bool]] | None = None,
    ) -> None:
        self.metrics = metrics
        self.address = address
        self._port = port
        self.checks: dict[str, Callable[[], bool]] = dict(checks or {})
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port (after :meth:`start`)."""
        return self._port

    def start(self) -> None:
        """Bind and serve in a daemon thread."""
        server = _Server((self.address, self._port), self.metrics, self.checks)
        self._server = server
        self._port = int(server.server_address[1])
        self._thread = threading.Thread(
            target=server.serve_forever, name="schedframe-health", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
