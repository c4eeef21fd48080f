"""``schedframe`` scheduling against a (fake) API server writes a claim's allocation as
kube-scheduler does: the ``resource.kubernetes.io/delete-protection`` finalizer first (an
``Update`` of the claim), then the status."""

from __future__ import annotations

import time
from typing import Any

from schedframe.backends.kubernetes import KubernetesBackend
from schedframe.config import load_config
from schedframe.scheduler import Scheduler
from schedframe.testing.fakeapi import FakeAPIServer

from ._support import node, pod


def _wait(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_the_allocated_claim_carries_the_finalizer(fake: FakeAPIServer, kubeconfig: Any) -> None:
    fake.create(node("n1"))
    fake.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    )
    fake.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "n1-gpus"},
            "spec": {
                "driver": "gpu.example.com",
                "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                "nodeName": "n1",
                "devices": [{"name": "gpu-0"}],
            },
        }
    )
    fake.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "default"},
            "spec": {
                "devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}
            },
        }
    )
    p = pod("p1")
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "c"}]
    fake.create(p)
    backend = KubernetesBackend.from_kubeconfig(kubeconfig, backoff=(0.05, 0.5), qps=0)
    backend.start(timeout=10)
    cfg = load_config(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    )
    sched = Scheduler.from_config(cfg, backend, deterministic=False)
    try:
        sched.run_until_idle(stall_timeout=20)
        assert sched.wait_for_bindings(timeout=20)
        _wait(lambda: (fake.get("Pod", "p1") or {}).get("spec", {}).get("nodeName") == "n1")
        claim = fake.get("ResourceClaim", "c", "default")
        assert claim is not None
        assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
        (result,) = claim["status"]["allocation"]["devices"]["results"]
        assert result["device"] == "gpu-0"
        assert [r["name"] for r in claim["status"]["reservedFor"]] == ["p1"]
    finally:
        sched.stop()
        backend.close()
