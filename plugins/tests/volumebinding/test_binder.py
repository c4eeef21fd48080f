"""Upstream ``binder_test.go`` as data: ``TestFindPodVolumesWithoutProvisioning`` and
``TestFindPodVolumesWithProvisioning`` (each under the three CSIDriver variants),
and the ``TestAssumePodVolumes`` cases that apply. ``shouldFail`` is an error from
``get_pod_volume_claims`` or ``find_pod_volumes``, or unbound immediate claims (as upstream's
``findPodVolumes`` helper reports them)."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pytest

from schedframe.objects import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    ClaimReference,
    CSIDriver,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodSpec,
    StorageClass,
    TopologySelectorTerm,
    Volume,
)
from schedframe.runtime._storage_lister import StorageStore
from schedframe.scheduler import VirtualClock
from schedframe_plugins.volumebinding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    BindingError,
    BindingInfo,
    PodVolumes,
    VolumeBinder,
)

PROVISIONER = "test-provisioner"
NODE_KEY = "nodeKey"
WAIT, IMMEDIATE, WAIT_PROV, TOPO_MISMATCH = (
    "waitClass",
    "immediateClass",
    "waitClassWithProvisioner",
    "topoMismatchClass",
)
CLASSES = [
    StorageClass(
        metadata=ObjectMeta(name=WAIT_PROV),
        provisioner=PROVISIONER,
        volume_binding_mode="WaitForFirstConsumer",
        allowed_topologies=(
            TopologySelectorTerm(
                match_label_expressions=((NODE_KEY, ("node1", "reference-value")),)
            ),
        ),
    ),
    StorageClass(metadata=ObjectMeta(name=IMMEDIATE), provisioner=""),
    StorageClass(
        metadata=ObjectMeta(name=WAIT),
        provisioner="kubernetes.io/no-provisioner",
        volume_binding_mode="WaitForFirstConsumer",
    ),
    StorageClass(
        metadata=ObjectMeta(name=TOPO_MISMATCH),
        provisioner=PROVISIONER,
        volume_binding_mode="WaitForFirstConsumer",
        allowed_topologies=(
            TopologySelectorTerm(match_label_expressions=((NODE_KEY, ("reference-value",)),)),
        ),
    ),
]
G, GI = 10**9, 2**30


def pvc(
    name: str, size: int, cls: str, *, volume: str = "", bound: bool = False, selected: str = ""
) -> PersistentVolumeClaim:
    annotations = {}
    if bound:
        annotations[ANN_BIND_COMPLETED] = "yes"
    if selected:
        annotations[ANN_SELECTED_NODE] = selected
    return PersistentVolumeClaim(
        metadata=ObjectMeta(
            name=name,
            namespace="testns",
            uid="pvc-uid",
            resource_version="1",
            annotations=annotations,
        ),
        request=size,
        storage_class_name=cls,
        volume_name=volume,
    )


def pv(
    name: str, node: str, size: int, cls: str, bound_to: PersistentVolumeClaim | None = None
) -> PersistentVolume:
    affinity = None
    if node:
        req = NodeSelectorRequirement(key=NODE_KEY, operator="In", values=(node,))
        affinity = NodeSelector(node_selector_terms=(NodeSelectorTerm(match_expressions=(req,)),))
    ref = None
    if bound_to is not None:
        ref = ClaimReference(
            namespace=bound_to.namespace, name=bound_to.name, uid=bound_to.metadata.uid
        )
    return PersistentVolume(
        metadata=ObjectMeta(name=name, resource_version="1"),
        capacity=size,
        storage_class_name=cls,
        source="csi",
        csi_driver=PROVISIONER,
        volume_handle=name,
        node_affinity=affinity,
        claim_ref=ref,
        phase="Bound" if bound_to is not None else "Available",
    )


UNBOUND = pvc("unbound-pvc", 1 * G, WAIT)
UNBOUND2 = pvc("unbound-pvc2", 5 * G, WAIT)
PREBOUND = pvc("prebound-pvc", 1 * G, WAIT, volume="pv-node1a")
BOUND = pvc("bound-pvc", 1 * G, WAIT, volume="pv-bound", bound=True)
IMMEDIATE_UNBOUND = pvc("immediate-unbound-pvc", 1 * G, IMMEDIATE)
IMMEDIATE_BOUND = pvc(
    "immediate-bound-pvc", 1 * G, IMMEDIATE, volume="pv-bound-immediate", bound=True
)
PROVISIONED = pvc("provisioned-pvc", GI, WAIT_PROV)
NO_PROVISIONER = pvc("no-provisioner-pvc", GI, WAIT)
TOPO_MISMATCH_PVC = pvc("topo-mismatch-pvc", GI, TOPO_MISMATCH)
SELECTED_NODE = pvc("provisioned-pvc", GI, WAIT_PROV, selected="node1")

PV_NODE1A = pv("pv-node1a", "node1", 5 * G, WAIT)
PV_NODE1B = pv("pv-node1b", "node1", 10 * G, WAIT)
PV_NODE2 = pv("pv-node2", "node2", 1 * G, WAIT)
PV_BOUND = pv("pv-bound", "node1", 1 * G, WAIT, BOUND)
PV_NODE1A_BOUND = pv("pv-node1a", "node1", 5 * G, WAIT, UNBOUND)
PV_BOUND_IMMEDIATE = pv("pv-bound-immediate", "node1", 1 * G, IMMEDIATE, IMMEDIATE_BOUND)
PV_BOUND_IMMEDIATE_NODE2 = pv("pv-bound-immediate", "node2", 1 * G, IMMEDIATE, IMMEDIATE_BOUND)

NODE1 = Node(metadata=ObjectMeta(name="node1", labels={NODE_KEY: "node1"}))


def make_pod(*claims: PersistentVolumeClaim) -> Pod:
    volumes = tuple(Volume(name=c.name, persistent_volume_claim=c.name) for c in claims)
    return Pod(
        metadata=ObjectMeta(name="test-pod", namespace="testns", uid="test-pod-uid"),
        spec=PodSpec(node_name="node1", volumes=volumes),
    )


GENERIC_POD = Pod(
    metadata=ObjectMeta(name="test-pod", namespace="testns", uid="test-pod-uid"),
    spec=PodSpec(node_name="node1", volumes=(Volume(name="test-volume", ephemeral=True),)),
)


def generic_pvc(owned: bool) -> PersistentVolumeClaim:
    refs = (
        OwnerReference(
            api_version="v1", kind="Pod", name="test-pod", uid="test-pod-uid", controller=True
        ),
    )
    return PersistentVolumeClaim(
        metadata=ObjectMeta(
            name="test-pod-test-volume",
            namespace="testns",
            uid="pvc-uid",
            resource_version="1",
            annotations={ANN_BIND_COMPLETED: "yes"},
            owner_references=refs if owned else (),
        ),
        request=1 * G,
        storage_class_name=WAIT,
        volume_name="pv-bound",
    )


CORRECT_GENERIC = generic_pvc(True)
CONFLICTING_GENERIC = generic_pvc(False)
PV_BOUND_GENERIC = pv("pv-bound", "node1", 1 * G, WAIT, CORRECT_GENERIC)


@attrs.frozen
class Scenario:
    pvcs: Sequence[PersistentVolumeClaim] = ()
    pvs: Sequence[PersistentVolume] = ()
    cache_pvcs: Sequence[PersistentVolumeClaim] | None = None
    pod: Pod | None = None
    bindings: Sequence[tuple[str, str]] = ()  # (claim, volume)
    provisions: Sequence[str] = ()
    reasons: Sequence[str] = ()
    should_fail: bool = False
    needs_capacity: bool = False


def find(scenario: Scenario, driver: CSIDriver | None) -> tuple[PodVolumes | None, list[str], bool]:
    claims = scenario.pvcs if scenario.cache_pvcs is None else scenario.cache_pvcs
    objects: list[object] = [*CLASSES, *claims, *scenario.pvs]
    if driver is not None:
        objects.append(driver)
    binder = VolumeBinder(StorageStore(objects), lambda _: NODE1, None, 10.0, VirtualClock())
    pod = scenario.pod if scenario.pod is not None else make_pod(*scenario.pvcs)
    try:
        sorted_claims = binder.get_pod_volume_claims(pod)
        if sorted_claims.unbound_claims_immediate:
            raise BindingError("pod has unbound immediate PersistentVolumeClaims")
        volumes, reasons = binder.find_pod_volumes(pod, sorted_claims, NODE1)
    except BindingError:
        return None, [], True
    return volumes, reasons, False


WITHOUT_PROVISIONING = {
    "no-volumes": Scenario(pod=make_pod()),
    "pvc-not-found": Scenario(cache_pvcs=[], pvcs=[BOUND], should_fail=True),
    "bound-pvc": Scenario(pvcs=[BOUND], pvs=[PV_BOUND]),
    "bound-pvc,pv-not-exists": Scenario(pvcs=[BOUND], reasons=[ERR_REASON_PV_NOT_EXIST]),
    "prebound-pvc": Scenario(pvcs=[PREBOUND], pvs=[PV_NODE1A_BOUND], should_fail=True),
    "unbound-pvc,pv-same-node": Scenario(
        pvcs=[UNBOUND], pvs=[PV_NODE2, PV_NODE1A, PV_NODE1B], bindings=[("unbound-pvc", "pv-node1a")]
    ),
    "unbound-pvc,pv-different-node": Scenario(pvcs=[UNBOUND], pvs=[PV_NODE2], reasons=[ERR_REASON_BIND_CONFLICT]),
    "two-unbound-pvcs": Scenario(
        pvcs=[UNBOUND, UNBOUND2], pvs=[PV_NODE1A, PV_NODE1B],
        bindings=[("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")],
    ),
    "two-unbound-pvcs,order-by-size": Scenario(
        pvcs=[UNBOUND2, UNBOUND], pvs=[PV_NODE1A, PV_NODE1B],
        bindings=[("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")],
    ),
    "two-unbound-pvcs,partial-match": Scenario(
        pvcs=[UNBOUND, UNBOUND2], pvs=[PV_NODE1A],
        bindings=[("unbound-pvc", "pv-node1a")], reasons=[ERR_REASON_BIND_CONFLICT],
    ),
    "one-bound,one-unbound": Scenario(
        pvcs=[UNBOUND, BOUND], pvs=[PV_BOUND, PV_NODE1A], bindings=[("unbound-pvc", "pv-node1a")]
    ),
    "one-bound,one-unbound,no-match": Scenario(
        pvcs=[UNBOUND, BOUND], pvs=[PV_BOUND, PV_NODE2], reasons=[ERR_REASON_BIND_CONFLICT]
    ),
    "one-prebound,one-unbound": Scenario(pvcs=[UNBOUND, PREBOUND], pvs=[PV_NODE1A, PV_NODE1B], should_fail=True),
    "immediate-bound-pvc": Scenario(pvcs=[IMMEDIATE_BOUND], pvs=[PV_BOUND_IMMEDIATE]),
    "immediate-bound-pvc-wrong-node": Scenario(
        pvcs=[IMMEDIATE_BOUND], pvs=[PV_BOUND_IMMEDIATE_NODE2], reasons=[ERR_REASON_NODE_CONFLICT]
    ),
    "immediate-unbound-pvc": Scenario(pvcs=[IMMEDIATE_UNBOUND], should_fail=True),
    "immediate-unbound-pvc,delayed-mode-bound": Scenario(
        pvcs=[IMMEDIATE_UNBOUND, BOUND], pvs=[PV_BOUND], should_fail=True
    ),
    "immediate-unbound-pvc,delayed-mode-unbound": Scenario(pvcs=[IMMEDIATE_UNBOUND, UNBOUND], should_fail=True),
    "generic-ephemeral,no-pvc": Scenario(pod=GENERIC_POD, should_fail=True),
    "generic-ephemeral,with-pvc": Scenario(pod=GENERIC_POD, cache_pvcs=[CORRECT_GENERIC], pvs=[PV_BOUND_GENERIC]),
    "generic-ephemeral,wrong-pvc": Scenario(
        pod=GENERIC_POD, cache_pvcs=[CONFLICTING_GENERIC], pvs=[PV_BOUND_GENERIC], should_fail=True
    ),
}  # fmt: skip
WITH_PROVISIONING = {
    "one-provisioned": Scenario(pvcs=[PROVISIONED], provisions=["provisioned-pvc"], needs_capacity=True),
    "two-unbound-pvcs,one-matched,one-provisioned": Scenario(
        pvcs=[UNBOUND, PROVISIONED], pvs=[PV_NODE1A], bindings=[("unbound-pvc", "pv-node1a")],
        provisions=["provisioned-pvc"], needs_capacity=True,
    ),
    "one-bound,one-provisioned": Scenario(
        pvcs=[BOUND, PROVISIONED], pvs=[PV_BOUND], provisions=["provisioned-pvc"], needs_capacity=True
    ),
    "one-binding,one-selected-node": Scenario(
        pvcs=[BOUND, SELECTED_NODE], pvs=[PV_BOUND], provisions=["provisioned-pvc"], needs_capacity=True
    ),
    "immediate-unbound-pvc": Scenario(pvcs=[IMMEDIATE_UNBOUND], should_fail=True),
    "one-immediate-bound,one-provisioned": Scenario(
        pvcs=[IMMEDIATE_BOUND, PROVISIONED], pvs=[PV_BOUND_IMMEDIATE], provisions=["provisioned-pvc"],
        needs_capacity=True,
    ),
    "invalid-provisioner": Scenario(pvcs=[NO_PROVISIONER], reasons=[ERR_REASON_BIND_CONFLICT]),
    "volume-topology-unsatisfied": Scenario(pvcs=[TOPO_MISMATCH_PVC], reasons=[ERR_REASON_BIND_CONFLICT]),
}  # fmt: skip
DRIVERS = {
    "no CSIDriver": None,
    "CSIDriver with capacity tracking": CSIDriver(metadata=ObjectMeta(name=PROVISIONER), storage_capacity=True),
    "CSIDriver without capacity tracking": CSIDriver(metadata=ObjectMeta(name=PROVISIONER), storage_capacity=False),
}  # fmt: skip


def _check(scenario: Scenario, driver: CSIDriver | None) -> None:
    volumes, reasons, failed = find(scenario, driver)
    assert failed is scenario.should_fail
    if failed:
        return
    assert volumes is not None
    expected_reasons = list(scenario.reasons)
    provisions = list(scenario.provisions)
    if scenario.needs_capacity and driver is not None and driver.storage_capacity:
        # Without CSIStorageCapacity objects, provisioning is blocked.
        expected_reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        provisions = []
    assert reasons == expected_reasons
    got = [(b.pvc.name, b.pv.name) for b in volumes.static_bindings or ()]
    assert got == list(scenario.bindings)
    assert [c.name for c in volumes.dynamic_provisions or ()] == provisions


@pytest.mark.parametrize(
    ("scenario", "driver"),
    [
        pytest.param(s, d, id=f"{dname}/{name}")
        for dname, d in DRIVERS.items()
        for name, s in WITHOUT_PROVISIONING.items()
    ],
)
def test_find_pod_volumes_without_provisioning(
    scenario: Scenario, driver: CSIDriver | None
) -> None:
    _check(scenario, driver)


@pytest.mark.parametrize(
    ("scenario", "driver"),
    [
        pytest.param(s, d, id=f"{dname}/{name}")
        for dname, d in DRIVERS.items()
        for name, s in WITH_PROVISIONING.items()
    ],
)
def test_find_pod_volumes_with_provisioning(scenario: Scenario, driver: CSIDriver | None) -> None:
    _check(scenario, driver)


@pytest.mark.parametrize(
    ("claims", "pvs", "bindings", "all_bound"),
    [
        pytest.param([BOUND], [PV_BOUND], [], True, id="all-bound"),
        pytest.param([UNBOUND], [PV_NODE1A], [(UNBOUND, PV_NODE1A)], False, id="one-binding"),
        pytest.param(
            [UNBOUND, UNBOUND2], [PV_NODE1A, PV_NODE1B],
            [(UNBOUND, PV_NODE1A), (UNBOUND2, PV_NODE1B)], False, id="two-bindings",
        ),
        pytest.param([UNBOUND], [PV_NODE1A_BOUND], [(UNBOUND, PV_NODE1A_BOUND)], False, id="pv-already-bound"),
    ],
)  # fmt: skip
def test_assume_pod_volumes(
    claims: list[PersistentVolumeClaim],
    pvs: list[PersistentVolume],
    bindings: list[tuple[PersistentVolumeClaim, PersistentVolume]],
    all_bound: bool,
) -> None:
    store = StorageStore([*CLASSES, *claims, *pvs])
    binder = VolumeBinder(store, lambda _: NODE1, None, 10.0, VirtualClock())
    volumes = PodVolumes(
        static_bindings=[BindingInfo(pvc=c, pv=v) for c, v in bindings], dynamic_provisions=[]
    )
    assert binder.assume_pod_volumes(make_pod(*claims), "node1", volumes) is all_bound
    for claim, volume in bindings:
        assumed = binder.pv_cache.get(volume.name)
        assert assumed.claim_ref is not None
        assert (assumed.claim_ref.namespace, assumed.claim_ref.name) == (
            claim.namespace,
            claim.name,
        )
    binder.revert_assumed_pod_volumes(volumes)
    assert binder.pv_cache.assumed() == {}


# ---- BindPodVolumes: the checks PreBind makes while it waits (upstream checkBindings) -------


@attrs.define
class _Writer:
    """Writes straight into a StorageStore, as a backend whose watch delivers at once."""

    store: StorageStore
    rv: int = 10

    def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        self.rv += 1
        new = attrs.evolve(pv, metadata=attrs.evolve(pv.metadata, resource_version=str(self.rv)))
        self.store.set(new)
        return new

    def update_persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
        self.rv += 1
        new = attrs.evolve(pvc, metadata=attrs.evolve(pvc.metadata, resource_version=str(self.rv)))
        self.store.set(new)
        return new


def _binder(objects: list[object], timeout: float = 0.0) -> tuple[VolumeBinder, StorageStore]:
    store = StorageStore([*CLASSES, *objects])
    return VolumeBinder(store, lambda _: NODE1, _Writer(store), timeout, VirtualClock()), store


def test_bind_pod_volumes_times_out_when_the_claim_never_binds() -> None:
    binder, _ = _binder([UNBOUND, PV_NODE1A])
    volumes = PodVolumes(
        static_bindings=[BindingInfo(pvc=UNBOUND, pv=PV_NODE1A)], dynamic_provisions=[]
    )
    binder.assume_pod_volumes(make_pod(UNBOUND), "node1", volumes)
    with pytest.raises(BindingError, match=r"^binding volumes: context deadline exceeded$"):
        binder.bind_pod_volumes(make_pod(UNBOUND), "node1", volumes)


def test_bind_pod_volumes_fails_when_the_claim_ref_is_reset() -> None:
    binder, store = _binder([UNBOUND, PV_NODE1A], timeout=5.0)
    volumes = PodVolumes(
        static_bindings=[BindingInfo(pvc=UNBOUND, pv=PV_NODE1A)], dynamic_provisions=[]
    )
    binder.assume_pod_volumes(make_pod(UNBOUND), "node1", volumes)

    class _Resetting(_Writer):
        def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
            written = super().update_persistent_volume(pv)
            reset = attrs.evolve(written, claim_ref=None)
            self.store.set(reset)  # the PV controller's unbindVolume, on the watch
            return written

    binder._writer = _Resetting(store)
    with pytest.raises(
        BindingError, match=r'^binding volumes: ClaimRef got reset for pv "pv-node1a"$'
    ):
        binder.bind_pod_volumes(make_pod(UNBOUND), "node1", volumes)


def test_bind_pod_volumes_succeeds_once_the_claim_is_fully_bound() -> None:
    binder, store = _binder([UNBOUND, PV_NODE1A], timeout=5.0)
    volumes = PodVolumes(
        static_bindings=[BindingInfo(pvc=UNBOUND, pv=PV_NODE1A)], dynamic_provisions=[]
    )
    binder.assume_pod_volumes(make_pod(UNBOUND), "node1", volumes)

    class _Controller(_Writer):
        def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
            written = super().update_persistent_volume(pv)
            annotations = {ANN_BIND_COMPLETED: "yes"}
            self.store.set(
                attrs.evolve(
                    UNBOUND,
                    volume_name=pv.name,
                    metadata=attrs.evolve(
                        UNBOUND.metadata, annotations=annotations, resource_version="99"
                    ),
                )
            )
            return written

    binder._writer = _Controller(store)
    binder.bind_pod_volumes(make_pod(UNBOUND), "node1", volumes)


def test_bind_pod_volumes_reports_a_failed_provisioning() -> None:
    binder, store = _binder([PROVISIONED], timeout=5.0)
    volumes = PodVolumes(static_bindings=[], dynamic_provisions=[PROVISIONED])
    binder.assume_pod_volumes(make_pod(PROVISIONED), "node1", volumes)

    class _Failing(_Writer):
        def update_persistent_volume_claim(
            self, pvc: PersistentVolumeClaim
        ) -> PersistentVolumeClaim:
            written = super().update_persistent_volume_claim(pvc)
            annotations = {"volume.kubernetes.io/storage-provisioner": PROVISIONER}
            self.rv += 1
            meta = attrs.evolve(
                written.metadata, annotations=annotations, resource_version=str(self.rv)
            )
            self.store.set(attrs.evolve(written, metadata=meta))
            return written

    binder._writer = _Failing(store)
    with pytest.raises(
        BindingError, match=r'^binding volumes: provisioning failed for PVC "provisioned-pvc"$'
    ):
        binder.bind_pod_volumes(make_pod(PROVISIONED), "node1", volumes)


def test_bind_pod_volumes_without_cached_bindings() -> None:
    binder, _ = _binder([])
    with pytest.raises(
        BindingError, match=r'^failed to get cached bindings for pod "testns/test-pod"$'
    ):
        binder.bind_pod_volumes(make_pod(), "node1", PodVolumes())
