"""The Kubernetes backend: a real cluster behind the :class:`~schedframe.backends.Backend`
protocol (reflectors for the Lister side, the API server's write endpoints for the Binder).
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, cast
from urllib.parse import quote

import attrs

from schedframe.backends._protocols import KINDS, Subscription, WatchEvent
from schedframe.backends.kubernetes._events import EventSink
from schedframe.backends.kubernetes._reflector import MIN_WATCH_TIMEOUT, Decode, Reflector
from schedframe.backends.kubernetes._transport import (
    ApiError,
    ApiTransport,
    RateLimiter,
    TransportError,
)
from schedframe.errors import BackendError
from schedframe.objects import (
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodCondition,
    PodExtendedResourceClaimStatus,
    ResourceClaim,
    from_dict,
    to_dict,
)
from schedframe.objects._codec import server_decoder
from schedframe.objects._codec_resource import extended_resource_claim_status_out
from schedframe.objects._custom import CustomKind, CustomObject, custom_kind

if TYPE_CHECKING:
    from schedframe.config import KubeSchedulerConfiguration

__all__ = ["POD_FIELD_SELECTOR", "KubernetesBackend"]

log = logging.getLogger("schedframe.backends.kubernetes")

#: Upstream ``newPodInformer``: finished pods hold no resources and are never scheduled.
POD_FIELD_SELECTOR: Final = "status.phase!=Succeeded,status.phase!=Failed"

# Objects as the API server serves them: it has checked fields and validated them, possibly
# for a newer API than this library knows (kube-scheduler's informers decode so too). Items of
# a list response carry no kind; the collection says what they are.
_COLLECTIONS: Final[dict[str, tuple[str, Decode]]] = {
    "Namespace": ("/api/v1/namespaces", server_decoder("Namespace")),
    "Node": ("/api/v1/nodes", server_decoder("Node")),
    "PodDisruptionBudget": (
        "/apis/policy/v1/poddisruptionbudgets",
        server_decoder("PodDisruptionBudget"),
    ),
    # What default spreading reads (kube-scheduler's informer factory watches them too).
    "Service": ("/api/v1/services", server_decoder("Service")),
    "ReplicationController": (
        "/api/v1/replicationcontrollers",
        server_decoder("ReplicationController"),
    ),
    "ReplicaSet": ("/apis/apps/v1/replicasets", server_decoder("ReplicaSet")),
    "StatefulSet": ("/apis/apps/v1/statefulsets", server_decoder("StatefulSet")),
    # What the volume plugins read (kube-scheduler's storage informers).
    "StorageClass": ("/apis/storage.k8s.io/v1/storageclasses", server_decoder("StorageClass")),
    "CSINode": ("/apis/storage.k8s.io/v1/csinodes", server_decoder("CSINode")),
    "CSIDriver": ("/apis/storage.k8s.io/v1/csidrivers", server_decoder("CSIDriver")),
    "CSIStorageCapacity": (
        "/apis/storage.k8s.io/v1/csistoragecapacities",
        server_decoder("CSIStorageCapacity"),
    ),
    "PersistentVolume": ("/api/v1/persistentvolumes", server_decoder("PersistentVolume")),
    "PersistentVolumeClaim": (
        "/api/v1/persistentvolumeclaims",
        server_decoder("PersistentVolumeClaim"),
    ),
    "VolumeAttachment": (
        "/apis/storage.k8s.io/v1/volumeattachments",
        server_decoder("VolumeAttachment"),
    ),
    # What DynamicResources reads.
    "DeviceClass": ("/apis/resource.k8s.io/v1/deviceclasses", server_decoder("DeviceClass")),
    "ResourceSlice": (
        "/apis/resource.k8s.io/v1/resourceslices",
        server_decoder("ResourceSlice"),
    ),
    "ResourceClaim": (
        "/apis/resource.k8s.io/v1/resourceclaims",
        server_decoder("ResourceClaim"),
    ),
    "ResourceClaimTemplate": (
        "/apis/resource.k8s.io/v1/resourceclaimtemplates",
        server_decoder("ResourceClaimTemplate"),
    ),
    "Pod": ("/api/v1/pods", server_decoder("Pod")),
}
_CLUSTER_SCOPED: Final = frozenset(
    {
        "Namespace",
        "Node",
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "PersistentVolume",
        "VolumeAttachment",
    }
)
# The volumes and claims VolumeBinding's PreBind writes, decoded as the watch decodes them.
_DECODE_PV: Final = server_decoder("PersistentVolume")
_DECODE_PVC: Final = server_decoder("PersistentVolumeClaim")
# Built-in kinds watched only once a plugin asks for their lister (upstream registers the
# Workload informer only with GenericWorkload on; GangScheduling asks for it).
_ON_DEMAND: Final[dict[str, tuple[str, Decode]]] = {
    "Workload": (
        "/apis/scheduling.k8s.io/v1alpha1/workloads",
        server_decoder("Workload"),
    ),
}
#: No client-side limit: writes behind the fence took their token before checking it.
_NO_LIMIT: Final = RateLimiter(0.0, 1)
#: ``retry.DefaultBackoff`` (client-go): 4 steps, 10 ms, factor 5, jitter 0.1.
_PATCH_STEPS: Final = 4
_PATCH_DELAY: Final = 0.010
_PATCH_FACTOR: Final = 5.0
_PATCH_JITTER: Final = 0.1


def _custom_collection(kind: str, declared: CustomKind) -> tuple[str, Decode]:
    """The collection path of a declared custom kind, and how its objects decode."""
    prefix = f"/apis/{declared.group}" if declared.group else "/api"
    api_version = declared.api_version

    def decode(d: Mapping[str, Any]) -> object:
        # As the server serves it: no unknown-field check, no create-time validation.
        return from_dict({"apiVersion": api_version, **d, "kind": kind}, validate="ignore")

    return f"{prefix}/{declared.version}/{declared.plural}", decode


def _rfc3339(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod_path(pod: Pod, suffix: str = "") -> str:
    namespace = quote(pod.namespace or "default", safe="")
    return f"/api/v1/namespaces/{namespace}/pods/{quote(pod.name, safe='')}{suffix}"


def _status_retryable(exc: Exception) -> bool:
    """Upstream ``util.Retryable``: InternalError, ServiceUnavailable, connection refused."""
    if isinstance(exc, ApiError):
        return exc.reason in ("InternalError", "ServiceUnavailable") or exc.code == 503
    if isinstance(exc, TransportError):
        return not exc.maybe_sent
    return False


def _update_condition(
    conditions: tuple[PodCondition, ...], condition: PodCondition, now: datetime
) -> tuple[tuple[PodCondition, ...], PodCondition | None, PodCondition | None]:
    """Upstream ``UpdatePodCondition``: the new conditions, the condition as written (``None``
    when nothing changes) and the one it replaces."""
    for index, existing in enumerate(conditions):
        if existing.type == condition.type:
            if condition.last_transition_time is None:
                when = existing.last_transition_time if condition.status == existing.status else now
                condition = PodCondition(
                    type=condition.type,
                    status=condition.status,
                    reason=condition.reason,
                    message=condition.message,
                    last_transition_time=when,
                )
            if condition == existing:
                return conditions, None, existing
            return conditions[:index] + (condition,) + conditions[index + 1 :], condition, existing
    if condition.last_transition_time is None:
        condition = PodCondition(
            type=condition.type,
            status=condition.status,
            reason=condition.reason,
            message=condition.message,
            last_transition_time=now,
        )
    return (*conditions, condition), condition, None


def _condition_patch(new: PodCondition, old: PodCondition | None) -> dict[str, Any]:
    """The condition element of a two-way strategic merge patch (changed fields; ``null``
    for fields that became empty)."""
    out: dict[str, Any] = {"type": new.type}
    fields: dict[str, object] = {
        "status": new.status,
        "reason": new.reason,
        "message": new.message,
        "lastTransitionTime": _rfc3339(new.last_transition_time)
        if new.last_transition_time is not None
        else "",
    }
    previous: dict[str, object] = {}
    if old is not None:
        previous = {
            "status": old.status,
            "reason": old.reason,
            "message": old.message,
            "lastTransitionTime": _rfc3339(old.last_transition_time)
            if old.last_transition_time is not None
            else "",
        }
    for name, value in fields.items():
        if value == previous.get(name, ""):
            continue
        out[name] = value if value else None
    return out


class _Subscription:
    __slots__ = ("_backend", "active", "callback")

    def __init__(self, backend: KubernetesBackend, callback: Callable[[WatchEvent], None]) -> None:
        self._backend = backend
        self.callback = callback
        self.active = True

    def cancel(self) -> None:
        self.active = False
        self._backend._unsubscribe(self)


class KubernetesBackend:
    """A real cluster as a schedframe :class:`~schedframe.backends.Backend`.

    The Lister side is one :class:`Reflector` per kind of :data:`~schedframe.backends.KINDS`
    (namespaces, nodes, PodDisruptionBudgets, the Services, ReplicationControllers,
    ReplicaSets and StatefulSets default spreading reads, and pods other than Succeeded/Failed
    ones), each keeping a local store
    that :meth:`list` reads and :meth:`subscribe` streams, exactly like
    :class:`~schedframe.backends.MemoryBackend`. The Binder side calls the API server:
    ``pods/{name}/binding``, ``pods/{name}/status`` (strategic merge), pod deletion and
    events.k8s.io/v1 Events.

    Build one with :meth:`from_kubeconfig`, :meth:`in_cluster` or :meth:`from_config`, then
    :meth:`start` it (the first list of every kind, then the watches)::

        backend = KubernetesBackend.from_kubeconfig("~/.kube/config")
        backend.start()
        sched = Scheduler.from_config("config.yaml", backend)
        sched.run()

    Args:
        transport: the API connection.
        reporting_controller: ``reportingController`` of Events; ``None`` uses the regarding
            pod's ``schedulerName`` (kube-scheduler reports as the profile's scheduler name).
        reporting_instance: the host part of ``reportingInstance`` (the host name by default).
        event_qps: events written per second (client-side token bucket); 0 disables.
        event_burst: burst of that bucket.
        resync_period: seconds between resyncs (every stored object re-delivered as
            ``MODIFIED`` with ``old`` equal to it); 0 disables, as kube-scheduler's informers.
        min_watch_timeout: watches ask for between this and twice this many seconds.
        backoff: (initial, cap) seconds of the reflectors' error backoff.
        bind_attempts: attempts of a binding that fails with 429, 5xx or a transport error.
        pod_field_selector: the pod reflector's field selector.

    Thread-safe. Watch callbacks run on reflector threads, one event at a time across all
    kinds (a subscriber never sees two events at once); a callback must not wait for another
    thread that is itself delivering events.
    """

    def __init__(
        self,
        transport: ApiTransport,
        *,
        reporting_controller: str | None = None,
        reporting_instance: str | None = None,
        event_qps: float = 50.0,
        event_burst: int = 100,
        resync_period: float = 0.0,
        min_watch_timeout: float = MIN_WATCH_TIMEOUT,
        backoff: tuple[float, float] = (0.8, 30.0),
        bind_attempts: int = 3,
        pod_field_selector: str = POD_FIELD_SELECTOR,
    ) -> None:
        if bind_attempts < 1:
            raise ValueError("bind_attempts must be at least 1")
        self.transport = transport
        self._lock = threading.RLock()
        self._subscribers: list[_Subscription] = []
        self._reporting_controller = reporting_controller
        self._bind_attempts = bind_attempts
        self._resync_period = resync_period
        self._stop = threading.Event()
        self._started = False
        self._resync_thread: threading.Thread | None = None
        self.reflectors: dict[str, Reflector] = {}
        self._reflector_options: dict[str, Any] = {
            "min_watch_timeout": min_watch_timeout,
            "backoff": backoff,
        }
        self._unwatchable: set[str] = set()
        for kind in KINDS:
            path, decode = _COLLECTIONS[kind]
            self.reflectors[kind] = Reflector(
                transport,
                kind=kind,
                path=path,
                decode=decode,
                deliver=self._deliver,
                lock=self._lock,
                field_selector=pod_field_selector if kind == "Pod" else "",
                min_watch_timeout=min_watch_timeout,
                backoff=backoff,
            )
        self.event_sink = EventSink(
            transport, reporting_instance=reporting_instance, qps=event_qps, burst=event_burst
        )
        #: Binding outcomes: ``bound``, ``conflict``, ``error``, ``retried`` (and ``fenced``:
        #: not sent, the fence being closed).
        self.bind_counts: dict[str, int] = {"bound": 0, "conflict": 0, "error": 0, "retried": 0}
        #: Leadership: while it answers ``False`` no write is sent (binding, status, deletion,
        #: event); checked right before each request, after the client-side rate limiter.
        self.fence: Callable[[], bool] | None = None
        self._counts_lock = threading.Lock()

    # -- construction --------------------------------------------------------------------------

    @classmethod
    def from_kubeconfig(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        context: str | None = None,
        qps: float = 50.0,
        burst: int = 100,
        **kwargs: Any,
    ) -> KubernetesBackend:
        """From a kubeconfig file (``None``: ``$KUBECONFIG``, then ``~/.kube/config``).

        ``kwargs`` go to the constructor.
        """
        transport = ApiTransport.from_kubeconfig(path, context=context, qps=qps, burst=burst)
        kwargs.setdefault("event_qps", qps)
        kwargs.setdefault("event_burst", burst)
        return cls(transport, **kwargs)

    @classmethod
    def in_cluster(cls, *, qps: float = 50.0, burst: int = 100, **kwargs: Any) -> KubernetesBackend:
        """From the pod's service account."""
        transport = ApiTransport.in_cluster(qps=qps, burst=burst)
        kwargs.setdefault("event_qps", qps)
        kwargs.setdefault("event_burst", burst)
        return cls(transport, **kwargs)

    @classmethod
    def from_config(
        cls,
        config: KubeSchedulerConfiguration,
        *,
        kubeconfig: str | os.PathLike[str] | None = None,
        context: str | None = None,
        **kwargs: Any,
    ) -> KubernetesBackend:
        """As kube-scheduler connects: ``kubeconfig`` if given, else
        ``clientConnection.kubeconfig``, else in-cluster, else the default kubeconfig; with
        ``clientConnection.qps``/``burst``. A single profile's scheduler name reports Events.
        """
        conn = config.client_connection
        transport = ApiTransport.from_environment(
            kubeconfig or conn.kubeconfig or None, context=context, qps=conn.qps, burst=conn.burst
        )
        if len(config.profiles) == 1:
            kwargs.setdefault("reporting_controller", config.profiles[0].scheduler_name)
        kwargs.setdefault("event_qps", conn.qps)
        kwargs.setdefault("event_burst", conn.burst)
        return cls(transport, **kwargs)

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self, timeout: float | None = 60.0, *, stop: threading.Event | None = None) -> None:
        """List every kind (in :data:`KINDS` order, pods last), deliver them, then start
        the watches. Blocks until the first lists are done (client-go ``WaitForCacheSync``).

        Args:
            timeout: seconds to keep retrying failed lists.
            stop: abandons the retries when set (e.g. by a signal handler).

        Raises:
            BackendError: the lists did not succeed within ``timeout`` seconds, or ``stop``
                was set first.
        """
        if self._started:
            return
        deadline = None if timeout is None else time.monotonic() + timeout
        waiter = stop if stop is not None else self._stop
        fetched: dict[str, tuple[Any, str]] = {}
        failed: dict[str, BackendError] = {}

        def fetch(kind: str) -> None:
            reflector = self.reflectors[kind]
            delay = 0.1
            while True:
                try:
                    fetched[kind] = reflector.fetch_list()
                    return
                except (ApiError, TransportError) as exc:
                    if deadline is not None and time.monotonic() + delay > deadline:
                        failed[kind] = BackendError(
                            f"cannot list {kind} objects from {self.transport.host}: {exc}",
                            reason=getattr(exc, "reason", "ServiceUnavailable"),
                            code=getattr(exc, "code", 503),
                        )
                        return
                    log.warning("listing %s failed (will retry): %s", kind, exc)
                    if waiter.wait(delay) or self._stop.is_set():
                        failed[kind] = BackendError(
                            f"stopped before {kind} objects could be listed",
                            reason="ServiceUnavailable",
                            code=503,
                        )
                        return
                    delay = min(delay * 2, 5.0)

        # Every kind is listed at once (informers start together, WaitForCacheSync waits for
        # all), then the lists are applied in the KINDS order subscribers rely on.
        kinds = [kind for kind in self._kinds() if not self.reflectors[kind].has_synced]
        listers = [
            threading.Thread(
                target=fetch, args=(kind,), name=f"schedframe-list-{kind}", daemon=True
            )
            for kind in kinds
        ]
        for thread in listers:
            thread.start()
        for thread in listers:
            thread.join()
        for kind in kinds:
            if kind in failed:
                raise failed[kind]
        for kind in kinds:
            self.reflectors[kind].apply_list(*fetched[kind])
        self._started = True
        for kind in self._kinds():
            self.reflectors[kind].start()
        self.event_sink.start()
        if self._resync_period > 0:
            self._resync_thread = threading.Thread(
                target=self._resync_loop, name="schedframe-resync", daemon=True
            )
            self._resync_thread.start()

    def close(self, *, flush: bool = True) -> None:
        """Stop the watches, flush queued events (drop them when ``flush`` is false: a
        replica that lost its Lease writes nothing more), close connections (idempotent)."""
        if self._stop.is_set():
            return
        self._stop.set()
        for reflector in self.reflectors.values():
            reflector.stop(timeout=1.0 if flush else 0.1)
        self.event_sink.close(flush=flush)
        if self._resync_thread is not None:
            self._resync_thread.join(5)
        self.transport.close()

    stop = close

    def __enter__(self) -> KubernetesBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _resync_loop(self) -> None:
        while not self._stop.wait(self._resync_period):
            for kind in self._kinds():
                self.reflectors[kind].resync()

    def _kinds(self) -> list[str]:
        """The watched kinds in replay order: :data:`KINDS`, custom kinds before pods."""
        custom = [k for k in self.reflectors if k not in KINDS]
        return [*(k for k in KINDS if k != "Pod"), *custom, "Pod"]

    def watch_kind(self, kind: str) -> None:
        """Watch a declared custom kind, or a built-in kind watched on demand (``Workload``,
        at ``/apis/scheduling.k8s.io/v1alpha1/workloads``), too (``Handle.lister`` asks, from
        plugin construction).

        The first call starts a reflector on ``/apis/<group>/<version>/<plural>``: at once
        (listing before it returns) when the backend is started, else with the other kinds at
        :meth:`start`. The scheduler's identity then needs RBAC ``get``, ``list`` and
        ``watch`` on that resource. A kind that is neither watched nor declared is logged once
        as an error, and its lister stays empty.

        Raises:
            BackendError: the first list of a started backend failed.
        """
        with self._lock:
            if kind in self.reflectors or kind in self._unwatchable:
                return
            built_in = _ON_DEMAND.get(kind)
            declared = custom_kind(kind)
            if built_in is not None:
                path, decode = built_in
                _, _, group, _, plural = path.split("/")
                resource = f"{plural}.{group}"
            elif declared is None:
                self._unwatchable.add(kind)
                log.error(
                    "a plugin asked for a lister of kind %r, which is neither watched nor "
                    "declared (declare_custom_kind or its CustomResourceDefinition); "
                    "its lister stays empty",
                    kind,
                )
                return
            else:
                path, decode = _custom_collection(kind, declared)
                resource = declared.resource
            reflector = Reflector(
                self.transport,
                kind=kind,
                path=path,
                decode=decode,
                deliver=self._deliver,
                lock=self._lock,
                **self._reflector_options,
            )
            self.reflectors[kind] = reflector
            if not self._started:
                return
            try:
                reflector.list_and_replace()
            except (ApiError, TransportError) as exc:
                del self.reflectors[kind]
                raise BackendError(
                    f"cannot list {resource} from {self.transport.host}: {exc}",
                    reason=getattr(exc, "reason", "ServiceUnavailable"),
                    code=getattr(exc, "code", 503),
                ) from None
            reflector.start()

    # -- introspection -------------------------------------------------------------------------

    @property
    def has_synced(self) -> bool:
        """Whether every kind has been listed once."""
        return all(r.has_synced for r in self.reflectors.values())

    def healthy(self) -> bool:
        """Started, synced, and no reflector stopped."""
        return (
            self._started
            and not self._stop.is_set()
            and self.has_synced
            and not any(r.stopped for r in self.reflectors.values())
        )

    def resource_version(self, kind: str) -> str:
        """The revision the ``kind`` store is current to."""
        return self.reflectors[kind].last_sync_resource_version

    # -- Lister --------------------------------------------------------------------------------

    def list(self, kind: str) -> list[object]:
        """Every stored object of ``kind``, ordered by namespace then name (the informer's
        lister: what the watch has delivered so far)."""
        reflector = self.reflectors.get(kind)
        if reflector is None:
            raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
        return reflector.objects()  # lock-free: callers may hold locks event handlers take

    def get(self, kind: str, name: str, namespace: str = "") -> object | None:
        """The stored object, or ``None``; namespaced kinds default to namespace ``default``."""
        reflector = self.reflectors.get(kind)
        if reflector is None:
            raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
        if kind not in _CLUSTER_SCOPED:
            namespace = namespace or "default"
        else:
            namespace = ""
        return reflector.get(namespace, name)

    def subscribe(self, callback: Callable[[WatchEvent], None]) -> Subscription:
        """Replay every stored object as ``ADDED`` (in :data:`KINDS` order, pods last), then
        deliver each later change once, in the order the reflectors applied them."""
        with self._lock:
            subscription = _Subscription(self, callback)
            for kind in self._kinds():
                for obj in self.reflectors[kind].objects():
                    if not subscription.active:
                        break
                    rv = int(getattr(getattr(obj, "metadata", None), "resource_version", 0) or 0)
                    try:
                        callback(WatchEvent(type="ADDED", obj=obj, old=None, resource_version=rv))
                    except Exception:
                        log.exception("a subscriber failed on the replay of %s", kind)
            if subscription.active:
                self._subscribers.append(subscription)
        return subscription

    def _unsubscribe(self, subscription: _Subscription) -> None:
        with self._lock:
            if subscription in self._subscribers:
                self._subscribers.remove(subscription)

    def _deliver(self, event: WatchEvent) -> None:
        # Under self._lock (the reflector holds it).
        for subscription in tuple(self._subscribers):
            if subscription.active:
                try:
                    subscription.callback(event)
                except Exception:  # delivered to the others all the same
                    log.exception("a subscriber failed on a %s event", event.type)

    # -- Binder --------------------------------------------------------------------------------

    def _fenced(self) -> bool:
        fence = self.fence
        if fence is None:
            return False
        try:
            return not fence()
        except Exception:
            log.exception("the leadership fence failed; treating it as lost")
            return True

    def _send_write(self, method: str, path: str, **kwargs: Any) -> Any:
        """A write behind the fence: the rate limiter first, then the fence, then the request
        (a binding that waited for a token is not sent once the Lease is lost)."""
        self.transport.limiter.wait()
        if self._fenced():
            raise BackendError(
                f"{method} {path} not sent: not the leader", reason="LeaderElectionLost", code=0
            )
        return self.transport.request(method, path, limiter=_NO_LIMIT, **kwargs)

    def _count(self, outcome: str) -> None:
        with self._counts_lock:
            self.bind_counts[outcome] = self.bind_counts.get(outcome, 0) + 1

    def update_resource_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        """PUT ``resourceclaims/{name}/status`` (DynamicResources' allocation, reservedFor and
        deallocation), with the claim's resourceVersion as the optimistic-concurrency check,
        as upstream's ``UpdateStatus``.

        Raises:
            BackendError: 409 ``Conflict`` (a stale resourceVersion), 404 ``NotFound``, or a
                transport failure.
        """
        namespace = quote(claim.namespace or "default", safe="")
        name = quote(claim.name, safe="")
        path = f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{name}/status"
        try:
            body = self.transport.request("PUT", path, body=to_dict(claim))
        except (ApiError, TransportError) as exc:
            raise exc.to_backend_error() from None
        stored = server_decoder("ResourceClaim")({**body, "kind": "ResourceClaim"})
        assert isinstance(stored, ResourceClaim)
        return stored

    def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """PUT ``resourceclaims/{name}`` (upstream's ``Update`` in DynamicResources: adding the
        ``resource.kubernetes.io/delete-protection`` finalizer before the allocation is
        written, removing it before a claim is deleted), with the claim's resourceVersion as
        the optimistic-concurrency check, behind the leadership fence. The API server keeps
        the stored status. Needs RBAC ``update`` on ``resourceclaims``.

        Raises:
            BackendError: 409 ``Conflict`` (a stale resourceVersion), 404 ``NotFound``, a
                transport failure, or ``LeaderElectionLost``.
        """
        namespace = quote(claim.namespace or "default", safe="")
        name = quote(claim.name, safe="")
        path = f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{name}"
        try:
            body = self._send_write("PUT", path, body=to_dict(claim))
        except (ApiError, TransportError) as exc:
            raise exc.to_backend_error() from None
        stored = server_decoder("ResourceClaim")({**body, "kind": "ResourceClaim"})
        assert isinstance(stored, ResourceClaim)
        return stored

    def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """POST ``resourceclaims`` (DynamicResources' claim for a pod's DRA-backed extended
        resources; the API server names it from ``generateName``), behind the leadership
        fence. Needs RBAC ``create`` on ``resourceclaims``.

        Raises:
            BackendError: the API server's error, a transport failure, or
                ``LeaderElectionLost``.
        """
        namespace = quote(claim.namespace or "default", safe="")
        path = f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims"
        body = to_dict(claim)
        body.pop("status", None)
        try:
            stored = self._send_write("POST", path, body=body)
        except (ApiError, TransportError) as exc:
            raise exc.to_backend_error() from None
        result = server_decoder("ResourceClaim")({**stored, "kind": "ResourceClaim"})
        assert isinstance(result, ResourceClaim)
        return result

    def delete_resource_claim(self, claim: ResourceClaim) -> None:
        """DELETE ``resourceclaims/{name}`` with the claim's uid as a precondition, behind the
        leadership fence.

        Raises:
            BackendError: 404 ``NotFound``, 409 ``Conflict``, a transport failure, or
                ``LeaderElectionLost``.
        """
        namespace = quote(claim.namespace or "default", safe="")
        name = quote(claim.name, safe="")
        path = f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{name}"
        body: dict[str, object] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if claim.metadata.uid:
            body["preconditions"] = {"uid": claim.metadata.uid}
        try:
            self._send_write("DELETE", path, body=body)
        except (ApiError, TransportError) as exc:
            raise exc.to_backend_error() from None

    def patch_pod_extended_resource_claim_status(
        self, pod: Pod, status: PodExtendedResourceClaimStatus
    ) -> None:
        """PATCH ``pods/{name}/status``: ``extendedResourceClaimStatus`` (upstream's
        ``PatchPodStatus`` in DynamicResources' PreBind); nothing is sent when unchanged.

        Raises:
            BackendError: 404 ``NotFound``, or the failure once retries run out.
        """
        if pod.status.extended_resource_claim_status == status:
            return
        new_status = attrs.evolve(pod.status, extended_resource_claim_status=status)
        self._patch_status(
            pod, {"extendedResourceClaimStatus": extended_resource_claim_status_out(new_status)}
        )

    def update_custom_object_status(
        self, obj: CustomObject, status: Mapping[str, object]
    ) -> CustomObject:
        """PUT ``<plural>/{name}/status`` of a declared custom kind, behind the leadership
        fence, with the object's resourceVersion as the optimistic-concurrency check (the
        ``UpdateStatus`` of a generated client). Needs RBAC ``update`` on ``<plural>/status``.

        Raises:
            BackendError: 409 ``Conflict`` (a stale resourceVersion), 404 ``NotFound``, an
                undeclared kind, a transport failure, or ``LeaderElectionLost``.
        """
        declared = custom_kind(obj.kind)
        if declared is None:
            raise BackendError(
                f"cannot write the status of kind {obj.kind!r}: it is not a declared custom kind",
                reason="BadRequest",
                code=0,
            )
        collection, decode = _custom_collection(obj.kind, declared)
        name = quote(obj.metadata.name, safe="")
        if declared.namespaced:
            namespace = quote(obj.metadata.namespace or "default", safe="")
            head, plural = collection.rsplit("/", 1)
            path = f"{head}/namespaces/{namespace}/{plural}/{name}/status"
        else:
            path = f"{collection}/{name}/status"
        body = to_dict(obj.with_status(status))
        try:
            stored = self._send_write("PUT", path, body=body)
        except (ApiError, TransportError) as exc:
            raise exc.to_backend_error() from None
        result = decode(stored)
        assert isinstance(result, CustomObject)
        return result

    def bind(self, pod: Pod, node_name: str) -> None:
        """POST ``pods/{name}/binding`` (upstream ``DefaultBinder``), with the pod's uid as a
        precondition.

        A 429, a 5xx or a transport failure is retried (``bind_attempts`` in all, honouring
        ``Retry-After``). The API server never binds a bound pod, so a retry cannot bind twice;
        and when an earlier attempt may have gone through, a ``409 ... is already assigned to
        node "<this node>"`` means it did, and counts as success.

        Raises:
            BackendError: 409 ``Conflict`` (already bound elsewhere, being deleted, gated, or a
                different uid), 404 ``NotFound``, or the last failure once attempts run out.
        """
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace or "default", "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        path = _pod_path(pod, "/binding")
        ambiguous = False
        last: BackendError | None = None
        for attempt in range(1, self._bind_attempts + 1):
            try:
                self._send_write("POST", path, body=body)
            except BackendError:
                self._count("fenced")
                raise
            except ApiError as exc:
                if exc.code == 409:
                    mine = f'is already assigned to node "{node_name}"'
                    if ambiguous and exc.message.endswith(mine):
                        log.info("pod %s was bound by an earlier attempt", pod.key)
                        self._count("bound")
                        return
                    self._count("conflict")
                    raise exc.to_backend_error() from None
                if exc.code != 429 and exc.code < 500:
                    self._count("error")
                    raise exc.to_backend_error() from None
                ambiguous = ambiguous or exc.code >= 500
                last = exc.to_backend_error()
                delay = exc.retry_after if exc.retry_after is not None else 0.1 * attempt
            except TransportError as exc:
                ambiguous = ambiguous or exc.maybe_sent
                last = exc.to_backend_error()
                delay = 0.1 * attempt
            else:
                self._count("bound")
                return
            if attempt < self._bind_attempts:
                self._count("retried")
                log.info("binding %s to %s failed (%s); retrying", pod.key, node_name, last)
                time.sleep(min(delay, 5.0) * (1.0 + 0.1 * random.random()))
        self._count("error")
        assert last is not None
        raise last

    def _patch_status(self, pod: Pod, status: Mapping[str, Any]) -> None:
        """``util.PatchPodStatus``: a strategic merge patch of ``pods/status``, retried on
        InternalError, ServiceUnavailable and connection refused (client-go DefaultBackoff)."""
        path = _pod_path(pod, "/status")
        body = {"status": dict(status)}
        delay = _PATCH_DELAY
        for step in range(1, _PATCH_STEPS + 1):
            try:
                self._send_write(
                    "PATCH", path, body=body, content_type="application/strategic-merge-patch+json"
                )
                return
            except (ApiError, TransportError) as exc:
                if step == _PATCH_STEPS or not _status_retryable(exc):
                    raise exc.to_backend_error() from None
            time.sleep(delay * (1.0 + _PATCH_JITTER * random.random()))
            delay *= _PATCH_FACTOR

    def _status_changes(
        self, pod: Pod, condition: PodCondition | None, nominated_node_name: str | None
    ) -> dict[str, Any]:
        status: dict[str, Any] = {}
        if condition is not None:
            now = datetime.fromtimestamp(int(time.time()), tz=UTC)
            conditions, written, replaced = _update_condition(pod.status.conditions, condition, now)
            if written is not None:
                status["$setElementOrder/conditions"] = [{"type": c.type} for c in conditions]
                status["conditions"] = [_condition_patch(written, replaced)]
        if (
            nominated_node_name is not None
            and nominated_node_name != pod.status.nominated_node_name
        ):
            status["nominatedNodeName"] = nominated_node_name or None
        return status

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        """PATCH ``pods/{name}/status``: replace the condition of the same type (upstream
        ``UpdatePodCondition``), and/or set ``nominatedNodeName`` (``""`` clears it). The
        patch is computed against ``pod`` (the informer's copy); nothing is sent when nothing
        changes.

        Raises:
            BackendError: 404 ``NotFound``, or the failure once retries run out.
        """
        changes = self._status_changes(pod, condition, nominated_node_name)
        if changes:
            self._patch_status(pod, changes)

    # -- VolumeBinding's writes ----------------------------------------------------------------

    def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        """Write what VolumeBinding's PreBind changes on a volume: ``spec.claimRef`` and the
        ``pv.kubernetes.io/bound-by-controller`` annotation.

        Upstream PUTs the whole object it holds; schedframe does not model every field of a
        volume, so it sends a JSON merge patch of those fields with the object's
        ``resourceVersion`` as a precondition (a stale version is the same 409 Conflict).

        Raises:
            BackendError: the API server's error (409 ``Conflict``, 404 ``NotFound``, ...).
        """
        ref: dict[str, object] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1"}
        if pv.claim_ref is not None:
            ref.update(
                namespace=pv.claim_ref.namespace,
                name=pv.claim_ref.name,
                uid=pv.claim_ref.uid,
                resourceVersion=pv.claim_ref.resource_version,
            )
        patch = {
            "metadata": {
                "resourceVersion": pv.metadata.resource_version,
                "annotations": dict(pv.metadata.annotations),
            },
            "spec": {"claimRef": ref if pv.claim_ref is not None else None},
        }
        path = f"/api/v1/persistentvolumes/{quote(pv.name, safe='')}"
        stored = self._merge_patch(path, patch)
        return cast("PersistentVolume", _DECODE_PV(stored))

    def update_persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
        """Write what VolumeBinding's PreBind changes on a claim: its annotations
        (``volume.kubernetes.io/selected-node``), with its ``resourceVersion`` as a
        precondition, as :meth:`update_persistent_volume` does.

        Raises:
            BackendError: the API server's error.
        """
        patch = {
            "metadata": {
                "resourceVersion": pvc.metadata.resource_version,
                "annotations": dict(pvc.metadata.annotations),
            }
        }
        namespace = quote(pvc.namespace or "default", safe="")
        path = f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{quote(pvc.name, safe='')}"
        stored = self._merge_patch(path, patch)
        return cast("PersistentVolumeClaim", _DECODE_PVC(stored))

    def _merge_patch(self, path: str, patch: Mapping[str, object]) -> Mapping[str, Any]:
        try:
            stored = self._send_write(
                "PATCH", path, body=patch, content_type="application/merge-patch+json"
            )
        except (ApiError, TransportError) as exc:
            raise exc.to_backend_error() from None
        if not isinstance(stored, Mapping):
            raise BackendError(f"PATCH {path}: the answer is not an object")
        return stored

    def delete_pod(self, pod: Pod, *, condition: PodCondition | None = None) -> None:
        """Evict a preemption victim as upstream ``prepareCandidate`` does: patch
        ``condition`` (``DisruptionTarget``) into its status, then DELETE it with default
        options (the API server applies the pod's grace period).

        Raises:
            BackendError: 404 ``NotFound`` (the victim is already gone), or another failure.
        """
        if condition is not None:
            changes = self._status_changes(pod, condition, None)
            if changes:
                self._patch_status(pod, changes)
        try:
            self._send_write("DELETE", _pod_path(pod), body={})
        except (ApiError, TransportError) as exc:
            raise exc.to_backend_error() from None

    def _resolve(self, ref: ObjectReference) -> ObjectReference:
        """``ref`` completed from the informers' stores (uid, resourceVersion) when it lacks
        them and the object is known."""
        if ref.uid or ref.kind not in ("Pod", "Node"):
            return ref
        found = self.reflectors[ref.kind].get(ref.namespace if ref.kind == "Pod" else "", ref.name)
        return ObjectReference.of(found) if found is not None else ref

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
        """Queue an events.k8s.io/v1 Event about ``regarding`` (written asynchronously,
        aggregated into series and rate-limited; see :mod:`._events`); ``related`` is the
        object it relates to (a preemptor, for ``Preempted``)."""
        if self._fenced():
            return  # not the leader: a deposed replica writes nothing
        controller = self._reporting_controller or getattr(
            getattr(regarding, "spec", None), "scheduler_name", "default-scheduler"
        )
        self.event_sink.record(
            ObjectReference.of(regarding),
            None if related is None else self._resolve(related),
            event_type=event_type,
            reason=reason,
            action=action,
            note=note,
            reporting_controller=str(controller),
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


def _reference(obj: object | None) -> ObjectReference | None:
    if obj is None:
        return None
    try:
        return ObjectReference.of(obj)
    except TypeError:  # not an object with metadata: nothing to refer to
        return None
