"""NodeVolumeLimits (``CSILimits``): the node's CSI attach limits must hold the pod's volumes.

Port of upstream ``pkg/scheduler/framework/plugins/nodevolumelimits/csi.go``. Each volume a
pod attaches (a claim's bound CSI volume; for an unbound claim, its class's provisioner with a
stand-in handle; an in-tree volume migrated to CSI on the node) counts once per node against
the driver's limit, the CSINode's ``allocatable.count`` for the driver; volumes the node's
VolumeAttachments hold count too (once). In-tree volumes are translated to their CSI
drivers (GCE PD, AWS EBS, Azure Disk, Cinder) when the CSINode lists the in-tree plugin in its
``storage.alpha.kubernetes.io/migrated-plugins`` annotation, as upstream's
``isCSIMigrationOn`` requires.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import ClassVar, Final

from schedframe import framework as fw
from schedframe.objects import (
    CSINode,
    DiskSource,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    Volume,
    VolumeAttachment,
)
from schedframe_plugins import names

__all__ = [
    "CSI_ATTACH_LIMIT_PREFIX",
    "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED",
    "CSILimits",
    "csi_attach_limit_key",
]

NAME: Final = names.NODE_VOLUME_LIMITS

#: The Filter reason when the node's attach limit would be exceeded.
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: Final = "node(s) exceed max volume count"
#: Prefix of the node allocatable that carries a CSI driver's attach limit.
CSI_ATTACH_LIMIT_PREFIX: Final = "attachable-volumes-csi-"
MIGRATED_PLUGINS_ANNOTATION: Final = "storage.alpha.kubernetes.io/migrated-plugins"
_RESOURCE_NAME_LENGTH_LIMIT: Final = 63

# In-tree source -> (in-tree plugin name, CSI driver) of csi-translation-lib.
_MIGRATABLE: Final = {
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "pd.csi.storage.gke.io"),
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "ebs.csi.aws.com"),
    "azureDisk": ("kubernetes.io/azure-disk", "disk.csi.azure.com"),
    "cinder": ("kubernetes.io/cinder", "cinder.csi.openstack.org"),
}
_BY_PLUGIN: Final = {plugin: driver for plugin, driver in _MIGRATABLE.values()}
_STAND_IN_PREFIX: Final = "schedframe-unbound-claim-0000000"
_ZONE_LABELS: Final = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


def csi_attach_limit_key(driver: str) -> str:
    """Upstream ``GetCSIAttachLimitKey``: the allocatable name of a driver's attach limit
    (long names are cut to 23 characters plus 16 hex digits of their SHA-1)."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= _RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode()).hexdigest()[:16]  # noqa: S324 - upstream's key
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return CSI_ATTACH_LIMIT_PREFIX + driver


def is_csi_migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """Upstream ``isCSIMigrationOn``: the node's CSINode says the in-tree plugin migrated."""
    if plugin not in _BY_PLUGIN or csi_node is None:
        return False
    listed = csi_node.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
    return plugin in {p.strip() for p in listed.split(",") if p.strip()}


def _gce_handle(zone: str, pd_name: str) -> str:
    return f"projects/UNSPECIFIED/zones/{zone}/disks/{pd_name}"


def _translate_pv(pv: PersistentVolume) -> tuple[str, str] | None:
    """(in-tree plugin, CSI volume handle) of a migratable in-tree volume, else ``None``."""
    entry = _MIGRATABLE.get(pv.source)
    if entry is None:
        return None
    if pv.source == "gcePersistentDisk":
        zone = next((pv.metadata.labels[k] for k in _ZONE_LABELS if k in pv.metadata.labels), "")
        handle = _gce_handle(zone or "UNSPECIFIED", pv.disk_id)
    elif pv.source == "awsElasticBlockStore":
        handle = _ebs_volume_id(pv.disk_id)
    else:
        handle = pv.disk_id
    return entry[0], handle


