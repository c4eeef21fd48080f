"""Why is my pod pending, and why did it land there? One pod, every node, every plugin.

:func:`explain` runs a profile's plugins for one pod against a cluster built from objects, the
way one scheduling attempt does (PreFilter, Filter, PostFilter, PreScore, Score, NormalizeScore,
weights, selectHost), and returns the whole story as data::

    from schedframe.explain import explain
    from schedframe.objects import Node, Pod, load_manifests

    cluster = load_manifests("examples/taints-affinity/cluster.yaml")
    workload = load_manifests("examples/taints-affinity/workload.yaml")
    stuck = next(p for p in workload if isinstance(p, Pod) and p.name == "stuck")
    result = explain(
        stuck,
        nodes=[o for o in cluster if isinstance(o, Node)],
        pods=[o for o in cluster if isinstance(o, Pod)],
    )
    result.chosen                    # None: it stays pending
    result.message                   # "0/5 nodes are available: 1 node(s) were unschedulable, ..."
    result.node("gpu-1").why_not     # "TaintToleration (UnschedulableAndUnresolvable): ..."
    result.to_dict()                 # JSON-ready

Differences from a scheduling attempt, on purpose:

* **Every node is evaluated.** The scheduler stops filtering once it has found
  ``percentageOfNodesToScore`` worth of feasible nodes (and, with a nominated node that fits,
  after that one node); explain never samples, so it shows every node's verdict and scores.
  When nothing fits, the scheduler evaluates every node too, so the ``FitError`` message is
  upstream's, byte for byte.
* **Nothing is written.** PostFilter (preemption) runs against a binder that only records
  what it would have done: the victims and the nominated node are reported, no pod is evicted.
* Ties between equal totals are broken as upstream ``selectHost`` does, with a
  ``random.Random(seed)`` source (see :func:`schedframe.scheduler.select_host`).
"""

from __future__ import annotations

import os
import random
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs

from schedframe import errors
from schedframe import framework as fw
from schedframe.errors import ConfigError, FieldIssue
from schedframe.framework import (
    Code,
    CycleState,
    Diagnosis,
    FilterDetailsPlugin,
    FitError,
    NodeInfo,
    PodInfo,
    Status,
)

if typing.TYPE_CHECKING:
    from schedframe.cache import Snapshot
    from schedframe.config import KubeSchedulerConfiguration
    from schedframe.objects import (
        Namespace,
        Node,
        ObjectReference,
        Pod,
        PodCondition,
        PodDisruptionBudget,
        PriorityClass,
    )
    from schedframe.runtime import Framework, Registry

__all__ = [
    "Explanation",
    "NodeExplanation",
    "PluginScore",
    "PostFilterOutcome",
    "PreFilterOutcome",
    "explain",
    "node_zone",
]

_ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


def node_zone(node: Node) -> str:
    """The node's zone label (``topology.kubernetes.io/zone``, or the deprecated beta one)."""
    labels = node.metadata.labels
    for key in _ZONE_LABELS:
        if key in labels:
            return labels[key]
    return ""


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class PluginScore:
    """One Score plugin's verdict on one feasible node.

    Attributes:
        plugin: the Score plugin.
        weight: its weight in the profile.
        raw: what its ``score`` returned.
        normalized: after ``normalize_score`` (equal to ``raw`` when it has none).
    """

    plugin: str
    weight: int
    raw: int
    normalized: int

    @property
    def weighted(self) -> int:
        """``normalized * weight``: what this plugin adds to the node's total."""
        return self.normalized * self.weight


