"""Replay a trace: what the cluster did, decided again by a real scheduler in virtual time.

The trace's initial objects become the in-memory backend's state (pods bound then stay
where they are); every later event is re-applied at its recorded time on the virtual
clock. The bindings a trace records for the pods this configuration schedules are the
cluster's *outcome*, never replayed: the scheduler decides them again, and the result
lists every pod whose decision differs.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

import attrs

from schedframe.errors import BackendError
from schedframe.objects import Pod
from schedframe.simulation._scenario import Scenario, ScenarioResult, _Run, run_config
from schedframe.simulation._trace import Trace, TraceEvent, load_trace

if TYPE_CHECKING:
    from schedframe.config import KubeSchedulerConfiguration
    from schedframe.runtime import Registry

__all__ = ["DIVERGENCE_KINDS", "Divergence", "ReplayResult", "replay"]

#: How a replayed decision can differ from the recorded one.
DIVERGENCE_KINDS: Final = ("node", "pendingInReplay", "pendingInCluster")
_PREEMPTED: Final = "PreemptionByScheduler"
# What the API server and the kubelet change on their own: not input to a replay.
_NOT_INPUT_META: Final = (
    "resourceVersion",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


@attrs.frozen(kw_only=True)
class Divergence:
    """One pod whose replayed decision differs from the cluster's.

    Attributes:
        pod: ``namespace/name``.
        kind: ``node`` (bound to another node), ``pendingInReplay`` (the cluster bound it,
            the replay did not) or ``pendingInCluster`` (the replay bound it, the cluster
            did not).
        recorded_node: where the cluster bound it (``""``: nowhere).
        replayed_node: where the replay bound it (``""``: nowhere).
        reason: for ``pendingInReplay`` the replay's last failure message; for
            ``pendingInCluster`` the cluster's (its ``PodScheduled`` condition), if recorded.
    """

    pod: str
    kind: str
    recorded_node: str
    replayed_node: str
    reason: str = ""

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping (an empty reason left out)."""
        out: dict[str, object] = {
            "pod": self.pod,
            "kind": self.kind,
            "recordedNode": self.recorded_node,
            "replayedNode": self.replayed_node,
        }
        if self.reason:
            out["reason"] = self.reason
        return out


@attrs.frozen(kw_only=True, eq=False)
class ReplayResult:
    """What a replay found.

    Attributes:
        decisions: pods whose placement the replayed scheduler decided (created unbound
            during or before the recording, for one of its profiles' scheduler names).
        matched: those decided as the cluster did (same node, or pending in both).
        divergences: the others, by pod key.
        replay: the replay's own run: timelines, placements, pending pods.
        events: trace events replayed (initial objects included).
        seed: the seed of the replayed scheduler's random source.
    """

    decisions: int
    matched: int
    divergences: tuple[Divergence, ...]
    replay: ScenarioResult
    events: int
    seed: int

    @property
    def changed(self) -> frozenset[str]:
        """The keys of every pod whose decision differs."""
        return frozenset(d.pod for d in self.divergences)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping of the whole result (same inputs, same mapping)."""
        return {
            "summary": {
                "events": self.events,
                "decisions": self.decisions,
                "matched": self.matched,
                "diverged": len(self.divergences),
                "seed": self.seed,
            },
            "divergences": [d.to_dict() for d in self.divergences],
            "replay": self.replay.to_dict(),
        }

    def to_text(self) -> str:
        """A summary line and a table of the divergences."""
        from schedframe.simulation._table import format_table

        lines = [
            f"Replayed {self.events} events: {self.decisions} scheduling decisions, "
            f"{self.matched} as recorded, {len(self.divergences)} diverged."
        ]
        if self.divergences:
            rows = [
                [d.pod, d.recorded_node or "(pending)", d.replayed_node or "(pending)", d.reason]
                for d in self.divergences
            ]
            lines.append("")
            lines.append(format_table(["POD", "RECORDED", "REPLAYED", "REASON"], rows))
        if self.replay.rejected:
            lines.append("")
            lines.append(f"Events the in-memory API refused ({len(self.replay.rejected)}):")
            lines += [f"  {t:g}s {what}: {msg}" for t, what, msg in self.replay.rejected]
        return "\n".join(lines)


def _input_form(pod: Pod) -> dict[str, object]:
    """The parts of a pod its owner writes: spec without nodeName, metadata without what
    the API server stamps; no status."""
    from schedframe.objects import to_dict

    doc = to_dict(pod)
    doc.pop("status", None)
    spec = doc.get("spec")
    if isinstance(spec, dict):
        spec.pop("nodeName", None)
    meta = doc.get("metadata")
    if isinstance(meta, dict):
        for key in _NOT_INPUT_META:
            meta.pop(key, None)
    return doc


def _preempted(pod: Pod) -> bool:
    return any(
        c.type == "DisruptionTarget" and c.status == "True" and c.reason == _PREEMPTED
        for c in pod.status.conditions
    )


def _as_created(pod: Pod) -> Pod:
    """``pod`` as its owner created it: no node, no status the scheduler wrote, no
    resourceVersion; an admitted priority kept without its class name (PriorityClasses are
    not watched, so admission could not resolve the name again)."""
    fresh = pod.with_changes(
        node_name="",
        metadata={"resource_version": ""},
        status={"conditions": (), "nominated_node_name": ""},
    )
    if fresh.spec.priority is not None and fresh.spec.priority_class_name:
        fresh = attrs.evolve(fresh, spec=attrs.evolve(fresh.spec, priority_class_name=""))
    return fresh


def _admitted(pod: Pod) -> Pod:
    if pod.spec.priority is not None and pod.spec.priority_class_name:
        return attrs.evolve(pod, spec=attrs.evolve(pod.spec, priority_class_name=""))
    return pod


def _fresh(obj: object) -> object:
    meta = getattr(obj, "metadata", None)
    if meta is None or not getattr(meta, "resource_version", ""):
        return obj
    return attrs.evolve(obj, metadata=attrs.evolve(meta, resource_version=""))  # type: ignore[misc]


class _Recorded:
    """The cluster's decisions, read from the trace."""

    def __init__(self, trace: Trace, ours: frozenset[str]) -> None:
        #: pods the scheduler decided: key -> node ("" while unbound).
        self.nodes: dict[str, str] = {}
        #: key -> the last PodScheduled=False message seen.
        self.reasons: dict[str, str] = {}
        for event in trace.events:
            pod = event.obj
            if not isinstance(pod, Pod) or pod.spec.scheduler_name not in ours:
                continue
            key = pod.key
            if event.type == "ADDED" and not pod.spec.node_name:
                self.nodes[key] = ""
                self.reasons.pop(key, None)
            if key not in self.nodes or event.type == "DELETED":
                continue
            if pod.spec.node_name:
                self.nodes[key] = pod.spec.node_name
            for c in pod.status.conditions:
                if c.type == "PodScheduled" and c.status == "False" and c.message:
                    self.reasons[key] = c.message


