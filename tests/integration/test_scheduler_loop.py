"""End to end: the Scheduler with the real in-tree plugins (entry points) and MemoryBackend."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar

import pluggy
import pytest

from schedframe import framework as fw
from schedframe import hooks
from schedframe.framework import Code, CycleState, Status
from schedframe.objects import Node, Pod
from schedframe.runtime import Registry
from schedframe.scheduler import Scheduler, VirtualClock

from ._support import (
    BindingLog,
    config,
    make_node,
    make_pod,
    missing_default_plugins,
    new_scheduler,
    over_capacity,
    pods_of,
    profile,
)

pytestmark = pytest.mark.integration


def _bound(backend: Any) -> dict[str, str]:
    return {p.key: p.spec.node_name for p in pods_of(backend) if p.spec.node_name}


# --------------------------------------------------------------------------------------------
# Volume
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("deterministic", [True, False], ids=["deterministic", "real"])
def test_thousand_pods_on_hundred_nodes(deterministic: bool) -> None:
    sched, backend = new_scheduler(deterministic=deterministic)
    log = BindingLog(backend)
    try:
        for i in range(100):
            backend.create(make_node(f"node-{i:03d}", cpu=4000))
        for i in range(1000):
            backend.create(make_pod(f"pod-{i:04d}", cpu=100 + (i % 5) * 50))
        sched.run_until_idle()
        assert sched.wait_for_bindings(timeout=30)
        bound = _bound(backend)
        assert len(bound) == 1000
        assert over_capacity(backend) == {}
        assert log.double_bound() == {}
        assert Counter(r.outcome for r in sched.results.values()) == {"scheduled": 1000}
        assert len(sched.queue.pending_pods()) == 0
        # Spreading: LeastAllocated/BalancedAllocation use every node.
        assert len(set(bound.values())) == 100
        scheduled = [e for e in backend.events if e.reason == "Scheduled"]
        assert len(scheduled) == 1000
    finally:
        sched.stop()


# --------------------------------------------------------------------------------------------
# Unschedulable, then schedulable through a queueing hint
# --------------------------------------------------------------------------------------------


class _Observer:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @hooks.impl
    def schedframe_pod_scheduled(
        self, pod: Pod, node_name: str, profile: str, attempts: int
    ) -> None:
        self.calls.append(("scheduled", {"pod": pod.key, "node": node_name, "attempts": attempts}))

    @hooks.impl
    def schedframe_pod_unschedulable(
        self, pod: Pod, profile: str, message: str, plugins: Sequence[str], attempts: int
    ) -> None:
        self.calls.append(
            ("unschedulable", {"pod": pod.key, "message": message, "plugins": list(plugins)})
        )

    @hooks.impl
    def schedframe_cycle_finished(
        self, pod: Pod, profile: str, result: str, durations: Any
    ) -> None:
        self.calls.append(("cycle", {"pod": pod.key, "result": result, "keys": sorted(durations)}))


def test_unschedulable_then_bound_after_node_added_via_queueing_hint() -> None:
    pm = hooks.plugin_manager(load_entry_points=False)
    observer = _Observer()
    pm.register(observer)
    sched, backend = new_scheduler(hooks=pm)
    flushes: list[float] = []
    original_flush = sched.queue.flush_unschedulable_pods_leftover

    def counting_flush() -> None:
        flushes.append(sched.clock.now())
        original_flush()

    sched.queue.flush_unschedulable_pods_leftover = counting_flush  # type: ignore[method-assign]

    backend.create(make_node("small-1", cpu=1000))
    backend.create(make_node("small-2", cpu=1000))
    backend.create(make_pod("big", cpu=2000))
    sched.run_until_idle()

    result = next(iter(sched.results.values()))
    assert result.outcome == "unschedulable"
    assert result.message.startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert result.plugins == ("NodeResourcesFit",)
    failed = [e for e in backend.events if e.reason == "FailedScheduling"]
    assert [e.note for e in failed] == [result.message]
    assert failed[0].type == "Warning" and failed[0].action == "Scheduling"
    pod = backend.get("Pod", "big")
    assert isinstance(pod, Pod)
    cond = {c.type: c for c in pod.status.conditions}["PodScheduled"]
    assert (cond.status, cond.reason, cond.message) == ("False", "Unschedulable", result.message)
    assert [p.name for p in sched.queue.unschedulable_pods()] == ["big"]

    # A node that fits: NodeResourcesFit's Node/Add hint requeues the pod, no flush needed.
    backend.create(make_node("large", cpu=4000))
    sched.run_until_idle()
    assert _bound(backend) == {"default/big": "large"}
    assert flushes == []
    assert sched.clock.now() < 30
    result = next(iter(sched.results.values()))
    assert result.outcome == "scheduled" and result.node_name == "large" and result.attempts == 2

    kinds = [c[0] for c in observer.calls]
    assert kinds == ["unschedulable", "cycle", "cycle", "scheduled"]
    assert observer.calls[0][1]["plugins"] == ["NodeResourcesFit"]
    assert observer.calls[1][1]["result"] == "unschedulable"
    assert observer.calls[2][1]["result"] == "scheduled"
    assert "Total" in observer.calls[2][1]["keys"] and "Filter" in observer.calls[2][1]["keys"]
    assert observer.calls[3][1] == {"pod": "default/big", "node": "large", "attempts": 2}


def test_no_nodes_then_node_added() -> None:
    sched, backend = new_scheduler()
    backend.create(make_pod("p"))
    sched.run_until_idle(stall_timeout=5)
    result = next(iter(sched.results.values()))
    assert result.outcome == "unschedulable"
    assert result.message == "no nodes available to schedule pods"
    backend.create(make_node("n"))
    sched.run_until_idle()
    assert _bound(backend) == {"default/p": "n"}


# --------------------------------------------------------------------------------------------
# Permit: wait, allow, reject, timeout (virtual time)
# --------------------------------------------------------------------------------------------


class PermitByLabel(fw.PermitPlugin, fw.EnqueueExtensions):
    """Waits, rejects or allows according to the pod's ``permit`` label."""

    name: ClassVar[str] = "TestPermit"

    def __init__(self, args: object, handle: fw.Handle) -> None:
        self.handle = handle

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        mode = pod.labels.get("permit", "")
        if mode == "wait":
            return Status.wait(10.0)
        if mode == "reject":
            return Status(Code.UNSCHEDULABLE, "rejected by TestPermit")
        return None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        return ()


