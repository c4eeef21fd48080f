"""The fake API server's storage: versioned objects, a bounded event window, and the
registry semantics the scheduler depends on (create/update/patch/delete, ``pods/binding``,
status patches, graceful deletion, events.k8s.io validation, leases).

Everything here is plain, thread-safe Python over JSON dicts; :mod:`._server` maps HTTP to it.
Each write takes the next value of one global counter as its ``resourceVersion``, as etcd's
revision does, and appends a watch event to its resource's window.

Over 1,000 lines on purpose: it holds the registry semantics of every resource the scheduler
reads or writes (each with kube-apiserver's status codes and messages), which share one lock,
one revision counter and one event window; splitting them by resource would spread those
rules over many modules.
"""

from __future__ import annotations

import copy
import json
import threading
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

import attrs

from schedframe.testing.fakeapi._merge import (
    PatchError,
    json_merge_patch,
    strategic_merge_patch,
)
from schedframe.testing.fakeapi._selectors import FieldSelector, LabelSelector

__all__ = [
    "RESOURCES",
    "BindingRecord",
    "Cluster",
    "EventRecord",
    "Resource",
    "StatusError",
    "format_time",
    "status_body",
]

_Obj = dict[str, Any]
_Key = tuple[str, str]
_Events = list["EventRecord"]
_Objs = list[_Obj]

_OPTIMISTIC_LOCK_MSG: Final = (
    "the object has been modified; please apply your changes to the latest version and try again"
)
_DEFAULT_GRACE_SECONDS: Final = 30
_EVENT_NOTE_LIMIT: Final = 1024


@attrs.frozen
class Resource:
    """One REST resource of the fake."""

    name: str
    group: str
    version: str
    kind: str
    namespaced: bool
    has_status: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """``pods``, ``poddisruptionbudgets.policy`` (as apimachinery errors print it)."""
        return f"{self.name}.{self.group}" if self.group else self.name

    @property
    def qualified_kind(self) -> str:
        """``Pod``, ``Event.events.k8s.io``."""
        return f"{self.kind}.{self.group}" if self.group else self.kind

    @property
    def etcd_prefix(self) -> str:
        return "/registry/minions" if self.name == "nodes" else f"/registry/{self.name}"


#: Resources the fake serves, by plural name.
RESOURCES: Final[dict[str, Resource]] = {
    r.name: r
    for r in (
        Resource("pods", "", "v1", "Pod", True, True),
        Resource("nodes", "", "v1", "Node", False, True),
        Resource("namespaces", "", "v1", "Namespace", False, True),
        Resource("poddisruptionbudgets", "policy", "v1", "PodDisruptionBudget", True, True),
        Resource("services", "", "v1", "Service", True, True),
        Resource("replicationcontrollers", "", "v1", "ReplicationController", True, True),
        Resource("replicasets", "apps", "v1", "ReplicaSet", True, True),
        Resource("statefulsets", "apps", "v1", "StatefulSet", True, True),
        Resource("storageclasses", "storage.k8s.io", "v1", "StorageClass", False),
        Resource("csinodes", "storage.k8s.io", "v1", "CSINode", False),
        Resource("csidrivers", "storage.k8s.io", "v1", "CSIDriver", False),
        Resource("csistoragecapacities", "storage.k8s.io", "v1", "CSIStorageCapacity", True),
        Resource("persistentvolumes", "", "v1", "PersistentVolume", False, True),
        Resource("persistentvolumeclaims", "", "v1", "PersistentVolumeClaim", True, True),
        Resource("volumeattachments", "storage.k8s.io", "v1", "VolumeAttachment", False, True),
        Resource("deviceclasses", "resource.k8s.io", "v1", "DeviceClass", False, True),
        Resource("resourceslices", "resource.k8s.io", "v1", "ResourceSlice", False, True),
        Resource("resourceclaims", "resource.k8s.io", "v1", "ResourceClaim", True, True),
        Resource(
            "resourceclaimtemplates", "resource.k8s.io", "v1", "ResourceClaimTemplate", True, True
        ),
        Resource("workloads", "scheduling.k8s.io", "v1alpha1", "Workload", True, True),
        Resource("events", "events.k8s.io", "v1", "Event", True),
        Resource("leases", "coordination.k8s.io", "v1", "Lease", True),
    )
}
_BY_KIND: Final = {r.kind: r for r in RESOURCES.values()}


