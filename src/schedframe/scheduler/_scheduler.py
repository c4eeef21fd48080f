"""The Scheduler: profiles, queue, cache, event handlers and the loop that drives them.

Upstream: ``pkg/scheduler/scheduler.go`` (``New``, ``Run``) and the loop of ``ScheduleOne``.

Two ways to run:

* **real mode** (default): a :class:`RealClock`; binding cycles run on a pool of long-lived
  binding threads, concurrently with the next scheduling cycles (upstream runs a goroutine per
  binding cycle; a blocked PreBind or Bind holds up no other binding for more than a few
  milliseconds, see ``_binder``). At most ``binding_workers`` binding cycles run at once: the scheduling loop waits for
  one to end before starting another (back-pressure, so binding never falls thousands of pods
  behind scheduling). A pod waiting on Permit holds no thread and does not count. The loop of
  :meth:`Scheduler.run` hands the binding cycles it starts back to back over in small batches
  (at most ``HOLD_MAX``, held until the first scheduling cycle to begin ``HOLD_S`` seconds after
  the oldest, or until the loop waits for a pod or a slot; a cycle that took ``HOLD_S`` or
  more hands its binding over at once), one thread wake-up per batch;
* **deterministic mode** (``deterministic=True``): a :class:`VirtualClock`, a seeded random
  source, and binding cycles run as ordered tasks on the calling thread (right after the
  scheduling cycle that started them, or when their Permit wait resolves). No thread is
  started, so the same inputs give the same placements and the same events in the same order.

Either way the scheduling cycle is serial, and nothing is lost: a failing plugin, backend call
or bind becomes an error status and a retry through the queue.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from schedframe import framework as fw
from schedframe.backends._protocols import (
    ExtendedResourceClaimWriter,
    ResourceClaimStatusWriter,
    ResourceClaimWriter,
)
from schedframe.extender import EXTENDER_NAME, apply_ignored_resources, build_extenders
from schedframe.hooks._observers import Observers
from schedframe.objects import Pod
from schedframe.runtime import Framework, RecordingEventRecorder, Registry, WaitingPods
from schedframe.runtime._guard import SHUTDOWN
from schedframe.scheduler._binder import HOLD_MAX, HOLD_S, BindingPool
from schedframe.scheduler._clock import Cancellable, Clock, RealClock, VirtualClock, call_every
from schedframe.scheduler._eventhandlers import EventHandlers, LiveClusterView, PodStore
from schedframe.scheduler._failure import handle_scheduling_failure
from schedframe.scheduler._protocols import KindWatcher
from schedframe.scheduler._schedule_one import Algorithm, ScheduleResult
from schedframe.scheduler._schedule_one import schedule_one as _schedule_one_pod

if TYPE_CHECKING:
    import pluggy

    from schedframe.cache import Snapshot
    from schedframe.config import KubeSchedulerConfiguration
    from schedframe.scheduler._protocols import (
        BackendLike,
        CacheLike,
        QueueLike,
        SubscriptionLike,
    )

__all__ = ["Scheduler"]

log = logging.getLogger("schedframe.scheduler")

#: What a pod the extenders rejected waits for: any cluster event.
_ANY_EVENT = fw.ClusterEventWithHint(fw.ClusterEvent(fw.EventResource.WILDCARD, fw.ActionType.ALL))

#: Upstream flushes completed backoffs every second ...
BACKOFF_FLUSH_PERIOD = 1.0
#: ... and unschedulable leftovers every 30 seconds.
UNSCHEDULABLE_FLUSH_PERIOD = 30.0
#: Default bound on the binding cycles running at once in real mode (pods parked on Permit
#: excluded). Upstream has no bound (a goroutine per cycle, throttled by the client's QPS);
#: this one only keeps a queue of thousands from building up behind a slow API server.
DEFAULT_BINDING_WORKERS = 256
#: In deterministic mode a scheduling cycle takes no virtual time, so a pod whose every failure
#: requeues it at once (a gang Permit activating its siblings, a pod force-activated while in
#: flight and handed back by the backoffQ because the activeQ is empty) would be retried
#: forever at one instant. Upstream, real time passes meanwhile; here, once one pod has been
#: attempted this many times at one virtual instant, the loop moves the clock to the next
#: timer (backoff flush, Permit timeout, ...), so backoffs expire and the stall limit applies.
SPIN_ATTEMPTS = 10


class _ObservingRecorder(RecordingEventRecorder):
    """The profiles' event recorder; also notes preemption victims for the observer hook.

    Preemption records ``Preempted`` on each victim with the preemptor as the related object
    (upstream ``prepareCandidate``); the scheduling cycle collects them after PostFilter.
    """

    def __init__(self, binder: fw.Binder, max_events: int | None = None) -> None:
        super().__init__(binder)
        self._victims: dict[str, list[Pod]] = {}
        self._lock = threading.Lock()
        self._max_events = max_events

    def eventf(
        self,
        regarding: Pod,
        related: object | None,
        event_type: str,
        reason: str,
        action: str,
        note: str,
    ) -> None:
        if reason == "Preempted" and isinstance(related, Pod):
            with self._lock:
                self._victims.setdefault(related.uid, []).append(regarding)
        super().eventf(regarding, related, event_type, reason, action, note)
        limit = self._max_events
        if limit is not None and len(self.events) >= 2 * limit:
            with self._lock:  # trimmed in halves: amortised O(1) per event
                del self.events[: len(self.events) - limit]

    def take_victims(self, preemptor_uid: str) -> list[Pod]:
        """The victims recorded for ``preemptor_uid`` since the last call. Entries of other
        preemptors go too: evictions run off the cycle (async preemption) are reported from
        the chosen candidate instead, so nothing is kept for them."""
        with self._lock:
            victims = self._victims.pop(preemptor_uid, [])
            self._victims.clear()
            return victims


class _QueueNominator:
    """The Handle's nominator, forwarding to the queue once the queue exists.

    Frameworks are built before the queue (the queue needs their QueueSort), so they get
    this forwarder; upstream passes the queue itself as the PodNominator.
    """

    def __init__(self) -> None:
        self.queue: QueueLike | None = None

    def _q(self) -> QueueLike:
        assert self.queue is not None, "the scheduling queue is not built yet"
        return self.queue

    def nominated_pods_for_node(self, node_name: str) -> list[fw.PodInfo]:
        if self.queue is None:
            return []
        return self.queue.nominated_pods_for_node(node_name)

    def nominated_pods_for_nodes(self, node_names: Iterable[str]) -> dict[str, list[fw.PodInfo]]:
        if self.queue is None:
            return {}
        return self.queue.nominated_pods_for_nodes(node_names)

    def nominated_node_names(self) -> frozenset[str]:
        if self.queue is None:
            return frozenset()
        return self.queue.nominated_node_names()

    def nominated_generation(self) -> int:
        if self.queue is None:
            return 0
        return self.queue.nominated_generation()

    def nominated_generations(self, node_names: Iterable[str]) -> dict[str, int]:
        if self.queue is None:
            return dict.fromkeys(node_names, 0)
        return self.queue.nominated_generations(node_names)

    def add_nominated_pod(self, pod_info: fw.PodInfo, node_name: str) -> None:
        self._q().add_nominated_pod(pod_info, node_name)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        self._q().delete_nominated_pod_if_exists(pod)


class Scheduler:
    """A kube-scheduler: one Framework per profile, one queue, one cache, one backend.

    Build one with :meth:`from_config`::

        sched = Scheduler.from_config("config.yaml", backend, deterministic=True, seed=1)
        backend.create(node); backend.create(pod)
        sched.run_until_idle()
        sched.results[pod.uid].node_name

    Attributes:
        profiles: Frameworks by ``schedulerName``.
        queue: the scheduling queue (and nominator).
        cache: the scheduler cache.
        backend: the cluster.
        clock: the scheduler's clock.
        rng: the seeded random source (tie-breaking; plugins get it through their Handle).
        results: the latest :class:`ScheduleResult` of every pod attempted, by uid (only of
            the ``max_results`` pods attempted last when that bound is given).
        events: every event recorded, in order (also forwarded to the backend); only the
            latest ``max_events`` (at least) when that bound is given.

    A long-running scheduler (a daemon) passes ``max_results`` and ``max_events`` so memory
    stays flat; embedded runs and simulations, which are finite, keep everything by default.

    ``fence`` makes leadership a fence (``schedframe run`` passes its Lease): while it answers
    ``False`` no scheduling cycle starts and no binding cycle proceeds to PreBind or Bind; the
    binding cycles it stops are abandoned (:meth:`abandon`).
    """

    def __init__(
        self,
        config: KubeSchedulerConfiguration,
        backend: BackendLike,
        *,
        registry: Registry | None = None,
        clock: Clock | None = None,
        seed: int | None = None,
        deterministic: bool = False,
        hooks: pluggy.PluginManager | None = None,
        binding_workers: int = DEFAULT_BINDING_WORKERS,
        queueing_hints: bool | None = None,
        nominated_node_name_for_expectation: bool | None = None,
        max_results: int | None = None,
        max_events: int | None = None,
        fence: Callable[[], bool] | None = None,
    ) -> None:
        from schedframe import queue as queue_module
        from schedframe.cache import Cache, Snapshot

        if clock is None:
            clock = VirtualClock() if deterministic else RealClock()
        if deterministic and not isinstance(clock, VirtualClock):
            raise ValueError("deterministic mode needs a VirtualClock (or no clock at all)")
        # Resources extenders manage and the scheduler ignores leave NodeResourcesFit (upstream).
        config = apply_ignored_resources(config)
        self.config = config
        self.backend = backend
        self.deterministic = deterministic
        self.clock: Clock = clock
        self.seed = seed if seed is not None else (0 if deterministic else None)
        self.rng = random.Random(self.seed)
        self.hooks = hooks
        #: Typed, isolated calls of the observer hooks (see :class:`~schedframe.hooks.Observers`).
        self.observers = Observers(hooks)
        #: Upstream's ``NominatedNodeNameForExpectation``: PreBindPreFlight runs first in the
        #: binding cycle, and a pod PreBind will work on (or that waits on Permit) gets its
        #: ``nominatedNodeName`` set to the chosen node before the wait.
        gates = config.feature_gates
        if queueing_hints is None:
            queueing_hints = gates.enabled("SchedulerQueueingHints")
        if nominated_node_name_for_expectation is None:
            nominated_node_name_for_expectation = gates.enabled("NominatedNodeNameForExpectation")
        self.nominated_node_name_for_expectation = nominated_node_name_for_expectation

        self.cache: CacheLike = cast("CacheLike", Cache())
        self.snapshot: Snapshot = Snapshot()
        self.waiting_pods = WaitingPods()
        self.pod_store = PodStore()
        self.cluster = LiveClusterView(
            backend.watch_kind if isinstance(backend, KindWatcher) else None
        )
        if isinstance(backend, ResourceClaimStatusWriter):
            self.cluster.dra.writer = backend.update_resource_claim_status
        if isinstance(backend, ExtendedResourceClaimWriter):
            self.cluster.dra.claim_writer = backend
        if isinstance(backend, ResourceClaimWriter):
            self.cluster.dra.updater = backend.update_resource_claim
        if max_results is not None and max_results < 1:
            raise ValueError("max_results must be at least 1")
        if max_events is not None and max_events < 1:
            raise ValueError("max_events must be at least 1")
        self.event_recorder = _ObservingRecorder(cast("fw.Binder", backend), max_events)
        self._nominator = _QueueNominator()

        registry = registry if registry is not None else Registry.discover()
        #: Where the profiles' plugins came from (a fork builds its profiles from it too).
        self.registry = registry
        self.profiles: dict[str, Framework] = {}
        for index, profile in enumerate(config.profiles):
            self.profiles[profile.scheduler_name] = Framework.from_profile(
                profile,
                registry,
                index=index,
                snapshot=self.snapshot,
                cluster=self.cluster,
                clock=clock,
                timers=clock,
                rng=self.rng,
                binder=backend,
                event_recorder=self.event_recorder,
                nominator=self._nominator,
                activator=self._activate,
                waiting_pods=self.waiting_pods,
                parallelism=config.parallelism,
                async_runner=self._run_async,
                pod_lister=self.pod_store.get,
                features=config.feature_gates,
            )
        extenders = build_extenders(config)
        for fwk in self.profiles.values():
            fwk.extenders = extenders
            if extenders:
                # Extenders have no queueing hints: any cluster event requeues a pod they
                # rejected (upstream registers a default enqueue extension named Extender).
                fwk.enqueue_extensions.insert(0, (EXTENDER_NAME, (_ANY_EVENT,)))

        self.queue: QueueLike = cast(
            "QueueLike",
            queue_module.SchedulingQueue(  # type: ignore[attr-defined,unused-ignore]
                frameworks=self.profiles,
                clock=clock,
                pod_initial_backoff=float(config.pod_initial_backoff_seconds),
                pod_max_backoff=float(config.pod_max_backoff_seconds),
                queueing_hints=queueing_hints,
                pop_from_backoff_q=config.feature_gates.enabled("SchedulerPopFromBackoffQ"),
            ),
        )
        self._nominator.queue = self.queue
        self.algorithm = Algorithm(
            self.snapshot,
            self.rng,
            percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
            update_snapshot=self.cache.update_snapshot,
        )
        self.algorithm.extenders = extenders
        self.algorithm.current_cycle = lambda: self.queue.scheduling_cycle
        self.algorithm.now = self.clock.now
        self.handlers = EventHandlers(
            cache=self.cache,
            queue=self.queue,
            profiles=self.profiles,
            cluster=self.cluster,
            pods=self.pod_store,
        )
        self.handlers.observers = self.observers

        self.results: dict[str, ScheduleResult] = {}
        self._max_results = max_results
        self._results_lock = threading.Lock()
        self._bound = 0
        self._attempts = 0
        # Spin detection (deterministic mode): attempts per pod at the instant ``_spin_at``.
        self._spin_at: float | None = None
        self._stalled_pods: tuple[str, ...] = ()
        self._attempts_at: dict[str, int] = {}
        self._spinning = False

        # Binding cycles in flight (assumed, not yet bound or failed), waiting pods included;
        # of those, ``_running`` are not parked on Permit (the back-pressure count).
        self._in_flight = 0
        self._running = 0
        self._in_flight_cond = threading.Condition()
        self._tasks: collections.deque[Callable[[], None]] = collections.deque()
        self._binding_workers = max(1, binding_workers)
        self._binders = BindingPool(self._run_task, name="schedframe-binding")
        #: Real mode: the thread whose scheduling loop (``run``, ``run_until_idle``) holds the
        #: binding cycles it starts and flushes them in batches (see ``_binder``).
        self._holder: int | None = None
        #: Real mode: when the scheduling cycle under way began (``time.monotonic``).
        self._cycle_began = 0.0
        self._fence = fence
        self._abandoning = False
        self._halted = False

        self._timers: list[Cancellable] = []
        self._started = False
        self._stopped = False
        self._subscription: SubscriptionLike | None = backend.subscribe(self.handlers)

    # -- building ----------------------------------------------------------------------------

    @classmethod
    def from_config(
        cls,
        config: KubeSchedulerConfiguration
        | str
        | os.PathLike[str]
        | Mapping[str, Any]
        | None = None,
        backend: BackendLike | None = None,
        *,
        registry: Registry | None = None,
        clock: Clock | None = None,
        seed: int | None = None,
        deterministic: bool = False,
        hooks: pluggy.PluginManager | None = None,
        binding_workers: int = DEFAULT_BINDING_WORKERS,
        queueing_hints: bool | None = None,
        nominated_node_name_for_expectation: bool | None = None,
        max_results: int | None = None,
        max_events: int | None = None,
        fence: Callable[[], bool] | None = None,
    ) -> Scheduler:
        """Build a scheduler from a ``KubeSchedulerConfiguration``.

        Args:
            config: a loaded configuration, a path to a YAML/JSON file, a mapping, or ``None``
                for kube-scheduler's defaults.
            backend: the cluster; ``None`` for a new empty in-memory backend.
            registry: where plugins come from; ``None`` discovers installed entry points.
            clock: the time source; by default a VirtualClock in deterministic mode, else real.
            seed: seeds the random source (0 in deterministic mode when not given).
            deterministic: virtual time and binding without threads (see the module doc).
            hooks: a pluggy plugin manager whose ``schedframe_*`` hooks observe the scheduler.
            binding_workers: binding threads in real mode.
            queueing_hints: use the plugins' queueing hints (upstream's
                ``SchedulerQueueingHints`` gate); see ``SchedulingQueue(queueing_hints=...)``.
                ``None`` (the default) takes the configuration's feature gate.
            nominated_node_name_for_expectation: upstream's ``NominatedNodeNameForExpectation``
                gate (PreBindPreFlight and the nominated node written before PreBind).
                ``None`` (the default) takes the configuration's feature gate, so
                ``--emulated-version 1.34`` turns it off as upstream's 1.34 has it.
            binding_workers: binding cycles running at once in real mode (the scheduling
                loop waits beyond it; pods waiting on Permit do not count).
            max_results: keep the results of only this many pods (the latest); ``None`` keeps
                every pod's.
            max_events: keep only about this many events (the latest); ``None`` keeps all.
            fence: leadership; no cycle starts or binds while it answers ``False``.

        Raises:
            ConfigError: the configuration is invalid, names an unknown plugin, or has bad args.
            PluginError: a plugin failed to build.
        """
        from schedframe.config import KubeSchedulerConfiguration, load_config
        from schedframe.errors import ConfigError

        source = config if isinstance(config, str | os.PathLike) else None
        if not isinstance(config, KubeSchedulerConfiguration):
            config = load_config(config)
        if source is not None:  # plugin args are decoded below: their errors name the file too
            try:
                return cls.from_config(
                    config,
                    backend,
                    registry=registry,
                    clock=clock,
                    seed=seed,
                    deterministic=deterministic,
                    hooks=hooks,
                    binding_workers=binding_workers,
                )
            except ConfigError as exc:
                if exc.source is None:
                    raise exc.with_source(os.fspath(source)) from None
                raise
        if clock is None:
            clock = VirtualClock() if deterministic else RealClock()
        if backend is None:
            from schedframe import backends

            memory = backends.MemoryBackend(clock=clock)  # type: ignore[attr-defined,unused-ignore]
            backend = cast("BackendLike", memory)
        return cls(
            config,
            backend,
            registry=registry,
            clock=clock,
            seed=seed,
            deterministic=deterministic,
            hooks=hooks,
            binding_workers=binding_workers,
            queueing_hints=queueing_hints,
            nominated_node_name_for_expectation=nominated_node_name_for_expectation,
            max_results=max_results,
            max_events=max_events,
            fence=fence,
        )

    def fork(self, *, hooks: pluggy.PluginManager | None = None) -> Scheduler:
        """A what-if copy of this scheduler on a copy-on-write fork of its backend.

        See :func:`schedframe.scheduler.fork_scheduler`; ``fork.backend.commit()`` applies
        what the fork did to this scheduler's cluster, ``fork.backend.discard()`` drops it.
        """
        from schedframe.scheduler._fork import fork_scheduler

        return fork_scheduler(self, hooks=hooks)

    # -- running -----------------------------------------------------------------------------

    def _ensure_started(self) -> None:
        if self._started:
            return
        self._started = True
        # Upstream SchedulingQueue.Run: wait.Until(flushBackoffQCompleted, 1s) and
        # wait.Until(flushUnschedulablePodsLeftover, 30s).
        # ``due``: a virtual clock skips the periods where a flush would move nothing.
        self._timers.append(
            call_every(
                self.clock,
                BACKOFF_FLUSH_PERIOD,
                self._flush_backoff_q_completed,
                due=self.queue.next_wakeup,
            )
        )
        self._timers.append(
            call_every(
                self.clock,
                UNSCHEDULABLE_FLUSH_PERIOD,
                self._flush_unschedulable_pods_leftover,
                due=self.queue.next_leftover_flush,
            )
        )

    def _flush_backoff_q_completed(self) -> None:
        try:
            self.queue.flush_backoff_q_completed()
        except Exception:
            log.exception("flushing completed backoffs failed")

    def _flush_unschedulable_pods_leftover(self) -> None:
        try:
            self.queue.flush_unschedulable_pods_leftover()
        except Exception:
            log.exception("flushing unschedulable leftovers failed")

    def schedule_one(self, *, block: bool = False, timeout: float | None = None) -> bool:
        """Pop one pod and run its scheduling cycle; ``False`` when no pod was ready.

        In deterministic mode the binding cycles that became ready run before this returns.
        """
        if self._stopped or self._halted or not self.may_bind():
            self._binders.flush()
            return False
        self._ensure_started()
        self._spinning = False  # says whether *this* attempt was one too many at this instant
        if self.deterministic:
            self._drain_tasks()
            qpi = self.queue.pop(block=block, timeout=timeout)
        else:
            qpi = self._pop_holding(block, timeout)
            self._cycle_began = time.monotonic()
        if qpi is None:
            if self.deterministic:
                self._drain_tasks()
            return False
        if not self.may_bind():  # the fence closed while waiting for a pod: hand it back
            try:
                self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle)
            except Exception:
                log.exception("requeueing pod %s failed", qpi.pod.key)
            return False
        self._attempts += 1
        if self.deterministic:
            self._note_attempt(qpi.pod.uid)
        try:
            _schedule_one_pod(self, qpi)
        except BaseException as exc:  # a bug or a shutdown: never lose the pod
            log.exception("scheduling cycle of pod %s crashed", qpi.pod.key)
            try:
                self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle)
            except Exception:
                log.exception("requeueing pod %s failed", qpi.pod.key)
            if isinstance(exc, SHUTDOWN):
                raise  # the process's own stop (see schedframe.runtime._guard)
        if self.deterministic:
            self._drain_tasks()
        return True

    def _pop_holding(self, block: bool, timeout: float | None) -> fw.QueuedPodInfo | None:
        """Real mode's pop: the binding cycles held back are handed over first when the
        oldest has waited ``HOLD_S``, and before waiting for a pod."""
        since = self._binders.held_since()
        if since is not None and time.monotonic() - since < HOLD_S:
            qpi = self.queue.pop()
            if qpi is not None:
                return qpi  # a pod ready at once: the held cycles may wait for its cycle
        self._binders.flush()  # held long enough, or idle (nothing held: nothing happens)
        return self.queue.pop(block=block, timeout=timeout)

    @contextlib.contextmanager
    def _holding(self) -> Iterator[None]:
        """Make the calling thread's loop the one that holds binding cycles, handing over what
        it holds when it ends."""
        holder, self._holder = self._holder, threading.get_ident()
        try:
            yield
        finally:
            self._holder = holder
            self._binders.flush()

    def run_until_idle(self, *, max_cycles: int | None = None, stall_timeout: float = 60.0) -> int:
        """Schedule until nothing is left to do now; returns the scheduling cycles run.

        Idle means: no pod ready to pop, no binding cycle in flight (waiting pods included),
        and no pod in backoff — pods left in the unschedulable pool wait for a cluster event,
        as upstream. Pods in backoff are retried as their backoff ends; if ``stall_timeout``
        seconds (virtual in deterministic mode) pass without a pod being bound, the run stops
        anyway (a persistent error would otherwise retry forever), and so it does while pods
        wait on Permit, once the longest wait they asked for has passed too (a plugin that
        keeps making pods wait); the pods it gave up on are in :attr:`stalled_pods`. In deterministic mode the
        virtual clock is advanced from timer to timer while waiting, and also when a pod keeps
        being requeued at once by its own failures (``SPIN_ATTEMPTS`` attempts of one pod at one
        instant).
        """
        self._ensure_started()
        self._stalled_pods = ()
        with self._holding():
            return self._run_until_idle(max_cycles, stall_timeout)

    def _run_until_idle(self, max_cycles: int | None, stall_timeout: float) -> int:
        cycles = 0
        bound = self._bound
        last_progress = self.clock.now()
        while not self._stopped:
            if max_cycles is not None and cycles >= max_cycles:
                break
            if self.schedule_one():
                cycles += 1
                if not self._spinning:
                    continue
                # Pods are ready, but only because their failures requeue them: let time pass.
                if self._bound != bound:
                    bound = self._bound
                    last_progress = self.clock.now()
                self._skip_spin()
                if self._stalled_since(last_progress, stall_timeout):
                    self._report_stall(stall_timeout, "while pods kept being requeued at once")
                    break
                continue
            if self._bound != bound:
                bound = self._bound
                last_progress = self.clock.now()
            in_flight = self.in_flight()
            backoff = bool(self.queue.backoff_pods())
            if not in_flight and not backoff:
                break
            if self._stalled_since(last_progress, stall_timeout):
                self._report_stall(stall_timeout, "")
                break
            if self.deterministic:
                assert isinstance(self.clock, VirtualClock)
                if in_flight and not self._tasks and not len(self.waiting_pods):
                    log.error("%d binding cycle(s) in flight with nothing to wait for", in_flight)
                    break
                deadline = self.clock.next_deadline()
                if deadline is None:
                    break
                self.clock.advance_to(deadline)
            elif self.schedule_one(block=True, timeout=0.05):
                cycles += 1
        return cycles

    def run(self, duration: float | None = None) -> int:
        """Run the loop for ``duration`` seconds (virtual in deterministic mode), or until
        :meth:`stop` (real mode) / idle (deterministic mode) when ``None``.

        Returns the scheduling cycles run.
        """
        self._ensure_started()
        if self.deterministic:
            assert isinstance(self.clock, VirtualClock)
            if duration is None:
                return self.run_until_idle()
            end = self.clock.now() + duration
            cycles = 0
            while not self._stopped:
                cycles += self._run_now()
                deadline = self.clock.next_deadline()
                if deadline is None or deadline > end:
                    self.clock.advance_to(end)
                    cycles += self._run_now()
                    break
                self.clock.advance_to(deadline)
            return cycles
        with self._holding():
            return self._run_real(duration)

    def _run_real(self, duration: float | None) -> int:
        cycles = 0
        until = None if duration is None else self.clock.now() + duration
        while not self._stopped and not self._halted:
            wait = 0.1
            if until is not None:
                remaining = until - self.clock.now()
                if remaining <= 0:
                    break
                wait = min(wait, remaining)
            if not self.may_bind():
                self._binders.flush()  # they meet the fence and are abandoned
                time.sleep(wait)  # behind the fence: no cycle starts, and no busy loop
                continue
            if self.schedule_one(block=True, timeout=wait):
                cycles += 1
        return cycles

    def _run_now(self) -> int:
        """Deterministic mode: schedule what is ready at this instant, stopping early if a pod
        keeps being requeued at once (the caller then moves the clock on)."""
        cycles = 0
        while self.schedule_one():
            cycles += 1
            if self._spinning:
                break
        return cycles

    def _note_attempt(self, uid: str) -> None:
        now = self.clock.now()
        if now != self._spin_at:
            self._spin_at = now
            self._attempts_at.clear()
        attempts = self._attempts_at.get(uid, 0) + 1
        self._attempts_at[uid] = attempts
        if attempts >= SPIN_ATTEMPTS:
            self._spinning = True

    def _stalled_since(self, last_progress: float, stall_timeout: float) -> bool:
        """No pod bound for ``stall_timeout`` seconds, and nothing under way that could still
        bind one: pods parked on Permit add the longest wait they asked for (their timeouts
        resolve them by then; a plugin that keeps making pods wait is no progress); a binding
        task running or queued is progress."""
        limit = stall_timeout
        if self.in_flight():
            if self._tasks or not len(self.waiting_pods):
                return False
            waits: list[float] = []
            self.waiting_pods.iterate(lambda wp: waits.append(wp.longest_wait))
            limit += max(waits, default=0.0)
        return self.clock.now() - last_progress >= limit

    def _report_stall(self, stall_timeout: float, how: str) -> None:
        """Record and log the pods a stalled run leaves behind (see :attr:`stalled_pods`)."""
        keys = {p.key for p in self.queue.pending_pods()}
        self.waiting_pods.iterate(lambda wp: keys.add(wp.pod.key))
        self._stalled_pods = tuple(sorted(keys))
        shown = ", ".join(self._stalled_pods[:10])
        more = len(self._stalled_pods) - 10
        log.warning(
            "run_until_idle: no pod bound for %ss%s, stopping; %d pod(s) cannot settle: %s%s",
            stall_timeout,
            f" {how}" if how else "",
            len(self._stalled_pods),
            shown,
            f" and {more} more" if more > 0 else "",
        )

    @property
    def stalled_pods(self) -> tuple[str, ...]:
        """``namespace/name`` of the pods the last :meth:`run_until_idle` gave up on because no
        pod was bound within its ``stall_timeout`` (a plugin that always waits, a persistent
        error); empty when the last run ended idle."""
        return self._stalled_pods

    def _skip_spin(self) -> None:
        """Move the virtual clock to the next timer, as the time a real scheduler spends
        retrying would (a tick when no timer is pending, so the stall limit is reached)."""
        assert isinstance(self.clock, VirtualClock)
        self.clock.run_due()
        now = self.clock.now()
        deadline = self.clock.next_deadline()
        tick = now + BACKOFF_FLUSH_PERIOD
        # Time must move, even past timers due now (a Permit wait of zero re-armed each cycle).
        self.clock.advance_to(tick if deadline is None or deadline <= now else min(deadline, tick))

    def stop(self, grace: float | None = None) -> None:
        """Stop the loop: cancel timers, close the queue, stop watching, finish bindings,
        close plugins. Idempotent.

        Args:
            grace: seconds to let the running binding cycles finish; those still running
                then are abandoned (:meth:`abandon`). ``None`` waits for all of them. Pods
                waiting on Permit are never waited for.
        """
        if self._stopped:
            return
        self._stopped = True
        self.halt()
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        try:
            self.queue.close()
        except Exception:
            log.exception("closing the queue failed")
        if self._subscription is not None:
            self._subscription.cancel()
            self._subscription = None
        if not self.deterministic:
            self._binders.flush()
            with self._in_flight_cond:
                drained = self._in_flight_cond.wait_for(lambda: self._running <= 0, grace)
            if not drained:
                log.info("abandoning the binding cycles still running after %ss", grace)
                self.abandon()
        self._binders.close()
        for fwk in self.profiles.values():
            fwk.close()

    @property
    def halted(self) -> bool:
        """Whether :meth:`halt` (or :meth:`stop`) was called."""
        return self._halted

    def halt(self) -> None:
        """Start no new scheduling cycle (from any thread; the cycle under way ends as usual
        and binding cycles go on). The first step of :meth:`stop`, which a caller can take
        at once on a signal."""
        self._halted = True
        with self._in_flight_cond:
            self._in_flight_cond.notify_all()  # a scheduling loop waiting for a binding slot

    def abandon(self) -> None:
        """Close the fence for good: no binding cycle proceeds to PreBind or Bind any more.

        A binding cycle reaching the fence is abandoned: its pod is unreserved, forgotten in
        the cache and handed back to the queue, and nothing is written for it (no binding, no
        status, no event). API calls already sent may still complete. What kube-scheduler does on losing its Lease:
        it exits at once, its binding goroutines with it.
        """
        self._abandoning = True
        with self._in_flight_cond:
            self._in_flight_cond.notify_all()

    def may_bind(self) -> bool:
        """Whether a binding cycle may go on (the fence is open and :meth:`abandon` was not
        called); a fence that raises answers ``False``."""
        if self._abandoning:
            return False
        fence = self._fence
        if fence is None:
            return True
        try:
            return bool(fence())
        except Exception:
            log.exception("the leadership fence failed; treating it as lost")
            return False

    def __enter__(self) -> Scheduler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- binding cycles ----------------------------------------------------------------------

    def in_flight(self) -> int:
        """Binding cycles started and not finished (pods waiting on Permit included), and
        tasks run off the scheduling cycle (asynchronous preemption) not finished."""
        with self._in_flight_cond:
            return self._in_flight

    def wait_for_bindings(self, timeout: float | None = None) -> bool:
        """Block until no binding cycle is in flight (real mode); ``False`` on timeout."""
        if self.deterministic:
            self._drain_tasks()
            return self.in_flight() == 0
        self._binders.flush()
        with self._in_flight_cond:
            return self._in_flight_cond.wait_for(lambda: self._in_flight == 0, timeout)

    def running_binding_cycles(self) -> int:
        """Binding cycles in flight that are not parked on a Permit wait."""
        with self._in_flight_cond:
            return self._running

    def start_binding_cycle(self, task: Callable[[], None]) -> None:
        """Start a binding cycle: a thread of its own in real mode, an ordered task otherwise.

        In real mode this waits while ``binding_workers`` binding cycles are running (not
        counting pods parked on Permit), so the scheduling loop never runs far ahead of the
        binds; it does not wait once the scheduler is stopping. Called from the loop of
        :meth:`run` or :meth:`run_until_idle` at the end of a scheduling cycle shorter than
        ``HOLD_S``, the binding cycle is held back and handed over with the next ones (up to
        ``HOLD_MAX``; see ``_binder``).
        """
        cond = self._in_flight_cond
        with cond:
            if not self.deterministic:
                while not (
                    self._running < self._binding_workers or self._halted or self._abandoning
                ):
                    if self._binders.held:
                        # Held cycles take slots: hand them over, or they never free one.
                        cond.release()
                        try:
                            self._binders.flush()
                        finally:
                            cond.acquire()
                        continue
                    cond.wait()
            self._in_flight += 1
            self._running += 1
        if (
            self.deterministic
            or self._holder != threading.get_ident()
            or time.monotonic() - self._cycle_began >= HOLD_S
        ):
            # Not the holding loop, or a cycle as long as a hold: the next may be too, and
            # would keep this binding waiting that long.
            self._submit(task)
        elif self._binders.hold(task) >= HOLD_MAX:
            self._binders.flush()

    def _run_async(self, task: Callable[[], None]) -> None:
        """Work a plugin runs off the scheduling cycle (asynchronous preemption): a task like a
        binding cycle's, counted in :meth:`in_flight` until it ends, so that
        :meth:`run_until_idle` and :meth:`wait_for_bindings` wait for it. It runs on a
        thread of its own, as a binding cycle does, without waiting for a slot (the caller is
        the scheduling cycle)."""
        with self._in_flight_cond:
            self._in_flight += 1
            self._running += 1

        def run() -> None:
            try:
                task()
            finally:
                self.binding_cycle_ended()

        self._submit(run)

    def binding_cycle_parked(self) -> None:
        """The binding cycle just started waits on Permit: it holds no thread and no slot
        until :meth:`continue_binding_cycle`."""
        with self._in_flight_cond:
            self._running -= 1
            self._in_flight_cond.notify_all()

    def continue_binding_cycle(self, task: Callable[[], None]) -> None:
        """Continue a binding cycle whose Permit wait resolved: queued like a new task, so a
        plugin allowing a pod from another pod's scheduling cycle (or a timer thread) never
        runs the bind itself. Never waits for a slot (the caller may be the scheduling loop)."""
        with self._in_flight_cond:
            self._running += 1
        self._submit(task)

    def binding_cycle_ended(self) -> None:
        """A binding cycle finished (bound, failed and handed to the failure handler, or
        abandoned)."""
        with self._in_flight_cond:
            self._in_flight -= 1
            self._running -= 1
            self._in_flight_cond.notify_all()

    def _submit(self, task: Callable[[], None]) -> None:
        if self.deterministic:
            self._tasks.append(task)
            return
        # Long-lived daemon threads (see _binder): a PreBind blocked on a slow volume holds up
        # no other binding for long, and a process that must exit at once (its Lease lost)
        # is never held up by a bind in flight.
        self._binders.submit(task)

    def _run_task(self, task: Callable[[], None]) -> None:
        try:
            task()
        except SHUTDOWN:
            if self.deterministic:
                raise  # the caller's thread: its stop request goes on up
            log.exception("binding task raised a shutdown exception; its pod was requeued")
        except BaseException:
            log.exception("binding task crashed")

    def _drain_tasks(self) -> None:
        while self._tasks:
            self._run_task(self._tasks.popleft())

    # -- services for the cycles -------------------------------------------------------------

    def assume(self, pod: Pod) -> None:
        """Upstream ``assume``: the cache holds the pod on its node; its nomination ends."""
        self.cache.assume_pod(pod)
        self.queue.delete_nominated_pod_if_exists(pod)

    def forget(self, pod: Pod) -> bool:
        """Forget an assumed pod; ``False`` (logged) when the cache refuses."""
        try:
            self.cache.forget_pod(pod)
        except Exception:
            log.exception("scheduler cache ForgetPod failed for %s", pod.key)
            return False
        return True

    def failure_handler(
        self,
        fwk: Framework,
        qpi: fw.QueuedPodInfo,
        status: fw.Status,
        nominating_info: fw.NominatingInfo | None,
        start: float,
    ) -> None:
        """Upstream ``FailureHandler`` (``handleSchedulingFailure``)."""
        handle_scheduling_failure(self, fwk, qpi, status, nominating_info, start)

    def record_result(self, result: ScheduleResult) -> None:
        """Keep ``result`` as the latest result of its pod."""
        assert result.pod is not None
        with self._results_lock:
            results = self.results
            uid = result.pod.uid
            if self._max_results is not None:
                results.pop(uid, None)  # re-inserted last: eviction drops the oldest first
                while len(results) >= self._max_results:
                    del results[next(iter(results))]
            results[uid] = result
            if result.outcome == "scheduled":
                self._bound += 1

    def notify(self, hook: str, **kwargs: Any) -> None:
        """Call observer hook ``hook`` by name; each observer on its own (see
        :attr:`observers`, whose typed methods the scheduler itself uses)."""
        self.observers.call(hook, **kwargs)

    def preemption_victims(
        self, preemptor_uid: str, state: fw.CycleState | None = None
    ) -> list[Pod]:
        """Victims preemption evicted for ``preemptor_uid`` since the last call; when none were
        evicted yet (async preemption evicts them after the cycle), the victims not already
        terminating of the candidate the Evaluator chose, as recorded in ``state``."""
        victims = self.event_recorder.take_victims(preemptor_uid)
        if victims or state is None:
            return victims
        from schedframe.preemption import CHOSEN_CANDIDATE_KEY

        chosen = state.get(CHOSEN_CANDIDATE_KEY)
        if chosen is None:
            return []
        return [v for v in chosen.victims.pods if v.deletion_timestamp is None]

    def _activate(self, pods: Iterable[Pod]) -> None:
        self.queue.activate(list(pods))

    # -- introspection -----------------------------------------------------------------------

    @property
    def events(self) -> list[Any]:
        """Every event recorded by the profiles, in order."""
        return self.event_recorder.events

    @property
    def attempts(self) -> int:
        """Scheduling cycles run so far."""
        return self._attempts

    def placements(self) -> dict[str, str]:
        """``namespace/name -> node`` of every pod this scheduler bound."""
        with self._results_lock:
            return {
                r.pod.key: r.suggested_host
                for r in self.results.values()
                if r.pod is not None and r.outcome == "scheduled"
            }

    def framework_for_pod(self, pod: Pod) -> Framework | None:
        """The profile that schedules ``pod``, or ``None`` when it names another scheduler."""
        return self.profiles.get(pod.spec.scheduler_name)

    def __repr__(self) -> str:
        mode = "deterministic" if self.deterministic else "real"
        return f"Scheduler(profiles={list(self.profiles)}, mode={mode})"
