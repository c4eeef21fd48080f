"""Per-plugin metrics and extension-point durations: upstream's labels, counts and statuses,
with the batch paths on (counted from their verdicts) and off (counted call by call)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, cast

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from schedframe import framework as fw
from schedframe import hooks
from schedframe.framework import Code, CycleState, NodeInfo, Status
from schedframe.framework.batch import FAST_PATHS_ENV
from schedframe.metrics import SchedulerMetrics
from schedframe.objects import Pod
from schedframe.runtime import Registry
from schedframe.scheduler import Scheduler, VirtualClock

from ._support import config, make_node, make_pod, new_scheduler, profile
from .test_metrics import check_upstream_shape

pytestmark = pytest.mark.integration

_Counts = dict[tuple[str, ...], float]
P = "default-scheduler"


@contextmanager
def _fast_paths(on: bool) -> Iterator[None]:
    old = os.environ.get(FAST_PATHS_ENV)
    os.environ[FAST_PATHS_ENV] = "1" if on else "0"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(FAST_PATHS_ENV, None)
        else:
            os.environ[FAST_PATHS_ENV] = old


def _series(metrics: SchedulerMetrics, sample: str, labels: tuple[str, ...]) -> _Counts:
    out: _Counts = {}
    for family in text_string_to_metric_families(metrics.exposition()):
        for s in family.samples:
            if s.name == sample:
                out[tuple(s.labels[k] for k in labels)] = s.value
    return out


def _evaluations(metrics: SchedulerMetrics) -> _Counts:
    got = _series(
        metrics, "scheduler_plugin_evaluation_total", ("plugin", "extension_point", "profile")
    )
    return {k: v for k, v in got.items() if v}


def _durations(metrics: SchedulerMetrics) -> _Counts:
    return _series(
        metrics,
        "scheduler_plugin_execution_duration_seconds_count",
        ("plugin", "extension_point", "status"),
    )


def _points(metrics: SchedulerMetrics) -> _Counts:
    return _series(
        metrics,
        "scheduler_framework_extension_point_duration_seconds_count",
        ("extension_point", "status", "profile"),
    )


def _scheduler(
    percent: int, seed: int = 0, **kwargs: Any
) -> tuple[Scheduler, Any, SchedulerMetrics]:
    sched, backend = new_scheduler(
        hooks=hooks.plugin_manager(load_entry_points=False), seed=seed, **kwargs
    )
    metrics = SchedulerMetrics(plugin_sample_percent=percent)
    metrics.attach(sched)
    return sched, backend, metrics


#: Filter plugins of the default profile that PreFilter does not skip for a CPU-only pod.
_FILTERING = ("NodeName", "NodeResourcesFit", "NodeUnschedulable", "TaintToleration")
_PRESCORE_RUNNING = ("NodeResourcesBalancedAllocation", "NodeResourcesFit", "TaintToleration")
_SCORING = (
    "ImageLocality",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "TaintToleration",
)


@pytest.mark.parametrize("fast", [True, False])
def test_three_nodes_one_pod_counts_each_plugin_call(fast: bool) -> None:
    """Upstream's instrumented plugins: PreFilter and PreScore calls that did not Skip, and
    one Filter and one Score call per node; a plugin PreFilter skipped is not called."""
    with _fast_paths(fast):
        sched, backend, metrics = _scheduler(0)
    for i in range(3):
        backend.create(make_node(f"n{i}", cpu=1000))
    backend.create(make_pod("p", cpu=500))
    sched.run_until_idle()
    assert _evaluations(metrics) == {
        ("NodeResourcesFit", "PreFilter", P): 1.0,
        **{(p, "Filter", P): 3.0 for p in _FILTERING},
        **{(p, "PreScore", P): 1.0 for p in _PRESCORE_RUNNING},
        **{(p, "Score", P): 3.0 for p in _SCORING},
    }
    # Upstream creates every plugin's series when it builds the framework: at zero.
    everything = _series(
        metrics, "scheduler_plugin_evaluation_total", ("plugin", "extension_point", "profile")
    )
    assert everything[("VolumeBinding", "Filter", P)] == 0.0
    assert _durations(metrics) == {}  # no cycle sampled at 0 %


def test_sampled_cycles_record_each_plugin_and_point_with_its_status() -> None:
    """At 100 %: every plugin call of the per-cycle points with its status; the extension
    points of the scheduled pod and of the unschedulable one (PostFilter Unschedulable)."""
    sched, backend, metrics = _scheduler(100)
    for i in range(2):
        backend.create(make_node(f"n{i}", cpu=1000))
    backend.create(make_pod("small", cpu=500))
    backend.create(make_pod("big", cpu=4000))
    sched.run_until_idle()
    durations = _durations(metrics)
    assert durations[("NodeResourcesFit", "PreFilter", "Success")] == 2.0
    assert durations[("VolumeBinding", "PreFilter", "Skip")] == 2.0
    assert durations[("DefaultPreemption", "PostFilter", "Unschedulable")] == 1.0
    assert durations[("TaintToleration", "PreScore", "Success")] == 1.0
    assert durations[("NodeAffinity", "PreScore", "Skip")] == 1.0
    assert durations[("TaintToleration", "ScoreExtensionNormalize", "Success")] == 1.0
    assert durations[("VolumeBinding", "Reserve", "Success")] == 1.0
    assert durations[("DefaultBinder", "Bind", "Success")] == 1.0
    assert ("NodeResourcesFit", "Filter", "Success") in durations
    assert _points(metrics) == {
        ("PreFilter", "Success", P): 2.0,
        ("Filter", "Success", P): 2.0,
        ("PostFilter", "Unschedulable", P): 1.0,
        ("PreScore", "Success", P): 1.0,
        ("Score", "Success", P): 1.0,
        ("Reserve", "Success", P): 1.0,
        ("Permit", "Success", P): 1.0,
        # NominatedNodeNameForExpectation (beta, on): every PreBind plugin's pre-flight skips.
        ("PreBindPreFlight", "Skip", P): 1.0,
        ("PreBind", "Success", P): 1.0,
        ("Bind", "Success", P): 1.0,
        ("PostBind", "Success", P): 1.0,
    }
    assert durations[("VolumeBinding", "PreBindPreFlight", "Skip")] == 1.0
    # Every family, labels and bucket boundaries as upstream's, now with samples in each.
    samples = check_upstream_shape(metrics.exposition())
    assert samples["scheduler_plugin_execution_duration_seconds"]
    assert samples["scheduler_plugin_evaluation"]


def test_per_node_sampled_filter_calls_carry_their_status() -> None:
    """Per-node path (fast paths off): one observation per node call, as upstream."""
    with _fast_paths(False):
        sched, backend, metrics = _scheduler(100)
    for i in range(2):
        backend.create(make_node(f"n{i}", cpu=1000))
    backend.create(make_pod("big", cpu=4000))
    sched.run_until_idle()
    durations = _durations(metrics)
    assert durations[("NodeResourcesFit", "Filter", "UnschedulableAndUnresolvable")] == 2.0
    assert durations[("NodeName", "Filter", "Success")] == 2.0


class _Gate:
    """PreFilter, Filter and Permit failing as the pod's ``gate`` label says."""

    name: ClassVar[str] = "TestGate"

    def __init__(self, args: object, handle: fw.Handle) -> None:
        self.handle = handle

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> fw.PreFilterResult | Status | None:
        if pod.labels.get("gate") == "prefilter":
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated")
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if pod.labels.get("gate") == "filter":
            return Status(Code.ERROR, "filter broke")
        return None

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if pod.labels.get("gate") == "permit":
            return Status(Code.UNSCHEDULABLE, "not permitted")
        return None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        return ()


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize(
    ("gate", "expected"),
    [
        (
            "prefilter",
            {
                ("PreFilter", "UnschedulableAndUnresolvable", P): 1.0,
                ("PostFilter", "Unschedulable", P): 1.0,  # a FitError: preemption is tried
            },
        ),
        (
            "filter",
            {("PreFilter", "Success", P): 1.0, ("Filter", "Error", P): 1.0},
        ),
        (
            "permit",
            {
                ("PreFilter", "Success", P): 1.0,
                ("Filter", "Success", P): 1.0,
                ("PreScore", "Success", P): 1.0,
                ("Score", "Success", P): 1.0,
                ("Reserve", "Success", P): 1.0,
                ("Permit", "Unschedulable", P): 1.0,
                ("Unreserve", "Success", P): 1.0,
            },
        ),
    ],
)
def test_failed_cycles_record_their_points_with_the_status(
    fast: bool, gate: str, expected: _Counts
) -> None:
    sched, backend, metrics = _gated(100, fast)
    for i in range(2):
        backend.create(make_node(f"n{i}"))
    backend.create(make_pod("p", labels={"gate": gate}))
    assert sched.schedule_one()
    assert _points(metrics) == expected
    if gate == "filter":
        # The erring plugin's call is recorded with its status; it was evaluated once.
        assert _durations(metrics)[("TestGate", "Filter", "Error")] == 1.0
        assert _evaluations(metrics)[("TestGate", "Filter", P)] == 1.0