def _ebs_volume_id(kubernetes_id: str) -> str:
    """Upstream ``KubernetesVolumeIDToEBSVolumeID``: ``aws://<zone>/<id>`` names its path, a
    bare id is itself."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    return kubernetes_id.removeprefix("aws://").partition("/")[2].strip("/")


def _translate_inline(disk: DiskSource) -> tuple[str, str] | None:
    entry = _MIGRATABLE.get(disk.kind)
    if entry is None:
        return None
    if disk.kind == "gcePersistentDisk":
        return entry[0], _gce_handle("UNSPECIFIED", disk.name)
    if disk.kind == "awsElasticBlockStore":
        return entry[0], _ebs_volume_id(disk.name)
    return entry[0], disk.name


def _pod(obj: object) -> Pod:
    if not isinstance(obj, Pod):
        raise TypeError(f"expected a Pod, got {type(obj).__name__}")
    return obj


def _inline_migratable(volume: Volume) -> bool:
    return volume.disk is not None and volume.disk.kind in _MIGRATABLE


class _LookupError(Exception):
    """A claim of the pod to schedule is missing (UnschedulableAndUnresolvable)."""


class CSILimits(fw.PreFilterPlugin, fw.FilterPlugin, fw.EnqueueExtensions):
    """Rejects nodes whose CSI volume limits the pod's new volumes would exceed."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self._handle = handle
        # Upstream prefixes the stand-in handles of unbound claims with 32 random characters
        # so that they never equal a real handle; a fixed prefix does that and keeps the
        # scheduler's seeded random stream untouched.
        self._random_prefix = _STAND_IN_PREFIX

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Skip pods with no claim, ephemeral or migratable in-tree volume."""
        for v in pod.spec.volumes:
            if v.persistent_volume_claim is not None or v.ephemeral or _inline_migratable(v):
                return None
        return fw.Status(fw.Code.SKIP)

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """Unschedulable when a driver's attached plus new volumes exceed its limit."""
        if not pod.spec.volumes:
            return None
        node = node_info.node
        assert node is not None
        lister = self._handle.storage_lister()
        csi_node = lister.csi_node(node.name)
        new_volumes: dict[str, str] = {}
        try:
            self._filter_attachable_volumes(pod, csi_node, True, new_volumes)
        except _LookupError as exc:
            return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(exc))
        except ValueError as exc:
            return fw.Status(fw.Code.ERROR, str(exc))
        if not new_volumes:
            return None
        limits: dict[str, int] = {}
        if csi_node is not None:
            for driver in csi_node.drivers:
                if driver.allocatable_count is not None:
                    limits[csi_attach_limit_key(driver.name)] = driver.allocatable_count
        if not limits:
            return None
        attached: dict[str, str] = {}
        for existing in node_info.pods:
            try:
                self._filter_attachable_volumes(existing.pod, csi_node, False, attached)
            except ValueError as exc:
                return fw.Status(fw.Code.ERROR, str(exc))
        attached_count: dict[str, int] = {}
        for unique, key in attached.items():
            new_volumes.pop(unique, None)  # a volume shared with a pod on the node counts once
            attached_count[key] = attached_count.get(key, 0) + 1
        # Upstream getNodeVolumeAttachmentInfo: volumes the attach/detach controller holds on
        # the node count too (those the node's pods already use, once).
        for va in lister.volume_attachments():
            if va.node_name != node.name or not va.attacher or not va.persistent_volume_name:
                continue
            pv = lister.persistent_volume(va.persistent_volume_name)
            if pv is None or pv.source != "csi":
                continue
            unique = f"{va.attacher}/{pv.volume_handle}"
            if unique not in attached:
                key = csi_attach_limit_key(va.attacher)
                attached[unique] = key
                attached_count[key] = attached_count.get(key, 0) + 1
        new_count: dict[str, int] = {}
        for key in new_volumes.values():
            new_count[key] = new_count.get(key, 0) + 1
        for key, count in new_count.items():
            limit = limits.get(key)
            if limit is not None and attached_count.get(key, 0) + count > limit:
                return fw.Status(fw.Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def _filter_attachable_volumes(
        self, pod: Pod, csi_node: CSINode | None, new_pod: bool, result: dict[str, str]
    ) -> None:
        """Upstream ``filterAttachableVolumes``: volume unique name -> limit key."""
        lister = self._handle.storage_lister()
        for volume in pod.spec.volumes:
            if volume.persistent_volume_claim is None and not volume.ephemeral:
                if volume.disk is not None:
                    self._check_attachable_inline_volume(volume.disk, csi_node, result)
                continue
            name = volume.claim_name(pod.name) or ""
            if not name:
                raise ValueError("PersistentVolumeClaim had no name")
            pvc = lister.persistent_volume_claim(pod.namespace, name)
            if pvc is None:
                if new_pod:
                    raise _LookupError(
                        f'looking up PVC {pod.namespace}/{name}: persistentvolumeclaim "{name}" '
                        "not found"
                    )
                continue
            if volume.ephemeral and not any(
                ref.controller and ref.uid == pod.uid for ref in pvc.metadata.owner_references
            ):
                raise ValueError(
                    f"PVC {pvc.namespace}/{pvc.name} was not created for pod "
                    f"{pod.namespace}/{pod.name} (pod is not owner)"
                )
            driver, handle = self._csi_driver_info(csi_node, pvc)
            if not driver or not handle:
                continue
            result[f"{driver}/{handle}"] = csi_attach_limit_key(driver)

    def _check_attachable_inline_volume(
        self, disk: DiskSource, csi_node: CSINode | None, result: dict[str, str]
    ) -> None:
        translated = _translate_inline(disk)
        if translated is None or not is_csi_migration_on(csi_node, translated[0]):
            return
        driver = _BY_PLUGIN[translated[0]]
        result[f"{driver}/{translated[1]}"] = csi_attach_limit_key(driver)

    def _csi_driver_info(
        self, csi_node: CSINode | None, pvc: PersistentVolumeClaim
    ) -> tuple[str, str]:
        """Upstream ``getCSIDriverInfo``: the claim's volume's driver and handle."""
        if not pvc.volume_name:
            return self._csi_driver_info_from_class(csi_node, pvc)
        pv = self._handle.storage_lister().persistent_volume(pvc.volume_name)
        if pv is None:
            return self._csi_driver_info_from_class(csi_node, pvc)
        if pv.source == "csi":
            return pv.csi_driver, pv.volume_handle
        translated = _translate_pv(pv)
        if translated is None or not is_csi_migration_on(csi_node, translated[0]):
            return "", ""
        return _BY_PLUGIN[translated[0]], translated[1]

    def _csi_driver_info_from_class(
        self, csi_node: CSINode | None, pvc: PersistentVolumeClaim
    ) -> tuple[str, str]:
        """Upstream ``getCSIDriverInfoFromSC``: the class's provisioner, a stand-in handle."""
        if not pvc.class_name:
            return "", ""
        cls = self._handle.storage_lister().storage_class(pvc.class_name)
        if cls is None:
            return "", ""
        handle = f"{self._random_prefix}-{pvc.namespace}/{pvc.name}"
        provisioner = cls.provisioner
        if provisioner in _BY_PLUGIN:
            if not is_csi_migration_on(csi_node, provisioner):
                return "", ""
            return _BY_PLUGIN[provisioner], handle
        return provisioner, handle

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """A new CSINode, a deleted pod holding volumes, the missing claim being created."""
        return (
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.EventResource.CSI_NODE, fw.ActionType.ADD)),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.CSI_NODE, fw.ActionType.UPDATE),
                self.is_schedulable_after_csi_node_updated,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.VOLUME_ATTACHMENT, fw.ActionType.DELETE),
                self.is_schedulable_after_volume_attachment_deleted,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.DELETE),
                self.is_schedulable_after_pod_deleted,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.PERSISTENT_VOLUME_CLAIM, fw.ActionType.ADD),
                self.is_schedulable_after_pvc_added,
            ),
        )

    def is_schedulable_after_pod_deleted(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when a placed pod with a claim, ephemeral or migratable volume went away."""
        deleted = _pod(old_obj)
        if not deleted.spec.volumes or deleted.node_name == "":
            return fw.QueueingHint.QUEUE_SKIP
        for v in deleted.spec.volumes:
            if v.persistent_volume_claim is not None or v.ephemeral or _inline_migratable(v):
                return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_csi_node_updated(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when a driver's attach limit was raised (or appeared)."""
        if not isinstance(old_obj, CSINode) or not isinstance(new_obj, CSINode):
            raise TypeError(f"expected CSINodes, got {type(new_obj).__name__}")
        old = {d.name: d.allocatable_count for d in old_obj.drivers}
        for driver in new_obj.drivers:
            if driver.allocatable_count is None:
                continue
            before = old.get(driver.name)
            if before is None or driver.allocatable_count > before:
                return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_volume_attachment_deleted(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the detached volume is the pod's claim's, or the pod has an inline
        volume migrated to the attachment's driver."""
        if not isinstance(old_obj, VolumeAttachment):
            raise TypeError(f"expected a VolumeAttachment, got {type(old_obj).__name__}")
        lister = self._handle.storage_lister()
        for volume in pod.spec.volumes:
            if volume.disk is not None and volume.disk.kind in _MIGRATABLE:
                if _MIGRATABLE[volume.disk.kind][1] == old_obj.attacher:
                    return fw.QueueingHint.QUEUE
                continue
            name = volume.claim_name(pod.name)
            if name is None:
                continue
            pvc = lister.persistent_volume_claim(pod.namespace, name)
            if pvc is not None and pvc.volume_name == old_obj.persistent_volume_name:
                return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pvc_added(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the new claim is one the pod uses (directly or as an ephemeral volume)."""
        if not isinstance(new_obj, PersistentVolumeClaim):
            raise TypeError(f"expected a PersistentVolumeClaim, got {type(new_obj).__name__}")
        if new_obj.namespace != pod.namespace:
            return fw.QueueingHint.QUEUE_SKIP
        if any(v.claim_name(pod.name) == new_obj.name for v in pod.spec.volumes):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP
