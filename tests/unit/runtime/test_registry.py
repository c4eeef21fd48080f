"""Registry: entry-point discovery reads metadata only; clear errors on unknown names and clashes."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, ClassVar

import pytest

from schedframe import framework as fw
from schedframe.errors import PluginError
from schedframe.runtime import Registry

IN_TREE = {
    "DefaultBinder",
    "DefaultPreemption",
    "ImageLocality",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeName",
    "NodePorts",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "NodeUnschedulable",
    "NodeVolumeLimits",
    "PodTopologySpread",
    "PrioritySort",
    "SchedulingGates",
    "TaintToleration",
    "VolumeBinding",
    "VolumeRestrictions",
    "VolumeZone",
}


class Noop(fw.FilterPlugin):
    name: ClassVar[str] = "Noop"

    def __init__(self, args: object, handle: fw.Handle) -> None:
        pass

    def filter(self, state: fw.CycleState, pod: Any, node_info: fw.NodeInfo) -> None:
        return None


def test_discover_finds_every_in_tree_plugin_with_its_distribution() -> None:
    registry = Registry.discover()
    assert IN_TREE <= set(registry.names())
    fit = next(s for s in registry.sources() if s.name == "NodeResourcesFit")
    assert fit.distribution == "schedframe-plugins"
    assert fit.value == "schedframe_plugins.noderesources:Fit"
    assert fit.version is not None


def test_discovery_and_listing_import_no_plugin_module() -> None:
    code = (
        "import sys, json\n"
        "from schedframe.runtime import Registry\n"
        "r = Registry.discover()\n"
        "names = r.names(); sources = r.sources()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('schedframe_plugins'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == []


def test_unknown_name_lists_what_is_available() -> None:
    registry = Registry({"Noop": Noop})
    with pytest.raises(PluginError, match='no plugin named "Nope" is installed; available: Noop'):
        registry.load("Nope")


def test_register_clash_is_an_error_unless_replace() -> None:
    registry = Registry({"Noop": Noop})
    with pytest.raises(PluginError, match="a plugin named Noop already exists"):
        registry.register("Noop", Noop)
    registry.register("Noop", Noop, replace=True)
    assert registry.load("Noop") is Noop


def test_merge_clash_names_both_sources() -> None:
    a = Registry({"Noop": Noop})
    b = Registry({"Noop": Noop})
    with pytest.raises(PluginError, match="a plugin named Noop already exists"):
        a.merge(b)
    c = Registry()
    c.merge(a)
    assert c.load("Noop") is Noop


def test_load_is_lazy_and_cached() -> None:
    registry = Registry.discover()
    assert not registry.is_loaded("NodeName")
    first = registry.load("NodeName")
    assert registry.is_loaded("NodeName")
    assert registry.load("NodeName") is first


def test_two_distributions_declaring_one_name_is_an_error_on_load() -> None:
    registry = Registry.discover()
    # Simulate a third-party distribution declaring an in-tree name.
    from schedframe.runtime._registry import PluginSource

    registry._sources["NodeName"].append(
        PluginSource(name="NodeName", value="other:NodeName", distribution="other", version="1")
    )
    registry._loaded.pop("NodeName", None)
    with pytest.raises(PluginError, match='plugin name "NodeName" is declared by several'):
        registry.load("NodeName")


def test_broken_entry_point_is_a_plugin_error() -> None:
    registry = Registry.discover()
    ep = type(
        "EP",
        (),
        {"load": lambda self: (_ for _ in ()).throw(ImportError("no module named gpu_lib"))},
    )()
    from schedframe.runtime._registry import PluginSource

    registry._sources["Broken"] = [PluginSource(name="Broken", value="broken:Plugin")]
    registry._entry_points["Broken"] = ep
    with pytest.raises(
        PluginError,
        match='cannot load plugin "Broken" from broken:Plugin: ImportError: no module named gpu_lib',
    ):
        registry.load("Broken")