def _gated(percent: int, fast: bool = True) -> tuple[Scheduler, Any, SchedulerMetrics]:
    """A scheduler whose profile has TestGate at PreFilter, Filter (after the defaults) and
    Permit."""
    registry = Registry.discover()
    registry.register("TestGate", _Gate)
    points = {p: {"enabled": [{"name": "TestGate"}]} for p in ("preFilter", "filter", "permit")}
    with _fast_paths(fast):
        return _scheduler(percent, cfg=config(profile(plugins=points)), registry=registry)


@pytest.mark.parametrize("fast", [True, False])
def test_rejected_nodes_count_up_to_the_rejecting_plugin(fast: bool) -> None:
    """A node NodeResourcesFit rejects is not seen by the Filter plugins after it."""
    sched, backend, metrics = _gated(0, fast)
    for i in range(3):
        backend.create(make_node(f"n{i}", cpu=1000 if i else 100))
    backend.create(make_pod("p", cpu=500))
    sched.run_until_idle()
    got = _evaluations(metrics)
    assert got[("NodeUnschedulable", "Filter", P)] == 3.0
    assert got[("NodeResourcesFit", "Filter", P)] == 3.0
    assert got[("TestGate", "Filter", P)] == 2.0  # after NodeResourcesFit: two nodes left


