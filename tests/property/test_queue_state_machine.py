"""A model-based test of SchedulingQueue: random add/pop/done/requeue/update/delete/events.

Invariants checked after every step:
* every live pod is in exactly one of activeQ, backoffQ, unschedulable pool, in flight;
  nothing is lost or duplicated, and nothing else is there;
* the in-flight log lists exactly the in-flight pods; gated pods sit only in the pool;
* pop returns the QueueSort minimum of the activeQ, or the backoffQ's head when the activeQ
  is empty (SchedulerPopFromBackoffQ), never an errored pod from the error heap;
* deleted pods keep no nomination.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from schedframe import framework as fw
from schedframe.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    QueuedPodInfo,
    QueueingHint,
    Status,
)
from schedframe.objects import Node, ObjectMeta, Pod, PodSpec, PodStatus
from schedframe.queue import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_NODE_ADD,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    SchedulingQueue,
)
from schedframe.runtime import Framework

pytestmark = pytest.mark.property

PROFILE = "default-scheduler"
PV_ADD = ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD)
REJECTORS = ("Fit", "Volume", "Broken", "Silent")


class FakeClock:
    def __init__(self) -> None:
        self.t = 1_700_000_000.25

    def now(self) -> float:
        return self.t


class PrioritySort(fw.QueueSortPlugin):
    name: ClassVar[str] = "PrioritySort"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        p1, p2 = a.pod.priority, b.pod.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)


LESS = PrioritySort().less


class KeyedPrioritySort(PrioritySort):
    """The same order, with a ``sort_key``: the queue's heaps compare keys."""

    def sort_key(self, qpi: QueuedPodInfo) -> tuple[int, float]:
        return (-qpi.pod.priority, qpi.timestamp)


class Gate(fw.PreEnqueuePlugin, fw.EnqueueExtensions):
    """Gates pods labelled ``gated``; a label update of the pod itself may ungate it."""

    name: ClassVar[str] = "Gate"

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if "gated" in pod.labels:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated")
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL), self._hint
            )
        ]

    def _hint(self, pod: Pod, old: object, new: object) -> QueueingHint:
        if isinstance(new, Pod) and new.uid == pod.uid and "gated" not in new.labels:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


class _Rejector(fw.FilterPlugin, fw.EnqueueExtensions):
    name: ClassVar[str] = ""
    events: ClassVar[Sequence[ClusterEventWithHint]] = ()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return self.events


def _fit_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    if isinstance(new, Node) and new.labels.get("big") == "yes":
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _broken_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    raise RuntimeError("broken hint")


class Fit(_Rejector):
    name = "Fit"
    events = (ClusterEventWithHint(EVENT_NODE_ADD, _fit_hint),)


class Volume(_Rejector):
    name = "Volume"
    events = (ClusterEventWithHint(PV_ADD),)


class Broken(_Rejector):
    name = "Broken"
    events = (
        ClusterEventWithHint(EVENT_NODE_ADD, _broken_hint),
        ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.ADD), _broken_hint),
    )


class Silent(_Rejector):
    """Registers nothing: only the leftover flush or activation moves its pods."""

    name = "Silent"
    events = ()


def make_framework(clock: FakeClock, sort: type[PrioritySort] = PrioritySort) -> Framework:
    fwk = Framework(profile_name=PROFILE, clock=clock)
    for plugin in (sort(), Gate(), Fit(), Volume(), Broken(), Silent()):
        fwk.add_plugin(plugin)
    return fwk


def make_pod(n: int, priority: int, gated: bool, nominated: str) -> Pod:
    return Pod(
        metadata=ObjectMeta(
            name=f"p{n}", namespace="ns", uid=f"uid-{n}", labels={"gated": ""} if gated else {}
        ),
        spec=PodSpec(priority=priority),
        status=PodStatus(nominated_node_name=nominated),
    )


