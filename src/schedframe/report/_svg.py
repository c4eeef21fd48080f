"""Inline SVG step charts of values over virtual time, drawn in Python (no script, no fetch)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from schedframe.report._html import Markup, esc, pct, secs

__all__ = ["MAX_POINTS", "BarSeries", "Series", "bar_chart", "downsample", "step_chart"]

#: A series with more points than this is reduced (each time slice keeps its minimum and
#: maximum, so no peak disappears) and the chart says so.
MAX_POINTS: Final = 2000

#: Line colours, in order (distinguishable, print-safe).
_COLOURS: Final = (
    "#1565c0",
    "#c62828",
    "#2e7d32",
    "#6a1b9a",
    "#ef6c00",
    "#00838f",
    "#5d4037",
    "#ad1457",
    "#455a64",
    "#9e9d24",
    "#283593",
    "#00695c",
)
_DASHES: Final = ("", "6 3", "2 2", "8 3 2 3")

#: ``(label, [(time, value), ...])``: a step function, each value holding until the next time.
Series = tuple[str, Sequence[tuple[float, float]]]


def downsample(
    points: Sequence[tuple[float, float]], end: float, buckets: int
) -> list[tuple[float, float]]:
    """At most about ``4 * buckets`` points: per time slice its first, lowest, highest and last
    point, in time order, so the drawn envelope keeps every peak and trough."""
    if len(points) <= MAX_POINTS:
        return list(points)
    start = points[0][0]
    width = (max(end, points[-1][0]) - start) / buckets or 1.0
    out: list[tuple[float, float]] = []
    group: list[tuple[int, tuple[float, float]]] = []
    current = None
    for i, p in enumerate(points):
        b = min(buckets - 1, int((p[0] - start) / width))
        if b != current and group:
            out.extend(_keep(group))
            group = []
        current = b
        group.append((i, p))
    if group:
        out.extend(_keep(group))
    return out


def _keep(group: list[tuple[int, tuple[float, float]]]) -> list[tuple[float, float]]:
    lo = min(group, key=lambda ip: (ip[1][1], ip[0]))
    hi = max(group, key=lambda ip: (ip[1][1], -ip[0]))
    chosen = sorted({group[0][0]: group[0], lo[0]: lo, hi[0]: hi, group[-1][0]: group[-1]}.items())
    return [p for _, (_, p) in chosen]


def _nice_step(span: float, ticks: int) -> float:
    raw = span / max(1, ticks)
    if raw <= 0:
        return 1.0
    mag = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return float(m * mag)
    return 10 * mag


def _f(value: float) -> str:
    return f"{value:.1f}"


def step_chart(
    series: Sequence[Series],
    *,
    end: float,
    title: str,
    y_max: float = 1.0,
    percent: bool = True,
    width: int = 760,
    height: int = 240,
) -> Markup:
    """A step chart of ``series`` from time 0 to ``end`` (values 0..``y_max``).

    Long series are reduced to :data:`MAX_POINTS` or so, with a note under the chart.
    """
    left, right, top, bottom = 52, 150, 14, 34
    pw, ph = width - left - right, height - top - bottom
    t_end = end if end > 0 else 1.0
    y_top = y_max if y_max > 0 else 1.0

    def x(t: float) -> float:
        return left + pw * min(max(t, 0.0), t_end) / t_end

    def y(v: float) -> float:
        return top + ph * (1 - min(max(v, 0.0), y_top) / y_top)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{esc(title)}">',
        f"<title>{esc(title)}</title>",
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#fafbfc" stroke="#d9dee3"/>',
    ]
    for i in range(5):
        v = y_top * i / 4
        yy = _f(y(v))
        label = pct(v) if percent else f"{v:g}"
        parts.append(
            f'<line x1="{left}" x2="{left + pw}" y1="{yy}" y2="{yy}" stroke="#e6e9ec"/>'
            f'<text x="{left - 6}" y="{yy}" text-anchor="end" dominant-baseline="middle">'
            f"{esc(label)}</text>"
        )
    step = _nice_step(t_end, 6)
    t = 0.0
    while t <= t_end + 1e-9:
        xx = _f(x(t))
        parts.append(
            f'<line x1="{xx}" x2="{xx}" y1="{top + ph}" y2="{top + ph + 4}" stroke="#8a949e"/>'
            f'<text x="{xx}" y="{top + ph + 16}" text-anchor="middle">{esc(secs(t))}</text>'
        )
        t += step
    parts.append(
        f'<text x="{left + pw / 2:.1f}" y="{height - 2}" text-anchor="middle">virtual time</text>'
    )
    reduced: list[str] = []
    for i, (label, points) in enumerate(series):
        colour = _COLOURS[i % len(_COLOURS)]
        dash = _DASHES[i % len(_DASHES)]
        pts = downsample(points, t_end, pw)
        if len(pts) < len(points):
            reduced.append(f"{label}: {len(points):,} points drawn as {len(pts):,}")
        coords: list[str] = []
        prev: float | None = None
        for tt, v in pts:
            if prev is not None:
                coords.append(f"{_f(x(tt))},{_f(y(prev))}")
            coords.append(f"{_f(x(tt))},{_f(y(v))}")
            prev = v
        if prev is not None:
            coords.append(f"{_f(x(t_end))},{_f(y(prev))}")
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.6"{dash_attr} '
            f'points="{" ".join(coords)}"><title>{esc(label)}</title></polyline>'
        )
        ly = top + 8 + 16 * i
        if ly < top + ph:
            last = pct(prev) if percent and prev is not None else ""
            parts.append(
                f'<line x1="{left + pw + 10}" x2="{left + pw + 30}" y1="{ly}" y2="{ly}" '
                f'stroke="{colour}" stroke-width="2"{dash_attr}/>'
                f'<text x="{left + pw + 34}" y="{ly}" dominant-baseline="middle">'
                f"{esc(label)} {esc(last)}</text>"
            )
    hidden = max(0, len(series) - max(0, (ph - 8) // 16 + 1))
    parts.append("</svg>")
    notes = []
    if hidden:
        notes.append(f"The legend lists the first {len(series) - hidden} of {len(series)} lines.")
    if reduced:
        notes.append(
            "Long series are drawn reduced (each time slice keeps its first, lowest, highest "
            "and last value): " + "; ".join(reduced) + "."
        )
    note = "".join(f'<p class="note">{esc(n)}</p>' for n in notes)
    return Markup(f'<figure class="chart">{"".join(parts)}{note}</figure>')


#: ``(label, [(mean, low, high), ...])``: one bar per group, with a whisker from low to high.
BarSeries = tuple[str, Sequence[tuple[float, float, float]]]


def bar_chart(
    groups: Sequence[str],
    series: Sequence[BarSeries],
    *,
    title: str,
    y_max: float = 1.0,
    percent: bool = True,
    width: int = 760,
    height: int = 260,
) -> Markup:
    """Grouped bars: for each of ``groups`` one bar per series at its mean, with a whisker
    from its low to its high value (values 0..``y_max``)."""
    left, right, top, bottom = 52, 150, 14, 54
    # Wider with many groups; labels slanted when they would not fit under their bars.
    width = max(width, left + right + 40 * len(groups))
    longest = max((len(g) for g in groups), default=0)
    slanted = longest * 6.5 > (width - left - right) / max(1, len(groups))
    if slanted:
        extra = min(160, int(longest * 4.5))
        bottom += extra
        height += extra
    pw, ph = width - left - right, height - top - bottom
    y_top = y_max if y_max > 0 else 1.0

    def y(v: float) -> float:
        return top + ph * (1 - min(max(v, 0.0), y_top) / y_top)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{esc(title)}">',
        f"<title>{esc(title)}</title>",
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#fafbfc" stroke="#d9dee3"/>',
    ]
    for i in range(5):
        v = y_top * i / 4
        yy = _f(y(v))
        label = pct(v) if percent else f"{v:g}"
        parts.append(
            f'<line x1="{left}" x2="{left + pw}" y1="{yy}" y2="{yy}" stroke="#e6e9ec"/>'
            f'<text x="{left - 6}" y="{yy}" text-anchor="end" dominant-baseline="middle">'
            f"{esc(label)}</text>"
        )
    slot = pw / max(1, len(groups))
    bar = slot * 0.8 / max(1, len(series))

    def fmt(v: float) -> str:
        return pct(v) if percent else f"{v:g}"

    for g, name in enumerate(groups):
        x0 = left + slot * g + slot * 0.1
        for s, (label, values) in enumerate(series):
            if g >= len(values):
                continue
            mean, low, high = values[g]
            colour = _COLOURS[s % len(_COLOURS)]
            bx = x0 + bar * s
            parts.append(
                f'<rect x="{_f(bx)}" y="{_f(y(mean))}" width="{_f(bar * 0.9)}" '
                f'height="{_f(y(0.0) - y(mean))}" fill="{colour}" fill-opacity="0.75">'
                f"<title>{esc(f'{name} {label}: mean {fmt(mean)}, min {fmt(low)}, max {fmt(high)}')}"
                "</title></rect>"
            )
            cx = _f(bx + bar * 0.45)
            parts.append(
                f'<line x1="{cx}" x2="{cx}" y1="{_f(y(low))}" y2="{_f(y(high))}" '
                'stroke="#1d232a" stroke-width="1"/>'
            )
        lx, ly = _f(left + slot * (g + 0.5)), top + ph + 16
        if slanted:
            parts.append(
                f'<text x="{lx}" y="{ly}" text-anchor="end" '
                f'transform="rotate(-35 {lx} {ly})">{esc(name)}</text>'
            )
        else:
            parts.append(f'<text x="{lx}" y="{ly}" text-anchor="middle">{esc(name)}</text>')
    for s, (label, _) in enumerate(series):
        ly = top + 8 + 16 * s
        if ly < top + ph:
            colour = _COLOURS[s % len(_COLOURS)]
            parts.append(
                f'<rect x="{left + pw + 10}" y="{ly - 5}" width="20" height="10" '
                f'fill="{colour}" fill-opacity="0.75"/>'
                f'<text x="{left + pw + 34}" y="{ly}" dominant-baseline="middle">'
                f"{esc(label)}</text>"
            )
    parts.append(
        f'<text x="{left + pw / 2:.1f}" y="{height - 4}" text-anchor="middle">'
        "bar: mean over seeds; whisker: min to max</text>"
    )
    parts.append("</svg>")
    return Markup(f'<figure class="chart">{"".join(parts)}</figure>')
