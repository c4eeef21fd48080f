"""SchedulingQueue: upstream scheduling_queue_test.go, case by case.

Upstream builds the queue from hand-written queueing-hint maps; here the same maps are turned
into small in-test plugins registered on a real Framework, so the hints travel the path they
take in production (``events_to_register`` -> ``Framework.enqueue_extensions`` -> queue).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    PodInfo,
    QueuedPodInfo,
    QueueingHint,
    Status,
)
from schedframe.objects import (
    Affinity,
    Container,
    LabelSelector,
    LabelSelectorRequirement,
    ObjectMeta,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodSpec,
    PodStatus,
    Toleration,
    TopologySpreadConstraint,
)
from schedframe.queue import (
    BACKOFF_COMPLETE,
    EVENT_ASSIGNED_POD_ADD,
    EVENT_FORCE_ACTIVATE,
    EVENT_NODE_ADD,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_UPDATE,
    FORCE_ACTIVATE,
    InFlightEvent,
    QueueError,
    QueueingStrategy,
    SchedulingQueue,
)
from schedframe.runtime import Framework
from schedframe.testing import queue as qt

# --------------------------------------------------------------------------------------------
# Fixtures: clock, pods, plugins
# --------------------------------------------------------------------------------------------

PROFILE = "default-scheduler"
T0 = 1_700_000_000.0  # aligned with the 1 s ordering window


class FakeClock:
    """``now()`` under the test's control (upstream testingclock.FakeClock)."""

    def __init__(self, t: float = T0) -> None:
        self.t = t

    def now(self) -> float:
        return self.t

    def step(self, seconds: float) -> None:
        self.t += seconds


def make_pod(
    name: str,
    *,
    ns: str = "ns1",
    uid: str | None = None,
    priority: int | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    nominated: str = "",
    node: str = "",
    gates: Sequence[str] = (),
    affinity: Affinity | None = None,
    spread: Sequence[TopologySpreadConstraint] = (),
    tolerations: Sequence[Toleration] = (),
    cpu: int | None = None,
) -> Pod:
    containers = (Container(name="c", requests={"cpu": cpu}),) if cpu is not None else ()
    return Pod(
        metadata=ObjectMeta(
            name=name,
            namespace=ns,
            uid=uid if uid is not None else f"{name}{ns}",
            labels=dict(labels or {}),
            annotations=dict(annotations or {}),
        ),
        spec=PodSpec(
            priority=priority,
            node_name=node,
            scheduling_gates=tuple(gates),
            affinity=affinity,
            topology_spread_constraints=tuple(spread),
            tolerations=tuple(tolerations),
            containers=containers,
        ),
        status=PodStatus(nominated_node_name=nominated),
    )


def with_meta(pod: Pod, **changes: Any) -> Pod:
    return attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, **changes))


def with_spec(pod: Pod, **changes: Any) -> Pod:
    return attrs.evolve(pod, spec=attrs.evolve(pod.spec, **changes))


LOW, MID, HIGH = 0, 100, 1000
MEDIUM = (LOW + HIGH) // 2

HIGH_POD = make_pod("hpp", priority=HIGH)
HIGH_NOMINATED_POD = make_pod("hpp", priority=HIGH, nominated="node1")
MED_POD = make_pod(
    "mpp", ns="ns2", priority=MEDIUM, annotations={"annot2": "val2"}, nominated="node1"
)
UNSCHEDULABLE_POD = make_pod("up", priority=LOW, annotations={"annot2": "val2"}, nominated="node1")

NODE_ADD = EVENT_NODE_ADD
PV_ADD = ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD)
PV_UPDATE = ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.UPDATE)
PVC_ADD = ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)
CSI_NODE_UPDATE = ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE)

HintFn = Callable[[Pod, object, object], QueueingHint]


def queue_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    return QueueingHint.QUEUE


def skip_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    return QueueingHint.QUEUE_SKIP


class PrioritySort(fw.QueueSortPlugin):
    """Upstream queuesort.PrioritySort: higher priority first, then the older timestamp."""

    name: ClassVar[str] = "PrioritySort"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        p1, p2 = a.pod.priority, b.pod.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)


def hint_plugin(name: str, events: Sequence[ClusterEventWithHint]) -> fw.Plugin:
    """A Filter plugin named ``name`` that registers ``events`` (one row of a hint map)."""

    class _HintPlugin(fw.FilterPlugin, fw.EnqueueExtensions):
        name: ClassVar[str] = ""

        def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
            return None

        def events_to_register(self) -> Sequence[ClusterEventWithHint]:
            return events

    _HintPlugin.name = name
    return _HintPlugin()


class AllowlistPreEnqueue(fw.PreEnqueuePlugin):
    """Upstream preEnqueuePlugin: admits pods having a label whose key is allowlisted."""

    name: ClassVar[str] = "preEnqueuePlugin"

    def __init__(self, allowlist: Iterable[str] = ()) -> None:
        self.allowlist = list(allowlist)

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if any(key in self.allowlist for key in pod.labels):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pod name not in allowlists")


def preenqueue_with_events(
    name: str, allowlist: Iterable[str], events: Sequence[ClusterEventWithHint]
) -> fw.Plugin:
    class _Gate(AllowlistPreEnqueue, fw.EnqueueExtensions):
        def events_to_register(self) -> Sequence[ClusterEventWithHint]:
            return events

    _Gate.name = name
    return _Gate(allowlist)


class SchedulingGates(fw.PreEnqueuePlugin, fw.EnqueueExtensions):
    """Upstream schedulinggates plugin."""

    name: ClassVar[str] = "SchedulingGates"

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.spec.scheduling_gates:
            return None
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            f"waiting for scheduling gates: {list(pod.spec.scheduling_gates)}",
        )

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                self._hint,
            )
        ]

    def _hint(self, pod: Pod, old: object, new: object) -> QueueingHint:
        if isinstance(new, Pod) and new.uid == pod.uid:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


HintTable = Mapping[ClusterEvent, Sequence[tuple[str, HintFn | None]]]


def new_queue(
    hints: HintTable | None = None,
    *,
    plugins: Sequence[fw.Plugin] = (),
    clock: FakeClock | None = None,
    **options: Any,
) -> tuple[SchedulingQueue, FakeClock]:
    """A queue whose one profile has PrioritySort, ``plugins``, and one plugin per hint row."""
    clock = clock if clock is not None else FakeClock()
    fwk = Framework(profile_name=PROFILE, clock=clock)
    fwk.add_plugin(PrioritySort())
    for plugin in plugins:
        fwk.add_plugin(plugin)
    by_plugin: dict[str, list[ClusterEventWithHint]] = {}
    for event, rows in (hints or {}).items():
        for plugin_name, fn in rows:
            by_plugin.setdefault(plugin_name, []).append(ClusterEventWithHint(event, fn))
    for plugin_name, events in by_plugin.items():
        fwk.add_plugin(hint_plugin(plugin_name, events))
    queue = SchedulingQueue(frameworks={PROFILE: fwk}, clock=clock, **options)
    return queue, clock


def qpi(pod: Pod, *plugins: str, timestamp: float = 0.0) -> QueuedPodInfo:
    """Upstream newQueuedPodInfoForLookup (with a timestamp when one matters)."""
    return QueuedPodInfo(
        pod_info=PodInfo(pod), timestamp=timestamp, unschedulable_plugins=set(plugins)
    )


def new_qpi(queue: SchedulingQueue, clock: FakeClock, pod: Pod, *plugins: str) -> QueuedPodInfo:
    """Upstream q.newQueuedPodInfo: timestamped now."""
    return qpi(pod, *plugins, timestamp=clock.now())


def pop(queue: SchedulingQueue, expected: Pod | None = None) -> QueuedPodInfo:
    got = queue.pop()
    assert got is not None, "nothing to pop"
    if expected is not None:
        assert got.pod.uid == expected.uid, f"popped {got.pod.name}, want {expected.name}"
    return got


def names(pods: Iterable[Pod]) -> list[str]:
    return sorted(p.name for p in pods)


def where(queue: SchedulingQueue, pod: Pod) -> str:
    """Which queue holds the pod: active, backoff, unschedulable, in-flight or none."""
    found = [
        label
        for label, pods in (
            ("active", queue.active_pods()),
            ("backoff", queue.backoff_pods()),
            ("unschedulable", queue.unschedulable_pods()),
            ("in-flight", queue.in_flight_pods()),
        )
        if any(p.uid == pod.uid for p in pods)
    ]
    assert len(found) <= 1, found
    return found[0] if found else "none"


# --------------------------------------------------------------------------------------------
# Add / Pop
# --------------------------------------------------------------------------------------------


def test_add() -> None:
    """TestPriorityQueue_Add."""
    q, _ = new_queue()
    q.add(MED_POD)
    q.add(UNSCHEDULABLE_POD)
    q.add(HIGH_POD)
    assert [p.pod.uid for p in q.nominated_pods_for_node("node1")] == [
        MED_POD.uid,
        UNSCHEDULABLE_POD.uid,
    ]
    pop(q, HIGH_POD)
    pop(q, MED_POD)
    pop(q, UNSCHEDULABLE_POD)
    assert len(q.nominated_pods_for_node("node1")) == 2


def test_add_with_reverse_priority_less_func() -> None:
    """TestPriorityQueue_AddWithReversePriorityLessFunc."""
    q, _ = new_queue()
    q.add(MED_POD)
    q.add(HIGH_POD)
    pop(q, HIGH_POD)
    pop(q, MED_POD)


def test_pop_empties_pending_plugins() -> None:
    """TestPop (with hints): the popped entry has no PendingPlugins left from before."""
    pod = make_pod("targetpod", uid="pod1")
    q, _ = new_queue({PV_ADD: [("fooPlugin1", queue_hint)]})
    q.add(pod)
    popped = pop(q, pod)
    popped.pending_plugins = {"fooPlugin1"}
    q.add_unschedulable_if_not_present(popped, q.scheduling_cycle)
    q.move_all_to_active_or_backoff_queue(PV_ADD)
    popped = pop(q, pod)
    assert popped.pending_plugins == set()


def test_pop_order_ties_broken_by_insertion() -> None:
    q, clock = new_queue()
    pods = [make_pod(f"p{i}", priority=5) for i in range(5)]
    for p in pods:
        q.add(p)  # the clock does not move: equal priority and timestamp
    assert [pop(q).pod.name for _ in pods] == [p.name for p in pods]
    assert q.scheduling_cycle == 5


@pytest.mark.parametrize(
    ("pop_from_backoff_q", "want"),
    [
        pytest.param(True, ["mpp", "hpp"], id="Pop pods from both activeQ and backoffQ"),
        pytest.param(False, ["mpp"], id="Pop pod only from activeQ when PopFromBackoffQ disabled"),
    ],
)
def test_pop_from_backoff_q(pop_from_backoff_q: bool, want: list[str]) -> None:
    """TestPriorityQueue_Pop."""
    high2 = make_pod("hpp2", priority=HIGH)
    q, clock = new_queue(pop_from_backoff_q=pop_from_backoff_q)
    q.add(MED_POD)
    q._backoff.add(new_qpi(q, clock, HIGH_POD, "plugin"))  # podBackoffQ
    q._backoff.add(new_qpi(q, clock, high2))  # podErrorBackoffQ
    q._unschedulable[UNSCHEDULABLE_POD.uid] = new_qpi(q, clock, UNSCHEDULABLE_POD, "plugin")
    got = []
    while (p := q.pop()) is not None:
        got.append(p.pod.name)
    assert got == want


def test_pop_blocks_until_add_or_close() -> None:
    """Pop blocks on the condition variable; Add wakes it, Close makes it return None."""
    q, _ = new_queue()
    results: list[QueuedPodInfo | None] = []
    started = threading.Event()

    def worker() -> None:
        started.set()
        results.append(q.pop(block=True))

    t = threading.Thread(target=worker)
    t.start()
    started.wait(5)
    q.add(HIGH_POD)
    t.join(5)
    assert not t.is_alive()
    assert results[0] is not None and results[0].pod.uid == HIGH_POD.uid

    t = threading.Thread(target=worker)
    t.start()
    started.wait(5)
    q.close()
    t.join(5)
    assert not t.is_alive()
    assert results[1] is None  # TestSchedulingQueue_Close


