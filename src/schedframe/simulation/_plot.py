"""PNG plots of a simulation (needs matplotlib: ``pip install 'schedframe[viz]'``).

matplotlib is imported only when a plot is drawn, so the rest of schedframe never pays for it.
Figures are made with :class:`matplotlib.figure.Figure` and saved through its own canvas, never
through ``pyplot``: the caller's matplotlib backend (an interactive one in a notebook or a GUI)
is left as it was, and no figure joins pyplot's list of open figures.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from schedframe.explain import Explanation
    from schedframe.simulation._engine import SimulationResult

__all__ = [
    "MATPLOTLIB_HINT",
    "plot_scores",
    "plot_simulation",
    "plot_utilisation",
    "require_matplotlib",
]

#: What to tell someone who asked for a plot without matplotlib.
MATPLOTLIB_HINT = (
    "plots need matplotlib: pip install 'schedframe[viz]' (or: pip install matplotlib)"
)

_MAX_LINES = 12


def require_matplotlib() -> Any:
    """The ``matplotlib`` module; ``ImportError`` with :data:`MATPLOTLIB_HINT` without it.

    Neither selects a backend nor imports ``pyplot``.
    """
    try:
        import matplotlib  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise ImportError(MATPLOTLIB_HINT) from None
    return matplotlib


def _figure(**kwargs: Any) -> Any:
    """A stand-alone figure (not pyplot's); ``savefig`` renders it with Agg for PNG."""
    require_matplotlib()
    from matplotlib.figure import Figure  # type: ignore[import-not-found,unused-ignore]

    return Figure(**kwargs)


def _series(result: SimulationResult, resource: str) -> dict[str, tuple[list[float], list[float]]]:
    """Per node: step times and utilisation (percent) of ``resource``."""
    alloc = {n.metadata.name: n.status.allocatable.get(resource, 0) for n in result.nodes}
    out: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in alloc}
    for ch in result.usage:
        total = alloc.get(ch.node, 0)
        if ch.node not in out or total <= 0:
            continue
        times, values = out[ch.node]
        times.append(ch.time)
        values.append(100.0 * ch.requested.get(resource, 0) / total)
    for times, values in out.values():
        if times:
            times.append(result.end_time)
            values.append(values[-1])
    return out


def plot_utilisation(result: SimulationResult, path: str | os.PathLike[str]) -> Path:
    """Draw CPU and memory utilisation (requested / allocatable) per node over virtual time.

    Up to 12 nodes get one line each, more get a node x time heatmap; a run that took no
    virtual time (everything arrived at once and ran forever) gets bars of the final state.
    """
    resources = ("cpu", "memory")
    fig = _figure(figsize=(10, 7))
    axes = fig.subplots(len(resources), 1, squeeze=False)
    names = [n.metadata.name for n in result.nodes]
    for ax, resource in zip(axes[:, 0], resources, strict=True):
        series = _series(result, resource)
        if result.end_time <= 0:
            finals = [series[n][1][-1] if series[n][1] else 0.0 for n in names]
            ax.bar(range(len(names)), finals, color="tab:blue")
            ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=8)
            ax.set_ylabel(f"{resource} requested %")
            ax.set_ylim(0, 100)
        elif len(names) <= _MAX_LINES:
            for name in names:
                times, values = series[name]
                if times:
                    ax.step(times, values, where="post", label=name)
            ax.set_ylabel(f"{resource} requested %")
            ax.set_ylim(0, 105)
            ax.legend(fontsize=7, ncol=4, loc="upper right")
        else:
            bins = 200
            grid = [[0.0] * bins for _ in names]
            for row, name in enumerate(names):
                times, values = series[name]
                for b in range(bins):
                    t = result.end_time * (b + 0.5) / bins
                    v = 0.0
                    for tt, vv in zip(times, values, strict=True):
                        if tt > t:
                            break
                        v = vv
                    grid[row][b] = v
            image = ax.imshow(
                grid,
                aspect="auto",
                interpolation="nearest",
                extent=(0.0, result.end_time, len(names) - 0.5, -0.5),
                vmin=0,
                vmax=100,
                cmap="viridis",
            )
            ax.set_ylabel(f"{resource}: node")
            fig.colorbar(image, ax=ax, label="requested %")
        ax.set_title(f"{resource} utilisation")
    axes[-1, 0].set_xlabel("virtual time (s)" if result.end_time > 0 else "node")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=100)
    return out


def plot_scores(explanation: Explanation, path: str | os.PathLike[str]) -> Path:
    """Draw a node x plugin heatmap of weighted scores for one pod (filtered nodes in grey)."""
    plugins = [
        p for p, _ in explanation.score_plugins if p not in explanation.skipped_score_plugins
    ]
    columns = [*plugins, "total"]
    nodes = explanation.nodes
    grid: list[list[float]] = []
    for n in nodes:
        row: list[float] = []
        for p in plugins:
            s = n.score(p)
            row.append(float(s.weighted) if s is not None else float("nan"))
        row.append(float(n.total) if n.total is not None else float("nan"))
        grid.append(row)
    height = max(3.0, 0.35 * len(nodes) + 1.5)
    fig = _figure(figsize=(1.2 * len(columns) + 3, height))
    ax = fig.subplots()
    # Normalise per column so a heavy plugin does not wash out the others.
    scaled: list[list[float]] = [[float("nan")] * len(columns) for _ in nodes]
    for c in range(len(columns)):
        values = [grid[r][c] for r in range(len(nodes)) if grid[r][c] == grid[r][c]]
        top = max(values) if values else 0.0
        for r in range(len(nodes)):
            v = grid[r][c]
            if v == v:
                scaled[r][c] = v / top if top > 0 else 0.0
    cmap = require_matplotlib().colormaps["viridis"].with_extremes(bad="lightgrey")
    ax.imshow(scaled, aspect="auto", cmap=cmap, vmin=0, vmax=1, interpolation="nearest")
    ax.set_xticks(range(len(columns)), columns, rotation=30, ha="right", fontsize=8)
    labels = [("* " if n.chosen else "") + n.name for n in nodes]
    ax.set_yticks(range(len(nodes)), labels, fontsize=8)
    if len(nodes) <= 40:
        for r, n in enumerate(nodes):
            if not n.feasible:
                ax.text(
                    len(columns) / 2 - 0.5,
                    r,
                    f"filtered: {n.plugin or 'PreFilter'}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="black",
                )
                continue
            for c in range(len(columns)):
                v = grid[r][c]
                if v == v:
                    ink = "black" if scaled[r][c] > 0.6 else "white"
                    ax.text(c, r, f"{v:.0f}", ha="center", va="center", fontsize=7, color=ink)
    chosen = explanation.chosen or "none (pending)"
    ax.set_title(f"weighted scores for {explanation.pod}; chosen: {chosen}", fontsize=9)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=100)
    return out


def plot_simulation(
    result: SimulationResult, directory: str | os.PathLike[str], *, pod: str | None = None
) -> list[Path]:
    """Write ``utilisation.png`` and, for ``pod`` (it must have been captured),
    ``scores-<namespace>-<name>.png`` into ``directory`` (created if missing)."""
    require_matplotlib()
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    written = [plot_utilisation(result, folder / "utilisation.png")]
    if pod is not None and pod in result.captured:
        name = pod.replace("/", "-")
        written.append(plot_scores(result.explain(pod), folder / f"scores-{name}.png"))
    return written
