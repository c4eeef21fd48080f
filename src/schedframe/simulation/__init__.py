"""Simulate a cluster: a real scheduler on the in-memory backend, in deterministic virtual time.

::

    from schedframe.objects import load_manifests
    from schedframe.simulation import load_workload, simulate

    result = simulate(
        cluster=load_manifests("examples/basic/cluster.yaml"),
        workload=load_workload("examples/basic/workload.yaml"),
        config="examples/basic/spread.yaml",
        seed=0,
    )
    print(result.summary().to_text())
    result.write_jsonl("decisions.jsonl")

This is what ``schedframe simulate`` runs. Workloads are Pod manifests or a small generator
spec (see :func:`load_workload`); plots need matplotlib (:func:`plot_simulation`).
"""

from __future__ import annotations

from schedframe.simulation._compare import Comparison, compare_scenario, pod_latencies
from schedframe.simulation._engine import (
    DEFAULT_MAX_VIRTUAL_TIME,
    Decision,
    PodRecord,
    Progress,
    SimulationResult,
    UsageChange,
    simulate,
)
from schedframe.simulation._fit import (
    FitResult,
    Victim,
    cluster_scheduler,
    expand_workload,
    will_it_fit,
)
from schedframe.simulation._plot import (
    MATPLOTLIB_HINT,
    plot_scores,
    plot_simulation,
    plot_utilisation,
)
from schedframe.simulation._replay import (
    DIVERGENCE_KINDS,
    Divergence,
    ReplayResult,
    replay,
)
from schedframe.simulation._scenario import (
    EVICTION_RETRY_SECONDS,
    OPERATIONS,
    Operation,
    PodEvent,
    Scenario,
    ScenarioResult,
    load_scenario,
    run_scenario,
    scenario_from_dict,
)
from schedframe.simulation._summary import (
    LATENCY_PERCENTILES,
    NodeUsage,
    Summary,
    ZoneUsage,
    summarize,
)
from schedframe.simulation._sweep import (
    EXECUTORS,
    RAY_HINT,
    WORKER_DIED,
    CaseResult,
    SweepCase,
    SweepError,
    SweepResult,
    load_sweep,
    placement_digest,
    run_case,
    sweep,
    sweep_from_dict,
)
from schedframe.simulation._table import format_table
from schedframe.simulation._trace import (
    TRACE_KIND,
    TRACE_VERSION,
    Trace,
    TraceEvent,
    TraceRecorder,
    load_trace,
    trace_from_lines,
    trace_from_scenario,
)
from schedframe.simulation._whatif import (
    Suggestion,
    counterfactuals,
    try_change,
)
from schedframe.simulation._workload import (
    ANNOTATION_ARRIVAL,
    ANNOTATION_DURATION,
    Arrival,
    Workload,
    generate_workload,
    load_workload,
    workload_from_pods,
)

__all__ = [
    "Comparison",
    "compare_scenario",
    "pod_latencies",
    "Suggestion",
    "counterfactuals",
    "try_change",
    "FitResult",
    "Victim",
    "cluster_scheduler",
    "expand_workload",
    "will_it_fit",
    "DIVERGENCE_KINDS",
    "Divergence",
    "ReplayResult",
    "replay",
    "TRACE_KIND",
    "TRACE_VERSION",
    "Trace",
    "TraceEvent",
    "TraceRecorder",
    "load_trace",
    "trace_from_lines",
    "trace_from_scenario",
    "EVICTION_RETRY_SECONDS",
    "OPERATIONS",
    "Operation",
    "PodEvent",
    "Scenario",
    "ScenarioResult",
    "load_scenario",
    "run_scenario",
    "scenario_from_dict",
    "EXECUTORS",
    "RAY_HINT",
    "CaseResult",
    "SweepCase",
    "SweepError",
    "SweepResult",
    "WORKER_DIED",
    "load_sweep",
    "placement_digest",
    "run_case",
    "sweep",
    "sweep_from_dict",
    "ANNOTATION_ARRIVAL",
    "ANNOTATION_DURATION",
    "DEFAULT_MAX_VIRTUAL_TIME",
    "LATENCY_PERCENTILES",
    "MATPLOTLIB_HINT",
    "Arrival",
    "Decision",
    "NodeUsage",
    "PodRecord",
    "Progress",
    "SimulationResult",
    "Summary",
    "UsageChange",
    "Workload",
    "ZoneUsage",
    "format_table",
    "generate_workload",
    "load_workload",
    "plot_scores",
    "plot_simulation",
    "plot_utilisation",
    "simulate",
    "summarize",
    "workload_from_pods",
]
