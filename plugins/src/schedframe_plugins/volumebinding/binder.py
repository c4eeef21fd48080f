"""The volume binder VolumeBinding drives (upstream ``volumebinding/binder.go`` and
``assume_cache.go``): it sorts a pod's claims, finds volumes or provisioning for a node,
assumes the choice in its caches at Reserve, writes it at PreBind and waits for the
PersistentVolume controller to finish the binding."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Final, Generic, TypeVar

import attrs

from schedframe import framework as fw
from schedframe._evolve import evolve
from schedframe.errors import BackendError
from schedframe.objects import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    ClaimReference,
    CSIStorageCapacity,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
    check_node_affinity,
    find_matching_volume,
    is_volume_bound_to_claim,
)

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "AssumeCache",
    "BindingError",
    "BindingInfo",
    "PodVolumeClaims",
    "PodVolumes",
    "VolumeBinder",
    "check_node_affinity",
    "find_matching_volume",
    "is_volume_bound_to_claim",
]

#: No volume of the claim's class fits the claim on this node.
ERR_REASON_BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"
#: A bound volume's node affinity excludes the node.
ERR_REASON_NODE_CONFLICT: Final = "node(s) had volume node affinity conflict"
#: No CSIStorageCapacity reachable from the node has room for a new volume.
ERR_REASON_NOT_ENOUGH_SPACE: Final = "node(s) did not have enough free storage"
#: A claim names a volume that does not exist.
ERR_REASON_PV_NOT_EXIST: Final = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)

_T = TypeVar("_T", PersistentVolume, PersistentVolumeClaim)


class BindingError(Exception):
    """A volume binding step failed; the message is upstream's error text."""


class AssumeCache(Generic[_T]):
    """Upstream ``AssumeCache`` over an informer: the API object, or a newer assumed copy.

    An assumed copy (made at Reserve, never written) hides the API object until the watch
    delivers a version newer than the one it was made from, or until :meth:`restore`.
    """

    def __init__(self, description: str, get_api: Callable[[str], _T | None]) -> None:
        self._description = description
        self._get_api: Callable[[str], _T | None] = get_api
        self._assumed: dict[str, _T] = {}
        self._lock = threading.Lock()

    def get_api(self, key: str) -> _T:
        """The object as the watch reports it.

        Raises:
            BindingError: ``could not find v1.PersistentVolume "name"`` and the like.
        """
        obj = self._get_api(key)
        if obj is None:
            raise BindingError(f'could not find {self._description} "{key}"')
        return obj

    def get(self, key: str) -> _T:
        """The latest object: the assumed copy while it is not older than the API's."""
        api = self.get_api(key)
        with self._lock:
            assumed = self._assumed.get(key)
            if assumed is None:
                return api
            if api.resource_version > assumed.resource_version:
                del self._assumed[key]  # the watch caught up: the API object wins
                return api
            return assumed

    def assume(self, key: str, obj: _T) -> None:
        """Make ``obj`` the latest object of ``key`` (upstream ``Assume``).

        Raises:
            BindingError: the object does not exist, or ``obj`` is older than the latest.
        """
        latest = self.get(key)
        if obj.resource_version < latest.resource_version:
            raise BindingError(
                f'{self._description} "{key}" is out of sync (stored: '
                f"{latest.resource_version}, assume: {obj.resource_version})"
            )
        with self._lock:
            self._assumed[key] = obj

    def restore(self, key: str) -> None:
        """Drop the assumed copy of ``key`` (upstream ``Restore``)."""
        with self._lock:
            self._assumed.pop(key, None)

    def assumed(self) -> dict[str, _T]:
        """The assumed copies, by key (for tests and ``explain``)."""
        with self._lock:
            return dict(self._assumed)


@attrs.define
class BindingInfo:
    """A claim and the volume chosen for it (upstream ``BindingInfo``)."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume


@attrs.define
class PodVolumes:
    """What Filter found for one node (upstream ``PodVolumes``)."""

    static_bindings: list[BindingInfo] | None = None
    dynamic_provisions: list[PersistentVolumeClaim] | None = None


@attrs.define
class PodVolumeClaims:
    """A pod's claims by state (upstream ``PodVolumeClaims``)."""

    bound_claims: list[PersistentVolumeClaim] = attrs.field(factory=list)
    unbound_claims_delay_binding: list[PersistentVolumeClaim] = attrs.field(factory=list)
    unbound_claims_immediate: list[PersistentVolumeClaim] = attrs.field(factory=list)
    unbound_volumes_delay_binding: dict[str, list[PersistentVolume]] = attrs.field(factory=dict)


