"""The storage kinds the volume plugins read: PersistentVolume, PersistentVolumeClaim,
StorageClass (``storage.k8s.io/v1``), CSINode, CSIDriver, CSIStorageCapacity and
VolumeAttachment, with the helpers upstream's ``storage`` and ``volume`` utilities provide."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

import attrs

from schedframe.objects._meta import LabelSelector, NodeSelector, ObjectMeta
from schedframe.objects._node import Node

__all__ = [
    "ACCESS_MODES",
    "ANN_BETA_STORAGE_PROVISIONER",
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_PROVISIONER",
    "BINDING_MODES",
    "CSIDriver",
    "CSINode",
    "CSINodeDriver",
    "CSIStorageCapacity",
    "ClaimReference",
    "NOT_SUPPORTED_PROVISIONER",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "TopologySelectorTerm",
    "VolumeAttachment",
    "check_node_affinity",
    "find_matching_volume",
    "is_volume_bound_to_claim",
]

#: ``v1.PersistentVolumeAccessMode`` values, sorted as upstream lists the supported set.
ACCESS_MODES: Final = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
#: ``storage.k8s.io/v1.VolumeBindingMode`` values.
BINDING_MODES: Final = ("Immediate", "WaitForFirstConsumer")
#: The claim annotation naming the node a WaitForFirstConsumer volume is provisioned for.
ANN_SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
#: Set on a claim once the PV controller completed its binding.
ANN_BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
#: Set on a claim or volume bound by the PV controller (not pre-bound by the user).
ANN_BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"
#: The provisioner a claim waits for (set by the PV controller; read by the scheduler).
ANN_STORAGE_PROVISIONER: Final = "volume.kubernetes.io/storage-provisioner"
#: The beta spelling, still read by upstream's ``provisionClaim``.
ANN_BETA_STORAGE_PROVISIONER: Final = "volume.beta.kubernetes.io/storage-provisioner"
#: The provisioner name of a class that is never provisioned dynamically.
NOT_SUPPORTED_PROVISIONER: Final = "kubernetes.io/no-provisioner"


@attrs.frozen(kw_only=True)
class ClaimReference:
    """A volume's ``spec.claimRef``: the claim it is (or is to be) bound to."""

    namespace: str = ""
    name: str = ""
    uid: str = ""
    resource_version: str = ""


@attrs.frozen(kw_only=True)
class PersistentVolume:
    """A ``v1.PersistentVolume`` (cluster-scoped).

    Attributes:
        capacity: ``spec.capacity.storage`` in bytes.
        source: the volume type, as the key naming it in ``spec`` (``csi``, ``local``,
            ``gcePersistentDisk``, ...).
        csi_driver: ``spec.csi.driver``.
        volume_handle: ``spec.csi.volumeHandle``.
        disk_id: the in-tree disk identity (``pdName``, ``volumeID``, ``diskName``, ...)
            of an in-tree source, for attach counting.
        node_affinity: ``spec.nodeAffinity.required``, the nodes that can reach the volume.
        phase: ``status.phase`` (``Pending`` by default, as the API server defaults it).
    """

    metadata: ObjectMeta
    capacity: int = 0
    access_modes: tuple[str, ...] = ()
    claim_ref: ClaimReference | None = None
    storage_class_name: str = ""
    volume_mode: str = "Filesystem"
    reclaim_policy: str = "Retain"
    source: str = ""
    csi_driver: str = ""
    volume_handle: str = ""
    disk_id: str = ""
    node_affinity: NodeSelector | None = None
    phase: str = "Pending"

    @property
    def name(self) -> str:
        """The volume's name."""
        return self.metadata.name

    @property
    def resource_version(self) -> int:
        """``metadata.resourceVersion`` as an integer (0 when unset), as the assume cache
        compares versions."""
        rv = self.metadata.resource_version
        return int(rv) if rv.isdigit() else 0


@attrs.frozen(kw_only=True)
class PersistentVolumeClaim:
    """A ``v1.PersistentVolumeClaim``.

    Attributes:
        request: ``spec.resources.requests.storage`` in bytes.
        storage_class_name: ``spec.storageClassName``; ``None`` when absent (the
            DefaultStorageClass admission plugin is not modelled), ``""`` for "no class".
        volume_name: ``spec.volumeName``, the volume it is bound (or pre-bound) to.
        selector: ``spec.selector`` over volume labels.
        phase: ``status.phase`` (``Pending``, ``Bound`` or ``Lost``).
    """

    metadata: ObjectMeta
    access_modes: tuple[str, ...] = ()
    request: int = 0
    storage_class_name: str | None = None
    volume_name: str = ""
    selector: LabelSelector | None = None
    volume_mode: str = "Filesystem"
    phase: str = "Pending"
    capacity: int | None = None

    @property
    def name(self) -> str:
        """The claim's name."""
        return self.metadata.name

    @property
    def namespace(self) -> str:
        """The claim's namespace."""
        return self.metadata.namespace

    @property
    def key(self) -> str:
        """``namespace/name``, the key upstream's caches use."""
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def class_name(self) -> str:
        """Upstream ``storagehelpers.GetPersistentVolumeClaimClass``: the class, or ``""``."""
        return self.storage_class_name or ""

    @property
    def resource_version(self) -> int:
        """``metadata.resourceVersion`` as an integer (0 when unset)."""
        rv = self.metadata.resource_version
        return int(rv) if rv.isdigit() else 0


