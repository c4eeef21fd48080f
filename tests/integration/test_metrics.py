"""Metrics with upstream's names, labels and buckets, fed by a real scheduling loop."""

from __future__ import annotations

import math

import pytest
from prometheus_client.parser import text_string_to_metric_families

from schedframe import hooks
from schedframe.metrics import SchedulerMetrics

from ._support import make_node, make_pod, new_scheduler

pytestmark = pytest.mark.integration


def _exp(start: float, factor: float, count: int) -> list[float]:
    out, value = [], start
    for _ in range(count):
        out.append(value)
        value *= factor
    return out


#: Upstream pkg/scheduler/metrics/metrics.go (master): family -> (type, labels, buckets).
UPSTREAM: dict[str, tuple[str, set[str], list[float] | None]] = {
    "scheduler_schedule_attempts": ("counter", {"result", "profile"}, None),
    "scheduler_event_handling_duration_seconds": ("histogram", {"event"}, _exp(0.0001, 2, 12)),
    "scheduler_scheduling_attempt_duration_seconds": (
        "histogram",
        {"result", "profile"},
        _exp(0.001, 2, 15),
    ),
    "scheduler_preemption_victims": ("histogram", set(), _exp(1, 2, 7)),
    "scheduler_preemption_attempts": ("counter", set(), None),
    "scheduler_pending_pods": ("gauge", {"queue"}, None),
    "scheduler_pod_scheduling_sli_duration_seconds": (
        "histogram",
        {"attempts"},
        _exp(0.01, 2, 20),
    ),
    "scheduler_pod_scheduling_attempts": ("histogram", set(), _exp(1, 2, 5)),
    "scheduler_pod_scheduled_after_flush": ("counter", set(), None),
    "scheduler_framework_extension_point_duration_seconds": (
        "histogram",
        {"extension_point", "status", "profile"},
        _exp(0.0001, 2, 12),
    ),
    "scheduler_plugin_execution_duration_seconds": (
        "histogram",
        {"plugin", "extension_point", "status"},
        _exp(0.00001, 1.5, 20),
    ),
    "scheduler_queue_incoming_pods": ("counter", {"queue", "event"}, None),
    "scheduler_unschedulable_pods": ("gauge", {"plugin", "profile"}, None),
    "scheduler_plugin_evaluation": ("counter", {"plugin", "extension_point", "profile"}, None),
}


def check_upstream_shape(
    text: str,
) -> dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], float]]:
    """Parse ``text``; assert every upstream family is there with upstream's type, label names
    and bucket bounds; return the samples by family."""
    samples: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], float]] = {}
    seen = set()
    for family in text_string_to_metric_families(text):
        if family.name not in UPSTREAM:
            continue
        seen.add(family.name)
        kind, labels, buckets = UPSTREAM[family.name]
        assert family.type == kind, family.name
        out = samples.setdefault(family.name, {})
        bounds: dict[tuple[tuple[str, str], ...], list[float]] = {}
        for s in family.samples:
            own = {k: v for k, v in s.labels.items() if k != "le"}
            assert set(own) == labels, (family.name, s.labels)
            key = tuple(sorted(s.labels.items()))
            out[(s.name, key)] = s.value
            if s.name.endswith("_bucket"):
                bounds.setdefault(tuple(sorted(own.items())), []).append(float(s.labels["le"]))
        for series in bounds.values():
            assert buckets is not None
            assert series == [*buckets, math.inf], family.name
    assert seen == set(UPSTREAM)
    return samples


def test_a_scheduler_loop_feeds_upstream_families() -> None:
    pm = hooks.plugin_manager(load_entry_points=False)
    sched, backend = new_scheduler(hooks=pm)
    metrics = SchedulerMetrics()
    metrics.attach(sched)
    backend.create(make_node("n1", cpu=1000))
    backend.create(make_pod("small", cpu=500))
    backend.create(make_pod("big", cpu=4000))
    sched.run_until_idle()

    samples = check_upstream_shape(metrics.exposition())
    attempts = samples["scheduler_schedule_attempts"]
    assert (
        attempts[
            (
                "scheduler_schedule_attempts_total",
                (("profile", "default-scheduler"), ("result", "scheduled")),
            )
        ]
        == 1.0
    )
    assert (
        attempts[
            (
                "scheduler_schedule_attempts_total",
                (("profile", "default-scheduler"), ("result", "unschedulable")),
            )
        ]
        == 1.0
    )
    pending = samples["scheduler_pending_pods"]
    assert {k[1][0][1]: v for k, v in pending.items()} == {
        "active": 0.0,
        "backoff": 0.0,
        "unschedulable": 1.0,
        "gated": 0.0,
    }
    assert samples["scheduler_unschedulable_pods"] == {
        (
            "scheduler_unschedulable_pods",
            (("plugin", "NodeResourcesFit"), ("profile", "default-scheduler")),
        ): 1.0
    }
    incoming = samples["scheduler_queue_incoming_pods"]
    assert (
        incoming[
            (
                "scheduler_queue_incoming_pods_total",
                (("event", "UnschedulablePodAdd"), ("queue", "active")),
            )
        ]
        == 2.0
    )
    assert (
        incoming[
            (
                "scheduler_queue_incoming_pods_total",
                (("event", "ScheduleAttemptFailure"), ("queue", "unschedulable")),
            )
        ]
        == 1.0
    )
    # One successful attempt: the attempts histogram has one observation of 1.
    assert (
        samples["scheduler_pod_scheduling_attempts"][
            ("scheduler_pod_scheduling_attempts_bucket", (("le", "1"),))
        ]
        == 1.0
    )
    assert (
        samples["scheduler_preemption_attempts"][("scheduler_preemption_attempts_total", ())] == 1.0
    )
    handled = samples["scheduler_event_handling_duration_seconds"]
    assert (
        handled[("scheduler_event_handling_duration_seconds_count", (("event", "NodeAdd"),))] == 1.0
    )


def test_each_scheduler_has_its_own_registry() -> None:
    a, b = SchedulerMetrics(), SchedulerMetrics()
    assert a.registry is not b.registry
    sched, backend = new_scheduler(hooks=hooks.plugin_manager(load_entry_points=False))
    a.attach(sched)
    backend.create(make_node("n1", cpu=1000))
    backend.create(make_pod("p", cpu=100))
    sched.run_until_idle()
    assert 'result="scheduled"' in a.exposition()
    assert 'result="scheduled"' not in b.exposition()


def test_attach_needs_hooks() -> None:
    sched, _ = new_scheduler()
    with pytest.raises(ValueError, match="has no observer hooks"):
        SchedulerMetrics().attach(sched)
