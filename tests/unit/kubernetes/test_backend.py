"""KubernetesBackend: the Lister side (subscribe/list like MemoryBackend) and the Binder side
(binding, status patches, victim deletion, events) with their error mapping and retry rules."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import attrs
import pytest

from schedframe.backends import KINDS, Backend, WatchEvent
from schedframe.backends.kubernetes import ApiTransport, KubernetesBackend
from schedframe.errors import BackendError
from schedframe.objects import (
    ClaimReference,
    Namespace,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodCondition,
    Service,
    StatefulSet,
    pod_from_dict,
)
from schedframe.testing.fakeapi import FakeAPIServer

from ._support import TOKEN, node, pod

MakeBackend = Callable[..., KubernetesBackend]


def started(make_backend: MakeBackend, **kwargs: object) -> KubernetesBackend:
    backend = make_backend(**kwargs)
    backend.start(timeout=10)
    return backend


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def stored_pod(backend: KubernetesBackend, name: str) -> Pod:
    found = backend.get("Pod", name)
    assert isinstance(found, Pod)
    return found


# -- Lister --------------------------------------------------------------------------------------


def test_is_a_backend(make_backend: MakeBackend) -> None:
    backend: Backend = make_backend()
    assert isinstance(backend, KubernetesBackend)


def test_subscribe_replays_in_kind_order_then_streams(
    fake: FakeAPIServer, make_backend: MakeBackend
) -> None:
    fake.create(pod("p1"))
    fake.create(node("n1"))
    backend = started(make_backend)
    assert backend.has_synced and backend.healthy()
    events: list[WatchEvent] = []
    sub = backend.subscribe(events.append)
    kinds = [type(e.obj).__name__ for e in events]
    assert kinds == ["Namespace"] * 4 + ["Node", "Pod"]
    assert all(e.type == "ADDED" for e in events)
    assert [n.name for n in backend.list("Namespace") if isinstance(n, Namespace)] == [
        "default",
        "kube-node-lease",
        "kube-public",
        "kube-system",
    ]
    events.clear()
    fake.create(pod("p2"))
    wait_until(lambda: len(events) == 1)
    assert events[0].type == "ADDED" and isinstance(events[0].obj, Pod)
    sub.cancel()
    fake.create(pod("p3"))
    wait_until(lambda: backend.get("Pod", "p3") is not None)
    assert len(events) == 1
    with pytest.raises(ValueError, match="unknown kind"):
        backend.list("Deployment")
    assert KINDS == (
        "Namespace",
        "Node",
        "PodDisruptionBudget",
        "Service",
        "ReplicationController",
        "ReplicaSet",
        "StatefulSet",
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "CSIStorageCapacity",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "VolumeAttachment",
        "DeviceClass",
        "ResourceSlice",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "Pod",
    )


def test_the_objects_default_spreading_reads_are_watched(
    fake: FakeAPIServer, make_backend: MakeBackend
) -> None:
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}
    fake.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"app": "web"}},
        }
    )
    fake.create(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "web-1", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template},
        }
    )
    backend = started(make_backend)
    events: list[WatchEvent] = []
    backend.subscribe(events.append)
    assert [type(e.obj).__name__ for e in events] == ["Namespace"] * 4 + ["Service", "ReplicaSet"]
    fake.create(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template},
        }
    )
    fake.create(
        {
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": {"name": "rc", "namespace": "default"},
            "spec": {"selector": {"app": "web"}, "template": template},
        }
    )
    wait_until(lambda: len(backend.list("ReplicationController")) == 1)
    sts = backend.get("StatefulSet", "db")
    assert isinstance(sts, StatefulSet) and sts.selector.match_labels == {"app": "web"}
    service = backend.get("Service", "web")
    assert isinstance(service, Service) and service.selector == {"app": "web"}


def test_start_fails_cleanly_when_the_server_is_unreachable(tmp_path: Path) -> None:
    with FakeAPIServer() as fake:
        kubeconfig = fake.write_kubeconfig(tmp_path / "kc")
    backend = KubernetesBackend.from_kubeconfig(kubeconfig)
    try:
        with pytest.raises(BackendError, match="cannot list Namespace objects"):
            backend.start(timeout=0.5)
    finally:
        backend.close()


def test_bad_kubeconfig(tmp_path: Path) -> None:
    path = tmp_path / "kc"
    path.write_text("apiVersion: v1\nkind: Config\n")
    with pytest.raises(BackendError, match="cannot load kubeconfig"):
        KubernetesBackend.from_kubeconfig(path)


def test_tls_verification_follows_the_kubeconfig(tmp_path: Path) -> None:
    def kubeconfig(insecure: bool | None) -> Path:
        cluster: dict[str, object] = {"server": "https://127.0.0.1:1"}
        if insecure is not None:
            cluster["insecure-skip-tls-verify"] = insecure
        import json

        path = tmp_path / f"kc-{insecure}"
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "c", "cluster": cluster}],
                    "users": [{"name": "u", "user": {"token": "x"}}],
                    "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                    "current-context": "c",
                }
            )
        )
        return path

    for insecure, verify in ((None, True), (False, True), (True, False)):
        transport = ApiTransport.from_kubeconfig(kubeconfig(insecure))
        assert transport.verify_ssl is verify
        transport.close()


# -- bind ----------------------------------------------------------------------------------------


def test_bind(fake: FakeAPIServer, make_backend: MakeBackend) -> None:
    fake.create(pod("p1"))
    backend = started(make_backend)
    p1 = stored_pod(backend, "p1")
    backend.bind(p1, "n1")
    assert [(b.name, b.node, b.uid) for b in fake.bindings] == [("p1", "n1", p1.uid)]
    wait_until(lambda: stored_pod(backend, "p1").spec.node_name == "n1")
    assert backend.bind_counts["bound"] == 1


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (
            "bound",
            'Operation cannot be fulfilled on pods/binding "p1": pod p1 is already assigned to node "other"',
        ),
        (
            "gated",
            'Operation cannot be fulfilled on pods/binding "p1": pod p1 has non-empty .spec.schedulingGates',
        ),
        (
            "deleting",
            'Operation cannot be fulfilled on pods/binding "p1": pod p1 is being deleted, cannot be assigned to a host',
        ),
    ],
)
def test_bind_conflicts_map_to_backend_error(
    fake: FakeAPIServer, make_backend: MakeBackend, setup: str, message: str
) -> None:
    fake.create(pod("p1", gates=("g",) if setup == "gated" else ()))
    backend = started(make_backend)
    p1 = stored_pod(backend, "p1")
    if setup == "bound":
        fake.patch("Pod", "p1", {"metadata": {"labels": {"a": "b"}}})
        from schedframe.testing.fakeapi._cluster import Cluster

        Cluster.bind(
            fake.cluster, "default", "p1", {"metadata": {"name": "p1"}, "target": {"name": "other"}}
        )
    elif setup == "deleting":
        current = fake.get("Pod", "p1")
        assert current is not None
        current["metadata"]["finalizers"] = ["x"]
        fake.update(current)
        fake.delete("Pod", "p1")
    with pytest.raises(BackendError) as info:
        backend.bind(p1, "n1")
    assert (info.value.reason, info.value.code, str(info.value)) == ("Conflict", 409, message)
    assert backend.bind_counts["conflict"] == 1


def test_bind_missing_pod_is_not_found(fake: FakeAPIServer, make_backend: MakeBackend) -> None:
    fake.create(pod("p1"))
    backend = started(make_backend)
    p1 = stored_pod(backend, "p1")
    fake.delete("Pod", "p1")
    with pytest.raises(BackendError) as info:
        backend.bind(p1, "n1")
    assert (info.value.reason, info.value.code) == ("NotFound", 404)
    assert str(info.value) == 'pods "p1" not found'


def test_bind_uid_precondition(fake: FakeAPIServer, make_backend: MakeBackend) -> None:
    fake.create(pod("p1"))
    backend = started(make_backend)
    p1 = stored_pod(backend, "p1")
    fake.delete("Pod", "p1")
    fake.create(pod("p1"))  # same name, new uid
    with pytest.raises(BackendError) as info:
        backend.bind(p1, "n1")
    assert info.value.code == 409 and "Precondition failed: UID in precondition" in str(info.value)
    assert fake.bindings == []


def test_bind_retries_5xx_and_429(fake: FakeAPIServer, make_backend: MakeBackend) -> None:
    fake.create(pod("p1"))
    backend = started(make_backend)
    fake.fail_requests(503, path="/binding$")
    fake.fail_requests(429, path="/binding$", retry_after=1)
    started_at = time.monotonic()
    backend.bind(stored_pod(backend, "p1"), "n1")
    assert time.monotonic() - started_at >= 0.9  # Retry-After honoured
    assert len(fake.bindings) == 1
    assert backend.bind_counts == {"bound": 1, "conflict": 0, "error": 0, "retried": 2}


def test_a_lost_binding_response_is_neither_lost_nor_doubled(
    fake: FakeAPIServer, make_backend: MakeBackend
) -> None:
    fake.create(pod("p1"))
    backend = started(make_backend)
    fake.fail_requests(500, path="/binding$", after=True)  # bound, but the client sees 500
    backend.bind(stored_pod(backend, "p1"), "n1")
    assert [(b.name, b.node) for b in fake.bindings] == [("p1", "n1")]
    assert fake.binding_conflicts == [("default/p1", 'pod p1 is already assigned to node "n1"')]
    assert backend.bind_counts["bound"] == 1


def test_bind_gives_up_after_its_attempts(fake: FakeAPIServer, make_backend: MakeBackend) -> None:
    fake.create(pod("p1"))
    backend = started(make_backend, bind_attempts=2)
    fake.fail_requests(500, path="/binding$", times=2)
    with pytest.raises(BackendError) as info:
        backend.bind(stored_pod(backend, "p1"), "n1")
    assert (info.value.reason, info.value.code) == ("InternalError", 500)
    assert fake.bindings == []


def test_transport_errors_map_to_service_unavailable(tmp_path: Path) -> None:
    with FakeAPIServer() as fake:
        fake.create(pod("p1"))
        kubeconfig = fake.write_kubeconfig(tmp_path / "kc")
        backend = KubernetesBackend.from_kubeconfig(kubeconfig, bind_attempts=1)
        backend.start(timeout=10)
        p1 = stored_pod(backend, "p1")
    try:
        with pytest.raises(BackendError) as info:
            backend.bind(p1, "n1")
        assert (info.value.reason, info.value.code) == ("ServiceUnavailable", 503)
    finally:
        backend.close()


# -- status patches and deletion -----------------------------------------------------------------


def test_patch_pod_status(fake: FakeAPIServer, make_backend: MakeBackend) -> None:
    fake.create(pod("p1"))
    backend = started(make_backend)
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    condition = PodCondition(
        type="PodScheduled",
        status="False",
        reason="Unschedulable",
        message="0/1 nodes",
        last_transition_time=when,
    )
    backend.patch_pod_status(
        stored_pod(backend, "p1"), condition=condition, nominated_node_name="n2"
    )
    stored = fake.get("Pod", "p1")
    assert stored is not None
    assert stored["status"]["conditions"] == [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/1 nodes",
            "lastTransitionTime": "2026-01-02T03:04:05Z",
        }
    ]
    assert stored["status"]["nominatedNodeName"] == "n2"
    wait_until(lambda: stored_pod(backend, "p1").status.nominated_node_name == "n2")
    # Same condition again: nothing to send. Clearing the nomination sends null.
    before = len(fake.requests)
    backend.patch_pod_status(stored_pod(backend, "p1"), condition=condition)
    assert len(fake.requests) == before
    backend.patch_pod_status(stored_pod(backend, "p1"), nominated_node_name="")
    stored = fake.get("Pod", "p1")
    assert stored is not None and "nominatedNodeName" not in stored["status"]
    # A changed reason keeps the transition time when the status is the same.
    wait_until(lambda: stored_pod(backend, "p1").status.nominated_node_name == "")
    backend.patch_pod_status(
        stored_pod(backend, "p1"),
        condition=PodCondition(type="PodScheduled", status="False", reason="SchedulerError"),
    )
    stored = fake.get("Pod", "p1")
    assert stored is not None
    cond = stored["status"]["conditions"][0]
    assert cond["reason"] == "SchedulerError" and "message" not in cond
    assert cond["lastTransitionTime"] == "2026-01-02T03:04:05Z"


@pytest.mark.parametrize(
    ("status", "retried"), [(500, True), (503, True), (429, False), (409, False)]
)
def test_status_patch_retry_rule(
    fake: FakeAPIServer, make_backend: MakeBackend, status: int, retried: bool
) -> None:
    fake.create(pod("p1"))
    backend = started(make_backend)
    fake.fail_requests(status, path="/status$", method="PATCH")
    condition = PodCondition(type="PodScheduled", status="False", reason="Unschedulable")
    if retried:
        backend.patch_pod_status(stored_pod(backend, "p1"), condition=condition)
        stored = fake.get("Pod", "p1")
        assert stored is not None and stored["status"]["conditions"][0]["reason"] == "Unschedulable"
    else:
        with pytest.raises(BackendError) as info:
            backend.patch_pod_status(stored_pod(backend, "p1"), condition=condition)
        assert info.value.code == status


def test_status_patch_gives_up_after_four_attempts(
    fake: FakeAPIServer, make_backend: MakeBackend
) -> None:
    fake.create(pod("p1"))
    backend = started(make_backend)
    fake.fail_requests(500, path="/status$", method="PATCH", times=4)
    with pytest.raises(BackendError):
        backend.patch_pod_status(stored_pod(backend, "p1"), nominated_node_name="n1")
    patches = [r for r in fake.requests if r.method == "PATCH"]
    assert len(patches) == 4


def test_delete_pod_adds_the_disruption_target_then_deletes_gracefully(
    fake: FakeAPIServer, make_backend: MakeBackend
) -> None:
    fake.create(pod("victim", node_name="n1"))
    backend = started(make_backend)
    condition = PodCondition(
        type="DisruptionTarget",
        status="True",
        reason="PreemptionByScheduler",
        message="default-scheduler: preempting to accommodate a higher priority pod",
    )
    backend.delete_pod(stored_pod(backend, "victim"), condition=condition)
    stored = fake.get("Pod", "victim")
    assert stored is not None  # graceful: the kubelet has not finished yet
    assert stored["metadata"]["deletionTimestamp"]
    assert [c["type"] for c in stored["status"]["conditions"]] == ["DisruptionTarget"]
    wait_until(lambda: stored_pod(backend, "victim").deletion_timestamp is not None)
    fake.finalize_deletions()
    wait_until(lambda: backend.get("Pod", "victim") is None)
    with pytest.raises(BackendError) as info:
        backend.delete_pod(pod_from_dict(pod("ghost")), condition=None)
    assert info.value.code == 404


# -- events --------------------------------------------------------------------------------------


def test_events_are_written_and_aggregated_into_series(
    fake: FakeAPIServer, make_backend: MakeBackend
) -> None:
    fake.create(pod("p1"))
    fake.create(pod("p2"))
    backend = started(make_backend, reporting_controller="schedframe", reporting_instance="host")
    p1, p2 = stored_pod(backend, "p1"), stored_pod(backend, "p2")
    backend.record_event(
        p1,
        event_type="Normal",
        reason="Scheduled",
        action="Binding",
        note="Successfully assigned default/p1 to n1",
    )
    for _ in range(3):
        backend.record_event(
            p2,
            event_type="Warning",
            reason="FailedScheduling",
            action="Scheduling",
            note="0/1 nodes are available",
        )
    backend.eventf(p1, p2, "Normal", "Preempted", "Preempting", "Preempted by pod p2")
    wait_until(
        lambda: (
            backend.event_sink.counts["created"] == 3 and backend.event_sink.counts["patched"] == 1
        )
    )
    events = {(e["reason"], e["regarding"]["name"]): e for e in fake.list("Event")}
    scheduled = events[("Scheduled", "p1")]
    assert scheduled["reportingController"] == "schedframe"
    assert scheduled["reportingInstance"] == "schedframe-host"
    assert scheduled["regarding"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "p1",
        "namespace": "default",
        "uid": p1.uid,
        "resourceVersion": p1.metadata.resource_version,
    }
    assert scheduled["type"] == "Normal" and scheduled["action"] == "Binding"
    assert scheduled["eventTime"].endswith("Z") and "." in scheduled["eventTime"]
    failed = events[("FailedScheduling", "p2")]
    assert failed["series"]["count"] == 2  # the third repeat is only counted locally
    preempted = events[("Preempted", "p1")]
    assert preempted["related"]["name"] == "p2" and preempted["related"]["uid"] == p2.uid


def test_long_notes_are_truncated(fake: FakeAPIServer, make_backend: MakeBackend) -> None:
    fake.create(pod("p1"))
    backend = started(make_backend)
    backend.record_event(
        stored_pod(backend, "p1"),
        event_type="Warning",
        reason="FailedScheduling",
        action="Scheduling",
        note="x" * 5000,
    )
    wait_until(lambda: backend.event_sink.counts["created"] == 1)
    (event,) = fake.list("Event")
    assert len(event["note"]) == 1024 and event["reportingController"] == "default-scheduler"


# -- credentials ---------------------------------------------------------------------------------


def test_credentials_never_reach_the_logs(
    fake: FakeAPIServer, make_backend: MakeBackend, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake.create(pod("p1"))
    backend = started(make_backend)
    fake.fail_requests(500, path="/binding$", times=3)
    with pytest.raises(BackendError) as info:
        backend.bind(stored_pod(backend, "p1"), "n1")
    fake.drop_watches()
    fake.fail_requests(401, watch=True)
    time.sleep(0.3)
    text = caplog.text + str(info.value)
    assert TOKEN not in text
    assert "Bearer" not in text
    assert TOKEN not in repr(backend.transport.host)


def test_the_backend_sends_the_token(fake: FakeAPIServer, tmp_path: Path) -> None:
    kubeconfig = fake.write_kubeconfig(tmp_path / "kc", token="wrong")
    backend = KubernetesBackend.from_kubeconfig(kubeconfig)
    try:
        with pytest.raises(BackendError) as info:
            backend.start(timeout=0.3)
        assert "401" in str(info.value) or info.value.code == 401
    finally:
        backend.close()


def test_node_events_and_related_values_without_metadata(
    fake: FakeAPIServer, make_backend: MakeBackend
) -> None:
    fake.create(pod("p1"))
    fake.create(node("n1"))
    backend = started(make_backend)
    n1 = backend.get("Node", "n1")
    assert isinstance(n1, Node)
    backend.eventf(stored_pod(backend, "p1"), n1, "Normal", "Scheduled", "Binding", "x")
    backend.eventf(stored_pod(backend, "p1"), "not an object", "Normal", "R", "A", "n")
    wait_until(lambda: backend.event_sink.counts["created"] == 2)
    related = [e.get("related") for e in fake.list("Event")]
    assert {
        "apiVersion": "v1",
        "kind": "Node",
        "name": "n1",
        "uid": n1.uid,
        "resourceVersion": n1.metadata.resource_version,
    } in related
    assert None in related


def test_close_is_idempotent_and_stops_threads(make_backend: MakeBackend) -> None:
    backend = started(make_backend)
    before = threading.active_count()
    backend.close()
    backend.close()
    assert threading.active_count() < before


def test_resync_redelivers_stored_objects(fake: FakeAPIServer, make_backend: MakeBackend) -> None:
    fake.create(node("n1"))
    backend = started(make_backend, resync_period=0.1)
    events: list[WatchEvent] = []
    backend.subscribe(events.append)
    wait_until(lambda: any(e.type == "MODIFIED" for e in events))
    resync = next(e for e in events if e.type == "MODIFIED")
    assert resync.old is resync.obj


def test_the_storage_kinds_are_watched_and_pre_bind_writes_patch_them(
    fake: FakeAPIServer, make_backend: MakeBackend
) -> None:
    fake.create(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "wait"},
            "provisioner": "ebs.csi.aws.com",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    fake.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "pv"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "wait",
                "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1", "fsType": "ext4"},
            },
        }
    )
    fake.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "default"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "wait",
                "resources": {"requests": {"storage": "1Gi"}},
            },
        }
    )
    backend = started(make_backend)
    events: list[WatchEvent] = []
    backend.subscribe(events.append)
    kinds = [type(e.obj).__name__ for e in events if not isinstance(e.obj, Namespace)]
    assert kinds == ["StorageClass", "PersistentVolume", "PersistentVolumeClaim"]
    pv = backend.get("PersistentVolume", "pv")
    pvc = backend.get("PersistentVolumeClaim", "data", "default")
    assert isinstance(pv, PersistentVolume) and isinstance(pvc, PersistentVolumeClaim)
    ref = ClaimReference(namespace="default", name="data", uid=pvc.metadata.uid)
    annotations = {"pv.kubernetes.io/bound-by-controller": "yes"}
    bound = attrs.evolve(
        pv, claim_ref=ref, metadata=attrs.evolve(pv.metadata, annotations=annotations)
    )
    stored = backend.update_persistent_volume(bound)
    assert stored.claim_ref is not None and stored.claim_ref.name == "data"
    raw = fake.get("PersistentVolume", "pv")
    assert (
        raw is not None and raw["spec"]["csi"]["fsType"] == "ext4"
    )  # fields schedframe does not model are kept
    assert raw["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    with pytest.raises(BackendError) as info:
        backend.update_persistent_volume(bound)  # its resourceVersion is stale now
    assert info.value.code == 409
    selected = attrs.evolve(
        pvc,
        metadata=attrs.evolve(
            pvc.metadata, annotations={"volume.kubernetes.io/selected-node": "n1"}
        ),
    )
    claim = backend.update_persistent_volume_claim(selected)
    assert claim.metadata.annotations == {"volume.kubernetes.io/selected-node": "n1"}


def test_preempted_event_relates_the_preemptor_as_a_structured_reference(
    fake: FakeAPIServer, make_backend: MakeBackend
) -> None:
    # The reference was once built as "Pod/ns/name" and split at the first slash:
    # {"kind": "Pod", "namespace": "Pod", "name": "ns/preemptor"}.
    from schedframe.runtime import RecordingEventRecorder

    fake.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    fake.create(pod("victim", namespace="ns"))
    fake.create(pod("preemptor", namespace="ns"))
    backend = started(make_backend)
    victim = backend.get("Pod", "victim", "ns")
    preemptor = backend.get("Pod", "preemptor", "ns")
    assert isinstance(victim, Pod) and isinstance(preemptor, Pod)
    recorder = RecordingEventRecorder(backend)
    note = f"Preempted by pod {preemptor.uid} on node n1"
    recorder.eventf(victim, preemptor, "Normal", "Preempted", "Preempting", note)
    wait_until(lambda: backend.event_sink.counts["created"] == 1)
    (event,) = fake.list("Event", "ns")
    assert event["related"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": "ns",
        "name": "preemptor",
        "uid": preemptor.uid,
        "resourceVersion": preemptor.metadata.resource_version,
    }
    assert event["regarding"]["name"] == "victim"
    assert event["regarding"]["namespace"] == "ns"


def test_dra_kinds_are_watched_and_claim_statuses_written(
    fake: FakeAPIServer, make_backend: MakeBackend
) -> None:
    from schedframe.objects import (
        AllocationResult,
        DeviceAllocationResult,
        DeviceRequestAllocationResult,
        ResourceClaim,
        ResourceClaimConsumerReference,
    )

    fake.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": "true"}}]},
        }
    )
    fake.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "default"},
            "spec": {
                "devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}
            },
        }
    )
    backend = started(make_backend)
    wait_until(lambda: len(backend.list("ResourceClaim")) == 1)
    assert [c.metadata.name for c in backend.list("DeviceClass")] == ["gpu"]  # type: ignore[attr-defined]
    (claim,) = backend.list("ResourceClaim")
    assert isinstance(claim, ResourceClaim)
    allocation = AllocationResult(
        devices=DeviceAllocationResult(
            results=(DeviceRequestAllocationResult(request="r", driver="d", pool="p", device="x"),)
        )
    )
    ref = ResourceClaimConsumerReference(resource="pods", name="p", uid="u")
    written = backend.update_resource_claim_status(
        attrs.evolve(claim, allocation=allocation, reserved_for=(ref,))
    )
    assert written.allocation == allocation and written.reserved_for == (ref,)
    wait_until(
        lambda: getattr(backend.get("ResourceClaim", "c", "default"), "reserved_for", ()) == (ref,)
    )
    # A stale resourceVersion is a conflict, as UpdateStatus's.
    with pytest.raises(BackendError) as info:
        backend.update_resource_claim_status(attrs.evolve(claim, reserved_for=()))
    assert info.value.code == 409


def test_claim_update_writes_the_finalizer_and_keeps_the_status(
    fake: FakeAPIServer, make_backend: MakeBackend
) -> None:
    # DynamicResources' Update adding resource.kubernetes.io/delete-protection before the
    # allocation: a PUT of the claim, its status kept, its resourceVersion checked.
    from schedframe.backends import ResourceClaimWriter
    from schedframe.objects import (
        AllocationResult,
        DeviceAllocationResult,
        DeviceRequestAllocationResult,
        ResourceClaim,
    )

    fake.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "default"},
            "spec": {},
        }
    )
    backend = started(make_backend)
    assert isinstance(backend, ResourceClaimWriter)
    wait_until(lambda: len(backend.list("ResourceClaim")) == 1)
    (claim,) = backend.list("ResourceClaim")
    assert isinstance(claim, ResourceClaim)
    allocation = AllocationResult(
        devices=DeviceAllocationResult(
            results=(DeviceRequestAllocationResult(request="r", driver="d", pool="p", device="x"),)
        )
    )
    allocated = backend.update_resource_claim_status(attrs.evolve(claim, allocation=allocation))
    finalizers = ("resource.kubernetes.io/delete-protection",)
    sent = attrs.evolve(allocated, metadata=attrs.evolve(allocated.metadata, finalizers=finalizers))
    written = backend.update_resource_claim(sent)
    assert written.metadata.finalizers == finalizers and written.allocation == allocation
    stored = fake.get("ResourceClaim", "c", "default")
    assert stored is not None
    assert stored["metadata"]["finalizers"] == list(finalizers)
    assert stored["status"]["allocation"]["devices"]["results"][0]["device"] == "x"
    wait_until(
        lambda: (
            getattr(
                backend.get("ResourceClaim", "c", "default"), "metadata", claim.metadata
            ).finalizers
            == finalizers
        )
    )
    # The version sent is stale now: a conflict.
    with pytest.raises(BackendError) as info:
        backend.update_resource_claim(sent)
    assert info.value.code == 409
    # Deleting keeps it (finalizer), marked; removing the finalizer completes the deletion.
    backend.delete_resource_claim(written)
    marked = fake.get("ResourceClaim", "c", "default")
    assert marked is not None and marked["metadata"].get("deletionTimestamp")
    rv = marked["metadata"]["resourceVersion"]
    backend.update_resource_claim(
        attrs.evolve(
            written, metadata=attrs.evolve(written.metadata, finalizers=(), resource_version=rv)
        )
    )
    assert fake.get("ResourceClaim", "c", "default") is None


def test_extended_resource_claims_created_deleted_and_recorded(
    fake: FakeAPIServer, make_backend: MakeBackend
) -> None:
    from schedframe.objects import (
        ContainerExtendedResourceRequest,
        ObjectMeta,
        OwnerReference,
        PodExtendedResourceClaimStatus,
        ResourceClaim,
    )

    fake.create(pod("p1"))
    backend = started(make_backend)
    owner = OwnerReference(api_version="v1", kind="Pod", name="p1", uid="u1", controller=True)
    claim = ResourceClaim(
        metadata=ObjectMeta(
            name="",
            namespace="default",
            generate_name="p1-extended-resources-",
            owner_references=(owner,),
            annotations={"resource.kubernetes.io/extended-resource-claim": "true"},
        )
    )
    created = backend.create_resource_claim(claim)
    assert created.name.startswith("p1-extended-resources-") and created.metadata.uid
    stored = fake.get("ResourceClaim", created.name, "default")
    assert stored is not None
    assert stored["metadata"]["annotations"] == {
        "resource.kubernetes.io/extended-resource-claim": "true"
    }
    status = PodExtendedResourceClaimStatus(
        resource_claim_name=created.name,
        request_mappings=(
            ContainerExtendedResourceRequest(
                container_name="c", resource_name="example.com/gpu", request_name="r"
            ),
        ),
    )
    backend.patch_pod_extended_resource_claim_status(stored_pod(backend, "p1"), status)
    stored_p1 = fake.get("Pod", "p1")
    assert stored_p1 is not None
    assert stored_p1["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [
            {"containerName": "c", "resourceName": "example.com/gpu", "requestName": "r"}
        ],
        "resourceClaimName": created.name,
    }
    wait_until(lambda: stored_pod(backend, "p1").status.extended_resource_claim_status == status)
    backend.delete_resource_claim(created)
    assert fake.get("ResourceClaim", created.name, "default") is None
    with pytest.raises(BackendError) as info:
        backend.delete_resource_claim(created)
    assert info.value.code == 404


def test_claim_status_write_keeps_the_device_statuses(
    fake: FakeAPIServer, make_backend: MakeBackend
) -> None:
    # UpdateStatus replaces the whole status: what drivers reported in status.devices must
    # go back as read, or the write would wipe it.
    from schedframe.objects import ResourceClaim, ResourceClaimConsumerReference

    devices = [
        {
            "driver": "d",
            "pool": "p",
            "device": "x",
            "conditions": [{"type": "ready", "status": "True", "reason": "R", "message": ""}],
            "data": {"k": "v"},
        }
    ]
    fake.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "g"}}]}},
            "status": {"devices": devices},
        }
    )
    backend = started(make_backend)
    wait_until(lambda: len(backend.list("ResourceClaim")) == 1)
    (claim,) = backend.list("ResourceClaim")
    assert isinstance(claim, ResourceClaim)
    ref = ResourceClaimConsumerReference(resource="pods", name="p", uid="u")
    backend.update_resource_claim_status(attrs.evolve(claim, reserved_for=(ref,)))
    stored = fake.get("ResourceClaim", "c", "default")
    assert stored is not None
    assert stored["status"]["devices"] == devices
