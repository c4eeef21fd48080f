"""The fake API server's failure modes and what the Kubernetes backend does under them: a
Lease rewritten by another holder, a renew that times out, an API server that stops (the
elector and its fence), hung requests (one retry layer), slow lists (listed at once)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("kubernetes")
pytest.importorskip("aiohttp")

from schedframe.backends.kubernetes import (  # noqa: E402
    ApiTransport,
    LeaderElectionLost,
    LeaderElector,
)
from schedframe.backends.kubernetes._cli import register_leader_metrics  # noqa: E402
from schedframe.backends.kubernetes._metrics import Metrics  # noqa: E402
from schedframe.backends.kubernetes._transport import TransportError  # noqa: E402
from schedframe.testing.fakeapi import FakeAPIServer  # noqa: E402

pytestmark = pytest.mark.integration

#: Generous bound for waits on a loaded machine; the time bounds asserted here are the
#: renew deadline and Lease durations the behaviour is defined by, with wide margins.
WAIT = 30.0


@pytest.fixture
def fake() -> Iterator[FakeAPIServer]:
    with FakeAPIServer(bookmark_interval=0.2, kubelet_delay=None) as server:
        yield server


@pytest.fixture
def transport(fake: FakeAPIServer, tmp_path: Path) -> Iterator[ApiTransport]:
    t = ApiTransport.from_kubeconfig(fake.write_kubeconfig(tmp_path / "kubeconfig"), qps=0)
    yield t
    t.close()


def elector(transport: ApiTransport, identity: str = "a", **kw: float) -> LeaderElector:
    kwargs: dict[str, float] = {"lease_duration": 3.0, "renew_deadline": 1.5, "retry_period": 0.2}
    kwargs.update(kw)
    return LeaderElector(
        transport,
        namespace="kube-system",
        name="schedframe",
        identity=identity,
        **kwargs,  # type: ignore[arg-type]
    )


def renewing(e: LeaderElector) -> tuple[threading.Event, list[LeaderElectionLost]]:
    lost: list[LeaderElectionLost] = []
    done = threading.Event()

    def on_lost(exc: LeaderElectionLost) -> None:
        lost.append(exc)
        done.set()

    e.start_renewing(on_lost)
    return done, lost


def test_steal_lease_rewrites_holder_and_transitions(
    fake: FakeAPIServer, transport: ApiTransport
) -> None:
    a = elector(transport)
    assert a.try_acquire_or_renew()
    stolen = fake.steal_lease("schedframe", holder="b", lease_duration_seconds=7)
    spec = stolen["spec"]
    assert spec["holderIdentity"] == "b"
    assert spec["leaseTransitions"] == 1
    assert spec["leaseDurationSeconds"] == 7
    assert spec["acquireTime"] == spec["renewTime"]


def test_a_lease_rewritten_by_another_holder_is_lost_at_once(
    fake: FakeAPIServer, transport: ApiTransport
) -> None:
    a = elector(transport, renew_deadline=8.0, lease_duration=10.0)
    assert a.acquire(timeout=WAIT)
    assert a.leading()
    done, lost = renewing(a)
    fake.steal_lease("schedframe", holder="intruder")
    stolen_at = time.monotonic()
    assert done.wait(WAIT)
    # Noticed at a renewal (every 0.2 s), not by giving up at the renew deadline (8 s).
    assert time.monotonic() - stolen_at < 8.0
    assert "held by intruder" in str(lost[0])
    assert not a.leading() and not a.is_leader() and a.lost
    a.stop()
    lease = fake.get("Lease", "schedframe", "kube-system")
    assert lease is not None and lease["spec"]["holderIdentity"] == "intruder"


def test_a_renew_that_times_out_loses_the_lease_by_the_deadline(
    fake: FakeAPIServer, transport: ApiTransport
) -> None:
    a = elector(transport)
    assert a.acquire(timeout=WAIT)
    done, lost = renewing(a)
    fake.delay_requests(60.0, times=None, path="/leases")
    hung_at = time.monotonic()
    assert done.wait(WAIT)
    assert "within 1.5s" in str(lost[0])
    # The hung requests were given up at the renew deadline, not after the 60 s delay.
    assert time.monotonic() - hung_at < 10.0
    assert not a.leading() and not a.is_leader()
    a.stop()


def test_an_api_server_stopped_past_the_renew_deadline(
    fake: FakeAPIServer, transport: ApiTransport
) -> None:
    a = elector(transport, lease_duration=6.0)
    assert a.acquire(timeout=WAIT)
    done, _ = renewing(a)
    fake.outage(8.0)
    stopped_at = time.monotonic()
    # The fence closes on this replica's clock at the latest renew_deadline after the last
    # renewal, before a standby could take over (lease_duration without a change).
    while a.leading():
        time.sleep(0.01)
    assert time.monotonic() - stopped_at < 6.0
    assert done.wait(WAIT)
    a.stop()


def test_delay_requests_holds_only_matching_requests(
    fake: FakeAPIServer, transport: ApiTransport
) -> None:
    fake.delay_requests(5.0, times=1, method="GET", path="/api/v1/nodes$")
    started = time.monotonic()
    transport.request("GET", "/api/v1/namespaces")  # does not match: served at once
    assert time.monotonic() - started < 4.0
    with pytest.raises(TransportError):
        transport.request("GET", "/api/v1/nodes", timeout=(1.0, 0.3))
    transport.request("GET", "/api/v1/nodes")  # times=1: the next one is served at once
    fake.clear_failures()


def test_urllib3_does_not_retry_inside_our_retries(
    fake: FakeAPIServer, transport: ApiTransport
) -> None:
    # One hung GET: urllib3's own retries would resend it and succeed; with one retry layer
    # (ours) the read timeout is the caller's to handle.
    fake.delay_requests(3.0, times=1, path="/api/v1/nodes$")
    with pytest.raises(TransportError, match="timed out"):
        transport.request("GET", "/api/v1/nodes", timeout=(1.0, 0.3))
    served = [r for r in fake.requests if r.path == "/api/v1/nodes"]
    deadline = time.monotonic() + WAIT
    while not served and time.monotonic() < deadline:
        time.sleep(0.05)
        served = [r for r in fake.requests if r.path == "/api/v1/nodes"]
    time.sleep(0.5)
    assert len([r for r in fake.requests if r.path == "/api/v1/nodes"]) == 1


def test_master_status_metric_goes_back_to_0_when_the_lease_is_lost(
    fake: FakeAPIServer, transport: ApiTransport
) -> None:
    # Lost to a renew deadline, the last record observed still names this replica: the
    # gauge once stayed 1.
    a = elector(transport)
    metrics = Metrics()
    register_leader_metrics(metrics, a)
    assert a.acquire(timeout=WAIT)
    assert 'leader_election_master_status{name="schedframe"} 1' in metrics.render()
    done, _ = renewing(a)
    fake.fail_requests(503, path="/leases", times=100_000)
    assert done.wait(WAIT)
    assert a.leader == "a"  # the last record observed
    assert 'leader_election_master_status{name="schedframe"} 0' in metrics.render()
    a.stop()
    fake.clear_failures()


def test_every_kind_is_listed_at_once_then_applied_in_order(
    fake: FakeAPIServer, tmp_path: Path
) -> None:
    from schedframe.backends import KINDS
    from schedframe.backends.kubernetes import KubernetesBackend

    fake.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    for path in (
        "/api/v1/namespaces$",
        "/api/v1/nodes$",
        "/apis/policy/v1/poddisruptionbudgets$",
        "/api/v1/pods$",
    ):
        fake.delay_requests(2.0, times=1, method="GET", path=path)
    backend = KubernetesBackend.from_kubeconfig(
        fake.write_kubeconfig(tmp_path / "kubeconfig"), qps=0
    )
    seen: list[str] = []
    backend.subscribe(lambda event: seen.append(type(event.obj).__name__))
    started = time.monotonic()
    try:
        backend.start(timeout=WAIT)
        # One after another the four delayed lists take 8 s; at once, about 2 s.
        assert time.monotonic() - started < 6.0
    finally:
        backend.close()
    kinds = {"Namespace": 0, "Node": 1, "PodDisruptionBudget": 2, "Pod": 3}
    order = [kinds[name] for name in seen if name in kinds]
    assert order == sorted(order)  # namespaces, then nodes, ... as KINDS says
    assert list(kinds) == [k for k in KINDS if k in kinds]