def test_pop_non_blocking_and_timeout() -> None:
    q, _ = new_queue()
    assert q.pop() is None
    assert q.pop(block=True, timeout=0) is None


# --------------------------------------------------------------------------------------------
# In-flight pods and events (Test_InFlightPods)
# --------------------------------------------------------------------------------------------

POD1 = make_pod("targetpod", ns="", uid="pod1")
POD2 = make_pod("targetpod2", ns="", uid="pod2")
POD3 = make_pod("targetpod3", ns="", uid="pod3")

_Action = tuple[str, object]


@attrs.frozen
class InFlightCase:
    name: str
    hints: HintTable
    initial: tuple[Pod, ...]
    actions: tuple[_Action, ...]
    want_in_flight: tuple[Pod, ...] = ()
    want_events: tuple[Pod | ClusterEvent, ...] = ()
    want_active: tuple[str, ...] | None = None
    want_backoff: tuple[str, ...] | None = None
    want_unschedulable: tuple[str, ...] = ()


def _requeue_pending(pod: Pod) -> QueuedPodInfo:
    info = qpi(pod, "fooPlugin2", "fooPlugin3")
    info.pending_plugins = {"fooPlugin1"}
    return info


_Q1 = {"fooPlugin1": queue_hint}
IN_FLIGHT_CASES = [
    InFlightCase(
        name="Pod and interested events are registered in inFlightPods/inFlightEvents",
        hints={PV_ADD: [("fooPlugin1", queue_hint)]},
        initial=(POD1,),
        actions=(("event", PVC_ADD), ("pop", POD1), ("event", PV_ADD), ("event", PV_UPDATE)),
        want_in_flight=(POD1,),
        want_events=(POD1, PV_ADD),
    ),
    InFlightCase(
        name="Pod, registered in inFlightPods, is enqueued back to backoffQ",
        hints={e: [("fooPlugin1", queue_hint)] for e in (PV_ADD, NODE_ADD, PVC_ADD)},
        initial=(POD1, POD2),
        actions=(
            ("event", PVC_ADD),
            ("pop", POD1),
            ("event", PV_ADD),
            ("pop", POD2),
            ("event", NODE_ADD),
            ("enqueue", qpi(POD1)),
        ),
        want_backoff=("targetpod",),
        want_in_flight=(POD2,),
        want_events=(POD2, NODE_ADD),
    ),
    InFlightCase(
        name="All Pods registered in inFlightPods are enqueued back to activeQ",
        hints={
            e: [("fooPlugin1", queue_hint)] for e in (PV_ADD, NODE_ADD, PVC_ADD, CSI_NODE_UPDATE)
        },
        initial=(POD1, POD2),
        actions=(
            ("event", PVC_ADD),
            ("pop", POD1),
            ("event", PV_ADD),
            ("pop", POD2),
            ("event", NODE_ADD),
            ("enqueue", qpi(POD1)),
            ("event", CSI_NODE_UPDATE),
            ("enqueue", qpi(POD2)),
        ),
        want_backoff=("targetpod", "targetpod2"),
    ),
    InFlightCase(
        name="One intermediate Pod registered in inFlightPods is enqueued back to activeQ",
        hints={e: [("fooPlugin1", queue_hint)] for e in (PV_ADD, NODE_ADD, EVENT_ASSIGNED_POD_ADD)},
        initial=(POD1, POD2, POD3),
        actions=(
            ("event", PVC_ADD),
            ("pop", POD1),
            ("event", PV_ADD),
            ("pop", POD2),
            ("event", NODE_ADD),
            ("pop", POD3),
            ("event", EVENT_ASSIGNED_POD_ADD),
            ("enqueue", qpi(POD2)),
        ),
        want_backoff=("targetpod2",),
        want_in_flight=(POD1, POD3),
        want_events=(POD1, PV_ADD, NODE_ADD, POD3, EVENT_ASSIGNED_POD_ADD),
    ),
    InFlightCase(
        name="events before popping Pod are ignored when Pod is enqueued back to queue",
        hints={EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", skip_hint)]},
        initial=(POD1,),
        actions=(
            ("event", EVENT_UNSCHEDULABLE_TIMEOUT),
            ("pop", POD1),
            ("event", EVENT_ASSIGNED_POD_ADD),
            ("enqueue", qpi(POD1, "fooPlugin1")),
        ),
        want_unschedulable=("targetpod",),
    ),
    InFlightCase(
        name="pod is enqueued to backoff if no failed plugin",
        hints={EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint)]},
        initial=(POD1,),
        actions=(
            ("pop", POD1),
            ("event", EVENT_ASSIGNED_POD_ADD),
            ("enqueue", qpi(POD1)),
        ),
        want_backoff=("targetpod",),
    ),
    InFlightCase(
        name="pod is enqueued to unschedulable pod pool if no events that can make the pod "
        "schedulable",
        hints={EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint)]},
        initial=(POD1,),
        actions=(("pop", POD1), ("event", NODE_ADD), ("enqueue", qpi(POD1, "fooPlugin1"))),
        want_unschedulable=("targetpod",),
    ),
    InFlightCase(
        name="pod is enqueued to unschedulable pod pool because the failed plugin has a hint fn "
        "but it returns Skip",
        hints={EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", skip_hint)]},
        initial=(POD1,),
        actions=(
            ("pop", POD1),
            ("event", EVENT_ASSIGNED_POD_ADD),
            ("enqueue", qpi(POD1, "fooPlugin1")),
        ),
        want_unschedulable=("targetpod",),
    ),
    InFlightCase(
        name="pod is enqueued to activeQ because the Pending plugins has a hint fn and it "
        "returns Queue",
        hints={
            EVENT_ASSIGNED_POD_ADD: [
                ("fooPlugin3", skip_hint),
                ("fooPlugin2", queue_hint),
                ("fooPlugin1", queue_hint),
            ]
        },
        initial=(POD1,),
        actions=(
            ("pop", POD1),
            ("event", EVENT_ASSIGNED_POD_ADD),
            ("enqueue", _requeue_pending(POD1)),
        ),
        want_active=("targetpod",),
    ),
    InFlightCase(
        name="pod is enqueued to backoffQ because the failed plugin has a hint fn and it "
        "returns Queue",
        hints={EVENT_ASSIGNED_POD_ADD: [("fooPlugin2", skip_hint), ("fooPlugin1", queue_hint)]},
        initial=(POD1,),
        actions=(
            ("pop", POD1),
            ("event", EVENT_ASSIGNED_POD_ADD),
            ("enqueue", qpi(POD1, "fooPlugin1", "fooPlugin2")),
        ),
        want_backoff=("targetpod",),
    ),
]


@pytest.mark.parametrize("case", IN_FLIGHT_CASES, ids=lambda c: c.name)
def test_in_flight_pods(case: InFlightCase) -> None:
    """Test_InFlightPods (the cases with queueing hints enabled)."""
    q, clock = new_queue(case.hints)
    for pod in case.initial:
        q.add(pod)
        clock.step(1)
    for kind, arg in case.actions:
        if kind == "pop":
            assert isinstance(arg, Pod)
            pop(q, arg)
        elif kind == "event":
            assert isinstance(arg, ClusterEvent)
            q.move_all_to_active_or_backoff_queue(arg)
        else:
            assert isinstance(arg, QueuedPodInfo)
            q.add_unschedulable_if_not_present(attrs.evolve(arg), q.scheduling_cycle)
    _check_in_flight(q, case)


def _check_in_flight(q: SchedulingQueue, case: InFlightCase) -> None:
    assert names(q.in_flight_pods()) == names(case.want_in_flight)
    want_log = [
        InFlightEvent(item) if isinstance(item, ClusterEvent) else item for item in case.want_events
    ]
    assert q.in_flight_events() == want_log
    if case.want_active is not None:
        assert names(q.active_pods()) == sorted(case.want_active)
    if case.want_backoff is not None:
        assert names(q.backoff_pods()) == sorted(case.want_backoff)
    for name in case.want_unschedulable:
        assert name in names(q.unschedulable_pods())


def test_in_flight_concurrent_event_for_pending_plugin() -> None:
    """Test_InFlightPods: "pod is enqueued to activeQ because the pending plugin has a hint fn
    and it returns Queue for a concurrent event that was received while some other pod was in
    flight"."""
    q, clock = new_queue(
        {
            EVENT_ASSIGNED_POD_ADD: [
                ("fooPlugin3", skip_hint),
                ("fooPlugin2", queue_hint),
                ("fooPlugin1", queue_hint),
            ]
        }
    )
    for pod in (POD1, POD2):
        q.add(pod)
        clock.step(1)
    popped1 = pop(q, POD1)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    popped2 = pop(q, POD2)
    q.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_ADD)
    q.add_unschedulable_if_not_present(popped1, q.scheduling_cycle)
    popped2.unschedulable_plugins = {"fooPlugin2", "fooPlugin3"}
    popped2.pending_plugins = {"fooPlugin1"}
    q.add_unschedulable_if_not_present(popped2, q.scheduling_cycle)
    assert names(q.active_pods()) == ["targetpod2"]
    assert names(q.backoff_pods()) == ["targetpod"]
    assert q.in_flight_pods() == [] and q.in_flight_events() == []


def test_in_flight_popped_pod_has_empty_plugins() -> None:
    """Test_InFlightPods: "popped pod must have empty UnschedulablePlugins and PendingPlugins"."""
    q, _ = new_queue({PV_ADD: [("fooPlugin1", queue_hint)]})
    q.add(POD1)
    popped = pop(q, POD1)
    popped.pending_plugins = {"fooPlugin1"}
    popped.unschedulable_plugins = {"fooPlugin2"}
    q.add_unschedulable_if_not_present(popped, q.scheduling_cycle)
    assert where(q, POD1) == "unschedulable"
    q.move_all_to_active_or_backoff_queue(PV_ADD)
    assert where(q, POD1) == "active"  # a Pending plugin said Queue: no backoff
    popped = pop(q, POD1)
    assert popped.unschedulable_plugins == set()
    assert popped.pending_plugins == set()
    q.add_unschedulable_if_not_present(popped, q.scheduling_cycle)  # failed: no rejector
    assert where(q, POD1) == "backoff"


def test_in_flight_pop_twice_for_same_pod_is_discarded() -> None:
    """Test_InFlightPods: "Pop is made twice for the same Pod, but the cleanup still happen
    correctly"."""
    hints = {e: [("fooPlugin1", queue_hint)] for e in (PV_ADD, NODE_ADD, PVC_ADD, CSI_NODE_UPDATE)}
    q, clock = new_queue(hints)
    for pod in (POD1, POD2):
        q.add(pod)
        clock.step(1)
    q.move_all_to_active_or_backoff_queue(PVC_ADD)
    pop(q, POD1)
    q.move_all_to_active_or_backoff_queue(PV_ADD)
    pop(q, POD2)
    # Simulate a bug: pod1 is put into the activeQ while it is being scheduled.
    q._active.heap.add_or_update(qpi(POD1))
    q.add(POD3)
    pop(q, POD3)  # pod1 is the head but in flight: discarded
    assert q.active_pods() == []
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    q.add_unschedulable_if_not_present(qpi(POD1), q.scheduling_cycle)
    q.move_all_to_active_or_backoff_queue(CSI_NODE_UPDATE)
    q.add_unschedulable_if_not_present(qpi(POD2), q.scheduling_cycle)
    q.add_unschedulable_if_not_present(qpi(POD3), q.scheduling_cycle)
    assert names(q.backoff_pods()) == ["targetpod", "targetpod2", "targetpod3"]
    assert q.in_flight_pods() == [] and q.in_flight_events() == []


# --------------------------------------------------------------------------------------------
# AddUnschedulableIfNotPresent
# --------------------------------------------------------------------------------------------


def test_add_unschedulable_if_not_present() -> None:
    """TestPriorityQueue_AddUnschedulableIfNotPresent."""
    q, _ = new_queue()
    q.add(UNSCHEDULABLE_POD)
    pop(q, UNSCHEDULABLE_POD)
    q.add(HIGH_NOMINATED_POD)
    q.add_unschedulable_if_not_present(qpi(UNSCHEDULABLE_POD, "plugin"), q.scheduling_cycle)
    pop(q, HIGH_NOMINATED_POD)
    assert len(q._nominator.snapshot()) == 1
    assert where(q, UNSCHEDULABLE_POD) == "unschedulable"