def _is_pvc_fully_bound(pvc: PersistentVolumeClaim) -> bool:
    return bool(pvc.volume_name) and ANN_BIND_COMPLETED in pvc.metadata.annotations


def claim_name(pod: Pod, index: int) -> tuple[str, bool] | None:
    """The claim the pod's ``index``-th volume uses, and whether it is ephemeral."""
    volume = pod.spec.volumes[index]
    name = volume.claim_name(pod.name)
    return None if name is None else (name, volume.ephemeral)


def volume_is_for_pod(pod: Pod, pvc: PersistentVolumeClaim) -> str | None:
    """Upstream ``ephemeral.VolumeIsForPod``: why the claim is not the pod's, or ``None``."""
    for ref in pvc.metadata.owner_references:
        if ref.controller and ref.uid == pod.uid:
            return None
    return (
        f"PVC {pvc.namespace}/{pvc.name} was not created for pod "
        f"{pod.namespace}/{pod.name} (pod is not owner)"
    )


def _volume_limit(cap: CSIStorageCapacity) -> int | None:
    return cap.maximum_volume_size if cap.maximum_volume_size is not None else cap.capacity


class VolumeBinder:
    """Upstream ``volumeBinder`` over a :class:`~schedframe.framework.StorageLister`.

    Args:
        lister: the storage objects, as the backend's watch reports them.
        node: looks a node up by name (PreBind re-checks node affinity), or ``None``.
        writer: the backend's PV/PVC writes, or ``None`` when it cannot make them.
        bind_timeout: seconds PreBind waits for the volumes to be bound.
        clock: measures the timeout.
    """

    def __init__(
        self,
        lister: fw.StorageLister,
        node: Callable[[str], Node | None],
        writer: fw.VolumeWriter | None,
        bind_timeout: float,
        clock: fw.Clock,
    ) -> None:
        self.lister = lister
        self._node = node
        self._writer = writer
        self.bind_timeout = bind_timeout
        self._clock = clock
        self.pv_cache: AssumeCache[PersistentVolume] = AssumeCache(
            "v1.PersistentVolume", lister.persistent_volume
        )
        self.pvc_cache: AssumeCache[PersistentVolumeClaim] = AssumeCache(
            "v1.PersistentVolumeClaim", self._api_pvc
        )

    def _api_pvc(self, key: str) -> PersistentVolumeClaim | None:
        namespace, _, name = key.partition("/")
        return self.lister.persistent_volume_claim(namespace, name)

    def list_pvs(self, class_name: str) -> list[PersistentVolume]:
        """The volumes of a class, assumed copies included (upstream ``ListPVs``)."""
        result = []
        for pv in self.lister.persistent_volumes():
            if pv.storage_class_name == class_name:
                result.append(self.pv_cache.get(pv.name))
        return result

    # -- PreFilter ---------------------------------------------------------------------------

    def _is_volume_bound(self, pod: Pod, index: int) -> tuple[bool, PersistentVolumeClaim | None]:
        found = claim_name(pod, index)
        if found is None:
            return True, None
        name, ephemeral = found
        key = f"{pod.namespace}/{name}"
        try:
            pvc = self.pvc_cache.get(key)
        except BindingError as exc:
            raise BindingError(f'error getting PVC "{key}": {exc}') from None
        if ephemeral:
            why = volume_is_for_pod(pod, pvc)
            if why is not None:
                raise BindingError(why)
        return _is_pvc_fully_bound(pvc), pvc

    def get_pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """Upstream ``GetPodVolumeClaims``: bound, delayed and immediate unbound claims, with
        the volumes of each delayed claim's class.

        Raises:
            BindingError: a claim cannot be read, or its class has no binding mode.
        """
        claims = PodVolumeClaims()
        for index in range(len(pod.spec.volumes)):
            bound, pvc = self._is_volume_bound(pod, index)
            if pvc is None:
                continue
            if bound:
                claims.bound_claims.append(pvc)
            elif self.is_delay_binding_mode(pvc) and not pvc.volume_name:
                claims.unbound_claims_delay_binding.append(pvc)
            else:
                claims.unbound_claims_immediate.append(pvc)
        for pvc in claims.unbound_claims_delay_binding:
            cls = pvc.class_name
            if cls not in claims.unbound_volumes_delay_binding:
                claims.unbound_volumes_delay_binding[cls] = self.list_pvs(cls)
        return claims

    def is_delay_binding_mode(self, pvc: PersistentVolumeClaim) -> bool:
        """Upstream ``IsDelayBindingMode``: the claim's class waits for the first consumer
        (a missing class is not delayed)."""
        if not pvc.class_name:
            return False
        cls = self.lister.storage_class(pvc.class_name)
        return cls is not None and cls.volume_binding_mode == "WaitForFirstConsumer"

    # -- Filter ------------------------------------------------------------------------------

    def find_pod_volumes(
        self, pod: Pod, claims: PodVolumeClaims, node: Node
    ) -> tuple[PodVolumes, list[str]]:
        """Upstream ``FindPodVolumes``: the bindings and provisionings for ``node``, and the
        reasons it cannot host the pod's volumes (none when it can).

        Raises:
            BindingError: a claim to provision has no class, or its class is missing.
        """
        volumes = PodVolumes()
        unbound_ok = bound_ok = storage_ok = pvs_found = True
        bindings: list[BindingInfo] = []
        provisions: list[PersistentVolumeClaim] = []
        if claims.bound_claims:
            bound_ok, pvs_found = self._check_bound_claims(claims.bound_claims, node)
        to_bind = claims.unbound_claims_delay_binding
        if to_bind:
            to_match: list[PersistentVolumeClaim] = []
            to_provision: list[PersistentVolumeClaim] = []
            fast_fail = False
            for pvc in to_bind:
                selected = pvc.metadata.annotations.get(ANN_SELECTED_NODE)
                if selected is not None:
                    if selected != node.name:
                        unbound_ok = False  # the claim is being provisioned elsewhere
                        fast_fail = True
                        break
                    to_provision.append(pvc)
                else:
                    to_match.append(pvc)
            if not fast_fail:
                if to_match:
                    unbound_ok, bindings, unmatched = self._find_matching_volumes(
                        to_match, claims.unbound_volumes_delay_binding, node
                    )
                    to_provision.extend(unmatched)
                if to_provision:
                    unbound_ok, storage_ok, provisions = self._check_volume_provisions(
                        to_provision, node
                    )
        volumes.static_bindings = bindings or None
        volumes.dynamic_provisions = provisions or None
        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not storage_ok:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return volumes, reasons

    def _check_bound_claims(
        self, claims: list[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, bool]:
        for pvc in claims:
            try:
                pv = self.pv_cache.get(pvc.volume_name)
            except BindingError:
                return True, False
            if not check_node_affinity(pv, node):
                return False, True
        return True, True

    def _find_matching_volumes(
        self,
        claims: list[PersistentVolumeClaim],
        volumes_by_class: dict[str, list[PersistentVolume]],
        node: Node,
    ) -> tuple[bool, list[BindingInfo], list[PersistentVolumeClaim]]:
        chosen: set[str] = set()
        found = True
        bindings: list[BindingInfo] = []
        unbound: list[PersistentVolumeClaim] = []
        for pvc in sorted(claims, key=lambda c: c.request):  # smallest requests first
            pvs = volumes_by_class.get(pvc.class_name, [])
            pv = find_matching_volume(pvc, pvs, node, chosen.__contains__, delay_binding=True)
            if pv is None:
                unbound.append(pvc)
                found = False
                continue
            chosen.add(pv.name)
            bindings.append(BindingInfo(pvc=pvc, pv=pv))
        return found, bindings, unbound

    def _check_volume_provisions(
        self, claims: list[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, bool, list[PersistentVolumeClaim]]:
        provisions: list[PersistentVolumeClaim] = []
        for pvc in claims:
            cls_name = pvc.class_name
            if not cls_name:
                raise BindingError(f'no class for claim "{pvc.key}"')
            cls = self.lister.storage_class(cls_name)
            if cls is None:
                raise BindingError(f'failed to find storage class "{cls_name}"')
            if cls.provisioner in ("", NOT_SUPPORTED_PROVISIONER):
                return False, True, []
            if cls.allowed_topologies and not any(
                t.matches(node.labels) for t in cls.allowed_topologies
            ):
                return False, True, []
            if not self._has_enough_capacity(cls, pvc, node):
                return True, False, []
            provisions.append(pvc)
        return True, True, provisions

    def _has_enough_capacity(
        self, cls: StorageClass, pvc: PersistentVolumeClaim, node: Node
    ) -> bool:
        """Upstream ``hasEnoughCapacity``: only for CSI drivers with ``storageCapacity``."""
        driver = self.lister.csi_driver(cls.provisioner)
        if driver is None or not driver.storage_capacity:
            return True
        for cap in self.lister.csi_storage_capacities():
            limit = _volume_limit(cap)
            if (
                cap.storage_class_name == cls.name
                and limit is not None
                and limit >= pvc.request
                and cap.node_topology is not None
                and cap.node_topology.matches(node.labels)
            ):
                return True
        return False

    # -- Reserve / Unreserve -----------------------------------------------------------------

    def are_pod_volumes_bound(self, pod: Pod) -> bool:
        """Upstream ``arePodVolumesBound`` (through the assume cache)."""
        for index in range(len(pod.spec.volumes)):
            try:
                bound, _ = self._is_volume_bound(pod, index)
            except BindingError:
                return False
            if not bound:
                return False
        return True

    def assume_pod_volumes(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """Upstream ``AssumePodVolumes``: pre-bind the chosen volumes and mark the claims to
        provision with the node, in the caches only. True when everything is bound already.

        Raises:
            BindingError: an assumption failed (what was assumed is reverted).
        """
        if self.are_pod_volumes_bound(pod):
            return True
        new_bindings: list[BindingInfo] = []
        for binding in volumes.static_bindings or ():
            new_pv, dirty = get_bind_volume_to_claim(binding.pv, binding.pvc)
            if dirty:
                try:
                    self.pv_cache.assume(new_pv.name, new_pv)
                except BindingError:
                    self._revert_pvs(new_bindings)
                    raise
            new_bindings.append(BindingInfo(pvc=binding.pvc, pv=new_pv))
        new_claims: list[PersistentVolumeClaim] = []
        for pvc in volumes.dynamic_provisions or ():
            annotations = {**pvc.metadata.annotations, ANN_SELECTED_NODE: node_name}
            clone = evolve(pvc, metadata=evolve(pvc.metadata, annotations=annotations))
            try:
                self.pvc_cache.assume(clone.key, clone)
            except BindingError:
                self._revert_pvs(new_bindings)
                self._revert_pvcs(new_claims)
                raise
            new_claims.append(clone)
        volumes.static_bindings = new_bindings
        volumes.dynamic_provisions = new_claims
        return False

    def revert_assumed_pod_volumes(self, volumes: PodVolumes) -> None:
        """Upstream ``RevertAssumedPodVolumes``."""
        self._revert_pvs(volumes.static_bindings or ())
        self._revert_pvcs(volumes.dynamic_provisions or ())

    def _revert_pvs(self, bindings: Sequence[BindingInfo]) -> None:
        for binding in bindings:
            self.pv_cache.restore(binding.pv.name)

    def _revert_pvcs(self, claims: Sequence[PersistentVolumeClaim]) -> None:
        for pvc in claims:
            self.pvc_cache.restore(pvc.key)

    # -- PreBind -----------------------------------------------------------------------------

    def bind_pod_volumes(self, pod: Pod, node_name: str, volumes: PodVolumes) -> None:
        """Upstream ``BindPodVolumes``: write the bindings and provisioning requests, then wait
        (on the storage watch, up to ``bind_timeout``) until the claims are fully bound.

        Raises:
            BindingError: a write failed (its API error), a check failed, or the wait timed
                out (``binding volumes: context deadline exceeded``).
        """
        bindings = volumes.static_bindings
        claims = volumes.dynamic_provisions
        self._bind_api_update(pod, bindings, claims)
        assert bindings is not None and claims is not None
        # The timeout runs on wall time, as upstream's, and on the scheduler's clock too, so
        # that a virtual clock that jumps ahead ends the wait as well.
        deadline = self._clock.now() + self.bind_timeout
        wall_deadline = time.monotonic() + self.bind_timeout
        while True:
            generation = self.lister.generation
            try:
                if self._check_bindings(pod, node_name, bindings, claims):
                    return
            except BindingError as exc:
                raise BindingError(f"binding volumes: {exc}") from None
            remaining = min(deadline - self._clock.now(), wall_deadline - time.monotonic())
            if remaining <= 0:
                raise BindingError("binding volumes: context deadline exceeded")
            self.lister.wait_for_change(generation, min(remaining, 1.0))

    def _bind_api_update(
        self,
        pod: Pod,
        bindings: list[BindingInfo] | None,
        claims: list[PersistentVolumeClaim] | None,
    ) -> None:
        pod_name = f"{pod.namespace}/{pod.name}"
        if bindings is None:
            raise BindingError(f'failed to get cached bindings for pod "{pod_name}"')
        if claims is None:
            raise BindingError(f'failed to get cached claims to provision for pod "{pod_name}"')
        if self._writer is None:
            raise BindingError("the backend cannot write PersistentVolumes and claims")
        done_bindings = done_claims = 0
        try:
            for binding in bindings:
                binding.pv = self._writer.update_persistent_volume(binding.pv)
                done_bindings += 1
            for i, pvc in enumerate(claims):
                claims[i] = self._writer.update_persistent_volume_claim(pvc)
                done_claims += 1
        except BackendError as exc:
            raise BindingError(str(exc)) from None
        finally:
            # Only what was not written is reverted; written objects come back on the watch.
            self._revert_pvs(bindings[done_bindings:])
            self._revert_pvcs(claims[done_claims:])

    def _check_bindings(
        self,
        pod: Pod,
        node_name: str,
        bindings: list[BindingInfo],
        claims: list[PersistentVolumeClaim],
    ) -> bool:
        """Upstream ``checkBindings``, on the API objects (not the assumed ones)."""
        node = self._node(node_name)
        if node is None:
            raise BindingError(f'failed to get node "{node_name}": node "{node_name}" not found')
        for binding in bindings:
            try:
                pv = self.pv_cache.get_api(binding.pv.name)
                pvc = self.pvc_cache.get_api(binding.pvc.key)
            except BindingError as exc:
                raise BindingError(f"failed to check binding: {exc}") from None
            if binding.pv.resource_version > pv.resource_version:
                return False  # our write has not come back on the watch yet
            if not check_node_affinity(pv, node):
                raise BindingError(
                    f'pv "{pv.name}" node affinity doesn\'t match node "{node.name}": '
                    "no matching NodeSelectorTerms"
                )
            if pv.claim_ref is None or not pv.claim_ref.uid:
                raise BindingError(f'ClaimRef got reset for pv "{pv.name}"')
            if not _is_pvc_fully_bound(pvc):
                return False
        for claim in claims:
            try:
                pvc = self.pvc_cache.get_api(claim.key)
            except BindingError as exc:
                raise BindingError(f"failed to check provisioning pvc: {exc}") from None
            if claim.resource_version > pvc.resource_version:
                return False
            if not pvc.metadata.annotations:
                raise BindingError(f'selectedNode annotation reset for PVC "{pvc.name}"')
            if pvc.metadata.annotations.get(ANN_SELECTED_NODE) != node_name:
                raise BindingError(f'provisioning failed for PVC "{pvc.name}"')
            if pvc.volume_name:
                bound_pv = self.lister.persistent_volume(pvc.volume_name)
                if bound_pv is None:
                    return False  # not on the watch yet
                if not check_node_affinity(bound_pv, node):
                    raise BindingError(
                        f'pv "{bound_pv.name}" node affinity doesn\'t match node '
                        f'"{node.name}": no matching NodeSelectorTerms'
                    )
            if not _is_pvc_fully_bound(pvc):
                return False
        return True


def get_bind_volume_to_claim(
    pv: PersistentVolume, pvc: PersistentVolumeClaim
) -> tuple[PersistentVolume, bool]:
    """Upstream ``GetBindVolumeToClaim``: the volume with its claimRef naming the claim (and
    ``pv.kubernetes.io/bound-by-controller`` unless it was pre-bound), and whether it
    changed."""
    dirty = False
    set_bound_by_controller = not is_volume_bound_to_claim(pv, pvc)
    new = pv
    ref = pv.claim_ref
    if (
        ref is None
        or ref.name != pvc.name
        or ref.namespace != pvc.namespace
        or ref.uid != pvc.metadata.uid
    ):
        new = evolve(
            new,
            claim_ref=ClaimReference(
                namespace=pvc.namespace,
                name=pvc.name,
                uid=pvc.metadata.uid,
                resource_version=pvc.metadata.resource_version,
            ),
        )
        dirty = True
    if set_bound_by_controller and ANN_BOUND_BY_CONTROLLER not in new.metadata.annotations:
        annotations = {**new.metadata.annotations, ANN_BOUND_BY_CONTROLLER: "yes"}
        new = evolve(new, metadata=evolve(new.metadata, annotations=annotations))
        dirty = True
    return new, dirty
