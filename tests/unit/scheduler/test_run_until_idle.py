"""Deterministic runs end even when every failed attempt requeues the pod at once.

A plugin whose rejection puts the pod straight back in the activeQ (a gang Permit activating
its siblings, a pod force-activating itself, which the backoffQ then hands back because the
activeQ is empty) used to make ``run_until_idle`` and ``run`` spin forever at one virtual
instant: time never moved, so no backoff, Permit timeout or stall limit could ever end it.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from schedframe import framework as fw
from schedframe.backends import MemoryBackend
from schedframe.config import load_config
from schedframe.framework import Code, CycleState, Status
from schedframe.objects import Container, Node, NodeStatus, ObjectMeta, Pod, PodSpec
from schedframe.runtime import Registry
from schedframe.scheduler import Scheduler, VirtualClock

#: Far more cycles than a run that ends may take; reaching it means the loop spun.
CYCLE_BOUND = 5_000


class RejectAndActivateGang(fw.PermitPlugin):
    """Rejects every pod and activates the gang members it saw before (never a quorum)."""

    name: ClassVar[str] = "RejectAndActivateGang"

    def __init__(self, args: object, handle: fw.Handle) -> None:
        self._handle = handle
        self._members: dict[str, Pod] = {}

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self._members[pod.uid] = pod
        self._handle.activate(p for uid, p in self._members.items() if uid != pod.uid)
        return Status(Code.UNSCHEDULABLE, "gang is incomplete")


class RejectAndActivateSelf(fw.PermitPlugin):
    """Rejects every pod after force-activating it (a ForceActivate event while in flight)."""

    name: ClassVar[str] = "RejectAndActivateSelf"

    def __init__(self, args: object, handle: fw.Handle) -> None:
        self._handle = handle

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self._handle.activate([pod])
        return Status(Code.UNSCHEDULABLE, "not yet")


def _node(name: str) -> Node:
    alloc = {"cpu": 4000, "memory": 16 << 30, "pods": 110}
    return Node(
        metadata=ObjectMeta(name=name),
        status=NodeStatus(capacity=dict(alloc), allocatable=dict(alloc)),
    )


def _pod(name: str) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=PodSpec(containers=(Container(name="c", requests={"cpu": 100}),)),
    )


def _scheduler(permit: type[fw.PermitPlugin], seed: int = 0) -> tuple[Scheduler, MemoryBackend]:
    registry = Registry.discover()
    registry.register(permit.name, permit)
    cfg = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {"permit": {"enabled": [{"name": permit.name}]}},
                }
            ],
        }
    )
    clock = VirtualClock()
    backend = MemoryBackend([_node("n1"), _node("n2")], clock=clock)
    sched = Scheduler.from_config(
        cfg, backend, registry=registry, clock=clock, seed=seed, deterministic=True
    )
    return sched, backend


def _trace(sched: Scheduler) -> list[Any]:
    return [
        (r.pod.key if r.pod else None, r.outcome, r.attempts, r.message)
        for r in sorted(sched.results.values(), key=lambda r: r.pod.key if r.pod else "")
    ]


@pytest.mark.parametrize(
    ("permit", "pods"),
    [
        pytest.param(RejectAndActivateGang, ("a", "b"), id="gang members activating each other"),
        pytest.param(RejectAndActivateSelf, ("solo",), id="pod force-activating itself"),
    ],
)
def test_run_until_idle_ends_when_every_failure_requeues_at_once(
    permit: type[fw.PermitPlugin], pods: tuple[str, ...]
) -> None:
    sched, backend = _scheduler(permit)
    for name in pods:
        backend.create(_pod(name))
    start = sched.clock.now()
    cycles = sched.run_until_idle(max_cycles=CYCLE_BOUND, stall_timeout=10.0)
    assert cycles < CYCLE_BOUND, "run_until_idle spun at one virtual instant"
    # It stopped on the stall limit, in virtual time, and not much later.
    assert 10.0 <= sched.clock.now() - start <= 12.0
    assert {r.outcome for r in sched.results.values()} == {"unschedulable"}


def test_run_with_a_duration_ends_when_every_failure_requeues_at_once() -> None:
    sched, backend = _scheduler(RejectAndActivateGang)
    backend.create(_pod("a"))
    backend.create(_pod("b"))
    start = sched.clock.now()
    stopped: list[int] = []

    def bounded_schedule_one(**kwargs: Any) -> bool:
        if sched.attempts >= CYCLE_BOUND:
            stopped.append(sched.attempts)
            return False
        return Scheduler.schedule_one(sched, **kwargs)

    sched.schedule_one = bounded_schedule_one  # type: ignore[method-assign]
    sched.run(duration=5.0)
    assert not stopped, "run spun at one virtual instant"
    assert sched.clock.now() == start + 5.0


def test_spinning_runs_are_reproducible() -> None:
    def once() -> tuple[list[Any], float, int]:
        sched, backend = _scheduler(RejectAndActivateGang, seed=3)
        backend.create(_pod("a"))
        backend.create(_pod("b"))
        sched.run_until_idle(max_cycles=CYCLE_BOUND, stall_timeout=5.0)
        return _trace(sched), sched.clock.now(), sched.attempts

    assert once() == once()


def test_a_burst_at_one_instant_is_not_mistaken_for_a_spin() -> None:
    # Many cycles at t=0, all of them progress: the clock must not move.
    clock = VirtualClock()
    backend = MemoryBackend([_node(f"n{i}") for i in range(8)], clock=clock)
    sched = Scheduler.from_config(None, backend, clock=clock, deterministic=True)
    for i in range(300):
        backend.create(_pod(f"p{i}"))
    sched.run_until_idle()
    assert sched.clock.now() == 0.0
    assert len(sched.placements()) == 300
