"""MemoryBackend: store, watch, and the API server's binding/status/delete semantics.

Binding cases follow upstream ``pkg/registry/core/pod/storage/storage_test.go``
(TestEtcdCreateBinding, TestEtcdCreateWithConflict, TestEtcdCreateWithSchedulingGates,
TestEtcdCreateBindingWithUIDAndResourceVersion).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime

import attrs
import pytest

from schedframe.backends import (
    KINDS,
    Backend,
    Binder,
    Event,
    Lister,
    MemoryBackend,
    WatchEvent,
)
from schedframe.errors import BackendError
from schedframe.objects import (
    LabelSelector,
    Namespace,
    Node,
    ObjectMeta,
    Pod,
    PodCondition,
    PodDisruptionBudget,
    PodSpec,
    PodStatus,
)


class FakeClock:
    """now() plus call_later(), advanced by hand."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.t = start
        self.timers: list[tuple[float, Callable[[], None]]] = []

    def now(self) -> float:
        return self.t

    def call_later(self, delay: float, callback: Callable[[], None]) -> object:
        self.timers.append((self.t + delay, callback))
        return None

    def advance(self, seconds: float) -> None:
        self.t += seconds
        due = [t for t in self.timers if t[0] <= self.t]
        self.timers = [t for t in self.timers if t[0] > self.t]
        for _, callback in sorted(due, key=lambda t: t[0]):
            callback()


def pod(name: str, node: str = "", *, ns: str = "default", uid: str = "", **spec: object) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace=ns, uid=uid),
        spec=PodSpec(node_name=node, **spec),  # type: ignore[arg-type]
    )


def node(name: str) -> Node:
    return Node(metadata=ObjectMeta(name=name))


def recorder(backend: MemoryBackend) -> list[WatchEvent]:
    events: list[WatchEvent] = []
    backend.subscribe(events.append)
    return events


def conflict(message: str) -> str:
    return f'Operation cannot be fulfilled on pods/binding "foo": {message}'


# -- protocols --------------------------------------------------------------------------------


def test_memory_backend_satisfies_the_protocols() -> None:
    backend = MemoryBackend()
    assert isinstance(backend, Binder)
    lister: Lister = backend
    full: Backend = backend
    assert lister is full


# -- store and resource versions --------------------------------------------------------------


def test_every_write_gets_the_next_resource_version() -> None:
    backend = MemoryBackend([node("n1"), pod("p1")])
    assert backend.resource_version == 2
    stored_node, stored_pod = backend.get("Node", "n1"), backend.get("Pod", "p1")
    assert isinstance(stored_node, Node) and isinstance(stored_pod, Pod)
    assert stored_node.metadata.resource_version == "1"
    assert stored_pod.metadata.resource_version == "2"
    backend.bind(stored_pod, "n1")
    bound = backend.get("Pod", "p1")
    assert isinstance(bound, Pod)
    assert bound.metadata.resource_version == "3"
    assert backend.resource_version == 3


def test_create_defaults_namespace_uid_and_creation_time() -> None:
    clock = FakeClock(1_700_000_000.5)
    backend = MemoryBackend(clock=clock)
    created = backend.create(pod("p", ns=""))
    assert isinstance(created, Pod)
    assert created.namespace == "default"
    assert created.uid == "default/p"
    assert created.creation_timestamp == datetime.fromtimestamp(1_700_000_000, tz=UTC)
    assert backend.create(node("n")).metadata.uid == "n"


def test_create_existing_is_already_exists() -> None:
    backend = MemoryBackend([pod("p")])
    with pytest.raises(BackendError) as info:
        backend.create(pod("p"))
    assert (str(info.value), info.value.reason, info.value.code) == (
        'pods "p" already exists',
        "AlreadyExists",
        409,
    )


def test_update_with_stale_resource_version_conflicts() -> None:
    backend = MemoryBackend([pod("p")])
    stored = backend.get("Pod", "p")
    assert isinstance(stored, Pod)
    fresh = backend.update(
        attrs.evolve(stored, metadata=attrs.evolve(stored.metadata, labels={"a": "b"}))
    )
    assert fresh.metadata.resource_version == "2"
    with pytest.raises(BackendError) as info:
        backend.update(
            attrs.evolve(stored, metadata=attrs.evolve(stored.metadata, labels={"c": "d"}))
        )
    assert info.value.code == 409 and info.value.reason == "Conflict"
    assert str(info.value) == (
        'Operation cannot be fulfilled on pods "p": the object has been modified; please apply '
        "your changes to the latest version and try again"
    )