def _custom_resources() -> dict[str, Resource]:
    from schedframe.objects import custom_kinds

    return {
        ck.plural: Resource(ck.plural, ck.group, ck.version, ck.kind, ck.namespaced, True)
        for ck in custom_kinds()
        if ck.plural not in RESOURCES
    }


def served_resources() -> dict[str, Resource]:
    """The resources the fake serves: :data:`RESOURCES` and every declared custom kind
    (:func:`schedframe.objects.declare_custom_kind`), with a ``status`` subresource."""
    return {**RESOURCES, **_custom_resources()}


def resource_named(name: str) -> Resource | None:
    """The served resource of plural ``name``, or ``None``."""
    return RESOURCES.get(name) or _custom_resources().get(name)


def status_body(
    code: int, reason: str, message: str, details: Mapping[str, Any] | None = None
) -> _Obj:
    """A ``metav1.Status`` failure body."""
    body: _Obj = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = dict(details)
    return body


class StatusError(Exception):
    """An API error: HTTP ``code`` with a ``metav1.Status`` body."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = dict(details or {})
        self.headers = dict(headers or {})

    def body(self) -> _Obj:
        return status_body(self.code, self.reason, self.message, self.details)


def _quote(text: str) -> str:
    return json.dumps(text)


def _details(res: Resource, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name, "kind": res.name}
    if res.group:
        details["group"] = res.group
    return details


def not_found(res: Resource, name: str) -> StatusError:
    return StatusError(
        404, "NotFound", f"{res.qualified} {_quote(name)} not found", details=_details(res, name)
    )


def conflict(res_name: str, name: str, detail: str, res: Resource | None = None) -> StatusError:
    details = _details(res, name) if res is not None else {"name": name, "kind": res_name}
    return StatusError(
        409,
        "Conflict",
        f"Operation cannot be fulfilled on {res_name} {_quote(name)}: {detail}",
        details=details,
    )


def invalid(res: Resource, name: str, causes: list[str]) -> StatusError:
    rendered = causes[0] if len(causes) == 1 else "[" + ", ".join(causes) + "]"
    return StatusError(
        422,
        "Invalid",
        f"{res.qualified_kind} {_quote(name)} is invalid: {rendered}",
        details={"name": name, "kind": res.kind, **({"group": res.group} if res.group else {})},
    )


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def format_time(t: float) -> str:
    """RFC 3339 with seconds, as ``metav1.Time`` serialises."""
    return datetime.fromtimestamp(int(t), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(t: float) -> str:
    """RFC 3339 with microseconds, as ``metav1.MicroTime`` serialises."""
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@attrs.frozen
class EventRecord:
    """One change in a resource's watch window."""

    rv: int
    type: str  # ADDED, MODIFIED, DELETED
    resource: str
    obj: _Obj
    prev: _Obj | None


@attrs.frozen
class BindingRecord:
    """A successful ``pods/binding`` (the binding log).

    Attributes:
        namespace: the pod's namespace.
        name: the pod's name.
        uid: the pod's uid.
        node: the node it was bound to.
        resource_version: the revision of the write.
        time: wall-clock time of the binding.
    """

    namespace: str
    name: str
    uid: str
    node: str
    resource_version: int
    time: float


