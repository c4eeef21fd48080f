"""The stand-alone helpers a Framework uses when it runs without a scheduler around it.

A :class:`~schedframe.runtime.Framework` built on its own (tests, embedding, ``explain``) still
has to be a complete :class:`~schedframe.framework.Handle`; these stand in for what a
Scheduler would lend it: the cluster's namespaces and PDBs (:class:`ClusterView`), a real
clock, a Binder that refuses every write (:class:`_NoBackend`), an in-memory event recorder
and a nominator (the scheduling queue is the real one).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from schedframe import framework as fw
from schedframe.errors import BackendError
from schedframe.framework import PodInfo
from schedframe.runtime._dra import DRAStore
from schedframe.runtime._object_store import ObjectStore
from schedframe.runtime._storage_lister import StorageStore
from schedframe.runtime._workload_lister import WorkloadStore

if TYPE_CHECKING:
    from schedframe.objects import (
        Namespace,
        ObjectReference,
        Pod,
        PodCondition,
        PodDisruptionBudget,
    )

__all__ = [
    "ClusterView",
    "RecordedEvent",
    "RecordingEventRecorder",
]


# --------------------------------------------------------------------------------------------
# What the framework reads from the cluster besides the snapshot
# --------------------------------------------------------------------------------------------


class ClusterView:
    """Namespaces and PodDisruptionBudgets, as plugins read them through the Handle.

    The scheduler passes a live view backed by its backend; tests pass fixed lists.
    """

    def __init__(
        self,
        namespaces: Iterable[Namespace] = (),
        pdbs: Iterable[PodDisruptionBudget] = (),
        workloads: Iterable[object] = (),
        dra: Iterable[object] = (),
    ) -> None:
        self._namespaces = {ns.metadata.name: ns for ns in namespaces}
        self._pdbs = list(pdbs)
        others = list(workloads)
        #: Services, RCs, ReplicaSets and StatefulSets (``workloads``; other kinds ignored).
        self.workloads = WorkloadStore(others)
        #: PVs, PVCs, StorageClasses and the CSI objects found in ``workloads``.
        self.storage = StorageStore(others)
        dra_objects = list(dra)
        #: DeviceClasses, ResourceSlices, ResourceClaims and templates (``dra``).
        self.dra = DRAStore(dra_objects)
        #: Every object by kind (``Handle.lister``), ``workloads`` and ``dra`` of any kind
        #: included; the scheduler's watch keeps it current.
        self.objects = ObjectStore([*self._namespaces.values(), *self._pdbs, *others, *dra_objects])

    def namespace(self, name: str) -> Namespace | None:
        """A namespace by name."""
        return self._namespaces.get(name)

    def namespaces(self) -> Iterable[Namespace]:
        """Every namespace."""
        return self._namespaces.values()

    def pod_disruption_budgets(self) -> Iterable[PodDisruptionBudget]:
        """Every PodDisruptionBudget."""
        return self._pdbs

    def on_lister_requested(self, kind: str) -> None:
        """A plugin asked for ``kind``'s lister: a live view starts watching it if needed."""


class _RealClock:
    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(max(seconds, 0.0))


class _NoBackend:
    """The Binder of a Framework built without a cluster: every write fails, loudly."""

    def _fail(self) -> None:
        raise BackendError(
            "this Framework has no cluster backend; build it with binder=... or use a Scheduler",
            reason="NoBackend",
            code=503,
        )

    def bind(self, pod: Pod, node_name: str) -> None:
        self._fail()

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        self._fail()

    def delete_pod(self, pod: Pod, *, condition: PodCondition | None = None) -> None:
        self._fail()

    def record_event(
        self,
        regarding: Pod,
        *,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        related: ObjectReference | None = None,
    ) -> None:
        return None


@attrs.frozen
class RecordedEvent:
    """One event recorded by :class:`RecordingEventRecorder`."""

    regarding: str
    event_type: str
    reason: str
    action: str
    note: str


class RecordingEventRecorder:
    """Keeps events in memory (``events``) and forwards them to a Binder, if given."""

    def __init__(self, binder: fw.Binder | None = None) -> None:
        self.events: list[RecordedEvent] = []
        self._binder = binder

    def eventf(
        self,
        regarding: Pod,
        related: object | None,
        event_type: str,
        reason: str,
        action: str,
        note: str,
    ) -> None:
        self.events.append(RecordedEvent(regarding.key, event_type, reason, action, note))
        if self._binder is not None:
            self._binder.record_event(
                regarding,
                event_type=event_type,
                reason=reason,
                action=action,
                note=note,
                related=_object_ref(related),
            )


def _object_ref(obj: object | None) -> ObjectReference | None:
    """The reference to an object an event relates to (``None`` for none, or for a value
    without metadata, which names no object)."""
    from schedframe.objects import ObjectReference

    if obj is None:
        return None
    try:
        return ObjectReference.of(obj)
    except TypeError:
        return None


class _SimpleNominator:
    """A nominator for a Framework used on its own (the scheduler's queue provides the real one).

    As the queue does, it hands out the same list for a node until that node's nominated pods
    change (a change makes a new list), so readers may keep what they derive from a list while
    they are handed the same one; the lists are not to be modified.
    """

    def __init__(self) -> None:
        self._by_node: dict[str, list[PodInfo]] = {}
        self._node_of: dict[str, str] = {}
        self._generation = 0
        self._node_generations: dict[str, int] = {}

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self._by_node.get(node_name, [])

    def nominated_pods_for_nodes(self, node_names: Iterable[str]) -> dict[str, list[PodInfo]]:
        by_node = self._by_node
        return {name: by_node[name] for name in node_names if name in by_node}

    def nominated_node_names(self) -> frozenset[str]:
        return frozenset(self._by_node)  # only nodes with pods are keys

    def nominated_generation(self) -> int:
        return self._generation

    def nominated_generations(self, node_names: Iterable[str]) -> dict[str, int]:
        get = self._node_generations.get
        return {name: get(name, 0) for name in node_names}

    def _changed(self, node_name: str) -> None:
        self._generation += 1
        self._node_generations[node_name] = self._generation

    def add_nominated_pod(self, pod_info: PodInfo, node_name: str) -> None:
        self.delete_nominated_pod_if_exists(pod_info.pod)
        self._by_node[node_name] = [*self._by_node.get(node_name, ()), pod_info]
        self._node_of[pod_info.pod.uid] = node_name
        self._changed(node_name)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        node = self._node_of.pop(pod.uid, None)
        if node is not None:
            self._changed(node)
            kept = [p for p in self._by_node[node] if p.pod.uid != pod.uid]
            if kept:
                self._by_node[node] = kept
            else:
                del self._by_node[node]