def test_update_missing_is_not_found_and_noop_update_writes_nothing() -> None:
    backend = MemoryBackend([node("n")])
    with pytest.raises(BackendError, match='nodes "m" not found') as info:
        backend.update(node("m"))
    assert info.value.code == 404 and info.value.reason == "NotFound"
    events = recorder(backend)
    backend.update(node("n"))
    assert backend.resource_version == 1
    assert [e.type for e in events] == ["ADDED"]


def test_apply_creates_or_replaces() -> None:
    backend = MemoryBackend()
    backend.apply(pod("p"))
    replaced = backend.apply(pod("p", priority=5))
    assert isinstance(replaced, Pod) and replaced.priority == 5
    assert replaced.uid == "default/p"
    assert backend.resource_version == 2


def test_list_is_ordered_and_checks_kinds() -> None:
    backend = MemoryBackend([pod("b"), pod("a", ns="z"), pod("a")])
    assert [(p.namespace, p.name) for p in backend.list("Pod")] == [  # type: ignore[attr-defined]
        ("default", "a"),
        ("default", "b"),
        ("z", "a"),
    ]
    with pytest.raises(ValueError, match="unknown kind 'ConfigMap'"):
        backend.list("ConfigMap")
    with pytest.raises(TypeError, match="cannot store str"):
        backend.create("nope")  # type: ignore[type-var]


def test_delete_removes_and_reports() -> None:
    backend = MemoryBackend([node("n")])
    events = recorder(backend)
    deleted = backend.delete(node("n"))
    assert backend.get("Node", "n") is None
    assert deleted.metadata.resource_version == "2"
    assert [(e.type, e.resource_version) for e in events] == [("ADDED", 1), ("DELETED", 2)]
    with pytest.raises(BackendError, match='nodes "n" not found'):
        backend.delete(node("n"))


# -- watch ------------------------------------------------------------------------------------


def test_subscribe_replays_namespaces_nodes_pdbs_then_pods() -> None:
    backend = MemoryBackend(
        [
            pod("p1"),
            node("n1"),
            PodDisruptionBudget(
                metadata=ObjectMeta(name="pdb", namespace="default"), selector=LabelSelector()
            ),
            Namespace(metadata=ObjectMeta(name="default")),
            node("n0"),
        ]
    )
    events = recorder(backend)
    assert [(e.type, type(e.obj).__name__) for e in events] == [
        ("ADDED", "Namespace"),
        ("ADDED", "Node"),
        ("ADDED", "Node"),
        ("ADDED", "PodDisruptionBudget"),
        ("ADDED", "Pod"),
    ]
    assert [e.obj.metadata.name for e in events][1:3] == ["n0", "n1"]  # type: ignore[attr-defined]
    assert {e.resource_version for e in events} == {1, 2, 3, 4, 5}
    assert KINDS == (
        "Namespace",
        "Node",
        "PodDisruptionBudget",
        "Service",
        "ReplicationController",
        "ReplicaSet",
        "StatefulSet",
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "CSIStorageCapacity",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "VolumeAttachment",
        "DeviceClass",
        "ResourceSlice",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "Pod",
    )


def test_live_events_follow_in_resource_version_order() -> None:
    backend = MemoryBackend([node("n")])
    events = recorder(backend)
    p = backend.create(pod("p"))
    assert isinstance(p, Pod)
    backend.bind(p, "n")
    backend.delete_pod(p)
    assert [(e.type, e.resource_version) for e in events] == [
        ("ADDED", 1),
        ("ADDED", 2),
        ("MODIFIED", 3),
        ("DELETED", 4),
    ]
    modified = events[2]
    assert isinstance(modified.old, Pod) and modified.old.node_name == ""
    assert isinstance(modified.obj, Pod) and modified.obj.node_name == "n"
    assert events[3].obj.metadata.resource_version == "4"  # type: ignore[attr-defined]