def _placements(sched: Scheduler, backend: Any) -> dict[str, str]:
    return {p.name: p.spec.node_name for p in backend.list("Pod")}


def _workload(backend: Any, seed: int) -> None:
    import random

    rng = random.Random(seed)
    for i in range(rng.randint(1, 40)):
        backend.create(make_node(f"n{i:03}", cpu=rng.choice([100, 500, 1000, 2000])))
    for i in range(rng.randint(1, 30)):
        backend.create(make_pod(f"p{i:03}", cpu=rng.choice([50, 200, 600, 1500, 5000]), priority=0))


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(seed=st.integers(0, 10_000), percent=st.sampled_from([0, 50, 100]))
def test_evaluations_equal_with_fast_paths_on_and_off(seed: int, percent: int) -> None:
    """The batch path's evaluations, counted from its verdicts, are the per-node path's."""
    got = []
    for fast in (True, False):
        with _fast_paths(fast):
            sched, backend, metrics = _scheduler(percent, seed=seed)
        _workload(backend, seed)
        sched.run_until_idle()
        got.append((_evaluations(metrics), _placements(sched, backend)))
    assert got[0] == got[1]


def test_evaluations_with_nominated_pods_match_the_per_node_path() -> None:
    """Nodes with nominated pods are filtered twice (with those pods, then without) when the
    first run passes, and counted so on both paths. 150 nodes: the search stops after 100
    feasible nodes, and rotates."""
    got = []
    for on in (True, False):
        with _fast_paths(on):
            sched, backend, metrics = _scheduler(0)
        for i in range(150):
            backend.create(make_node(f"n{i:03}", cpu=1000))
        for i in range(60):
            backend.create(make_pod(f"p{i:03}", cpu=500))
        # Queued a second later, popped last: nominated while the others are scheduled.
        cast("VirtualClock", sched.clock).advance(1.0)
        # Two that leave room (both runs pass), one that does not (the first run rejects).
        for name, node, cpu in (
            ("ghost-a", "n003", 100),
            ("ghost-b", "n120", 100),
            ("ghost-c", "n121", 600),
        ):
            ghost = make_pod(name, cpu=cpu)
            status = attrs.evolve(ghost.status, nominated_node_name=node)
            backend.create(attrs.evolve(ghost, status=status))
        sched.run_until_idle()
        got.append((_evaluations(metrics), _placements(sched, backend)))
    assert got[0] == got[1]
    # The nominations were live: each ghost was tried on its nominated node first.
    placed = got[0][1]
    assert (placed["ghost-a"], placed["ghost-b"], placed["ghost-c"]) == ("n003", "n120", "n121")


def test_sampling_is_seeded_and_leaves_placements_alone() -> None:
    """The cycles sampled are the same in every run with the same seed, and drawing them
    changes no placement (the sampler is a source of its own)."""
    runs = []
    for _ in range(2):
        sched, backend, metrics = _scheduler(50, seed=7)
        _workload(backend, 3)
        sched.run_until_idle()
        runs.append((_durations(metrics), _placements(sched, backend)))
    assert runs[0] == runs[1]
    plain, plain_backend = new_scheduler(seed=7)
    _workload(plain_backend, 3)
    plain.run_until_idle()
    assert runs[0][1] == _placements(plain, plain_backend)
    other, other_backend, other_metrics = _scheduler(50, seed=8)
    _workload(other_backend, 3)
    other.run_until_idle()
    assert _durations(other_metrics) != runs[0][0]


def test_sample_percent_is_checked() -> None:
    with pytest.raises(ValueError, match="plugin_sample_percent must be within 0..100, got 101"):
        SchedulerMetrics(plugin_sample_percent=101)
