"""Upstream ``volume_zone_test.go`` as data: TestSingleZone, TestMultiZone, TestWithBinding
and the queueing-hint tables.

Two differences, both because schedframe reads the API server's objects: a class always has
a binding mode (the API server defaults it to Immediate), so "unbound volume immediate
binding mode" reports ``PersistentVolume had no name`` instead of the unset-mode error; and a
missing class is reported as kube-scheduler's informer lister words it
(``storageclass.storage.k8s.io "x" not found``), where upstream's test uses a fake lister.
"""

from __future__ import annotations

import pytest

from schedframe import framework as fw
from schedframe.objects import (
    Node,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodSpec,
    StorageClass,
    Volume,
)
from schedframe.runtime import ClusterView, Framework
from schedframe_plugins.volumezone import ERR_REASON_CONFLICT, VolumeZone

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
UNRESOLVABLE = fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
CONFLICT = (UNRESOLVABLE, ERR_REASON_CONFLICT)


def pod(claim: str | None = None) -> Pod:
    volumes = () if claim is None else (Volume(name="v", persistent_volume_claim=claim),)
    return Pod(
        metadata=ObjectMeta(name="pod_1", namespace="default"), spec=PodSpec(volumes=volumes)
    )


def node(**labels: str) -> Node:
    return Node(metadata=ObjectMeta(name="host1", labels=labels))


def pv(name: str, **labels: str) -> PersistentVolume:
    return PersistentVolume(metadata=ObjectMeta(name=name, labels=labels))


def pvc(name: str, volume: str = "", cls: str | None = None) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name, namespace="default"),
        volume_name=volume,
        storage_class_name=cls,
    )


