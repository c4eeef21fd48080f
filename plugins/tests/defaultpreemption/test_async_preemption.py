"""DefaultPreemption with asynchronous preemption (upstream SchedulerAsyncPreemption, on by
default): PreEnqueue keeps the preemptor out while its victims are evicted off the cycle."""

from __future__ import annotations

from collections.abc import Callable

from schedframe import framework as fw
from schedframe import preemption
from schedframe.backends import MemoryBackend
from schedframe.cache import Snapshot
from schedframe.objects import Container, Node, NodeStatus, ObjectMeta, Pod, PodSpec
from schedframe.queue import EVENT_ASSIGNED_POD_DELETE, SchedulingQueue
from schedframe.runtime import Framework
from schedframe.testing import queue as qt
from schedframe_plugins.defaultpreemption import DefaultPreemption
from schedframe_plugins.defaultpreemption.default_preemption import MSG_WAITING_FOR_PREEMPTION
from schedframe_plugins.noderesources import Fit
from schedframe_plugins.queuesort import PrioritySort


class _Clock:
    def now(self) -> float:
        return 1_700_000_000.0


def _node() -> Node:
    res = {"pods": 10, "cpu": 1000, "memory": 1000}
    return Node(metadata=ObjectMeta(name="node1"), status=NodeStatus(capacity=res, allocatable=res))


def _pod(name: str, priority: int, node: str = "") -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", uid=name),
        spec=PodSpec(
            node_name=node,
            priority=priority,
            containers=(Container(name="c", requests={"cpu": 1000}),),
        ),
    )


def _as_pod(obj: object) -> Pod | None:
    return obj if isinstance(obj, Pod) else None


VICTIM = _pod("victim", 0, node="node1")
OTHER = _pod("other", 0, node="node1")
PREEMPTOR = _pod("preemptor", 100)


def _setup(
    async_preemption: bool = True,
) -> tuple[Framework, DefaultPreemption, MemoryBackend, list[Callable[[], None]]]:
    clock = _Clock()
    backend = MemoryBackend([_node(), VICTIM], clock=clock)
    tasks: list[Callable[[], None]] = []
    fwk = Framework(
        snapshot=Snapshot.from_objects([_node()], [VICTIM]),
        binder=backend,
        clock=clock,
        async_runner=tasks.append,
        pod_lister=lambda ns, name: _as_pod(backend.get("Pod", name, ns)),
    )
    fwk.add_plugin(PrioritySort(None, fwk))
    fwk.add_plugin(Fit(None, fwk))
    plugin = DefaultPreemption(None, fwk, async_preemption=async_preemption)
    fwk.add_plugin(plugin)
    return fwk, plugin, backend, tasks


def test_pre_enqueue_gates_while_preempting() -> None:
    fwk, plugin, _, tasks = _setup()
    assert plugin.pre_enqueue(PREEMPTOR) is None
    victims = preemption.Victims([VICTIM])
    plugin.evaluator.prepare_candidate_async(
        preemption.Candidate("node1", victims), PREEMPTOR, plugin.name
    )
    assert plugin.pre_enqueue(PREEMPTOR) == fw.Status(
        fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_WAITING_FOR_PREEMPTION
    )
    stored = fwk.get_pod("default", "victim")
    assert stored is not None and stored.uid == VICTIM.uid
    tasks.pop()()
    assert fwk.get_pod("default", "victim") is None
    assert plugin.pre_enqueue(PREEMPTOR) is None


def test_events_to_register() -> None:
    _, plugin, _, _ = _setup()
    events = plugin.events_to_register()
    assert [e.event for e in events] == [
        fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.DELETE)
    ]
    hint = events[0].queueing_hint_fn
    assert hint is not None and hint(PREEMPTOR, VICTIM, None) is fw.QueueingHint.QUEUE_SKIP
    _, sync_plugin, _, _ = _setup(async_preemption=False)
    assert list(sync_plugin.events_to_register()) == []


def test_sync_preemption_never_gates() -> None:
    fwk, plugin, backend, tasks = _setup(async_preemption=False)
    plugin.evaluator.prepare_candidate(
        preemption.Candidate("node1", preemption.Victims([VICTIM])), PREEMPTOR, plugin.name
    )
    assert tasks == [] and backend.get("Pod", "victim", "default") is None
    assert plugin.pre_enqueue(PREEMPTOR) is None


def test_preemptor_waits_gated_until_its_victim_is_gone() -> None:
    """The preemptor's failed attempt is requeued by an event seen in flight, PreEnqueue gates
    it (DefaultPreemption joins its rejectors); the victim's deletion ungates it."""
    fwk, plugin, _, tasks = _setup()
    q = SchedulingQueue(frameworks={fwk.profile_name: fwk}, clock=fwk.clock)
    q.add(PREEMPTOR)
    info = q.pop()
    assert info is not None
    plugin.evaluator.prepare_candidate_async(
        preemption.Candidate("node1", preemption.Victims([VICTIM])), PREEMPTOR, plugin.name
    )
    q.assigned_pod_deleted(OTHER)  # seen in flight: NodeResourcesFit would queue the pod
    info.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert qt.location(q, PREEMPTOR) == qt.UNSCHEDULABLE_PODS
    assert info.gating_plugin == "DefaultPreemption"
    assert info.unschedulable_plugins == {"NodeResourcesFit", "DefaultPreemption"}

    tasks.pop()()  # the victim goes
    q.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, VICTIM, None)
    assert qt.location(q, PREEMPTOR) == qt.BACKOFF_Q
    assert not info.gated
