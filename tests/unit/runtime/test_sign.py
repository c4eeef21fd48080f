"""Pod signatures (upstream frameworkImpl.SignPod / computeBatchablePlugins)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import ClassVar

import pytest

from schedframe import framework as fw
from schedframe.features import FeatureGates
from schedframe.framework import Code, CycleState, NodeInfo, SignFragment, Status
from schedframe.objects import Pod, pod_from_dict
from schedframe.runtime import Framework
from schedframe.testing.builders import make_pod


class Signs(fw.FilterPlugin, fw.SignPlugin):
    """Filters nothing; signs with the pod's labels (or refuses, or fails)."""

    name: ClassVar[str] = "Signs"

    def __init__(self, name: str = "Signs", status: Status | None = None) -> None:
        self.name = name  # type: ignore[misc]
        self._status = status

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status | None]:
        labels = dict(sorted(pod.metadata.labels.items()))
        return (SignFragment(key=fw.LABELS_SIGNER_NAME, value=labels),), self._status


class DoesNotSign(fw.FilterPlugin):
    name: ClassVar[str] = "DoesNotSign"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None


def framework(*plugins: fw.Plugin, version: str = "1.36") -> Framework:
    fwk = Framework(features=FeatureGates(emulated_version=version))
    for plugin in plugins:
        fwk.add_plugin(plugin)
    return fwk


def test_signature_is_the_scheduler_name_and_the_fragments_as_sorted_json() -> None:
    fwk = framework(Signs())
    pod = make_pod("a").label("b", "2").label("a", "1").obj()
    signature = fwk.sign_pod(pod)
    assert signature is not None
    assert json.loads(signature) == {
        fw.LABELS_SIGNER_NAME: {"a": "1", "b": "2"},
        fw.SCHEDULER_NAME_SIGNER_NAME: "default-scheduler",
    }
    assert signature.decode() == (
        '{"v1.Pod.Labels":{"a":"1","b":"2"},"v1.Pod.Spec.SchedulerName":"default-scheduler"}'
    )


def test_same_relevant_spec_same_signature() -> None:
    fwk = framework(Signs())
    one = fwk.sign_pod(make_pod("one").label("app", "web").obj())
    two = fwk.sign_pod(make_pod("two").label("app", "web").obj())
    other = fwk.sign_pod(make_pod("three").label("app", "db").obj())
    assert one == two != other


def test_a_plugin_that_does_not_sign_turns_signatures_off() -> None:
    fwk = framework(Signs(), DoesNotSign())
    assert not fwk.signatures_enabled
    assert fwk.unsigned_plugins == ("DoesNotSign",)
    assert fwk.sign_pod(make_pod("a").obj()) is None


@pytest.mark.parametrize(("version", "enabled"), [("1.34", False), ("1.35", True), ("1.36", True)])
def test_the_opportunistic_batching_gate_switches_signatures(version: str, enabled: bool) -> None:
    fwk = framework(Signs(), version=version)
    assert fwk.signatures_enabled is enabled
    assert (fwk.sign_pod(make_pod("a").obj()) is not None) is enabled


@pytest.mark.parametrize(
    "status",
    [
        pytest.param(Status(Code.UNSCHEDULABLE, "not signable"), id="refuses"),
        pytest.param(Status(Code.ERROR, "broken"), id="fails"),
    ],
)
def test_a_plugin_refusing_to_sign_gives_no_signature(status: Status) -> None:
    fwk = framework(Signs(), Signs("Refuses", status=status))
    assert fwk.signatures_enabled
    assert fwk.sign_pod(make_pod("a").obj()) is None


def test_in_tree_signers() -> None:
    from schedframe_plugins.dynamicresources import DynamicResources, DynamicResourcesArgs
    from schedframe_plugins.nodedeclaredfeatures import NodeDeclaredFeatures

    fwk = framework()
    dra = DynamicResources(DynamicResourcesArgs(), fwk)
    ndf = NodeDeclaredFeatures(None, fwk)
    for plugin in (dra, ndf):
        fwk.add_plugin(plugin)
    assert fwk.signatures_enabled
    plain = make_pod("p").obj()
    assert json.loads(fwk.sign_pod(plain) or b"") == {
        fw.FEATURES_SIGNER_NAME: [],
        fw.SCHEDULER_NAME_SIGNER_NAME: "default-scheduler",
    }
    claimed = pod_from_dict(
        {
            "metadata": {"name": "c"},
            "spec": {
                "containers": [{"name": "c"}],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": "g"}],
            },
        }
    )
    _, status = dra.sign_pod(claimed)
    assert status is not None and status.reasons == (
        "pods with dra resource claims are not signable",
    )
