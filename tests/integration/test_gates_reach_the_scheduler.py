"""Feature gates reach the scheduler: the queue, the profiles' plugins and their Handle."""

from __future__ import annotations

import pytest

from schedframe.features import FeatureGates

from ._support import config, new_scheduler, profile


@pytest.mark.parametrize("enabled", [True, False])
def test_pop_from_backoff_q_gate_switches_the_queue(enabled: bool) -> None:
    sched, _ = new_scheduler(config(profile(), featureGates={"SchedulerPopFromBackoffQ": enabled}))
    assert getattr(sched.queue, "_pop_from_backoff_q") is enabled  # noqa: B009 (private)


@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36"])
def test_every_profile_gets_the_configured_gates(version: str) -> None:
    sched, _ = new_scheduler(config(profile(), emulatedVersion=version))
    for fwk in sched.profiles.values():
        assert fwk.features == FeatureGates(emulated_version=version)
