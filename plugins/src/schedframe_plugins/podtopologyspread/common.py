"""Spread constraints as the plugin uses them (upstream ``podtopologyspread/common.go``).

A pod's ``topologySpreadConstraints`` (or the plugin's default constraints) are turned once per
pod into :class:`SpreadConstraint` values: the selector resolved (``matchLabelKeys`` merged in
with the pod's own label values) and the optional fields defaulted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import attrs

from schedframe import framework as fw
from schedframe.objects import (
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    TopologySpreadConstraint,
)
from schedframe_plugins.nodeaffinity import RequiredNodeAffinity
from schedframe_plugins.tainttoleration import (
    do_not_schedule_taints_filter,
    find_matching_untolerated_taint,
)

__all__ = [
    "DO_NOT_SCHEDULE",
    "LABEL_HOSTNAME",
    "LABEL_TOPOLOGY_ZONE",
    "NODE_INCLUSION_POLICY_HONOR",
    "NODE_INCLUSION_POLICY_IGNORE",
    "SCHEDULE_ANYWAY",
    "SpreadConstraint",
    "count_pods_match_selector",
    "default_selector",
    "filter_topology_spread_constraints",
    "node_labels_match_spread_constraints",
    "pod_labels_match_spread_constraints",
]

#: The well-known node labels (upstream ``v1.LabelHostname`` / ``v1.LabelTopologyZone``).
LABEL_HOSTNAME: Final = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE: Final = "topology.kubernetes.io/zone"
#: ``whenUnsatisfiable`` values.
DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
#: ``nodeAffinityPolicy`` / ``nodeTaintsPolicy`` values.
NODE_INCLUSION_POLICY_HONOR: Final = "Honor"
NODE_INCLUSION_POLICY_IGNORE: Final = "Ignore"


@attrs.frozen
class SpreadConstraint:
    """A spread constraint with its selector resolved (upstream ``topologySpreadConstraint``).

    ``selector`` ``None`` stands for upstream's ``labels.Nothing()`` (a constraint without a
    label selector): it matches no pod.
    """

    max_skew: int
    topology_key: str
    selector: LabelSelector | None
    min_domains: int = 1
    node_affinity_policy: str = NODE_INCLUSION_POLICY_HONOR
    node_taints_policy: str = NODE_INCLUSION_POLICY_IGNORE

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a pod with ``labels`` is counted by this constraint."""
        selector = self.selector
        return selector is not None and selector.matches(labels)

    def match_node_inclusion_policies(
        self, pod: Pod, node: Node, required: RequiredNodeAffinity
    ) -> bool:
        """Whether ``node`` takes part in spreading under the inclusion policies."""
        if self.node_affinity_policy == NODE_INCLUSION_POLICY_HONOR and not required.matches(node):
            return False
        if self.node_taints_policy == NODE_INCLUSION_POLICY_HONOR:
            untolerated = find_matching_untolerated_taint(
                node.spec.taints, pod.spec.tolerations, do_not_schedule_taints_filter
            )
            if untolerated is not None:
                return False
        return True


def _merge_label_set_with_selector(
    match_labels: Mapping[str, str], selector: LabelSelector | None
) -> LabelSelector | None:
    # Upstream mergeLabelSetWithSelector: the selector's requirements ANDed with key=value
    # requirements; a "nothing" selector has no requirements to merge and stays nothing.
    if selector is None:
        return None
    extra = tuple(
        LabelSelectorRequirement(key=k, operator="In", values=(v,)) for k, v in match_labels.items()
    )
    return LabelSelector(
        match_labels=dict(selector.match_labels),
        match_expressions=extra + selector.match_expressions,
    )


def filter_topology_spread_constraints(
    constraints: Iterable[TopologySpreadConstraint],
    pod_labels: Mapping[str, str],
    action: str,
) -> list[SpreadConstraint]:
    """The constraints whose ``whenUnsatisfiable`` is ``action``, resolved.

    Mirrors upstream ``filterTopologySpreadConstraints`` with the MatchLabelKeys and
    NodeInclusionPolicy features on (their default): ``matchLabelKeys`` present in the pod's
    labels are ANDed into the selector; ``minDomains`` defaults to 1, ``nodeAffinityPolicy`` to
    ``Honor`` and ``nodeTaintsPolicy`` to ``Ignore``.
    """
    result: list[SpreadConstraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = c.label_selector
        if c.match_label_keys:
            match_labels = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if match_labels:
                selector = _merge_label_set_with_selector(match_labels, selector)
        result.append(
            SpreadConstraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=1 if c.min_domains is None else c.min_domains,
                node_affinity_policy=c.node_affinity_policy or NODE_INCLUSION_POLICY_HONOR,
                node_taints_policy=c.node_taints_policy or NODE_INCLUSION_POLICY_IGNORE,
            )
        )
    return result


