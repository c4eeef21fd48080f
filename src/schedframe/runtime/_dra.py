"""What DynamicResources reads and writes through the Handle (upstream ``SharedDRAManager``).

DeviceClasses, ResourceSlices, ResourceClaims and ResourceClaimTemplates as the backend's watch
reports them, plus upstream's in-flight allocations: a claim Reserve allocated is treated as
allocated (its devices in use) until PreBind has written it, or Unreserve dropped it, so that
the next scheduling cycle does not hand the same devices to another pod. After PreBind writes a
claim, the written version is *assumed* (kept in place of the informer's older copy) until the
watch reports it, as upstream's assume cache does.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from schedframe.objects._quantity import Quantity
from schedframe.objects._resource import (
    DeviceClass,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)

if TYPE_CHECKING:
    from schedframe.backends._protocols import ExtendedResourceClaimWriter
    from schedframe.objects import Pod, PodExtendedResourceClaimStatus

__all__ = ["DRA_KINDS", "DRAStore"]

#: The kinds a :class:`DRAStore` keeps.
DRA_KINDS: Final = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")
_TYPES: Final = (DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate)
_Object = DeviceClass | ResourceSlice | ResourceClaim | ResourceClaimTemplate

#: A device, cluster-wide: (driver, pool, device).
DeviceID = tuple[str, str, str]


def _allocated(claim: ResourceClaim) -> Iterable[DeviceID]:
    if claim.allocation is None:
        return ()
    return (
        (r.driver, r.pool, r.device)
        for r in claim.allocation.devices.results
        # Devices with admin access do not count as in use (upstream ``foreachAllocatedDevice``),
        # nor do shares of a device that allows multiple allocations (DRAConsumableCapacity).
        if not r.admin_access and r.share_id is None
    )


def _add_shared_capacity(claim: ResourceClaim, into: dict[DeviceID, dict[str, Quantity]]) -> None:
    if claim.allocation is None:
        return
    for r in claim.allocation.devices.results:
        if r.share_id is None or r.admin_access:
            continue
        per_device = into.setdefault((r.driver, r.pool, r.device), {})
        for name, q in r.consumed_capacity.items():
            per_device[name] = per_device[name] + q if name in per_device else q


class DRAStore:
    """The DRA objects and in-flight allocations (a :class:`~schedframe.framework.SharedDRAManager`).

    Thread-safe: writers hold a lock; readers take consistent snapshots (tuples and dicts are
    replaced whole, never mutated in place).

    ``writer``, when set (the scheduler sets it to its backend's claim-status write), sends a
    claim status to the cluster and returns the stored claim; without one (a bare
    :class:`~schedframe.runtime.Framework`), writes update this store directly. Likewise
    ``claim_writer`` (the backend, when it is an
    :class:`~schedframe.backends.ExtendedResourceClaimWriter`) creates and deletes the claims
    of DRA-backed extended resources and writes the pod's ``extendedResourceClaimStatus``;
    without one, claims are created and deleted in this store and the pod statuses are kept
    in :attr:`extended_resource_claim_statuses`.
    """

    def __init__(self, objects: Iterable[object] = ()) -> None:
        self._lock = threading.Lock()
        self._classes: dict[str, DeviceClass] = {}
        self._slices: dict[str, ResourceSlice] = {}
        self._slice_list: tuple[ResourceSlice, ...] = ()
        self._claims: dict[tuple[str, str], ResourceClaim] = {}
        self._templates: dict[tuple[str, str], ResourceClaimTemplate] = {}
        self._in_flight: dict[str, ResourceClaim] = {}
        self._assumed: dict[tuple[str, str], ResourceClaim] = {}
        self.writer: Callable[[ResourceClaim], ResourceClaim] | None = None
        self.claim_writer: ExtendedResourceClaimWriter | None = None
        #: When set (the scheduler sets it to its backend's claim update), sends a whole claim
        #: (its metadata: finalizers) to the cluster and returns the stored claim.
        self.updater: Callable[[ResourceClaim], ResourceClaim] | None = None
        #: Without a ``claim_writer``: the pod statuses written, by (namespace, name).
        self.extended_resource_claim_statuses: dict[
            tuple[str, str], PodExtendedResourceClaimStatus
        ] = {}
        #: Bumped on every change (memo keys).
        self.generation = 0
        for obj in objects:
            self.set(obj)

    def copy_state(self, other: DRAStore) -> None:
        """Make this (new) store hold what ``other`` holds, in-flight and assumed claims
        included (a fork's starting point). Its ``writer`` stays its own."""
        with other._lock, self._lock:  # the dicts are replaced whole, never changed: shared
            self._classes = other._classes
            self._slices = other._slices
            self._slice_list = other._slice_list
            self._claims = other._claims
            self._templates = other._templates
            self._in_flight = other._in_flight
            self._assumed = other._assumed
            self.generation = other.generation

    # -- informer side ------------------------------------------------------------------------

    def set(self, obj: object) -> bool:
        """Add or replace ``obj``; False (nothing stored) for another kind."""
        if not isinstance(obj, _TYPES):
            return False
        with self._lock:
            self.generation += 1
            if isinstance(obj, DeviceClass):
                self._classes = {**self._classes, obj.name: obj}
            elif isinstance(obj, ResourceSlice):
                self._slices = {**self._slices, obj.name: obj}
                self._slice_list = tuple(self._slices[n] for n in sorted(self._slices))
            elif isinstance(obj, ResourceClaim):
                key = (obj.namespace, obj.name)
                self._claims = {**self._claims, key: obj}
                assumed = self._assumed.get(key)
                if assumed is not None and _newer_or_same(obj, assumed):
                    self._assumed = {k: v for k, v in self._assumed.items() if k != key}
            else:
                self._templates = {**self._templates, (obj.namespace, obj.name): obj}
        return True

    def delete(self, obj: object) -> bool:
        """Forget ``obj``; False for another kind."""
        if not isinstance(obj, _TYPES):
            return False
        with self._lock:
            self.generation += 1
            if isinstance(obj, DeviceClass):
                self._classes = {k: v for k, v in self._classes.items() if k != obj.name}
            elif isinstance(obj, ResourceSlice):
                self._slices = {k: v for k, v in self._slices.items() if k != obj.name}
                self._slice_list = tuple(self._slices[n] for n in sorted(self._slices))
            elif isinstance(obj, ResourceClaim):
                key = (obj.namespace, obj.name)
                self._claims = {k: v for k, v in self._claims.items() if k != key}
                self._assumed = {k: v for k, v in self._assumed.items() if k != key}
            else:
                key = (obj.namespace, obj.name)
                self._templates = {k: v for k, v in self._templates.items() if k != key}
        return True

    # -- listers ------------------------------------------------------------------------------

    def device_class(self, name: str) -> DeviceClass | None:
        """A DeviceClass by name, or ``None``."""
        return self._classes.get(name)

    def device_classes(self) -> Sequence[DeviceClass]:
        """Every DeviceClass, by name."""
        classes = self._classes
        return tuple(classes[n] for n in sorted(classes))

    def resource_slices(self) -> Sequence[ResourceSlice]:
        """Every ResourceSlice, by name."""
        return self._slice_list

    def resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """A ResourceClaim (the assumed version if PreBind wrote a newer one), or ``None``."""
        key = (namespace, name)
        return self._assumed.get(key) or self._claims.get(key)

    def resource_claims(self) -> Sequence[ResourceClaim]:
        """Every ResourceClaim (assumed versions preferred), by namespace and name."""
        claims, assumed = self._claims, self._assumed
        return tuple(assumed.get(k) or claims[k] for k in sorted(claims))

    def resource_claim_template(self, namespace: str, name: str) -> ResourceClaimTemplate | None:
        """A ResourceClaimTemplate, or ``None``."""
        return self._templates.get((namespace, name))

    # -- in-flight allocations ----------------------------------------------------------------

    def list_all_allocated_devices(self) -> frozenset[DeviceID]:
        """Devices of allocated claims and of in-flight allocations (upstream
        ``ListAllAllocatedDevices``)."""
        devices: set[DeviceID] = set()
        for claim in self.resource_claims():
            devices.update(_allocated(claim))
        for claim in tuple(self._in_flight.values()):
            devices.update(_allocated(claim))
        return frozenset(devices)

    def list_allocated_capacity(self) -> dict[DeviceID, dict[str, Quantity]]:
        """Per shared device (DRAConsumableCapacity), the capacity consumed by allocated and
        in-flight claims (upstream ``AggregatedCapacity``)."""
        out: dict[DeviceID, dict[str, Quantity]] = {}
        in_flight = dict(self._in_flight)
        for claim in self.resource_claims():
            if claim.metadata.uid not in in_flight:  # the in-flight version counts instead
                _add_shared_capacity(claim, out)
        for claim in in_flight.values():
            _add_shared_capacity(claim, out)
        return out

    def claim_has_pending_allocation(self, uid: str) -> bool:
        """Whether Reserve allocated the claim and PreBind has not written it yet."""
        return uid in self._in_flight

    def signal_claim_pending_allocation(self, uid: str, claim: ResourceClaim) -> None:
        """Record Reserve's allocation of the claim with ``uid``."""
        with self._lock:
            self._in_flight = {**self._in_flight, uid: claim}
            self.generation += 1

    def remove_claim_pending_allocation(self, uid: str) -> bool:
        """Forget an in-flight allocation; True if there was one."""
        with self._lock:
            if uid not in self._in_flight:
                return False
            self._in_flight = {k: v for k, v in self._in_flight.items() if k != uid}
            self.generation += 1
            return True

    def assume_claim_after_api_call(self, claim: ResourceClaim) -> None:
        """Keep ``claim`` (as written) until the watch reports it."""
        with self._lock:
            self._assumed = {**self._assumed, (claim.namespace, claim.name): claim}
            self.generation += 1

    def assumed_claim_restore(self, namespace: str, name: str) -> None:
        """Drop an assumed version: the informer's copy is the truth again."""
        with self._lock:
            self._assumed = {k: v for k, v in self._assumed.items() if k != (namespace, name)}
            self.generation += 1

    # -- writes -------------------------------------------------------------------------------

    def update_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        """Write the status of ``claim`` (allocation and reservedFor); the stored claim back.

        Raises:
            BackendError: when the backend refuses the write.
        """
        if self.writer is not None:
            return self.writer(claim)
        self.set(claim)
        return claim

    def update_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """Write ``claim`` itself (an ``Update``, not of the status: DynamicResources adds and
        removes the ``resource.kubernetes.io/delete-protection`` finalizer with it); the
        stored claim back.

        Raises:
            BackendError: when the backend refuses the write.
        """
        if self.updater is not None:
            return self.updater(claim)
        self.set(claim)
        return claim

    def create_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """Create ``claim`` (named from ``generateName`` when it has no name); the stored
        claim back.

        Raises:
            BackendError: when the backend refuses the write.
        """
        if self.claim_writer is not None:
            created = self.claim_writer.create_resource_claim(claim)
            # Known at once, as upstream's PreBind waits until its informer has it: a later
            # cycle of the pod must find it rather than make another.
            self.set(created)
            return created
        meta = claim.metadata
        if not meta.name:
            namespace = meta.namespace or "default"
            attempt = 0
            while True:
                digest = hashlib.sha256(f"{meta.generate_name}/{attempt}".encode()).hexdigest()
                name = meta.generate_name[:58] + digest[:5]
                if (namespace, name) not in self._claims:
                    break
                attempt += 1
            meta = attrs.evolve(meta, name=name, uid=f"{namespace}/{name}")
        stored = attrs.evolve(claim, metadata=meta)
        self.set(stored)
        return stored

    def delete_claim(self, claim: ResourceClaim) -> None:
        """Delete ``claim``.

        Raises:
            BackendError: when the backend refuses the write.
        """
        if self.claim_writer is not None:
            self.claim_writer.delete_resource_claim(claim)
            return
        self.delete(claim)

    def patch_pod_extended_resource_claim_status(
        self, pod: Pod, status: PodExtendedResourceClaimStatus
    ) -> None:
        """Set the pod's ``status.extendedResourceClaimStatus``.

        Raises:
            BackendError: when the backend refuses the write.
        """
        if self.claim_writer is not None:
            self.claim_writer.patch_pod_extended_resource_claim_status(pod, status)
            return
        with self._lock:
            self.extended_resource_claim_statuses = {
                **self.extended_resource_claim_statuses,
                (pod.namespace, pod.name): status,
            }


def _newer_or_same(informer: ResourceClaim, assumed: ResourceClaim) -> bool:
    a, b = informer.metadata.resource_version, assumed.metadata.resource_version
    if not a or not b:
        return True
    try:
        return int(a) >= int(b)
    except ValueError:
        return a == b
