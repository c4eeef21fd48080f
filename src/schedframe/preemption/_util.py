"""Helpers of the preemption library: pod importance, start times, PDB accounting, node choice.

Upstream: ``pkg/scheduler/util/utils.go`` (``GetPodStartTime``, ``GetEarliestPodStartTime``,
``MoreImportantPod``), ``pickOneNodeForPreemption`` and ``getLowerPriorityNominatedPods`` in
``framework/preemption``, and ``filterPodsWithPDBViolation`` in ``defaultpreemption``.

Upstream reads ``time.Now()`` for pods that have not started yet; here the caller passes
``now`` (the scheduler's clock), so results are reproducible under a virtual clock.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final, TypeVar

from schedframe.preemption._types import ScoreFunc, Victims

if TYPE_CHECKING:
    from schedframe.framework import Nominator, PodInfo
    from schedframe.objects import Pod, PodDisruptionBudget

__all__ = [
    "filter_pods_with_pdb_violation",
    "get_earliest_pod_start_time",
    "get_lower_priority_nominated_pods",
    "get_pod_start_time",
    "importance_key",
    "more_important_pod",
    "pick_one_node_for_preemption",
    "sort_by_importance",
]

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MAX_INT32: Final = (1 << 31) - 1
_MIN_INT64: Final = -(1 << 63)

T = TypeVar("T")


@functools.lru_cache(maxsize=1 << 16)
def _unix_nano(t: datetime) -> int:
    # Exact integer arithmetic: a float timestamp would lose the sub-second digits. Kept per
    # value: the same pods' start times are compared again for every preemptor.
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return (t - _EPOCH) // timedelta(microseconds=1) * 1000


def _start_nanos(pod: Pod, now_nanos: int) -> int:
    start = pod.status.start_time
    return now_nanos if start is None else _unix_nano(start)


def get_pod_start_time(pod: Pod, now: datetime) -> datetime:
    """The pod's ``status.startTime``, or ``now`` for pods that have not started yet."""
    start = pod.status.start_time
    return start if start is not None else now


def get_earliest_pod_start_time(victims: Victims, now: datetime) -> datetime | None:
    """The earliest start time among the highest-priority victims; ``None`` without victims."""
    if not victims.pods:
        return None
    first = victims.pods[0]
    earliest = get_pod_start_time(first, now)
    max_priority = first.priority
    for pod in victims.pods:
        priority = pod.priority
        if priority == max_priority:
            start = get_pod_start_time(pod, now)
            if _unix_nano(start) < _unix_nano(earliest):
                earliest = start
        elif priority > max_priority:
            max_priority = priority
            earliest = get_pod_start_time(pod, now)
    return earliest


def more_important_pod(pod1: Pod, pod2: Pod, now: datetime) -> bool:
    """True when ``pod1`` has the higher priority or, on equal priority, started earlier."""
    p1, p2 = pod1.priority, pod2.priority
    if p1 != p2:
        return p1 > p2
    return _unix_nano(get_pod_start_time(pod1, now)) < _unix_nano(get_pod_start_time(pod2, now))


def importance_key(now: datetime) -> Callable[[Pod], tuple[int, int]]:
    """A sort key putting pods in :func:`more_important_pod` order, most important first.

    ``sorted(pods, key=importance_key(now))`` equals ``sort_by_importance(pods, less)`` with
    ``less = lambda a, b: more_important_pod(a, b, now)``: both sorts are stable and the key
    orders exactly as the predicate does (priority descending, then start time ascending, pods
    not started yet counting as started at ``now``). It computes each pod's start time once
    instead of once per comparison.
    """
    now_nanos = _unix_nano(now)

    def key(pod: Pod) -> tuple[int, int]:
        return -pod.priority, _start_nanos(pod, now_nanos)

    return key


