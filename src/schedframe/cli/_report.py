"""``--report FILE``: the HTML report of a run (``simulate``, ``scenario``, ``compare``,
``replay``, ``sweep``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

__all__ = ["check_report_path", "report_option", "write_report_file"]

F = TypeVar("F", bound=Callable[..., Any])


def report_option(fn: F) -> F:
    """``--report FILE``."""
    return click.option(
        "--report",
        "report_path",
        metavar="FILE",
        help="Also write a self-contained HTML report (summary, timelines, placement map, "
        "utilisation, why pending pods are pending) to FILE; it opens offline.",
    )(fn)


def check_report_path(path: str | None) -> None:
    """An unwritable report file fails before a long run, not after it."""
    if path is None:
        return
    from schedframe.cli._main import InputError

    try:
        Path(path).open("w", encoding="utf-8").close()
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None


def write_report_file(result: object, path: str | None, *, to_stderr: bool) -> None:
    """Write the report of ``result`` to ``path`` (if given) and say where it is."""
    if path is None:
        return
    from schedframe.report import write_report

    write_report(result, path)
    click.echo(f"Report: {path}", err=to_stderr)