def test_add_unschedulable_if_not_present_refuses_queued_pods() -> None:
    q, _ = new_queue()
    q.add(HIGH_POD)
    with pytest.raises(QueueError, match="already present in the active queue"):
        q.add_unschedulable_if_not_present(qpi(HIGH_POD, "p"), 0)
    q.add(MED_POD)
    q.add_unschedulable_if_not_present(pop(q, HIGH_POD), 0)  # error: backoffQ
    q.add_unschedulable_if_not_present(qpi(pop(q, MED_POD).pod, "p"), 0)  # no events: pool
    with pytest.raises(QueueError, match="ns2/mpp is already present in unschedulable queue"):
        q.add_unschedulable_if_not_present(qpi(MED_POD, "p"), 0)
    with pytest.raises(QueueError, match="already present in the backoff queue"):
        q.add_unschedulable_if_not_present(qpi(HIGH_POD), 0)


def test_add_unschedulable_if_not_present_backoff() -> None:
    """TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff: a move request during the
    pods' cycle sends them to the backoffQ."""
    q, _ = new_queue()
    pods = [make_pod(f"pod{i}", ns=f"ns{i}", uid=f"upns{i}", priority=i) for i in range(10)]
    for p in pods:
        q.add(p)
    for i in range(9, 0, -1):
        pop(q, pods[i])
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    cycle = q.scheduling_cycle
    pop(q, pods[0])
    for p in pods[1:]:
        q.add_unschedulable_if_not_present(qpi(p, "plugin"), cycle)
    assert names(q.backoff_pods()) == names(pods[1:])


def test_counters_on_requeue() -> None:
    """UnschedulableCount / ConsecutiveErrorsCount bookkeeping of AddUnschedulableIfNotPresent."""
    q, clock = new_queue()
    q.add(HIGH_POD)
    info = pop(q)
    q.add_unschedulable_if_not_present(info, 0)  # error
    assert (info.unschedulable_count, info.consecutive_errors_count) == (0, 1)
    clock.step(5)
    q.flush_backoff_q_completed()
    info = pop(q)
    info.unschedulable_plugins = {"p"}
    q.add_unschedulable_if_not_present(info, 0)  # rejection: errors reset
    assert (info.unschedulable_count, info.consecutive_errors_count) == (1, 0)
    assert info.timestamp == clock.now()


# --------------------------------------------------------------------------------------------
# Update / Delete / Activate
# --------------------------------------------------------------------------------------------

QUEUE_PLUGIN, SKIP_PLUGIN = "queuePlugin", "skipPlugin"
UPDATE_HINTS: HintTable = {
    EVENT_UNSCHEDULED_POD_UPDATE: [(QUEUE_PLUGIN, queue_hint), (SKIP_PLUGIN, skip_hint)]
}


def _prep_not_in_queue(q: SchedulingQueue, c: FakeClock) -> tuple[Pod, Pod]:
    return MED_POD, with_meta(MED_POD, annotations={"annot2": "val2", "foo": "test"})


def _prep_nominate(q: SchedulingQueue, c: FakeClock) -> tuple[Pod, Pod]:
    return HIGH_POD, HIGH_NOMINATED_POD


def _prep_in_active(q: SchedulingQueue, c: FakeClock) -> tuple[Pod, Pod]:
    q.add(HIGH_POD)
    return HIGH_POD, HIGH_POD


def _prep_in_backoff(q: SchedulingQueue, c: FakeClock) -> tuple[Pod, Pod]:
    q._backoff.add(new_qpi(q, c, MED_POD))
    return MED_POD, MED_POD


def _prep_unsched(
    plugin: str, step: float
) -> Callable[[SchedulingQueue, FakeClock], tuple[Pod, Pod]]:
    def prep(q: SchedulingQueue, c: FakeClock) -> tuple[Pod, Pod]:
        info = new_qpi(q, c, MED_POD, plugin)
        info.unschedulable_count += 1
        q._unschedulable[MED_POD.uid] = info
        c.step(step)
        return MED_POD, with_meta(MED_POD, annotations={"annot2": "val2", "foo": "test1"})

    return prep


def _prep_in_flight(q: SchedulingQueue, c: FakeClock) -> tuple[Pod, Pod]:
    q.add(MED_POD)
    pop(q, MED_POD)
    return MED_POD, with_meta(MED_POD, annotations={"annot2": "val2", "foo": "bar"})


@pytest.mark.parametrize(
    ("prepare", "want_q", "want_nominated"),
    [
        pytest.param(_prep_not_in_queue, "active", False, id="Update pod that didn't exist in the queue"),
        pytest.param(_prep_nominate, "active", True, id="Update highPriorityPodInfo and add a nominatedNodeName to it"),
        pytest.param(_prep_in_active, "active", False, id="pod already in activeQ remains in activeQ"),
        pytest.param(_prep_in_backoff, "backoff", False, id="pod in backoffQ still backing off is updated in backoffQ"),
        pytest.param(_prep_unsched(QUEUE_PLUGIN, 0), "backoff", False, id="unschedulable pod still backing off moves to backoffQ"),
        pytest.param(_prep_unsched(QUEUE_PLUGIN, 10), "active", False, id="unschedulable pod done backing off moves to activeQ"),
        pytest.param(_prep_unsched(SKIP_PLUGIN, 0), "unschedulable", False, id="hint QueueSkip: remains in unschedulablePods"),
        pytest.param(_prep_in_flight, "in-flight", False, id="pod in flight is not added to any queue"),
    ],
)  # fmt: skip
def test_update(
    prepare: Callable[[SchedulingQueue, FakeClock], tuple[Pod, Pod]],
    want_q: str,
    want_nominated: bool,
) -> None:
    """TestPriorityQueue_Update."""
    q, clock = new_queue(UPDATE_HINTS)
    old, new = prepare(q, clock)
    q.update(old, new)
    assert where(q, new) == want_q
    if want_q != "in-flight":
        info = q.get_queued_pod_info(new.uid)
        assert info is not None and info.pod == new
    if want_nominated:
        assert len(q._nominator.snapshot()) == 1


def test_update_keeps_position_in_active_q() -> None:
    q, clock = new_queue()
    a, b, c = (make_pod(n, priority=1) for n in "abc")
    for p in (a, b, c):
        q.add(p)
        clock.step(1)
    q.update(a, with_meta(a, labels={"x": "y"}))
    assert [p.name for p in q.active_pods()] == ["a", "b", "c"]
    q.update(c, with_spec(c, priority=2))  # an update may change the order
    assert [p.name for p in q.active_pods()] == ["c", "a", "b"]


def test_update_status_only_keeps_unschedulable_pod() -> None:
    """An update of the status alone (isPodUpdated false) cannot make the pod schedulable."""
    q, _ = new_queue(UPDATE_HINTS)
    q.add(MED_POD)
    info = pop(q, MED_POD)
    info.unschedulable_plugins = {QUEUE_PLUGIN}
    q.add_unschedulable_if_not_present(info, 0)
    q.update(MED_POD, MED_POD.with_nominated_node_name("node9"))
    assert where(q, MED_POD) == "unschedulable"
    assert q.nominated_pods_for_node("node9")[0].pod.uid == MED_POD.uid


def test_update_when_in_flight() -> None:
    """TestPriorityQueue_UpdateWhenInflight."""
    q, _ = new_queue({EVENT_UNSCHEDULED_POD_UPDATE: [("fakePlugin", queue_hint)]})
    pod = make_pod("test-pod", ns="test-ns", uid="test-uid")
    q.add(pod)
    pop(q, pod)
    updated = with_spec(pod, tolerations=(Toleration(key="foo", effect="NoSchedule"),))
    q.update(pod, updated)
    q.add_unschedulable_if_not_present(qpi(updated, "fakePlugin"), q.scheduling_cycle)
    info = q.get_queued_pod_info(updated.uid)
    assert where(q, updated) == "backoff"
    assert info is not None and info.pod == updated


def test_delete() -> None:
    """TestPriorityQueue_Delete."""
    q, _ = new_queue()
    q.update(HIGH_POD, HIGH_NOMINATED_POD)
    q.add(UNSCHEDULABLE_POD)
    q.delete(HIGH_NOMINATED_POD)
    assert where(q, UNSCHEDULABLE_POD) == "active"
    assert where(q, HIGH_NOMINATED_POD) == "none"
    assert q._nominator.snapshot() == {"node1": [UNSCHEDULABLE_POD.uid]}
    q.delete(UNSCHEDULABLE_POD)
    assert q._nominator.snapshot() == {}


@pytest.mark.parametrize(
    ("setup", "want_active", "want_force_event"),
    [
        pytest.param("active", 1, False, id="pod already in activeQ"),
        pytest.param("none", 0, False, id="pod not in unschedulablePods/backoffQ"),
        pytest.param("in-flight", 0, True, id="[QHint] pod not in unschedulablePods/backoffQ but in-flight"),
        pytest.param("other-in-flight", 0, False, id="[QHint] pod not in unschedulablePods/backoffQ and not in-flight"),
        pytest.param("unschedulable", 1, False, id="pod in unschedulablePods"),
        pytest.param("backoff", 1, False, id="pod in backoffQ"),
    ],
)  # fmt: skip
def test_activate(setup: str, want_active: int, want_force_event: bool) -> None:
    """TestPriorityQueue_Activate."""
    q, _ = new_queue()
    pod = HIGH_NOMINATED_POD
    if setup in ("in-flight", "other-in-flight"):
        in_flight = pod if setup == "in-flight" else MED_POD
        q._active.heap.add_or_update(qpi(in_flight))
        pop(q, in_flight)
        assert len(q.in_flight_events()) == 1
    elif setup == "active":
        q.add(pod)
    elif setup == "unschedulable":
        q._unschedulable[pod.uid] = qpi(pod)
    elif setup == "backoff":
        q._backoff.add(qpi(pod))
    q.activate([pod])
    assert len(q.active_pods()) == want_active
    if want_force_event:
        assert q.in_flight_events() == [pod, InFlightEvent(EVENT_FORCE_ACTIVATE, None, pod)]
    else:
        assert len(q.in_flight_events()) == (1 if "in-flight" in setup else 0)
    if want_active:
        assert where(q, pod) == "active"


def test_activate_in_flight_pod_requeues_it_when_it_comes_back() -> None:
    q, _ = new_queue({NODE_ADD: [("fooPlugin", skip_hint)]})
    q.add(HIGH_POD)
    info = pop(q)
    q.activate([HIGH_POD])
    info.unschedulable_plugins = {"fooPlugin"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert where(q, HIGH_POD) == "backoff"  # ForceActivate: queue after backoff


# --------------------------------------------------------------------------------------------
# PreEnqueue gating
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("allowlist", "labels", "event", "moves_from_backoff", "pop_from_backoff_modes", "want_unsched", "want_success"),
    [
        pytest.param(None, {"p": ""}, EVENT_UNSCHEDULED_POD_ADD.label(), False, (True, False), 0, True, id="no plugins registered"),
        pytest.param([], {"p": ""}, EVENT_UNSCHEDULED_POD_ADD.label(), False, (True, False), 1, False, id="preEnqueue plugin registered, pod name not in allowlists"),
        pytest.param(["foo"], {"bar": ""}, EVENT_UNSCHEDULED_POD_ADD.label(), False, (True, False), 1, False, id="preEnqueue plugin registered, pod failed one preEnqueue plugin"),
        pytest.param(["foo"], {"bar": ""}, BACKOFF_COMPLETE, False, (False,), 1, False, id="preEnqueue rejects the pod, even if it is after backoff"),
        pytest.param(["foo"], {"bar": ""}, BACKOFF_COMPLETE, True, (True,), 0, True, id="moved from backoffQ after completing backoff, so preEnqueue is not executed"),
        pytest.param(["foo"], {"bar": ""}, FORCE_ACTIVATE, False, (True,), 1, False, id="pod failed one preEnqueue plugin when activated from unschedulablePods"),
        pytest.param(["foo"], {"bar": ""}, FORCE_ACTIVATE, True, (True,), 0, True, id="activated from backoffQ, so preEnqueue is not executed"),
        pytest.param(["bar"], {"bar": ""}, EVENT_UNSCHEDULED_POD_ADD.label(), False, (True, False), 0, True, id="pod passed all preEnqueue plugins"),
    ],
)  # fmt: skip
def test_move_to_active_q(
    allowlist: list[str] | None,
    labels: dict[str, str],
    event: str,
    moves_from_backoff: bool,
    pop_from_backoff_modes: tuple[bool, ...],
    want_unsched: int,
    want_success: bool,
) -> None:
    """TestPriorityQueue_moveToActiveQ."""
    for mode in pop_from_backoff_modes:
        # Upstream registers two same-named plugins in a map: only the last one remains.
        plugins: list[fw.Plugin] = [] if allowlist is None else [AllowlistPreEnqueue(allowlist)]
        q, clock = new_queue(
            plugins=plugins, pod_initial_backoff=30.0, pod_max_backoff=60.0, pop_from_backoff_q=mode
        )
        pod = make_pod("p", labels=labels)
        assert (
            q._move_to_active_q(new_qpi(q, clock, pod), event, moves_from_backoff) is want_success
        )
        assert len(q.unschedulable_pods()) == want_unsched
        q.update(pod, with_meta(pod, annotations={"foo": ""}))
        assert len(q.unschedulable_pods()) == want_unsched


