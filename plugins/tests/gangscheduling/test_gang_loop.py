"""GangScheduling through the real scheduler loop, with GenericWorkload on (deterministic)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from schedframe.objects import (
    GangSchedulingPolicy,
    ObjectMeta,
    Pod,
    PodGroup,
    Workload,
    WorkloadReference,
)
from schedframe.queue import SchedulingQueue
from schedframe.runtime import Registry
from schedframe.scheduler import Scheduler
from schedframe.testing import deterministic, invariants
from schedframe.testing.builders import make_node, make_pod
from schedframe_plugins.gangscheduling import SCHEDULING_TIMEOUT, GangScheduling

CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "featureGates": {"GenericWorkload": True},
}


def workload(name: str, min_count: int) -> Workload:
    return Workload(
        metadata=ObjectMeta(name=name, namespace="default"),
        pod_groups=(PodGroup(name="workers", gang=GangSchedulingPolicy(min_count=min_count)),),
    )


def member(workload_name: str, i: int, *, cpu: str = "500m") -> Pod:
    pod = make_pod(f"{workload_name}-{i}").req(cpu=cpu).obj()
    ref = WorkloadReference(name=workload_name, pod_group="workers")
    return attrs.evolve(pod, spec=attrs.evolve(pod.spec, workload_ref=ref))


def nodes(n: int = 2, cpu: str = "2") -> list[Any]:
    return [make_node(f"node-{i}").capacity(cpu=cpu, memory="8Gi").obj() for i in range(n)]


@pytest.fixture
def make() -> Iterator[Any]:
    made: list[Scheduler] = []

    def build(objects: list[Any]) -> Scheduler:
        registry = Registry.discover()
        if "GangScheduling" not in registry:
            registry.register("GangScheduling", GangScheduling)
        sched = deterministic.scheduler(CONFIG, objects, seed=3, registry=registry)
        made.append(sched)
        return sched

    yield build
    for sched in made:
        sched.stop()


def bound(sched: Scheduler, prefix: str) -> dict[str, str]:
    return {
        p.key: p.spec.node_name
        for p in sched.backend.list("Pod")
        if isinstance(p, Pod) and p.spec.node_name and p.name.startswith(prefix)
    }


def gated(sched: Scheduler) -> list[str]:
    queue = sched.queue
    assert isinstance(queue, SchedulingQueue)
    return sorted(p.name for p in queue.gated_pods())


def plugin(sched: Scheduler) -> GangScheduling:
    fwk = sched.profiles["default-scheduler"]
    (found,) = [p for p in fwk.pre_enqueue_plugins if isinstance(p, GangScheduling)]
    return found


def test_the_gate_puts_gang_scheduling_in_the_default_profile(make: Any) -> None:
    sched = make(nodes())
    points = sched.profiles["default-scheduler"].list_plugins()
    for point in ("pre_enqueue", "reserve", "permit"):
        assert ("GangScheduling", None) in points[point]


def test_nothing_binds_until_min_count_pods_exist_then_all_bind(make: Any) -> None:
    # A gang of 4 with minCount 3: two pods exist at first, and are gated.
    sched = make([*nodes(), workload("job", 3), member("job", 0), member("job", 1)])
    sched.run_until_idle()
    assert bound(sched, "job") == {}
    assert gated(sched) == ["job-0", "job-1"]
    status = plugin(sched).pre_enqueue(member("job", 0))
    assert status is not None
    assert status.message() == "waiting for minCount pods from a gang to appear in scheduling queue"
    # The third member completes the quorum: the hint requeues the others, and they all bind.
    sched.backend.create(member("job", 2))
    sched.run_until_idle()
    assert sorted(bound(sched, "job")) == ["default/job-0", "default/job-1", "default/job-2"]
    # A fourth member, once the gang is running, binds on its own (assigned ones count).
    sched.backend.create(member("job", 3))
    sched.run_until_idle()
    assert len(bound(sched, "job")) == 4
    invariants.assert_no_overcommit(sched)
    invariants.assert_nothing_lost(sched)


def test_pods_wait_for_their_workload(make: Any) -> None:
    pods = [member("late", i) for i in range(2)]
    sched = make([*nodes(), *pods])
    sched.run_until_idle()
    assert bound(sched, "late") == {}
    assert gated(sched) == ["late-0", "late-1"]
    status = plugin(sched).pre_enqueue(pods[0])
    assert status is not None
    assert status.message() == 'waiting for pods\'s workload "late" to appear in scheduling queue'
    sched.backend.create(workload("late", 2))
    sched.run_until_idle()
    assert len(bound(sched, "late")) == 2


def test_the_timeout_rejects_the_whole_group_and_requeues_it(make: Any) -> None:
    # Room for two 800m pods on two 1-CPU nodes; minCount 3: two wait at Permit, the third
    # fails Filter. At the group's deadline both waiting pods are rejected together, go back
    # to the queue, are tried again, wait again, and time out again a deadline later.
    pods = [member("slow", i, cpu="800m") for i in range(3)]
    sched = make([*nodes(2, cpu="1"), workload("slow", 3), *pods])
    start = sched.clock.now()
    sched.run_until_idle(stall_timeout=2 * SCHEDULING_TIMEOUT + 60)
    assert bound(sched, "slow") == {}
    timeouts: dict[float, set[str]] = {}
    for e in sched.backend.events:
        if e.reason == "FailedScheduling" and "rejected due to timeout" in e.note:
            assert "after waiting 5m0s at plugin GangScheduling" in e.note
            timeouts.setdefault(e.time - start, set()).add(e.regarding)
    # Two members each time, at one instant per round: the group's single deadline.
    assert sorted(timeouts)[:2] == [SCHEDULING_TIMEOUT, 2 * SCHEDULING_TIMEOUT]
    assert all(len(who) == 2 for who in timeouts.values())
    invariants.assert_nothing_lost(sched)
