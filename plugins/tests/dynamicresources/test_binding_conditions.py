"""DynamicResources with device binding conditions (DRADeviceBindingConditions and
DRAResourceClaimDeviceStatus, on from 1.36).

The binding-condition cases of upstream's ``TestPlugin`` as data, with the fixtures of
``test_plugin_table.py``: claims allocated to devices whose binding conditions are reported
(or not) in ``status.devices``. Filter makes a claim whose binding failed or timed out
unavailable (PostFilter deallocates it, clearing ``status.devices``); PreBind stamps
``allocationTimestamp`` and passes when every condition is true. Upstream's PreBind would wait
for conditions not yet true; schedframe does not model that wait and says so
(``prebind-fail-with-binding-timeout``: upstream times out, here the wait is refused).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence

import attrs
import pytest

from schedframe import framework as fw
from schedframe.features import FeatureGates
from schedframe.objects import (
    AllocatedDeviceStatus,
    AllocationResult,
    DeviceAllocationResult,
    DeviceClass,
    DeviceCondition,
    DeviceRequest,
    DeviceRequestAllocationResult,
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
    ResourceClaim,
    ResourceClaimConsumerReference,
)
from schedframe.runtime import ClusterView, Framework
from schedframe.scheduler import VirtualClock
from schedframe_plugins.dynamicresources import DynamicResources, DynamicResourcesArgs

NODE, POD, UID, NS = "worker", "my-pod", "1234", "default"
DRIVER, DRIVER2 = "some-driver", "some-driver2"
CLAIM, CLAIM2, CLASS = "my-pod-my-resource", "my-pod-my-resource-2", "my-resource-class"
U = fw.Code.UNSCHEDULABLE
UU = fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
ERR = fw.Code.ERROR
NOW = datetime.datetime.now(tz=datetime.UTC)

WORKER = Node(metadata=ObjectMeta(name=NODE, labels={"kubernetes.io/hostname": NODE}))
CLASS_OBJ = DeviceClass(metadata=ObjectMeta(name=CLASS))
OWNER = OwnerReference(api_version="v1", kind="Pod", name=POD, uid=UID, controller=True)
RESERVED = (ResourceClaimConsumerReference(resource="pods", name=POD, uid=UID),)


def pod(*claims: str) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=POD, namespace=NS, uid=UID),
        spec=PodSpec(
            resource_claims=tuple(
                PodResourceClaim(name=f"res-{i}", resource_claim_name=c)
                for i, c in enumerate(claims)
            )
        ),
    )


def local_selector() -> NodeSelector:
    req = NodeSelectorRequirement(key="metadata.name", operator="In", values=(NODE,))
    return NodeSelector(node_selector_terms=(NodeSelectorTerm(match_fields=(req,)),))


def allocated(
    name: str = CLAIM,
    *,
    driver: str = DRIVER,
    device: str = "instance-1",
    request: str = "req-1",
    binding: bool = True,
    at: datetime.datetime | None = None,
    conditions: Sequence[tuple[str, str]] | None = None,
) -> ResourceClaim:
    """Upstream allocatedClaim / boundClaim / failedBindingClaim: allocated to one device
    (binding conditions ``condition``, failure ``failed`` when ``binding``); ``conditions``
    are the device's reported (type, status) pairs (``None``: no device status at all)."""
    result = DeviceRequestAllocationResult(
        request=request,
        driver=driver,
        pool=NODE,
        device=device,
        binding_conditions=("condition",) if binding else (),
        binding_failure_conditions=("failed",) if binding else (),
    )
    devices: tuple[AllocatedDeviceStatus, ...] = ()
    if conditions is not None:
        devices = (
            AllocatedDeviceStatus(
                driver=driver,
                pool=NODE,
                device=device,
                conditions=tuple(DeviceCondition(type=t, status=s) for t, s in conditions),
            ),
        )
    return ResourceClaim(
        metadata=ObjectMeta(name=name, namespace=NS, uid=f"uid-{name}", owner_references=(OWNER,)),
        requests=(
            DeviceRequest(name=request, exactly=ExactDeviceRequest(device_class_name=CLASS)),
        ),
        allocation=AllocationResult(
            devices=DeviceAllocationResult(results=(result,)),
            node_selector=local_selector(),
            allocation_timestamp=at,
        ),
        devices=devices,
    )


