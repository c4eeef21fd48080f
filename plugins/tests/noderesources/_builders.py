"""Builders shared by the noderesources tests (upstream st.MakePod / st.MakeNode stand-ins)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from schedframe.objects import (
    Container,
    Node,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodSpec,
    PodStatus,
    ResourceRequirements,
    parse_quantity,
    resource_amount,
)

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"
DRA_EXT = "extended.resource.dra.io/something"

Q = Mapping[str, str]
_uid = iter(range(1, 1_000_000))


def amounts(q: Q) -> dict[str, int]:
    """Kubernetes quantity strings -> scheduler integers."""
    return {k: resource_amount(k, parse_quantity(v)) for k, v in q.items()}


def res(cpu: int = 0, mem: int = 0, eph: int = 0, **scalar: int) -> dict[str, int]:
    """A container request like upstream's newResourcePod(framework.Resource{...})."""
    out = {"cpu": cpu, "memory": mem, "pods": 0, "ephemeral-storage": eph}
    for key, value in scalar.items():
        out[_SCALAR_KEYS[key]] = value
    return out


_SCALAR_KEYS = {
    "a": EXT_A,
    "b": EXT_B,
    "kia": K8S_IO_A,
    "kib": K8S_IO_B,
    "hp": HUGE_A,
    "dra": DRA_EXT,
}


def make_pod(
    *containers: Mapping[str, int],
    init: Sequence[Mapping[str, int]] = (),
    sidecars: Sequence[Mapping[str, int]] = (),
    overhead: Mapping[str, int] | None = None,
    pod_level: Mapping[str, int] | None = None,
    name: str = "",
    uid: str | None = None,
    node: str = "",
    nominated: str = "",
) -> Pod:
    init_containers = [
        Container(name=f"sidecar{i}", requests=dict(r), restart_policy="Always")
        for i, r in enumerate(sidecars)
    ] + [Container(name=f"init{i}", requests=dict(r)) for i, r in enumerate(init)]
    return Pod(
        metadata=ObjectMeta(
            name=name, namespace="default", uid=uid if uid is not None else f"uid-{next(_uid)}"
        ),
        spec=PodSpec(
            node_name=node,
            containers=tuple(
                Container(name=f"c{i}", requests=dict(r)) for i, r in enumerate(containers)
            ),
            init_containers=tuple(init_containers),
            overhead=dict(overhead or {}),
            resources=None if pod_level is None else ResourceRequirements(requests=dict(pod_level)),
        ),
        status=PodStatus(nominated_node_name=nominated),
    )


def req_pod(*containers: Q, node: str = "", name: str = "", uid: str | None = None) -> Pod:
    """Like upstream st.MakePod().Req(...).Req(...)."""
    return make_pod(*(amounts(c) for c in containers), node=node, name=name, uid=uid)


def make_node(name: str = "", allocatable: Mapping[str, int] | None = None) -> Node:
    alloc = dict(allocatable or {})
    return Node(
        metadata=ObjectMeta(name=name, uid=name),
        status=NodeStatus(capacity=dict(alloc), allocatable=alloc),
    )


def capacity_node(name: str = "", capacity: Q | None = None) -> Node:
    """Like upstream st.MakeNode().Name(name).Capacity(...): 32 pods unless given."""
    return make_node(name, amounts({"pods": "32", **(capacity or {})}))


def allocatable(cpu: int, mem: int, pods: int, ext_a: int, eph: int, huge: int) -> dict[str, int]:
    """Upstream makeAllocatableResources."""
    return {
        "cpu": cpu,
        "memory": mem,
        "pods": pods,
        EXT_A: ext_a,
        "ephemeral-storage": eph,
        HUGE_A: huge,
    }


EXTENDED_RES = "abc.com/xyz"


def make_node_resources(
    name: str, milli_cpu: int, memory: int, extended: Mapping[str, int]
) -> Node:
    """Upstream makeNode(name, milliCPU, memory, extendedResources)."""
    return make_node(name, {**extended, "cpu": milli_cpu, "memory": memory})
