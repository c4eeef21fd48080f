"""CapacityScheduling against the fake API server: ElasticQuotas served as a custom resource and
watched on demand by the Kubernetes backend, in process and through ``schedframe run``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from schedframe_capacityscheduling import CapacityScheduling

pytest.importorskip("kubernetes")
pytest.importorskip("aiohttp")

from schedframe.backends.kubernetes import KubernetesBackend  # noqa: E402
from schedframe.config import load_config  # noqa: E402
from schedframe.runtime import Registry  # noqa: E402
from schedframe.scheduler import Scheduler  # noqa: E402
from schedframe.testing.fakeapi import FakeAPIServer  # noqa: E402

TOKEN = "capacity-token"
ROOT = Path(__file__).resolve().parents[3]
SRC = [str(ROOT / p) for p in ("src", "plugins/src", "examples/capacityscheduling/src")]
CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"enabled": [{"name": "CapacityScheduling"}]},
                "postFilter": {"disabled": [{"name": "DefaultPreemption"}]},
            },
        }
    ],
}


def node(name: str) -> dict[str, Any]:
    alloc = {"cpu": "8", "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"capacity": dict(alloc), "allocatable": dict(alloc)},
    }


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def pod(name: str, ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1"}}}]
        },
    }


def quota(ns: str, max_cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "quota", "namespace": ns},
        "spec": {"min": {"cpu": max_cpu}, "max": {"cpu": max_cpu}},
    }


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def bound_in(fake: FakeAPIServer, ns: str) -> int:
    return sum(1 for b in fake.bindings if b.namespace == ns)


def _seed(fake: FakeAPIServer) -> None:
    fake.create(node("n1"))
    fake.create(namespace("capped"))
    fake.create(quota("capped", "2"))
    for i in range(4):
        fake.create(pod(f"p{i}", "capped"))


def test_quota_caps_a_namespace_through_the_kubernetes_backend(tmp_path: Path) -> None:
    with FakeAPIServer(token=TOKEN) as fake:
        _seed(fake)
        backend = KubernetesBackend.from_kubeconfig(fake.write_kubeconfig(tmp_path / "kc"))
        backend.start(timeout=20)
        registry = Registry.discover()
        registry.register("CapacityScheduling", CapacityScheduling, replace=True)
        sched = Scheduler(load_config(CONFIG), backend, registry=registry)
        assert "ElasticQuota" in backend.reflectors
        runner = threading.Thread(target=sched.run, name="scheduler", daemon=True)
        runner.start()
        try:
            assert wait_for(lambda: bound_in(fake, "capped") == 2, 30)
            time.sleep(0.3)
            assert bound_in(fake, "capped") == 2  # the max holds
            fake.patch(
                "ElasticQuota",
                "quota",
                {"spec": {"min": {"cpu": "4"}, "max": {"cpu": "4"}}},
                namespace="capped",
            )
            # The quota's update event requeues the pods it rejected.
            assert wait_for(lambda: bound_in(fake, "capped") == 4, 30)
        finally:
            sched.stop()
            runner.join(10)
            backend.close()


def test_schedframe_run_reads_elastic_quotas(tmp_path: Path) -> None:
    # The package's entry point, as an installed distribution would declare it.
    dist = tmp_path / "site" / "schedframe_capacityscheduling-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: schedframe-capacityscheduling\nVersion: 0.1.0\n"
    )
    (dist / "entry_points.txt").write_text(
        "[schedframe.plugins]\n"
        "CapacityScheduling = schedframe_capacityscheduling:CapacityScheduling\n"
    )
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps(CONFIG))
    with FakeAPIServer(token=TOKEN) as fake:
        _seed(fake)
        kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
        env = {
            **os.environ,
            "SCHEDFRAME_DISABLE_HOOK_AUTOLOAD": "1",
            "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), *SRC]),
        }
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
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            text=True,
        )
        try:
            assert wait_for(lambda: bound_in(fake, "capped") == 2, 60)
            time.sleep(0.5)
            assert bound_in(fake, "capped") == 2
        finally:
            process.terminate()
            try:
                out, _ = process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                out, _ = process.communicate(timeout=10)
        assert process.returncode == 0, out