@pytest.mark.parametrize(
    ("allowlist", "labels", "pop_from_backoff_modes", "want_success"),
    [
        pytest.param(None, {"p": ""}, (True, False), True, id="no plugins registered"),
        pytest.param([], {"p": ""}, (False,), True, id="pod name would not be in allowlists, but PreEnqueue isn't run"),
        pytest.param([], {"p": ""}, (True,), False, id="preEnqueue plugin registered, pod name not in allowlists"),
        pytest.param(["foo"], {"bar": ""}, (False,), True, id="preEnqueue plugin would reject the pod, but isn't run"),
        pytest.param(["foo"], {"bar": ""}, (True,), False, id="preEnqueue plugin registered, pod failed one preEnqueue plugin"),
        pytest.param(["bar"], {"bar": ""}, (True, False), True, id="preEnqueue plugin registered, pod passed all preEnqueue plugins"),
    ],
)  # fmt: skip
def test_move_to_backoff_q(
    allowlist: list[str] | None,
    labels: dict[str, str],
    pop_from_backoff_modes: tuple[bool, ...],
    want_success: bool,
) -> None:
    """TestPriorityQueue_moveToBackoffQ."""
    for mode in pop_from_backoff_modes:
        plugins: list[fw.Plugin] = [] if allowlist is None else [AllowlistPreEnqueue(allowlist)]
        q, clock = new_queue(plugins=plugins, pop_from_backoff_q=mode)
        pod = make_pod("p", labels=labels)
        assert (
            q._move_to_backoff_q(new_qpi(q, clock, pod), EVENT_UNSCHEDULED_POD_ADD.label())
            is want_success
        )
        assert where(q, pod) == ("backoff" if want_success else "unschedulable")


def test_gated_set_upon_creation_and_unset_upon_update() -> None:
    """Test_queuedPodInfo_gatedSetUponCreationAndUnsetUponUpdate."""
    q, _ = new_queue(plugins=[SchedulingGates()])
    gated = make_pod("p", gates=["hello world"])
    q.add(gated)
    info = q.get_queued_pod_info(gated.uid)
    assert info is not None and info.gated and info.gating_plugin == "SchedulingGates"
    assert info.unschedulable_plugins == {"SchedulingGates"}
    assert q.gated_pods() == [gated] and q.unschedulable_pods() == [gated]
    q.update(gated, with_spec(gated, scheduling_gates=()))
    popped = pop(q)
    assert not popped.gated


class CountingGate(fw.PreEnqueuePlugin, fw.EnqueueExtensions):
    """Gates pods labelled ``gate=<name>``; counts its calls."""

    name: ClassVar[str] = ""

    def __init__(self) -> None:
        self.calls = 0

    def pre_enqueue(self, pod: Pod) -> Status | None:
        self.calls += 1
        if pod.labels.get("gate") == self.name:
            return Status(Code.UNSCHEDULABLE, f"gated by {self.name}")
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL))]


def test_gating_plugin_rechecked_first() -> None:
    """runPreEnqueuePlugins: the recorded gating plugin runs first and alone while it gates."""
    first = type("GateA", (CountingGate,), {"name": "GateA"})()
    second = type("GateB", (CountingGate,), {"name": "GateB"})()
    q, _ = new_queue(plugins=[first, second])
    pod = make_pod("p", labels={"gate": "GateB"})
    q.add(pod)
    info = q.get_queued_pod_info(pod.uid)
    assert info is not None and info.gating_plugin == "GateB"
    assert (first.calls, second.calls) == (1, 1)
    # A label update that keeps the gate: only GateB is asked.
    q.update(pod, with_meta(pod, labels={"gate": "GateB", "x": "1"}))
    assert (first.calls, second.calls) == (1, 2)
    assert q.gated_pods()[0].labels["x"] == "1"
    # Gate lifted: GateB first, then all plugins in order.
    lifted = with_meta(pod, labels={"x": "2"})
    q.update(pod, lifted)
    assert where(q, lifted) == "active"
    assert (first.calls, second.calls) == (2, 3)  # each plugin once more
    assert q.gated_pods() == []


def test_pre_enqueue_exception_gates_the_pod() -> None:
    class Boom(fw.PreEnqueuePlugin):
        name: ClassVar[str] = "Boom"

        def pre_enqueue(self, pod: Pod) -> Status | None:
            raise RuntimeError("boom")

    q, _ = new_queue(plugins=[Boom()])
    q.add(HIGH_POD)
    assert q.gated_pods() == [HIGH_POD]


# --------------------------------------------------------------------------------------------
# Cluster events and queueing hints
# --------------------------------------------------------------------------------------------

AFFINITY_POD = make_pod(
    "afp",
    uid="afp",
    annotations={"annot2": "val2"},
    affinity=Affinity(
        pod_affinity=PodAffinity(
            required=(
                PodAffinityTerm(
                    label_selector=LabelSelector(
                        match_expressions=(
                            LabelSelectorRequirement(key="service", operator="Exists"),
                        )
                    ),
                    topology_key="region",
                ),
            )
        )
    ),
)
SPREAD_POD = make_pod(
    "tsp",
    uid="tsp",
    spread=[
        TopologySpreadConstraint(
            max_skew=1, topology_key="node", when_unsatisfiable="DoNotSchedule"
        )
    ],
)
PLAIN_POD = make_pod("afp", uid="afp", annotations={"annot2": "val2"})
MATCHING_ASSIGNED = make_pod("lbp", labels={"service": "securityscan"}, node="node1")
UNRELATED_ASSIGNED = make_pod(
    "lbp", ns="unrelated", labels={"unrelated": "unrelated"}, node="node1"
)


def _hint_pending(pod: Pod) -> QueuedPodInfo:
    info = qpi(pod)
    info.pending_plugins = {"foo"}
    return info


def _gated(pod: Pod, plugin: str) -> QueuedPodInfo:
    info = qpi(pod, plugin)
    info.gating_plugin = plugin
    return info


def _raising_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    raise AssertionError("QueueingHintFn should not be called as pod is gated")


FOO_POD = make_pod("pod1", uid="1", labels={"foo": "bar"})


@pytest.mark.parametrize(
    ("info", "hint", "duration", "want"),
    [
        pytest.param(_hint_pending(FOO_POD), queue_hint, 0.0, "active", id="Queue queues pod to activeQ"),
        pytest.param(qpi(FOO_POD, "foo"), queue_hint, 0.0, "backoff", id="Queue queues pod to backoffQ if Pod is backing off"),
        pytest.param(qpi(FOO_POD, "foo"), queue_hint, 2.0, "active", id="Queue queues pod to activeQ if Pod is not backing off"),
        pytest.param(qpi(FOO_POD, "foo"), skip_hint, 0.0, "unschedulable", id="Skip queues pod to unschedulablePods"),
        pytest.param(_gated(FOO_POD, "SchedulingGates"), _raising_hint, 0.0, "unschedulable", id="QueueHintFunction is not called when Pod is gated by the plugin that isn't interested in the event"),
        pytest.param(_gated(FOO_POD, "foo"), queue_hint, 0.0, "backoff", id="QueueHintFunction is called when Pod is gated by the plugin that is interested in the event"),
    ],
)  # fmt: skip
def test_move_all_with_queueing_hint(
    info: QueuedPodInfo, hint: HintFn, duration: float, want: str
) -> None:
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint."""
    foo = preenqueue_with_events("foo", ["foo"], [ClusterEventWithHint(NODE_ADD, hint)])
    gates = SchedulingGates()
    q, clock = new_queue(plugins=[gates, foo])
    q.add(info.pod)
    pop(q, info.pod)
    info = attrs.evolve(info)
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    clock.step(duration)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert where(q, info.pod) == want


def test_move_all_to_active_or_backoff_queue() -> None:
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueue."""
    q, clock = new_queue({NODE_ADD: [("fooPlugin", queue_hint)]})

    def in_flight() -> list[str]:
        return names(q.in_flight_pods())

    q.add(UNSCHEDULABLE_POD)
    pop(q, UNSCHEDULABLE_POD)
    q.add(HIGH_POD)
    pop(q, HIGH_POD)
    assert in_flight() == ["hpp", "up"]
    q.add_unschedulable_if_not_present(new_qpi(q, clock, UNSCHEDULABLE_POD, "fooPlugin"), 0)
    q.add_unschedulable_if_not_present(new_qpi(q, clock, HIGH_POD, "fooPlugin"), 0)
    assert in_flight() == []
    hpp1 = make_pod("hpp1", priority=HIGH)
    q.add(hpp1)
    pop(q, hpp1)
    info = new_qpi(q, clock, hpp1)
    info.unschedulable_count += 1
    q.add_unschedulable_if_not_present(info, 0)  # no plugin: backoffQ
    hpp2 = make_pod("hpp2", priority=HIGH)
    q.add(hpp2)
    pop(q, hpp2)
    q.add_unschedulable_if_not_present(new_qpi(q, clock, hpp2, "barPlugin"), 0)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    q.add(MED_POD)
    assert len(q.active_pods()) == 1
    pop(q, MED_POD)
    assert in_flight() == ["mpp"]
    assert len(q.backoff_pods()) == 3  # hpp2 was not moved

    clock.step(q.pod_max_backoff)
    assert len(q._backoff.pop_all_backoff_completed()) == 3  # dropped; not in flight
    assert in_flight() == ["mpp"]

    for pod in (UNSCHEDULABLE_POD, HIGH_POD, hpp1):
        q.add(pod)
        pop(q, pod)
    assert in_flight() == ["hpp", "hpp1", "mpp", "up"]
    q.add_unschedulable_if_not_present(new_qpi(q, clock, UNSCHEDULABLE_POD, "fooPlugin"), 0)
    q.add_unschedulable_if_not_present(new_qpi(q, clock, HIGH_POD, "fooPlugin"), 0)
    q.add_unschedulable_if_not_present(new_qpi(q, clock, hpp1), 0)
    assert in_flight() == ["mpp"]
    q.add(MED_POD)
    assert names(q.unschedulable_pods()) == ["hpp", "hpp2", "up"]
    assert names(q.backoff_pods()) == ["hpp1"]
    assert len(q.active_pods()) == 1

    clock.step(q.pod_max_backoff)
    q.flush_backoff_q_completed()
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert len(q.active_pods()) == 4
    assert q.backoff_pods() == []
    assert in_flight() == ["mpp"]
    assert names(q.unschedulable_pods()) == ["hpp2"]


