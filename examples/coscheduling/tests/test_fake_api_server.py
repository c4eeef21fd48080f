"""Coscheduling against the fake API server: PodGroups served as a custom resource, watched by
the Kubernetes backend on demand, in process and through ``schedframe run``."""

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
from schedframe_coscheduling import POD_GROUP

pytest.importorskip("kubernetes")
pytest.importorskip("aiohttp")

from schedframe.backends.kubernetes import KubernetesBackend  # noqa: E402
from schedframe.config import load_config  # noqa: E402
from schedframe.errors import BackendError  # noqa: E402
from schedframe.objects import CustomObject, from_dict  # noqa: E402
from schedframe.scheduler import Scheduler  # noqa: E402
from schedframe.testing.fakeapi import FakeAPIServer  # noqa: E402

TOKEN = "coscheduling-token"
SRC = [
    str(Path(__file__).resolve().parents[3] / p)
    for p in ("src", "plugins/src", "examples/coscheduling/src")
]
PROFILE: dict[str, Any] = {
    "schedulerName": "default-scheduler",
    "plugins": {
        "multiPoint": {
            "enabled": [{"name": "Coscheduling"}],
            "disabled": [{"name": "PrioritySort"}],
        }
    },
    "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 5}}],
}
CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [PROFILE],
}


def node(name: str) -> dict[str, Any]:
    alloc = {"cpu": "2", "memory": "8Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"capacity": dict(alloc), "allocatable": dict(alloc)},
    }


def pod(name: str, group: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {POD_GROUP: group}},
        "spec": {
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "500m"}}}
            ]
        },
    }


def pod_group(name: str, min_member: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minMember": min_member},
    }


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def status_of(fake: FakeAPIServer, name: str) -> dict[str, Any]:
    pg = fake.get("PodGroup", name)
    status = pg.get("status") if pg is not None else None
    return dict(status) if isinstance(status, dict) else {}


def bound(fake: FakeAPIServer, prefix: str) -> set[str]:
    return {b.name for b in fake.bindings if b.name.startswith(prefix)}


def test_gangs_through_the_kubernetes_backend(tmp_path: Path) -> None:
    with FakeAPIServer(token=TOKEN) as fake:
        for i in range(2):
            fake.create(node(f"n{i}"))
        fake.create(pod_group("web", 3))
        for i in range(3):
            fake.create(pod(f"web-{i}", "web"))
        for i in range(2):  # its PodGroup comes later
            fake.create(pod(f"late-{i}", "late"))
        backend = KubernetesBackend.from_kubeconfig(fake.write_kubeconfig(tmp_path / "kc"))
        backend.start(timeout=20)
        sched = Scheduler(load_config(CONFIG), backend)
        # Plugin construction asked for the PodGroup lister: the backend watches them.
        assert "PodGroup" in backend.reflectors
        runner = threading.Thread(target=sched.run, name="scheduler", daemon=True)
        runner.start()
        try:
            assert wait_for(lambda: len(bound(fake, "web")) == 3, 30), fake.bindings
            # PostBind wrote the PodGroup's status subresource, one PUT per member.
            assert wait_for(lambda: status_of(fake, "web").get("scheduled") == 3, 10)
            assert status_of(fake, "web")["phase"] == "Scheduled"
            web = fake.get("PodGroup", "web")
            assert web is not None and web["spec"] == {"minMember": 3}
            puts = [
                r
                for r in fake.requests
                if r.method == "PUT" and r.path.endswith("/podgroups/web/status")
            ]
            assert [r.path for r in puts if r.status == 200] == [
                "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups/web/status"
            ] * 3
            time.sleep(0.3)
            assert bound(fake, "late") == set()
            fake.create(pod_group("late", 2))  # the watch event requeues the members
            assert wait_for(lambda: len(bound(fake, "late")) == 2, 30), fake.bindings
        finally:
            sched.stop()
            runner.join(10)
            backend.close()


def test_schedframe_run_serves_pod_groups(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps(CONFIG))
    with FakeAPIServer(token=TOKEN) as fake:
        for i in range(2):
            fake.create(node(f"n{i}"))
        fake.create(pod_group("job", 2))
        for i in range(2):
            fake.create(pod(f"job-{i}", "job"))
        kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
        env = {
            **os.environ,
            "SCHEDFRAME_DISABLE_HOOK_AUTOLOAD": "1",
            "PYTHONPATH": os.pathsep.join(SRC),
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
            assert wait_for(lambda: len(bound(fake, "job")) == 2, 60)
        finally:
            process.terminate()
            try:
                out, _ = process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                out, _ = process.communicate(timeout=10)
        assert process.returncode == 0, out


def test_the_status_subresource_through_the_kubernetes_backend(tmp_path: Path) -> None:
    with FakeAPIServer(token=TOKEN) as fake:
        fake.create(pod_group("g", 2))
        backend = KubernetesBackend.from_kubeconfig(fake.write_kubeconfig(tmp_path / "kc"))
        try:
            obj = from_dict(fake.get("PodGroup", "g") or {})
            assert isinstance(obj, CustomObject)
            stored = backend.update_custom_object_status(obj, {"phase": "Scheduling"})
            assert stored.status == {"phase": "Scheduling"}
            assert stored.spec == {"minMember": 2}
            served = fake.get("PodGroup", "g")
            assert served is not None and served["status"] == {"phase": "Scheduling"}
            assert served["metadata"]["resourceVersion"] == stored.metadata.resource_version
            # A stale resourceVersion is the API server's Conflict.
            with pytest.raises(BackendError) as exc:
                backend.update_custom_object_status(obj, {"phase": "Failed"})
            assert exc.value.reason == "Conflict"
            # Behind the leadership fence, like every write.
            backend.fence = lambda: False
            with pytest.raises(BackendError) as exc:
                backend.update_custom_object_status(stored, {"phase": "Failed"})
            assert exc.value.reason == "LeaderElectionLost"
            assert fake.get("PodGroup", "g") == served
        finally:
            backend.close()
