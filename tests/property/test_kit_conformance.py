"""The conformance kit shrinks a failure to a minimal example (slow: shrinking runs the kit
hundreds of times)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import pytest
from hypothesis import settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.objects import Pod
from schedframe.testing import strategies as sst
from schedframe.testing.conformance import ConformanceError, check_plugin

pytestmark = pytest.mark.property

SIMPLE_PODS = sst.pods(
    node_selector=st.just({}),
    affinity=st.none(),
    tolerations=st.just(()),
    topology_spread_constraints=st.just(()),
)


class RaisesOnBusyNodes(fw.FilterPlugin, fw.EnqueueExtensions):
    """Raises on a node that runs a pod: a bug the kit must find and shrink."""

    name: ClassVar[str] = "RaisesOnBusyNodes"

    def __init__(self, args: None, handle: fw.Handle) -> None:
        pass

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        if node_info.pods:
            raise KeyError("boom")
        return None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        return (fw.ClusterEventWithHint(fw.ClusterEvent(fw.EventResource.NODE, fw.ActionType.ADD)),)


def test_a_failure_shrinks_to_one_node_with_one_pod() -> None:
    with pytest.raises(ConformanceError) as err:
        check_plugin(
            RaisesOnBusyNodes,
            max_examples=50,
            pods=SIMPLE_PODS,
            clusters=sst.clusters(max_nodes=3, max_pods=3, pods=SIMPLE_PODS),
            settings=settings(database=None),
        )
    assert err.value.check == "allowed-codes" and "raised KeyError" in err.value.detail
    assert err.value.example.count("node:") == 1
    assert err.value.example.count("running:") == 1
    assert '"containers":[{"name":"c0","image":"registry.k8s.io/pause:3.10"}]' in err.value.example
