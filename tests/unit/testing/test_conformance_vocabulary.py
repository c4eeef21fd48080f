"""The kit reaches what a plugin reads: labels, taints, resources and objects it is told or
learns, so a label-driven score out of range is found, and reported in a few lines."""

from __future__ import annotations

from typing import ClassVar, Final

import pytest
from hypothesis import Phase, settings

from schedframe import framework as fw
from schedframe.objects import CustomObject, ObjectMeta, Pod
from schedframe.testing.conformance import (
    ConformanceError,
    Vocabulary,
    check_plugin,
    learn_vocabulary,
)
from schedframe.testing.strategies import Cluster

NO_SHRINK = settings(database=None, phases=[Phase.explicit, Phase.generate], derandomize=True)
SCORE_LABEL: Final = "example.com/score"


class LabelScore(fw.ScorePlugin):
    """Scores a node by its ``example.com/score`` label, unclamped: broken above 100."""

    name: ClassVar[str] = "LabelScore"

    def __init__(self, args: object, handle: fw.Handle) -> None:
        self.handle = handle

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        node = node_info.node
        assert node is not None
        raw = node.metadata.labels.get(SCORE_LABEL, "0")
        return int(raw) if raw.isdigit() else 0


def _dynamic_key() -> str:
    return "example.com/" + "hidden"


class HiddenLabelScore(LabelScore):
    """The same flaw behind a key built at run time: nothing to learn statically."""

    name: ClassVar[str] = "HiddenLabelScore"

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        node = node_info.node
        assert node is not None
        raw = node.metadata.labels.get(_dynamic_key(), "0")
        return int(raw) if raw.isdigit() else 0


class QuotaScore(fw.ScorePlugin):
    """Scores by a custom object's ``spec.weight``, read through a lister."""

    name: ClassVar[str] = "QuotaScore"

    def __init__(self, args: object, handle: fw.Handle) -> None:
        self.quotas = handle.lister("Quota")

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        total = 0
        for q in self.quotas.list():
            assert isinstance(q, CustomObject)
            weight = q.spec.get("weight")
            total += weight if isinstance(weight, int) else 0
        return total


def test_the_plugins_label_is_learned_and_the_bad_score_found() -> None:
    assert SCORE_LABEL in learn_vocabulary(LabelScore).node_labels
    with pytest.raises(ConformanceError) as err:
        check_plugin(LabelScore, max_examples=60, settings=NO_SHRINK)
    assert err.value.check == "score-range"
    # One finding, in a few lines (one per object of the minimal example).
    text = str(err.value)
    assert len(text.splitlines()) < 30, text
    assert "Falsifying" not in text


def test_without_the_vocabulary_the_flaw_is_missed() -> None:
    check_plugin(LabelScore, max_examples=30, settings=NO_SHRINK, learn=False)


def test_a_key_built_at_run_time_is_told() -> None:
    assert learn_vocabulary(HiddenLabelScore).node_labels.keys() == {SCORE_LABEL}  # the base's
    check_plugin(HiddenLabelScore, max_examples=30, settings=NO_SHRINK, learn=False)
    with pytest.raises(ConformanceError, match="score-range"):
        check_plugin(
            HiddenLabelScore,
            max_examples=60,
            settings=NO_SHRINK,
            learn=False,
            vocabulary=Vocabulary(node_labels={"example.com/hidden": ("5", "120")}),
        )


def test_objects_are_listed_through_the_handle() -> None:
    def quota(weight: int) -> CustomObject:
        return CustomObject(
            api_version="example.com/v1",
            kind="Quota",
            metadata=ObjectMeta(name=f"q{weight}", namespace="default"),
            body={"spec": {"weight": weight}},
        )

    check_plugin(QuotaScore, max_examples=10, settings=NO_SHRINK)
    check_plugin(
        QuotaScore, max_examples=10, settings=NO_SHRINK, vocabulary=Vocabulary(objects=[quota(40)])
    )
    with pytest.raises(ConformanceError, match="score-range"):
        check_plugin(
            QuotaScore,
            max_examples=10,
            settings=NO_SHRINK,
            vocabulary=Vocabulary(objects=[quota(60), quota(70)]),
        )


def test_taints_and_resources_reach_pods_and_nodes() -> None:
    from hypothesis import given

    from schedframe.testing import strategies as sst
    from schedframe.testing.conformance import default_clusters

    vocab = Vocabulary(taint_keys=["example.com/t"], resources=["example.com/fpga"])
    seen: dict[str, bool] = {"taint": False, "capacity": False, "request": False}

    @NO_SHRINK
    @given(default_clusters(vocabulary=vocab), vocab.pods(sst.pods()))
    def draw(cluster: Cluster, pod: Pod) -> None:
        for node in cluster.nodes:
            seen["taint"] |= any(t.key == "example.com/t" for t in node.spec.taints)
            seen["capacity"] |= "example.com/fpga" in node.status.allocatable
        seen["request"] |= "example.com/fpga" in pod.requests

    draw()
    assert seen == {"taint": True, "capacity": True, "request": True}
