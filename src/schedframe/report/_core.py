"""The report's shape: sections built per result kind, assembled into one page."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

import attrs

from schedframe.report._html import Markup, esc, page

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

#: Rows a table shows at most (the rest is left out with a note saying so).
DEFAULT_MAX_ROWS: Final = 1000
#: Pending pods explained node by node at most (the others are listed with their last message).
DEFAULT_MAX_EXPLAINED: Final = 10

_ID: Final = re.compile(r"[a-z][a-z0-9-]*")

T = TypeVar("T")


@attrs.frozen(kw_only=True)
class ReportOptions:
    """How much a report shows.

    Attributes:
        max_rows: rows a table (and nodes the placement map) shows at most; what is left out
            is counted in a note under it, never dropped silently.
        max_explained: pending pods explained node by node and plugin by plugin at most; the
            others are listed with their last failure message.
    """

    max_rows: int = DEFAULT_MAX_ROWS
    max_explained: int = DEFAULT_MAX_EXPLAINED

    def __attrs_post_init__(self) -> None:
        if self.max_rows < 1:
            raise ValueError(f"max_rows must be at least 1, not {self.max_rows}")
        if self.max_explained < 0:
            raise ValueError(f"max_explained must be at least 0, not {self.max_explained}")


@attrs.frozen(kw_only=True)
class Section:
    """One section of a report page: a heading, a link in the page's navigation, a body.

    Attributes:
        id: the section's anchor: lower-case letters, digits and dashes, starting with a
            letter; unique in the page.
        title: the heading (plain text; escaped when rendered).
        html: the body, inserted as it is: escape every piece of text in it
            (``html.escape``).
    """

    id: str
    title: str
    html: str

    def __attrs_post_init__(self) -> None:
        if not _ID.fullmatch(self.id):
            raise ValueError(f"section id {self.id!r}: expected lower-case letters, digits, -")


@attrs.frozen(kw_only=True)
class Report:
    """What a result kind's builder returns: the page's default title, a one-line subtitle
    and the sections, in order."""

    title: str
    subtitle: str
    sections: tuple[Section, ...]


#: Result type -> its builder, most recently registered first in lookups by ``isinstance``.
_BUILDERS: dict[type, Callable[[Any, ReportOptions], Report]] = {}


def register_result_kind(kind: type[T], build: Callable[[T, ReportOptions], Report]) -> None:
    """Teach :func:`render_report` a new kind of result.

    Args:
        kind: the result class; instances of it and of its subclasses use ``build``.
        build: makes the :class:`Report` of one result under the given options.
    """
    _BUILDERS[kind] = build


def _builder(result: object) -> Callable[[Any, ReportOptions], Report]:
    from schedframe.report import _kinds  # registers the built-in kinds

    _kinds.register_builtin()
    for kind in reversed(list(_BUILDERS)):
        if isinstance(result, kind):
            return _BUILDERS[kind]
    known = ", ".join(sorted(k.__name__ for k in _BUILDERS))
    raise TypeError(f"no report for a {type(result).__name__}; reports exist for {known}")


def render_report(
    result: object,
    *,
    title: str | None = None,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_explained: int = DEFAULT_MAX_EXPLAINED,
) -> str:
    """The HTML report of ``result``: one self-contained page (inline CSS, SVG and a little
    script; it fetches nothing, so it works offline and from ``file://``).

    The same result always gives the same text: wall-clock figures are left out, so two runs
    of the same inputs give byte-identical pages.

    Args:
        result: a :class:`~schedframe.simulation.SimulationResult`,
            :class:`~schedframe.simulation.ScenarioResult`,
            :class:`~schedframe.simulation.Comparison`,
            :class:`~schedframe.simulation.ReplayResult` or
            :class:`~schedframe.simulation.SweepResult` (or a kind added with
            :func:`register_result_kind`).
        title: the page's title (by default one naming the kind of run).
        max_rows: see :class:`ReportOptions`.
        max_explained: see :class:`ReportOptions`.

    Raises:
        TypeError: no report exists for this kind of result.
        ValueError: ``max_rows`` below 1 or ``max_explained`` below 0.
    """
    options = ReportOptions(max_rows=max_rows, max_explained=max_explained)
    report = _builder(result)(result, options)
    seen: set[str] = set()
    body: list[str] = []
    for s in report.sections:
        if s.id in seen:
            raise ValueError(f"two sections have the id {s.id!r}")
        seen.add(s.id)
        body.append(
            f'<section id="{esc(s.id)}"><h2>{esc(s.title)}</h2>\n{Markup(s.html)}\n</section>'
        )
    nav = [(s.id, s.title) for s in report.sections]
    return page(title if title is not None else report.title, report.subtitle, nav, "\n".join(body))


def write_report(
    result: object,
    path: str | os.PathLike[str],
    *,
    title: str | None = None,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_explained: int = DEFAULT_MAX_EXPLAINED,
) -> Path:
    """Write :func:`render_report`'s page to ``path`` (UTF-8) and return the path.

    Raises:
        OSError: the file cannot be written.
        TypeError: no report exists for this kind of result.
    """
    text = render_report(result, title=title, max_rows=max_rows, max_explained=max_explained)
    out = Path(path)
    with open(out, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    return out


def sections_of(*groups: Sequence[Section]) -> tuple[Section, ...]:
    """Concatenate groups of sections."""
    return tuple(s for g in groups for s in g)
