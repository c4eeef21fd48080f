"""The extension points: what a plugin implements, and what each answer makes the framework do.

This module is the contract plugin authors code against. A plugin is a class with a ``name``
and one or more of the methods below; it declares the points it implements by subclassing
their Protocols explicitly, so mypy reports a forgotten method::

    class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
        name = "TaintToleration"

The framework detects the points a plugin implements once, when a profile is built, by
checking the Protocols below against the instance; nothing is looked up per pod or per node.

Conventions that differ from upstream's Go, on purpose:

* success is ``None`` (upstream: a nil ``*Status``); anything else is a :class:`Status`;
* ``score`` returns an ``int`` and fails by raising; any exception a plugin raises becomes an
  ``Error`` status naming the plugin, and the scheduling loop carries on;
* there is no context argument: the framework owns deadlines and cancellation;
* PreFilter returns its :class:`PreFilterResult` *or* a :class:`Status`, not both, because
  upstream ignores the result whenever the status is not success; PostFilter returns both,
  because upstream uses both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

if TYPE_CHECKING:
    from schedframe.framework._cycle_state import CycleState
    from schedframe.framework._events import ClusterEventWithHint
    from schedframe.framework._status import Status
    from schedframe.framework._types import (
        NodeInfo,
        NodeScoreList,
        NodeToStatus,
        PodInfo,
        PostFilterResult,
        PreFilterResult,
        QueuedPodInfo,
    )
    from schedframe.objects import Pod

__all__ = [
    "BindPlugin",
    "EnqueueExtensions",
    "FilterDetailsPlugin",
    "FilterPlugin",
    "PermitPlugin",
    "Plugin",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreScorePlugin",
    "QueueSortPlugin",
    "ReservePlugin",
    "ScoreExtensions",
    "ScorePlugin",
]


@runtime_checkable
class Plugin(Protocol):
    """Every plugin has a name: the one profiles and entry points use (``NodeResourcesFit``).

    A plugin is built by its factory, called ``factory(args, handle)``; a class whose
    ``__init__`` takes ``(args, handle)`` is its own factory. ``args`` is an instance of the
    plugin's ``args_type`` class attribute (decoded from the profile's ``pluginConfig``), or
    ``None`` when the plugin declares no ``args_type``.

    A plugin that has a ``close()`` method is closed when its scheduler stops.

    Upstream: ``framework.Plugin``.
    """

    name: ClassVar[str]


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    """Decides whether a pod may enter the active queue at all.

    Upstream: ``framework.PreEnqueuePlugin``.
    """

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Called by the queue before a pod is added to the active or backoff queue.

        Return ``None`` to let the pod in. Any other status *gates* the pod: it waits in the
        unschedulable pool, this plugin is recorded as its gating plugin (and asked first next
        time), and it is re-checked when an event this plugin registered happens.

        Must be cheap: it runs on every enqueue.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    """Orders the active queue. Exactly one per profile, and the same one in every profile.

    **Optional:** ``sort_key(qpi) -> comparable``. A plugin whose class also defines this
    method lets the queue compute one key per pod when the pod is queued or updated, and
    compare keys instead of calling ``less`` (up to twice) at every step of the heap. The
    contract:

    * ``less(a, b)`` is true exactly when ``sort_key(a) < sort_key(b)``, and the keys are
      totally ordered (no NaN): pods whose keys are equal are exactly those ``less`` leaves
      unordered, which the queue then orders by arrival, as it does with ``less``;
    * the key depends only on what changes through the queue's own update paths (the pod,
      through an update, and ``timestamp``, set by the queue before it queues the pod), since
      a queued pod's key is not recomputed otherwise.

    It is not a member of this Protocol: a plugin without it is still a QueueSort plugin, and
    the queue calls its ``less``. PrioritySort's key is ``(-priority, timestamp)``.

    Upstream: ``framework.QueueSortPlugin`` (``sort_key`` is schedframe's own).
    """

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """True when ``a`` should be scheduled before ``b``.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    """Which cluster events may make a pod this plugin rejected schedulable again.

    Only honoured for plugins that can reject a pod (PreEnqueue, PreFilter, Filter, Reserve,
    Permit). A plugin that does not implement it is taken to care about every event. An empty
    list means no event ever helps: a pod it rejects waits for the periodic flush.

    Upstream: ``framework.EnqueueExtensions``.
    """

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The events, each with an optional queueing hint. Called once, when the profile is built.

        A hint ``hint(pod, old_obj, new_obj)`` is run only for pods this plugin rejected (or
        left pending), and answers ``QUEUE`` or ``QUEUE_SKIP``; a hint that raises counts as
        ``QUEUE``. A ``QUEUE`` for a pod the plugin left *pending* moves it straight to the
        active queue; otherwise the pod goes through backoff.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """Incremental updates of a PreFilter plugin's cycle state, for what-if evaluation.

    The framework calls these on a *cloned* CycleState to ask "what if this pod were also on
    (or gone from) that node?" when it evaluates nominated pods and preemption victims. The
    result must equal recomputing PreFilter from scratch with the pod added or removed.
    Not called for a plugin whose PreFilter returned Skip.

    Upstream: ``framework.PreFilterExtensions``.
    """

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Account ``pod_info_to_add`` as if it ran on ``node_info``.

        .. versionadded:: 0.1
        """
        ...

    def remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        """Account ``pod_info_to_remove`` as gone from ``node_info``.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    """Per-pod work before filtering: compute once what every Filter call will need.

    Upstream: ``framework.PreFilterPlugin``.
    """

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> PreFilterResult | Status | None:
        """Called once per scheduling attempt, plugins in profile order.

        Return:

        * ``None`` — success, all nodes remain candidates;
        * a :class:`PreFilterResult` — success, and only its ``node_names`` remain candidates;
          results of several plugins are intersected, and an empty intersection makes the pod
          ``UnschedulableAndUnresolvable`` (``node(s) didn't satisfy plugin(s) [A B]
          simultaneously``). Nodes left out count as UnschedulableAndUnresolvable, so
          preemption never picks them;
        * ``Status(Code.SKIP)`` — this plugin's Filter and PreFilterExtensions are skipped for
          this attempt;
        * ``UNSCHEDULABLE`` — the pod fits no node; the other PreFilter plugins still run (so
          preemption has complete state), then the attempt fails with this message;
        * ``UNSCHEDULABLE_AND_UNRESOLVABLE`` — the same, but stops at once;
        * ``ERROR`` — the attempt aborts and the pod is retried after the error backoff.

        Store what Filter needs in ``state`` under a module-level :class:`StateKey`.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    """Decides, per node, whether the pod may run there. The hot path: keep it light.

    Upstream: ``framework.FilterPlugin``.
    """

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Called for each candidate node until enough feasible nodes are found.

        Plugins run in profile order and the first one that does not return success decides
        the node's status. Return ``None`` if the pod fits, ``UNSCHEDULABLE`` with a reason
        (``Insufficient cpu``) when preemption could help, ``UNSCHEDULABLE_AND_UNRESOLVABLE``
        when it could not. Any other code is turned into ``ERROR``, which aborts the attempt.

        Read only ``node_info`` as given: it may be a modified copy that includes nominated
        pods or lacks preemption victims.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    """Runs only when no node passed filtering; preemption is the classic use.

    Upstream: ``framework.PostFilterPlugin``.
    """

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Try to make the pod schedulable later; returns ``(result, status)``.

        Plugins run in order until one returns success (``status`` None or SUCCESS, the
        result usually nominating a node), ``UNSCHEDULABLE_AND_UNRESOLVABLE`` or ``ERROR``.
        A rejection may still carry a result: ``PostFilterResult(NominatingInfo("",
        NominatingMode.OVERRIDE))`` alongside Unschedulable clears the pod's nominated node,
        as upstream preemption does when it fails. The map may hold only
        UnschedulableAndUnresolvable nodes; a plugin must leave those alone. The message of an
        unsuccessful status is appended to the pod's FailedScheduling message.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    """Per-pod work before scoring, over the feasible nodes.

    Upstream: ``framework.PreScorePlugin``.
    """

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Called once per attempt when more than one node is feasible.

        ``Status(Code.SKIP)`` skips this plugin's Score for the attempt; any other
        non-success status aborts the attempt as an error.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class ScoreExtensions(Protocol):
    """Normalises a Score plugin's raw scores into ``[MIN_NODE_SCORE, MAX_NODE_SCORE]``.

    Upstream: ``framework.ScoreExtensions``.
    """

    def normalize_score(self, state: CycleState, pod: Pod, scores: NodeScoreList) -> Status | None:
        """Rewrite ``scores.scores`` in place. Afterwards every score must lie in 0..100, else
        the attempt fails with an error naming the plugin.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    """Ranks feasible nodes.

    Each plugin's (normalised) score is multiplied by its weight from the profile and summed;
    the node with the highest total wins, ties broken at random (seeded in deterministic mode).

    Upstream: ``framework.ScorePlugin``.
    """

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """The raw score of ``node_info`` for ``pod``. Raise to fail the attempt with an error.

        Raise :class:`StatusError` to fail with a given status: the attempt ends with
        ``running Score plugins: plugin "<name>" failed with: <its message>``, as upstream's
        ``(0, status)``; any other exception is reported with its own text.

        Without :class:`ScoreExtensions`, the returned score must already be in 0..100.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    """Claims resources the plugin tracks itself, once the pod is assumed on a node.

    Upstream: ``framework.ReservePlugin``.
    """

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Called after the pod is assumed on ``node_name``, plugins in order.

        A non-success status fails the attempt on that node: every Reserve plugin's
        :meth:`unreserve` is then called in reverse order and the pod is forgotten.

        .. versionadded:: 0.1
        """
        ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Undo :meth:`reserve`. Must be idempotent, and may be called without a prior reserve.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    """The last say before binding: allow, reject, or make the pod wait.

    Upstream: ``framework.PermitPlugin``.
    """

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Return ``None`` to allow, ``Status.wait(timeout)`` to park the pod, or a rejection.

        A waiting pod is bound only after every plugin that made it wait allows it (through
        the handle's waiting pods); a rejection or the timeout (capped at 15 minutes)
        unreserves and requeues it.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    """Work that must succeed before the binding, in the binding cycle (e.g. volumes).

    A PreBind plugin may also define ``pre_bind_pre_flight(state, pod, node_name)``, run at
    the start of the binding cycle (upstream ``PreBindPreFlight``, with
    ``NominatedNodeNameForExpectation``): ``None`` when its PreBind will do work, ``SKIP`` when
    it will not (its PreBind is then not run), ``ERROR`` to fail the binding. Without it the
    plugin counts as doing work.

    Upstream: ``framework.PreBindPlugin``.
    """

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """A non-success status unreserves, forgets and requeues the pod.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    """Binds the pod to the node in the cluster.

    Upstream: ``framework.BindPlugin``.
    """

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Bind plugins run in order until one returns something other than ``SKIP``.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    """Informational: told after a pod was bound.

    Upstream: ``framework.PostBindPlugin``.
    """

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Called once the binding succeeded.

        .. versionadded:: 0.1
        """
        ...


@runtime_checkable
class FilterDetailsPlugin(Plugin, Protocol):
    """A Filter plugin that can say more than its status about a node it rejected.

    ``explain`` shows the lines under the node (DynamicResources lists which device requests
    failed there and why). Called after filtering, with the attempt's CycleState; the status
    messages stay upstream's. Provisional.

    .. versionadded:: 0.2
    """

    def filter_details(self, state: CycleState, pod: Pod, node_name: str) -> Sequence[str]:
        """Lines explaining why ``node_name`` was rejected (empty when nothing to add)."""
        ...
