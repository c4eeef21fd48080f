"""Pieces every kind of run shares: the final cluster, the placement map, the explanations of
pending pods, the per-pod timeline table and the utilisation charts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from schedframe.explain import node_zone
from schedframe.objects import Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
from schedframe.report._core import ReportOptions
from schedframe.report._html import Cell, Markup, cap_note, esc, num, pct, secs, table

if TYPE_CHECKING:
    from schedframe.config import KubeSchedulerConfiguration
    from schedframe.explain import Explanation
    from schedframe.runtime import Registry

__all__ = [
    "FinalCluster",
    "TimelineEvent",
    "explanations",
    "figures",
    "placement_map",
    "timeline_table",
]

#: Pod chips drawn per node at most in the placement map (the rest is counted).
_CHIPS_PER_NODE: Final = 200
#: Nodes listed per explained pod at most (the per-plugin table counts them all).
_NODES_PER_EXPLANATION: Final = 100
#: Events shown per pod in the timeline: the first and last this many of a longer story.
_EVENTS_EACH_END: Final = 10
_MISSING_STATE: Final = (
    "This result carries no final cluster state (it was made without one), so there is "
    "nothing to draw or explain here."
)


@attrs.frozen(kw_only=True)
class FinalCluster:
    """The cluster at the end of a run, sorted out for drawing and explaining."""

    nodes: tuple[Node, ...]
    bound: tuple[Pod, ...]
    pending: tuple[Pod, ...]
    namespaces: tuple[Namespace, ...]
    pdbs: tuple[PodDisruptionBudget, ...]
    priority_classes: tuple[PriorityClass, ...]
    others: tuple[object, ...]
    config: KubeSchedulerConfiguration | None
    registry: Registry | None
    seed: int
    end_time: float
    known: bool

    @classmethod
    def of(
        cls,
        objects: Sequence[object],
        *,
        config: KubeSchedulerConfiguration | None,
        registry: Registry | None,
        seed: int,
        end_time: float,
    ) -> FinalCluster:
        nodes: list[Node] = []
        bound: list[Pod] = []
        pending: list[Pod] = []
        namespaces: list[Namespace] = []
        pdbs: list[PodDisruptionBudget] = []
        classes: list[PriorityClass] = []
        others: list[object] = []
        for obj in objects:
            if isinstance(obj, Node):
                nodes.append(obj)
            elif isinstance(obj, Pod):
                (bound if obj.spec.node_name else pending).append(obj)
            elif isinstance(obj, Namespace):
                namespaces.append(obj)
            elif isinstance(obj, PodDisruptionBudget):
                pdbs.append(obj)
            elif isinstance(obj, PriorityClass):
                classes.append(obj)
            else:
                others.append(obj)
        return cls(
            nodes=tuple(nodes),
            bound=tuple(bound),
            pending=tuple(sorted(pending, key=lambda p: p.key)),
            namespaces=tuple(namespaces),
            pdbs=tuple(pdbs),
            priority_classes=tuple(classes),
            others=tuple(others),
            config=config,
            registry=registry,
            seed=seed,
            end_time=end_time,
            known=bool(objects),
        )


def figures(items: Sequence[tuple[str, str, str]]) -> Markup:
    """A row of headline figures: ``(label, value, tone)`` with tone ``""``, ``ok`` or ``bad``.

    Each figure's element carries ``data-figure="<label>"`` so tools can find it.
    """
    out = ['<div class="figs">']
    for label, value, tone in items:
        cls = f"fig {tone}".strip()
        out.append(
            f'<div class="{cls}" data-figure="{esc(label)}"><span class="v">{esc(value)}</span>'
            f'<span class="k">{esc(label)}</span></div>'
        )
    out.append("</div>")
    return Markup("".join(out))


def _bar(resource: str, used: int, total: int) -> str:
    if total <= 0:
        return ""
    frac = used / total
    width = min(100.0, 100 * frac)
    over = " over" if frac > 1 else ""
    label = f"{resource} {pct(frac)}"
    return f'<div class="bar{over}" title="{esc(label)}"><i style="width:{width:.1f}%"></i></div>'


def placement_map(
    cluster: FinalCluster,
    options: ReportOptions,
    *,
    workload: frozenset[str] | None = None,
    moved: frozenset[str] = frozenset(),
    moved_note: str = "placed differently in the other run",
) -> Markup:
    """Nodes (grouped by zone when labelled) with the pods bound to each at the end, and the
    pods left pending.

    Args:
        workload: keys of the run's own pods; other bound pods are drawn as the cluster's.
        moved: keys of pods to highlight (placed differently in a comparison).
        moved_note: what the highlight means, for the legend.
    """
    if not cluster.known:
        return Markup(f'<p class="note">{esc(_MISSING_STATE)}</p>')
    on: dict[str, list[Pod]] = {}
    for pod in cluster.bound:
        on.setdefault(pod.spec.node_name, []).append(pod)
    zones: dict[str, list[Node]] = {}
    for node in cluster.nodes:
        zones.setdefault(node_zone(node), []).append(node)
    out = [
        '<p class="note">Each row is a node: its name, bars for the CPU and memory its pods '
        "request (of allocatable), then its pods (green)"
        + ("; grey: pods that were already running" if workload is not None else "")
        + (f"; orange: pods {esc(moved_note)}" if moved else "")
        + ". Hover for details.</p>"
    ]
    shown = 0
    for zone in sorted(zones):
        members = zones[zone]
        if shown >= options.max_rows:
            break
        pods_in_zone = sum(len(on.get(n.metadata.name, ())) for n in members)
        out.append(
            f'<div class="zone"><h4>{esc(f"zone {zone}" if zone else "no zone label")}: '
            f"{esc(num(len(members)))} nodes, {esc(num(pods_in_zone))} pods</h4>"
        )
        for node in members:
            if shown >= options.max_rows:
                break
            shown += 1
            name = node.metadata.name
            pods = sorted(on.get(name, ()), key=lambda p: p.key)
            used: dict[str, int] = {}
            for p in pods:
                for r, v in p.requests.items():
                    used[r] = used.get(r, 0) + v
            alloc = node.allocatable
            tip = f"{name}: {len(pods)} pods; " + ", ".join(
                f"{r} {pct(used.get(r, 0) / alloc[r]) if alloc.get(r) else '-'}"
                for r in ("cpu", "memory")
            )
            if node.spec.unschedulable:
                tip += "; cordoned"
            taints = node.spec.taints
            if taints:
                tip += "; taints " + ", ".join(
                    f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
                    for t in taints
                )
            marks = [
                m for m, on in (("cordoned", node.spec.unschedulable), ("tainted", taints)) if on
            ]
            mark = f" ({', '.join(marks)})" if marks else ""
            chips = []
            for p in pods[:_CHIPS_PER_NODE]:
                cls = "pod"
                if p.key in moved:
                    cls += " moved"
                elif workload is not None and p.key not in workload:
                    cls += " cl"
                chips.append(f'<span class="{cls}" title="{esc(p.key)}">{esc(p.name)}</span>')
            if len(pods) > _CHIPS_PER_NODE:
                chips.append(
                    f'<span class="note">and {len(pods) - _CHIPS_PER_NODE:,} more pods</span>'
                )
            out.append(
                f'<div class="node" data-node="{esc(name)}"><span class="n" title="{esc(tip)}">'
                f"{esc(name)}{esc(mark)}</span>"
                f'<span class="bars">{_bar("cpu", used.get("cpu", 0), alloc.get("cpu", 0))}'
                f"{_bar('memory', used.get('memory', 0), alloc.get('memory', 0))}</span>"
                f'<span class="pods">{"".join(chips)}</span></div>'
            )
        out.append("</div>")
    out.append(cap_note(shown, len(cluster.nodes), "nodes"))
    if cluster.pending:
        chips = [
            f'<span class="pod pend" title="{esc(p.key)}">{esc(p.name)}</span>'
            for p in cluster.pending[: options.max_rows]
        ]
        out.append(
            f"<h4>Pending at the end ({num(len(cluster.pending))})</h4>"
            f'<div class="pods">{"".join(chips)}</div>'
        )
        out.append(
            cap_note(
                min(options.max_rows, len(cluster.pending)), len(cluster.pending), "pending pods"
            )
        )
    return Markup("".join(out))


# --------------------------------------------------------------------------------------------
# Pending pods, explained
# --------------------------------------------------------------------------------------------


def _explain(cluster: FinalCluster, pod: Pod, registry: Registry | None) -> Explanation:
    from schedframe.explain import explain

    return explain(
        pod,
        nodes=cluster.nodes,
        pods=(*cluster.bound, *cluster.pending),
        namespaces=cluster.namespaces,
        pdbs=cluster.pdbs,
        workloads=cluster.others,
        priority_classes=cluster.priority_classes,
        config=cluster.config,
        registry=registry,
        seed=cluster.seed,
        now=cluster.end_time,
    )


def _by_plugin(exp: Explanation) -> list[tuple[str, str, str, int, list[str]]]:
    """``(plugin, code, reason, nodes, first node names)`` over the rejected nodes."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for n in exp.nodes:
        if n.feasible:
            continue
        plugin = n.plugin or ("PreFilter" if n.cut_by_pre_filter else "-")
        for reason in n.reasons or ("",):
            groups.setdefault((plugin, n.code, reason), []).append(n.name)
    rows = [(p, c, r, len(names), names[:5]) for (p, c, r), names in groups.items()]
    rows.sort(key=lambda row: (-row[3], row[0], row[2], row[1]))
    return rows


