"""The summary of a simulation: counts, reasons, utilisation and latencies, as data and text."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from schedframe.explain import node_zone
from schedframe.simulation._table import format_table

if TYPE_CHECKING:
    from schedframe.objects import Node
    from schedframe.simulation._engine import SimulationResult, UsageChange

__all__ = ["LATENCY_PERCENTILES", "NodeUsage", "Summary", "ZoneUsage", "summarize"]

#: Percentiles of scheduling latency reported by the summary.
LATENCY_PERCENTILES = (50, 90, 99)

# Resources that are capacity bookkeeping rather than something worth a column.
_NOT_SHOWN = frozenset({"pods", "ephemeral-storage"})


@attrs.frozen(kw_only=True)
class NodeUsage:
    """One node's share of the run.

    Attributes:
        name: the node.
        zone: its zone label (``""`` for none).
        pods: pods bound to it at the end (cluster pods included).
        allocatable: its allocatable amounts of the summary's resources.
        requested: what pods request on it at the end.
        peak: the highest requested amount during the run, per resource.
        average: the time-weighted mean requested amount over the run, per resource.
    """

    name: str
    zone: str
    pods: int
    allocatable: Mapping[str, int]
    requested: Mapping[str, int]
    peak: Mapping[str, int]
    average: Mapping[str, float]

    def utilisation(self, resource: str) -> float | None:
        """Requested / allocatable at the end, as a fraction; ``None`` without allocatable."""
        return _ratio(self.requested.get(resource, 0), self.allocatable.get(resource, 0))


@attrs.frozen(kw_only=True)
class ZoneUsage:
    """The nodes of one zone, added up (same attributes as :class:`NodeUsage`)."""

    zone: str
    nodes: int
    pods: int
    allocatable: Mapping[str, int]
    requested: Mapping[str, int]
    average: Mapping[str, float]

    def utilisation(self, resource: str) -> float | None:
        """Requested / allocatable at the end, as a fraction."""
        return _ratio(self.requested.get(resource, 0), self.allocatable.get(resource, 0))


def _ratio(num: float, den: float) -> float | None:
    return None if den <= 0 else num / den


@attrs.frozen(kw_only=True)
class Summary:
    """What a simulation comes to.

    Attributes:
        pods: workload pods (unbound cluster pods included).
        bound: workload pods that were bound and not preempted (running or completed).
        running: bound and still running at the end.
        completed: ran their duration and completed.
        unschedulable: arrived and never bound by the end.
        preempted: pods evicted by preemption (cluster pods included).
        not_arrived: pods whose arrival lies after the end of the run.
        attempts: scheduling attempts (cycles).
        reasons: ``(reason, pods)``: why the unschedulable pods failed their last attempt,
            most pods first (a pod counts once per reason it got from any node).
        nodes: per-node usage, in the cluster's order.
        zones: per-zone usage, by zone name.
        resources: the resources reported (``cpu``, ``memory``, then extended ones).
        latency: scheduling latency percentiles of bound pods (arrival to binding, virtual
            seconds): keys ``p50``, ``p90``, ``p99``, ``max``; empty when nothing was bound.
        end_time: virtual seconds the run covered.
        wall_seconds: wall-clock seconds it took.
        profiles: the profiles that ran.
        seed: the scheduler's seed.
        preempted_workload: workload pods among the preempted (they were bound first).
    """

    pods: int
    bound: int
    running: int
    completed: int
    unschedulable: int
    preempted: int
    not_arrived: int
    attempts: int
    reasons: tuple[tuple[str, int], ...]
    nodes: tuple[NodeUsage, ...]
    zones: tuple[ZoneUsage, ...]
    resources: tuple[str, ...]
    latency: Mapping[str, float]
    end_time: float
    wall_seconds: float
    profiles: tuple[str, ...] = ()
    seed: int = 0
    preempted_workload: int = 0

    @property
    def pods_per_second(self) -> float:
        """Pods bound per wall-clock second (upstream scheduler_perf's throughput)."""
        placed = self.bound + self.preempted_workload
        return placed / self.wall_seconds if self.wall_seconds > 0 else 0.0

    @property
    def attempts_per_second(self) -> float:
        """Scheduling attempts per wall-clock second."""
        return self.attempts / self.wall_seconds if self.wall_seconds > 0 else 0.0

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        return {
            "pods": self.pods,
            "bound": self.bound,
            "running": self.running,
            "completed": self.completed,
            "unschedulable": self.unschedulable,
            "preempted": self.preempted,
            "notArrived": self.not_arrived,
            "attempts": self.attempts,
            "reasons": dict(self.reasons),
            "latency": dict(self.latency),
            "endTime": self.end_time,
            "wallSeconds": self.wall_seconds,
            "podsPerSecond": self.pods_per_second,
            "attemptsPerSecond": self.attempts_per_second,
            "profiles": list(self.profiles),
            "seed": self.seed,
            "nodes": [
                {
                    "name": n.name,
                    "zone": n.zone,
                    "pods": n.pods,
                    "allocatable": dict(n.allocatable),
                    "requested": dict(n.requested),
                    "peak": dict(n.peak),
                    "average": dict(n.average),
                }
                for n in self.nodes
            ],
            "zones": [
                {
                    "zone": z.zone,
                    "nodes": z.nodes,
                    "pods": z.pods,
                    "allocatable": dict(z.allocatable),
                    "requested": dict(z.requested),
                    "average": dict(z.average),
                }
                for z in self.zones
            ],
        }

    def to_text(self) -> str:
        """The summary as plain-text tables (what ``schedframe simulate`` prints)."""
        timed = self.end_time > 0
        out = [
            f"Simulated {self.pods} pods on {len(self.nodes)} nodes "
            f"(profiles: {', '.join(self.profiles)}; seed {self.seed}): "
            f"{_secs(self.end_time)} virtual, {self.wall_seconds:.2f}s wall, "
            f"{self.pods_per_second:.0f} pods/s, {self.attempts} attempts",
            "",
        ]
        counts: list[tuple[str, int, str]] = [
            ("bound", self.bound, f"running {self.running}, completed {self.completed}"),
            ("unschedulable", self.unschedulable, ""),
            ("preempted", self.preempted, ""),
        ]
        if self.not_arrived:
            counts.append(("not arrived", self.not_arrived, "after the end of the run"))
        out.append(format_table(["pods", "count", ""], counts, align="lr"))
        if self.reasons:
            out += ["", "Why pods are unschedulable (their last attempt):"]
            out.append(format_table(["reason", "pods"], self.reasons, align="lr"))
        res = self.resources
        headers = ["node", "zone", "pods", *res]
        align = "llr" + "r" * len(res)
        if timed:
            headers += [f"{r} avg" for r in res] + [f"{r} peak" for r in res]
            align += "r" * (2 * len(res))
        rows = []
        for n in self.nodes:
            row: list[object] = [n.name, n.zone or "-", n.pods]
            row += [_pct(n.utilisation(r)) for r in res]
            if timed:
                row += [_pct(_ratio(n.average.get(r, 0.0), n.allocatable.get(r, 0))) for r in res]
                row += [_pct(_ratio(n.peak.get(r, 0), n.allocatable.get(r, 0))) for r in res]
            rows.append(row)
        out += [
            "",
            "Nodes (requested / allocatable at the end):",
            format_table(headers, rows, align=align),
        ]
        if any(z.zone for z in self.zones):
            zheaders = ["zone", "nodes", "pods", *res]
            zalign = "lrr" + "r" * len(res)
            if timed:
                zheaders += [f"{r} avg" for r in res]
                zalign += "r" * len(res)
            zrows = []
            for z in self.zones:
                zrow: list[object] = [z.zone or "-", z.nodes, z.pods]
                zrow += [_pct(z.utilisation(r)) for r in res]
                if timed:
                    zrow += [
                        _pct(_ratio(z.average.get(r, 0.0), z.allocatable.get(r, 0))) for r in res
                    ]
                zrows.append(zrow)
            out += ["", "Zones:", format_table(zheaders, zrows, align=zalign)]
        if self.latency:
            parts = ", ".join(f"{k} {_secs(v)}" for k, v in self.latency.items())
            out += ["", f"Scheduling latency (arrival to binding, virtual time): {parts}"]
        return "\n".join(out)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _secs(value: float) -> str:
    return f"{value:.3g}s" if value < 100 else f"{value:.0f}s"


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of already sorted values (``p`` in (0, 100])."""
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def _resources(nodes: Sequence[Node]) -> tuple[str, ...]:
    extra: set[str] = set()
    for node in nodes:
        for name, amount in node.status.allocatable.items():
            if amount > 0 and name not in ("cpu", "memory") and name not in _NOT_SHOWN:
                if not name.startswith("hugepages-"):
                    extra.add(name)
    return ("cpu", "memory", *sorted(extra))


def _integrate(
    changes: Sequence[UsageChange], end: float
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Peak and time-weighted mean of each node's requested amounts over ``[0, end]``."""
    peak: dict[str, dict[str, int]] = {}
    area: dict[str, dict[str, float]] = {}
    last: dict[str, tuple[float, Mapping[str, int]]] = {}
    for ch in changes:
        prev = last.get(ch.node)
        if prev is not None:
            t0, req = prev
            acc = area.setdefault(ch.node, {})
            for r, v in req.items():
                acc[r] = acc.get(r, 0.0) + v * (ch.time - t0)
        last[ch.node] = (ch.time, ch.requested)
        pk = peak.setdefault(ch.node, {})
        for r, v in ch.requested.items():
            pk[r] = max(pk.get(r, 0), v)
    for node, (t0, req) in last.items():
        acc = area.setdefault(node, {})
        for r, v in req.items():
            acc[r] = acc.get(r, 0.0) + v * (end - t0)
    mean = {
        node: {r: (a / end if end > 0 else 0.0) for r, a in acc.items()}
        for node, acc in area.items()
    }
    return peak, mean


def summarize(result: SimulationResult) -> Summary:
    """Compute the :class:`Summary` of a simulation result."""
    records = result.pods
    running = sum(1 for r in records if r.state == "running")
    completed = sum(1 for r in records if r.state == "completed")
    pending = [r for r in records if r.state == "pending"]
    not_arrived = sum(1 for r in records if r.state == "not-arrived")

    reason_pods: dict[str, int] = {}
    for r in pending:
        names = [reason for reason, _ in r.last_reasons] or [r.last_message or r.last_outcome]
        for reason in dict.fromkeys(names):
            reason_pods[reason] = reason_pods.get(reason, 0) + 1
    reasons = tuple(sorted(reason_pods.items(), key=lambda kv: (-kv[1], kv[0])))

    resources = _resources(result.nodes)
    peak, mean = _integrate(result.usage, result.end_time)
    final: dict[str, Mapping[str, int]] = {}
    for ch in result.usage:
        final[ch.node] = ch.requested
    pods_on: dict[str, int] = {}
    for p in result.initial_pods:
        pods_on[p.spec.node_name] = pods_on.get(p.spec.node_name, 0) + 1
    victims = set(result.victims)
    for p in result.initial_pods:
        if p.key in victims:
            pods_on[p.spec.node_name] -= 1
    for r in records:
        if r.state == "running":
            pods_on[r.node] = pods_on.get(r.node, 0) + 1

    nodes: list[NodeUsage] = []
    for node in result.nodes:
        name = node.metadata.name
        alloc = {r: node.status.allocatable.get(r, 0) for r in resources}
        req = final.get(name, {})
        nodes.append(
            NodeUsage(
                name=name,
                zone=node_zone(node),
                pods=pods_on.get(name, 0),
                allocatable=alloc,
                requested={r: req.get(r, 0) for r in resources},
                peak={r: peak.get(name, {}).get(r, 0) for r in resources},
                average={r: mean.get(name, {}).get(r, 0.0) for r in resources},
            )
        )
    by_zone: dict[str, list[NodeUsage]] = {}
    for n in nodes:
        by_zone.setdefault(n.zone, []).append(n)
    zones = tuple(
        ZoneUsage(
            zone=zone,
            nodes=len(members),
            pods=sum(n.pods for n in members),
            allocatable={r: sum(n.allocatable[r] for n in members) for r in resources},
            requested={r: sum(n.requested[r] for n in members) for r in resources},
            average={r: sum(n.average[r] for n in members) for r in resources},
        )
        for zone, members in sorted(by_zone.items())
    )

    latencies = sorted(r.latency for r in records if r.latency is not None)
    latency: dict[str, float] = {}
    if latencies:
        for pct in LATENCY_PERCENTILES:
            latency[f"p{pct}"] = percentile(latencies, pct)
        latency["max"] = latencies[-1]

    bound = sum(1 for r in records if r.bound_at is not None and r.preempted_at is None)
    return Summary(
        pods=len(records),
        bound=bound,
        running=running,
        completed=completed,
        unschedulable=len(pending),
        preempted=len(result.victims),
        not_arrived=not_arrived,
        attempts=result.attempts,
        reasons=reasons,
        nodes=tuple(nodes),
        zones=zones,
        resources=resources,
        latency=latency,
        end_time=result.end_time,
        wall_seconds=result.wall_seconds,
        profiles=result.profiles,
        seed=result.seed,
        preempted_workload=sum(1 for r in records if r.state == "preempted"),
    )
