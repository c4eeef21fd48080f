"""An in-process API server: a versioned object store with watches and binding semantics.

Writes follow kube-apiserver: one global, monotonic resourceVersion stamped on every write;
optimistic concurrency on update; the ``pods/binding`` subresource with the exact conflict
messages of ``pkg/registry/core/pod/storage/storage.go``; status patches that merge conditions
by type; graceful or immediate pod deletion. Watch events are delivered synchronously, in the
writer's thread, before the write returns.

Over 1,000 lines on purpose: it is the API server of every in-memory run, and the parts that
must see each write under the one store lock (resourceVersions, watches, Priority admission,
the storage and resourceclaim controllers' hooks, forks) stay together so that a write and
what follows from it are one step; the controllers' own logic lives in ``_claims`` and
``_storage_controller``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import typing
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final, Protocol, TypeAlias, TypeVar, cast

import attrs

from schedframe._evolve import evolve
from schedframe.backends import _claims
from schedframe.backends._admission import admit_priority, validate_priority_class
from schedframe.backends._protocols import KINDS, Subscription, WatchEvent, WatchEventType
from schedframe.backends._storage_controller import StorageController
from schedframe.errors import BackendError
from schedframe.objects import (
    Namespace,
    Node,
    ObjectReference,
    Pod,
    PodCondition,
    PodDisruptionBudget,
    PodExtendedResourceClaimStatus,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    Workload,
)
from schedframe.objects._custom import CustomObject, custom_kind
from schedframe.objects._resource import (
    DeviceClass,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from schedframe.objects._storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)

if TYPE_CHECKING:
    from schedframe.backends._fork import BackendFork
    from schedframe.framework import Clock

log = logging.getLogger("schedframe.backends.memory")

__all__ = ["OPERATIONS", "Event", "MemoryBackend"]

_Object: TypeAlias = (
    Pod
    | Node
    | Namespace
    | PodDisruptionBudget
    | PriorityClass
    | Service
    | ReplicationController
    | ReplicaSet
    | StatefulSet
    | StorageClass
    | CSINode
    | CSIDriver
    | CSIStorageCapacity
    | PersistentVolume
    | PersistentVolumeClaim
    | VolumeAttachment
    | DeviceClass
    | ResourceSlice
    | ResourceClaim
    | ResourceClaimTemplate
    | Workload
    | CustomObject
)
#: The stored classes, for runtime checks: the members of ``_Object``, written once.
_OBJECT_TYPES: Final = typing.get_args(_Object)
_Key: TypeAlias = tuple[str, str]
_T = TypeVar("_T", bound=_Object)

#: Operations :meth:`MemoryBackend.inject_failure` can make fail.
OPERATIONS: Final = (
    "create",
    "update",
    "apply",
    "delete",
    "get",
    "list",
    "bind",
    "patch_pod_status",
    "delete_pod",
    "record_event",
)

_KIND_OF: Final[dict[type, str]] = {
    Pod: "Pod",
    Node: "Node",
    Namespace: "Namespace",
    PodDisruptionBudget: "PodDisruptionBudget",
    PriorityClass: "PriorityClass",
    Service: "Service",
    ReplicationController: "ReplicationController",
    ReplicaSet: "ReplicaSet",
    StatefulSet: "StatefulSet",
    StorageClass: "StorageClass",
    CSINode: "CSINode",
    CSIDriver: "CSIDriver",
    CSIStorageCapacity: "CSIStorageCapacity",
    PersistentVolume: "PersistentVolume",
    PersistentVolumeClaim: "PersistentVolumeClaim",
    VolumeAttachment: "VolumeAttachment",
    DeviceClass: "DeviceClass",
    ResourceSlice: "ResourceSlice",
    ResourceClaim: "ResourceClaim",
    ResourceClaimTemplate: "ResourceClaimTemplate",
    Workload: "Workload",
}
#: Built-in kinds watched only when a plugin asks for their lister (GenericWorkload's Workload).
_ON_DEMAND: Final = ("Workload",)
#: What the store holds: the watched kinds, PriorityClasses for Priority admission, and the
#: built-in kinds plugins list on demand.
STORED_KINDS: Final = (*KINDS, "PriorityClass", *_ON_DEMAND)
# Qualified resource names, as apimachinery's errors print them.
_RESOURCE: Final = {
    "Pod": "pods",
    "Node": "nodes",
    "Namespace": "namespaces",
    "PodDisruptionBudget": "poddisruptionbudgets.policy",
    "PriorityClass": "priorityclasses.scheduling.k8s.io",
    "Service": "services",
    "ReplicationController": "replicationcontrollers",
    "ReplicaSet": "replicasets.apps",
    "StatefulSet": "statefulsets.apps",
    "StorageClass": "storageclasses.storage.k8s.io",
    "CSINode": "csinodes.storage.k8s.io",
    "CSIDriver": "csidrivers.storage.k8s.io",
    "CSIStorageCapacity": "csistoragecapacities.storage.k8s.io",
    "PersistentVolume": "persistentvolumes",
    "PersistentVolumeClaim": "persistentvolumeclaims",
    "VolumeAttachment": "volumeattachments.storage.k8s.io",
    "DeviceClass": "deviceclasses.resource.k8s.io",
    "ResourceSlice": "resourceslices.resource.k8s.io",
    "ResourceClaim": "resourceclaims.resource.k8s.io",
    "ResourceClaimTemplate": "resourceclaimtemplates.resource.k8s.io",
    "Workload": "workloads.scheduling.k8s.io",
}
_ETCD_PREFIX: Final = {
    "Pod": "/registry/pods",
    "Node": "/registry/minions",
    "Namespace": "/registry/namespaces",
    "PodDisruptionBudget": "/registry/poddisruptionbudgets",
    "PriorityClass": "/registry/priorityclasses",
    "Service": "/registry/services/specs",
    "ReplicationController": "/registry/controllers",
    "ReplicaSet": "/registry/replicasets",
    "StatefulSet": "/registry/statefulsets",
    "StorageClass": "/registry/storageclasses",
    "CSINode": "/registry/csinodes",
    "CSIDriver": "/registry/csidrivers",
    "CSIStorageCapacity": "/registry/csistoragecapacities",
    "PersistentVolume": "/registry/persistentvolumes",
    "PersistentVolumeClaim": "/registry/persistentvolumeclaims",
    "VolumeAttachment": "/registry/volumeattachments",
    "DeviceClass": "/registry/deviceclasses",
    "ResourceSlice": "/registry/resourceslices",
    "ResourceClaim": "/registry/resourceclaims",
    "ResourceClaimTemplate": "/registry/resourceclaimtemplates",
    "Workload": "/registry/workloads",
}
# The kinds whose writes the storage controller reacts to.
_RECONCILED: Final = frozenset({"PersistentVolume", "PersistentVolumeClaim"})
_CLUSTER_SCOPED: Final = frozenset(
    {
        "Node",
        "Namespace",
        "PriorityClass",
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "PersistentVolume",
        "VolumeAttachment",
        "DeviceClass",
        "ResourceSlice",
    }
)
_OPTIMISTIC_LOCK_MSG: Final = (
    "the object has been modified; please apply your changes to the latest version and try again"
)
_DEFAULT_GRACE_SECONDS: Final = 30
_TERMINAL_PHASES: Final = frozenset({"Succeeded", "Failed"})


@attrs.frozen(kw_only=True)
class Event:
    """An events.k8s.io/v1 Event recorded by the scheduler.

    Attributes:
        regarding: ``namespace/name`` of the object the event is about (``name`` for nodes).
        regarding_kind: its kind (``Pod`` ...).
        type: ``Normal`` or ``Warning``.
        reason: e.g. ``Scheduled``, ``FailedScheduling``, ``Preempted``.
        action: e.g. ``Binding``, ``Scheduling``, ``Preempting``.
        note: the human-readable message.
        time: the backend clock when it was recorded (seconds).
        related: ``namespace/name`` (or name) of a related object, if any.
    """

    regarding: str
    regarding_kind: str = "Pod"
    type: str
    reason: str
    action: str
    note: str
    time: float
    related: str | None = None


class _TimerClock(Protocol):
    def now(self) -> float: ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> object: ...


class _WallClock:
    """Wall time, with daemon timers for graceful deletions."""

    def now(self) -> float:
        return time.time()

    def call_later(self, delay: float, callback: Callable[[], None]) -> object:
        timer = threading.Timer(delay, callback)
        timer.daemon = True
        timer.start()
        return timer


class _Subscription:
    __slots__ = ("_backend", "active", "callback", "start_rv")

    def __init__(
        self, backend: MemoryBackend, callback: Callable[[WatchEvent], None], start_rv: int
    ) -> None:
        self._backend = backend
        self.callback = callback
        self.start_rv = start_rv
        self.active = True

    def cancel(self) -> None:
        self.active = False
        self._backend._unsubscribe(self)


@attrs.frozen
class _Failure:
    error: BackendError
    remaining: int


class MemoryBackend:
    """The embedded backend: a real object store with the API server's semantics.

    Args:
        objects: objects to create first, in order (PriorityClasses before all others,
            PersistentVolumeClaims after them): any of :data:`STORED_KINDS`, or a
            :class:`~schedframe.objects.CustomObject` of a declared custom kind (watched like
            the others, replayed before pods); each gets the next resourceVersion.
        clock: where time comes from (deletion and condition timestamps, event times, grace
            periods); wall time by default. Graceful deletion needs ``call_later``.
        graceful_deletion: delete bound pods gracefully, as kube-apiserver does: set
            ``deletionTimestamp`` = now + grace period (``MODIFIED``), and remove the pod when
            the grace period has run out on the clock (``DELETED``), as the kubelet would. By
            default pods are deleted at once.
        storage_controller: play the PersistentVolume controller and a CSI provisioner
            after every PV and PVC write (see :mod:`schedframe.backends._storage_controller`):
            claims get bound and dynamic classes provisioned, as in a real cluster.

    Thread-safe. Watch callbacks run in the thread of the write that caused them, before
    that write returns, one event at a time in resourceVersion order; a callback may write
    to the backend (its events are delivered after the current one). A callback must not
    wait for another thread that is itself writing to the backend. An exception raised by a
    callback is logged and does not stop the others from getting the event, nor fail the
    write: as with an informer's handler, the API call succeeded whatever a watcher did with it
    (a binder that saw its bind "fail" would requeue a pod that is in fact bound).
    """

    def __init__(
        self,
        objects: Iterable[object] = (),
        *,
        clock: Clock | None = None,
        graceful_deletion: bool = False,
        storage_controller: bool = True,
    ) -> None:
        self._clock: Clock = clock if clock is not None else _WallClock()
        if graceful_deletion and not hasattr(self._clock, "call_later"):
            raise TypeError("graceful_deletion needs a clock with call_later(delay, callback)")
        self._graceful = graceful_deletion
        self._lock = threading.Lock()
        self._store: defaultdict[str, dict[_Key, _Object]] = defaultdict(dict)
        self._rv = 0
        self._failures: dict[str, _Failure] = {}
        self._subscribers: list[_Subscription] = []
        self._pending: deque[WatchEvent] = deque()
        self._deliver_lock = threading.Lock()
        self._deliverer: int | None = None
        #: Events recorded through :meth:`record_event`, oldest first.
        self.events: list[Event] = []
        # Pods in their graceful-deletion period: key -> (when it ends, uid, its timer).
        self._finalizing: dict[_Key, tuple[float, str, object]] = {}
        self._storage: StorageController | None = None
        if storage_controller:
            self._storage = StorageController(self._get_locked, self._list_locked, self._put)
        # PriorityClasses first, so that admission finds the classes the pods name.
        # Claims after the rest, so that the storage controller finds their classes and volumes.
        for obj in sorted(objects, key=_creation_order):
            kind = _kind(obj)
            with self._lock:
                self._create(kind, obj, self._now())
        self._drain()  # nobody is subscribed yet: this only empties the queue

    # -- introspection -------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        """The revision of the latest write (0 before any)."""
        with self._lock:
            return self._rv

    def fork(self, *, clock: Clock | None = None) -> BackendFork:
        """A copy-on-write fork of this backend (see :class:`BackendFork`): run pods and
        operations on it, inspect it, then ``commit()`` or ``discard()`` it.

        Args:
            clock: the fork's clock; this backend's clock by default.
        """
        from schedframe.backends._fork import BackendFork

        return BackendFork(self, clock=clock)

    @contextlib.contextmanager
    def _holding_deliveries(self) -> Iterator[None]:
        """No watch event is delivered while inside (writers' events wait, queued), so the
        watchers' state holds still (Scheduler.fork copies it). On the thread delivering (in
        a watch callback) the delivery already waits for the caller."""
        me = threading.get_ident()
        if self._deliverer == me:
            yield
            return
        with self._deliver_lock:
            self._deliverer = me
            try:
                yield
            finally:
                self._deliverer = None

    # -- failure injection ---------------------------------------------------------------------

    def inject_failure(
        self, operation: str, *, times: int = 1, error: BackendError | None = None
    ) -> None:
        """Make the next ``times`` calls of ``operation`` fail before they change anything.

        Args:
            operation: one of :data:`OPERATIONS`.
            times: how many calls fail.
            error: what they raise; by default a 500 ``InternalError``.
        """
        if operation not in OPERATIONS:
            raise ValueError(
                f"unknown operation {operation!r}; expected one of {', '.join(OPERATIONS)}"
            )
        if times < 1:
            raise ValueError("times must be at least 1")
        if error is None:
            error = BackendError(
                f"Internal error occurred: injected failure of {operation}",
                reason="InternalError",
                code=500,
            )
        with self._lock:
            self._failures[operation] = _Failure(error, times)

    def _check_failure(self, operation: str) -> None:
        failure = self._failures.get(operation)
        if failure is None:
            return
        if failure.remaining <= 1:
            del self._failures[operation]
        else:
            self._failures[operation] = _Failure(failure.error, failure.remaining - 1)
        raise failure.error

    # -- store ---------------------------------------------------------------------------------

    def create(self, obj: _T) -> _T:
        """Create ``obj``; returns it as stored (resourceVersion, uid, creation time set).

        A pod goes through the Priority admission plugin first
        (:func:`~schedframe.backends.admit_priority` over the stored PriorityClasses).

        Raises:
            BackendError: 409 ``AlreadyExists`` when an object of that kind and name exists;
                403 ``Forbidden`` when Priority admission rejects a pod.
        """
        kind = _kind(obj)
        with self._lock:
            self._check_failure("create")
            stored = self._create(kind, obj, self._now())
        self._drain()
        return cast("_T", stored)

    def update(self, obj: _T) -> _T:
        """Replace an object (HTTP PUT). A non-empty ``metadata.resourceVersion`` must match
        the stored one; ``uid``, ``creationTimestamp`` and ``deletionTimestamp`` are kept.

        Raises:
            BackendError: 404 ``NotFound``; 409 ``Conflict`` on a stale resourceVersion or a
                different uid.
        """
        kind = _kind(obj)
        with self._lock:
            self._check_failure("update")
            stored = self._update(kind, obj, check_version=True)
        self._drain()
        return cast("_T", stored)

    def apply(self, obj: _T) -> _T:
        """Create ``obj``, or replace the existing object of that name whatever its version."""
        kind = _kind(obj)
        with self._lock:
            self._check_failure("apply")
            if _key(kind, obj) in self._store[kind]:
                stored = self._update(kind, obj, check_version=False)
            else:
                stored = self._create(kind, obj, self._now())
        self._drain()
        return cast("_T", stored)

    def delete(self, obj: _T, *, grace_period_seconds: int | None = None) -> _T:
        """Delete ``obj`` (looked up by kind, namespace and name).

        A bound pod is deleted gracefully when the backend was made with
        ``graceful_deletion`` (``grace_period_seconds`` defaults to the pod's
        ``terminationGracePeriodSeconds``, else 30); ``grace_period_seconds=0`` deletes at
        once. Returns the deleted object, or the pod marked for deletion.

        Raises:
            BackendError: 404 ``NotFound``.
        """
        kind = _kind(obj)
        with self._lock:
            self._check_failure("delete")
            result = self._delete(kind, _key(kind, obj), grace_period_seconds)
        self._drain()
        return cast("_T", result)

    def update_resource_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        """Write a claim's status (allocation, reservedFor, devices), as a PUT of the
        ``resourceclaims/status`` subresource: the stored spec and metadata are kept.

        Raises:
            BackendError: 404 ``NotFound``; 409 ``Conflict`` when the uid differs (the claim
                was deleted and made again).
        """
        with self._lock:
            self._check_failure("update")
            key = _key("ResourceClaim", claim)
            stored = self._store["ResourceClaim"].get(key)
            if not isinstance(stored, ResourceClaim):
                raise _not_found("ResourceClaim", key[1])
            if claim.metadata.uid and claim.metadata.uid != stored.metadata.uid:
                raise _uid_precondition_failed(
                    "ResourceClaim", key, claim.metadata.uid, stored.metadata.uid
                )
            new = evolve(
                stored,
                allocation=claim.allocation,
                reserved_for=claim.reserved_for,
                devices=claim.devices,
            )
            result = stored if new == stored else self._write("ResourceClaim", key, new, stored)
        self._drain()
        assert isinstance(result, ResourceClaim)
        return result

    def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """Write a claim's metadata and spec (DynamicResources adds and removes the
        ``resource.kubernetes.io/delete-protection`` finalizer so), as a PUT of the claim: the
        stored status is kept, the resourceVersion (when set) must match. Removing the last
        finalizer of a deleted claim completes its deletion.

        Raises:
            BackendError: 404 ``NotFound``; 409 ``Conflict`` on a stale resourceVersion or a
                different uid.
        """
        with self._lock:
            self._check_failure("update")
            key = _key("ResourceClaim", claim)
            stored = self._store["ResourceClaim"].get(key)
            if not isinstance(stored, ResourceClaim):
                raise _not_found("ResourceClaim", key[1])
            obj = evolve(
                claim,
                allocation=stored.allocation,
                reserved_for=stored.reserved_for,
                devices=stored.devices,
            )
            result = self._update("ResourceClaim", obj, check_version=True)
        self._drain()
        assert isinstance(result, ResourceClaim)
        return result

    def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """Create ``claim`` (DynamicResources' claim for a pod's DRA-backed extended
        resources), naming it from ``metadata.generateName`` when it has no name: five
        characters of apimachinery's alphabet, derived from the prefix and the owner's uid
        (not random, so that runs are reproducible).

        Raises:
            BackendError: 409 ``AlreadyExists``.
        """
        with self._lock:
            self._check_failure("create")
            if not claim.metadata.name:
                claim = evolve(claim, metadata=evolve(claim.metadata, name=self._generate(claim)))
            stored = self._create("ResourceClaim", claim, self._now())
        self._drain()
        assert isinstance(stored, ResourceClaim)
        return stored

    def _generate(self, claim: ResourceClaim) -> str:
        meta = claim.metadata
        owner = meta.controller_ref
        namespace = meta.namespace or "default"
        for attempt in range(1000):
            name = _claims.generated_name(
                meta.generate_name, f"{owner.uid if owner else ''}/{attempt}"
            )
            if (namespace, name) not in self._store["ResourceClaim"]:
                return name
        raise BackendError(
            f"cannot generate a unique name for prefix {meta.generate_name!r}",
            reason="AlreadyExists",
            code=409,
        )

    def delete_resource_claim(self, claim: ResourceClaim) -> None:
        """Delete ``claim`` (with its uid as a precondition when it has one).

        Raises:
            BackendError: 404 ``NotFound``; 409 ``Conflict`` when the uid differs.
        """
        with self._lock:
            self._check_failure("delete")
            key = _key("ResourceClaim", claim)
            stored = self._store["ResourceClaim"].get(key)
            if stored is None:
                raise _not_found("ResourceClaim", key[1])
            if claim.metadata.uid and claim.metadata.uid != stored.metadata.uid:
                raise _uid_precondition_failed(
                    "ResourceClaim", key, claim.metadata.uid, stored.metadata.uid
                )
            self._delete("ResourceClaim", key, None)
        self._drain()

    def patch_pod_extended_resource_claim_status(
        self, pod: Pod, status: PodExtendedResourceClaimStatus
    ) -> None:
        """PATCH ``pods/{name}/status``: set ``extendedResourceClaimStatus``.

        Raises:
            BackendError: 404 ``NotFound``.
        """
        with self._lock:
            self._check_failure("patch_pod_status")
            key = _key("Pod", pod)
            stored = self._get_pod(key)
            if stored.status.extended_resource_claim_status != status:
                self._write(
                    "Pod", key, stored, stored, status={"extended_resource_claim_status": status}
                )
        self._drain()

    def update_custom_object_status(
        self, obj: CustomObject, status: Mapping[str, object]
    ) -> CustomObject:
        """Write a custom object's status, as a PUT of its ``<plural>/status`` subresource:
        only ``status`` changes, the resourceVersion is bumped and a ``MODIFIED`` event is
        sent (an unchanged status is not written, and returns the stored object).

        Raises:
            BackendError: 404 ``NotFound``; 409 ``Conflict`` on a stale resourceVersion or a
                different uid.
        """
        kind = obj.kind
        with self._lock:
            self._check_failure("update")
            key = _key(kind, obj)
            stored = self._store[kind].get(key)
            if not isinstance(stored, CustomObject):
                raise _not_found(kind, key[1])
            meta = obj.metadata
            if meta.resource_version and meta.resource_version != stored.metadata.resource_version:
                raise BackendError(
                    f"Operation cannot be fulfilled on {_resource(kind)} {_quote(key[1])}: "
                    + _OPTIMISTIC_LOCK_MSG,
                    reason="Conflict",
                    code=409,
                )
            if meta.uid and meta.uid != stored.metadata.uid:
                raise _uid_precondition_failed(kind, key, meta.uid, stored.metadata.uid)
            new = stored.with_status(status)
            result = stored if new == stored else self._write(kind, key, new, stored)
        self._drain()
        assert isinstance(result, CustomObject)
        return result

    def get(self, kind: str, name: str, namespace: str = "") -> object | None:
        """The stored object, or ``None``; pods and budgets default to namespace ``default``."""
        _check_kind(kind)
        if not _cluster_scoped(kind):
            namespace = namespace or "default"
        else:
            namespace = ""
        with self._lock:
            self._check_failure("get")
            return self._store[kind].get((namespace, name))

    def list(self, kind: str) -> list[object]:
        """Every object of ``kind``, ordered by namespace then name (etcd key order)."""
        _check_kind(kind)
        with self._lock:
            self._check_failure("list")
            objects = self._store[kind]
            return [objects[key] for key in sorted(objects)]

    # -- watch ---------------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[WatchEvent], None]) -> Subscription:
        """Replay every current object as ``ADDED`` (in :data:`KINDS` order, pods last), then
        deliver each later change once, in resourceVersion order. See the class docstring for
        the threading contract.

        As kube-scheduler's pod informer, a subscriber never sees Succeeded or Failed pods
        (they hold no resources): a pod that turns terminal is delivered as ``DELETED``.
        :meth:`list` still returns them, as the API server does.
        """
        me = threading.get_ident()
        nested = self._deliverer == me
        if not nested:
            self._deliver_lock.acquire()
            self._deliverer = me
        try:
            with self._lock:
                subscription = _Subscription(self, callback, self._rv)
                replay = [
                    obj
                    for kind in _replay_order(self._store)
                    for _, obj in sorted(self._store[kind].items(), key=lambda item: item[0])
                ]
                self._subscribers.append(subscription)
            for obj in replay:
                if not subscription.active:
                    break
                if _is_terminal(obj):
                    continue
                callback(
                    WatchEvent(
                        type="ADDED",
                        obj=obj,
                        old=None,
                        resource_version=int(obj.metadata.resource_version),
                    )
                )
        finally:
            if not nested:
                self._deliverer = None
                self._deliver_lock.release()
        if not nested:
            self._drain()
        return subscription

    def _unsubscribe(self, subscription: _Subscription) -> None:
        with self._lock:
            if subscription in self._subscribers:
                self._subscribers.remove(subscription)

    def _drain(self) -> None:
        """Deliver pending events, in order, to every subscriber.

        A write made by a callback only queues its event: the loop already running on this
        thread delivers it after the current one, so every subscriber sees every event in
        resourceVersion order. Other writers wait on the delivery lock, so when a write
        returns its event has been delivered, by its own thread or by the one that held it.
        """
        me = threading.get_ident()
        if self._deliverer == me:
            return
        with self._deliver_lock:
            self._deliverer = me
            try:
                while True:
                    with self._lock:
                        if not self._pending:
                            break
                        event = self._pending.popleft()
                        subscribers = tuple(self._subscribers)
                    seen = _as_informer_sees(event)
                    if seen is None:
                        continue
                    event = seen
                    for subscription in subscribers:
                        if subscription.active and event.resource_version > subscription.start_rv:
                            try:
                                subscription.callback(event)
                            except Exception:  # delivered to the others all the same
                                log.exception(
                                    "watch subscriber failed on %s %s", event.type, _describe(event)
                                )
            finally:
                self._deliverer = None

    # -- Binder --------------------------------------------------------------------------------

    def bind(self, pod: Pod, node_name: str) -> None:
        """POST ``pods/{name}/binding``: set ``spec.nodeName`` and ``PodScheduled=True``.

        Also clears ``status.nominatedNodeName`` (``ClearingNominatedNodeNameAfterBinding``,
        on by default upstream). The pod's uid is a precondition, as the Binding the default
        binder posts carries it.

        Raises:
            BackendError: 404 ``pods "p" not found``; 409 ``Conflict``:
                ``Operation cannot be fulfilled on pods/binding "p": pod p is already assigned
                to node "n"`` (or ``... is being deleted, cannot be assigned to a host``, or
                ``... has non-empty .spec.schedulingGates``).
        """
        with self._lock:
            self._check_failure("bind")
            key = _key("Pod", pod)
            stored = self._get_pod(key)
            if pod.uid and pod.uid != stored.uid:
                raise _uid_precondition_failed("Pod", key, pod.uid, stored.uid)
            name = stored.name
            reason = ""
            if stored.deletion_timestamp is not None:
                reason = f"pod {name} is being deleted, cannot be assigned to a host"
            elif stored.spec.node_name:
                reason = f"pod {name} is already assigned to node {_quote(stored.spec.node_name)}"
            elif stored.spec.scheduling_gates:
                reason = f"pod {name} has non-empty .spec.schedulingGates"
            if reason:
                raise BackendError(
                    f"Operation cannot be fulfilled on pods/binding {_quote(name)}: {reason}",
                    reason="Conflict",
                    code=409,
                )
            conditions = _update_condition(
                stored.status.conditions,
                PodCondition(type="PodScheduled", status="True"),
                self._now(),
            )
            self._write(
                "Pod",
                key,
                stored,
                stored,
                node_name=node_name,
                status={"nominated_node_name": "", "conditions": conditions},
            )
        self._drain()

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        """PATCH ``pods/{name}/status`` (strategic merge): replace the condition of the same
        type, and/or set ``nominatedNodeName`` (``""`` clears it).

        A condition without ``last_transition_time`` gets one as ``UpdatePodCondition``
        computes it (now if its status changed, else the old one). A patch that changes
        nothing writes nothing: no new resourceVersion, no event.

        Raises:
            BackendError: 404 ``NotFound``.
        """
        with self._lock:
            self._check_failure("patch_pod_status")
            key = _key("Pod", pod)
            stored = self._get_pod(key)
            self._patch_status(key, stored, condition, nominated_node_name)
        self._drain()

    def delete_pod(self, pod: Pod, *, condition: PodCondition | None = None) -> None:
        """Delete a preemption victim: first patch ``condition`` (``DisruptionTarget``) into
        its status, then delete it (gracefully if the backend does graceful deletion).

        Raises:
            BackendError: 404 ``NotFound``.
        """
        with self._lock:
            self._check_failure("delete_pod")
            key = _key("Pod", pod)
            stored = self._get_pod(key)
            if condition is not None:
                self._patch_status(key, stored, condition, None)
            self._delete("Pod", key, None)
        self._drain()

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
        """Record an Event about ``regarding`` in :attr:`events`."""
        with self._lock:
            self._check_failure("record_event")
            self.events.append(
                Event(
                    regarding=_ref(regarding),
                    regarding_kind=_KIND_OF.get(type(regarding), type(regarding).__name__),
                    type=event_type,
                    reason=reason,
                    action=action,
                    note=note,
                    time=self._clock.now(),
                    related=None if related is None else related.key,
                )
            )

    def eventf(
        self,
        regarding: Pod,
        related: object | None,
        event_type: str,
        reason: str,
        action: str,
        note: str,
    ) -> None:
        """:class:`schedframe.framework.EventRecorder` over :meth:`record_event`."""
        self.record_event(
            regarding,
            event_type=event_type,
            reason=reason,
            action=action,
            note=note,
            related=_reference(related),
        )

    def finalize_deletions(self) -> None:
        """Remove now every pod still in its graceful-deletion period (the kubelets are done)."""
        with self._lock:
            keys = [k for k, p in self._store["Pod"].items() if p.metadata.deletion_timestamp]
            for key in keys:
                self._finalize(key, None)
        self._drain()

    # -- storage -------------------------------------------------------------------------------

    def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        """PUT a PersistentVolume (what VolumeBinding's PreBind writes); see :meth:`update`."""
        return self.update(pv)

    def update_persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
        """PUT a PersistentVolumeClaim (what VolumeBinding's PreBind writes)."""
        return self.update(pvc)

    def inject_provisioning_failure(self, *, times: int = 1) -> None:
        """Make the next ``times`` dynamic provisionings fail as a provisioner signals it:
        the claim's ``volume.kubernetes.io/selected-node`` annotation is removed, and the
        scheduler's PreBind fails with ``provisioning failed for PVC "<name>"``.

        Raises:
            RuntimeError: when the backend was made without its storage controller.
        """
        if self._storage is None:
            raise RuntimeError("the backend was made with storage_controller=False")
        if times < 1:
            raise ValueError("times must be at least 1")
        with self._lock:
            self._storage.failing_provisions = times

    def inject_binding_stall(self, *, times: int = 1) -> None:
        """Make the storage controller leave the next ``times`` volume bindings undone (a PV
        controller that is slow or down): the scheduler's PreBind then waits until its
        ``bindTimeoutSeconds`` and fails with ``binding volumes: context deadline exceeded``.
        The controller binds the claim on the next write of it or its volume.

        Raises:
            RuntimeError: when the backend was made without its storage controller.
        """
        if self._storage is None:
            raise RuntimeError("the backend was made with storage_controller=False")
        if times < 1:
            raise ValueError("times must be at least 1")
        with self._lock:
            self._storage.stalled_bindings = times

    # -- internals (self._lock held) -----------------------------------------------------------

    def _get_locked(self, kind: str, name: str, namespace: str) -> object | None:
        return self._store[kind].get(("" if kind in _CLUSTER_SCOPED else namespace, name))

    def _list_locked(self, kind: str) -> Sequence[object]:
        objects = self._store[kind]
        return [objects[key] for key in sorted(objects)]

    def _put(self, obj: object) -> object:
        """Create or replace ``obj`` for the storage controller (no version check)."""
        kind = _kind(obj)
        if _key(kind, obj) in self._store[kind]:
            return self._update(kind, obj, check_version=False)
        return self._create(kind, obj, self._now())

    def _now(self) -> datetime:
        # API times serialise to whole seconds (RFC 3339), so informers see them truncated.
        return datetime.fromtimestamp(int(self._clock.now()), tz=UTC)

    def _get_pod(self, key: _Key) -> Pod:
        stored = self._store["Pod"].get(key)
        if stored is None:
            raise _not_found("Pod", key[1])
        assert isinstance(stored, Pod)
        return stored

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
        """Store ``obj`` with the next resourceVersion and queue its watch event. The other
        changes (metadata fields; a pod's node name and status fields) go into the same copy
        as the stamp."""
        self._rv += 1
        stamp: dict[str, object] = {"resource_version": str(self._rv)}
        if metadata:
            stamp.update(metadata)
        stamped = _copy(obj, stamp, node_name=node_name, status=status)
        self._store[kind][key] = stamped
        event_type: WatchEventType = "ADDED" if old is None else "MODIFIED"
        self._pending.append(
            WatchEvent(type=event_type, obj=stamped, old=old, resource_version=self._rv)
        )
        # The resourceclaim controller reacts to pods and claim templates.
        if isinstance(stamped, Pod) and _claims.has_claims(stamped):
            _claims.sync_pod(self, stamped)
        elif isinstance(stamped, ResourceClaimTemplate):
            _claims.sync_template(self, stamped)
        return stamped

    def _create(self, kind: str, obj: object, now: datetime) -> _Object:
        assert isinstance(obj, _OBJECT_TYPES)
        classes = [
            pc for pc in self._store["PriorityClass"].values() if isinstance(pc, PriorityClass)
        ]
        if isinstance(obj, Pod):
            obj = admit_priority(obj, classes)
        elif isinstance(obj, PriorityClass):
            validate_priority_class(obj, classes)
        key = _key(kind, obj)
        if key in self._store[kind]:
            raise BackendError(
                f"{_resource(kind)} {_quote(key[1])} already exists",
                reason="AlreadyExists",
                code=409,
            )
        stored = self._write(kind, key, obj, None, metadata=_defaults(obj, kind, now))
        if self._storage is not None and kind in _RECONCILED:
            self._storage.reconcile(stored)
        return stored

    def _update(self, kind: str, obj: object, *, check_version: bool) -> _Object:
        assert isinstance(obj, _OBJECT_TYPES)
        if isinstance(obj, PriorityClass):
            stored_classes = self._store["PriorityClass"].values()
            validate_priority_class(
                obj, [pc for pc in stored_classes if isinstance(pc, PriorityClass)]
            )
        key = _key(kind, obj)
        stored = self._store[kind].get(key)
        if stored is None:
            raise _not_found(kind, key[1])
        meta = obj.metadata
        if (
            check_version
            and meta.resource_version
            and (meta.resource_version != stored.metadata.resource_version)
        ):
            raise BackendError(
                f"Operation cannot be fulfilled on {_resource(kind)} {_quote(key[1])}: "
                + _OPTIMISTIC_LOCK_MSG,
                reason="Conflict",
                code=409,
            )
        if meta.uid and meta.uid != stored.metadata.uid:
            raise _uid_precondition_failed(kind, key, meta.uid, stored.metadata.uid)
        new_meta = evolve(
            meta,
            namespace=key[0],
            uid=stored.metadata.uid,
            creation_timestamp=meta.creation_timestamp or stored.metadata.creation_timestamp,
            deletion_timestamp=stored.metadata.deletion_timestamp,
            resource_version=stored.metadata.resource_version,
        )
        new = evolve(obj, metadata=new_meta)
        if (
            isinstance(new, ResourceClaim)
            and stored.metadata.deletion_timestamp is not None
            and stored.metadata.finalizers
            and not new_meta.finalizers
        ):
            # The last finalizer of a deleted claim is gone: the deletion completes.
            return self._remove(kind, key, new)
        if new == stored:
            # Nothing changed: no write, no event; the storage controller still looks at the
            # object, as its periodic resync would.
            if self._storage is not None and kind in _RECONCILED:
                self._storage.reconcile(stored)
            return stored
        written = self._write(kind, key, new, stored)
        if self._storage is not None and kind in _RECONCILED:
            self._storage.reconcile(written)
        return written

    def _patch_status(
        self,
        key: _Key,
        stored: Pod,
        condition: PodCondition | None,
        nominated_node_name: str | None,
    ) -> Pod:
        status = stored.status
        changes: dict[str, object] = {}
        if condition is not None:
            conditions = _update_condition(status.conditions, condition, self._now())
            if conditions != status.conditions:
                changes["conditions"] = conditions
        if nominated_node_name is not None and nominated_node_name != status.nominated_node_name:
            changes["nominated_node_name"] = nominated_node_name
        if not changes:
            return stored
        new = self._write("Pod", key, stored, stored, status=changes)
        assert isinstance(new, Pod)
        return new

    def _delete(self, kind: str, key: _Key, grace_period_seconds: int | None) -> _Object:
        stored = self._store[kind].get(key)
        if stored is None:
            raise _not_found(kind, key[1])
        if isinstance(stored, Pod):
            grace = self._grace_period(stored, grace_period_seconds)
            if grace > 0:
                if stored.metadata.deletion_timestamp is not None:
                    return stored  # already terminating
                when = self._now() + timedelta(seconds=grace)
                result = self._write(
                    kind, key, stored, stored, metadata={"deletion_timestamp": when}
                )
                uid = stored.uid
                clock: _TimerClock = self._clock  # type: ignore[assignment]
                timer = clock.call_later(grace, lambda: self._finalize_later(key, uid))
                self._finalizing[key] = (clock.now() + grace, uid, timer)
                return result
        if isinstance(stored, ResourceClaim) and stored.metadata.finalizers:
            # Finalizers keep a deleted claim, marked, until they are all removed.
            if stored.metadata.deletion_timestamp is not None:
                return stored
            marked = self._write(
                kind, key, stored, stored, metadata={"deletion_timestamp": self._now()}
            )
            assert isinstance(marked, ResourceClaim)
            _claims.sync_deleted_claim(self, key, marked)
            return self._store[kind].get(key, marked)
        return self._remove(kind, key, stored)

    def _grace_period(self, pod: Pod, requested: int | None) -> int:
        # Pod strategy CheckGracefulDelete: unbound or finished pods go at once.
        grace: int
        if requested is not None:
            grace = requested
        elif not self._graceful:
            return 0
        elif pod.spec.termination_grace_period_seconds is not None:
            grace = pod.spec.termination_grace_period_seconds
        else:
            grace = _DEFAULT_GRACE_SECONDS
        if not pod.spec.node_name or pod.status.phase in ("Failed", "Succeeded"):
            return 0
        if grace > 0 and not hasattr(self._clock, "call_later"):
            return 0
        return grace

    def _remove(self, kind: str, key: _Key, stored: _Object) -> _Object:
        del self._store[kind][key]
        self._rv += 1
        last = _copy(stored, {"resource_version": str(self._rv)})
        self._pending.append(
            WatchEvent(type="DELETED", obj=last, old=stored, resource_version=self._rv)
        )
        if isinstance(stored, Pod) and _claims.has_claims(stored):
            _claims.release_pod(self, stored, delete_owned=True)
        return last

    def _finalize(self, key: _Key, uid: str | None) -> None:
        pending = self._finalizing.get(key)
        if pending is not None and (uid is None or pending[1] == uid):
            del self._finalizing[key]
        stored = self._store["Pod"].get(key)
        if stored is None or stored.metadata.deletion_timestamp is None:
            return
        if uid is not None and stored.metadata.uid != uid:
            return
        self._remove("Pod", key, stored)

    def _finalize_later(self, key: _Key, uid: str) -> None:
        with self._lock:
            self._finalize(key, uid)
        self._drain()


# -- helpers -------------------------------------------------------------------------------------


def _kind(obj: object) -> str:
    if isinstance(obj, CustomObject) and custom_kind(obj.kind) is not None:
        return obj.kind
    kind = _KIND_OF.get(type(obj))
    if kind is None:
        raise TypeError(
            f"cannot store {type(obj).__name__}; expected one of {', '.join(STORED_KINDS)}"
        )
    return kind


def _creation_order(obj: object) -> int:
    if isinstance(obj, PriorityClass):
        return 0
    return 2 if isinstance(obj, PersistentVolumeClaim) else 1


def _cluster_scoped(kind: str) -> bool:
    custom = custom_kind(kind)
    return kind in _CLUSTER_SCOPED if custom is None else not custom.namespaced


def _resource(kind: str) -> str:
    custom = custom_kind(kind)
    return _RESOURCE[kind] if custom is None else custom.resource


def _etcd_prefix(kind: str) -> str:
    custom = custom_kind(kind)
    return _ETCD_PREFIX[kind] if custom is None else f"/registry/{custom.group}/{custom.plural}"


def _replay_order(store: Mapping[str, object]) -> list[str]:
    """The watched kinds, then the custom kinds stored (by name), pods last."""
    custom = sorted(k for k in store if k not in STORED_KINDS)
    on_demand = [k for k in _ON_DEMAND if k in store]
    return [*(k for k in KINDS if k != "Pod"), *on_demand, *custom, "Pod"]


def _is_terminal(obj: object) -> bool:
    return isinstance(obj, Pod) and obj.status.phase in _TERMINAL_PHASES


def _as_informer_sees(event: WatchEvent) -> WatchEvent | None:
    """The event as kube-scheduler's pod informer gets it, or None when it gets nothing.

    Its field selector leaves Succeeded and Failed pods out (upstream ``newPodInformer``): a
    pod that turns terminal is deleted from its view, and a terminal pod is never seen.
    """
    watched = _KIND_OF.get(type(event.obj))
    if (
        watched not in KINDS
        and watched not in _ON_DEMAND
        and not isinstance(event.obj, CustomObject)
    ):
        return None  # PriorityClasses are for admission; the scheduler does not watch them
    if not _is_terminal(event.obj):
        return event
    if event.type == "MODIFIED" and event.old is not None and not _is_terminal(event.old):
        return attrs.evolve(event, type="DELETED")
    return None


def _check_kind(kind: str) -> None:
    if kind not in STORED_KINDS and custom_kind(kind) is None:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(STORED_KINDS)}")