def _explanation_html(
    exp: Explanation, last_message: str, anchor: str, options: ReportOptions, alike: str
) -> str:
    out = [f'<div class="pending-pod" id="{esc(anchor)}"><h3>{esc(exp.pod)}</h3>{alike}']
    if last_message:
        out.append(
            f'<p>The scheduler\'s last attempt said:</p><div class="msg">{esc(last_message)}</div>'
        )
    same = exp.chosen is None and not exp.error and exp.message == last_message
    where = f"the cluster as it stood at the end (profile {exp.profile})"
    if same:
        out.append(f"<p>Against {esc(where)}, the same verdict.</p>")
    else:
        out.append(f"<p>Against {esc(where)}:</p>")
    if exp.error:
        out.append(f'<div class="msg">error: {esc(exp.error)}</div>')
    if exp.chosen is not None:
        out.append(
            f'<p class="note">It would fit now, on {esc(exp.chosen)}: the cluster changed after '
            "its last attempt and the run ended before it was retried.</p>"
        )
    elif exp.message and not same:
        out.append(f'<div class="msg">{esc(exp.message)}</div>')
    pre = exp.pre_filter
    if pre.code != "Success":
        out.append(f"<p>PreFilter: {esc(pre.plugin)} ({esc(pre.code)}): {esc(pre.message)}</p>")
    rows = _by_plugin(exp)
    if rows:
        cells: list[list[Cell]] = []
        for plugin, code, reason, count, names in rows:
            more = f" and {count - len(names):,} more" if count > len(names) else ""
            cells.append([plugin, code, reason or "-", count, ", ".join(names) + more])
        out.append("<h4>Why nodes were rejected, per plugin</h4>")
        out.append(
            table(
                ["plugin", "code", "reason", "nodes", "e.g."],
                cells,
                limit=options.max_rows,
                what="reasons",
            )
        )
    post = exp.post_filter
    if post is not None:
        if post.nominated_node:
            victims = ", ".join(post.victims) or "none"
            text = (
                f"PostFilter ({post.plugin or 'preemption'}): would nominate "
                f"{post.nominated_node}, evicting {victims}."
            )
        else:
            text = f"PostFilter ({post.plugin or '-'}, {post.code}): {post.message or 'no node'}"
        out.append(f"<p>{esc(text)}</p>")
    limit = min(options.max_rows, _NODES_PER_EXPLANATION)
    node_rows: list[list[Cell]] = [
        [
            n.name,
            n.zone or "-",
            "fits" if n.feasible else n.plugin or ("PreFilter" if n.cut_by_pre_filter else "-"),
            n.code,
            "; ".join(n.reasons) or "-",
            "; ".join(n.details) or "",
        ]
        for n in exp.nodes
    ]
    out.append(
        f"<details><summary>Every node ({num(len(exp.nodes))})</summary>"
        + table(
            ["node", "zone", "plugin", "code", "reasons", "details"],
            node_rows,
            limit=limit,
            what="nodes",
            hint="The per-plugin table above counts every node.",
        )
        + "</details>"
    )
    out.append("</div>")
    return "".join(out)


