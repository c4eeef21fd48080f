"""Fast paths off (``SCHEDFRAME_FAST_PATHS=0``) schedules exactly as fast paths on.

The switch exists to bisect a suspected fast-path bug: with it off, no plugin's fast form
(batch verdicts, prepared filters, batch scores, the queue's sort key, preemption's dry-run
shortcuts) is used. On drawn clusters (taints, affinities, spreading, priorities and PDBs, so
preemption runs too) a deterministic scheduler must bind every pod to the same node either
way, and record the same events.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedframe.framework.batch import FAST_PATHS_ENV
from schedframe.runtime import Framework
from schedframe.testing import deterministic
from schedframe.testing import strategies as sst

pytestmark = pytest.mark.property


@contextmanager
def _fast_paths(value: str | None) -> Iterator[None]:
    old = os.environ.get(FAST_PATHS_ENV)
    if value is None:
        os.environ.pop(FAST_PATHS_ENV, None)
    else:
        os.environ[FAST_PATHS_ENV] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(FAST_PATHS_ENV, None)
        else:
            os.environ[FAST_PATHS_ENV] = old


def _run(cluster: Any, seed: int, switch: str | None) -> tuple[Any, ...]:
    with _fast_paths(switch), deterministic.scheduler(objects=cluster, seed=seed) as sched:
        fast = {fwk.fast_paths for fwk in sched.profiles.values()}
        sched.run_until_idle(max_cycles=300)
        events = [
            (e.regarding, e.reason, e.note)
            for fwk in sched.profiles.values()
            for e in getattr(fwk.event_recorder, "events", ())
        ]
        return fast, sched.placements(), events


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cluster=sst.clusters(
        min_nodes=1,
        max_nodes=8,
        max_pods=10,
        min_pending=1,
        max_pending=8,
        taints=True,
        affinities=True,
        spread=True,
        pdbs=True,
    ),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_fast_paths_off_schedules_as_fast_paths_on(cluster: Any, seed: int) -> None:
    on = _run(cluster, seed, None)
    off = _run(cluster, seed, "0")
    assert on[0] == {True} and off[0] == {False}
    assert on[1:] == off[1:]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, True), ("1", True), ("0", False), ("false", False), ("OFF", False), ("no", False)],
)
def test_the_environment_variable_sets_the_default(value: str | None, expected: bool) -> None:
    with _fast_paths(value):
        assert Framework().fast_paths is expected
        assert Framework(fast_paths=True).fast_paths is True
        assert Framework(fast_paths=False).fast_paths is False
