"""VolumeZone on what schedframe models: pods without claims, and claims not found."""

from __future__ import annotations

import attrs
import pytest

from schedframe import framework as fw
from schedframe.objects import Node, ObjectMeta, Pod, PodSpec, Volume
from schedframe.runtime import Framework
from schedframe_plugins.volumezone import VolumeZone


def pod(*claims: str | None, namespace: str = "default") -> Pod:
    volumes = tuple(Volume(name=f"v{i}", persistent_volume_claim=c) for i, c in enumerate(claims))
    return Pod(metadata=ObjectMeta(name="p", namespace=namespace), spec=PodSpec(volumes=volumes))


@attrs.frozen
class Claim:
    namespace: str
    name: str


ZONED = fw.NodeInfo(
    Node(metadata=ObjectMeta(name="n", labels={"topology.kubernetes.io/zone": "us-west1-a"}))
)


def plugin() -> VolumeZone:
    return VolumeZone(None, Framework())


def test_pod_without_claims_is_skipped() -> None:
    for p in (pod(), pod(None)):
        state = fw.CycleState()
        status = plugin().pre_filter(state, p, [ZONED])
        assert isinstance(status, fw.Status) and status.code is fw.Code.SKIP
        assert plugin().filter(state, p, ZONED) is None


@pytest.mark.parametrize(
    "run_pre_filter", [True, False], ids=["PreFilter", "Filter without PreFilter"]
)
def test_claim_not_found(run_pre_filter: bool) -> None:
    p = pod("pvc_a")
    vz = plugin()
    status = (
        vz.pre_filter(fw.CycleState(), p, [ZONED])
        if run_pre_filter
        else vz.filter(fw.CycleState(), p, ZONED)
    )
    assert isinstance(status, fw.Status)
    assert status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ('persistentvolumeclaim "pvc_a" not found',)


def test_claim_without_name() -> None:
    status = plugin().pre_filter(fw.CycleState(), pod(""), [ZONED])
    assert isinstance(status, fw.Status)
    assert (status.code, *status.reasons) == (
        fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "PersistentVolumeClaim had no name",
    )


@pytest.mark.parametrize(
    ("claim", "want"),
    [
        pytest.param(
            Claim("default", "pvc_a"), fw.QueueingHint.QUEUE, id="queue-on-pvc-the-pod-uses"
        ),
        pytest.param(
            Claim("default", "other"), fw.QueueingHint.QUEUE_SKIP, id="skip-on-unrelated-pvc"
        ),
        pytest.param(
            Claim("ns2", "pvc_a"), fw.QueueingHint.QUEUE_SKIP, id="skip-on-other-namespace"
        ),
    ],
)
def test_is_schedulable_after_pvc_change(claim: Claim, want: fw.QueueingHint) -> None:
    hint = plugin().is_schedulable_after_persistent_volume_claim_change(pod("pvc_a"), None, claim)
    assert hint == want


def test_events_to_register() -> None:
    r, a = fw.EventResource, fw.ActionType
    assert [e.event for e in plugin().events_to_register()] == [
        fw.ClusterEvent(r.STORAGE_CLASS, a.ADD),
        fw.ClusterEvent(r.NODE, a.ADD | a.UPDATE_NODE_LABEL),
        fw.ClusterEvent(r.PERSISTENT_VOLUME_CLAIM, a.ADD | a.UPDATE),
        fw.ClusterEvent(r.PERSISTENT_VOLUME, a.ADD | a.UPDATE),
    ]