@pytest.mark.parametrize(
    ("unsched_pod", "plugin", "assigned", "want"),
    [
        pytest.param(AFFINITY_POD, "InterPodAffinity", MATCHING_ASSIGNED, True, id="Pod rejected by pod affinity is requeued with matching Pod's update"),
        pytest.param(AFFINITY_POD, "InterPodAffinity", UNRELATED_ASSIGNED, False, id="Pod rejected by pod affinity isn't requeued with unrelated Pod's update"),
        pytest.param(SPREAD_POD, "PodTopologySpread", MATCHING_ASSIGNED, True, id="Pod rejected by pod topology spread is requeued with Pod's update in the same namespace"),
        pytest.param(AFFINITY_POD, "PodTopologySpread", UNRELATED_ASSIGNED, False, id="Pod rejected by pod topology spread isn't requeued with unrelated Pod's update"),
        pytest.param(PLAIN_POD, "fakePlugin", UNRELATED_ASSIGNED, False, id="Pod rejected by other plugins isn't requeued with any Pod's update"),
    ],
)  # fmt: skip
def test_assigned_pod_added(unsched_pod: Pod, plugin: str, assigned: Pod, want: bool) -> None:
    """TestPriorityQueue_AssignedPodAdded_."""
    q, clock = new_queue(
        {
            EVENT_ASSIGNED_POD_ADD: [
                ("fakePlugin", queue_hint),
                ("InterPodAffinity", queue_hint),
                ("PodTopologySpread", queue_hint),
            ]
        }
    )
    q.add(unsched_pod)
    pop(q, unsched_pod)
    q.add_unschedulable_if_not_present(new_qpi(q, clock, unsched_pod, plugin), q.scheduling_cycle)
    clock.step(2)
    q.assigned_pod_added(assigned)
    assert (where(q, unsched_pod) == "active") is want


POD_LABEL = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL)
POD_SCALE_DOWN = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN)


@pytest.mark.parametrize(
    ("unsched_pod", "plugin", "event", "assigned", "want"),
    [
        pytest.param(AFFINITY_POD, "InterPodAffinity", POD_LABEL, MATCHING_ASSIGNED, True, id="Pod rejected by pod affinity is requeued with matching Pod's update"),
        pytest.param(AFFINITY_POD, "InterPodAffinity", POD_LABEL, UNRELATED_ASSIGNED, False, id="Pod rejected by pod affinity isn't requeued with unrelated Pod's update"),
        pytest.param(SPREAD_POD, "PodTopologySpread", POD_LABEL, MATCHING_ASSIGNED, True, id="Pod rejected by pod topology spread is requeued with Pod's update in the same namespace"),
        pytest.param(AFFINITY_POD, "PodTopologySpread", POD_LABEL, UNRELATED_ASSIGNED, False, id="Pod rejected by pod topology spread isn't requeued with unrelated Pod's update"),
        pytest.param(make_pod("rp", uid="afp", cpu=1000), "NodeResourcesFit", ActionType.UPDATE_POD_SCALE_DOWN, make_pod("lbp", ns="ns2", node="node1"), True, id="Pod rejected by resource fit is requeued with assigned Pod's scale down"),
        pytest.param(PLAIN_POD, "fakePlugin", POD_LABEL, UNRELATED_ASSIGNED, False, id="Pod rejected by other plugins isn't requeued with any Pod's update"),
    ],
)  # fmt: skip
def test_assigned_pod_updated(
    unsched_pod: Pod, plugin: str, event: ClusterEvent | ActionType, assigned: Pod, want: bool
) -> None:
    """TestPriorityQueue_AssignedPodUpdated."""
    q, clock = new_queue(
        {
            POD_LABEL: [
                ("fakePlugin", queue_hint),
                ("InterPodAffinity", queue_hint),
                ("PodTopologySpread", queue_hint),
            ],
            POD_SCALE_DOWN: [("NodeResourcesFit", queue_hint)],
        }
    )
    q.add(unsched_pod)
    pop(q, unsched_pod)
    q.add_unschedulable_if_not_present(new_qpi(q, clock, unsched_pod, plugin), q.scheduling_cycle)
    clock.step(2)
    q.assigned_pod_updated(None, assigned, event)
    assert (where(q, unsched_pod) == "active") is want


def test_node_and_assigned_pod_helpers() -> None:
    from schedframe.objects import Node, NodeSpec

    taint_plugin = "TaintToleration"
    q, clock = new_queue(
        {
            NODE_ADD: [("NodeAffinity", queue_hint)],
            ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL): [
                ("NodeAffinity", queue_hint)
            ],
            ClusterEvent(EventResource.NODE, ActionType.DELETE): [("Deleter", queue_hint)],
            ClusterEvent(EventResource.POD, ActionType.DELETE): [("Fit", queue_hint)],
        }
    )
    pods = [make_pod(f"p{i}") for i in range(5)]
    plugins = ["NodeAffinity", taint_plugin, "Deleter", "Fit", "NodeAffinity"]
    for pod, plugin in zip(pods, plugins, strict=True):
        q.add(pod)
        pop(q, pod)
        q.add_unschedulable_if_not_present(new_qpi(q, clock, pod, plugin), 0)
    clock.step(2)
    node = Node(metadata=ObjectMeta(name="n1"))
    # NodeAffinity registered Node/Add without UpdateNodeTaint: it gets the taint event too.
    q.node_updated(node, attrs.evolve(node, spec=NodeSpec(taints=())))  # no change, no event
    assert len(q.unschedulable_pods()) == 5
    q.node_updated(
        attrs.evolve(node, spec=NodeSpec(unschedulable=True)), node
    )  # became schedulable: UpdateNodeTaint
    assert where(q, pods[0]) == "active" and where(q, pods[4]) == "active"
    q.node_deleted(node)
    assert where(q, pods[2]) == "active"
    q.assigned_pod_deleted(make_pod("bound", node="n1"))
    assert where(q, pods[3]) == "active"
    q.node_added(node)
    assert names(q.unschedulable_pods()) == ["p1"]


@pytest.mark.parametrize(
    ("event", "pre_check", "want"),
    [
        pytest.param(EVENT_UNSCHEDULABLE_TIMEOUT, None, {"p0", "p1", "p2", "p3", "p4"}, id="nil PreEnqueueCheck"),
        pytest.param(EVENT_UNSCHEDULABLE_TIMEOUT, lambda p: p.priority >= 2, {"p2", "p3", "p4"}, id="move Pods with priority greater than 2"),
        pytest.param(EVENT_UNSCHEDULABLE_TIMEOUT, lambda p: p.priority % 2 == 0 and p.priority >= 2, {"p2", "p4"}, id="move Pods with even priority and greater than 2"),
        pytest.param(EVENT_UNSCHEDULABLE_TIMEOUT, lambda p: p.priority % 2 == 0 and p.priority < 0, set(), id="move Pods with even and negative priority"),
        pytest.param(PV_ADD, lambda p: pytest.fail("preCheck shouldn't be called"), set(), id="preCheck isn't called if the event is not interested by any plugins"),
    ],
)  # fmt: skip
def test_move_all_pre_enqueue_checks(
    event: ClusterEvent, pre_check: Callable[[Pod], bool] | None, want: set[str]
) -> None:
    """TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks."""
    q, clock = new_queue()
    for i in range(5):
        pod = make_pod(f"p{i}", ns="", priority=i)
        q.add(pod)
        info = pop(q, pod)
        info.unschedulable_plugins = {"plugin"}
        q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    q.move_all_to_active_or_backoff_queue(event, None, None, pre_check)
    clock.step(2 * q.pod_max_backoff)
    assert {i.pod.name for i in q._backoff.pop_all_backoff_completed()} == want


def _counting(kind: str, counter: list[int]) -> HintFn:
    def fn(pod: Pod, old: object, new: object) -> QueueingHint:
        counter[0] += 1
        if kind == "err":
            raise RuntimeError("unexpected error")
        return QueueingHint.QUEUE if kind == "queue" else QueueingHint.QUEUE_SKIP

    return fn


_P1 = make_pod("pod1", uid="1")
_NODE_LABEL = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)
_NODE_UPDATE = ClusterEvent(EventResource.NODE, ActionType.UPDATE)
_WILD_ADD = ClusterEvent(EventResource.WILDCARD, ActionType.ADD)
_WILD_ALL = ClusterEvent(EventResource.WILDCARD, ActionType.ALL)
_NODE_LABEL_TAINT = ClusterEvent(
    EventResource.NODE, ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
)