def _permit_scheduler() -> tuple[Scheduler, Any]:
    registry = Registry.discover()
    registry.register("TestPermit", PermitByLabel)
    cfg = config(profile(plugins={"permit": {"enabled": [{"name": "TestPermit"}]}}))
    sched, backend = new_scheduler(cfg, [make_node("n1"), make_node("n2")], registry=registry)
    return sched, backend


def test_permit_wait_then_allow() -> None:
    sched, backend = _permit_scheduler()
    backend.create(make_pod("w", labels={"permit": "wait"}))
    assert sched.schedule_one()
    fwk = sched.profiles["default-scheduler"]
    pod = backend.get("Pod", "w")
    assert isinstance(pod, Pod)
    waiting = fwk.get_waiting_pod(pod.uid)
    assert waiting is not None and waiting.pending_plugins() == ["TestPermit"]
    assert sched.in_flight() == 1
    assert _bound(backend) == {}
    assert sched.results[pod.uid].outcome == "binding"
    assert isinstance(sched.clock, VirtualClock)
    sched.clock.advance(5)  # half the timeout: still waiting
    assert fwk.get_waiting_pod(pod.uid) is not None

    waiting.allow("TestPermit")
    sched.run_until_idle()
    assert sched.in_flight() == 0
    assert sched.results[pod.uid].outcome == "scheduled"
    assert list(_bound(backend)) == ["default/w"]
    assert fwk.get_waiting_pod(pod.uid) is None


def test_permit_wait_then_reject() -> None:
    sched, backend = _permit_scheduler()
    backend.create(make_pod("w", labels={"permit": "wait"}))
    assert sched.schedule_one()
    pod = backend.get("Pod", "w")
    assert isinstance(pod, Pod)
    host = sched.results[pod.uid].suggested_host
    waiting = sched.profiles["default-scheduler"].get_waiting_pod(pod.uid)
    assert waiting is not None
    waiting.reject("TestPermit", "not today")
    sched.run_until_idle()
    result = sched.results[pod.uid]
    assert result.outcome == "unschedulable"
    assert result.message == "0/1 nodes are available: 1 not today."
    assert result.plugins == ("TestPermit",)
    assert _bound(backend) == {}
    # Unreserved and forgotten: the node it was assumed on holds nothing.
    assert sched.cache.is_assumed_pod(pod) is False
    dump = sched.cache.dump()  # type: ignore[attr-defined]
    assert all(not info.pods for info in dump.nodes.values()), host
    assert [p.name for p in sched.queue.unschedulable_pods()] == ["w"]


