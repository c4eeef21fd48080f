"""MemoryBackend: ResourceClaim finalizers (``resource.kubernetes.io/delete-protection``), the
claim ``Update`` DynamicResources adds it with, and deletion held by finalizers as the API
server and the resourceclaim controller do."""

from __future__ import annotations

import attrs
import pytest

from schedframe.backends import MemoryBackend, ResourceClaimWriter
from schedframe.errors import BackendError
from schedframe.objects import (
    AllocationResult,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    ObjectMeta,
    Pod,
    PodResourceClaim,
    PodSpec,
    ResourceClaim,
    ResourceClaimConsumerReference,
)

PROTECTION = "resource.kubernetes.io/delete-protection"
ALLOCATION = AllocationResult(
    devices=DeviceAllocationResult(
        results=(DeviceRequestAllocationResult(request="r", driver="d", pool="p", device="x"),)
    )
)


def _claim(*finalizers: str) -> ResourceClaim:
    return ResourceClaim(metadata=ObjectMeta(name="c", namespace="default", finalizers=finalizers))


def _with_finalizers(claim: ResourceClaim, *finalizers: str) -> ResourceClaim:
    return attrs.evolve(claim, metadata=attrs.evolve(claim.metadata, finalizers=finalizers))


def _stored(backend: MemoryBackend) -> ResourceClaim | None:
    got = backend.get("ResourceClaim", "c", "default")
    assert got is None or isinstance(got, ResourceClaim)
    return got


def _reserved_by(backend: MemoryBackend, claim: ResourceClaim) -> tuple[Pod, ResourceClaim]:
    uses = (PodResourceClaim(name="c", resource_claim_name="c"),)
    pod = backend.create(
        Pod(metadata=ObjectMeta(name="p", namespace="default"), spec=PodSpec(resource_claims=uses))
    )
    ref = ResourceClaimConsumerReference(resource="pods", name="p", uid=pod.uid)
    written = backend.update_resource_claim_status(
        attrs.evolve(claim, allocation=ALLOCATION, reserved_for=(ref,))
    )
    return pod, written


def test_update_writes_the_finalizer_and_keeps_the_status() -> None:
    backend = MemoryBackend()
    assert isinstance(backend, ResourceClaimWriter)
    claim = backend.create(_claim())
    allocated = backend.update_resource_claim_status(attrs.evolve(claim, allocation=ALLOCATION))
    # A status in the update is ignored (the status subresource's business).
    sent = attrs.evolve(_with_finalizers(allocated, PROTECTION), allocation=None)
    written = backend.update_resource_claim(sent)
    assert written.metadata.finalizers == (PROTECTION,)
    assert written.allocation == ALLOCATION
    assert written.metadata.resource_version != allocated.metadata.resource_version
    assert _stored(backend) == written
    # The version sent is now stale: a conflict, as the API server's.
    with pytest.raises(BackendError) as info:
        backend.update_resource_claim(_with_finalizers(allocated))
    assert info.value.code == 409
    with pytest.raises(BackendError) as info:
        backend.update_resource_claim(attrs.evolve(claim, metadata=ObjectMeta(name="x")))
    assert info.value.code == 404


def test_a_reserved_claim_is_kept_until_its_pod_releases_it() -> None:
    backend = MemoryBackend()
    claim = backend.create(_claim(PROTECTION))
    pod, _ = _reserved_by(backend, claim)
    marked = backend.delete(claim)
    assert isinstance(marked, ResourceClaim)
    assert marked.metadata.deletion_timestamp is not None
    stored = _stored(backend)
    assert stored is not None and stored.allocation == ALLOCATION  # still in use
    assert stored.metadata.deletion_timestamp is not None
    assert backend.delete(stored) == stored  # deleting again changes nothing
    # The pod goes: the controller deallocates, removes the finalizer, the claim goes.
    backend.delete(pod)
    assert _stored(backend) is None


def test_an_unreserved_claim_goes_once_the_controller_drops_its_finalizer() -> None:
    backend = MemoryBackend()
    claim = backend.create(_claim(PROTECTION))
    backend.update_resource_claim_status(attrs.evolve(claim, allocation=ALLOCATION))
    backend.delete(claim)
    assert _stored(backend) is None


def test_another_finalizer_holds_the_claim_until_removed() -> None:
    backend = MemoryBackend()
    claim = backend.create(_claim(PROTECTION, "example.com/keep"))
    backend.update_resource_claim_status(attrs.evolve(claim, allocation=ALLOCATION))
    backend.delete(claim)
    stored = _stored(backend)
    # The controller deallocated it and dropped its own finalizer only.
    assert stored is not None and stored.allocation is None
    assert stored.metadata.finalizers == ("example.com/keep",)
    assert stored.metadata.deletion_timestamp is not None
    backend.update_resource_claim(_with_finalizers(stored))
    assert _stored(backend) is None


def test_a_released_claim_without_the_finalizer_stays_allocated() -> None:
    # Upstream's controller deallocates only claims the scheduler allocated (the finalizer).
    backend = MemoryBackend()
    claim = backend.create(_claim())
    pod, _ = _reserved_by(backend, claim)
    backend.delete(pod)
    stored = _stored(backend)
    assert stored is not None and stored.reserved_for == ()
    assert stored.allocation == ALLOCATION


def test_a_released_protected_claim_is_deallocated_and_unprotected() -> None:
    backend = MemoryBackend()
    claim = backend.create(_claim(PROTECTION))
    pod, _ = _reserved_by(backend, claim)
    backend.delete(pod)
    stored = _stored(backend)
    assert stored is not None and stored.reserved_for == ()
    assert stored.allocation is None and stored.metadata.finalizers == ()
    assert stored.metadata.deletion_timestamp is None