@pytest.mark.parametrize(
    ("unsched", "pending", "event", "new_obj", "table", "want", "want_count"),
    [
        pytest.param({"fooPlugin1"}, set(), NODE_ADD, "node", {EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", "queue")]}, QueueingStrategy.QUEUE_SKIP, 0, id="return Queue when no queueing hint function is registered for the event"),
        pytest.param({"fooPlugin1"}, set(), NODE_ADD, "node", {NODE_ADD: [("fooPlugin1", "err")]}, QueueingStrategy.QUEUE_AFTER_BACKOFF, 1, id="Treat the event as Queue when QueueHintFn returns error"),
        pytest.param({"fooPlugin1"}, set(), EVENT_UNSCHEDULABLE_TIMEOUT, None, {}, QueueingStrategy.QUEUE_AFTER_BACKOFF, 0, id="return Queue when the event is wildcard"),
        pytest.param({"fooPlugin1"}, set(), EVENT_FORCE_ACTIVATE, _P1, {}, QueueingStrategy.QUEUE_AFTER_BACKOFF, 0, id="return Queue when the event is wildcard and the wildcard targets the pod to be requeued right now"),
        pytest.param({"fooPlugin1"}, set(), EVENT_FORCE_ACTIVATE, make_pod("pod-different", ns="ns2", uid="2"), {}, QueueingStrategy.QUEUE_SKIP, 0, id="return Skip when the event is wildcard, but the wildcard targets a different pod"),
        pytest.param({"fooPlugin1", "fooPlugin3"}, {"fooPlugin2"}, NODE_ADD, "node", {NODE_ADD: [("fooPlugin1", "queue"), ("fooPlugin2", "queue"), ("fooPlugin3", "queue"), ("fooPlugin4", "err")]}, QueueingStrategy.QUEUE_IMMEDIATELY, 2, id="interprets Queue from the Pending plugin as queueImmediately"),
        pytest.param({"fooPlugin1", "fooPlugin2"}, set(), NODE_ADD, "node", {NODE_ADD: [("fooPlugin1", "skip"), ("fooPlugin2", "queue")]}, QueueingStrategy.QUEUE_AFTER_BACKOFF, 2, id="interprets Queue from the Unschedulable plugin as queueAfterBackoff"),
        pytest.param({"fooPlugin1", "fooPlugin2"}, set(), NODE_ADD, "node", {NODE_ADD: [("fooPlugin1", "skip"), ("fooPlugin2", "skip"), ("fooPlugin3", "queue")]}, QueueingStrategy.QUEUE_SKIP, 2, id="Queueing hint function that isn't from the plugin in UnschedulablePlugins/PendingPlugins is ignored"),
        pytest.param({"fooPlugin1", "fooPlugin2"}, set(), _NODE_LABEL, "node", {_NODE_LABEL: [("fooPlugin1", "queue"), ("fooPlugin2", "queue")], _NODE_UPDATE: [("fooPlugin1", "queue")], NODE_ADD: [("fooPlugin1", "queue")]}, QueueingStrategy.QUEUE_AFTER_BACKOFF, 1, id="If event is specific Node update event, queueing hint function for NodeUpdate/UpdateNodeLabel is also executed"),
        pytest.param({"fooPlugin1"}, set(), NODE_ADD, "node", {_WILD_ADD: [("fooPlugin1", "queue")]}, QueueingStrategy.QUEUE_AFTER_BACKOFF, 1, id="If event with '*' Resource, queueing hint function for specified Resource is also executed"),
        pytest.param({"fooPlugin1"}, set(), _NODE_LABEL_TAINT, "node", {_WILD_ALL: [("fooPlugin1", "queue")]}, QueueingStrategy.QUEUE_AFTER_BACKOFF, 1, id="If event is a wildcard one, queueing hint function for all kinds of events is executed"),
    ],
)  # fmt: skip
def test_is_pod_worth_requeuing(
    unsched: set[str],
    pending: set[str],
    event: ClusterEvent,
    new_obj: object,
    table: Mapping[ClusterEvent, Sequence[tuple[str, str]]],
    want: QueueingStrategy,
    want_count: int,
) -> None:
    """Test_isPodWorthRequeuing."""
    counter = [0]
    hints = {
        e: [(plugin, _counting(kind, counter)) for plugin, kind in rows]
        for e, rows in table.items()
    }
    q, _ = new_queue(hints)
    info = qpi(_P1, *unsched)
    info.pending_plugins = set(pending)
    assert q._is_pod_worth_requeuing(info, event, None, new_obj) is want
    assert counter[0] == want_count
    # Again on the same queue: the hints matching the event are then the ones it kept.
    assert q._is_pod_worth_requeuing(info, event, None, new_obj) is want
    assert counter[0] == 2 * want_count


# --------------------------------------------------------------------------------------------
# Backoff, flushes and ordering
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pop_from_backoff_q", [True, False])
def test_backoff_flow(pop_from_backoff_q: bool) -> None:
    """TestBackOffFlow."""
    clock = FakeClock(T0 + 0.3)
    q, _ = new_queue(clock=clock, pop_from_backoff_q=pop_from_backoff_q)
    pod = make_pod("test-pod", ns="test-ns", uid="test-uid")
    q.add(pod)
    for i, want in enumerate([1, 2, 4, 8, 10, 10, 10]):
        timestamp = clock.now()
        info = pop(q, pod)
        assert info.attempts == i + 1
        info.unschedulable_plugins.add("unsched-plugin")
        q.add_unschedulable_if_not_present(info, i)
        q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
        assert where(q, pod) == "backoff"
        assert info.backoff_expiration is not None
        backoff = info.backoff_expiration - timestamp
        if pop_from_backoff_q:
            backoff = int(backoff) + 1.0  # rounded up to the ordering window
        assert backoff == pytest.approx(want)
        clock.step(1)
        q.flush_backoff_q_completed()
        assert where(q, pod) == "backoff"  # still there after an early flush
        clock.step(backoff)
        q.flush_backoff_q_completed()
        assert where(q, pod) == "active"


def test_error_after_unschedulable_attempt_goes_to_error_backoff() -> None:
    """A pod rejected once, then failing with an error, is retried after the 1 s error backoff:
    the pop emptied its rejector sets, so the error is not taken for the old rejection."""
    q, clock = new_queue({NODE_ADD: [("fooPlugin1", queue_hint)]})
    pod = make_pod("p")
    q.add(pod)
    first = pop(q, pod)
    first.unschedulable_plugins = {"fooPlugin1"}
    q.add_unschedulable_if_not_present(first, q.scheduling_cycle)
    assert where(q, pod) == "unschedulable"
    clock.step(10)  # backoff over: the event sends it straight to the activeQ
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    second = pop(q, pod)
    assert second.unschedulable_plugins == set() and second.pending_plugins == set()
    q.add_unschedulable_if_not_present(second, q.scheduling_cycle)  # an error: no rejector
    assert where(q, pod) == "backoff"
    assert second.consecutive_errors_count == 1
    assert second.backoff_expiration == clock.now() + 1.0
    clock.step(1.0)
    q.flush_backoff_q_completed()
    assert where(q, pod) == "backoff"  # the expiry's own window is still waited out
    clock.step(1.0)
    q.flush_backoff_q_completed()
    assert where(q, pod) == "active"


def test_recently_tried_pods_go_back() -> None:
    """TestRecentlyTriedPodsGoBack."""
    q, clock = new_queue()
    pods = [
        make_pod(f"test-pod-{i}", uid=f"tp00{i}", priority=HIGH, node="node1", nominated="node1")
        for i in range(5)
    ]
    for p in pods:
        q.add(p)
    clock.step(1e-6)
    p1 = pop(q)
    p1.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(p1, q.scheduling_cycle)
    clock.step(q.pod_max_backoff)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    popped = [pop(q) for _ in range(5)]
    assert popped[4] is p1 and p1 not in popped[:4]


def test_pod_failed_scheduling_multiple_times_does_not_block_newer_pod() -> None:
    """TestPodFailedSchedulingMultipleTimesDoesNotBlockNewerPod."""
    q, clock = new_queue()
    unsched = make_pod("test-pod-unscheduled", uid="tp001", priority=HIGH, nominated="node1")
    q.add(unsched)
    pop(q, unsched)
    q.add_unschedulable_if_not_present(qpi(unsched, "plugin"), q.scheduling_cycle)
    clock.step(2)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    pop(q, unsched)
    newer = make_pod("test-newer-pod", uid="tp002", priority=HIGH, nominated="node1")
    q.add(newer)
    q.add_unschedulable_if_not_present(qpi(unsched, "plugin"), q.scheduling_cycle)
    clock.step(2)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    pop(q, newer)


def test_high_priority_backoff() -> None:
    """TestHighPriorityBackoff."""
    q, _ = new_queue()
    mid = make_pod("test-midpod", uid="tp-mid", priority=MID, nominated="node1")
    high = make_pod("test-highpod", uid="tp-high", priority=HIGH, nominated="node1")
    q.add(mid)
    q.add(high)
    p = pop(q, high)
    q.add_unschedulable_if_not_present(qpi(p.pod, "fooPlugin"), q.scheduling_cycle)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    pop(q, mid)  # the high priority pod is backing off
    pop(q, high)  # SchedulerPopFromBackoffQ: the activeQ is empty now


def test_high_priority_flush_unschedulable_pods_leftover() -> None:
    """TestHighPriorityFlushUnschedulablePodsLeftover."""
    q, clock = new_queue({NODE_ADD: [("fakePlugin", queue_hint)]})
    mid = make_pod("test-midpod", uid="tp-mid", priority=MID, nominated="node1")
    high = make_pod("test-highpod", uid="tp-high", priority=HIGH, nominated="node1")
    for p in (high, mid):
        q.add(p)
        pop(q, p)
    q.add_unschedulable_if_not_present(new_qpi(q, clock, high, "fakePlugin"), q.scheduling_cycle)
    q.add_unschedulable_if_not_present(new_qpi(q, clock, mid, "fakePlugin"), q.scheduling_cycle)
    clock.step(300 + 1)
    q.flush_unschedulable_pods_leftover()
    pop(q, high)
    pop(q, mid)


@pytest.mark.parametrize("max_duration", [None, 30.0])
def test_init_pod_max_in_unschedulable_pods_duration(max_duration: float | None) -> None:
    """TestPriorityQueue_initPodMaxInUnschedulablePodsDuration."""
    options: dict[str, Any] = (
        {} if max_duration is None else {"pod_max_in_unschedulable_pods_duration": max_duration}
    )
    q, clock = new_queue(**options)
    info1 = qpi(make_pod("test-pod-1", uid="tp-1", nominated="node1"), timestamp=clock.now() - 1)
    info2 = qpi(
        make_pod("test-pod-2", ns="ns2", uid="tp-2", nominated="node2"), timestamp=clock.now() - 2
    )
    for info in (info1, info2):
        info.unschedulable_count += 1
        q._unschedulable[info.pod.uid] = info
    clock.step(max_duration if max_duration is not None else 300.0)
    q.flush_unschedulable_pods_leftover()
    assert len(q.active_pods()) == 2
    assert [pop(q), pop(q)] == [info2, info1]


def test_flush_leftover_keeps_recent_and_gated_pods() -> None:
    q, clock = new_queue(plugins=[SchedulingGates()])
    gated = make_pod("gated", gates=["g"])
    q.add(gated)
    recent = make_pod("recent")
    q.add(recent)
    info = pop(q, recent)
    info.unschedulable_plugins = {"x"}
    clock.step(250)
    q.add_unschedulable_if_not_present(info, 0)
    clock.step(100)
    q.flush_unschedulable_pods_leftover()
    assert names(q.unschedulable_pods()) == ["gated", "recent"]
    clock.step(201)
    q.flush_unschedulable_pods_leftover()
    assert names(q.unschedulable_pods()) == ["gated"]  # the gating plugin ignores wildcards


@pytest.mark.parametrize("scenario", ["direct", "unschedulable", "backoff"])
def test_pod_timestamp(scenario: str) -> None:
    """TestPodTimestamp."""
    clock = FakeClock(T0 + 0.25)
    q, _ = new_queue(clock=clock)
    info1 = qpi(make_pod("test-pod-1", uid="tp-1", nominated="node1"), timestamp=clock.now())
    info2 = qpi(
        make_pod("test-pod-2", ns="ns2", uid="tp-2", nominated="node2"), timestamp=clock.now() + 1
    )
    if scenario == "direct":
        q._active.heap.add_or_update(info2)
        q._active.heap.add_or_update(info1)
    elif scenario == "unschedulable":
        for info in (info2, info1):
            info.unschedulable_count += 1
            q._unschedulable[info.pod.uid] = info
        clock.step(3)
        q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    else:
        q._active.heap.add_or_update(info2)
        q._backoff.add(info1)
        clock.step(3)
        q.flush_backoff_q_completed()
        q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert len(q.active_pods()) == 2
    assert [pop(q), pop(q)] == [info1, info2]


def _scenario_two_attempts(q: SchedulingQueue, clock: FakeClock, pod: Pod, update: bool) -> None:
    q.add(pod)
    info = pop(q)
    info.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(info, 1)
    clock.t = T0 + 300.001
    q.flush_unschedulable_pods_leftover()
    if update:
        q.update(pod, with_meta(pod, labels={"gen": "1"}))


@pytest.mark.parametrize(
    "scenario", ["one attempt", "two attempts", "two attempts and update", "gated"]
)
def test_per_pod_scheduling_metrics(scenario: str) -> None:
    """TestPerPodSchedulingMetrics: attempts counted, initial attempt timestamp kept."""
    pod = make_pod("test-pod", ns="test-ns", uid="test-uid")
    plugins: list[fw.Plugin] = [AllowlistPreEnqueue(["foo"])] if scenario == "gated" else []
    if scenario != "gated":
        plugins = []
    q, clock = new_queue(plugins=plugins)
    want_attempts, want_initial = 1, T0
    if scenario == "one attempt":
        q.add(pod)
    elif scenario == "gated":
        q.add(pod)
        assert q.gated_pods() == [pod]
        clock.step(60)
        q.update(pod, with_meta(pod, labels={"foo": ""}))
        want_initial = T0 + 60
    else:
        _scenario_two_attempts(q, clock, pod, update=scenario.endswith("update"))
        want_attempts = 2
    info = pop(q)
    assert info.attempts == want_attempts
    assert info.initial_attempt_timestamp == want_initial


def test_pending_pods() -> None:
    """TestPriorityQueue_PendingPods."""
    q, _ = new_queue()
    q.add(UNSCHEDULABLE_POD)
    pop(q, UNSCHEDULABLE_POD)
    q.add(HIGH_POD)
    pop(q, HIGH_POD)
    q.add(MED_POD)
    q.add_unschedulable_if_not_present(qpi(UNSCHEDULABLE_POD, "plugin"), q.scheduling_cycle)
    q.add_unschedulable_if_not_present(qpi(HIGH_POD, "plugin"), q.scheduling_cycle)
    want = names([MED_POD, UNSCHEDULABLE_POD, HIGH_POD])
    assert names(q.pending_pods()) == want and len(q) == 3
    assert q.pending_pods_summary() == "activeQ:1; backoffQ:0; unschedulablePods:2"
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert names(q.pending_pods()) == want
    assert q.pending_pods_summary() == "activeQ:1; backoffQ:2; unschedulablePods:0"


def test_get_pod() -> None:
    """TestPriorityQueue_GetPod."""
    q, _ = new_queue()
    active, backoff, unsched = (make_pod(n, ns="default") for n in ("pod1", "pod2", "pod3"))
    q._active.heap.add_or_update(qpi(active))
    q._backoff.add(qpi(backoff))
    q._unschedulable[unsched.uid] = qpi(unsched)
    for pod in (active, backoff, unsched):
        info = q.get_queued_pod_info(pod.uid)
        assert info is not None and info.pod == pod
    assert q.get_queued_pod_info("default/pod4") is None


def test_next_wakeup_and_has_active() -> None:
    q, clock = new_queue()
    assert q.next_wakeup() is None and not q.has_active()
    q.add(HIGH_POD)
    assert q.has_active()
    info = pop(q)
    info.unschedulable_plugins = {"p"}
    q.add_unschedulable_if_not_present(info, 0)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert where(q, HIGH_POD) == "backoff"
    assert q.has_active()  # pop would take it from the backoffQ
    # Requeued at T0 with a 1 s backoff: expiry window T0+1, complete once the clock is T0+2.
    assert q.next_wakeup() == T0 + 2
    clock.t = T0 + 1.999
    q.flush_backoff_q_completed()
    assert where(q, HIGH_POD) == "backoff"
    clock.t = T0 + 2
    q.flush_backoff_q_completed()
    assert where(q, HIGH_POD) == "active"


def test_next_wakeup_without_window() -> None:
    q, clock = new_queue(pop_from_backoff_q=False)
    q.add(HIGH_POD)
    info = pop(q)
    q.add_unschedulable_if_not_present(info, 0)  # error backoff: 1 s
    assert not q.has_active()
    wake = q.next_wakeup()
    assert wake is not None and T0 + 1 < wake < T0 + 1.000001
    clock.t = T0 + 1
    q.flush_backoff_q_completed()
    assert where(q, HIGH_POD) == "backoff"
    clock.t = wake
    q.flush_backoff_q_completed()
    assert where(q, HIGH_POD) == "active"


def test_zero_max_backoff_disables_backoff() -> None:
    q, _ = new_queue(pod_max_backoff=0.0)
    q.add(HIGH_POD)
    info = pop(q)
    info.unschedulable_plugins = {"p"}
    q.add_unschedulable_if_not_present(info, 0)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert where(q, HIGH_POD) == "active"


def test_close_marks_in_flight_done() -> None:
    q, _ = new_queue()
    q.add(HIGH_POD)
    pop(q)
    q.close()
    assert q.closed and q.in_flight_pods() == []
    assert q.pop(block=True) is None


# --------------------------------------------------------------------------------------------
# Nominator
# --------------------------------------------------------------------------------------------


def test_nominated_pods_for_node() -> None:
    """TestPriorityQueue_NominatedPodsForNode."""
    q, _ = new_queue()
    for pod in (MED_POD, UNSCHEDULABLE_POD, HIGH_POD):
        q.add(pod)
    pop(q, HIGH_POD)
    infos = q.nominated_pods_for_node("node1")
    assert [i.pod for i in infos] == [MED_POD, UNSCHEDULABLE_POD]
    infos.clear()
    assert len(q.nominated_pods_for_node("node1")) == 2  # a copy was returned
    assert q.nominated_pods_for_node("node2") == []


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(MED_POD, 1, id="alive pod gets added into PodNominator"),
        pytest.param(HIGH_POD, 0, id="pod without .status.nominatedPodName specified shouldn't be added into PodNominator"),
    ],
)  # fmt: skip
def test_nominated_pod_added_from_status(pod: Pod, want: int) -> None:
    """TestPriorityQueue_NominatedPodDeleted (the cases that need no pod lister)."""
    q, _ = new_queue()
    q.add_nominated_pod(PodInfo(pod), None)
    assert len(q.nominated_pods_for_node(pod.status.nominated_node_name)) == want


