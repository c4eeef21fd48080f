"""Leader election on a coordination.k8s.io/v1 Lease (client-go ``tryAcquireOrRenew``)."""

from __future__ import annotations

import threading
import time

import pytest

from schedframe.backends.kubernetes import (
    ApiTransport,
    LeaderElectionLost,
    LeaderElector,
)
from schedframe.config import LeaderElectionConfiguration
from schedframe.testing.fakeapi import FakeAPIServer


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def elector(
    transport: ApiTransport, identity: str, clock: Clock | None = None, **kw: object
) -> LeaderElector:
    kwargs: dict[str, object] = {
        "namespace": "kube-system",
        "name": "schedframe",
        "identity": identity,
        "lease_duration": 15.0,
        "renew_deadline": 10.0,
        "retry_period": 2.0,
    }
    kwargs.update(kw)
    if clock is not None:
        kwargs["clock"] = clock
    return LeaderElector(transport, **kwargs)  # type: ignore[arg-type]


def lease(fake: FakeAPIServer) -> dict[str, object]:
    found = fake.get("Lease", "schedframe", "kube-system")
    assert found is not None
    spec = found["spec"]
    assert isinstance(spec, dict)
    return spec


def test_defaults_and_validation(transport: ApiTransport) -> None:
    e = LeaderElector.from_config(transport, LeaderElectionConfiguration())
    assert (e.lease_duration, e.renew_deadline, e.retry_period) == (15.0, 10.0, 2.0)
    assert (e.namespace, e.name) == ("kube-system", "kube-scheduler")
    assert "_" in e.identity  # <hostname>_<uuid>
    with pytest.raises(ValueError, match="leaseDuration must be greater than renewDeadline"):
        LeaderElector(transport, lease_duration=10, renew_deadline=10)
    with pytest.raises(ValueError, match="renewDeadline must be greater than retryPeriod"):
        LeaderElector(transport, renew_deadline=2.3, retry_period=2)
    with pytest.raises(ValueError, match="identity"):
        LeaderElector(transport, identity="")
    with pytest.raises(ValueError, match="resourceLock"):
        LeaderElector.from_config(transport, LeaderElectionConfiguration(resource_lock="endpoints"))


def test_acquire_creates_the_lease(fake: FakeAPIServer, transport: ApiTransport) -> None:
    a = elector(transport, "a")
    assert a.try_acquire_or_renew() and a.is_leader()
    spec = lease(fake)
    assert spec["holderIdentity"] == "a"
    assert spec["leaseDurationSeconds"] == 15
    assert spec["leaseTransitions"] == 0
    assert str(spec["renewTime"]).endswith("Z") and spec["acquireTime"] == spec["renewTime"]


def test_a_held_lease_blocks_others_until_it_expires(
    fake: FakeAPIServer, transport: ApiTransport
) -> None:
    clock = Clock()
    a = elector(transport, "a", clock)
    b = elector(transport, "b", clock)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()  # first sight of a's record starts b's observation
    clock.t += 10
    assert a.try_acquire_or_renew()  # a renews: the record changes
    clock.t += 10
    assert not b.try_acquire_or_renew()  # b saw a new record 0 s ago
    clock.t += 14
    assert not b.try_acquire_or_renew()
    clock.t += 1.5  # 15.5 s without a change on b's clock: expired
    assert b.try_acquire_or_renew() and b.is_leader()
    spec = lease(fake)
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    # a's optimistic renewal now conflicts (stale resourceVersion), and its slow path sees b.
    assert not a.try_acquire_or_renew()
    assert not a.is_leader() and a.leader == "b"


def test_renewal_keeps_acquire_time_and_transitions(
    fake: FakeAPIServer, transport: ApiTransport
) -> None:
    a = elector(transport, "a")
    assert a.try_acquire_or_renew()
    first = lease(fake)
    time.sleep(0.01)
    assert a.try_acquire_or_renew()
    second = lease(fake)
    assert second["acquireTime"] == first["acquireTime"]
    assert second["renewTime"] != first["renewTime"]
    assert second["leaseTransitions"] == 0


