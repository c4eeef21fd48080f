"""The fake kube-apiserver: an aiohttp app on 127.0.0.1 in a background thread.

Over 1,000 lines on purpose: the HTTP surface of every served resource (list, watch with
bookmarks and expiry, get, create, update, patch, delete, subresources) and the failure modes
the tests inject (outages, hung requests, stolen Leases) share the request path they act on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, cast

import attrs
from aiohttp import web

from schedframe.testing.fakeapi._cluster import (
    BindingRecord,
    Cluster,
    EventRecord,
    Resource,
    StatusError,
    bad_request,
    resource_for_kind,
    resource_named,
    served_resources,
    status_body,
)
from schedframe.testing.fakeapi._rbac import Authorizer, RequestAttributes
from schedframe.testing.fakeapi._selectors import FieldSelector, LabelSelector, SelectorError

__all__ = ["FakeAPIServer", "RequestRecord"]

_MAX_LOG: Final = 100_000

_Obj = dict[str, Any]
_Bindings = list[BindingRecord]
_Conflicts = list[tuple[str, str]]
_Initial = list[tuple[str, Mapping[str, Any]]]
_Backlog = list[EventRecord]


@attrs.frozen
class RequestRecord:
    """One request the fake served: method, path, query string, response status, when the
    response was done (``time``) and when the request arrived (``arrived``; wall clock)."""

    method: str
    path: str
    query: str
    status: int
    time: float
    arrived: float = 0.0


@attrs.define
class _Failure:
    status: int
    remaining: int
    method: str | None
    path: re.Pattern[str] | None
    retry_after: int | None
    reason: str
    message: str
    watch: bool | None
    after: bool


@attrs.define
class _Delay:
    seconds: float
    remaining: int | None
    method: str | None
    path: re.Pattern[str] | None


@attrs.frozen
class _Route:
    resource: Resource
    namespace: str | None  # None: across namespaces (or cluster-scoped)
    name: str
    subresource: str


_DROP: Final = "drop"
_EXPIRE: Final = "expire"
_STOP: Final = "stop"


class _Watcher:
    def __init__(
        self,
        resource: Resource,
        namespace: str | None,
        fields: FieldSelector,
        labels: LabelSelector,
        start_rv: int,
    ) -> None:
        self.resource = resource
        self.namespace = namespace
        self.fields = fields
        self.labels = labels
        self.queue: asyncio.Queue[EventRecord | str] = asyncio.Queue()
        self.last_rv = start_rv

    def matches(self, obj: Mapping[str, Any]) -> bool:
        if self.namespace is not None and self.resource.namespaced:
            if obj.get("metadata", {}).get("namespace") != self.namespace:
                return False
        return self.fields.matches(obj) and self.labels.matches(obj)

    def convert(self, event: EventRecord) -> tuple[str, Mapping[str, Any]] | None:
        """The apiserver cacher's ``convertToWatchEvent``: selector transitions become
        ADDED/DELETED; a DELETED carries the old content at the event's revision."""
        cur = event.type != "DELETED" and self.matches(event.obj)
        old = event.prev is not None and self.matches(event.prev)
        if cur and not old:
            return "ADDED", event.obj
        if cur and old:
            return "MODIFIED", event.obj
        if old:
            if event.type == "DELETED":
                return "DELETED", event.obj
            assert event.prev is not None
            gone = dict(event.prev)
            gone["metadata"] = {**event.prev["metadata"], "resourceVersion": str(event.rv)}
            return "DELETED", gone
        return None


class _TrackingLoop(asyncio.SelectorEventLoop):
    """The server's event loop, remembering every connection's transport so that stopping
    closes each one: aiohttp's cleanup leaves open a connection accepted while it ran, and
    one whose unread reply still fills its write buffer (closing such a transport waits for
    the buffer to drain). Left open, the garbage collector closed it later, warning inside
    whichever test ran then."""

    def __init__(self) -> None:
        super().__init__()
        self.transports: weakref.WeakSet[asyncio.BaseTransport] = weakref.WeakSet()

    def _make_socket_transport(self, *args: Any, **kwargs: Any) -> asyncio.Transport:
        make = cast("Callable[..., asyncio.Transport]", super()._make_socket_transport)  # type: ignore[misc]
        transport = make(*args, **kwargs)
        self.transports.add(transport)
        return transport

    async def close_connections(self, timeout: float = 5.0) -> None:
        """Wait (up to ``timeout``) for every other task, such as a connection being accepted,
        and abort every transport still open, until none is left."""
        deadline = self.time() + timeout
        me = asyncio.current_task()
        while True:
            for transport in list(self.transports):
                if _open(transport):
                    cast("asyncio.Transport", transport).abort()
            # abort() closes the socket on the loop's next step.
            await asyncio.sleep(0)
            pending = [t for t in asyncio.all_tasks(self) if t is not me]
            if not pending and not any(_open(t) for t in self.transports):
                return
            if self.time() >= deadline:
                for task in pending:
                    task.cancel()
                await asyncio.sleep(0)
                return
            if pending:
                await asyncio.wait(pending, timeout=0.05)