@attrs.frozen(kw_only=True)
class NodeExplanation:
    """One node's part in the attempt.

    Attributes:
        name: the node.
        zone: its zone label (``""`` when it has none).
        feasible: it passed PreFilter and every Filter plugin.
        code: ``"Success"`` when feasible; otherwise the rejecting status code as upstream
            spells it (``Unschedulable``, ``UnschedulableAndUnresolvable``, ``Error``).
        plugin: the plugin that rejected the node (``""`` when feasible).
        reasons: the rejecting status's reasons (upstream's exact strings).
        cut_by_pre_filter: the node was left out by a PreFilter result (or PreFilter rejected
            the pod outright), so no Filter plugin ran on it.
        scores: every Score plugin's score, for feasible nodes (empty otherwise).
        total: the weighted total, for feasible nodes.
        rank: 1 for the best total, for feasible nodes (ties share a rank).
        chosen: this is the node the pod would be bound to.
        why_not: for every node but the chosen one, one line saying why it lost.
        details: what the rejecting plugin adds about this node
            (:class:`~schedframe.framework.FilterDetailsPlugin`; DynamicResources: which
            device requests failed here and why).
    """

    name: str
    zone: str = ""
    feasible: bool = False
    code: str = "Success"
    plugin: str = ""
    reasons: tuple[str, ...] = ()
    cut_by_pre_filter: bool = False
    scores: tuple[PluginScore, ...] = ()
    total: int | None = None
    rank: int | None = None
    chosen: bool = False
    why_not: str = ""
    details: tuple[str, ...] = ()

    def score(self, plugin: str) -> PluginScore | None:
        """This node's score from ``plugin``, if that plugin scored it."""
        for s in self.scores:
            if s.plugin == plugin:
                return s
        return None

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        out: dict[str, object] = {
            "name": self.name,
            "zone": self.zone,
            "feasible": self.feasible,
            "code": self.code,
            "plugin": self.plugin,
            "reasons": list(self.reasons),
            "cutByPreFilter": self.cut_by_pre_filter,
        }
        if self.feasible:
            out["scores"] = [
                {
                    "plugin": s.plugin,
                    "weight": s.weight,
                    "raw": s.raw,
                    "normalized": s.normalized,
                    "weighted": s.weighted,
                }
                for s in self.scores
            ]
            out["total"] = self.total
            out["rank"] = self.rank
        out["chosen"] = self.chosen
        out["whyNot"] = self.why_not
        if self.details:
            out["details"] = list(self.details)
        return out


@attrs.frozen(kw_only=True)
class PreFilterOutcome:
    """What PreFilter decided before any node was looked at.

    Attributes:
        code: ``"Success"``, or the status that rejected the pod on every node.
        plugin: the rejecting plugin (``""`` on success).
        message: the rejecting status's message.
        narrowed_to: the node names the merged ``PreFilterResult`` allows, sorted; ``None``
            when every node may be considered.
        narrowed_by: the plugins whose ``PreFilterResult`` narrowed the nodes.
        skipped: plugins whose PreFilter returned Skip (their Filter does not run).
    """

    code: str = "Success"
    plugin: str = ""
    message: str = ""
    narrowed_to: tuple[str, ...] | None = None
    narrowed_by: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        return {
            "code": self.code,
            "plugin": self.plugin,
            "message": self.message,
            "narrowedTo": None if self.narrowed_to is None else list(self.narrowed_to),
            "narrowedBy": list(self.narrowed_by),
            "skipped": list(self.skipped),
        }


@attrs.frozen(kw_only=True)
class PostFilterOutcome:
    """What PostFilter (preemption) would do when no node fits; nothing is evicted.

    Attributes:
        code: the PostFilter status code (``"Success"`` when a plugin made room).
        plugin: the plugin that decided (``""`` when none did).
        message: its message (upstream appends it to the FitError message).
        nominated_node: the node the pod would be nominated to (``""`` for none).
        victims: ``namespace/name`` of the pods that would be evicted, in order.
    """

    code: str
    plugin: str = ""
    message: str = ""
    nominated_node: str = ""
    victims: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        return {
            "code": self.code,
            "plugin": self.plugin,
            "message": self.message,
            "nominatedNode": self.nominated_node,
            "victims": list(self.victims),
        }