class _ReplayRun(_Run):
    """A scenario run fed by a trace's events instead of operations."""

    def __init__(
        self,
        trace: Trace,
        config: KubeSchedulerConfiguration,
        registry: Registry | None,
        seed: int,
        ours: frozenset[str],
    ) -> None:
        from schedframe.objects import StatefulSet

        self.ours = ours
        self.inputs: dict[str, dict[str, object]] = {}
        state: dict[tuple[str, str, str], object] = {}
        for event in trace.initial:
            state[_identity(event)] = event.obj
        initial = [self._initial(obj) for obj in state.values()]
        # A scenario's StatefulSets make pods; a trace's pods are in the trace already.
        super().__init__(
            Scenario(cluster=tuple(o for o in initial if not isinstance(o, StatefulSet))),
            config,
            registry,
            seed,
        )
        for obj in initial:
            if isinstance(obj, StatefulSet):
                self.backend.create(obj)
        for event in trace.live:
            self._at(event.time, functools.partial(self._replay, event))

    def _initial(self, obj: object) -> object:
        if isinstance(obj, Pod):
            self.inputs[obj.key] = _input_form(obj)
            fresh = _fresh(obj)
            assert isinstance(fresh, Pod)
            return _admitted(fresh) if obj.spec.node_name else _as_created(obj)
        return _fresh(obj)

    def _replay(self, event: TraceEvent) -> None:
        try:
            if isinstance(event.obj, Pod):
                self._pod(event.type, event.obj)
            else:
                self._other(event.type, event.obj)
        except BackendError as exc:
            self.rejected.append((self.clock.now(), f"{event.type} {event.kind}", str(exc)))

    def _other(self, event_type: str, obj: object) -> None:
        b = self.backend
        if event_type == "DELETED":
            name = getattr(getattr(obj, "metadata", None), "name", "")
            namespace = getattr(getattr(obj, "metadata", None), "namespace", "")
            if b.get(_kind(obj), name, namespace) is not None:
                b.delete(obj)  # type: ignore[type-var]
        else:
            b.apply(_fresh(obj))  # type: ignore[type-var]
        if _kind(obj) == "Node":
            self._sample()

    def _pod(self, event_type: str, pod: Pod) -> None:
        b = self.backend
        key = pod.key
        current = b.get("Pod", pod.name, pod.namespace)
        ours = pod.spec.scheduler_name in self.ours
        if event_type == "ADDED":
            self.inputs[key] = _input_form(pod)
            if isinstance(current, Pod):
                b.delete(current)
            fresh = _fresh(pod)
            assert isinstance(fresh, Pod)
            b.create(_admitted(fresh) if pod.spec.node_name else _as_created(pod))
            return
        if not isinstance(current, Pod):
            return  # gone in the replay already (preempted, say)
        if event_type == "DELETED":
            if ours and _preempted(pod):
                return  # the cluster's scheduler preempted it: an outcome, decided again
            b.delete(current)
            return
        if not ours and pod.spec.node_name and not current.spec.node_name:
            b.bind(current, pod.spec.node_name)  # another scheduler's decision: input
            current = b.get("Pod", pod.name, pod.namespace)
            assert isinstance(current, Pod)
        wanted = _input_form(pod)
        if wanted == self.inputs.get(key):
            return  # the scheduler's or the kubelet's write: status, binding
        self.inputs[key] = wanted
        changed = _admitted(pod).with_changes(
            node_name=current.spec.node_name, metadata={"resource_version": ""}
        )
        b.update(attrs.evolve(changed, status=current.status))


