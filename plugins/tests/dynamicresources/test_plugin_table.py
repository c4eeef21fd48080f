"""DynamicResources against upstream's plugin test table.

Cases ported as data from upstream
``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go`` (``TestPlugin``):
same fixtures (node ``worker``, driver ``some-driver``, pod ``my-pod`` with uid ``1234``,
claim ``my-pod-my-resource`` with request ``req-1`` of class ``my-resource-class``) and the
expected status of each extension point, and the claim as stored afterwards. Each case runs
PreEnqueue, PreFilter, Filter on every node, then PostFilter when no node passed, or Reserve,
PreBind (and Unreserve where the case says so) on the first node that passed.

The ``extended-resource*`` cases are in ``test_extended_resources.py``, the binding-condition
cases in ``test_binding_conditions.py``, the ``*-prioritized-list-scoring`` cases in
``test_prioritized_list_scoring.py``, ``timeout``, ``timeout_disabled`` and ``timeout_zero``
in ``test_filter_timeout.py``. Not ported: ``canceled`` (schedframe never cancels a Filter
call). As upstream's ``st.ResourceClaimWrapper.Allocation``, :func:`allocated` gives a claim
the ``resource.kubernetes.io/delete-protection`` finalizer with its allocation, so the claims
expected after PreBind carry it, and a claim PostFilter deallocated keeps it.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence

import attrs
import pytest

from schedframe import framework as fw
from schedframe.features import FeatureGates
from schedframe.objects import (
    AllocationResult,
    CELSelector,
    Device,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    ExactDeviceRequest,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodResourceClaim,
    PodSpec,
    PodStatus,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourcePool,
    ResourceSlice,
)
from schedframe.runtime import ClusterView, Framework
from schedframe_plugins.dynamicresources import (
    _STATE,
    DELETE_PROTECTION_FINALIZER,
    DynamicResources,
    DynamicResourcesArgs,
)

NODE, NODE2, NODE3 = "worker", "worker-2", "worker-3"
DRIVER, POD, UID, RES = "some-driver", "my-pod", "1234", "my-resource"
CLAIM, CLASS, NS = "my-pod-my-resource", "my-resource-class", "default"
U = fw.Code.UNSCHEDULABLE
UU = fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
ERR = fw.Code.ERROR


def node(name: str) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels={"kubernetes.io/hostname": name}))


def node_slice(name: str, healthy: bool | None = None) -> ResourceSlice:
    attributes = {} if healthy is None else {"healthy": DeviceAttribute(bool_value=healthy)}
    return ResourceSlice(
        metadata=ObjectMeta(name=f"{name}-{DRIVER}"),
        driver=DRIVER,
        pool=ResourcePool(name=name, generation=1),
        node_name=name,
        devices=(Device(name="instance-1", attributes=attributes),),
    )


def pod(*, template: bool = False, in_status: bool = True) -> Pod:
    ref = (
        PodResourceClaim(name=RES, resource_claim_template_name=CLAIM)
        if template
        else PodResourceClaim(name=RES, resource_claim_name=CLAIM)
    )
    statuses = ((RES, CLAIM),) if template and in_status else ()
    return Pod(
        metadata=ObjectMeta(name=POD, namespace=NS, uid=UID),
        spec=PodSpec(resource_claims=(ref,)),
        status=PodStatus(resource_claim_statuses=statuses),
    )


POD_WITH_CLAIM = pod()
OWNER = OwnerReference(api_version="v1", kind="Pod", name=POD, uid=UID, controller=True)
CLASS_OBJ = DeviceClass(metadata=ObjectMeta(name=CLASS))
BROKEN = CELSelector(expression=f'device.attributes["{DRIVER}"].healthy')


def claim(
    name: str = CLAIM,
    *,
    cls: str = CLASS,
    prioritized: bool = False,
    selectors: tuple[CELSelector, ...] = (),
    admin: bool | None = None,
) -> ResourceClaim:
    if prioritized:
        request = DeviceRequest(
            name="req-1",
            first_available=(DeviceSubRequest(name="subreq-1", device_class_name=cls),),
        )
    else:
        request = DeviceRequest(
            name="req-1",
            exactly=ExactDeviceRequest(
                device_class_name=cls, selectors=selectors, admin_access=admin
            ),
        )
    owners = (OWNER,) if name == CLAIM else ()
    return ResourceClaim(
        metadata=ObjectMeta(name=name, namespace=NS, uid=f"uid-{name}", owner_references=owners),
        requests=(request,),
    )


def local_selector(name: str) -> NodeSelector:
    req = NodeSelectorRequirement(key="metadata.name", operator="In", values=(name,))
    return NodeSelector(node_selector_terms=(NodeSelectorTerm(match_fields=(req,)),))


def label_selector(key: str, value: str) -> NodeSelector:
    req = NodeSelectorRequirement(key=key, operator="In", values=(value,))
    return NodeSelector(node_selector_terms=(NodeSelectorTerm(match_expressions=(req,)),))


def allocation(request: str = "req-1", admin: bool = False) -> AllocationResult:
    return AllocationResult(
        devices=DeviceAllocationResult(
            results=(
                DeviceRequestAllocationResult(
                    request=request,
                    driver=DRIVER,
                    pool=NODE,
                    device="instance-1",
                    admin_access=True if admin else None,
                ),
            )
        ),
        node_selector=local_selector(NODE),
    )


def protected(c: ResourceClaim) -> ResourceClaim:
    """``c`` with the delete-protection finalizer (once)."""
    if DELETE_PROTECTION_FINALIZER in c.metadata.finalizers:
        return c
    finalizers = (*c.metadata.finalizers, DELETE_PROTECTION_FINALIZER)
    return attrs.evolve(c, metadata=attrs.evolve(c.metadata, finalizers=finalizers))


def allocated(c: ResourceClaim, alloc: AllocationResult) -> ResourceClaim:
    """Upstream ``st.FromResourceClaim(c).Allocation(alloc)``: the allocation set, the
    delete-protection finalizer added when missing."""
    return attrs.evolve(protected(c), allocation=alloc)


RESERVED = (ResourceClaimConsumerReference(resource="pods", name=POD, uid=UID),)
PENDING = claim()
ALLOCATED = allocated(PENDING, allocation())
IN_USE = attrs.evolve(ALLOCATED, reserved_for=RESERVED)
OTHER = claim("not-my-claim")
OTHER_ALLOCATED = allocated(OTHER, allocation())


def admin(c: ResourceClaim) -> ResourceClaim:
    req = c.requests[0]
    assert req.exactly is not None
    requests = (attrs.evolve(req, exactly=attrs.evolve(req.exactly, admin_access=True)),)
    alloc = c.allocation
    if alloc is not None:
        results = tuple(attrs.evolve(r, admin_access=True) for r in alloc.devices.results)
        alloc = attrs.evolve(alloc, devices=attrs.evolve(alloc.devices, results=results))
    return attrs.evolve(c, requests=requests, allocation=alloc)


@attrs.frozen(kw_only=True)
class Case:
    pod: Pod = POD_WITH_CLAIM
    claims: Sequence[ResourceClaim] = ()
    classes: Sequence[DeviceClass] = ()
    slices: Sequence[ResourceSlice] = ()
    nodes: Sequence[Node] = (node(NODE),)
    gates: dict[str, bool] = attrs.field(factory=dict)
    #: The emulated version (gates DRA and DRAAdminAccess are locked on in 1.36).
    version: str = "1.36"
    preenqueue: tuple[fw.Code, str] | None = None
    prefilter: tuple[fw.Code, str] | None = None
    #: Filter status per node (absent: success).
    filter: dict[str, tuple[fw.Code, str]] = attrs.field(factory=dict)
    postfilter: tuple[fw.Code, str] | None = None
    #: The claim Reserve marks as in flight.
    in_flight: ResourceClaim | None = None
    #: The claim ``my-pod-my-resource`` as stored after PreBind (or PostFilter).
    stored: ResourceClaim | None = None
    unreserve_before_prebind: bool = False
    unreserve_after_bind_failure: ResourceClaim | None = None


CASES: dict[str, Case] = {
    "empty": Case(
        pod=Pod(metadata=ObjectMeta(name="foo", namespace=NS, uid="foo")),
        prefilter=(fw.Code.SKIP, ""),
        postfilter=(U, "no new claims to deallocate"),
    ),
    "claim-reference": Case(claims=[ALLOCATED, OTHER], stored=IN_USE),
    "claim-template": Case(pod=pod(template=True), claims=[ALLOCATED, OTHER], stored=IN_USE),
    "missing-claim": Case(
        pod=pod(template=True, in_status=False),
        claims=[ALLOCATED, OTHER],
        preenqueue=(UU, 'pod "default/my-pod": ResourceClaim not created yet'),
    ),
    "deleted-claim": Case(
        pod=pod(template=True),
        claims=[
            attrs.evolve(
                ALLOCATED,
                metadata=attrs.evolve(
                    ALLOCATED.metadata,
                    deletion_timestamp=datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
                ),
            )
        ],
        preenqueue=(UU, 'resourceclaim "my-pod-my-resource" is being deleted'),
    ),
    "wrong-claim": Case(
        pod=pod(template=True),
        claims=[
            attrs.evolve(
                ALLOCATED,
                metadata=attrs.evolve(
                    ALLOCATED.metadata,
                    owner_references=(attrs.evolve(OWNER, uid=UID + "123"),),
                ),
            )
        ],
        preenqueue=(
            UU,
            "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod "
            "(pod is not owner)",
        ),
    ),
    "no-resources": Case(
        claims=[PENDING],
        classes=[CLASS_OBJ],
        filter={NODE: (UU, "cannot allocate all claims")},
        postfilter=(U, "still not schedulable"),
    ),
    "with-resources": Case(
        claims=[PENDING],
        classes=[CLASS_OBJ],
        slices=[node_slice(NODE)],
        in_flight=ALLOCATED,
        stored=IN_USE,
    ),
    "skip-bind": Case(
        claims=[PENDING],
        classes=[CLASS_OBJ],
        slices=[node_slice(NODE)],
        in_flight=ALLOCATED,
        unreserve_before_prebind=True,
        stored=PENDING,
    ),
    "exhausted-resources": Case(
        claims=[PENDING, OTHER_ALLOCATED],
        classes=[CLASS_OBJ],
        slices=[node_slice(NODE)],
        filter={NODE: (UU, "cannot allocate all claims")},
        postfilter=(U, "still not schedulable"),
    ),
    "request-admin-access-with-DRAAdminAccess-featuregate": Case(
        claims=[admin(PENDING), OTHER_ALLOCATED],
        classes=[CLASS_OBJ],
        slices=[node_slice(NODE)],
        gates={"DRAAdminAccess": True},
        in_flight=admin(ALLOCATED),
        stored=admin(IN_USE),
    ),
    # Upstream's newest allocator validates requests inside Allocate, so Filter reports an
    # error status (older versions expected UnschedulableAndUnresolvable from PreFilter).
    "request-admin-access-without-DRAAdminAccess-featuregate": Case(
        claims=[admin(PENDING), OTHER_ALLOCATED],
        classes=[CLASS_OBJ],
        slices=[node_slice(NODE)],
        gates={"DRAAdminAccess": False},
        version="1.34",
        filter={
            NODE: (
                ERR,
                "claim default/my-pod-my-resource, request req-1: admin access is requested, "
                "but the feature is disabled",
            )
        },
    ),
    "structured-ignore-allocated-admin-access": Case(
        claims=[PENDING, admin(OTHER_ALLOCATED)],
        classes=[CLASS_OBJ],
        slices=[node_slice(NODE)],
        in_flight=ALLOCATED,
        stored=IN_USE,
    ),
    "claim-parameters-CEL-runtime-error": Case(
        claims=[claim(selectors=(BROKEN,))],
        classes=[CLASS_OBJ],
        slices=[node_slice(NODE)],
        filter={
            NODE: (
                ERR,
                "claim default/my-pod-my-resource: selector #0 on device "
                "some-driver/worker/instance-1: CEL runtime error: no such key: healthy",
            )
        },
    ),
    "class-parameters-CEL-runtime-error": Case(
        claims=[PENDING],
        classes=[attrs.evolve(CLASS_OBJ, selectors=(BROKEN,))],
        slices=[node_slice(NODE)],
        filter={
            NODE: (
                ERR,
                "class my-resource-class: selector #0 on device some-driver/worker/instance-1: "
                "CEL runtime error: no such key: healthy",
            )
        },
    ),
    "CEL-runtime-error-for-one-of-two-nodes": Case(
        nodes=[node(NODE), node(NODE2)],
        claims=[claim(selectors=(BROKEN,))],
        classes=[CLASS_OBJ],
        slices=[node_slice(NODE), node_slice(NODE2, healthy=True)],
        filter={
            NODE: (
                ERR,
                "claim default/my-pod-my-resource: selector #0 on device "
                "some-driver/worker/instance-1: CEL runtime error: no such key: healthy",
            )
        },
    ),
    "missing-class": Case(
        claims=[PENDING],
        prefilter=(UU, "request req-1: device class my-resource-class does not exist"),
        postfilter=(U, "no new claims to deallocate"),
    ),
    "wrong-topology": Case(
        claims=[
            attrs.evolve(
                ALLOCATED,
                allocation=AllocationResult(
                    node_selector=label_selector("no-such-label", "no-such-value")
                ),
            )
        ],
        filter={NODE: (UU, "resourceclaim not available on the node")},
        postfilter=(U, "deallocation of ResourceClaim completed"),
        stored=protected(PENDING),  # deallocated; the finalizer stays (the controller's)
    ),
    "good-topology": Case(
        claims=[
            attrs.evolve(
                ALLOCATED,
                allocation=AllocationResult(
                    node_selector=label_selector("kubernetes.io/hostname", NODE)
                ),
            )
        ],
        stored=attrs.evolve(
            ALLOCATED,
            allocation=AllocationResult(
                node_selector=label_selector("kubernetes.io/hostname", NODE)
            ),
            reserved_for=RESERVED,
        ),
    ),
    "bind-failure": Case(
        claims=[
            attrs.evolve(
                ALLOCATED,
                allocation=AllocationResult(
                    node_selector=label_selector("kubernetes.io/hostname", NODE)
                ),
            )
        ],
        stored=attrs.evolve(
            ALLOCATED,
            allocation=AllocationResult(
                node_selector=label_selector("kubernetes.io/hostname", NODE)
            ),
            reserved_for=RESERVED,
        ),
        unreserve_after_bind_failure=attrs.evolve(
            ALLOCATED,
            allocation=AllocationResult(
                node_selector=label_selector("kubernetes.io/hostname", NODE)
            ),
        ),
    ),
    "reserved-okay": Case(claims=[IN_USE], stored=IN_USE),
    "DRA-disabled": Case(
        claims=[IN_USE],
        gates={"DynamicResourceAllocation": False},
        version="1.34",
        prefilter=(fw.Code.SKIP, ""),
        postfilter=(U, "plugin disabled"),
    ),
    "claim-with-request-with-unknown-device-class": Case(
        claims=[claim(cls="does-not-exist")],
        prefilter=(UU, "request req-1: device class does-not-exist does not exist"),
        postfilter=(U, "no new claims to deallocate"),
    ),
    "claim-with-prioritized-list-feature-disabled": Case(
        claims=[claim(prioritized=True)],
        classes=[CLASS_OBJ],
        gates={"DRAPrioritizedList": False},
        prefilter=(
            UU,
            "resource claim default/my-pod-my-resource, request req-1: has subrequests, but "
            "the DRAPrioritizedList feature is disabled",
        ),
        postfilter=(U, "no new claims to deallocate"),
    ),
    "claim-with-prioritized-list-unknown-device-class": Case(
        claims=[claim(prioritized=True, cls="does-not-exist")],
        prefilter=(UU, "request req-1/subreq-1: device class does-not-exist does not exist"),
        postfilter=(U, "no new claims to deallocate"),
    ),
    "claim-with-prioritized-list": Case(
        claims=[claim(prioritized=True)],
        classes=[CLASS_OBJ],
        slices=[node_slice(NODE)],
        in_flight=allocated(claim(prioritized=True), allocation("req-1/subreq-1")),
        stored=attrs.evolve(
            allocated(claim(prioritized=True), allocation("req-1/subreq-1")),
            reserved_for=RESERVED,
        ),
    ),
}


def _status(s: fw.Status | None) -> tuple[fw.Code, str] | None:
    if s is None or s.code is fw.Code.SUCCESS:
        return None
    return (s.code, s.message())


@pytest.mark.parametrize("name", list(CASES))
def test_plugin_table(name: str) -> None:
    case = CASES[name]
    # Upstream's cases run with DRADeviceBindingConditions off unless they say otherwise
    # (test_binding_conditions.py has those that turn it on).
    overrides = {"DRADeviceBindingConditions": False, **case.gates}
    gates = FeatureGates(emulated_version=case.version, overrides=overrides)
    cluster = ClusterView(dra=[*case.claims, *case.classes, *case.slices])
    handle = Framework(cluster=cluster, features=gates)
    pl = DynamicResources(DynamicResourcesArgs(), handle)
    dra = handle.shared_dra_manager()

    assert _status(pl.pre_enqueue(case.pod)) == case.preenqueue
    if case.preenqueue is not None:
        return
    state = fw.CycleState()
    pre = pl.pre_filter(state, case.pod, [])
    assert not isinstance(pre, fw.PreFilterResult)
    assert _status(pre) == case.prefilter
    passed = []
    if case.prefilter is None:
        for n in case.nodes:
            got = _status(pl.filter(state, case.pod, fw.NodeInfo(n)))
            assert got == case.filter.get(n.name)
            if got is None:
                passed.append(n.name)
        if any(c is ERR for c, _ in case.filter.values()):
            return  # an error status aborts the scheduling cycle (no PostFilter, no Reserve)
    if not passed:
        _, post = pl.post_filter(state, case.pod, fw.NodeToStatus())
        assert _status(post) == case.postfilter
        if case.stored is not None:
            assert dra.resource_claim(NS, CLAIM) == case.stored
        return
    assert case.postfilter is None
    chosen = passed[0]
    assert pl.reserve(state, case.pod, chosen) is None
    # What only Filter, Score and Reserve read is let go: the binding cycle keeps the state.
    kept = state.get(_STATE)
    assert kept is None or (kept.allocator, kept.node_allocations) == (None, {})
    uid = f"uid-{CLAIM}"
    if case.in_flight is not None:
        assert dra.claim_has_pending_allocation(uid)
        assert case.in_flight.allocation is not None
        in_use = dra.list_all_allocated_devices()
        for r in case.in_flight.allocation.devices.results:
            if not r.admin_access:
                assert (r.driver, r.pool, r.device) in in_use
    else:
        assert not dra.claim_has_pending_allocation(uid)
    if case.unreserve_before_prebind:
        pl.unreserve(state, case.pod, chosen)
        assert not dra.claim_has_pending_allocation(uid)
        assert dra.resource_claim(NS, CLAIM) == case.stored
        return
    assert pl.pre_bind_pre_flight(state, case.pod, chosen) is None  # PreBind has work
    assert pl.pre_bind(state, case.pod, chosen) is None
    assert not dra.claim_has_pending_allocation(uid)
    assert dra.resource_claim(NS, CLAIM) == case.stored
    if case.unreserve_after_bind_failure is not None:
        pl.unreserve(state, case.pod, chosen)
        assert dra.resource_claim(NS, CLAIM) == case.unreserve_after_bind_failure


def test_in_flight_allocation_keeps_devices_from_the_next_pod() -> None:
    gates = FeatureGates(emulated_version="1.36")
    second = attrs.evolve(
        claim("second"),
        metadata=ObjectMeta(name="second", namespace=NS, uid="uid-second"),
    )
    other_pod = Pod(
        metadata=ObjectMeta(name="other", namespace=NS, uid="other"),
        spec=PodSpec(resource_claims=(PodResourceClaim(name="r", resource_claim_name="second"),)),
    )
    cluster = ClusterView(dra=[PENDING, second, CLASS_OBJ, node_slice(NODE)])
    handle = Framework(cluster=cluster, features=gates)
    pl = DynamicResources(DynamicResourcesArgs(), handle)
    state = fw.CycleState()
    assert pl.pre_filter(state, POD_WITH_CLAIM, []) is None
    assert pl.filter(state, POD_WITH_CLAIM, fw.NodeInfo(node(NODE))) is None
    assert pl.reserve(state, POD_WITH_CLAIM, NODE) is None
    # The device is in flight for my-pod: the other pod's claim cannot get it.
    state2 = fw.CycleState()
    assert pl.pre_filter(state2, other_pod, []) is None
    assert _status(pl.filter(state2, other_pod, fw.NodeInfo(node(NODE)))) == (
        UU,
        "cannot allocate all claims",
    )
    # Once my-pod is unreserved, it can.
    pl.unreserve(state, POD_WITH_CLAIM, NODE)
    state3 = fw.CycleState()
    assert pl.pre_filter(state3, other_pod, []) is None
    assert pl.filter(state3, other_pod, fw.NodeInfo(node(NODE))) is None


def test_claim_change_hints() -> None:
    gates = FeatureGates(emulated_version="1.36")
    handle = Framework(cluster=ClusterView(dra=[PENDING, CLASS_OBJ]), features=gates)
    pl = DynamicResources(DynamicResourcesArgs(), handle)
    q, skip = fw.QueueingHint.QUEUE, fw.QueueingHint.QUEUE_SKIP
    hint = pl.is_schedulable_after_claim_change
    assert hint(POD_WITH_CLAIM, None, PENDING) is q  # the pod's claim appeared
    assert hint(POD_WITH_CLAIM, None, OTHER) is skip  # an unrelated claim
    assert hint(POD_WITH_CLAIM, OTHER_ALLOCATED, OTHER) is q  # deallocated: devices free
    assert hint(POD_WITH_CLAIM, PENDING, PENDING) is skip  # status unchanged
    # Upstream "skip-adding-finalizer": a metadata-only change (a finalizer added) is skipped.
    with_finalizer = attrs.evolve(
        PENDING, metadata=attrs.evolve(PENDING.metadata, finalizers=("foo",))
    )
    assert hint(POD_WITH_CLAIM, PENDING, with_finalizer) is skip
    assert hint(POD_WITH_CLAIM, PENDING, ALLOCATED) is q
    pod_hint = pl.is_schedulable_after_pod_change
    waiting = pod(template=True, in_status=False)
    assert pod_hint(waiting, waiting, pod(template=True)) is q
    assert pod_hint(waiting, None, Pod(metadata=ObjectMeta(name="x", uid="x"))) is skip


def test_postfilter_deallocation_clears_the_device_statuses() -> None:
    # Upstream's PostFilter clears status.devices with the allocation (its
    # "bound-claim-with-failed-binding" case expects AllocatedDeviceStatuses(nil)).
    from schedframe.objects import AllocatedDeviceStatus

    wrong = attrs.evolve(
        ALLOCATED,
        allocation=AllocationResult(node_selector=label_selector("no-such-label", "x")),
        devices=(AllocatedDeviceStatus(driver=DRIVER, pool=NODE, device="instance-1"),),
    )
    gates = FeatureGates(emulated_version="1.36")
    handle = Framework(cluster=ClusterView(dra=[wrong, CLASS_OBJ]), features=gates)
    pl = DynamicResources(DynamicResourcesArgs(), handle)
    state = fw.CycleState()
    assert pl.pre_filter(state, POD_WITH_CLAIM, []) is None
    assert _status(pl.filter(state, POD_WITH_CLAIM, fw.NodeInfo(node(NODE)))) == (
        UU,
        "resourceclaim not available on the node",
    )
    _, post = pl.post_filter(state, POD_WITH_CLAIM, fw.NodeToStatus())
    assert _status(post) == (U, "deallocation of ResourceClaim completed")
    assert handle.shared_dra_manager().resource_claim(NS, CLAIM) == protected(PENDING)