def test_two_candidates_never_both_win(fake: FakeAPIServer, transport: ApiTransport) -> None:
    results: dict[str, bool] = {}
    barrier = threading.Barrier(4)

    def campaign(name: str) -> None:
        e = elector(transport, name)
        barrier.wait()
        results[name] = e.try_acquire_or_renew()

    threads = [threading.Thread(target=campaign, args=(n,)) for n in "abcd"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [n for n, won in results.items() if won]
    assert len(winners) == 1
    assert lease(fake)["holderIdentity"] == winners[0]


def test_release_clears_the_holder(fake: FakeAPIServer, transport: ApiTransport) -> None:
    clock = Clock()
    a = elector(transport, "a", clock)
    b = elector(transport, "b", clock)
    assert a.try_acquire_or_renew()
    assert a.release() and not a.is_leader()
    spec = lease(fake)
    assert "holderIdentity" not in spec and spec["leaseDurationSeconds"] == 1
    assert b.try_acquire_or_renew()  # no holder: taken at once
    assert lease(fake)["leaseTransitions"] == 1


def test_acquire_blocks_until_stopped_or_timeout(
    fake: FakeAPIServer, transport: ApiTransport
) -> None:
    a = elector(transport, "a", lease_duration=3.0, renew_deadline=2.0, retry_period=0.05)
    b = elector(transport, "b", lease_duration=3.0, renew_deadline=2.0, retry_period=0.05)
    assert a.acquire(timeout=5)
    started = time.monotonic()
    assert not b.acquire(timeout=0.3)
    assert 0.25 < time.monotonic() - started < 2
    stop = threading.Event()
    threading.Timer(0.1, stop.set).start()
    assert not b.acquire(stop)


def test_renew_loop_releases_on_stop(fake: FakeAPIServer, transport: ApiTransport) -> None:
    a = elector(transport, "a", lease_duration=1.0, renew_deadline=0.5, retry_period=0.05)
    assert a.acquire(timeout=5)
    lost: list[LeaderElectionLost] = []
    a.start_renewing(lost.append)
    renewed = lease(fake)["renewTime"]
    deadline = time.monotonic() + 5
    while lease(fake)["renewTime"] == renewed and time.monotonic() < deadline:
        time.sleep(0.02)
    assert lease(fake)["renewTime"] != renewed  # renewing every retry period
    a.stop()
    assert lost == [] and not a.is_leader()
    assert "holderIdentity" not in lease(fake)


def test_losing_the_lease_raises(fake: FakeAPIServer, transport: ApiTransport) -> None:
    a = elector(transport, "a", lease_duration=1.0, renew_deadline=0.5, retry_period=0.05)
    assert a.acquire(timeout=5)
    fake.fail_requests(503, path="/leases", times=1000)
    with pytest.raises(
        LeaderElectionLost, match="could not renew lease kube-system/schedframe within 0.5s"
    ):
        a.renew_loop(threading.Event())
    fake.clear_failures()


def test_losing_the_lease_to_another_holder(fake: FakeAPIServer, transport: ApiTransport) -> None:
    a = elector(transport, "a", lease_duration=1.0, renew_deadline=0.5, retry_period=0.05)
    assert a.acquire(timeout=5)
    current = fake.get("Lease", "schedframe", "kube-system")
    assert current is not None
    current["spec"]["holderIdentity"] = "intruder"
    fake.update(current)
    lost: list[LeaderElectionLost] = []
    done = threading.Event()

    def on_lost(exc: LeaderElectionLost) -> None:
        lost.append(exc)
        done.set()

    a.start_renewing(on_lost)
    assert done.wait(5)
    assert not a.is_leader() and a.leader == "intruder"
    assert a.healthy()  # not the leader: nothing to report
