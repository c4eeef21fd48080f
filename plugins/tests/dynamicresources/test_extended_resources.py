"""DynamicResources with DRA-backed extended resources (DRAExtendedResource).

The ``extended-resource*`` cases of upstream's ``TestPlugin``
(``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go``) as data, with
the same fixtures as ``test_plugin_table.py`` (node ``worker``, driver ``some-driver``, pod
``my-pod`` with uid ``1234``, class ``my-resource-class`` providing ``example.com/gpu``, class
``my-resource-class2`` providing ``example.com/gpu2``). Each case runs PreFilter, Filter on
every node, then PostFilter when no node passed, or Reserve, PreBind (and Unreserve where the
case says so) on the first node that passed.

The claim PreBind creates is named by the store (upstream's fake client names it
``my-pod-extended-resources-0``); the cases compare everything else.
"""

from __future__ import annotations

import collections.abc
from collections.abc import Mapping, Sequence

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.errors import BackendError
from schedframe.features import FeatureGates
from schedframe.metrics import SchedulerMetrics
from schedframe.objects import (
    AllocationResult,
    Container,
    ContainerExtendedResourceRequest,
    Device,
    DeviceAllocationResult,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    ExactDeviceRequest,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeStatus,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodExtendedResourceClaimStatus,
    PodSpec,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourcePool,
    ResourceSlice,
)
from schedframe.runtime import ClusterView, Framework
from schedframe.runtime._dra import DRAStore
from schedframe_plugins.dynamicresources import (
    DELETE_PROTECTION_FINALIZER,
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    SPECIAL_CLAIM_NAME,
    DynamicResources,
    DynamicResourcesArgs,
)

NODE, NODE2 = "worker", "worker-2"
DRIVER, POD, UID, NS = "some-driver", "my-pod", "1234", "default"
CLASS = "my-resource-class"
GPU, GPU2 = "example.com/gpu", "example.com/gpu2"
IMPLICIT = f"deviceclass.resource.kubernetes.io/{CLASS}"
PREFIX = f"{POD}-extended-resources-"
SPECIAL_UID = f"{UID}/{SPECIAL_CLAIM_NAME}"
U = fw.Code.UNSCHEDULABLE
UU = fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
ERR = fw.Code.ERROR


def node(name: str = NODE, allocatable: Mapping[str, int] | None = None) -> Node:
    return Node(
        metadata=ObjectMeta(name=name, labels={"kubernetes.io/hostname": name}),
        status=NodeStatus(allocatable=dict(allocatable or {}), capacity=dict(allocatable or {})),
    )


def node_slice(*devices: str) -> ResourceSlice:
    return ResourceSlice(
        metadata=ObjectMeta(name=f"{NODE}-{DRIVER}"),
        driver=DRIVER,
        pool=ResourcePool(name=NODE, generation=1),
        node_name=NODE,
        devices=tuple(Device(name=d) for d in devices),
    )


WORKER_SLICE = node_slice("instance-1")
LARGE_SLICE = node_slice("instance-1", "instance-2", "instance-3", "instance-4")

PLAIN_CLASS = DeviceClass(metadata=ObjectMeta(name=CLASS))
GPU_CLASS = DeviceClass(metadata=ObjectMeta(name=CLASS), extended_resource_name=GPU)
GPU2_CLASS = DeviceClass(metadata=ObjectMeta(name=CLASS + "2"), extended_resource_name=GPU2)


def make_pod(*containers: Mapping[str, int]) -> Pod:
    """Upstream st.MakePod().Name(podName).UID(podUID).Req(...)...: one container per map."""
    return Pod(
        metadata=ObjectMeta(name=POD, namespace=NS, uid=UID),
        spec=PodSpec(
            containers=tuple(
                Container(name=f"con{i}", requests=dict(r)) for i, r in enumerate(containers)
            )
        ),
    )


