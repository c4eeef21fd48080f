"""A scheduler extender for tests: the standard library's HTTP server on 127.0.0.1.

It speaks upstream's ``k8s.io/kube-scheduler/extender/v1`` JSON. Give it a function per verb
(each gets the decoded request and returns the reply to encode), point an ``extenders[]``
entry of the configuration at :attr:`ExtenderServer.url`, and make it misbehave on demand::

    from schedframe.testing.extender import ExtenderServer, keep_nodes, score_nodes

    with ExtenderServer(
        filter=keep_nodes(lambda name: name != "n2", reason="n2 is draining"),
        prioritize=score_nodes({"n1": 10}),
    ) as ext:
        config = {"extenders": [{"urlPrefix": ext.url, "filterVerb": "filter",
                                 "prioritizeVerb": "prioritize", "weight": 1}], ...}
        ext.fault("filter", status=500)      # every filter call now answers 500
        ext.fault("filter", delay=2.0)       # ... or answers after 2 s
        ext.fault("filter", body=b"{oops")   # ... or answers garbage
        ext.clear_faults()

Every request is kept in :attr:`ExtenderServer.calls` as ``(verb, request)``.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, final

import attrs

__all__ = ["ExtenderServer", "Fault", "keep_nodes", "node_names", "score_nodes"]

#: What a verb's function gets (the decoded request) and returns (the reply to encode).
Handler = Callable[[dict[str, Any]], object]


@attrs.frozen(kw_only=True)
class Fault:
    """How a verb misbehaves: answer after ``delay`` seconds, with HTTP ``status``, and
    ``body`` instead of the encoded reply when given."""

    delay: float = 0.0
    status: int = 200
    body: bytes | None = None


def node_names(args: Mapping[str, Any]) -> list[str]:
    """The candidate node names of a filter or prioritize request, from ``nodenames``
    (node-cache-capable extenders) or from the ``nodes`` list."""
    names = args.get("nodenames")
    if names is not None:
        return [str(n) for n in names]
    items = (args.get("nodes") or {}).get("items") or []
    return [str(item["metadata"]["name"]) for item in items]


def keep_nodes(
    keep: Callable[[str], bool], *, reason: str = "rejected by extender", unresolvable: bool = False
) -> Handler:
    """A filter verb keeping the nodes ``keep`` accepts; the others fail with ``reason``
    (in ``failedAndUnresolvableNodes`` when ``unresolvable``). Replies in the form it was asked
    (names or whole nodes)."""

    def handle(args: dict[str, Any]) -> object:
        names = node_names(args)
        failed = {n: reason for n in names if not keep(n)}
        reply: dict[str, object] = {
            "failedAndUnresolvableNodes" if unresolvable else "failedNodes": failed
        }
        if args.get("nodenames") is not None:
            reply["nodenames"] = [n for n in names if n not in failed]
        else:
            items = (args.get("nodes") or {}).get("items") or []
            reply["nodes"] = {
                "metadata": {},
                "items": [i for i in items if i["metadata"]["name"] not in failed],
            }
        return reply

    return handle


def score_nodes(scores: Mapping[str, int], *, default: int = 0) -> Handler:
    """A prioritize verb giving each node its score in ``scores`` (``default`` otherwise)."""

    def handle(args: dict[str, Any]) -> object:
        return [{"host": n, "score": scores.get(n, default)} for n in node_names(args)]

    return handle


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        verb = self.path.strip("/").rsplit("/", 1)[-1]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        owner = self.server.owner
        try:
            request = json.loads(raw)
        except ValueError:
            self._reply(400, b"bad request")
            return
        owner._record(verb, request)
        fault = owner._fault(verb)
        if fault is not None and fault.delay and self.server.stopping.wait(fault.delay):
            return  # stopped while delaying: the connection closes without a reply
        handler = owner.verbs.get(verb)
        if handler is None:
            self._reply(404, b"404 page not found\n")
            return
        if fault is not None and (fault.status != 200 or fault.body is not None):
            self._reply(fault.status, fault.body if fault.body is not None else b"")
            return
        self._reply(200, json.dumps(handler(request)).encode())

    def _reply(self, status: int, body: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the scheduler gave up waiting (a timeout test): nothing to tell

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: ExtenderServer) -> None:
        self.owner = owner
        #: Set when the server stops: a delay fault ends early.
        self.stopping = threading.Event()
        # Requests being served, each with its thread: the standard library does not join
        # daemon handler threads, so a request still delayed when the server stopped kept its
        # socket open past stop() (closed later by the garbage collector, warning then).
        self._in_flight: list[tuple[threading.Thread, socket.socket]] = []
        self._in_flight_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name="schedframe-test-extender-request",
            daemon=True,
        )
        with self._in_flight_lock:
            self._in_flight = [(t, r) for t, r in self._in_flight if t.is_alive()]
            self._in_flight.append((thread, request))
        thread.start()

    def server_close(self) -> None:
        """Close the listening socket and end every request in flight (its thread closes its
        connection): wait a little, then shut down the connections of those still reading or
        writing, which ends them."""
        super().server_close()
        self.stopping.set()
        with self._in_flight_lock:
            in_flight, self._in_flight = self._in_flight, []
        for thread, _ in in_flight:
            thread.join(1.0)
        for thread, request in in_flight:
            if thread.is_alive():
                with contextlib.suppress(OSError):
                    request.shutdown(socket.SHUT_RDWR)
                thread.join(5.0)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up mid-reply


@final
class ExtenderServer:
    """A scheduler extender on 127.0.0.1 (a free port), serving ``/<verb>`` by POST.

    Args:
        filter: the ``filter`` verb.
        prioritize: the ``prioritize`` verb.
        preempt: the ``preempt`` verb.
        bind: the ``bind`` verb.
        verbs: more verbs, by name (for other verb names in the configuration).
        tls: serve HTTPS with this server-side context (its certificate, and a CA to ask
            clients for certificates when ``verify_mode`` requires them).
    """

    def __init__(
        self,
        *,
        filter: Handler | None = None,
        prioritize: Handler | None = None,
        preempt: Handler | None = None,
        bind: Handler | None = None,
        verbs: Mapping[str, Handler] | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.verbs: dict[str, Handler] = dict(verbs or {})
        for name, handler in (
            ("filter", filter),
            ("prioritize", prioritize),
            ("preempt", preempt),
            ("bind", bind),
        ):
            if handler is not None:
                self.verbs[name] = handler
        #: Every request served, in arrival order, as ``(verb, decoded request)``.
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._faults: dict[str, Fault] = {}
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._port: int | None = None
        self._tls = tls
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (``https`` with ``tls``), the ``urlPrefix`` to configure (once :meth:`start` ran;
        it stays the same after :meth:`stop`)."""
        if self._port is None:
            raise RuntimeError("ExtenderServer is not started")
        scheme = "https" if self._tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self._port}"

    def fault(
        self, verb: str, *, delay: float = 0.0, status: int = 200, body: bytes | None = None
    ) -> None:
        """Make ``verb`` misbehave from now on (see :class:`Fault`)."""
        with self._lock:
            self._faults[verb] = Fault(delay=delay, status=status, body=body)

    def clear_faults(self) -> None:
        """Every verb behaves again."""
        with self._lock:
            self._faults.clear()

    def verbs_called(self) -> list[str]:
        """The verbs called so far, in order."""
        with self._lock:
            return [verb for verb, _ in self.calls]

    def _fault(self, verb: str) -> Fault | None:
        with self._lock:
            return self._faults.get(verb)

    def _record(self, verb: str, request: dict[str, Any]) -> None:
        with self._lock:
            self.calls.append((verb, request))

    def start(self) -> ExtenderServer:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        self._server = _Server(self)
        if self._tls is not None:
            self._server.socket = self._tls.wrap_socket(self._server.socket, server_side=True)
        self._port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="schedframe-test-extender",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.stopping.set()
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def __enter__(self) -> ExtenderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
