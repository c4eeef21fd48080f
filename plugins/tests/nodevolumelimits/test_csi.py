"""NodeVolumeLimits (CSILimits) on what schedframe models: pods without claims, and claims
not found."""

from __future__ import annotations

import attrs
import pytest

from schedframe import framework as fw
from schedframe.objects import Node, ObjectMeta, Pod, PodSpec, Volume
from schedframe.runtime import Framework
from schedframe_plugins.nodevolumelimits import CSILimits


def pod(*claims: str | None, namespace: str = "default", node: str = "") -> Pod:
    volumes = tuple(Volume(name=f"v{i}", persistent_volume_claim=c) for i, c in enumerate(claims))
    return Pod(
        metadata=ObjectMeta(name="p", namespace=namespace),
        spec=PodSpec(node_name=node, volumes=volumes),
    )


@attrs.frozen
class Claim:
    namespace: str
    name: str


def plugin() -> CSILimits:
    return CSILimits(None, Framework())


NODE = fw.NodeInfo(Node(metadata=ObjectMeta(name="n")))


def test_pre_filter_skips_pods_without_claims() -> None:
    for p in (pod(), pod(None)):
        status = plugin().pre_filter(fw.CycleState(), p, [])
        assert isinstance(status, fw.Status) and status.code is fw.Code.SKIP


def test_claim_not_found() -> None:
    p = pod("csi-ebs.csi.aws.com-0")
    state = fw.CycleState()
    assert plugin().pre_filter(state, p, [NODE]) is None
    status = plugin().filter(state, p, NODE)
    assert status is not None
    assert status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == (
        'looking up PVC default/csi-ebs.csi.aws.com-0: persistentvolumeclaim "csi-ebs.csi.aws.com-0" not found',
    )


def test_filter_passes_pod_without_volumes() -> None:
    assert plugin().filter(fw.CycleState(), pod(), NODE) is None


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(
            pod(node="n"), fw.QueueingHint.QUEUE_SKIP, id="skip-queue-on-pod-without-volumes"
        ),
        pytest.param(pod("c"), fw.QueueingHint.QUEUE_SKIP, id="skip-queue-on-unscheduled-pod"),
        pytest.param(
            pod(None, node="n"), fw.QueueingHint.QUEUE_SKIP, id="skip-queue-on-pod-without-pvc"
        ),
        pytest.param(pod("c", node="n"), fw.QueueingHint.QUEUE, id="queue-on-pod-with-pvc-deleted"),
    ],
)
def test_is_schedulable_after_pod_deleted(deleted: Pod, want: fw.QueueingHint) -> None:
    assert plugin().is_schedulable_after_pod_deleted(pod("c"), deleted, None) == want


@pytest.mark.parametrize(
    ("claim", "want"),
    [
        pytest.param(Claim("default", "c"), fw.QueueingHint.QUEUE, id="queue-on-pvc-the-pod-uses"),
        pytest.param(
            Claim("default", "other"), fw.QueueingHint.QUEUE_SKIP, id="skip-on-unrelated-pvc"
        ),
        pytest.param(Claim("ns2", "c"), fw.QueueingHint.QUEUE_SKIP, id="skip-on-other-namespace"),
    ],
)
def test_is_schedulable_after_pvc_added(claim: Claim, want: fw.QueueingHint) -> None:
    assert plugin().is_schedulable_after_pvc_added(pod("c"), None, claim) == want


def test_events_to_register() -> None:
    assert [e.event for e in plugin().events_to_register()] == [
        fw.ClusterEvent(fw.EventResource.CSI_NODE, fw.ActionType.ADD),
        fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.DELETE),
        fw.ClusterEvent(fw.EventResource.PERSISTENT_VOLUME_CLAIM, fw.ActionType.ADD),
    ]