class Cluster:
    """Versioned object storage with kube-apiserver's registry semantics.

    Args:
        window_size: how many watch events each resource keeps; a watch from an older
            resourceVersion gets ``410 Expired``.
        graceful_deletion: delete bound pods gracefully (``deletionTimestamp`` first).
        kubelet_delay: seconds after which a gracefully deleted pod is removed, as a kubelet
            would (capped by its grace period); ``None`` leaves it to
            :meth:`finalize_deletions`.
    """

    def __init__(
        self,
        *,
        window_size: int = 1000,
        graceful_deletion: bool = True,
        kubelet_delay: float | None = 0.0,
    ) -> None:
        if window_size < 1:
            raise ValueError("window_size must be at least 1")
        self.lock = threading.RLock()
        self._rv = 0
        self._objects: defaultdict[str, dict[_Key, _Obj]] = defaultdict(dict)
        self._window_size = window_size
        self._windows: defaultdict[str, deque[EventRecord]] = defaultdict(deque)
        self._floors: defaultdict[str, int] = defaultdict(int)
        self._graceful = graceful_deletion
        self._kubelet_delay = kubelet_delay
        self.bindings: list[BindingRecord] = []
        self.binding_conflicts: list[tuple[str, str]] = []
        #: Called (under the lock, in order) with every event; the server fans out from it.
        self.notify: Callable[[EventRecord], None] = lambda event: None
        #: Runs ``callback`` after ``delay`` seconds (the server's loop provides it).
        self.call_later: Callable[[float, Callable[[], None]], None] = _thread_timer
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            self.create("namespaces", "", {"metadata": {"name": ns}})

    # -- introspection -------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        with self.lock:
            return self._rv

    def floor(self, resource: str) -> int:
        """The oldest resourceVersion a watch of ``resource`` may start from."""
        with self.lock:
            return self._floors[resource]

    def set_window_size(self, size: int) -> None:
        """Change the window size (trimming every window to it)."""
        if size < 1:
            raise ValueError("window size must be at least 1")
        with self.lock:
            self._window_size = size
            for name in served_resources():
                self._trim(name, size)

    def compact(self, keep: int = 0) -> None:
        """Drop all but the newest ``keep`` events of every window, as etcd compaction and
        the watch cache's eviction do; later watches from older revisions get 410."""
        with self.lock:
            for name in served_resources():
                self._trim(name, keep)
                if keep == 0:
                    self._floors[name] = self._rv

    def _trim(self, resource: str, keep: int) -> None:
        window = self._windows[resource]
        while len(window) > keep:
            self._floors[resource] = window.popleft().rv

    # -- helpers -------------------------------------------------------------------------------

    def _key(self, res: Resource, namespace: str, name: str) -> _Key:
        return (namespace if res.namespaced else "", name)

    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _record(self, res: Resource, event_type: str, obj: _Obj, prev: _Obj | None) -> None:
        event = EventRecord(self._rv, event_type, res.name, obj, prev)
        window = self._windows[res.name]
        window.append(event)
        while len(window) > self._window_size:
            self._floors[res.name] = window.popleft().rv
        self.notify(event)

    def _store(self, res: Resource, key: _Key, obj: _Obj, prev: _Obj | None) -> _Obj:
        rv = self._next_rv()
        obj["metadata"]["resourceVersion"] = str(rv)
        self._objects[res.name][key] = obj
        self._record(res, "ADDED" if prev is None else "MODIFIED", obj, prev)
        return obj

    def _remove(self, res: Resource, key: _Key, stored: _Obj) -> _Obj:
        del self._objects[res.name][key]
        rv = self._next_rv()
        last = copy.deepcopy(stored)
        last["metadata"]["resourceVersion"] = str(rv)
        self._record(res, "DELETED", last, stored)
        return last

    def _get(self, res: Resource, key: _Key) -> _Obj:
        obj = self._objects[res.name].get(key)
        if obj is None:
            raise not_found(res, key[1])
        return obj

    def _check_namespace(self, res: Resource, namespace: str) -> None:
        if not res.namespaced:
            return
        ns = self._objects["namespaces"].get(("", namespace))
        if ns is None:
            raise not_found(RESOURCES["namespaces"], namespace)

    # -- reads ---------------------------------------------------------------------------------

    def get(self, resource: str, namespace: str, name: str) -> _Obj:
        res = _resource(resource)
        with self.lock:
            return copy.deepcopy(self._get(res, self._key(res, namespace, name)))

    def list(
        self,
        resource: str,
        namespace: str | None = None,
        *,
        field_selector: FieldSelector | None = None,
        label_selector: LabelSelector | None = None,
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> tuple[list[_Obj], int]:
        """Matching objects in key order, and the list's resourceVersion.

        Raises:
            StatusError: 410 for ``resourceVersionMatch=Exact`` on an old revision, 504 for
                a revision from the future, 400 for a bad ``resourceVersionMatch``.
        """
        res = _resource(resource)
        with self.lock:
            current = self._rv
            if resource_version_match not in ("", "Exact", "NotOlderThan"):
                raise bad_request(
                    f'resourceVersionMatch: Unsupported value: "{resource_version_match}": '
                    'supported values: "Exact", "NotOlderThan"'
                )
            if resource_version_match and resource_version in ("",):
                raise bad_request(
                    "resourceVersionMatch is forbidden unless resourceVersion is provided"
                )
            if resource_version not in ("", "0"):
                try:
                    wanted = int(resource_version)
                except ValueError:
                    raise bad_request(
                        f'resourceVersion: Invalid value: "{resource_version}": '
                        "must be a non-negative integer"
                    ) from None
                if wanted > current:
                    raise StatusError(
                        504,
                        "Timeout",
                        f"Too large resource version: {wanted}, current: {current}",
                        details={
                            "causes": [{"reason": "ResourceVersionTooLarge"}],
                            "retryAfterSeconds": 1,
                        },
                    )
                if resource_version_match == "Exact" and wanted != current:
                    raise StatusError(
                        410, "Expired", f"too old resource version: {wanted} ({current})"
                    )
            items = [
                copy.deepcopy(obj)
                for key, obj in sorted(self._objects[resource].items())
                if (namespace is None or not res.namespaced or key[0] == namespace)
                and (field_selector is None or field_selector.matches(obj))
                and (label_selector is None or label_selector.matches(obj))
            ]
            return items, current

    def events_since(self, resource: str, rv: int) -> _Events:
        """Window events of ``resource`` after ``rv``.

        Raises:
            StatusError: 410 Expired when ``rv`` is older than the window.
        """
        with self.lock:
            floor = self._floors[resource]
            if rv < floor:
                raise StatusError(410, "Expired", f"too old resource version: {rv} ({floor})")
            return [e for e in self._windows[resource] if e.rv > rv]

    def snapshot(self, resource: str) -> _Objs:
        with self.lock:
            return [obj for _, obj in sorted(self._objects[resource].items())]

    # -- create --------------------------------------------------------------------------------

    def create(self, resource: str, namespace: str, body: Mapping[str, Any]) -> _Obj:
        """POST: default, validate and store a new object.

        Raises:
            StatusError: 400 (namespace mismatch), 404 (no such namespace), 409
                AlreadyExists, 422 Invalid.
        """
        res = _resource(resource)
        obj = copy.deepcopy(dict(body))
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        if res.namespaced:
            body_ns = meta.get("namespace") or namespace
            if namespace and body_ns != namespace:
                raise bad_request(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request"
                )
            meta["namespace"] = body_ns or "default"
        else:
            meta.pop("namespace", None)
        now = time.time()
        with self.lock:
            name = meta.get("name") or ""
            if not name and meta.get("generateName"):
                name = f"{meta['generateName']}{uuid.uuid4().hex[:5]}"
                meta["name"] = name
            if not name:
                raise invalid(
                    res, "", ["metadata.name: Required value: name or generateName is required"]
                )
            self._check_namespace(res, meta.get("namespace", ""))
            key = self._key(res, meta.get("namespace", ""), name)
            if key in self._objects[resource]:
                raise StatusError(
                    409,
                    "AlreadyExists",
                    f"{res.qualified} {_quote(name)} already exists",
                    details=_details(res, name),
                )
            obj["kind"] = res.kind
            obj["apiVersion"] = res.api_version
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = format_time(now)
            meta.pop("deletionTimestamp", None)
            meta.pop("deletionGracePeriodSeconds", None)
            _DEFAULTERS.get(resource, _no_defaults)(obj, now)
            causes = _VALIDATORS.get(resource, _no_validation)(obj)
            if causes:
                raise invalid(res, name, causes)
            return copy.deepcopy(self._store(res, key, obj, None))

    # -- update / patch ------------------------------------------------------------------------

    def update(
        self,
        resource: str,
        namespace: str,
        name: str,
        body: Mapping[str, Any],
        *,
        subresource: str = "",
    ) -> _Obj:
        """PUT (optionally on ``status``) with optimistic concurrency.

        Raises:
            StatusError: 400 name mismatch, 404, 409 Conflict on a stale resourceVersion or a
                different uid, 422 Invalid.
        """
        res = _resource(resource)
        new = copy.deepcopy(dict(body))
        meta = new.get("metadata")
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        if meta.get("name", name) != name:
            raise bad_request(
                "the name of the object "
                f"({meta.get('name')}) does not match the name on the URL ({name})"
            )
        with self.lock:
            key = self._key(res, namespace, name)
            stored = self._get(res, key)
            rv = meta.get("resourceVersion")
            if rv and rv != stored["metadata"]["resourceVersion"]:
                raise conflict(res.qualified, name, _OPTIMISTIC_LOCK_MSG, res)
            uid = meta.get("uid")
            if uid and uid != stored["metadata"]["uid"]:
                raise self._uid_conflict(res, key, uid, stored["metadata"]["uid"])
            return copy.deepcopy(self._replace(res, key, stored, new, subresource))

    def patch(
        self,
        resource: str,
        namespace: str,
        name: str,
        patch: Any,
        content_type: str,
        *,
        subresource: str = "",
    ) -> _Obj:
        """PATCH with a strategic merge, JSON merge or JSON patch document.

        Raises:
            StatusError: 404, 409 (a ``metadata.resourceVersion`` in the patch that is stale),
                415 for an unknown patch type, 422 for a patch that cannot apply.
        """
        res = _resource(resource)
        media = content_type.split(";", 1)[0].strip()
        with self.lock:
            key = self._key(res, namespace, name)
            stored = self._get(res, key)
            try:
                if media == "application/strategic-merge-patch+json":
                    patched = strategic_merge_patch(resource, stored, patch)
                elif media == "application/merge-patch+json":
                    patched = json_merge_patch(stored, patch)
                elif media == "application/json-patch+json":
                    patched = _json_patch(stored, patch)
                else:
                    raise StatusError(
                        415,
                        "UnsupportedMediaType",
                        f"the body of the request was in an unknown format - accepted media "
                        f"types include: application/json-patch+json, application/merge-patch+json, "
                        f"application/apply-patch+yaml, application/strategic-merge-patch+json; "
                        f'got "{media}"',
                    )
            except PatchError as exc:
                raise invalid(res, name, [str(exc)]) from None
            if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
                raise invalid(res, name, ["metadata: Required value"])
            rv = patched["metadata"].get("resourceVersion")
            if rv and rv != stored["metadata"]["resourceVersion"]:
                raise conflict(res.qualified, name, _OPTIMISTIC_LOCK_MSG, res)
            patched["metadata"]["name"] = name
            return copy.deepcopy(self._replace(res, key, stored, patched, subresource))

    def _replace(self, res: Resource, key: _Key, stored: _Obj, new: _Obj, subresource: str) -> _Obj:
        new = dict(new)
        old_meta = stored["metadata"]
        if subresource == "status":
            # Status strategy: only the status changes.
            merged = copy.deepcopy(stored)
            if "status" in new:
                merged["status"] = new["status"]
            else:
                merged.pop("status", None)
            new = merged
        elif subresource:
            raise not_found(res, key[1])
        else:
            meta = dict(new.get("metadata") or {})
            for field in (
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "namespace",
            ):
                if field in old_meta:
                    meta[field] = old_meta[field]
                else:
                    meta.pop(field, None)
            meta["name"] = key[1]
            new["metadata"] = meta
            if res.has_status:
                if "status" in stored:
                    new["status"] = copy.deepcopy(stored["status"])
                else:
                    new.pop("status", None)
            if res.name == "pods":
                causes = _pod_update_causes(stored, new)
                if causes:
                    raise invalid(res, key[1], causes)
        new["kind"] = res.kind
        new["apiVersion"] = res.api_version
        new["metadata"]["resourceVersion"] = old_meta["resourceVersion"]
        causes = _VALIDATORS.get(res.name, _no_validation)(new)
        if causes:
            raise invalid(res, key[1], causes)
        if new == stored:
            return stored  # a no-op write: no new revision, no event
        if (
            new["metadata"].get("deletionTimestamp")
            and old_meta.get("finalizers")
            and not new["metadata"].get("finalizers")
        ):
            # The last finalizer is gone: the deletion completes (a pod in its grace period
            # waits for its kubelet).
            if res.name != "pods" or _grace_expired(new):
                return self._remove(res, key, new)
            stored_new = self._store(res, key, new, stored)
            self._schedule_kubelet(key, new)
            return stored_new
        return self._store(res, key, new, stored)

    def _uid_conflict(self, res: Resource, key: _Key, want: str, have: str) -> StatusError:
        path = "/".join(p for p in (res.etcd_prefix, key[0], key[1]) if p)
        return conflict(
            res.qualified,
            key[1],
            f"StorageError: invalid object, Code: 4, Key: {path}, ResourceVersion: 0, "
            f"AdditionalErrorMsg: Precondition failed: UID in precondition: {want}, "
            f"UID in object meta: {have}",
            res,
        )

    # -- delete --------------------------------------------------------------------------------

    def delete(
        self,
        resource: str,
        namespace: str,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        preconditions: Mapping[str, Any] | None = None,
    ) -> _Obj:
        """DELETE: immediate, or graceful for bound pods; finalizers keep the object.

        Returns the deleted object, or the object marked for deletion.

        Raises:
            StatusError: 404, 409 on a failed uid/resourceVersion precondition.
        """
        res = _resource(resource)
        with self.lock:
            key = self._key(res, namespace, name)
            stored = self._get(res, key)
            meta = stored["metadata"]
            pre = preconditions or {}
            if pre.get("uid") and pre["uid"] != meta["uid"]:
                raise conflict(
                    res.qualified,
                    name,
                    f"Precondition failed: UID in precondition: {pre['uid']}, "
                    f"UID in object meta: {meta['uid']}",
                    res,
                )
            if pre.get("resourceVersion") and pre["resourceVersion"] != meta["resourceVersion"]:
                raise conflict(
                    res.qualified,
                    name,
                    f"Precondition failed: ResourceVersion in precondition: "
                    f"{pre['resourceVersion']}, ResourceVersion in object meta: "
                    f"{meta['resourceVersion']}",
                    res,
                )
            grace = self._grace(res, stored, grace_period_seconds)
            finalizers = meta.get("finalizers") or []
            if grace == 0 and not finalizers:
                return copy.deepcopy(self._remove(res, key, stored))
            if meta.get("deletionTimestamp"):
                current = meta.get("deletionGracePeriodSeconds")
                if current is not None and grace >= current:
                    return copy.deepcopy(stored)
            now = time.time()
            marked = copy.deepcopy(stored)
            marked["metadata"]["deletionTimestamp"] = format_time(now + grace)
            marked["metadata"]["deletionGracePeriodSeconds"] = grace
            result = self._store(res, key, marked, stored)
            if res.name == "pods" and not finalizers:
                self._schedule_kubelet(key, marked)
            return copy.deepcopy(result)

    def _schedule_kubelet(self, key: _Key, pod: _Obj) -> None:
        if self._kubelet_delay is None:
            return
        uid = pod["metadata"]["uid"]
        grace = float(pod["metadata"].get("deletionGracePeriodSeconds") or 0)
        self.call_later(min(grace, self._kubelet_delay), lambda: self._kubelet_remove(key, uid))

    def _grace(self, res: Resource, pod: _Obj, requested: int | None) -> int:
        if res.name != "pods":
            return 0
        # Pod strategy CheckGracefulDelete: unbound or finished pods go at once.
        spec = pod.get("spec") or {}
        phase = (pod.get("status") or {}).get("phase")
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0
        if requested is not None:
            return max(0, int(requested))
        if not self._graceful:
            return 0
        grace = spec.get("terminationGracePeriodSeconds")
        return _DEFAULT_GRACE_SECONDS if grace is None else int(grace)

    def _kubelet_remove(self, key: _Key, uid: str) -> None:
        with self.lock:
            stored = self._objects["pods"].get(key)
            if stored is None or stored["metadata"]["uid"] != uid:
                return
            if not stored["metadata"].get("deletionTimestamp"):
                return
            if stored["metadata"].get("finalizers"):
                return
            self._remove(RESOURCES["pods"], key, stored)

    def finalize_deletions(self) -> int:
        """Remove every pod still in its graceful-deletion period (without finalizers), as
        the kubelets would; returns how many."""
        with self.lock:
            keys = [
                key
                for key, pod in self._objects["pods"].items()
                if pod["metadata"].get("deletionTimestamp")
                and not pod["metadata"].get("finalizers")
            ]
            for key in keys:
                self._remove(RESOURCES["pods"], key, self._objects["pods"][key])
            return len(keys)

    # -- pods/binding --------------------------------------------------------------------------

    def bind(self, namespace: str, name: str | None, body: Mapping[str, Any]) -> _Obj:
        """POST ``pods/{name}/binding`` (or legacy ``bindings`` with ``name=None``).

        Raises:
            StatusError: 400 when the URL and body names differ, 404 for a missing pod,
                409 when the pod is bound, being deleted or gated (or on a failed uid /
                resourceVersion precondition), 422 for a bad target.
        """
        meta = body.get("metadata") if isinstance(body.get("metadata"), Mapping) else {}
        assert isinstance(meta, Mapping)
        body_name = str(meta.get("name") or "")
        if name is not None and body_name != name:
            raise bad_request("name in URL does not match name in Binding object")
        name = body_name
        binding_res = Resource("bindings", "", "v1", "Binding", True)
        target = body.get("target")
        causes = []
        if not isinstance(target, Mapping) or not target.get("name"):
            causes.append("target.name: Required value")
        elif target.get("kind") not in (None, "", "Node"):
            causes.append(
                f'target.kind: Unsupported value: "{target.get("kind")}": supported values: "Node"'
            )
        if causes:
            raise invalid(binding_res, name, causes)
        assert isinstance(target, Mapping)
        node = str(target["name"])
        res = RESOURCES["pods"]
        with self.lock:
            key = (namespace, name)
            stored = self._get(res, key)
            smeta = stored["metadata"]
            uid = meta.get("uid")
            if uid and uid != smeta["uid"]:
                raise self._uid_conflict(res, key, str(uid), smeta["uid"])
            rv = meta.get("resourceVersion")
            if rv and rv != smeta["resourceVersion"]:
                raise conflict(res.qualified, name, _OPTIMISTIC_LOCK_MSG, res)
            spec = stored.get("spec") or {}
            reason = ""
            if smeta.get("deletionTimestamp"):
                reason = f"pod {name} is being deleted, cannot be assigned to a host"
            elif spec.get("nodeName"):
                reason = f"pod {name} is already assigned to node {_quote(spec['nodeName'])}"
            elif spec.get("schedulingGates"):
                reason = f"pod {name} has non-empty .spec.schedulingGates"
            if reason:
                self.binding_conflicts.append((f"{namespace}/{name}", reason))
                raise conflict("pods/binding", name, reason)
            new = copy.deepcopy(stored)
            new.setdefault("spec", {})["nodeName"] = node
            annotations = meta.get("annotations")
            if isinstance(annotations, Mapping) and annotations:
                new["metadata"].setdefault("annotations", {}).update(annotations)
            status = new.setdefault("status", {})
            status.pop("nominatedNodeName", None)
            _set_condition(status, {"type": "PodScheduled", "status": "True"}, time.time())
            stored_new = self._store(res, key, new, stored)
            self.bindings.append(
                BindingRecord(
                    namespace=namespace,
                    name=name,
                    uid=smeta["uid"],
                    node=node,
                    resource_version=int(stored_new["metadata"]["resourceVersion"]),
                    time=time.time(),
                )
            )
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "code": 201,
        }


