"""Upstream ``volume_restrictions_test.go`` as data: the GCE PD, AWS EBS, RBD and iSCSI disk
conflict tables, the ReadWriteOncePod access-mode table (with today's split between
PreFilter and Filter), and the queueing hints."""

from __future__ import annotations

import pytest

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.objects import (
    DiskSource,
    Node,
    ObjectMeta,
    PersistentVolumeClaim,
    Pod,
    PodSpec,
    Volume,
)
from schedframe.runtime import ClusterView, Framework
from schedframe_plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    VolumeRestrictions,
)


def disk_pod(*disks: DiskSource, name: str = "p", node: str = "") -> Pod:
    volumes = tuple(Volume(name=f"v{i}", disk=d) for i, d in enumerate(disks))
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", uid=name),
        spec=PodSpec(node_name=node, volumes=volumes),
    )


GCE = (
    DiskSource(kind="gcePersistentDisk", name="foo"),
    DiskSource(kind="gcePersistentDisk", name="bar"),
)
AWS = (
    DiskSource(kind="awsElasticBlockStore", name="foo"),
    DiskSource(kind="awsElasticBlockStore", name="bar"),
)
RBD = (
    DiskSource(kind="rbd", name="bar", monitors=("a", "b"), pool="foo"),
    DiskSource(kind="rbd", name="bar", monitors=("c", "d"), pool="foo"),
)
ISCSI = (
    DiskSource(kind="iscsi", name="iqn.2016-12.server:storage.target01"),
    DiskSource(kind="iscsi", name="iqn.2017-12.server:storage.target01"),
)
DISK_CASES = [
    pytest.param(disk_pod(), (), None, id=f"{kind}: nothing")
    for kind in ("GCE", "AWS", "RBD", "ISCSI")
] + [
    case
    for kind, (state, state2) in (("GCE", GCE), ("AWS", AWS), ("RBD", RBD), ("ISCSI", ISCSI))
    for case in (
        pytest.param(disk_pod(), (disk_pod(state, name="e"),), None, id=f"{kind}: one state"),
        pytest.param(
            disk_pod(state), (disk_pod(state, name="e"),), ERR_REASON_DISK_CONFLICT,
            id=f"{kind}: same state",
        ),
        pytest.param(disk_pod(state2), (disk_pod(state, name="e"),), None, id=f"{kind}: different state"),
    )
]  # fmt: skip


@pytest.mark.parametrize(("pod", "existing", "want"), DISK_CASES)
def test_disk_conflicts(pod: Pod, existing: tuple[Pod, ...], want: str | None) -> None:
    plugin = VolumeRestrictions(None, Framework())
    state = fw.CycleState()
    pre = plugin.pre_filter(state, pod, [])
    if (
        isinstance(pre, fw.Status) and pre.code is fw.Code.SKIP
    ):  # the framework does not call Filter
        assert want is None
        return
    status = plugin.filter(state, pod, fw.NodeInfo(Node(metadata=ObjectMeta(name="n")), existing))
    if want is None:
        assert status is None
    else:
        assert status is not None
        assert (status.code, status.message()) == (fw.Code.UNSCHEDULABLE, want)


def test_read_only_gce_disks_may_be_shared() -> None:
    ro = DiskSource(kind="gcePersistentDisk", name="foo", read_only=True)
    plugin = VolumeRestrictions(None, Framework())
    state = fw.CycleState()
    pod = disk_pod(ro)
    assert plugin.pre_filter(state, pod, []) is None
    assert plugin.filter(state, pod, fw.NodeInfo(None, [disk_pod(ro, name="e")])) is None


def claim_pod(name: str, claim: str) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", uid=name),
        spec=PodSpec(
            node_name="node-1", volumes=(Volume(name="v", persistent_volume_claim=claim),)
        ),
    )


POD_RWOP = claim_pod("pod-with-rwop", "claim-with-rwop")
POD_RWX = claim_pod("pod-with-rwx", "claim-with-rwx")
NODE = Node(metadata=ObjectMeta(name="node-1"))
RWOP = PersistentVolumeClaim(
    metadata=ObjectMeta(name="claim-with-rwop", namespace="default"),
    access_modes=("ReadWriteOncePod",),
)
RWX = PersistentVolumeClaim(
    metadata=ObjectMeta(name="claim-with-rwx", namespace="default"),
    access_modes=("ReadWriteMany",),
)
_Want = tuple[fw.Code, str] | None


