"""A stateful property test of the whole loop: random pod and node arrivals, deterministic mode.

Invariants after every step: no node holds more than its allocatable; no pod is bound twice;
after each run every pod of ours is bound, or queued and reported (unschedulable or error);
pods of other schedulers are never touched.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from schedframe.objects import Node, Pod

from ._support import BindingLog, make_node, make_pod, new_scheduler, over_capacity, pods_of

pytestmark = [pytest.mark.integration, pytest.mark.property]


class SchedulerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.sched, self.backend = new_scheduler(seed=1)
        self.log = BindingLog(self.backend)
        self.nodes = 0
        self.pods = 0

    def teardown(self) -> None:
        self.sched.stop()

    @rule(cpu=st.sampled_from([500, 1000, 2000, 4000]), pods=st.integers(1, 8))
    def add_node(self, cpu: int, pods: int) -> None:
        self.backend.create(make_node(f"n{self.nodes}", cpu=cpu, pods=pods))
        self.nodes += 1

    @rule(
        cpu=st.sampled_from([100, 300, 700, 1500, 3000]),
        other=st.booleans(),
        priority=st.integers(0, 3),
    )
    def add_pod(self, cpu: int, other: bool, priority: int) -> None:
        scheduler = "other-scheduler" if other else "default-scheduler"
        self.backend.create(
            make_pod(f"p{self.pods}", cpu=cpu, scheduler=scheduler, priority=priority)
        )
        self.pods += 1

    @precondition(lambda self: self.pods > 0)
    @rule(data=st.data())
    def delete_pod(self, data: Any) -> None:
        pods = pods_of(self.backend)
        if pods:
            self.backend.delete(data.draw(st.sampled_from(pods)))

    @precondition(lambda self: self.nodes > 0)
    @rule(data=st.data(), extra=st.sampled_from([500, 2000]))
    def grow_node(self, data: Any, extra: int) -> None:
        import attrs

        node = self.backend.get("Node", f"n{data.draw(st.integers(0, self.nodes - 1))}")
        assert isinstance(node, Node)
        alloc = dict(node.status.allocatable)
        alloc["cpu"] += extra
        alloc["pods"] += 2
        grown = attrs.evolve(
            node, status=attrs.evolve(node.status, allocatable=alloc, capacity=dict(alloc))
        )
        self.backend.update(
            attrs.evolve(grown, metadata=attrs.evolve(grown.metadata, resource_version=""))
        )

    @rule(times=st.integers(1, 3))
    def fail_next_binds(self, times: int) -> None:
        self.backend.inject_failure("bind", times=times)

    @rule()
    def run(self) -> None:
        self.sched.run_until_idle(stall_timeout=60)
        queued = {p.uid for p in self.sched.queue.pending_pods()}
        for pod in pods_of(self.backend):
            result = self.sched.results.get(pod.uid)
            if pod.spec.scheduler_name != "default-scheduler":
                assert not pod.spec.node_name
                assert result is None and pod.uid not in queued
                continue
            if pod.spec.node_name:
                assert result is not None and result.outcome == "scheduled", (pod.key, result)
                assert result.suggested_host == pod.spec.node_name
                continue
            assert pod.uid in queued, f"{pod.key} neither bound nor queued"
            assert result is not None and result.outcome in ("unschedulable", "error"), (
                pod.key,
                result,
            )
            assert result.message
        assert self.sched.in_flight() == 0

    @invariant()
    def never_over_capacity(self) -> None:
        assert over_capacity(self.backend) == {}

    @invariant()
    def never_bound_twice(self) -> None:
        assert self.log.double_bound() == {}

    @invariant()
    def cache_matches_backend(self) -> None:
        if self.sched.in_flight():
            return
        dump = self.sched.cache.dump()  # type: ignore[attr-defined]
        cached = {p.pod.uid: name for name, info in dump.nodes.items() for p in info.pods}
        bound = {
            p.uid: p.spec.node_name
            for p in pods_of(self.backend)
            if isinstance(p, Pod) and p.spec.node_name
        }
        assert cached == bound


TestScheduler = SchedulerMachine.TestCase
TestScheduler.settings = settings(
    max_examples=30,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
