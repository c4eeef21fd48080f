"""events.k8s.io/v1 Events, written asynchronously and rate-limited as client-go's
``tools/events`` broadcaster writes them.

* Recording never blocks scheduling: events go to a bounded queue (1000, as the broadcaster's
  channel) and a worker thread writes them; when the queue is full the event is dropped.
* Isomorphic events (same regarding and related object, action, reason, note and reporting
  controller) within 6 minutes are one Event with a ``series``: the first is created, the
  second PATCHes ``series.count=2``, later ones only count locally and are PATCHed by the
  30-minute refresh or when the series finishes (6 minutes without a repeat).
* Writes go through their own client-side token bucket (kube-scheduler's event client has
  the same QPS/burst as its main client).
* A failed write is retried (at most 3 attempts) only when the server could not be reached;
  an error status from the server drops the event, as client-go does.
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

import attrs

from schedframe.backends.kubernetes._transport import (
    ApiError,
    ApiTransport,
    RateLimiter,
    TransportError,
)
from schedframe.objects import ObjectReference

__all__ = ["EventSink", "ObjectReference"]

log = logging.getLogger("schedframe.backends.kubernetes")

#: client-go ``tools/events``: a series finishes after 6 minutes without a repeat ...
FINISH_TIME: Final = 6 * 60.0
#: ... and open series are refreshed every 30 minutes.
REFRESH_TIME: Final = 30 * 60.0
QUEUE_SIZE: Final = 1000
MAX_ATTEMPTS: Final = 3
NOTE_LIMIT: Final = 1024
_CACHE_LIMIT: Final = 4096


def micro_time(t: float) -> str:
    """``metav1.MicroTime`` text."""
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _identity(ref: ObjectReference) -> tuple[str, str, str, str, str]:
    return (ref.api_version, ref.kind, ref.namespace, ref.name, ref.uid)


@attrs.define
class _Cached:
    event: dict[str, Any]
    count: int = 1
    last_observed: float = 0.0


@attrs.frozen
class _Item:
    key: tuple[Any, ...]
    event: dict[str, Any]
    when: float


def _truncate(note: str) -> str:
    data = note.encode()
    if len(data) <= NOTE_LIMIT:
        return note
    return data[: NOTE_LIMIT - 3].decode(errors="ignore") + "..."


class EventSink:
    """The event writer of one backend.

    Args:
        transport: where Events are written.
        reporting_instance: ``reportingInstance`` suffix (the host name by default).
        qps: writes per second (client-side token bucket); ``burst`` as client-go's.
        clock: wall time (seconds).
    """

    def __init__(
        self,
        transport: ApiTransport,
        *,
        reporting_instance: str | None = None,
        qps: float = 50.0,
        burst: int = 100,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._transport = transport
        self._host = reporting_instance or socket.gethostname()
        self._limiter = RateLimiter(qps, burst)
        self._clock = clock
        self._queue: queue.Queue[_Item | None] = queue.Queue(QUEUE_SIZE)
        self._cache: OrderedDict[tuple[Any, ...], _Cached] = OrderedDict()
        self._stop = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None
        self._last_finish = clock()
        self._last_refresh = clock()
        #: Counters: written (created), patched (series), dropped, failed.
        self.counts: dict[str, int] = {"created": 0, "patched": 0, "dropped": 0, "failed": 0}

    def start(self) -> None:
        """Start the writer thread (idempotent; not after :meth:`close`)."""
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(target=self._run, name="schedframe-events", daemon=True)
            self._thread.start()

    def close(self, timeout: float = 5.0, *, flush: bool = True) -> None:
        """Write what is queued (for up to ``timeout`` seconds; nothing when ``flush`` is
        false), then stop; later events are dropped."""
        self._closed = True
        if not flush:
            self._stop.set()
            while True:
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    break
                self.counts["dropped"] += 1
            timeout = min(timeout, 0.1)  # a write in flight may finish without us
        thread = self._thread
        if thread is None:
            return
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            pass
        thread.join(timeout)
        self._stop.set()
        thread.join(1.0)
        self._thread = None

    def record(
        self,
        regarding: ObjectReference,
        related: ObjectReference | None,
        *,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        reporting_controller: str,
    ) -> None:
        """Queue one event (dropped, and counted, when the queue is full or the sink is
        closed)."""
        if self._closed:
            self.counts["dropped"] += 1
            return
        now = self._clock()
        note = _truncate(note)
        event: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {
                "name": f"{regarding.name}.{int(now * 1e9):x}",
                "namespace": regarding.namespace or "default",
            },
            "eventTime": micro_time(now),
            "reportingController": reporting_controller,
            "reportingInstance": f"{reporting_controller}-{self._host}",
            "action": action,
            "reason": reason,
            "regarding": regarding.to_dict(),
            "note": note,
            "type": event_type,
        }
        if related is not None:
            event["related"] = related.to_dict()
        key = (
            action,
            reason,
            reporting_controller,
            _identity(regarding),
            note,
            None if related is None else _identity(related),
        )
        try:
            self._queue.put_nowait(_Item(key, event, now))
        except queue.Full:
            self.counts["dropped"] += 1
            log.debug("event queue full; dropping %s event for %s", reason, regarding.name)
        if self._thread is None:
            self.start()

    # -- the writer thread ---------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                item = self._queue.get(timeout=1.0)
            except queue.Empty:
                item = None
                idle = True
            else:
                idle = False
                if item is None:
                    return
            if item is not None:
                try:
                    self._process(item)
                except Exception:  # never let the writer die
                    log.exception("writing an event failed")
            if idle or self._clock() - self._last_finish > FINISH_TIME:
                self._periodic()

    def _periodic(self) -> None:
        now = self._clock()
        if now - self._last_finish >= FINISH_TIME:
            self._last_finish = now
            for key, cached in list(self._cache.items()):
                if cached.count > 1:
                    if cached.last_observed < now - FINISH_TIME:
                        self._write_series(cached)
                        self._cache.pop(key, None)
                elif cached.last_observed < now - FINISH_TIME:
                    self._cache.pop(key, None)
        if now - self._last_refresh >= REFRESH_TIME:
            self._last_refresh = now
            for cached in list(self._cache.values()):
                if cached.count > 1:
                    self._write_series(cached)

    def _process(self, item: _Item) -> None:
        cached = self._cache.get(item.key)
        if cached is not None and item.when - cached.last_observed <= FINISH_TIME:
            cached.count += 1
            cached.last_observed = item.when
            self._cache.move_to_end(item.key)
            if cached.count == 2:
                self._write_series(cached)
            return
        self._cache[item.key] = _Cached(item.event, 1, item.when)
        while len(self._cache) > _CACHE_LIMIT:
            self._cache.popitem(last=False)
        self._attempt(lambda: self._create(item.event))

    def _write_series(self, cached: _Cached) -> None:
        def patch() -> None:
            meta = cached.event["metadata"]
            path = f"/apis/events.k8s.io/v1/namespaces/{meta['namespace']}/events/{meta['name']}"
            body = {
                "series": {
                    "count": cached.count,
                    "lastObservedTime": micro_time(cached.last_observed),
                }
            }
            try:
                self._transport.request(
                    "PATCH",
                    path,
                    body=body,
                    content_type="application/strategic-merge-patch+json",
                    limiter=self._limiter,
                )
                self.counts["patched"] += 1
            except ApiError as exc:
                if exc.code != 404:
                    raise
                # The event is gone (expired): create it again with its series.
                event = dict(cached.event)
                event["series"] = body["series"]
                self._create(event)

        self._attempt(patch)

    def _create(self, event: Mapping[str, Any]) -> None:
        namespace = event["metadata"]["namespace"]
        self._transport.request(
            "POST",
            f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
            body=dict(event),
            limiter=self._limiter,
        )
        self.counts["created"] += 1

    def _attempt(self, write: Callable[[], None]) -> None:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                write()
                return
            except ApiError as exc:
                self.counts["failed"] += 1
                if exc.code != 409:
                    log.warning("server rejected event: %s", exc)
                return
            except TransportError as exc:
                if attempt == MAX_ATTEMPTS or self._stop.wait(float(attempt)):
                    self.counts["failed"] += 1
                    log.warning("unable to write event (gave up): %s", exc)
                    return
                log.info("unable to write event (will retry): %s", exc)
