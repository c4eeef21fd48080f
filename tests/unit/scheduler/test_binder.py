"""The real-mode binding pool: every task runs once, a blocked task holds up no other for
long, a burst runs on the thread already running, and closing lets the threads go."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe.scheduler._binder import BindingPool

#: Generous: the machine is shared; nothing here measures speed.
WAIT = 30.0


def _run(task: Callable[[], None]) -> None:
    task()


def _until(predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


class _Ran:
    """What tasks ran, in order: ``(item, thread ident)`` each."""

    def __init__(self) -> None:
        self.entries: list[tuple[object, int]] = []
        self._lock = threading.Lock()

    def task(self, item: object) -> Callable[[], None]:
        """A task that records ``item``."""

        def run() -> None:
            with self._lock:
                self.entries.append((item, threading.get_ident()))

        return run

    @property
    def items(self) -> list[object]:
        return [item for item, _ in self.entries]

    @property
    def threads(self) -> set[int]:
        return {thread for _, thread in self.entries}


def test_a_blocked_task_holds_up_no_other() -> None:
    pool = BindingPool(_run, name="test-binding", takeover=0.01)
    release = threading.Event()
    ran = _Ran()
    try:
        pool.submit(lambda: None if release.wait(WAIT) else None)
        for i in range(50):
            pool.submit(ran.task(i))
        assert _until(lambda: len(ran.entries) == 50)
        assert not release.is_set()
        assert len(ran.items) == 50 and set(ran.items) == set(range(50))
    finally:
        release.set()
        pool.close()


def test_several_blocked_tasks_each_get_a_thread() -> None:
    pool = BindingPool(_run, name="test-binding", takeover=0.01)
    release = threading.Event()
    entered = threading.Semaphore(0)

    def blocked() -> None:
        entered.release()
        release.wait(WAIT)

    try:
        for _ in range(16):
            pool.submit(blocked)
        for _ in range(16):
            assert entered.acquire(timeout=WAIT)
        assert pool.threads >= 16
    finally:
        release.set()
        pool.close()


def test_a_burst_queued_behind_a_running_task_runs_on_that_thread() -> None:
    # A takeover far longer than the test: the watch never steps in, so the burst waits
    # for the thread running the gate task and runs there, one task after another.
    pool = BindingPool(_run, name="test-binding", takeover=3600.0)
    gate = threading.Event()
    started = threading.Event()
    ran = _Ran()

    def gate_task() -> None:
        ran.task("gate")()
        started.set()
        gate.wait(WAIT)

    try:
        pool.submit(gate_task)
        assert started.wait(WAIT)
        for i in range(100):
            pool.submit(ran.task(i))
        gate.set()
        assert _until(lambda: len(ran.entries) == 101)
        assert len(ran.threads) == 1
    finally:
        gate.set()
        pool.close()


def test_a_task_submitted_to_an_idle_pool_is_taken_before_submit_returns() -> None:
    # The submitter waits for the thread it woke, so the binding runs now, between the
    # caller's scheduling cycles, not in the middle of the next one.
    pool = BindingPool(_run, name="test-binding", handover=WAIT)
    first = threading.Event()
    try:
        pool.submit(first.set)  # starts the first thread
        assert first.wait(WAIT)
        assert _until(lambda: pool.queued == 0)
        for _ in range(20):
            done = threading.Event()
            assert _until(lambda: pool.running == 0)
            pool.submit(done.set)
            assert pool.queued == 0
            assert done.wait(WAIT)
    finally:
        pool.close()


def test_closing_lets_the_threads_exit_and_later_tasks_still_run() -> None:
    pool = BindingPool(_run, name="test-binding")
    ran = threading.Event()
    pool.submit(lambda: None)
    assert _until(lambda: pool.threads >= 1)
    pool.close()
    assert _until(lambda: pool.threads == 0)
    pool.submit(ran.set)
    assert ran.wait(WAIT)
    assert _until(lambda: pool.threads == 0)


def test_an_idle_thread_exits_after_idle_exit() -> None:
    pool = BindingPool(_run, name="test-binding", idle_exit=0.05)
    done = threading.Event()
    pool.submit(done.set)
    assert done.wait(WAIT)
    assert _until(lambda: pool.threads == 0)
    again = threading.Event()
    pool.submit(again.set)  # a new thread is started for it
    assert again.wait(WAIT)
    pool.close()


@settings(max_examples=25, deadline=None)
@given(
    plan=st.lists(
        st.tuples(st.sampled_from(["quick", "block", "nested", "held"]), st.booleans()),
        min_size=1,
        max_size=30,
    ),
    takeover=st.sampled_from([0.0, 0.001, 0.01]),
)
def test_every_task_runs_exactly_once(plan: list[tuple[str, bool]], takeover: float) -> None:
    """Whatever mix of quick, blocking and task-submitting tasks, submitted from the test
    thread with or without pauses, or held back and handed over with the next submit or a
    flush, each runs once, and the blocked ones do not stop the rest."""
    pool = BindingPool(_run, name="test-binding", takeover=takeover)
    release = threading.Event()
    counts: dict[int, int] = {}
    lock = threading.Lock()

    def count(key: int) -> None:
        with lock:
            counts[key] = counts.get(key, 0) + 1

    def make(i: int, kind: str) -> Callable[[], None]:
        def task() -> None:
            count(i)
            if kind == "block":
                release.wait(WAIT)
            elif kind == "nested":
                pool.submit(lambda: count(1000 + i))  # a task queueing another (Permit resolved)

        return task

    expected: set[int] = set()
    try:
        for i, (kind, pause) in enumerate(plan):
            expected.add(i)
            if kind == "nested":
                expected.add(1000 + i)
            if kind == "held":
                pool.hold(make(i, kind))
            else:
                pool.submit(make(i, kind))
            if pause:
                time.sleep(0.002)
        pool.flush()
        assert _until(lambda: set(counts) == expected)
    finally:
        release.set()
        pool.close()
    assert _until(lambda: pool.threads == 0)
    assert set(counts) == expected
    assert set(counts.values()) == {1}


def test_held_tasks_wait_for_flush_then_run_in_order_on_one_thread() -> None:
    pool = BindingPool(_run, name="test-binding", takeover=3600.0, handover=WAIT)
    ran = _Ran()
    try:
        assert pool.held_since() is None
        before = time.monotonic()
        for i in range(5):
            assert pool.hold(ran.task(i)) == i + 1
        since = pool.held_since()
        assert since is not None and since >= before
        time.sleep(0.05)
        assert ran.entries == []  # nothing runs a held task but a flush
        assert (pool.held, pool.queued, pool.threads) == (5, 5, 0)
        pool.flush()
        assert pool.held == 0 and pool.held_since() is None
        assert _until(lambda: len(ran.entries) == 5)
        assert ran.items == [0, 1, 2, 3, 4]
        assert len(ran.threads) == 1  # one wake-up served the batch
        pool.flush()  # nothing held: nothing happens
        assert pool.queued == 0
    finally:
        pool.close()


def test_a_submit_hands_over_the_held_tasks_first() -> None:
    pool = BindingPool(_run, name="test-binding", takeover=3600.0)
    ran = _Ran()
    try:
        pool.hold(ran.task("held-1"))
        pool.hold(ran.task("held-2"))
        pool.submit(ran.task("submitted"))  # another thread's task: not held back
        assert pool.held == 0
        assert _until(lambda: len(ran.entries) == 3)
        assert ran.items == ["held-1", "held-2", "submitted"]
    finally:
        pool.close()


def test_closing_hands_over_the_held_tasks() -> None:
    pool = BindingPool(_run, name="test-binding")
    done = threading.Event()
    pool.hold(done.set)
    pool.close()
    assert done.wait(WAIT)
    assert _until(lambda: pool.threads == 0)


def test_a_blocked_task_in_a_flushed_batch_holds_up_no_other() -> None:
    # The batch's first task blocks its thread: the watch takes the rest over.
    pool = BindingPool(_run, name="test-binding", takeover=0.01)
    release = threading.Event()
    ran = _Ran()
    try:
        pool.hold(lambda: None if release.wait(WAIT) else None)
        for i in range(7):
            pool.hold(ran.task(i))
        pool.flush()
        assert _until(lambda: len(ran.entries) == 7)
        assert not release.is_set()
        assert ran.items == list(range(7))
    finally:
        release.set()
        pool.close()


def test_a_pool_that_cannot_start_a_thread_runs_the_held_batch_inline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool = BindingPool(_run, name="test-binding")
    ran: list[int] = []

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't create new thread at interpreter shutdown")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    pool.hold(lambda: ran.append(1))
    pool.hold(lambda: ran.append(2))
    pool.flush()  # on the caller's thread, in order, nothing lost
    assert ran == [1, 2]
    assert (pool.held, pool.queued, pool.threads) == (0, 0, 0)
