"""DynamicResources: upstream's behaviour for pods without claims; a loud refusal with claims."""

from __future__ import annotations

import datetime

import attrs
import pytest

from schedframe import framework as fw
from schedframe.config import decode_args, encode_args, load_config
from schedframe.errors import ConfigError
from schedframe.features import FeatureGates
from schedframe.objects import PodResourceClaim, pod_from_dict, to_dict
from schedframe.runtime import Framework, Registry
from schedframe_plugins.defaultbinder import DefaultBinder
from schedframe_plugins.defaultpreemption import DefaultPreemption
from schedframe_plugins.dynamicresources import (
    DynamicResources,
    DynamicResourcesArgs,
)
from schedframe_plugins.queuesort import PrioritySort

PLAIN = pod_from_dict(
    {"metadata": {"name": "p", "uid": "p"}, "spec": {"containers": [{"name": "c"}]}}
)
CLAIMED = pod_from_dict(
    {
        "metadata": {"name": "gpu", "uid": "gpu"},
        "spec": {
            "containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "my-gpu"}],
        },
    }
)


def plugin(
    features: FeatureGates | None = None, args: DynamicResourcesArgs | None = None
) -> DynamicResources:
    return DynamicResources(args or DynamicResourcesArgs(), Framework(features=features))


def test_resource_claims_are_decoded_and_encoded() -> None:
    assert CLAIMED.spec.resource_claims == (
        PodResourceClaim(name="gpu", resource_claim_name="my-gpu"),
    )
    assert CLAIMED.spec.containers[0].claims == ("gpu",)
    assert pod_from_dict(to_dict(CLAIMED)) == CLAIMED
    assert PLAIN.spec.resource_claims == ()


def test_pod_without_claims_is_skipped_as_upstream() -> None:
    pl = plugin()
    state = fw.CycleState()
    pre = pl.pre_filter(state, PLAIN, [])
    assert isinstance(pre, fw.Status) and pre.code is fw.Code.SKIP
    pre_score = pl.pre_score(state, PLAIN, [])
    assert pre_score is not None and pre_score.code is fw.Code.SKIP
    assert pl.reserve(state, PLAIN, "n") is None
    # Nothing to write in PreBind: the binding cycle sets no nominatedNodeName for it.
    pre_flight = pl.pre_bind_pre_flight(state, PLAIN, "n")
    assert pre_flight is not None and pre_flight.code is fw.Code.SKIP
    result, status = pl.post_filter(state, PLAIN, fw.NodeToStatus())
    assert result is None
    assert status is not None
    assert (status.code, status.reasons) == (
        fw.Code.UNSCHEDULABLE,
        ("no new claims to deallocate",),
    )


def test_pod_with_a_missing_claim_waits_as_upstream() -> None:
    status = plugin().pre_filter(fw.CycleState(), CLAIMED, [])
    assert isinstance(status, fw.Status)
    assert status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ('resourceclaim.resource.k8s.io "my-gpu" not found',)
    pre_enqueue = plugin().pre_enqueue(CLAIMED)
    assert pre_enqueue is not None and pre_enqueue.reasons == status.reasons


def test_gate_off_disables_the_plugin_as_upstream() -> None:
    gates = FeatureGates(emulated_version="1.34", overrides={"DynamicResourceAllocation": False})
    pl = plugin(gates)
    status = pl.pre_filter(fw.CycleState(), CLAIMED, [])
    assert isinstance(status, fw.Status) and status.code is fw.Code.SKIP
    _, post = pl.post_filter(fw.CycleState(), PLAIN, fw.NodeToStatus())
    assert post is not None and post.reasons == ("plugin disabled",)
    pre_flight = pl.pre_bind_pre_flight(fw.CycleState(), CLAIMED, "n")
    assert pre_flight is not None and pre_flight.code is fw.Code.SKIP


def test_args_defaults_and_validation() -> None:
    args = decode_args(DynamicResourcesArgs, {"filterTimeout": "5s"}, path="args")
    assert args.filter_timeout == datetime.timedelta(seconds=5)
    # Upstream's DynamicResourcesBindingTimeoutDefault is ten minutes.
    assert args.binding_timeout == datetime.timedelta(minutes=10)
    assert encode_args(DynamicResourcesArgs())["filterTimeout"] == "10s"
    assert encode_args(DynamicResourcesArgs())["bindingTimeout"] == "10m0s"
    with pytest.raises(ConfigError):
        decode_args(DynamicResourcesArgs, {"filterTimeout": "-1s"}, path="args")
    # Upstream's timeout cases use 1ns: below timedelta's resolution, it must not become 0
    # (which turns the timeout off).
    tiny = decode_args(DynamicResourcesArgs, {"filterTimeout": "1ns"}, path="args")
    assert tiny.filter_timeout == datetime.timedelta(microseconds=1)
    zero = decode_args(DynamicResourcesArgs, {"filterTimeout": "0s"}, path="args")
    assert zero.filter_timeout == datetime.timedelta(0)


def test_binding_timeout_under_a_second_is_refused_with_the_binding_gates_on() -> None:
    short = decode_args(DynamicResourcesArgs, {"bindingTimeout": "500ms"}, path="args")
    with pytest.raises(ConfigError) as raised:
        plugin(FeatureGates(emulated_version="1.36"), short)
    assert str(raised.value) == 'bindingTimeout: Invalid value: "500ms": must be at least 1 second'
    # One second is enough; with the gates off (1.35) the wait never happens, so any value is
    # taken as it is.
    plugin(
        FeatureGates(emulated_version="1.36"),
        attrs.evolve(short, binding_timeout=datetime.timedelta(seconds=1)),
    )
    plugin(FeatureGates(emulated_version="1.35"), short)


@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36"])
def test_default_profile_builds_with_it_in_every_version(version: str) -> None:
    registry = Registry()
    registry.register("DynamicResources", DynamicResources)
    registry.register("DefaultPreemption", DefaultPreemption)
    registry.register("PrioritySort", PrioritySort)
    registry.register("DefaultBinder", DefaultBinder)
    config = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {
                            "disabled": [{"name": "*"}],
                            "enabled": [
                                {"name": "PrioritySort"},
                                {"name": "DynamicResources"},
                                {"name": "DefaultPreemption"},
                                {"name": "DefaultBinder"},
                            ],
                        }
                    }
                }
            ],
        },
        emulated_version=version,
    )
    fwk = Framework.from_profile(config.profiles[0], registry, features=config.feature_gates)
    # Before DefaultPreemption, so its reason leads the PostFilter message (the explain and
    # simulate tests check the whole "no new claims to deallocate, preemption: ..." text).
    assert [p.name for p in fwk.post_filter_plugins] == ["DynamicResources", "DefaultPreemption"]