def test_events_are_delivered_before_the_write_returns() -> None:
    backend = MemoryBackend()
    seen: list[int] = []
    backend.subscribe(lambda e: seen.append(e.resource_version))
    backend.create(node("n"))
    assert seen == [1]


def test_writes_from_a_callback_are_delivered_in_order_to_everyone() -> None:
    backend = MemoryBackend()
    first: list[int] = []
    second: list[int] = []

    def reacting(event: WatchEvent) -> None:
        first.append(event.resource_version)
        if event.type == "ADDED" and isinstance(event.obj, Node) and event.obj.name == "a":
            backend.create(node("b"))  # delivered after the current event

    backend.subscribe(reacting)
    backend.subscribe(lambda e: second.append(e.resource_version))
    backend.create(node("a"))
    assert first == second == [1, 2]


def test_subscribe_from_a_callback_sees_no_duplicates() -> None:
    backend = MemoryBackend([node("a")])
    late: list[tuple[str, int]] = []

    def on_event(event: WatchEvent) -> None:
        if event.resource_version == 2:
            backend.subscribe(lambda e: late.append((e.type, e.resource_version)))

    backend.subscribe(on_event)
    backend.create(node("b"))
    backend.create(node("c"))
    assert late == [("ADDED", 1), ("ADDED", 2), ("ADDED", 3)]


def test_cancel_stops_deliveries() -> None:
    backend = MemoryBackend()
    events: list[WatchEvent] = []
    sub = backend.subscribe(events.append)
    backend.create(node("a"))
    sub.cancel()
    sub.cancel()
    backend.create(node("b"))
    assert len(events) == 1


def test_a_failing_callback_does_not_starve_the_others_nor_fail_the_write(
    caplog: pytest.LogCaptureFixture,
) -> None:
    backend = MemoryBackend()
    seen: list[int] = []

    def boom(event: WatchEvent) -> None:
        raise RuntimeError("handler bug")

    backend.subscribe(boom)
    backend.subscribe(lambda e: seen.append(e.resource_version))
    backend.create(node("a"))  # a watcher's bug is not the writer's failure
    assert seen == [1]
    assert backend.get("Node", "a") is not None
    assert "watch subscriber failed on ADDED Node a" in caplog.text
    assert "handler bug" in caplog.text


# -- binding ------------------------------------------------------------------------------------


def test_bind_sets_node_condition_and_clears_nomination() -> None:
    clock = FakeClock()
    backend = MemoryBackend(clock=clock)
    p = backend.create(
        attrs.evolve(
            pod("foo"),
            status=PodStatus(
                nominated_node_name="n2",
                conditions=(
                    PodCondition(type="PodScheduled", status="False", reason="Unschedulable"),
                ),
            ),
        )
    )
    assert isinstance(p, Pod)
    backend.bind(p, "machine")
    bound = backend.get("Pod", "foo")
    assert isinstance(bound, Pod)
    assert bound.node_name == "machine"
    assert bound.nominated_node_name == ""
    assert bound.status.conditions == (
        PodCondition(
            type="PodScheduled",
            status="True",
            last_transition_time=datetime.fromtimestamp(int(clock.t), tz=UTC),
        ),
    )


@pytest.mark.parametrize(
    ("stored", "message"),
    [
        pytest.param(
            pod("foo", "machine"),
            'pod foo is already assigned to node "machine"',
            id="already bound",
        ),
        pytest.param(
            pod("foo", scheduling_gates=("foo", "bar")),
            "pod foo has non-empty .spec.schedulingGates",
            id="pod with non-nil schedulingGates",
        ),
    ],
)
def test_bind_conflicts(stored: Pod, message: str) -> None:
    backend = MemoryBackend([stored])
    events = recorder(backend)
    with pytest.raises(BackendError) as info:
        backend.bind(pod("foo"), "machine2")
    assert str(info.value) == conflict(message)
    assert (info.value.reason, info.value.code) == ("Conflict", 409)
    assert len(events) == 1 and backend.resource_version == 1  # nothing written