@attrs.frozen(kw_only=True)
class TopologySelectorTerm:
    """One ``allowedTopologies`` term: every ``(key, values)`` pair must match."""

    match_label_expressions: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Upstream ``MatchTopologySelectorTerms`` for one term."""
        return all(labels.get(k) in values for k, values in self.match_label_expressions)


@attrs.frozen(kw_only=True)
class StorageClass:
    """A ``storage.k8s.io/v1.StorageClass`` (cluster-scoped)."""

    metadata: ObjectMeta
    provisioner: str
    volume_binding_mode: str = "Immediate"
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()
    reclaim_policy: str = "Delete"
    parameters: dict[str, str] = attrs.field(factory=dict, hash=False)
    allow_volume_expansion: bool = False

    @property
    def name(self) -> str:
        """The class's name."""
        return self.metadata.name


@attrs.frozen(kw_only=True)
class CSINodeDriver:
    """One driver of a CSINode: its node id, topology keys and attach limit."""

    name: str
    node_id: str = ""
    topology_keys: tuple[str, ...] = ()
    allocatable_count: int | None = None


@attrs.frozen(kw_only=True)
class CSINode:
    """A ``storage.k8s.io/v1.CSINode`` (named as its node)."""

    metadata: ObjectMeta
    drivers: tuple[CSINodeDriver, ...] = ()

    @property
    def name(self) -> str:
        """The node's name."""
        return self.metadata.name

    def driver(self, name: str) -> CSINodeDriver | None:
        """The driver called ``name``, or ``None``."""
        for d in self.drivers:
            if d.name == name:
                return d
        return None


@attrs.frozen(kw_only=True)
class CSIDriver:
    """A ``storage.k8s.io/v1.CSIDriver`` (cluster-scoped): only the scheduling fields."""

    metadata: ObjectMeta
    attach_required: bool = True
    storage_capacity: bool = False

    @property
    def name(self) -> str:
        """The driver's name."""
        return self.metadata.name


@attrs.frozen(kw_only=True)
class CSIStorageCapacity:
    """A ``storage.k8s.io/v1.CSIStorageCapacity``: free space of a class in a topology.

    Attributes:
        capacity: ``capacity`` in bytes, ``None`` when unknown.
        maximum_volume_size: ``maximumVolumeSize`` in bytes, ``None`` when unset.
    """

    metadata: ObjectMeta
    storage_class_name: str
    node_topology: LabelSelector | None = None
    capacity: int | None = None
    maximum_volume_size: int | None = None

    @property
    def name(self) -> str:
        """The object's name."""
        return self.metadata.name


@attrs.frozen(kw_only=True)
class VolumeAttachment:
    """A ``storage.k8s.io/v1.VolumeAttachment`` (cluster-scoped)."""

    metadata: ObjectMeta
    attacher: str
    node_name: str
    persistent_volume_name: str = ""
    attached: bool = False

    @property
    def name(self) -> str:
        """The object's name."""
        return self.metadata.name


# ---- helpers (upstream component-helpers/storage/volume) ----------------------------------


def is_volume_bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    """Upstream ``IsVolumeBoundToClaim``: the claimRef names the claim (and its uid, if set)."""
    ref = pv.claim_ref
    if ref is None or ref.name != pvc.name or ref.namespace != pvc.namespace:
        return False
    return not ref.uid or ref.uid == pvc.metadata.uid


def check_node_affinity(pv: PersistentVolume, node: Node) -> bool:
    """Upstream ``CheckNodeAffinity``: the volume's required node affinity matches the node."""
    if pv.node_affinity is None:
        return True
    return pv.node_affinity.matches(node.name, node.labels)


def find_matching_volume(
    pvc: PersistentVolumeClaim,
    volumes: Sequence[PersistentVolume],
    node: Node | None,
    excluded: Callable[[str], bool],
    *,
    delay_binding: bool,
) -> PersistentVolume | None:
    """Upstream ``FindMatchingVolume``: the volume pre-bound to the claim, else the smallest
    ``Available`` unbound volume of the claim's class and mode that fits it (labels matching
    its selector; with a node, node affinity and access modes too)."""
    smallest: PersistentVolume | None = None
    requested_class = pvc.class_name
    modes = set(pvc.access_modes)
    for pv in volumes:
        if excluded(pv.name) or pv.volume_mode != pvc.volume_mode:
            continue
        if pv.metadata.deletion_timestamp is not None:
            continue
        affinity_ok = node is None or check_node_affinity(pv, node)
        if is_volume_bound_to_claim(pv, pvc):
            if pv.capacity < pvc.request:
                continue
            return pv if affinity_ok else None
        if node is None and delay_binding:
            continue
        if pv.phase != "Available" or pv.claim_ref is not None:
            continue
        if pvc.selector is not None and not pvc.selector.matches(pv.metadata.labels):
            continue
        if pv.storage_class_name != requested_class or not affinity_ok:
            continue
        if node is not None and not modes <= set(pv.access_modes):
            continue
        if pv.capacity >= pvc.request and (smallest is None or smallest.capacity > pv.capacity):
            smallest = pv
    return smallest
