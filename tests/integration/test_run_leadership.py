"""``schedframe run`` processes against the fake API server: leadership is a fence.

Each replica is a real ``schedframe run`` process. What the tests time is measured from what
the process reports (its log line, read as it is written) to its exit, so a loaded machine
delays the observation, never the verdict. Other waits are generous.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

pytest.importorskip("kubernetes")
pytest.importorskip("aiohttp")

from schedframe.testing.fakeapi import FakeAPIServer  # noqa: E402

pytestmark = pytest.mark.integration

#: Generous bound for everything that is not the acceptance figure.
WAIT = 60.0
#: Each binding request is held this long by the fake (a slow bind path).
BIND_DELAY = 0.1
#: The acceptance figure: a deposed (or signalled) process is gone within this.
EXIT_WITHIN = 1.0
#: How late the fake may stamp the arrival of a request sent before a moment (see below).
SERVER_SLACK = 0.5
LEASE = "schedframe"
SCHEDULER = "schedframe"


class Replica:
    """One ``schedframe run`` process; its stderr lines are stamped as they arrive."""

    def __init__(self, kubeconfig: Path, config: Path, name: str) -> None:
        self.name = name
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "schedframe.cli",
                "run",
                "--kubeconfig",
                str(kubeconfig),
                "--config",
                str(config),
                "--port",
                "0",
                "--binding-workers",
                "4",
                "-v",
                "2",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: list[tuple[float, str]] = []
        self.exited_at: float | None = None
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._waiter = threading.Thread(target=self._wait, daemon=True)
        self._waiter.start()

    def _read(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        with stream:
            for line in stream:
                with self._lock:
                    self.lines.append((time.time(), line.rstrip("\n")))

    def _wait(self) -> None:
        self.proc.wait()
        self.exited_at = time.time()

    def seen(self, fragment: str) -> float | None:
        """When the first line containing ``fragment`` was read."""
        with self._lock:
            for stamp, line in self.lines:
                if fragment in line:
                    return stamp
        return None

    def wait_for(self, fragment: str, timeout: float = WAIT) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            stamp = self.seen(fragment)
            if stamp is not None:
                return stamp
            if self.proc.poll() is not None and self.seen(fragment) is None:
                self._reader.join(5)
                stamp = self.seen(fragment)
                if stamp is not None:
                    return stamp
                break
            time.sleep(0.01)
        raise AssertionError(f"{self.name}: no {fragment!r} in:\n{self.log()}")

    def wait_exit(self, timeout: float = WAIT) -> tuple[int, float]:
        self._waiter.join(timeout)
        assert self.exited_at is not None, f"{self.name} did not exit:\n{self.log()}"
        self._reader.join(5)
        return self.proc.returncode, self.exited_at

    def log(self) -> str:
        with self._lock:
            return "\n".join(line for _, line in self.lines[-60:])

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "leaderElection:\n"
        "  leaderElect: true\n"
        f"  resourceName: {LEASE}\n"
        "  leaseDuration: 3s\n"
        "  renewDeadline: 2s\n"
        "  retryPeriod: 0.2s\n"
        "profiles:\n"
        f"  - schedulerName: {SCHEDULER}\n"
    )
    return path


def _node(name: str) -> dict[str, object]:
    capacity = {"cpu": "64", "memory": "256Gi", "pods": "500"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def _pod(name: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": SCHEDULER,
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "10m"}}}],
        },
    }


@pytest.fixture
def fake() -> Iterator[FakeAPIServer]:
    with FakeAPIServer(bookmark_interval=0.5, kubelet_delay=None) as server:
        for i in range(8):
            server.create(_node(f"node-{i}"))
        server.delay_requests(BIND_DELAY, times=None, method="POST", path="/binding$")
        yield server


@pytest.fixture
def replicas() -> Iterator[list[Replica]]:
    started: list[Replica] = []
    yield started
    for replica in started:
        replica.kill()


def _create_pods(fake: FakeAPIServer, first: int, count: int) -> list[str]:
    names = [f"pod-{i:05d}" for i in range(first, first + count)]
    for name in names:
        fake.create(_pod(name))
    return names


def _wait_bindings(fake: FakeAPIServer, count: int, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while len(fake.bindings) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(fake.bindings) >= count, f"{len(fake.bindings)} bindings, expected {count}"


def _bindings_after(fake: FakeAPIServer, moment: float) -> list[str]:
    """Successful bindings whose request reached the server after ``moment``."""
    return [
        r.path
        for r in list(fake.requests)
        if r.method == "POST" and r.path.endswith("/binding") and r.status == 201
        if r.arrived > moment
    ]


def _bindings_between(fake: FakeAPIServer, start: float, end: float) -> list[str]:
    return [
        r.path
        for r in list(fake.requests)
        if r.method == "POST" and r.path.endswith("/binding") and r.status == 201
        if start < r.arrived < end
    ]


def _acquire_time(fake: FakeAPIServer) -> float:
    lease = fake.get("Lease", LEASE, "kube-system")
    assert lease is not None
    stamp = str(lease["spec"]["acquireTime"])
    parsed = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return parsed.timestamp()


def _holder(fake: FakeAPIServer) -> str:
    lease = fake.get("Lease", LEASE, "kube-system")
    return "" if lease is None else str(lease["spec"].get("holderIdentity") or "")


def test_losing_the_lease_binds_nothing_more_and_exits_within_a_second(
    fake: FakeAPIServer, replicas: list[Replica], tmp_path: Path
) -> None:
    kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
    _create_pods(fake, 0, 400)
    leader = Replica(kubeconfig, _config(tmp_path), "leader")
    replicas.append(leader)
    leader.wait_for("successfully acquired lease")
    _wait_bindings(fake, 10)
    fake.steal_lease(LEASE, holder="intruder", lease_duration_seconds=60)
    observed = leader.wait_for("is now held by intruder")
    code, exited_at = leader.wait_exit()
    assert code == 1
    assert leader.seen("leaderelection lost") is not None
    assert exited_at - observed < EXIT_WITHIN, leader.log()
    assert _bindings_after(fake, observed + SERVER_SLACK) == []
    assert len(fake.bindings) < 400  # a queue was left behind, and abandoned
    assert fake.binding_conflicts == []
    assert _holder(fake) == "intruder"


def test_sigterm_stops_binding_releases_the_lease_and_exits_0(
    fake: FakeAPIServer, replicas: list[Replica], tmp_path: Path
) -> None:
    kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
    _create_pods(fake, 0, 400)
    leader = Replica(kubeconfig, _config(tmp_path), "leader")
    replicas.append(leader)
    leader.wait_for("successfully acquired lease")
    _wait_bindings(fake, 10)
    leader.proc.send_signal(signal.SIGTERM)
    observed = leader.wait_for("received SIGTERM")
    code, exited_at = leader.wait_exit()
    assert code == 0, leader.log()
    assert exited_at - observed < EXIT_WITHIN, leader.log()
    # Only binding cycles already started may finish: those running (at most
    # --binding-workers 4), the one whose scheduling cycle was done and waited for a slot, and
    # the one whose scheduling cycle was under way when the signal came.
    assert len(_bindings_after(fake, observed)) <= 4 + 2
    assert len(fake.bindings) < 400
    assert _holder(fake) == ""  # released


def test_two_replicas_with_the_lease_flipped_under_load(
    fake: FakeAPIServer, replicas: list[Replica], tmp_path: Path
) -> None:
    """Acceptance: every pod bound exactly once, no 409, each deposed replica gone in 1 s."""
    kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
    config = _config(tmp_path)
    total = 600
    _create_pods(fake, 0, 300)
    a = Replica(kubeconfig, config, "a")
    replicas.append(a)
    a.wait_for("successfully acquired lease")
    b = Replica(kubeconfig, config, "b")
    replicas.append(b)
    b.wait_for("attempting to acquire leader lease")
    leader, standby = a, b
    created = 300
    deposed: list[tuple[str, float]] = []
    for flip in range(3):
        _wait_bindings(fake, len(fake.bindings) + 20)
        _create_pods(fake, created, 100)  # more load while the Lease moves
        created += 100
        # Another holder takes the Lease over for a second, then lets it expire.
        fake.steal_lease(LEASE, holder=f"flipper-{flip}", lease_duration_seconds=1)
        observed = leader.wait_for(f"is now held by flipper-{flip}")
        code, exited_at = leader.wait_exit()
        assert code == 1
        assert exited_at - observed < EXIT_WITHIN, leader.log()
        deposed.append((leader.name, exited_at - observed))
        standby.wait_for("successfully acquired lease")
        # Between the loss the deposed replica observed and the new leader's acquireTime
        # (written before it schedules anything), no binding reached the server. The fake
        # stamps a request when its event loop gets to it, which under load (a replica
        # listing hundreds of pods) can be well after it was sent: SERVER_SLACK allows that.
        # A fence that did not hold would go on binding ~40 pods a second in that window.
        acquired = _acquire_time(fake)
        assert _bindings_between(fake, observed + SERVER_SLACK, acquired) == []
        # The deposed replica comes back as the standby, as a Deployment would restart it.
        restarted = Replica(kubeconfig, config, f"{leader.name}-{flip}")
        replicas.append(restarted)
        restarted.wait_for("attempting to acquire leader lease")
        leader, standby = standby, restarted
    assert created == total
    _wait_bindings(fake, total)
    time.sleep(1.0)  # nothing more arrives
    counts = Counter(f"{b.namespace}/{b.name}" for b in fake.bindings)
    assert len(counts) == total
    assert max(counts.values()) == 1
    assert fake.binding_conflicts == []
    assert [name for name, _ in deposed] == ["a", "b", "a-0"]
    assert all(seconds < EXIT_WITHIN for _, seconds in deposed), deposed
    leader.proc.send_signal(signal.SIGTERM)
    standby.proc.send_signal(signal.SIGTERM)
    assert leader.wait_exit()[0] == 0
    assert standby.wait_exit()[0] == 0
