"""Time, injected: a real clock for production and a virtual one for deterministic runs.

Every component that waits (the queue's backoff, the periodic flushes, Permit timeouts) asks
the scheduler's clock instead of ``time``. :class:`RealClock` uses the wall clock and daemon
timer threads; :class:`VirtualClock` keeps an ordered timer list that only moves when told to
(:meth:`VirtualClock.advance`), so a simulation runs as fast as the CPU allows and always the
same way.
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Cancellable", "Clock", "RealClock", "VirtualClock", "call_every"]


class Cancellable(Protocol):
    """A scheduled call that can be cancelled."""

    def cancel(self) -> None:
        """Prevent the call if it has not happened yet."""
        ...


class Clock(Protocol):
    """The scheduler's time source (a structural superset of ``framework.Clock``)."""

    def now(self) -> float:
        """Seconds since the epoch (virtual clocks start where they are told)."""
        ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancellable:
        """Run ``callback`` once, ``delay`` seconds from now."""
        ...


class RealClock:
    """Wall-clock time; timers run on daemon threads (:class:`threading.Timer`)."""

    def now(self) -> float:
        """``time.time()``."""
        return time.time()

    def sleep(self, seconds: float) -> None:
        """Block the calling thread for ``seconds`` (DynamicResources' PreBind waits for
        device binding conditions this way, on its binding thread)."""
        time.sleep(max(seconds, 0.0))

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancellable:
        """Run ``callback`` on a daemon timer thread after ``delay`` seconds (NaN raises
        :class:`ValueError` here rather than kill the timer thread)."""
        if math.isnan(delay):
            raise ValueError("a timer's delay cannot be NaN")
        timer = threading.Timer(max(delay, 0.0), callback)
        timer.daemon = True
        timer.start()
        return timer

    def __repr__(self) -> str:
        return "RealClock()"


class _VirtualTimer:
    __slots__ = ("callback", "cancelled", "seq", "when")

    def __init__(self, when: float, callback: Callable[[], None], seq: int) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False
        self.seq = seq

    def cancel(self) -> None:
        self.cancelled = True


class _VirtualPeriodic:
    """A repeating timer of a :class:`VirtualClock`: due every ``period`` on a fixed grid."""

    __slots__ = ("cancelled", "due", "fn", "period", "seq", "when")

    def __init__(
        self,
        when: float,
        seq: int,
        period: float,
        fn: Callable[[], None],
        due: Callable[[], float | None] | None,
    ) -> None:
        self.when = when  # the next grid point
        self.seq = seq
        self.period = period
        self.fn = fn
        self.due = due
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def next_fire(self, now: float) -> float | None:
        """When this timer next needs to fire, or ``None`` if it has nothing to do for now.

        Without ``due`` that is the next grid point. With it, the first grid point at or
        after both ``due()`` and ``now``: grid points where ``fn`` could change nothing are
        jumped over, so hours of virtual idleness cost one step, not one step per period.
        """
        if self.due is None:
            return self.when
        need = self.due()
        if need is None:
            return None
        need = max(need, now)
        if need <= self.when:
            return self.when
        steps = math.ceil((need - self.when) / self.period)
        when = self.when + steps * self.period
        if not math.isfinite(when):
            return None  # beyond the representable future
        return when if when >= need else need  # rounding at huge times: off-grid, not early

    def fired(self, when: float) -> None:
        """Move the grid past ``when`` (strictly: time must move even where floats are coarse)."""
        nxt = when + self.period
        self.when = nxt if nxt > when else math.nextafter(when, math.inf)