def test_update_nominated_pod_for_node() -> None:
    """TestPriorityQueue_UpdateNominatedPodForNode (without the pod-lister checks)."""
    q, _ = new_queue()
    q.add(MED_POD)
    q.add_nominated_pod(
        PodInfo(UNSCHEDULABLE_POD), fw.NominatingInfo("node5", fw.NominatingMode.OVERRIDE)
    )
    q.add_nominated_pod(PodInfo(HIGH_POD), "node2")
    want = {"node1": [MED_POD.uid], "node2": [HIGH_POD.uid], "node5": [UNSCHEDULABLE_POD.uid]}
    assert q._nominator.snapshot() == want
    pop(q, MED_POD)
    assert q._nominator.snapshot() == want  # popping does not change nominations
    q.add_nominated_pod(PodInfo(HIGH_POD), "node4")
    want = {"node1": [MED_POD.uid], "node4": [HIGH_POD.uid], "node5": [UNSCHEDULABLE_POD.uid]}
    assert q._nominator.snapshot() == want
    assert q.nominated_node_name(HIGH_POD) == "node4"
    q.delete_nominated_pod_if_exists(HIGH_POD)
    want = {"node1": [MED_POD.uid], "node5": [UNSCHEDULABLE_POD.uid]}
    assert q._nominator.snapshot() == want
    q.add_nominated_pod(PodInfo(UNSCHEDULABLE_POD), "")  # empty: clears
    assert q._nominator.snapshot() == {"node1": [MED_POD.uid]}


def test_update_keeps_in_memory_nomination() -> None:
    """UpdateNominatedPod: an update without nominatedNodeName keeps the in-memory one."""
    q, _ = new_queue()
    q.add(HIGH_POD)
    q.add_nominated_pod(PodInfo(HIGH_POD), "node3")
    updated = with_meta(HIGH_POD, labels={"a": "b"})
    q.update(HIGH_POD, updated)
    infos = q.nominated_pods_for_node("node3")
    assert [i.pod for i in infos] == [updated]


def test_nominated_pods_resolve_to_queued_version() -> None:
    q, _ = new_queue()
    q.add(MED_POD)
    stale = PodInfo(MED_POD)
    q.add_nominated_pod(stale, "node7")
    updated = with_meta(MED_POD, labels={"v": "2"})
    q._active.heap.get(MED_POD.uid).pod_info = PodInfo(updated)  # type: ignore[union-attr]
    assert q.nominated_pods_for_node("node7")[0].pod == updated


def test_every_public_method_is_a_read_or_counts_a_change() -> None:
    """The nominated-pods memo follows every change: a public method either is marked
    ``@_changes`` (which drops the memo of the nodes whose pods it touched) or is a declared
    read, so a new method cannot slip past it."""
    from schedframe.queue._scheduling_queue import _READS

    unclassified = [
        name
        for name, member in vars(SchedulingQueue).items()
        if not name.startswith("_")
        and callable(member)
        and not getattr(member, "changes_queue", False)
        and name not in _READS
    ]
    assert unclassified == []
    assert not [n for n in _READS if getattr(getattr(SchedulingQueue, n), "changes_queue", False)]


def test_nominated_pods_for_nodes_memo_follows_every_change() -> None:
    """Each node's bulk read is kept until that node's pods change; after pops, updates,
    requeues, nominations and deletions it equals the fresh per-node read."""
    q, clock = new_queue()
    nodes = ["node1", "node2", "node3"]

    def check() -> dict[str, list[PodInfo]]:
        bulk = q.nominated_pods_for_nodes(nodes)
        fresh = {n: q.nominated_pods_for_node(n) for n in nodes}
        assert {n: [id(i) for i in infos] for n, infos in bulk.items()} == {
            n: [id(i) for i in infos] for n, infos in fresh.items() if infos
        }
        return bulk

    for pod in (MED_POD, UNSCHEDULABLE_POD, HIGH_POD):
        q.add(pod)
    first = check()
    again = q.nominated_pods_for_nodes(nodes)
    assert again["node1"] is first["node1"]  # kept: nothing changed
    popped = pop(q, HIGH_POD)
    assert check()["node1"] is first["node1"]  # kept: the pop touched none of node1's pods
    q.add_nominated_pod(popped.pod_info, "node2")
    assert [i.pod.uid for i in check()["node2"]] == [HIGH_POD.uid]
    q.add_unschedulable_if_not_present(popped, q.scheduling_cycle)
    check()
    updated = with_meta(MED_POD, labels={"v": "2"})
    q.update(MED_POD, updated)  # in the activeQ: the queued version is the latest
    assert updated in [i.pod for i in check()["node1"]]
    pop(q, updated)
    check()
    q.delete_nominated_pod_if_exists(HIGH_POD)
    assert "node2" not in check()
    q.delete(UNSCHEDULABLE_POD)
    assert check() == {"node1": q.nominated_pods_for_node("node1")}
    clock.step(20)
    q.flush_backoff_q_completed()
    check()


_MEMO_NODES = ("node1", "node2", "node3")
_MEMO_PODS = 4
_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
_memo_ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, _MEMO_PODS - 1), st.integers(0, 3)),
        st.tuples(st.just("update"), st.integers(0, _MEMO_PODS - 1), st.integers(0, 3)),
        st.tuples(st.just("delete"), st.integers(0, _MEMO_PODS - 1), st.just(0)),
        st.tuples(st.just("pop"), st.just(0), st.just(0)),
        st.tuples(st.just("requeue"), st.integers(0, 3), st.integers(0, 1)),
        st.tuples(st.just("nominate"), st.integers(0, _MEMO_PODS - 1), st.integers(0, 3)),
        st.tuples(st.just("event"), st.integers(0, 5), st.just(0)),
    ),
    max_size=40,
)


def _memo_pod(i: int, variant: int) -> Pod:
    # variant: the nominated node in the status (0: none), label "v" and a gate on variant 3.
    return make_pod(
        f"p{i}",
        uid=f"uid{i}",
        priority=i * 10,
        labels={"v": str(variant)},
        nominated=_MEMO_NODES[variant - 1] if variant else "",
        gates=("g",) if variant == 3 else (),
    )


@settings(max_examples=400, deadline=None)
@given(_memo_ops)
def test_nominated_pods_for_nodes_memo_equals_fresh_reads(ops: list[tuple[str, int, int]]) -> None:
    """Random adds, updates (gating and ungating too), deletes, pops, requeues, nominations
    and cluster events: after each one, every node's kept list holds exactly the objects a
    fresh read gives, and a node's list is the same object again while it is unchanged."""
    hints: HintTable = {
        EVENT_NODE_ADD: [("A", queue_hint)],
        _ASSIGNED_POD_DELETE: [("A", queue_hint)],
    }
    q, clock = new_queue(hints, plugins=[SchedulingGates()])
    current: dict[int, Pod] = {}
    popped: list[QueuedPodInfo] = []
    # What the nominated pods were at each generation (the queue's, and each node's): they
    # must not change while it does not.
    seen: dict[int, dict[str, list[int]]] = {}
    seen_node: dict[tuple[str, int], list[int]] = {}

    def check() -> None:
        generation = q.nominated_generation()
        generations = q.nominated_generations(_MEMO_NODES)
        bulk = q.nominated_pods_for_nodes(_MEMO_NODES)
        fresh = {n: q.nominated_pods_for_node(n) for n in _MEMO_NODES}
        assert {n: [id(i) for i in infos] for n, infos in bulk.items()} == {
            n: [id(i) for i in infos] for n, infos in fresh.items() if infos
        }
        again = q.nominated_pods_for_nodes(_MEMO_NODES)
        assert all(again[n] is bulk[n] for n in bulk)
        view = {n: [id(i) for i in infos] for n, infos in bulk.items()}
        assert seen.setdefault(generation, view) == view
        for n in _MEMO_NODES:
            node_view = view.get(n, [])
            assert seen_node.setdefault((n, generations[n]), node_view) == node_view

    for op, a, b in ops:
        check()
        if op == "add":
            current[a] = _memo_pod(a, b)
            q.add(current[a])
        elif op == "update":
            new = _memo_pod(a, b)
            q.update(current.get(a), new)
            current[a] = new
        elif op == "delete" and a in current:
            q.delete(current.pop(a))
        elif op == "pop":
            got = q.pop()
            if got is not None:
                popped.append(got)
        elif op == "requeue" and a < len(popped):
            info = popped.pop(a)
            if b:
                info.unschedulable_plugins = {"A"}
            with contextlib.suppress(QueueError):
                q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
        elif op == "nominate":
            pod = current.get(a, _memo_pod(a, 0))
            q.add_nominated_pod(PodInfo(pod), _MEMO_NODES[b - 1] if b else "")
        elif op == "event":
            if a == 0:
                q.move_all_to_active_or_backoff_queue(EVENT_NODE_ADD)
            elif a == 1:
                q.assigned_pod_deleted(make_pod("gone", node="node1"))
            elif a == 2:
                clock.step(11)
                q.flush_backoff_q_completed()
            elif a == 3:
                clock.step(301)
                q.flush_unschedulable_pods_leftover()
            elif a == 4:
                q.activate(list(current.values()))
            elif popped:
                q.done(popped.pop(0).pod.uid)
    check()


