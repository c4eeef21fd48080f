"""The storage kinds decode strictly: real ``kubectl get -o yaml`` output passes, every API
field of the official client's models is accepted, and an unknown field is an error."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from schedframe.errors import ManifestError
from schedframe.objects import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StatefulSet,
    StorageClass,
    VolumeAttachment,
    from_dict,
)

_MANAGED = """\
  managedFields:
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {"f:metadata": {"f:annotations": {}}}
    manager: kube-controller-manager
    operation: Update
    time: "2024-05-01T10:00:01Z"
"""

# As `kubectl get pv,pvc,sc,csinode,csidriver,csistoragecapacity,volumeattachment -o yaml`
# prints them from a v1.33 cluster (EBS CSI driver, a local volume, an NFS volume).
REAL = {
    "csi-pv": f"""\
apiVersion: v1
kind: PersistentVolume
metadata:
  annotations: {{pv.kubernetes.io/provisioned-by: ebs.csi.aws.com, volume.kubernetes.io/provisioner-deletion-secret-name: ""}}
  creationTimestamp: "2024-05-01T10:00:01Z"
  finalizers: [kubernetes.io/pv-protection, external-attacher/ebs-csi-aws-com]
{_MANAGED}  name: pvc-0b1c2d3e
  resourceVersion: "4242"
  uid: 0b1c2d3e-1111-2222-3333-444455556666
spec:
  accessModes: [ReadWriteOnce]
  capacity: {{storage: 10Gi}}
  claimRef:
    apiVersion: v1
    kind: PersistentVolumeClaim
    name: data-db-0
    namespace: shop
    resourceVersion: "4200"
    uid: 9a8b7c6d-1111-2222-3333-444455556666
  csi:
    driver: ebs.csi.aws.com
    fsType: ext4
    volumeAttributes: {{storage.kubernetes.io/csiProvisionerIdentity: 1714557601-ebs}}
    volumeHandle: vol-0123456789abcdef0
    nodeStageSecretRef: {{name: ebs-secret, namespace: kube-system}}
  mountOptions: [noatime]
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {{key: topology.ebs.csi.aws.com/zone, operator: In, values: [eu-west-1a]}}
  persistentVolumeReclaimPolicy: Delete
  storageClassName: gp3
  volumeMode: Filesystem
status:
  lastPhaseTransitionTime: "2024-05-01T10:00:02Z"
  phase: Bound
""",
    "local-pv": """\
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-pv-1, uid: l-1}
spec:
  accessModes: [ReadWriteOnce]
  capacity: {storage: 100Gi}
  local: {path: /mnt/disks/ssd1, fsType: xfs}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [node-1]}
  persistentVolumeReclaimPolicy: Retain
  storageClassName: local-storage
  volumeMode: Filesystem
status: {phase: Available, message: "", reason: ""}
""",
    "hostpath-pv": """\
apiVersion: v1
kind: PersistentVolume
metadata: {name: host-pv}
spec:
  accessModes: [ReadWriteMany]
  capacity: {storage: 1Gi}
  hostPath: {path: /data/host-pv, type: DirectoryOrCreate}
  volumeAttributesClassName: null
""",
    "nfs-pv": """\
apiVersion: v1
kind: PersistentVolume
metadata: {name: nfs-pv}
spec:
  accessModes: [ReadWriteMany]
  capacity: {storage: 1Ti}
  nfs: {path: /exports/share, server: 10.0.0.5, readOnly: false}
""",
    "gce-pv": """\
apiVersion: v1
kind: PersistentVolume
metadata: {name: gce-pv}
spec:
  accessModes: [ReadWriteOnce]
  capacity: {storage: 5Gi}
  gcePersistentDisk: {pdName: disk-1, fsType: ext4, partition: 1, readOnly: false}
""",
    "pvc": f"""\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  annotations:
    pv.kubernetes.io/bind-completed: "yes"
    pv.kubernetes.io/bound-by-controller: "yes"
    volume.beta.kubernetes.io/storage-provisioner: ebs.csi.aws.com
    volume.kubernetes.io/selected-node: node-1
    volume.kubernetes.io/storage-provisioner: ebs.csi.aws.com
  creationTimestamp: "2024-05-01T10:00:00Z"
  finalizers: [kubernetes.io/pvc-protection]
  labels: {{app: db}}
{_MANAGED}  name: data-db-0
  namespace: shop
  resourceVersion: "4200"
  uid: 9a8b7c6d-1111-2222-3333-444455556666