BOUND = allocated(conditions=[("condition", "True"), ("failed", "False")])
BOUND2 = allocated(
    CLAIM2,
    driver=DRIVER2,
    device="instance-2",
    request="req-2",
    conditions=[("condition", "True"), ("failed", "False")],
)
FAILED2 = attrs.evolve(
    BOUND2,
    devices=(
        attrs.evolve(
            BOUND2.devices[0],
            conditions=(
                DeviceCondition(type="condition", status="False"),
                DeviceCondition(type="failed", status="True", reason="Fabric", message="gone"),
            ),
        ),
    ),
)
FAILED = allocated(conditions=[("condition", "False"), ("failed", "True")])
TIMED_OUT = allocated(at=NOW - datetime.timedelta(minutes=10), conditions=[])
MIXED = allocated(
    at=NOW - datetime.timedelta(minutes=10),
    conditions=[("condition1", "True"), ("condition2", "False")],
)
PLAIN = allocated(binding=False)


def dealloc(c: ResourceClaim) -> ResourceClaim:
    return attrs.evolve(c, allocation=None, devices=())


@attrs.frozen(kw_only=True)
class Case:
    pod: Pod
    claims: Sequence[ResourceClaim]
    filter: tuple[fw.Code, str] | None = None
    postfilter: tuple[fw.Code, str] | None = None
    prebind: tuple[fw.Code, str] | None = None
    #: The claims as stored afterwards (allocationTimestamp aside).
    stored: Sequence[ResourceClaim] = ()
    binding_timeout: datetime.timedelta | None = None


NOT_AVAILABLE = (UU, "resourceclaim not available on the node")
DEALLOCATED = (U, "deallocation of ResourceClaim completed")

CASES: dict[str, Case] = {
    "bound-claim-with-succeeded-binding-conditions": Case(
        pod=pod(CLAIM), claims=[BOUND], stored=[attrs.evolve(BOUND, reserved_for=RESERVED)]
    ),
    "bound-claim-with-failed-binding": Case(
        pod=pod(CLAIM),
        claims=[FAILED],
        filter=NOT_AVAILABLE,
        postfilter=DEALLOCATED,
        stored=[dealloc(FAILED)],
    ),
    "bound-claim-with-timed-out-binding": Case(
        pod=pod(CLAIM),
        claims=[TIMED_OUT],
        filter=NOT_AVAILABLE,
        postfilter=DEALLOCATED,
        stored=[dealloc(TIMED_OUT)],
    ),
    "bound-claim-with-mixed-binding-conditions": Case(
        pod=pod(CLAIM),
        claims=[MIXED],
        filter=NOT_AVAILABLE,
        postfilter=DEALLOCATED,
        stored=[dealloc(MIXED)],
    ),
    "bound-claim-without-binding-conditions": Case(
        pod=pod(CLAIM), claims=[PLAIN], stored=[attrs.evolve(PLAIN, reserved_for=RESERVED)]
    ),
    "multi-claims-binding-conditions-all-success": Case(
        pod=pod(CLAIM, CLAIM2),
        claims=[BOUND, BOUND2],
        stored=[
            attrs.evolve(BOUND, reserved_for=RESERVED),
            attrs.evolve(BOUND2, reserved_for=RESERVED),
        ],
    ),
    "multi-claims-binding-conditions-one-fail": Case(
        pod=pod(CLAIM, CLAIM2),
        claims=[BOUND, FAILED2],
        filter=NOT_AVAILABLE,
        postfilter=DEALLOCATED,
        stored=[BOUND, dealloc(FAILED2)],
    ),
    # Upstream: allocated 10s before the timeout, PreBind polls until "binding timeout".
    "prebind-fail-with-binding-timeout": Case(
        pod=pod(CLAIM),
        claims=[
            allocated(
                at=NOW - datetime.timedelta(seconds=590),
                conditions=[],
            )
        ],
        binding_timeout=datetime.timedelta(seconds=600),
        prebind=(
            ERR,
            f"claim {CLAIM}: waiting for device binding conditions "
            "(DRADeviceBindingConditions) is not modelled by schedframe",
        ),
    ),
}


