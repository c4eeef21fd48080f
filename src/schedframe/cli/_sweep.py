"""``schedframe sweep``: many scenario x configuration x seed cases, in parallel."""

from __future__ import annotations

import json
from pathlib import Path

import click

from schedframe.cli._main import (
    InputError,
    _common,
    _emit,
    _errors,
    _format,
    _output_option,
    cli,
)
from schedframe.cli._report import check_report_path, report_option, write_report_file

__all__ = ["sweep_command"]


@cli.command("sweep")
@click.argument("spec", metavar="SPEC")
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help='Where cases run: a local process pool, or Ray tasks (pip install "schedframe[ray]").',
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Cases run at once at most (local: processes; ray: CPUs of the local instance "
    "started). Default: the machine's CPU count.",
)
@click.option(
    "--ray-address",
    metavar="ADDRESS",
    default=None,
    help="The Ray cluster to run on (default: $RAY_ADDRESS; without either, a local instance "
    "is started and shut down).",
)
@click.option(
    "--out",
    "out_path",
    metavar="FILE",
    default=None,
    help="Also write the result as JSON to FILE.",
)
@_output_option
@report_option
@_common
@_errors
def sweep_command(
    spec: str,
    executor: str,
    jobs: int | None,
    ray_address: str | None,
    out_path: str | None,
    output_format: str | None,
    as_json: bool,
    report_path: str | None,
) -> None:
    """Run every case of the sweep SPEC, each in its own worker process.

    SPEC names scenarios and clusters, configurations and seeds: the cases are their
    cartesian product, then its explicit cases. Prints one line per case (bound and pending
    pods, utilisation, latency, a digest of the placements) in case order; -o json is the
    same, byte for byte, with every executor and job count. A failing case is reported with
    its error and the others still run; the exit code is then 1. ``--report FILE`` also
    writes an HTML page (every case, each configuration over its seeds, charts comparing
    them), the same bytes with every executor.
    """
    from schedframe.simulation import sweep

    fmt = _format(output_format, as_json)
    if ray_address is not None and executor != "ray":
        raise click.UsageError("--ray-address needs --executor ray")
    if out_path is not None:
        # Refuse an unwritable --out before the sweep runs, not after.
        try:
            Path(out_path).write_text("", encoding="utf-8")
        except OSError as exc:
            raise InputError(f"{out_path}: cannot write: {exc.strerror}") from None
    check_report_path(report_path)
    result = sweep(spec, executor=executor, jobs=jobs, ray_address=ray_address)
    if out_path is not None:
        Path(out_path).write_text(json.dumps(result.to_dict(), indent=2) + "\n", encoding="utf-8")
    _emit(result.to_dict(), fmt, result.to_text)
    write_report_file(result, report_path, to_stderr=fmt != "table")
    if result.errors:
        raise click.exceptions.Exit(1)
