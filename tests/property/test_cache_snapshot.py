"""After any sequence of cache operations, the incrementally updated snapshot equals a snapshot
built from scratch: same nodes, pods, requested sums, ports, image states, side lists, PVCs."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from schedframe.cache import Cache, Snapshot
from schedframe.framework import NodeInfo
from schedframe.objects import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    Node,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    PodSpec,
    Volume,
)

NODE_NAMES = [f"node-{i}" for i in range(6)]
ZONES = [None, "z0", "z1", "z2"]
# One size per image name, as the same image has the same size everywhere. "nginx" and
# "nginx:latest" normalise to the same name.
IMAGES = {
    "nginx": 10,
    "nginx:latest": 10,
    "redis:7": 20,
    "busybox@sha256:abc": 5,
    "registry.k8s.io/pause:3.9": 1,
}
CLAIMS = [None, "c1", "c2"]

_TERM = PodAffinityTerm(
    label_selector=LabelSelector(match_labels={"app": "x"}), topology_key="zone"
)


def make_node(name: str, zone: str | None, images: list[str], cpu: int) -> Node:
    labels = (
        {"topology.kubernetes.io/region": "r", "topology.kubernetes.io/zone": zone} if zone else {}
    )
    return Node(
        metadata=ObjectMeta(name=name, uid=name, labels=labels),
        status=NodeStatus(
            allocatable={"cpu": cpu, "pods": 110},
            images=tuple(ContainerImage(names=(i,), size_bytes=IMAGES[i]) for i in images),
        ),
    )


pod_shapes = st.fixed_dictionaries(
    {
        "cpu": st.integers(0, 500),
        "memory": st.integers(0, 1000),
        "host_port": st.booleans(),
        "affinity": st.booleans(),
        "anti_affinity": st.booleans(),
        "claim": st.sampled_from(CLAIMS),
    }
)


def make_pod(uid: str, node: str, shape: dict[str, object]) -> Pod:
    requests = {k: v for k in ("cpu", "memory") if isinstance(v := shape[k], int) and v}
    # A host port of its own: HostPortInfo is a set (as upstream), so two pods sharing a port
    # on one node would free it for both when one leaves; kubelets never let that happen.
    host_port = 10000 + int(uid.removeprefix("pod-"))
    ports = (ContainerPort(container_port=80, host_port=host_port),) if shape["host_port"] else ()
    affinity = None
    if shape["affinity"] or shape["anti_affinity"]:
        affinity = Affinity(
            pod_affinity=PodAffinity(required=(_TERM,)) if shape["affinity"] else None,
            pod_anti_affinity=PodAntiAffinity(required=(_TERM,))
            if shape["anti_affinity"]
            else None,
        )
    claim = shape["claim"]
    return Pod(
        metadata=ObjectMeta(name=uid, namespace="ns", uid=uid, labels={"app": "x"}),
        spec=PodSpec(
            node_name=node,
            containers=(Container(name="c", requests=requests, ports=ports),),
            affinity=affinity,
            volumes=(Volume(name="v", persistent_volume_claim=claim),)
            if isinstance(claim, str)
            else (),
        ),
    )


def content(info: NodeInfo) -> dict[str, object]:
    return {
        "node": info.node,
        "pods": sorted(p.pod.uid for p in info.pods),
        "affinity": sorted(p.pod.uid for p in info.pods_with_affinity),
        "anti_affinity": sorted(p.pod.uid for p in info.pods_with_required_anti_affinity),
        "requested": {k: v for k, v in info.requested.items() if v},
        "non_zero_requested": {k: v for k, v in info.non_zero_requested.items() if v},
        "used_ports": sorted(info.used_ports),
        "allocatable": dict(info.allocatable),
        "image_states": dict(info.image_states),
        "pvc_ref_counts": dict(info.pvc_ref_counts),
    }


class CacheMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, Pod] = {}
        self.assumed: set[str] = set()
        self.uids = (f"pod-{i}" for i in itertools.count())

    # -- nodes -----------------------------------------------------------------------------

    @rule(
        name=st.sampled_from(NODE_NAMES),
        zone=st.sampled_from(ZONES),
        images=st.lists(st.sampled_from(sorted(IMAGES)), max_size=3),
        cpu=st.integers(1000, 4000),
    )
    def add_node(self, name: str, zone: str | None, images: list[str], cpu: int) -> None:
        if name in self.nodes:
            return
        node = make_node(name, zone, images, cpu)
        self.cache.add_node(node)
        self.nodes[name] = node

    @precondition(lambda self: self.nodes)
    @rule(
        data=st.data(),
        zone=st.sampled_from(ZONES),
        images=st.lists(st.sampled_from(sorted(IMAGES)), max_size=3),
        cpu=st.integers(1000, 4000),
    )
    def update_node(
        self, data: st.DataObject, zone: str | None, images: list[str], cpu: int
    ) -> None:
        name = data.draw(st.sampled_from(sorted(self.nodes)))
        new = make_node(name, zone, images, cpu)
        self.cache.update_node(self.nodes[name], new)
        self.nodes[name] = new

    @precondition(lambda self: self.nodes)
    @rule(data=st.data())
    def remove_node(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.nodes)))
        self.cache.remove_node(self.nodes.pop(name))

    # -- pods ------------------------------------------------------------------------------

    @rule(node=st.sampled_from(NODE_NAMES), shape=pod_shapes)
    def add_bound_pod(self, node: str, shape: dict[str, object]) -> None:
        pod = make_pod(next(self.uids), node, shape)
        self.cache.add_pod(pod)
        self.pods[pod.uid] = pod

    @rule(node=st.sampled_from(NODE_NAMES), shape=pod_shapes)
    def assume_pod(self, node: str, shape: dict[str, object]) -> None:
        pod = make_pod(next(self.uids), node, shape)
        self.cache.assume_pod(pod)
        self.pods[pod.uid] = pod
        self.assumed.add(pod.uid)

    @precondition(lambda self: self.assumed)
    @rule(data=st.data(), elsewhere=st.sampled_from([None, *NODE_NAMES]))
    def confirm_assumed(self, data: st.DataObject, elsewhere: str | None) -> None:
        uid = data.draw(st.sampled_from(sorted(self.assumed)))
        pod = self.pods[uid]
        if elsewhere is not None:
            pod = pod.with_node_name(elsewhere)  # bound somewhere else than assumed
        self.cache.add_pod(pod)
        self.pods[uid] = pod
        self.assumed.discard(uid)

    @precondition(lambda self: self.assumed)
    @rule(data=st.data())
    def finish_binding(self, data: st.DataObject) -> None:
        uid = data.draw(st.sampled_from(sorted(self.assumed)))
        self.cache.finish_binding(self.pods[uid])

    @precondition(lambda self: self.assumed)
    @rule(data=st.data())
    def forget_pod(self, data: st.DataObject) -> None:
        uid = data.draw(st.sampled_from(sorted(self.assumed)))
        self.cache.forget_pod(self.pods.pop(uid))
        self.assumed.discard(uid)

    @precondition(lambda self: len(self.pods) > len(self.assumed))
    @rule(data=st.data(), shape=pod_shapes)
    def update_pod(self, data: st.DataObject, shape: dict[str, object]) -> None:
        uid = data.draw(st.sampled_from(sorted(set(self.pods) - self.assumed)))
        old = self.pods[uid]
        new = make_pod(uid, old.node_name, shape)
        self.cache.update_pod(old, new)
        self.pods[uid] = new

    @precondition(lambda self: self.pods)
    @rule(data=st.data())
    def remove_pod(self, data: st.DataObject) -> None:
        uid = data.draw(st.sampled_from(sorted(self.pods)))
        self.cache.remove_pod(self.pods.pop(uid))
        self.assumed.discard(uid)

    # -- snapshots -------------------------------------------------------------------------

    @rule()
    def update_snapshot(self) -> None:
        self.cache.update_snapshot(self.snapshot)
        self.check_snapshot(self.snapshot)

    @invariant()
    def cache_counts_match_the_model(self) -> None:
        assert self.cache.pod_count() == len(self.pods)
        assert self.cache.dump().assumed_pods == self.assumed
        for uid, pod in self.pods.items():
            assert self.cache.get_pod(uid) is pod

    def teardown(self) -> None:
        self.update_snapshot()
        # A brand-new snapshot of the same cache agrees as well.
        fresh = Snapshot()
        self.cache.update_snapshot(fresh)
        self.check_snapshot(fresh)

    def check_snapshot(self, snapshot: Snapshot) -> None:
        expected = Snapshot.from_objects(self.nodes.values(), self.pods.values())
        got = {info.name: info for info in snapshot.list()}
        want = {info.name: info for info in expected.list()}
        assert set(got) == set(want) == set(self.nodes)
        for name, info in got.items():
            assert content(info) == content(want[name]), name
            assert snapshot.get(name) is info

        # Rebuilt by a fresh cache fed the same objects: same content again.
        rebuilt_cache = Cache()
        for node in self.nodes.values():
            rebuilt_cache.add_node(node)
        for uid, pod in self.pods.items():
            if uid in self.assumed:
                rebuilt_cache.assume_pod(pod)
            else:
                rebuilt_cache.add_pod(pod)
        rebuilt = Snapshot()
        rebuilt_cache.update_snapshot(rebuilt)
        for info in rebuilt.list():
            assert content(info) == content(got[info.name]), info.name

        # Order: the cache's node tree (zones interleaved); side lists follow it.
        order = [info.name for info in snapshot.list()]
        assert order == self.cache._tree.list()
        assert [i.name for i in snapshot.have_pods_with_affinity_list()] == [
            n for n in order if got[n].pods_with_affinity
        ]
        assert [i.name for i in snapshot.have_pods_with_required_anti_affinity_list()] == [
            n for n in order if got[n].pods_with_required_anti_affinity
        ]
        for claim in CLAIMS[1:]:
            key = f"ns/{claim}"
            assert snapshot.is_pvc_used_by_pods(key) == expected.is_pvc_used_by_pods(key)

        # No node is charged more than the pods the model placed on it.
        for name, info in got.items():
            placed: dict[str, int] = {}
            for pod in self.pods.values():
                if pod.node_name == name:
                    for resource, amount in pod.requests.items():
                        placed[resource] = placed.get(resource, 0) + amount
            for resource, amount in info.requested.items():
                assert amount <= placed.get(resource, 0), (name, resource)
            assert {k: v for k, v in info.requested.items() if v} == {
                k: v for k, v in placed.items() if v
            }


CacheMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
TestCacheSnapshotMatchesRebuild = pytest.mark.property(CacheMachine.TestCase)
