"""Decoding and encoding of the storage kinds, registered with the codec.

Same machinery and conventions as :mod:`schedframe.objects._codec`; defaults and validation
as kube-apiserver applies them on create (``pkg/apis/core/validation`` and
``pkg/apis/storage/validation``), each issue with its field path.
"""

from __future__ import annotations

from typing import Final

from schedframe._evolve import evolve
from schedframe.errors import DUPLICATE, FieldIssue
from schedframe.objects import _codec as c
from schedframe.objects import _fields
from schedframe.objects._meta import NodeSelector, ObjectMeta
from schedframe.objects._quantity import parse_quantity, resource_amount, resource_quantity
from schedframe.objects._storage import (
    ACCESS_MODES,
    BINDING_MODES,
    ClaimReference,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorTerm,
    VolumeAttachment,
)

__all__: list[str] = []

_STORAGE: Final = "storage"
_RECLAIM_POLICIES: Final = ("Delete", "Recycle", "Retain")
_CLASS_RECLAIM_POLICIES: Final = ("Delete", "Retain")
_VOLUME_MODES: Final = ("Block", "Filesystem")
_PHASES_PV: Final = ("Available", "Bound", "Failed", "Pending", "Released")
_PHASES_PVC: Final = ("Bound", "Lost", "Pending")
#: The volume types of a PersistentVolume, with the field that identifies an in-tree disk
#: (what the attach limits count), or "" for types that are not counted.
_SOURCES: Final = {
    "awsElasticBlockStore": "volumeID",
    "azureDisk": "diskName",
    "azureFile": "",
    "cephfs": "",
    "cinder": "volumeID",
    "csi": "",
    "fc": "",
    "flexVolume": "",
    "flocker": "",
    "gcePersistentDisk": "pdName",
    "glusterfs": "",
    "hostPath": "",
    "iscsi": "iqn",
    "local": "",
    "nfs": "",
    "photonPersistentDisk": "",
    "portworxVolume": "",
    "quobyte": "",
    "rbd": "image",
    "scaleIO": "",
    "storageos": "",
    "vsphereVolume": "",
}


def _cluster_meta(r: c._Reader, obj: c._Dict, base: str) -> ObjectMeta:
    meta = c._metadata(r, obj, base, default_namespace="")
    return meta if meta.uid else c._with_uid(meta, meta.name)


def _namespaced_meta(r: c._Reader, obj: c._Dict, base: str) -> ObjectMeta:
    meta = c._metadata(r, obj, base, default_namespace="default")
    return meta if meta.uid else c._with_uid(meta, f"{meta.namespace}/{meta.name}")


def _access_modes(r: c._Reader, d: c._Dict, path: str, required_detail: str) -> tuple[str, ...]:
    modes = r.texts(d, "accessModes", path)
    where = c._join(path, "accessModes")
    if not modes:
        r.required(where, required_detail)
    for mode in modes:
        if mode not in ACCESS_MODES:
            r.unsupported(where, mode, ACCESS_MODES)
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        r.forbidden(where, "may not use ReadWriteOncePod with other access modes")
    return modes


