"""Where the scheduler consults its extenders (upstream ``schedule_one.go``:
``findNodesThatPassExtenders``, the extender part of ``prioritizeNodes``,
``extendersBinding``; ``preemption.go``: ``callExtenders``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from schedframe.extender._http import (
    EXTENDER_NAME,
    MAX_EXTENDER_PRIORITY,
    ExtenderError,
    HTTPExtender,
    Victims,
)
from schedframe.framework import MAX_NODE_SCORE, Code, Status

if TYPE_CHECKING:
    from schedframe.config import KubeSchedulerConfiguration
    from schedframe.framework import Diagnosis, NodeInfo
    from schedframe.objects import Pod

__all__ = [
    "apply_ignored_resources",
    "build_extenders",
    "call_extenders",
    "extender_scores",
    "extenders_binding",
    "find_nodes_that_pass_extenders",
]

log = logging.getLogger("schedframe.extender")

_FIT: Final = "NodeResourcesFit"


def build_extenders(config: KubeSchedulerConfiguration) -> tuple[HTTPExtender, ...]:
    """The clients of the configuration's ``extenders``, in order.

    Raises:
        ConfigError: an extender's TLS files or data cannot be loaded (the path names the
            ``extenders[i].tlsConfig`` entry; no file content is shown).
    """
    from schedframe.errors import INVALID, ConfigError, FieldIssue

    out = []
    for index, entry in enumerate(config.extenders):
        try:
            out.append(HTTPExtender(entry))
        except ExtenderError as exc:
            raise ConfigError(
                [FieldIssue(path=f"extenders[{index}].tlsConfig", kind=INVALID, detail=str(exc))]
            ) from None
    return tuple(out)


def apply_ignored_resources(config: KubeSchedulerConfiguration) -> KubeSchedulerConfiguration:
    """The configuration with the extenders' ``ignoredByScheduler`` resources as every
    profile's NodeResourcesFit ``ignoredResources`` (they replace what the file says, as
    upstream's extender-ignored resources take precedence); unchanged without any."""
    ignored = [
        r.name for e in config.extenders for r in e.managed_resources if r.ignored_by_scheduler
    ]
    if not ignored:
        return config
    from schedframe.config import PluginConfig

    profiles = []
    for profile in config.profiles:
        entries = list(profile.plugin_config)
        for i, entry in enumerate(entries):
            if entry.name == _FIT:
                entries[i] = PluginConfig(
                    name=_FIT, args={**entry.args, "ignoredResources": list(ignored)}
                )
                break
        else:
            entries.append(PluginConfig(name=_FIT, args={"ignoredResources": list(ignored)}))
        profiles.append(attrs.evolve(profile, plugin_config=tuple(entries)))
    return attrs.evolve(config, profiles=tuple(profiles))


def find_nodes_that_pass_extenders(
    extenders: Sequence[HTTPExtender],
    pod: Pod,
    feasible: Sequence[NodeInfo],
    diagnosis: Diagnosis,
) -> list[NodeInfo]:
    """Run each interested extender's filter over the nodes the plugins kept, in order.

    A failing ignorable extender is skipped. ``failedAndUnresolvableNodes`` become
    UnschedulableAndUnresolvable statuses (after any reasons the node already had), and
    ``failedNodes`` not also unresolvable become Unschedulable (or add a reason). When an
    extender removed nodes, ``Extender`` joins the pod's unschedulable plugins, so any cluster
    event requeues it (extenders have no queueing hints).

    Raises:
        ExtenderError: a non-ignorable extender failed.
    """
    nodes = list(feasible)
    before = len(nodes)
    statuses = diagnosis.node_to_status
    for extender in extenders:
        if not nodes:
            break
        if not extender.is_interested(pod):
            continue
        try:
            kept, failed, unresolvable = extender.filter(pod, nodes)
        except ExtenderError as exc:
            if extender.ignorable:
                log.warning(
                    "skipping extender %s as it returned error %s and has ignorable flag set",
                    extender.name,
                    exc,
                )
                continue
            raise
        known = dict(statuses.items())
        for node_name, reason in unresolvable.items():
            reasons = known[node_name].reasons if node_name in known else ()
            statuses.set(node_name, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons, reason))
        for node_name, reason in failed.items():
            if node_name in unresolvable:
                continue
            if node_name in known:
                statuses.set(node_name, known[node_name].with_reasons(reason))
            else:
                statuses.set(node_name, Status(Code.UNSCHEDULABLE, reason))
        nodes = kept
    if len(nodes) != before:
        diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
    return nodes


def extender_scores(
    extenders: Sequence[HTTPExtender], pod: Pod, nodes: Sequence[NodeInfo]
) -> dict[str, int]:
    """What the interested prioritizers add to each node's total: the sum of
    ``score x weight``, scaled from ``[0, MAX_EXTENDER_PRIORITY]`` to the framework's range.

    A failing prioritizer is ignored (upstream lets the others decide), ignorable or not.
    """
    summed: dict[str, int] = {}
    for extender in extenders:
        if not extender.is_interested(pod):
            continue
        try:
            scores, weight = extender.prioritize(pod, nodes)
        except ExtenderError as exc:
            log.warning("extender %s prioritize failed: %s", extender.name, exc)
            continue
        for host, score in scores.items():
            summed[host] = summed.get(host, 0) + score * weight
    factor = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
    names = {n.name for n in nodes}
    return {host: total * factor for host, total in summed.items() if host in names}


def extenders_binding(
    extenders: Sequence[HTTPExtender], pod: Pod, node_name: str
) -> tuple[bool, Status | None]:
    """Let the first interested binder extender bind ``pod``: ``(True, status)`` when one
    did (``status`` ``None`` on success), ``(False, None)`` when none applies. A failing
    ignorable binder passes the binding on."""
    for extender in extenders:
        if not extender.is_binder() or not extender.is_interested(pod):
            continue
        try:
            extender.bind(pod, node_name)
        except ExtenderError as exc:
            if extender.ignorable:
                log.info(
                    "skipping extender %s in bind as it returned error %s and has ignorable "
                    "flag set",
                    extender.name,
                    exc,
                )
                continue
            return True, Status.from_error(exc)
        return True, None
    return False, None


def call_extenders(
    extenders: Sequence[HTTPExtender],
    pod: Pod,
    victims: Mapping[str, Victims],
    node_infos: Mapping[str, NodeInfo],
) -> tuple[dict[str, Victims], Status | None]:
    """Pass preemption candidates (node -> victims) through the extenders that support
    preemption and care about ``pod``; each sees what the previous one kept.

    Returns the candidates left and ``None``, or an error Status (a non-ignorable extender
    failed, or returned a node without victims).
    """
    current = dict(victims)
    if not extenders or not current:
        return current, None
    for extender in extenders:
        if not extender.supports_preemption() or not extender.is_interested(pod):
            continue
        try:
            result = extender.process_preemption(pod, current, node_infos)
        except ExtenderError as exc:
            if extender.ignorable:
                log.info(
                    "skipped extender %s as it returned error %s and has ignorable flag set",
                    extender.name,
                    exc,
                )
                continue
            return {}, Status.from_error(exc)
        for node_name in list(result):
            if not result[node_name][0]:
                if extender.ignorable:
                    del result[node_name]
                    log.info(
                        "ignored node %s for which extender %s didn't report victims",
                        node_name,
                        extender.name,
                    )
                    continue
                return {}, Status.from_error(
                    ExtenderError(f'expected at least one victim pod on node "{node_name}"')
                )
        current = result
        if not current:
            break
    return current, None