def _signature(pod: Pod) -> str:
    """What the scheduler reads of a pod: everything but its name, uid, resource version and
    creation time (pods of one template share it, and so share their explanation)."""
    import json

    from schedframe.objects import to_dict

    doc = to_dict(pod)
    meta = doc.get("metadata")
    if isinstance(meta, dict):
        meta = {
            k: v
            for k, v in meta.items()
            if k not in ("name", "uid", "resourceVersion", "creationTimestamp")
        }
    doc["metadata"] = meta
    return json.dumps(doc, sort_keys=True, default=str)


def explanations(
    cluster: FinalCluster,
    last_messages: Mapping[str, str],
    options: ReportOptions,
    *,
    prefix: str = "pending",
) -> Markup:
    """Each pending pod's explanation, node by node and plugin by plugin, against the final
    cluster. Pods alike in all but name (one template's) share one explanation; the first
    ``max_explained`` such groups are explained, the other pods listed with their last
    message."""
    from schedframe.errors import SchedframeError

    if not cluster.known:
        return Markup(f'<p class="note">{esc(_MISSING_STATE)}</p>')
    if not cluster.pending:
        return Markup('<p class="note">No pod was pending at the end.</p>')
    registry = cluster.registry
    if registry is None:
        from schedframe.runtime import Registry

        registry = Registry.discover()
    groups: dict[str, list[Pod]] = {}
    for pod in cluster.pending:
        groups.setdefault(_signature(pod), []).append(pod)
    out = [
        '<p class="note">Every pending pod is run once more through its profile\'s plugins on '
        "the cluster as it stood at the end (every node evaluated, nothing written; "
        "preemption only says what it would do). The scheduler's own last message comes "
        "first. Pods alike in all but their names share one explanation.</p>"
    ]
    explained = list(groups.values())[: options.max_explained]
    if explained:
        links = ", ".join(
            f'<a href="#{esc(prefix)}-{i}">{esc(g[0].key)}</a>'
            + (f" (+{len(g) - 1:,} alike)" if len(g) > 1 else "")
            for i, g in enumerate(explained)
        )
        out.append(f"<p>{links}</p>")
    for i, group in enumerate(explained):
        pod = group[0]
        anchor = f"{prefix}-{i}"
        last = last_messages.get(pod.key, "")
        alike = ""
        if len(group) > 1:
            names = [p.key for p in group[1:]]
            shown = ", ".join(names[:20]) + (
                f" and {len(names) - 20:,} more" if len(names) > 20 else ""
            )
            alike = (
                f'<p class="note">The same explanation holds for {len(names):,} more pending '
                f"pods alike in all but their names: {esc(shown)}.</p>"
            )
        try:
            exp = _explain(cluster, pod, registry)
        except SchedframeError as exc:
            out.append(
                f'<div class="pending-pod" id="{esc(anchor)}"><h3>{esc(pod.key)}</h3>{alike}'
                f'<div class="msg">{esc(last)}</div>'
                f'<p class="cap">Cannot explain it: {esc(exc)}</p></div>'
            )
            continue
        out.append(_explanation_html(exp, last, anchor, options, alike))
    rest = [p for g in list(groups.values())[options.max_explained :] for p in g]
    if rest:
        out.append(
            f'<p class="cap">{esc(num(len(rest)))} more pending pods are listed with their last '
            f"message only (explained: the first {num(len(explained))} kinds of pod; raise "
            "max_explained to explain more).</p>"
        )
        out.append(
            table(
                ["pod", "last message"],
                [[p.key, last_messages.get(p.key, "") or "-"] for p in rest],
                limit=options.max_rows,
                what="pending pods",
                table_id=f"{prefix}-rest",
                filterable=True,
            )
        )
    return Markup("".join(out))


