"""What a cluster backend offers the scheduler: a lister with a watch, and a binder.

Upstream the scheduler talks to kube-apiserver through informers (list + watch) and a
clientset (bind, status patches, deletes, events). A backend is both, in-process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Literal, Protocol, runtime_checkable

import attrs

from schedframe.framework import Binder

if TYPE_CHECKING:
    from schedframe.objects import Pod, PodExtendedResourceClaimStatus, ResourceClaim

__all__ = [
    "KINDS",
    "Backend",
    "Binder",
    "ExtendedResourceClaimWriter",
    "Lister",
    "ResourceClaimStatusWriter",
    "ResourceClaimWriter",
    "Subscription",
    "WatchEvent",
]

#: The kinds a backend lists and watches (those kube-scheduler's informers watch), in the
#: order a new subscriber is replayed them (pods last, so their namespaces, nodes, budgets,
#: the workload objects default spreading reads and the storage objects the volume plugins
#: read are known when they arrive).
KINDS: Final = (
    "Namespace",
    "Node",
    "PodDisruptionBudget",
    "Service",
    "ReplicationController",
    "ReplicaSet",
    "StatefulSet",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "VolumeAttachment",
    # resource.k8s.io: what DynamicResources reads (kube-scheduler's DRA informers).
    "DeviceClass",
    "ResourceSlice",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "Pod",
)

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED"]


@attrs.frozen(kw_only=True)
class WatchEvent:
    """One change of one object, as a watch delivers it.

    Attributes:
        type: ``ADDED``, ``MODIFIED`` or ``DELETED``.
        obj: the object after the change; for ``DELETED``, its last state.
        old: the object before the change (``None`` for ``ADDED``).
        resource_version: the backend-wide revision of the change (also
            ``obj.metadata.resource_version``); strictly increasing along a subscription.
    """

    type: WatchEventType
    obj: object
    old: object | None = None
    resource_version: int


class Subscription(Protocol):
    """A live watch; :meth:`cancel` stops further deliveries (idempotent)."""

    def cancel(self) -> None:
        """Stop delivering events to this subscriber."""
        ...


class Lister(Protocol):
    """The read side of a backend: list and watch objects (upstream informers)."""

    def list(self, kind: str) -> list[object]:
        """Every object of ``kind`` (one of :data:`KINDS`), ordered by namespace and name.

        Raises:
            ValueError: for a kind not in :data:`KINDS`.
        """
        ...

    def subscribe(self, callback: Callable[[WatchEvent], None]) -> Subscription:
        """Watch every kind.

        ``callback`` first gets an ``ADDED`` event for each current object (kind by kind
        in :data:`KINDS` order, pods last), then every later change exactly once, in
        resource-version order. No change is lost or repeated between the replay and the live
        events.
        """
        ...


class Backend(Lister, Binder, Protocol):
    """A complete cluster backend: what the scheduler needs from kube-apiserver."""


@runtime_checkable
class ResourceClaimStatusWriter(Protocol):
    """A backend that can write ResourceClaim statuses (DynamicResources' PreBind,
    PostFilter and Unreserve). Both built-in backends are; a backend that is not makes the
    scheduler keep claim statuses in its own store only.

    .. versionadded:: 0.2
    """

    def update_resource_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        """Write ``claim``'s status (allocation, reservedFor); the stored claim back.

        Raises:
            BackendError: when the API refuses the write.
        """
        ...


@runtime_checkable
class ResourceClaimWriter(Protocol):
    """A backend that can update a ResourceClaim itself, not its status: DynamicResources'
    PreBind adds the ``resource.kubernetes.io/delete-protection`` finalizer with such an
    ``Update`` before it writes an allocation, and removes it before deleting the claim of a
    pod's DRA-backed extended resources. Both built-in backends are; with one that is not, the
    scheduler keeps the finalizer in its own store only.

    .. versionadded:: 0.3
    """

    def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """Write ``claim``'s metadata and spec (its status is kept), with its resourceVersion
        as the optimistic-concurrency check; the stored claim back.

        Raises:
            BackendError: 409 ``Conflict`` on a stale resourceVersion, 404 ``NotFound``.
        """
        ...


@runtime_checkable
class ExtendedResourceClaimWriter(Protocol):
    """A backend that can create and delete the ResourceClaims DynamicResources makes for
    pods' DRA-backed extended resources (DRAExtendedResource), and record them in the pod's
    ``status.extendedResourceClaimStatus``. Both built-in backends are; with one that is not,
    the scheduler keeps such claims in its own store only.

    .. versionadded:: 0.3
    """

    def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """Create ``claim`` (named from ``generateName``); the stored claim back.

        Raises:
            BackendError: when the API refuses the write.
        """
        ...

    def delete_resource_claim(self, claim: ResourceClaim) -> None:
        """Delete ``claim``.

        Raises:
            BackendError: when the API refuses the write.
        """
        ...

    def patch_pod_extended_resource_claim_status(
        self, pod: Pod, status: PodExtendedResourceClaimStatus
    ) -> None:
        """Set the pod's ``status.extendedResourceClaimStatus``.

        Raises:
            BackendError: when the API refuses the write.
        """
        ...
