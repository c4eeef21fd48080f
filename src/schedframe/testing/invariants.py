"""Invariants any scheduling run must keep, as assertions for anyone's property tests.

::

    from schedframe.testing import deterministic, invariants

    with deterministic.scheduler(objects=cluster) as sched:
        sched.run_until_idle()
        invariants.assert_no_overcommit(sched)
        invariants.assert_nothing_lost(sched, cluster.pending)
        invariants.assert_preemption_only_lower_priority(sched)

Each raises :class:`AssertionError` with a message naming the node, pod or preemption at fault.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import attrs

from schedframe.hooks import impl
from schedframe.objects import PODS as _PODS
from schedframe.objects import Node, Pod
from schedframe.scheduler import Scheduler
from schedframe.testing._fit import checked_resource

if typing.TYPE_CHECKING:
    import pluggy

    from schedframe.framework import NodeInfo

__all__ = [
    "PreemptionLog",
    "PreemptionRecord",
    "assert_no_overcommit",
    "assert_nothing_lost",
    "assert_preemption_only_lower_priority",
]

_TERMINAL: Final = ("Succeeded", "Failed")
_LOG_NAME: Final = "schedframe-testing-preemption-log"


def _overcommit_lines(
    node_name: str,
    allocatable: Mapping[str, int],
    requested: Mapping[str, int],
    pod_keys: Sequence[str],
    ignore: frozenset[str],
) -> list[str]:
    lines = []
    allowed_pods = allocatable.get(_PODS)
    if allowed_pods is not None and _PODS not in ignore and len(pod_keys) > allowed_pods:
        lines.append(f"node {node_name}: {len(pod_keys)} pods > allocatable pods {allowed_pods}")
    for name in sorted(requested):
        amount = requested[name]
        if amount <= 0 or name in ignore or not checked_resource(name):
            continue
        limit = allocatable.get(name, 0)
        if amount > limit:
            lines.append(f"node {node_name}: {name} requested {amount} > allocatable {limit}")
    if lines:
        lines[-1] += f" (pods: {', '.join(pod_keys) or 'none'})"
    return lines


def _check_node_infos(infos: Iterable[NodeInfo], ignore: frozenset[str], where: str) -> list[str]:
    lines = []
    for info in infos:
        if info.node is None:
            continue  # a node already deleted: nothing to commit against
        keys = [p.pod.key for p in info.pods]
        lines += [
            f"{where}: {line}"
            for line in _overcommit_lines(info.name, info.allocatable, info.requested, keys, ignore)
        ]
    return lines


def _check_backend(lister: object, ignore: frozenset[str]) -> list[str]:
    list_kind = getattr(lister, "list", None)
    if not callable(list_kind):
        raise TypeError(
            f"assert_no_overcommit() needs a Scheduler, Cache, Snapshot or backend, "
            f"got {type(lister).__name__}"
        )
    nodes = {n.metadata.name: n for n in list_kind("Node") if isinstance(n, Node)}
    used: dict[str, dict[str, int]] = {}
    keys: dict[str, list[str]] = {}
    for pod in list_kind("Pod"):
        if not isinstance(pod, Pod) or not pod.spec.node_name or pod.status.phase in _TERMINAL:
            continue
        total = used.setdefault(pod.spec.node_name, {})
        for name, amount in pod.requests.items():
            total[name] = total.get(name, 0) + amount
        keys.setdefault(pod.spec.node_name, []).append(pod.key)
    lines = []
    for node_name, requested in used.items():
        node = nodes.get(node_name)
        if node is None:
            continue
        lines += [
            f"backend: {line}"
            for line in _overcommit_lines(
                node_name, node.status.allocatable, requested, keys[node_name], ignore
            )
        ]
    return lines


def assert_no_overcommit(target: object, *, ignore: Iterable[str] = ()) -> None:
    """No node holds more than its allocatable: pod count and every resource
    NodeResourcesFit checks (cpu, memory, ephemeral-storage, extended and hugepages).

    Args:
        target: a :class:`~schedframe.scheduler.Scheduler` (its backend and its cache,
            assumed pods included, are both checked), a :class:`~schedframe.cache.Cache`, a
            :class:`~schedframe.cache.Snapshot`, or a backend (anything with ``list(kind)``,
            e.g. :class:`~schedframe.backends.MemoryBackend`; terminated pods do not count).
        ignore: resource names not to check (``"pods"`` for the pod count).

    Raises:
        AssertionError: listing every overcommitted node, resource and the pods on it.
    """
    from schedframe.cache import Cache, Snapshot

    skip = frozenset(ignore)
    lines: list[str] = []
    if isinstance(target, Scheduler):
        lines += _check_backend(target.backend, skip)
        cache: object = target.cache
        if isinstance(cache, Cache):
            lines += _check_node_infos(cache.dump().nodes.values(), skip, "cache")
    elif isinstance(target, Cache):
        lines += _check_node_infos(target.dump().nodes.values(), skip, "cache")
    elif isinstance(target, Snapshot):
        lines += _check_node_infos(target.list(), skip, "snapshot")
    else:
        lines += _check_backend(target, skip)
    if lines:
        raise AssertionError("overcommitted:\n  " + "\n  ".join(lines))


def assert_nothing_lost(
    scheduler: Scheduler, pods: Iterable[Pod | str] | None = None, *, conditions: bool = True
) -> None:
    """Every pod is bound, deleted, or still known to the scheduler: nothing falls through.

    A pod the scheduler is responsible for (its ``schedulerName`` is one of the profiles) and
    that still exists unbound must be queued (active, backoff or unschedulable, gated
    included), in flight (being scheduled, waiting on Permit, binding) or assumed. With
    ``conditions``, an unbound pod whose latest attempt failed must also carry
    ``PodScheduled=False``, as upstream's failure handler writes.

    Args:
        scheduler: the scheduler, after running.
        pods: the pods (or ``namespace/name`` keys) to check; every pod of the backend by
            default.
        conditions: also check the ``PodScheduled`` condition of failed pods.

    Raises:
        AssertionError: naming each lost pod and where it was last seen.
    """
    backend_pods = {p.key: p for p in scheduler.backend.list("Pod") if isinstance(p, Pod)}
    if pods is None:
        keys = list(backend_pods)
    else:
        keys = [p if isinstance(p, str) else p.key for p in pods]
    queued = {p.uid for p in scheduler.queue.pending_pods()}
    in_flight_fn = getattr(scheduler.queue, "in_flight_pods", None)
    in_flight = {p.uid for p in in_flight_fn()} if callable(in_flight_fn) else set()
    lost: list[str] = []
    for key in keys:
        pod = backend_pods.get(key)
        if pod is None or pod.spec.node_name:
            continue  # deleted, or bound
        if pod.spec.scheduler_name not in scheduler.profiles:
            continue  # another scheduler's pod
        uid = pod.uid
        known = (
            uid in queued
            or uid in in_flight
            or scheduler.waiting_pods.get(uid) is not None
            or scheduler.cache.is_assumed_pod(pod)
        )
        if not known:
            result = scheduler.results.get(uid)
            seen = "never attempted" if result is None else f"last outcome {result.outcome!r}"
            lost.append(f"{key}: unbound and not queued, in flight or assumed ({seen})")
            continue
        if conditions:
            result = scheduler.results.get(uid)
            if result is not None and result.outcome in ("unschedulable", "error"):
                if not any(
                    c.type == "PodScheduled" and c.status == "False" for c in pod.status.conditions
                ):
                    lost.append(
                        f"{key}: attempt failed ({result.outcome}) but the pod has no "
                        "PodScheduled=False condition"
                    )
    if lost:
        raise AssertionError("pods lost:\n  " + "\n  ".join(lost))


@attrs.frozen(kw_only=True)
class PreemptionRecord:
    """One preemption, as the ``schedframe_preemption`` observer hook reported it."""

    preemptor: Pod
    node_name: str
    victims: tuple[Pod, ...]
    profile: str


class PreemptionLog:
    """An observer recording every preemption (register it on the scheduler's hooks).

    :func:`schedframe.testing.deterministic.scheduler` registers one on every scheduler it
    builds; :meth:`of` finds it again.
    """

    def __init__(self) -> None:
        self.records: list[PreemptionRecord] = []

    @impl
    def schedframe_preemption(
        self, preemptor: Pod, node_name: str, victims: Sequence[Pod], profile: str
    ) -> None:
        """Record the preemption."""
        self.records.append(
            PreemptionRecord(
                preemptor=preemptor, node_name=node_name, victims=tuple(victims), profile=profile
            )
        )

    def register(self, pm: pluggy.PluginManager) -> PreemptionLog:
        """Register on ``pm`` (once) and return the log registered there."""
        existing = pm.get_plugin(_LOG_NAME)
        if isinstance(existing, PreemptionLog):
            return existing
        pm.register(self, name=_LOG_NAME)
        return self

    @staticmethod
    def of(scheduler: Scheduler) -> PreemptionLog | None:
        """The log registered on ``scheduler``'s hooks, if any."""
        if scheduler.hooks is None:
            return None
        found = scheduler.hooks.get_plugin(_LOG_NAME)
        return found if isinstance(found, PreemptionLog) else None


def assert_preemption_only_lower_priority(
    source: Scheduler | PreemptionLog | Iterable[PreemptionRecord],
) -> None:
    """Every preemption evicted only pods of strictly lower priority, on the nominated node,
    for a preemptor whose ``preemptionPolicy`` is not ``Never``.

    Args:
        source: a scheduler with a :class:`PreemptionLog` on its hooks (every
            :func:`~schedframe.testing.deterministic.scheduler` has one), a log, or records.

    Raises:
        AssertionError: naming the preemptor, the node and each offending victim.
        ValueError: a scheduler without a :class:`PreemptionLog`.
    """
    if isinstance(source, PreemptionLog):
        records: Iterable[PreemptionRecord] = source.records
    elif isinstance(source, Scheduler):
        log = PreemptionLog.of(source)
        if log is None:
            raise ValueError(
                "this scheduler records no preemptions: build it with "
                "schedframe.testing.deterministic.scheduler(), or register a PreemptionLog "
                "on its hooks"
            )
        records = log.records
    else:
        records = source
    problems: list[str] = []
    for rec in records:
        who = f"{rec.preemptor.key} (priority {rec.preemptor.priority}) on {rec.node_name}"
        if rec.preemptor.spec.preemption_policy == "Never":
            problems.append(f"{who}: preempted although its preemptionPolicy is Never")
        for victim in rec.victims:
            if victim.priority >= rec.preemptor.priority:
                problems.append(
                    f"{who}: evicted {victim.key} of priority {victim.priority}, not lower"
                )
            if victim.spec.node_name and victim.spec.node_name != rec.node_name:
                problems.append(
                    f"{who}: evicted {victim.key} from another node ({victim.spec.node_name})"
                )
            if victim.uid == rec.preemptor.uid:
                problems.append(f"{who}: evicted itself")
    if problems:
        raise AssertionError("preemption broke its rules:\n  " + "\n  ".join(problems))