spec:
  accessModes: [ReadWriteOnce]
  dataSource: {{apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: snap-1}}
  dataSourceRef: {{apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: snap-1}}
  resources:
    limits: {{storage: 20Gi}}
    requests: {{storage: 10Gi}}
  storageClassName: gp3
  volumeMode: Filesystem
  volumeName: pvc-0b1c2d3e
status:
  accessModes: [ReadWriteOnce]
  allocatedResources: {{storage: 10Gi}}
  capacity: {{storage: 10Gi}}
  conditions:
  - {{lastProbeTime: null, lastTransitionTime: "2024-05-01T10:00:03Z", status: "True", type: FileSystemResizePending}}
  phase: Bound
""",
    "storageclass": f"""\
allowVolumeExpansion: true
allowedTopologies:
- matchLabelExpressions:
  - key: topology.ebs.csi.aws.com/zone
    values: [eu-west-1a, eu-west-1b]
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  annotations: {{storageclass.kubernetes.io/is-default-class: "true"}}
  creationTimestamp: "2024-05-01T09:00:00Z"
{_MANAGED}  name: gp3
  resourceVersion: "100"
  uid: 5c5c5c5c-1111-2222-3333-444455556666
mountOptions: [debug]
parameters: {{type: gp3, encrypted: "true", csi.storage.k8s.io/fstype: ext4}}
provisioner: ebs.csi.aws.com
reclaimPolicy: Delete
volumeBindingMode: WaitForFirstConsumer
""",
    "csinode": f"""\
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata:
  annotations: {{storage.alpha.kubernetes.io/migrated-plugins: "kubernetes.io/aws-ebs,kubernetes.io/cinder"}}
  creationTimestamp: "2024-05-01T09:30:00Z"
{_MANAGED}  name: node-1
  ownerReferences:
  - {{apiVersion: v1, kind: Node, name: node-1, uid: 1d1d1d1d-1111-2222-3333-444455556666}}
  resourceVersion: "300"
  uid: 2e2e2e2e-1111-2222-3333-444455556666
spec:
  drivers:
  - allocatable: {{count: 25}}
    name: ebs.csi.aws.com
    nodeID: i-0123456789abcdef0
    topologyKeys: [kubernetes.io/os, topology.ebs.csi.aws.com/zone, topology.kubernetes.io/zone]
""",
    "csidriver": f"""\
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  creationTimestamp: "2024-05-01T09:00:00Z"
  labels: {{app.kubernetes.io/name: aws-ebs-csi-driver}}
{_MANAGED}  name: ebs.csi.aws.com
  resourceVersion: "90"
  uid: 3f3f3f3f-1111-2222-3333-444455556666
spec:
  attachRequired: true
  fsGroupPolicy: ReadWriteOnceWithFSType
  podInfoOnMount: false
  requiresRepublish: false
  seLinuxMount: false
  storageCapacity: false
  tokenRequests: [{{audience: sts.amazonaws.com, expirationSeconds: 3600}}]
  volumeLifecycleModes: [Persistent]
""",
    "csistoragecapacity": """\
apiVersion: storage.k8s.io/v1
capacity: 100Gi
kind: CSIStorageCapacity
maximumVolumeSize: 50Gi
metadata:
  creationTimestamp: "2024-05-01T09:40:00Z"
  generateName: csisc-
  labels: {csi.storage.k8s.io/drivername: hostpath.csi.k8s.io}
  name: csisc-abcde
  namespace: kube-system
  ownerReferences:
  - {apiVersion: apps/v1, controller: true, kind: StatefulSet, name: csi-hostpathplugin, uid: 4a4a4a4a}
  resourceVersion: "500"
  uid: 4b4b4b4b-1111-2222-3333-444455556666
nodeTopology:
  matchLabels: {topology.hostpath.csi/node: node-1}
storageClassName: csi-hostpath-fast
""",
    "volumeattachment": """\
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata:
  annotations: {csi.alpha.kubernetes.io/node-id: i-0123456789abcdef0}
  finalizers: [external-attacher/ebs-csi-aws-com]
  name: csi-0a0a0a0a
  resourceVersion: "700"
  uid: 5d5d5d5d-1111-2222-3333-444455556666
spec:
  attacher: ebs.csi.aws.com
  nodeName: node-1
  source: {persistentVolumeName: pvc-0b1c2d3e}
