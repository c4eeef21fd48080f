"""The TaintToleration plugin (upstream ``tainttoleration/taint_toleration.go``).

Filter rejects a node that has a ``NoSchedule`` or ``NoExecute`` taint the pod does not
tolerate; Score counts the node's ``PreferNoSchedule`` taints the pod does not tolerate, and
NormalizeScore reverses the counts so the node with the fewest gets ``MAX_NODE_SCORE``.

The taint helpers at the bottom mirror ``k8s.io/component-helpers/scheduling/corev1``
(``FindMatchingUntoleratedTaint``, ``TolerationsTolerateTaint``) and are shared with the
PodTopologySpread plugin (``nodeTaintsPolicy: Honor``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar, Final

from schedframe import framework as fw
from schedframe.objects import Node, Pod, Taint, Toleration
from schedframe_plugins import names
from schedframe_plugins._helper import default_normalize_array, default_normalize_score
from schedframe_plugins._signers import tolerations_signer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "ERR_REASON_NOT_MATCH",
    "TaintToleration",
    "do_not_schedule_taints_filter",
    "find_matching_untolerated_taint",
    "tolerations_tolerate_taint",
    "untolerated_taint_reason",
]

#: Upstream's ``ErrReasonNotMatch`` (kept for parity; Filter names the taint instead).
ERR_REASON_NOT_MATCH: Final = "node(s) had taints that the pod didn't tolerate"

_NO_SCHEDULE: Final = "NoSchedule"
_PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
_NO_EXECUTE: Final = "NoExecute"


#: Filter's reason. Current upstream names no taint, so a FailedScheduling message neither
#: leaks taint values nor splits the histogram by taint; releases before that printed
#: ``node(s) had untolerated taint {key: value}``.
ERR_REASON_UNTOLERATED: Final = "node(s) had untolerated taint(s)"


def untolerated_taint_reason(taint: Taint) -> str:
    """Filter's reason for an untolerated ``taint`` (upstream's fixed text, whatever the taint)."""
    return ERR_REASON_UNTOLERATED


def do_not_schedule_taints_filter(taint: Taint) -> bool:
    """True for the effects Filter enforces (upstream ``DoNotScheduleTaintsFilterFunc``)."""
    return taint.effect == _NO_SCHEDULE or taint.effect == _NO_EXECUTE


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    """True when any toleration tolerates ``taint`` (upstream ``TolerationsTolerateTaint``)."""
    return any(t.tolerates(taint) for t in tolerations)


def find_matching_untolerated_taint(
    taints: Iterable[Taint],
    tolerations: Sequence[Toleration],
    inclusion: Callable[[Taint], bool] | None = None,
) -> Taint | None:
    """The first taint passing ``inclusion`` that no toleration tolerates, else ``None``.

    Mirrors upstream ``FindMatchingUntoleratedTaint`` (which also returns a found flag).
    """
    for taint in taints:
        if inclusion is not None and not inclusion(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


class _PreScoreState:
    """The pod's tolerations that can tolerate a ``PreferNoSchedule`` taint."""

    __slots__ = ("tolerations_prefer_no_schedule",)

    def __init__(self, tolerations: tuple[Toleration, ...]) -> None:
        self.tolerations_prefer_no_schedule = tolerations


_PRE_SCORE_KEY: Final = fw.StateKey[_PreScoreState]("PreScore" + names.TAINT_TOLERATION)


def _prefer_no_schedule_tolerations(tolerations: Iterable[Toleration]) -> tuple[Toleration, ...]:
    # An empty effect tolerates every effect, PreferNoSchedule included.
    return tuple(t for t in tolerations if not t.effect or t.effect == _PREFER_NO_SCHEDULE)


def _as(cls: type, old_obj: object, new_obj: object) -> None:
    # Upstream util.As: a non-nil object of the wrong type is an error (the hint then queues).
    for obj in (new_obj, old_obj):
        if obj is not None and not isinstance(obj, cls):
            raise TypeError(f"expected {cls.__name__}, but got {type(obj).__name__}")


