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

    Thread-safe: writers hold a lock; readers take none (a single dict lookup, and each
    namespace's Services are a tuple replaced whole).
    """

    def __init__(self, objects: Iterable[object] = ()) -> None:
        self._lock = threading.Lock()
        self._by_kind: dict[type, dict[tuple[str, str], _Workload]] = {t: {} for t in _TYPES}
        # Services by namespace, in name order: read for every pod, rebuilt per namespace on
        # the (rare) writes.
        self._service_names: dict[str, dict[str, Service]] = {}
        self._services: dict[str, tuple[Service, ...]] = {}
        for obj in objects:
            self.set(obj)

    def copy_state(self, other: WorkloadStore) -> None:
        """Make this (new) store hold what ``other`` holds (a fork's starting point)."""
        with other._lock, self._lock:
            self._by_kind = {kind: dict(objs) for kind, objs in other._by_kind.items()}
            self._service_names = {ns: dict(s) for ns, s in other._service_names.items()}
            self._services = dict(other._services)

    def _index_service(self, svc: Service, *, present: bool) -> None:
        ns, name = svc.metadata.namespace, svc.metadata.name
        names = self._service_names.setdefault(ns, {})
        if present:
            names[name] = svc
        else:
            names.pop(name, None)
        self._services[ns] = tuple(names[n] for n in sorted(names))

    def set(self, obj: object) -> bool:
        """Add or replace ``obj``; False (and nothing stored) for another kind."""
        if not isinstance(obj, _TYPES):
            return False
        with self._lock:
            self._by_kind[type(obj)][(obj.metadata.namespace, obj.metadata.name)] = obj
            if isinstance(obj, Service):
                self._index_service(obj, present=True)
        return True

    def delete(self, obj: object) -> bool:
        """Forget ``obj`` (by kind, namespace and name); False for another kind."""
        if not isinstance(obj, _TYPES):
            return False
        with self._lock:
            self._by_kind[type(obj)].pop((obj.metadata.namespace, obj.metadata.name), None)
            if isinstance(obj, Service):
                self._index_service(obj, present=False)
        return True

    def services(self, namespace: str) -> Sequence[Service]:
        """Every Service of ``namespace``, by name."""
        return self._services.get(namespace, ())

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
