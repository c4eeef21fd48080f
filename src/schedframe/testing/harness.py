"""Run plugins over a cluster and see every verdict: per node, per plugin, before and after
normalisation.

The framework stops at the first failing Filter and keeps only weighted totals; a test usually
wants more. :func:`run_plugins` runs each Filter plugin on each node on its own, and keeps
every Score plugin's raw and normalised scores::

    result = run_plugins(["NodeResourcesFit", "TaintToleration"], pod, nodes=nodes, pods=pods)
    result.filter["node-1"]["TaintToleration"].code    # Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    result.scores["node-2"]["NodeResourcesFit"]        # normalised, 0..100
    result.feasible                                    # ("node-2",)
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.config import Profile, decode_args
from schedframe.framework import Code, CycleState, Status
from schedframe.objects import Namespace, Node, Pod, PodDisruptionBudget
from schedframe.runtime import Framework, PluginFactory, Registry
from schedframe.runtime import _cycle as cycle
from schedframe.scheduler import VirtualClock
from schedframe.testing._cluster import Cluster

__all__ = ["HarnessResult", "PluginSpec", "build_framework", "run_plugins"]

#: A plugin to run, by its registered name or its factory (a plugin class taking ``(args, handle)``).
PluginSpec = str | PluginFactory


@attrs.frozen(kw_only=True, eq=False)
class HarnessResult:
    """Every verdict of one pod's scheduling attempt.

    Attributes:
        pod: the pod.
        nodes: every node name, in snapshot order.
        pre_filter_status: the merged PreFilter verdict (``None`` for success), as the
            framework computes it.
        pre_filter_result: the merged PreFilterResult (``None``: every node).
        excluded: nodes left out by the PreFilterResult (Filter was not run on them).
        filter: ``node -> plugin -> status`` for every Filter plugin not skipped by its
            PreFilter, each run on its own (``None`` is success). Empty when PreFilter failed.
        feasible: the nodes every Filter plugin accepted, in snapshot order.
        pre_score_status: the PreScore verdict (``None`` for success).
        raw_scores: ``node -> plugin -> score`` as Score returned it.
        scores: ``node -> plugin -> score`` after NormalizeScore.
        weights: Score plugin weights.
        totals: ``node -> weighted total``.
        score_status: an error raised by scoring (an out-of-range normalised score...).
        skipped_filter: plugins whose PreFilter returned Skip.
        skipped_score: plugins whose PreScore returned Skip.
        framework: the Framework that ran (also the Handle the plugins got).
        state: the cycle state after the run.
    """

    pod: Pod
    nodes: tuple[str, ...]
    pre_filter_status: Status | None
    pre_filter_result: fw.PreFilterResult | None
    excluded: tuple[str, ...]
    filter: Mapping[str, Mapping[str, Status | None]]
    feasible: tuple[str, ...]
    pre_score_status: Status | None
    raw_scores: Mapping[str, Mapping[str, int]]
    scores: Mapping[str, Mapping[str, int]]
    weights: Mapping[str, int]
    totals: Mapping[str, int]
    score_status: Status | None
    skipped_filter: frozenset[str]
    skipped_score: frozenset[str]
    framework: Framework
    state: CycleState

    def status(self, node: str) -> Status | None:
        """The node's verdict as the framework gives it: the first failing Filter in profile
        order (``None`` when the node is feasible)."""
        if node in self.excluded:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        for plugin, status in self.filter.get(node, {}).items():
            if status is not None and not status.is_success():
                return status if status.plugin else status.with_plugin(plugin)
        return None

    def codes(self, node: str) -> dict[str, Code]:
        """``plugin -> code`` of every Filter verdict on ``node`` (success included)."""
        return {
            plugin: Code.SUCCESS if status is None else status.code
            for plugin, status in self.filter.get(node, {}).items()
        }

    def best(self) -> list[str]:
        """The feasible nodes with the highest total score (ties all listed, snapshot order)."""
        if not self.feasible:
            return []
        if not self.totals:
            return list(self.feasible)
        top = max(self.totals[n] for n in self.feasible)
        return [n for n in self.feasible if self.totals[n] == top]

    def table(self) -> str:
        """A plain-text table of the verdicts and scores, one row per node (for messages)."""
        filters = sorted({p for per in self.filter.values() for p in per})
        scorers = sorted(self.weights)
        header = ["node", *filters, *(f"{p}(raw/norm)" for p in scorers), "total"]
        rows = [header]
        for node in self.nodes:
            row = [node]
            for p in filters:
                st = self.filter.get(node, {}).get(p, None)
                row.append(
                    "-"
                    if p not in self.filter.get(node, {})
                    else ("ok" if st is None else str(st.code))
                )
            for p in scorers:
                raw = self.raw_scores.get(node, {}).get(p)
                norm = self.scores.get(node, {}).get(p)
                row.append("-" if raw is None else f"{raw}/{norm}")
            row.append(str(self.totals.get(node, "-")))
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        return "\n".join(
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows
        )


def _factory_of(spec: PluginSpec, registry: Registry | None) -> tuple[str, PluginFactory]:
    if isinstance(spec, str):
        reg = registry if registry is not None else Registry.discover()
        return spec, reg.load(spec)
    name = getattr(spec, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"{spec!r} has no class attribute 'name'; pass a plugin class or name")
    return name, spec


def _args_for(factory: PluginFactory, name: str, given: object) -> object:
    args_type = getattr(factory, "args_type", None)
    if args_type is None:
        return None
    if given is None or isinstance(given, Mapping):
        return decode_args(args_type, given, path=f"{name}.args")
    return given


def build_framework(
    plugins_or_profile: PluginSpec | Sequence[PluginSpec] | Profile,
    *,
    snapshot: Snapshot,
    namespaces: Iterable[Namespace] = (),
    pdbs: Iterable[PodDisruptionBudget] = (),
    args: Mapping[str, object] | None = None,
    weights: Mapping[str, int] | None = None,
    registry: Registry | None = None,
    seed: int = 0,
    binder: fw.Binder | None = None,
    clock: VirtualClock | None = None,
) -> Framework:
    """A Framework over ``snapshot`` running the given plugins, on a virtual clock.

    Args:
        plugins_or_profile: a :class:`~schedframe.config.Profile` (built as the scheduler
            builds it, QueueSort and Bind plugins required), or plugin names and/or plugin
            classes, enabled at every point they implement, in order.
        snapshot: what the plugins see.
        namespaces: namespaces for namespace selectors.
        pdbs: PodDisruptionBudgets for preemption.
        args: per plugin name, an args object or a raw camelCase mapping (decoded with the
            plugin's ``args_type``); ignored for a profile (its ``pluginConfig`` applies).
        weights: per plugin name, the Score weight (default 1).
        registry: where names are looked up (installed entry points by default).
        seed: seeds the Handle's random source.
        binder: the Handle's binder (none by default: binding fails loudly).
        clock: the clock (a new VirtualClock at 0 by default).
    """
    clock = clock if clock is not None else VirtualClock()
    options: dict[str, Any] = {
        "snapshot": snapshot,
        "namespaces": namespaces,
        "pdbs": pdbs,
        "clock": clock,
        "timers": clock,
        "rng": random.Random(seed),
        "binder": binder,
    }
    if isinstance(plugins_or_profile, Profile):
        reg = registry if registry is not None else Registry.discover()
        return Framework.from_profile(plugins_or_profile, reg, **options)
    specs: Sequence[PluginSpec] = (
        [plugins_or_profile]
        if isinstance(plugins_or_profile, str) or not isinstance(plugins_or_profile, Sequence)
        else plugins_or_profile
    )
    fwk = Framework(
        snapshot=snapshot,
        namespaces=namespaces,
        pdbs=pdbs,
        clock=clock,
        timers=clock,
        rng=random.Random(seed),
        binder=binder,
    )
    for spec in specs:
        name, factory = _factory_of(spec, registry)
        plugin_args = _args_for(factory, name, (args or {}).get(name))
        plugin = factory(plugin_args, fwk)
        fwk.add_plugin(plugin, weight=(weights or {}).get(name, 1))
        fwk.plugin_args[name] = plugin_args
    return fwk


def run_plugins(
    plugins_or_profile: PluginSpec | Sequence[PluginSpec] | Profile,
    pod: Pod,
    *,
    nodes: Iterable[Node] = (),
    pods: Iterable[Pod] = (),
    cluster: Cluster | None = None,
    namespaces: Iterable[Namespace] = (),
    pdbs: Iterable[PodDisruptionBudget] = (),
    args: Mapping[str, object] | None = None,
    weights: Mapping[str, int] | None = None,
    registry: Registry | None = None,
    seed: int = 0,
) -> HarnessResult:
    """Run PreFilter, every Filter on every node, PreScore, Score and NormalizeScore for ``pod``.

    The cluster is ``nodes`` with the bound ``pods`` on them, or ``cluster`` (a
    :class:`~schedframe.testing.strategies.Cluster`, whose namespaces and budgets are used
    too). Filters run on each node one by one, none stopping the others, so every verdict is
    reported; Score runs on the feasible nodes, as the framework does, even when only one is
    feasible. Nothing is reserved or bound.

    See :func:`build_framework` for the other arguments.
    """
    if cluster is not None:
        nodes = (*cluster.nodes, *nodes)
        pods = (*cluster.pods, *pods)
        namespaces = (*cluster.namespaces, *namespaces)
        pdbs = (*cluster.pdbs, *pdbs)
    snapshot = Snapshot.from_objects(nodes, pods)
    fwk = build_framework(
        plugins_or_profile,
        snapshot=snapshot,
        namespaces=namespaces,
        pdbs=pdbs,
        args=args,
        weights=weights,
        registry=registry,
        seed=seed,
    )
    names = tuple(ni.name for ni in snapshot.list())
    pre = cycle.pre_filter(fwk, pod)
    state = pre.state
    pre_status = pre.status
    pre_result = pre.result
    allowed = pre.narrowed
    excluded = tuple(n for n in names if allowed is not None and n not in allowed)
    verdicts: dict[str, dict[str, Status | None]] = {}
    feasible: list[str] = []
    for info in snapshot.list():
        if not pre.allows(info.name):
            continue
        per = cycle.filter_each_plugin(fwk, pre, pod, info)
        verdicts[info.name] = per
        if all(s is None or s.is_success() for s in per.values()):
            feasible.append(info.name)
    raw: dict[str, dict[str, int]] = {}
    scores: dict[str, dict[str, int]] = {}
    totals: dict[str, int] = {}
    pre_score_status: Status | None = None
    score_status: Status | None = None
    if feasible and fwk.score_plugins:
        scored = cycle.score_nodes(fwk, state, pod, [snapshot.get(n) for n in feasible])
        pre_score_status, score_status = scored.pre_score_status, scored.status
        node_scores = scored.scores
        if node_scores is not None:
            for i, n in enumerate(node_scores.names):
                totals[n] = node_scores.totals[i]
                raw[n] = {}
                scores[n] = {}
                for ps in node_scores.by_plugin:
                    raw[n][ps.plugin] = ps.raw[i] if ps.raw is not None else ps.normalized[i]
                    scores[n][ps.plugin] = ps.normalized[i]
    return HarnessResult(
        pod=pod,
        nodes=names,
        pre_filter_status=pre_status,
        pre_filter_result=pre_result,
        excluded=excluded,
        filter=verdicts,
        feasible=tuple(feasible),
        pre_score_status=pre_score_status,
        raw_scores=raw,
        scores=scores,
        weights=dict(fwk.score_weights),
        totals=totals,
        score_status=score_status,
        skipped_filter=frozenset(state.skip_filter_plugins),
        skipped_score=frozenset(state.skip_score_plugins),
        framework=fwk,
        state=state,
    )
