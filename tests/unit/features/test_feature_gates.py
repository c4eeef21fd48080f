"""Feature gates at an emulated version: upstream's versioned defaults, locks and errors."""

from __future__ import annotations

import pytest

from schedframe.config import load_config, loads_config, to_dict
from schedframe.errors import ConfigError
from schedframe.features import (
    DEFAULT_EMULATED_VERSION,
    SUPPORTED_VERSIONS,
    FeatureGates,
    parse_feature_gates,
)

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

# (gate, {version: default}) from upstream's versioned specs (pkg/features/kube_features.go).
DEFAULTS = [
    ("SchedulerQueueingHints", {"1.34": True, "1.35": True, "1.36": True}),
    ("SidecarContainers", {"1.34": True, "1.35": True, "1.36": True}),
    ("SchedulerAsyncPreemption", {"1.34": True, "1.35": True, "1.36": True}),
    ("NominatedNodeNameForExpectation", {"1.34": False, "1.35": True, "1.36": True}),
    ("PodLevelResources", {"1.34": True, "1.35": True, "1.36": True}),
    ("DRAExtendedResource", {"1.34": False, "1.35": False, "1.36": True}),
    ("DynamicResourceAllocation", {"1.34": True, "1.35": True, "1.36": True}),
    ("NodeDeclaredFeatures", {"1.34": False, "1.35": False, "1.36": True}),
    ("SchedulerPopFromBackoffQ", {"1.34": True, "1.35": True, "1.36": True}),
    ("OpportunisticBatching", {"1.34": False, "1.35": True, "1.36": True}),
    ("SchedulerAsyncAPICalls", {"1.34": False, "1.35": False, "1.36": False}),
]


@pytest.mark.parametrize(("gate", "by_version"), DEFAULTS, ids=[g for g, _ in DEFAULTS])
def test_gate_defaults_follow_upstream_per_version(gate: str, by_version: dict[str, bool]) -> None:
    for version, expected in by_version.items():
        assert FeatureGates(emulated_version=version).enabled(gate) is expected, version


def test_default_version_is_the_newest() -> None:
    assert DEFAULT_EMULATED_VERSION == SUPPORTED_VERSIONS[-1] == "1.36"
    assert FeatureGates() == load_config(None).feature_gates


def test_overrides_win_and_are_sorted() -> None:
    gates = FeatureGates(
        emulated_version="1.35",
        overrides={"NodeDeclaredFeatures": True, "DRAExtendedResource": True},
    )
    assert gates.enabled("NodeDeclaredFeatures") and gates.enabled("DRAExtendedResource")
    assert [name for name, _ in gates.overrides] == ["DRAExtendedResource", "NodeDeclaredFeatures"]
    assert (
        gates.with_overrides({"NodeDeclaredFeatures": False}).enabled("NodeDeclaredFeatures")
        is False
    )


def test_unknown_gate_name_raises_key_error_when_read() -> None:
    with pytest.raises(KeyError, match="unrecognized feature gate: Nope"):
        FeatureGates().enabled("Nope")


