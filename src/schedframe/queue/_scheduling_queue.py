"""The scheduling queue: activeQ, backoffQ, unschedulable pool, in-flight pods and nominator.

Upstream: ``pkg/scheduler/backend/queue/scheduling_queue.go`` (``PriorityQueue``) with queueing
hints and ``SchedulerPopFromBackoffQ`` enabled, as in kube-scheduler 1.33+; both can be turned
off (``queueing_hints=False``, ``pop_from_backoff_q=False``) as their gates can upstream.
Method docstrings name the upstream function each one ports.

Over 1,000 lines on purpose: upstream's ``PriorityQueue`` is one type whose methods all work
under one lock on the same three sub-queues and the nominator, and each method's requeueing
rules are read beside the others; the sub-queues themselves live in their own modules
(``_active``, ``_backoff``, ``_heap``, ``_nominator``).
"""

from __future__ import annotations

import enum
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar

import attrs

from schedframe.errors import SchedframeError
from schedframe.framework import (
    ActionType,
    ClusterEvent,
    Code,
    EventResource,
    NominatingInfo,
    NominatingMode,
    PodInfo,
    PreEnqueuePlugin,
    QueuedPodInfo,
    QueueingHint,
    QueueingHintFn,
    Status,
)
from schedframe.objects import Node, Pod
from schedframe.queue._active import ActiveQueue, InFlightEvent
from schedframe.queue._backoff import BackoffQueue, set_pod
from schedframe.queue._events import (
    BACKOFF_COMPLETE,
    EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_FORCE_ACTIVATE,
    EVENT_NODE_ADD,
    EVENT_NODE_DELETE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_UPDATE,
    FORCE_ACTIVATE,
    SCHEDULE_ATTEMPT_FAILURE,
    is_pod_updated,
    node_scheduling_properties_change,
    pod_scheduling_properties_change,
)
from schedframe.queue._nominator import Nominator

if TYPE_CHECKING:
    from schedframe.framework import Clock
    from schedframe.runtime import Framework

__all__ = [
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
    "QueueError",
    "QueueingHintMap",
    "QueueingStrategy",
    "SchedulingQueue",
    "build_queueing_hint_map",
]

log = logging.getLogger("schedframe.queue")

DEFAULT_POD_INITIAL_BACKOFF: Final = 1.0
DEFAULT_POD_MAX_BACKOFF: Final = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION: Final = 300.0

#: Upstream ``podtopologyspread.Name``: pods it rejected are candidates for assigned-pod events.
_POD_TOPOLOGY_SPREAD: Final = "PodTopologySpread"

_F = TypeVar("_F", bound=Callable[..., Any])


def _changes(method: _F) -> _F:
    """Marks a method that may change what the queue holds or nominates; it runs under the
    lock and reports each pod whose queued entry it adds, removes or re-points (with
    :meth:`SchedulingQueue._touch`; the funnels every requeue goes through do so). Moving an
    entry between the activeQ, the backoffQ and the pool keeps the entry, so it changes no
    pod's latest version. Nomination changes are reported by the nominator itself (which
    covers :meth:`SchedulingQueue.update` and :meth:`SchedulingQueue.delete`: each re-points
    or drops the pod's nomination along with its entry). After the method, the memo of the
    nominated pods' latest versions (:meth:`SchedulingQueue.nominated_pods_for_nodes`) loses
    the nodes those pods are nominated to. Every public method is either marked or listed in
    ``_READS``; a test holds the two to that."""

    @functools.wraps(method)
    def counted(self: SchedulingQueue, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            try:
                return method(self, *args, **kwargs)
            finally:
                if self._touched_pods:
                    self._forget_touched()

    counted.changes_queue = True  # type: ignore[attr-defined]
    return counted  # type: ignore[return-value]


#: The public methods that only read (everything else public is marked ``@_changes``).
_READS: Final = frozenset(
    {
        "active_pods",
        "backoff_pods",
        "backoff_time",  # caches the expiry on the entry, which no nominated read looks at
        "gated_pods",
        "get_queued_pod_info",
        "has_active",
        "in_flight_events",
        "in_flight_pods",
        "is_backing_off",
        "next_wakeup",
        "next_leftover_flush",
        "nominated_node_name",
        "nominated_generation",
        "nominated_generations",
        "nominated_node_names",
        "nominated_pods_for_node",
        "nominated_pods_for_nodes",
        "pending_pods",
        "pending_pods_summary",
        "unschedulable_pods",
    }
)

#: ``event -> [(plugin, hint)]`` for one profile; a ``None`` hint always answers Queue.
QueueingHintMap = dict[ClusterEvent, list[tuple[str, QueueingHintFn | None]]]


class QueueError(SchedframeError):
    """A requeue the queue refused (the pod is already queued)."""


class QueueingStrategy(enum.IntEnum):
    """Where an event sends a rejected pod (upstream ``queueingStrategy``)."""

    #: Stay in the unschedulable pool.
    QUEUE_SKIP = 0
    #: To the backoffQ, or the activeQ when the backoff is already over.
    QUEUE_AFTER_BACKOFF = 1
    #: Straight to the activeQ (a Pending plugin said Queue).
    QUEUE_IMMEDIATELY = 2


class _Q(enum.Enum):
    ACTIVE = "Active"
    BACKOFF = "Backoff"
    UNSCHEDULABLE = "Unschedulable"


def build_queueing_hint_map(fwk: Framework, queueing_hints: bool = True) -> QueueingHintMap:
    """The hints of one profile by registered event (upstream ``buildQueueingHintMap``).

    With ``queueing_hints`` false (upstream's ``SchedulerQueueingHints`` gate off) every hint
    is dropped: each registered event always answers Queue.

    A plugin that registers no events is left out: only its own pod updates (or the leftover
    flush) requeue the pods it rejects. A plugin that registers ``Node/Add`` but not
    ``Node/UpdateNodeTaint`` is also registered for the latter with an always-Queue hint
    (upstream's workaround for kubernetes#109437).
    """
    hint_map: QueueingHintMap = {}
    for plugin_name, registrations in fwk.enqueue_extensions:
        if not registrations:
            continue
        node_added = False
        node_taint_updated = False
        for registration in registrations:
            event = registration.event
            if event.resource is EventResource.NODE:
                node_added = node_added or bool(event.action_type & ActionType.ADD)
                node_taint_updated = node_taint_updated or bool(
                    event.action_type & ActionType.UPDATE_NODE_TAINT
                )
            hint_fn = registration.queueing_hint_fn if queueing_hints else None
            hint_map.setdefault(event, []).append((plugin_name, hint_fn))
        if node_added and not node_taint_updated:
            taint = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT)
            hint_map.setdefault(taint, []).append((plugin_name, None))
    return hint_map


