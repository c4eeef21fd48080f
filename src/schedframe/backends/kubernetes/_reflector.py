"""Our Reflector: list, then watch from the list's resourceVersion, as client-go's does.

One Reflector keeps one kind's store (the informer's indexer) current:

* **list** (first with ``resourceVersion=0``, later from the last revision seen, and with
  ``resourceVersion=""`` after the server said that revision is gone), then **replace** the
  store with the result, emitting ``ADDED``/``MODIFIED`` for new or changed objects and
  ``DELETED`` for objects that vanished while we were not watching (client-go
  ``DeltaFIFO.Replace``);
* **watch** from the list's revision with ``allowWatchBookmarks=true`` and a random
  ``timeoutSeconds`` (client-go: 5 to 10 minutes), tracking the revision of every event,
  BOOKMARKs included;
* when the watch ends (timeout, dropped connection) watch again from the last revision after a
  short jittered backoff; on ``410 Gone``/``Expired`` (an HTTP status or an in-stream
  ``ERROR``) relist and diff; on other errors back off (0.8 s doubling to 30 s, jittered).

Changes are applied to the store and handed to ``deliver`` under the shared ``lock``, one at a
time, so a subscriber's replay (taken under the same lock) and the live events never overlap.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from schedframe.backends._protocols import WatchEvent, WatchEventType
from schedframe.backends.kubernetes._transport import (
    ApiError,
    ApiTransport,
    Backoff,
    TransportError,
    WatchStream,
)
from schedframe.errors import ManifestError

__all__ = ["Reflector", "ReflectorStats"]

log = logging.getLogger("schedframe.backends.kubernetes")

#: client-go's minWatchTimeout: watches ask for 5 to 10 minutes.
MIN_WATCH_TIMEOUT: Final = 300.0

_Key = tuple[str, str]
Decode = Callable[[Mapping[str, Any]], object]


@attrs.define
class ReflectorStats:
    """Counters for one reflector (exposed as metrics)."""

    lists: int = 0
    relists_after_expiry: int = 0
    watches: int = 0
    watch_events: int = 0
    bookmarks: int = 0
    errors: int = 0
    decode_errors: int = 0


@attrs.frozen
class _Entry:
    obj: object
    rv: int
    uid: str


def _meta(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = raw.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _rv_of(raw: Mapping[str, Any]) -> int:
    try:
        return int(str(_meta(raw).get("resourceVersion") or 0))
    except ValueError:
        return 0


def _key_of(raw: Mapping[str, Any]) -> _Key:
    meta = _meta(raw)
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


class _Expired(Exception):
    """The server no longer has our revision: relist."""


class Reflector:
    """List and watch one resource into a store, emitting :class:`WatchEvent` per change.

    Args:
        transport: where requests go.
        kind: the schedframe kind (``Pod``, ``Node`` ...), for logs and errors.
        path: the collection path (``/api/v1/pods``).
        decode: builds a schedframe object from the raw JSON dict.
        deliver: gets every change, under ``lock``.
        lock: shared with the backend; held while the store changes and events go out.
        field_selector: applied to list and watch (pods: ``status.phase!=Succeeded,...``).
        label_selector: applied to list and watch.
        min_watch_timeout: watches ask for ``timeoutSeconds`` between this and twice it.
        backoff: (initial, cap) seconds of the error backoff.
    """

    def __init__(
        self,
        transport: ApiTransport,
        *,
        kind: str,
        path: str,
        decode: Decode,
        deliver: Callable[[WatchEvent], None],
        lock: threading.RLock,
        field_selector: str = "",
        label_selector: str = "",
        min_watch_timeout: float = MIN_WATCH_TIMEOUT,
        backoff: tuple[float, float] = (0.8, 30.0),
    ) -> None:
        self._transport = transport
        self.kind = kind
        self.path = path
        self._decode = decode
        self._deliver = deliver
        self._lock = lock
        self.field_selector = field_selector
        self.label_selector = label_selector
        self._min_watch_timeout = min_watch_timeout
        self._backoff = Backoff(*backoff)
        self._watch_backoff = Backoff(min(0.1, backoff[0]), backoff[1])
        self._store: dict[_Key, _Entry] = {}
        self._last_rv = ""
        self._last_rv_unavailable = False
        self._stop = threading.Event()
        self._synced = threading.Event()
        self._stream: WatchStream | None = None
        self._stream_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.stats = ReflectorStats()
        self.last_error: str | None = None

    # -- introspection -------------------------------------------------------------------------

    @property
    def last_sync_resource_version(self) -> str:
        """The revision the store is current to (client-go ``LastSyncResourceVersion``)."""
        return self._last_rv

    @property
    def has_synced(self) -> bool:
        """Whether the first list has been applied."""
        return self._synced.is_set()

    def objects(self) -> list[object]:
        """The stored objects in key order (a snapshot; safe without the lock)."""
        store = dict(self._store)  # one C-level copy: never sees a half-applied change
        return [store[key].obj for key in sorted(store)]

    def get(self, namespace: str, name: str) -> object | None:
        """The stored object ``namespace/name`` (namespace ``""`` when cluster-scoped)."""
        entry = self._store.get((namespace, name))
        return None if entry is None else entry.obj

    # -- lifecycle -----------------------------------------------------------------------------

    def list_and_replace(self) -> None:
        """One list and store replacement (the start of ListAndWatch).

        Raises:
            ApiError, TransportError: the list failed.
        """
        self.apply_list(*self.fetch_list())

    def fetch_list(self) -> tuple[dict[_Key, _Entry], str]:
        """The list request of :meth:`list_and_replace` (its objects, decoded, and revision),
        without touching the store: the backend fetches every kind at once (each decoding
        while the others wait for the server), then applies them in order.

        Raises:
            ApiError, TransportError: the list failed.
        """
        if self._last_rv_unavailable:
            rv = ""
        elif not self._last_rv:
            rv = "0"
        else:
            rv = self._last_rv
        query = [("resourceVersion", rv)]
        if self.field_selector:
            query.append(("fieldSelector", self.field_selector))
        if self.label_selector:
            query.append(("labelSelector", self.label_selector))
        try:
            body = self._transport.request("GET", self.path, query=query)
        except ApiError as exc:
            if exc.code == 410 or exc.reason in ("Expired", "Gone"):
                self._last_rv_unavailable = True
            raise
        if not isinstance(body, Mapping):
            raise TransportError(f"GET {self.path}: the list is not a JSON object")
        list_rv = str(_meta(body).get("resourceVersion") or "")
        items = body.get("items") or []
        return self._decode_items(items if isinstance(items, list) else []), list_rv

    def apply_list(self, decoded: dict[_Key, _Entry], list_rv: str) -> None:
        """Replace the store with a list fetched by :meth:`fetch_list`."""
        self._replace(decoded, list_rv)
        self._last_rv_unavailable = False
        self.stats.lists += 1
        self._synced.set()

    def start(self) -> None:
        """Run the watch loop in a daemon thread (after :meth:`list_and_replace`, or it lists
        first)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self.run, name=f"schedframe-reflector-{self.kind}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the loop and close the open watch (idempotent)."""
        self._stop.set()
        with self._stream_lock:
            stream = self._stream
        if stream is not None:
            stream.close()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _sleep(self, seconds: float) -> bool:
        """Sleep unless stopped; ``False`` when stopped."""
        return not self._stop.wait(seconds)

    def run(self) -> None:
        """ListAndWatch until :meth:`stop`: the loop described in the module doc."""
        need_list = not self.has_synced
        while not self._stop.is_set():
            if need_list:
                try:
                    self.list_and_replace()
                except (ApiError, TransportError) as exc:
                    self._failed("list", exc)
                    if not self._sleep(self._backoff.next()):
                        return
                    continue
                except Exception as exc:  # a bug: keep the informer alive
                    log.exception("listing %s failed", self.kind)
                    self._failed("list", exc)
                    if not self._sleep(self._backoff.next()):
                        return
                    continue
                need_list = False
            started = time.monotonic()
            try:
                events = self._watch_once()
            except _Expired as exc:
                log.info("watch of %s expired (%s); relisting", self.kind, exc)
                self.stats.relists_after_expiry += 1
                need_list = True
                if not self._sleep(self._backoff.next()):
                    return
                continue
            except ApiError as exc:
                self._failed("watch", exc)
                # client-go: 429 and 5xx retry the watch; anything else relists.
                if exc.code != 429 and exc.code < 500:
                    need_list = True
                delay = max(exc.retry_after or 0.0, self._backoff.next())
                if not self._sleep(delay):
                    return
                continue
            except TransportError as exc:
                if self._stop.is_set():
                    return
                self._failed("watch", exc)
                if not self._sleep(self._watch_backoff.next()):
                    return
                continue
            except Exception as exc:  # a bug: keep the informer alive
                log.exception("watching %s failed", self.kind)
                self._failed("watch", exc)
                need_list = True
                if not self._sleep(self._backoff.next()):
                    return
                continue
            # A clean end (timeout): watch again; quickly unless it ended at once.
            if events > 0 or time.monotonic() - started > 1.0:
                self._watch_backoff.reset()
                self._backoff.reset()
            if not self._sleep(self._watch_backoff.next() if events == 0 else 0.0):
                return

    def _failed(self, what: str, exc: BaseException) -> None:
        self.stats.errors += 1
        self.last_error = f"{what}: {exc}"
        log.warning("%s of %s failed: %s", what, self.kind, exc)

    # -- watch ---------------------------------------------------------------------------------

    def _watch_once(self) -> int:
        """One watch request, read to its end; returns the events applied.

        Raises:
            _Expired: the revision is gone (HTTP 410 or an in-stream 410).
            ApiError: the watch was refused or ended with another in-stream error.
            TransportError: the connection failed or dropped.
        """
        timeout_seconds = max(1, int(self._min_watch_timeout * (1.0 + random.random())))
        query = [
            ("allowWatchBookmarks", "true"),
            ("resourceVersion", self._last_rv),
            ("timeoutSeconds", str(timeout_seconds)),
            ("watch", "true"),
        ]
        if self.field_selector:
            query.append(("fieldSelector", self.field_selector))
        if self.label_selector:
            query.append(("labelSelector", self.label_selector))
        try:
            stream = self._transport.watch(
                self.path, query=query, timeout=(10.0, timeout_seconds + 30.0)
            )
        except ApiError as exc:
            if exc.code == 410 or exc.reason in ("Expired", "Gone"):
                raise _Expired(str(exc)) from None
            raise
        with self._stream_lock:
            if self._stop.is_set():
                stream.close()
                return 0
            self._stream = stream
        self.stats.watches += 1
        applied = 0
        try:
            for event in stream:
                if self._stop.is_set():
                    break
                applied += self._handle(event)
        finally:
            with self._stream_lock:
                self._stream = None
            stream.close()
        return applied

    def _handle(self, event: Mapping[str, Any]) -> int:
        event_type = event.get("type")
        raw = event.get("object")
        if not isinstance(raw, Mapping):
            raise TransportError(f"watch {self.path}: event without an object")
        if event_type == "BOOKMARK":
            rv = _meta(raw).get("resourceVersion")
            if rv:
                self._last_rv = str(rv)
            self.stats.bookmarks += 1
            return 0
        if event_type == "ERROR":
            error = ApiError.from_status(
                int(raw.get("code") or 500), raw, method="WATCH", path=self.path
            )
            if error.code == 410 or error.reason in ("Expired", "Gone"):
                raise _Expired(str(error))
            raise error
        if event_type not in ("ADDED", "MODIFIED", "DELETED"):
            log.warning("watch of %s: ignoring event type %r", self.kind, event_type)
            return 0
        rv = _rv_of(raw)
        obj = self._decode_or_none(raw)
        key = _key_of(raw)
        with self._lock:
            self._last_rv = str(_meta(raw).get("resourceVersion") or self._last_rv)
            self.stats.watch_events += 1
            if obj is None:
                if event_type == "DELETED":
                    self._store.pop(key, None)
                return 0
            old = self._store.get(key)
            if event_type == "DELETED":
                if old is None:
                    return 0
                del self._store[key]
                self._emit("DELETED", obj, old.obj, rv)
                return 1
            uid = str(_meta(raw).get("uid") or "")
            self._store[key] = _Entry(obj, rv, uid)
            if old is None:
                self._emit("ADDED", obj, None, rv)
            elif old.uid != uid:
                # Recreated under the same name: the old object is gone.
                self._emit("DELETED", old.obj, old.obj, rv)
                self._emit("ADDED", obj, None, rv)
            else:
                self._emit("MODIFIED", obj, old.obj, rv)
            return 1

    # -- list ----------------------------------------------------------------------------------

    def _decode_or_none(self, raw: Mapping[str, Any]) -> object | None:
        try:
            return self._decode(raw)
        except ManifestError as exc:
            self.stats.decode_errors += 1
            name = "/".join(p for p in _key_of(raw) if p)
            log.error("cannot read %s %s; ignoring it: %s", self.kind, name, exc)
            return None

    def _decode_items(self, items: list[Any]) -> dict[_Key, _Entry]:
        decoded: dict[_Key, _Entry] = {}
        for raw in items:
            if not isinstance(raw, Mapping):
                continue
            obj = self._decode_or_none(raw)
            if obj is None:
                continue
            decoded[_key_of(raw)] = _Entry(obj, _rv_of(raw), str(_meta(raw).get("uid") or ""))
        return decoded

    def _replace(self, decoded: dict[_Key, _Entry], list_rv: str) -> None:
        try:
            rv_number = int(list_rv or 0)
        except ValueError:
            rv_number = 0
        with self._lock:
            old_store = self._store
            for key in sorted(old_store):
                if key not in decoded:
                    gone = old_store[key]
                    self._emit("DELETED", gone.obj, gone.obj, rv_number)
            for key, entry in decoded.items():
                old = old_store.get(key)
                if old is not None and old.uid == entry.uid and old.rv == entry.rv:
                    decoded[key] = old  # unchanged: keep the object (and its cached values)
            self._store = decoded
            for key, entry in decoded.items():
                old = old_store.get(key)
                if old is None:
                    self._emit("ADDED", entry.obj, None, entry.rv)
                elif old.uid != entry.uid:
                    self._emit("DELETED", old.obj, old.obj, rv_number)
                    self._emit("ADDED", entry.obj, None, entry.rv)
                elif old.rv != entry.rv:
                    self._emit("MODIFIED", entry.obj, old.obj, entry.rv)
            self._last_rv = list_rv

    def resync(self) -> None:
        """Re-deliver every stored object as ``MODIFIED`` with ``old`` equal to it (client-go's
        periodic resync)."""
        with self._lock:
            for key in sorted(self._store):
                entry = self._store[key]
                self._emit("MODIFIED", entry.obj, entry.obj, entry.rv)

    def _emit(self, event_type: WatchEventType, obj: object, old: object | None, rv: int) -> None:
        try:
            self._deliver(WatchEvent(type=event_type, obj=obj, old=old, resource_version=rv))
        except Exception:  # a subscriber's bug must not break the informer
            log.exception("delivering a %s event for %s failed", event_type, self.kind)
