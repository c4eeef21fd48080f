"""Reports of a replay (what changed against the cluster) and of a sweep (every case, and
the cases of each configuration summarised over their seeds)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from schedframe.report._core import Report, ReportOptions, Section
from schedframe.report._html import Cell, Markup, Sortable, esc, num, pct, secs, table
from schedframe.report._parts import explanations, figures, placement_map, timeline_table
from schedframe.report._svg import BarSeries, bar_chart, step_chart

if TYPE_CHECKING:
    from schedframe.simulation import CaseResult, ReplayResult, SweepResult

__all__ = ["replay_report", "sweep_report"]


# --------------------------------------------------------------------------------------------
# A replay
# --------------------------------------------------------------------------------------------

#: How each divergence kind reads in the page.
_KIND_TEXT = {
    "node": "bound to another node",
    "pendingInReplay": "pending in the replay only",
    "pendingInCluster": "pending in the cluster only",
}


def replay_report(result: ReplayResult, options: ReportOptions) -> Report:
    """The report of a :func:`~schedframe.simulation.replay`: how many decisions came out as
    the cluster's, every one that did not, then the replay's own run in full."""
    from schedframe.report._kinds import (
        _scenario_cluster,
        _scenario_figures,
        _scenario_series,
        _scenario_timelines,
    )
    from schedframe.simulation import DIVERGENCE_KINDS

    run = result.replay
    by_kind = {k: sum(1 for d in result.divergences if d.kind == k) for k in DIVERGENCE_KINDS}
    diverged = len(result.divergences)
    pods = len(run.timelines.keys() | run.placements.keys() | run.pending.keys())
    figs: list[tuple[str, str, str]] = [
        ("pods", num(pods), ""),
        ("events replayed", num(result.events), ""),
        ("decisions", num(result.decisions), ""),
        ("as recorded", num(result.matched), "ok"),
        ("diverged", num(diverged), "bad" if diverged else ""),
    ]
    figs += [(f"diverged: {k}", num(n), "bad" if n else "") for k, n in by_kind.items()]
    figs.append(("refused events", num(len(run.rejected)), "bad" if run.rejected else ""))
    summary: list[str] = [figures(figs)]
    summary.append(
        '<p class="note">A decision is a pod the replayed configuration schedules that was '
        "created unbound; it diverges when the replay binds it elsewhere (node), leaves it "
        "pending while the cluster bound it (pendingInReplay), or binds it while the cluster "
        "did not (pendingInCluster).</p>"
    )
    summary.append("<h3>The replay's own run</h3>")
    summary.append(figures(_scenario_figures(run)))
    summary.append(
        f'<p class="note">Virtual time covered: {esc(secs(run.end_time))}. Latency is first '
        "queued to first bound, in virtual seconds (nearest-rank percentiles).</p>"
    )
    if run.rejected:
        summary.append(f"<h3>Events the in-memory API refused ({num(len(run.rejected))})</h3>")
        summary.append(
            table(
                ["time (s)", "event", "message"],
                [[t, what, msg] for t, what, msg in run.rejected],
                limit=options.max_rows,
                what="events",
            )
        )

    rows: list[list[Cell]] = []
    for d in result.divergences:
        rows.append(
            [
                d.pod,
                d.recorded_node or "(pending)",
                d.replayed_node or "(pending)",
                Markup(f'<span title="{esc(_KIND_TEXT.get(d.kind, d.kind))}">{esc(d.kind)}</span>'),
                d.reason if d.kind == "pendingInReplay" else "",
                d.reason if d.kind == "pendingInCluster" else "",
            ]
        )
    if rows:
        div_html = table(
            [
                "pod",
                "recorded node",
                "replayed node",
                "kind",
                "replay's last failure",
                "cluster's message",
            ],
            rows,
            limit=options.max_rows,
            what="divergences",
            table_id="divergence-table",
            filterable=True,
            hint="schedframe replay -o json lists every divergence.",
        )
    else:
        div_html = Markup(
            '<p class="note">None: every decision came out as the cluster made it.</p>'
        )

    cluster = _scenario_cluster(run)
    moved = frozenset(d.pod for d in result.divergences if d.kind == "node")
    sections = (
        Section(id="summary", title="Summary", html=Markup("".join(summary))),
        Section(id="divergences", title=f"Divergences ({num(diverged)})", html=div_html),
        Section(
            id="utilisation",
            title="Utilisation",
            html=step_chart(
                _scenario_series(run),
                end=run.end_time,
                title="Requested / allocatable over the cluster (replay)",
            ),
        ),
        Section(
            id="placement",
            title="Placement map (replay)",
            html=placement_map(
                cluster, options, moved=moved, moved_note="the cluster had bound elsewhere"
            ),
        ),
        Section(
            id="timeline",
            title="Pod timelines (replay)",
            html=timeline_table(
                _scenario_timelines(run),
                options,
                table_id="timeline-table",
                hint="schedframe replay -o json prints every timeline.",
            ),
        ),
        Section(
            id="pending",
            title=f"Pending pods ({num(len(cluster.pending))})",
            html=explanations(cluster, run.pending, options, prefix="pending"),
        ),
    )
    subtitle = (
        f"{num(result.events)} events replayed: {num(result.decisions)} decisions, "
        f"{num(result.matched)} as recorded, {num(diverged)} diverged; seed {result.seed}; "
        f"{secs(run.end_time)} of virtual time"
    )
    return Report(title="schedframe replay report", subtitle=subtitle, sections=sections)


# --------------------------------------------------------------------------------------------
# A sweep
# --------------------------------------------------------------------------------------------


def _util(r: CaseResult, resource: str, which: str) -> float | None:
    value = r.utilisation.get(resource, {}).get(which)
    return None if value is None else float(value)


def _pct_cell(value: float | None) -> Cell:
    return None if value is None else Sortable(pct(value), value)


def _secs_cell(value: float | None) -> Cell:
    return None if value is None else Sortable(secs(value), value)


def _stats(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean, minimum and maximum (zeros for none)."""
    if not values:
        return (0.0, 0.0, 0.0)
    return (sum(values) / len(values), min(values), max(values))