def test_bind_twice_conflicts() -> None:
    backend = MemoryBackend([pod("foo")])
    backend.bind(pod("foo"), "machine")
    with pytest.raises(BackendError) as info:
        backend.bind(pod("foo"), "machine")
    assert str(info.value) == conflict('pod foo is already assigned to node "machine"')


def test_bind_deleting_pod_conflicts() -> None:
    clock = FakeClock()
    backend = MemoryBackend([pod("foo", "n1")], clock=clock, graceful_deletion=True)
    backend.delete_pod(pod("foo"))
    with pytest.raises(BackendError) as info:
        backend.bind(pod("foo"), "machine")
    assert str(info.value) == conflict("pod foo is being deleted, cannot be assigned to a host")


def test_bind_missing_pod_is_not_found() -> None:
    backend = MemoryBackend()
    with pytest.raises(BackendError) as info:
        backend.bind(pod("foo"), "machine")
    assert (str(info.value), info.value.reason, info.value.code) == (
        'pods "foo" not found',
        "NotFound",
        404,
    )


def test_bind_with_another_uid_fails_the_precondition() -> None:
    backend = MemoryBackend([pod("foo", uid="new-uid")])
    with pytest.raises(BackendError) as info:
        backend.bind(pod("foo", uid="old-uid"), "machine")
    assert info.value.code == 409
    assert str(info.value) == (
        'Operation cannot be fulfilled on pods "foo": StorageError: invalid object, Code: 4, '
        "Key: /registry/pods/default/foo, ResourceVersion: 0, AdditionalErrorMsg: Precondition "
        "failed: UID in precondition: old-uid, UID in object meta: new-uid"
    )


# -- status patches ---------------------------------------------------------------------------


def test_patch_pod_status_replaces_condition_by_type() -> None:
    clock = FakeClock()
    backend = MemoryBackend([pod("p")], clock=clock)
    failed = PodCondition(type="PodScheduled", status="False", reason="Unschedulable", message="m1")
    backend.patch_pod_status(pod("p"), condition=failed, nominated_node_name="n1")
    t1 = datetime.fromtimestamp(int(clock.t), tz=UTC)
    clock.advance(10)
    backend.patch_pod_status(pod("p"), condition=attrs.evolve(failed, message="m2"))
    stored = backend.get("Pod", "p")
    assert isinstance(stored, Pod)
    # Same status: the transition time stays.
    assert stored.status.conditions == (
        attrs.evolve(failed, message="m2", last_transition_time=t1),
    )
    assert stored.nominated_node_name == "n1"
    backend.patch_pod_status(pod("p"), nominated_node_name="")
    stored = backend.get("Pod", "p")
    assert isinstance(stored, Pod) and stored.nominated_node_name == ""
    assert backend.resource_version == 4


def test_noop_status_patch_writes_nothing() -> None:
    backend = MemoryBackend([pod("p")], clock=FakeClock())
    condition = PodCondition(type="PodScheduled", status="False", reason="Unschedulable")
    backend.patch_pod_status(pod("p"), condition=condition)
    rv = backend.resource_version
    events = recorder(backend)
    backend.patch_pod_status(pod("p"), condition=condition, nominated_node_name="")
    assert backend.resource_version == rv
    assert [e.type for e in events] == ["ADDED"]


def test_patch_missing_pod_is_not_found() -> None:
    with pytest.raises(BackendError, match='pods "p" not found'):
        MemoryBackend().patch_pod_status(pod("p"), nominated_node_name="n")


# -- deletion -----------------------------------------------------------------------------------

DISRUPTION = PodCondition(
    type="DisruptionTarget",
    status="True",
    reason="PreemptionByScheduler",
    message="default-scheduler: preempting to accommodate a higher priority pod",
)


def test_delete_pod_adds_disruption_target_then_deletes() -> None:
    backend = MemoryBackend([node("n"), pod("victim", "n")], clock=FakeClock())
    events = recorder(backend)
    backend.delete_pod(pod("victim", "n"), condition=DISRUPTION)
    assert backend.get("Pod", "victim") is None
    assert [(e.type, e.resource_version) for e in events[2:]] == [("MODIFIED", 3), ("DELETED", 4)]
    for event in events[2:]:
        assert isinstance(event.obj, Pod)
        (cond,) = event.obj.status.conditions
        assert attrs.evolve(cond, last_transition_time=None) == DISRUPTION