def _persistent_volume(r: c._Reader, obj: c._Dict, base: str) -> PersistentVolume:
    c._check_kind(r, obj, base, "PersistentVolume")
    meta = _cluster_meta(r, obj, base)
    path = c._join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
    r.known(d, path, _fields.PV_SPEC)
    capacity = r.resources(d, "capacity", path)
    if not capacity:
        r.required(c._join(path, "capacity"))
    for name in capacity:
        if name != _STORAGE:
            r.unsupported(c._join(path, "capacity"), name, (_STORAGE,))
    modes = _access_modes(r, d, path, "")
    given = [k for k in _SOURCES if d.get(k) is not None]
    source, csi_driver, volume_handle, disk_id = "", "", "", ""
    if not given:
        r.required(path, "must specify a volume type")
    else:
        source = given[0]
        for extra in given[1:]:
            r.forbidden(c._join(path, extra), "may not specify more than 1 volume type")
        s = r.map_(d, source, path) or {}
        spath = c._join(path, source)
        r.known(s, spath, _fields.VOLUME_SOURCE_FIELDS[source])
        if source == "csi":
            csi_driver = r.text(s, "driver", spath)
            volume_handle = r.text(s, "volumeHandle", spath)
            if not csi_driver:
                r.required(c._join(spath, "driver"))
            if not volume_handle:
                r.required(c._join(spath, "volumeHandle"))
        elif _SOURCES[source]:
            disk_id = r.text(s, _SOURCES[source], spath)
    claim_ref = None
    ref = r.map_(d, "claimRef", path)
    if ref is not None:
        rpath = c._join(path, "claimRef")
        r.known(ref, rpath, _fields.CLAIM_REF)
        claim_ref = ClaimReference(
            namespace=r.text(ref, "namespace", rpath),
            name=r.text(ref, "name", rpath),
            uid=r.text(ref, "uid", rpath),
            resource_version=r.text(ref, "resourceVersion", rpath),
        )
        if not claim_ref.name:
            r.required(c._join(rpath, "name"))
    affinity = None
    na = r.map_(d, "nodeAffinity", path)
    if na is not None:
        apath = c._join(path, "nodeAffinity")
        req = r.map_(na, "required", apath)
        if req is not None:
            rpath = c._join(apath, "required")
            terms = tuple(
                c._node_selector_term(r, t, p) for t, p in r.items(req, "nodeSelectorTerms", rpath)
            )
            if not terms:
                r.required(c._join(rpath, "nodeSelectorTerms"), "must have at least one term")
            affinity = NodeSelector(node_selector_terms=terms)
    if source == "local" and affinity is None:
        r.required(c._join(path, "nodeAffinity"), "Local volume requires node affinity")
    status = r.map_(obj, "status", base) or {}
    r.known(status, c._join(base, "status"), _fields.PV_STATUS)
    return PersistentVolume(
        metadata=meta,
        capacity=capacity.get(_STORAGE, 0),
        access_modes=modes,
        claim_ref=claim_ref,
        storage_class_name=r.text(d, "storageClassName", path),
        volume_mode=r.one_of(d, "volumeMode", path, _VOLUME_MODES, "Filesystem"),
        reclaim_policy=r.one_of(
            d, "persistentVolumeReclaimPolicy", path, _RECLAIM_POLICIES, "Retain"
        ),
        source=source,
        csi_driver=csi_driver,
        volume_handle=volume_handle,
        disk_id=disk_id,
        node_affinity=affinity,
        phase=r.one_of(status, "phase", c._join(base, "status"), _PHASES_PV, "Pending"),
    )


def _persistent_volume_claim(r: c._Reader, obj: c._Dict, base: str) -> PersistentVolumeClaim:
    c._check_kind(r, obj, base, "PersistentVolumeClaim")
    meta = _namespaced_meta(r, obj, base)
    path = c._join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
    r.known(d, path, _fields.PVC_SPEC)
    modes = _access_modes(r, d, path, "at least 1 access mode is required")
    res = r.map_(d, "resources", path) or {}
    r.known(res, c._join(path, "resources"), _fields.VOLUME_RESOURCES)
    requests = r.resources(res, "requests", c._join(path, "resources"))
    request = requests.get(_STORAGE)
    if request is None:
        r.required(f"{path}.resources[storage]")
    elif request <= 0:
        r.invalid(f"{path}.resources[storage]", request, "must be greater than zero")
    status = r.map_(obj, "status", base) or {}
    spath = c._join(base, "status")
    r.known(status, spath, _fields.PVC_STATUS)
    capacity = r.resources(status, "capacity", spath).get(_STORAGE)
    return PersistentVolumeClaim(
        metadata=meta,
        access_modes=modes,
        request=request or 0,
        storage_class_name=r.opt_text(d, "storageClassName", path),
        volume_name=r.text(d, "volumeName", path),
        selector=c._label_selector(r, d, "selector", path),
        volume_mode=r.one_of(d, "volumeMode", path, _VOLUME_MODES, "Filesystem"),
        phase=r.one_of(status, "phase", spath, _PHASES_PVC, "Pending"),
        capacity=capacity,
    )


