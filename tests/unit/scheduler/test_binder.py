"""The real-mode binding pool: every task runs once, a blocked task holds up no other for
long, a burst runs on the thread already running, and closing lets the threads go."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

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


def test_a_blocked_task_holds_up_no_other() -> None:
    pool = BindingPool(_run, name="test-binding", takeover=0.01)
    release = threading.Event()
    done: list[int] = []
    lock = threading.Lock()

    def record(i: int) -> Callable[[], None]:
        def task() -> None:
            with lock:
                done.append(i)

        return task

    try:
        pool.submit(lambda: None if release.wait(WAIT) else None)
        for i in range(50):
            pool.submit(record(i))
        assert _until(lambda: len(done) == 50)
        assert not release.is_set()
        assert sorted(done) == list(range(50))
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
    threads: list[int] = []
    lock = threading.Lock()

    def task() -> None:
        with lock:
            threads.append(threading.get_ident())

    def gate_task() -> None:
        task()
        started.set()
        gate.wait(WAIT)

    try:
        pool.submit(gate_task)
        assert started.wait(WAIT)
        for _ in range(100):
            pool.submit(task)
        gate.set()
        assert _until(lambda: len(threads) == 101)
        assert set(threads) == {threads[0]}
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
        st.tuples(st.sampled_from(["quick", "block", "nested"]), st.booleans()),
        min_size=1,
        max_size=30,
    ),
    takeover=st.sampled_from([0.0, 0.001, 0.01]),
)
def test_every_task_runs_exactly_once(plan: list[tuple[str, bool]], takeover: float) -> None:
    """Whatever mix of quick, blocking and task-submitting tasks, submitted from the test
    thread with or without pauses, each runs once, and the blocked ones do not stop the rest."""
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
            pool.submit(make(i, kind))
            if pause:
                time.sleep(0.002)
        assert _until(lambda: set(counts) == expected)
    finally:
        release.set()
        pool.close()
    assert _until(lambda: pool.threads == 0)
    assert set(counts) == expected
    assert set(counts.values()) == {1}