def test_delete_missing_pod_is_not_found() -> None:
    with pytest.raises(BackendError) as info:
        MemoryBackend().delete_pod(pod("gone"), condition=DISRUPTION)
    assert info.value.code == 404


def test_graceful_deletion_runs_on_the_clock() -> None:
    clock = FakeClock()
    backend = MemoryBackend(
        [pod("bound", "n", termination_grace_period_seconds=5), pod("pending")],
        clock=clock,
        graceful_deletion=True,
    )
    events = recorder(backend)
    backend.delete_pod(pod("bound"), condition=DISRUPTION)
    terminating = backend.get("Pod", "bound")
    assert isinstance(terminating, Pod)
    assert terminating.deletion_timestamp == datetime.fromtimestamp(int(clock.t) + 5, tz=UTC)
    assert [e.type for e in events[2:]] == ["MODIFIED", "MODIFIED"]
    backend.delete_pod(pod("bound"))  # already terminating: nothing new
    assert len(events) == 4
    # An unbound pod goes at once, whatever the grace period.
    backend.delete_pod(pod("pending"))
    assert backend.get("Pod", "pending") is None
    clock.advance(4)
    assert backend.get("Pod", "bound") is not None
    clock.advance(1)
    assert backend.get("Pod", "bound") is None
    assert [e.type for e in events[2:]] == ["MODIFIED", "MODIFIED", "DELETED", "DELETED"]


def test_finalize_deletions_and_recreated_pods() -> None:
    clock = FakeClock()
    backend = MemoryBackend([pod("p", "n")], clock=clock, graceful_deletion=True)
    backend.delete_pod(pod("p"))
    backend.finalize_deletions()
    assert backend.get("Pod", "p") is None
    # A pod recreated under the same name is not removed by the old timer.
    backend.create(pod("p", "n", uid="second"))
    clock.advance(60)
    assert backend.get("Pod", "p") is not None


def test_graceful_deletion_needs_a_timer_clock() -> None:
    class NowOnly:
        def now(self) -> float:
            return 0.0

    with pytest.raises(TypeError, match="call_later"):
        MemoryBackend(clock=NowOnly(), graceful_deletion=True)


# -- events ---------------------------------------------------------------------------------------


def test_record_event() -> None:
    clock = FakeClock()
    backend = MemoryBackend(clock=clock)
    backend.record_event(
        pod("p"),
        event_type="Normal",
        reason="Scheduled",
        action="Binding",
        note="Successfully assigned default/p to n",
    )
    backend.eventf(pod("p"), None, "Warning", "FailedScheduling", "Scheduling", "0/1 nodes")
    assert backend.events == [
        Event(
            regarding="default/p",
            type="Normal",
            reason="Scheduled",
            action="Binding",
            note="Successfully assigned default/p to n",
            time=clock.t,
        ),
        Event(
            regarding="default/p",
            type="Warning",
            reason="FailedScheduling",
            action="Scheduling",
            note="0/1 nodes",
            time=clock.t,
        ),
    ]
    assert backend.resource_version == 0  # events are not watched objects


# -- failure injection ----------------------------------------------------------------------------


def test_injected_failures_fail_then_recover() -> None:
    backend = MemoryBackend([pod("p")])
    backend.inject_failure("bind", times=2)
    for _ in range(2):
        with pytest.raises(BackendError) as info:
            backend.bind(pod("p"), "n")
        assert (info.value.reason, info.value.code) == ("InternalError", 500)
    stored = backend.get("Pod", "p")
    assert isinstance(stored, Pod) and stored.node_name == ""
    backend.bind(pod("p"), "n")


def test_injected_custom_error() -> None:
    backend = MemoryBackend([pod("p")])
    error = BackendError("Too many requests", reason="TooManyRequests", code=429)
    backend.inject_failure("patch_pod_status", error=error)
    with pytest.raises(BackendError) as info:
        backend.patch_pod_status(pod("p"), nominated_node_name="n")
    assert info.value is error
    backend.patch_pod_status(pod("p"), nominated_node_name="n")