def _open(transport: asyncio.BaseTransport) -> bool:
    sock = transport.get_extra_info("socket")
    return sock is not None and sock.fileno() != -1


def _line(event_type: str, obj: Mapping[str, Any]) -> bytes:
    return (json.dumps({"type": event_type, "object": obj}, separators=(",", ":")) + "\n").encode()


def _strip_type(obj: _Obj) -> _Obj:
    # List items carry neither kind nor apiVersion, as the real API server sends them.
    obj.pop("kind", None)
    obj.pop("apiVersion", None)
    return obj


class FakeAPIServer:
    """A protocol-faithful kube-apiserver for tests, on ``127.0.0.1`` (random port).

    Serves pods (with the ``binding`` and ``status`` subresources and legacy ``bindings``),
    nodes, namespaces, policy/v1 PodDisruptionBudgets, events.k8s.io/v1 Events and
    coordination.k8s.io/v1 Leases, with kube-apiserver's semantics: one global
    resourceVersion; list with ``resourceVersion``/``resourceVersionMatch``; watches as
    NDJSON with bookmarks, selector transitions as ADDED/DELETED, a bounded event window with
    an in-stream ``410 Expired``, and a clean end at ``timeoutSeconds``; field and label
    selectors; optimistic concurrency; ``metav1.Status`` error bodies; strategic merge, JSON
    merge and JSON patches; graceful deletion. Chaos knobs drop watch connections, expire
    them, compact the window, and inject failures and latency.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`::

        with FakeAPIServer() as server:
            kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
            server.create({"kind": "Node", "metadata": {"name": "n1"}, ...})

    Args:
        token: a bearer token every request must carry (``None`` accepts any request).
        window_size: watch events kept per resource.
        bookmark_interval: seconds between BOOKMARK events on an idle watch that asked for
            them.
        max_watch_seconds: cap on a watch's duration (``timeoutSeconds`` is honoured below it).
        graceful_deletion: bound pods are deleted gracefully (deletionTimestamp first).
        kubelet_delay: seconds after which a gracefully deleted pod goes away (``None``:
            only :meth:`finalize_deletions` removes them).
        authorizer: RBAC rules to enforce (403 otherwise); ``None`` allows everything.
    """

    def __init__(
        self,
        *,
        token: str | None = None,
        window_size: int = 1000,
        bookmark_interval: float = 1.0,
        max_watch_seconds: float = 1800.0,
        graceful_deletion: bool = True,
        kubelet_delay: float | None = 0.0,
        authorizer: Authorizer | None = None,
    ) -> None:
        self.cluster = Cluster(
            window_size=window_size,
            graceful_deletion=graceful_deletion,
            kubelet_delay=kubelet_delay,
        )
        self._token = token
        self._bookmark_interval = bookmark_interval
        self._max_watch_seconds = max_watch_seconds
        self._authorizer = authorizer
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._watchers: set[_Watcher] = set()
        self._watch_tasks: set[asyncio.Task[Any]] = set()
        #: Set (on the server's loop) when stop() begins: every request is refused from then on.
        self._stopping = False
        #: When that was (``time.time()``), for tests.
        self._stopping_since: float | None = None
        self._fanned_rv = self.cluster.resource_version
        self._failures: list[_Failure] = []
        self._gone_watches = 0
        self._delays: list[_Delay] = []
        self._outage_until = 0.0
        self._fail_lock = threading.Lock()
        self.latency = 0.0
        #: Every request served, oldest first (bounded), logged as its response completes.
        self.requests: deque[RequestRecord] = deque(maxlen=_MAX_LOG)
        #: Every watch request, logged as its stream starts (status 200) or is refused.
        self.watch_requests: deque[RequestRecord] = deque(maxlen=_MAX_LOG)
        self.cluster.notify = self._notify

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FakeAPIServer:
        """Start serving (idempotent); returns ``self``."""
        if self._thread is not None:
            return self
        loop = _TrackingLoop()
        self._loop = loop
        self._stopping = False
        ready = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._startup())
            except BaseException as exc:  # reported to start()
                errors.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(loop.close_connections())
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name="schedframe-fakeapi", daemon=True)
        self._thread.start()
        ready.wait(30)
        if errors:
            self._thread.join()
            self._thread = None
            raise errors[0]
        self.cluster.call_later = self._call_later
        return self

    async def _startup(self) -> None:
        app = web.Application(client_max_size=16 << 20)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self._runner = runner
        server = site._server
        assert server is not None
        sockets = cast("Sequence[socket.socket]", getattr(server, "sockets", None) or [])
        self._port = int(sockets[0].getsockname()[1])

    def stop(self) -> None:
        """Close every watch cleanly and stop the server (idempotent)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        future = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
        with contextlib.suppress(Exception):
            future.result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        self._thread = None
        self._loop = None

    async def _shutdown(self) -> None:
        # From here on every request is refused (503): a client whose watch ends below used to
        # open a new one at once, which nothing ended, so the runner's cleanup waited for it
        # (twice its shutdown timeout) and then cancelled it. Flag and signals are set in one
        # step of the loop, so a watch is either signalled here or refused.
        self._stopping = True
        self._stopping_since = time.time()
        for watcher in list(self._watchers):
            watcher.queue.put_nowait(_STOP)
        if self._watch_tasks:
            await asyncio.wait(list(self._watch_tasks), timeout=5)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def __enter__(self) -> FakeAPIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The TCP port (after :meth:`start`)."""
        return self._port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self._port}"

    def write_kubeconfig(
        self, path: str | os.PathLike[str], *, token: str | None = None, context: str = "fake"
    ) -> Path:
        """Write a kubeconfig pointing at this server (with ``token``, default the server's)."""
        token = token if token is not None else (self._token or "")
        user: _Obj = {"token": token} if token else {}
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": {"server": self.url}}],
            "users": [{"name": context, "user": user}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
            "current-context": context,
        }
        target = Path(path)
        target.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        return target

    # -- the store, from Python ----------------------------------------------------------------

    def create(self, obj: Mapping[str, Any]) -> _Obj:
        """Create ``obj`` (its ``kind`` picks the resource), as a POST would."""
        res = resource_for_kind(str(obj.get("kind", "")))
        ns = (
            str((obj.get("metadata") or {}).get("namespace") or "default") if res.namespaced else ""
        )
        return self.cluster.create(res.name, ns, obj)

    def get(self, kind: str, name: str, namespace: str = "default") -> _Obj | None:
        """The stored object, or ``None``."""
        res = resource_for_kind(kind)
        try:
            return self.cluster.get(res.name, namespace if res.namespaced else "", name)
        except StatusError:
            return None

    def list(self, kind: str, namespace: str | None = None) -> list[_Obj]:
        """Every stored object of ``kind`` (in ``namespace``, or all)."""
        res = resource_for_kind(kind)
        items, _ = self.cluster.list(res.name, namespace)
        return items

    def update(self, obj: Mapping[str, Any], *, subresource: str = "") -> _Obj:
        """Replace ``obj`` as a PUT would (its resourceVersion, if set, must be current)."""
        res = resource_for_kind(str(obj.get("kind", "")))
        meta = obj.get("metadata") or {}
        ns = str(meta.get("namespace") or "default") if res.namespaced else ""
        return self.cluster.update(
            res.name, ns, str(meta.get("name")), obj, subresource=subresource
        )

    def patch(
        self,
        kind: str,
        name: str,
        patch: Any,
        *,
        namespace: str = "default",
        content_type: str = "application/merge-patch+json",
        subresource: str = "",
    ) -> _Obj:
        """Patch an object as a PATCH request would."""
        res = resource_for_kind(kind)
        return self.cluster.patch(
            res.name,
            namespace if res.namespaced else "",
            name,
            patch,
            content_type,
            subresource=subresource,
        )

    def delete(
        self,
        kind: str,
        name: str,
        namespace: str = "default",
        *,
        grace_period_seconds: int | None = None,
    ) -> _Obj:
        """Delete an object as a DELETE would."""
        res = resource_for_kind(kind)
        return self.cluster.delete(
            res.name,
            namespace if res.namespaced else "",
            name,
            grace_period_seconds=grace_period_seconds,
        )

    def finalize_deletions(self) -> int:
        """Remove every pod in its graceful-deletion period (the kubelets are done)."""
        return self.cluster.finalize_deletions()

    @property
    def resource_version(self) -> int:
        """The latest revision."""
        return self.cluster.resource_version

    @property
    def bindings(self) -> _Bindings:
        """Every successful binding, in order (the binding log)."""
        with self.cluster.lock:
            return list(self.cluster.bindings)

    @property
    def binding_conflicts(self) -> _Conflicts:
        """``(namespace/name, reason)`` of every binding refused with 409."""
        with self.cluster.lock:
            return list(self.cluster.binding_conflicts)

    # -- chaos ---------------------------------------------------------------------------------

    def drop_watches(self, resource: str | None = None) -> int:
        """Cut every open watch (of ``resource``, a plural like ``pods``) without ending the
        chunked stream, as a dropped connection does; returns how many."""
        return self._signal_watches(_DROP, resource)

    def expire_watches(self, resource: str | None = None) -> int:
        """End every open watch with an in-stream ``ERROR 410 Expired`` (as a watch whose
        revision was compacted away); returns how many."""
        return self._signal_watches(_EXPIRE, resource)

    def compact(self, keep: int = 0) -> None:
        """Shrink every event window to its newest ``keep`` events."""
        self.cluster.compact(keep)

    def set_window_size(self, size: int) -> None:
        """Change how many events each resource's window keeps."""
        self.cluster.set_window_size(size)

    def fail_requests(
        self,
        status: int = 500,
        *,
        times: int = 1,
        method: str | None = None,
        path: str | None = None,
        retry_after: int | None = None,
        watch: bool | None = None,
        after: bool = False,
    ) -> None:
        """Fail the next ``times`` matching requests with ``status``.

        Args:
            status: 500, 503, 429, ... (the body is the matching ``metav1.Status``).
            times: how many requests fail.
            method: only this HTTP method.
            path: only paths matching this regular expression (``re.search``).
            retry_after: add ``Retry-After`` (seconds) to the response.
            watch: only watch requests (``True``), or only non-watch requests (``False``).
            after: let the request take effect first and lose its response (a write that
                happened although the client saw an error); by default the request fails
                before doing anything.
        """
        reason, message = {
            400: ("BadRequest", "injected bad request"),
            401: ("Unauthorized", "Unauthorized"),
            403: ("Forbidden", "injected: forbidden"),
            404: ("NotFound", "injected: not found"),
            409: ("Conflict", "Operation cannot be fulfilled: injected conflict"),
            410: ("Gone", "injected: gone"),
            422: ("Invalid", "injected: invalid"),
            429: ("TooManyRequests", "Too many requests, please try again later."),
            500: ("InternalError", "Internal error occurred: injected failure"),
            503: ("ServiceUnavailable", "The server is currently unable to handle the request"),
            504: ("Timeout", "Timeout: request did not complete within the allowed duration"),
        }.get(status, ("InternalError", f"injected failure ({status})"))
        with self._fail_lock:
            self._failures.append(
                _Failure(
                    status=status,
                    remaining=times,
                    method=method.upper() if method else None,
                    path=re.compile(path) if path else None,
                    retry_after=retry_after,
                    reason=reason,
                    message=message,
                    watch=watch,
                    after=after,
                )
            )

    def clear_failures(self) -> None:
        """Forget every pending injected failure, delay and outage."""
        with self._fail_lock:
            self._failures.clear()
            self._delays.clear()
            self._gone_watches = 0
            self._outage_until = 0.0

    def delay_requests(
        self,
        seconds: float,
        *,
        times: int | None = 1,
        method: str | None = None,
        path: str | None = None,
    ) -> None:
        """Hold the next ``times`` matching requests ``seconds`` before serving them (a renew
        that times out at the client; ``times=None`` for every request: a slow bind path).

        Args:
            seconds: how long each request waits before it is served.
            times: how many requests wait (``None``: all of them until :meth:`clear_failures`).
            method: only this HTTP method.
            path: only paths matching this regular expression (``re.search``).
        """
        with self._fail_lock:
            self._delays.append(
                _Delay(
                    seconds=seconds,
                    remaining=times,
                    method=method.upper() if method else None,
                    path=re.compile(path) if path else None,
                )
            )

    def outage(self, seconds: float) -> None:
        """Stop answering for ``seconds``, as a stopped (not crashed) API server: every request
        arriving meanwhile hangs until the outage ends, then is served (its client has
        usually given up by then). Open watches stay open."""
        with self._fail_lock:
            self._outage_until = time.monotonic() + seconds

    def steal_lease(
        self,
        name: str = "kube-scheduler",
        namespace: str = "kube-system",
        *,
        holder: str = "intruder",
        lease_duration_seconds: int | None = None,
    ) -> _Obj:
        """Rewrite a Lease as another holder would on taking it over (new holder, acquire and
        renew times now, one more transition); returns the Lease written.

        Raises:
            StatusError: no such Lease.
        """
        current = self.cluster.get("leases", namespace, name)
        spec = dict(current.get("spec") or {})
        now = time.time()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"
        spec.update(
            holderIdentity=holder,
            acquireTime=stamp,
            renewTime=stamp,
            leaseTransitions=int(spec.get("leaseTransitions") or 0) + 1,
        )
        if lease_duration_seconds is not None:
            spec["leaseDurationSeconds"] = lease_duration_seconds
        return self.cluster.update("leases", namespace, name, {**current, "spec": spec})

    def _hold(self, method: str, path: str) -> float:
        """Seconds the request must wait (outage, then the first matching delay)."""
        with self._fail_lock:
            wait = max(0.0, self._outage_until - time.monotonic())
            for delay in self._delays:
                if delay.method is not None and delay.method != method:
                    continue
                if delay.path is not None and not delay.path.search(path):
                    continue
                if delay.remaining is not None:
                    delay.remaining -= 1
                    if delay.remaining <= 0:
                        self._delays.remove(delay)
                return wait + delay.seconds
        return wait

    def fail_watches_with_gone(self, times: int = 1) -> None:
        """Answer the next ``times`` watch requests with HTTP ``410 Gone`` (not in-stream)."""
        with self._fail_lock:
            self._gone_watches += times

    def open_watches(self, resource: str | None = None) -> int:
        """How many watches are open (of ``resource``)."""
        loop = self._loop
        if loop is None:
            return 0

        async def count() -> int:
            return sum(1 for w in self._watchers if resource in (None, w.resource.name))

        return asyncio.run_coroutine_threadsafe(count(), loop).result(10)

    def wait_for_watches(
        self, count: int, resource: str | None = None, timeout: float = 10.0
    ) -> bool:
        """Wait until at least ``count`` watches (of ``resource``) are open."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.open_watches(resource) >= count:
                return True
            time.sleep(0.02)
        return False

    def _signal_watches(self, signal: str, resource: str | None) -> int:
        loop = self._loop
        if loop is None:
            return 0

        async def send() -> int:
            n = 0
            for w in list(self._watchers):
                if resource in (None, w.resource.name):
                    w.queue.put_nowait(signal)
                    n += 1
            return n

        return asyncio.run_coroutine_threadsafe(send(), loop).result(10)

    def _take_failure(self, method: str, path: str, is_watch: bool) -> _Failure | None:
        with self._fail_lock:
            for failure in self._failures:
                if failure.method is not None and failure.method != method:
                    continue
                if failure.path is not None and not failure.path.search(path):
                    continue
                if failure.watch is not None and failure.watch != is_watch:
                    continue
                failure.remaining -= 1
                if failure.remaining <= 0:
                    self._failures.remove(failure)
                return failure
        return None

    # -- fan-out (loop thread) -----------------------------------------------------------------

    def _notify(self, event: EventRecord) -> None:
        # Called under the cluster lock, in revision order, from any thread.
        loop = self._loop
        if loop is None or loop.is_closed():
            self._fanned_rv = event.rv
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._fanout, event)

    def _fanout(self, event: EventRecord) -> None:
        self._fanned_rv = event.rv
        for watcher in self._watchers:
            if watcher.resource.name == event.resource:
                watcher.queue.put_nowait(event)

    def _call_later(self, delay: float, callback: Callable[[], None]) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(loop.call_later, delay, callback)

    # -- HTTP ----------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        arrived = time.time()
        status = 500
        try:
            response = await self._serve(request)
            status = response.status
            return response
        except StatusError as exc:
            status = exc.code
            return web.json_response(exc.body(), status=exc.code, headers=exc.headers)
        finally:
            self.requests.append(
                RequestRecord(
                    request.method,
                    request.path,
                    request.query_string,
                    status,
                    time.time(),
                    arrived,
                )
            )

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        if self._stopping:
            raise StatusError(503, "ServiceUnavailable", "the server is shutting down")
        if self._token is not None:
            header = request.headers.get("Authorization", "")
            if header != f"Bearer {self._token}":
                raise StatusError(401, "Unauthorized", "Unauthorized")
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        hold = self._hold(request.method, request.path)
        if hold > 0:
            await asyncio.sleep(hold)
        path = request.path
        query = request.query
        is_watch = query.get("watch") in ("true", "1")
        failure = self._take_failure(request.method, path, is_watch)
        if failure is None:
            return await self._dispatch(request, is_watch)
        if failure.after:
            # The request takes effect, but its response is lost behind an error.
            with contextlib.suppress(StatusError):
                await self._dispatch(request, is_watch)
        headers = {"Retry-After": str(failure.retry_after)} if failure.retry_after else {}
        details = {"retryAfterSeconds": failure.retry_after} if failure.retry_after else None
        return web.json_response(
            status_body(failure.status, failure.reason, failure.message, details),
            status=failure.status,
            headers=headers,
        )

    async def _dispatch(self, request: web.Request, is_watch: bool) -> web.StreamResponse:
        path = request.path
        query = request.query
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok")
        if path == "/version":
            return web.json_response(
                {"major": "1", "minor": "37", "gitVersion": "v1.37.0-schedframe-fake"}
            )
        route = self._route(path)
        if route is None:
            raise StatusError(404, "NotFound", "the server could not find the requested resource")
        self._authorize(request, route, is_watch)
        res = route.resource
        method = request.method
        if route.subresource == "binding" or res.name == "bindings":
            if method != "POST":
                raise _method_not_allowed(method)
            body = await _json_body(request)
            assert route.namespace is not None
            result = self.cluster.bind(route.namespace, route.name or None, body)
            return web.json_response(result, status=201)
        ns = route.namespace or ""
        if method == "GET":
            if route.name:
                if route.subresource not in ("", "status"):
                    raise StatusError(
                        404, "NotFound", "the server could not find the requested resource"
                    )
                return web.json_response(self.cluster.get(res.name, ns, route.name))
            if is_watch:
                return await self._watch(request, route)
            return self._list(request, route)
        if method == "POST":
            if route.name:
                raise _method_not_allowed(method)
            body = await _json_body(request)
            created = self.cluster.create(res.name, ns, body)
            return web.json_response(created, status=201)
        if method == "PUT":
            if not route.name:
                raise _method_not_allowed(method)
            body = await _json_body(request)
            updated = self.cluster.update(
                res.name, ns, route.name, body, subresource=route.subresource
            )
            return web.json_response(updated)
        if method == "PATCH":
            if not route.name:
                raise _method_not_allowed(method)
            patch = await _json_body(request, any_json=True)
            patched = self.cluster.patch(
                res.name,
                ns,
                route.name,
                patch,
                request.headers.get("Content-Type", ""),
                subresource=route.subresource,
            )
            return web.json_response(patched)
        if method == "DELETE":
            if not route.name:
                raise _method_not_allowed(method)
            options: Mapping[str, Any] = {}
            if request.can_read_body:
                raw = await request.read()
                if raw.strip():
                    try:
                        loaded = json.loads(raw)
                    except ValueError:
                        raise bad_request("the body of the request is not valid JSON") from None
                    options = loaded if isinstance(loaded, Mapping) else {}
            grace: Any = options.get("gracePeriodSeconds", query.get("gracePeriodSeconds"))
            preconditions = options.get("preconditions") or {}
            deleted = self.cluster.delete(
                res.name,
                ns,
                route.name,
                grace_period_seconds=None if grace is None else int(grace),
                preconditions=preconditions,
            )
            return web.json_response(deleted)
        raise _method_not_allowed(method)

    def _authorize(self, request: web.Request, route: _Route, is_watch: bool) -> None:
        if self._authorizer is None:
            return
        method = request.method
        res = route.resource
        resource, sub = res.name, route.subresource
        name = route.name
        if res.name == "bindings":
            resource, sub = "bindings", ""
        verb = {
            "GET": "get" if name else ("watch" if is_watch else "list"),
            "POST": "create",
            "PUT": "update",
            "PATCH": "patch",
            "DELETE": "delete" if name else "deletecollection",
        }.get(method, method.lower())
        attributes = RequestAttributes(
            verb=verb,
            api_group=res.group,
            resource=resource,
            subresource=sub,
            name=name,
            namespace=route.namespace or "",
        )
        if not self._authorizer.allows(attributes):
            qualified = f"{resource}.{res.group}" if res.group else resource
            if sub:
                qualified = f"{qualified}/{sub}"
            raise StatusError(
                403,
                "Forbidden",
                self._authorizer.denial(attributes, qualified),
                details={
                    "name": name,
                    "kind": resource,
                    **({"group": res.group} if res.group else {}),
                },
            )

    def _route(self, path: str) -> _Route | None:
        parts = [p for p in path.split("/") if p]
        if len(parts) >= 2 and parts[0] == "api" and parts[1] == "v1":
            group, rest = "", parts[2:]
        elif (
            len(parts) >= 3
            and parts[0] == "apis"
            and (parts[1], parts[2]) in {(r.group, r.version) for r in served_resources().values()}
        ):
            group, rest = parts[1], parts[3:]
        else:
            return None
        version = "v1" if group == "" else parts[2]
        namespace: str | None = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            candidate = resource_named(rest[2])
            if (candidate is not None and candidate.namespaced and candidate.group == group) or (
                group == "" and rest[2] == "bindings"
            ):
                namespace, rest = rest[1], rest[2:]
        if not rest:
            return None
        if group == "" and rest[0] == "bindings" and namespace is not None and len(rest) == 1:
            res = Resource("bindings", "", "v1", "Binding", True)
            return _Route(res, namespace, "", "")
        res_opt = resource_named(rest[0])
        if res_opt is None or res_opt.group != group or res_opt.version != version:
            return None
        if res_opt.namespaced and namespace is None and len(rest) > 1:
            return None
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if len(rest) > 3:
            return None
        if (
            sub
            and not (sub == "status" and res_opt.has_status)
            and not (sub == "binding" and res_opt.name == "pods")
        ):
            return None
        return _Route(res_opt, namespace, name, sub)

    def _selectors(
        self, request: web.Request, res: Resource
    ) -> tuple[FieldSelector, LabelSelector]:
        try:
            fields = FieldSelector.parse(res.name, request.query.get("fieldSelector"))
            labels = LabelSelector.parse(request.query.get("labelSelector"))
        except SelectorError as exc:
            raise bad_request(str(exc)) from None
        return fields, labels

    def _list(self, request: web.Request, route: _Route) -> web.Response:
        res = route.resource
        fields, labels = self._selectors(request, res)
        items, rv = self.cluster.list(
            res.name,
            route.namespace,
            field_selector=fields,
            label_selector=labels,
            resource_version=request.query.get("resourceVersion", ""),
            resource_version_match=request.query.get("resourceVersionMatch", ""),
        )
        body = {
            "kind": f"{res.kind}List",
            "apiVersion": res.api_version,
            "metadata": {"resourceVersion": str(rv)},
            "items": [_strip_type(item) for item in items],
        }
        return web.json_response(body)

    async def _watch(self, request: web.Request, route: _Route) -> web.StreamResponse:
        res = route.resource
        fields, labels = self._selectors(request, res)
        with self._fail_lock:
            gone = self._gone_watches > 0
            if gone:
                self._gone_watches -= 1
        rv_text = request.query.get("resourceVersion", "")
        if gone:
            raise StatusError(
                410,
                "Gone",
                f"too old resource version: {rv_text or 0} ({self.cluster.resource_version})",
            )
        bookmarks = request.query.get("allowWatchBookmarks") in ("true", "1")
        timeout = self._max_watch_seconds
        if "timeoutSeconds" in request.query:
            try:
                timeout = min(timeout, float(request.query["timeoutSeconds"]))
            except ValueError:
                raise bad_request("timeoutSeconds must be an integer") from None
        initial: _Initial = []
        backlog: _Backlog = []
        error: StatusError | None = None
        with self.cluster.lock:
            current = self.cluster.resource_version
            if rv_text in ("", "0"):
                start = current
                for obj in self.cluster.snapshot(res.name):
                    initial.append(("ADDED", obj))
            else:
                try:
                    start = int(rv_text)
                except ValueError:
                    raise bad_request(
                        f'resourceVersion: Invalid value: "{rv_text}": must be a non-negative integer'
                    ) from None
                if start > current:
                    error = StatusError(
                        504, "Timeout", f"Too large resource version: {start}, current: {current}"
                    )
                else:
                    try:
                        backlog = self.cluster.events_since(res.name, start)
                    except StatusError as exc:
                        error = exc
            watcher = _Watcher(res, route.namespace, fields, labels, start)
            if error is None:
                self._watchers.add(watcher)
        response = web.StreamResponse(
            status=200, headers={"Content-Type": "application/json", "Cache-Control": "no-cache"}
        )
        response.enable_chunked_encoding()
        await response.prepare(request)
        self.watch_requests.append(
            RequestRecord(request.method, request.path, request.query_string, 200, time.time())
        )
        if error is not None:
            # The cacher's newErrWatcher: HTTP 200, then one ERROR event.
            await response.write(_line("ERROR", error.body()))
            await response.write_eof()
            return response
        task = asyncio.current_task()
        if task is not None:
            self._watch_tasks.add(task)
        try:
            await self._stream(request, response, watcher, initial, backlog, timeout, bookmarks)
        except (ConnectionError, RuntimeError):
            pass  # the client went away
        finally:
            self._watchers.discard(watcher)
            if task is not None:
                self._watch_tasks.discard(task)
        return response

    async def _stream(
        self,
        request: web.Request,
        response: web.StreamResponse,
        watcher: _Watcher,
        initial: Iterable[tuple[str, Mapping[str, Any]]],
        backlog: Iterable[EventRecord],
        timeout: float,
        bookmarks: bool,
    ) -> None:
        loop = asyncio.get_running_loop()
        for event_type, obj in initial:
            if watcher.matches(obj):
                await response.write(_line(event_type, obj))
        for event in backlog:
            if event.rv > watcher.last_rv:
                watcher.last_rv = event.rv
                converted = watcher.convert(event)
                if converted is not None:
                    await response.write(_line(*converted))
        deadline = loop.time() + timeout
        interval = self._bookmark_interval if bookmarks else None
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            wait = remaining if interval is None else min(remaining, interval)
            try:
                item = await asyncio.wait_for(watcher.queue.get(), wait)
            except TimeoutError:
                if interval is not None and watcher.queue.empty():
                    rv = max(watcher.last_rv, self._fanned_rv)
                    watcher.last_rv = rv
                    bookmark = {
                        "kind": watcher.resource.kind,
                        "apiVersion": watcher.resource.api_version,
                        "metadata": {"resourceVersion": str(rv)},
                    }
                    await response.write(_line("BOOKMARK", bookmark))
                continue
            if item == _STOP:
                break
            if item == _DROP:
                transport = request.transport
                if transport is not None:
                    transport.abort()
                return
            if item == _EXPIRE:
                floor = max(
                    self.cluster.floor(watcher.resource.name), self.cluster.resource_version
                )
                body = status_body(
                    410, "Expired", f"too old resource version: {watcher.last_rv} ({floor})"
                )
                await response.write(_line("ERROR", body))
                break
            assert isinstance(item, EventRecord)
            if item.rv <= watcher.last_rv:
                continue
            watcher.last_rv = item.rv
            converted = watcher.convert(item)
            if converted is not None:
                await response.write(_line(*converted))
        await response.write_eof()


def _method_not_allowed(method: str) -> StatusError:
    return StatusError(
        405,
        "MethodNotAllowed",
        f"the server does not allow this method on the requested resource ({method})",
    )


async def _json_body(request: web.Request, *, any_json: bool = False) -> Any:
    raw = await request.read()
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        raise bad_request("the body of the request is not valid JSON") from None
    if not any_json and not isinstance(body, dict):
        raise bad_request("the body of the request must be a JSON object")
    return body
