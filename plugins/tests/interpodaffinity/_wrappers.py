"""Small builders for the InterPodAffinity tests, in the spirit of upstream ``st.MakePod()``.

Pods built here default to the empty namespace, as upstream's test pods do, so the tables read
like the Go ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.objects import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    ObjectMeta,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    PodSpec,
    PodStatus,
    WeightedPodAffinityTerm,
)
from schedframe.runtime import Framework

Kind = Literal["required", "preferred"]
REQUIRED: Kind = "required"
PREFERRED: Kind = "preferred"


def req(key: str, operator: str, *values: str) -> LabelSelectorRequirement:
    """A label selector requirement."""
    return LabelSelectorRequirement(key=key, operator=operator, values=values)


def selector(
    *expressions: LabelSelectorRequirement, match_labels: Mapping[str, str] | None = None
) -> LabelSelector:
    """A label selector from expressions (and optional matchLabels)."""
    return LabelSelector(match_labels=dict(match_labels or {}), match_expressions=expressions)


def term(
    label_selector: LabelSelector | None,
    topology_key: str = "",
    *,
    namespaces: Sequence[str] = (),
    namespace_selector: LabelSelector | None = None,
) -> PodAffinityTerm:
    """A pod (anti-)affinity term."""
    return PodAffinityTerm(
        label_selector=label_selector,
        topology_key=topology_key,
        namespaces=tuple(namespaces),
        namespace_selector=namespace_selector,
    )


def weighted(weight: int, t: PodAffinityTerm) -> WeightedPodAffinityTerm:
    """A preferred term with its weight."""
    return WeightedPodAffinityTerm(weight=weight, term=t)


def affinity(
    *,
    required: Sequence[PodAffinityTerm] = (),
    preferred: Sequence[WeightedPodAffinityTerm] = (),
    anti_required: Sequence[PodAffinityTerm] = (),
    anti_preferred: Sequence[WeightedPodAffinityTerm] = (),
) -> Affinity:
    """An Affinity; a side is present only when it has terms."""
    pod_affinity = (
        PodAffinity(required=tuple(required), preferred=tuple(preferred))
        if required or preferred
        else None
    )
    pod_anti_affinity = (
        PodAntiAffinity(required=tuple(anti_required), preferred=tuple(anti_preferred))
        if anti_required or anti_preferred
        else None
    )
    return Affinity(pod_affinity=pod_affinity, pod_anti_affinity=pod_anti_affinity)


def pod(
    name: str = "",
    *,
    namespace: str = "",
    uid: str = "",
    node: str = "",
    labels: Mapping[str, str] | None = None,
    affinity: Affinity | None = None,
    nominated: str = "",
) -> Pod:
    """A pod built directly (``&v1.Pod{...}`` in the Go tables)."""
    return Pod(
        metadata=ObjectMeta(name=name, namespace=namespace, uid=uid, labels=dict(labels or {})),
        spec=PodSpec(node_name=node, affinity=affinity),
        status=PodStatus(nominated_node_name=nominated),
    )


def both_sides(
    *,
    namespace: str = "",
    node: str = "",
    labels: Mapping[str, str] | None = None,
    affinity_terms: Sequence[PodAffinityTerm] = (),
    anti_affinity_terms: Sequence[PodAffinityTerm] = (),
) -> Pod:
    """Upstream ``createPodWithAffinityTerms``: both sides present even when empty."""
    return pod(
        namespace=namespace,
        node=node,
        labels=labels,
        affinity=Affinity(
            pod_affinity=PodAffinity(required=tuple(affinity_terms)),
            pod_anti_affinity=PodAntiAffinity(required=tuple(anti_affinity_terms)),
        ),
    )


class PodWrapper:
    """A fluent pod builder mirroring the parts of ``st.MakePod()`` the tables use."""

    def __init__(self) -> None:
        self._meta: dict[str, Any] = {"name": "", "namespace": "", "uid": "", "labels": {}}
        self._node = ""
        self._nominated = ""
        self._affinity_required: list[PodAffinityTerm] = []
        self._affinity_preferred: list[WeightedPodAffinityTerm] = []
        self._anti_required: list[PodAffinityTerm] = []
        self._anti_preferred: list[WeightedPodAffinityTerm] = []

    def name(self, name: str) -> PodWrapper:
        self._meta["name"] = name
        return self

    def uid(self, uid: str) -> PodWrapper:
        self._meta["uid"] = uid
        return self

    def namespace(self, namespace: str) -> PodWrapper:
        self._meta["namespace"] = namespace
        return self

    def node(self, node: str) -> PodWrapper:
        self._node = node
        return self

    def nominated(self, node: str) -> PodWrapper:
        self._nominated = node
        return self

    def label(self, key: str, value: str) -> PodWrapper:
        self._meta["labels"][key] = value
        return self

    def labels(self, labels: Mapping[str, str]) -> PodWrapper:
        self._meta["labels"].update(labels)
        return self

    def _add(self, anti: bool, kind: Kind, t: PodAffinityTerm) -> PodWrapper:
        if kind == REQUIRED:
            (self._anti_required if anti else self._affinity_required).append(t)
        else:
            # Upstream's wrapper gives preferred terms weight 1.
            (self._anti_preferred if anti else self._affinity_preferred).append(weighted(1, t))
        return self

    def pod_affinity(self, topology_key: str, sel: LabelSelector, kind: Kind) -> PodWrapper:
        return self._add(False, kind, term(sel, topology_key))

    def pod_anti_affinity(self, topology_key: str, sel: LabelSelector, kind: Kind) -> PodWrapper:
        return self._add(True, kind, term(sel, topology_key))

    def pod_affinity_in(
        self, key: str, topology_key: str, values: Iterable[str], kind: Kind
    ) -> PodWrapper:
        return self.pod_affinity(topology_key, selector(req(key, "In", *values)), kind)

    def pod_affinity_not_in(
        self, key: str, topology_key: str, values: Iterable[str], kind: Kind
    ) -> PodWrapper:
        return self.pod_affinity(topology_key, selector(req(key, "NotIn", *values)), kind)

    def pod_affinity_exists(self, key: str, topology_key: str, kind: Kind) -> PodWrapper:
        return self.pod_affinity(topology_key, selector(req(key, "Exists")), kind)

    def pod_anti_affinity_in(
        self, key: str, topology_key: str, values: Iterable[str], kind: Kind
    ) -> PodWrapper:
        return self.pod_anti_affinity(topology_key, selector(req(key, "In", *values)), kind)

    def pod_anti_affinity_not_in(
        self, key: str, topology_key: str, values: Iterable[str], kind: Kind
    ) -> PodWrapper:
        return self.pod_anti_affinity(topology_key, selector(req(key, "NotIn", *values)), kind)

    def pod_anti_affinity_exists(self, key: str, topology_key: str, kind: Kind) -> PodWrapper:
        return self.pod_anti_affinity(topology_key, selector(req(key, "Exists")), kind)

    def obj(self) -> Pod:
        aff: Affinity | None = None
        if (
            self._affinity_required
            or self._affinity_preferred
            or self._anti_required
            or self._anti_preferred
        ):
            aff = affinity(
                required=self._affinity_required,
                preferred=self._affinity_preferred,
                anti_required=self._anti_required,
                anti_preferred=self._anti_preferred,
            )
        return Pod(
            metadata=ObjectMeta(**self._meta),
            spec=PodSpec(node_name=self._node, affinity=aff),
            status=PodStatus(nominated_node_name=self._nominated),
        )


def make_pod() -> PodWrapper:
    """A new :class:`PodWrapper`."""
    return PodWrapper()


def node(name: str, labels: Mapping[str, str] | None = None) -> Node:
    """A node with labels."""
    return Node(metadata=ObjectMeta(name=name, labels=dict(labels or {})))


def namespace(name: str, labels: Mapping[str, str] | None = None) -> Namespace:
    """A namespace with labels."""
    return Namespace(metadata=ObjectMeta(name=name, labels=dict(labels or {})))


#: Upstream scoring_test.go ``namespaces``, shared by the filtering and scoring tables.
NAMESPACES: tuple[Namespace, ...] = (
    namespace("subteam1.team1", {"team": "team1"}),
    namespace("subteam2.team1", {"team": "team1"}),
    namespace("subteam1.team2", {"team": "team2"}),
    namespace("subteam2.team2", {"team": "team2"}),
)


def make_handle(snapshot: Snapshot, namespaces: Iterable[Namespace] = ()) -> fw.Handle:
    """A plugin-less Framework: a complete Handle over ``snapshot`` and ``namespaces``."""
    return Framework(snapshot=snapshot, namespaces=tuple(namespaces))