def test_permit_wait_times_out_in_virtual_time() -> None:
    sched, backend = _permit_scheduler()
    backend.create(make_pod("w", labels={"permit": "wait"}))
    assert sched.schedule_one()
    pod = backend.get("Pod", "w")
    assert isinstance(pod, Pod)
    assert isinstance(sched.clock, VirtualClock)
    sched.clock.advance(9.999)
    assert sched.in_flight() == 1
    sched.clock.advance(0.001)
    sched.run_until_idle()
    result = sched.results[pod.uid]
    assert result.outcome == "unschedulable"
    assert result.message == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin TestPermit."
    )
    assert sched.in_flight() == 0
    assert _bound(backend) == {}


def test_permit_rejects_in_scheduling_cycle() -> None:
    sched, backend = _permit_scheduler()
    backend.create(make_pod("r", labels={"permit": "reject"}))
    backend.create(make_pod("ok"))
    sched.run_until_idle()
    assert list(_bound(backend)) == ["default/ok"]
    rejected = [r for r in sched.results.values() if r.outcome == "unschedulable"]
    assert [r.message for r in rejected] == ["0/1 nodes are available: 1 rejected by TestPermit."]
    assert rejected[0].plugins == ("TestPermit",)


# --------------------------------------------------------------------------------------------
# Failures: nothing lost, nothing double-booked
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("deterministic", [True, False], ids=["deterministic", "real"])
def test_injected_bind_failures_lose_nothing(deterministic: bool) -> None:
    sched, backend = new_scheduler(deterministic=deterministic)
    log = BindingLog(backend)
    try:
        for i in range(4):
            backend.create(make_node(f"n{i}", cpu=2000))
        backend.inject_failure("bind", times=7)
        backend.inject_failure("patch_pod_status", times=2)
        for i in range(30):
            backend.create(make_pod(f"p{i:02d}", cpu=250))
        sched.run_until_idle(stall_timeout=120)
        assert sched.wait_for_bindings(timeout=30)
        if not deterministic:
            # Errored pods come back after their backoff; give the real clock time.
            for _ in range(100):
                if len(_bound(backend)) == 30:
                    break
                sched.run(duration=0.2)
        assert len(_bound(backend)) == 30
        assert over_capacity(backend) == {}
        assert log.double_bound() == {}
        errors = [e for e in backend.events if e.reason == "FailedScheduling"]
        assert errors and all("injected failure of bind" in e.note for e in errors)
        assert len(sched.cache.dump().assumed_pods) == 0  # type: ignore[attr-defined]
    finally:
        sched.stop()


def test_bind_conflict_when_bound_by_someone_else_never_double_books() -> None:
    """The pod waits on Permit while another party binds it: our bind gets a 409 and the
    assumed copy is dropped; the pod stays where the other party put it."""
    sched, backend = _permit_scheduler()
    log = BindingLog(backend)
    backend.create(make_pod("w", labels={"permit": "wait"}))
    assert sched.schedule_one()
    pod = backend.get("Pod", "w")
    assert isinstance(pod, Pod)
    ours = sched.results[pod.uid].suggested_host
    other = "n2" if ours == "n1" else "n1"
    backend.bind(pod, other)
    waiting = sched.profiles["default-scheduler"].get_waiting_pod(pod.uid)
    assert waiting is not None
    waiting.allow("TestPermit")
    sched.run_until_idle()
    assert _bound(backend) == {"default/w": other}
    assert log.double_bound() == {}
    dump = sched.cache.dump()  # type: ignore[attr-defined]
    assert [p.pod.name for p in dump.nodes[other].pods] == ["w"]
    assert dump.nodes[ours].pods == []
    assert sched.queue.pending_pods() == []
    assert sched.results[pod.uid].outcome == "error"
    assert "already assigned to node" in sched.results[pod.uid].message