status:
  attached: true
  attachmentMetadata: {devicePath: /dev/xvdaa}
""",
}

_TYPES: dict[str, type] = {
    "csi-pv": PersistentVolume,
    "local-pv": PersistentVolume,
    "hostpath-pv": PersistentVolume,
    "nfs-pv": PersistentVolume,
    "gce-pv": PersistentVolume,
    "pvc": PersistentVolumeClaim,
    "storageclass": StorageClass,
    "csinode": CSINode,
    "csidriver": CSIDriver,
    "csistoragecapacity": CSIStorageCapacity,
    "volumeattachment": VolumeAttachment,
}


def _doc(name: str) -> dict[str, Any]:
    doc = yaml.safe_load(REAL[name])
    assert isinstance(doc, dict)
    return doc


@pytest.mark.parametrize("name", sorted(REAL))
def test_a_real_storage_object_decodes_strictly(name: str) -> None:
    obj = from_dict(_doc(name), validate="strict")
    assert isinstance(obj, _TYPES[name])


def test_what_the_scheduler_reads_of_real_objects() -> None:
    pv = from_dict(_doc("csi-pv"))
    assert isinstance(pv, PersistentVolume)
    assert (pv.csi_driver, pv.volume_handle, pv.capacity) == (
        "ebs.csi.aws.com",
        "vol-0123456789abcdef0",
        10 * 2**30,
    )
    assert pv.claim_ref is not None and pv.claim_ref.name == "data-db-0"
    cap = from_dict(_doc("csistoragecapacity"))
    assert isinstance(cap, CSIStorageCapacity)
    assert (cap.capacity, cap.maximum_volume_size) == (100 * 2**30, 50 * 2**30)
    node = from_dict(_doc("csinode"))
    assert isinstance(node, CSINode)
    assert [(d.name, d.allocatable_count) for d in node.drivers] == [("ebs.csi.aws.com", 25)]


# Unknown fields at every level the storage decoders read partly.
_UNKNOWN = [
    ("csi-pv", ("spec", "csi"), "spec.csi.bogus"),
    ("csi-pv", ("spec",), "spec.bogus"),
    ("csi-pv", ("spec", "claimRef"), "spec.claimRef.bogus"),
    ("csi-pv", ("spec", "nodeAffinity"), "spec.nodeAffinity.bogus"),
    ("csi-pv", ("status",), "status.bogus"),
    ("local-pv", ("spec", "local"), "spec.local.bogus"),
    ("pvc", ("spec",), "spec.bogus"),
    ("pvc", ("spec", "resources"), "spec.resources.bogus"),
    ("pvc", ("status",), "status.bogus"),
    ("storageclass", (), "bogus"),
    ("csinode", ("spec", "drivers", 0), "spec.drivers[0].bogus"),
    ("csidriver", ("spec",), "spec.bogus"),
    ("csistoragecapacity", (), "bogus"),
    ("volumeattachment", ("spec", "source"), "spec.source.bogus"),
    ("volumeattachment", ("status",), "status.bogus"),
]


@pytest.mark.parametrize(("name", "where", "path"), _UNKNOWN)
def test_an_unknown_storage_field_is_an_error(
    name: str, where: tuple[str | int, ...], path: str
) -> None:
    doc = _doc(name)
    target: Any = doc
    for step in where:
        target = target[step]
    target["bogus"] = 1
    with pytest.raises(ManifestError) as info:
        from_dict(doc, validate="strict")
    assert [(i.kind, i.path) for i in info.value.issues] == [("Unknown field", path)]


# Every field of the official client's models, set (to null) on a real object, is accepted.
_MODELS = [
    ("csi-pv", "V1PersistentVolumeSpec", ("spec",)),
    ("csi-pv", "V1PersistentVolumeStatus", ("status",)),
    ("csi-pv", "V1CSIPersistentVolumeSource", ("spec", "csi")),
    ("csi-pv", "V1ObjectReference", ("spec", "claimRef")),
    ("local-pv", "V1LocalVolumeSource", ("spec", "local")),
    ("hostpath-pv", "V1HostPathVolumeSource", ("spec", "hostPath")),
    ("nfs-pv", "V1NFSVolumeSource", ("spec", "nfs")),
    ("gce-pv", "V1GCEPersistentDiskVolumeSource", ("spec", "gcePersistentDisk")),
    ("pvc", "V1PersistentVolumeClaimSpec", ("spec",)),
    ("pvc", "V1PersistentVolumeClaimStatus", ("status",)),
    ("pvc", "V1VolumeResourceRequirements", ("spec", "resources")),
    ("storageclass", "V1StorageClass", ()),
    ("csinode", "V1CSINodeDriver", ("spec", "drivers", 0)),
    ("csidriver", "V1CSIDriverSpec", ("spec",)),
    ("csistoragecapacity", "V1CSIStorageCapacity", ()),
    ("volumeattachment", "V1VolumeAttachmentSpec", ("spec",)),
    ("volumeattachment", "V1VolumeAttachmentSource", ("spec", "source")),
    ("volumeattachment", "V1VolumeAttachmentStatus", ("status",)),
]


@pytest.mark.parametrize(("name", "model", "where"), _MODELS, ids=[m for _, m, _ in _MODELS])
def test_every_field_of_the_client_storage_models_is_accepted(
    name: str, model: str, where: tuple[str | int, ...]
) -> None:
    client = pytest.importorskip("kubernetes.client")
    names = getattr(client, model).attribute_map.values()
    doc = _doc(name)
    missing = []
    for field in names:
        probe = copy.deepcopy(doc)
        t: Any = probe
        for step in where:
            t = t[step]
        if field in t:
            continue
        t[field] = None  # null is "unset": only the name is under test
        try:
            from_dict(probe, validate="strict")
        except ManifestError as exc:
            missing += [i.path for i in exc.issues if i.kind == "Unknown field"]
    assert missing == []


def test_a_pod_with_disk_and_ephemeral_volumes_decodes_strictly() -> None:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "busybox"}],
            "volumes": [
                {
                    "name": "scratch",
                    "ephemeral": {
                        "volumeClaimTemplate": {
                            "metadata": {"labels": {"type": "scratch"}},
                            "spec": {
                                "accessModes": ["ReadWriteOnce"],
                                "storageClassName": "gp3",
                                "resources": {"requests": {"storage": "1Gi"}},
                            },
                        }
                    },
                },
                {
                    "name": "disk",
                    "awsElasticBlockStore": {"volumeID": "vol-1", "fsType": "ext4", "partition": 1},
                },
                {
                    "name": "rbd",
                    "rbd": {
                        "monitors": ["10.0.0.1:6789"],
                        "image": "img",
                        "user": "admin",
                        "keyring": "/etc/ceph/keyring",
                        "secretRef": {"name": "ceph"},
                    },
                },
                {"name": "host", "hostPath": {"path": "/var/log", "type": "Directory"}},
            ],
        },
    }
    pod = from_dict(doc, validate="strict")
    assert isinstance(pod, Pod)
    assert [v.ephemeral for v in pod.spec.volumes] == [True, False, False, False]
    disks = [v.disk for v in pod.spec.volumes]
    assert [(d.kind, d.name) if d else None for d in disks] == [
        None,
        ("awsElasticBlockStore", "vol-1"),
        ("rbd", "img"),
        None,
    ]
    doc["spec"]["volumes"][1]["awsElasticBlockStore"]["bogus"] = True
    doc["spec"]["volumes"][0]["ephemeral"]["bogus"] = True
    with pytest.raises(ManifestError) as info:
        from_dict(doc, validate="strict")
    assert sorted(i.path for i in info.value.issues) == [
        "spec.volumes[0].ephemeral.bogus",
        "spec.volumes[1].awsElasticBlockStore.bogus",
    ]


def test_a_stateful_set_with_real_claim_templates_decodes_strictly() -> None:
    doc = yaml.safe_load(
        """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres}]}
  volumeClaimTemplates:
  - apiVersion: v1
    kind: PersistentVolumeClaim
    metadata:
      creationTimestamp: null
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 10Gi}}
      storageClassName: gp3
      volumeMode: Filesystem
    status: {phase: Pending}
"""
    )
    sts = from_dict(doc, validate="strict")
    assert isinstance(sts, StatefulSet)
    (claim,) = sts.volume_claim_templates
    assert (claim.name, claim.namespace, claim.request) == ("data", "shop", 10 * 2**30)
    doc["spec"]["volumeClaimTemplates"][0]["spec"]["bogus"] = 1
    with pytest.raises(ManifestError) as info:
        from_dict(doc, validate="strict")
    assert [i.path for i in info.value.issues] == ["spec.volumeClaimTemplates[0].spec.bogus"]