class QueueMachine(RuleBasedStateMachine):
    SORT: ClassVar[type[PrioritySort]] = PrioritySort

    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock()
        self.queue = SchedulingQueue(
            frameworks={PROFILE: make_framework(self.clock, self.SORT)}, clock=self.clock
        )
        self.pop_from_backoff_q = True
        self.counter = 0
        self.live: dict[str, Pod] = {}  # every pod the queue should hold or have in flight
        self.in_flight: dict[str, QueuedPodInfo] = {}
        self.deleted: set[str] = set()

    @initialize(
        pop_from_backoff_q=st.booleans(), max_backoff=st.sampled_from([0.0, 4.0, 10.0, 10.0])
    )
    def setup(self, pop_from_backoff_q: bool, max_backoff: float) -> None:
        self.pop_from_backoff_q = pop_from_backoff_q
        self.queue = SchedulingQueue(
            frameworks={PROFILE: make_framework(self.clock, self.SORT)},
            clock=self.clock,
            pod_max_backoff=max_backoff,
            pop_from_backoff_q=pop_from_backoff_q,
        )

    # -- pods ----------------------------------------------------------------------------------

    @rule(
        pods=st.lists(
            st.tuples(
                st.integers(0, 3),
                st.sampled_from([False, False, False, True]),
                st.sampled_from(["", "", "n1"]),
            ),
            min_size=1,
            max_size=4,
        )
    )
    def add(self, pods: list[tuple[int, bool, str]]) -> None:
        for priority, gated, nominated in pods:
            self.counter += 1
            pod = make_pod(self.counter, priority, gated, nominated)
            self.queue.add(pod)
            self.live[pod.uid] = pod

    @rule()
    def pop(self) -> None:
        q = self.queue
        active = list(q._active.heap)
        backoff_head = q._backoff._pod_q.peek()
        # Only the podBackoffQ (rejected pods) is popped from, never the error heap.
        head_rejected = backoff_head is not None and bool(
            backoff_head.unschedulable_plugins or backoff_head.pending_plugins
        )
        got = q.pop()
        if got is None:
            assert not active
            assert not self.pop_from_backoff_q or backoff_head is None
            return
        if active:
            assert any(a is got for a in active)
            assert not any(LESS(a, got) for a in active if a is not got)
        else:
            assert self.pop_from_backoff_q and got is backoff_head
            assert head_rejected
        # A new attempt starts with no rejectors (upstream's activeQ pop resets them).
        assert not got.unschedulable_plugins and not got.pending_plugins
        assert got.pod.uid not in self.in_flight
        self.in_flight[got.pod.uid] = got

    @precondition(lambda self: bool(self.in_flight))
    @rule(
        data=st.data(),
        unschedulable=st.sets(st.sampled_from(REJECTORS), max_size=2),
        pending=st.sets(st.sampled_from(REJECTORS), max_size=1),
    )
    def requeue(self, data: st.DataObject, unschedulable: set[str], pending: set[str]) -> None:
        uid = data.draw(st.sampled_from(sorted(self.in_flight)))
        self._requeue(uid, unschedulable, pending)

    def _requeue(self, uid: str, unschedulable: set[str], pending: set[str]) -> None:
        info = self.in_flight.pop(uid)
        info.unschedulable_plugins = set(unschedulable)
        info.pending_plugins = set(pending)
        self.queue.add_unschedulable_if_not_present(info, self.queue.scheduling_cycle)

    @rule(
        unschedulable=st.sets(st.sampled_from(REJECTORS), max_size=2),
        pending=st.sets(st.sampled_from(REJECTORS), max_size=1),
    )
    def attempt_fails(self, unschedulable: set[str], pending: set[str]) -> None:
        """A whole failed scheduling cycle: pop, then requeue with the rejecting plugins."""
        before = set(self.in_flight)
        self.pop()
        for uid in set(self.in_flight) - before:
            self._requeue(uid, unschedulable, pending)

    @precondition(lambda self: bool(self.in_flight))
    @rule(data=st.data())
    def finish(self, data: st.DataObject) -> None:
        """The pod was bound: the scheduler calls done and the pod leaves the queue."""
        uid = data.draw(st.sampled_from(sorted(self.in_flight)))
        del self.in_flight[uid]
        self.queue.done(uid)
        self.queue.delete_nominated_pod_if_exists(self.live.pop(uid))

    def _queued(self) -> list[str]:
        return sorted(uid for uid in self.live if uid not in self.in_flight)

    @precondition(lambda self: len(self.live) > len(self.in_flight))
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        uid = data.draw(st.sampled_from(self._queued()))
        self.queue.delete(self.live.pop(uid))
        self.deleted.add(uid)

    @precondition(lambda self: bool(self.live))
    @rule(data=st.data(), change=st.sampled_from(["gate", "ungate", "label", "status", "priority"]))
    def update(self, data: st.DataObject, change: str) -> None:
        import attrs

        uid = data.draw(st.sampled_from(sorted(self.live)))
        old = self.live[uid]
        labels = dict(old.labels)
        if change == "gate":
            labels["gated"] = ""
        elif change == "ungate":
            labels.pop("gated", None)
        elif change == "label":
            labels["v"] = str(int(labels.get("v", "0")) + 1)
        if change == "status":
            new = old.with_nominated_node_name("n2")
        elif change == "priority":
            new = attrs.evolve(old, spec=attrs.evolve(old.spec, priority=3 - old.priority))
        else:
            new = attrs.evolve(old, metadata=attrs.evolve(old.metadata, labels=labels))
        self.queue.update(old, new)
        self.live[uid] = new

    @precondition(lambda self: bool(self.live))
    @rule(data=st.data())
    def activate(self, data: st.DataObject) -> None:
        uids = data.draw(st.lists(st.sampled_from(sorted(self.live)), max_size=3))
        self.queue.activate([self.live[u] for u in uids])

    # -- events and time -------------------------------------------------------------------------

    @rule(big=st.booleans())
    def node_added(self, big: bool) -> None:
        self.queue.node_added(
            Node(metadata=ObjectMeta(name="n", labels={"big": "yes" if big else "no"}))
        )

    @rule(kind=st.sampled_from(["pv", "timeout", "assigned"]))
    def event(self, kind: str) -> None:
        if kind == "pv":
            self.queue.move_all_to_active_or_backoff_queue(PV_ADD)
        elif kind == "timeout":
            self.queue.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
        else:
            bound = Pod(
                metadata=ObjectMeta(name="b", namespace="ns", uid="b"), spec=PodSpec(node_name="n")
            )
            self.queue.assigned_pod_added(bound)
            self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_ADD, None, bound)

    @rule(seconds=st.sampled_from([0.5, 1.0, 3.0, 11.0]))
    def flush_backoff(self, seconds: float) -> None:
        self.clock.t += seconds
        before = {p.uid for p in self.queue.backoff_pods()}
        wake = self.queue.next_wakeup()
        self.queue.flush_backoff_q_completed()
        after = {p.uid for p in self.queue.backoff_pods()}
        if wake is not None and wake <= self.clock.t:
            assert after < before  # the wakeup time promised progress

    @rule(seconds=st.sampled_from([31.0, 301.0]))
    def flush_leftover(self, seconds: float) -> None:
        self.clock.t += seconds
        self.queue.flush_unschedulable_pods_leftover()

    # -- invariants ------------------------------------------------------------------------------

    @invariant()
    def each_pod_in_exactly_one_place(self) -> None:
        q = self.queue
        places = [
            [p.uid for p in q.active_pods()],
            [p.uid for p in q.backoff_pods()],
            [p.uid for p in q.unschedulable_pods()],
            [p.uid for p in q.in_flight_pods()],
        ]
        flat = [uid for place in places for uid in place]
        assert len(flat) == len(set(flat)), places
        assert set(flat) == set(self.live), (places, sorted(self.live))
        assert set(places[3]) == set(self.in_flight)
        assert len(q) == len(places[0]) + len(places[1]) + len(places[2])

    @invariant()
    def gated_pods_wait_in_the_pool(self) -> None:
        q = self.queue
        unschedulable = {p.uid for p in q.unschedulable_pods()}
        assert {p.uid for p in q.gated_pods()} <= unschedulable
        # With popping from the backoffQ off, PreEnqueue runs when a pod leaves the backoffQ,
        # not when it enters (upstream moveToBackoffQ): a pod ungated while pooled can sit
        # there with its old gating plugin until the flush re-checks it. Only the activeQ, and
        # the backoffQ when pods are popped from it, hold pods known to pass PreEnqueue.
        admitted = q.active_pods() + (q.backoff_pods() if self.pop_from_backoff_q else [])
        for pod in admitted:
            info = q.get_queued_pod_info(pod.uid)
            assert info is not None and not info.gated

    @invariant()
    def in_flight_log_matches(self) -> None:
        pods = [e for e in self.queue.in_flight_events() if isinstance(e, Pod)]
        assert sorted(p.uid for p in pods) == sorted(self.in_flight)

    @invariant()
    def deleted_pods_are_not_nominated(self) -> None:
        nominated = {uid for uids in self.queue._nominator.snapshot().values() for uid in uids}
        assert not nominated & self.deleted


class KeyedQueueMachine(QueueMachine):
    """The same machine with a QueueSort ``sort_key``: the heaps keep ranks, which must never
    go stale (every change of a queued pod's key goes through the heap's update)."""

    SORT = KeyedPrioritySort

    @invariant()
    def heap_ranks_are_fresh(self) -> None:
        q = self.queue
        assert q._active.heap._sort_key is not None
        for heap in (q._active.heap, q._backoff._pod_q, q._backoff._error_q):
            key = heap._sort_key
            assert key is not None
            for entry in heap._heap:
                assert entry.rank == (key(entry.item), entry.seq)


# max_examples comes from the active Hypothesis profile.
QueueMachine.TestCase.settings = settings(stateful_step_count=60, deadline=None)
TestQueueStateMachine = QueueMachine.TestCase
KeyedQueueMachine.TestCase.settings = settings(stateful_step_count=60, deadline=None)
TestKeyedQueueStateMachine = KeyedQueueMachine.TestCase