class VirtualClock:
    """Time that moves only when told to; timers fire in ``(time, insertion)`` order.

    >>> clock = VirtualClock(start=100.0)
    >>> fired = []
    >>> _ = clock.call_later(5, lambda: fired.append(clock.now()))
    >>> clock.advance(10)
    >>> fired, clock.now()
    ([105.0], 110.0)

    A callback runs with :meth:`now` equal to its due time; timers it schedules that fall due
    before the end of the advance run in the same advance. Thread-safe: a binding thread may
    schedule timers while another thread advances.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._heap: list[tuple[float, int, _VirtualTimer]] = []
        self._periodic: list[_VirtualPeriodic] = []
        self._seq = itertools.count()
        self._lock = threading.RLock()

    def now(self) -> float:
        """The current virtual time in seconds."""
        return self._now

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancellable:
        """Run ``callback`` once the clock reaches ``now() + delay``.

        A NaN ``delay`` raises :class:`ValueError` here, in the caller, never later inside
        :meth:`advance`; a negative one means now.
        """
        if math.isnan(delay):
            raise ValueError("a timer's delay cannot be NaN")
        return self.call_at(self._now + max(delay, 0.0), callback)

    def call_at(self, when: float, callback: Callable[[], None]) -> Cancellable:
        """Run ``callback`` once the clock reaches ``when`` (at once on the next advance if past)."""
        if math.isnan(when):
            raise ValueError("a timer's due time cannot be NaN")
        with self._lock:
            timer = _VirtualTimer(when, callback, next(self._seq))
            heapq.heappush(self._heap, (when, timer.seq, timer))
        return timer

    def order_of(self, timer: Cancellable) -> int | None:
        """Where ``timer`` (one of this clock's) stands among timers due at the same time:
        the lower fires first. ``None`` for an object that is not a timer of a VirtualClock."""
        if isinstance(timer, _VirtualTimer | _VirtualPeriodic):
            return timer.seq
        return None

    def reorder(self, timers: list[Cancellable]) -> None:
        """Make ``timers`` (pending timers of this clock) fire in the order given when due at
        the same time, after the others already pending then (a fork's clock takes its
        original's order this way)."""
        with self._lock:
            for timer in timers:
                if isinstance(timer, _VirtualTimer | _VirtualPeriodic):
                    timer.seq = next(self._seq)
            self._heap = [(when, timer.seq, timer) for when, _, timer in self._heap]
            heapq.heapify(self._heap)

    def call_every(
        self,
        period: float,
        fn: Callable[[], None],
        *,
        due: Callable[[], float | None] | None = None,
    ) -> Cancellable:
        """Call ``fn`` every ``period`` seconds, first at ``now() + period``.

        ``due``, if given, says from when ``fn`` has work to do (``None``: nothing until some
        other event changes that); grid points before then are skipped, so a scheduler that
        flushes its backoff queue every second does not make a jump of a year of virtual time
        cost 31 million flushes. ``fn`` runs on the same grid either way.
        """
        if not (period > 0 and math.isfinite(period)):
            raise ValueError(f"a periodic timer needs a finite period > 0, not {period!r}")
        with self._lock:
            timer = _VirtualPeriodic(self._now + period, next(self._seq), period, fn, due)
            self._periodic.append(timer)
        return timer

    def _next(self) -> tuple[float, int, _VirtualTimer | _VirtualPeriodic] | None:
        """The next timer to fire: ``(when, seq, timer)``; ``None`` when none needs to."""
        with self._lock:
            while self._heap and self._heap[0][2].cancelled:
                heapq.heappop(self._heap)
            best: tuple[float, int, _VirtualTimer | _VirtualPeriodic] | None = (
                self._heap[0] if self._heap else None
            )
            self._periodic = [p for p in self._periodic if not p.cancelled]
            periodic = list(self._periodic)
            now = self._now
        for p in periodic:  # outside the lock: ``due`` reads the caller's state
            if best is not None and (p.when, p.seq) > best[:2]:
                continue  # it fires at its grid point or later: it cannot come first
            when = p.next_fire(now)
            if when is not None and (best is None or (when, p.seq) < best[:2]):
                best = (when, p.seq, p)
        return best

    def next_deadline(self) -> float | None:
        """When the earliest timer that has something to do falls due, or ``None``."""
        nxt = self._next()
        return nxt[0] if nxt is not None else None

    def pending(self) -> int:
        """How many timers are pending (cancelled ones excluded, periodic ones included)."""
        with self._lock:
            return sum(1 for _, _, t in self._heap if not t.cancelled) + sum(
                1 for p in self._periodic if not p.cancelled
            )

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``, running every timer that falls due on the way."""
        if seconds < 0:
            raise ValueError(f"cannot move a clock backwards (advance({seconds}))")
        self.advance_to(self._now + seconds)

    def advance_to(self, t: float) -> None:
        """Move time forward to ``t`` (no-op if already there), running due timers in order."""
        if math.isnan(t):
            raise ValueError("cannot move a clock to NaN")
        while True:
            nxt = self._next()
            if nxt is None or nxt[0] > t:
                break
            when, _, timer = nxt
            if isinstance(timer, _VirtualPeriodic):
                with self._lock:
                    if timer.cancelled:
                        continue
                    if when > self._now:
                        self._now = when
                    timer.fired(when)
                    timer.seq = next(self._seq)  # re-armed after this firing, as a new timer
                timer.fn()
                continue
            with self._lock:
                if not self._heap or self._heap[0][2] is not timer:
                    continue  # another thread got there first
                heapq.heappop(self._heap)
                if timer.cancelled:
                    continue
                timer.cancelled = True  # fires once
                if when > self._now:
                    self._now = when
            timer.callback()
        with self._lock:
            if t > self._now:
                self._now = t

    def run_due(self) -> None:
        """Run the timers already due at :meth:`now` (``call_later(0, ...)`` ones)."""
        self.advance_to(self._now)

    def __repr__(self) -> str:
        return f"VirtualClock(now={self._now!r}, pending={self.pending()})"


class _Periodic:
    """A repeating timer built on one-shot ``call_later`` (upstream ``wait.Until``)."""

    def __init__(self, clock: Clock, period: float, fn: Callable[[], None]) -> None:
        self._clock = clock
        self._period = period
        self._fn = fn
        self._lock = threading.Lock()
        self._stopped = False
        self._handle: Cancellable | None = None
        self._arm()

    def _arm(self) -> None:
        with self._lock:
            if not self._stopped:
                self._handle = self._clock.call_later(self._period, self._fire)

    def _fire(self) -> None:
        if self._stopped:
            return
        try:
            self._fn()
        finally:
            self._arm()

    def cancel(self) -> None:
        with self._lock:
            self._stopped = True
            if self._handle is not None:
                self._handle.cancel()
                self._handle = None


def call_every(
    clock: Clock,
    period: float,
    fn: Callable[[], None],
    *,
    due: Callable[[], float | None] | None = None,
) -> Cancellable:
    """Call ``fn`` every ``period`` seconds on ``clock`` until the result is cancelled.

    Exceptions raised by ``fn`` propagate to the clock's runner (a timer thread logs them);
    the timer is re-armed regardless. ``due`` (see :meth:`VirtualClock.call_every`) lets a
    virtual clock jump over the periods where ``fn`` has nothing to do; a real clock ignores it.
    """
    if isinstance(clock, VirtualClock):
        return clock.call_every(period, fn, due=due)
    return _Periodic(clock, period, fn)
