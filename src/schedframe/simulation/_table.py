"""Plain-text tables: aligned columns, a rule under the header, nothing else to install."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["format_table"]


def format_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    align: str = "",
    indent: str = "",
) -> str:
    """Render ``rows`` under ``headers`` as aligned plain text.

    Args:
        headers: column titles.
        rows: cells, converted with ``str()`` (``None`` prints as ``-``).
        align: one letter per column, ``l`` (default) or ``r``.
        indent: put in front of every line.
    """
    cells = [[("-" if c is None else str(c)) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))

    def line(values: Sequence[str]) -> str:
        parts = []
        for i, v in enumerate(values):
            right = i < len(align) and align[i] == "r"
            parts.append(v.rjust(widths[i]) if right else v.ljust(widths[i]))
        return (indent + "  ".join(parts)).rstrip()

    out = [line(list(headers)), indent + "  ".join("-" * w for w in widths)]
    out.extend(line(row) for row in cells)
    return "\n".join(out)