POD_GPU = make_pod({GPU: 1})
POD_GPU_GPU2 = make_pod({GPU: 1, GPU2: 1})
POD_IMPLICIT = make_pod({IMPLICIT: 1, GPU: 2})
POD_IMPLICIT_TWO_CONTAINERS = make_pod({IMPLICIT: 1}, {GPU: 2})


def local_selector(name: str) -> NodeSelector:
    req = NodeSelectorRequirement(key="metadata.name", operator="In", values=(name,))
    return NodeSelector(node_selector_terms=(NodeSelectorTerm(match_fields=(req,)),))


def allocation(*results: tuple[str, str], on: str = NODE) -> AllocationResult:
    """Devices of pool ``worker`` by (request, device); the node selector of node ``on``."""
    return AllocationResult(
        devices=DeviceAllocationResult(
            results=tuple(
                DeviceRequestAllocationResult(request=r, driver=DRIVER, pool=NODE, device=d)
                for r, d in results
            )
        ),
        node_selector=local_selector(on),
    )


def request(name: str, cls: str = CLASS, count: int = 1) -> DeviceRequest:
    return DeviceRequest(
        name=name,
        exactly=ExactDeviceRequest(
            device_class_name=cls, allocation_mode="ExactCount", count=count
        ),
    )


OWNER = OwnerReference(api_version="v1", kind="Pod", name=POD, uid=UID, controller=True)
RESERVED = (ResourceClaimConsumerReference(resource="pods", name=POD, uid=UID),)


