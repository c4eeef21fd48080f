"""DynamicResources' Filter timeout (``filterTimeout``, DRASchedulerFilterTimeout).

The ``timeout``, ``timeout_disabled`` and ``timeout_zero`` cases of upstream's ``TestPlugin``
(``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go``), ported as
data. Upstream gives the allocator a context with a 1ns deadline and relies on real time
passing; here the budget is measured on the scheduler's clock, and the cases run on a clock
that moves 1ms each time it is read, so the outcome is deterministic. (``canceled`` is not
ported: schedframe does not cancel Filter calls.)
"""

from __future__ import annotations

import datetime

import attrs
import pytest

from schedframe import framework as fw
from schedframe.config import decode_args
from schedframe.features import FeatureGates
from schedframe.objects import (
    Device,
    DeviceRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceSlice,
)
from schedframe.runtime import ClusterView, Framework
from schedframe_plugins.dynamicresources import DynamicResources, DynamicResourcesArgs

from .test_plugin_table import (
    ALLOCATED,
    CLASS,
    CLASS_OBJ,
    IN_USE,
    NODE,
    NS,
    PENDING,
    POD_WITH_CLAIM,
    node,
    node_slice,
)

U = fw.Code.UNSCHEDULABLE
UU = fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE


class TickingClock:
    """A clock that advances 1ms every time it is read."""

    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        self.t += 0.001
        return self.t


#: upstream ``largeClaim``: five requests of the class.
LARGE_CLAIM = attrs.evolve(
    PENDING,
    requests=tuple(
        DeviceRequest(name=f"req-{i}", exactly=ExactDeviceRequest(device_class_name=CLASS))
        for i in range(1, 6)
    ),
)
#: upstream ``largeWorkerNodeSlice``: many devices on the node.
LARGE_SLICE = attrs.evolve(
    node_slice(NODE), devices=tuple(Device(name=f"instance-{i}") for i in range(1, 11))
)


@attrs.frozen(kw_only=True)
class Case:
    filter_timeout: datetime.timedelta | None = None
    gate: bool = True
    claim: ResourceClaim
    slice: ResourceSlice
    filter: tuple[fw.Code, str] | None = None
    postfilter: tuple[fw.Code, str] | None = None
    #: The claim as stored after PreBind.
    stored: ResourceClaim | None = None


#: Upstream's 1ns, as decoded from ``filterTimeout: 1ns`` (timedelta's smallest step).
ONE_NS = decode_args(DynamicResourcesArgs, {"filterTimeout": "1ns"}, path="args").filter_timeout
CASES: dict[str, Case] = {
    "timeout": Case(
        filter_timeout=ONE_NS,
        claim=LARGE_CLAIM,
        slice=LARGE_SLICE,
        filter=(UU, "timed out trying to allocate devices"),
        postfilter=(U, "still not schedulable"),
    ),
    "timeout_disabled": Case(
        gate=False,
        filter_timeout=ONE_NS,
        claim=PENDING,
        slice=node_slice(NODE),
        stored=IN_USE,
    ),
    "timeout_zero": Case(
        filter_timeout=datetime.timedelta(0),
        claim=PENDING,
        slice=node_slice(NODE),
        stored=IN_USE,
    ),
}


def _status(s: fw.Status | None) -> tuple[fw.Code, str] | None:
    if s is None or s.code is fw.Code.SUCCESS:
        return None
    return (s.code, s.message())


@pytest.mark.parametrize("name", list(CASES))
def test_filter_timeout(name: str) -> None:
    case = CASES[name]
    gates = FeatureGates(
        emulated_version="1.36",
        overrides={"DRADeviceBindingConditions": False, "DRASchedulerFilterTimeout": case.gate},
    )
    cluster = ClusterView(dra=[case.claim, CLASS_OBJ, case.slice])
    handle = Framework(cluster=cluster, features=gates, clock=TickingClock())
    args = DynamicResourcesArgs()
    if case.filter_timeout is not None:
        args = attrs.evolve(args, filter_timeout=case.filter_timeout)
    pl = DynamicResources(args, handle)
    dra = handle.shared_dra_manager()
    state = fw.CycleState()
    assert pl.pre_enqueue(POD_WITH_CLAIM) is None
    pre = pl.pre_filter(state, POD_WITH_CLAIM, [])
    assert not isinstance(pre, fw.PreFilterResult)
    assert _status(pre) is None
    got = _status(pl.filter(state, POD_WITH_CLAIM, fw.NodeInfo(node(NODE))))
    assert got == case.filter
    if got is not None:
        _, post = pl.post_filter(state, POD_WITH_CLAIM, fw.NodeToStatus())
        assert _status(post) == case.postfilter
        return
    assert pl.reserve(state, POD_WITH_CLAIM, NODE) is None
    assert dra.claim_has_pending_allocation(ALLOCATED.metadata.uid)
    assert pl.pre_bind(state, POD_WITH_CLAIM, NODE) is None
    assert dra.resource_claim(NS, case.claim.name) == case.stored


def test_without_a_deadline_the_large_claim_is_allocated() -> None:
    # The "timeout" fixtures fit: only the deadline makes Filter fail there.
    gates = FeatureGates(emulated_version="1.36", overrides={"DRADeviceBindingConditions": False})
    cluster = ClusterView(dra=[LARGE_CLAIM, CLASS_OBJ, LARGE_SLICE])
    handle = Framework(cluster=cluster, features=gates, clock=TickingClock())
    pl = DynamicResources(DynamicResourcesArgs(), handle)  # 10s: 10000 readings
    state = fw.CycleState()
    pl.pre_filter(state, POD_WITH_CLAIM, [])
    assert pl.filter(state, POD_WITH_CLAIM, fw.NodeInfo(node(NODE))) is None