# -- defaulting and validation -----------------------------------------------------------------


def _no_defaults(obj: _Obj, now: float) -> None:
    return None


def _no_validation(obj: _Obj) -> list[str]:
    return []


def _pod_defaults(obj: _Obj, now: float) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", _DEFAULT_GRACE_SECONDS)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    if "priority" not in spec and not spec.get("priorityClassName"):
        spec["priority"] = 0  # Priority admission with no global default class
    status = obj.setdefault("status", {})
    status.setdefault("phase", "Pending")
    if spec.get("schedulingGates"):
        _set_condition(
            status,
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
            },
            now,
        )


def _namespace_defaults(obj: _Obj, now: float) -> None:
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    obj.setdefault("status", {}).setdefault("phase", "Active")


def _pod_validation(obj: _Obj) -> list[str]:
    causes = []
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return ["spec: Required value"]
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        causes.append("spec.containers: Required value")
    return causes


def _pod_update_causes(old: _Obj, new: _Obj) -> list[str]:
    # Pod updates may not change spec.nodeName (only the binding subresource sets it).
    old_node = (old.get("spec") or {}).get("nodeName") or ""
    new_node = (new.get("spec") or {}).get("nodeName") or ""
    if old_node != new_node:
        return [
            "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`, ..."
        ]
    return []