def _run_pre_enqueue_plugin(plugin: PreEnqueuePlugin, pod: Pod) -> Status | None:
    """One PreEnqueue plugin, with ``Framework.run_pre_enqueue_plugins``' rules: ``None`` admits;
    a rejection gates; an exception or any other code gates as an ``Error`` naming the plugin."""
    name = plugin.name
    try:
        status = plugin.pre_enqueue(pod)
    except Exception as exc:
        return Status.from_error(exc, plugin=name)
    if status is None or status.is_success():
        return None
    if not status.is_rejected():
        return Status(Code.ERROR, *status.reasons, error=status.error, plugin=name)
    return status.with_plugin(name)


class SchedulingQueue:
    """Pods waiting to be scheduled (upstream ``PriorityQueue``).

    * **activeQ**: a heap ordered by the QueueSort plugin (shared by all profiles); ties go
      by insertion order. :meth:`pop` takes its head.
    * **backoffQ**: pods waiting out a backoff of ``initial * 2**(count-1)`` seconds, capped at
      the maximum, where ``count`` is the pod's unschedulable count (or its consecutive error
      count after an error). Errored pods wait in a separate heap. With
      ``pop_from_backoff_q`` (upstream ``SchedulerPopFromBackoffQ``, on by default) expiries are
      truncated to a 1 s ordering window and :meth:`pop` takes the backoffQ's head when the
      activeQ is empty.
    * **unschedulable pool**: pods rejected by plugins, waiting for a cluster event one of
      those plugins registered (and its queueing hint) to move them; also pods gated by a
      PreEnqueue plugin.
    * **in flight**: popped pods until :meth:`done`; events arriving meanwhile are recorded and
      replayed through the hints when the pod is requeued.

    Every method takes one lock, so scheduling, binding and event-handler threads may call
    in concurrently. Time comes from ``clock.now()``; only a blocking :meth:`pop` waits in real
    time.
    """

    def __init__(
        self,
        *,
        frameworks: Mapping[str, Framework],
        clock: Clock,
        pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        pod_max_in_unschedulable_pods_duration: float = (
            DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION
        ),
        pop_from_backoff_q: bool = True,
        queueing_hints: bool = True,
    ) -> None:
        if not frameworks:
            raise ValueError("SchedulingQueue needs at least one framework (profile)")
        self._frameworks: dict[str, Framework] = dict(frameworks)
        self._clock = clock
        first = next(iter(self._frameworks.values()))
        self._less = first.queue_sort_less()
        sort_key = first.queue_sort_key()  # None: the heaps call ``less``
        self._pop_from_backoff_q = pop_from_backoff_q
        self._queueing_hints = queueing_hints
        # Without hints: the scheduling cycle at the last move request (upstream
        # moveRequestCycle); a pod whose attempt started no later goes to the backoffQ.
        self._move_request_cycle = -1
        self._max_in_unschedulable = pod_max_in_unschedulable_pods_duration
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._closed = False
        self._active = ActiveQueue(self._less, sort_key)
        self._backoff = BackoffQueue(
            clock, pod_initial_backoff, pod_max_backoff, self._less, pop_from_backoff_q, sort_key
        )
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        #: Told ``(pod, queue, event)`` each time a pod enters ``active``, ``backoff``,
        #: ``unschedulable`` or ``gated`` (upstream's ``queue_incoming_pods_total`` points).
        self.on_incoming: Callable[[Pod, str, str], None] | None = None
        # node -> the latest versions of the pods nominated to it, as last read; an entry is
        # dropped when the node's nominations change (the nominator reports it) or when a
        # @_changes method touches one of its pods.
        self._nominated_memo: dict[str, list[PodInfo]] = {}
        # Bumped whenever a node's nominated pods (or their queued versions) change; each
        # node keeps the value of its own last change.
        self._nominated_generation = 0
        self._node_generations: dict[str, int] = {}
        # uids whose queued entry the running @_changes method touched.
        self._touched_pods: list[str] = []
        self._nominator = Nominator(on_node_change=self._forget_node)
        self._interest: dict[ClusterEvent, bool] = {}
        self._matching: dict[tuple[str, ClusterEvent], list[tuple[str, QueueingHintFn | None]]] = {}
        self._hint_maps: dict[str, QueueingHintMap] = {
            name: build_queueing_hint_map(fwk, queueing_hints)
            for name, fwk in self._frameworks.items()
        }
        # plugin -> the events it registered, in any profile (upstream buildEventMap).
        self._plugin_events: dict[str, list[ClusterEvent]] = {}
        # (gating plugin, event) -> whether the plugin registered the event, kept per pair: a
        # binding is an event weighed against every gated pod.
        self._gate_interest: dict[tuple[str, ClusterEvent], bool] = {}
        for hint_map in self._hint_maps.values():
            for event, hints in hint_map.items():
                for plugin_name, _ in hints:
                    self._plugin_events.setdefault(plugin_name, []).append(event)

    @_changes
    def copy_state(self, other: SchedulingQueue) -> None:
        """Make this (new, empty) queue hold what ``other`` holds: a fork's starting point.

        Every pending pod keeps its place and history: the activeQ and backoffQ heaps in the
        same layout, backoff expiries, the unschedulable pool in its order with each pod's
        timestamps, attempts and rejecting plugins, gated pods, in-flight pods and events,
        nominations and the scheduling cycle. Entries are copies, so neither queue sees the
        other's later changes. Both queues must be built from the same configuration.
        """
        with other._lock:
            copies: dict[int, QueuedPodInfo] = {}

            def convert(qpi: QueuedPodInfo) -> QueuedPodInfo:
                copy = copies.get(id(qpi))
                if copy is None:
                    copy = copies[id(qpi)] = attrs.evolve(
                        qpi,
                        unschedulable_plugins=set(qpi.unschedulable_plugins),
                        pending_plugins=set(qpi.pending_plugins),
                    )
                return copy

            self._active.copy_state(other._active, convert)
            self._backoff.copy_state(other._backoff, convert)
            self._unschedulable = {uid: convert(q) for uid, q in other._unschedulable.items()}
            self._nominator.copy_state(other._nominator)
            self._move_request_cycle = other._move_request_cycle
            self._nominated_generation = other._nominated_generation
            self._node_generations = dict(other._node_generations)
            self._nominated_memo = {}

    # ------------------------------------------------------------------------------------------
    # Properties
    # ------------------------------------------------------------------------------------------

    @property
    def scheduling_cycle(self) -> int:
        """How many pods were popped so far (upstream ``SchedulingCycle``)."""
        with self._lock:
            return self._active.scheduling_cycle

    @property
    def queueing_hints(self) -> bool:
        """Whether the plugins' queueing hints are used (upstream ``SchedulerQueueingHints``).

        Off, every registered event answers Queue, no in-flight events are recorded, a failed
        pod goes to the backoffQ only if a move request came during its attempt (else to the
        pool), and an update of a pooled pod requeues it whenever ``is_pod_updated`` says so.
        """
        return self._queueing_hints

    @property
    def pod_initial_backoff(self) -> float:
        """The backoff after the first failure, in seconds."""
        return self._backoff.initial_backoff

    @property
    def pod_max_backoff(self) -> float:
        """The longest backoff, in seconds."""
        return self._backoff.max_backoff

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        with self._lock:
            return self._closed

    # ------------------------------------------------------------------------------------------
    # Adding, updating, deleting pods
    # ------------------------------------------------------------------------------------------

    @_changes
    def add(self, pod: Pod) -> None:
        """A new unscheduled pod (upstream ``Add``): to the activeQ, or the pool if gated."""
        with self._lock:
            qpi = self._new_queued_pod_info(pod)
            if self._move_to_active_q(qpi, EVENT_UNSCHEDULED_POD_ADD.label(), False):
                self._cond.notify_all()

    @_changes
    def update(self, old: Pod | None, new: Pod) -> None:
        """An unscheduled pod changed (upstream ``Update``).

        An in-flight pod only gets the update recorded, to be replayed if it is requeued.
        A pod in the activeQ or backoffQ is updated where it is, keeping its position. A pod
        in the unschedulable pool is run through the hints of the ``UnschedulablePod/UpdateXYZ``
        events the change amounts to (:func:`pod_scheduling_properties_change`); an update
        that changes only the status or resource version (``is_pod_updated`` false) leaves it
        where it is. A pod the queue does not know goes to the activeQ.
        """
        with self._lock:
            if not self._queueing_hints or (old is not None and not is_pod_updated(old, new)):
                events: list[ClusterEvent] = []
            else:
                base = old if old is not None else new
                events = pod_scheduling_properties_change(new, base)

            if self._queueing_hints and self._active.add_events_if_pod_in_flight(old, new, events):
                return

            if old is not None:
                qpi = self._active.heap.get(old.uid)
                if qpi is not None:
                    set_pod(qpi, new)
                    self._active.heap.add_or_update(qpi)
                    self._nominator.update(old, qpi.pod_info)
                    return
                qpi = self._backoff.update(new, old.uid)
                if qpi is not None:
                    self._nominator.update(old, qpi.pod_info)
                    return

            qpi = self._unschedulable.get(new.uid)
            if qpi is not None:
                set_pod(qpi, new)
                self._nominator.update(old if old is not None else new, qpi.pod_info)
                if not self._queueing_hints:
                    self._update_pooled_without_hints(qpi, old, new)
                    return
                for event in events:
                    hint = self._is_pod_worth_requeuing(qpi, event, old, new)
                    queue = self._requeue_with_strategy(qpi, hint, event.label())
                    if queue is _Q.ACTIVE or (self._pop_from_backoff_q and queue is _Q.BACKOFF):
                        self._cond.notify_all()
                        break
                return

            qpi = self._new_queued_pod_info(new)
            if self._move_to_active_q(qpi, EVENT_UNSCHEDULED_POD_UPDATE.label(), False):
                self._cond.notify_all()

    def _update_pooled_without_hints(self, qpi: QueuedPodInfo, old: Pod | None, new: Pod) -> None:
        """The pool's pod was updated, hints off (upstream ``Update`` without queueing hints):
        any change beyond the status sends it to the backoffQ (activeQ once its backoff is
        over); otherwise it stays."""
        if old is not None and not is_pod_updated(old, new):
            return
        label = EVENT_UNSCHEDULED_POD_UPDATE.label()
        if self._backoff.is_backing_off(qpi):
            if self._move_to_backoff_q(qpi, label) and self._pop_from_backoff_q:
                self._cond.notify_all()
            return
        if self._move_to_active_q(qpi, label, False):
            self._cond.notify_all()

    @_changes
    def delete(self, pod: Pod) -> None:
        """The pod is gone: drop it from whichever queue holds it, and its nomination.

        In-flight pods are left to the scheduler, which calls :meth:`done` (upstream
        ``Delete``).
        """
        with self._lock:
            self._nominator.delete(pod)
            uid = pod.uid
            if self._active.heap.delete(uid) is not None:
                return
            if self._backoff.delete(uid) is not None:
                return
            self._unschedulable.pop(uid, None)

    @_changes
    def activate(self, pods: Iterable[Pod]) -> None:
        """Move the pods from the pool or the backoffQ to the activeQ (upstream ``Activate``).

        PreEnqueue runs again for pods coming from the pool. A pod that is in flight instead
        gets a ``ForceActivate`` event recorded, so that if it fails it is requeued (after its
        backoff) rather than parked in the pool; other pods are ignored.
        """
        with self._lock:
            activated = False
            for pod in pods:
                if self._activate_one(pod):
                    activated = True
                    continue
                self._active.add_events_if_pod_in_flight(None, pod, (EVENT_FORCE_ACTIVATE,))
                self._move_request_cycle = self._active.scheduling_cycle
            if activated:
                self._cond.notify_all()

    def _activate_one(self, pod: Pod) -> bool:
        qpi = self._unschedulable.get(pod.uid)
        moves_from_backoff = False
        if qpi is None:
            qpi = self._backoff.delete(pod.uid)
            if qpi is None:
                return False
            moves_from_backoff = True
        return self._move_to_active_q(qpi, FORCE_ACTIVATE, moves_from_backoff)

    # ------------------------------------------------------------------------------------------
    # The scheduling cycle: pop, done, requeue
    # ------------------------------------------------------------------------------------------

    @_changes
    def pop(self, block: bool = False, timeout: float | None = None) -> QueuedPodInfo | None:
        """Take the next pod to schedule and mark it in flight (upstream ``Pop``).

        The activeQ's head, or, when it is empty and ``pop_from_backoff_q`` is on, the head of
        the backoffQ (not of the error heap), whether its backoff is over or not. Increments
        the scheduling cycle and the pod's ``attempts``, and empties its
        ``unschedulable_plugins`` and ``pending_plugins`` for the new attempt.

        Args:
            block: wait (in real time) until a pod arrives or the queue is closed.
            timeout: with ``block``, give up after this many seconds.

        Returns:
            The pod, or ``None`` when nothing is poppable (after waiting, if asked to) or the
            queue is closed and empty.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                while len(self._active.heap) == 0:
                    if self._pop_from_backoff_q and self._backoff.len_backoff() != 0:
                        break
                    if self._closed or not block:
                        return None
                    if deadline is None:
                        self._cond.wait()
                    else:
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            return None
                        self._cond.wait(remaining)
                qpi = self._active.heap.pop()
                if qpi is None:
                    qpi = self._backoff.pop_backoff()
                    assert qpi is not None
                self._touch(qpi.pod.uid)  # out of the queue: its nomination's version counts
                if self._active.move_to_in_flight(qpi, track=self._queueing_hints):
                    # A new attempt: who rejected the last one no longer matters (upstream's
                    # activeQ pop resets both sets), so an attempt ending in an error is not
                    # taken for a rejection by the previous attempt's plugins.
                    qpi.unschedulable_plugins.clear()
                    qpi.pending_plugins.clear()
                    return qpi
                # The same pod got queued while in flight (a bug upstream guards against too):
                # discard this copy and pop the next one.
                log.error("discarding popped pod %s: it is already in flight", qpi.pod.key)

    @_changes
    def done(self, uid: str) -> None:
        """The pod popped earlier left its scheduling cycle (upstream ``Done``; nothing to do
        without hints, where no pod is tracked in flight)."""
        with self._lock:
            self._active.done(uid)

    @_changes
    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, scheduling_cycle: int) -> None:
        """Requeue a pod whose attempt failed, then :meth:`done` it (upstream
        ``AddUnschedulableIfNotPresent``).

        ``qpi.unschedulable_plugins`` / ``pending_plugins`` say who rejected it; with neither,
        the attempt ended in an error. The unschedulable count (or the consecutive error
        count) goes up, the timestamp is refreshed, and the events recorded while the pod was
        in flight are replayed through the hints: nothing relevant -> unschedulable pool;
        Queue from an Unschedulable plugin -> backoffQ (activeQ if the backoff is already
        over); Queue from a Pending plugin -> activeQ. An errored pod always goes through the
        (error) backoff.

        Raises:
            QueueError: the pod is already in the pool, the activeQ or the backoffQ.
        """
        with self._lock:
            try:
                self._add_unschedulable(qpi, scheduling_cycle)
            finally:
                self._active.done(qpi.pod.uid)

    def _add_unschedulable(self, qpi: QueuedPodInfo, scheduling_cycle: int) -> None:
        pod = qpi.pod
        uid = pod.uid
        if uid in self._unschedulable:
            raise QueueError(f"Pod {pod.key} is already present in unschedulable queue")
        if uid in self._active.heap:
            raise QueueError(f"Pod {pod.key} is already present in the active queue")
        if uid in self._backoff:
            raise QueueError(f"Pod {pod.key} is already present in the backoff queue")
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            qpi.consecutive_errors_count += 1
        else:
            qpi.unschedulable_count += 1
            qpi.consecutive_errors_count = 0
        qpi.timestamp = self._clock.now()
        qpi.backoff_expiration = None

        if not self._queueing_hints:
            self._add_unschedulable_without_hints(qpi, scheduling_cycle)
            return
        hint = self._determine_hint_for_in_flight_pod(qpi)
        queue = self._requeue_with_strategy(qpi, hint, SCHEDULE_ATTEMPT_FAILURE)
        log.debug(
            "pod %s requeued to %s after a failed attempt (hint %s, rejected by %s)",
            pod.key,
            queue.value,
            hint.name,
            sorted(qpi.unschedulable_plugins | qpi.pending_plugins),
        )
        if queue is _Q.ACTIVE or (self._pop_from_backoff_q and queue is _Q.BACKOFF):
            self._cond.notify_all()

    def _add_unschedulable_without_hints(self, qpi: QueuedPodInfo, scheduling_cycle: int) -> None:
        """Upstream ``addUnschedulableWithoutQueueingHint``: to the backoffQ when a move request
        came at or after ``scheduling_cycle`` or no plugin rejected the pod, else to the pool."""
        if self._move_request_cycle >= scheduling_cycle or (
            not qpi.unschedulable_plugins and not qpi.pending_plugins
        ):
            if self._move_to_backoff_q(qpi, SCHEDULE_ATTEMPT_FAILURE) and self._pop_from_backoff_q:
                self._cond.notify_all()
            return
        self._touch(qpi.pod.uid)
        self._unschedulable[qpi.pod.uid] = qpi
        self._incoming(qpi, "unschedulable", SCHEDULE_ATTEMPT_FAILURE)

    def _determine_hint_for_in_flight_pod(self, qpi: QueuedPodInfo) -> QueueingStrategy:
        """Replay the in-flight events (upstream ``determineSchedulingHintForInFlightPod``)."""
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            # An error, not a rejection: retry after the (error) backoff.
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        events = self._active.cluster_events_for_pod(qpi.pod.uid)
        if events is None:
            log.error("in-flight pod %s not found in the scheduling queue", qpi.pod.key)
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        strategy = QueueingStrategy.QUEUE_SKIP
        for recorded in events:
            hint = self._is_pod_worth_requeuing(
                qpi, recorded.event, recorded.old_obj, recorded.new_obj
            )
            if hint is QueueingStrategy.QUEUE_IMMEDIATELY:
                return hint
            if hint is QueueingStrategy.QUEUE_AFTER_BACKOFF:
                strategy = hint
                if not qpi.pending_plugins:
                    return strategy
        return strategy

    # ------------------------------------------------------------------------------------------
    # Cluster events
    # ------------------------------------------------------------------------------------------

    @_changes
    def move_all_to_active_or_backoff_queue(
        self,
        event: ClusterEvent,
        old_obj: object = None,
        new_obj: object = None,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> None:
        """Requeue the pool's pods this event may help (upstream
        ``MoveAllToActiveOrBackoffQueue``).

        Nothing happens for an event no plugin registered. Otherwise every pool pod passing
        ``pre_check`` is run through the hints of the plugins that rejected it (a wildcard
        event moves them all), and the event is recorded for in-flight pods.
        """
        with self._lock:
            self._move_all(event, old_obj, new_obj, pre_check)

    def _move_all(
        self,
        event: ClusterEvent,
        old_obj: object,
        new_obj: object,
        pre_check: Callable[[Pod], bool] | None,
    ) -> None:
        if not self._is_event_of_interest(event):
            return
        candidates = [
            qpi for qpi in self._unschedulable.values() if pre_check is None or pre_check(qpi.pod)
        ]
        self._move_pods(candidates, event, old_obj, new_obj)

    @_changes
    def assigned_pod_added(self, pod: Pod) -> None:
        """A bound pod appeared (upstream ``AssignedPodAdded``).

        Only pool pods with a cross-topology reason to care are considered: those rejected by
        PodTopologySpread in the pod's namespace, and those with a required pod-affinity term
        the pod matches.
        """
        with self._lock:
            candidates = self._unschedulable_pods_with_cross_topology_term(pod)
            self._move_pods(candidates, EVENT_ASSIGNED_POD_ADD, None, pod)

    @_changes
    def assigned_pod_updated(
        self, old: Pod | None, new: Pod, action: ActionType | ClusterEvent
    ) -> None:
        """A bound pod changed (upstream ``AssignedPodUpdated``).

        ``action`` is one of the ``UpdatePodXYZ`` actions from
        :func:`pod_scheduling_properties_change` (or the whole event). A scale-down may help
        any pool pod; other changes only the cross-topology ones.
        """
        event = (
            action
            if isinstance(action, ClusterEvent)
            else ClusterEvent(EventResource.ASSIGNED_POD, action)
        )
        with self._lock:
            scale_down = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN)
            if scale_down.matches(event):
                self._move_all(event, old, new, None)
            else:
                candidates = self._unschedulable_pods_with_cross_topology_term(new)
                self._move_pods(candidates, event, old, new)

    @_changes
    def assigned_pod_deleted(self, pod: Pod) -> None:
        """A bound pod went away: ``AssignedPod/Delete`` for every pool pod (upstream
        ``deletePodFromCache``)."""
        self.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, pod, None)

    @_changes
    def node_added(self, node: Node) -> None:
        """``Node/Add`` (upstream ``addNodeToCache``; no pre-check, as with hints enabled)."""
        self.move_all_to_active_or_backoff_queue(EVENT_NODE_ADD, None, node)

    @_changes
    def node_updated(self, old: Node, new: Node) -> None:
        """One ``Node/UpdateNodeXYZ`` per change (upstream ``updateNodeInCache``)."""
        for event in node_scheduling_properties_change(new, old):
            self.move_all_to_active_or_backoff_queue(event, old, new)

    @_changes
    def node_deleted(self, node: Node) -> None:
        """``Node/Delete`` (upstream ``deleteNodeFromCache``)."""
        self.move_all_to_active_or_backoff_queue(EVENT_NODE_DELETE, node, None)

    def _unschedulable_pods_with_cross_topology_term(self, pod: Pod) -> list[QueuedPodInfo]:
        """Upstream ``getUnschedulablePodsWithCrossTopologyTerm``."""
        ns_labels = self._namespace_labels(pod.namespace)
        result: list[QueuedPodInfo] = []
        for qpi in self._unschedulable.values():
            if (
                _POD_TOPOLOGY_SPREAD in qpi.unschedulable_plugins
                and pod.namespace == qpi.pod.namespace
            ):
                result.append(qpi)
                continue
            for term in qpi.pod_info.required_affinity_terms:
                if term.matches(pod, ns_labels):
                    result.append(qpi)
                    break
        return result

    def _namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        fwk = next(iter(self._frameworks.values()))
        ns = fwk.namespace(namespace)
        return None if ns is None else ns.labels

    def _move_pods(
        self,
        candidates: list[QueuedPodInfo],
        event: ClusterEvent,
        old_obj: object,
        new_obj: object,
    ) -> None:
        """Upstream ``movePodsToActiveOrBackoffQueue``."""
        if not self._is_event_of_interest(event):
            return
        activated = False
        cares_by_plugin: dict[str, bool] = {}  # this event's, by gating plugin
        for qpi in candidates:
            if qpi.gating_plugin:
                cares = cares_by_plugin.get(qpi.gating_plugin)
                if cares is None:
                    cares = cares_by_plugin[qpi.gating_plugin] = self._gate_cares(
                        qpi.gating_plugin, event
                    )
                if not cares:
                    # The gating plugin does not care about this event: it cannot ungate the
                    # pod.
                    continue
            hint = self._is_pod_worth_requeuing(qpi, event, old_obj, new_obj)
            if hint is QueueingStrategy.QUEUE_SKIP:
                continue
            self._unschedulable.pop(qpi.pod.uid, None)
            queue = self._requeue_with_strategy(qpi, hint, event.label())
            if queue is _Q.ACTIVE or (self._pop_from_backoff_q and queue is _Q.BACKOFF):
                activated = True
        self._move_request_cycle = self._active.scheduling_cycle
        if self._queueing_hints:
            self._active.add_event_if_any_in_flight(old_obj, new_obj, event)
        if activated:
            self._cond.notify_all()

    def _gate_cares(self, plugin: str, event: ClusterEvent) -> bool:
        """Whether gating plugin ``plugin`` registered ``event`` (kept per pair)."""
        key = (plugin, event)
        cares = self._gate_interest.get(key)
        if cares is None:
            cares = self._gate_interest[key] = any(
                registered.matches(event) for registered in self._plugin_events.get(plugin, ())
            )
        return cares

    def _is_event_of_interest(self, event: ClusterEvent) -> bool:
        """Upstream ``isEventOfInterest``: wildcard, or some plugin registered a match.

        The registrations are fixed when the queue is built, so the answer is kept per event
        (every bound pod sends one, and there are dozens of registrations to match)."""
        known = self._interest.get(event)
        if known is not None:
            return known
        known = event.is_wildcard() or any(
            registered.matches(event)
            for hint_map in self._hint_maps.values()
            for registered in hint_map
        )
        self._interest[event] = known
        return known

    def _is_pod_worth_requeuing(
        self, qpi: QueuedPodInfo, event: ClusterEvent, old_obj: object, new_obj: object
    ) -> QueueingStrategy:
        """Ask the hints of the plugins that rejected the pod (upstream
        ``isPodWorthRequeuing``).

        Queue from a Pending plugin means queue immediately; Queue from an Unschedulable plugin
        means queue after backoff; all QueueSkip (or no matching hint) means stay. A hint that
        raises counts as Queue. A pod no plugin rejected, and a wildcard event, always queue
        after backoff (a wildcard carrying a pod in ``new_obj`` is for that pod only).
        """
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        if not rejectors:
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        if event.is_wildcard():
            if new_obj is not None and (not isinstance(new_obj, Pod) or new_obj.uid != qpi.pod.uid):
                return QueueingStrategy.QUEUE_SKIP
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        pod = qpi.pod
        hint_map = self._hint_maps.get(pod.scheduler_name)
        if hint_map is None:
            log.error("no queueing hints for profile %r (pod %s)", pod.scheduler_name, pod.key)
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        # The hints registered for events matching this one, in the map's order: fixed once
        # the queue is built, so kept per profile and event (a bound pod sends an event that
        # every pod of the pool is run through).
        key = (pod.scheduler_name, event)
        matching = self._matching.get(key)
        if matching is None:
            matching = self._matching[key] = [
                pair
                for registered, hints in hint_map.items()
                if registered.matches(event)
                for pair in hints
            ]
        strategy = QueueingStrategy.QUEUE_SKIP
        for plugin_name, hint_fn in matching:
            if plugin_name not in rejectors:
                continue
            hint = QueueingHint.QUEUE
            if hint_fn is not None:
                try:
                    hint = hint_fn(pod, old_obj, new_obj)
                except Exception:
                    # Queue, so the pod is not stranded in the pool by a broken hint.
                    log.exception(
                        "QueueingHintFn of %s failed for event %s, pod %s",
                        plugin_name,
                        event.label(),
                        pod.key,
                    )
                    hint = QueueingHint.QUEUE
            if hint == QueueingHint.QUEUE_SKIP:
                continue
            if plugin_name in qpi.pending_plugins:
                return QueueingStrategy.QUEUE_IMMEDIATELY
            if not qpi.pending_plugins:
                return QueueingStrategy.QUEUE_AFTER_BACKOFF
            strategy = QueueingStrategy.QUEUE_AFTER_BACKOFF
        return strategy

    # ------------------------------------------------------------------------------------------
    # Periodic flushes
    # ------------------------------------------------------------------------------------------

    @_changes
    def flush_backoff_q_completed(self) -> None:
        """Move every pod whose backoff is over to the activeQ (upstream
        ``flushBackoffQCompleted``; the scheduler calls it every second)."""
        with self._lock:
            activated = False
            for qpi in self._backoff.pop_all_backoff_completed():
                if self._move_to_active_q(qpi, BACKOFF_COMPLETE, True):
                    activated = True
            if activated:
                self._cond.notify_all()

    @_changes
    def flush_unschedulable_pods_leftover(self) -> None:
        """Requeue pool pods older than the maximum duration with the ``UnschedulableTimeout``
        event (upstream ``flushUnschedulablePodsLeftover``; every 30 s)."""
        with self._lock:
            now = self._clock.now()
            leftovers = [
                qpi
                for qpi in self._unschedulable.values()
                if now - qpi.timestamp > self._max_in_unschedulable
            ]
            if leftovers:
                self._move_pods(leftovers, EVENT_UNSCHEDULABLE_TIMEOUT, None, None)

    # ------------------------------------------------------------------------------------------
    # Moving pods between the queues
    # ------------------------------------------------------------------------------------------

    def _new_queued_pod_info(self, pod: Pod) -> QueuedPodInfo:
        return QueuedPodInfo(pod_info=PodInfo(pod), timestamp=self._clock.now())

    def _run_pre_enqueue_plugins(self, qpi: QueuedPodInfo) -> None:
        """Upstream ``runPreEnqueuePlugins``: the gating plugin first, then the others.

        Sets ``gating_plugin`` to the first plugin that does not admit the pod (and adds it to
        ``unschedulable_plugins``), or clears it. A pod not gated yet goes through
        ``Framework.run_pre_enqueue_plugins``; a gated one re-checks its gating plugin first
        and, once that admits it, each other plugin in order.
        """
        pod = qpi.pod
        fwk = self._frameworks.get(pod.scheduler_name)
        if fwk is None or not fwk.pre_enqueue_plugins:
            qpi.gating_plugin = ""
            return
        status: Status | None
        gating = qpi.gating_plugin
        plugins = fwk.pre_enqueue_plugins
        if gating and any(p.name == gating for p in plugins):
            ordered = [p for p in plugins if p.name == gating][:1]
            ordered += [p for p in plugins if p.name != gating]
            status = None
            for plugin in ordered:
                status = _run_pre_enqueue_plugin(plugin, pod)
                if status is not None:
                    break
        else:
            status = fwk.run_pre_enqueue_plugins(pod)
        if status is None or status.is_success():
            qpi.gating_plugin = ""
            return
        qpi.unschedulable_plugins.add(status.plugin)
        qpi.gating_plugin = status.plugin
        if status.code is Code.ERROR:
            log.error(
                "PreEnqueue plugin %s failed for pod %s: %s",
                status.plugin,
                pod.key,
                status.message(),
            )

    def _move_to_active_q(self, qpi: QueuedPodInfo, event: str, moves_from_backoff: bool) -> bool:
        """Upstream ``moveToActiveQ``: PreEnqueue (skipped for pods leaving the backoffQ when
        popping from it is on, since they passed it on entry), then the activeQ or, if gated,
        the pool. Returns whether the pod entered the activeQ."""
        uid = qpi.pod.uid
        self._touch(uid)
        if not (self._pop_from_backoff_q and moves_from_backoff):
            self._run_pre_enqueue_plugins(qpi)
        if qpi.gated:
            if uid in self._active.heap or uid in self._backoff or uid in self._unschedulable:
                return False
            self._unschedulable[uid] = qpi
            self._incoming(qpi, "gated", event)
            log.debug("pod %s is gated by %s (%s)", qpi.pod.key, qpi.gating_plugin, event)
            return False
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock.now()
        self._unschedulable.pop(uid, None)
        self._backoff.delete(uid)
        self._active.heap.add_or_update(qpi)
        self._incoming(qpi, "active", event)
        if event in (EVENT_UNSCHEDULED_POD_ADD.label(), EVENT_UNSCHEDULED_POD_UPDATE.label()):
            self._nominator.add(qpi.pod_info, None)
        return True

    def _move_to_backoff_q(self, qpi: QueuedPodInfo, event: str) -> bool:
        """Upstream ``moveToBackoffQ``: with popping from the backoffQ on, PreEnqueue runs here
        (a gated pod goes to the pool instead). Returns whether it entered the backoffQ."""
        self._touch(qpi.pod.uid)
        if self._pop_from_backoff_q:
            self._run_pre_enqueue_plugins(qpi)
            if qpi.gated:
                self._unschedulable.setdefault(qpi.pod.uid, qpi)
                self._incoming(qpi, "gated", event)
                return False
        self._unschedulable.pop(qpi.pod.uid, None)
        self._backoff.add(qpi)
        self._incoming(qpi, "backoff", event)
        return True

    def _incoming(self, qpi: QueuedPodInfo, queue: str, event: str) -> None:
        if self.on_incoming is not None:
            try:
                self.on_incoming(qpi.pod, queue, event)
            except Exception:
                log.exception("queue incoming-pod callback failed")

    def _requeue_with_strategy(
        self, qpi: QueuedPodInfo, strategy: QueueingStrategy, event: str
    ) -> _Q:
        """Upstream ``requeuePodWithQueueingStrategy``: returns where the pod went."""
        self._touch(qpi.pod.uid)
        if strategy is QueueingStrategy.QUEUE_SKIP:
            self._unschedulable[qpi.pod.uid] = qpi
            self._incoming(qpi, "unschedulable", event)
            return _Q.UNSCHEDULABLE
        if strategy is QueueingStrategy.QUEUE_AFTER_BACKOFF and self._backoff.is_backing_off(qpi):
            return _Q.BACKOFF if self._move_to_backoff_q(qpi, event) else _Q.UNSCHEDULABLE
        if self._move_to_active_q(qpi, event, False):
            return _Q.ACTIVE
        return _Q.UNSCHEDULABLE

    # ------------------------------------------------------------------------------------------
    # Nominator (framework.Nominator)
    # ------------------------------------------------------------------------------------------

    @_changes
    def add_nominated_pod(
        self, pod_info: PodInfo, node_name: str | NominatingInfo | None = None
    ) -> None:
        """Nominate the pod (upstream ``AddNominatedPod``).

        ``node_name`` (a string, or an Override NominatingInfo) names the node; ``None`` or a
        Noop NominatingInfo takes ``status.nominatedNodeName``. Empty clears the nomination.
        """
        if isinstance(node_name, str):
            info: NominatingInfo | None = NominatingInfo(node_name, NominatingMode.OVERRIDE)
        else:
            info = node_name
        with self._lock:
            self._nominator.add(pod_info, info)

    @_changes
    def update_nominated_pod(self, old: Pod, new_pod_info: PodInfo) -> None:
        """Point the nomination at the pod's new version (upstream ``UpdateNominatedPod``)."""
        with self._lock:
            self._nominator.update(old, new_pod_info)

    @_changes
    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        """Drop the pod's nomination (upstream ``DeleteNominatedPodIfExists``)."""
        with self._lock:
            self._nominator.delete(pod)

    def nominated_node_names(self) -> frozenset[str]:
        """Nodes with at least one nominated pod (the scheduling cycle reads it once per pod)."""
        with self._lock:
            return self._nominator.node_names()

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """Pods nominated to the node, each in the queue's latest version (upstream
        ``NominatedPodsForNode``)."""
        with self._lock:
            infos = self._nominator.pods_on(node_name)
            return [*map(self._latest_version(), infos)] if infos else []

    def nominated_generation(self) -> int:
        """A number that changes whenever the pods nominated to any node, or the queued
        version of one of them, change: what is derived from the nominated pods holds while
        it stays the same."""
        with self._lock:
            return self._nominated_generation

    def nominated_generations(self, node_names: Iterable[str]) -> dict[str, int]:
        """Per node, the :meth:`nominated_generation` of the last change of the pods
        nominated to it (0 if none yet): what is derived from one node's nominated pods holds
        while its number stays the same."""
        with self._lock:
            get = self._node_generations.get
            return {name: get(name, 0) for name in node_names}

    def nominated_pods_for_nodes(self, node_names: Iterable[str]) -> dict[str, list[PodInfo]]:
        """:meth:`nominated_pods_for_node` of each node, under one lock (nodes without
        nominated pods are left out).

        Each node's list is kept, and returned again (the same object), until that node's
        nominations or the queued version of one of its pods change, so successive
        scheduling cycles read only the nodes that changed; the lists are shared, not to be
        modified.
        """
        with self._lock:
            memo = self._nominated_memo
            result: dict[str, list[PodInfo]] = {}
            pods_on = self._nominator.pods_on
            latest: Callable[[PodInfo], PodInfo] | None = None
            for name in node_names:
                infos = memo.get(name)
                if infos is None:
                    found = pods_on(name)
                    if not found:
                        continue
                    if latest is None:
                        latest = self._latest_version()
                    # One pod a node is the usual case: no inner loop for it.
                    infos = [latest(found[0])] if len(found) == 1 else [*map(latest, found)]
                    memo[name] = infos
                result[name] = infos
            return result

    def _touch(self, uid: str) -> None:
        """The queued entry of pod ``uid`` is added, removed or re-pointed by the running
        ``@_changes`` method: the memo of the node it is nominated to goes after it."""
        self._touched_pods.append(uid)

    def _forget_touched(self) -> None:
        node_of = self._nominator.node_of
        memo = self._nominated_memo
        for uid in self._touched_pods:
            node_name = node_of(uid)
            if node_name is not None:
                memo.pop(node_name, None)
                self._nominated_changed(node_name)
        self._touched_pods.clear()

    def _nominated_changed(self, node_name: str) -> None:
        self._nominated_generation += 1
        self._node_generations[node_name] = self._nominated_generation

    def _forget_node(self, node_name: str) -> None:
        """The nominator's report: the pods nominated to ``node_name`` changed."""
        self._nominated_memo.pop(node_name, None)
        self._nominated_changed(node_name)

    def _latest_version(self) -> Callable[[PodInfo], PodInfo]:
        # Each pod as the queue holds it now (activeQ, unschedulable pool or backoffQ), or as
        # it was nominated when the queue does not hold it (in flight). The lookups are bound
        # once: this runs for every nominated pod of every node a cycle looks at. A pod is in
        # one place at most, so the order of the lookups is free: the pool first, where
        # nominated pods mostly wait for their victims to go.
        active = self._active.heap.entry_getter()
        unschedulable = self._unschedulable.get
        backoff, errored = self._backoff.entry_getters()

        def latest(info: PodInfo) -> PodInfo:
            uid = info.pod.uid
            pooled = unschedulable(uid)
            if pooled is not None:
                return pooled.pod_info
            entry = backoff(uid) or active(uid) or errored(uid)
            return entry.item.pod_info if entry is not None else info

        return latest

    def nominated_node_name(self, pod: Pod) -> str | None:
        """Where the pod is nominated, if anywhere."""
        with self._lock:
            return self._nominator.node_of(pod.uid)

    # ------------------------------------------------------------------------------------------
    # Introspection
    # ------------------------------------------------------------------------------------------

    def active_pods(self) -> list[Pod]:
        """The activeQ, in pop order."""
        with self._lock:
            return [qpi.pod for qpi in self._active.heap.ordered()]

    def backoff_pods(self) -> list[Pod]:
        """The backoffQ (rejected pods, then errored pods), each part in expiry order."""
        with self._lock:
            return [qpi.pod for qpi in self._backoff.ordered()]

    def unschedulable_pods(self) -> list[Pod]:
        """The whole unschedulable pool, gated pods included (upstream ``UnschedulablePods``)."""
        with self._lock:
            return [qpi.pod for qpi in self._unschedulable.values()]

    def gated_pods(self) -> list[Pod]:
        """The pool's pods held back by a PreEnqueue plugin."""
        with self._lock:
            return [qpi.pod for qpi in self._unschedulable.values() if qpi.gated]

    def in_flight_pods(self) -> list[Pod]:
        """Pods popped and not done yet, as they were when popped."""
        with self._lock:
            return self._active.in_flight_pods()

    def in_flight_events(self) -> list[Pod | InFlightEvent]:
        """The in-flight log: each in-flight pod where it was popped, and the events since."""
        with self._lock:
            return self._active.in_flight_log()

    def pending_pods(self) -> list[Pod]:
        """Every queued pod: activeQ, backoffQ, then the pool (upstream ``PendingPods``)."""
        with self._lock:
            return self.active_pods() + self.backoff_pods() + self.unschedulable_pods()

    def pending_pods_summary(self) -> str:
        """Upstream's ``activeQ:%v; backoffQ:%v; unschedulablePods:%v``."""
        with self._lock:
            return (
                f"activeQ:{len(self._active.heap)}; backoffQ:{len(self._backoff)}; "
                f"unschedulablePods:{len(self._unschedulable)}"
            )

    def get_queued_pod_info(self, uid: str) -> QueuedPodInfo | None:
        """The queued entry of pod ``uid`` (not for in-flight pods), upstream ``GetPod``."""
        with self._lock:
            return (
                self._backoff.get(uid) or self._unschedulable.get(uid) or self._active.heap.get(uid)
            )

    def __len__(self) -> int:
        """Queued pods (activeQ + backoffQ + pool); in-flight pods are not counted."""
        with self._lock:
            return len(self._active.heap) + len(self._backoff) + len(self._unschedulable)

    def has_active(self) -> bool:
        """True when :meth:`pop` would return a pod right now without waiting."""
        with self._lock:
            return len(self._active.heap) > 0 or (
                self._pop_from_backoff_q and self._backoff.len_backoff() > 0
            )

    def next_wakeup(self) -> float | None:
        """The earliest clock time at which :meth:`flush_backoff_q_completed` would move a pod,
        or ``None`` when the backoffQ is empty (for the virtual-time driver)."""
        with self._lock:
            return self._backoff.next_completion()

    def next_leftover_flush(self) -> float | None:
        """The earliest clock time from which :meth:`flush_unschedulable_pods_leftover` may move
        a pool pod, or ``None`` when the pool is empty (for the virtual-time driver)."""
        with self._lock:
            if not self._unschedulable:
                return None
            oldest = min(qpi.timestamp for qpi in self._unschedulable.values())
            return oldest + self._max_in_unschedulable

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """Whether ``qpi`` would still be waiting out its backoff now."""
        with self._lock:
            return self._backoff.is_backing_off(qpi)

    def backoff_time(self, qpi: QueuedPodInfo) -> float:
        """When ``qpi``'s backoff ends (``-inf`` for none); caches ``backoff_expiration``."""
        with self._lock:
            return self._backoff.backoff_time(qpi)

    @_changes
    def close(self) -> None:
        """Stop: in-flight pods are done, and blocked :meth:`pop` calls return ``None``."""
        with self._lock:
            self._closed = True
            self._active.done_all()
            self._cond.notify_all()
