"""Upstream ``TestVolumeBinding`` (volume_binding_test.go) as data, and the binder's
Reserve / Unreserve / PreBind behaviour against the in-memory backend's PV controller.

The cases run with StorageCapacityScoring off (schedframe's default), so every score is 0;
the upstream cases that turn the feature on keep their Filter verdicts here.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pytest

from schedframe import framework as fw
from schedframe.backends import MemoryBackend, WatchEvent
from schedframe.cache import Snapshot
from schedframe.errors import BackendError
from schedframe.objects import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
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
)
from schedframe.runtime import ClusterView, Framework
from schedframe_plugins.volumebinding import _STATE, VolumeBinding
from schedframe_plugins.volumebinding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
)

GI = 2**30
HOSTNAME = "kubernetes.io/hostname"
REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"

IMMEDIATE_SC = StorageClass(metadata=ObjectMeta(name="immediate-sc"), provisioner="")
WAIT_SC = StorageClass(
    metadata=ObjectMeta(name="wait-sc"), provisioner="", volume_binding_mode="WaitForFirstConsumer"
)
WAIT_HDD_SC = StorageClass(
    metadata=ObjectMeta(name="wait-hdd-sc"),
    provisioner="",
    volume_binding_mode="WaitForFirstConsumer",
)


def make_pod(*claims: str) -> Pod:
    volumes = tuple(Volume(name=c, persistent_volume_claim=c) for c in claims)
    return Pod(
        metadata=ObjectMeta(name="pod-a", namespace="default", uid="pod-a-uid"),
        spec=PodSpec(volumes=volumes),
    )


def make_node(name: str, **labels: str) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels={HOSTNAME: name, **labels}))


def make_pvc(
    name: str, cls: str, *, bound_pv: str = "", request: int = 0, phase: str = "Pending"
) -> PersistentVolumeClaim:
    annotations = {ANN_BIND_COMPLETED: "yes"} if bound_pv else {}
    return PersistentVolumeClaim(
        metadata=ObjectMeta(
            name=name,
            namespace="default",
            uid=f"default/{name}",
            annotations=annotations,
            resource_version="1",
        ),
        access_modes=("ReadWriteOnce",),
        request=request,
        storage_class_name=cls,
        volume_name=bound_pv,
        phase=phase,
    )


def selector(labels: dict[str, str]) -> NodeSelector:
    reqs = tuple(
        NodeSelectorRequirement(key=k, operator="In", values=(v,)) for k, v in labels.items()
    )
    return NodeSelector(node_selector_terms=(NodeSelectorTerm(match_expressions=reqs),))


def make_pv(
    name: str,
    cls: str,
    *,
    capacity: int = 0,
    node_labels: dict[str, str] | None = None,
    phase: str = "Available",
) -> PersistentVolume:
    return PersistentVolume(
        metadata=ObjectMeta(name=name, uid=name, resource_version="1"),
        capacity=capacity,
        access_modes=("ReadWriteOnce",),
        storage_class_name=cls,
        source="local",
        node_affinity=None if node_labels is None else selector(node_labels),
        phase=phase,
    )


@attrs.frozen
class Case:
    pod: Pod
    nodes: Sequence[Node]
    pvcs: Sequence[PersistentVolumeClaim] = ()
    pvs: Sequence[PersistentVolume] = ()
    pre_filter: tuple[fw.Code, str] | None = None
    filters: Sequence[tuple[str, ...] | None] = ()


def zonal_nodes() -> list[Node]:
    return [
        make_node(f"zone-{z}-node-{n}", **{REGION: f"region-{z}", ZONE: f"zone-{z}"})
        for z in "abc"
        for n in "ab"
    ]


def zonal_pv(name: str, z: str, capacity: int) -> PersistentVolume:
    return make_pv(
        name, "wait-sc", capacity=capacity, node_labels={REGION: f"region-{z}", ZONE: f"zone-{z}"}
    )


def local_pv(name: str, cls: str, node: str, capacity: int) -> PersistentVolume:
    return make_pv(name, cls, capacity=capacity, node_labels={HOSTNAME: node})


UNRESOLVABLE = fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
CASES = [
    pytest.param(
        Case(pod=make_pod(), nodes=[make_node("node-a")], filters=[None]),
        id="pod has not pvcs",
    ),
    pytest.param(
        Case(
            pod=make_pod("pvc-a"),
            nodes=[make_node("node-a")],
            pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
            pvs=[make_pv("pv-a", "wait-sc")],
            filters=[None],
        ),
        id="all bound",
    ),
    pytest.param(
        Case(
            pod=make_pod("pvc-a"),
            nodes=[make_node("node-a")],
            pre_filter=(UNRESOLVABLE, 'persistentvolumeclaim "pvc-a" not found'),
        ),
        id="PVC does not exist",
    ),
    pytest.param(
        Case(
            pod=make_pod("pvc-a", "pvc-b"),
            nodes=[make_node("node-a")],
            pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
            pre_filter=(UNRESOLVABLE, 'persistentvolumeclaim "pvc-b" not found'),
        ),
        id="Part of PVCs do not exist",
    ),
    pytest.param(
        Case(
            pod=make_pod("pvc-a"),
            nodes=[make_node("node-a")],
            pvcs=[make_pvc("pvc-a", "immediate-sc")],
            pre_filter=(UNRESOLVABLE, "pod has unbound immediate PersistentVolumeClaims"),
        ),
        id="immediate claims not bound",
    ),
    pytest.param(
        Case(
            pod=make_pod("pvc-a"),
            nodes=[make_node("node-a")],
            pvcs=[make_pvc("pvc-a", "wait-sc")],
            filters=[(ERR_REASON_BIND_CONFLICT,)],
        ),
        id="unbound claims no matches",
    ),
    pytest.param(
        Case(
            pod=make_pod("pvc-a", "pvc-b"),
            nodes=[make_node("node-a", foo="barbar")],
            pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a"), make_pvc("pvc-b", "wait-sc")],
            pvs=[make_pv("pv-a", "wait-sc", node_labels={"foo": "bar"})],
            filters=[(ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT)],
        ),
        id="bound and unbound unsatisfied",
    ),
    pytest.param(
        Case(
            pod=make_pod("pvc-a"),
            nodes=[make_node("node-a")],
            pre_filter=(UNRESOLVABLE, 'persistentvolumeclaim "pvc-a" not found'),
        ),
        id="pvc not found",
    ),
    pytest.param(
        Case(
            pod=make_pod("pvc-a"),
            nodes=[make_node("node-a")],
            pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
            filters=[(ERR_REASON_PV_NOT_EXIST,)],
        ),
        id="pv not found",
    ),
    pytest.param(
        Case(
            pod=make_pod("pvc-a"),
            nodes=[make_node("node-a")],
            pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a", phase="Lost")],
            pre_filter=(
                UNRESOLVABLE,
                'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"',
            ),
        ),
        id="pv not found claim lost",
    ),
    pytest.param(
        Case(
            pod=make_pod("pvc-a"),
            nodes=[make_node("node-a"), make_node("node-b"), make_node("node-c")],
            pvcs=[make_pvc("pvc-a", "wait-sc", request=50 * GI)],
            pvs=[
                local_pv("pv-a-0", "wait-sc", "node-a", 200 * GI),
                local_pv("pv-a-1", "wait-sc", "node-a", 200 * GI),
                local_pv("pv-b-0", "wait-sc", "node-b", 100 * GI),
                local_pv("pv-b-1", "wait-sc", "node-b", 100 * GI),
            ],
            filters=[None, None, (ERR_REASON_BIND_CONFLICT,)],
        ),
        id="local volumes with close capacity are preferred",
    ),
    pytest.param(
        Case(
            pod=make_pod("pvc-0", "pvc-1"),
            nodes=[make_node("node-a"), make_node("node-b"), make_node("node-c")],
            pvcs=[
                make_pvc("pvc-0", "wait-sc", request=50 * GI),
                make_pvc("pvc-1", "wait-hdd-sc", request=100 * GI),
            ],
            pvs=[
                local_pv("pv-a-0", "wait-sc", "node-a", 200 * GI),
                local_pv("pv-a-1", "wait-sc", "node-a", 200 * GI),
                local_pv("pv-a-2", "wait-hdd-sc", "node-a", 200 * GI),
                local_pv("pv-a-3", "wait-hdd-sc", "node-a", 200 * GI),
                local_pv("pv-b-0", "wait-sc", "node-b", 100 * GI),
                local_pv("pv-b-1", "wait-sc", "node-b", 100 * GI),
                local_pv("pv-b-2", "wait-hdd-sc", "node-b", 100 * GI),
                local_pv("pv-b-3", "wait-hdd-sc", "node-b", 100 * GI),
            ],
            filters=[None, None, (ERR_REASON_BIND_CONFLICT,)],
        ),
        id="local volumes with close capacity are preferred (multiple pvcs)",
    ),
    pytest.param(
        Case(
            pod=make_pod("pvc-a"),
            nodes=zonal_nodes(),
            pvcs=[make_pvc("pvc-a", "wait-sc", request=50 * GI)],
            pvs=[
                zonal_pv("pv-a-0", "a", 200 * GI),
                zonal_pv("pv-a-1", "a", 200 * GI),
                zonal_pv("pv-b-0", "b", 100 * GI),
                zonal_pv("pv-b-1", "b", 100 * GI),
            ],
            filters=[
                None,
                None,
                None,
                None,
                (ERR_REASON_BIND_CONFLICT,),
                (ERR_REASON_BIND_CONFLICT,),
            ],
        ),
        id="zonal volumes with close capacity are preferred",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_volume_binding(case: Case) -> None:
    objects = [IMMEDIATE_SC, WAIT_SC, WAIT_HDD_SC, *case.pvcs, *case.pvs]
    plugin = VolumeBinding(None, Framework(cluster=ClusterView(workloads=objects)))
    infos = [fw.NodeInfo(n) for n in case.nodes]
    state = fw.CycleState()
    status = plugin.pre_filter(state, case.pod, infos)
    if case.pre_filter is not None:
        assert isinstance(status, fw.Status)
        assert (status.code, status.reasons) == (case.pre_filter[0], (case.pre_filter[1],))
        return
    assert status is None or (isinstance(status, fw.Status) and status.code is fw.Code.SKIP)
    for info, want in zip(infos, case.filters, strict=True):
        got = plugin.filter(state, case.pod, info)
        if want is None:
            assert got is None
        else:
            assert got is not None and (got.code, got.reasons) == (UNRESOLVABLE, want)
    for info in infos:
        assert plugin.score(state, case.pod, info) == 0


# ---- Reserve, Unreserve and PreBind against the memory backend -----------------------------


def cluster(*extra: object) -> tuple[MemoryBackend, Framework]:
    backend = MemoryBackend([WAIT_SC, make_node("node-a"), make_node("node-b"), *extra])
    view = ClusterView(workloads=[])
    snapshot = Snapshot.from_objects([make_node("node-a"), make_node("node-b")])
    handle = Framework(cluster=view, binder=backend, snapshot=snapshot)

    def keep(event: WatchEvent) -> None:
        if event.type != "DELETED":
            view.storage.set(event.obj)

    backend.subscribe(keep)
    return backend, handle


def run_cycle(plugin: VolumeBinding, pod: Pod, node: str) -> fw.CycleState:
    state = fw.CycleState()
    infos = [fw.NodeInfo(make_node("node-a")), fw.NodeInfo(make_node("node-b"))]
    assert plugin.pre_filter(state, pod, infos) is None
    for info in infos:
        plugin.filter(state, pod, info)
    assert plugin.reserve(state, pod, node) is None
    return state


def test_reserve_assumes_the_chosen_volume_and_unreserve_reverts_it() -> None:
    pvc = make_pvc("pvc-a", "wait-sc", request=GI)
    pv = local_pv("pv-a", "wait-sc", "node-a", 2 * GI)
    backend, handle = cluster(pvc, pv)
    plugin = VolumeBinding(None, handle)
    state = run_cycle(plugin, make_pod("pvc-a"), "node-a")
    assumed = plugin.binder.pv_cache.get("pv-a")
    assert assumed.claim_ref is not None and assumed.claim_ref.name == "pvc-a"
    # A second pod's claim cannot take the assumed volume.
    stored = backend.get("PersistentVolume", "pv-a")
    assert isinstance(stored, PersistentVolume) and stored.claim_ref is None  # no API write
    plugin.unreserve(state, make_pod("pvc-a"), "node-a")
    assert plugin.binder.pv_cache.get("pv-a").claim_ref is None
    plugin.unreserve(state, make_pod("pvc-a"), "node-a")  # idempotent


def test_reserve_keeps_only_the_chosen_nodes_volumes() -> None:
    # The binding cycle keeps the state alive: the nodes not chosen are let go at Reserve.
    pvc = make_pvc("pvc-a", "wait-sc", request=GI)
    pvs = [local_pv(f"pv-{n}", "wait-sc", f"node-{n}", 2 * GI) for n in "ab"]
    _, handle = cluster(pvc, *pvs)
    plugin = VolumeBinding(None, handle)
    state = fw.CycleState()
    pod = make_pod("pvc-a")
    infos = [fw.NodeInfo(make_node("node-a")), fw.NodeInfo(make_node("node-b"))]
    assert plugin.pre_filter(state, pod, infos) is None
    for info in infos:
        assert plugin.filter(state, pod, info) is None
    kept = state.get(_STATE)
    assert kept is not None and set(kept.pod_volumes_by_node) == {"node-a", "node-b"}
    chosen = kept.pod_volumes_by_node["node-b"]
    assert plugin.reserve(state, pod, "node-b") is None
    assert kept.pod_volumes_by_node == {"node-b": chosen}
    assert plugin.binder.pv_cache.get("pv-b").claim_ref is not None


def test_pre_bind_binds_the_claim_through_the_pv_controller() -> None:
    pvc = make_pvc("pvc-a", "wait-sc", request=GI)
    pv = local_pv("pv-a", "wait-sc", "node-a", 2 * GI)
    backend, handle = cluster(pvc, pv)
    plugin = VolumeBinding(None, handle)
    pod = make_pod("pvc-a")
    state = run_cycle(plugin, pod, "node-a")
    assert plugin.pre_bind(state, pod, "node-a") is None
    claim = backend.get("PersistentVolumeClaim", "pvc-a", "default")
    assert isinstance(claim, PersistentVolumeClaim)
    assert (claim.phase, claim.volume_name) == ("Bound", "pv-a")
    assert claim.metadata.annotations[ANN_BIND_COMPLETED] == "yes"


def test_a_failed_volume_write_is_an_error_and_reverts_the_assumption() -> None:
    pvc = make_pvc("pvc-a", "wait-sc", request=GI)
    pv = local_pv("pv-a", "wait-sc", "node-a", 2 * GI)
    backend, handle = cluster(pvc, pv)
    plugin = VolumeBinding(None, handle)
    pod = make_pod("pvc-a")
    state = run_cycle(plugin, pod, "node-a")
    conflict = BackendError(
        'Operation cannot be fulfilled on persistentvolumes "pv-a": the object has been '
        "modified; please apply your changes to the latest version and try again",
        reason="Conflict",
        code=409,
    )
    backend.inject_failure("update", error=conflict)
    status = plugin.pre_bind(state, pod, "node-a")
    assert status is not None and status.code is fw.Code.ERROR
    assert status.message() == str(conflict)
    assert plugin.binder.pv_cache.assumed() == {}


def test_dynamic_provisioning_sets_the_selected_node_and_fails_when_the_provisioner_does() -> None:
    sc = StorageClass(
        metadata=ObjectMeta(name="dyn"),
        provisioner="csi.example.com",
        volume_binding_mode="WaitForFirstConsumer",
    )
    pvc = make_pvc("pvc-a", "dyn", request=GI)
    backend, handle = cluster(sc, pvc)
    plugin = VolumeBinding(None, handle)
    pod = make_pod("pvc-a")
    state = run_cycle(plugin, pod, "node-b")
    assumed = plugin.binder.pvc_cache.get("default/pvc-a")
    assert assumed.metadata.annotations[ANN_SELECTED_NODE] == "node-b"
    backend.inject_provisioning_failure()
    status = plugin.pre_bind(state, pod, "node-b")
    assert status is not None and status.code is fw.Code.ERROR
    assert status.message() == 'binding volumes: provisioning failed for PVC "pvc-a"'
    # The next attempt provisions and binds.
    state = run_cycle(plugin, pod, "node-b")
    assert plugin.pre_bind(state, pod, "node-b") is None
    claim = backend.get("PersistentVolumeClaim", "pvc-a", "default")
    assert isinstance(claim, PersistentVolumeClaim) and claim.phase == "Bound"
