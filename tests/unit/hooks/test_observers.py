"""Observer isolation: each implementation is called on its own."""

from __future__ import annotations

import logging

import pytest

from schedframe import hooks
from schedframe.hooks import Observers
from schedframe.objects import Pod
from schedframe.testing.builders import make_pod


class _Raising:
    @hooks.impl
    def schedframe_scheduling_error(self, pod: Pod, profile: str, message: str) -> None:
        raise RuntimeError("observer bug")


class _Recording:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hooks.impl
    def schedframe_scheduling_error(self, pod: Pod, message: str) -> None:
        self.seen.append(f"{pod.name}: {message}")


def test_a_raising_observer_is_logged_and_counted_and_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pm = hooks.plugin_manager(load_entry_points=False)
    first, second = _Recording(), _Recording()
    pm.register(first, name="first")
    pm.register(_Raising(), name="raising")
    pm.register(second, name="second")
    observers = Observers(pm)
    with caplog.at_level(logging.ERROR, logger="schedframe.hooks"):
        observers.scheduling_error(
            pod=make_pod("p").obj(), profile="default-scheduler", message="boom"
        )
        observers.scheduling_error(
            pod=make_pod("q").obj(), profile="default-scheduler", message="bang"
        )
    assert first.seen == ["p: boom", "q: bang"]
    assert second.seen == ["p: boom", "q: bang"]
    assert observers.failures == {("raising", "schedframe_scheduling_error"): 2}
    assert [r.getMessage() for r in caplog.records] == [
        "observer raising failed in hook schedframe_scheduling_error"
    ] * 2


def test_pluggy_alone_would_stop_at_the_raising_observer() -> None:
    # Why Observers exists: a plain hook call never reaches the observers after the bad one.
    pm = hooks.plugin_manager(load_entry_points=False)
    first = _Recording()
    pm.register(first, name="first")
    pm.register(_Raising(), name="raising")
    with pytest.raises(RuntimeError):
        pm.hook.schedframe_scheduling_error(pod=make_pod("p").obj(), profile="x", message="m")
    assert first.seen == []


def test_no_manager_means_no_call() -> None:
    Observers(None).scheduling_error(pod=make_pod("p").obj(), profile="x", message="m")