def _key(kind: str, obj: object) -> _Key:
    assert isinstance(obj, _OBJECT_TYPES)
    meta = obj.metadata
    if _cluster_scoped(kind):
        return ("", meta.name)
    return (meta.namespace or "default", meta.name)


def _reference(obj: object | None) -> ObjectReference | None:
    if obj is None:
        return None
    try:
        return ObjectReference.of(obj)
    except TypeError:  # not an object with metadata: nothing to refer to
        return None


def _ref(obj: object) -> str:
    meta = getattr(obj, "metadata", None)
    if meta is None:
        return str(obj)
    return f"{meta.namespace}/{meta.name}" if meta.namespace else str(meta.name)


def _quote(text: str) -> str:
    # Go's %q for the plain names Kubernetes allows.
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _not_found(kind: str, name: str) -> BackendError:
    return BackendError(f"{_resource(kind)} {_quote(name)} not found", reason="NotFound", code=404)


def _uid_precondition_failed(kind: str, key: _Key, want: str, have: str) -> BackendError:
    # storage.NewInvalidObjError, turned into a Conflict by InterpretUpdateError.
    path = "/".join(p for p in (_etcd_prefix(kind), key[0], key[1]) if p)
    return BackendError(
        f"Operation cannot be fulfilled on {_resource(kind)} {_quote(key[1])}: StorageError: "
        f"invalid object, Code: 4, Key: {path}, ResourceVersion: 0, AdditionalErrorMsg: "
        f"Precondition failed: UID in precondition: {want}, UID in object meta: {have}",
        reason="Conflict",
        code=409,
    )


