"""GangScheduling on the Kubernetes backend against the fake API server: Workloads are watched
on demand (the plugin asks for their lister) and their events requeue gated pods."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kubernetes")
pytest.importorskip("aiohttp")

from schedframe.backends.kubernetes import KubernetesBackend  # noqa: E402
from schedframe.config import load_config  # noqa: E402
from schedframe.runtime import Registry  # noqa: E402
from schedframe.scheduler import Scheduler  # noqa: E402
from schedframe.testing.fakeapi import FakeAPIServer  # noqa: E402
from schedframe_plugins.gangscheduling import GangScheduling  # noqa: E402

TOKEN = "gang-token"
CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "featureGates": {"GenericWorkload": True},
}


def node(name: str) -> dict[str, Any]:
    alloc = {"cpu": "2", "memory": "8Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"capacity": dict(alloc), "allocatable": dict(alloc)},
    }


def pod(name: str, workload: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "500m"}}}
            ],
            "workloadRef": {"name": workload, "podGroup": "workers"},
        },
    }


def workload(name: str, min_count: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": min_count}}}]},
    }


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def bound(fake: FakeAPIServer, prefix: str) -> set[str]:
    return {b.name for b in fake.bindings if b.name.startswith(prefix)}


def test_gangs_through_the_kubernetes_backend(tmp_path: Path) -> None:
    with FakeAPIServer(token=TOKEN) as fake:
        for i in range(2):
            fake.create(node(f"n{i}"))
        fake.create(workload("web", 3))
        for i in range(2):
            fake.create(pod(f"web-{i}", "web"))
        for i in range(2):  # its Workload comes later
            fake.create(pod(f"late-{i}", "late"))
        backend = KubernetesBackend.from_kubeconfig(fake.write_kubeconfig(tmp_path / "kc"))
        backend.start(timeout=20)
        registry = Registry.discover()
        if "GangScheduling" not in registry:
            registry.register("GangScheduling", GangScheduling)
        sched = Scheduler(load_config(CONFIG), backend, registry=registry)
        # Plugin construction asked for the Workload lister: the backend watches them.
        assert "Workload" in backend.reflectors
        runner = threading.Thread(target=sched.run, name="scheduler", daemon=True)
        runner.start()
        try:
            time.sleep(0.3)
            assert bound(fake, "web") == set()  # two of minCount 3
            fake.create(pod("web-2", "web"))
            assert wait_for(lambda: len(bound(fake, "web")) == 3, 30), fake.bindings
            assert bound(fake, "late") == set()
            fake.create(workload("late", 2))  # the watch event requeues the members
            assert wait_for(lambda: len(bound(fake, "late")) == 2, 30), fake.bindings
        finally:
            sched.stop()
            runner.join(10)
            backend.close()