def _status(s: fw.Status | None) -> tuple[fw.Code, str] | None:
    if s is None or s.code is fw.Code.SUCCESS:
        return None
    return (s.code, s.message())


def _without_timestamp(c: ResourceClaim | None) -> ResourceClaim | None:
    if c is None or c.allocation is None:
        return c
    return attrs.evolve(c, allocation=attrs.evolve(c.allocation, allocation_timestamp=None))


@pytest.mark.parametrize("name", list(CASES))
def test_binding_conditions(name: str) -> None:
    case = CASES[name]
    # The cases' times are relative to NOW: the clock stands still there, however long
    # the run has taken since this module was imported.
    handle = Framework(
        cluster=ClusterView(dra=[*case.claims, CLASS_OBJ]),
        features=FeatureGates(emulated_version="1.36"),
        clock=VirtualClock(start=NOW.timestamp()),
    )
    args = DynamicResourcesArgs()
    if case.binding_timeout is not None:
        args = attrs.evolve(args, binding_timeout=case.binding_timeout)
    pl = DynamicResources(args, handle)
    dra = handle.shared_dra_manager()
    state = fw.CycleState()
    assert pl.pre_filter(state, case.pod, []) is None
    assert _status(pl.filter(state, case.pod, fw.NodeInfo(WORKER))) == case.filter
    if case.filter is not None:
        _, post = pl.post_filter(state, case.pod, fw.NodeToStatus())
        assert _status(post) == case.postfilter
    else:
        assert pl.reserve(state, case.pod, NODE) is None
        assert _status(pl.pre_bind(state, case.pod, NODE)) == case.prebind
    for want in case.stored:
        got = dra.resource_claim(want.namespace, want.name)
        assert _without_timestamp(got) == _without_timestamp(want)


def test_prebind_stamps_the_allocation_time_when_the_gates_are_on() -> None:
    handle = Framework(
        cluster=ClusterView(dra=[BOUND, CLASS_OBJ]), features=FeatureGates(emulated_version="1.36")
    )
    pl = DynamicResources(DynamicResourcesArgs(), handle)
    state = fw.CycleState()
    p = pod(CLAIM)
    assert pl.pre_filter(state, p, []) is None
    assert pl.filter(state, p, fw.NodeInfo(WORKER)) is None
    assert pl.pre_bind(state, p, NODE) is None
    stored = handle.shared_dra_manager().resource_claim(NS, CLAIM)
    assert stored is not None and stored.allocation is not None
    stamp = stored.allocation.allocation_timestamp
    assert stamp is not None
    assert abs(stamp.timestamp() - handle.clock.now()) < 5
    # With the gate off (upstream's default before 1.36) nothing is stamped.
    off = Framework(
        cluster=ClusterView(dra=[BOUND, CLASS_OBJ]), features=FeatureGates(emulated_version="1.35")
    )
    pl_off = DynamicResources(DynamicResourcesArgs(), off)
    state = fw.CycleState()
    assert pl_off.pre_filter(state, p, []) is None
    assert pl_off.filter(state, p, fw.NodeInfo(WORKER)) is None
    assert pl_off.pre_bind(state, p, NODE) is None
    stored_off = off.shared_dra_manager().resource_claim(NS, CLAIM)
    assert stored_off is not None and stored_off.allocation is not None
    assert stored_off.allocation.allocation_timestamp is None


def test_failed_binding_message_is_upstreams() -> None:
    handle = Framework(
        cluster=ClusterView(dra=[BOUND, FAILED2, CLASS_OBJ]),
        features=FeatureGates(emulated_version="1.36"),
    )
    pl = DynamicResources(DynamicResourcesArgs(), handle)
    # PreBind's check, as a claim fails after Filter passed.
    state = fw.CycleState()
    p = pod(CLAIM)
    assert pl.pre_filter(state, p, []) is None
    assert pl.filter(state, p, fw.NodeInfo(WORKER)) is None
    handle.shared_dra_manager().update_claim_status(
        attrs.evolve(
            FAILED2, metadata=attrs.evolve(FAILED2.metadata, name=CLAIM, uid=f"uid-{CLAIM}")
        )
    )
    assert _status(pl.pre_bind(state, p, NODE)) == (
        ERR,
        f'claim {CLAIM} binding failed: reason=Fabric, message="gone"',
    )
