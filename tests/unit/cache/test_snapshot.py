"""Snapshot built directly (upstream ``NewSnapshot``) and its listers."""

from __future__ import annotations

import pytest

from schedframe.cache import Snapshot
from schedframe.framework import ImageStateSummary
from schedframe.objects import (
    Affinity,
    Container,
    ContainerImage,
    Node,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodAffinityTerm,
    PodAntiAffinity,
    PodSpec,
    Volume,
)


def node(name: str, *images: str) -> Node:
    return Node(
        metadata=ObjectMeta(name=name),
        status=NodeStatus(images=tuple(ContainerImage(names=(i,), size_bytes=7) for i in images)),
    )


def pod(name: str, node_name: str, *, claim: str | None = None, anti: bool = False) -> Pod:
    affinity = (
        Affinity(pod_anti_affinity=PodAntiAffinity(required=(PodAffinityTerm(topology_key="k"),)))
        if anti
        else None
    )
    return Pod(
        metadata=ObjectMeta(name=name, namespace="ns", uid=name),
        spec=PodSpec(
            node_name=node_name,
            containers=(Container(name="c", requests={"cpu": 100}),),
            volumes=(Volume(name="v", persistent_volume_claim=claim),) if claim else (),
            affinity=affinity,
        ),
    )


def test_from_objects_places_pods_and_counts_images() -> None:
    snap = Snapshot.from_objects(
        [node("a", "nginx", "redis:7"), node("b", "nginx:latest")],
        [pod("p1", "a", claim="c1"), pod("p2", "b", anti=True), pod("orphan", "gone")],
    )
    assert [i.name for i in snap.list()] == ["a", "b"]
    assert snap.num_nodes() == len(snap) == 2
    assert snap.node_infos is snap
    assert [p.pod.uid for p in snap.get("a").pods] == ["p1"]
    assert snap.get("a").requested == {"cpu": 100}
    assert snap.get("a").image_states == {
        "nginx:latest": ImageStateSummary(size=7, num_nodes=2),
        "redis:7": ImageStateSummary(size=7, num_nodes=1),
    }
    assert [i.name for i in snap.have_pods_with_affinity_list()] == ["b"]
    assert [i.name for i in snap.have_pods_with_required_anti_affinity_list()] == ["b"]
    assert snap.is_pvc_used_by_pods("ns/c1")
    assert not snap.is_pvc_used_by_pods("ns/c2")
    with pytest.raises(KeyError, match="nodeinfo not found for node name 'gone'"):
        snap.get("gone")


def test_set_node_infos_replaces_everything() -> None:
    snap = Snapshot.from_objects([node("a")], [pod("p1", "a", claim="c1")])
    other = Snapshot.from_objects([node("b")])
    snap.set_node_infos(list(other.list()))
    assert [i.name for i in snap.list()] == ["b"]
    assert not snap.is_pvc_used_by_pods("ns/c1")
    with pytest.raises(KeyError):
        snap.get("a")