def claim_template(r: c._Reader, d: c._Dict, path: str, namespace: str) -> PersistentVolumeClaim:
    """A StatefulSet's ``volumeClaimTemplates`` entry: a claim without kind, in the set's
    namespace."""
    meta = r.map_(d, "metadata", path) or {}
    given = {**meta, "namespace": meta.get("namespace") or namespace}
    pvc = _persistent_volume_claim(
        r, {**d, "kind": "PersistentVolumeClaim", "metadata": given}, path
    )
    # The copies were decoded (and checked for unknown fields) at the same paths.
    r.known(d, path, tuple(str(k) for k in d))
    r.known(meta, c._join(path, "metadata"), tuple(str(k) for k in meta))
    return evolve(pvc, metadata=evolve(pvc.metadata, uid=""))


def _storage_class(r: c._Reader, obj: c._Dict, base: str) -> StorageClass:
    c._check_kind(r, obj, base, "StorageClass")
    meta = _cluster_meta(r, obj, base)
    r.known(obj, base, _fields.STORAGE_CLASS)
    provisioner = r.text(obj, "provisioner", base)
    if not provisioner:
        r.required(c._join(base, "provisioner"))
    terms = []
    for t, p in r.items(obj, "allowedTopologies", base):
        exprs = []
        for e, ep in r.items(t, "matchLabelExpressions", p):
            values = r.texts(e, "values", ep)
            if not values:
                r.required(c._join(ep, "values"), "must specify as least one value")
            key = r.text(e, "key", ep)
            if not key:
                r.required(c._join(ep, "key"))
            exprs.append((key, values))
        if not exprs:
            r.required(c._join(p, "matchLabelExpressions"), "must have at least one label")
        terms.append(TopologySelectorTerm(match_label_expressions=tuple(exprs)))
    return StorageClass(
        metadata=meta,
        provisioner=provisioner,
        volume_binding_mode=r.one_of(obj, "volumeBindingMode", base, BINDING_MODES, "Immediate"),
        allowed_topologies=tuple(terms),
        reclaim_policy=r.one_of(obj, "reclaimPolicy", base, _CLASS_RECLAIM_POLICIES, "Delete"),
        parameters=r.text_map(obj, "parameters", base),
        allow_volume_expansion=r.flag(obj, "allowVolumeExpansion", base),
    )


def _csi_node(r: c._Reader, obj: c._Dict, base: str) -> CSINode:
    c._check_kind(r, obj, base, "CSINode")
    meta = _cluster_meta(r, obj, base)
    path = c._join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
    drivers = []
    seen: set[str] = set()
    for e, p in r.items(d, "drivers", path):
        name = r.text(e, "name", p)
        if not name:
            r.required(c._join(p, "name"))
        elif name in seen:
            r.issues.append(FieldIssue(path=c._join(p, "name"), kind=DUPLICATE, value=name))
        seen.add(name)
        alloc = r.map_(e, "allocatable", p)
        count = None
        if alloc is not None:
            count = r.opt_integer(alloc, "count", c._join(p, "allocatable"))
            if count is not None and count < 0:
                r.invalid(
                    c._join(p, "allocatable.count"), count, "must be greater than or equal to 0"
                )
        drivers.append(
            CSINodeDriver(
                name=name,
                node_id=r.text(e, "nodeID", p),
                topology_keys=r.texts(e, "topologyKeys", p),
                allocatable_count=count,
            )
        )
    return CSINode(metadata=meta, drivers=tuple(drivers))


def _csi_driver(r: c._Reader, obj: c._Dict, base: str) -> CSIDriver:
    c._check_kind(r, obj, base, "CSIDriver")
    meta = _cluster_meta(r, obj, base)
    path = c._join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
    r.known(d, path, _fields.CSI_DRIVER_SPEC)
    attach = d.get("attachRequired")
    return CSIDriver(
        metadata=meta,
        attach_required=True if attach is None else r.flag(d, "attachRequired", path),
        storage_capacity=r.flag(d, "storageCapacity", path),
    )


