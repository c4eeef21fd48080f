"""Gangs end to end, on a deterministic scheduler: all members bind together, or none does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from schedframe_coscheduling import (
    POD_GROUP,
    Coscheduling,
    group_name,
    pod_group,
    pod_group_status_after_bind,
)

from schedframe.backends import MemoryBackend
from schedframe.errors import BackendError
from schedframe.objects import CustomObject, Pod
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
                # Coscheduling is also the queue sort, so PrioritySort must go.
                "multiPoint": {
                    "enabled": [{"name": "Coscheduling"}],
                    "disabled": [{"name": "PrioritySort"}],
                }
            },
            "pluginConfig": [
                {
                    "name": "Coscheduling",
                    "args": {"permitWaitingTimeSeconds": 10, "podGroupBackoffSeconds": 30},
                }
            ],
        }
    ],
}


def members(group: str, size: int, *, cpu: str) -> list[Pod]:
    return [
        make_pod(f"{group}-{i}").label(POD_GROUP, group).req(cpu=cpu).obj() for i in range(size)
    ]


def gang(group: str, size: int, *, cpu: str, min_member: int | None = None) -> list[Any]:
    """The PodGroup, then its ``size`` pods."""
    pg = pod_group("default", group, size if min_member is None else min_member)
    return [pg, *members(group, size, cpu=cpu)]


def nodes(n: int = 2, cpu: str = "2") -> list[Any]:
    return [make_node(f"node-{i}").capacity(cpu=cpu, memory="8Gi").obj() for i in range(n)]


@pytest.fixture
def sched_factory() -> Iterator[Any]:
    made: list[Scheduler] = []

    def make(objects: list[Any]) -> Scheduler:
        sched = deterministic.scheduler(CONFIG, objects, seed=7)
        made.append(sched)
        return sched

    yield make
    for sched in made:
        sched.stop()


def bound(sched: Scheduler, prefix: str) -> dict[str, str]:
    return {k: v for k, v in backend_placements(sched).items() if k.startswith(f"default/{prefix}")}


def backend_placements(sched: Scheduler) -> dict[str, str]:
    return {
        p.key: p.spec.node_name
        for p in sched.backend.list("Pod")
        if isinstance(p, Pod) and p.spec.node_name
    }


def test_the_plugin_is_discovered_and_sorts_the_queue(sched_factory: Any) -> None:
    sched = sched_factory(nodes())
    fwk = sched.profiles["default-scheduler"]
    assert isinstance(fwk.queue_sort_plugins[0], Coscheduling)
    points = fwk.list_plugins()
    for point in ("pre_filter", "post_filter", "reserve", "permit"):
        assert ("Coscheduling", None) in points[point]


def test_a_gang_of_three_binds_together(sched_factory: Any) -> None:
    sched = sched_factory([*nodes(), *gang("web", 3, cpu="1")])
    # One scheduling cycle per member: the first two wait on Permit, nothing is bound...
    assert sched.schedule_one() and sched.schedule_one()
    assert bound(sched, "web") == {}
    assert sched.in_flight() == 2
    # ... until the third is assumed, and Permit lets the three go at once.
    assert sched.schedule_one()
    assert sorted(bound(sched, "web")) == ["default/web-0", "default/web-1", "default/web-2"]
    sched.run_until_idle()
    invariants.assert_no_overcommit(sched)
    invariants.assert_nothing_lost(sched)
    scheduled = [e for e in sched.backend.events if e.reason == "Scheduled"]
    assert len({e.time for e in scheduled}) == 1  # all three at the same (virtual) instant


def test_a_gang_that_cannot_fit_never_partially_binds(sched_factory: Any) -> None:
    # Two nodes of 2 CPUs hold only two of the three 1.5-CPU members.
    sched = sched_factory([*nodes(), *gang("big", 3, cpu="1500m")])
    sched.run_until_idle(stall_timeout=120)
    assert bound(sched, "big") == {}
    invariants.assert_nothing_lost(sched)
    reasons = {e.note for e in sched.backend.events if e.reason == "FailedScheduling"}
    assert any("Coscheduling" in note or "pod group" in note for note in reasons), reasons
    # Every member is back in the queue, nothing assumed or waiting.
    assert sched.in_flight() == 0
    assert len(sched.waiting_pods) == 0


def test_a_small_group_is_rejected_before_filtering(sched_factory: Any) -> None:
    objects = gang("pair", 2, cpu="100m", min_member=3)
    sched = sched_factory([*nodes(), *objects])
    sched.run_until_idle()
    assert bound(sched, "pair") == {}
    result = sched.results[objects[1].uid]
    assert result.outcome == "unschedulable"
    assert (
        "pre-filter pod pair-0 cannot find enough sibling pods, current pods number: 2, "
        "minMember of group: 3"
    ) in result.message
    # A third member arrives: the hint requeues the others and the gang binds.
    sched.backend.create(members("pair", 3, cpu="100m")[2])
    sched.run_until_idle()
    assert len(bound(sched, "pair")) == 3


def test_members_wait_for_their_pod_group(sched_factory: Any) -> None:
    pods = members("late", 2, cpu="100m")
    sched = sched_factory([*nodes(), *pods])
    sched.run_until_idle()
    assert bound(sched, "late") == {}
    result = sched.results[pods[0].uid]
    assert result.outcome == "unschedulable"
    assert 'PodGroup "default/late" not found' in result.message
    # The PodGroup is created: its event requeues the members through the hint.
    sched.backend.create(pod_group("default", "late", 2))
    sched.run_until_idle()
    assert len(bound(sched, "late")) == 2


def test_the_pod_group_timeout_rejects_the_whole_gang(sched_factory: Any) -> None:
    pg = pod_group("default", "slow", 3, schedule_timeout_seconds=5)
    # Three members, but room for two: the two assumed ones wait 5s (the PodGroup's
    # scheduleTimeoutSeconds, not the plugin's 10s), then the gang is rejected as a whole.
    sched = sched_factory([*nodes(2, cpu="1"), pg, *members("slow", 3, cpu="800m")])
    sched.run_until_idle(stall_timeout=120)
    assert bound(sched, "slow") == {}
    assert sched.in_flight() == 0 and len(sched.waiting_pods) == 0
    invariants.assert_nothing_lost(sched)


def test_gangs_and_single_pods_share_a_cluster(sched_factory: Any) -> None:
    singles = [make_pod(f"single-{i}").req(cpu="500m").obj() for i in range(2)]
    objects = [*nodes(3), *gang("a", 3, cpu="1"), *gang("b", 2, cpu="1"), *singles]
    sched = sched_factory(objects)
    sched.run_until_idle(stall_timeout=120)
    placed = backend_placements(sched)
    for group, size in (("a", 3), ("b", 2)):
        members = [k for k in placed if k.startswith(f"default/{group}-")]
        assert len(members) in (0, size), placed  # whole gangs only
    assert len(placed) == 7  # 6 CPUs: everything fits
    invariants.assert_no_overcommit(sched)
    invariants.assert_nothing_lost(sched)
    invariants.assert_preemption_only_lower_priority(sched)


def test_group_name() -> None:
    (pod,) = members("g", 1, cpu="1")
    assert group_name(pod) == "default/g"
    assert group_name(make_pod("plain").obj()) is None


def test_pod_group_status_reaches_scheduled_after_the_gang_binds(sched_factory: Any) -> None:
    sched = sched_factory([*nodes(), *gang("web", 3, cpu="1")])
    seen: list[tuple[str, object, object]] = []
    sched.backend.subscribe(
        lambda ev: (
            seen.append((ev.type, ev.obj.status.get("phase"), ev.obj.status.get("scheduled")))
            if isinstance(ev.obj, CustomObject) and ev.type == "MODIFIED"
            else None
        )
    )
    sched.run_until_idle()
    assert len(bound(sched, "web")) == 3
    pg = sched.backend.get("PodGroup", "web", "default")
    assert isinstance(pg, CustomObject)
    assert pg.status["phase"] == "Scheduled"
    assert pg.status["scheduled"] == 3
    assert pg.status["scheduleStartTime"]  # set by the first bind, kept after
    assert pg.spec == {"minMember": 3}  # the status subresource leaves the spec alone
    # One MODIFIED watch event per bind, in order.
    assert seen == [
        ("MODIFIED", "Scheduling", 1),
        ("MODIFIED", "Scheduling", 2),
        ("MODIFIED", "Scheduled", 3),
    ]


def test_a_gang_that_never_binds_leaves_the_status_alone(sched_factory: Any) -> None:
    sched = sched_factory([*nodes(1, cpu="1"), *gang("big", 3, cpu="1")])
    sched.run_until_idle()
    pg = sched.backend.get("PodGroup", "big", "default")
    assert isinstance(pg, CustomObject)
    assert pg.status == {}


def test_status_after_bind() -> None:
    first = pod_group_status_after_bind({}, 2, 0.0)
    assert first == {
        "scheduled": 1,
        "phase": "Scheduling",
        "scheduleStartTime": "1970-01-01T00:00:00Z",
    }
    second = pod_group_status_after_bind(first, 2, 99.0)
    assert second == {**first, "scheduled": 2, "phase": "Scheduled"}
    # A broken count restarts from zero rather than failing the bind.
    assert pod_group_status_after_bind({"scheduled": "x"}, 1, 0.0)["scheduled"] == 1


def test_the_in_memory_status_subresource() -> None:
    backend = MemoryBackend([pod_group("default", "g", 2)])
    stored = backend.get("PodGroup", "g", "default")
    assert isinstance(stored, CustomObject)
    rv = stored.metadata.resource_version
    out = backend.update_custom_object_status(stored, {"phase": "Scheduled"})
    assert out.status == {"phase": "Scheduled"}
    assert out.spec == {"minMember": 2}
    assert int(out.metadata.resource_version) > int(rv)
    # The same status again is no write; a stale resourceVersion is a Conflict.
    assert backend.update_custom_object_status(out, {"phase": "Scheduled"}) is out
    with pytest.raises(BackendError) as exc:
        backend.update_custom_object_status(stored, {"phase": "Failed"})
    assert exc.value.reason == "Conflict"
    missing = pod_group("default", "nope", 1)
    with pytest.raises(BackendError) as exc:
        backend.update_custom_object_status(missing, {})
    assert exc.value.code == 404


@given(binds=st.integers(1, 12), min_member=st.integers(1, 8), start=st.floats(0, 2e9))
def test_status_after_n_binds(binds: int, min_member: int, start: float) -> None:
    status: dict[str, object] = {}
    for i in range(binds):
        status = pod_group_status_after_bind(status, min_member, start + i)
    assert status["scheduled"] == binds
    assert status["phase"] == ("Scheduled" if binds >= min_member else "Scheduling")
    # scheduleStartTime is the first bind's, whenever one happened below minMember.
    assert ("scheduleStartTime" in status) == (min_member > 1)