@pytest.mark.parametrize("operation", ["delete_pod", "record_event", "create", "list"])
def test_every_operation_can_fail(operation: str) -> None:
    backend = MemoryBackend([pod("p", "n")])
    backend.inject_failure(operation)
    calls: dict[str, Callable[[], object]] = {
        "delete_pod": lambda: backend.delete_pod(pod("p")),
        "record_event": lambda: backend.record_event(
            pod("p"), event_type="Normal", reason="r", action="a", note="n"
        ),
        "create": lambda: backend.create(pod("q")),
        "list": lambda: backend.list("Pod"),
    }
    with pytest.raises(BackendError):
        calls[operation]()
    calls[operation]()


def test_inject_failure_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="unknown operation"):
        MemoryBackend().inject_failure("frobnicate")
    with pytest.raises(ValueError, match="at least 1"):
        MemoryBackend().inject_failure("bind", times=0)


# -- concurrency ----------------------------------------------------------------------------------


def test_threads_binding_different_pods() -> None:
    names = [f"p{i}" for i in range(200)]
    backend = MemoryBackend([pod(n) for n in names])
    seen: list[int] = []
    lock = threading.Lock()

    def on_event(event: WatchEvent) -> None:
        if event.type == "MODIFIED":
            with lock:
                seen.append(event.resource_version)

    backend.subscribe(on_event)
    errors: list[BaseException] = []

    def worker(chunk: list[str]) -> None:
        try:
            for n in chunk:
                backend.bind(pod(n), f"node-{n}")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(names[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert backend.resource_version == 400
    assert all(p.node_name == f"node-{p.name}" for p in backend.list("Pod"))  # type: ignore[attr-defined]
    assert seen == list(range(201, 401))  # every binding event once, in order


def _race_two_binds() -> tuple[MemoryBackend, list[str]]:
    backend = MemoryBackend([pod("foo")])
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def bind(target: str) -> None:
        barrier.wait()
        try:
            backend.bind(pod("foo"), target)
            outcomes.append(f"bound:{target}")
        except BackendError as exc:
            outcomes.append(f"{exc.code}:{exc}")

    threads = [threading.Thread(target=bind, args=(t,)) for t in ("n1", "n2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return backend, outcomes


def test_exactly_one_of_two_concurrent_binds_wins() -> None:
    for attempt in range(50):
        backend, outcomes = _race_two_binds()
        wins = [o for o in outcomes if o.startswith("bound:")]
        assert len(wins) == 1, (attempt, outcomes)
        winner = wins[0].removeprefix("bound:")
        (loss,) = [o for o in outcomes if not o.startswith("bound:")]
        assert loss == "409:" + conflict(f'pod foo is already assigned to node "{winner}"')
        stored = backend.get("Pod", "foo")
        assert isinstance(stored, Pod) and stored.node_name == winner


# -- terminal pods (the scheduler's pod informer filter) ---------------------------------------


def _phase(p: Pod, phase: str) -> Pod:
    return p.with_status(phase=phase)


def test_terminal_pods_are_never_delivered_but_still_listed() -> None:
    finished = _phase(pod("done", "n"), "Succeeded")
    backend = MemoryBackend([node("n"), finished, _phase(pod("failed", "n"), "Failed")])
    events = recorder(backend)
    assert [type(e.obj).__name__ for e in events] == ["Node"]
    backend.create(_phase(pod("later"), "Failed"))
    assert len(events) == 1
    assert sorted(p.name for p in backend.list("Pod")) == ["done", "failed", "later"]  # type: ignore[attr-defined]


def test_a_pod_turning_terminal_is_deleted_from_the_watch() -> None:
    backend = MemoryBackend([node("n"), pod("p", "n")])
    events = recorder(backend)
    stored = backend.get("Pod", "p")
    assert isinstance(stored, Pod)
    backend.update(_phase(stored, "Succeeded"))
    last = events[-1]
    assert last.type == "DELETED"
    assert isinstance(last.obj, Pod) and last.obj.status.phase == "Succeeded"
    backend.delete(stored)
    assert events[-1] is last  # already gone from the subscriber's view
