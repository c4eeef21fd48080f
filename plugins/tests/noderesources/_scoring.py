"""Runs a NodeResourcesFit scoring strategy the way upstream's strategy tests do."""

from __future__ import annotations

from collections.abc import Sequence

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.objects import Node, Pod
from schedframe.runtime import Framework
from schedframe_plugins.noderesources import (
    Fit,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)

DEFAULT_RESOURCES = (ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1))


def specs(*pairs: tuple[str, int]) -> tuple[ResourceSpec, ...]:
    return tuple(ResourceSpec(name=n, weight=w) for n, w in pairs)


def strategy(
    kind: str,
    resources: Sequence[ResourceSpec] = DEFAULT_RESOURCES,
    shape: Sequence[tuple[int, int]] | None = None,
) -> ScoringStrategy:
    param = (
        None
        if shape is None
        else RequestedToCapacityRatioParam(
            shape=tuple(UtilizationShapePoint(utilization=u, score=s) for u, s in shape)  # type: ignore[misc]  # mypy: generic converter
        )
    )
    return ScoringStrategy(type=kind, resources=tuple(resources), requested_to_capacity_ratio=param)


def run_scores(
    scoring: ScoringStrategy, pod: Pod, nodes: Sequence[Node], existing: Sequence[Pod] = ()
) -> list[int]:
    """PreScore once, then Score every node in order."""
    snap = Snapshot.from_objects(nodes, existing)
    plugin = Fit(NodeResourcesFitArgs(scoring_strategy=scoring), Framework(snapshot=snap))
    state = fw.CycleState()
    assert plugin.pre_score(state, pod, snap.list()) is None
    return [plugin.score(state, pod, snap.get(n.name)) for n in nodes]
