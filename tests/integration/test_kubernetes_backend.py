"""The Kubernetes backend end to end, through the fake API server on 127.0.0.1.

The acceptance test schedules 500 pods on 50 nodes with a real Scheduler while the watches
are dropped and expired (an in-stream 410 and an HTTP 410, each forcing a relist and diff),
and checks the fake's binding log: every pod bound exactly once, no binding refused. A
second test runs ``schedframe run`` as a process and stops it with SIGTERM.

Nothing here is specific to the fake: the backend sees an API server URL and a token in a
kubeconfig, exactly as it would for a real kube-apiserver.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kubernetes")
pytest.importorskip("aiohttp")

from schedframe.backends.kubernetes import KubernetesBackend  # noqa: E402
from schedframe.config import load_config  # noqa: E402
from schedframe.objects import Pod  # noqa: E402
from schedframe.scheduler import Scheduler  # noqa: E402
from schedframe.testing.fakeapi import RESOURCES, FakeAPIServer  # noqa: E402

pytestmark = pytest.mark.integration

TOKEN = "integration-token-never-logged"
NODES = 50
PODS = 500


def node(name: str) -> dict[str, Any]:
    alloc = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "zone": f"z{hash(name) % 3}"},
        },
        "status": {"capacity": dict(alloc), "allocatable": dict(alloc)},
    }


def pod(name: str, scheduler: str = "default-scheduler", cpu: str = "200m") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name[:5]}},
        "spec": {
            "schedulerName": scheduler,
            "containers": [
                {
                    "name": "c",
                    "image": "pause",
                    "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}},
                }
            ],
        },
    }


def wait_for(predicate: Callable[[], bool], timeout: float, step: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def test_500_pods_on_50_nodes_survive_a_watch_drop_and_410s(tmp_path: Path) -> None:
    started = time.monotonic()
    with FakeAPIServer(token=TOKEN, bookmark_interval=0.5, window_size=200) as fake:
        for i in range(NODES):
            fake.create(node(f"node-{i:02d}"))
        kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
        backend = KubernetesBackend.from_kubeconfig(
            kubeconfig, qps=1000, burst=2000, backoff=(0.05, 1.0)
        )
        backend.start(timeout=20)
        sched = Scheduler(load_config(None), backend)
        runner = threading.Thread(target=sched.run, name="scheduler", daemon=True)
        runner.start()
        chaos: list[str] = []
        pod_stats = backend.reflectors["Pod"].stats
        try:
            for batch in range(5):
                for i in range(batch * 100, (batch + 1) * 100):
                    fake.create(pod(f"pod-{i:03d}"))
                if batch == 1:
                    assert wait_for(lambda: len(fake.bindings) >= 150, 30)
                    assert fake.wait_for_watches(4)
                    chaos.append(f"drop at {len(fake.bindings)}")
                    # Abrupt: no end of stream. Each watched resource's watch is cut at least
                    # once: a watch may be between two connections at any instant, so one
                    # signal to all could reach three of the four (which made this flaky);
                    # each is signalled until one of its watches is open.
                    for kind in backend.reflectors:
                        plural = next(r.name for r in RESOURCES.values() if r.kind == kind)

                        def dropped(resource: str = plural) -> bool:
                            return fake.drop_watches(resource) >= 1

                        assert wait_for(dropped, 10), plural
                if batch == 3:
                    assert wait_for(lambda: len(fake.bindings) >= 300, 30)
                    assert fake.wait_for_watches(4)
                    chaos.append(f"in-stream 410 at {len(fake.bindings)}")
                    fake.compact()
                    # ERROR 410 Expired, in-stream. The pods watch may be between two
                    # connections at this instant (it rotates): signal until one is open.
                    assert wait_for(lambda: fake.expire_watches("pods") >= 1, 10)
                    assert wait_for(lambda: pod_stats.relists_after_expiry >= 1, 10)
                    assert fake.wait_for_watches(4)
                    chaos.append(f"HTTP 410 at {len(fake.bindings)}")
                    fake.fail_watches_with_gone(1)
                    assert wait_for(lambda: fake.drop_watches("pods") >= 1, 10)
                    assert wait_for(lambda: pod_stats.relists_after_expiry >= 2, 10)
            assert wait_for(lambda: len(fake.bindings) >= PODS, 45, step=0.05), (
                f"{len(fake.bindings)} bound; {chaos}"
            )
            assert wait_for(
                lambda: all(isinstance(p, Pod) and p.spec.node_name for p in backend.list("Pod")),
                10,
            )
        finally:
            sched.stop()
            runner.join(10)
            backend.close()

        # Every pod bound exactly once (the fake's binding log), and never refused.
        log = fake.bindings
        per_pod = Counter(f"{b.namespace}/{b.name}" for b in log)
        assert len(per_pod) == PODS
        assert set(per_pod.values()) == {1}
        assert len({b.uid for b in log}) == PODS
        assert fake.binding_conflicts == []
        stored = fake.list("Pod")
        assert len(stored) == PODS and all(p["spec"].get("nodeName") for p in stored)
        # No node over its allocatable (4 CPU = 20 pods of 200m).
        per_node = Counter(p["spec"]["nodeName"] for p in stored)
        assert max(per_node.values()) <= 20
        assert len(per_node) == NODES  # spread by the default scoring
        # The chaos really happened, and was survived by relisting.
        pods = backend.reflectors["Pod"].stats
        assert pods.relists_after_expiry >= 2, pods  # in-stream 410 and HTTP 410
        assert pods.lists >= 3 and pods.watches >= 4
        assert all(r.outcome == "scheduled" for r in sched.results.values())
        assert len(sched.placements()) == PODS
        # Scheduled events reached the API server (async, aggregated, never blocking).
        scheduled = [e for e in fake.list("Event") if e["reason"] == "Scheduled"]
        assert len(scheduled) == PODS
    assert time.monotonic() - started < 60


def _fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_schedframe_run_process_schedules_serves_and_stops_on_sigterm(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "clientConnection": {"qps": 200, "burst": 400},
                "leaderElection": {
                    "leaderElect": True,
                    "resourceName": "schedframe",
                    "resourceNamespace": "kube-system",
                    "leaseDuration": "3s",
                    "renewDeadline": "2s",
                    "retryPeriod": "0.2s",
                },
                "profiles": [{"schedulerName": "schedframe"}],
            }
        )
    )
    with FakeAPIServer(token=TOKEN, bookmark_interval=0.5) as fake:
        for i in range(3):
            fake.create(node(f"n{i}"))
        for i in range(10):
            fake.create(pod(f"mine-{i}", scheduler="schedframe"))
        fake.create(pod("theirs"))  # another scheduler's pod: left alone
        kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
        env = {**os.environ, "SCHEDFRAME_DISABLE_HOOK_AUTOLOAD": "1"}
        env.pop("KUBERNETES_SERVICE_HOST", None)
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from schedframe.backends.kubernetes._cli import run_command; run_command()",
                "--kubeconfig",
                str(kubeconfig),
                "--config",
                str(config),
                "--port",
                "0",
                "--v",
                "4",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        stderr_lines: list[str] = []
        port: list[int] = []

        def read_stderr() -> None:
            assert process.stderr is not None
            for line in process.stderr:
                stderr_lines.append(line)
                if "serving /healthz and /metrics on http://127.0.0.1:" in line:
                    port.append(int(line.rsplit(":", 1)[1]))

        reader = threading.Thread(target=read_stderr, daemon=True)
        reader.start()
        try:
            assert wait_for(lambda: bool(port), 30), "".join(stderr_lines)
            assert wait_for(lambda: len(fake.bindings) == 10, 30), "".join(stderr_lines)
            base = f"http://127.0.0.1:{port[0]}"
            assert _fetch(base + "/healthz") == (200, "ok")
            code, metrics = _fetch(base + "/metrics")
            assert code == 200
            assert (
                'scheduler_schedule_attempts_total{profile="schedframe",result="scheduled"} 10'
                in metrics
            )
            assert 'scheduler_pending_pods{queue="active"} 0' in metrics
            assert 'leader_election_master_status{name="schedframe"} 1' in metrics
            assert "schedframe_reflector_watch_events_total" in metrics
            lease = fake.get("Lease", "schedframe", "kube-system")
            assert lease is not None and lease["spec"]["holderIdentity"]
            process.send_signal(signal.SIGTERM)
            assert process.wait(30) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(10)
            reader.join(5)
            if process.stdout is not None:
                process.stdout.close()
            if process.stderr is not None:
                process.stderr.close()
        text = "".join(stderr_lines)
        assert "received SIGTERM; shutting down" in text
        assert TOKEN not in text and "Bearer" not in text
        assert {b.name for b in fake.bindings} == {f"mine-{i}" for i in range(10)}
        theirs = fake.get("Pod", "theirs")
        assert theirs is not None and not theirs["spec"].get("nodeName")
        lease = fake.get("Lease", "schedframe", "kube-system")
        assert lease is not None and "holderIdentity" not in lease["spec"]  # released
        assert wait_for(lambda: fake.open_watches() == 0, 5)


def test_a_claim_is_bound_through_the_api_before_its_pod(tmp_path: Path) -> None:
    """VolumeBinding's PreBind patches the volume's claimRef through the API server, waits on
    the watch until the claim is bound (here by a stand-in PV controller), then the pod is
    bound to the volume's zone."""
    with FakeAPIServer(token=TOKEN, bookmark_interval=0.5) as fake:
        for zone in ("a", "b"):
            fake.create(
                {**node(f"n-{zone}"), "metadata": {"name": f"n-{zone}", "labels": {"zone": zone}}}
            )
        fake.create(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": "local"},
                "provisioner": "kubernetes.io/no-provisioner",
                "volumeBindingMode": "WaitForFirstConsumer",
            }
        )
        fake.create(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": "pv-b"},
                "spec": {
                    "capacity": {"storage": "10Gi"},
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "local",
                    "local": {"path": "/mnt/disk"},
                    "nodeAffinity": {
                        "required": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": "zone", "operator": "In", "values": ["b"]}
                                    ]
                                }
                            ]
                        }
                    },
                },
                "status": {"phase": "Available"},
            }
        )
        fake.create(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data", "namespace": "default"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "local",
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        )
        kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
        backend = KubernetesBackend.from_kubeconfig(kubeconfig, qps=1000, burst=2000)
        backend.start(timeout=20)
        sched = Scheduler(load_config(None), backend)
        runner = threading.Thread(target=sched.run, name="scheduler", daemon=True)
        runner.start()
        stop = threading.Event()

        def pv_controller() -> None:  # a stand-in for kube-controller-manager's
            while not stop.is_set():
                pv = fake.get("PersistentVolume", "pv-b")
                claim = fake.get("PersistentVolumeClaim", "data")
                ref = (pv or {}).get("spec", {}).get("claimRef")
                if ref and claim and not claim["spec"].get("volumeName"):
                    fake.patch(
                        "PersistentVolumeClaim",
                        "data",
                        {
                            "metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                            "spec": {"volumeName": "pv-b"},
                        },
                    )
                time.sleep(0.02)

        controller = threading.Thread(target=pv_controller, daemon=True)
        controller.start()
        try:
            p = pod("db-0")
            p["spec"]["volumes"] = [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]
            fake.create(p)
            assert wait_for(lambda: len(fake.bindings) >= 1, 30)
            assert fake.bindings[0].node == "n-b"
            stored = fake.get("PersistentVolume", "pv-b")
            assert stored is not None
            assert stored["spec"]["claimRef"]["name"] == "data"
            assert stored["spec"]["local"] == {"path": "/mnt/disk"}  # untouched by the patch
        finally:
            stop.set()
            sched.stop()
            runner.join(10)
            backend.close()
