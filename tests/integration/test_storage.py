"""Acceptance of issue 22 on the in-memory backend with the real scheduler loop: StatefulSet
pods with WaitForFirstConsumer claims bind to volumes in their zone, a zonal volume pins its
pod's zone, a CSINode attach limit leaves a pod pending with upstream's message, and a failed
volume binding unreserves and the pod is retried with nothing lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedframe.backends import MemoryBackend
from schedframe.cli import main
from schedframe.errors import BackendError
from schedframe.objects import (
    CSINode,
    CSINodeDriver,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodSpec,
    StorageClass,
    Volume,
    load_manifests,
)
from schedframe.scheduler import Scheduler
from schedframe.simulation import load_workload

from ._support import GI, config, make_node, make_pod, new_scheduler, profile

EXAMPLE = Path(__file__).parents[2] / "examples" / "statefulset-volumes"
ZONE = "topology.kubernetes.io/zone"
DRIVER = "ebs.csi.aws.com"


def _zone_of(node: Node) -> str:
    return node.labels[ZONE]


def _pods(backend: MemoryBackend) -> dict[str, Pod]:
    return {p.name: p for p in backend.list("Pod") if isinstance(p, Pod)}


def _claims(backend: MemoryBackend) -> dict[str, PersistentVolumeClaim]:
    return {
        c.name: c
        for c in backend.list("PersistentVolumeClaim")
        if isinstance(c, PersistentVolumeClaim)
    }


def _volumes(backend: MemoryBackend) -> dict[str, PersistentVolume]:
    return {v.name: v for v in backend.list("PersistentVolume") if isinstance(v, PersistentVolume)}


def _run(sched: Scheduler) -> None:
    sched.run_until_idle(stall_timeout=60)
    assert sched.wait_for_bindings(timeout=30)
    sched.run_until_idle(stall_timeout=60)


def test_stateful_set_claims_bind_to_volumes_in_their_pods_zone() -> None:
    cluster = load_manifests(EXAMPLE / "cluster.yaml")
    workload = load_workload(EXAMPLE / "workload.yaml")
    sched, backend = new_scheduler(objects=[*cluster, *workload.objects])
    try:
        for arrival in workload.arrivals:
            backend.create(arrival.pod)
        _run(sched)
        pods, claims, volumes = _pods(backend), _claims(backend), _volumes(backend)
        nodes = {n.name: n for n in backend.list("Node") if isinstance(n, Node)}
        assert sorted(pods) == ["db-0", "db-1", "db-2", "db-3"]
        for i in range(4):
            pod = pods[f"db-{i}"]
            assert pod.spec.node_name, f"db-{i} is not bound"
            zone = _zone_of(nodes[pod.spec.node_name])
            data = claims[f"data-db-{i}"]
            assert data.phase == "Bound"
            pv = volumes[data.volume_name]
            assert pv.name.startswith(f"pv-{zone[-1]}-")  # a static volume of the pod's zone
            logs = claims[f"logs-db-{i}"]
            assert logs.phase == "Bound"
            assert (
                logs.metadata.annotations["volume.kubernetes.io/selected-node"]
                == pod.spec.node_name
            )
            provisioned = volumes[logs.volume_name]  # provisioned on the node's zone
            assert provisioned.node_affinity is not None
            assert provisioned.node_affinity.matches(
                pod.spec.node_name, nodes[pod.spec.node_name].labels
            )
    finally:
        sched.stop()


def _zonal_pv(name: str, zone: str, *, claim: str = "") -> PersistentVolume:
    term = NodeSelectorTerm(
        match_expressions=(NodeSelectorRequirement(key=ZONE, operator="In", values=(zone,)),)
    )
    return PersistentVolume(
        metadata=ObjectMeta(name=name),
        capacity=10 * GI,
        access_modes=("ReadWriteOnce",),
        storage_class_name="wait",
        source="csi",
        csi_driver=DRIVER,
        volume_handle=name,
        node_affinity=NodeSelector(node_selector_terms=(term,)),
    )


def _claim(name: str, cls: str = "wait") -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name, namespace="default"),
        access_modes=("ReadWriteOnce",),
        request=GI,
        storage_class_name=cls,
    )


def _pod_with(name: str, *claims: str) -> Pod:
    pod = make_pod(name)
    volumes = tuple(Volume(name=c, persistent_volume_claim=c) for c in claims)
    return Pod(metadata=pod.metadata, spec=PodSpec(containers=pod.spec.containers, volumes=volumes))


# Static volumes of a CSI driver, bound when a pod is scheduled (the attach limit counts an
# unbound claim against its class's provisioner, as upstream does).
WAIT = StorageClass(
    metadata=ObjectMeta(name="wait"),
    provisioner=DRIVER,
    volume_binding_mode="WaitForFirstConsumer",
)


STATIC = StorageClass(
    metadata=ObjectMeta(name="wait"),
    provisioner="kubernetes.io/no-provisioner",
    volume_binding_mode="WaitForFirstConsumer",
)


def _zonal_nodes() -> list[Node]:
    return [make_node(f"n-{z}", labels={ZONE: f"zone-{z}"}) for z in "abc"]


def test_a_zonal_volume_pins_its_pods_zone() -> None:
    sched, backend = new_scheduler(
        objects=[STATIC, *_zonal_nodes(), _zonal_pv("pv-b", "zone-b"), _claim("c")]
    )
    try:
        backend.create(_pod_with("p", "c"))
        _run(sched)
        assert _pods(backend)["p"].spec.node_name == "n-b"
        assert _claims(backend)["c"].volume_name == "pv-b"
    finally:
        sched.stop()


def test_exceeding_a_csinode_attach_limit_leaves_the_pod_pending() -> None:
    bound_pv = _zonal_pv("pv-used", "zone-a")
    used = PersistentVolumeClaim(
        metadata=ObjectMeta(name="used", namespace="default"),
        access_modes=("ReadWriteOnce",),
        request=GI,
        storage_class_name="wait",
        volume_name="pv-used",
    )
    csi_node = CSINode(
        metadata=ObjectMeta(name="n-a"), drivers=(CSINodeDriver(name=DRIVER, allocatable_count=1),)
    )
    node = make_node("n-a", labels={ZONE: "zone-a"})
    running = _pod_with("running", "used")
    running = Pod(
        metadata=running.metadata,
        spec=PodSpec(
            node_name="n-a", containers=running.spec.containers, volumes=running.spec.volumes
        ),
    )
    objects = [
        WAIT,
        node,
        csi_node,
        bound_pv,
        used,
        running,
        _zonal_pv("pv-new", "zone-a"),
        _claim("new"),
    ]
    sched, backend = new_scheduler(objects=objects)
    try:
        backend.create(_pod_with("p", "new"))
        _run(sched)
        assert _pods(backend)["p"].spec.node_name == ""
        failed = [e for e in backend.events if e.reason == "FailedScheduling"]
        # DynamicResources' PostFilter (the pod has no resource claims) speaks before
        # DefaultPreemption, as upstream.
        assert failed and failed[-1].note == (
            "0/1 nodes are available: 1 node(s) exceed max volume count. no new claims to "
            "deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for "
            "incoming pod."
        )
        assert _claims(backend)["new"].volume_name == ""  # nothing was bound
    finally:
        sched.stop()


def test_a_failed_volume_binding_unreserves_and_the_pod_is_retried() -> None:
    sched, backend = new_scheduler(
        objects=[STATIC, *_zonal_nodes(), _zonal_pv("pv-b", "zone-b"), _claim("c")]
    )
    try:
        conflict = BackendError(
            'Operation cannot be fulfilled on persistentvolumes "pv-b": the object has been '
            "modified; please apply your changes to the latest version and try again",
            reason="Conflict",
            code=409,
        )
        backend.inject_failure("update", times=1, error=conflict)
        backend.create(_pod_with("p", "c"))
        _run(sched)
        for _ in range(20):  # the errored pod comes back after its backoff
            if _pods(backend)["p"].spec.node_name:
                break
            sched.run(duration=5)
            sched.wait_for_bindings(timeout=30)
        assert _pods(backend)["p"].spec.node_name == "n-b"
        assert _claims(backend)["c"].volume_name == "pv-b"
        failed = [e for e in backend.events if e.reason == "FailedScheduling"]
        assert failed and "the object has been modified" in failed[0].note
        assert len(sched.cache.dump().assumed_pods) == 0  # type: ignore[attr-defined]
    finally:
        sched.stop()


def test_a_pod_waiting_for_its_claim_is_scheduled_once_the_claim_and_volume_exist() -> None:
    sched, backend = new_scheduler(objects=[STATIC, *_zonal_nodes()])
    try:
        backend.create(_pod_with("p", "late"))
        _run(sched)
        assert _pods(backend)["p"].spec.node_name == ""
        failed = [e for e in backend.events if e.reason == "FailedScheduling"]
        assert failed and 'persistentvolumeclaim "late" not found' in failed[-1].note
        # The claim's ADD event queues the pod (VolumeBinding's hint); it then waits for a
        # volume, whose ADD event queues it again.
        backend.create(_zonal_pv("pv-c", "zone-c"))
        backend.create(_claim("late"))
        for _ in range(20):
            if _pods(backend)["p"].spec.node_name:
                break
            sched.run(duration=5)
            sched.wait_for_bindings(timeout=30)
        assert _pods(backend)["p"].spec.node_name == "n-c"
        assert _claims(backend)["late"].volume_name == "pv-c"
    finally:
        sched.stop()


def test_explain_shows_each_nodes_volume_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    claim = tmp_path / "reader.yaml"
    claim.write_text(
        "apiVersion: v1\nkind: PersistentVolumeClaim\n"
        "metadata: {name: pinned, annotations: {pv.kubernetes.io/bind-completed: 'yes'}}\n"
        "spec: {accessModes: [ReadWriteOnce], storageClassName: zonal, volumeName: pv-b-0,\n"
        "       resources: {requests: {storage: 1Gi}}}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: reader}\n"
        "spec:\n  containers: [{name: c, image: busybox}]\n"
        "  volumes: [{name: d, persistentVolumeClaim: {claimName: pinned}}]\n"
    )
    code = main(["explain", "reader", "-c", str(EXAMPLE / "cluster.yaml"), "-c", str(claim)])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("node-")}
    conflict = (
        "VolumeBinding (UnschedulableAndUnresolvable): node(s) had volume node affinity conflict"
    )
    assert conflict in rows["node-a1"] and conflict in rows["node-a2"]
    assert "filtered" not in rows["node-b1"] and "filtered" not in rows["node-b2"]


def test_a_stalled_pv_controller_times_prebind_out_and_the_retry_binds() -> None:
    cfg = config(
        profile(plugin_config=[{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 0}}])
    )
    objects = [STATIC, *_zonal_nodes(), _zonal_pv("pv-b", "zone-b"), _claim("c")]
    sched, backend = new_scheduler(cfg, objects=objects)
    try:
        backend.inject_binding_stall(times=1)
        backend.create(_pod_with("p", "c"))
        _run(sched)
        for _ in range(20):
            if _pods(backend)["p"].spec.node_name:
                break
            sched.run(duration=5)
            sched.wait_for_bindings(timeout=30)
        failed = [e for e in backend.events if e.reason == "FailedScheduling"]
        assert failed and "binding volumes: context deadline exceeded" in failed[0].note
        assert _pods(backend)["p"].spec.node_name == "n-b"
        assert _claims(backend)["c"].volume_name == "pv-b"
    finally:
        sched.stop()
