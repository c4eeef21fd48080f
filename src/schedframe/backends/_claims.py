"""The in-memory backend's resourceclaim controller (upstream ``pkg/controller/resourceclaim``).

What kube-controller-manager does for the scheduler's sake, run inside
:class:`~schedframe.backends.MemoryBackend` whenever a pod or a ResourceClaimTemplate is
written:

* for each ``spec.resourceClaims`` entry naming a template, a ResourceClaim is created from the
  template, owned by the pod (``controller: true``) and annotated with
  ``resource.kubernetes.io/pod-claim-name``; its name is recorded in the pod's
  ``status.resourceClaimStatuses``. Upstream names it with ``generateName``
  (``<pod>-<claim>-`` and five random characters); here the five characters are derived from
  the pod's uid and the claim name, so runs are reproducible. A missing template leaves the
  pod waiting (DynamicResources' PreEnqueue says ``ResourceClaim not created yet``) until the
  template is created.
* when a pod finishes or is deleted, it is removed from ``status.reservedFor`` of its claims;
  a claim no pod reserves any more that carries the ``resource.kubernetes.io/delete-protection``
  finalizer (DynamicResources adds it with the allocation) is deallocated, then loses that
  finalizer; claims the pod owns are deleted (the garbage collector's part).
* a deleted claim that has finalizers stays, marked with ``deletionTimestamp``; when no pod
  reserves it, the controller clears its allocation and removes the delete-protection
  finalizer, and the claim goes once no finalizer is left (others are their owners'
  business). This covers the claim DynamicResources creates for a pod's
  DRA-backed extended resources, which the pod's ``status.extendedResourceClaimStatus``
  names.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Final

import attrs

from schedframe.objects import ObjectMeta, OwnerReference, Pod
from schedframe.objects._resource import ResourceClaim, ResourceClaimTemplate

if TYPE_CHECKING:
    from schedframe.backends._memory import MemoryBackend

__all__ = ["POD_CLAIM_NAME_ANNOTATION"]

#: Upstream ``resourceapi.Finalizer``: DynamicResources adds it with a claim's allocation.
DELETE_PROTECTION: Final = "resource.kubernetes.io/delete-protection"
#: Upstream ``resourceapi.PodResourceClaimAnnotation``.
POD_CLAIM_NAME_ANNOTATION: Final = "resource.kubernetes.io/pod-claim-name"
# apimachinery's rand.String alphabet (no vowels, no ambiguous characters).
_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
_TERMINAL: Final = ("Succeeded", "Failed")


def _suffix(pod: Pod, claim_name: str) -> str:
    digest = hashlib.sha256(f"{pod.uid}/{claim_name}".encode()).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:5])


def generated_name(prefix: str, seed: str) -> str:
    """``prefix`` and five characters derived from ``seed`` (an apiserver ``generateName``
    made reproducible), the prefix cut to 58 characters as upstream's
    ``SimpleNameGenerator``."""
    digest = hashlib.sha256(f"{prefix}/{seed}".encode()).digest()
    return prefix[:58] + "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:5])


def claim_name_for(pod: Pod, claim_name: str) -> str:
    """The name of the claim made for ``pod``'s claim ``claim_name`` from its template."""
    prefix = f"{pod.name}-{claim_name}"
    # Upstream's generateName keeps names within 63 characters: cut the middle if needed.
    if len(prefix) > 57:
        prefix = prefix[:28] + prefix[-29:]
    return f"{prefix}-{_suffix(pod, claim_name)}"


def has_claims(pod: Pod) -> bool:
    """Whether ``pod`` uses ResourceClaims: its own, or the one DynamicResources made for its
    DRA-backed extended resources (``status.extendedResourceClaimStatus``)."""
    return bool(pod.spec.resource_claims) or pod.status.extended_resource_claim_status is not None


