"""The fluent builders make the objects the manifest codec would."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from schedframe.errors import ManifestError
from schedframe.objects import from_dict, to_dict
from schedframe.testing.builders import (
    LABEL_HOSTNAME,
    LABEL_ZONE,
    lenient_from_dict,
    make_namespace,
    make_node,
    make_pdb,
    make_pod,
    resources,
)

GI = 1 << 30


def test_resources_are_scheduler_integers() -> None:
    assert resources(cpu="1500m", memory="1Gi") == {"cpu": 1500, "memory": GI}
    assert resources({"nvidia.com/gpu": 2}, ephemeral_storage="1Gi") == {
        "nvidia.com/gpu": 2,
        "ephemeral-storage": GI,
    }
    assert resources(cpu=2) == {"cpu": 2000}


def test_a_pod_with_requests_priority_and_constraints() -> None:
    pod = (
        make_pod("web")
        .namespace("shop")
        .labels(app="web")
        .req(cpu="100m", memory="128Mi")
        .req({"nvidia.com/gpu": 1})
        .priority(5)
        .node_selector(disktype="ssd")
        .toleration("dedicated", "web", effect="NoSchedule")
        .toleration(effect="NoExecute")
        .node_affinity_in(LABEL_ZONE, ["a", "b"])
        .preferred_node_affinity(10, "disktype", ["ssd"])
        .pod_anti_affinity(LABEL_HOSTNAME, {"app": "web"})
        .pod_affinity(LABEL_ZONE, {"app": "db"}, weight=20)
        .spread_constraint(1, LABEL_ZONE, {"app": "web"}, when_unsatisfiable="ScheduleAnyway")
        .host_port(8080)
        .obj()
    )
    assert pod.key == "shop/web" and pod.uid == "shop/web"
    assert pod.requests == {"cpu": 100, "memory": 128 << 20, "nvidia.com/gpu": 1}
    assert pod.priority == 5
    assert pod.host_ports == (("0.0.0.0", "TCP", 8080),)
    assert [t.operator for t in pod.spec.tolerations] == ["Equal", "Exists"]
    affinity = pod.spec.affinity
    assert affinity is not None and affinity.node_affinity is not None
    assert affinity.node_affinity.required is not None
    assert affinity.pod_anti_affinity is not None and len(affinity.pod_anti_affinity.required) == 1
    assert affinity.pod_affinity is not None and affinity.pod_affinity.preferred[0].weight == 20
    # An extended resource without a limit: upstream-style, the API server would refuse it.
    assert lenient_from_dict(to_dict(pod)) == pod
    with pytest.raises(ManifestError, match="Limit must be set for non overcommitable"):
        from_dict(to_dict(pod))


def test_limits_default_requests_and_init_containers_count() -> None:
    pod = make_pod("p").lim(cpu="1").init_req(cpu="500m", sidecar=True).init_req(cpu="2").obj()
    # Sidecar 500m runs beside the app's 1 CPU; the regular init container needs 2 + 0.5.
    assert pod.requests["cpu"] == 2500
    assert pod.spec.containers[0].limits == {"cpu": 1000}


def test_a_bound_running_pod() -> None:
    when = datetime(2024, 5, 1, tzinfo=UTC)
    pod = (
        make_pod("p")
        .node("n1")
        .phase("Running")
        .start_time(when)
        .nominated_node("n2")
        .owner("ReplicaSet", "rs")
        .terminating(when)
        .obj()
    )
    assert pod.node_name == "n1" and pod.status.phase == "Running"
    assert pod.start_time == when and pod.nominated_node_name == "n2"
    assert pod.metadata.controller_ref is not None
    assert pod.deletion_timestamp == when


def test_a_node_with_capacity_zone_and_taints() -> None:
    node = (
        make_node("n1")
        .capacity(cpu="4", memory="8Gi")
        .zone("a", region="r")
        .taint("gpu", "true", effect="NoExecute")
        .image("nginx:1.27", 100)
        .obj()
    )
    assert node.labels == {
        LABEL_HOSTNAME: "n1",
        LABEL_ZONE: "a",
        "topology.kubernetes.io/region": "r",
    }
    assert node.allocatable == {"cpu": 4000, "memory": 8 * GI, "pods": 110}
    assert node.taints[0].to_string() == "gpu=true:NoExecute"
    assert from_dict(to_dict(node)) == node


def test_allocatable_apart_from_capacity() -> None:
    node = make_node("n").capacity(cpu="4", pods=10).allocatable(cpu="3500m", pods=10).obj()
    assert node.status.capacity["cpu"] == 4000 and node.allocatable == {"cpu": 3500, "pods": 10}


def test_namespace_and_pdb() -> None:
    ns = make_namespace("team-a").label("team", "a").obj()
    assert ns.labels == {"kubernetes.io/metadata.name": "team-a", "team": "a"}
    pdb = make_pdb("budget").namespace("team-a").selector(app="web").min_available(1).obj()
    assert pdb.namespace == "team-a" and pdb.min_available == 1
    assert pdb.selector is not None and pdb.selector.matches({"app": "web"})
    assert from_dict(to_dict(pdb)) == pdb


def test_pod_level_requests_and_limits() -> None:
    pod = make_pod("p").req(cpu="100m").pod_req(cpu="2").pod_lim(cpu="3", memory="1Gi").obj()
    assert pod.spec.resources is not None
    assert pod.spec.resources.requests == {"cpu": 2000, "memory": 1 << 30}
    assert pod.spec.resources.limits == {"cpu": 3000, "memory": 1 << 30}
    assert pod.requests == {"cpu": 2000, "memory": 1 << 30}
    assert from_dict(to_dict(pod)) == pod
