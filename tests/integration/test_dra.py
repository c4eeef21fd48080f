"""Dynamic Resource Allocation end to end: memory backend, resourceclaim controller, default
profile with DynamicResources, claims allocated and written back."""

from __future__ import annotations

from tests.integration._support import make_node, make_pod, new_scheduler

from schedframe import hooks
from schedframe._evolve import evolve
from schedframe.metrics import SchedulerMetrics
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
                assert c.metadata.finalizers == ()
                continue
            # Added (with an Update) before the allocation was written, as upstream.
            assert c.metadata.finalizers == ("resource.kubernetes.io/delete-protection",)
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
        # Deallocated, its finalizer removed, then deleted with its pod.
        assert all(
            c.metadata.controller_ref is None or c.metadata.controller_ref.name != first
            for c in backend.list("ResourceClaim")
            if isinstance(c, ResourceClaim)
        )
        sched.run_until_idle()
        assert sched.wait_for_bindings(timeout=30)
        again = backend.get("Pod", waiting)
        assert isinstance(again, Pod) and again.spec.node_name == bound[first]
    finally:
        sched.stop()


def test_dra_backed_extended_resources_are_allocated_from_devices() -> None:
    # DRAExtendedResource (on from 1.36): a class providing example.com/gpu; node-1 has two
    # such devices (not in its allocatable), node-2 advertises the resource itself.
    gpu_class = from_dict(
        {
            **GPU_CLASS,
            "spec": {
                "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
                "extendedResourceName": "example.com/gpu",
            },
        }
    )
    node_2 = make_node("node-2")
    node_2 = evolve(
        node_2,
        status=evolve(
            node_2.status, allocatable={**node_2.status.allocatable, "example.com/gpu": 1}
        ),
    )
    objects = [make_node("node-1"), node_2, gpu_class, gpu_slice("node-1", 2)]
    sched, backend = new_scheduler(
        objects=objects, hooks=hooks.plugin_manager(load_entry_points=False)
    )
    metrics = SchedulerMetrics()
    metrics.attach(sched)

    def gpu_request_pod(name: str) -> Pod:
        pod = make_pod(name)
        (container,) = pod.spec.containers
        container = evolve(container, requests={**container.requests, "example.com/gpu": 1})
        return evolve(pod, spec=evolve(pod.spec, containers=(container,)))

    try:
        for i in range(4):
            backend.create(gpu_request_pod(f"job-{i}"))
        sched.run_until_idle()
        assert sched.wait_for_bindings(timeout=30)
        pods = {p.name: p for p in backend.list("Pod") if isinstance(p, Pod)}
        on = sorted(p.spec.node_name for p in pods.values() if p.spec.node_name)
        assert on == ["node-1", "node-1", "node-2"]  # two devices, one device-plugin GPU
        claims = {c.name: c for c in backend.list("ResourceClaim") if isinstance(c, ResourceClaim)}
        assert len(claims) == 2  # one per pod on node-1
        for pod in pods.values():
            status = pod.status.extended_resource_claim_status
            if pod.spec.node_name != "node-1":
                assert status is None
                continue
            assert status is not None
            claim = claims[status.resource_claim_name]
            assert claim.name.startswith(f"{pod.name}-extended-resources-")
            assert [r.uid for r in claim.reserved_for] == [pod.uid]
            assert claim.allocation is not None
            (result,) = claim.allocation.devices.results
            assert result.pool == "node-1"
            assert [(m.resource_name, m.request_name) for m in status.request_mappings] == [
                ("example.com/gpu", result.request)
            ]
        # PreBind created both claims (upstream's scheduler_resourceclaim_creates_total).
        assert 'scheduler_resourceclaim_creates_total{status="success"} 2' in (
            metrics.exposition().splitlines()
        )
        # Deleting a pod deletes its claim (owned by the pod): the waiting pod gets the device.
        (waiting,) = [n for n, p in pods.items() if not p.spec.node_name]
        first = next(n for n, p in sorted(pods.items()) if p.spec.node_name == "node-1")
        backend.delete(pods[first])
        sched.run_until_idle()
        assert sched.wait_for_bindings(timeout=30)
        again = backend.get("Pod", waiting)
        assert isinstance(again, Pod) and again.spec.node_name == "node-1"
    finally:
        sched.stop()


def test_pods_share_a_device_by_its_consumable_capacity() -> None:
    # DRAConsumableCapacity (beta, on from 1.36): one GPU that allows multiple allocations,
    # 40Gi of memory handed out in 10Gi steps; each pod asks for 15Gi (rounded up to 20Gi).
    shared_gpu = from_dict(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "node-1-gpus"},
            "spec": {
                "driver": "gpu.example.com",
                "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                "nodeName": "node-1",
                "devices": [
                    {
                        "name": "gpu-0",
                        "allowMultipleAllocations": True,
                        "capacity": {
                            "memory": {
                                "value": "40Gi",
                                "requestPolicy": {
                                    "default": "10Gi",
                                    "validRange": {"min": "10Gi", "step": "10Gi"},
                                },
                            }
                        },
                    }
                ],
            },
        }
    )
    template = from_dict(
        {
            **TEMPLATE,
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpu",
                                "exactly": {
                                    "deviceClassName": "gpu.example.com",
                                    "capacity": {"requests": {"memory": "15Gi"}},
                                },
                            }
                        ]
                    }
                }
            },
        }
    )
    objects = [make_node("node-1"), from_dict(GPU_CLASS), template, shared_gpu]
    sched, backend = new_scheduler(objects=objects)
    try:
        for i in range(3):
            backend.create(gpu_pod(f"infer-{i}"))
        sched.run_until_idle()
        assert sched.wait_for_bindings(timeout=30)
        pods = {p.name: p for p in backend.list("Pod") if isinstance(p, Pod)}
        bound = sorted(n for n, p in pods.items() if p.spec.node_name == "node-1")
        assert len(bound) == 2  # 2 x 20Gi of the 40Gi
        claims = [c for c in backend.list("ResourceClaim") if isinstance(c, ResourceClaim)]
        results = [r for c in claims if c.allocation for r in c.allocation.devices.results]
        assert [(r.device, str(r.consumed_capacity["memory"])) for r in results] == [
            ("gpu-0", "20Gi"),
            ("gpu-0", "20Gi"),
        ]
        share_ids = {r.share_id for r in results}
        assert None not in share_ids and len(share_ids) == 2
        (waiting,) = [n for n in pods if n not in bound]
        assert sched.results[pods[waiting].uid].outcome == "unschedulable"
        # One pod finishing gives its share back: the waiting pod gets the device.
        backend.delete(pods[bound[0]])
        sched.run_until_idle()
        assert sched.wait_for_bindings(timeout=30)
        again = backend.get("Pod", waiting)
        assert isinstance(again, Pod) and again.spec.node_name == "node-1"
    finally:
        sched.stop()