def _csi_storage_capacity(r: c._Reader, obj: c._Dict, base: str) -> CSIStorageCapacity:
    c._check_kind(r, obj, base, "CSIStorageCapacity")
    meta = _namespaced_meta(r, obj, base)
    cls = r.text(obj, "storageClassName", base)
    if not cls:
        r.required(c._join(base, "storageClassName"))
    amounts: dict[str, int] = {}
    for key in ("capacity", "maximumVolumeSize"):
        value = r.get(obj, key, base)
        if value is None:
            continue
        where = c._join(base, key)
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            r.wrong_type(where, value, "a quantity")
            continue
        try:
            amounts[key] = resource_amount(_STORAGE, parse_quantity(value))
        except ValueError as exc:
            r.invalid(where, value, str(exc))
            continue
        if amounts[key] < 0:
            r.invalid(where, value, "must be greater than or equal to 0")
    return CSIStorageCapacity(
        metadata=meta,
        storage_class_name=cls,
        node_topology=c._label_selector(r, obj, "nodeTopology", base),
        capacity=amounts.get("capacity"),
        maximum_volume_size=amounts.get("maximumVolumeSize"),
    )


def _volume_attachment(r: c._Reader, obj: c._Dict, base: str) -> VolumeAttachment:
    c._check_kind(r, obj, base, "VolumeAttachment")
    meta = _cluster_meta(r, obj, base)
    path = c._join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
    attacher = r.text(d, "attacher", path)
    node_name = r.text(d, "nodeName", path)
    if not attacher:
        r.required(c._join(path, "attacher"))
    if not node_name:
        r.required(c._join(path, "nodeName"))
    src = r.map_(d, "source", path) or {}
    r.known(src, c._join(path, "source"), _fields.VOLUME_ATTACHMENT_SOURCE)
    status = r.map_(obj, "status", base) or {}
    r.known(status, c._join(base, "status"), _fields.VOLUME_ATTACHMENT_STATUS)
    return VolumeAttachment(
        metadata=meta,
        attacher=attacher,
        node_name=node_name,
        persistent_volume_name=r.text(src, "persistentVolumeName", c._join(path, "source")),
        attached=r.flag(status, "attached", c._join(base, "status")),
    )


c._PARSERS.update(
    {
        "PersistentVolume": _persistent_volume,
        "PersistentVolumeClaim": _persistent_volume_claim,
        "StorageClass": _storage_class,
        "CSINode": _csi_node,
        "CSIDriver": _csi_driver,
        "CSIStorageCapacity": _csi_storage_capacity,
        "VolumeAttachment": _volume_attachment,
    }
)


# ---- encoders -------------------------------------------------------------------------------


def _storage_quantity(amount: int) -> str:
    return str(resource_quantity(_STORAGE, amount))


def _pv_out(pv: PersistentVolume) -> dict[str, object]:
    spec: dict[str, object] = {"capacity": {_STORAGE: _storage_quantity(pv.capacity)}}
    spec["accessModes"] = list(pv.access_modes)
    if pv.source == "csi":
        spec["csi"] = {"driver": pv.csi_driver, "volumeHandle": pv.volume_handle}
    elif pv.source:
        field = _SOURCES.get(pv.source, "")
        spec[pv.source] = {field: pv.disk_id} if field and pv.disk_id else {}
    if pv.claim_ref is not None:
        ref: dict[str, object] = {"name": pv.claim_ref.name}
        c._put(ref, "namespace", pv.claim_ref.namespace)
        c._put(ref, "uid", pv.claim_ref.uid)
        c._put(ref, "resourceVersion", pv.claim_ref.resource_version)
        spec["claimRef"] = ref
    c._put(spec, "storageClassName", pv.storage_class_name)
    spec["volumeMode"] = pv.volume_mode
    spec["persistentVolumeReclaimPolicy"] = pv.reclaim_policy
    if pv.node_affinity is not None:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [c._term_out(t) for t in pv.node_affinity.node_selector_terms]
            }
        }
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": c._meta_out(pv.metadata),
        "spec": spec,
        "status": {"phase": pv.phase},
    }