def _kind(obj: object) -> str:
    kind = getattr(obj, "kind", None)
    return kind if isinstance(kind, str) and kind else type(obj).__name__


def _identity(event: TraceEvent) -> tuple[str, str, str]:
    meta = getattr(event.obj, "metadata", None)
    return (event.kind, getattr(meta, "namespace", ""), getattr(meta, "name", ""))


def replay(
    trace: Trace | str | os.PathLike[str],
    config: KubeSchedulerConfiguration
    | str
    | os.PathLike[str]
    | Mapping[str, object]
    | None = None,
    seed: int = 0,
    *,
    registry: Registry | None = None,
) -> ReplayResult:
    """Replay ``trace`` with a real scheduler on the in-memory backend, in virtual time.

    The initial objects are the starting state: pods bound then stay on their nodes, unbound
    ones are queued at time 0. Every later event is applied at its recorded time: objects
    created, updated and deleted as recorded. For pods of this configuration's scheduler
    names, the trace's bindings and status writes are what the cluster's scheduler did: they
    are compared, not applied, and a deletion the cluster's scheduler made (a preemption
    victim, marked ``DisruptionTarget``/``PreemptionByScheduler``) is left to the replayed
    scheduler's own preemption. Pods of other schedulers keep their recorded bindings.

    The same trace, configuration and seed give the same result, byte for byte, in
    :meth:`ReplayResult.to_dict`.

    Args:
        trace: a :class:`Trace` or a trace file.
        config: a ``KubeSchedulerConfiguration``, a path, a mapping or ``None`` (defaults).
        seed: seeds the scheduler's random source (tie-breaking).
        registry: where plugins come from; every installed entry point by default.

    Raises:
        ManifestError: a bad trace file, naming the file, the line and the field path.
        ConfigError: a bad configuration.
    """
    loaded = trace if isinstance(trace, Trace) else load_trace(trace)
    cfg = run_config(config)
    ours = frozenset(p.scheduler_name for p in cfg.profiles)
    recorded = _Recorded(loaded, ours)
    result = _ReplayRun(loaded, cfg, registry, seed, ours).run()
    divergences: list[Divergence] = []
    for key in sorted(recorded.nodes):
        was = recorded.nodes[key]
        # The last incarnation of the name (a pod recreated under it is queued again).
        timeline = list(result.timelines.get(key, ()))
        queued = [i for i, e in enumerate(timeline) if e.event == "queued"]
        timeline = timeline[queued[-1] :] if queued else timeline
        bound = [e for e in timeline if e.event == "bound"]
        now = bound[-1].node if bound else ""
        if was == now:
            continue
        if was and now:
            divergences.append(
                Divergence(pod=key, kind="node", recorded_node=was, replayed_node=now)
            )
        elif was:
            failed = [e for e in timeline if e.event in ("failed", "error")]
            why = failed[-1].message if failed else result.pending.get(key, "never attempted")
            divergences.append(
                Divergence(
                    pod=key, kind="pendingInReplay", recorded_node=was, replayed_node="", reason=why
                )
            )
        else:
            divergences.append(
                Divergence(
                    pod=key,
                    kind="pendingInCluster",
                    recorded_node="",
                    replayed_node=now,
                    reason=recorded.reasons.get(key, ""),
                )
            )
    return ReplayResult(
        decisions=len(recorded.nodes),
        matched=len(recorded.nodes) - len(divergences),
        divergences=tuple(divergences),
        replay=result,
        events=len(loaded.events),
        seed=seed,
    )