def test_hint_map_node_taint_workaround() -> None:
    """buildQueueingHintMap: Node/Add without Node/UpdateNodeTaint registers the latter too."""
    from schedframe.queue import build_queueing_hint_map

    fwk = Framework()
    fwk.add_plugin(PrioritySort())
    fwk.add_plugin(hint_plugin("A", [ClusterEventWithHint(NODE_ADD, skip_hint)]))
    fwk.add_plugin(hint_plugin("B", [ClusterEventWithHint(_NODE_UPDATE)]))
    fwk.add_plugin(hint_plugin("C", []))
    hint_map = build_queueing_hint_map(fwk)
    taint = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT)
    assert hint_map == {
        NODE_ADD: [("A", skip_hint)],
        taint: [("A", None)],
        _NODE_UPDATE: [("B", None)],
    }


def test_concurrent_producers_and_consumers() -> None:
    """One lock guards everything: concurrent adds, pops and dones lose and duplicate nothing."""
    q, _ = new_queue()
    popped: list[str] = []
    popped_lock = threading.Lock()

    def produce(k: int) -> None:
        for i in range(150):
            q.add(make_pod(f"p{k}-{i}", priority=i % 7))

    def consume() -> None:
        while (info := q.pop(block=True)) is not None:
            with popped_lock:
                popped.append(info.pod.uid)
            q.done(info.pod.uid)

    consumers = [threading.Thread(target=consume) for _ in range(3)]
    producers = [threading.Thread(target=produce, args=(k,)) for k in range(4)]
    for t in consumers + producers:
        t.start()
    for t in producers:
        t.join(10)
    q.close()  # consumers drain what is left, then get None
    for t in consumers:
        t.join(10)
    assert not any(t.is_alive() for t in consumers + producers)
    assert len(popped) == len(set(popped)) == 600
    assert len(q) == 0 and q.in_flight_pods() == []


# --------------------------------------------------------------------------------------------
# The seams of schedframe.testing.queue, and upstream's cases with queueing hints off
# (SchedulingQueue(queueing_hints=False), upstream SchedulerQueueingHints=false)
# --------------------------------------------------------------------------------------------


def _at(q: SchedulingQueue, *pods_and_where: tuple[str, str | None]) -> None:
    for uid, want in pods_and_where:
        assert qt.location(q, uid) == want, uid


# --------------------------------------------------------------------------------------------
# Seams
# --------------------------------------------------------------------------------------------


def test_put_and_location() -> None:
    q, clock = new_queue()
    a, b, c = (qpi(make_pod(n), timestamp=clock.now()) for n in "abc")
    b.unschedulable_count = 1
    qt.put_in_active_q(q, a)
    qt.put_in_backoff_q(q, b)
    qt.put_in_unschedulable_pods(q, c)
    _at(q, (a.pod.uid, qt.ACTIVE_Q), (b.pod.uid, qt.BACKOFF_Q), (c.pod.uid, qt.UNSCHEDULABLE_PODS))
    assert qt.location(q, make_pod("zzz")) is None
    with pytest.raises(ValueError, match="already in backoffQ"):
        qt.put_in_active_q(q, b)
    assert pop(q).pod.uid == a.pod.uid
    assert qt.location(q, a.pod) == qt.IN_FLIGHT
    assert q.gated_pods() == []  # no PreEnqueue ran


def test_pop_and_discard_backoff_completed() -> None:
    q, clock = new_queue()
    entries: list[QueuedPodInfo] = []
    for i, count in enumerate((1, 1, 3)):
        entry = qpi(make_pod(f"p{i}"), "plugin", timestamp=clock.now())
        entry.unschedulable_count = count
        qt.put_in_backoff_q(q, entry)
        entries.append(entry)
    error = qpi(make_pod("err"), timestamp=clock.now())
    error.consecutive_errors_count = 1
    qt.put_in_backoff_q(q, error)
    assert qt.pop_backoff_completed(q) == []
    clock.step(2)  # 1 s backoffs done (and their window), the 4 s one not
    got = qt.pop_backoff_completed(q)
    assert [e.pod.name for e in got] == ["p0", "p1", "err"]
    assert all(qt.location(q, e.pod) is None for e in got)
    assert q.active_pods() == []  # popped, not moved to the activeQ
    clock.step(10)
    assert qt.discard_backoff_completed(q) == 1
    assert len(q) == 0


# --------------------------------------------------------------------------------------------
# Queueing hints off
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("queueing_hints", [True, False], ids=["with-hints", "without-hints"])
def test_pop(queueing_hints: bool) -> None:
    """TestPop: a Pending plugin's Queue skips the backoff; the popped entry has no plugins."""
    pod = make_pod("targetpod", uid="pod1")
    q, _ = new_queue({PV_ADD: [("fooPlugin1", queue_hint)]}, queueing_hints=queueing_hints)
    q.add(pod)
    popped = pop(q, pod)
    popped.pending_plugins = {"fooPlugin1"}
    q.add_unschedulable_if_not_present(popped, q.scheduling_cycle)
    _at(q, (pod.uid, qt.UNSCHEDULABLE_PODS))
    q.move_all_to_active_or_backoff_queue(PV_ADD)
    _at(q, (pod.uid, qt.ACTIVE_Q))
    popped = pop(q, pod)
    assert popped.pending_plugins == set() and popped.unschedulable_plugins == set()


def test_without_hints_every_registered_event_queues() -> None:
    """buildQueueingHintMap with the gate off: a QueueSkip hint is not consulted."""
    q, clock = new_queue({EVENT_NODE_ADD: [("fooPlugin", skip_hint)]}, queueing_hints=False)
    assert q.queueing_hints is False
    q.add(HIGH_POD)
    info = pop(q, HIGH_POD)
    info.unschedulable_plugins = {"fooPlugin"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    _at(q, (HIGH_POD.uid, qt.UNSCHEDULABLE_PODS))
    q.move_all_to_active_or_backoff_queue(EVENT_NODE_ADD)
    _at(q, (HIGH_POD.uid, qt.BACKOFF_Q))


def test_without_hints_nothing_is_tracked_in_flight() -> None:
    q, _ = new_queue({PV_ADD: [("fooPlugin", queue_hint)]}, queueing_hints=False)
    q.add(HIGH_POD)
    pop(q, HIGH_POD)
    q.move_all_to_active_or_backoff_queue(PV_ADD)
    assert q.in_flight_pods() == [] and q.in_flight_events() == []
    assert q.scheduling_cycle == 1
    assert qt.location(q, HIGH_POD) is None


@pytest.mark.parametrize(
    ("move_during_cycle", "plugins", "want"),
    [
        pytest.param(True, ("plugin",), qt.BACKOFF_Q, id="move request during the cycle: backoffQ"),
        pytest.param(False, ("plugin",), qt.UNSCHEDULABLE_PODS, id="no move request: pool"),
        pytest.param(False, (), qt.BACKOFF_Q, id="an error: backoffQ"),
    ],
)
def test_without_hints_add_unschedulable_follows_the_move_request_cycle(
    move_during_cycle: bool, plugins: tuple[str, ...], want: str
) -> None:
    """addUnschedulableWithoutQueueingHint (TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff
    with the gate off)."""
    q, _ = new_queue({PV_ADD: [("plugin", queue_hint)]}, queueing_hints=False)
    q.add(MED_POD)
    info = pop(q, MED_POD)
    cycle = q.scheduling_cycle
    if move_during_cycle:
        q.move_all_to_active_or_backoff_queue(PV_ADD)
    info.unschedulable_plugins = set(plugins)
    q.add_unschedulable_if_not_present(info, cycle)
    _at(q, (MED_POD.uid, want))


def test_without_hints_many_pods_after_a_move_request() -> None:
    """TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff, gate off."""
    q, _ = new_queue(queueing_hints=False)
    pods = [make_pod(f"pod{i}", ns=f"ns{i}", uid=f"upns{i}", priority=i) for i in range(10)]
    for p in pods:
        q.add(p)
    for i in range(9, 0, -1):
        pop(q, pods[i])
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    cycle = q.scheduling_cycle
    pop(q, pods[0])
    for p in pods[1:]:
        q.add_unschedulable_if_not_present(qpi(p, "plugin"), cycle)
    assert sorted(p.name for p in q.backoff_pods()) == sorted(p.name for p in pods[1:])


@pytest.mark.parametrize(
    ("change", "backoff_over", "want"),
    [
        pytest.param("annotation", False, qt.BACKOFF_Q, id="updated, backing off: backoffQ"),
        pytest.param("annotation", True, qt.ACTIVE_Q, id="updated, backoff over: activeQ"),
        pytest.param("status", False, qt.UNSCHEDULABLE_PODS, id="status only: stays"),
    ],
)
def test_without_hints_update_of_a_pooled_pod(change: str, backoff_over: bool, want: str) -> None:
    """Update with the gate off: isPodUpdated alone decides (no hint is asked)."""
    q, clock = new_queue({PV_ADD: [("plugin", skip_hint)]}, queueing_hints=False)
    q.add(UNSCHEDULABLE_POD)
    info = pop(q, UNSCHEDULABLE_POD)
    info.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    _at(q, (UNSCHEDULABLE_POD.uid, qt.UNSCHEDULABLE_PODS))
    if backoff_over:
        clock.step(10)
    if change == "annotation":
        new = with_meta(UNSCHEDULABLE_POD, annotations={"foo": "bar"})
    else:
        new = UNSCHEDULABLE_POD.with_nominated_node_name("node9")
    q.update(UNSCHEDULABLE_POD, new)
    _at(q, (UNSCHEDULABLE_POD.uid, want))


def test_without_hints_activate_of_an_in_flight_pod_counts_as_a_move_request() -> None:
    """Activate, gate off: the pod is not tracked, but the move request cycle advances, so its
    failure sends it to the backoffQ."""
    q, clock = new_queue(queueing_hints=False)
    assert isinstance(clock, FakeClock)
    q.add(HIGH_POD)
    info = pop(q, HIGH_POD)
    cycle = q.scheduling_cycle
    q.activate([HIGH_POD])
    info.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(info, cycle)
    _at(q, (HIGH_POD.uid, qt.BACKOFF_Q))


def test_move_all_to_active_or_backoff_queue_without_queueing_hint() -> None:
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithOutQueueingHint."""
    q, clock = new_queue({NODE_ADD: [("fooPlugin", queue_hint)]}, queueing_hints=False)
    q.add(MED_POD)
    q.add_unschedulable_if_not_present(
        new_qpi(q, clock, UNSCHEDULABLE_POD, "fooPlugin"), q.scheduling_cycle
    )
    q.add_unschedulable_if_not_present(new_qpi(q, clock, HIGH_POD, "fooPlugin"), q.scheduling_cycle)
    hpp1 = make_pod("hpp1", priority=HIGH)
    q.add_unschedulable_if_not_present(new_qpi(q, clock, hpp1), q.scheduling_cycle)  # backoffQ
    hpp2 = make_pod("hpp2", priority=HIGH)
    q.add_unschedulable_if_not_present(new_qpi(q, clock, hpp2, "barPlugin"), q.scheduling_cycle)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert len(q.active_pods()) == 1
    pop(q, MED_POD)
    assert len(q.backoff_pods()) == 3  # hpp2 was not moved

    clock.step(q.pod_max_backoff)
    assert qt.discard_backoff_completed(q) == 3  # not in flight: hints are off
    assert q.in_flight_pods() == []

    for pod, plugins in (
        (UNSCHEDULABLE_POD, ("fooPlugin",)),
        (HIGH_POD, ("fooPlugin",)),
        (hpp1, ()),
    ):
        q.add_unschedulable_if_not_present(new_qpi(q, clock, pod, *plugins), q.scheduling_cycle)
    q.add(MED_POD)
    # No move request since the last pop: the rejected pods wait in the pool.
    for pod in (UNSCHEDULABLE_POD, HIGH_POD, hpp2):
        assert qt.location(q, pod) == qt.UNSCHEDULABLE_PODS, pod.name
    assert qt.location(q, hpp1) == qt.BACKOFF_Q

    clock.step(q.pod_max_backoff)
    q.flush_backoff_q_completed()
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert len(q.active_pods()) == 4
    assert q.backoff_pods() == []
    assert names(q.unschedulable_pods()) == ["hpp2"]  # not moved, whatever its backoff
