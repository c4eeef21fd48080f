"""GangScheduling, case by case: upstream ``gangscheduling_test.go`` (v1.35, Workload API)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import attrs
import pytest

from schedframe import framework as fw
from schedframe.framework import Code, QueueingHint, Status
from schedframe.objects import (
    GangSchedulingPolicy,
    ObjectMeta,
    Pod,
    PodGroup,
    Workload,
    WorkloadReference,
)
from schedframe.runtime._object_store import ObjectStore
from schedframe.testing.builders import make_pod
from schedframe.testing.conformance import check_plugin
from schedframe_plugins.gangscheduling import SCHEDULING_TIMEOUT, GangScheduling


class _Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t


@dataclass
class _Waiting:
    pod: Pod
    allowed_by: list[str] = field(default_factory=list)

    def allow(self, plugin: str) -> None:
        self.allowed_by.append(plugin)


class FakeHandle:
    """What the plugin reads of a Handle: listers, the waiting pods, Activate, the clock."""

    def __init__(self, objects: Iterable[object]) -> None:
        self.store = ObjectStore(objects)
        self.waiting: dict[str, _Waiting] = {}
        self.activated: list[str] = []
        self.clock = _Clock()

    def lister(self, kind: type | str) -> Any:
        return self.store.lister(kind if isinstance(kind, str) else kind.__name__)

    def get_waiting_pod(self, uid: str) -> _Waiting | None:
        return self.waiting.get(uid)

    def activate(self, pods: Iterable[Pod]) -> None:
        self.activated.extend(p.name for p in pods)


def ref(name: str, group: str, replica: str = "") -> WorkloadReference:
    return WorkloadReference(name=name, pod_group=group, pod_group_replica_key=replica)


def pod(name: str, workload_ref: WorkloadReference | None = None, ns: str = "ns1") -> Pod:
    p = make_pod(name).namespace(ns).obj()
    return attrs.evolve(p, spec=attrs.evolve(p.spec, workload_ref=workload_ref))


def workload(name: str, *groups: PodGroup, ns: str = "ns1") -> Workload:
    return Workload(metadata=ObjectMeta(name=name, namespace=ns), pod_groups=groups)


def gang(name: str, min_count: int) -> PodGroup:
    return PodGroup(name=name, gang=GangSchedulingPolicy(min_count=min_count))


GANG_WL = workload("gang-wl", gang("pg1", 3), gang("pg2", 4))
BASIC_WL = workload("basic-wl", PodGroup(name="pg1"))
P1 = pod("p1", ref("gang-wl", "pg1"))
P2 = pod("p2", ref("gang-wl", "pg1"))
P3 = pod("p3", ref("gang-wl", "pg1"))
P4 = pod("p4", ref("gang-wl", "pg2"))
P5 = pod("p5", ref("gang-wl", "pg1", "2"))
BASIC_POD = pod("basic-pod", ref("basic-wl", "pg1"))
NON_GANG = pod("non-gang")

WAIT_ON_PERMIT = Status(Code.WAIT, "waiting for minCount pods from a gang to be waiting on permit")

# name, pod, other pods, workloads, pods waiting at Permit, PreEnqueue want, Permit want,
# activated by the pod's Permit, allowed pods.
FLOW: list[Any] = [
    ("non-gang pod succeeds immediately", NON_GANG, [], [GANG_WL, BASIC_WL], [], None, None,
     [], []),
    ("basic policy pod succeeds immediately", BASIC_POD, [], [GANG_WL, BASIC_WL], [], None,
     None, [], []),
    ("gang pod fails PreEnqueue when workload is not yet created", P1, [P2, P3, P4, P5], [], [],
     Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            'waiting for pods\'s workload "gang-wl" to appear in scheduling queue'),
     None, [], []),
    ("gang pod fails PreEnqueue when quorum is not met", P1, [P2, P4, P5], [GANG_WL], [],
     Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "waiting for minCount pods from a gang to appear in scheduling queue"),
     None, [], []),
    ("gang pod passes PreEnqueue, but waits at Permit", P1, [P2, P3, P4, P5], [GANG_WL],
     [P2, P4, P5], None, WAIT_ON_PERMIT, ["p3"], []),
    ("final gang pod arrives at Permit and allows all waiting pods from a gang", P1,
     [P2, P3, P4, P5], [GANG_WL], [P2, P3, P4, P5], None, None, [], ["p2", "p3"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod_", "others", "workloads", "waiting", "want_pre", "want_permit", "activated", "allowed"),
    [pytest.param(*case[1:], id=case[0]) for case in FLOW],
)
def test_gang_scheduling_flow(
    pod_: Pod,
    others: list[Pod],
    workloads: list[Workload],
    waiting: list[Pod],
    want_pre: Status | None,
    want_permit: Status | None,
    activated: list[str],
    allowed: list[str],
) -> None:
    handle = FakeHandle([*workloads, *others, pod_])
    pl = GangScheduling(None, cast(fw.Handle, handle))
    assert pl.pre_enqueue(pod_) == want_pre
    if want_pre is not None:
        return
    state = fw.CycleState()
    for p in waiting:
        assert pl.reserve(state, p, "some-node") is None
        status = pl.permit(state, p, "some-node")
        assert status is not None and status.code is Code.WAIT, p.name
        handle.waiting[p.uid] = _Waiting(p)
    assert pl.reserve(state, pod_, "some-node") is None
    handle.activated.clear()
    got = pl.permit(state, pod_, "some-node")
    assert got == want_permit
    assert handle.activated == activated
    if got is not None:
        assert got.timeout == SCHEDULING_TIMEOUT
    assert (
        sorted(
            uid.split("/")[-1]
            for uid, w in handle.waiting.items()
            if w.allowed_by == ["GangScheduling"]
        )
        == allowed
    )


HINT_POD_ADDED: list[Any] = [
    ("add a newPod which matches the pod's workload and pod group",
     ref("w1", "pg"), "default", ref("w1", "pg"), QueueingHint.QUEUE),
    ("add a newPod which matches the pod's workload, pod group and replica key",
     ref("w1", "pg", "3"), "default", ref("w1", "pg", "3"), QueueingHint.QUEUE),
    ("add a newPod which doesn't match the pod's namespace",
     ref("w1", "pg"), "foo", ref("w1", "pg"), QueueingHint.QUEUE_SKIP),
    ("add a newPod which doesn't match the pod's workload name",
     ref("w1", "pg"), "default", ref("w2", "pg"), QueueingHint.QUEUE_SKIP),
    ("add a newPod which doesn't match the pod's pod group name",
     ref("w1", "pg"), "default", ref("w1", "pg2"), QueueingHint.QUEUE_SKIP),
    ("add a newPod which doesn't match the pod's replica key",
     ref("w1", "pg", "3"), "default", ref("w1", "pg", "4"), QueueingHint.QUEUE_SKIP),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod_ref", "new_ns", "new_ref", "want"),
    [pytest.param(*case[1:], id=case[0]) for case in HINT_POD_ADDED],
)
def test_is_schedulable_after_pod_added(
    pod_ref: WorkloadReference, new_ns: str, new_ref: WorkloadReference, want: QueueingHint
) -> None:
    pl = GangScheduling(None, cast(fw.Handle, FakeHandle([])))
    target = pod("p", pod_ref, ns="default")
    added = pod("new", new_ref, ns=new_ns)
    assert pl.is_schedulable_after_pod_added(target, None, added) is want


HINT_WORKLOAD_ADDED: list[Any] = [
    ("add a workload which matches the pod's workload name",
     "default", ref("w1", "pg"), "default", QueueingHint.QUEUE),
    ("add a workload which doesn't match the pod's workload name",
     "default", ref("w2", "pg"), "default", QueueingHint.QUEUE_SKIP),
    ("add a workload which doesn't match the pod's workload namespace",
     "ns1", ref("w1", "pg"), "ns2", QueueingHint.QUEUE_SKIP),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod_ns", "pod_ref", "wl_ns", "want"),
    [pytest.param(*case[1:], id=case[0]) for case in HINT_WORKLOAD_ADDED],
)
def test_is_schedulable_after_workload_added(
    pod_ns: str, pod_ref: WorkloadReference, wl_ns: str, want: QueueingHint
) -> None:
    pl = GangScheduling(None, cast(fw.Handle, FakeHandle([])))
    added = workload("w1", gang("pg", 1), ns=wl_ns)
    assert pl.is_schedulable_after_workload_added(pod("p", pod_ref, ns=pod_ns), None, added) is want


def test_the_group_shares_one_deadline_and_loses_it_when_none_is_assumed() -> None:
    handle = FakeHandle([GANG_WL, P1, P2, P3])
    pl = GangScheduling(None, cast(fw.Handle, handle))
    state = fw.CycleState()
    pl.reserve(state, P1, "n")
    first = pl.permit(state, P1, "n")
    assert first is not None and first.timeout == SCHEDULING_TIMEOUT
    handle.clock.t += 100
    pl.reserve(state, P2, "n")
    second = pl.permit(state, P2, "n")
    assert second is not None and second.timeout == SCHEDULING_TIMEOUT - 100
    # Both rejected (their Unreserve runs): the next attempt starts a new deadline.
    pl.unreserve(state, P1, "n")
    pl.unreserve(state, P2, "n")
    handle.clock.t += 50
    pl.reserve(state, P1, "n")
    again = pl.permit(state, P1, "n")
    assert again is not None and again.timeout == SCHEDULING_TIMEOUT


def test_assigned_members_count_towards_the_quorum() -> None:
    bound = attrs.evolve(P2, spec=attrs.evolve(P2.spec, node_name="node-1"))
    handle = FakeHandle(
        [GANG_WL, P1, bound, attrs.evolve(P3, spec=attrs.evolve(P3.spec, node_name="node-2"))]
    )
    pl = GangScheduling(None, cast(fw.Handle, handle))
    state = fw.CycleState()
    pl.reserve(state, P1, "n")
    assert pl.permit(state, P1, "n") is None


def test_permit_errors_when_the_workload_or_group_is_gone() -> None:
    handle = FakeHandle([P1])
    pl = GangScheduling(None, cast(fw.Handle, handle))
    status = pl.permit(fw.CycleState(), P1, "n")
    assert status is not None and status.code is Code.ERROR
    assert status.message() == (
        'failed to get workload ns1/gang-wl: workload.scheduling.k8s.io "gang-wl" not found'
    )
    handle = FakeHandle([workload("gang-wl", gang("other", 2)), P1])
    pl = GangScheduling(None, cast(fw.Handle, handle))
    status = pl.permit(fw.CycleState(), P1, "n")
    assert status is not None and status.code is Code.ERROR
    assert status.message() == 'pod group "pg1" doesn\'t exist for a workload "gang-wl"'
    assert pl.pre_enqueue(P1) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        'pod group "pg1" doesn\'t exist for a workload "gang-wl"',
    )


def test_the_plugin_conforms() -> None:
    # Generated pods carry no workloadRef: the kit checks the contract (points, events, hints
    # on foreign objects) and that such pods are left alone at every point.
    check_plugin(GangScheduling, max_examples=20)
