"""Deterministic runs end, and a long virtual quiet costs no wall time.

Two pods and a Permit plugin that always makes them wait used to keep ``run_until_idle``
going forever (each rejection freed room that woke the other pod), and with a zero wait the
virtual clock never moved. Jumping a long way in virtual time used to fire the scheduler's
one-second backoff flush once per virtual second.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

import pytest

from schedframe import framework as fw
from schedframe.framework import CycleState, Status
from schedframe.objects import Pod
from schedframe.scheduler import VirtualClock, call_every

from .test_plugin_faults import _pod, _scheduler


def _always_waits(seconds: float) -> type[Any]:
    class AlwaysWait(fw.PermitPlugin):
        name: ClassVar[str] = "AlwaysWait"

        def __init__(self, args: object, handle: fw.Handle) -> None:
            pass

        def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            return Status.wait(seconds)

    return AlwaysWait


@pytest.mark.parametrize("seconds", [0.0, 0.5, 10.0, 900.0])
def test_pods_that_always_wait_on_permit_end_the_run_and_are_reported(
    seconds: float, caplog: pytest.LogCaptureFixture
) -> None:
    sched, backend = _scheduler("permit", _always_waits(seconds))
    backend.create(_pod("a"))
    backend.create(_pod("b"))
    with caplog.at_level(logging.WARNING, logger="schedframe.scheduler"):
        cycles = sched.run_until_idle(max_cycles=5_000, stall_timeout=60.0)
    assert cycles < 5_000, "run_until_idle did not notice the pods could not settle"
    assert sched.stalled_pods == ("default/a", "default/b")
    assert "2 pod(s) cannot settle: default/a, default/b" in caplog.text
    # Virtual time moved (a zero wait included), and not further than the limit says.
    assert 60.0 <= sched.clock.now() <= 60.0 + 2 * seconds + 1.0
    assert not [p for p in backend.list("Pod") if isinstance(p, Pod) and p.spec.node_name]


def test_a_run_that_ends_idle_reports_no_stalled_pods() -> None:
    sched, backend = _scheduler("permit", _always_waits(10.0))
    # Without NominatedNodeNameForExpectation: with it, the pod's nominated node is written
    # before its Permit wait and cleared when it is rejected, and that change moves the pods
    # of the pool (upstream treats it as the pod leaving the node), the pod itself included,
    # since a plugin without queueing hints is woken by every event; it never settles then.
    sched.nominated_node_name_for_expectation = False
    backend.create(_pod("a"))
    backend.create(_pod("b"))
    sched.run_until_idle(stall_timeout=5.0)
    assert sched.stalled_pods == ("default/a", "default/b")
    b = backend.get("Pod", "b", "default")
    assert isinstance(b, Pod)
    backend.delete(b)
    sched.run_until_idle(stall_timeout=5.0)
    # Alone, the pod times out once and waits in the unschedulable pool, as upstream: idle.
    stalled: tuple[str, ...] = sched.stalled_pods  # not narrowed by the assertion above
    assert stalled == ()
    assert [p.name for p in sched.queue.unschedulable_pods()] == ["a"]


def test_a_zero_permit_wait_rejects_at_once_and_the_loop_ends() -> None:
    sched, backend = _scheduler("permit", _always_waits(0.0))
    backend.create(_pod("a"))
    backend.create(_pod("b"))
    cycles = sched.run_until_idle(max_cycles=2_000, stall_timeout=30.0)
    assert cycles < 2_000
    assert sched.clock.now() >= 30.0


def test_a_periodic_timer_with_nothing_due_is_jumped_over() -> None:
    clock = VirtualClock()
    ticks: list[float] = []
    due: list[float | None] = [None]
    call_every(clock, 1.0, lambda: ticks.append(clock.now()), due=lambda: due[0])
    assert clock.next_deadline() is None
    clock.advance_to(1e7)
    assert ticks == []
    due[0] = 1e7 + 2.5  # work from then on: fire on the grid from there
    assert clock.next_deadline() == 1e7 + 3.0
    clock.advance(5.0)
    assert ticks == [1e7 + 3.0, 1e7 + 4.0, 1e7 + 5.0]


def test_a_periodic_timer_keeps_moving_at_huge_times() -> None:
    clock = VirtualClock(start=1e300)
    ticks: list[float] = []
    call_every(clock, 1.0, lambda: ticks.append(clock.now()))
    clock.advance_to(1e300)
    first = clock.next_deadline()
    assert first is not None and first > 1e300
    clock.advance_to(first)
    second = clock.next_deadline()
    assert second is not None and second > first


def test_a_long_quiet_costs_no_flushes() -> None:
    sched, backend = _scheduler("permit", _always_waits(0.0))
    sched.run_until_idle()
    flushes: list[float] = []
    queue = sched.queue
    original = queue.flush_backoff_q_completed

    def counting() -> None:
        flushes.append(sched.clock.now())
        original()

    queue.flush_backoff_q_completed = counting  # type: ignore[method-assign,unused-ignore]
    sched.clock.advance(1e7)  # type: ignore[attr-defined,unused-ignore]
    assert flushes == []
    assert sched.clock.now() == 1e7