def sort_by_importance(items: Sequence[T], less: Callable[[T, T], bool]) -> list[T]:
    """``items`` ordered by the strict "more important" predicate ``less``, ties kept in order.

    Upstream sorts with ``sort.Slice``, which is not stable; a stable sort is one of the orders
    it may produce and makes ties deterministic.
    """

    def cmp(a: T, b: T) -> int:
        if less(a, b):
            return -1
        if less(b, a):
            return 1
        return 0

    return sorted(items, key=functools.cmp_to_key(cmp))


def filter_pods_with_pdb_violation(
    pod_infos: Iterable[PodInfo], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split ``pod_infos`` into those whose eviction would violate a budget and the rest.

    Order is kept within each group. Each matching budget's ``disruptions_allowed`` is spent
    pod by pod; a pod already listed in a budget's ``disrupted_pods`` does not spend it. A
    budget in another namespace, or with a nil or empty selector, matches nothing; a pod
    without labels matches no budget.
    """
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for info in pod_infos:
        pod = info.pod
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace:
                    continue
                selector = pdb.selector
                if selector is None or selector.is_empty or not selector.matches(pod.labels):
                    continue
                if pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(info)
    return violating, non_violating


def get_lower_priority_nominated_pods(nominator: Nominator, pod: Pod, node_name: str) -> list[Pod]:
    """Pods nominated to ``node_name`` whose priority is below ``pod``'s."""
    priority = pod.priority
    return [
        info.pod
        for info in nominator.nominated_pods_for_node(node_name)
        if info.pod.priority < priority
    ]


def pick_one_node_for_preemption(
    nodes_to_victims: Mapping[str, Victims],
    score_funcs: Sequence[ScoreFunc] | None,
    now: datetime,
) -> str:
    """Choose the node to preempt on; victims on each node are ordered most important first.

    Without ``score_funcs`` the criteria, each applied only to the nodes tied on the previous
    ones, are: 1. fewest PDB violations; 2. lowest highest-victim priority; 3. smallest sum of
    victim priorities (each shifted by 2^31 so negative priorities count); 4. fewest victims;
    5. latest start of the highest-priority victims; 6. the first node left. Nodes are visited
    in ``nodes_to_victims`` order (upstream iterates a Go map, i.e. at random).
    """
    if not nodes_to_victims:
        return ""
    candidates = list(nodes_to_victims)
    funcs: Sequence[ScoreFunc]
    if score_funcs:
        funcs = score_funcs
    else:

        def min_num_pdb_violating(node: str) -> int:
            return -nodes_to_victims[node].num_pdb_violations

        def min_highest_priority(node: str) -> int:
            return -nodes_to_victims[node].pods[0].priority

        def min_sum_priorities(node: str) -> int:
            return -sum(p.priority + _MAX_INT32 + 1 for p in nodes_to_victims[node].pods)

        def min_num_pods(node: str) -> int:
            return -len(nodes_to_victims[node].pods)

        now_nanos = _unix_nano(now)

        def latest_start_time(node: str) -> int:
            # get_earliest_pod_start_time in nanoseconds, each start converted once.
            pods = nodes_to_victims[node].pods
            if not pods:
                return _MIN_INT64
            first = pods[0]
            max_priority = first.priority
            earliest = _start_nanos(first, now_nanos)
            for pod in pods:
                priority = pod.priority
                if priority == max_priority:
                    start = _start_nanos(pod, now_nanos)
                    if start < earliest:
                        earliest = start
                elif priority > max_priority:
                    max_priority = priority
                    earliest = _start_nanos(pod, now_nanos)
            return earliest

        funcs = (
            min_num_pdb_violating,
            min_highest_priority,
            min_sum_priorities,
            min_num_pods,
            latest_start_time,
        )
    for f in funcs:
        selected: list[str] = []
        max_score = _MIN_INT64
        for node in candidates:
            score = f(node)
            if score > max_score:
                max_score = score
                selected = []
            if score == max_score:
                selected.append(node)
        if len(selected) == 1:
            return selected[0]
        candidates = selected
    return candidates[0]
