"""VirtualClock and RealClock: ordering, cancellation, periodic timers."""

from __future__ import annotations

import threading

import pytest

from schedframe.scheduler import RealClock, VirtualClock, call_every


def test_virtual_clock_fires_in_time_then_insertion_order() -> None:
    clock = VirtualClock(start=10.0)
    fired: list[tuple[str, float]] = []
    clock.call_later(5, lambda: fired.append(("b", clock.now())))
    clock.call_later(1, lambda: fired.append(("a", clock.now())))
    clock.call_at(15.0, lambda: fired.append(("c", clock.now())))
    assert clock.next_deadline() == 11.0
    clock.advance(4)
    assert fired == [("a", 11.0)]
    assert clock.now() == 14.0
    clock.advance_to(20.0)
    assert fired == [("a", 11.0), ("b", 15.0), ("c", 15.0)]
    assert clock.now() == 20.0
    assert clock.next_deadline() is None


def test_virtual_clock_cancel_and_nested_timers() -> None:
    clock = VirtualClock()
    fired: list[str] = []
    handle = clock.call_later(1, lambda: fired.append("cancelled"))
    handle.cancel()

    def outer() -> None:
        fired.append("outer")
        clock.call_later(0, lambda: fired.append("inner-now"))
        clock.call_later(10, lambda: fired.append("inner-late"))

    clock.call_later(2, outer)
    clock.advance(3)
    assert fired == ["outer", "inner-now"]
    assert clock.pending() == 1
    clock.advance(10)
    assert fired == ["outer", "inner-now", "inner-late"]


def test_virtual_clock_never_goes_back() -> None:
    clock = VirtualClock(start=5.0)
    clock.advance_to(1.0)
    assert clock.now() == 5.0
    with pytest.raises(ValueError):
        clock.advance(-1)
    fired: list[float] = []
    clock.call_at(2.0, lambda: fired.append(clock.now()))  # already past: next advance runs it
    clock.run_due()
    assert fired == [5.0]


def test_call_every_on_virtual_clock() -> None:
    clock = VirtualClock()
    ticks: list[float] = []
    timer = call_every(clock, 1.0, lambda: ticks.append(clock.now()))
    clock.advance(3.5)
    assert ticks == [1.0, 2.0, 3.0]
    timer.cancel()
    clock.advance(5)
    assert ticks == [1.0, 2.0, 3.0]


def test_real_clock_timer() -> None:
    clock = RealClock()
    done = threading.Event()
    clock.call_later(0.01, done.set)
    assert done.wait(2.0)
    cancelled = threading.Event()
    clock.call_later(0.05, cancelled.set).cancel()
    assert not cancelled.wait(0.1)
    assert abs(clock.now() - __import__("time").time()) < 1.0


def test_real_clock_sleep_treats_a_negative_delay_as_zero() -> None:
    clock = RealClock()
    clock.sleep(-5.0)  # a deadline already past: no wait, no error (time.sleep would raise)
    clock.sleep(0.0)
    assert not hasattr(VirtualClock(), "sleep")  # deterministic mode cannot block a thread
