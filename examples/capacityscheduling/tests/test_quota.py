"""ElasticQuota end to end on a deterministic scheduler: max, borrowing, preemption."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from schedframe_capacityscheduling import CapacityScheduling, QuotaInfo, elastic_quota

from schedframe.objects import Namespace, ObjectMeta, Pod
from schedframe.scheduler import Scheduler
from schedframe.testing import deterministic, invariants
from schedframe.testing.builders import make_node, make_pod

CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"enabled": [{"name": "CapacityScheduling"}]},
                # CapacityScheduling is the preemption plugin, as upstream's setup has it.
                "postFilter": {"disabled": [{"name": "DefaultPreemption"}]},
            },
        }
    ],
}


def namespace(name: str) -> Namespace:
    return Namespace(metadata=ObjectMeta(name=name, uid=name))


def pod(name: str, ns: str, cpu: str, *, priority: int = 0) -> Pod:
    return make_pod(name).namespace(ns).req(cpu=cpu).priority(priority).obj()


@pytest.fixture
def make() -> Iterator[Any]:
    made: list[Scheduler] = []

    def build(objects: list[Any]) -> Scheduler:
        sched = deterministic.scheduler(CONFIG, objects, seed=3, plugins=[CapacityScheduling])
        made.append(sched)
        return sched

    yield build
    for sched in made:
        sched.stop()


def placed(sched: Scheduler, ns: str) -> list[str]:
    return sorted(
        p.name
        for p in sched.backend.list("Pod")
        if isinstance(p, Pod) and p.namespace == ns and p.spec.node_name
    )


def cluster() -> list[Any]:
    return [
        namespace("team-a"),
        namespace("team-b"),
        make_node("n1").capacity(cpu="4", memory="16Gi").obj(),
        elastic_quota("team-a", min={"cpu": "2"}, max={"cpu": "4"}),
        elastic_quota("team-b", min={"cpu": "2"}, max={"cpu": "4"}),
    ]


def test_a_namespace_never_exceeds_its_max(make: Any) -> None:
    objects = cluster()
    objects[3] = elastic_quota("team-a", min={"cpu": "2"}, max={"cpu": "2"})
    pods = [pod(f"a{i}", "team-a", "1") for i in range(3)]
    sched = make([*objects, *pods])
    sched.run_until_idle()
    assert placed(sched, "team-a") == ["a0", "a1"]
    result = sched.results[pods[2].uid]
    assert result.outcome == "unschedulable"
    assert (
        "Pod team-a/a2 is rejected in PreFilter because ElasticQuota team-a is more than Max"
        in result.message
    )


def test_a_namespace_borrows_what_others_leave_unused(make: Any) -> None:
    # team-b runs nothing: team-a uses 3 CPUs over its min of 2, up to the total min of 4.
    pods = [pod(f"a{i}", "team-a", "1") for i in range(5)]
    sched = make([*cluster(), *pods])
    sched.run_until_idle()
    assert placed(sched, "team-a") == ["a0", "a1", "a2", "a3"]
    result = sched.results[pods[4].uid]
    assert "is more than Max" in result.message or "total ElasticQuota used" in result.message


def test_a_lender_reclaims_its_min_by_preempting_the_borrower(make: Any) -> None:
    borrowers = [pod(f"a{i}", "team-a", "1") for i in range(4)]
    sched = make([*cluster(), *borrowers])
    sched.run_until_idle()
    assert placed(sched, "team-a") == ["a0", "a1", "a2", "a3"]
    # team-b wants its guaranteed 2 CPUs back: team-a's borrowed pods are preempted.
    sched.backend.create(pod("b0", "team-b", "1"))
    sched.backend.create(pod("b1", "team-b", "1"))
    sched.run_until_idle(stall_timeout=120)
    assert placed(sched, "team-b") == ["b0", "b1"]
    assert len(placed(sched, "team-a")) == 2
    invariants.assert_no_overcommit(sched)


def test_over_its_min_a_namespace_only_preempts_its_own(make: Any) -> None:
    low = [pod(f"a{i}", "team-a", "1") for i in range(2)]
    theirs = [pod(f"b{i}", "team-b", "1") for i in range(2)]
    sched = make([*cluster(), *low, *theirs])
    sched.run_until_idle()
    assert len(placed(sched, "team-a")) == 2 and len(placed(sched, "team-b")) == 2
    # team-a at its min wants one more (over min, over the total min): nobody is preempted
    # for it from team-b, which is within its own min.
    sched.backend.create(pod("a-high", "team-a", "1", priority=100))
    sched.run_until_idle(stall_timeout=120)
    assert placed(sched, "team-b") == ["b0", "b1"]


def test_quota_info_accounting() -> None:
    info = QuotaInfo("ns", {"cpu": 2000}, {"cpu": 3000})
    p = pod("p", "ns", "1500m")
    info.add_pod(p)
    info.add_pod(p)  # once only
    assert info.used == {"cpu": 1500}
    assert not info.used_over_min()
    assert info.used_over_min_with({"cpu": 600})
    assert info.used_over_max_with({"cpu": 1600}) and not info.used_over_max_with({"cpu": 1500})
    info.remove_pod(p)
    assert info.used["cpu"] == 0