def test_failing_plugin_is_an_error_and_a_retry() -> None:
    class Flaky(fw.FilterPlugin):
        name: ClassVar[str] = "Flaky"
        failures = 2

        def __init__(self, args: object, handle: fw.Handle) -> None:
            pass

        def filter(self, state: CycleState, pod: Pod, node_info: fw.NodeInfo) -> Status | None:
            if Flaky.failures > 0:
                Flaky.failures -= 1
                raise RuntimeError("boom")
            return None

    registry = Registry.discover()
    registry.register("Flaky", Flaky)
    cfg = config(profile(plugins={"filter": {"enabled": [{"name": "Flaky"}]}}))
    sched, backend = new_scheduler(cfg, [make_node("n1")], registry=registry)
    backend.create(make_pod("p"))
    sched.run_until_idle()
    assert _bound(backend) == {"default/p": "n1"}
    notes = [e.note for e in backend.events if e.reason == "FailedScheduling"]
    assert notes == ['running "Flaky" filter plugin: RuntimeError: boom'] * 2
    pod = backend.get("Pod", "p")
    assert isinstance(pod, Pod)
    assert sched.results[pod.uid].attempts == 3


def test_deleted_waiting_pod_frees_its_node() -> None:
    sched, backend = _permit_scheduler()
    backend.create(make_pod("w", labels={"permit": "wait"}))
    assert sched.schedule_one()
    pod = backend.get("Pod", "w")
    assert isinstance(pod, Pod)
    backend.delete(pod)
    sched.run_until_idle()
    assert sched.in_flight() == 0
    dump = sched.cache.dump()  # type: ignore[attr-defined]
    assert all(not info.pods for info in dump.nodes.values())
    assert sched.queue.pending_pods() == []


# --------------------------------------------------------------------------------------------
# Determinism
# --------------------------------------------------------------------------------------------


def _deterministic_run(seed: int) -> tuple[dict[str, str], list[tuple[str, str, str]], list[Any]]:
    sched, backend = new_scheduler(seed=seed)
    for i in range(20):
        backend.create(make_node(f"n{i:02d}", cpu=2000))
    backend.inject_failure("bind", times=3)
    for i in range(150):
        backend.create(make_pod(f"p{i:03d}", cpu=100 + (i % 3) * 100, priority=i % 4))
    backend.create(make_pod("too-big", cpu=5000))
    sched.run_until_idle()
    backend.create(make_node("late", cpu=8000))
    sched.run_until_idle()
    events = [(e.regarding, e.reason, e.note) for e in backend.events]
    return (
        _bound(backend),
        events,
        [(r.pod, r.outcome, r.suggested_host, r.top_nodes) for r in sched.results.values()],
    )


def test_deterministic_mode_is_reproducible() -> None:
    first = _deterministic_run(seed=7)
    second = _deterministic_run(seed=7)
    assert first == second
    assert first[0]["default/too-big"] == "late"
    assert len(first[0]) == 151
    # Ties between equally good nodes follow the seed.
    other = _deterministic_run(seed=8)
    assert other[0] != first[0]


# --------------------------------------------------------------------------------------------
# Profiles
# --------------------------------------------------------------------------------------------


def test_profiles_routed_by_scheduler_name_and_others_ignored() -> None:
    most_allocated = {
        "name": "NodeResourcesFit",
        "args": {"scoringStrategy": {"type": "MostAllocated"}},
    }
    cfg = config(
        profile("default-scheduler"),
        profile(
            "bin-packer",
            plugins={"multiPoint": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}},
            plugin_config=[most_allocated],
        ),
    )
    sched, backend = new_scheduler(cfg, [make_node("a", cpu=4000), make_node("b", cpu=4000)])
    assert sorted(sched.profiles) == ["bin-packer", "default-scheduler"]
    # A pod bound by someone else counts against capacity; a pod for another scheduler waits.
    backend.create(make_pod("external", cpu=3500, scheduler="other", node_name="a"))
    backend.create(make_pod("foreign", scheduler="other"))
    for i in range(3):
        backend.create(make_pod(f"packed-{i}", cpu=100, scheduler="bin-packer"))
    backend.create(make_pod("spread", cpu=1000))
    sched.run_until_idle()

    bound = _bound(backend)
    assert "default/foreign" not in bound
    assert all(p.name != "foreign" for p in sched.queue.pending_pods())
    assert all(r.pod is not None and r.pod.name != "foreign" for r in sched.results.values())
    assert not [e for e in backend.events if e.regarding == "default/foreign"]
    # LeastAllocated (default profile) avoids the loaded node; MostAllocated packs onto it.
    assert bound["default/spread"] == "b"
    assert {bound[f"default/packed-{i}"] for i in range(3)} == {"a"}
    profiles = {r.pod.name: r.profile for r in sched.results.values() if r.pod is not None}
    assert profiles == {
        "packed-0": "bin-packer",
        "packed-1": "bin-packer",
        "packed-2": "bin-packer",
        "spread": "default-scheduler",
    }
    assert over_capacity(backend) == {}


