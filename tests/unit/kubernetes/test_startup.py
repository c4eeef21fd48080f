"""``schedframe run`` starts as kube-scheduler's ``Run``: every informer lists at once, the
scheduler waits for all of them to be synced (their lists delivered), the Lease is taken
after that, and only then does a scheduling cycle run."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from schedframe.backends._protocols import KINDS
from schedframe.backends.kubernetes import KubernetesBackend, LeaderElector, Reflector
from schedframe.backends.kubernetes._cli import run
from schedframe.testing.fakeapi import FakeAPIServer

from ._support import node, pod

CONFIG = (
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n"
    "leaderElection:\n"
    "  leaderElect: true\n"
    "  resourceName: schedframe\n"
    "profiles:\n"
    "  - schedulerName: schedframe\n"
)


def test_lists_at_once_then_syncs_then_elects_then_schedules(
    fake: FakeAPIServer, kubeconfig: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.create(node("n"))
    fake.create(pod("p", scheduler="schedframe"))
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    log: list[tuple[str, str]] = []
    lock = threading.Lock()
    # The first list of every kind waits here until all of them are in flight: listed one
    # after the other, the barrier would break instead.
    barrier = threading.Barrier(len(KINDS), timeout=30)
    first_lists = iter(range(len(KINDS)))

    def note(event: str, what: str = "") -> None:
        with lock:
            log.append((event, what))

    fetch_list, apply_list = Reflector.fetch_list, Reflector.apply_list
    acquire, bind = LeaderElector.acquire, KubernetesBackend.bind

    def fetching(self: Reflector) -> Any:
        with lock:
            first = next(first_lists, None) is not None
        if first:
            barrier.wait()
        note("listed", self.kind)
        return fetch_list(self)

    def applying(self: Reflector, *args: Any) -> None:
        apply_list(self, *args)
        note("applied", self.kind)

    def acquiring(self: LeaderElector, *args: Any, **kwargs: Any) -> bool:
        note("acquire")
        return acquire(self, *args, **kwargs)

    def binding(self: KubernetesBackend, pod: Any, node_name: str) -> None:
        note("bind", pod.metadata.name)
        bind(self, pod, node_name)

    monkeypatch.setattr(Reflector, "fetch_list", fetching)
    monkeypatch.setattr(Reflector, "apply_list", applying)
    monkeypatch.setattr(LeaderElector, "acquire", acquiring)
    monkeypatch.setattr(KubernetesBackend, "bind", binding)
    stop = threading.Event()
    errors: list[BaseException] = []

    def target() -> None:
        try:
            run(kubeconfig=str(kubeconfig), config_file=str(config), port=0, stop=stop)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not fake.bindings and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        stop.set()
        thread.join(30)
    assert errors == [] and not thread.is_alive()
    assert not barrier.broken
    assert [(b.name, b.node) for b in fake.bindings] == [("p", "n")]
    events = [event for event, _ in log]
    listed = [what for event, what in log if event == "listed"]
    applied = [what for event, what in log if event == "applied"]
    assert sorted(listed[: len(KINDS)]) == sorted(KINDS)
    # Applied in the replay order subscribers rely on (pods last) ...
    assert applied[: len(KINDS)] == [*(k for k in KINDS if k != "Pod"), "Pod"]
    # ... every one of them before the election, which comes before the first binding.
    first_acquire = events.index("acquire")
    applied_at = [i for i, event in enumerate(events) if event == "applied"]
    assert applied_at[len(KINDS) - 1] < first_acquire < events.index("bind")