def _event_validation(obj: _Obj) -> list[str]:
    causes = []
    if not obj.get("eventTime"):
        causes.append("eventTime: Required value")
    if obj.get("type") not in ("Normal", "Warning"):
        causes.append(
            f'type: Unsupported value: "{obj.get("type", "")}": supported values: "Normal", "Warning"'
        )
    for field in ("reportingController", "reportingInstance", "action", "reason"):
        if not obj.get(field):
            causes.append(f"{field}: Required value")
    note = obj.get("note") or ""
    if len(str(note).encode()) > _EVENT_NOTE_LIMIT:
        causes.append(f"note: Too long: may not be more than {_EVENT_NOTE_LIMIT} bytes")
    return causes


def _lease_validation(obj: _Obj) -> list[str]:
    spec = obj.get("spec") or {}
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and (not isinstance(duration, int) or duration <= 0):
        return [f"spec.leaseDurationSeconds: Invalid value: {duration}: must be greater than 0"]
    return []


_DEFAULTERS: Final[dict[str, Callable[[_Obj, float], None]]] = {
    "pods": _pod_defaults,
    "namespaces": _namespace_defaults,
}
_VALIDATORS: Final[dict[str, Callable[[_Obj], list[str]]]] = {
    "pods": _pod_validation,
    "events": _event_validation,
    "leases": _lease_validation,
}


