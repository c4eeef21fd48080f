"""Fake plugins and builders for the scheduler tests (upstream schedule_one_test.go shapes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.framework import Code, CycleState, NodeInfo, Status
from schedframe.objects import Node, NodeStatus, ObjectMeta, Pod, PodSpec, PodStatus
from schedframe.runtime import Framework

#: Upstream ``ErrReasonFake``.
ERR_REASON_FAKE = "Nodes failed the fake plugin"


def make_node(name: str, **allocatable: int) -> Node:
    alloc = {"cpu": 4000, "memory": 8 << 30, "pods": 110, **allocatable}
    return Node(
        metadata=ObjectMeta(name=name, uid=name),
        status=NodeStatus(capacity=alloc, allocatable=alloc),
    )


def make_pod(
    name: str, *, namespace: str = "default", node_name: str = "", nominated: str = ""
) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace=namespace, uid=f"{namespace}/{name}"),
        spec=PodSpec(node_name=node_name),
        status=PodStatus(nominated_node_name=nominated),
    )


class _Named:
    name: ClassVar[str] = ""

    def __init__(self, args: object = None, handle: object = None) -> None:
        pass


class FalseFilter(_Named, fw.FilterPlugin):
    name: ClassVar[str] = "FalseFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status(Code.UNSCHEDULABLE, ERR_REASON_FAKE)


class TrueFilter(_Named, fw.FilterPlugin):
    name: ClassVar[str] = "TrueFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None


class MatchFilter(_Named, fw.FilterPlugin):
    """Passes only the node named like the pod."""

    name: ClassVar[str] = "MatchFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.name == pod.name:
            return None
        return Status(Code.UNSCHEDULABLE, ERR_REASON_FAKE)


class NoPodsFilter(_Named, fw.FilterPlugin):
    name: ClassVar[str] = "NoPodsFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not node_info.pods:
            return None
        return Status(Code.UNSCHEDULABLE, ERR_REASON_FAKE)


class FakeFilter(_Named, fw.FilterPlugin):
    """Returns the code given per node name (upstream ``FakeFilterPlugin``)."""

    name: ClassVar[str] = "FakeFilter"

    def __init__(self, statuses: Mapping[str, Code]) -> None:
        self.statuses = dict(statuses)
        self.calls = 0

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.calls += 1
        code = self.statuses.get(node_info.name, Code.SUCCESS)
        if code is Code.SUCCESS:
            return None
        return Status(code, "injected filter status")


class NumericMap(_Named, fw.ScorePlugin):
    """Scores a node by its numeric name."""

    name: ClassVar[str] = "NumericMap"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return int(node_info.name)


class ReverseNumericMap(_Named, fw.ScorePlugin, fw.ScoreExtensions):
    """Scores by numeric name, normalised in reverse (highest name -> lowest score)."""

    name: ClassVar[str] = "ReverseNumericMap"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return int(node_info.name)

    def normalize_score(self, state: CycleState, pod: Pod, scores: fw.NodeScoreList) -> None:
        top = max(scores.scores)
        low = min(scores.scores)
        for i, s in enumerate(scores.scores):
            scores.scores[i] = top + low - s


class EqualScore(_Named, fw.ScorePlugin):
    name: ClassVar[str] = "EqualScore"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 50


def fake_pre_filter(
    name: str, result: fw.PreFilterResult | None = None, status: Status | None = None
) -> fw.PreFilterPlugin:
    """A PreFilter plugin named ``name`` returning ``status`` or ``result``."""

    class _P(_Named, fw.PreFilterPlugin):
        def pre_filter(
            self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
        ) -> fw.PreFilterResult | Status | None:
            if status is not None:
                return status
            return result

    _P.name = name
    _P.__name__ = name
    return _P()


def make_framework(plugins: Sequence[fw.Plugin], snapshot: Snapshot, **weights: int) -> Framework:
    fwk = Framework(snapshot=snapshot)
    for plugin in plugins:
        fwk.add_plugin(plugin, weight=weights.get(plugin.name, 1))
    return fwk
