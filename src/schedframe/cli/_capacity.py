"""``schedframe scenario``, ``fit``, ``whatif`` and ``compare``: capacity questions."""

from __future__ import annotations

import click

from schedframe._cli_gates import gate_options
from schedframe.cli._main import (
    F,
    _common,
    _emit,
    _errors,
    _format,
    _load_config,
    _output_option,
    cli,
)
from schedframe.cli._report import check_report_path, report_option, write_report_file

__all__ = ["compare_command", "fit_command", "scenario_command", "whatif_command"]


def _cluster_objects(paths: tuple[str, ...]) -> list[object]:
    from schedframe.objects import load_manifests

    objects: list[object] = []
    for path in paths:
        objects.extend(load_manifests(path))
    return objects


@cli.command("scenario")
@click.argument("file")
@click.option("--config", "-f", "config_path", metavar="FILE", help="KubeSchedulerConfiguration.")
@click.option(
    "--seed", default=0, show_default=True, help="Seed of the tie-breaking random source."
)
@click.option("--timeline", is_flag=True, help="Also print every pod's timeline (table output).")
@report_option
@_output_option
@gate_options
@_common
@_errors
def scenario_command(
    file: str,
    config_path: str | None,
    seed: int,
    timeline: bool,
    report_path: str | None,
    output_format: str | None,
    as_json: bool,
) -> None:
    """Run the scenario FILE: timed operations on a cluster, with the real scheduler.

    Prints the final placements, the pending pods with their last reasons, utilisation and
    fragmentation (``-o json``: everything, timelines included).
    """
    from schedframe.simulation import load_scenario, run_scenario

    fmt = _format(output_format, as_json)
    check_report_path(report_path)
    scenario = load_scenario(file)
    result = run_scenario(scenario, config=_load_config(config_path), seed=seed)

    def text() -> str:
        out = result.to_text()
        if timeline:
            lines = [out, "", "Timelines:"]
            for pod, events in sorted(result.timelines.items()):
                lines.append(f"  {pod}")
                for e in events:
                    extra = " ".join(x for x in (e.node, e.message) if x)
                    lines.append(f"    {e.time:>8g}s  {e.event:<16} {extra}".rstrip())
            out = "\n".join(lines)
        return out

    _emit(result.to_dict(), fmt, text)
    write_report_file(result, report_path, to_stderr=fmt != "table")


def _cluster_and_workloads(fn: F) -> F:
    """The inputs ``fit`` and ``whatif`` share: the cluster, the workloads, config and seed."""
    fn = click.option(
        "--seed", default=0, show_default=True, help="Seed of the tie-breaking random source."
    )(fn)
    fn = click.option(
        "--config", "-f", "config_path", metavar="FILE", help="KubeSchedulerConfiguration."
    )(fn)
    fn = click.argument("workloads", nargs=-1, required=True)(fn)
    return click.option(
        "--cluster",
        "-c",
        "clusters",
        multiple=True,
        required=True,
        metavar="PATH",
        help="The cluster: Nodes, running Pods, PDBs ... (YAML, JSON or a folder). Repeatable.",
    )(fn)


@cli.command("fit")
@_cluster_and_workloads
@_output_option
@gate_options
@_common
@_errors
def fit_command(
    clusters: tuple[str, ...],
    workloads: tuple[str, ...],
    config_path: str | None,
    seed: int,
    output_format: str | None,
    as_json: bool,
) -> None:
    """Will the pods, gang or workload in WORKLOADS fit on the cluster as it is now?

    The cluster's pending pods are scheduled first; then WORKLOADS (Pods, Deployments,
    StatefulSets, Jobs, ...) are scheduled in a fork. Prints placements, the victims
    preemption would evict (with their PDBs) and the pods left pending. Exit code 1 when
    something does not fit.
    """
    from schedframe.simulation import cluster_scheduler, will_it_fit

    fmt = _format(output_format, as_json)
    sched = cluster_scheduler(
        _cluster_objects(clusters), config=_load_config(config_path), seed=seed
    )
    try:
        result = will_it_fit(_cluster_objects(workloads), sched)
    finally:
        sched.stop()
    _emit(result.to_dict(), fmt, result.to_text)
    if not result.fits:
        raise click.exceptions.Exit(1)


