"""Every object the backend's watch reports, by kind, namespace and name: what
``Handle.lister(kind)`` reads (upstream: a SharedInformerFactory's listers, typed or dynamic)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["KindLister", "ObjectStore"]

_Key = tuple[str, str]


def _key_of(obj: object) -> tuple[str, _Key] | None:
    meta = getattr(obj, "metadata", None)
    if meta is None:
        return None
    kind = getattr(obj, "kind", None)
    if not isinstance(kind, str):
        kind = type(obj).__name__
    return kind, (meta.namespace or "", meta.name)


class KindLister:
    """A :class:`~schedframe.framework.ObjectLister` over one kind of an :class:`ObjectStore`.

    Writes are O(1); the sorted views a read returns are rebuilt on the first read after a
    write, per namespace, so a plugin listing one namespace pays for that namespace only.
    """

    __slots__ = ("_all", "_dirty", "_lock", "_ns", "_sorted", "kind")

    def __init__(self, kind: str, lock: threading.Lock) -> None:
        self.kind = kind
        self._lock = lock
        self._ns: dict[str, dict[str, object]] = {}
        self._sorted: dict[str, tuple[object, ...]] = {}
        self._all: tuple[object, ...] | None = ()
        self._dirty: set[str] = set()

    def _copy(self, lock: threading.Lock) -> KindLister:
        # Called with the store's lock held; objects and the sorted tuples are shared.
        other = KindLister(self.kind, lock)
        other._ns = {ns: dict(objects) for ns, objects in self._ns.items()}
        other._sorted = dict(self._sorted)
        other._all = self._all
        other._dirty = set(self._dirty)
        return other

    def _put(self, key: _Key, obj: object | None) -> None:
        # Called with the store's lock held.
        ns, name = key
        objects = self._ns.setdefault(ns, {})
        if obj is None:
            if objects.pop(name, None) is None:
                return
        else:
            objects[name] = obj
        self._dirty.add(ns)
        self._all = None

    def list(self, namespace: str | None = None) -> Sequence[Any]:
        """Every object (``namespace=None``) or those of one namespace, by namespace and name."""
        if namespace is None:
            everything = self._all
            if everything is None:
                with self._lock:
                    everything = tuple(
                        obj for ns in sorted(self._ns) for obj in self._namespace(ns)
                    )
                    self._all = everything
            return everything
        if namespace in self._dirty:
            with self._lock:
                return self._namespace(namespace)
        return self._sorted.get(namespace, ())

    def _namespace(self, ns: str) -> tuple[object, ...]:
        if ns in self._dirty:
            objects = self._ns.get(ns, {})
            self._sorted[ns] = tuple(objects[n] for n in sorted(objects))
            self._dirty.discard(ns)
        return self._sorted.get(ns, ())

    def get(self, name: str, namespace: str = "") -> Any:
        """One object by name (and namespace, empty for cluster-scoped kinds), or ``None``."""
        return self._ns.get(namespace, {}).get(name)


class ObjectStore:
    """Objects of every kind, as the watch reports them; thread-safe writers, lock-free readers.

    An object's kind is its ``kind`` attribute (custom objects) or its class name.
    """

    def __init__(self, objects: Iterable[object] = ()) -> None:
        self._lock = threading.Lock()
        self._kinds: dict[str, KindLister] = {}
        for obj in objects:
            self.set(obj)

    def copy_state(self, other: ObjectStore) -> None:
        """Make this (new) store hold what ``other`` holds (a fork's starting point); listers
        already handed out by this store keep working and see the copied objects."""
        with other._lock, self._lock:
            for kind, source in other._kinds.items():
                copy = source._copy(self._lock)
                mine = self._kinds.get(kind)
                if mine is None:
                    self._kinds[kind] = copy
                else:
                    mine._ns, mine._sorted, mine._all, mine._dirty = (
                        copy._ns,
                        copy._sorted,
                        copy._all,
                        copy._dirty,
                    )

    def lister(self, kind: str) -> KindLister:
        """The lister of ``kind`` (empty until an object of that kind arrives)."""
        lister = self._kinds.get(kind)
        if lister is None:
            with self._lock:
                lister = self._kinds.setdefault(kind, KindLister(kind, self._lock))
        return lister

    def kinds(self) -> tuple[str, ...]:
        """The kinds seen so far, by name."""
        return tuple(sorted(self._kinds))

    def set(self, obj: object) -> None:
        """Add or replace ``obj`` (ignored when it has no ``metadata``)."""
        found = _key_of(obj)
        if found is None:
            return
        kind, key = found
        lister = self.lister(kind)
        with self._lock:
            lister._put(key, obj)

    def delete(self, obj: object) -> None:
        """Forget ``obj`` by kind, namespace and name."""
        found = _key_of(obj)
        if found is None:
            return
        kind, key = found
        lister = self.lister(kind)
        with self._lock:
            lister._put(key, None)
