"""Opportunistic batching in the scheduling cycle (upstream schedule_one.go + batch.go)."""

from __future__ import annotations

from collections.abc import Mapping

from schedframe.backends import MemoryBackend
from schedframe.config import load_config
from schedframe.objects import Container, ContainerPort, Node, NodeStatus, ObjectMeta, Pod, PodSpec
from schedframe.scheduler import Scheduler, VirtualClock

#: A profile whose every PreFilter, Filter, PreScore and Score plugin signs (1.35: the
#: DRAExtendedResource gate is off, so NodeResourcesFit signs).
SIGNING_PLUGINS = ("PrioritySort", "DefaultBinder", "NodeName", "NodePorts", "NodeResourcesFit")


def node(name: str, milli_cpu: int) -> Node:
    alloc = {"cpu": milli_cpu, "memory": 64 << 30, "pods": 110}
    return Node(
        metadata=ObjectMeta(name=name),
        status=NodeStatus(capacity=dict(alloc), allocatable=dict(alloc)),
    )


def pod(name: str, milli_cpu: int, host_port: int = 0) -> Pod:
    ports = (ContainerPort(container_port=80, host_port=host_port),) if host_port else ()
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", uid=f"default/{name}"),
        spec=PodSpec(containers=(Container(name="c", requests={"cpu": milli_cpu}, ports=ports),)),
    )


def scheduler(
    nodes: list[Node],
    *,
    batching: bool,
    version: str = "1.35",
    plugins: tuple[str, ...] = SIGNING_PLUGINS,
    seed: int = 0,
) -> tuple[Scheduler, MemoryBackend]:
    profile: Mapping[str, object] = {
        "schedulerName": "default-scheduler",
        "plugins": {
            "multiPoint": {
                "enabled": [{"name": n} for n in plugins],
                "disabled": [{"name": "*"}],
            }
        },
    }
    cfg = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [profile],
        },
        feature_gates={"OpportunisticBatching": batching},
        emulated_version=version,
    )
    clock = VirtualClock()
    backend = MemoryBackend(nodes, clock=clock)
    sched = Scheduler.from_config(cfg, backend, clock=clock, seed=seed, deterministic=True)
    return sched, backend


def placements(sched: Scheduler) -> dict[str, str]:
    return {r.pod.name: r.node_name for r in sched.results.values() if r.pod is not None}


def run(pods: list[Pod], nodes: list[Node], **kw: object) -> Scheduler:
    sched, backend = scheduler(nodes, **kw)  # type: ignore[arg-type]
    for p in pods:
        backend.create(p)
    sched.run_until_idle()
    return sched


NODES = [node("n1", 4000), node("n2", 8000), node("n3", 6000), node("n4", 2000)]


def test_one_pod_per_node_pods_reuse_the_first_ranking() -> None:
    pods = [pod(f"p{i}", 1000, host_port=8080) for i in range(4)]
    on = run(pods, NODES, batching=True)
    off = run(pods, NODES, batching=False)
    # LeastAllocated: the emptiest node first; the host port keeps one pod per node.
    assert placements(on) == placements(off) == {"p0": "n2", "p1": "n3", "p2": "n1", "p3": "n4"}
    batch = on.algorithm.batches["default-scheduler"]
    assert batch.batched_pods == 3
    assert dict(batch.attempts) == {"no_hint": 1, "hint_used": 3}
    assert off.algorithm.batches == {}


def test_pods_that_fit_again_on_the_same_node_get_no_hint() -> None:
    pods = [pod(f"p{i}", 100) for i in range(3)]
    on = run(pods, NODES, batching=True)
    batch = on.algorithm.batches["default-scheduler"]
    assert batch.batched_pods == 0
    assert batch.flushes["node_not_full"] == 2
    assert placements(on) == placements(run(pods, NODES, batching=False))


def test_a_different_signature_drops_the_kept_ranking() -> None:
    pods = [pod("p0", 1000, host_port=8080), pod("p1", 2000, host_port=8080)]
    on = run(pods, NODES, batching=True)
    batch = on.algorithm.batches["default-scheduler"]
    assert batch.batched_pods == 0
    assert batch.flushes["pod_incompatible"] == 1


def test_an_unschedulable_pod_in_between_drops_the_kept_ranking() -> None:
    pods = [
        pod("p0", 1000, host_port=8080),
        pod("big", 100_000),
        pod("p1", 1000, host_port=8080),
    ]
    on = run(pods, NODES, batching=True)
    assert placements(on)["big"] == ""
    batch = on.algorithm.batches["default-scheduler"]
    # The failed pod stored nothing: the next pod's cycle is not the stored one's successor.
    assert batch.flushes["pod_skipped"] == 1
    assert batch.batched_pods == 0


def test_a_profile_with_an_unsigned_plugin_never_reuses() -> None:
    # The default profile: PodTopologySpread's System defaults refuse every pod (1.35), and
    # InterPodAffinity, NodeAffinity and others do not sign here.
    sched, _ = scheduler(NODES, batching=True, plugins=(*SIGNING_PLUGINS, "NodeAffinity"))
    assert not sched.profiles["default-scheduler"].signatures_enabled
    default, _ = scheduler(NODES, batching=True, plugins=SIGNING_PLUGINS)
    assert default.profiles["default-scheduler"].signatures_enabled
    pods = [pod(f"p{i}", 1000, host_port=8080) for i in range(3)]
    unsigned = run(pods, NODES, batching=True, plugins=(*SIGNING_PLUGINS, "NodeAffinity"))
    assert unsigned.algorithm.batches["default-scheduler"].batched_pods == 0


def test_emulated_versions_follow_the_releases() -> None:
    pods = [pod(f"p{i}", 1000, host_port=8080) for i in range(4)]
    # 1.34: the gate did not exist (off): no batch at all.
    old = run(pods, NODES, batching=False, version="1.34")
    assert old.algorithm.batches == {}
    # 1.36: DRAExtendedResource is on, so NodeResourcesFit refuses to sign: no reuse.
    new = run(pods, NODES, batching=True, version="1.36")
    batch = new.algorithm.batches["default-scheduler"]
    assert batch.batched_pods == 0
    assert placements(new) == placements(old)