@pytest.mark.parametrize(
    ("pod", "existing", "pvcs", "want_pre_filter", "want_filter"),
    [
        pytest.param(disk_pod(), (), (), (fw.Code.SKIP, ""), None, id="nothing"),
        pytest.param(
            POD_RWOP, (), (),
            (fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "claim-with-rwop" not found'),
            None, id="failed to get PVC",
        ),
        pytest.param(POD_RWOP, (POD_RWX,), (RWOP, RWX), (fw.Code.SKIP, ""), None, id="no access mode conflict"),
        pytest.param(
            POD_RWOP, (POD_RWOP, POD_RWX), (RWOP, RWX), None,
            (fw.Code.UNSCHEDULABLE, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT),
            id="access mode conflict",
        ),
    ],
)  # fmt: skip
def test_access_mode_conflicts(
    pod: Pod,
    existing: tuple[Pod, ...],
    pvcs: tuple[PersistentVolumeClaim, ...],
    want_pre_filter: _Want,
    want_filter: _Want,
) -> None:
    snapshot = Snapshot.from_objects([NODE] if existing else [], existing)
    handle = Framework(snapshot=snapshot, cluster=ClusterView(workloads=pvcs))
    plugin = VolumeRestrictions(None, handle)
    state = fw.CycleState()
    got = plugin.pre_filter(state, pod, [])
    if want_pre_filter is None:
        assert got is None
    else:
        assert isinstance(got, fw.Status) and (got.code, got.message()) == want_pre_filter
        return
    status = plugin.filter(state, pod, fw.NodeInfo(NODE, existing))
    if want_filter is None:
        assert status is None
    else:
        assert status is not None and (status.code, status.message()) == want_filter


def test_filter_without_pre_filter() -> None:
    plugin = VolumeRestrictions(None, Framework())
    status = plugin.filter(fw.CycleState(), disk_pod(), fw.NodeInfo())
    assert status is not None and status.code is fw.Code.ERROR
    assert status.message() == 'cannot read "PreFilterVolumeRestrictions" from cycleState'


Q, SKIP = fw.QueueingHint.QUEUE, fw.QueueingHint.QUEUE_SKIP


@pytest.mark.parametrize(
    ("pod", "deleted", "want"),
    [
        pytest.param(disk_pod(GCE[0]), disk_pod(GCE[0], name="d"), Q, id="queue-new-delete-pod-with-same-disk"),
        pytest.param(disk_pod(GCE[0]), disk_pod(GCE[1], name="d"), SKIP, id="skip-delete-pod-with-other-disk"),
        pytest.param(POD_RWOP, claim_pod("d", "claim-with-rwop"), Q, id="queue-delete-pod-with-same-claim"),
        pytest.param(POD_RWOP, claim_pod("d", "other"), SKIP, id="skip-delete-pod-with-other-claim"),
        pytest.param(
            POD_RWOP,
            Pod(metadata=ObjectMeta(name="d", namespace="other"), spec=POD_RWOP.spec),
            SKIP,
            id="skip-pod-in-other-namespace",
        ),
    ],
)  # fmt: skip
def test_is_schedulable_after_pod_deleted(pod: Pod, deleted: Pod, want: fw.QueueingHint) -> None:
    plugin = VolumeRestrictions(None, Framework())
    assert plugin.is_schedulable_after_pod_deleted(pod, deleted, None) is want


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param(RWOP, Q, id="queue-the-pods-claim"),
        pytest.param(RWX, SKIP, id="skip-another-claim"),
        pytest.param(
            PersistentVolumeClaim(metadata=ObjectMeta(name="claim-with-rwop", namespace="x")),
            SKIP,
            id="skip-another-namespace",
        ),
    ],
)
def test_is_schedulable_after_persistent_volume_claim_added(
    new: PersistentVolumeClaim, want: fw.QueueingHint
) -> None:
    plugin = VolumeRestrictions(None, Framework())
    assert plugin.is_schedulable_after_persistent_volume_claim_added(POD_RWOP, None, new) is want
    with pytest.raises(TypeError):
        plugin.is_schedulable_after_persistent_volume_claim_added(POD_RWOP, None, "not-a-pvc")
