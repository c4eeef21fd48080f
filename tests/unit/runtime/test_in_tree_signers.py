"""In-tree plugins' SignPod fragments (upstream ``SignPod`` of each default plugin)."""

from __future__ import annotations

import json

import pytest

from schedframe import framework as fw
from schedframe.features import FeatureGates
from schedframe.framework import Code
from schedframe.runtime import Framework
from schedframe.testing.builders import make_pod
from schedframe_plugins.nodename import NodeName
from schedframe_plugins.nodeports import NodePorts
from schedframe_plugins.noderesources.balanced_allocation import BalancedAllocation
from schedframe_plugins.noderesources.fit import Fit
from schedframe_plugins.podtopologyspread import (
    LIST_DEFAULTING,
    PodTopologySpread,
    PodTopologySpreadArgs,
)
from schedframe_plugins.tainttoleration import TaintToleration
from schedframe_plugins.volumebinding import VolumeBinding


def handle(version: str = "1.35") -> Framework:
    return Framework(features=FeatureGates(emulated_version=version))


def test_node_name_signs_the_requested_node() -> None:
    fragments, status = NodeName(None, handle()).sign_pod(make_pod("p").node("n1").obj())
    assert status is None
    assert fragments == (fw.SignFragment(key="v1.Pod.Spec.NodeName", value="n1"),)


def test_node_ports_sign_distinct_host_ports_ascending_init_containers_included() -> None:
    pod = make_pod("p").host_port(8080).host_port(80).host_port(8080, protocol="UDP").obj()
    fragments, status = NodePorts(None, handle()).sign_pod(pod)
    assert status is None
    assert fragments == (fw.SignFragment(key="v1.Pod.Spec.HostPorts()", value=[80, 8080]),)
    assert NodePorts(None, handle()).sign_pod(make_pod("q").obj()) == (
        (fw.SignFragment(key="v1.Pod.Spec.HostPorts()", value=[]),),
        None,
    )


def test_taint_toleration_signs_tolerations_sorted_by_key_then_value() -> None:
    a = make_pod("a").toleration(key="k2", value="v").toleration(key="k1", value="b").obj()
    b = make_pod("b").toleration(key="k1", value="b").toleration(key="k2", value="v").obj()
    plugin = TaintToleration(None, handle())
    (fa,), _ = plugin.sign_pod(a)
    (fb,), _ = plugin.sign_pod(b)
    assert fa.key == "v1.Pod.Spec.Tolerations"
    assert fa == fb
    assert [t["key"] for t in fa.value] == ["k1", "k2"]  # type: ignore[attr-defined]


def test_volume_binding_signs_claims_only() -> None:
    plugin = VolumeBinding(None, handle())
    (fragment,), status = plugin.sign_pod(make_pod("p").pvc("data").obj())
    assert status is None
    assert fragment == fw.SignFragment(
        key="v1.Pod.Spec.Volumes.NonSyntheticSources()",
        value=[{"persistentVolumeClaim": {"claimName": "data"}}],
    )


@pytest.mark.parametrize("plugin_type", [Fit, BalancedAllocation])
def test_resources_signers_sign_the_effective_requests(plugin_type: type) -> None:
    pod = make_pod("p").req(cpu="1", memory="2000").obj()
    (fragment,), status = plugin_type(None, handle("1.35")).sign_pod(pod)
    assert status is None
    assert fragment == fw.SignFragment(
        key="v1.Pod.Spec.ContainerResourcesAndOverheads()",
        value={"MilliCPU": 1000, "Memory": 2000, "EphemeralStorage": 0, "ScalarResources": {}},
    )


@pytest.mark.parametrize("plugin_type", [Fit, BalancedAllocation])
def test_resources_signers_refuse_while_dra_extended_resources_is_on(plugin_type: type) -> None:
    # DRAExtendedResource is on by default from 1.36.
    fragments, status = plugin_type(None, handle("1.36")).sign_pod(make_pod("p").obj())
    assert fragments == ()
    assert status is not None and status.code is Code.UNSCHEDULABLE
    assert status.reasons == ("signature disabled when dra extended resources enabled",)


def test_pod_topology_spread_refuses_pods_with_constraints_or_defaults() -> None:
    system = PodTopologySpread(None, handle())
    _, status = system.sign_pod(make_pod("p").obj())
    assert status is not None and status.reasons == (
        "pods with default topology constraints are not signable",
    )
    listed = PodTopologySpread(PodTopologySpreadArgs(defaulting_type=LIST_DEFAULTING), handle())
    assert listed.sign_pod(make_pod("p").obj()) == ((), None)
    spread = make_pod("s").spread_constraint(1, "zone", {"app": "a"}).obj()
    _, status = listed.sign_pod(spread)
    assert status is not None and status.reasons == (
        "pods with topology constraints are not signable",
    )


def test_a_profile_of_signers_gives_one_signature_per_relevant_spec() -> None:
    fwk = handle("1.35")
    for plugin in (NodeName(None, fwk), NodePorts(None, fwk), Fit(None, fwk)):
        fwk.add_plugin(plugin)
    assert fwk.signatures_enabled
    one = fwk.sign_pod(make_pod("a").req(cpu="1").obj())
    two = fwk.sign_pod(make_pod("b").req(cpu="1").obj())
    three = fwk.sign_pod(make_pod("c").req(cpu="2").obj())
    assert one is not None and one == two != three
    assert set(json.loads(one)) == {
        "v1.Pod.Spec.ContainerResourcesAndOverheads()",
        "v1.Pod.Spec.HostPorts()",
        "v1.Pod.Spec.NodeName",
        "v1.Pod.Spec.SchedulerName",
    }
