"""A/B comparison: one scenario under two configurations (or two plugin registries), side by
side: placement diff, pending diff, utilisation, fragmentation and per-pod latency."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from schedframe.simulation._scenario import Scenario, ScenarioResult, run_scenario

if TYPE_CHECKING:
    from schedframe.config import KubeSchedulerConfiguration
    from schedframe.runtime import Registry

__all__ = ["Comparison", "compare_scenario", "pod_latencies"]


def pod_latencies(result: ScenarioResult) -> dict[str, float]:
    """``namespace/name`` -> seconds from a pod's first ``queued`` to its first ``bound``,
    for every pod that was queued and bound."""
    out: dict[str, float] = {}
    for key, events in result.timelines.items():
        queued = next((e.time for e in events if e.event == "queued"), None)
        bound = next((e.time for e in events if e.event == "bound"), None)
        if queued is not None and bound is not None:
            out[key] = bound - queued
    return out


def _mean_utilisation(result: ScenarioResult) -> dict[str, float]:
    """Time-weighted mean of each resource's utilisation from 0 to the end of the run."""
    samples = result.utilisation
    if not samples:
        return {}
    end = result.end_time
    total: dict[str, float] = {}
    for (t, u), nxt in zip(samples, [*samples[1:], (end, {})], strict=True):
        span = max(0.0, nxt[0] - t)
        for r, f in u.items():
            total[r] = total.get(r, 0.0) + f * span
    if end <= 0:
        return dict(samples[-1][1])
    return {r: v / end for r, v in total.items()}


def _totals(result: ScenarioResult) -> dict[str, Any]:
    """One side's totals, as :meth:`Comparison.to_dict` gives them."""
    lat = sorted(pod_latencies(result).values())
    return {
        "bound": len(result.placements),
        "pending": len(result.pending),
        "attempts": result.attempts,
        "utilisationEnd": dict(result.utilisation[-1][1]) if result.utilisation else {},
        "utilisationMean": _mean_utilisation(result),
        "fragmentation": dict(result.fragmentation),
        "latencyMean": sum(lat) / len(lat) if lat else None,
        "latencyMax": lat[-1] if lat else None,
    }


@attrs.frozen(kw_only=True, eq=False)
class Comparison:
    """Two runs of one scenario.

    Attributes:
        names: the two sides' labels.
        a: the first run's result.
        b: the second run's result.
    """

    names: tuple[str, str]
    a: ScenarioResult
    b: ScenarioResult

    @property
    def placement_diff(self) -> dict[str, tuple[str, str]]:
        """``pod -> (node in a, node in b)`` for every pod placed differently (``""``: not
        bound at the end)."""
        keys = set(self.a.placements) | set(self.b.placements)
        out = {}
        for key in sorted(keys):
            na, nb = self.a.placements.get(key, ""), self.b.placements.get(key, "")
            if na != nb:
                out[key] = (na, nb)
        return out

    @property
    def pending_diff(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Pods pending at the end only in a, and only in b."""
        pa, pb = set(self.a.pending), set(self.b.pending)
        return tuple(sorted(pa - pb)), tuple(sorted(pb - pa))

    @property
    def latencies(self) -> dict[str, tuple[float | None, float | None]]:
        """``pod -> (latency in a, latency in b)`` (seconds; ``None``: never bound)."""
        la, lb = pod_latencies(self.a), pod_latencies(self.b)
        return {k: (la.get(k), lb.get(k)) for k in sorted(set(la) | set(lb))}

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        a, b = self.names
        only_a, only_b = self.pending_diff
        return {
            "names": [a, b],
            a: _totals(self.a),
            b: _totals(self.b),
            "placementDiff": {k: {a: na, b: nb} for k, (na, nb) in self.placement_diff.items()},
            "pendingOnly": {a: list(only_a), b: list(only_b)},
            "latency": {k: {a: la, b: lb} for k, (la, lb) in self.latencies.items()},
        }

    def summary_rows(
        self,
        percent: Callable[[float | None], str],
        seconds: Callable[[float | None], str],
    ) -> list[tuple[str, int | str, int | str]]:
        """The totals side by side, a ``(label, a, b)`` per row: counts as numbers,
        utilisation through ``percent``, latencies through ``seconds`` (the caller's formats),
        fragmentation with three decimals."""
        a, b = _totals(self.a), _totals(self.b)
        rows: list[tuple[str, int | str, int | str]] = [
            (key, a[key], b[key]) for key in ("bound", "pending", "attempts")
        ]
        for r in ("cpu", "memory"):
            for label, key in (
                ("used (end)", "utilisationEnd"),
                ("used (mean)", "utilisationMean"),
            ):
                rows.append((f"{r} {label}", percent(a[key].get(r)), percent(b[key].get(r))))
            frag_a, frag_b = a["fragmentation"].get(r, 0.0), b["fragmentation"].get(r, 0.0)
            rows.append((f"{r} fragmentation", f"{frag_a:.3f}", f"{frag_b:.3f}"))
        for label, key in (("latency mean", "latencyMean"), ("latency max", "latencyMax")):
            rows.append((label, seconds(a[key]), seconds(b[key])))
        return rows

    def to_text(self) -> str:
        """A side-by-side table of the totals, then the placement and pending diffs."""
        from schedframe.simulation._table import format_table

        a, b = self.names

        def pct(v: float | None) -> str:
            return "-" if v is None else f"{100 * v:.1f}%"

        def sec(v: float | None) -> str:
            return "-" if v is None else f"{v:g}s"

        rows = [[label, str(va), str(vb)] for label, va, vb in self.summary_rows(pct, sec)]
        lines = [format_table(["", a, b], rows)]
        diff = self.placement_diff
        lines += ["", f"Placed differently ({len(diff)}):"]
        if diff:
            lines.append(
                format_table(
                    ["POD", a, b],
                    [[k, na or "(pending)", nb or "(pending)"] for k, (na, nb) in diff.items()],
                )
            )
        only_a, only_b = self.pending_diff
        lines += ["", f"Pending only with {a}: {', '.join(only_a) or '-'}"]
        lines += [f"Pending only with {b}: {', '.join(only_b) or '-'}"]
        return "\n".join(lines)


def compare_scenario(
    scenario: Scenario,
    config_a: KubeSchedulerConfiguration | str | os.PathLike[str] | Mapping[str, object] | None,
    config_b: KubeSchedulerConfiguration | str | os.PathLike[str] | Mapping[str, object] | None,
    *,
    registry_a: Registry | None = None,
    registry_b: Registry | None = None,
    seed: int = 0,
    names: tuple[str, str] = ("A", "B"),
) -> Comparison:
    """Run ``scenario`` twice, with ``config_a`` and ``registry_a`` then with ``config_b``
    and ``registry_b`` (two plugin versions: two registries with the same plugin name), with
    the same seed, and compare the runs."""
    a = run_scenario(scenario, config=config_a, registry=registry_a, seed=seed)
    b = run_scenario(scenario, config=config_b, registry=registry_b, seed=seed)
    return Comparison(names=names, a=a, b=b)
