"""The PodTopologySpread plugin and its args (upstream ``podtopologyspread/plugin.go``).

Spreads pods matching a constraint's selector evenly across topology domains: hard
(``DoNotSchedule``) constraints filter nodes, soft (``ScheduleAnyway``) ones score them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar, Final

import attrs

from schedframe import framework as fw
from schedframe.errors import DUPLICATE, INVALID, ConfigError, FieldIssue
from schedframe.objects import Node, Pod, TopologySpreadConstraint
from schedframe_plugins import names
from schedframe_plugins.nodeaffinity import RequiredNodeAffinity
from schedframe_plugins.nodeaffinity._validation import (
    forbidden_issue,
    label_name_issues,
    required_issue,
    unsupported_issue,
)
from schedframe_plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    NODE_INCLUSION_POLICY_HONOR,
    SCHEDULE_ANYWAY,
    SpreadConstraint,
    build_default_constraints,
    count_pods_match_selector,
    filter_topology_spread_constraints,
    node_labels_match_spread_constraints,
    pod_labels_match_spread_constraints,
)
from schedframe_plugins.podtopologyspread.filtering import (
    PRE_FILTER_STATE_KEY,
    cal_pre_filter_state,
    filter_node,
    node_filter,
    not_found,
    update_with_pod,
)
from schedframe_plugins.podtopologyspread.scoring import (
    PRE_SCORE_STATE_KEY,
    PreScoreState,
    init_pre_score_state,
    normalize,
    score_node,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from schedframe_plugins.podtopologyspread._columnar import RowCounts

__all__ = [
    "COLUMNAR_MIN_NODES",
    "LIST_DEFAULTING",
    "SYSTEM_DEFAULTING",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
]

#: PreFilter and PreScore count over the snapshot's NumPy columns from this many nodes on;
#: below it the per-node loop is as quick.
COLUMNAR_MIN_NODES = 64

#: ``defaultingType`` values.
SYSTEM_DEFAULTING: Final = "System"
LIST_DEFAULTING: Final = "List"

#: The constraints ``defaultingType: System`` applies to pods that have none.
SYSTEM_DEFAULT_CONSTRAINTS: Final = (
    TopologySpreadConstraint(
        max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
    TopologySpreadConstraint(
        max_skew=5, topology_key=LABEL_TOPOLOGY_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
)


@attrs.frozen(kw_only=True)
class PodTopologySpreadArgs:
    """Args of PodTopologySpread (upstream ``PodTopologySpreadArgs``).

    ``default_constraints`` (``defaultConstraints``) apply to pods without constraints of
    their own when ``defaulting_type`` (``defaultingType``) is ``List``; with ``System`` (the
    default) the built-in :data:`SYSTEM_DEFAULT_CONSTRAINTS` apply instead. Default
    constraints take their selector from the Services, ReplicationControllers, ReplicaSets
    and StatefulSets that select or own the pod, read through the Handle's
    ``workload_lister()``; a pod none of them selects gets no default constraint (see
    :func:`~schedframe_plugins.podtopologyspread.common.default_selector`).
    """

    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING

    def validate(self) -> list[FieldIssue]:
        """Upstream ``ValidatePodTopologySpreadArgs``."""
        issues: list[FieldIssue] = []
        if self.defaulting_type not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            issues.append(
                unsupported_issue(
                    "defaultingType", self.defaulting_type, (SYSTEM_DEFAULTING, LIST_DEFAULTING)
                )
            )
        elif self.defaulting_type == SYSTEM_DEFAULTING and self.default_constraints:
            issues.append(
                FieldIssue(
                    path="defaultingType",
                    kind=INVALID,
                    value=self.defaulting_type,
                    detail="when .defaultConstraints are not empty",
                )
            )
        for i, c in enumerate(self.default_constraints):
            p = f"defaultConstraints[{i}]"
            if c.max_skew <= 0:
                issues.append(
                    FieldIssue(
                        path=f"{p}.maxSkew",
                        kind=INVALID,
                        value=c.max_skew,
                        detail="not in valid range (0, inf)",
                    )
                )
            if not c.topology_key:
                issues.append(required_issue(f"{p}.topologyKey", "can not be empty"))
            else:
                issues.extend(label_name_issues(c.topology_key, f"{p}.topologyKey"))
            if not c.when_unsatisfiable:
                issues.append(required_issue(f"{p}.whenUnsatisfiable", "can not be empty"))
            elif c.when_unsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
                issues.append(
                    unsupported_issue(
                        f"{p}.whenUnsatisfiable",
                        c.when_unsatisfiable,
                        (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY),
                    )
                )
            if c.label_selector is not None:
                issues.append(
                    forbidden_issue(
                        f"{p}.labelSelector",
                        "constraint must not define a selector, as they deduced for each pod",
                    )
                )
            for other in self.default_constraints[:i]:
                if (
                    c.topology_key == other.topology_key
                    and c.when_unsatisfiable == other.when_unsatisfiable
                ):
                    issues.append(
                        FieldIssue(
                            path=f"defaultConstraints[{i}]",
                            kind=DUPLICATE,
                            value=f"{{{c.topology_key}, {c.when_unsatisfiable}}}",
                        )
                    )
                    break
        return issues


def _as(cls: type, old_obj: object, new_obj: object) -> None:
    # Upstream util.As: a non-nil object of the wrong type is an error (the hint then queues).
    for obj in (new_obj, old_obj):
        if obj is not None and not isinstance(obj, cls):
            raise TypeError(f"expected {cls.__name__}, but got {type(obj).__name__}")


def _involved_in_topology_spreading(incoming: Pod, pod_with_spreading: Pod) -> bool:
    return incoming.uid == pod_with_spreading.uid or (
        incoming.spec.node_name != "" and incoming.namespace == pod_with_spreading.namespace
    )


class PodTopologySpread(
    fw.PreFilterPlugin,
    fw.PreFilterExtensions,
    fw.FilterPlugin,
    fw.PreScorePlugin,
    fw.ScorePlugin,
    fw.ScoreExtensions,
    fw.EnqueueExtensions,
):
    """Honours the pod's ``topologySpreadConstraints`` (or the configured defaults).

    Upstream: ``pkg/scheduler/framework/plugins/podtopologyspread.PodTopologySpread``, with
    the MinDomains, NodeInclusionPolicy and MatchLabelKeys features on.
    """

    name: ClassVar[str] = names.POD_TOPOLOGY_SPREAD
    args_type: ClassVar[type | None] = PodTopologySpreadArgs

    def __init__(self, args: PodTopologySpreadArgs | None, handle: fw.Handle) -> None:
        if args is None:
            args = PodTopologySpreadArgs()
        issues = args.validate()
        if issues:
            raise ConfigError(issues)
        self._handle = handle
        self._default_constraints: tuple[TopologySpreadConstraint, ...] = args.default_constraints
        self._system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        if self._system_defaulted:
            self._default_constraints = SYSTEM_DEFAULT_CONSTRAINTS
        # Per-row matching pod counts kept across cycles (built with the first columns).
        self._row_counts: RowCounts | None = None

    def sign_pod(self, pod: Pod) -> tuple[Sequence[fw.SignFragment], fw.Status | None]:
        """No fragment; a pod with constraints, its own or the defaults, is not signable:
        spreading depends on other pods, not on one node (upstream
        ``PodTopologySpread.SignPod``)."""
        if pod.spec.topology_spread_constraints:
            return (), fw.Status(
                fw.Code.UNSCHEDULABLE, "pods with topology constraints are not signable"
            )
        if self._default_constraints:
            return (), fw.Status(
                fw.Code.UNSCHEDULABLE, "pods with default topology constraints are not signable"
            )
        return (), None

    def _counts_memo(self) -> RowCounts:
        memo = self._row_counts
        if memo is None:
            from schedframe_plugins.podtopologyspread._columnar import RowCounts

            memo = self._row_counts = RowCounts()
        return memo

    def _columns_of(self, nodes: Sequence[fw.NodeInfo]) -> fw.NodeColumns | None:
        """The snapshot's columns when ``nodes`` is the snapshot's node list and big enough
        for the columnar counting to pay."""
        if len(nodes) < COLUMNAR_MIN_NODES:
            return None
        columns_fn = getattr(self._handle.snapshot_shared_lister(), "columns", None)
        if not callable(columns_fn):
            return None
        columns = columns_fn()
        if not isinstance(columns, fw.NodeColumns) or columns.infos is not nodes:
            return None
        return columns

    def _constraints(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        own = pod.spec.topology_spread_constraints
        if own:
            return filter_topology_spread_constraints(own, pod.labels, action)
        return build_default_constraints(
            self._default_constraints, pod, action, self._handle.workload_lister()
        )

    def get_constraints(self, pod: Pod) -> list[SpreadConstraint]:
        """The pod's hard constraints, or the hard default ones (upstream ``getConstraints``)."""
        return self._constraints(pod, DO_NOT_SCHEDULE)

    # -- EnqueueExtensions --------------------------------------------------------------------

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """Pods added, relabelled, re-tolerated or deleted; nodes added, deleted, relabelled
        or re-tainted (queueing hints on)."""
        a = fw.ActionType
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(
                    fw.EventResource.POD,
                    a.ADD | a.UPDATE_POD_LABEL | a.UPDATE_POD_TOLERATION | a.DELETE,
                ),
                self.is_schedulable_after_pod_change,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(
                    fw.EventResource.NODE,
                    a.ADD | a.DELETE | a.UPDATE_NODE_LABEL | a.UPDATE_NODE_TAINT,
                ),
                self.is_schedulable_after_node_change,
            ),
        )

    def is_schedulable_after_pod_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when an assigned pod in the namespace starts or stops matching a constraint,
        or the rejected pod got new tolerations while a constraint honours taints."""
        _as(Pod, old_obj, new_obj)
        original = old_obj if isinstance(old_obj, Pod) else None
        modified = new_obj if isinstance(new_obj, Pod) else None
        if (modified is not None and not _involved_in_topology_spreading(modified, pod)) or (
            original is not None and not _involved_in_topology_spreading(original, pod)
        ):
            return fw.QueueingHint.QUEUE_SKIP

        constraints = self.get_constraints(pod)

        if modified is not None and original is not None:
            if (
                pod.uid == modified.uid
                and modified.spec.tolerations != original.spec.tolerations
                and any(c.node_taints_policy == NODE_INCLUSION_POLICY_HONOR for c in constraints)
            ):
                return fw.QueueingHint.QUEUE
            if modified.labels == original.labels:
                return fw.QueueingHint.QUEUE_SKIP
            for c in constraints:
                if c.matches(original.labels) != c.matches(modified.labels):
                    return fw.QueueingHint.QUEUE
            return fw.QueueingHint.QUEUE_SKIP

        if modified is not None:
            if pod_labels_match_spread_constraints(constraints, modified.labels):
                return fw.QueueingHint.QUEUE
            return fw.QueueingHint.QUEUE_SKIP

        assert original is not None
        if pod_labels_match_spread_constraints(constraints, original.labels):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when a node gains or loses the topology keys, changes their values, or (while
        it has them) changes its taints; or when a node with the keys is added or deleted."""
        _as(Node, old_obj, new_obj)
        original = old_obj if isinstance(old_obj, Node) else None
        modified = new_obj if isinstance(new_obj, Node) else None
        constraints = self.get_constraints(pod)
        original_matching = original is not None and node_labels_match_spread_constraints(
            original.labels, constraints
        )
        modified_matching = modified is not None and node_labels_match_spread_constraints(
            modified.labels, constraints
        )
        if original is not None and modified is not None:
            if original_matching != modified_matching:
                return fw.QueueingHint.QUEUE
            if modified_matching and (
                any(
                    original.labels.get(c.topology_key, "")
                    != modified.labels.get(c.topology_key, "")
                    for c in constraints
                )
                or original.spec.taints != modified.spec.taints
            ):
                return fw.QueueingHint.QUEUE
            return fw.QueueingHint.QUEUE_SKIP
        if modified is not None:
            return fw.QueueingHint.QUEUE if modified_matching else fw.QueueingHint.QUEUE_SKIP
        return fw.QueueingHint.QUEUE if original_matching else fw.QueueingHint.QUEUE_SKIP

    # -- PreFilter / extensions / Filter --------------------------------------------------------

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Count matching pods per hard constraint and domain; Skip without hard constraints."""
        constraints = self.get_constraints(pod)
        if not constraints:
            return fw.Status(fw.Code.SKIP)
        columns = self._columns_of(nodes)
        if columns is not None:
            from schedframe_plugins.podtopologyspread import _columnar

            state[PRE_FILTER_STATE_KEY] = _columnar.pre_filter_state(
                pod, constraints, columns, self._counts_memo()
            )
        else:
            state[PRE_FILTER_STATE_KEY] = cal_pre_filter_state(pod, constraints, nodes)
        return None

    def add_pod(
        self,
        state: fw.CycleState,
        pod_to_schedule: Pod,
        pod_info_to_add: fw.PodInfo,
        node_info: fw.NodeInfo,
    ) -> fw.Status | None:
        """Count ``pod_info_to_add`` as running on ``node_info``."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return fw.Status.from_error(not_found(PRE_FILTER_STATE_KEY))
        update_with_pod(s, pod_info_to_add.pod, pod_to_schedule, node_info.node, 1)
        return None

    def remove_pod(
        self,
        state: fw.CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: fw.PodInfo,
        node_info: fw.NodeInfo,
    ) -> fw.Status | None:
        """Stop counting ``pod_info_to_remove`` on ``node_info``."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return fw.Status.from_error(not_found(PRE_FILTER_STATE_KEY))
        update_with_pod(s, pod_info_to_remove.pod, pod_to_schedule, node_info.node, -1)
        return None

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """Reject a node lacking a topology key (unresolvable) or breaking a ``maxSkew``."""
        node = node_info.node
        if node is None:
            return fw.Status.from_error(RuntimeError("node not found"))
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return fw.Status.from_error(not_found(PRE_FILTER_STATE_KEY))
        return filter_node(s, node)

    def prepare_filter(
        self, state: fw.CycleState, pod: Pod
    ) -> Callable[[fw.NodeInfo], fw.Status | None] | None:
        """:meth:`filter` for this pod (the framework's per-pod fast path): PreFilter's state
        is read once and each constraint's global minimum worked out once."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return None
        check = node_filter(s)
        slow = self.filter

        def spread_filter(node_info: fw.NodeInfo) -> fw.Status | None:
            node = node_info.node
            if node is None:
                return slow(state, pod, node_info)
            return check(node)

        return spread_filter

    def filter_batch(
        self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns
    ) -> npt.NDArray[np.int8] | None:
        """:meth:`filter` over every node of ``columns`` (the framework's batch path): REJECT
        where a topology key is missing or ``maxSkew`` would break, PASS elsewhere."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return None
        from schedframe_plugins.podtopologyspread import _columnar

        return _columnar.filter_verdicts(s, columns)

    # -- PreScore / Score -----------------------------------------------------------------------

    def pre_score(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.Status | None:
        """Count matching pods per soft constraint and domain; Skip without soft constraints."""
        all_nodes = self._handle.snapshot_shared_lister().node_infos.list()
        if not all_nodes:
            return fw.Status(fw.Code.SKIP)
        constraints = self._constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return fw.Status(fw.Code.SKIP)
        s = PreScoreState()
        # Only non-system-default spreading requires every topology key on a node; this lets
        # nodes without a zone label still be spread by hostname.
        require_all = bool(pod.spec.topology_spread_constraints) or not self._system_defaulted
        init_pre_score_state(s, constraints, nodes, require_all)

        columns = self._columns_of(all_nodes) if require_all else None
        if columns is not None:
            from schedframe_plugins.podtopologyspread import _columnar

            _columnar.pre_score_counts(s, pod, columns, self._counts_memo())
            state[PRE_SCORE_STATE_KEY] = s
            return None

        required = RequiredNodeAffinity(pod)
        namespace = pod.namespace
        constraints = s.constraints
        for info in all_nodes:
            node = info.node
            if node is None:
                continue
            labels = node.metadata.labels
            if require_all and not node_labels_match_spread_constraints(labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not c.match_node_inclusion_policies(pod, node, required):
                    continue
                counts = s.topology_value_to_pod_counts[i]
                value = labels.get(c.topology_key, "")
                # Only domains holding a feasible node are counted; hostname domains are
                # never registered here, Score counts them on the node itself.
                if value not in counts:
                    continue
                counts[value] += count_pods_match_selector(info.pods, c.selector, namespace)
        state[PRE_SCORE_STATE_KEY] = s
        return None

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        """The node's raw spread score (lower is better before normalisation)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            raise RuntimeError(
                f'error reading "{PRE_SCORE_STATE_KEY.name}" from cycleState: not found'
            )
        return score_node(s, node_info, pod.namespace)

    def normalize_score(
        self, state: fw.CycleState, pod: Pod, scores: fw.NodeScoreList
    ) -> fw.Status | None:
        """Reverse and scale: the fewest matching pods gets ``MAX_NODE_SCORE``."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return fw.Status.from_error(
                RuntimeError(
                    f'error reading "{PRE_SCORE_STATE_KEY.name}" from cycleState: not found'
                )
            )
        normalize(s, scores)
        return None

    def score_batch(
        self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns, rows: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.int64] | None:
        """:meth:`score` of the nodes at ``rows`` (the framework's batch path)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return None
        from schedframe_plugins.podtopologyspread import _columnar

        return _columnar.score_rows(s, pod, columns, rows, self._counts_memo())

    def normalize_batch(
        self, state: fw.CycleState, pod: Pod, scores: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64] | None:
        """:meth:`normalize_score` over an array of scores (the framework's batch path);
        declines when some node lacks a required topology key (its name is needed)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return None
        from schedframe_plugins.podtopologyspread import _columnar

        return _columnar.normalize_scores(s, scores)
