"""The conformance kit's hint-soundness check: a QueueSkip must leave the pod rejected."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import pytest
from hypothesis import Phase, settings

from schedframe import framework as fw
from schedframe.objects import Node, Pod
from schedframe.testing.conformance import CHECKS, ConformanceError, check_plugin

EXAMPLES = 15
NO_SHRINK = settings(database=None, phases=[Phase.explicit, Phase.generate], derandomize=True)
#: The label the kit puts on a node it changes for an update event.
READY = "conformance.schedframe.io/changed"


class _NeedsReady(fw.FilterPlugin, fw.EnqueueExtensions):
    """Rejects nodes without the READY label; a node update may add it."""

    name: ClassVar[str] = "NeedsReady"

    def __init__(self, args: None, handle: fw.Handle) -> None:
        pass

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        node = node_info.node
        if node is None or READY not in node.metadata.labels:
            return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node not ready")
        return None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.NODE, fw.ActionType.ADD | fw.ActionType.UPDATE),
                self.hint,
            ),
        )

    def hint(self, pod: Pod, old: object, new: object) -> fw.QueueingHint:
        if isinstance(new, Node) and READY in new.metadata.labels:
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP


class _SkipsEverything(_NeedsReady):
    """Wrongly believes no node event can help."""

    name: ClassVar[str] = "SkipsEverything"

    def hint(self, pod: Pod, old: object, new: object) -> fw.QueueingHint:
        return fw.QueueingHint.QUEUE_SKIP


def test_hint_soundness_is_a_named_check() -> None:
    assert "hint-soundness" in CHECKS


def test_a_sound_hint_passes() -> None:
    check_plugin(_NeedsReady, max_examples=EXAMPLES, settings=NO_SHRINK)


def test_a_hint_that_skips_a_helpful_event_is_caught() -> None:
    with pytest.raises(ConformanceError) as info:
        check_plugin(_SkipsEverything, max_examples=EXAMPLES, settings=NO_SHRINK)
    err = info.value
    assert err.check == "hint-soundness"
    assert "answered QueueSkip when node" in str(err)
    assert "no longer rejects the pod on" in str(err)


def test_the_check_can_be_skipped() -> None:
    check_plugin(
        _SkipsEverything, max_examples=EXAMPLES, settings=NO_SHRINK, skip=["hint-soundness"]
    )