def sync_pod(backend: MemoryBackend, pod: Pod) -> None:
    """Create missing claims from templates for ``pod``; release a finished pod's claims.

    Called with the backend's lock held, after ``pod`` was written.
    """
    if pod.status.phase in _TERMINAL or pod.metadata.deletion_timestamp is not None:
        release_pod(backend, pod, delete_owned=False)
        return
    statuses = dict(pod.status.resource_claim_statuses)
    added: list[tuple[str, str | None]] = []
    for ref in pod.spec.resource_claims:
        if ref.resource_claim_template_name is None or ref.name in statuses:
            continue
        template = backend._store["ResourceClaimTemplate"].get(
            (pod.namespace or "default", ref.resource_claim_template_name)
        )
        if not isinstance(template, ResourceClaimTemplate):
            continue  # waits for the template
        name = claim_name_for(pod, ref.name)
        key = (pod.namespace or "default", name)
        if key not in backend._store["ResourceClaim"]:
            owner = OwnerReference(
                api_version="v1", kind="Pod", name=pod.name, uid=pod.uid, controller=True
            )
            meta = ObjectMeta(
                name=name,
                namespace=pod.namespace or "default",
                labels=dict(template.claim_metadata.labels),
                annotations={
                    **template.claim_metadata.annotations,
                    POD_CLAIM_NAME_ANNOTATION: ref.name,
                },
                owner_references=(owner,),
            )
            claim = attrs.evolve(template.claim, metadata=meta)
            backend._create("ResourceClaim", claim, backend._now())
        added.append((ref.name, name))
    if added:
        key = (pod.namespace or "default", pod.name)
        stored = backend._store["Pod"].get(key)
        if isinstance(stored, Pod):
            new_statuses = (*stored.status.resource_claim_statuses, *added)
            backend._write(
                "Pod", key, stored, stored, status={"resource_claim_statuses": new_statuses}
            )


def sync_template(backend: MemoryBackend, template: ResourceClaimTemplate) -> None:
    """A new or changed template: make the claims pods of its namespace wait for."""
    for pod in list(backend._store["Pod"].values()):
        if not isinstance(pod, Pod) or pod.namespace != template.namespace:
            continue
        if any(r.resource_claim_template_name == template.name for r in pod.spec.resource_claims):
            sync_pod(backend, pod)


def release_pod(backend: MemoryBackend, pod: Pod, *, delete_owned: bool) -> None:
    """Drop ``pod`` from its claims' ``reservedFor``; deallocate claims nobody reserves;
    delete the claims it owns when ``delete_owned`` (the pod is gone)."""
    namespace = pod.namespace or "default"
    for key, claim in list(backend._store["ResourceClaim"].items()):
        if not isinstance(claim, ResourceClaim) or key[0] != namespace:
            continue
        owner = claim.metadata.controller_ref
        owned = delete_owned and owner is not None and owner.uid == pod.uid
        if claim.is_reserved_for(pod.uid):
            kept = tuple(r for r in claim.reserved_for if r.uid != pod.uid)
            new = attrs.evolve(claim, reserved_for=kept)
            if not kept and DELETE_PROTECTION in claim.metadata.finalizers:
                new = attrs.evolve(new, allocation=None)
            # The update (deallocation) comes first, as upstream's controller writes it
            # before the garbage collector deletes the claim: pods waiting for devices are
            # requeued by it.
            written = backend._write("ResourceClaim", key, new, claim)
            assert isinstance(written, ResourceClaim)
            claim = written
            if not kept:
                remaining = _drop_protection(backend, key, claim)
                if remaining is None:
                    continue  # it was being deleted: now gone
                claim = remaining
        if owned:
            backend._delete("ResourceClaim", key, None)


def _drop_protection(
    backend: MemoryBackend, key: tuple[str, str], claim: ResourceClaim
) -> ResourceClaim | None:
    """The controller's second write for a claim nobody reserves: remove the delete-protection
    finalizer once the claim is unallocated (an ``Update``). None when that removed the
    claim (it was being deleted and had no other finalizer)."""
    finalizers = claim.metadata.finalizers
    if claim.allocation is not None or DELETE_PROTECTION not in finalizers:
        return claim
    kept = tuple(f for f in finalizers if f != DELETE_PROTECTION)
    new = attrs.evolve(claim, metadata=attrs.evolve(claim.metadata, finalizers=kept))
    if claim.metadata.deletion_timestamp is not None and not kept:
        backend._remove("ResourceClaim", key, new)
        return None
    written = backend._write("ResourceClaim", key, new, claim)
    assert isinstance(written, ResourceClaim)
    return written


def sync_deleted_claim(backend: MemoryBackend, key: tuple[str, str], claim: ResourceClaim) -> None:
    """A claim just marked for deletion (it has finalizers): when no pod reserves it and it
    has the delete-protection finalizer, clear its allocation (a status write) and remove the
    finalizer, as upstream's controller does; the claim goes when no finalizer is left.

    Called with the backend's lock held.
    """
    if claim.reserved_for or DELETE_PROTECTION not in claim.metadata.finalizers:
        return
    if claim.allocation is not None:
        written = backend._write("ResourceClaim", key, attrs.evolve(claim, allocation=None), claim)
        assert isinstance(written, ResourceClaim)
        claim = written
    _drop_protection(backend, key, claim)