# The owner kinds whose selector default spreading adds (upstream rcKind, rsKind, ssKind).
_OWNER_KINDS: Final = {
    ("", "v1", "ReplicationController"),
    ("apps", "v1", "ReplicaSet"),
    ("apps", "v1", "StatefulSet"),
}


def _as_requirements(selector: LabelSelector) -> tuple[LabelSelectorRequirement, ...]:
    # metav1.LabelSelectorAsSelector: every matchLabels pair is an In requirement.
    pairs = tuple(
        LabelSelectorRequirement(key=k, operator="In", values=(v,))
        for k, v in selector.match_labels.items()
    )
    return pairs + selector.match_expressions


def default_selector(pod: Pod, lister: fw.WorkloadLister) -> LabelSelector:
    """The selector default constraints use for ``pod`` (upstream ``helper.DefaultSelector``).

    The label sets of the pod's namespace's Services whose selector matches the pod (a
    Service without a selector matches none), merged; then, when the pod's controller is a
    ReplicationController, its selector merged in as well, or when it is a ReplicaSet or
    StatefulSet, that object's selector's requirements added. An owner that is missing from
    the lister, or of another kind, adds nothing.
    """
    labels: dict[str, str] = {}
    pod_labels = pod.labels
    for service in lister.services(pod.namespace):
        wanted = service.selector
        if wanted is None:
            continue
        if all(pod_labels.get(k) == v for k, v in wanted.items()):
            labels.update(wanted)
    owner = pod.metadata.controller_ref
    if owner is None:
        return LabelSelector(match_labels=labels)
    group, _, version = owner.api_version.rpartition("/")
    if (group, version, owner.kind) not in _OWNER_KINDS:
        return LabelSelector(match_labels=labels)
    namespace = pod.namespace
    if owner.kind == "ReplicationController":
        rc = lister.replication_controller(namespace, owner.name)
        if rc is not None:
            labels.update(rc.selector)
        return LabelSelector(match_labels=labels)
    found = (
        lister.replica_set(namespace, owner.name)
        if owner.kind == "ReplicaSet"
        else lister.stateful_set(namespace, owner.name)
    )
    if found is None:
        return LabelSelector(match_labels=labels)
    return LabelSelector(match_labels=labels, match_expressions=_as_requirements(found.selector))


def build_default_constraints(
    default_constraints: Sequence[TopologySpreadConstraint],
    pod: Pod,
    action: str,
    lister: fw.WorkloadLister,
) -> list[SpreadConstraint]:
    """Default constraints for a pod without its own (upstream ``buildDefaultConstraints``):
    those of ``action``, each with the pod's :func:`default_selector`; none when that
    selector is empty."""
    constraints = filter_topology_spread_constraints(default_constraints, pod.labels, action)
    if not constraints:
        return []
    selector = default_selector(pod, lister)
    if selector.is_empty:
        return []
    return [attrs.evolve(c, selector=selector) for c in constraints]


def node_labels_match_spread_constraints(
    node_labels: Mapping[str, str], constraints: Sequence[SpreadConstraint]
) -> bool:
    """Whether the node has every constraint's topology key."""
    for c in constraints:
        if c.topology_key not in node_labels:
            return False
    return True


def count_pods_match_selector(
    pod_infos: Sequence[fw.PodInfo], selector: LabelSelector | None, namespace: str
) -> int:
    """Pods in ``namespace``, not terminating, that ``selector`` matches.

    As upstream, an *empty* selector counts nothing (``labels.Everything().Empty()``), and a
    missing one (``None``, upstream's ``labels.Nothing()``) matches nothing either.
    """
    if selector is None or selector.is_empty:
        return 0
    count = 0
    for info in pod_infos:
        p = info.pod
        meta = p.metadata
        # Terminating pods do not count (upstream #87621).
        if meta.deletion_timestamp is not None or meta.namespace != namespace:
            continue
        if selector.matches(meta.labels):
            count += 1
    return count


def pod_labels_match_spread_constraints(
    constraints: Sequence[SpreadConstraint], labels: Mapping[str, str]
) -> bool:
    """Whether any constraint's selector matches ``labels``."""
    return any(c.matches(labels) for c in constraints)