@pytest.mark.parametrize(
    ("version", "overrides", "message"),
    [
        pytest.param(
            "1.36",
            {"Foo": True},
            "featureGates.Foo: Invalid value: unrecognized feature gate: Foo",
            id="unknown gate",
        ),
        pytest.param(
            "1.36",
            {"SchedulerQueueingHints": False},
            "featureGates.SchedulerQueueingHints: Invalid value: cannot set feature gate "
            "SchedulerQueueingHints to false, feature is locked to true",
            id="GA gate locked on",
        ),
        pytest.param(
            "1.35",
            {"DynamicResourceAllocation": False},
            "featureGates.DynamicResourceAllocation: Invalid value: cannot set feature gate "
            "DynamicResourceAllocation to false, feature is locked to true",
            id="DRA locked from 1.35",
        ),
        pytest.param(
            "1.34",
            {"NodeDeclaredFeatures": True},
            "featureGates.NodeDeclaredFeatures: Invalid value: cannot set feature gate "
            "NodeDeclaredFeatures to true, feature is PreAlpha at emulated version 1.34",
            id="gate not yet in 1.34",
        ),
        pytest.param(
            "1.36",
            {"TopologyAwareWorkloadScheduling": True},
            "featureGates.TopologyAwareWorkloadScheduling: Invalid value: schedframe does not "
            "model workload placement plugins, so feature gate TopologyAwareWorkloadScheduling "
            "cannot be set to true",
            id="not modelled",
        ),
        pytest.param(
            "1.36",
            {"MatchLabelKeysInPodTopologySpread": False},
            "featureGates.MatchLabelKeysInPodTopologySpread: Invalid value: schedframe does not "
            "model PodTopologySpread without matchLabelKeys (it always honours them), so feature "
            "gate MatchLabelKeysInPodTopologySpread cannot be set to false",
            id="always-on behaviour cannot be turned off",
        ),
        pytest.param(
            "1.36",
            {"PodLevelResources": False},
            "featureGates.PodLevelResources: Invalid value: schedframe does not model pods read "
            "without their pod-level resources (spec.resources is always counted), so feature "
            "gate PodLevelResources cannot be set to false",
            id="pod-level resources are always counted",
        ),
        pytest.param(
            "1.33",
            {},
            'emulatedVersion: Unsupported value: "1.33": supported values: "1.34", "1.35", "1.36"',
            id="unsupported version",
        ),
    ],
)
def test_bad_gates_name_the_field(version: str, overrides: dict[str, bool], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        FeatureGates(emulated_version=version, overrides=overrides)
    assert str(info.value) == message


def test_dynamic_resource_allocation_may_be_turned_off_in_1_34() -> None:
    gates = FeatureGates(emulated_version="1.34", overrides={"DynamicResourceAllocation": False})
    assert gates.enabled("DynamicResourceAllocation") is False
    (profile,) = load_config(
        None, emulated_version="1.34", feature_gates={"DynamicResourceAllocation": False}
    ).profiles
    assert "DynamicResources" not in [p.name for p in profile.plugins.multi_point.enabled]


def test_config_file_fields_name_file_and_path() -> None:
    text = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "emulatedVersion: '1.35'\nfeatureGates:\n  SidecarContainers: false\n  Bogus: true\n"
    )
    with pytest.raises(ConfigError) as info:
        loads_config(text, source="sched.yaml")
    assert str(info.value).splitlines() == [
        "sched.yaml: featureGates.Bogus: Invalid value: unrecognized feature gate: Bogus",
        "sched.yaml: featureGates.SidecarContainers: Invalid value: cannot set feature gate "
        "SidecarContainers to false, feature is locked to true",
    ]


def test_config_file_gate_must_be_boolean() -> None:
    with pytest.raises(ConfigError) as info:
        load_config({**HEADER, "featureGates": {"PodLevelResources": "yes"}})
    assert str(info.value) == (
        '<dict>: featureGates.PodLevelResources: Invalid value: "yes": expected a boolean'
    )


def test_caller_settings_win_over_the_file() -> None:
    config = load_config(
        {**HEADER, "emulatedVersion": "1.34", "featureGates": {"SchedulerAsyncPreemption": False}},
        emulated_version="1.35",
        feature_gates={"SchedulerAsyncPreemption": True},
    )
    assert config.feature_gates == FeatureGates(
        emulated_version="1.35", overrides={"SchedulerAsyncPreemption": True}
    )


def test_to_dict_round_trips_and_stays_upstream_by_default() -> None:
    plain = to_dict(load_config(None))
    assert "featureGates" not in plain and "emulatedVersion" not in plain
    config = load_config(
        {**HEADER, "emulatedVersion": "1.35", "featureGates": {"NodeDeclaredFeatures": True}}
    )
    doc = to_dict(config)
    assert doc["emulatedVersion"] == "1.35"
    assert doc["featureGates"] == {"NodeDeclaredFeatures": True}
    assert load_config(doc) == config


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A=true,B=false", {"A": True, "B": False}),
        (" A=TRUE , A=False ", {"A": False}),
        ("", {}),
    ],
)
def test_parse_feature_gates_flag(text: str, expected: dict[str, bool]) -> None:
    assert parse_feature_gates(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("A", '--feature-gates: Invalid value: "A": missing bool value for A'),
        (
            "A=yes",
            '--feature-gates: Invalid value: "A=yes": invalid value of A=yes, '
            "expected true or false",
        ),
    ],
)
def test_parse_feature_gates_flag_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_feature_gates(text)
    assert str(info.value) == message
