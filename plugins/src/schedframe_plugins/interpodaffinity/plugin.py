"""The InterPodAffinity plugin: its args, construction, events and queueing hints.

Upstream: ``pkg/scheduler/framework/plugins/interpodaffinity/plugin.go`` and, for the args,
``InterPodAffinityArgs`` with ``ValidateInterPodAffinityArgs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final, TypeVar

import attrs

from schedframe import errors
from schedframe import framework as fw
from schedframe.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    PodInfo,
    QueueingHint,
)
from schedframe.objects import Node, Pod
from schedframe_plugins import names
from schedframe_plugins.interpodaffinity._sums import SumsCache
from schedframe_plugins.interpodaffinity.filtering import (
    FilteringMixin,
    pod_matches_all_affinity_terms,
    pod_matches_any_affinity_terms,
)
from schedframe_plugins.interpodaffinity.scoring import ScoringMixin

__all__ = [
    "DEFAULT_HARD_POD_AFFINITY_WEIGHT",
    "MAX_HARD_POD_AFFINITY_WEIGHT",
    "MIN_HARD_POD_AFFINITY_WEIGHT",
    "InterPodAffinity",
    "InterPodAffinityArgs",
]

#: Upstream's v1 default for ``hardPodAffinityWeight``.
DEFAULT_HARD_POD_AFFINITY_WEIGHT: Final = 1
MIN_HARD_POD_AFFINITY_WEIGHT: Final = 0
MAX_HARD_POD_AFFINITY_WEIGHT: Final = 100

_T = TypeVar("_T")


@attrs.frozen(kw_only=True)
class InterPodAffinityArgs:
    """``InterPodAffinityArgs`` (``kubescheduler.config.k8s.io/v1``).

    Attributes:
        hard_pod_affinity_weight: the score weight an existing pod's *required* affinity term
            gives the nodes of its topology domain when the incoming pod matches it; 0..100.
        ignore_preferred_terms_of_existing_pods: skip scoring when the incoming pod has no
            preferred (anti-)affinity terms of its own, instead of honouring the existing pods'
            preferred terms.
    """

    hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    ignore_preferred_terms_of_existing_pods: bool = False

    def validate(self) -> list[errors.FieldIssue]:
        """Upstream ``ValidateInterPodAffinityArgs``; paths relative to the args."""
        weight = self.hard_pod_affinity_weight
        if weight < MIN_HARD_POD_AFFINITY_WEIGHT or weight > MAX_HARD_POD_AFFINITY_WEIGHT:
            return [
                errors.FieldIssue(
                    path="hardPodAffinityWeight",
                    kind=errors.INVALID,
                    value=weight,
                    detail=(
                        f"not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}, "
                        f"{MAX_HARD_POD_AFFINITY_WEIGHT}]"
                    ),
                )
            ]
        return []


def _as(kind: type[_T], obj: object) -> _T | None:
    # Upstream util.As: a wrong type is an error, which makes the hint answer Queue.
    if obj is None or isinstance(obj, kind):
        return obj
    raise TypeError(f"expected {kind.__name__} or None, got {type(obj).__name__}")


class InterPodAffinity(
    FilteringMixin,
    ScoringMixin,
    fw.PreFilterPlugin,
    fw.PreFilterExtensions,
    fw.FilterPlugin,
    fw.PreScorePlugin,
    fw.ScorePlugin,
    fw.ScoreExtensions,
    fw.EnqueueExtensions,
):
    """Places pods by the pods already running: required and preferred inter-pod
    (anti-)affinity, with the existing pods' terms honoured symmetrically.

    * Filter rejects a node whose domains lack a pod the incoming pod requires
      (UnschedulableAndUnresolvable), hold a pod it refuses (Unschedulable), or hold a pod
      whose required anti-affinity refuses it (Unschedulable).
    * Score favours domains by the summed weights of matching preferred terms, both ways,
      plus ``hardPodAffinityWeight`` for existing pods' required affinity terms.
    """

    name: ClassVar[str] = names.INTER_POD_AFFINITY
    args_type: ClassVar[type | None] = InterPodAffinityArgs

    def __init__(self, args: InterPodAffinityArgs | None, handle: fw.Handle) -> None:
        if args is None:
            args = InterPodAffinityArgs()
        issues = args.validate()
        if issues:
            raise errors.ConfigError(issues)
        self._args = args
        self._handle = handle
        self._hard_pod_affinity_weight = args.hard_pod_affinity_weight
        self._ignore_preferred_terms_of_existing_pods = args.ignore_preferred_terms_of_existing_pods
        # Per-domain sums of the snapshot's pods and terms, shared by PreFilter and PreScore.
        self._sums = SumsCache()

    @property
    def args(self) -> InterPodAffinityArgs:
        """The args the plugin was built with."""
        return self._args

    # -- EnqueueExtensions -------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """Pod add / label update / delete, and node add / label update."""
        return (
            # An added pod may satisfy the pod's affinity; a deleted one may lift an
            # anti-affinity, either way; changed labels may do both. The pod's own label
            # changes come through here too.
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.POD,
                    ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE,
                ),
                self.is_schedulable_after_pod_change,
            ),
            # A node joining or moving between topology domains.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change,
            ),
        )

    def is_schedulable_after_pod_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        """Whether a pod add, label update or delete may let ``pod`` through this plugin."""
        original = _as(Pod, old_obj)
        modified = _as(Pod, new_obj)
        if modified is not None and original is not None and pod.uid == modified.uid:
            # Only label updates are registered: the pod's own new labels may no longer be
            # refused by existing pods' anti-affinity.
            return QueueingHint.QUEUE
        if (
            modified is not None
            and modified.spec.node_name == ""
            and modified.status.nominated_node_name == ""
        ) or (
            original is not None
            and original.spec.node_name == ""
            and original.status.nominated_node_name == ""
        ):
            # A pod neither bound nor nominated takes no part in anyone's affinity.
            return QueueingHint.QUEUE_SKIP

        info = PodInfo(pod)
        terms = info.required_affinity_terms
        anti_terms = info.required_anti_affinity_terms

        if modified is not None and original is not None:
            # One existing pod must match all affinity terms at once, so the terms are not
            # checked one by one; a single anti-affinity term is enough to refuse.
            if not pod_matches_all_affinity_terms(
                terms, original
            ) and pod_matches_all_affinity_terms(terms, modified):
                return QueueingHint.QUEUE
            if pod_matches_any_affinity_terms(
                anti_terms, original
            ) and not pod_matches_any_affinity_terms(anti_terms, modified):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP

        if modified is not None:
            # Added: only affinity can be helped by a new pod.
            if pod_matches_all_affinity_terms(terms, modified):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP

        if original is None:
            raise TypeError("a pod event needs an old or a new pod")
        # Deleted: it may have been refused by the pod, or have refused the pod.
        if pod_matches_any_affinity_terms(anti_terms, original):
            return QueueingHint.QUEUE
        if pod_matches_any_affinity_terms(PodInfo(original).required_anti_affinity_terms, pod):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> QueueingHint:
        """Whether a node add or label update may let ``pod`` through this plugin."""
        original = _as(Node, old_obj)
        modified = _as(Node, new_obj)
        if modified is None:
            raise TypeError("a node event needs the new node")
        new_labels = modified.metadata.labels
        old_labels = original.metadata.labels if original is not None else None

        info = PodInfo(pod)
        for term in info.required_affinity_terms:
            key = term.topology_key
            if old_labels is None:
                # A new node carrying the key may join a domain with the wanted pods.
                if key in new_labels:
                    return QueueingHint.QUEUE
                continue
            old_value = old_labels.get(key)
            new_value = new_labels.get(key)
            if old_value is None and new_value is not None:
                return QueueingHint.QUEUE
            if old_value is not None and new_value is not None and old_value != new_value:
                return QueueingHint.QUEUE

        for term in info.required_anti_affinity_terms:
            if old_labels is None:
                # Any new node may do: one without the key accepts the pod outright, and
                # which pods share a domain with one that has it is not checked here.
                return QueueingHint.QUEUE
            key = term.topology_key
            old_value = old_labels.get(key)
            new_value = new_labels.get(key)
            # Gaining the key never helps anti-affinity: a node without it accepts the pod.
            if old_value is not None and new_value is None:
                return QueueingHint.QUEUE
            if old_value is not None and new_value is not None and old_value != new_value:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
