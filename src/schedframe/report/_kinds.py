"""The built-in result kinds: a simulation, a scenario run and an A/B comparison (a replay
and a sweep are in ``_runs``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from schedframe.report._core import Report, ReportOptions, Section, register_result_kind
from schedframe.report._html import Cell, Markup, esc, num, pct, secs, table
from schedframe.report._parts import (
    FinalCluster,
    TimelineEvent,
    explanations,
    figures,
    placement_map,
    timeline_table,
)
from schedframe.report._svg import Series, step_chart

if TYPE_CHECKING:
    from schedframe.simulation import Comparison, ScenarioResult, SimulationResult

__all__ = ["register_builtin"]

_registered = False


def register_builtin() -> None:
    """Register the built-in kinds (once; importing the simulation package is deferred)."""
    global _registered
    if _registered:
        return
    from schedframe.report._runs import replay_report, sweep_report
    from schedframe.simulation import (
        Comparison,
        ReplayResult,
        ScenarioResult,
        SimulationResult,
        SweepResult,
    )

    register_result_kind(SimulationResult, simulation_report)
    register_result_kind(ScenarioResult, scenario_report)
    register_result_kind(Comparison, comparison_report)
    register_result_kind(ReplayResult, replay_report)
    register_result_kind(SweepResult, sweep_report)
    _registered = True


def _latency_figures(latency: Mapping[str, float]) -> list[tuple[str, str, str]]:
    return [(f"latency {k}", secs(v), "") for k, v in latency.items()]


def _percentiles(values: Sequence[float]) -> dict[str, float]:
    from schedframe.simulation import LATENCY_PERCENTILES
    from schedframe.simulation._summary import percentile

    ordered = sorted(values)
    if not ordered:
        return {}
    out = {f"p{p}": percentile(ordered, p) for p in LATENCY_PERCENTILES}
    out["max"] = ordered[-1]
    return out


# --------------------------------------------------------------------------------------------
# A simulation
# --------------------------------------------------------------------------------------------


def _usage_series(result: SimulationResult, resources: Sequence[str]) -> list[Series]:
    """Cluster-wide requested / allocatable of each resource over time."""
    alloc = {r: sum(n.status.allocatable.get(r, 0) for n in result.nodes) for r in resources}
    current: dict[str, Mapping[str, int]] = {}
    totals = dict.fromkeys(resources, 0)
    points: dict[str, list[tuple[float, float]]] = {r: [] for r in resources}
    for ch in result.usage:
        before = current.get(ch.node, {})
        for r in resources:
            totals[r] += ch.requested.get(r, 0) - before.get(r, 0)
        current[ch.node] = ch.requested
        for r in resources:
            if alloc[r] <= 0:
                continue
            value = totals[r] / alloc[r]
            series = points[r]
            if series and series[-1][0] == ch.time:
                series[-1] = (ch.time, value)
            else:
                series.append((ch.time, value))
    return [(r, points[r]) for r in resources if alloc[r] > 0]


def _sim_timelines(
    result: SimulationResult,
) -> list[tuple[str, str, str, float | None, float | None, int, Sequence[TimelineEvent]]]:
    by_pod: dict[str, list[TimelineEvent]] = {}
    names = {"unschedulable": "failed", "scheduled": "bound"}
    for d in result.decisions:
        message = d.message or (f"by {d.by}" if d.by else "")
        by_pod.setdefault(d.pod, []).append(
            TimelineEvent(
                time=d.time,
                event=names.get(d.event, d.event),
                node=d.node,
                attempt=d.attempt,
                message=message,
            )
        )
    rows: list[tuple[str, str, str, float | None, float | None, int, Sequence[TimelineEvent]]] = []
    for rec in result.pods:
        events = by_pod.pop(rec.key, [])
        if rec.arrived:
            events.insert(0, TimelineEvent(time=rec.arrival, event="queued"))
        if rec.state == "pending" and rec.last_outcome == "never-attempted":
            events.append(
                TimelineEvent(time=result.end_time, event="pending", message=rec.last_message)
            )
        rows.append(
            (
                rec.key,
                rec.state,
                rec.node,
                rec.arrival if rec.arrived else None,
                rec.bound_at,
                rec.attempts,
                events,
            )
        )
    # Pods of the cluster that something happened to (preemption victims).
    for key in sorted(by_pod):
        events = by_pod[key]
        state = "preempted" if any(e.event == "preempted" for e in events) else "running"
        rows.append((key, state, events[-1].node, None, None, 0, events))
    return rows


def simulation_report(result: SimulationResult, options: ReportOptions) -> Report:
    """The report of one :func:`~schedframe.simulation.simulate` run."""
    summary = result.summary()
    res = summary.resources
    cluster = FinalCluster.of(
        result.final_objects,
        config=result.config,
        registry=result.registry,
        seed=result.seed,
        end_time=result.end_time,
    )
    alloc = {r: sum(n.allocatable.get(r, 0) for n in summary.nodes) for r in res}
    used_end = {r: sum(n.requested.get(r, 0) for n in summary.nodes) for r in res}
    used_mean = {r: sum(n.average.get(r, 0.0) for n in summary.nodes) for r in res}

    figs: list[tuple[str, str, str]] = [
        ("pods", num(summary.pods), ""),
        ("bound", num(summary.bound), "ok"),
        ("running", num(summary.running), ""),
        ("completed", num(summary.completed), ""),
        ("pending", num(summary.unschedulable), "bad" if summary.unschedulable else ""),
        ("preempted", num(summary.preempted), "bad" if summary.preempted else ""),
    ]
    if summary.not_arrived:
        figs.append(("not arrived", num(summary.not_arrived), ""))
    figs.append(("attempts", num(summary.attempts), ""))
    figs += _latency_figures(summary.latency)
    for r in ("cpu", "memory"):
        if alloc.get(r):
            figs.append((f"{r} used (end)", pct(used_end[r] / alloc[r]), ""))
            figs.append((f"{r} used (mean)", pct(used_mean[r] / alloc[r]), ""))
    body: list[str] = [figures(figs)]
    body.append(
        f'<p class="note">Virtual time covered: {esc(secs(result.end_time))}. Latency is '
        "arrival to binding, in virtual seconds (nearest-rank percentiles of bound pods).</p>"
    )
    for sentence in result.unsettled:
        body.append(f'<p class="cap">The run did not settle: {esc(sentence)}</p>')
    if summary.reasons:
        body.append("<h3>Why pods are pending (their last attempt)</h3>")
        body.append(
            table(
                ["reason", "pods"],
                [[r, n] for r, n in summary.reasons],
                limit=options.max_rows,
                what="reasons",
            )
        )

    chart = step_chart(
        _usage_series(result, res),
        end=result.end_time,
        title="Requested / allocatable over the cluster",
    )
    util: list[str] = [chart]
    zones = [z for z in summary.zones if z.zone]
    if zones:
        util.append("<h3>Zones (at the end)</h3>")
        util.append(
            table(
                ["zone", "nodes", "pods", *res, *(f"{r} avg" for r in res)],
                [
                    [
                        z.zone,
                        z.nodes,
                        z.pods,
                        *(pct(z.utilisation(r)) for r in res),
                        *(
                            pct(z.average[r] / z.allocatable[r]) if z.allocatable[r] else "-"
                            for r in res
                        ),
                    ]
                    for z in summary.zones
                ],
                limit=options.max_rows,
                what="zones",
            )
        )
    util.append("<h3>Nodes (requested / allocatable)</h3>")
    util.append(
        table(
            [
                "node",
                "zone",
                "pods",
                *(f"{r} end" for r in res),
                *(f"{r} avg" for r in res),
                *(f"{r} peak" for r in res),
            ],
            [
                [
                    n.name,
                    n.zone or "-",
                    n.pods,
                    *(pct(n.utilisation(r)) for r in res),
                    *(
                        pct(n.average[r] / n.allocatable[r]) if n.allocatable[r] else "-"
                        for r in res
                    ),
                    *(pct(n.peak[r] / n.allocatable[r]) if n.allocatable[r] else "-" for r in res),
                ]
                for n in summary.nodes
            ],
            limit=options.max_rows,
            what="nodes",
            table_id="nodes-table",
            filterable=True,
            hint="schedframe simulate -o json lists every node.",
        )
    )
    workload = frozenset(r.key for r in result.pods)
    last = {r.key: r.last_message for r in result.pods if r.state == "pending"}
    sections = (
        Section(id="summary", title="Summary", html=Markup("".join(body))),
        Section(id="utilisation", title="Utilisation", html=Markup("".join(util))),
        Section(
            id="placement",
            title="Placement map",
            html=placement_map(cluster, options, workload=workload),
        ),
        Section(
            id="timeline",
            title="Pod timelines",
            html=timeline_table(
                _sim_timelines(result),
                options,
                table_id="timeline-table",
                hint="schedframe simulate --decisions FILE writes every decision.",
            ),
        ),
        Section(
            id="pending",
            title=f"Pending pods ({num(len(cluster.pending))})",
            html=explanations(cluster, last, options),
        ),
    )
    subtitle = (
        f"{num(summary.pods)} pods on {num(len(result.nodes))} nodes; profiles "
        f"{', '.join(result.profiles) or '-'}; seed {result.seed}; "
        f"{secs(result.end_time)} of virtual time"
    )
    return Report(title="schedframe simulation report", subtitle=subtitle, sections=sections)


# --------------------------------------------------------------------------------------------
# A scenario run
# --------------------------------------------------------------------------------------------


def _scenario_state(result: ScenarioResult, key: str) -> str:
    if key in result.placements:
        return "bound"
    if key in result.pending:
        return "pending"
    for e in reversed(result.timelines.get(key, ())):
        if e.event in ("completed", "deleted", "evicted", "preempted"):
            return e.event
    return "deleted"


def _scenario_timelines(
    result: ScenarioResult,
) -> list[tuple[str, str, str, float | None, float | None, int, Sequence[TimelineEvent]]]:
    rows: list[tuple[str, str, str, float | None, float | None, int, Sequence[TimelineEvent]]] = []
    keys = set(result.timelines) | set(result.placements) | set(result.pending)

    def first_time(key: str) -> tuple[float, str]:
        events = result.timelines.get(key, ())
        return (events[0].time if events else 0.0, key)

    for key in sorted(keys, key=first_time):
        events = result.timelines.get(key, ())
        queued = next((e.time for e in events if e.event == "queued"), None)
        bound = next((e.time for e in events if e.event == "bound"), None)
        attempts = max((e.attempt for e in events), default=0)
        node = result.placements.get(key, "")
        if not node:
            node = next((e.node for e in reversed(events) if e.node), "")
        rows.append(
            (
                key,
                _scenario_state(result, key),
                node,
                queued,
                bound,
                attempts,
                [
                    TimelineEvent(
                        time=e.time,
                        event=e.event,
                        node=e.node,
                        attempt=e.attempt,
                        message=e.message,
                    )
                    for e in events
                ],
            )
        )
    return rows


def _scenario_cluster(result: ScenarioResult) -> FinalCluster:
    return FinalCluster.of(
        result.final_objects,
        config=result.config,
        registry=result.registry,
        seed=result.seed,
        end_time=result.end_time,
    )


def _scenario_figures(result: ScenarioResult) -> list[tuple[str, str, str]]:
    from schedframe.simulation import pod_latencies
    from schedframe.simulation._compare import _mean_utilisation

    figs: list[tuple[str, str, str]] = [
        ("bound", num(len(result.placements)), "ok"),
        ("pending", num(len(result.pending)), "bad" if result.pending else ""),
        (
            "preempted",
            num(sum(1 for ev in result.timelines.values() for e in ev if e.event == "preempted")),
            "",
        ),
        ("attempts", num(result.attempts), ""),
    ]
    figs += _latency_figures(_percentiles(list(pod_latencies(result).values())))
    end = result.utilisation[-1][1] if result.utilisation else {}
    mean = _mean_utilisation(result)
    for r in ("cpu", "memory"):
        if r in end:
            figs.append((f"{r} used (end)", pct(end[r]), ""))
            figs.append((f"{r} used (mean)", pct(mean.get(r)), ""))
    for r, f in result.fragmentation.items():
        figs.append((f"{r} fragmentation", f"{f:.3f}", ""))
    return figs


def _scenario_series(result: ScenarioResult) -> list[Series]:
    names = sorted({r for _, u in result.utilisation for r in u}, key=_resource_order)
    return [(r, [(t, u.get(r, 0.0)) for t, u in result.utilisation]) for r in names]


def _resource_order(name: str) -> tuple[int, str]:
    order = {"cpu": 0, "memory": 1, "pods": 2}
    return (order.get(name, 3), name)


def _rejected(result: ScenarioResult, options: ReportOptions) -> str:
    if not result.rejected:
        return ""
    return "<h3>Operations the API refused</h3>" + table(
        ["time (s)", "operation", "message"],
        [[t, op, msg] for t, op, msg in result.rejected],
        limit=options.max_rows,
        what="operations",
    )


def _scenario_sections(result: ScenarioResult, options: ReportOptions) -> list[Section]:
    cluster = _scenario_cluster(result)
    summary = [
        figures(_scenario_figures(result)),
        f'<p class="note">Virtual time covered: {esc(secs(result.end_time))}. Latency is '
        "first queued to first bound, in virtual seconds (nearest-rank percentiles); "
        "fragmentation is 1 - the largest free amount on one schedulable node / all free.</p>",
        _rejected(result, options),
    ]
    return [
        Section(id="summary", title="Summary", html=Markup("".join(summary))),
        Section(
            id="utilisation",
            title="Utilisation",
            html=step_chart(
                _scenario_series(result),
                end=result.end_time,
                title="Requested / allocatable over the cluster",
            ),
        ),
        Section(id="placement", title="Placement map", html=placement_map(cluster, options)),
        Section(
            id="timeline",
            title="Pod timelines",
            html=timeline_table(
                _scenario_timelines(result),
                options,
                table_id="timeline-table",
                hint="-o json prints every timeline.",
            ),
        ),
        Section(
            id="pending",
            title=f"Pending pods ({num(len(cluster.pending))})",
            html=explanations(cluster, result.pending, options, prefix="pending"),
        ),
    ]


def scenario_report(result: ScenarioResult, options: ReportOptions) -> Report:
    """The report of one :func:`~schedframe.simulation.run_scenario` run."""
    pods = len(result.timelines.keys() | result.placements.keys() | result.pending.keys())
    subtitle = (
        f"{num(pods)} pods; {num(len(result.placements))} bound and "
        f"{num(len(result.pending))} pending at the end; seed {result.seed}; "
        f"{secs(result.end_time)} of virtual time"
    )
    return Report(
        title="schedframe scenario report",
        subtitle=subtitle,
        sections=tuple(_scenario_sections(result, options)),
    )


# --------------------------------------------------------------------------------------------
# A comparison
# --------------------------------------------------------------------------------------------


def comparison_report(comparison: Comparison, options: ReportOptions) -> Report:
    """The report of a :func:`~schedframe.simulation.compare_scenario` comparison: both runs
    side by side, then what differs, then each run in full."""
    a_name, b_name = comparison.names
    a, b = comparison.a, comparison.b
    rows: list[list[Cell]] = [list(row) for row in comparison.summary_rows(pct, secs)]
    side = (
        '<div class="side">'
        f"<div><h3>{esc(a_name)}</h3>{figures(_scenario_figures(a))}</div>"
        f"<div><h3>{esc(b_name)}</h3>{figures(_scenario_figures(b))}</div></div>"
    )
    overview = side + table(["", a_name, b_name], rows, limit=options.max_rows, what="rows")

    diff = comparison.placement_diff
    only_a, only_b = comparison.pending_diff
    changes = [
        f"<p>{esc(num(len(diff)))} pods placed differently; "
        f"{esc(num(len(only_a)))} pending only with {esc(a_name)}, "
        f"{esc(num(len(only_b)))} only with {esc(b_name)}.</p>"
    ]
    if diff:
        changes.append(f"<h3>Placed differently ({num(len(diff))})</h3>")
        changes.append(
            table(
                ["pod", a_name, b_name],
                [[k, na or "(pending)", nb or "(pending)"] for k, (na, nb) in diff.items()],
                limit=options.max_rows,
                what="pods",
                table_id="diff-table",
                filterable=True,
                hint="-o json lists every pod.",
            )
        )
    for name, only in ((a_name, only_a), (b_name, only_b)):
        changes.append(f"<h3>Pending only with {esc(name)} ({num(len(only))})</h3>")
        if only:
            side_result = a if name == a_name else b
            changes.append(
                table(
                    ["pod", "last message"],
                    [[k, side_result.pending.get(k, "")] for k in only],
                    limit=options.max_rows,
                    what="pods",
                )
            )
        else:
            changes.append('<p class="note">None.</p>')
    lat = [
        [k, la, lb, (lb - la) if la is not None and lb is not None else None]
        for k, (la, lb) in comparison.latencies.items()
        if la != lb
    ]
    if lat:
        changes.append(f"<h3>Latency differs ({num(len(lat))} pods, seconds)</h3>")
        changes.append(
            table(
                ["pod", a_name, b_name, f"{b_name} - {a_name}"],
                lat,
                limit=options.max_rows,
                what="pods",
            )
        )

    series: list[Series] = []
    for r in ("cpu", "memory"):
        for name, result in ((a_name, a), (b_name, b)):
            series.append((f"{name} {r}", [(t, u.get(r, 0.0)) for t, u in result.utilisation]))
    chart = step_chart(
        series,
        end=max(a.end_time, b.end_time),
        title=f"Requested / allocatable: {a_name} and {b_name}",
    )
    moved = frozenset(diff)
    maps = (
        '<div class="side">'
        f"<div><h3>{esc(a_name)}</h3>{placement_map(_scenario_cluster(a), options, moved=moved)}</div>"
        f"<div><h3>{esc(b_name)}</h3>{placement_map(_scenario_cluster(b), options, moved=moved)}</div>"
        "</div>"
    )
    sections: list[Section] = [
        Section(id="overview", title="Side by side", html=overview),
        Section(id="differences", title="Differences", html=Markup("".join(changes))),
        Section(id="utilisation", title="Utilisation", html=chart),
        Section(id="placement", title="Placement maps", html=maps),
    ]
    for prefix, name, result in (("a", a_name, a), ("b", b_name, b)):
        cluster = _scenario_cluster(result)
        sections.append(
            Section(
                id=f"{prefix}-timeline",
                title=f"{name}: timelines",
                html=timeline_table(
                    _scenario_timelines(result), options, table_id=f"{prefix}-timeline-table"
                ),
            )
        )
        sections.append(
            Section(
                id=f"{prefix}-pending",
                title=f"{name}: pending ({num(len(cluster.pending))})",
                html=explanations(cluster, result.pending, options, prefix=f"{prefix}-pending"),
            )
        )
    subtitle = f"{a_name} versus {b_name}: the same scenario and seed under two configurations"
    return Report(
        title=f"schedframe comparison: {a_name} / {b_name}",
        subtitle=subtitle,
        sections=tuple(sections),
    )
