"""Fault injection over the public API: plugins and the cluster misbehave at random.

A ``Chaos`` plugin sits at Filter, Score, Reserve, Permit and PreBind; rules make it raise
(``Exception`` or ``CancelledError``), return garbage, make pods wait forever or time out, for
a few calls at a time. Other rules fail binds in the backend, delete nodes while pods wait on
Permit (the bind then targets a node that is gone), delete pods while they wait, allow or
reject waiting pods, and run the loop.

After every step: no pod lost, none bound twice, the cache equals the backend (bound pods),
every assumed pod is waiting or in flight (none leaked), no node over allocatable. After every
run: it ended within its cycle bound, and either nothing is in flight or the pods it gave up
on are named (``Scheduler.stalled_pods``).

The CI budget is small (``property`` marker); the ``fuzz`` nox session raises it through the
``SCHEDFRAME_FUZZ_EXAMPLES`` environment variable.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, ClassVar, cast

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from schedframe import framework as fw
from schedframe.backends import MemoryBackend
from schedframe.cache import Cache
from schedframe.framework import CycleState, NodeInfo, Status
from schedframe.objects import Pod
from schedframe.queue import SchedulingQueue
from schedframe.testing import deterministic
from schedframe.testing.invariants import assert_nothing_lost

from ._support import BindingLog, make_node, make_pod, nodes_of, over_capacity, pods_of

pytestmark = [pytest.mark.integration, pytest.mark.property]

POINTS = ("filter", "score", "reserve", "permit", "preBind")
FAULTS = ("raise", "cancelled", "garbage", "wait_forever", "time_out", "nan")
#: More cycles than any run of this machine needs; reaching it means the loop spun.
CYCLE_BOUND = 3_000


class Chaos(fw.FilterPlugin, fw.ScorePlugin, fw.ReservePlugin, fw.PermitPlugin, fw.PreBindPlugin):
    """Behaves, except for the next ``faults[point] = (fault, calls)`` calls at a point."""

    name: ClassVar[str] = "Chaos"
    faults: ClassVar[dict[str, tuple[str, int]]] = {}

    def __init__(self, args: object, handle: fw.Handle) -> None:
        self.handle = handle

    @classmethod
    def _fault(cls, point: str) -> str | None:
        fault, calls = cls.faults.get(point, ("", 0))
        if calls <= 0:
            return None
        cls.faults[point] = (fault, calls - 1)
        return fault

    def _misbehave(self, point: str, fault: str) -> Any:
        if fault == "raise":
            raise RuntimeError(f"chaos in {point}")
        if fault == "cancelled":
            raise asyncio.CancelledError()
        if fault == "garbage":
            return ["not", "a", "status"]
        if fault == "nan":
            return Status.wait(float("nan")) if point == "permit" else float("nan")
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        fault = self._fault("filter")
        return self._misbehave("filter", fault) if fault else None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        fault = self._fault("score")
        if fault:
            return cast(int, self._misbehave("score", fault))
        return 0

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        fault = self._fault("reserve")
        return self._misbehave("reserve", fault) if fault else None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        pass

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        fault = self._fault("permit")
        if fault == "wait_forever":
            return Status.wait(10**9)  # capped at 15 minutes
        if fault == "time_out":
            return Status.wait(5)
        return self._misbehave("permit", fault) if fault else None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        fault = self._fault("preBind")
        return self._misbehave("preBind", fault) if fault else None


CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                point: {"enabled": [{"name": "Chaos"}]}
                for point in ("filter", "score", "reserve", "permit", "preBind")
            },
        }
    ],
}


class FaultMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        Chaos.faults = {}
        self.sched = deterministic.scheduler(CONFIG, plugins=[Chaos], seed=3)
        self.backend = cast(MemoryBackend, self.sched.backend)
        self.cache = cast(Cache, self.sched.cache)
        self.queue = cast(SchedulingQueue, self.sched.queue)
        self.log = BindingLog(self.backend)
        self.nodes = 0
        self.pods = 0

    def teardown(self) -> None:
        self.sched.stop()

    # -- the cluster ------------------------------------------------------------------------

    @rule(cpu=st.sampled_from([1000, 2000, 4000]))
    def add_node(self, cpu: int) -> None:
        self.backend.create(make_node(f"n{self.nodes}", cpu=cpu, pods=6))
        self.nodes += 1

    @rule(cpu=st.sampled_from([100, 500, 1500]), count=st.integers(1, 3))
    def add_pods(self, cpu: int, count: int) -> None:
        for _ in range(count):
            self.backend.create(make_pod(f"p{self.pods}", cpu=cpu))
            self.pods += 1

    @precondition(lambda self: self.nodes > 0)
    @rule(data=st.data())
    def delete_node(self, data: Any) -> None:
        nodes = nodes_of(self.backend)
        if nodes:
            self.backend.delete(data.draw(st.sampled_from(nodes)))

    @precondition(lambda self: self.pods > 0)
    @rule(data=st.data(), waiting=st.booleans())
    def delete_pod(self, data: Any, waiting: bool) -> None:
        pods = pods_of(self.backend)
        if waiting:  # one waiting on Permit, if any
            parked: list[Pod] = []
            self.sched.waiting_pods.iterate(lambda wp: parked.append(wp.pod))
            uids = {p.uid for p in parked}
            pods = [p for p in pods if p.uid in uids]
        if pods:
            self.backend.delete(data.draw(st.sampled_from(sorted(pods, key=lambda p: p.key))))

    @rule(times=st.integers(1, 3), operation=st.sampled_from(["bind", "patch_pod_status"]))
    def fail_backend(self, times: int, operation: str) -> None:
        self.backend.inject_failure(operation, times=times)

    # -- the plugins ------------------------------------------------------------------------

    @rule(point=st.sampled_from(POINTS), fault=st.sampled_from(FAULTS), calls=st.integers(1, 4))
    def misbehave(self, point: str, fault: str, calls: int) -> None:
        Chaos.faults[point] = (fault, calls)

    @rule(allow=st.booleans())
    def resolve_waiting(self, allow: bool) -> None:
        def resolve(wp: fw.WaitingPod) -> None:
            if allow:
                wp.allow("Chaos")
            else:
                wp.reject("Chaos", "chaos says no")

        self.sched.waiting_pods.iterate(resolve)

    # -- the loop ---------------------------------------------------------------------------

    @rule(cycles=st.integers(1, 5))
    def step(self, cycles: int) -> None:
        for _ in range(cycles):
            self.sched.schedule_one()

    @rule(seconds=st.sampled_from([1.0, 10.0, 300.0]))
    def let_time_pass(self, seconds: float) -> None:
        self.sched.clock.advance(seconds)  # type: ignore[attr-defined]

    @rule()
    def run(self) -> None:
        cycles = self.sched.run_until_idle(max_cycles=CYCLE_BOUND, stall_timeout=60.0)
        assert cycles < CYCLE_BOUND, "run_until_idle spun"
        assert self.sched.in_flight() == 0 or self.sched.stalled_pods, (
            "a run ended with binding cycles in flight and did not say why"
        )

    # -- invariants -------------------------------------------------------------------------

    @invariant()
    def no_pod_lost(self) -> None:
        assert_nothing_lost(self.sched, conditions=False)

    @invariant()
    def never_bound_twice(self) -> None:
        assert self.log.double_bound() == {}

    @invariant()
    def never_over_capacity(self) -> None:
        assert over_capacity(self.backend) == {}

    @invariant()
    def cache_equals_backend_and_no_assumed_pod_leaks(self) -> None:
        dump = self.cache.dump()
        in_flight = {p.uid for p in self.queue.in_flight_pods()}
        waiting: set[str] = set()
        self.sched.waiting_pods.iterate(lambda wp: waiting.add(wp.pod.uid))
        leaked = set(dump.assumed_pods) - in_flight - waiting
        assert not leaked, f"assumed pods neither waiting nor in flight: {sorted(leaked)}"
        cached = {
            p.pod.uid: name
            for name, info in dump.nodes.items()
            for p in info.pods
            if p.pod.uid not in dump.assumed_pods
        }
        live_nodes = {n.name for n in nodes_of(self.backend)}
        bound = {
            p.uid: p.spec.node_name
            for p in pods_of(self.backend)
            if p.spec.node_name and p.spec.node_name in live_nodes
        }
        assert {u: n for u, n in cached.items() if n in live_nodes} == bound


def _examples() -> int:
    return int(os.environ.get("SCHEDFRAME_FUZZ_EXAMPLES", "15"))


TestFaultInjection = FaultMachine.TestCase
TestFaultInjection.settings = settings(
    max_examples=_examples(),
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
