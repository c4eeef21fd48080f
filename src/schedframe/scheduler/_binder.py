"""The binding threads of real mode: a pool of long-lived threads that takes over from a
blocked one.

Upstream runs each binding cycle on a goroutine of its own. A Python thread per binding
cycle costs far more than a goroutine: creating and starting it (the starter waits until the
new thread runs) and its exit, each a hand-over of the GIL, several times per pod. Here a few
long-lived threads run the binding tasks, and a thread that finishes one takes the next
queued one without sleeping, so a burst of bindings costs one wake-up rather than one
thread per pod. A submitter that wakes a thread waits until that thread has taken the task
(as ``Thread.start`` waits for the new thread): the binding then runs at once, between the
submitter's scheduling cycles, instead of waiting for the GIL and running in the middle of
the next cycle, which costs the scheduling thread more (measured: the 15,000-node
anti-affinity shape's real mode went from 1.2x deterministic mode's CPU per pod to 1.4-1.7x
without the hand-over, 1.1x with it).

What a thread per cycle guaranteed still holds: a task never waits long behind one that
blocks (a PreBind waiting on a slow volume, a Bind on a slow API server). A queued task is
taken at once when no thread is running a task it started less than :data:`TAKEOVER_S` ago
(a thread that will soon come back for more); otherwise one idle thread watches the queue
and takes its head once the head has waited that long, and so on, a new thread started when
none is idle. How many tasks may run at once is the scheduler's business (its back-pressure
on the binding slots); the pool never refuses or delays a task beyond that watch.

A scheduling loop that starts binding cycles back to back may also *hold* them
(:meth:`BindingPool.hold`) and hand them over together (:meth:`BindingPool.flush`): one
wake-up then serves the whole batch instead of one per pod, a GIL hand-over each way per pod
saved. Holding is the loop's promise to flush soon; :class:`~schedframe.scheduler.Scheduler`
flushes after :data:`HOLD_MAX` held tasks, when the oldest has been held :data:`HOLD_S`, before
it waits for a pod or a binding slot, and when it stops (measured, real mode's CPU per pod over
deterministic mode's: SchedulingBasic/5000Nodes 1.23x before, 1.06x after;
SchedulingWithMixedChurn/1000Nodes 1.14x and 1.02x; see docs/explanation/performance.md).
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger("schedframe.scheduler")

#: A queued binding task waits at most about this long (seconds) behind threads busy with
#: tasks they started earlier before an idle thread takes it (a blocked PreBind or Bind
#: holds up no other binding for longer).
TAKEOVER_S = 0.01
#: An idle thread with nothing queued exits after this long (seconds).
IDLE_EXIT_S = 30.0
#: The longest a submitter waits for the thread it woke to take its task (seconds).
HANDOVER_S = 0.05
#: A scheduling loop holding binding tasks flushes them once it holds this many.
HOLD_MAX = 8
#: ... or once the oldest has been held this long (seconds), at the start of its next cycle.
HOLD_S = 0.005


class _Sleeper:
    """An idle thread's wake-up: a lock it blocks on, released by whoever wakes it."""

    __slots__ = ("lock", "woken")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lock.acquire()
        self.woken = False