@cli.command("whatif")
@_cluster_and_workloads
@click.option(
    "--node-shape",
    metavar="FILE",
    help="A Node manifest: the shape of nodes to add (default: a copy of the largest node).",
)
@click.option("--max-nodes", default=10, show_default=True, help="Add at most this many nodes.")
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(
        [
            "addNodes",
            "tolerateTaint",
            "dropNodeSelector",
            "dropNodeAffinity",
            "dropPodAffinityTerm",
            "dropPodAntiAffinityTerm",
            "raiseMaxSkew",
            "lowerRequest",
            "movePod",
        ]
    ),
    help="Only this kind of change. Repeatable (default: every kind).",
)
@_output_option
@gate_options
@_common
@_errors
def whatif_command(
    clusters: tuple[str, ...],
    workloads: tuple[str, ...],
    config_path: str | None,
    seed: int,
    node_shape: str | None,
    max_nodes: int,
    kinds: tuple[str, ...],
    output_format: str | None,
    as_json: bool,
) -> None:
    """What is the smallest change that makes the pods of WORKLOADS schedule?

    Each suggestion (nodes to add, a taint to tolerate, a selector key or affinity term to
    drop, a maxSkew to raise, a request to lower, a pod to move) was checked by scheduling
    it in a fork of the cluster, and is the smallest of its kind.
    """
    from schedframe.objects import Node
    from schedframe.simulation import cluster_scheduler, counterfactuals, expand_workload

    fmt = _format(output_format, as_json)
    shape = None
    if node_shape is not None:
        shapes = [o for o in _cluster_objects((node_shape,)) if isinstance(o, Node)]
        if len(shapes) != 1:
            from schedframe.cli._main import InputError

            raise InputError(f"{node_shape}: expected exactly one Node, found {len(shapes)}")
        shape = shapes[0]
    cluster = _cluster_objects(clusters)
    sched = cluster_scheduler(cluster, config=_load_config(config_path), seed=seed)
    try:
        nodes = [o for o in cluster if isinstance(o, Node)]
        pods = expand_workload(_cluster_objects(workloads), nodes)
        found = counterfactuals(
            pods, sched, node_shape=shape, max_nodes=max_nodes, kinds=kinds or None
        )
    finally:
        sched.stop()

    def text() -> str:
        if not found:
            return "nothing to change: the pods schedule as they are (or no change of the kinds tried helps)"
        lines = ["Smallest changes that make every pod schedule (each checked in a fork):"]
        lines += [f"  - {s.description}" for s in found]
        return "\n".join(lines)

    _emit([s.to_dict() for s in found], fmt, text)


@cli.command("compare")
@click.argument("scenario_file", metavar="SCENARIO")
@click.option(
    "--config-a",
    "-a",
    "config_a",
    metavar="FILE",
    help="Configuration A (default: kube-scheduler's).",
)
@click.option(
    "--config-b",
    "-b",
    "config_b",
    metavar="FILE",
    help="Configuration B (default: kube-scheduler's).",
)
@click.option("--name-a", default="A", show_default=True, help="Label of side A.")
@click.option("--name-b", default="B", show_default=True, help="Label of side B.")
@click.option(
    "--seed", default=0, show_default=True, help="Seed of the tie-breaking random source."
)
@report_option
@_output_option
@gate_options
@_common
@_errors
def compare_command(
    scenario_file: str,
    config_a: str | None,
    config_b: str | None,
    name_a: str,
    name_b: str,
    seed: int,
    report_path: str | None,
    output_format: str | None,
    as_json: bool,
) -> None:
    """Run SCENARIO under two configurations and compare them side by side.

    Prints bound and pending counts, utilisation (at the end and time-weighted mean),
    fragmentation and latency per side, then the pods placed differently and the pods pending
    on one side only; ``-o json`` adds every pod's latency on both sides.
    """
    from schedframe.simulation import compare_scenario, load_scenario

    fmt = _format(output_format, as_json)
    if name_a == name_b:
        raise click.UsageError("--name-a and --name-b must differ")
    check_report_path(report_path)
    scenario = load_scenario(scenario_file)
    result = compare_scenario(
        scenario, _load_config(config_a), _load_config(config_b), seed=seed, names=(name_a, name_b)
    )
    _emit(result.to_dict(), fmt, result.to_text)
    write_report_file(result, report_path, to_stderr=fmt != "table")