def test_from_config_defaults() -> None:
    sched = Scheduler.from_config(config(), deterministic=True)
    try:
        backend = sched.backend
        backend.create(make_node("n"))  # type: ignore[attr-defined]
        backend.create(make_pod("p"))  # type: ignore[attr-defined]
        sched.run_until_idle()
        assert sched.placements() == {"default/p": "n"}
    finally:
        sched.stop()


def test_observer_failures_never_break_scheduling() -> None:
    class Broken:
        @hooks.impl
        def schedframe_pod_scheduled(
            self, pod: Pod, node_name: str, profile: str, attempts: int
        ) -> None:
            raise RuntimeError("observer bug")

    pm = pluggy.PluginManager(hooks.NAME)
    from schedframe.hooks import _spec

    pm.add_hookspecs(_spec)
    pm.register(Broken())
    sched, backend = new_scheduler(hooks=pm)
    backend.create(make_node("n"))
    backend.create(make_pod("p"))
    sched.run_until_idle()
    assert sched.placements() == {"default/p": "n"}


# --------------------------------------------------------------------------------------------
# PostFilter: nominating info is honoured
# --------------------------------------------------------------------------------------------


class Gate(fw.FilterPlugin, fw.EnqueueExtensions):
    """Rejects every node while closed; any node update may open it."""

    name: ClassVar[str] = "Gate"
    closed: ClassVar[bool] = True

    def __init__(self, args: object, handle: fw.Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: fw.NodeInfo) -> Status | None:
        return Status(Code.UNSCHEDULABLE, "gate closed") if Gate.closed else None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        return (
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.EventResource.NODE, fw.ActionType.UPDATE)),
        )


class Nominate(fw.PostFilterPlugin):
    """Nominates the node named in the pod's ``nominate`` label, or fails with a message."""

    name: ClassVar[str] = "Nominate"

    def __init__(self, args: object, handle: fw.Handle) -> None:
        pass

    def post_filter(
        self, state: CycleState, pod: Pod, filtered: fw.NodeToStatus
    ) -> tuple[fw.PostFilterResult | None, Status | None]:
        target = pod.labels.get("nominate")
        if target:
            info = fw.NominatingInfo(target, fw.NominatingMode.OVERRIDE)
            return fw.PostFilterResult(info), None
        return None, Status(Code.UNSCHEDULABLE, "preemption: not helpful")


def test_post_filter_nomination_is_honoured() -> None:
    Gate.closed = True
    registry = Registry.discover()
    registry.register("Gate", Gate)
    registry.register("Nominate", Nominate)
    cfg = config(
        profile(
            plugins={
                "multiPoint": {"disabled": [{"name": "DefaultPreemption"}]},
                "filter": {"enabled": [{"name": "Gate"}]},
                "postFilter": {"enabled": [{"name": "Nominate"}]},
            }
        )
    )
    nodes = [make_node("roomy", cpu=8000), make_node("tight", cpu=2000)]
    sched, backend = new_scheduler(cfg, nodes, registry=registry)
    backend.create(make_pod("nominated", labels={"nominate": "tight"}))
    backend.create(make_pod("plain"))
    sched.run_until_idle()

    messages = {r.pod.name: r.message for r in sched.results.values() if r.pod is not None}
    gate = "0/2 nodes are available: 2 gate closed."
    assert messages == {
        "nominated": gate,
        # Upstream adds no period after PostFilter; DynamicResources (default profile) speaks
        # first among the PostFilter plugins.
        "plain": gate + " no new claims to deallocate, preemption: not helpful",
    }
    pod = backend.get("Pod", "nominated")
    assert isinstance(pod, Pod)
    assert pod.status.nominated_node_name == "tight"
    assert [p.pod.name for p in sched.queue.nominated_pods_for_node("tight")] == ["nominated"]

    # Open the gate with a node update: the nominated node is tried first and used, though
    # LeastAllocated would prefer the roomy node.
    Gate.closed = False
    import attrs

    tight = backend.get("Node", "tight")
    assert isinstance(tight, Node)
    backend.update(attrs.evolve(tight, metadata=attrs.evolve(tight.metadata, labels={"open": "1"})))
    sched.run_until_idle()
    assert _bound(backend) == {"default/nominated": "tight", "default/plain": "roomy"}
    pod = backend.get("Pod", "nominated")
    assert isinstance(pod, Pod) and pod.status.nominated_node_name == ""
    assert sched.queue.nominated_pods_for_node("tight") == []
    Gate.closed = True