class BindingPool:
    """Runs submitted tasks on long-lived daemon threads named ``name``.

    Args:
        run: runs one task (catches and logs what it raises).
        name: the threads' name.
        takeover: see :data:`TAKEOVER_S`.
        idle_exit: see :data:`IDLE_EXIT_S`.
        handover: see :data:`HANDOVER_S`.
    """

    def __init__(
        self,
        run: Callable[[Callable[[], None]], None],
        *,
        name: str,
        takeover: float = TAKEOVER_S,
        idle_exit: float = IDLE_EXIT_S,
        handover: float = HANDOVER_S,
    ) -> None:
        self._run = run
        self._name = name
        self._takeover = takeover
        self._idle_exit = idle_exit
        self._handover_s = handover
        self._lock = threading.Lock()
        #: Notified when a woken thread has looked at the queue (a submitter waits for it).
        self._handover = threading.Condition(self._lock)
        #: Queued tasks with the monotonic time each was queued.
        self._queue: collections.deque[tuple[float, Callable[[], None]]] = collections.deque()
        #: Idle threads, the latest last (woken first: the others may idle out).
        self._idle: list[_Sleeper] = []
        #: Idle threads woken, and threads started, that have not looked at the queue yet.
        self._pending = 0
        #: The idle thread that watches the queue's head, if any (it waits with a timeout).
        self._watcher: _Sleeper | None = None
        #: When each thread running a task started it (by thread ident).
        self._started: dict[int, float] = {}
        self._threads = 0
        self._closed = False
        #: Tasks held back (:meth:`hold`) with the monotonic time each was held.
        self._held: list[tuple[float, Callable[[], None]]] = []

    @property
    def threads(self) -> int:
        """Threads alive in the pool."""
        with self._lock:
            return self._threads

    @property
    def running(self) -> int:
        """Threads running a task."""
        with self._lock:
            return len(self._started)

    @property
    def queued(self) -> int:
        """Tasks waiting for a thread (held ones included)."""
        with self._lock:
            return len(self._queue) + len(self._held)

    @property
    def held(self) -> int:
        """Tasks held back until :meth:`flush`."""
        return len(self._held)

    def held_since(self) -> float | None:
        """When the oldest held task was held (``time.monotonic``), ``None`` if none is."""
        held = self._held
        return held[0][0] if held else None

    def submit(self, task: Callable[[], None]) -> None:
        """Queue ``task``, after any held tasks; a thread runs them soon (see the module
        doc)."""
        with self._lock:
            batch = self._held
            self._held = []
            batch.append((time.monotonic(), task))
            inline = self._enqueue(batch)
        self._run_inline(inline)

    def hold(self, task: Callable[[], None]) -> int:
        """Hold ``task`` back until :meth:`flush` (or the next :meth:`submit`); returns how
        many tasks are held. The caller must flush soon: nothing else runs a held task."""
        with self._lock:
            self._held.append((time.monotonic(), task))
            return len(self._held)

    def flush(self) -> None:
        """Queue the held tasks, in the order they were held, waking one thread for all."""
        if not self._held:
            return
        with self._lock:
            batch = self._held
            if not batch:
                return
            self._held = []
            inline = self._enqueue(batch)
        self._run_inline(inline)

    def close(self) -> None:
        """Queue any held tasks, and let the threads exit once the queue is empty; a later
        task still runs (on a thread that exits after it)."""
        self.flush()
        with self._lock:
            self._closed = True
            while self._idle:
                self._notify(self._idle.pop())

    def _run_inline(self, tasks: list[Callable[[], None]]) -> None:
        if not tasks:
            return
        log.warning("cannot start a binding thread; running %d binding task(s) inline", len(tasks))
        for task in tasks:
            self._run(task)

    # -- internals (self._lock held) ---------------------------------------------------------

    def _enqueue(self, batch: list[tuple[float, Callable[[], None]]]) -> list[Callable[[], None]]:
        """Queue ``batch`` and see that a thread comes for it; the tasks to run inline (on the
        caller's thread) when no thread can be started."""
        queue = self._queue
        queue.extend(batch)
        if self._pending:
            return []  # a thread is on its way to the queue
        if self._watcher is not None and self._fresh(time.monotonic()):
            return []  # a running thread will come back for them, and the watch stands by
        if self._wake():
            # Hand over: wait until the woken thread has taken the first task, so that the
            # batch runs now, between the caller's cycles (the thread holds the GIL until it
            # is done), rather than in the middle of the next one, which costs the caller more.
            self._handover.wait_for(lambda: not self._pending, self._handover_s)
            return []
        for _ in batch:
            queue.pop()
        return [task for _, task in batch]

    def _fresh(self, now: float) -> bool:
        """Whether some thread runs a task it started less than ``takeover`` ago."""
        started = self._started
        return bool(started) and now - max(started.values()) < self._takeover

    def _notify(self, sleeper: _Sleeper) -> None:
        if sleeper is self._watcher:
            self._watcher = None
        sleeper.woken = True
        self._pending += 1
        sleeper.lock.release()

    def _wake(self) -> bool:
        """Wake an idle thread, or start one; ``False`` if no thread can be started."""
        if self._idle:
            self._notify(self._idle.pop())
            return True
        thread = threading.Thread(target=self._work, name=self._name, daemon=True)
        self._pending += 1
        self._threads += 1
        try:
            thread.start()
        except RuntimeError:  # no thread to be had (interpreter shutdown)
            self._pending -= 1
            self._threads -= 1
            return False
        return True

    def _take(self, me: int, ran: bool) -> tuple[Callable[[], None] | None, float | None]:
        """The head task if this thread should run it now, else ``(None, deadline)`` when
        this thread is to watch the queue until ``deadline``, or ``(None, None)``.

        A thread that has just run a task takes the head in any case (it is awake anyway); a
        thread woken for the queue leaves a young head to a thread that will soon come back
        for it, and watches it."""
        queue = self._queue
        if not queue:
            return None, None
        now = time.monotonic()
        queued_at = queue[0][0]
        if not ran and now - queued_at < self._takeover and self._fresh(now):
            return None, (queued_at + self._takeover if self._watcher is None else None)
        _, task = queue.popleft()
        self._started[me] = now
        if queue and not self._pending and self._watcher is None:
            self._wake()  # someone keeps an eye on what is left (if none starts: this thread)
        return task, None

    def _sleep(self, timeout: float | None, watch: bool) -> bool:
        """Wait as an idle thread (the lock is released meanwhile); ``True`` if woken."""
        sleeper = _Sleeper()
        self._idle.append(sleeper)
        if watch:
            self._watcher = sleeper
        self._lock.release()
        try:
            got = sleeper.lock.acquire(timeout=-1 if timeout is None else timeout)
        finally:
            self._lock.acquire()
        if sleeper is self._watcher:
            self._watcher = None
        if sleeper.woken:
            self._pending -= 1
            self._handover.notify_all()
            if not got:  # woken after the timeout: its release is consumed here
                sleeper.lock.acquire()
            return True
        self._idle.remove(sleeper)
        return False

    def _work(self) -> None:
        me = threading.get_ident()
        with self._lock:
            self._pending -= 1  # started for the queue: this thread looks at it now
            self._handover.notify_all()
            ran = False
            while True:
                task, deadline = self._take(me, ran)
                if task is not None:
                    self._lock.release()
                    try:
                        self._run(task)
                    finally:
                        self._lock.acquire()
                        del self._started[me]
                    ran = True
                    continue
                ran = False
                if deadline is not None:
                    self._sleep(max(deadline - time.monotonic(), 0.0005), watch=True)
                    continue
                if self._closed and not self._queue:
                    break
                if not self._sleep(self._idle_exit, watch=False) and not self._queue:
                    break  # idle too long
            self._threads -= 1
