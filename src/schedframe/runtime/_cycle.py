"""One driver for a whole-picture scheduling cycle: every node judged, every score shown.

The scheduler's cycle (:class:`~schedframe.scheduler.Algorithm`) stops at enough feasible
nodes, rotates its start node and binds. ``explain`` and the testing harness instead show what
the cycle *would* decide on each node: PreFilter, then Filter on every node PreFilter allows
(as the chain, first failure deciding, nominated pods counted; or plugin by plugin, every
verdict kept), then PreScore and Score over the feasible nodes, raw and normalised. They run
those steps through these functions, so the rules (what a PreFilterResult cuts, how a
plugin's failure reads, which statuses count) are written once.

The conformance kit drives the plugin under test through its own methods, checking each
answer as it comes; where it needs the Framework's verdicts (the node-status map PostFilter
gets) it takes them from :func:`filter_nodes` too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import attrs

from schedframe.framework import Code, CycleState, NodeInfo, PreFilterResult, Status

if TYPE_CHECKING:
    from schedframe import framework as fw
    from schedframe.objects import Pod
    from schedframe.runtime._framework import Framework, NodeScores

__all__ = [
    "PreFiltered",
    "Scored",
    "filter_each_plugin",
    "filter_nodes",
    "pre_filter",
    "score_nodes",
]


@attrs.define
class PreFiltered:
    """What PreFilter left for one pod.

    ``status`` is PreFilter's status when it did not succeed (else ``None``); ``narrowed``
    the node names a PreFilterResult kept, sorted (``None`` when it kept all);
    ``plugins_with_nodes`` the plugins whose PreFilterResult narrowed them.
    """

    state: CycleState
    result: PreFilterResult | None
    status: Status | None
    plugins_with_nodes: tuple[str, ...]
    narrowed: tuple[str, ...] | None

    def allows(self, node_name: str) -> bool:
        """Whether Filter runs on ``node_name`` (PreFilter succeeded and did not cut it)."""
        return self.status is None and (self.narrowed is None or node_name in self.narrowed)


def pre_filter(fwk: Framework, pod: Pod, state: CycleState | None = None) -> PreFiltered:
    """Run every PreFilter plugin for ``pod`` (upstream ``RunPreFilterPlugins``)."""
    state = state if state is not None else CycleState()
    result, status, with_nodes = fwk.run_pre_filter_plugins(state, pod)
    if status is not None and status.is_success():
        status = None
    narrowed: tuple[str, ...] | None = None
    if result is not None and not result.all_nodes():
        assert result.node_names is not None
        narrowed = tuple(sorted(result.node_names))
    return PreFiltered(state, result, status, tuple(sorted(with_nodes)), narrowed)


def filter_nodes(
    fwk: Framework, pre: PreFiltered, pod: Pod, nodes: Sequence[NodeInfo]
) -> Iterator[tuple[NodeInfo, Status | None]]:
    """Each node PreFilter allows with its Filter verdict, as the scheduling cycle gives it
    (``run_filter_plugins_with_nominated_pods``; ``None`` = feasible), in ``nodes``' order,
    one node at a time (a caller may stop early)."""
    run = fwk.run_filter_plugins_with_nominated_pods
    for ni in nodes:
        if not pre.allows(ni.name):
            continue
        status = run(pre.state, pod, ni)
        yield ni, None if status is None or status.code is Code.SUCCESS else status


def filter_each_plugin(
    fwk: Framework, pre: PreFiltered, pod: Pod, node_info: NodeInfo
) -> dict[str, Status | None]:
    """Every Filter plugin's own verdict on one node (none stopping the others), by plugin
    name, with the runner's rules for one plugin: a raise or a status that is not a rejection
    becomes an Error naming the plugin; a rejection is named after its plugin."""
    skip = pre.state.skip_filter_plugins
    return {
        plugin.name: _filter_one(plugin, pre.state, pod, node_info)
        for plugin in fwk.filter_plugins
        if plugin.name not in skip
    }


def _filter_one(
    plugin: fw.FilterPlugin, state: CycleState, pod: Pod, info: NodeInfo
) -> Status | None:
    name = plugin.name
    prefix = f'running "{name}" filter plugin'
    try:
        status = plugin.filter(state, pod, info)
    except Exception as exc:
        return Status(Code.ERROR, f"{prefix}: {type(exc).__name__}: {exc}", error=exc, plugin=name)
    if status is None or status.is_success():
        return None
    if not status.is_rejected():
        return Status(Code.ERROR, f"{prefix}: {status.message() or status.code}", plugin=name)
    return status.with_plugin(name)


@attrs.define
class Scored:
    """PreScore and Score over some nodes: the failing status of either (``None`` when it
    succeeded), and the scores (raw kept) when both succeeded."""

    pre_score_status: Status | None
    status: Status | None
    scores: NodeScores | None


def score_nodes(fwk: Framework, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Scored:
    """Run PreScore, then Score, NormalizeScore and weights over ``nodes`` (raw scores kept)."""
    pre = fwk.run_pre_score_plugins(state, pod, nodes)
    if pre is not None and not pre.is_success():
        return Scored(pre, None, None)
    scores, status = fwk.run_score_plugins(state, pod, nodes, keep_raw=True)
    if status is not None and status.is_success():
        status = None
    return Scored(None, status, scores if status is None else None)
