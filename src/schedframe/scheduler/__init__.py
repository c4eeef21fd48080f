"""The scheduling loop: the :class:`Scheduler`, its clocks and its per-pod results.

Upstream: ``pkg/scheduler`` (``scheduler.go``, ``schedule_one.go``, ``eventhandlers.go``).
"""

from __future__ import annotations

from schedframe.scheduler._clock import Cancellable, Clock, RealClock, VirtualClock, call_every
from schedframe.scheduler._fork import canonical_scheduler_state, fork_scheduler
from schedframe.scheduler._schedule_one import (
    NodeScore,
    NoNodesAvailableError,
    ScheduleResult,
    num_feasible_nodes_to_find,
    select_host,
)
from schedframe.scheduler._scheduler import Scheduler

__all__ = [
    "Cancellable",
    "Clock",
    "NoNodesAvailableError",
    "NodeScore",
    "RealClock",
    "ScheduleResult",
    "Scheduler",
    "VirtualClock",
    "call_every",
    "canonical_scheduler_state",
    "fork_scheduler",
    "num_feasible_nodes_to_find",
    "select_host",
]
