"""Text for the terminal: explanations, plugin lists, progress. Plain text unless rich is asked for."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from schedframe.simulation import format_table

if TYPE_CHECKING:
    from schedframe.explain import Explanation
    from schedframe.simulation import Progress

__all__ = ["ProgressDisplay", "render_explanation", "render_table"]


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    align: str = "",
    use_rich: bool = False,
    title: str = "",
) -> str:
    """A table as text: plain by default, drawn by rich when asked (and installed)."""
    if use_rich:
        from io import StringIO

        from rich.console import Console  # type: ignore[import-not-found,unused-ignore]
        from rich.table import Table  # type: ignore[import-not-found,unused-ignore]

        table = Table(title=title or None, title_justify="left")
        for i, h in enumerate(headers):
            table.add_column(h, justify="right" if i < len(align) and align[i] == "r" else "left")
        for row in rows:
            table.add_row(*("-" if c is None else str(c) for c in row))
        buf = StringIO()
        Console(file=buf, width=200, force_terminal=False).print(table)
        return "\n".join(line.rstrip() for line in buf.getvalue().rstrip().splitlines())
    text = format_table(headers, rows, align=align)
    return f"{title}\n{text}" if title else text


def render_explanation(e: Explanation, *, use_rich: bool = False) -> str:
    """The ``schedframe explain`` report."""
    n = e.num_nodes
    lines: list[str] = []
    if e.chosen is not None:
        how = " (its nominated node, taken first)" if e.nominated_node else ""
        lines.append(
            f"Pod {e.pod} (profile {e.profile}): would be bound to {e.chosen}{how}; "
            f"{len(e.feasible)}/{n} nodes feasible. Every node was evaluated (no sampling)."
        )
    else:
        lines.append(
            f"Pod {e.pod} (profile {e.profile}): stays pending. "
            "Every node was evaluated (no sampling)."
        )
        lines.append(e.message)
    pre = e.pre_filter
    pre_text = f"PreFilter: {pre.code}"
    if pre.plugin:
        pre_text += f" by {pre.plugin}: {pre.message}"
    if pre.narrowed_to is not None:
        pre_text += (
            f"; {', '.join(pre.narrowed_by)} narrowed the nodes to "
            f"{', '.join(pre.narrowed_to) or 'none'}"
        )
    if pre.skipped:
        pre_text += f"; skipped (no Filter run): {', '.join(pre.skipped)}"
    lines += ["", pre_text]
    if e.post_filter is not None:
        pf = e.post_filter
        text = f"PostFilter (dry run, nothing evicted): {pf.code}"
        if pf.plugin:
            text += f" by {pf.plugin}"
        if pf.nominated_node:
            text += f"; would nominate {pf.nominated_node}"
        if pf.victims:
            text += f" and evict {', '.join(pf.victims)}"
        if pf.message and not pf.nominated_node:
            text += f": {pf.message}"
        lines.append(text)

    rows: list[list[object]] = []
    for node in e.nodes:
        if node.chosen:
            result, note = "chosen", ""
        elif node.feasible:
            result, note = "feasible", node.why_not
        else:
            result, note = "filtered", node.why_not
        rows.append([node.name, node.zone or "-", result, node.total, node.rank, note])
    lines += [
        "",
        render_table(
            ["node", "zone", "result", "total", "rank", "why not"],
            rows,
            align="lllrrl",
            use_rich=use_rich,
            title="Nodes:",
        ),
    ]

    detailed = [node for node in e.nodes if node.details]
    if detailed:
        lines += ["", "Details of filtered nodes:"]
        for node in detailed:
            lines.append(f"  {node.name} ({node.plugin}):")
            lines += [f"    {line}" for line in node.details]

    feasible = [e.node(name) for name in e.feasible]
    if feasible and any(node.scores for node in feasible):
        srows: list[list[object]] = []
        for node in feasible:
            first = True
            for s in node.scores:
                srows.append(
                    [
                        node.name if first else "",
                        s.plugin,
                        s.raw,
                        s.normalized,
                        s.weight,
                        s.weighted,
                    ]
                )
                first = False
            mark = " (chosen)" if node.chosen else ""
            srows.append(["", f"total{mark}", "", "", "", node.total])
        title = "Scores (feasible nodes, best first; weighted = normalized x weight):"
        if e.skipped_score_plugins:
            title += f"\nPreScore skipped: {', '.join(e.skipped_score_plugins)}"
        lines += [
            "",
            render_table(
                ["node", "plugin", "raw", "normalized", "weight", "weighted"],
                srows,
                align="llrrrr",
                use_rich=use_rich,
                title=title,
            ),
        ]
    if e.error:
        lines += ["", f"Error: {e.error}"]
    return "\n".join(lines)


class ProgressDisplay:
    """Progress of a long simulation on stderr, shown only once a run lasts over ``delay`` s.

    On a terminal it redraws one line (or a rich progress bar); otherwise it prints a line
    every ``every`` seconds.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        delay: float = 1.0,
        every: float = 5.0,
        use_rich: bool = False,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.every = every
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.use_rich = use_rich and self.tty
        self._last = float("-inf")
        self._shown = False
        self._rich: Any = None
        self._task: Any = None

    def __call__(self, p: Progress) -> None:
        if p.wall_seconds < self.delay and not self._shown:
            return
        if p.done and not self._shown:
            return
        if self.use_rich:
            self._update_rich(p)
            return
        now = time.monotonic()
        if not self.tty and not p.done and now - self._last < self.every:
            return
        self._last = now
        self._shown = True
        width = 30
        filled = int(width * p.arrived / p.total) if p.total else width
        bar = "#" * filled + "." * (width - filled)
        text = (
            f"[{bar}] t={p.time:.1f}s arrived {p.arrived}/{p.total}, bound {p.bound}, "
            f"pending {p.pending}, {p.attempts} attempts, {p.wall_seconds:.1f}s wall"
        )
        if self.tty:
            end = "\n" if p.done else ""
            self.stream.write("\r" + text + end)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def _update_rich(self, p: Progress) -> None:
        from rich.progress import (  # type: ignore[import-not-found,unused-ignore]
            Progress as RichProgress,
        )

        if self._rich is None:
            self._rich = RichProgress(transient=False)
            self._rich.start()
            self._task = self._rich.add_task("simulating", total=p.total)
            self._shown = True
        self._rich.update(
            self._task,
            completed=p.arrived,
            description=f"t={p.time:.1f}s bound {p.bound} pending {p.pending}",
        )
        if p.done:
            self._rich.stop()