def test_preemption_end_to_end() -> None:
    if "DefaultPreemption" in missing_default_plugins():
        pytest.skip("DefaultPreemption is not installed")
    seen: list[tuple[str, str, list[str], str]] = []

    class Watcher:
        @hooks.impl
        def schedframe_preemption(
            self, preemptor: Pod, node_name: str, victims: Sequence[Pod], profile: str
        ) -> None:
            seen.append((preemptor.name, node_name, sorted(v.name for v in victims), profile))

    pm = hooks.plugin_manager(load_entry_points=False)
    pm.register(Watcher())
    sched, backend = new_scheduler(objects=[make_node("n1", cpu=1000)], hooks=pm)
    for i in range(3):
        backend.create(make_pod(f"low{i}", cpu=300, priority=0))
    sched.run_until_idle()
    backend.create(make_pod("high", cpu=500, priority=100))
    sched.run_until_idle()
    bound = _bound(backend)
    assert bound["default/high"] == "n1"
    assert len(bound) == 2  # two victims made room, one low pod stays
    preempted = [e.regarding for e in backend.events if e.reason == "Preempted"]
    assert len(preempted) == 2
    assert over_capacity(backend) == {}
    reasons = [e.reason for e in backend.events if e.regarding == "default/high"]
    assert reasons == ["FailedScheduling", "Scheduled"]
    victims = sorted(e.split("/")[1] for e in preempted)
    assert seen == [("high", "n1", victims, "default-scheduler")]


def test_async_preemption_in_real_mode_is_waited_for() -> None:
    """The eviction task runs on a worker thread; run_until_idle waits for it (it counts as
    in flight), so the preemptor is retried once its victims are gone."""
    if "DefaultPreemption" in missing_default_plugins():
        pytest.skip("DefaultPreemption is not installed")
    sched, backend = new_scheduler(objects=[make_node("n1", cpu=1000)], deterministic=False)
    with sched:
        for i in range(3):
            backend.create(make_pod(f"low{i}", cpu=300, priority=0))
        sched.run_until_idle()
        backend.create(make_pod("high", cpu=500, priority=100))
        sched.run_until_idle()
        assert sched.wait_for_bindings(timeout=30)
        bound = _bound(backend)
        assert bound.get("default/high") == "n1"
        assert len(bound) == 2
        assert sched.in_flight() == 0
        # The eviction task counted as a running cycle too: the back-pressure count is back
        # to zero, not below it (a negative count would let binding cycles run unbounded).
        assert sched.running_binding_cycles() == 0


def test_requeue_refused_by_the_queue_still_reports_the_failure() -> None:
    # The queue refuses a pod it already holds (an update re-added it meanwhile); the
    # FailedScheduling event and the PodScheduled condition must be written all the same,
    # and the pod, still queued, binds once a node fits.
    from schedframe.queue import QueueError

    sched, backend = new_scheduler()
    original = sched.queue.add_unschedulable_if_not_present

    def already_present(qpi: Any, scheduling_cycle: int) -> None:
        original(qpi, scheduling_cycle)
        raise QueueError(f"pod {qpi.pod.key} is already present in the queue")

    sched.queue.add_unschedulable_if_not_present = already_present  # type: ignore[method-assign]
    backend.create(make_node("small", cpu=1000))
    backend.create(make_pod("big", cpu=2000))
    sched.run_until_idle()

    assert [e.reason for e in backend.events] == ["FailedScheduling"]
    pod = backend.get("Pod", "big")
    assert isinstance(pod, Pod)
    cond = {c.type: c for c in pod.status.conditions}["PodScheduled"]
    assert (cond.status, cond.reason) == ("False", "Unschedulable")

    sched.queue.add_unschedulable_if_not_present = original  # type: ignore[method-assign]
    backend.create(make_node("large", cpu=4000))
    sched.run_until_idle()
    assert _bound(backend) == {"default/big": "large"}


