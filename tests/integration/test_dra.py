"""Dynamic Resource Allocation end to end: memory backend, resourceclaim controller, default
profile with DynamicResources, claims allocated and written back."""

from __future__ import annotations

from tests.integration._support import make_node, make_pod, new_scheduler

from schedframe._evolve import evolve
from schedframe.objects import (
    Pod,
    PodResourceClaim,
    ResourceClaim,
    from_dict,
)

GPU_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
}
TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "one-gpu", "namespace": "default"},
    "spec": {
        "spec": {
            "devices": {
                "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
            }
        }
    },
}


def gpu_slice(node: str, count: int) -> object:
    return from_dict(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-gpus"},
            "spec": {
                "driver": "gpu.example.com",
                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                "nodeName": node,
                "devices": [{"name": f"gpu-{i}"} for i in range(count)],
            },
        }
    )


def gpu_pod(name: str) -> Pod:
    pod = make_pod(name)
    spec = pod.spec
    claims = (PodResourceClaim(name="gpu", resource_claim_template_name="one-gpu"),)
    return evolve(pod, spec=evolve(spec, resource_claims=claims))


def test_pods_with_claim_templates_get_distinct_devices() -> None:
    objects = [
        make_node("node-1"),
        make_node("node-2"),
        from_dict(GPU_CLASS),
        from_dict(TEMPLATE),
        gpu_slice("node-1", 2),
        gpu_slice("node-2", 1),
    ]
    sched, backend = new_scheduler(objects=objects)
    try:
        for i in range(4):
            backend.create(gpu_pod(f"train-{i}"))
        sched.run_until_idle()
        assert sched.wait_for_bindings(timeout=30)
        pods = {p.name: p for p in backend.list("Pod") if isinstance(p, Pod)}
        bound = {n: p.spec.node_name for n, p in pods.items() if p.spec.node_name}
        assert len(bound) == 3  # three GPUs in the cluster
        claims = [c for c in backend.list("ResourceClaim") if isinstance(c, ResourceClaim)]
        assert len(claims) == 4  # the controller made one per pod
        devices = []
        for c in claims:
            owner = c.metadata.controller_ref
            assert owner is not None
            pod = pods[owner.name]
            if c.allocation is None:
                assert not pod.spec.node_name
                continue
            (result,) = c.allocation.devices.results
            devices.append((result.pool, result.device))
            assert result.pool == pod.spec.node_name
            assert [r.uid for r in c.reserved_for] == [pod.uid]
        assert sorted(devices) == [("node-1", "gpu-0"), ("node-1", "gpu-1"), ("node-2", "gpu-0")]
        (waiting,) = [n for n in pods if n not in bound]
        outcome = sched.results[pods[waiting].uid]
        assert outcome.outcome == "unschedulable"
        assert "cannot allocate all claims" in outcome.message
        # A pod finishing frees its device: the waiting pod gets it.
        first = next(iter(sorted(bound)))
        backend.delete(pods[first])
        sched.run_until_idle()
        assert sched.wait_for_bindings(timeout=30)
        again = backend.get("Pod", waiting)
        assert isinstance(again, Pod) and again.spec.node_name == bound[first]
    finally:
        sched.stop()
