"""The NodeAffinity plugin (upstream ``nodeaffinity/node_affinity.go``).

Filter enforces the pod's ``nodeSelector`` and required node affinity, plus the profile's
``addedAffinity``; Score sums the weights of the preferred terms a node matches (the pod's and
``addedAffinity``'s). PreFilter narrows the candidate nodes when every required term pins
``metadata.name`` values, as DaemonSet pods do.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import ClassVar, Final

import attrs

from schedframe import framework as fw
from schedframe.errors import UNKNOWN_FIELD, ConfigError, FieldIssue, ManifestError
from schedframe.objects import (
    Affinity,
    Node,
    NodeSelector,
    ObjectMeta,
    Pod,
    PodSpec,
)
from schedframe.objects import NodeAffinity as NodeAffinitySpec
from schedframe_plugins import names
from schedframe_plugins._helper import default_normalize_score
from schedframe_plugins.nodeaffinity._helpers import (
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
    required_node_selector,
)
from schedframe_plugins.nodeaffinity._validation import (
    node_selector_issues,
    preferred_terms_issues,
)

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NodeAffinity",
    "NodeAffinityArgs",
]


@functools.cache
def _regex(pattern: str) -> re.Pattern[str]:
    # Compiled on first use: compiling every validation pattern at import time was a large
    # part of building a profile, and most profiles never validate what they match.
    return re.compile(pattern)


#: The pod's ``nodeSelector`` or required node affinity does not match the node.
ERR_REASON_POD: Final = "node(s) didn't match Pod's node affinity/selector"
#: The profile's ``addedAffinity`` does not match the node.
ERR_REASON_ENFORCED: Final = "node(s) didn't match scheduler-enforced node affinity"
#: Every required term pins node names and no name satisfies them all.
ERR_REASON_CONFLICT: Final = "pod affinity terms conflict"

_OBJECT_NAME_FIELD: Final = "metadata.name"
_REQUIRED_K8S: Final = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED_K8S: Final = "preferredDuringSchedulingIgnoredDuringExecution"


# -- args ---------------------------------------------------------------------------------------

_POD_AFFINITY_PATH: Final = "spec.affinity.nodeAffinity"


def node_affinity_from_dict(data: object) -> NodeAffinitySpec:
    """Decode a Kubernetes ``v1.NodeAffinity`` mapping with the objects codec.

    The mapping is read as the ``nodeAffinity`` of a pod, so the codec's checks apply; its
    issues are reported with paths relative to the mapping.

    Raises:
        ConfigError: the mapping does not decode.
        TypeError: ``data`` is not a mapping.
    """
    if not isinstance(data, Mapping):
        raise TypeError("expected an object")
    unknown = _unknown_fields(data, _NODE_AFFINITY_FIELDS, "")
    if unknown:
        raise ConfigError(unknown)
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        # A wrapper the API server would accept, so that only the affinity can be wrong.
        "metadata": {"name": "added-affinity"},
        "spec": {"containers": [{"name": "c"}], "affinity": {"nodeAffinity": dict(data)}},
    }
    from schedframe.objects import pod_from_dict

    try:
        pod = pod_from_dict(manifest)
    except ManifestError as exc:
        raise ConfigError([_relative(issue) for issue in exc.issues]) from None
    affinity = pod.spec.affinity
    assert affinity is not None and affinity.node_affinity is not None
    return affinity.node_affinity


# The fields of v1.NodeAffinity and what it holds: a field name maps to the fields of its
# object (or of each item of its list); ``None`` is a leaf.
_REQUIREMENT_FIELDS: Final[Mapping[str, object]] = {"key": None, "operator": None, "values": None}
_TERM_FIELDS: Final[Mapping[str, object]] = {
    "matchExpressions": _REQUIREMENT_FIELDS,
    "matchFields": _REQUIREMENT_FIELDS,
}
_NODE_AFFINITY_FIELDS: Final[Mapping[str, object]] = {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": _TERM_FIELDS},
    "preferredDuringSchedulingIgnoredDuringExecution": {
        "weight": None,
        "preference": _TERM_FIELDS,
    },
}


def _unknown_fields(data: object, fields: Mapping[str, object], path: str) -> list[FieldIssue]:
    """Unknown field issues in ``data`` against ``fields``, as upstream's strict decoding of
    ``pluginConfig`` args reports them (a typo'd ``matchExpresions`` would otherwise drop the
    restriction silently: the objects codec reads pods leniently)."""
    if isinstance(data, list):
        found: list[FieldIssue] = []
        for i, item in enumerate(data):
            found.extend(_unknown_fields(item, fields, f"{path}[{i}]"))
        return found
    if not isinstance(data, Mapping):
        return []  # a wrong type is the codec's to report
    found = []
    for key, value in data.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in fields:
            found.append(FieldIssue(path=where, kind=UNKNOWN_FIELD))
            continue
        inner = fields[key]
        if isinstance(inner, Mapping):
            found.extend(_unknown_fields(value, inner, where))
    return found


_PREFERENCE_IN_PATH: Final = re.escape(_PREFERRED_K8S) + r"(\[\d+\])\.preference(?=\.|$)"


def _relative(issue: FieldIssue) -> FieldIssue:
    # Paths relative to the NodeAffinity; a preferred term's requirements are reported without
    # the ".preference" step, as upstream's ValidateNodeAffinityArgs paths read.
    path = issue.path
    if path == _POD_AFFINITY_PATH:
        path = ""
    elif path.startswith(_POD_AFFINITY_PATH + "."):
        path = path[len(_POD_AFFINITY_PATH) + 1 :]
    path = _regex(_PREFERENCE_IN_PATH).sub(lambda m: _PREFERRED_K8S + m.group(1), path)
    return attrs.evolve(issue, path=path)


def node_affinity_to_dict(affinity: NodeAffinitySpec) -> dict[str, object]:
    """The Kubernetes mapping of ``affinity`` (inverse of :func:`node_affinity_from_dict`)."""
    from schedframe.objects import to_dict

    pod = Pod(
        metadata=ObjectMeta(name="addedAffinity"),
        spec=PodSpec(affinity=Affinity(node_affinity=affinity)),
    )
    spec = to_dict(pod)["spec"]
    assert isinstance(spec, dict)
    out = spec["affinity"]["nodeAffinity"]
    assert isinstance(out, dict)
    return out


def _to_node_affinity(value: object) -> NodeAffinitySpec | None:
    if value is None or isinstance(value, NodeAffinitySpec):
        return value
    return node_affinity_from_dict(value)


@attrs.frozen(kw_only=True)
class NodeAffinityArgs:
    """Args of NodeAffinity (upstream ``NodeAffinityArgs``).

    ``added_affinity`` (``addedAffinity``) is ANDed with every pod's node affinity: its
    required selector must match too, and its preferred terms add to every node's score. In
    configuration it is written as a Kubernetes ``NodeAffinity`` (with
    ``requiredDuringSchedulingIgnoredDuringExecution`` and
    ``preferredDuringSchedulingIgnoredDuringExecution``).
    """

    added_affinity: NodeAffinitySpec | None = attrs.field(
        default=None,
        converter=_to_node_affinity,
        metadata={"k8s_decode": node_affinity_from_dict, "k8s_encode": node_affinity_to_dict},
    )

    def validate(self) -> list[FieldIssue]:
        """Upstream ``ValidateNodeAffinityArgs``: both parts must parse as node selectors."""
        affinity = self.added_affinity
        if affinity is None:
            return []
        issues: list[FieldIssue] = []
        if affinity.required is not None:
            issues.extend(node_selector_issues(affinity.required, f"addedAffinity.{_REQUIRED_K8S}"))
        if affinity.preferred:
            issues.extend(
                preferred_terms_issues(affinity.preferred, f"addedAffinity.{_PREFERRED_K8S}")
            )
        return issues


# -- cycle state ----------------------------------------------------------------------------------


class _PreScoreState:
    __slots__ = ("preferred_node_affinity",)

    def __init__(self, preferred: PreferredSchedulingTerms | None) -> None:
        self.preferred_node_affinity = preferred


_PRE_FILTER_KEY: Final = fw.StateKey[RequiredNodeAffinity]("PreFilter" + names.NODE_AFFINITY)
_PRE_SCORE_KEY: Final = fw.StateKey[_PreScoreState]("PreScore" + names.NODE_AFFINITY)


def _pod_preferred_node_affinity(pod: Pod) -> PreferredSchedulingTerms | None:
    affinity = pod.spec.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    preferred = affinity.node_affinity.preferred
    # Upstream tests the slice for nil; an empty tuple is the closest we can tell apart.
    if not preferred:
        return None
    return PreferredSchedulingTerms(preferred)


def _as(cls: type, old_obj: object, new_obj: object) -> None:
    # Upstream util.As: a non-nil object of the wrong type is an error (the hint then queues).
    for obj in (new_obj, old_obj):
        if obj is not None and not isinstance(obj, cls):
            raise TypeError(f"expected {cls.__name__}, but got {type(obj).__name__}")


# -- plugin ---------------------------------------------------------------------------------------


class NodeAffinity(
    fw.PreFilterPlugin,
    fw.FilterPlugin,
    fw.PreScorePlugin,
    fw.ScorePlugin,
    fw.ScoreExtensions,
    fw.EnqueueExtensions,
):
    """Checks a pod's node selector and node affinity; scores its preferred terms.

    Upstream: ``pkg/scheduler/framework/plugins/nodeaffinity.NodeAffinity``.
    """

    name: ClassVar[str] = names.NODE_AFFINITY
    #: Filter reads the Node object only, never the pods on it.
    filter_reads_node_pods: ClassVar[bool] = False
    args_type: ClassVar[type | None] = NodeAffinityArgs

    def __init__(self, args: NodeAffinityArgs | None, handle: fw.Handle) -> None:
        self._handle = handle
        self._added_node_selector: NodeSelector | None = None
        self._added_pref_sched_terms: PreferredSchedulingTerms | None = None
        if args is None:
            args = NodeAffinityArgs()
        issues = args.validate()
        if issues:
            raise ConfigError(issues)
        added = args.added_affinity
        if added is not None:
            if added.required is not None:
                self._added_node_selector = added.required
            if added.preferred:
                self._added_pref_sched_terms = PreferredSchedulingTerms(
                    added.preferred, path=f"addedAffinity.{_PREFERRED_K8S}"
                )

    # -- EnqueueExtensions --------------------------------------------------------------------

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """Node added or relabelled (queueing hints on, so no UpdateNodeTaint is needed)."""
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(
                    fw.EventResource.NODE, fw.ActionType.ADD | fw.ActionType.UPDATE_NODE_LABEL
                ),
                self.is_schedulable_after_node_change,
            ),
        )

    def _matches_added(self, node: Node) -> bool:
        selector = self._added_node_selector
        return selector is None or selector.matches(node.metadata.name, node.metadata.labels)

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when an added node matches, or an updated node newly matches."""
        _as(Node, old_obj, new_obj)
        assert isinstance(new_obj, Node)
        if not self._matches_added(new_obj):
            return fw.QueueingHint.QUEUE_SKIP
        required = RequiredNodeAffinity(pod)
        if not required.matches(new_obj):
            return fw.QueueingHint.QUEUE_SKIP
        if old_obj is None:
            return fw.QueueingHint.QUEUE
        assert isinstance(old_obj, Node)
        if required.matches(old_obj):
            return fw.QueueingHint.QUEUE_SKIP
        return fw.QueueingHint.QUEUE

    # -- PreFilter / Filter ---------------------------------------------------------------------

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Skip when nothing constrains the pod; narrow to pinned node names when possible."""
        required = required_node_selector(pod)
        if required is None and self._added_node_selector is None and not pod.spec.node_selector:
            return fw.Status(fw.Code.SKIP)

        state[_PRE_FILTER_KEY] = RequiredNodeAffinity(pod)

        if required is None or not required.node_selector_terms:
            return None

        # A term pins node names when it has `metadata.name In (...)` field requirements (ANDed:
        # intersected); terms are ORed, so every term must pin names for a narrowed result.
        node_names: set[str] | None = None
        for term in required.node_selector_terms:
            term_names: set[str] | None = None
            for req in term.match_fields:
                if req.key == _OBJECT_NAME_FIELD and req.operator == "In":
                    values = set(req.values)
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return None
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        if node_names:
            return fw.PreFilterResult(frozenset(node_names))
        return None

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """Reject a node that fails ``addedAffinity`` or the pod's selector/required affinity."""
        node = node_info.node
        if node is None:
            return fw.Status(fw.Code.ERROR, "node not found")
        if not self._matches_added(node):
            return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        required = state.get(_PRE_FILTER_KEY)
        if required is None:
            # PreFilter did not run (disabled): compute it here, as upstream falls back to.
            required = RequiredNodeAffinity(pod)
        if not required.matches(node):
            return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    # -- PreScore / Score -----------------------------------------------------------------------

    def pre_score(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.Status | None:
        """Parse the pod's preferred terms; Skip when neither the pod nor the args have any."""
        try:
            preferred = _pod_preferred_node_affinity(pod)
        except ValueError as err:
            return fw.Status.from_error(err)
        if preferred is None and self._added_pref_sched_terms is None:
            return fw.Status(fw.Code.SKIP)
        state[_PRE_SCORE_KEY] = _PreScoreState(preferred)
        return None

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        """The sum of the weights of the preferred terms (pod's and added) the node matches."""
        node = node_info.node
        if node is None:
            raise ValueError("node not found")
        count = 0
        if self._added_pref_sched_terms is not None:
            count += self._added_pref_sched_terms.score(node)
        s = state.get(_PRE_SCORE_KEY)
        # PreScore did not run (disabled): parse the terms here, as upstream falls back to.
        preferred = (
            s.preferred_node_affinity if s is not None else _pod_preferred_node_affinity(pod)
        )
        if preferred is not None:
            count += preferred.score(node)
        return count

    def normalize_score(
        self, state: fw.CycleState, pod: Pod, scores: fw.NodeScoreList
    ) -> fw.Status | None:
        """Scale so the best node gets ``MAX_NODE_SCORE``."""
        default_normalize_score(fw.MAX_NODE_SCORE, False, scores)
        return None
