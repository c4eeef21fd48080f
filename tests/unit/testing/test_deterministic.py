"""Deterministic schedulers, their pytest fixture, and the hypothesis type registrations."""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable, Sequence
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.config import KubeSchedulerConfiguration
from schedframe.objects import Node, Pod, Quantity
from schedframe.scheduler import Scheduler, VirtualClock
from schedframe.testing import deterministic
from schedframe.testing import strategies as sst
from schedframe.testing._hypothesis_plugin import REGISTERED, _hypothesis_setup_hook
from schedframe.testing.builders import make_node, make_pod

# The fixtures, as the pytest11 entry point would provide them.
from schedframe.testing.pytest_plugin import schedframe_scheduler, schedframe_seed  # noqa: F401

pytest_plugins: Sequence[str] = ("pytester",)

NODES = [make_node(f"n{i}").capacity(cpu="2", memory="4Gi").obj() for i in range(3)]
PODS = [make_pod(f"p{i}").req(cpu="500m").obj() for i in range(5)]


def test_a_deterministic_scheduler_binds_on_virtual_time() -> None:
    with deterministic.scheduler(objects=[*NODES, *PODS], seed=3) as sched:
        assert sched.deterministic and isinstance(sched.clock, VirtualClock)
        sched.run_until_idle()
        assert len(sched.placements()) == 5


def test_same_seed_same_placements() -> None:
    runs = [deterministic.placements(objects=[*NODES, *PODS], seed=11) for _ in range(3)]
    assert runs[0] == runs[1] == runs[2] and len(runs[0]) == 5


class Only(fw.FilterPlugin):
    """Allows only node n1 (an in-process plugin)."""

    name: ClassVar[str] = "OnlyN1"

    def __init__(self, args: None, handle: fw.Handle) -> None:
        pass

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        return None if node_info.name == "n1" else fw.Status(fw.Code.UNSCHEDULABLE, "not n1")


def test_in_process_plugins() -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"filter": {"enabled": [{"name": "OnlyN1"}]}}}],
    }
    placed = deterministic.placements(config, [*NODES, *PODS[:2]], plugins=[Only])
    assert set(placed.values()) == {"n1"}


def test_registry_with_needs_names() -> None:
    with pytest.raises(TypeError):
        deterministic.registry_with([object])  # type: ignore[list-item]


def test_the_fixture_makes_and_stops_schedulers(
    schedframe_scheduler: Callable[..., Scheduler],  # noqa: F811
    schedframe_seed: int,  # noqa: F811
) -> None:
    assert schedframe_seed == 0
    sched = schedframe_scheduler(objects=[*NODES, PODS[0]])
    assert sched.seed == 0
    sched.run_until_idle()
    assert sched.placements().keys() == {"default/p0"}


def test_the_pytest_plugin_adds_its_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_seed(schedframe_seed, schedframe_scheduler):
            assert schedframe_seed == 42
            assert schedframe_scheduler().seed == 42
        """
    )
    # Once the pytest11 entry point is installed the plugin loads by itself; asking for it
    # again with -p would register it twice.
    installed = any(
        ep.value == "schedframe.testing.pytest_plugin"
        for ep in importlib.metadata.entry_points(group="pytest11")
    )
    args = [] if installed else ["-p", "schedframe.testing.pytest_plugin"]
    result = pytester.runpytest(*args, "--schedframe-seed=42")
    result.assert_outcomes(passed=1)


@settings(max_examples=3, deadline=None)
@given(st.data())
def test_the_hypothesis_hook_registers_every_type(data: st.DataObject) -> None:
    _hypothesis_setup_hook()
    for module, name, _ in REGISTERED:
        cls = getattr(importlib.import_module(module), name)
        assert isinstance(data.draw(st.from_type(cls)), cls)


@settings(max_examples=10, deadline=None)
@given(st.data())
def test_from_type_uses_the_kit(data: st.DataObject) -> None:
    _hypothesis_setup_hook()
    assert isinstance(data.draw(st.from_type(Pod)), Pod)
    assert isinstance(data.draw(st.from_type(Node)), Node)
    assert isinstance(data.draw(st.from_type(Quantity)), Quantity)
    assert isinstance(data.draw(st.from_type(sst.Cluster)), sst.Cluster)
    assert isinstance(
        data.draw(st.from_type(KubeSchedulerConfiguration)), KubeSchedulerConfiguration
    )