def extended_claim(
    *requests: DeviceRequest, alloc: AllocationResult, name: str = SPECIAL_CLAIM_NAME
) -> ResourceClaim:
    """Upstream's extendedResourceClaim* fixtures (``NoName``: ``<extended-resources>``); as
    upstream's ``st.ResourceClaimWrapper.Allocation``, one with an allocation carries the
    ``resource.kubernetes.io/delete-protection`` finalizer."""
    return ResourceClaim(
        metadata=ObjectMeta(
            name=name,
            namespace=NS,
            uid=SPECIAL_UID if name == SPECIAL_CLAIM_NAME else f"uid-{name}",
            generate_name=PREFIX,
            owner_references=(OWNER,),
            annotations={EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
            finalizers=(DELETE_PROTECTION_FINALIZER,) if alloc is not None else (),
        ),
        requests=requests,
        allocation=alloc,
    )


R0 = "container-0-request-0"
GPU_CLAIM = extended_claim(request(R0), alloc=allocation((R0, "instance-1")))
GPU2_CLAIM = extended_claim(
    request("container-0-request-1", CLASS + "2"),
    alloc=allocation(("container-0-request-1", "instance-1")),
)
IMPLICIT_CLAIM = extended_claim(
    request(R0),
    request("container-0-request-1", count=2),
    alloc=allocation(
        (R0, "instance-1"),
        ("container-0-request-1", "instance-2"),
        ("container-0-request-1", "instance-3"),
    ),
)
IMPLICIT_TWO_CONTAINERS_CLAIM = extended_claim(
    request(R0),
    request("container-1-request-0", count=2),
    alloc=allocation(
        (R0, "instance-1"),
        ("container-1-request-0", "instance-2"),
        ("container-1-request-0", "instance-3"),
    ),
)
#: A prior cycle's claims (created, allocated): upstream extendedResourceClaim / ...Node2.
PRIOR_CLAIM = attrs.evolve(
    GPU_CLAIM, metadata=attrs.evolve(GPU_CLAIM.metadata, name=PREFIX + "0", uid="uid-prior")
)
PRIOR_CLAIM_NODE2 = attrs.evolve(PRIOR_CLAIM, allocation=allocation((R0, "instance-1"), on=NODE2))


class _Writer:
    """A backend for the store that fails claim creation or the pod-status patch."""

    def __init__(self, store: DRAStore, *, fail_create: bool = False, fail_patch: bool = False):
        self.store, self.fail_create, self.fail_patch = store, fail_create, fail_patch

    def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        if self.fail_create:
            raise BackendError("claim creation errors", reason="BadRequest", code=400)
        self.store.claim_writer = None
        try:
            return self.store.create_claim(claim)
        finally:
            self.store.claim_writer = self

    def delete_resource_claim(self, claim: ResourceClaim) -> None:
        self.store.delete(claim)

    def patch_pod_extended_resource_claim_status(
        self, pod: Pod, status: PodExtendedResourceClaimStatus
    ) -> None:
        if self.fail_patch:
            raise BackendError("patch error", reason="InternalError", code=500)


@attrs.frozen(kw_only=True)
class Case:
    pod: Pod = POD_GPU
    claims: Sequence[ResourceClaim] = ()
    classes: Sequence[DeviceClass] = (GPU_CLASS,)
    slices: Sequence[ResourceSlice] = ()
    nodes: Sequence[Node] = (node(),)
    prefilter: tuple[fw.Code, str] | None = None
    filter: dict[str, tuple[fw.Code, str]] = attrs.field(factory=dict)
    postfilter: tuple[fw.Code, str] | None = None
    #: Claims PostFilter deleted.
    removed: Sequence[ResourceClaim] = ()
    #: The special claim Reserve marks as in flight.
    in_flight: ResourceClaim | None = None
    #: The claim PreBind created (name aside), reserved for the pod.
    created: ResourceClaim | None = None
    prebind: tuple[fw.Code, str] | None = None
    unreserve_before_prebind: bool = False
    unreserve_after_bind_failure: bool = False
    fail_create: bool = False
    fail_patch: bool = False


CASES: dict[str, Case] = {
    "extended-resource-name-with-node-resource": Case(nodes=(node(allocatable={GPU: 1}),)),
    "extended-resource-one-device-plugin-one-dra": Case(
        nodes=(node(allocatable={GPU: 1}),),
        pod=POD_GPU_GPU2,
        classes=(GPU_CLASS, GPU2_CLASS),
        slices=(WORKER_SLICE,),
        in_flight=GPU2_CLAIM,
        created=attrs.evolve(GPU2_CLAIM, reserved_for=RESERVED),
    ),
    "extended-resource-name-with-zero-allocatable": Case(
        nodes=(node(allocatable={GPU: 0}),),
        slices=(WORKER_SLICE,),
        in_flight=GPU_CLAIM,
        created=attrs.evolve(GPU_CLAIM, reserved_for=RESERVED),
    ),
    "non-DRA-extended-resource-name-with-zero-allocatable": Case(
        nodes=(node(allocatable={GPU: 0}),),
        classes=(PLAIN_CLASS,),
        slices=(WORKER_SLICE,),
        prefilter=(fw.Code.SKIP, ""),
    ),
    "extended-resource-name-no-resource": Case(
        filter={NODE: (UU, "cannot allocate all claims")},
        postfilter=(U, "still not schedulable"),
    ),
    "extended-resource-name-with-resources": Case(
        slices=(WORKER_SLICE,),
        in_flight=GPU_CLAIM,
        created=attrs.evolve(GPU_CLAIM, reserved_for=RESERVED),
    ),
    "implicit-extended-resource-name-with-resources": Case(
        pod=POD_IMPLICIT,
        slices=(LARGE_SLICE,),
        in_flight=IMPLICIT_CLAIM,
        created=attrs.evolve(IMPLICIT_CLAIM, reserved_for=RESERVED),
    ),
    "implicit-extended-resource-name-two-containers-with-resources": Case(
        pod=POD_IMPLICIT_TWO_CONTAINERS,
        slices=(LARGE_SLICE,),
        in_flight=IMPLICIT_TWO_CONTAINERS_CLAIM,
        created=attrs.evolve(IMPLICIT_TWO_CONTAINERS_CLAIM, reserved_for=RESERVED),
    ),
    "extended-resource-name-with-resources-fail-patch": Case(
        slices=(WORKER_SLICE,),
        in_flight=GPU_CLAIM,
        created=attrs.evolve(GPU_CLAIM, reserved_for=RESERVED),
        prebind=(ERR, f"update pod {NS}/{POD} ExtendedResourceClaimStatus: patch error"),
        fail_patch=True,
    ),
    "extended-resource-name-with-resources-has-claim": Case(
        claims=(PRIOR_CLAIM,),
        slices=(WORKER_SLICE,),
        filter={NODE: (UU, "cannot schedule extended resource claim")},
        postfilter=(U, "deletion of ResourceClaim completed"),
        removed=(PRIOR_CLAIM,),
    ),
    "extended-resource-name-with-resources-delete-claim": Case(
        claims=(PRIOR_CLAIM_NODE2,),
        slices=(WORKER_SLICE,),
        filter={NODE: (UU, "cannot schedule extended resource claim")},
        postfilter=(U, "deletion of ResourceClaim completed"),
        removed=(PRIOR_CLAIM_NODE2,),
    ),
    "extended-resource-name-bind-failure": Case(
        slices=(WORKER_SLICE,),
        in_flight=GPU_CLAIM,
        created=attrs.evolve(GPU_CLAIM, reserved_for=RESERVED),
        unreserve_after_bind_failure=True,
    ),
    "extended-resource-name-skip-bind": Case(
        slices=(WORKER_SLICE,),
        in_flight=GPU_CLAIM,
        unreserve_before_prebind=True,
    ),
    "extended-resource-name-claim-creation-failure": Case(
        slices=(WORKER_SLICE,),
        in_flight=GPU_CLAIM,
        prebind=(ERR, f"create claim for extended resources {NS}/: claim creation errors"),
        unreserve_after_bind_failure=True,
        fail_create=True,
    ),
}


#: ``scheduler_resourceclaim_creates_total`` by status after each case that creates (or fails
#: to create) the special claim in PreBind (upstream's ``metrics`` checks).
CREATES: dict[str, dict[str, int]] = {
    "extended-resource-one-device-plugin-one-dra": {"success": 1},
    "extended-resource-name-with-zero-allocatable": {"success": 1},
    "extended-resource-name-with-resources": {"success": 1},
    "implicit-extended-resource-name-with-resources": {"success": 1},
    "implicit-extended-resource-name-two-containers-with-resources": {"success": 1},
    "extended-resource-name-with-resources-fail-patch": {"success": 1},
    "extended-resource-name-bind-failure": {"success": 1},
    "extended-resource-name-claim-creation-failure": {"failure": 1},
}


def _creates(metrics: SchedulerMetrics) -> dict[str, int]:
    out = {}
    for line in metrics.exposition().splitlines():
        if line.startswith("scheduler_resourceclaim_creates_total{"):
            labels, value = line.rsplit(" ", 1)
            out[labels.split('status="')[1].rstrip('"}')] = int(value)
    return out


def _status(s: fw.Status | None) -> tuple[fw.Code, str] | None:
    if s is None or s.code is fw.Code.SUCCESS:
        return None
    return (s.code, s.message())


def _extended_claims(dra: DRAStore) -> list[ResourceClaim]:
    return [
        c
        for c in dra.resource_claims()
        if c.metadata.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true"
    ]


def _named_as(want: ResourceClaim, got: ResourceClaim) -> ResourceClaim:
    meta = attrs.evolve(want.metadata, name=got.name, uid=got.metadata.uid)
    return attrs.evolve(want, metadata=meta)


@pytest.mark.parametrize("name", list(CASES))
def test_extended_resources(name: str) -> None:
    case = CASES[name]
    # Upstream's cases run with DRADeviceBindingConditions off (no allocationTimestamp).
    overrides = {"DRAExtendedResource": True, "DRADeviceBindingConditions": False}
    gates = FeatureGates(emulated_version="1.36", overrides=overrides)
    cluster = ClusterView(dra=[*case.claims, *case.classes, *case.slices])
    handle = Framework(cluster=cluster, features=gates)
    metrics = SchedulerMetrics()
    handle.metrics_recorder = metrics
    pl = DynamicResources(DynamicResourcesArgs(), handle)
    dra = handle.shared_dra_manager()
    assert isinstance(dra, DRAStore)
    try:
        _run_case(case, pl, handle, dra, state=fw.CycleState())
    finally:
        assert _creates(metrics) == CREATES.get(name, {})


def _run_case(
    case: Case, pl: DynamicResources, handle: Framework, dra: DRAStore, *, state: fw.CycleState
) -> None:
    if case.fail_create or case.fail_patch:
        dra.claim_writer = _Writer(dra, fail_create=case.fail_create, fail_patch=case.fail_patch)

    assert pl.pre_enqueue(case.pod) is None
    pre = pl.pre_filter(state, case.pod, [])
    assert not isinstance(pre, fw.PreFilterResult)
    assert _status(pre) == case.prefilter
    if case.prefilter is not None:
        skip = pl.pre_bind_pre_flight(state, case.pod, NODE)
        assert skip is not None and skip.code is fw.Code.SKIP
        return
    passed = []
    for n in case.nodes:
        got = _status(pl.filter(state, case.pod, fw.NodeInfo(n)))
        assert got == case.filter.get(n.name)
        if got is None:
            passed.append(n.name)
    if not passed:
        _, post = pl.post_filter(state, case.pod, fw.NodeToStatus())
        assert _status(post) == case.postfilter
        for claim in case.removed:
            assert dra.resource_claim(claim.namespace, claim.name) is None
        assert _extended_claims(dra) == [c for c in case.claims if c not in case.removed]
        return
    assert case.postfilter is None
    chosen = passed[0]
    assert pl.reserve(state, case.pod, chosen) is None
    if case.in_flight is not None:
        assert dra.claim_has_pending_allocation(SPECIAL_UID)
        assert case.in_flight.allocation is not None
        in_use = dra.list_all_allocated_devices()
        for r in case.in_flight.allocation.devices.results:
            assert (r.driver, r.pool, r.device) in in_use
    else:
        assert not dra.claim_has_pending_allocation(SPECIAL_UID)
    if case.unreserve_before_prebind:
        pl.unreserve(state, case.pod, chosen)
        assert not dra.claim_has_pending_allocation(SPECIAL_UID)
        assert _extended_claims(dra) == []
        return
    assert pl.pre_bind_pre_flight(state, case.pod, chosen) is None  # PreBind has work
    assert _status(pl.pre_bind(state, case.pod, chosen)) == case.prebind
    assert not dra.claim_has_pending_allocation(SPECIAL_UID)
    stored = _extended_claims(dra)
    if case.created is None:
        assert stored == []
    else:
        [made] = stored
        assert made.name.startswith(PREFIX) and len(made.name) == len(PREFIX) + 5
        assert made == _named_as(case.created, made)
        assert made.allocation is not None
        devices = {(r.driver, r.pool, r.device) for r in made.allocation.devices.results}
        assert devices <= dra.list_all_allocated_devices()
    if case.unreserve_after_bind_failure:
        pl.unreserve(state, case.pod, chosen)
        assert _extended_claims(dra) == []


def test_pod_status_records_the_claim_and_its_request_mappings() -> None:
    gates = FeatureGates(emulated_version="1.36")
    handle = Framework(cluster=ClusterView(dra=[GPU_CLASS, LARGE_SLICE]), features=gates)
    pl = DynamicResources(DynamicResourcesArgs(), handle)
    dra = handle.shared_dra_manager()
    assert isinstance(dra, DRAStore)
    pod = POD_IMPLICIT_TWO_CONTAINERS
    state = fw.CycleState()
    assert pl.pre_filter(state, pod, []) is None
    assert pl.filter(state, pod, fw.NodeInfo(node())) is None
    assert pl.reserve(state, pod, NODE) is None
    assert pl.pre_bind(state, pod, NODE) is None
    [claim] = _extended_claims(dra)
    assert dra.extended_resource_claim_statuses[(NS, POD)] == PodExtendedResourceClaimStatus(
        resource_claim_name=claim.name,
        request_mappings=(
            ContainerExtendedResourceRequest(
                container_name="con0", resource_name=IMPLICIT, request_name=R0
            ),
            ContainerExtendedResourceRequest(
                container_name="con1", resource_name=GPU, request_name="container-1-request-0"
            ),
        ),
    )
    # The next cycle finds the claim (owned by the pod, annotated) instead of making one.
    again = fw.CycleState()
    assert pl.pre_filter(again, pod, []) is None


def test_gate_off_leaves_extended_resources_to_node_resources_fit() -> None:
    gates = FeatureGates(emulated_version="1.36", overrides={"DRAExtendedResource": False})
    handle = Framework(cluster=ClusterView(dra=[GPU_CLASS, WORKER_SLICE]), features=gates)
    pl = DynamicResources(DynamicResourcesArgs(), handle)
    status = pl.pre_filter(fw.CycleState(), POD_GPU, [])
    assert isinstance(status, fw.Status) and status.code is fw.Code.SKIP


class _RemoteWriter:
    """A backend whose writes reach the store only through its watch (none here)."""

    def __init__(self) -> None:
        self.created: list[ResourceClaim] = []

    def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        meta = attrs.evolve(claim.metadata, name=PREFIX + "abcde", uid="uid-remote")
        created = attrs.evolve(claim, metadata=meta)
        self.created.append(created)
        return created

    def delete_resource_claim(self, claim: ResourceClaim) -> None:
        raise AssertionError("not deleted in this test")

    def patch_pod_extended_resource_claim_status(
        self, pod: Pod, status: PodExtendedResourceClaimStatus
    ) -> None:
        return None


def test_created_claim_is_known_before_the_watch_reports_it() -> None:
    # Upstream's PreBind waits until its informer has the claim; here the store takes the
    # created claim at once, so a retry of the pod finds it instead of making another.
    gates = FeatureGates(emulated_version="1.36")
    handle = Framework(cluster=ClusterView(dra=[GPU_CLASS, WORKER_SLICE]), features=gates)
    pl = DynamicResources(DynamicResourcesArgs(), handle)
    dra = handle.shared_dra_manager()
    assert isinstance(dra, DRAStore)
    writer = _RemoteWriter()
    dra.claim_writer = writer
    dra.writer = lambda claim: claim  # the status write, acknowledged
    state = fw.CycleState()
    assert pl.pre_filter(state, POD_GPU, []) is None
    assert pl.filter(state, POD_GPU, fw.NodeInfo(node())) is None
    assert pl.reserve(state, POD_GPU, NODE) is None
    assert pl.pre_bind(state, POD_GPU, NODE) is None
    assert [c.name for c in _extended_claims(dra)] == [PREFIX + "abcde"]
    retry = fw.CycleState()
    assert pl.pre_filter(retry, POD_GPU, []) is None
    assert _status(pl.filter(retry, POD_GPU, fw.NodeInfo(node()))) == (
        UU,
        "cannot schedule extended resource claim",
    )


@pytest.mark.property
@given(
    devices=st.integers(min_value=0, max_value=4),
    allocated_devices=st.integers(min_value=0, max_value=4),
    wanted=st.integers(min_value=1, max_value=4),
    advertised=st.sampled_from([None, 0, 1, 4]),
)
@settings(max_examples=40, deadline=None)
def test_filter_passes_iff_enough_free_devices_or_the_node_advertises_enough(
    devices: int, allocated_devices: int, wanted: int, advertised: int | None
) -> None:
    # A node with `devices` devices of the class (the first `allocated_devices` of them taken
    # by another claim) and `advertised` example.com/gpu in its allocatable: DynamicResources
    # allocates from devices exactly when the node does not advertise the resource, and
    # NodeResourcesFit then leaves the request to it.
    from schedframe_plugins.noderesources import Fit

    taken = min(allocated_devices, devices)
    names = [f"instance-{i}" for i in range(devices)]
    other = ResourceClaim(
        metadata=ObjectMeta(name="other", namespace=NS, uid="other"),
        allocation=allocation(*((f"r{i}", names[i]) for i in range(taken))) if taken else None,
    )
    objects: list[object] = [GPU_CLASS, other]
    if devices:
        objects.append(node_slice(*names))
    allocatable = {"pods": 10} if advertised is None else {"pods": 10, GPU: advertised}
    the_node = node(allocatable=allocatable)
    gates = FeatureGates(emulated_version="1.36", overrides={"DRADeviceBindingConditions": False})
    handle = Framework(cluster=ClusterView(dra=objects), features=gates)
    pod = make_pod({GPU: wanted})
    info = fw.NodeInfo(the_node)
    dra_state = fw.CycleState()
    pl = DynamicResources(DynamicResourcesArgs(), handle)
    assert pl.pre_filter(dra_state, pod, []) is None
    dra_ok = pl.filter(dra_state, pod, info) is None
    fit = Fit(None, handle)
    fit_state = fw.CycleState()
    fit.pre_filter(fit_state, pod, [info])
    fit_ok = fit.filter(fit_state, pod, info) is None
    if advertised:
        assert dra_ok
        assert fit_ok is (wanted <= advertised)
    else:
        assert fit_ok
        assert dra_ok is (wanted <= devices - taken)


def _postfilter_on_prior_claim(
    dra_setup: collections.abc.Callable[[DRAStore, list[str]], None],
) -> fw.Status:
    """PostFilter for a pod whose prior cycle's extended-resource claim blocks it."""
    gates = FeatureGates(
        emulated_version="1.36",
        overrides={"DRAExtendedResource": True, "DRADeviceBindingConditions": False},
    )
    cluster = ClusterView(dra=[PRIOR_CLAIM_NODE2, GPU_CLASS, WORKER_SLICE])
    handle = Framework(cluster=cluster, features=gates)
    pl = DynamicResources(DynamicResourcesArgs(), handle)
    dra = handle.shared_dra_manager()
    assert isinstance(dra, DRAStore)
    dra_setup(dra, [])
    state = fw.CycleState()
    assert pl.pre_filter(state, POD_GPU, []) is None
    assert _status(pl.filter(state, POD_GPU, fw.NodeInfo(node()))) is not None
    _, post = pl.post_filter(state, POD_GPU, fw.NodeToStatus())
    assert post is not None
    return post


def test_deleting_a_claim_removes_its_finalizer_first() -> None:
    # Upstream deleteClaim: an Update without resource.kubernetes.io/delete-protection, then
    # the Delete.
    calls: list[tuple[str, tuple[str, ...]]] = []

    def setup(dra: DRAStore, _: list[str]) -> None:
        assert PRIOR_CLAIM_NODE2.metadata.finalizers == (DELETE_PROTECTION_FINALIZER,)

        def update(claim: ResourceClaim) -> ResourceClaim:
            calls.append(("update", claim.metadata.finalizers))
            dra.set(claim)
            return claim

        class Deleter(_Writer):
            def delete_resource_claim(self, claim: ResourceClaim) -> None:
                calls.append(("delete", claim.metadata.finalizers))
                super().delete_resource_claim(claim)

        dra.updater = update
        dra.claim_writer = Deleter(dra)

    post = _postfilter_on_prior_claim(setup)
    assert _status(post) == (U, "deletion of ResourceClaim completed")
    assert calls == [("update", ()), ("delete", ())]


def test_a_failed_finalizer_removal_is_upstreams_error() -> None:
    def setup(dra: DRAStore, _: list[str]) -> None:
        def update(claim: ResourceClaim) -> ResourceClaim:
            raise BackendError("boom", reason="InternalError", code=500)

        dra.updater = update

    post = _postfilter_on_prior_claim(setup)
    assert _status(post) == (ERR, f"update resourceclaim {NS}/{PRIOR_CLAIM.name}: boom")
