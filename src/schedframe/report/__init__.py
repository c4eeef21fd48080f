"""One self-contained HTML page per run or comparison: summary, per-pod timelines, placement
map, utilisation charts and, for every pending pod, why each node refused it.

::

    from schedframe.objects import load_manifests
    from schedframe.report import write_report
    from schedframe.simulation import load_workload, simulate

    result = simulate(
        cluster=load_manifests("examples/basic/cluster.yaml"),
        workload=load_workload("examples/basic/workload.yaml"),
        config="examples/basic/spread.yaml",
    )
    write_report(result, "report.html")

The page has its CSS, its SVG charts and a little script (table sorting and filtering) inline
and fetches nothing, so it opens offline and from ``file://``. Reports exist for a
:class:`~schedframe.simulation.SimulationResult`, a
:class:`~schedframe.simulation.ScenarioResult`, a
:class:`~schedframe.simulation.Comparison`, a :class:`~schedframe.simulation.ReplayResult` and
a :class:`~schedframe.simulation.SweepResult`; :func:`register_result_kind` adds others.
"""

from __future__ import annotations

from schedframe.report._core import (
    DEFAULT_MAX_EXPLAINED,
    DEFAULT_MAX_ROWS,
    Report,
    ReportOptions,
    Section,
    register_result_kind,
    render_report,
    write_report,
)

__all__ = [
    "DEFAULT_MAX_EXPLAINED",
    "DEFAULT_MAX_ROWS",
    "Report",
    "ReportOptions",
    "Section",
    "register_result_kind",
    "render_report",
    "write_report",
]
