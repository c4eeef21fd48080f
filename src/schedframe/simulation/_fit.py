"""Will it fit? Schedule pods, a gang or a whole workload in a fork of the cluster and report
placements, the victims preemption would evict (with their PodDisruptionBudgets) and the
pods left pending. The cluster itself is never changed."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from schedframe.hooks import impl
from schedframe.objects import (
    DaemonSet,
    Deployment,
    Job,
    Node,
    Pod,
    PodDisruptionBudget,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
)

if TYPE_CHECKING:
    from schedframe.config import KubeSchedulerConfiguration
    from schedframe.runtime import Registry
    from schedframe.scheduler import Scheduler

__all__ = ["FitResult", "Victim", "cluster_scheduler", "expand_workload", "will_it_fit"]


@attrs.frozen(kw_only=True)
class Victim:
    """A running pod preemption would evict.

    Attributes:
        pod: ``namespace/name``.
        node: where it runs.
        by: the pod it makes room for.
        pdbs: ``namespace/name`` of the PodDisruptionBudgets that select it.
        violates_pdb: True when one of them allowed no more disruptions (preemption
            evicts PDB-protected pods only when it has no other choice, as upstream).
    """

    pod: str
    node: str
    by: str
    pdbs: tuple[str, ...] = ()
    violates_pdb: bool = False


@attrs.frozen(kw_only=True)
class FitResult:
    """The answer to "will it fit?".

    Attributes:
        placements: ``namespace/name`` -> node of every asked pod that was bound.
        victims: the pods preemption evicted to make room, in order.
        pending: ``namespace/name`` -> the last failure message of every asked pod left
            unbound.
    """

    placements: Mapping[str, str]
    victims: tuple[Victim, ...] = ()
    pending: Mapping[str, str] = attrs.field(factory=dict)

    @property
    def fits(self) -> bool:
        """Every asked pod was bound (a gang fits only whole)."""
        return not self.pending

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        return {
            "fits": self.fits,
            "placements": dict(sorted(self.placements.items())),
            "victims": [
                {
                    "pod": v.pod,
                    "node": v.node,
                    "by": v.by,
                    "pdbs": list(v.pdbs),
                    "violatesPdb": v.violates_pdb,
                }
                for v in self.victims
            ],
            "pending": dict(sorted(self.pending.items())),
        }

    def to_text(self) -> str:
        """A verdict line, then placements, victims and pending pods."""
        from schedframe.simulation._table import format_table

        total = len(self.placements) + len(self.pending)
        verdict = "fits" if self.fits else "does NOT fit"
        lines = [f"{verdict}: {len(self.placements)}/{total} pod(s) placed"]
        if self.placements:
            rows = [[p, n] for p, n in sorted(self.placements.items())]
            lines += ["", format_table(["POD", "NODE"], rows)]
        if self.victims:
            rows = [
                [v.pod, v.node, v.by, ",".join(v.pdbs) or "-", "yes" if v.violates_pdb else "no"]
                for v in self.victims
            ]
            lines += [
                "",
                "Victims:",
                format_table(["VICTIM", "NODE", "FOR", "PDBS", "VIOLATES"], rows),
            ]
        if self.pending:
            lines += ["", "Pending:"]
            lines += [f"  {p}: {why}" for p, why in sorted(self.pending.items())]
        return "\n".join(lines)


def expand_workload(objects: Iterable[object], nodes: Sequence[Node] = ()) -> list[Pod]:
    """The pods of ``objects``: Pods as they are; Deployments, ReplicaSets,
    ReplicationControllers, StatefulSets and Jobs as their controllers would create them
    (all at once); DaemonSets one per node of ``nodes`` that admits them."""
    from schedframe.simulation._controllers import controller_pods, daemon_set_pods

    pods: list[Pod] = []
    for obj in objects:
        if isinstance(obj, Pod):
            pods.append(obj)
        elif isinstance(obj, Deployment | ReplicaSet | ReplicationController | StatefulSet | Job):
            pods.extend(controller_pods(obj)[1])
        elif isinstance(obj, DaemonSet):
            pods.extend(daemon_set_pods(obj, nodes))
    return pods


def cluster_scheduler(
    cluster: Iterable[object],
    *,
    config: KubeSchedulerConfiguration
    | str
    | os.PathLike[str]
    | Mapping[str, object]
    | None = None,
    registry: Registry | None = None,
    seed: int = 0,
) -> Scheduler:
    """A deterministic scheduler on an in-memory copy of ``cluster``, run until idle: the
    cluster's current state, its pending pods scheduled (or not) as they would be.

    Workload objects of the cluster are stored (default spreading reads them); their pods
    are expected among the cluster's Pods, as in a dump.
    """
    from schedframe.backends import STORED_KINDS, MemoryBackend
    from schedframe.config import KubeSchedulerConfiguration, load_config
    from schedframe.scheduler import Scheduler, VirtualClock

    cfg = config if isinstance(config, KubeSchedulerConfiguration) else load_config(config)
    clock = VirtualClock()
    kept = [
        o
        for o in cluster
        if type(o).__name__ in STORED_KINDS
        and not (isinstance(o, Pod) and o.status.phase in ("Succeeded", "Failed"))
    ]
    backend = MemoryBackend(kept, clock=clock)
    sched = Scheduler(cfg, backend, registry=registry, clock=clock, seed=seed, deterministic=True)
    sched.run_until_idle()
    return sched


class _Watcher:
    def __init__(self) -> None:
        self.messages: dict[str, str] = {}
        self.victims: list[tuple[Pod, str, Pod]] = []

    @impl
    def schedframe_pod_unschedulable(self, pod: Pod, message: str) -> None:
        self.messages[pod.key] = message

    @impl
    def schedframe_scheduling_error(self, pod: Pod, message: str) -> None:
        self.messages[pod.key] = message

    @impl
    def schedframe_preemption(self, preemptor: Pod, node_name: str, victims: Sequence[Pod]) -> None:
        self.victims.extend((v, node_name, preemptor) for v in victims)


def will_it_fit(
    pods: Iterable[object],
    scheduler: Scheduler,
    *,
    commit: bool = False,
) -> FitResult:
    """Schedule ``pods`` (Pods or workload objects, see :func:`expand_workload`) in a fork
    of ``scheduler``'s cluster and report what happened. The cluster is untouched unless
    ``commit`` is true.

    Args:
        pods: what to ask about; created in order, then the fork runs until idle.
        scheduler: the live scheduler (its current cluster and queue state is what is
            asked about); see :func:`cluster_scheduler` to start from manifests.
        commit: apply the fork's writes to the cluster afterwards.
    """
    from schedframe.backends import BackendFork
    from schedframe.hooks import plugin_manager

    watcher = _Watcher()
    pm = plugin_manager(load_entry_points=False)
    pm.register(watcher, name="schedframe-fit")
    fork = scheduler.fork(hooks=pm)
    backend = fork.backend
    assert isinstance(backend, BackendFork)
    nodes = [n for n in backend.list("Node") if isinstance(n, Node)]
    asked = expand_workload(pods, nodes)
    pdbs = [p for p in backend.list("PodDisruptionBudget") if isinstance(p, PodDisruptionBudget)]
    try:
        for pod in asked:
            backend.create(pod)
        fork.run_until_idle()
    finally:
        fork.stop()
    placements: dict[str, str] = {}
    pending: dict[str, str] = {}
    for pod in asked:
        stored = backend.get("Pod", pod.name, pod.namespace)
        if isinstance(stored, Pod) and stored.spec.node_name:
            placements[pod.key] = stored.spec.node_name
        else:
            pending[pod.key] = watcher.messages.get(pod.key, "never attempted")
    victims = []
    for victim, node, by in watcher.victims:
        matching = [
            p
            for p in pdbs
            if p.selector is not None
            and p.namespace == victim.namespace
            and p.selector.matches(victim.labels)
        ]
        victims.append(
            Victim(
                pod=victim.key,
                node=node,
                by=by.key,
                pdbs=tuple(f"{p.namespace}/{p.name}" for p in matching),
                violates_pdb=any(p.disruptions_allowed < 1 for p in matching),
            )
        )
    if commit:
        backend.commit()
    else:
        backend.discard()
    return FitResult(placements=placements, victims=tuple(victims), pending=pending)