def test_terminal_pods_hold_no_resources_on_their_node() -> None:
    # Regression: a Succeeded pod bound to the node used to count against its 4 CPUs.
    done = make_pod("done", cpu=4000, node_name="n").with_status(phase="Succeeded")
    failed = make_pod("failed", cpu=4000, node_name="n").with_status(phase="Failed")
    sched, backend = new_scheduler(None, [make_node("n", cpu=4000), done, failed])
    backend.create(make_pod("p", cpu=3000))
    sched.run_until_idle()
    assert _bound(backend)["default/p"] == "n"


def test_the_scheduler_sees_the_workload_objects_default_spreading_reads() -> None:
    from schedframe.objects import LabelSelector, ObjectMeta, ReplicaSet, Service

    svc = Service(metadata=ObjectMeta(name="web", namespace="default"), selector={"app": "web"})
    sched, backend = new_scheduler(None, [make_node("n"), svc])
    lister = sched.cluster.workloads
    assert [s.name for s in lister.services("default")] == ["web"]
    rs = ReplicaSet(
        metadata=ObjectMeta(name="web-1", namespace="default"),
        selector=LabelSelector(match_labels={"app": "web"}),
        template=make_pod("template", labels={"app": "web"}),
    )
    backend.create(rs)
    assert lister.replica_set("default", "web-1") is not None
    backend.delete(svc)
    assert not lister.services("default")


# --------------------------------------------------------------------------------------------
# NominatedNodeNameForExpectation: PreBindPreFlight, nominated node before PreBind
# --------------------------------------------------------------------------------------------


class FlightPreBind(fw.PreBindPlugin):
    """PreBind work only for pods labelled ``prebind=yes``; notes the pod's nominatedNodeName
    as the cluster holds it when PreBind runs."""

    name: ClassVar[str] = "FlightPreBind"
    seen: ClassVar[list[tuple[str, str]]] = []
    backend: ClassVar[Any] = None

    def __init__(self, args: object, handle: fw.Handle) -> None:
        pass

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None if pod.labels.get("prebind") == "yes" else Status(Code.SKIP)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        stored = FlightPreBind.backend.get("Pod", pod.name)
        FlightPreBind.seen.append((pod.name, stored.status.nominated_node_name))
        return None


@pytest.mark.parametrize(
    ("enabled", "labels", "want_seen"),
    [
        pytest.param(True, {"prebind": "yes"}, [("p", "n1")], id="PreBind will work: nominated"),
        pytest.param(True, {}, [], id="every PreBindPreFlight skips: PreBind not run"),
        pytest.param(False, {"prebind": "yes"}, [("p", "")], id="gate off: no write"),
        pytest.param(False, {}, [("p", "")], id="gate off: PreBind runs anyway"),
    ],
)
def test_nominated_node_name_for_expectation(
    enabled: bool, labels: dict[str, str], want_seen: list[tuple[str, str]]
) -> None:
    registry = Registry.discover()
    registry.register("FlightPreBind", FlightPreBind)
    cfg = config(profile(plugins={"preBind": {"enabled": [{"name": "FlightPreBind"}]}}))
    sched, backend = new_scheduler(
        cfg, [make_node("n1")], registry=registry, nominated_node_name_for_expectation=enabled
    )
    FlightPreBind.seen = []
    FlightPreBind.backend = backend
    backend.create(make_pod("p", labels=labels))
    sched.run_until_idle()
    assert _bound(backend) == {"default/p": "n1"}
    assert FlightPreBind.seen == want_seen


def test_waiting_pod_is_nominated_for_expectation() -> None:
    """A pod waiting on Permit gets its nominated node even when no PreBind will work."""
    sched, backend = _permit_scheduler()
    backend.create(make_pod("w", labels={"permit": "wait"}))
    assert sched.schedule_one()
    pod = backend.get("Pod", "w")
    assert isinstance(pod, Pod)
    host = sched.results[pod.uid].suggested_host
    assert pod.status.nominated_node_name == host
    assert sched.queue.unschedulable_pods() == [] and sched.in_flight() == 1