_LATENCY_KEYS = ("p50", "p90", "p99", "max")


def _case_rows(result: SweepResult) -> list[list[Cell]]:
    rows: list[list[Cell]] = []
    for r in result.results:
        c = r.case
        head: list[Cell] = [c.id, c.input, c.kind, c.config, c.seed]
        if r.error:
            first = r.error.splitlines()[0] if r.error.strip() else r.error
            rows.append([*head, *([None] * (6 + len(_LATENCY_KEYS))), "-", first])
            continue
        digest = r.placement_digest.removeprefix("sha256:")
        rows.append(
            [
                *head,
                r.bound,
                r.pending,
                _pct_cell(_util(r, "cpu", "end")),
                _pct_cell(_util(r, "cpu", "mean")),
                _pct_cell(_util(r, "memory", "end")),
                _pct_cell(_util(r, "memory", "mean")),
                *(_secs_cell(r.latency.get(k)) for k in _LATENCY_KEYS),
                Markup(
                    f'<code title="{esc(r.placement_digest)}">{esc(digest[:12])}</code>'
                    f"<span hidden>{esc(digest)}</span>"
                ),
                "",
            ]
        )
    return rows


def _groups(result: SweepResult) -> dict[tuple[str, str], list[CaseResult]]:
    """The cases by (input, configuration), in the order they first appear."""
    out: dict[tuple[str, str], list[CaseResult]] = {}
    for r in result.results:
        out.setdefault((r.case.input, r.case.config), []).append(r)
    return out


def _group_rows(groups: Mapping[tuple[str, str], Sequence[CaseResult]]) -> list[list[Cell]]:
    rows: list[list[Cell]] = []
    for (name, config), cases in groups.items():
        ok = [r for r in cases if not r.error]
        seeds = ", ".join(str(s) for s in sorted({r.case.seed for r in cases}))
        row: list[Cell] = [name, config, len(cases), len(cases) - len(ok), seeds]
        for values in (
            [float(r.bound) for r in ok],
            [float(r.pending) for r in ok],
        ):
            if ok:
                row += list(_stats(values))
            else:
                row += [None, None, None]
        for resource in ("cpu", "memory"):
            values = [v for r in ok if (v := _util(r, resource, "end")) is not None]
            if values:
                row += [_pct_cell(v) for v in _stats(values)]
            else:
                row += [None, None, None]
        rows.append(row)
    return rows


