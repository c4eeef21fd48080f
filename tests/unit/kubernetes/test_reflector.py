"""The Reflector: list, watch, bookmarks, relist with a diff on 410 (in-stream and HTTP),
reconnection after dropped watches; checked against the fake API server."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from urllib.parse import parse_qs

import pytest

from schedframe.backends import WatchEvent
from schedframe.backends.kubernetes import POD_FIELD_SELECTOR, ApiTransport, Reflector
from schedframe.objects import Pod, pod_from_dict
from schedframe.testing.fakeapi import FakeAPIServer

from ._support import node, pod


class Recorder:
    def __init__(self) -> None:
        self.events: list[WatchEvent] = []
        self._cond = threading.Condition()

    def __call__(self, event: WatchEvent) -> None:
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def wait_for(
        self, predicate: Callable[[list[WatchEvent]], bool], timeout: float = 10.0
    ) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: predicate(self.events), timeout), self.summary()

    def summary(self) -> list[tuple[str, str]]:
        return [(e.type, getattr(e.obj, "name", "?")) for e in self.events]

    def clear(self) -> None:
        with self._cond:
            self.events.clear()


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def make_reflector(
    transport: ApiTransport, recorder: Recorder
) -> Iterator[Callable[..., Reflector]]:
    made: list[Reflector] = []

    def make(**kwargs: object) -> Reflector:
        reflector = Reflector(
            transport,
            kind="Pod",
            path="/api/v1/pods",
            decode=pod_from_dict,
            deliver=recorder,
            lock=threading.RLock(),
            field_selector=POD_FIELD_SELECTOR,
            backoff=(0.02, 0.2),
            **kwargs,  # type: ignore[arg-type]
        )
        made.append(reflector)
        return reflector

    yield make
    for reflector in made:
        reflector.stop()


def watch_queries(fake: FakeAPIServer) -> list[dict[str, list[str]]]:
    return [parse_qs(r.query) for r in fake.watch_requests if r.path == "/api/v1/pods"]


def names(events: list[WatchEvent]) -> list[tuple[str, str]]:
    return [(e.type, e.obj.name) for e in events if isinstance(e.obj, Pod)]


def test_first_list_uses_rv_zero_and_the_pod_field_selector(
    fake: FakeAPIServer, make_reflector: Callable[..., Reflector], recorder: Recorder
) -> None:
    fake.create(pod("b"))
    fake.create(pod("a", namespace="kube-system"))
    fake.create(pod("done"))
    fake.patch("Pod", "done", {"status": {"phase": "Failed"}}, subresource="status")
    reflector = make_reflector()
    reflector.list_and_replace()
    assert names(recorder.events) == [("ADDED", "b"), ("ADDED", "a")]  # default < kube-system
    assert reflector.has_synced
    assert reflector.last_sync_resource_version == str(fake.resource_version)
    listed = [r for r in fake.requests if r.path == "/api/v1/pods"]
    query = parse_qs(listed[0].query)
    assert query["resourceVersion"] == ["0"]
    assert query["fieldSelector"] == [POD_FIELD_SELECTOR]


def test_watch_delivers_changes_with_old_objects(
    fake: FakeAPIServer, make_reflector: Callable[..., Reflector], recorder: Recorder
) -> None:
    fake.create(pod("p1"))
    reflector = make_reflector()
    reflector.start()
    recorder.wait_for(lambda ev: len(ev) == 1)
    assert fake.wait_for_watches(1, "pods")
    fake.patch("Pod", "p1", {"metadata": {"labels": {"x": "1"}}})
    fake.create(pod("p2"))
    fake.delete("Pod", "p2")
    fake.patch("Pod", "p1", {"status": {"phase": "Succeeded"}}, subresource="status")
    recorder.wait_for(lambda ev: len(ev) == 5)
    assert names(recorder.events) == [
        ("ADDED", "p1"),
        ("MODIFIED", "p1"),
        ("ADDED", "p2"),
        ("DELETED", "p2"),
        ("DELETED", "p1"),  # finished pods leave the selector: DELETED
    ]
    modified = recorder.events[1]
    assert isinstance(modified.old, Pod) and modified.old.labels == {}
    assert isinstance(modified.obj, Pod) and modified.obj.labels == {"x": "1"}
    rvs = [e.resource_version for e in recorder.events[1:]]
    assert rvs == sorted(rvs)
    assert reflector.objects() == []
    assert reflector.last_sync_resource_version == str(fake.resource_version)


def test_bookmarks_advance_the_resource_version_the_next_watch_starts_from(
    fake: FakeAPIServer, make_reflector: Callable[..., Reflector], recorder: Recorder
) -> None:
    fake.create(pod("p1"))
    reflector = make_reflector()
    reflector.start()
    assert fake.wait_for_watches(1, "pods")
    listed_rv = int(reflector.last_sync_resource_version)
    for i in range(3):
        fake.create(node(f"n{i}"))  # revisions the pod watch never sees as events
    target = fake.resource_version
    deadline = time.monotonic() + 5
    while int(reflector.last_sync_resource_version or 0) < target and time.monotonic() < deadline:
        time.sleep(0.02)
    assert int(reflector.last_sync_resource_version) == target > listed_rv
    assert reflector.stats.bookmarks >= 1
    assert watch_queries(fake)[0]["allowWatchBookmarks"] == ["true"]
    fake.drop_watches("pods")
    deadline = time.monotonic() + 5
    while len(watch_queries(fake)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert watch_queries(fake)[1]["resourceVersion"] == [str(target)]
    assert reflector.stats.lists == 1  # reconnected without relisting


def test_dropped_watch_reconnects_without_losing_events(
    fake: FakeAPIServer, make_reflector: Callable[..., Reflector], recorder: Recorder
) -> None:
    reflector = make_reflector()
    reflector.start()
    assert fake.wait_for_watches(1, "pods")
    fake.fail_requests(503, times=3, watch=True)  # the reconnection takes a few tries
    fake.drop_watches()
    for i in range(5):
        fake.create(pod(f"p{i}"))
    recorder.wait_for(lambda ev: len(ev) == 5)
    assert names(recorder.events) == [("ADDED", f"p{i}") for i in range(5)]
    assert reflector.stats.lists == 1 and reflector.stats.errors >= 1


def _disconnect(fake: FakeAPIServer) -> None:
    fake.fail_requests(503, times=10_000, watch=True)
    fake.drop_watches("pods")
    deadline = time.monotonic() + 5
    while fake.open_watches("pods") and time.monotonic() < deadline:
        time.sleep(0.01)


@pytest.mark.parametrize("how", ["in-stream", "http"])
def test_410_relists_and_diffs(
    fake: FakeAPIServer,
    make_reflector: Callable[..., Reflector],
    recorder: Recorder,
    how: str,
) -> None:
    for name in ("gone", "changed", "same", "recreated"):
        fake.create(pod(name))
    reflector = make_reflector()
    reflector.start()
    recorder.wait_for(lambda ev: len(ev) == 4)
    assert fake.wait_for_watches(1, "pods")
    old_same = reflector.get("default", "same")
    old_recreated = reflector.get("default", "recreated")
    _disconnect(fake)
    recorder.clear()
    fake.delete("Pod", "gone")
    fake.patch("Pod", "changed", {"metadata": {"labels": {"v": "2"}}})
    fake.delete("Pod", "recreated")
    fake.create(pod("recreated"))
    fake.create(pod("new"))
    if how == "in-stream":
        fake.compact()
    else:
        fake.fail_watches_with_gone()
    fake.clear_failures() if how == "in-stream" else _clear_but_gone(fake)
    recorder.wait_for(lambda ev: len(ev) == 5)
    assert sorted(names(recorder.events)) == sorted(
        [
            ("DELETED", "gone"),
            ("MODIFIED", "changed"),
            ("DELETED", "recreated"),
            ("ADDED", "recreated"),
            ("ADDED", "new"),
        ]
    )
    assert names(recorder.events)[:1] == [("DELETED", "gone")]  # vanished objects first
    deleted = next(e for e in recorder.events if e.type == "DELETED" and e.obj.name == "gone")  # type: ignore[attr-defined]
    assert deleted.old is deleted.obj  # its last known state
    assert reflector.get("default", "same") is old_same  # unchanged: no event, same object
    assert reflector.get("default", "recreated") is not old_recreated
    assert reflector.stats.relists_after_expiry == 1
    assert reflector.stats.lists == 2
    relist = [r for r in fake.requests if r.path == "/api/v1/pods" and "watch" not in r.query][-1]
    assert parse_qs(relist.query)["resourceVersion"] != ["0"]


def _clear_but_gone(fake: FakeAPIServer) -> None:
    with fake._fail_lock:
        fake._failures.clear()


def test_list_errors_are_retried(
    fake: FakeAPIServer, make_reflector: Callable[..., Reflector], recorder: Recorder
) -> None:
    fake.create(pod("p1"))
    fake.fail_requests(500, times=2, method="GET", watch=False)
    reflector = make_reflector()
    reflector.start()
    recorder.wait_for(lambda ev: len(ev) == 1)
    assert reflector.stats.errors == 2 and reflector.stats.lists == 1
    assert "500 InternalError" in (reflector.last_error or "")


def test_undecodable_objects_are_skipped(
    fake: FakeAPIServer, make_reflector: Callable[..., Reflector], recorder: Recorder
) -> None:
    fake.create(pod("bad", cpu="lots"))
    fake.create(pod("good"))
    reflector = make_reflector()
    reflector.list_and_replace()
    assert names(recorder.events) == [("ADDED", "good")]
    assert reflector.stats.decode_errors == 1


def test_stop_closes_the_open_watch_promptly(
    fake: FakeAPIServer, make_reflector: Callable[..., Reflector]
) -> None:
    reflector = make_reflector()
    reflector.start()
    assert fake.wait_for_watches(1, "pods")
    started = time.monotonic()
    reflector.stop()
    assert time.monotonic() - started < 2
    assert fake.wait_for_watches(0, "pods") or fake.open_watches("pods") == 0


def test_watch_timeouts_end_cleanly_and_the_watch_resumes(
    fake: FakeAPIServer, make_reflector: Callable[..., Reflector], recorder: Recorder
) -> None:
    reflector = make_reflector(min_watch_timeout=1.0)
    reflector.start()
    deadline = time.monotonic() + 10
    while reflector.stats.watches < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    fake.create(pod("late"))
    recorder.wait_for(lambda ev: len(ev) == 1)
    assert reflector.stats.watches >= 3
    assert reflector.stats.errors == 0 and reflector.stats.lists == 1
    timeouts = {q["timeoutSeconds"][0] for q in watch_queries(fake)}
    assert timeouts <= {"1", "2"}
