"""The Services, ReplicationControllers, ReplicaSets and StatefulSets plugins read through
the Handle (upstream: those informers' listers), kept by kind, namespace and name."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Final

from schedframe.objects._workloads import ReplicaSet, ReplicationController, Service, StatefulSet

__all__ = ["WORKLOAD_KINDS", "WorkloadStore"]

#: The kinds a :class:`WorkloadStore` keeps (the backends watch them as kube-scheduler does).
WORKLOAD_KINDS: Final = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
_TYPES: Final = (Service, ReplicationController, ReplicaSet, StatefulSet)
_Workload = Service | ReplicationController | ReplicaSet | StatefulSet


class WorkloadStore:
    """A :class:`~schedframe.framework.WorkloadLister` over a set of objects.

    Thread-safe: writers copy the store of one kind, readers take no lock.
    """

    def __init__(self, objects: Iterable[object] = ()) -> None:
        self._lock = threading.Lock()
        self._by_kind: dict[type, dict[tuple[str, str], _Workload]] = {t: {} for t in _TYPES}
        for obj in objects:
            self.set(obj)

    def set(self, obj: object) -> bool:
        """Add or replace ``obj``; False (and nothing stored) for another kind."""
        if not isinstance(obj, _TYPES):
            return False
        key = (obj.metadata.namespace, obj.metadata.name)
        with self._lock:
            self._by_kind[type(obj)] = {**self._by_kind[type(obj)], key: obj}
        return True

    def delete(self, obj: object) -> bool:
        """Forget ``obj`` (by kind, namespace and name); False for another kind."""
        if not isinstance(obj, _TYPES):
            return False
        key = (obj.metadata.namespace, obj.metadata.name)
        with self._lock:
            store = self._by_kind[type(obj)]
            self._by_kind[type(obj)] = {k: v for k, v in store.items() if k != key}
        return True

    def services(self, namespace: str) -> Sequence[Service]:
        """Every Service of ``namespace``, by name."""
        store = self._by_kind[Service]
        return [
            s for (ns, _), s in sorted(store.items()) if ns == namespace and isinstance(s, Service)
        ]

    def replication_controller(self, namespace: str, name: str) -> ReplicationController | None:
        """A ReplicationController, or ``None``."""
        obj = self._by_kind[ReplicationController].get((namespace, name))
        return obj if isinstance(obj, ReplicationController) else None

    def replica_set(self, namespace: str, name: str) -> ReplicaSet | None:
        """A ReplicaSet, or ``None``."""
        obj = self._by_kind[ReplicaSet].get((namespace, name))
        return obj if isinstance(obj, ReplicaSet) else None

    def stateful_set(self, namespace: str, name: str) -> StatefulSet | None:
        """A StatefulSet, or ``None``."""
        obj = self._by_kind[StatefulSet].get((namespace, name))
        return obj if isinstance(obj, StatefulSet) else None
