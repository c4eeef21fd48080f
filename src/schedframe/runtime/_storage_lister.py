"""The storage objects the volume plugins read through the Handle (upstream: the
PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver,
CSIStorageCapacity and VolumeAttachment informers' listers)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Final

from schedframe.objects._storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)

__all__ = ["STORAGE_KINDS", "StorageStore"]

#: The kinds a :class:`StorageStore` keeps (the backends watch them as kube-scheduler does).
STORAGE_KINDS: Final = (
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "VolumeAttachment",
)
_TYPES: Final = (
    StorageClass,
    CSINode,
    CSIDriver,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    VolumeAttachment,
)
_Storage = (
    StorageClass
    | CSINode
    | CSIDriver
    | CSIStorageCapacity
    | PersistentVolume
    | PersistentVolumeClaim
    | VolumeAttachment
)


class StorageStore:
    """A :class:`~schedframe.framework.StorageLister` over a set of objects.

    Thread-safe: writers hold a lock and replace the per-kind tuples readers iterate, so a
    reader never sees a half-made change.
    """

    def __init__(self, objects: Iterable[object] = ()) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._by_kind: dict[type, dict[tuple[str, str], _Storage]] = {t: {} for t in _TYPES}
        self._pvs: tuple[PersistentVolume, ...] = ()
        self._capacities: tuple[CSIStorageCapacity, ...] = ()
        self._attachments: tuple[VolumeAttachment, ...] = ()
        #: Bumped on every write; memos key on it.
        self.generation = 0
        for obj in objects:
            self.set(obj)

    def copy_state(self, other: StorageStore) -> None:
        """Make this (new) store hold what ``other`` holds (a fork's starting point)."""
        with other._lock, self._lock:
            self._by_kind = {kind: dict(objs) for kind, objs in other._by_kind.items()}
            self._pvs = other._pvs
            self._capacities = other._capacities
            self._attachments = other._attachments
            self.generation = other.generation

    def _reindex(self, kind: type) -> None:
        objs = self._by_kind[kind]
        ordered = tuple(objs[k] for k in sorted(objs))
        if kind is PersistentVolume:
            self._pvs = ordered  # type: ignore[assignment]
        elif kind is CSIStorageCapacity:
            self._capacities = ordered  # type: ignore[assignment]
        elif kind is VolumeAttachment:
            self._attachments = ordered  # type: ignore[assignment]

    def set(self, obj: object) -> bool:
        """Add or replace ``obj``; False (and nothing stored) for another kind."""
        if not isinstance(obj, _TYPES):
            return False
        with self._lock:
            self._by_kind[type(obj)][(obj.metadata.namespace, obj.metadata.name)] = obj
            self._reindex(type(obj))
            self.generation += 1
            self._changed.notify_all()
        return True

    def delete(self, obj: object) -> bool:
        """Forget ``obj`` (by kind, namespace and name); False for another kind."""
        if not isinstance(obj, _TYPES):
            return False
        with self._lock:
            self._by_kind[type(obj)].pop((obj.metadata.namespace, obj.metadata.name), None)
            self._reindex(type(obj))
            self.generation += 1
            self._changed.notify_all()
        return True

    def wait_for_change(self, generation: int, timeout: float) -> int:
        """Block until :attr:`generation` differs from ``generation`` or ``timeout`` seconds
        (wall time) pass; returns the generation then. What PreBind waits on instead of
        polling (upstream polls its informer caches every second)."""
        with self._changed:
            self._changed.wait_for(lambda: self.generation != generation, timeout=timeout)
            return self.generation

    def persistent_volume_claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """A claim by namespace and name, or ``None``."""
        obj = self._by_kind[PersistentVolumeClaim].get((namespace, name))
        return obj if isinstance(obj, PersistentVolumeClaim) else None

    def persistent_volume(self, name: str) -> PersistentVolume | None:
        """A volume by name, or ``None``."""
        obj = self._by_kind[PersistentVolume].get(("", name))
        return obj if isinstance(obj, PersistentVolume) else None

    def persistent_volumes(self) -> Sequence[PersistentVolume]:
        """Every volume, by name."""
        return self._pvs

    def storage_class(self, name: str) -> StorageClass | None:
        """A StorageClass by name, or ``None``."""
        obj = self._by_kind[StorageClass].get(("", name))
        return obj if isinstance(obj, StorageClass) else None

    def csi_node(self, name: str) -> CSINode | None:
        """The CSINode of node ``name``, or ``None``."""
        obj = self._by_kind[CSINode].get(("", name))
        return obj if isinstance(obj, CSINode) else None

    def csi_driver(self, name: str) -> CSIDriver | None:
        """A CSIDriver by name, or ``None``."""
        obj = self._by_kind[CSIDriver].get(("", name))
        return obj if isinstance(obj, CSIDriver) else None

    def csi_storage_capacities(self) -> Sequence[CSIStorageCapacity]:
        """Every CSIStorageCapacity, by namespace and name."""
        return self._capacities

    def volume_attachments(self) -> Sequence[VolumeAttachment]:
        """Every VolumeAttachment, by name."""
        return self._attachments
