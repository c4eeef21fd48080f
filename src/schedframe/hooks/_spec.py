"""Observer hooks: what the scheduler tells metrics exporters, recorders and tracers.

Hooks are called once per pod attempt or per event, never per node. Implement any subset in a
plain module or class, mark each with ``@schedframe.hooks.impl``, and declare an entry point in
group ``schedframe.hooks`` (or register it on the Scheduler's plugin manager)::

    from schedframe import hooks

    @hooks.impl
    def schedframe_pod_scheduled(pod, node_name, profile, attempts):
        print(f"{pod.key} -> {node_name} after {attempts} attempt(s)")

Exceptions raised by an observer are logged and swallowed by the scheduler: an observer can
never break scheduling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from schedframe.objects import Pod

spec = pluggy.HookspecMarker("schedframe")


@spec
def schedframe_pod_scheduled(pod: Pod, node_name: str, profile: str, attempts: int) -> None:
    """A pod was bound to ``node_name`` (after its binding cycle succeeded).

    Args:
        pod: the pod as it was scheduled.
        node_name: where it was bound.
        profile: the ``schedulerName`` of the profile that scheduled it.
        attempts: scheduling attempts it took, this one included.

    .. versionadded:: 0.1
    """


@spec
def schedframe_pod_unschedulable(
    pod: Pod, profile: str, message: str, plugins: Sequence[str], attempts: int
) -> None:
    """An attempt found no node; the pod goes back to the queue.

    Args:
        pod: the pod.
        profile: the profile's ``schedulerName``.
        message: upstream's FailedScheduling message (``0/3 nodes are available: ...``).
        plugins: the plugins that rejected the pod, sorted.
        attempts: scheduling attempts so far.

    .. versionadded:: 0.1
    """


@spec
def schedframe_scheduling_error(pod: Pod, profile: str, message: str) -> None:
    """An attempt ended in an error (a plugin or the backend failed); the pod will be retried.

    .. versionadded:: 0.1
    """


@spec
def schedframe_cycle_finished(
    pod: Pod, profile: str, result: str, durations: Mapping[str, float]
) -> None:
    """A scheduling cycle ended.

    Args:
        pod: the pod of the cycle.
        profile: the profile's ``schedulerName``.
        result: ``scheduled``, ``unschedulable`` or ``error`` (upstream metric labels).
        durations: seconds per extension point in this cycle (``PreFilter``, ``Filter``,
            ``Score``, ...), plus ``SchedulingAlgorithm`` and ``Total``.

    .. versionadded:: 0.1
    """


@spec
def schedframe_preemption(
    preemptor: Pod, node_name: str, victims: Sequence[Pod], profile: str
) -> None:
    """Preemption chose ``node_name`` for ``preemptor`` and is evicting ``victims``.

    .. versionadded:: 0.1
    """
