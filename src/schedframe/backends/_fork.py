"""Copy-on-write forks of a :class:`MemoryBackend`: ask "what if" without touching the cluster.

A fork shares every stored object with its parent (objects are immutable values) and copies
only the per-kind indexes, so forking costs one dictionary copy per kind. Every write the
fork makes is kept as the watch event it produced; :meth:`BackendFork.commit` hands that
event log to the parent, which stores the same objects under the same resourceVersions and
delivers the same events to its own watchers, exactly as if the writes had been made there.
"""

from __future__ import annotations

import collections
import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Final

from schedframe.backends._memory import STORED_KINDS, MemoryBackend, _Object, _Subscription
from schedframe.backends._protocols import Subscription, WatchEvent
from schedframe.errors import BackendError

if TYPE_CHECKING:
    from schedframe.framework import Clock

__all__ = ["BackendFork", "canonical_state"]

_Key = tuple[str, str]


class BackendFork(MemoryBackend):
    """A copy-on-write fork of a :class:`MemoryBackend` (see :meth:`MemoryBackend.fork`).

    It is a full :class:`MemoryBackend`: a scheduler can run on it, operations can be made
    on it, and it can be inspected. Then either :meth:`commit` it (the parent gets every write
    the fork made, as watch events, in order) or :meth:`discard` it; the parent is never
    changed before :meth:`commit`.

    Attributes:
        parent: the backend this fork was taken from.
        base_resource_version: the parent's resourceVersion at the fork.
    """

    def __init__(self, parent: MemoryBackend, *, clock: Clock | None = None) -> None:
        super().__init__(
            clock=clock if clock is not None else parent._clock,
            storage_controller=parent._storage is not None,
        )
        self._graceful = parent._graceful
        with parent._lock:
            if parent._storage is not None and self._storage is not None:
                # The fork's storage controller goes on where the parent's is: the same
                # injected failures left, the same count of provisioned volumes (their handles).
                self._storage.copy_state(parent._storage)
            # Objects are frozen values: sharing them is safe; only the indexes are copied.
            self._store = collections.defaultdict(
                dict, {kind: dict(objects) for kind, objects in parent._store.items()}
            )
            self._rv = parent._rv
            self.events = list(parent.events)
            # Writes the parent's watchers have not been told of yet: the fork tells its own
            # resumed watchers (see resuming_watches), whose state was copied from the parent's.
            self._pending.extend(parent._pending)
            self._resume_rv = (
                parent._pending[0].resource_version - 1 if parent._pending else parent._rv
            )
            # Pods in their graceful-deletion period go when they would on the parent.
            self._inherited_timers: list[tuple[object, object]] = []
            for key, (when, uid, timer) in parent._finalizing.items():
                pod = self._store["Pod"].get(key)
                if (
                    pod is None
                    or pod.metadata.uid != uid
                    or pod.metadata.deletion_timestamp is None
                ):
                    continue
                mine = self._finalize_at(when, key, uid)
                self._finalizing[key] = (when, uid, mine)
                self._inherited_timers.append((timer, mine))
        self.parent: Final = parent
        self.base_resource_version: Final = self._rv
        self._base_events = len(self.events)
        self._log: list[tuple[str, _Key, _Object | None, WatchEvent]] = []
        self._closed = ""
        self._replay = True

    @contextlib.contextmanager
    def resuming_watches(self) -> Iterator[None]:
        """Within this block, :meth:`subscribe` replays nothing: a subscriber gets only the
        changes its counterpart on the parent had not been told of at the fork (the parent's
        undelivered events, delivered at the fork's next write or :meth:`deliver_pending`) and
        those made after, as a watch resumed at that resourceVersion.

        For a subscriber that starts from a copy of what its counterpart on the parent holds
        (:meth:`Scheduler.fork <schedframe.scheduler.Scheduler.fork>` copies its cache and
        queue) rather than from a replay of every object.
        """
        self._replay = False
        try:
            yield
        finally:
            self._replay = True

    def subscribe(self, callback: Callable[[WatchEvent], None]) -> Subscription:
        """As :meth:`MemoryBackend.subscribe`; inside :meth:`resuming_watches`, without the
        replay of the current objects."""
        if self._replay:
            return super().subscribe(callback)
        self._check_open()
        with self._lock:
            subscription = _Subscription(self, callback, self._resume_rv)
            self._subscribers.append(subscription)
        return subscription

    def deliver_pending(self) -> None:
        """Deliver the events queued for this fork's watchers (the parent's writes they were
        not told of at the fork), as the next write would."""
        self._drain()

    def _finalize_at(self, when: float, key: _Key, uid: str) -> object:
        clock = self._clock
        callback = functools.partial(self._finalize_later, key, uid)
        call_at = getattr(clock, "call_at", None)
        if call_at is not None:
            return call_at(when, callback)
        return clock.call_later(max(when - clock.now(), 0.0), callback)  # type: ignore[attr-defined]

    @property
    def closed(self) -> bool:
        """True once the fork was committed or discarded."""
        return bool(self._closed)

    @property
    def writes(self) -> int:
        """How many writes the fork made (each one a resourceVersion)."""
        return len(self._log)

    def _write(
        self,
        kind: str,
        key: _Key,
        obj: _Object,
        old: _Object | None,
        *,
        metadata: Mapping[str, object] | None = None,
        node_name: str | None = None,
        status: Mapping[str, object] | None = None,
    ) -> _Object:
        self._check_open()
        stored = super()._write(
            kind, key, obj, old, metadata=metadata, node_name=node_name, status=status
        )
        self._log.append((kind, key, stored, self._pending[-1]))
        return stored

    def _remove(self, kind: str, key: _Key, stored: _Object) -> _Object:
        self._check_open()
        last = super()._remove(kind, key, stored)
        self._log.append((kind, key, None, self._pending[-1]))
        return last

    def _finalize_later(self, key: _Key, uid: str) -> None:
        if not self._closed:  # a grace period that ends after the fork was closed
            super()._finalize_later(key, uid)

    def _check_open(self) -> None:
        if self._closed:
            raise BackendError(
                f"this fork was {self._closed}; fork the backend again", reason="Gone", code=410
            )

    def commit(self) -> int:
        """Apply every write of the fork to the parent, in order; returns how many.

        The parent stores the fork's objects with the fork's resourceVersions and delivers
        the fork's watch events to its own subscribers (its scheduler sees them as it would
        have seen the writes), and gets the events the fork recorded. The fork is closed.

        Raises:
            BackendError: 409 ``Conflict`` when the parent was written to since the fork
                (optimistic concurrency, as an update with a stale resourceVersion); 409
                ``Conflict`` when a pod deleted in the fork is still in its grace period
                (call :meth:`finalize_deletions` on the fork first); 410 ``Gone`` when the
                fork is already closed.
        """
        self._check_open()
        parent = self.parent
        with self._lock:
            terminating = [
                key
                for key, pod in self._store["Pod"].items()
                if pod.metadata.deletion_timestamp is not None
                and parent._store["Pod"].get(key) is not pod
            ]
        if terminating:
            names = ", ".join(f"{ns}/{name}" for ns, name in sorted(terminating))
            raise BackendError(
                f"cannot commit a fork with pods in their grace period ({names}); "
                "call finalize_deletions() on the fork first",
                reason="Conflict",
                code=409,
            )
        with parent._lock:
            if parent._rv != self.base_resource_version:
                raise BackendError(
                    "Operation cannot be fulfilled on the cluster: it was modified since the "
                    f"fork (resourceVersion {self.base_resource_version} -> {parent._rv}); "
                    "fork it again",
                    reason="Conflict",
                    code=409,
                )
            for entry in self._log:
                kind, key, obj, event = entry
                if obj is None:
                    del parent._store[kind][key]
                else:
                    parent._store[kind][key] = obj
                parent._rv = event.resource_version
                parent._pending.append(event)
                if isinstance(parent, BackendFork):  # a fork of a fork: its parent logs it too
                    parent._check_open()
                    parent._log.append(entry)
            parent.events.extend(self.events[self._base_events :])
            if parent._storage is not None and self._storage is not None:
                parent._storage.copy_state(self._storage)
            self._closed = "committed"
        parent._drain()
        return len(self._log)

    def discard(self) -> None:
        """Throw the fork away; the parent is untouched. Later writes to the fork fail."""
        self._closed = "discarded"
        with self._lock:
            for subscription in list(self._subscribers):
                subscription.active = False
            self._subscribers.clear()


def canonical_state(backend: MemoryBackend) -> bytes:
    """A canonical serialisation of everything a backend holds: every stored object (by kind,
    then namespace and name), the resourceVersion and the recorded events.

    Two backends with the same bytes hold byte-identical state; this is what fork/commit/
    revert is tested with.
    """
    with backend._lock:
        parts = [f"resourceVersion={backend._rv}"]
        for kind in STORED_KINDS:
            objects = backend._store[kind]
            for key in sorted(objects):
                parts.append(f"{kind} {key[0]}/{key[1]} {objects[key]!r}")
        parts.extend(f"event {e!r}" for e in backend.events)
    return "\n".join(parts).encode("utf-8")