def claim_template_out(pvc: PersistentVolumeClaim) -> dict[str, object]:
    """A ``volumeClaimTemplates`` entry (no kind, no namespace)."""
    out = _pvc_out(pvc)
    meta = out["metadata"]
    assert isinstance(meta, dict)
    meta.pop("namespace", None)
    return {"metadata": meta, "spec": out["spec"]}


def _pvc_out(pvc: PersistentVolumeClaim) -> dict[str, object]:
    spec: dict[str, object] = {
        "accessModes": list(pvc.access_modes),
        "resources": {"requests": {_STORAGE: _storage_quantity(pvc.request)}},
    }
    if pvc.storage_class_name is not None:
        spec["storageClassName"] = pvc.storage_class_name
    c._put(spec, "volumeName", pvc.volume_name)
    if pvc.selector is not None:
        spec["selector"] = c._selector_out(pvc.selector)
    spec["volumeMode"] = pvc.volume_mode
    status: dict[str, object] = {"phase": pvc.phase}
    if pvc.capacity is not None:
        status["capacity"] = {_STORAGE: _storage_quantity(pvc.capacity)}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": c._meta_out(pvc.metadata),
        "spec": spec,
        "status": status,
    }


def _storage_class_out(sc: StorageClass) -> dict[str, object]:
    out: dict[str, object] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": c._meta_out(sc.metadata),
        "provisioner": sc.provisioner,
        "volumeBindingMode": sc.volume_binding_mode,
        "reclaimPolicy": sc.reclaim_policy,
    }
    c._put(out, "parameters", dict(sc.parameters))
    c._put(out, "allowVolumeExpansion", sc.allow_volume_expansion)
    c._put(
        out,
        "allowedTopologies",
        [
            {
                "matchLabelExpressions": [
                    {"key": k, "values": list(v)} for k, v in t.match_label_expressions
                ]
            }
            for t in sc.allowed_topologies
        ],
    )
    return out


def _csi_node_out(node: CSINode) -> dict[str, object]:
    drivers = []
    for d in node.drivers:
        entry: dict[str, object] = {"name": d.name, "nodeID": d.node_id}
        c._put(entry, "topologyKeys", list(d.topology_keys))
        if d.allocatable_count is not None:
            entry["allocatable"] = {"count": d.allocatable_count}
        drivers.append(entry)
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": c._meta_out(node.metadata),
        "spec": {"drivers": drivers},
    }


def _csi_driver_out(d: CSIDriver) -> dict[str, object]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": c._meta_out(d.metadata),
        "spec": {"attachRequired": d.attach_required, "storageCapacity": d.storage_capacity},
    }


def _capacity_out(cap: CSIStorageCapacity) -> dict[str, object]:
    out: dict[str, object] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": c._meta_out(cap.metadata),
        "storageClassName": cap.storage_class_name,
    }
    if cap.node_topology is not None:
        out["nodeTopology"] = c._selector_out(cap.node_topology)
    if cap.capacity is not None:
        out["capacity"] = _storage_quantity(cap.capacity)
    if cap.maximum_volume_size is not None:
        out["maximumVolumeSize"] = _storage_quantity(cap.maximum_volume_size)
    return out


def _attachment_out(va: VolumeAttachment) -> dict[str, object]:
    spec: dict[str, object] = {"attacher": va.attacher, "nodeName": va.node_name}
    spec["source"] = (
        {"persistentVolumeName": va.persistent_volume_name} if va.persistent_volume_name else {}
    )
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": c._meta_out(va.metadata),
        "spec": spec,
        "status": {"attached": va.attached},
    }


def encode(obj: object) -> dict[str, object] | None:
    """The Kubernetes JSON of one of this module's kinds, or None for another object."""
    if isinstance(obj, PersistentVolume):
        return _pv_out(obj)
    if isinstance(obj, PersistentVolumeClaim):
        return _pvc_out(obj)
    if isinstance(obj, StorageClass):
        return _storage_class_out(obj)
    if isinstance(obj, CSINode):
        return _csi_node_out(obj)
    if isinstance(obj, CSIDriver):
        return _csi_driver_out(obj)
    if isinstance(obj, CSIStorageCapacity):
        return _capacity_out(obj)
    if isinstance(obj, VolumeAttachment):
        return _attachment_out(obj)
    return None
