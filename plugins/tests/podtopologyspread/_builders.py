"""Small builders in the spirit of upstream's ``st.MakePod()`` / ``st.MakeNode()`` wrappers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.objects import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeSpec,
    ObjectMeta,
    Pod,
    PodSpec,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from schedframe.runtime import Framework

DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def exists(*keys: str) -> LabelSelector:
    """``st.MakeLabelSelector().Exists(k)...``."""
    return LabelSelector(
        match_expressions=tuple(LabelSelectorRequirement(key=k, operator="Exists") for k in keys)
    )


def labels_sel(**labels: str) -> LabelSelector:
    """``st.MakeLabelSelector().Label(k, v)...``."""
    return LabelSelector(match_labels=dict(labels))


FOO = exists("foo")
BAR = exists("bar")
UNSCHEDULABLE_TAINTS = (Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule"),)


def spread(
    max_skew: int,
    key: str,
    when: str,
    selector: LabelSelector | None,
    min_domains: int | None = None,
    affinity_policy: str | None = None,
    taints_policy: str | None = None,
    match_label_keys: Sequence[str] = (),
) -> TopologySpreadConstraint:
    """``SpreadConstraint(maxSkew, key, when, selector, minDomains, aff, taints, keys)``."""
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=key,
        when_unsatisfiable=when,
        label_selector=selector,
        min_domains=min_domains,
        node_affinity_policy=affinity_policy,
        node_taints_policy=taints_policy,
        match_label_keys=tuple(match_label_keys),
    )


def pod(
    name: str,
    *,
    ns: str = "",
    uid: str | None = None,
    labels: Mapping[str, str] | None = None,
    node: str = "",
    spreads: Sequence[TopologySpreadConstraint] = (),
    node_selector: Mapping[str, str] | None = None,
    affinity_in: tuple[str, Sequence[str]] | None = None,
    affinity_not_in: tuple[str, Sequence[str]] | None = None,
    tolerations: Sequence[Toleration] = (),
    terminating: bool = False,
) -> Pod:
    """A pod; ``affinity_in``/``affinity_not_in`` add one required match expression."""
    affinity = None
    reqs = []
    if affinity_in is not None:
        reqs.append(
            NodeSelectorRequirement(key=affinity_in[0], operator="In", values=tuple(affinity_in[1]))
        )
    if affinity_not_in is not None:
        reqs.append(
            NodeSelectorRequirement(
                key=affinity_not_in[0], operator="NotIn", values=tuple(affinity_not_in[1])
            )
        )
    if reqs:
        affinity = Affinity(
            node_affinity=NodeAffinity(
                required=NodeSelector(
                    node_selector_terms=(NodeSelectorTerm(match_expressions=tuple(reqs)),)
                )
            )
        )
    return Pod(
        metadata=ObjectMeta(
            name=name,
            namespace=ns,
            uid=uid if uid is not None else f"{ns}/{name}",
            labels=dict(labels or {}),
            deletion_timestamp=datetime(2024, 1, 1, tzinfo=UTC) if terminating else None,
        ),
        spec=PodSpec(
            node_name=node,
            node_selector=dict(node_selector or {}),
            affinity=affinity,
            tolerations=tuple(tolerations),
            topology_spread_constraints=tuple(spreads),
        ),
    )


def node(name: str, labels: Mapping[str, str] | None = None, taints: Sequence[Taint] = ()) -> Node:
    """A node with labels and taints."""
    return Node(
        metadata=ObjectMeta(name=name, uid=name, labels=dict(labels or {})),
        spec=NodeSpec(taints=tuple(taints)),
    )


def zn(name: str, zone: str, **extra: str) -> Node:
    """``st.MakeNode().Name(n).Label("zone", z).Label("node", n)`` plus extra labels."""
    return node(name, {"zone": zone, "node": name, **extra})


def cluster(nodes: Sequence[Node], pods: Sequence[Pod] = ()) -> tuple[Snapshot, Framework]:
    """A snapshot of ``nodes`` holding ``pods``, and a plugin-less Framework as the handle."""
    snap = Snapshot.from_objects(nodes, pods)
    return snap, Framework(snapshot=snap)


def run_scores(
    plugin: fw.ScorePlugin,
    state: fw.CycleState,
    p: Pod,
    infos: Sequence[fw.NodeInfo],
) -> fw.NodeScoreList:
    """Score every node then normalise, as the framework does."""
    names = [i.name for i in infos]
    scores = fw.NodeScoreList(names, [plugin.score(state, p, i) for i in infos])
    normalize = getattr(plugin, "normalize_score", None)
    if normalize is not None:
        status = normalize(state, p, scores)
        assert status is None, status
    return scores
