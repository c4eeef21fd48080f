"""The storage kinds: decoded with the API server's defaults, validated with field paths,
round-tripped, and listed by the memory backend and the Handle's storage lister."""

from __future__ import annotations

import pytest

from schedframe.backends import MemoryBackend
from schedframe.errors import ManifestError
from schedframe.objects import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
    from_dict,
    loads_manifests,
    to_dict,
)
from schedframe.runtime._storage_lister import StorageStore

MANIFESTS = """\
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-a, labels: {tier: fast}}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: wait
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: topology.kubernetes.io/zone, operator: In, values: [a]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: ns}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 5Gi}}
  storageClassName: wait
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: wait}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions:
  - {key: topology.kubernetes.io/zone, values: [a, b]}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec:
  drivers:
  - {name: ebs.csi.aws.com, nodeID: i-1, topologyKeys: [topology.kubernetes.io/zone],
     allocatable: {count: 25}}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: ebs.csi.aws.com}
spec: {storageCapacity: true}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-a, namespace: kube-system}
storageClassName: wait
nodeTopology: {matchLabels: {topology.kubernetes.io/zone: a}}
capacity: 100Gi
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va}
spec: {attacher: ebs.csi.aws.com, nodeName: n1, source: {persistentVolumeName: pv-a}}
"""


def test_every_storage_kind_decodes_with_upstream_defaults() -> None:
    pv, pvc, sc, csinode, driver, cap, va = loads_manifests(MANIFESTS, source="s.yaml")
    assert isinstance(pv, PersistentVolume)
    assert (pv.capacity, pv.source, pv.csi_driver, pv.volume_handle) == (
        10 * 2**30,
        "csi",
        "ebs.csi.aws.com",
        "vol-1",
    )
    assert (pv.phase, pv.volume_mode, pv.reclaim_policy) == ("Pending", "Filesystem", "Retain")
    assert pv.node_affinity is not None
    assert pv.node_affinity.matches("n1", {"topology.kubernetes.io/zone": "a"})
    assert not pv.node_affinity.matches("n1", {"topology.kubernetes.io/zone": "b"})
    assert isinstance(pvc, PersistentVolumeClaim)
    assert (pvc.key, pvc.request, pvc.class_name, pvc.phase) == (
        "ns/data",
        5 * 2**30,
        "wait",
        "Pending",
    )
    assert isinstance(sc, StorageClass)
    assert sc.volume_binding_mode == "WaitForFirstConsumer" and sc.reclaim_policy == "Delete"
    assert sc.allowed_topologies[0].matches({"topology.kubernetes.io/zone": "b"})
    assert isinstance(csinode, CSINode)
    found = csinode.driver("ebs.csi.aws.com")
    assert found is not None and found.allocatable_count == 25
    assert isinstance(driver, CSIDriver) and driver.attach_required and driver.storage_capacity
    assert isinstance(cap, CSIStorageCapacity) and cap.capacity == 100 * 2**30
    assert isinstance(va, VolumeAttachment) and va.persistent_volume_name == "pv-a"


def test_every_storage_kind_round_trips() -> None:
    for obj in loads_manifests(MANIFESTS, source="s.yaml"):
        assert from_dict(to_dict(obj)) == obj


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        pytest.param(
            "kind: PersistentVolume\nmetadata: {name: p}\nspec: {}\n",
            "spec.capacity: Required value\n"
            "spec.accessModes: Required value\n"
            "spec: Required value: must specify a volume type",
            id="empty PV",
        ),
        pytest.param(
            "kind: PersistentVolume\nmetadata: {name: p}\nspec: {capacity: {storage: 1Gi, cpu: '1'},"
            " accessModes: [ReadWriteOncePod, ReadWriteOnce], hostPath: {path: /x},"
            " nfs: {server: s, path: /}}\n",
            'spec.capacity: Unsupported value: "cpu": supported values: "storage"\n'
            "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes\n"
            "spec.nfs: Forbidden: may not specify more than 1 volume type",
            id="bad PV",
        ),
        pytest.param(
            "kind: PersistentVolume\nmetadata: {name: p}\nspec: {capacity: {storage: 1Gi},"
            " accessModes: [ReadWriteOnce], local: {path: /x}}\n",
            "spec.nodeAffinity: Required value: Local volume requires node affinity",
            id="local PV without node affinity",
        ),
        pytest.param(
            "kind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [Bad],"
            " resources: {requests: {storage: '0'}}}\n",
            'spec.accessModes: Unsupported value: "Bad": supported values: "ReadOnlyMany", '
            '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"\n'
            "spec.resources[storage]: Invalid value: 0: must be greater than zero",
            id="bad PVC",
        ),
        pytest.param(
            "kind: StorageClass\nmetadata: {name: s}\nvolumeBindingMode: Later\n",
            "provisioner: Required value\n"
            'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", '
            '"WaitForFirstConsumer"',
            id="bad StorageClass",
        ),
        pytest.param(
            "kind: CSINode\nmetadata: {name: n}\nspec: {drivers: [{name: d, allocatable: "
            "{count: -1}}, {name: d}]}\n",
            "spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or "
            'equal to 0\nspec.drivers[1].name: Duplicate value: "d"',
            id="bad CSINode",
        ),
    ],
)
def test_invalid_storage_objects_get_one_error_per_field(manifest: str, message: str) -> None:
    with pytest.raises(ManifestError) as info:
        loads_manifests(manifest, source="m.yaml")
    assert [str(i) for i in info.value.issues] == message.split("\n")


def test_the_memory_backend_stores_and_watches_storage_kinds() -> None:
    objects = loads_manifests(MANIFESTS, source="s.yaml")
    backend = MemoryBackend(objects)
    pv = backend.get("PersistentVolume", "pv-a")
    assert isinstance(pv, PersistentVolume) and pv.resource_version > 0
    assert backend.get("PersistentVolumeClaim", "data", "ns") is not None
    seen: list[str] = []
    backend.subscribe(lambda e: seen.append(type(e.obj).__name__))
    assert seen == [
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "CSIStorageCapacity",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "VolumeAttachment",
    ]


def test_the_storage_store_lists_by_kind_and_forgets_deleted_objects() -> None:
    objects = loads_manifests(MANIFESTS, source="s.yaml")
    store = StorageStore(objects)
    pv = store.persistent_volume("pv-a")
    assert pv is not None and store.persistent_volumes() == (pv,)
    assert store.persistent_volume_claim("ns", "data") is not None
    assert store.persistent_volume_claim("default", "data") is None
    assert store.storage_class("wait") is not None and store.csi_node("n1") is not None
    assert store.csi_driver("ebs.csi.aws.com") is not None
    assert len(store.csi_storage_capacities()) == 1 and len(store.volume_attachments()) == 1
    generation = store.generation
    assert store.delete(pv) and store.persistent_volumes() == ()
    assert store.generation > generation
    assert not store.set(object())
