"""DynamicResources with device binding conditions (DRADeviceBindingConditions and
DRAResourceClaimDeviceStatus, on from 1.36).

The binding-condition cases of upstream's ``TestPlugin`` as data, with the fixtures of
``test_plugin_table.py``: claims allocated to devices whose binding conditions are reported
(or not) in ``status.devices``. Filter makes a claim whose binding failed or timed out
unavailable (PostFilter deallocates it, clearing ``status.devices``); PreBind stamps
``allocationTimestamp`` and waits, polling every 5 seconds on the scheduler's clock, until every
condition is true, a binding fails or times out, or ``bindingTimeout`` passes. The waits run
on :class:`SteppingClock`, whose ``sleep`` moves its own time and applies the drivers' status
updates due on the way, so they are exact and take no real time.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence

import attrs
import pytest

from schedframe import framework as fw
from schedframe.features import FeatureGates
from schedframe.objects import (
    AllocatedDeviceStatus,
    AllocationResult,
    Device,
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
    ResourcePool,
    ResourceSlice,
)
from schedframe.runtime import ClusterView, Framework, RecordingEventRecorder
from schedframe.scheduler import VirtualClock
from schedframe_plugins.dynamicresources import DynamicResources, DynamicResourcesArgs


class SteppingClock:
    """A clock PreBind can wait on without real time passing: ``sleep`` moves time and runs
    the actions due on the way (a driver updating a claim's ``status.devices``)."""

    def __init__(self, start: float) -> None:
        self.start = start
        self.t = start
        self._actions: list[tuple[float, Callable[[], None]]] = []
        self.sleeps: list[float] = []

    def at(self, offset: float, action: Callable[[], None]) -> None:
        """Run ``action`` once time reaches ``start + offset``."""
        self._actions.append((offset, action))
        self._actions.sort(key=lambda a: a[0])

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        target = self.t + seconds
        while self._actions and self.start + self._actions[0][0] <= target:
            at, action = self._actions.pop(0)
            self.t = max(self.t, self.start + at)
            action()
        self.t = target


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
#: Upstream allocates these ten minutes (the default binding timeout) before its clock reads
#: "now", which has moved on by the time Filter runs; on the fixed test clock the extra
#: second says the same.
LONG_AGO = NOW - datetime.timedelta(minutes=10, seconds=1)
TIMED_OUT = allocated(at=LONG_AGO, conditions=[])
MIXED = allocated(
    at=LONG_AGO,
    conditions=[("condition1", "True"), ("condition2", "False")],
)
PLAIN = allocated(binding=False)
#: Allocated 10s before a 600s binding timeout runs out, no condition reported yet.
PENDING = allocated(at=NOW - datetime.timedelta(seconds=590), conditions=[])


def _stamped(claim: ResourceClaim, at: datetime.datetime) -> ResourceClaim:
    """``claim`` with its allocation stamped at ``at``."""
    assert claim.allocation is not None
    return attrs.evolve(claim, allocation=attrs.evolve(claim.allocation, allocation_timestamp=at))


PENDING2 = allocated(
    CLAIM2,
    driver=DRIVER2,
    device="instance-2",
    request="req-2",
    at=NOW - datetime.timedelta(seconds=60),
    conditions=[],
)
FAILED_FABRIC = attrs.evolve(
    PENDING,
    devices=(
        attrs.evolve(
            PENDING.devices[0],
            conditions=(
                DeviceCondition(type="condition", status="False"),
                DeviceCondition(type="failed", status="True", reason="Fabric", message="gone"),
            ),
        ),
    ),
)


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
    #: Status updates a driver makes while PreBind waits: (seconds after PreBind began,
    #: the claim with its new ``status.devices``).
    updates: Sequence[tuple[float, ResourceClaim]] = ()
    #: How long PreBind waited (seconds on the case's clock).
    waited: float = 0.0


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
    # Upstream: allocated 10s before the timeout; PreBind polls at 0s, 5s, 10s (not yet: the
    # deadline must have passed) and 15s, when the claim has timed out.
    "prebind-fail-with-binding-timeout": Case(
        pod=pod(CLAIM),
        claims=[PENDING],
        binding_timeout=datetime.timedelta(seconds=600),
        prebind=(ERR, f"claim {CLAIM} binding timeout"),
        stored=[attrs.evolve(PENDING, reserved_for=RESERVED)],
        waited=15.0,
    ),
    # schedframe cases for the wait (upstream's table has only the timeout above).
    "prebind-waits-until-binding-conditions-are-true": Case(
        pod=pod(CLAIM),
        claims=[PENDING],
        binding_timeout=datetime.timedelta(seconds=600),
        updates=[(7.0, BOUND)],
        stored=[attrs.evolve(BOUND, reserved_for=RESERVED)],
        waited=10.0,
    ),
    "prebind-waits-until-binding-fails": Case(
        pod=pod(CLAIM),
        claims=[PENDING],
        binding_timeout=datetime.timedelta(seconds=600),
        updates=[(3.0, FAILED_FABRIC)],
        prebind=(ERR, f'claim {CLAIM} binding failed: reason=Fabric, message="gone"'),
        stored=[attrs.evolve(FAILED_FABRIC, reserved_for=RESERVED)],
        waited=5.0,
    ),
    "prebind-waits-for-the-second-claim": Case(
        pod=pod(CLAIM, CLAIM2),
        claims=[BOUND, PENDING2],
        binding_timeout=datetime.timedelta(seconds=600),
        updates=[(21.0, BOUND2)],
        stored=[
            attrs.evolve(BOUND, reserved_for=RESERVED),
            attrs.evolve(BOUND2, reserved_for=RESERVED),
        ],
        waited=25.0,
    ),
    # The wait itself runs out (``bindingTimeout`` from when it began) before the claim's
    # own timeout: polls at 0s, 5s, 10s, then the deadline at 12s.
    "prebind-wait-times-out": Case(
        pod=pod(CLAIM),
        claims=[_stamped(PENDING, NOW)],
        binding_timeout=datetime.timedelta(seconds=12),
        prebind=(ERR, "device binding timeout"),
        stored=[attrs.evolve(PENDING, reserved_for=RESERVED)],
        waited=12.0,
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
    clock = SteppingClock(NOW.timestamp())
    handle = Framework(
        cluster=ClusterView(dra=[*case.claims, CLASS_OBJ]),
        features=FeatureGates(emulated_version="1.36"),
        clock=clock,
    )
    args = DynamicResourcesArgs()
    if case.binding_timeout is not None:
        args = attrs.evolve(args, binding_timeout=case.binding_timeout)
    pl = DynamicResources(args, handle)
    dra = handle.shared_dra_manager()

    def report(update: ResourceClaim) -> Callable[[], None]:
        def apply() -> None:
            current = dra.resource_claim(update.namespace, update.name)
            assert current is not None
            dra.update_claim_status(attrs.evolve(current, devices=update.devices))

        return apply

    for at, update in case.updates:
        clock.at(at, report(update))
    state = fw.CycleState()
    assert pl.pre_filter(state, case.pod, []) is None
    assert _status(pl.filter(state, case.pod, fw.NodeInfo(WORKER))) == case.filter
    if case.filter is not None:
        _, post = pl.post_filter(state, case.pod, fw.NodeToStatus())
        assert _status(post) == case.postfilter
    else:
        assert pl.reserve(state, case.pod, NODE) is None
        assert _status(pl.pre_bind(state, case.pod, NODE)) == case.prebind
    assert clock.now() - NOW.timestamp() == case.waited
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


def test_prebind_records_that_it_waits_and_polls_every_five_seconds() -> None:
    clock = SteppingClock(NOW.timestamp())
    handle = Framework(
        cluster=ClusterView(dra=[PENDING, CLASS_OBJ]),
        features=FeatureGates(emulated_version="1.36"),
        clock=clock,
    )
    pl = DynamicResources(
        DynamicResourcesArgs(binding_timeout=datetime.timedelta(seconds=600)), handle
    )
    state = fw.CycleState()
    p = pod(CLAIM)
    assert pl.pre_filter(state, p, []) is None
    assert pl.filter(state, p, fw.NodeInfo(WORKER)) is None
    assert _status(pl.pre_bind(state, p, NODE)) == (ERR, f"claim {CLAIM} binding timeout")
    assert clock.sleeps == [5.0, 5.0, 5.0]
    recorder = handle.event_recorder
    assert isinstance(recorder, RecordingEventRecorder)
    assert [(e.event_type, e.reason, e.action, e.note) for e in recorder.events] == [
        (
            "Normal",
            "BindingConditionsPending",
            "Scheduling",
            f"waiting for binding conditions for device on node {NODE}",
        )
    ]


def test_prebind_cannot_wait_on_a_virtual_clock() -> None:
    """Deterministic mode: the binding task runs on the thread that moves virtual time, so
    PreBind cannot sleep; it fails at once, saying so, instead of hanging."""
    handle = Framework(
        cluster=ClusterView(dra=[PENDING, CLASS_OBJ]),
        features=FeatureGates(emulated_version="1.36"),
        clock=VirtualClock(start=NOW.timestamp()),
    )
    pl = DynamicResources(
        DynamicResourcesArgs(binding_timeout=datetime.timedelta(seconds=600)), handle
    )
    state = fw.CycleState()
    p = pod(CLAIM)
    assert pl.pre_filter(state, p, []) is None
    assert pl.filter(state, p, fw.NodeInfo(WORKER)) is None
    assert _status(pl.pre_bind(state, p, NODE)) == (
        ERR,
        f"claim {CLAIM}: waiting for device binding conditions (DRADeviceBindingConditions) "
        "needs a clock that can sleep; VirtualClock cannot (deterministic mode does not wait "
        "in PreBind)",
    )
    # A claim that is ready needs no wait, on any clock.
    ready = Framework(
        cluster=ClusterView(dra=[BOUND, CLASS_OBJ]),
        features=FeatureGates(emulated_version="1.36"),
        clock=VirtualClock(start=NOW.timestamp()),
    )
    pl = DynamicResources(DynamicResourcesArgs(), ready)
    state = fw.CycleState()
    assert pl.pre_filter(state, p, []) is None
    assert pl.filter(state, p, fw.NodeInfo(WORKER)) is None
    assert pl.pre_bind(state, p, NODE) is None


def test_scheduler_allocates_a_device_with_binding_conditions_and_waits_for_them() -> None:
    """From 1.36 the allocator picks a device with binding conditions; PreBind writes the
    allocation (recording the conditions, stamping ``allocationTimestamp``) and waits until
    the driver reports them true."""
    device = Device(
        name="instance-1",
        binding_conditions=("condition",),
        binding_failure_conditions=("failed",),
    )
    rs = ResourceSlice(
        metadata=ObjectMeta(name=f"{NODE}-{DRIVER}"),
        driver=DRIVER,
        pool=ResourcePool(name=NODE, generation=1),
        node_name=NODE,
        devices=(device,),
    )
    pending = dealloc(PENDING)
    clock = SteppingClock(NOW.timestamp())
    handle = Framework(
        cluster=ClusterView(dra=[pending, CLASS_OBJ, rs]),
        features=FeatureGates(emulated_version="1.36"),
        clock=clock,
    )
    dra = handle.shared_dra_manager()
    pl = DynamicResources(DynamicResourcesArgs(), handle)

    def report() -> None:
        current = dra.resource_claim(NS, CLAIM)
        assert current is not None
        dra.update_claim_status(attrs.evolve(current, devices=BOUND.devices))

    clock.at(3.0, report)
    state = fw.CycleState()
    p = pod(CLAIM)
    assert pl.pre_filter(state, p, []) is None
    assert pl.filter(state, p, fw.NodeInfo(WORKER)) is None
    assert pl.reserve(state, p, NODE) is None
    assert pl.pre_bind(state, p, NODE) is None
    assert clock.now() - NOW.timestamp() == 5.0
    stored = dra.resource_claim(NS, CLAIM)
    assert stored is not None and stored.allocation is not None
    (result,) = stored.allocation.devices.results
    assert (result.device, result.binding_conditions, result.binding_failure_conditions) == (
        "instance-1",
        ("condition",),
        ("failed",),
    )
    assert stored.allocation.allocation_timestamp == datetime.datetime.fromtimestamp(
        int(NOW.timestamp()), tz=datetime.UTC
    )
    assert stored.reserved_for == RESERVED
