"""Simulations always end: long virtual quiet is cheap, hostile times are refused, a scenario
that cannot settle stops with a clear message."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from schedframe import framework as fw
from schedframe.errors import ManifestError
from schedframe.framework import CycleState, Status
from schedframe.objects import Container, Node, NodeStatus, ObjectMeta, Pod, PodSpec
from schedframe.runtime import Registry
from schedframe.scheduler import Scheduler
from schedframe.simulation import DEFAULT_MAX_VIRTUAL_TIME, generate_workload, simulate

TEMPLATE: dict[str, Any] = {
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]},
}


def _node(name: str) -> Node:
    alloc = {"cpu": 4000, "memory": 16 << 30, "pods": 110}
    return Node(
        metadata=ObjectMeta(name=name),
        status=NodeStatus(capacity=dict(alloc), allocatable=dict(alloc)),
    )


def _workload(**group: Any) -> dict[str, Any]:
    return {"kind": "Workload", "pods": [{"name": "w", "template": TEMPLATE, **group}]}


def test_a_late_arrival_costs_no_flush_per_virtual_second(monkeypatch: pytest.MonkeyPatch) -> None:
    flushes: list[int] = []
    original = Scheduler._flush_backoff_q_completed

    def counting(self: Scheduler) -> None:
        flushes.append(1)
        original(self)

    monkeypatch.setattr(Scheduler, "_flush_backoff_q_completed", counting)
    wl = generate_workload(_workload(count=2, arrival={"at": 1e7}, duration=5))
    result = simulate(cluster=[_node("n1")], workload=wl)
    assert result.placements() == {"default/w-0": "n1", "default/w-1": "n1"}
    assert result.end_time == 1e7 + 5
    assert result.unsettled == ()
    assert len(flushes) < 10  # was one per virtual second: ten million


@pytest.mark.parametrize(
    ("group", "message"),
    [
        (
            {"arrival": {"at": 1e308}},
            "w.yaml: pods[0].arrival.at: Invalid value: 1e+308: must be at most 1e+10",
        ),
        (
            {"arrival": {"rate": 1e-320}},
            "w.yaml: pods[0].arrival.rate: Invalid value: 1e-320: must be at least 1e-10",
        ),
        (
            {"duration": {"min": 1, "max": 1e308}},
            "w.yaml: pods[0].duration.max: Invalid value: 1e+308: must be at most 1e+10",
        ),
        (
            {"arrival": {"every": 10**400}},
            "w.yaml: pods[0].arrival.every: Invalid value: ",
        ),
        (
            {"count": 10**12},
            "w.yaml: pods[0].count: Invalid value: 1000000000000: must be at most 1000000",
        ),
    ],
)
def test_times_no_run_could_reach_are_refused_with_their_path(
    group: dict[str, Any], message: str
) -> None:
    with pytest.raises(ManifestError) as info:
        generate_workload(_workload(**group), source="w.yaml")
    assert str(info.value).startswith(message)


def test_a_run_stops_at_the_maximum_virtual_time_and_says_so() -> None:
    wl = generate_workload(_workload(count=3, arrival={"at": 10, "every": 1e9}))
    result = simulate(cluster=[_node("n1")], workload=wl, max_virtual_time=100.0)
    assert result.end_time == 100.0
    assert list(result.placements()) == ["default/w-0"]
    assert result.unsettled == (
        "stopped at the maximum virtual time of 100s with work left (next event at "
        "1e+09s; 2 pod(s) not arrived yet); raise --max-virtual-time or set --until",
    )
    assert DEFAULT_MAX_VIRTUAL_TIME == 365 * 24 * 3600


class AlwaysWait(fw.PermitPlugin):
    name: ClassVar[str] = "AlwaysWait"

    def __init__(self, args: object, handle: fw.Handle) -> None:
        pass

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return Status.wait(10)


def test_a_scenario_that_cannot_settle_ends_with_the_stuck_pods_named() -> None:
    registry = Registry.discover()
    registry.register(AlwaysWait.name, AlwaysWait)
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"permit": {"enabled": [{"name": "AlwaysWait"}]}},
            }
        ],
    }
    pods = [
        Pod(
            metadata=ObjectMeta(name=n, namespace="default", uid=f"uid-{n}"),
            spec=PodSpec(containers=(Container(name="c", requests={"cpu": 100}),)),
        )
        for n in ("a", "b")
    ]
    result = simulate(cluster=[_node("n1"), *pods], config=config, registry=registry)
    assert result.placements() == {}
    assert len(result.unsettled) == 1
    assert result.unsettled[0].startswith("2 pod(s) could not settle")
    assert result.unsettled[0].endswith(": default/a, default/b")
    assert result.attempts < 100


def test_limits_beyond_the_datetime_range_are_refused() -> None:
    with pytest.raises(ValueError, match="max_virtual_time must be between 0 and 1e\\+10"):
        simulate(cluster=[_node("n1")], max_virtual_time=1e12)