# --------------------------------------------------------------------------------------------
# Timelines
# --------------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class TimelineEvent:
    """One step of a pod's story, as the timeline table shows it."""

    time: float
    event: str
    node: str = ""
    attempt: int = 0
    message: str = ""


def _event_html(e: TimelineEvent) -> str:
    parts = [f"{secs(e.time)} {e.event}"]
    if e.attempt:
        parts.append(f"(attempt {e.attempt})")
    if e.node:
        parts.append(f"on {e.node}" if e.event != "preempted" else f"from {e.node}")
    text = " ".join(parts)
    if e.message:
        text += f": {e.message}"
    return f'<li class="ev-{esc(e.event)}">{esc(text)}</li>'


def timeline_table(
    rows: Sequence[tuple[str, str, str, float | None, float | None, int, Sequence[TimelineEvent]]],
    options: ReportOptions,
    *,
    table_id: str,
    hint: str = "",
) -> Markup:
    """The per-pod timeline: ``(pod, state, node, queued, bound, attempts, events)`` rows."""
    cells: list[list[Cell]] = []
    for key, state, node, queued, bound, attempts, events in rows:
        if len(events) > 2 * _EVENTS_EACH_END:
            hidden = len(events) - 2 * _EVENTS_EACH_END
            items = [_event_html(e) for e in events[:_EVENTS_EACH_END]]
            items.append(f'<li class="note">{hidden:,} more events</li>')
            items += [_event_html(e) for e in events[-_EVENTS_EACH_END:]]
        else:
            items = [_event_html(e) for e in events]
        cells.append(
            [
                key,
                Markup(f'<span class="state s-{esc(state)}">{esc(state)}</span>'),
                node or "-",
                queued,
                bound,
                attempts,
                Markup(f'<ol class="ev">{"".join(items)}</ol>'),
            ]
        )
    return table(
        ["pod", "state", "node", "queued (s)", "bound (s)", "attempts", "events"],
        cells,
        limit=options.max_rows,
        what="pods",
        table_id=table_id,
        filterable=True,
        hint=hint,
        css="tl",
    )
