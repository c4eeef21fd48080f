"""Upstream ``csi_test.go`` as data: ``TestCSILimits`` with its fixtures (four volumes per
driver named ``csi-<driver>-<i>``, the pending claim ``csi-4``, the class-less ``csi-5``, the
claim of a missing volume ``csi-6``, VolumeAttachments, migration of the AWS EBS in-tree plugin
announced on the CSINode) and the queueing-hint tables.

A missing claim is reported as kube-scheduler's informer lister words it
(``persistentvolumeclaim "x" not found``); upstream's test uses a fake lister that says
``persistentvolumeclaims``.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pytest

from schedframe import framework as fw
from schedframe.objects import (
    CSINode,
    CSINodeDriver,
    DiskSource,
    Node,
    ObjectMeta,
    OwnerReference,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodSpec,
    StorageClass,
    Volume,
    VolumeAttachment,
)
from schedframe.runtime import ClusterView, Framework
from schedframe_plugins.nodevolumelimits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    MIGRATED_PLUGINS_ANNOTATION,
    CSILimits,
    csi_attach_limit_key,
)

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
AWS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE = "node-for-max-pd-test-1"


def pvc_pod(*claims: str, name: str = "", namespace: str = "", node: str = "") -> Pod:
    volumes = tuple(Volume(name=f"v{i}", persistent_volume_claim=c) for i, c in enumerate(claims))
    return Pod(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=PodSpec(node_name=node, volumes=volumes),
    )


def volumes_pod(*volumes: Volume, name: str = "", namespace: str = "", uid: str = "") -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace=namespace, uid=uid), spec=PodSpec(volumes=volumes)
    )


RUNNING = pvc_pod(f"csi-{EBS}-3")
PENDING = pvc_pod("csi-4")
UNBOUND_2 = pvc_pod("csi-4")
MISSING_PV = pvc_pod("csi-6")
NO_SC = pvc_pod("csi-5")
GCE_TWO = pvc_pod(f"csi-{GCE}-1", f"csi-{GCE}-2")
IN_TREE_ONE = pvc_pod(f"csi-{AWS_IN_TREE}-0")
IN_TREE_TWO = pvc_pod(f"csi-{AWS_IN_TREE}-1", f"csi-{AWS_IN_TREE}-2")
EBS_ONE = pvc_pod(f"csi-{EBS}-0")
EBS_TWO = pvc_pod(f"csi-{EBS}-1", f"csi-{EBS}-2")
NON_MIGRATABLE = pvc_pod(f"csi-{HOSTPATH}-0")
EPHEMERAL = volumes_pod(
    Volume(name="xyz", ephemeral=True), name="abc", namespace="test", uid="12345"
)
EPHEMERAL_TWO = volumes_pod(
    Volume(name="x", ephemeral=True), Volume(name="y", ephemeral=True),
    name="abc", namespace="test", uid="12345II",
)  # fmt: skip
AWS_INLINE = volumes_pod(
    Volume(name="a", disk=DiskSource(kind="awsElasticBlockStore", name="aws-inline1"))
)
AWS_INLINE_SAME_ID = volumes_pod(
    Volume(name="a", disk=DiskSource(kind="awsElasticBlockStore", name=f"csi-{EBS}-1"))
)
ONLY_CONFIG = volumes_pod(Volume(name="cm"), Volume(name="secret"))
PVC_WITH_CONFIG = volumes_pod(
    Volume(name="cm"),
    Volume(name="secret"),
    Volume(name="p", persistent_volume_claim=f"csi-{EBS}-0"),
)
EPHEMERAL_WITH_CONFIG = volumes_pod(
    Volume(name="cm"), Volume(name="secret"), Volume(name="xyz", ephemeral=True),
    name="abc", namespace="test",
)  # fmt: skip
INLINE_WITH_CONFIG = volumes_pod(
    Volume(name="cm"),
    Volume(name="secret"),
    Volume(name="a", disk=DiskSource(kind="awsElasticBlockStore", name="aws-inline1")),
)


def owned_claim(pod: Pod, volume: str, *, owned: bool = True) -> PersistentVolumeClaim:
    refs = (
        (OwnerReference(api_version="v1", kind="Pod", name=pod.name, uid=pod.uid, controller=True),)
        if owned
        else ()
    )
    return PersistentVolumeClaim(
        metadata=ObjectMeta(
            name=f"{pod.name}-{volume}", namespace=pod.namespace, owner_references=refs
        ),
        storage_class_name=SC_NAME,
    )


EPHEMERAL_CLAIM = owned_claim(EPHEMERAL, "xyz")
CONFLICTING_CLAIM = owned_claim(EPHEMERAL, "xyz", owned=False)
CLAIM_X = owned_claim(EPHEMERAL_TWO, "x")
CLAIM_Y = owned_claim(EPHEMERAL_TWO, "y")


def fixtures(drivers: Sequence[str], va_count: int) -> list[object]:
    objects: list[object] = []
    for driver in drivers:
        for j in range(4):
            name = f"csi-{driver}-{j}"
            if driver == AWS_IN_TREE:
                pv = PersistentVolume(
                    metadata=ObjectMeta(name=name), source="awsElasticBlockStore", disk_id=name
                )
            elif driver == HOSTPATH:
                pv = PersistentVolume(metadata=ObjectMeta(name=name), source="hostPath")
            else:
                pv = PersistentVolume(
                    metadata=ObjectMeta(name=name),
                    source="csi",
                    csi_driver=driver,
                    volume_handle=name,
                )
            objects.append(pv)
            objects.append(PersistentVolumeClaim(metadata=ObjectMeta(name=name), volume_name=name))
        for j in range(va_count):
            objects.append(
                VolumeAttachment(
                    metadata=ObjectMeta(name=f"va-{driver}-{j}"),
                    attacher=driver,
                    node_name=NODE,
                    persistent_volume_name=f"csi-{driver}-{j}",
                )
            )
    objects.append(
        PersistentVolumeClaim(metadata=ObjectMeta(name="csi-4"), storage_class_name=SC_NAME)
    )
    objects.append(PersistentVolumeClaim(metadata=ObjectMeta(name="csi-5")))
    objects.append(
        PersistentVolumeClaim(
            metadata=ObjectMeta(name="csi-6"),
            storage_class_name=SC_NAME,
            volume_name="missing-in-action",
        )
    )
    objects.append(StorageClass(metadata=ObjectMeta(name=SC_NAME), provisioner=drivers[0]))
    return objects


def csi_node(limit_source: str, limit: int, drivers: Sequence[str]) -> CSINode | None:
    if limit_source not in ("csinode", "csinode-with-no-limit", "no-csi-driver"):
        return None
    entries: tuple[CSINodeDriver, ...] = ()
    if limit_source != "no-csi-driver":
        count = limit if limit_source == "csinode" else None
        entries = tuple(
            CSINodeDriver(name=d, node_id=NODE, allocatable_count=count) for d in drivers
        )
    # Every test CSINode announces the migration of the AWS EBS in-tree plugin.
    meta = ObjectMeta(name=NODE, annotations={MIGRATED_PLUGINS_ANNOTATION: AWS_IN_TREE})
    return CSINode(metadata=meta, drivers=entries)


@attrs.frozen
class Case:
    new_pod: Pod
    drivers: Sequence[str]
    existing: Sequence[Pod] = ()
    extra_claims: Sequence[PersistentVolumeClaim] = ()
    max_vols: int = 0
    va_count: int = 0
    limit_source: str = ""
    want: tuple[fw.Code, str] | None = None
    want_pre_filter_skip: bool = False


EXCEEDED = (fw.Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
CASES = [
    ("should count VolumeAttachments towards volume limit when no pods exist",
     Case(EBS_ONE, [EBS], max_vols=2, va_count=2, limit_source="csinode", want=EXCEEDED)),
    ("should schedule pod when VolumeAttachments count does not exceed limit",
     Case(EBS_ONE, [EBS], max_vols=2, va_count=1, limit_source="csinode")),
    ("fits when node volume limit >= new pods CSI volume",
     Case(EBS_ONE, [EBS], [RUNNING, EBS_TWO], max_vols=4, limit_source="csinode")),
    ("doesn't when node volume limit <= pods CSI volume",
     Case(EBS_ONE, [EBS], [RUNNING, EBS_TWO], max_vols=2, limit_source="csinode", want=EXCEEDED)),
    ("should when driver does not support volume limits",
     Case(EBS_ONE, [EBS], [RUNNING, EBS_TWO], max_vols=2, limit_source="csinode-with-no-limit")),
    ("count pending PVCs towards volume limit <= pods CSI volume",
     Case(EBS_ONE, [EBS], [PENDING, EBS_TWO], max_vols=2, limit_source="csinode", want=EXCEEDED)),
    ("count multiple pending pvcs towards volume limit >= pods CSI volume",
     Case(EBS_ONE, [EBS], [PENDING, UNBOUND_2, EBS_TWO], max_vols=4, limit_source="csinode")),
    ("should count PVCs with invalid PV name but valid SC",
     Case(EBS_ONE, [EBS], [MISSING_PV, EBS_TWO], max_vols=2, limit_source="csinode", want=EXCEEDED)),
    ("don't count pvcs with missing SC towards volume limit",
     Case(EBS_ONE, [EBS], [RUNNING, NO_SC], max_vols=2, limit_source="csinode")),
    ("count pvcs with the same type towards volume limit",
     Case(EBS_ONE, [EBS, GCE], [GCE_TWO, EBS_TWO], max_vols=2, limit_source="csinode", want=EXCEEDED)),
    ("don't count pvcs with different type towards volume limit",
     Case(GCE_TWO, [EBS, GCE], [EBS_TWO, RUNNING], max_vols=2, limit_source="csinode")),
    ("should count in-tree volumes if migration is enabled",
     Case(IN_TREE_ONE, [AWS_IN_TREE, EBS], [IN_TREE_TWO], max_vols=2, limit_source="csinode", want=EXCEEDED)),
    ("nil csi node", Case(AWS_INLINE, [AWS_IN_TREE, EBS], [IN_TREE_TWO])),
    ("should count unbound in-tree volumes if migration is enabled",
     Case(PENDING, [AWS_IN_TREE, EBS], [IN_TREE_TWO], max_vols=2, limit_source="csinode", want=EXCEEDED)),
    ("should not limit pod if volume used does not report limits",
     Case(IN_TREE_ONE, [AWS_IN_TREE, EBS], [IN_TREE_TWO], max_vols=2, limit_source="csinode-with-no-limit")),
    ("should not count non-migratable in-tree volumes",
     Case(NON_MIGRATABLE, [HOSTPATH, EBS], [EBS_TWO], max_vols=2, limit_source="csinode")),
    ("should count in-tree inline volumes if migration is enabled",
     Case(AWS_INLINE, [AWS_IN_TREE, EBS], [IN_TREE_TWO], max_vols=2, limit_source="csinode", want=EXCEEDED)),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     Case(IN_TREE_ONE, [AWS_IN_TREE, EBS], [EBS_TWO], max_vols=2, limit_source="csinode", want=EXCEEDED)),
    ("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     Case(AWS_INLINE, [AWS_IN_TREE, EBS], [EBS_TWO, IN_TREE_ONE], max_vols=3, limit_source="csinode", want=EXCEEDED)),
    ("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     Case(AWS_INLINE_SAME_ID, [AWS_IN_TREE, EBS], [EBS_TWO, IN_TREE_ONE], max_vols=3, limit_source="csinode")),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
     Case(EBS_ONE, [AWS_IN_TREE, EBS], [IN_TREE_TWO], max_vols=2, limit_source="csinode", want=EXCEEDED)),
    ("ephemeral volume missing",
     Case(EPHEMERAL, [EBS], limit_source="csinode-with-no-limit",
          want=(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found'))),
    ("ephemeral volume not owned",
     Case(EPHEMERAL, [EBS], extra_claims=[CONFLICTING_CLAIM], limit_source="csinode-with-no-limit",
          want=(fw.Code.ERROR, "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"))),
    ("ephemeral volume unbound",
     Case(EPHEMERAL, [EBS], extra_claims=[EPHEMERAL_CLAIM], limit_source="csinode-with-no-limit")),
    ("ephemeral doesn't when node volume limit <= pods CSI volume",
     Case(EPHEMERAL, [EBS], [RUNNING, EBS_TWO], [EPHEMERAL_CLAIM], max_vols=2, limit_source="csinode", want=EXCEEDED)),
    ("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
     Case(EBS_ONE, [EBS], [RUNNING, EPHEMERAL_TWO], [CLAIM_X, CLAIM_Y], max_vols=2, limit_source="csinode", want=EXCEEDED)),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
     Case(EBS_ONE, [EBS], [RUNNING, EPHEMERAL, EBS_TWO], [EPHEMERAL_CLAIM], max_vols=3, limit_source="csinode", want=EXCEEDED)),
    ("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
     Case(EBS_ONE, [EBS], [RUNNING, EPHEMERAL, EBS_TWO], [EPHEMERAL_CLAIM], max_vols=5, limit_source="csinode")),
    ("skip Filter when the pod only uses secrets and configmaps",
     Case(ONLY_CONFIG, [EBS], max_vols=2, limit_source="csinode", want_pre_filter_skip=True)),
    ("don't skip Filter when the pod has pvcs",
     Case(PVC_WITH_CONFIG, [EBS], max_vols=2, limit_source="csinode")),
    ("don't skip Filter when the pod has ephemeral volumes",
     Case(EPHEMERAL_WITH_CONFIG, [EBS], limit_source="csinode-with-no-limit",
          want=(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found'))),
    ("don't skip Filter when the pod has inline migratable volumes",
     Case(INLINE_WITH_CONFIG, [AWS_IN_TREE, EBS], [IN_TREE_TWO], max_vols=2, limit_source="csinode", want=EXCEEDED)),
]  # fmt: skip


@pytest.mark.parametrize("case", [pytest.param(c, id=name) for name, c in CASES])
def test_csi_limits(case: Case) -> None:
    objects = [*fixtures(case.drivers, case.va_count), *case.extra_claims]
    node_csi = csi_node(case.limit_source, case.max_vols, case.drivers)
    if node_csi is not None:
        objects.append(node_csi)
    plugin = CSILimits(None, Framework(cluster=ClusterView(workloads=objects)))
    node_info = fw.NodeInfo(Node(metadata=ObjectMeta(name=NODE)), case.existing)
    state = fw.CycleState()
    pre = plugin.pre_filter(state, case.new_pod, [node_info])
    if case.want_pre_filter_skip:
        assert isinstance(pre, fw.Status) and pre.code is fw.Code.SKIP
        return
    assert pre is None
    status = plugin.filter(state, case.new_pod, node_info)
    if case.want is None:
        assert status is None
    else:
        assert status is not None and (status.code, status.message()) == case.want


def test_long_driver_names_get_upstream_attach_limit_keys() -> None:
    assert csi_attach_limit_key("ebs.csi.aws.com") == "attachable-volumes-csi-ebs.csi.aws.com"
    long = "a" * 50
    key = csi_attach_limit_key(long)
    assert key.startswith("attachable-volumes-csi-" + "a" * 23) and len(key) == 23 + 23 + 16


Q, SKIP = fw.QueueingHint.QUEUE, fw.QueueingHint.QUEUE_SKIP


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(pvc_pod("placeholder", node=NODE), Q, id="return a Queue when a deleted pod has a PVC"),
        pytest.param(
            attrs.evolve(AWS_INLINE, spec=attrs.evolve(AWS_INLINE.spec, node_name=NODE)),
            Q,
            id="return a Queue when a deleted pod has a inline migratable volume",
        ),
        pytest.param(pvc_pod(node=NODE), SKIP, id="return a QueueSkip when a deleted pod doesn't have any volume"),
        pytest.param(pvc_pod(f"csi-{EBS}-0"), SKIP, id="return a QueueSkip when a deleted pod is not scheduled."),
    ],
)  # fmt: skip
def test_csi_limits_q_hint(deleted: Pod, want: fw.QueueingHint) -> None:
    plugin = CSILimits(None, Framework())
    assert plugin.is_schedulable_after_pod_deleted(pvc_pod(f"csi-{EBS}-2"), deleted, None) is want


@pytest.mark.parametrize(
    ("pod", "added", "want"),
    [
        pytest.param(pvc_pod(namespace="ns1"), PersistentVolumeClaim(metadata=ObjectMeta(name="", namespace="ns2")), SKIP,
                     id="a pod isn't in the same namespace as an added PVC"),
        pytest.param(pvc_pod("pvc1", namespace="ns1"), PersistentVolumeClaim(metadata=ObjectMeta(name="pvc1", namespace="ns1")), Q,
                     id="a pod is in the same namespace as an added PVC"),
        pytest.param(volumes_pod(Volume(name="ephemeral", ephemeral=True), name="pod1", namespace="ns1"),
                     PersistentVolumeClaim(metadata=ObjectMeta(name="pod1-ephemeral", namespace="ns1")), Q,
                     id="a pod has an ephemeral volume related to an added PVC"),
        pytest.param(pvc_pod("pvc1", namespace="ns1"), PersistentVolumeClaim(metadata=ObjectMeta(name="pvc2", namespace="ns1")), SKIP,
                     id="a pod doesn't have the same PVC as an added PVC"),
        pytest.param(pvc_pod(namespace="ns1"), PersistentVolumeClaim(metadata=ObjectMeta(name="pvc2", namespace="ns1")), SKIP,
                     id="a pod doesn't have any PVC attached"),
    ],
)  # fmt: skip
def test_csi_limits_added_pvc_q_hint(
    pod: Pod, added: PersistentVolumeClaim, want: fw.QueueingHint
) -> None:
    plugin = CSILimits(None, Framework())
    assert plugin.is_schedulable_after_pvc_added(pod, None, added) is want


def _va(attacher: str, pv: str = "") -> VolumeAttachment:
    return VolumeAttachment(
        metadata=ObjectMeta(name="volumeattachment1"), attacher=attacher, node_name="fake-node",
        persistent_volume_name=pv,
    )  # fmt: skip


PVC1 = PersistentVolumeClaim(metadata=ObjectMeta(name="pvc1", namespace="ns1"), volume_name="pv1")
AWS_TEST = Volume(name="a", disk=DiskSource(kind="awsElasticBlockStore", name="test"))
GCE_TEST = Volume(name="g", disk=DiskSource(kind="gcePersistentDisk", name="test"))
CLAIM1 = Volume(name="c", persistent_volume_claim="pvc1")


@pytest.mark.parametrize(
    ("pod", "deleted", "want"),
    [
        pytest.param(volumes_pod(CLAIM1, namespace="ns1"), _va("test.storage.gke.io", "pv1"), Q,
                     id="a pod has PVC when VolumeAttachment is deleting"),
        pytest.param(volumes_pod(AWS_TEST, namespace="ns1"), _va(EBS), Q,
                     id="a pod has an Inline Migratable volume (AWSEBSDriver) when VolumeAttachment (AWSEBSDriver) is deleting (match)"),
        pytest.param(volumes_pod(GCE_TEST, namespace="ns1"), _va(EBS), SKIP,
                     id="a pod has an Inline Migratable volume (GCEPDDriver) when VolumeAttachment (AWSEBSDriver) is deleting (no match)"),
        pytest.param(volumes_pod(AWS_TEST, CLAIM1, namespace="ns1"), _va(EBS), Q,
                     id="a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver) is deleting"),
        pytest.param(volumes_pod(AWS_TEST, CLAIM1, namespace="ns1"), _va("test.storage.gke.io", "pv1"), Q,
                     id="a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver)  is deleting"),
        pytest.param(volumes_pod(namespace="ns1"), _va("test.storage.gke.io", "pv1"), SKIP,
                     id="a pod has no PVC when VolumeAttachment is deleting"),
    ],
)  # fmt: skip
def test_csi_limits_deleted_volume_attachment_q_hint(
    pod: Pod, deleted: VolumeAttachment, want: fw.QueueingHint
) -> None:
    plugin = CSILimits(None, Framework(cluster=ClusterView(workloads=[PVC1])))
    assert plugin.is_schedulable_after_volume_attachment_deleted(pod, deleted, None) is want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(1, 2, Q, id="limit raised, queue"),
        pytest.param(2, 1, SKIP, id="limit decreased, skip queueing"),
        pytest.param(1, 1, SKIP, id="limit unchanged, skip queueing"),
    ],
)
def test_csi_limits_after_csi_node_updated_q_hint(
    old: int, new: int, want: fw.QueueingHint
) -> None:
    def node(count: int) -> CSINode:
        driver = CSINodeDriver(name=EBS, node_id="test-node", allocatable_count=count)
        return CSINode(metadata=ObjectMeta(name="test-node"), drivers=(driver,))

    plugin = CSILimits(None, Framework())
    pod = pvc_pod(f"csi-{EBS}-0", name="test-pod", namespace="ns1")
    assert plugin.is_schedulable_after_csi_node_updated(pod, node(old), node(new)) is want