class TaintToleration(
    fw.FilterPlugin,
    fw.PreScorePlugin,
    fw.ScorePlugin,
    fw.ScoreExtensions,
    fw.EnqueueExtensions,
):
    """Checks that a pod tolerates a node's taints; prefers nodes with fewer intolerable ones.

    Upstream: ``pkg/scheduler/framework/plugins/tainttoleration.TaintToleration``.
    """

    name: ClassVar[str] = names.TAINT_TOLERATION
    #: Filter reads the Node object only, never the pods on it.
    filter_reads_node_pods: ClassVar[bool] = False
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self._handle = handle

    def sign_pod(self, pod: Pod) -> tuple[Sequence[fw.SignFragment], fw.Status | None]:
        """The pod's tolerations (upstream ``TaintToleration.SignPod``)."""
        return (
            fw.SignFragment(key=fw.TOLERATIONS_SIGNER_NAME, value=tolerations_signer(pod)),
        ), None

    # -- EnqueueExtensions --------------------------------------------------------------------

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """A node added or re-tainted, or the pod's tolerations changed (queueing hints on)."""
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(
                    fw.EventResource.NODE, fw.ActionType.ADD | fw.ActionType.UPDATE_NODE_TAINT
                ),
                self.is_schedulable_after_node_change,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.UPDATE_POD_TOLERATION),
                self.is_schedulable_after_pod_toleration_change,
            ),
        )

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue only when the node went from untolerated to tolerated."""
        _as(Node, old_obj, new_obj)
        assert isinstance(new_obj, Node)
        tolerations = pod.spec.tolerations
        was_untolerated = True
        if isinstance(old_obj, Node):
            was_untolerated = (
                find_matching_untolerated_taint(
                    old_obj.spec.taints, tolerations, do_not_schedule_taints_filter
                )
                is not None
            )
        is_untolerated = (
            find_matching_untolerated_taint(
                new_obj.spec.taints, tolerations, do_not_schedule_taints_filter
            )
            is not None
        )
        if was_untolerated and not is_untolerated:
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pod_toleration_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the rejected pod itself got new tolerations; other pods do not matter."""
        _as(Pod, old_obj, new_obj)
        assert isinstance(new_obj, Pod)
        if pod.uid == new_obj.uid:
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    # -- Filter ---------------------------------------------------------------------------------

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """``UnschedulableAndUnresolvable`` naming the first untolerated NoSchedule/NoExecute taint."""
        node = node_info.node
        if node is None:
            return fw.Status(fw.Code.ERROR, "invalid nodeInfo")
        taint = find_matching_untolerated_taint(
            node.spec.taints, pod.spec.tolerations, do_not_schedule_taints_filter
        )
        if taint is None:
            return None
        return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, untolerated_taint_reason(taint))

    def prepare_filter(
        self, state: fw.CycleState, pod: Pod
    ) -> Callable[[fw.NodeInfo], fw.Status | None] | None:
        """:meth:`filter` for this pod (the framework's per-pod fast path): an untainted node
        is answered inline."""
        slow = self.filter

        def taint_filter(node_info: fw.NodeInfo) -> fw.Status | None:
            node = node_info.node
            if node is not None and not node.spec.taints:
                return None
            return slow(state, pod, node_info)

        return taint_filter

    def filter_batch(
        self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns
    ) -> npt.NDArray[np.int8]:
        """:meth:`filter` over every node of ``columns`` (the framework's batch path): nodes
        without NoSchedule/NoExecute taints pass; the others are checked one by one."""
        import numpy as np

        return columns.hard_taints.view(np.int8) * np.int8(fw.FILTER_CHECK)

    # -- Score ----------------------------------------------------------------------------------

    def pre_score(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.Status | None:
        """Keep the pod's tolerations that apply to ``PreferNoSchedule`` taints."""
        state[_PRE_SCORE_KEY] = _PreScoreState(
            _prefer_no_schedule_tolerations(pod.spec.tolerations)
        )
        return None

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        """How many ``PreferNoSchedule`` taints of the node the pod does not tolerate."""
        s = state.get(_PRE_SCORE_KEY)
        if s is None:
            raise RuntimeError(f'failed to read "{_PRE_SCORE_KEY.name}" from cycleState: not found')
        node = node_info.node
        if node is None:
            raise ValueError("node not found")
        tolerations = s.tolerations_prefer_no_schedule
        count = 0
        for taint in node.spec.taints:
            if taint.effect != _PREFER_NO_SCHEDULE:
                continue
            if not tolerations_tolerate_taint(tolerations, taint):
                count += 1
        return count

    def score_many(self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]) -> list[int]:
        """:meth:`score` of every node, in order (the framework's batch form)."""
        s = state.get(_PRE_SCORE_KEY)
        if s is None or any(ni.node is None for ni in nodes):
            score = self.score
            return [score(state, pod, ni) for ni in nodes]
        tolerations = s.tolerations_prefer_no_schedule
        out: list[int] = []
        append = out.append
        for ni in nodes:
            taints = ni.node.spec.taints  # type: ignore[union-attr]
            if not taints:
                append(0)
                continue
            count = 0
            for taint in taints:
                if taint.effect != _PREFER_NO_SCHEDULE:
                    continue
                if not tolerations_tolerate_taint(tolerations, taint):
                    count += 1
            append(count)
        return out

    def normalize_score(
        self, state: fw.CycleState, pod: Pod, scores: fw.NodeScoreList
    ) -> fw.Status | None:
        """Reverse and scale: the fewest intolerable taints gets ``MAX_NODE_SCORE``."""
        default_normalize_score(fw.MAX_NODE_SCORE, True, scores)
        return None

    def score_batch(
        self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns, rows: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.int64] | None:
        """:meth:`score` of the nodes at ``rows`` (the framework's batch path): nodes without
        PreferNoSchedule taints score 0 without a look."""
        import numpy as np

        if state.get(_PRE_SCORE_KEY) is None:
            return None
        scores = np.zeros(len(rows), dtype=np.int64)
        tainted = np.flatnonzero(columns.prefer_no_schedule_taints[rows])
        if len(tainted):
            infos = columns.infos
            score = self.score
            for i in tainted.tolist():
                scores[i] = score(state, pod, infos[int(rows[i])])
        return scores

    def normalize_batch(
        self, state: fw.CycleState, pod: Pod, scores: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """:meth:`normalize_score` over an array of scores (the framework's batch path)."""
        return default_normalize_array(fw.MAX_NODE_SCORE, True, scores)