def sweep_report(result: SweepResult, options: ReportOptions) -> Report:
    """The report of a :func:`~schedframe.simulation.sweep`: every case in one table, the
    cases of each input and configuration summarised over their seeds, and charts comparing
    the configurations.

    Only what the cases computed is shown (not the executor, its job count or the wall
    time), so the page is byte-identical whichever executor ran the sweep.
    """
    cases = result.results
    failed = len(result.errors)
    inputs = sorted({r.case.input for r in cases})
    configs = sorted({r.case.config for r in cases})
    seeds = sorted({r.case.seed for r in cases})
    groups = _groups(result)
    figs: list[tuple[str, str, str]] = [
        ("cases", num(len(cases)), ""),
        ("ran", num(len(cases) - failed), "ok"),
        ("failed", num(failed), "bad" if failed else ""),
        ("inputs", num(len(inputs)), ""),
        ("configs", num(len(configs)), ""),
        ("seeds", num(len(seeds)), ""),
    ]
    summary: list[str] = [figures(figs)]
    summary.append(
        '<p class="note">Bound and pending pods, utilisation (requested / allocatable over the '
        "cluster, at the end) of the cases that ran, per input and configuration: mean, "
        "minimum and maximum over their seeds.</p>"
    )
    summary.append(
        '<div class="scroll">'
        + table(
            [
                "input",
                "config",
                "cases",
                "failed",
                "seeds",
                "bound mean",
                "bound min",
                "bound max",
                "pending mean",
                "pending min",
                "pending max",
                "cpu mean",
                "cpu min",
                "cpu max",
                "memory mean",
                "memory min",
                "memory max",
            ],
            _group_rows(groups),
            limit=options.max_rows,
            what="groups",
            table_id="config-table",
            filterable=True,
        )
        + "</div>"
    )
    if failed:
        summary.append(f"<h3>Failed cases ({num(failed)})</h3>")
        summary.append(
            table(
                ["id", "input", "config", "seed", "error"],
                [
                    [
                        r.case.id,
                        r.case.input,
                        r.case.config,
                        r.case.seed,
                        Markup(f'<div class="msg">{esc(r.error)}</div>'),
                    ]
                    for r in result.errors
                ],
                limit=options.max_rows,
                what="cases",
            )
        )

    names = [f"{name} / {config}" for name, config in groups]
    util_series: list[BarSeries] = []
    for resource in ("cpu", "memory"):
        stats: list[tuple[float, float, float]] = []
        for members in groups.values():
            values = [
                v for r in members if not r.error and (v := _util(r, resource, "end")) is not None
            ]
            stats.append(_stats(values))
        util_series.append((f"{resource} used (end)", stats))
    count_series: list[BarSeries] = []
    top = 0.0
    for label, attr in (("bound", "bound"), ("pending", "pending")):
        stats = []
        for members in groups.values():
            values = [float(getattr(r, attr)) for r in members if not r.error]
            stats.append(_stats(values))
            top = max([top, *values])
        count_series.append((label, stats))
    charts = [
        bar_chart(names, util_series, title="Utilisation at the end, per input and configuration"),
        bar_chart(
            names,
            count_series,
            title="Bound and pending pods, per input and configuration",
            y_max=top if top > 0 else 1.0,
            percent=False,
        ),
    ]

    headers = [
        "id",
        "input",
        "kind",
        "config",
        "seed",
        "bound",
        "pending",
        "cpu end",
        "cpu mean",
        "memory end",
        "memory mean",
        *(f"latency {k}" for k in _LATENCY_KEYS),
        "placements",
        "error",
    ]
    sections = (
        Section(id="summary", title="Summary", html=Markup("".join(summary))),
        Section(id="configs", title="Configurations compared", html=Markup("".join(charts))),
        Section(
            id="cases",
            title=f"Cases ({num(len(cases))})",
            html=Markup(
                '<div class="scroll">'
                + table(
                    headers,
                    _case_rows(result),
                    limit=options.max_rows,
                    what="cases",
                    table_id="cases-table",
                    filterable=True,
                    hint="schedframe sweep -o json lists every case.",
                )
                + "</div>"
            ),
        ),
    )
    subtitle = (
        f"{num(len(cases))} cases ({num(len(inputs))} inputs, {num(len(configs))} "
        f"configurations, {num(len(seeds))} seeds); {num(failed)} failed"
    )
    return Report(title="schedframe sweep report", subtitle=subtitle, sections=sections)