@attrs.frozen(kw_only=True)
class Explanation:
    """The whole story of one pod's scheduling attempt, as returned by :func:`explain`.

    Attributes:
        pod: ``namespace/name`` of the pod.
        profile: the profile (``schedulerName``) that ran.
        seed: the seed of the tie-breaking random source.
        pre_filter: what PreFilter decided.
        nodes: every node, in the snapshot's (zone-interleaved) order.
        score_plugins: ``(plugin, weight)`` of every enabled Score plugin.
        skipped_score_plugins: Score plugins whose PreScore returned Skip.
        chosen: the node the pod would go to; ``None`` when it would stay pending.
        nominated_node: the pod's ``status.nominatedNodeName`` when it fit and was therefore
            taken before any other node (upstream's nominated-node shortcut); ``""`` otherwise.
        message: when ``chosen`` is ``None``, upstream's message for the failure (the
            ``FitError`` text ``0/N nodes are available: ...``, or the error); ``""`` otherwise.
        error: the first plugin error met, if any (an error fails the attempt upstream).
        post_filter: what PostFilter would do, when it ran.
    """

    pod: str
    profile: str
    seed: int
    pre_filter: PreFilterOutcome
    nodes: tuple[NodeExplanation, ...]
    score_plugins: tuple[tuple[str, int], ...] = ()
    skipped_score_plugins: tuple[str, ...] = ()
    chosen: str | None = None
    nominated_node: str = ""
    message: str = ""
    error: str = ""
    post_filter: PostFilterOutcome | None = None

    @property
    def num_nodes(self) -> int:
        """How many nodes the cluster has."""
        return len(self.nodes)

    @property
    def feasible(self) -> tuple[str, ...]:
        """Names of the nodes that passed filtering, best total first."""
        ranked = sorted(
            (n for n in self.nodes if n.feasible),
            key=lambda n: (n.rank if n.rank is not None else 0, not n.chosen),
        )
        return tuple(n.name for n in ranked)

    @property
    def schedulable(self) -> bool:
        """True when a node was chosen."""
        return self.chosen is not None

    def node(self, name: str) -> NodeExplanation:
        """One node's explanation; ``KeyError`` when the node is unknown."""
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def why_not(self) -> dict[str, str]:
        """``node -> why it lost`` for every node but the chosen one."""
        return {n.name: n.why_not for n in self.nodes if not n.chosen}

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping (camelCase keys, as the rest of the Kubernetes world)."""
        return {
            "pod": self.pod,
            "profile": self.profile,
            "seed": self.seed,
            "numNodes": self.num_nodes,
            "chosen": self.chosen,
            "nominatedNode": self.nominated_node,
            "message": self.message,
            "error": self.error,
            "preFilter": self.pre_filter.to_dict(),
            "scorePlugins": [{"plugin": p, "weight": w} for p, w in self.score_plugins],
            "skippedScorePlugins": list(self.skipped_score_plugins),
            "postFilter": None if self.post_filter is None else self.post_filter.to_dict(),
            "nodes": [n.to_dict() for n in self.nodes],
        }


# --------------------------------------------------------------------------------------------
# Dry-run services for the Framework
# --------------------------------------------------------------------------------------------


class _DryRunBinder:
    """A Binder that writes nothing and remembers what it was asked to do."""

    def __init__(self) -> None:
        self.evicted: list[str] = []
        self.nominated: dict[str, str] = {}

    def bind(self, pod: Pod, node_name: str) -> None:
        return None

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        if nominated_node_name is not None:
            self.nominated[pod.key] = nominated_node_name

    def delete_pod(self, pod: Pod, *, condition: PodCondition | None = None) -> None:
        self.evicted.append(pod.key)

    def record_event(
        self,
        regarding: Pod,
        *,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        related: ObjectReference | None = None,
    ) -> None:
        return None


class _FixedClock:
    """Time standing still: ``now()`` is fixed and timers never fire (nothing waits here)."""

    def __init__(self, now: float) -> None:
        self._now = now

    def now(self) -> float:
        return self._now

    def call_later(self, delay: float, callback: Callable[[], None]) -> _FixedClock:
        return self

    def cancel(self) -> None:
        return None


# --------------------------------------------------------------------------------------------
# explain()
# --------------------------------------------------------------------------------------------


def _load(
    config: KubeSchedulerConfiguration | str | os.PathLike[str] | Mapping[str, object] | None,
) -> KubeSchedulerConfiguration:
    from schedframe.config import KubeSchedulerConfiguration, load_config

    if isinstance(config, KubeSchedulerConfiguration):
        return config
    return load_config(config)


def _go_list(items: Iterable[str]) -> str:
    return "[" + " ".join(items) + "]"


def _build_framework(
    cfg: KubeSchedulerConfiguration,
    profile_name: str,
    registry: Registry | None,
    *,
    snapshot: Snapshot,
    namespaces: Iterable[Namespace],
    pdbs: Iterable[PodDisruptionBudget],
    workloads: Iterable[object],
    rng: random.Random,
    binder: _DryRunBinder,
    now: float,
) -> Framework:
    from schedframe.runtime import ClusterView, Framework, Registry

    index = next((i for i, p in enumerate(cfg.profiles) if p.scheduler_name == profile_name), None)
    if index is None:
        names = ", ".join(p.scheduler_name for p in cfg.profiles)
        raise ConfigError(
            [
                FieldIssue(
                    path="profiles",
                    kind=errors.NOT_FOUND,
                    value=profile_name,
                    detail=f"no profile has this schedulerName (profiles: {names})",
                )
            ]
        )
    clock = _FixedClock(now)
    return Framework.from_profile(
        cfg.profiles[index],
        registry if registry is not None else Registry.discover(),
        index=index,
        snapshot=snapshot,
        # ``workloads`` may also carry the DRA objects (each store keeps its own kinds).
        cluster=ClusterView(namespaces, pdbs, workloads, dra=workloads),
        clock=clock,
        timers=clock,
        rng=rng,
        binder=binder,
        event_recorder=_NullRecorder(),
        parallelism=cfg.parallelism,
        features=cfg.feature_gates,
    )


class _NullRecorder:
    def eventf(
        self,
        regarding: Pod,
        related: object | None,
        event_type: str,
        reason: str,
        action: str,
        note: str,
    ) -> None:
        return None


def explain(
    pod: Pod,
    *,
    nodes: Iterable[Node],
    pods: Iterable[Pod] = (),
    namespaces: Iterable[Namespace] = (),
    pdbs: Iterable[PodDisruptionBudget] = (),
    workloads: Iterable[object] = (),
    priority_classes: Iterable[PriorityClass] = (),
    config: KubeSchedulerConfiguration
    | str
    | os.PathLike[str]
    | Mapping[str, object]
    | None = None,
    profile: str | None = None,
    registry: Registry | None = None,
    seed: int = 0,
    post_filter: bool = True,
    now: float = 0.0,
    rng: random.Random | None = None,
    start_index: int = 0,
) -> Explanation:
    """Explain one scheduling attempt of ``pod``: every node's verdict and every plugin's score.

    Args:
        pod: the pod to place. A pod that already has ``spec.nodeName`` is explained as if it
            were pending.
        nodes: the cluster's nodes.
        pods: pods already in the cluster (Succeeded and Failed ones are left out, as
            kube-scheduler's informer leaves them out). Those with ``spec.nodeName`` occupy their node;
            unbound ones with ``status.nominatedNodeName`` count on that node as nominated pods
            do (when their priority is not lower); other unbound pods are ignored. ``pod``
            itself (same uid) is left out.
        namespaces: namespaces (their labels matter to pod affinity namespace selectors).
        pdbs: PodDisruptionBudgets (preemption prefers not to violate them).
        workloads: Services, ReplicationControllers, ReplicaSets and StatefulSets, where
            PodTopologySpread's default constraints take their selector, and the storage
            objects the volume plugins read (PersistentVolumes, claims, StorageClasses and the
            CSI kinds); other objects are ignored.
        priority_classes: the cluster's PriorityClasses. ``pod`` and ``pods`` that carry no
            ``spec.priority`` go through Priority admission with them (and the built-in
            system classes), as the API server admits a pod it creates; pods with a priority
            were admitted already and are taken as they are.
        config: a ``KubeSchedulerConfiguration``, a path to one, a mapping, or ``None`` for
            kube-scheduler's defaults.
        profile: the profile to run; by default the pod's ``spec.schedulerName``.
        registry: where plugins come from; by default every installed entry point.
        seed: seeds the random tie-break among nodes with equal totals.
        post_filter: when no node fits, run PostFilter (preemption) in dry-run mode to report
            its verdict, victims and nominated node; its message ends the FitError message,
            as upstream.
        now: the time plugins see (seconds), for time-dependent plugins.
        rng: the random source plugins and the tie-break use, instead of
            ``random.Random(seed)``; pass a copy of a scheduler's to replay its pick.
        start_index: the scheduler's ``next_start_node_index``: the scheduler visits nodes
            from there on, which decides which node gets which random draw in a tie.

    Returns:
        The :class:`Explanation`.

    Raises:
        ConfigError: the configuration is invalid, names an unknown plugin, or has no profile
            for the pod.
        PluginError: a plugin failed to build.
    """
    from schedframe.cache import Cache, Snapshot
    from schedframe.extender import apply_ignored_resources

    cfg = apply_ignored_resources(_load(config))
    classes = tuple(priority_classes)
    pod = _admitted(pod, classes)
    pods = [_admitted(p, classes) for p in pods]
    profile_name = profile if profile is not None else pod.spec.scheduler_name
    if pod.spec.node_name:
        pod = pod.with_node_name("")

    # The scheduler's cache gives the snapshot upstream's zone-interleaved node order.
    cache = Cache()
    for node in nodes:
        cache.add_node(node)
    nominated: list[tuple[Pod, str]] = []
    for other in pods:
        # Succeeded and Failed pods are never seen by the scheduler (its informer filter).
        if other.uid == pod.uid or other.status.phase in ("Succeeded", "Failed"):
            continue
        if other.spec.node_name:
            cache.add_pod(other)
        elif other.status.nominated_node_name:
            nominated.append((other, other.status.nominated_node_name))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)

    if rng is None:
        rng = random.Random(seed)
    binder = _DryRunBinder()
    fwk = _build_framework(
        cfg,
        profile_name,
        registry,
        snapshot=snapshot,
        namespaces=namespaces,
        pdbs=pdbs,
        workloads=workloads,
        rng=rng,
        binder=binder,
        now=now,
    )
    for other, node_name in nominated:
        fwk.nominator.add_nominated_pod(PodInfo(other), node_name)
    from schedframe.extender import build_extenders

    fwk.extenders = build_extenders(cfg)
    attempt = _Attempt(fwk, snapshot, pod, seed, rng, binder, post_filter, start_index)
    return attempt.run()


def _admitted(pod: Pod, classes: Sequence[PriorityClass]) -> Pod:
    """``pod`` as Priority admission leaves it, when it was never admitted (no priority)."""
    from schedframe.backends import admit_priority

    return pod if pod.spec.priority is not None else admit_priority(pod, classes)


class _Attempt:
    """One explained attempt (upstream ``schedulePod`` without node sampling)."""

    def __init__(
        self,
        fwk: Framework,
        snapshot: Snapshot,
        pod: Pod,
        seed: int,
        rng: random.Random,
        binder: _DryRunBinder,
        post_filter: bool,
        start_index: int = 0,
    ) -> None:
        self.fwk = fwk
        self.snapshot = snapshot
        self.pod = pod
        self.seed = seed
        self.rng = rng
        self.binder = binder
        self.run_post_filter = post_filter
        self.start_index = start_index
        self.state = CycleState()
        self.diagnosis = Diagnosis()
        self.error = ""
        #: The configuration's HTTP extenders: they filter and score as in the scheduler.
        self.extenders = fwk.extenders
        self._details: dict[str, FilterDetailsPlugin | None] = {}

    def _details_plugin(self, plugin: str) -> FilterDetailsPlugin | None:
        """The Filter plugin ``plugin`` when it adds details, looked up once per attempt: a
        runtime Protocol check costs tens of microseconds, once per rejected node adds up."""
        if plugin not in self._details:
            self._details[plugin] = next(
                (
                    p
                    for p in self.fwk.filter_plugins
                    if p.name == plugin and isinstance(p, FilterDetailsPlugin)
                ),
                None,
            )
        return self._details[plugin]

    def _verdict(self, name: str, zone: str, status: Status, *, cut: bool) -> NodeExplanation:
        details: tuple[str, ...] = ()
        if not cut and status.plugin:
            p = self._details_plugin(status.plugin)
            if p is not None:
                details = _filter_details(p, self.state, self.pod, name)
        return NodeExplanation(
            name=name,
            zone=zone,
            code=str(status.code),
            plugin=status.plugin,
            reasons=tuple(status.reasons),
            cut_by_pre_filter=cut,
            details=details,
        )

    def run(self) -> Explanation:
        from schedframe.runtime import _cycle as cycle
        from schedframe.scheduler import select_host

        fwk, pod, state, diagnosis = self.fwk, self.pod, self.state, self.diagnosis
        infos = list(self.snapshot.list())
        zones = {ni.name: node_zone(ni.node) if ni.node is not None else "" for ni in infos}
        score_plugins = tuple((p.name, fwk.score_weights.get(p.name, 1)) for p in fwk.score_plugins)

        pre_filtered = cycle.pre_filter(fwk, pod, state)
        pre_status, with_nodes = pre_filtered.status, pre_filtered.plugins_with_nodes
        diagnosis.unschedulable_plugins = set(with_nodes)
        skipped = tuple(sorted(state.skip_filter_plugins))
        narrowed = pre_filtered.narrowed

        verdicts: dict[str, NodeExplanation] = {}
        feasible = []
        if pre_status is not None:
            pre = PreFilterOutcome(
                code=str(pre_status.code),
                plugin=pre_status.plugin,
                message=pre_status.message(),
                narrowed_to=narrowed,
                narrowed_by=tuple(sorted(with_nodes)),
                skipped=skipped,
            )
            if pre_status.is_rejected():
                diagnosis.node_to_status.absent_nodes_status = pre_status
                diagnosis.pre_filter_msg = pre_status.message()
                if pre_status.plugin:
                    diagnosis.unschedulable_plugins.add(pre_status.plugin)
            else:
                self.error = pre_status.message()
            for ni in infos:
                verdicts[ni.name] = self._verdict(ni.name, zones[ni.name], pre_status, cut=True)
        else:
            pre = PreFilterOutcome(
                narrowed_to=narrowed, narrowed_by=tuple(sorted(with_nodes)), skipped=skipped
            )
            absent: Status | None = None
            if narrowed is not None:
                absent = Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f"node(s) didn't satisfy plugin(s) {_go_list(sorted(with_nodes))}",
                )
                diagnosis.node_to_status.absent_nodes_status = absent
            for ni in infos:
                if not pre_filtered.allows(ni.name):
                    assert absent is not None
                    verdicts[ni.name] = self._verdict(ni.name, zones[ni.name], absent, cut=True)
            for ni, status in cycle.filter_nodes(fwk, pre_filtered, pod, infos):
                if status is None:
                    feasible.append(ni)
                    continue
                if status.code is Code.ERROR:
                    self.error = self.error or status.message()
                else:
                    diagnosis.node_to_status.set(ni.name, status)
                    if status.plugin and status.is_rejected():
                        diagnosis.unschedulable_plugins.add(status.plugin)
                verdicts[ni.name] = self._verdict(ni.name, zones[ni.name], status, cut=False)
            if self.extenders and feasible and not self.error:
                feasible = self._pass_extenders(feasible, zones, verdicts)

        # Scores of the feasible nodes (for display even when one node or the nominated node
        # would make upstream skip scoring).
        chosen: str | None = None
        nominated_used = ""
        totals: dict[str, int] = {}
        per_node: dict[str, list[PluginScore]] = {ni.name: [] for ni in feasible}
        skipped_scores: tuple[str, ...] = ()
        if feasible and not self.error:
            if fwk.has_score_plugins():
                scored = cycle.score_nodes(fwk, state, pod, feasible)
                skipped_scores = tuple(sorted(state.skip_score_plugins))
                failed = (
                    scored.pre_score_status
                    if scored.pre_score_status is not None
                    else scored.status
                )
                if failed is not None:
                    self.error = failed.message()
                else:
                    scores = scored.scores
                    assert scores is not None
                    for ps in scores.by_plugin:
                        raw = ps.raw if ps.raw is not None else ps.normalized
                        for i, name in enumerate(scores.names):
                            per_node[name].append(
                                PluginScore(
                                    plugin=ps.plugin,
                                    weight=ps.weight,
                                    raw=raw[i],
                                    normalized=ps.normalized[i],
                                )
                            )
                    totals = dict(zip(scores.names, scores.totals, strict=True))
            elif not self.extenders:
                totals = {ni.name: 1 for ni in feasible}  # upstream: every node scores 1
            else:
                totals = {ni.name: 0 for ni in feasible}
            if self.extenders and not self.error:
                from schedframe.extender import EXTENDER_NAME, extender_scores

                for name, added in extender_scores(self.extenders, pod, feasible).items():
                    totals[name] += added
                    per_node[name].append(
                        PluginScore(plugin=EXTENDER_NAME, weight=1, raw=added, normalized=added)
                    )
        if feasible and not self.error:
            # The scheduler visits nodes from next_start_node_index on (over the PreFilter
            # result's sorted names when it narrowed them); select_host draws in that order.
            visit = [ni.name for ni in infos] if narrowed is None else list(narrowed)
            k = self.start_index % len(visit) if visit else 0
            order = {name: i for i, name in enumerate(visit[k:] + visit[:k])}
            names = sorted((ni.name for ni in feasible), key=lambda n: order.get(n, 0))
            nominated_node = pod.status.nominated_node_name
            if nominated_node and nominated_node in names:
                chosen = nominated_used = nominated_node
            elif len(names) == 1:
                chosen = names[0]  # upstream neither scores nor draws a random number
            else:
                chosen, _ = select_host(names, [totals[n] for n in names], self.rng)

        message = ""
        post: PostFilterOutcome | None = None
        if chosen is None:
            if self.error:
                message = self.error
            elif not infos:
                message = "no nodes available to schedule pods"
            else:
                if self.run_post_filter and fwk.has_post_filter_plugins():
                    post = self._post_filter()
                    diagnosis.post_filter_msg = post.message
                message = FitError(pod, len(infos), diagnosis).message()

        ranks = _ranks(totals)
        nodes: list[NodeExplanation] = []
        for ni in infos:
            name = ni.name
            if name in verdicts:
                v = verdicts[name]
                nodes.append(attrs.evolve(v, why_not=_why_filtered(v)))
                continue
            total = totals.get(name)
            nodes.append(
                NodeExplanation(
                    name=name,
                    zone=zones[name],
                    feasible=True,
                    scores=tuple(per_node.get(name, ())),
                    total=total,
                    rank=ranks.get(name),
                    chosen=name == chosen,
                )
            )
        winner = next((n for n in nodes if n.chosen), None)
        nodes = [
            attrs.evolve(n, why_not=_why_lower(n, winner, nominated_used, self.seed, self.error))
            if n.feasible and not n.chosen
            else n
            for n in nodes
        ]
        return Explanation(
            pod=pod.key,
            profile=fwk.profile_name,
            seed=self.seed,
            pre_filter=pre,
            nodes=tuple(nodes),
            score_plugins=score_plugins,
            skipped_score_plugins=skipped_scores,
            chosen=chosen,
            nominated_node=nominated_used,
            message=message,
            error=self.error,
            post_filter=post,
        )

    def _pass_extenders(
        self,
        feasible: list[NodeInfo],
        zones: Mapping[str, str],
        verdicts: dict[str, NodeExplanation],
    ) -> list[NodeInfo]:
        """The extenders' filter over the nodes the plugins kept; the nodes they reject get
        the statuses the scheduler records (``plugin`` left empty, as upstream's)."""
        from schedframe.extender import ExtenderError, find_nodes_that_pass_extenders

        try:
            kept = find_nodes_that_pass_extenders(
                self.extenders, self.pod, feasible, self.diagnosis
            )
        except ExtenderError as exc:
            self.error = str(exc)
            return feasible
        names = {ni.name for ni in kept}
        for ni in feasible:
            if ni.name not in names:
                status = self.diagnosis.node_to_status.get(ni.name)
                verdicts[ni.name] = self._verdict(ni.name, zones[ni.name], status, cut=False)
        return kept

    def _post_filter(self) -> PostFilterOutcome:
        result, status = self.fwk.run_post_filter_plugins(
            self.state, self.pod, self.diagnosis.node_to_status
        )
        nominated = ""
        if result is not None and result.nominating_info is not None:
            if result.nominating_info.mode is fw.NominatingMode.OVERRIDE:
                nominated = result.nominating_info.nominated_node_name
        return PostFilterOutcome(
            code=str(status.code),
            plugin=status.plugin,
            message=status.message(),
            nominated_node=nominated,
            victims=tuple(self.binder.evicted),
        )


def _ranks(totals: Mapping[str, int]) -> dict[str, int]:
    distinct = sorted(set(totals.values()), reverse=True)
    place = {t: i + 1 for i, t in enumerate(distinct)}
    return {name: place[t] for name, t in totals.items()}


def _why_filtered(v: NodeExplanation) -> str:
    reasons = "; ".join(v.reasons) or "(no reason given)"
    if v.cut_by_pre_filter:
        who = f"PreFilter {v.plugin}" if v.plugin else "PreFilter"
        return f"{who} ({v.code}): {reasons}"
    return f"{v.plugin or 'Filter'} ({v.code}): {reasons}"


def _why_lower(
    node: NodeExplanation,
    winner: NodeExplanation | None,
    nominated: str,
    seed: int,
    error: str,
) -> str:
    if winner is None:
        return f"feasible, but the attempt failed: {error}" if error else "feasible"
    if nominated:
        return f"feasible, but the pod's nominated node {nominated} fits and is taken first"
    if node.total is None or winner.total is None:
        return f"feasible, not chosen ({winner.name} was)"
    gap = winner.total - node.total
    if gap == 0:
        return f"tied with {winner.name} at {node.total}; lost the random tie-break (seed {seed})"
    lower: list[tuple[int, str]] = []
    higher: list[tuple[int, str]] = []
    for s in node.scores:
        w = winner.score(s.plugin)
        if w is None:
            continue
        delta = s.weighted - w.weighted
        if delta < 0:
            lower.append((delta, f"{s.plugin} {delta} ({s.weighted} vs {w.weighted})"))
        elif delta > 0:
            higher.append((-delta, f"{s.plugin} +{delta} ({s.weighted} vs {w.weighted})"))
    text = f"scored {node.total}, {gap} below {winner.name} ({winner.total})"
    if lower:
        text += ": lower on " + ", ".join(t for _, t in sorted(lower))
    if higher:
        text += "; higher on " + ", ".join(t for _, t in sorted(higher))
    return text


def _filter_details(
    plugin: FilterDetailsPlugin, state: CycleState, pod: Pod, node_name: str
) -> tuple[str, ...]:
    """A plugin's extra lines about a rejected node, guarded as the runners guard results
    (:mod:`schedframe.runtime._guard`): a plugin that raises or returns anything but strings
    gets one line saying so instead of breaking the explanation."""
    from schedframe.runtime._guard import SHUTDOWN, describe

    try:
        lines = plugin.filter_details(state, pod, node_name)
    except SHUTDOWN:
        raise
    except BaseException as exc:
        return (f"(filter_details of {plugin.name} failed: {type(exc).__name__}: {exc})",)
    if isinstance(lines, str) or not isinstance(lines, list | tuple):
        return (f"(filter_details of {plugin.name} returned {describe(lines)}, not lines)",)
    if not all(isinstance(line, str) for line in lines):
        return (f"(filter_details of {plugin.name} returned {describe(lines)}, not lines)",)
    return tuple(lines)
