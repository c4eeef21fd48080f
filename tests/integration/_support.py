"""Builders for the end-to-end scheduler tests: real in-tree plugins through entry points."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from schedframe.backends import MemoryBackend, WatchEvent
from schedframe.config import KubeSchedulerConfiguration, load_config
from schedframe.errors import PluginError
from schedframe.objects import (
    Container,
    Node,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodSpec,
)
from schedframe.runtime import Registry
from schedframe.scheduler import Scheduler

GI = 1 << 30
MI = 1 << 20


@functools.cache
def missing_default_plugins() -> tuple[str, ...]:
    """Default plugins whose entry point cannot be loaded yet (work in progress upstream-side)."""
    reg = Registry.discover()
    missing = []
    for name in (
        "SchedulingGates",
        "PrioritySort",
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DefaultPreemption",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "DefaultBinder",
        "DynamicResources",
        "NodeDeclaredFeatures",
    ):
        try:
            reg.load(name)
        except PluginError:
            missing.append(name)
    return tuple(missing)


def profile(
    name: str = "default-scheduler",
    *,
    plugins: Mapping[str, Any] | None = None,
    plugin_config: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """A profile dict on top of the default plugins (unloadable defaults disabled)."""
    plugins = dict(plugins or {})
    multi = dict(plugins.get("multiPoint", {}))
    disabled = list(multi.get("disabled", []))
    disabled += [{"name": n} for n in missing_default_plugins()]
    if disabled:
        multi["disabled"] = disabled
        plugins["multiPoint"] = multi
    out: dict[str, Any] = {"schedulerName": name, "plugins": plugins}
    if plugin_config:
        out["pluginConfig"] = list(plugin_config)
    return out


def config(*profiles: Mapping[str, Any], **top: Any) -> KubeSchedulerConfiguration:
    return load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": list(profiles) or [profile()],
            **top,
        }
    )


def make_node(
    name: str,
    *,
    cpu: int = 4000,
    memory: int = 16 * GI,
    pods: int = 110,
    labels: Mapping[str, str] | None = None,
) -> Node:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    return Node(
        metadata=ObjectMeta(name=name, labels=dict(labels or {})),
        status=NodeStatus(capacity=dict(alloc), allocatable=dict(alloc)),
    )


def make_pod(
    name: str,
    *,
    cpu: int = 100,
    memory: int = 128 * MI,
    scheduler: str = "default-scheduler",
    node_name: str = "",
    labels: Mapping[str, str] | None = None,
    priority: int | None = None,
    namespace: str = "default",
) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace=namespace, labels=dict(labels or {})),
        spec=PodSpec(
            scheduler_name=scheduler,
            node_name=node_name,
            priority=priority,
            containers=(Container(name="c", requests={"cpu": cpu, "memory": memory}),),
        ),
    )


def new_scheduler(
    cfg: KubeSchedulerConfiguration | None = None,
    objects: Iterable[object] = (),
    *,
    registry: Registry | None = None,
    deterministic: bool = True,
    seed: int = 0,
    **kwargs: Any,
) -> tuple[Scheduler, MemoryBackend]:
    from schedframe.scheduler import VirtualClock

    clock = VirtualClock() if deterministic else None
    backend = MemoryBackend(objects, clock=clock)
    sched = Scheduler.from_config(
        cfg if cfg is not None else config(),
        backend,
        registry=registry,
        clock=clock,
        seed=seed,
        deterministic=deterministic,
        **kwargs,
    )
    return sched, backend


class BindingLog:
    """Counts, per pod uid, the watch events that bound it (unassigned -> assigned)."""

    def __init__(self, backend: MemoryBackend) -> None:
        self.bindings: dict[str, list[str]] = {}
        self.sub = backend.subscribe(self)

    def __call__(self, event: WatchEvent) -> None:
        obj, old = event.obj, event.old
        if not isinstance(obj, Pod) or not obj.spec.node_name:
            return
        if event.type == "ADDED" or (isinstance(old, Pod) and not old.spec.node_name):
            self.bindings.setdefault(obj.uid, []).append(obj.spec.node_name)

    def double_bound(self) -> dict[str, list[str]]:
        return {uid: nodes for uid, nodes in self.bindings.items() if len(nodes) > 1}


def pods_of(backend: MemoryBackend) -> list[Pod]:
    return [p for p in backend.list("Pod") if isinstance(p, Pod)]


def nodes_of(backend: MemoryBackend) -> list[Node]:
    return [n for n in backend.list("Node") if isinstance(n, Node)]


def over_capacity(backend: MemoryBackend) -> dict[str, dict[str, int]]:
    """Nodes whose bound pods request more than allocatable, with the offending totals."""
    used: dict[str, dict[str, int]] = {}
    for pod in pods_of(backend):
        if pod.spec.node_name:
            acc = used.setdefault(pod.spec.node_name, {})
            for res, amount in pod.requests.items():
                acc[res] = acc.get(res, 0) + amount
            acc["pods"] = acc.get("pods", 0) + 1
    bad: dict[str, dict[str, int]] = {}
    for node in nodes_of(backend):
        totals = used.get(node.name, {})
        if any(totals.get(r, 0) > node.status.allocatable.get(r, 0) for r in totals):
            bad[node.name] = totals
    return bad
