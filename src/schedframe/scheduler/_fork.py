"""Fork a running scheduler: the same profiles and random state on a copy-on-write backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from schedframe.scheduler._clock import Cancellable, RealClock, VirtualClock, _VirtualPeriodic

if TYPE_CHECKING:
    import pluggy

    from schedframe.backends import BackendFork, MemoryBackend
    from schedframe.cache import Cache
    from schedframe.queue import SchedulingQueue
    from schedframe.scheduler._scheduler import Scheduler

__all__ = ["canonical_scheduler_state", "fork_scheduler"]


def fork_scheduler(sched: Scheduler, *, hooks: pluggy.PluginManager | None = None) -> Scheduler:
    """A new :class:`Scheduler` on ``sched.backend.fork()``, built from the same configuration,
    registry and flags, that starts from a copy of ``sched``'s state rather than from a replay
    of the cluster.

    Copied: the cache (copy-on-write: both schedulers share each node's NodeInfo until one of
    them changes it), the snapshot (likewise), the scheduling queue (every pending pod with its
    history: activeQ and backoffQ order, backoff expiries, the unschedulable pool with each
    pod's timestamps and rejecting plugins, gated pods, in-flight events, nominations, the
    scheduling cycle), the informer-side stores (pods, namespaces, PodDisruptionBudgets,
    workloads, storage and DRA objects, every object by kind), the random state, the node start
    index and, in deterministic mode, the grid of the periodic queue flushes; the forked
    backend ends the graceful deletions under way when the original's would, and timers due
    at one instant fire in the original's order. So from the fork on, the fork makes the
    decisions ``sched`` would make from the same operations. In deterministic mode the fork
    gets its own :class:`VirtualClock` starting at ``sched``'s time, so advancing it never
    moves the original's clock.

    Not copied: results, events and counters (the fork's start empty), and the plugins' own
    memos (rebuilt on demand, as a restarted scheduler's).

    Raises:
        TypeError: the backend cannot fork (only :class:`MemoryBackend` and its forks can), or
            the scheduler's cache or queue is not the one it built.
        RuntimeError: binding cycles are in flight (the cluster is between two states), or a
            scheduling cycle is (real mode: fork between cycles); run the scheduler until
            idle first.
    """
    from schedframe.backends import MemoryBackend

    backend = sched.backend
    if not isinstance(backend, MemoryBackend):
        raise TypeError(
            f"cannot fork a scheduler on {type(backend).__name__}: only a MemoryBackend forks "
            "(load the live cluster into one first)"
        )
    from schedframe.cache import Cache
    from schedframe.queue import SchedulingQueue

    queue, cache = sched.queue, cast("object", sched.cache)
    if not isinstance(queue, SchedulingQueue) or not isinstance(cache, Cache):
        raise TypeError("cannot fork a scheduler whose queue or cache was replaced")
    # Hold still while copying: no watch event is delivered to the original (its writers
    # wait; what they wrote reaches the fork as undelivered events) and no scheduling cycle
    # starts (the queue's lock keeps pop out), so the fork's cluster, cache, snapshot and
    # queue are of one instant.
    with backend._holding_deliveries(), queue._lock:
        fork, forked_backend = _fork_quiet(sched, backend, queue, cache, hooks)
    forked_backend.deliver_pending()
    return fork


def _fork_quiet(
    sched: Scheduler,
    backend: MemoryBackend,
    queue: SchedulingQueue,
    cache: Cache,
    hooks: pluggy.PluginManager | None,
) -> tuple[Scheduler, BackendFork]:
    if sched.in_flight():
        raise RuntimeError(
            f"cannot fork with {sched.in_flight()} binding cycle(s) in flight; "
            "run the scheduler until idle first"
        )
    popped = queue.in_flight_pods()
    if popped:
        raise RuntimeError(
            f"cannot fork during the scheduling cycle of pod {popped[0].key}; fork between cycles"
        )
    clock = VirtualClock(start=sched.clock.now()) if sched.deterministic else RealClock()
    forked_backend: BackendFork = backend.fork(clock=clock)
    from schedframe.scheduler._scheduler import Scheduler

    with forked_backend.resuming_watches():  # its state is copied below, not replayed
        fork = Scheduler(
            sched.config,
            forked_backend,
            registry=sched.registry,
            clock=clock,
            seed=sched.seed,
            deterministic=sched.deterministic,
            hooks=hooks,
            binding_workers=sched._binding_workers,
            queueing_hints=queue.queueing_hints,
            nominated_node_name_for_expectation=sched.nominated_node_name_for_expectation,
        )
    cast("Cache", fork.cache).copy_state(cache)
    fork.snapshot.copy_state(sched.snapshot)
    cast("SchedulingQueue", fork.queue).copy_state(queue)
    fork.pod_store.copy_state(sched.pod_store)
    fork.cluster.copy_state(sched.cluster)
    fork.rng.setstate(sched.rng.getstate())
    fork.algorithm.next_start_node_index = sched.algorithm.next_start_node_index
    # Deterministic mode's spin detection, so a pod retried at one instant stalls as it would.
    fork._spin_at = sched._spin_at
    fork._attempts_at = dict(sched._attempts_at)
    fork._stalled_pods = sched._stalled_pods
    if isinstance(clock, VirtualClock) and isinstance(sched.clock, VirtualClock):
        pairs: list[tuple[Cancellable, Cancellable]] = []
        if sched._started:
            fork._ensure_started()
            pairs.extend(zip(sched._timers, fork._timers, strict=True))
        if backend._clock is sched.clock:  # pods in their grace period, on the same clock
            pairs.extend(
                cast("list[tuple[Cancellable, Cancellable]]", forked_backend._inherited_timers)
            )
        _align_timers(sched.clock, clock, pairs)
    return fork, forked_backend


def _align_timers(
    theirs: VirtualClock, mine: VirtualClock, pairs: list[tuple[Cancellable, Cancellable]]
) -> None:
    """Give the fork's timers their originals' due times and order: the periodic flushes stay
    on the original's grid, and timers due at one instant fire in the original's order."""
    order: list[tuple[int, Cancellable]] = []
    for original, copy in pairs:
        if isinstance(original, _VirtualPeriodic) and isinstance(copy, _VirtualPeriodic):
            copy.when = original.when
        seq = theirs.order_of(original)
        if seq is not None:
            order.append((seq, copy))
    order.sort(key=lambda item: item[0])
    mine.reorder([copy for _, copy in order])


def canonical_scheduler_state(sched: Scheduler) -> bytes:
    """A canonical serialisation of a scheduler's state: its backend's
    (:func:`schedframe.backends.canonical_state`, for a :class:`MemoryBackend`), its queue
    (each pending pod by sub-queue in pop order, its nominated node and queueing history:
    attempts, timestamps, rejecting plugins, backoff expiry; the scheduling cycle), its
    snapshot (nodes in order, with their pods and requests), its cache (each node's object
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
    from schedframe.queue import SchedulingQueue

    full = cast("object", queue)
    pending = queue.pending_pods() if isinstance(full, SchedulingQueue) else []
    for pod in pending:
        assert isinstance(full, SchedulingQueue)
        qpi = full.get_queued_pod_info(pod.uid)
        if qpi is not None:
            parts.append(
                f"queued {pod.key} attempts={qpi.attempts} timestamp={qpi.timestamp!r} "
                f"initial={qpi.initial_attempt_timestamp!r} "
                f"unschedulable={qpi.unschedulable_count} errors={qpi.consecutive_errors_count} "
                f"plugins={sorted(qpi.unschedulable_plugins)} "
                f"pending={sorted(qpi.pending_plugins)} gate={qpi.gating_plugin!r} "
                f"backoff={full.backoff_time(qpi)!r}"
            )
    parts.append(f"cycle {queue.scheduling_cycle}")
    parts.extend(
        f"snapshot {info.name} pods={len(info.pods)} requested={sorted(info.requested.items())}"
        for info in sched.snapshot.list()
    )

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
