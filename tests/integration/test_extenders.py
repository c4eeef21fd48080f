"""The real scheduling loop against HTTP extenders served by the testing kit's
ExtenderServer: working verbs, an extender that times out, one that answers 500, one that
answers garbage, an ignorable one, a binder and a preempting one."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

import attrs
import pytest

from schedframe.backends import MemoryBackend
from schedframe.objects import Pod
from schedframe.scheduler import Scheduler
from schedframe.testing.extender import ExtenderServer, keep_nodes, score_nodes

from ._support import config, make_node, make_pod, new_scheduler, pods_of

pytestmark = pytest.mark.integration

GPU: Final = "example.com/gpu"


def _bound(backend: MemoryBackend) -> dict[str, str]:
    return {p.name: p.spec.node_name for p in pods_of(backend) if p.spec.node_name}


def _start(extenders: list[Mapping[str, Any]], nodes: int = 3) -> tuple[Scheduler, MemoryBackend]:
    sched, backend = new_scheduler(
        config(extenders=extenders), [make_node(f"n{i}") for i in range(1, nodes + 1)]
    )
    return sched, backend


def _failed(backend: MemoryBackend) -> list[str]:
    return [e.note for e in backend.events if e.reason == "FailedScheduling"]


@pytest.fixture
def ext() -> Iterator[ExtenderServer]:
    with ExtenderServer(
        filter=keep_nodes(lambda n: n != "n3", reason="node is draining"),
        prioritize=score_nodes({"n2": 10}),
    ) as server:
        yield server


def _entry(server: ExtenderServer, **more: Any) -> dict[str, Any]:
    return {
        "urlPrefix": server.url,
        "filterVerb": "filter",
        "prioritizeVerb": "prioritize",
        "weight": 5,
        **more,
    }


def test_filter_and_prioritize_place_pods(ext: ExtenderServer) -> None:
    sched, backend = _start([_entry(ext)])
    for i in range(3):
        backend.create(make_pod(f"p{i}"))
    sched.run_until_idle()
    # The extender's 10 x weight 5 x 10 outweighs the plugins' spreading: all on n2.
    assert _bound(backend) == {"p0": "n2", "p1": "n2", "p2": "n2"}
    verbs = ext.verbs_called()
    assert verbs.count("filter") == 3 and verbs.count("prioritize") == 3
    _, request = ext.calls[0]
    assert sorted(i["metadata"]["name"] for i in request["nodes"]["items"]) == ["n1", "n2", "n3"]


def test_extender_rejections_are_in_the_fit_error() -> None:
    with ExtenderServer(filter=keep_nodes(lambda n: False, reason="node is draining")) as server:
        sched, backend = _start([{"urlPrefix": server.url, "filterVerb": "filter"}], nodes=2)
        backend.create(make_pod("p"))
        sched.run_until_idle()
    assert _bound(backend) == {}
    result = next(iter(sched.results.values()))
    assert result.outcome == "unschedulable"
    assert result.message == (
        "0/2 nodes are available: 2 node is draining. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )
    assert result.plugins == ("Extender",)


def test_unresolvable_rejections_are_not_preempted_for() -> None:
    with ExtenderServer(
        filter=keep_nodes(lambda n: False, reason="wrong rack", unresolvable=True)
    ) as server:
        sched, backend = _start([{"urlPrefix": server.url, "filterVerb": "filter"}], nodes=2)
        backend.create(make_pod("p"))
        sched.run_until_idle()
    result = next(iter(sched.results.values()))
    assert result.message == (
        "0/2 nodes are available: 2 wrong rack. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling."
    )


@pytest.mark.parametrize(
    ("fault", "timeout", "note"),
    [
        pytest.param({"delay": 1.0}, "0.2s", "context deadline exceeded", id="times out"),
        pytest.param({"status": 500}, "5s", "code 500", id="returns 500"),
        pytest.param({"body": b"<html>garbage"}, "5s", "invalid JSON", id="returns garbage"),
    ],
)
def test_a_failing_extender_fails_the_attempt_then_recovers(
    ext: ExtenderServer, fault: dict[str, Any], timeout: str, note: str
) -> None:
    sched, backend = _start([_entry(ext, httpTimeout=timeout)])
    ext.fault("filter", **fault)
    backend.create(make_pod("p"))
    assert sched.schedule_one()
    assert _bound(backend) == {}
    notes = _failed(backend)
    assert len(notes) == 1 and note in notes[0] and ext.url in notes[0]
    pod = backend.get("Pod", "p")
    assert isinstance(pod, Pod)
    assert sched.results[pod.uid].outcome == "error"
    # An error goes through the error backoff and is retried; the extender is back.
    ext.clear_faults()
    sched.run_until_idle()
    assert _bound(backend) == {"p": "n2"}


def test_an_ignorable_failing_extender_is_skipped(ext: ExtenderServer) -> None:
    with ExtenderServer(filter=lambda args: {}) as broken:
        broken.fault("filter", status=500)
        sched, backend = _start(
            [
                {"urlPrefix": broken.url, "filterVerb": "filter", "ignorable": True},
                _entry(ext),
            ]
        )
        backend.create(make_pod("p"))
        sched.run_until_idle()
        assert broken.verbs_called() == ["filter"]
    assert _bound(backend) == {"p": "n2"}
    assert _failed(backend) == []


def test_uninterested_extender_is_not_called(ext: ExtenderServer) -> None:
    sched, backend = _start([_entry(ext, managedResources=[{"name": "example.com/gpu"}])])
    backend.create(make_pod("p"))
    sched.run_until_idle()
    assert ext.calls == []
    assert "p" in _bound(backend)


def test_a_binder_extender_binds_instead_of_default_binder() -> None:
    holder: list[MemoryBackend] = []

    def bind(args: dict[str, Any]) -> object:
        backend = holder[0]
        pod = backend.get("Pod", args["podName"], args["podNamespace"])
        assert isinstance(pod, Pod) and pod.uid == args["podUID"]
        backend.bind(pod, args["node"])
        return {}

    with ExtenderServer(bind=bind) as server:
        sched, backend = _start([{"urlPrefix": server.url, "bindVerb": "bind"}], nodes=1)
        holder.append(backend)
        backend.create(make_pod("p"))
        sched.run_until_idle()
        assert server.verbs_called() == ["bind"]
    assert _bound(backend) == {"p": "n1"}


def test_preemption_goes_through_the_extender() -> None:
    seen: list[dict[str, Any]] = []

    def preempt(args: dict[str, Any]) -> object:
        seen.append(args)
        return {"nodeNameToMetaVictims": args["nodeNameToMetaVictims"]}

    with ExtenderServer(preempt=preempt) as server:
        sched, backend = new_scheduler(
            config(
                extenders=[
                    {"urlPrefix": server.url, "preemptVerb": "preempt", "nodeCacheCapable": True}
                ]
            ),
            [make_node("n1", cpu=1000)],
        )
        backend.create(make_pod("low", cpu=800, priority=0))
        sched.run_until_idle()
        backend.create(make_pod("high", cpu=800, priority=100))
        sched.run_until_idle()
    assert _bound(backend) == {"high": "n1"}
    assert len(seen) == 1
    victims = seen[0]["nodeNameToMetaVictims"]
    assert list(victims) == ["n1"]
    assert victims["n1"]["numPDBViolations"] == 0
    assert len(victims["n1"]["pods"]) == 1


def test_an_extender_dropping_every_candidate_stops_preemption() -> None:
    with ExtenderServer(preempt=lambda args: {"nodeNameToMetaVictims": {}}) as server:
        sched, backend = new_scheduler(
            config(extenders=[{"urlPrefix": server.url, "preemptVerb": "preempt"}]),
            [make_node("n1", cpu=1000)],
        )
        backend.create(make_pod("low", cpu=800, priority=0))
        sched.run_until_idle()
        backend.create(make_pod("high", cpu=800, priority=100))
        sched.run_until_idle()
    assert _bound(backend) == {"low": "n1"}


def test_resources_ignored_by_scheduler_leave_node_resources_fit() -> None:
    def gpu_pod(name: str) -> Pod:
        base = make_pod(name)
        container = attrs.evolve(
            base.spec.containers[0], requests={**base.spec.containers[0].requests, GPU: 1}
        )
        return attrs.evolve(base, spec=attrs.evolve(base.spec, containers=(container,)))

    with ExtenderServer(filter=keep_nodes(lambda n: True)) as server:
        entry = {
            "urlPrefix": server.url,
            "filterVerb": "filter",
            "managedResources": [{"name": GPU, "ignoredByScheduler": True}],
        }
        # No node has the resource: without the extender's word, Insufficient example.com/gpu.
        sched, backend = _start([entry], nodes=1)
        backend.create(gpu_pod("p"))
        sched.run_until_idle()
        assert server.verbs_called() == ["filter"]
    assert _bound(backend) == {"p": "n1"}
    fit = [pc for pc in sched.config.profiles[0].plugin_config if pc.name == "NodeResourcesFit"]
    assert [pc.args for pc in fit] == [{"ignoredResources": [GPU]}]


def test_managed_resources_not_ignored_still_count() -> None:
    with ExtenderServer(filter=keep_nodes(lambda n: True)) as server:
        entry = {
            "urlPrefix": server.url,
            "filterVerb": "filter",
            "managedResources": [{"name": GPU}],
        }
        sched, backend = _start([entry], nodes=1)
        base = make_pod("p")
        container = attrs.evolve(
            base.spec.containers[0], requests={**base.spec.containers[0].requests, GPU: 1}
        )
        backend.create(attrs.evolve(base, spec=attrs.evolve(base.spec, containers=(container,))))
        sched.run_until_idle()
    result = next(iter(sched.results.values()))
    assert result.message.startswith("0/1 nodes are available: 1 Insufficient example.com/gpu.")


def test_a_pod_extenders_rejected_is_requeued_by_any_cluster_event() -> None:
    # upstream kubernetes#122019: Extender has no hints, so it registers every event
    allowed: set[str] = set()
    with ExtenderServer(filter=keep_nodes(lambda n: n in allowed)) as server:
        sched, backend = _start([{"urlPrefix": server.url, "filterVerb": "filter"}], nodes=1)
        backend.create(make_pod("p"))
        sched.run_until_idle()
        assert [p.name for p in sched.queue.unschedulable_pods()] == ["p"]
        allowed.add("n2")
        backend.create(make_node("n2"))
        assert [p.name for p in sched.queue.unschedulable_pods()] == []
        sched.run_until_idle()
    assert _bound(backend) == {"p": "n2"}
    assert sched.clock.now() < 60  # the backoff, not the 5-minute leftover flush
