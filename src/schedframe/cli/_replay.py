"""``schedframe replay``: a recorded trace decided again by the real scheduler."""

from __future__ import annotations

from pathlib import Path

import click

from schedframe._cli_gates import gate_options
from schedframe.cli._main import _common, _emit, _errors, _format, _load_config, _output_option, cli
from schedframe.cli._report import check_report_path, report_option, write_report_file

__all__ = ["replay_command"]

#: Files read as a pod history exported as a scenario rather than as a trace.
SCENARIO_SUFFIXES = (".yaml", ".yml")


@cli.command("replay")
@click.argument("trace")
@click.option("--config", "-f", "config_path", metavar="FILE", help="KubeSchedulerConfiguration.")
@click.option(
    "--seed", default=0, show_default=True, help="Seed of the tie-breaking random source."
)
@_output_option
@report_option
@gate_options
@_common
@_errors
def replay_command(
    trace: str,
    config_path: str | None,
    seed: int,
    output_format: str | None,
    as_json: bool,
    report_path: str | None,
) -> None:
    """Replay TRACE (from `schedframe run --record-trace`) on the in-memory backend and
    report every pod the scheduler now places differently from the cluster.

    TRACE may also be a pod history exported as a scenario (``.yaml``). ``-o json`` prints
    the whole result, the replay's timelines included; the same trace, configuration and
    seed print the same bytes. ``--report FILE`` also writes an HTML page: the divergences,
    the replay's timelines, placement map and utilisation, and why pending pods are pending.
    """
    from schedframe.simulation import load_scenario, load_trace, replay, trace_from_scenario

    fmt = _format(output_format, as_json)
    check_report_path(report_path)
    if Path(trace).suffix in SCENARIO_SUFFIXES:
        loaded = trace_from_scenario(load_scenario(trace), name=trace)
    else:
        loaded = load_trace(trace)
    result = replay(loaded, _load_config(config_path), seed)
    _emit(result.to_dict(), fmt, result.to_text)
    write_report_file(result, report_path, to_stderr=fmt != "table")