def _defaults(obj: _Object, kind: str, now: datetime) -> dict[str, object]:
    """What the API server fills in on create: namespace, uid, creationTimestamp."""
    meta = obj.metadata
    namespace = "" if _cluster_scoped(kind) else (meta.namespace or "default")
    # Deterministic uids, as the manifest codec gives: "<namespace>/<name>" or "<name>".
    uid = meta.uid or (f"{namespace}/{meta.name}" if namespace else meta.name)
    return {
        "namespace": namespace,
        "uid": uid,
        "creation_timestamp": meta.creation_timestamp or now,
    }


def _copy(
    obj: _Object,
    metadata: Mapping[str, object],
    *,
    node_name: str | None = None,
    status: Mapping[str, object] | None = None,
) -> _Object:
    """A copy with ``metadata`` changes (and a pod's node name and status changes), in one
    copy of each part; a Pod keeps the values derived from its spec."""
    if isinstance(obj, Pod):
        return obj.with_changes(node_name=node_name, metadata=metadata, status=status)
    assert node_name is None and status is None
    return evolve(obj, metadata=evolve(obj.metadata, **metadata))


def _update_condition(
    conditions: tuple[PodCondition, ...], condition: PodCondition, now: datetime
) -> tuple[PodCondition, ...]:
    """Upstream ``podutil.UpdatePodCondition``: replace by type; the transition time moves
    only when the status changes (a time given by the caller is kept)."""
    for index, existing in enumerate(conditions):
        if existing.type == condition.type:
            if condition.last_transition_time is None:
                when = existing.last_transition_time if condition.status == existing.status else now
                condition = evolve(condition, last_transition_time=when)
            if condition == existing:
                return conditions
            return conditions[:index] + (condition,) + conditions[index + 1 :]
    if condition.last_transition_time is None:
        condition = evolve(condition, last_transition_time=now)
    return (*conditions, condition)


def _describe(event: WatchEvent) -> str:
    meta = getattr(event.obj, "metadata", None)
    if meta is None:
        return type(event.obj).__name__
    ns = getattr(meta, "namespace", "")
    return f"{type(event.obj).__name__} {ns + '/' if ns else ''}{meta.name}"
