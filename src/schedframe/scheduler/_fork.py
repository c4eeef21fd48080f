"""Fork a running scheduler: the same profiles and random state on a copy-on-write backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from schedframe.scheduler._clock import RealClock, VirtualClock

if TYPE_CHECKING:
    import pluggy

    from schedframe.scheduler._scheduler import Scheduler

__all__ = ["canonical_scheduler_state", "fork_scheduler"]


def fork_scheduler(sched: Scheduler, *, hooks: pluggy.PluginManager | None = None) -> Scheduler:
    """A new :class:`Scheduler` on ``sched.backend.fork()``, built from the same configuration,
    registry and flags, with the same random state and node start index.

    The fork's cache and queue are filled from the forked cluster, as a restarted scheduler's
    would be: every bound pod is in the cache, every pending pod of a profile is in the
    activeQ (a what-if gives each pending pod a fresh attempt; the original's backoff timers
    and unschedulable pool are not copied). In deterministic mode the fork gets its own
    :class:`VirtualClock` starting at ``sched``'s time, so advancing it never moves the
    original's clock.

    Raises:
        TypeError: the backend cannot fork (only :class:`MemoryBackend` and its forks can).
        RuntimeError: binding cycles are in flight (the cluster is between two states); run
            the scheduler until idle first.
    """
    from schedframe.backends import MemoryBackend

    backend = sched.backend
    if not isinstance(backend, MemoryBackend):
        raise TypeError(
            f"cannot fork a scheduler on {type(backend).__name__}: only a MemoryBackend forks "
            "(load the live cluster into one first)"
        )
    if sched.in_flight():
        raise RuntimeError(
            f"cannot fork with {sched.in_flight()} binding cycle(s) in flight; "
            "run the scheduler until idle first"
        )
    from schedframe.queue import SchedulingQueue

    queue = sched.queue
    hints = queue.queueing_hints if isinstance(queue, SchedulingQueue) else True
    clock = VirtualClock(start=sched.clock.now()) if sched.deterministic else RealClock()
    forked_backend = backend.fork(clock=clock)
    from schedframe.scheduler._scheduler import Scheduler

    fork = Scheduler(
        sched.config,
        forked_backend,
        registry=sched.registry,
        clock=clock,
        seed=sched.seed,
        deterministic=sched.deterministic,
        hooks=hooks,
        binding_workers=sched._binding_workers,
        queueing_hints=hints,
        nominated_node_name_for_expectation=sched.nominated_node_name_for_expectation,
    )
    fork.rng.setstate(sched.rng.getstate())
    fork.algorithm.next_start_node_index = sched.algorithm.next_start_node_index
    return fork


def canonical_scheduler_state(sched: Scheduler) -> bytes:
    """A canonical serialisation of a scheduler's state: its backend's
    (:func:`schedframe.backends.canonical_state`, for a :class:`MemoryBackend`), its queue
    (each pending pod by sub-queue, and its nominated node), its cache (each node's object
    and pods with their requests, the assumed pods), its clock, random state and node start
    index. Two schedulers with the same bytes are in the same state; this is what
    fork/commit/revert is tested with.
    """
    from schedframe.backends import MemoryBackend, canonical_state

    parts: list[str] = []
    if isinstance(sched.backend, MemoryBackend):
        parts.append(canonical_state(sched.backend).decode("utf-8"))
    queue = sched.queue
    for name, pods in (
        ("activeQ", queue.active_pods()),
        ("backoffQ", queue.backoff_pods()),
        ("unschedulablePods", queue.unschedulable_pods()),
    ):
        parts.extend(f"{name} {p.key} {p.metadata.resource_version}" for p in pods)
    parts.extend(f"nominated {p.key} {p.status.nominated_node_name}" for p in queue.pending_pods())
    from schedframe.cache import Cache

    dump = cast("Cache", sched.cache).dump()
    for name in sorted(dump.nodes):
        info = dump.nodes[name]
        parts.append(f"node {name} {info.node!r} requested={sorted(info.requested.items())}")
        parts.extend(
            f"  pod {pi.pod.key} {pi.pod.metadata.resource_version} {pi.pod.spec.node_name}"
            for pi in sorted(info.pods, key=lambda pi: pi.pod.key)
        )
    parts.append(f"assumed {sorted(dump.assumed_pods)}")
    parts.append(f"clock {sched.clock.now()!r}")
    parts.append(f"rng {sched.rng.getstate()!r}")
    parts.append(f"start {sched.algorithm.next_start_node_index}")
    return "\n".join(parts).encode("utf-8")
