"""Observer hooks: what the scheduler tells metrics exporters, recorders and tracers.

Hooks are called once per pod attempt or per event, never per node. Implement any subset in a
plain module or class, mark each with ``@schedframe.hooks.impl``, and declare an entry point in
group ``schedframe.hooks`` (or register it on the Scheduler's plugin manager)::

    from schedframe import hooks

    @hooks.impl
    def schedframe_pod_scheduled(pod, node_name, profile, attempts):
        print(f"{pod.key} -> {node_name} after {attempts} attempt(s)")

Each observer is called on its own: an exception it raises is logged and counted (in
``Scheduler.observers.failures``) and every other observer still sees the call, so an observer
can never break scheduling nor silence another observer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from schedframe.objects import Pod

spec = pluggy.HookspecMarker("schedframe")


@spec
def schedframe_pod_scheduled(
    pod: Pod, node_name: str, profile: str, attempts: int, queued_seconds: float | None
) -> None:
    """A pod was bound to ``node_name`` (after its binding cycle succeeded).

    Args:
        pod: the pod as it was scheduled.
        node_name: where it was bound.
        profile: the ``schedulerName`` of the profile that scheduled it.
        attempts: scheduling attempts it took, this one included.
        queued_seconds: seconds since the pod first entered the scheduling queue (upstream's
            ``pod_scheduling_sli_duration_seconds``), on the scheduler's clock; ``None`` when
            unknown.

    .. versionadded:: 0.1
    .. versionchanged:: 0.2 ``queued_seconds``.
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


@spec
def schedframe_preemption_attempted(pod: Pod, profile: str) -> None:
    """PostFilter (preemption) runs for ``pod``, whose scheduling attempt was rejected.

    Upstream counts ``scheduler_preemption_attempts_total`` at this point, whether or not
    victims are then found.

    .. versionadded:: 0.2
    """


@spec
def schedframe_event_handled(event: str, seconds: float) -> None:
    """The scheduler handled a cluster event (``event`` is upstream's label, ``NodeAdd``...).

    Args:
        event: the event's label.
        seconds: how long its handler took (upstream's ``event_handling_duration_seconds``).

    .. versionadded:: 0.2
    """