SINGLE = [
    pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", **{BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", **{BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", **{ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", **{REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", **{ZONE: "us-west1-a", REGION: "us-west1-a"}),
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_2", "Vol_2"),
    pvc("PVC_3", "Vol_3"),
    pvc("PVC_4", "Vol_not_exist"),
    pvc("PVC_Stable_1", "Vol_Stable_1"),
    pvc("PVC_Stable_2", "Vol_Stable_2"),
    pvc("PVC_Stable_3", "Vol_Stable_3"),
]
MULTI = [
    pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", **{BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("Vol_3", **{BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", **{ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", **{ZONE: "us-west1-c__us-west1-a"}),
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_2", "Vol_2"),
    pvc("PVC_3", "Vol_3"),
    pvc("PVC_4", "Vol_not_exist"),
    pvc("PVC_Stable_1", "Vol_Stable_1"),
    pvc("PVC_Stable_2", "Vol_Stable_2"),
]
BINDING = [
    StorageClass(metadata=ObjectMeta(name="Class_Immediate"), provisioner="p"),
    StorageClass(
        metadata=ObjectMeta(name="Class_Wait"),
        provisioner="p",
        volume_binding_mode="WaitForFirstConsumer",
    ),
    pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_NoSC", cls="Class_0"),
    pvc("PVC_EmptySC"),
    pvc("PVC_WaitSC", cls="Class_Wait"),
    pvc("PVC_ImmediateSC", cls="Class_Immediate"),
]
TEST_NODE = node(**{BETA_ZONE: "us-west1-a", "uselessLabel": "none"})
_Want = tuple[fw.Code, str] | None

CASES = [
    # TestSingleZone
    ("single", "pod without volume", pod(), node(**{BETA_ZONE: "us-west1-a"}), (fw.Code.SKIP, ""), None),
    ("single", "node without labels", pod("PVC_1"), node(), None, None),
    ("single", "beta zone label matched", pod("PVC_1"), node(**{BETA_ZONE: "us-west1-a", "uselessLabel": "none"}), None, None),
    ("single", "beta region label matched", pod("PVC_2"), node(**{BETA_REGION: "us-west1", "uselessLabel": "none"}), None, None),
    ("single", "beta region label doesn't match", pod("PVC_2"), node(**{BETA_REGION: "no_us-west1", "uselessLabel": "none"}), None, CONFLICT),
    ("single", "beta zone label doesn't match", pod("PVC_1"), node(**{BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"}), None, CONFLICT),
    ("single", "zone label matched", pod("PVC_Stable_1"), node(**{ZONE: "us-west1-a", "uselessLabel": "none"}), None, None),
    ("single", "region label matched", pod("PVC_Stable_2"), node(**{REGION: "us-west1", "uselessLabel": "none"}), None, None),
    ("single", "region label doesn't match", pod("PVC_Stable_2"), node(**{REGION: "no_us-west1", "uselessLabel": "none"}), None, CONFLICT),
    ("single", "zone label doesn't match", pod("PVC_Stable_1"), node(**{ZONE: "no_us-west1-a", "uselessLabel": "none"}), None, CONFLICT),
    ("single", "pv with zone and region, node with only zone", pod("PVC_Stable_3"), node(**{ZONE: "us-west1-a"}), None, CONFLICT),
    ("single", "pv with zone,node with beta zone", pod("PVC_Stable_1"), node(**{BETA_ZONE: "us-west1-a"}), None, CONFLICT),
    ("single", "pv with beta label,node with ga label, matched", pod("PVC_1"), node(**{ZONE: "us-west1-a"}), None, None),
    ("single", "pv with beta label,node with ga label, don't match", pod("PVC_1"), node(**{ZONE: "us-west1-b"}), None, CONFLICT),
    # TestMultiZone
    ("multi", "node without labels", pod("PVC_3"), node(), None, None),
    ("multi", "beta zone label matched", pod("PVC_3"), node(**{BETA_ZONE: "us-west1-a", "uselessLabel": "none"}), None, None),
    ("multi", "beta zone label doesn't match", pod("PVC_1"), node(**{BETA_ZONE: "us-west1-b", "uselessLabel": "none"}), None, CONFLICT),
    ("multi", "zone label matched", pod("PVC_Stable_2"), node(**{ZONE: "us-west1-a", "uselessLabel": "none"}), None, None),
    ("multi", "zone label doesn't match", pod("PVC_Stable_1"), node(**{ZONE: "us-west1-b", "uselessLabel": "none"}), None, CONFLICT),
    # TestWithBinding
    ("binding", "label zone failure domain matched", pod("PVC_1"), TEST_NODE, None, None),
    ("binding", "unbound volume empty storage class", pod("PVC_EmptySC"), TEST_NODE,
     (UNRESOLVABLE, "PersistentVolumeClaim had no pv name and storageClass name"),
     (UNRESOLVABLE, "PersistentVolumeClaim had no pv name and storageClass name")),
    ("binding", "unbound volume no storage class", pod("PVC_NoSC"), TEST_NODE,
     (UNRESOLVABLE, 'storageclass.storage.k8s.io "Class_0" not found'),
     (UNRESOLVABLE, 'storageclass.storage.k8s.io "Class_0" not found')),
    ("binding", "unbound volume immediate binding mode", pod("PVC_ImmediateSC"), TEST_NODE,
     (UNRESOLVABLE, "PersistentVolume had no name"), (UNRESOLVABLE, "PersistentVolume had no name")),
    ("binding", "unbound volume wait binding mode", pod("PVC_WaitSC"), TEST_NODE, (fw.Code.SKIP, ""), None),
]  # fmt: skip
OBJECTS = {"single": SINGLE, "multi": MULTI, "binding": BINDING}


@pytest.mark.parametrize(
    ("table", "p", "n", "want_pre_filter", "want_filter"),
    [pytest.param(t, p, n, wp, wf, id=f"{t}: {name}") for t, name, p, n, wp, wf in CASES],
)
def test_volume_zone(
    table: str, p: Pod, n: Node, want_pre_filter: _Want, want_filter: _Want
) -> None:
    plugin = VolumeZone(None, Framework(cluster=ClusterView(workloads=OBJECTS[table])))
    state = fw.CycleState()
    got = plugin.pre_filter(state, p, [])
    if want_pre_filter is None:
        assert got is None
    else:
        assert isinstance(got, fw.Status) and got.code is want_pre_filter[0]
        assert got.message() == want_pre_filter[1]
    status = plugin.filter(state, p, fw.NodeInfo(n))
    if want_filter is None:
        assert status is None
    else:
        assert status is not None and (status.code, status.message()) == want_filter


def test_a_missing_bound_volume_is_reported_as_the_lister_does() -> None:
    plugin = VolumeZone(None, Framework(cluster=ClusterView(workloads=SINGLE)))
    got = plugin.pre_filter(fw.CycleState(), pod("PVC_4"), [])
    assert isinstance(got, fw.Status) and got.code is UNRESOLVABLE
    assert got.message() == 'persistentvolume "Vol_not_exist" not found'


Q, SKIP = fw.QueueingHint.QUEUE, fw.QueueingHint.QUEUE_SKIP


@pytest.mark.parametrize(
    ("p", "new", "want"),
    [
        pytest.param(pod(), pvc("PVC_1", "Vol_1"), SKIP, id="pvc-was-added-but-pod-refers-no-pvc"),
        pytest.param(pod("PVC_2"), pvc("PVC_1", "Vol_1"), SKIP, id="pvc-was-added-and-pod-was-bound-to-different-pvc"),
        pytest.param(
            pod("PVC_1"),
            PersistentVolumeClaim(metadata=ObjectMeta(name="PVC_1", namespace="ns1")),
            SKIP,
            id="pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns",
        ),
        pytest.param(pod("PVC_1"), pvc("PVC_1", "Vol_1"), Q, id="pvc-was-added-and-pod-was-bound-to-the-pvc"),
    ],
)  # fmt: skip
def test_is_schedulable_after_persistent_volume_claim_change(
    p: Pod, new: PersistentVolumeClaim, want: fw.QueueingHint
) -> None:
    plugin = VolumeZone(None, Framework())
    assert plugin.is_schedulable_after_persistent_volume_claim_change(p, None, new) is want


def test_hints_reject_other_objects() -> None:
    plugin = VolumeZone(None, Framework())
    with pytest.raises(TypeError):
        plugin.is_schedulable_after_persistent_volume_claim_change(pod("PVC_1"), None, "not-a-pvc")
    with pytest.raises(TypeError):
        plugin.is_schedulable_after_storage_class_added(pod("PVC_1"), None, "not-a-sc")
    with pytest.raises(TypeError):
        plugin.is_schedulable_after_persistent_volume_change(pod("PVC_1"), None, "not-a-pv")
    with pytest.raises(TypeError):
        plugin.is_schedulable_after_persistent_volume_change(pod("PVC_1"), "not-a-pv", pv("Vol_1"))


def test_is_schedulable_after_storage_class_added() -> None:
    plugin = VolumeZone(None, Framework())
    immediate = StorageClass(metadata=ObjectMeta(name="SC_1"), provisioner="p")
    wait = StorageClass(
        metadata=ObjectMeta(name="SC_1"),
        provisioner="p",
        volume_binding_mode="WaitForFirstConsumer",
    )
    assert plugin.is_schedulable_after_storage_class_added(pod("PVC_1"), None, immediate) is SKIP
    assert plugin.is_schedulable_after_storage_class_added(pod("PVC_1"), None, wait) is Q


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, pv("Vol_1", **{BETA_ZONE: "us-west1-b"}), Q, id="new-pv-was-added"),
        pytest.param(
            pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
            pv("Vol_1", **{BETA_ZONE: "us-west1-b"}),
            Q,
            id="pv-was-updated-and-changed-topology",
        ),
        pytest.param(
            pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
            pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            Q,
            id="pv-was-updated-and-added-topology-label",
        ),
        pytest.param(
            pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            SKIP,
            id="pv-was-updated-but-no-topology-is-changed",
        ),
    ],
)
def test_is_schedulable_after_persistent_volume_change(
    old: PersistentVolume | None, new: PersistentVolume, want: fw.QueueingHint
) -> None:
    plugin = VolumeZone(None, Framework())
    assert plugin.is_schedulable_after_persistent_volume_change(pod("PVC_1"), old, new) is want
