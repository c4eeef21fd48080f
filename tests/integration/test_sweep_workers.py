"""Sweep worker processes that die: a killed worker loses no case; workers that cannot start
stop the sweep with one clear error."""

from __future__ import annotations

import sys
from pathlib import Path

from schedframe.simulation import sweep

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "sweep"


def test_a_worker_killed_mid_sweep_loses_no_case() -> None:
    import contextlib
    import multiprocessing
    import os
    import signal
    import threading
    import time

    spec = FIXTURES / "hundred.yaml"
    reference = sweep(spec, jobs=2).to_json()
    got: list[str] = []
    runner = threading.Thread(target=lambda: got.append(sweep(spec, jobs=2).to_json()))
    runner.start()
    deadline = time.monotonic() + 30
    while not multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.5)  # the workers are starting or running cases
    for child in multiprocessing.active_children()[:1]:  # none: the sweep is over already
        assert child.pid is not None
        with contextlib.suppress(ProcessLookupError):  # it may have just exited
            os.kill(child.pid, signal.SIGKILL)
    runner.join(60)
    # The pool broke; the cases it took down ran again: the same results.
    assert got == [reference]


def test_workers_that_cannot_start_stop_the_sweep_with_one_clear_error() -> None:
    import subprocess

    # A script read from standard input: spawned workers cannot import its main module.
    script = (
        "from schedframe.simulation import SweepError, sweep\n"
        "try:\n"
        f"    sweep({str(FIXTURES / 'failing.yaml')!r}, jobs=2)\n"
        "except SweepError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-"], input=script, capture_output=True, text=True, timeout=120
    )
    assert done.stdout == (
        "the worker processes died before running any case: a script that calls sweep() must "
        'do so under `if __name__ == "__main__":` (spawned workers import its main module)\n'
    )
