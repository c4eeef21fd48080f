"""VolumeRestrictions on what schedframe models: pods without claims, and claims not found."""

from __future__ import annotations

import attrs
import pytest

from schedframe import framework as fw
from schedframe.objects import ObjectMeta, Pod, PodSpec, Volume
from schedframe.runtime import Framework
from schedframe_plugins.volumerestrictions import VolumeRestrictions


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


def plugin() -> VolumeRestrictions:
    return VolumeRestrictions(None, Framework())


@pytest.mark.parametrize(
    "p",
    [
        pytest.param(pod(), id="pod without volumes"),
        pytest.param(pod(None), id="pod with a non-claim volume"),
    ],
)
def test_pre_filter_skips_pods_without_claims(p: Pod) -> None:
    status = plugin().pre_filter(fw.CycleState(), p, [])
    assert isinstance(status, fw.Status) and status.code is fw.Code.SKIP


def test_pre_filter_claim_not_found() -> None:
    status = plugin().pre_filter(fw.CycleState(), pod("claim-a"), [])
    assert isinstance(status, fw.Status)
    assert status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ('persistentvolumeclaim "claim-a" not found',)


def test_filter_without_pre_filter() -> None:
    status = plugin().filter(fw.CycleState(), pod(), fw.NodeInfo())
    assert status is not None and status.code is fw.Code.ERROR
    assert status.message() == 'cannot read "PreFilterVolumeRestrictions" from cycleState'


@pytest.mark.parametrize(
    ("claim", "want"),
    [
        pytest.param(
            Claim("default", "claim-a"), fw.QueueingHint.QUEUE, id="queue-on-pvc-the-pod-uses"
        ),
        pytest.param(
            Claim("default", "other"), fw.QueueingHint.QUEUE_SKIP, id="skip-on-unrelated-pvc"
        ),
        pytest.param(
            Claim("other-ns", "claim-a"),
            fw.QueueingHint.QUEUE_SKIP,
            id="skip-on-pvc-in-other-namespace",
        ),
    ],
)
def test_is_schedulable_after_pvc_added(claim: Claim, want: fw.QueueingHint) -> None:
    hint = plugin().is_schedulable_after_persistent_volume_claim_added(pod("claim-a"), None, claim)
    assert hint == want


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(
            pod("claim-a", node="n"), fw.QueueingHint.QUEUE, id="queue-on-pod-with-same-pvc-deleted"
        ),
        pytest.param(
            pod("other", node="n"),
            fw.QueueingHint.QUEUE_SKIP,
            id="skip-on-pod-with-other-pvc-deleted",
        ),
        pytest.param(
            pod("claim-a", namespace="ns2"),
            fw.QueueingHint.QUEUE_SKIP,
            id="skip-on-pod-in-other-namespace",
        ),
    ],
)
def test_is_schedulable_after_pod_deleted(deleted: Pod, want: fw.QueueingHint) -> None:
    assert plugin().is_schedulable_after_pod_deleted(pod("claim-a"), deleted, None) == want


def test_events_to_register() -> None:
    assert [e.event for e in plugin().events_to_register()] == [
        fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.DELETE),
        fw.ClusterEvent(fw.EventResource.NODE, fw.ActionType.ADD),
        fw.ClusterEvent(fw.EventResource.PERSISTENT_VOLUME_CLAIM, fw.ActionType.ADD),
    ]
