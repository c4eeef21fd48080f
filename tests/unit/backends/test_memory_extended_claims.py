"""MemoryBackend: the ResourceClaims DynamicResources makes for DRA-backed extended resources
(ExtendedResourceClaimWriter) and the pod's ``status.extendedResourceClaimStatus``."""

from __future__ import annotations

import attrs
import pytest

from schedframe.backends import ExtendedResourceClaimWriter, MemoryBackend
from schedframe.errors import BackendError
from schedframe.objects import (
    Container,
    ContainerExtendedResourceRequest,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodExtendedResourceClaimStatus,
    PodSpec,
    ResourceClaim,
    ResourceClaimConsumerReference,
)


def _pod() -> Pod:
    return Pod(
        metadata=ObjectMeta(name="p", namespace="default"),
        spec=PodSpec(containers=(Container(name="c", requests={"example.com/gpu": 1}),)),
    )


def _claim(owner: Pod) -> ResourceClaim:
    ref = OwnerReference(api_version="v1", kind="Pod", name="p", uid=owner.uid, controller=True)
    return ResourceClaim(
        metadata=ObjectMeta(
            name="",
            namespace="default",
            generate_name="p-extended-resources-",
            owner_references=(ref,),
        )
    )


def test_claims_are_named_reproducibly_and_deleted() -> None:
    names = []
    for _ in range(2):
        backend = MemoryBackend()
        assert isinstance(backend, ExtendedResourceClaimWriter)
        pod = backend.create(_pod())
        first = backend.create_resource_claim(_claim(pod))
        second = backend.create_resource_claim(_claim(pod))
        assert first.name.startswith("p-extended-resources-") and len(first.name) == 26
        assert first.name != second.name and first.metadata.uid
        names.append((first.name, second.name))
        backend.delete_resource_claim(first)
        assert backend.get("ResourceClaim", first.name, "default") is None
        with pytest.raises(BackendError) as info:
            backend.delete_resource_claim(first)
        assert info.value.code == 404
        stale = attrs.evolve(second, metadata=attrs.evolve(second.metadata, uid="other"))
        with pytest.raises(BackendError) as info:
            backend.delete_resource_claim(stale)
        assert info.value.code == 409
    assert names[0] == names[1]


def test_pod_status_names_the_claim_and_deleting_the_pod_releases_it() -> None:
    backend = MemoryBackend()
    pod = backend.create(_pod())
    claim = backend.create_resource_claim(_claim(pod))
    reserved = (ResourceClaimConsumerReference(resource="pods", name="p", uid=pod.uid),)
    backend.update_resource_claim_status(attrs.evolve(claim, reserved_for=reserved))
    status = PodExtendedResourceClaimStatus(
        resource_claim_name=claim.name,
        request_mappings=(
            ContainerExtendedResourceRequest(
                container_name="c", resource_name="example.com/gpu", request_name="r"
            ),
        ),
    )
    backend.patch_pod_extended_resource_claim_status(pod, status)
    stored = backend.get("Pod", "p", "default")
    assert isinstance(stored, Pod) and stored.status.extended_resource_claim_status == status
    version = stored.metadata.resource_version
    backend.patch_pod_extended_resource_claim_status(stored, status)  # unchanged: no write
    again = backend.get("Pod", "p", "default")
    assert isinstance(again, Pod) and again.metadata.resource_version == version
    # The pod owns the claim: deleting the pod deletes it (the garbage collector's part).
    backend.delete(again)
    assert backend.get("ResourceClaim", claim.name, "default") is None
