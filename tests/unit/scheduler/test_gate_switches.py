"""The scheduler's gate-driven switches follow the configuration's feature gates."""

from __future__ import annotations

from typing import Any, cast

import pytest

from schedframe import Scheduler
from schedframe.backends import MemoryBackend
from schedframe.config import load_config


def _preemption(sched: Scheduler) -> Any:
    profile = next(iter(sched.profiles.values()))
    return profile.plugins["DefaultPreemption"]


@pytest.mark.parametrize(
    ("version", "gates", "nnn", "async_preemption"),
    [
        ("1.36", {}, True, True),
        ("1.35", {}, True, True),
        # NominatedNodeNameForExpectation was alpha (off) in 1.34.
        ("1.34", {}, False, True),
        ("1.36", {"SchedulerAsyncPreemption": False}, True, False),
        ("1.36", {"NominatedNodeNameForExpectation": False}, False, True),
    ],
)
def test_switches_default_to_the_gates(
    version: str, gates: dict[str, bool], nnn: bool, async_preemption: bool
) -> None:
    config = load_config(None, feature_gates=gates, emulated_version=version)
    sched = Scheduler(config, MemoryBackend([]), deterministic=True)
    assert sched.nominated_node_name_for_expectation is nnn
    assert _preemption(sched).async_preemption is async_preemption
    assert cast(Any, sched.queue).queueing_hints is True


def test_explicit_switches_win_over_the_gates() -> None:
    config = load_config(None, emulated_version="1.34")
    sched = Scheduler(
        config,
        MemoryBackend([]),
        deterministic=True,
        queueing_hints=False,
        nominated_node_name_for_expectation=True,
    )
    assert sched.nominated_node_name_for_expectation is True
    assert cast(Any, sched.queue).queueing_hints is False