def test_pre_bind_pre_flight_error_fails_the_binding_cycle() -> None:
    class Broken(fw.PreBindPlugin):
        name: ClassVar[str] = "Broken"

        def __init__(self, args: object, handle: fw.Handle) -> None:
            pass

        def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            return Status(Code.UNSCHEDULABLE, "no")

        def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            raise AssertionError("PreBind must not run")

    registry = Registry.discover()
    registry.register("Broken", Broken)
    cfg = config(profile(plugins={"preBind": {"enabled": [{"name": "Broken"}]}}))
    sched, backend = new_scheduler(cfg, [make_node("n1")], registry=registry)
    backend.create(make_pod("p"))
    assert sched.schedule_one()
    assert _bound(backend) == {}
    notes = [e.note for e in backend.events if e.reason == "FailedScheduling"]
    assert notes == [
        'PreBindPreFlight Broken returned "Unschedulable", which is unsupported. '
        "It is supposed to return Success, Skip, or Error status"
    ]
    assert sched.cache.is_assumed_pod(backend.get("Pod", "p")) is False  # type: ignore[arg-type]
    assert [p.name for p in sched.queue.backoff_pods()] == ["p"]  # an error: backoff


def test_waiting_victim_is_preempted_in_memory_and_backs_off() -> None:
    """A victim parked in Permit is preempted in memory (WaitingPod.preempt): its binding
    cycle ends in an Error, so it goes through the error backoff, not the unschedulable pool,
    and it is never deleted; the preemptor is activated and bound."""
    if "DefaultPreemption" in missing_default_plugins():
        pytest.skip("DefaultPreemption is not installed")
    registry = Registry.discover()
    registry.register("TestPermit", PermitByLabel)
    cfg = config(profile(plugins={"permit": {"enabled": [{"name": "TestPermit"}]}}))
    sched, backend = new_scheduler(cfg, [make_node("n1", cpu=1000)], registry=registry)
    backend.create(make_pod("low", cpu=600, priority=0, labels={"permit": "wait"}))
    assert sched.schedule_one()  # low waits on Permit, assumed on n1
    fwk = sched.profiles["default-scheduler"]
    low = backend.get("Pod", "low")
    assert isinstance(low, Pod) and fwk.get_waiting_pod(low.uid) is not None
    backend.create(make_pod("high", cpu=600, priority=100))
    assert sched.schedule_one()  # high: no room; preemption picks low, evicted after the cycle
    assert fwk.get_waiting_pod(low.uid) is None
    assert [p.name for p in sched.queue.backoff_pods()] == ["low"]
    assert backend.get("Pod", "low") is not None  # preempted in memory, not deleted
    high = backend.get("Pod", "high")
    assert isinstance(high, Pod)
    notes = [e.note for e in backend.events if e.reason == "Preempted"]
    assert notes == [f"Preempted by pod {high.uid} on node n1 (in kube-scheduler memory)."]
    sched.run_until_idle()
    assert _bound(backend) == {"default/high": "n1"}


@pytest.mark.parametrize(
    ("queueing_hints", "want"),
    [
        pytest.param(True, ["big"], id="with hints: NodeResourcesFit's hint requeues it"),
        pytest.param(False, [], id="without hints: preCheckForNode keeps it in the pool"),
    ],
)
def test_node_add_pre_check_only_without_queueing_hints(
    queueing_hints: bool, want: list[str]
) -> None:
    """A node with room but an untolerated NoSchedule taint: without hints the event handler's
    pre-check (upstream preCheckForNode) leaves the pod in the pool."""
    from schedframe.objects import NodeSpec, Taint

    sched, backend = new_scheduler(
        objects=[make_node("small", cpu=500)], queueing_hints=queueing_hints
    )
    backend.create(make_pod("big", cpu=1000))
    assert sched.schedule_one()
    assert [p.name for p in sched.queue.unschedulable_pods()] == ["big"]
    tainted = make_node("tainted", cpu=2000)
    tainted = Node(
        metadata=tainted.metadata,
        spec=NodeSpec(taints=(Taint(key="k", value="v", effect="NoSchedule"),)),
        status=tainted.status,
    )
    backend.create(tainted)
    moved = [p.name for p in sched.queue.backoff_pods() + sched.queue.active_pods()]
    assert moved == want