def _set_condition(status: _Obj, condition: Mapping[str, Any], now: float) -> None:
    """Upstream ``UpdatePodCondition`` as the registry uses it (transition time = now)."""
    conditions = status.setdefault("conditions", [])
    new = {**condition, "lastProbeTime": None, "lastTransitionTime": format_time(now)}
    for index, existing in enumerate(conditions):
        if existing.get("type") == condition.get("type"):
            if existing.get("status") == condition.get("status"):
                new["lastTransitionTime"] = existing.get("lastTransitionTime")
            conditions[index] = new
            return
    conditions.append(new)


def _grace_expired(obj: _Obj) -> bool:
    return obj["metadata"].get("deletionGracePeriodSeconds") in (0, None)


def _json_patch(target: _Obj, ops: Any) -> Any:
    """RFC 6902 with add / remove / replace / test (what tests and kubectl send)."""
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc: Any = copy.deepcopy(target)
    for op in ops:
        if not isinstance(op, Mapping) or "path" not in op:
            raise PatchError("each JSON patch operation needs op and path")
        parts = [p.replace("~1", "/").replace("~0", "~") for p in str(op["path"]).split("/")[1:]]
        if not parts:
            raise PatchError("cannot patch the document root")
        parent = doc
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent.get(part)
            if parent is None:
                raise PatchError(f"path {op['path']} does not exist")
        last = parts[-1]
        kind = op.get("op")
        if kind == "test":
            current = parent[int(last)] if isinstance(parent, list) else parent.get(last)
            if current != op.get("value"):
                raise PatchError(f"testing value {op['path']} failed")
        elif kind in ("add", "replace"):
            if isinstance(parent, list):
                if last == "-":
                    parent.append(op.get("value"))
                elif kind == "add":
                    parent.insert(int(last), op.get("value"))
                else:
                    parent[int(last)] = op.get("value")
            else:
                if kind == "replace" and last not in parent:
                    raise PatchError(
                        f"replace operation does not apply: doc is missing key: {op['path']}"
                    )
                parent[last] = op.get("value")
        elif kind == "remove":
            try:
                if isinstance(parent, list):
                    del parent[int(last)]
                else:
                    del parent[last]
            except (KeyError, IndexError):
                raise PatchError(
                    f"remove operation does not apply: doc is missing path: {op['path']}"
                ) from None
        else:
            raise PatchError(f"Unexpected kind: {kind}")
    return doc


def _thread_timer(delay: float, callback: Callable[[], None]) -> None:
    timer = threading.Timer(delay, callback)
    timer.daemon = True
    timer.start()


def resource_for_kind(kind: str) -> Resource:
    """The resource serving ``kind`` (``Pod`` -> ``pods``)."""
    res = _BY_KIND.get(kind)
    if res is None:
        res = next((r for r in _custom_resources().values() if r.kind == kind), None)
    if res is None:
        raise ValueError(f"the fake API server does not serve kind {kind!r}")
    return res


def kinds() -> Iterable[str]:
    return [r.kind for r in served_resources().values()]


def _resource(name: str) -> Resource:
    res = resource_named(name)
    if res is None:
        raise KeyError(name)
    return res
