"""Custom kinds on the Kubernetes backend: served by the fake, watched once a lister asks."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator

import pytest

from schedframe.backends import WatchEvent
from schedframe.backends.kubernetes import KubernetesBackend
from schedframe.objects import CustomObject, declare_custom_kind
from schedframe.objects._custom import undeclare_custom_kind
from schedframe.testing.fakeapi import FakeAPIServer

MakeBackend = Callable[..., KubernetesBackend]


@pytest.fixture(autouse=True)
def _quota_kind() -> Iterator[None]:
    declare_custom_kind("example.com/v1", "Quota", plural="quotas")
    yield
    undeclare_custom_kind("Quota")


def quota(name: str, hard: int) -> dict[str, object]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Quota",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"hard": hard},
    }


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_fake_serves_a_declared_custom_resource(fake: FakeAPIServer) -> None:
    fake.create(quota("q1", 3))
    got = fake.get("Quota", "q1")
    assert got is not None and got["spec"] == {"hard": 3}
    assert [o["metadata"]["name"] for o in fake.list("Quota")] == ["q1"]


def test_a_started_backend_watches_a_custom_kind_when_asked(
    fake: FakeAPIServer, make_backend: MakeBackend
) -> None:
    fake.create(quota("q1", 3))
    backend = make_backend()
    backend.start(timeout=10)
    events: list[WatchEvent] = []
    backend.subscribe(events.append)
    assert "Quota" not in backend.reflectors
    backend.watch_kind("Quota")  # lists before it returns
    q1 = backend.get("Quota", "q1")
    assert isinstance(q1, CustomObject) and q1.spec["hard"] == 3
    assert any(isinstance(e.obj, CustomObject) for e in events)
    fake.create(quota("q2", 5))
    wait_until(lambda: backend.get("Quota", "q2") is not None)
    fake.delete("Quota", "q1")
    wait_until(lambda: backend.get("Quota", "q1") is None)
    assert [e.type for e in events if isinstance(e.obj, CustomObject)] == [
        "ADDED",
        "ADDED",
        "DELETED",
    ]
    backend.watch_kind("Quota")  # idempotent
    assert sum(1 for k in backend.reflectors if k == "Quota") == 1


def test_an_undeclared_kind_is_logged_once(
    make_backend: MakeBackend, caplog: pytest.LogCaptureFixture
) -> None:
    backend = make_backend()
    with caplog.at_level(logging.ERROR, logger="schedframe.backends.kubernetes"):
        backend.watch_kind("Mystery")
        backend.watch_kind("Mystery")
    lines = [r.getMessage() for r in caplog.records if "Mystery" in r.getMessage()]
    assert len(lines) == 1 and "neither watched nor declared" in lines[0]
    assert "Mystery" not in backend.reflectors
