"""Upstream v1 defaulting: default plugins, mergePlugins and SetDefaults tables, as data."""

from __future__ import annotations

import pytest

from schedframe.config import (
    ClientConnectionConfiguration,
    KubeSchedulerConfiguration,
    LeaderElectionConfiguration,
    PluginConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
    default_config,
    load_config,
    to_dict,
)
from schedframe.config._defaults import default_plugins, merge_plugin_set, merge_plugins

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def P(name: str, weight: int | None = None) -> PluginRef:  # noqa: N802 - reads like the tables
    return PluginRef(name=name, weight=weight)


# Upstream TestApplyFeatureGates / TestSchedulerDefaults, every gate at its default (v1.36).
UPSTREAM_DEFAULT_MULTI_POINT_BASE = [
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
]


def _with(
    dynamic_resources_weight: int | None, *, node_declared_features: bool
) -> list[tuple[str, int | None]]:
    out = list(UPSTREAM_DEFAULT_MULTI_POINT_BASE)
    at = out.index(("DefaultPreemption", None))
    out.insert(at, ("DynamicResources", dynamic_resources_weight))
    if node_declared_features:
        out.append(("NodeDeclaredFeatures", None))
    return out


# The default profile per emulated version: DynamicResourceAllocation is GA (on) from v1.34,
# so DynamicResources sits before DefaultPreemption, weighted 2 once it scores (v1.36);
# NodeDeclaredFeatures is beta and on by default in v1.36 (alpha, off, in v1.35).
UPSTREAM_DEFAULT_MULTI_POINT_BY_VERSION = {
    "1.34": _with(None, node_declared_features=False),
    "1.35": _with(None, node_declared_features=False),
    "1.36": _with(2, node_declared_features=True),
}
UPSTREAM_DEFAULT_MULTI_POINT = UPSTREAM_DEFAULT_MULTI_POINT_BY_VERSION["1.36"]


@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36"])
def test_default_profile_per_emulated_version(version: str) -> None:
    (profile,) = load_config(None, emulated_version=version).profiles
    assert [(p.name, p.weight) for p in profile.plugins.multi_point.enabled] == (
        UPSTREAM_DEFAULT_MULTI_POINT_BY_VERSION[version]
    )
    (from_file,) = load_config({**HEADER, "emulatedVersion": version}).profiles
    assert from_file == profile


def test_node_declared_features_gate_adds_its_plugin_in_1_35() -> None:
    (profile,) = load_config(
        None, emulated_version="1.35", feature_gates={"NodeDeclaredFeatures": True}
    ).profiles
    assert profile.plugins.multi_point.enabled[-1] == P("NodeDeclaredFeatures")
    (off,) = load_config(None, feature_gates={"NodeDeclaredFeatures": False}).profiles
    assert "NodeDeclaredFeatures" not in [p.name for p in off.plugins.multi_point.enabled]


@pytest.mark.parametrize("version", ["1.35", "1.36"])
def test_generic_workload_gate_appends_gang_scheduling(version: str) -> None:
    (profile,) = load_config(
        None, emulated_version=version, feature_gates={"GenericWorkload": True}
    ).profiles
    assert profile.plugins.multi_point.enabled[-1] == P("GangScheduling")
    (off,) = load_config(None, emulated_version=version).profiles
    assert "GangScheduling" not in [p.name for p in off.plugins.multi_point.enabled]


def test_default_profile_has_upstream_plugins_and_weights_exactly() -> None:
    (profile,) = default_config().profiles
    assert profile.scheduler_name == "default-scheduler"
    assert profile.percentage_of_nodes_to_score is None
    assert profile.plugin_config == ()
    assert [(p.name, p.weight) for p in profile.plugins.multi_point.enabled] == (
        UPSTREAM_DEFAULT_MULTI_POINT
    )
    assert profile.plugins.multi_point.disabled == ()
    for point in Plugins.EXTENSION_POINTS:
        if point != "multi_point":
            assert profile.plugins.point(point) == PluginSet(), point


def test_constructed_defaults_equal_the_defaulted_values() -> None:
    assert Profile() == default_config().profiles[0]
    assert Profile().plugins == default_plugins()
    assert KubeSchedulerConfiguration() == default_config()


def test_default_top_level_values() -> None:
    config = default_config()
    assert config.parallelism == 16
    assert config.percentage_of_nodes_to_score == 0
    assert config.pod_initial_backoff_seconds == 1
    assert config.pod_max_backoff_seconds == 10
    assert config.enable_profiling is True
    assert config.enable_contention_profiling is True
    assert config.delay_cache_until_active is False
    assert config.extenders == ()
    assert config.leader_election == LeaderElectionConfiguration(
        leader_elect=True,
        lease_duration=15.0,
        renew_deadline=10.0,
        retry_period=2.0,
        resource_lock="leases",
        resource_name="kube-scheduler",
        resource_namespace="kube-system",
    )
    assert config.client_connection == ClientConnectionConfiguration(
        kubeconfig="",
        accept_content_types="",
        content_type="application/vnd.kubernetes.protobuf",
        qps=50.0,
        burst=100,
    )


def test_extension_points_are_in_upstream_order() -> None:
    assert Plugins.EXTENSION_POINTS == (
        "pre_enqueue",
        "queue_sort",
        "pre_filter",
        "filter",
        "post_filter",
        "pre_score",
        "score",
        "reserve",
        "permit",
        "pre_bind",
        "bind",
        "post_bind",
        "multi_point",
    )
    with pytest.raises(KeyError):
        Plugins().point("queueSort")


# --- upstream TestMergePlugins ------------------------------------------------------------------

MERGE_CASES = [
    pytest.param(
        Plugins(filter=PluginSet(enabled=[P("CustomPlugin")])),
        Plugins(filter=PluginSet(enabled=[P("DefaultPlugin1"), P("DefaultPlugin2")])),
        Plugins(
            filter=PluginSet(enabled=[P("DefaultPlugin1"), P("DefaultPlugin2"), P("CustomPlugin")])
        ),
        id="AppendCustomPlugin",
    ),
    pytest.param(
        Plugins(
            filter=PluginSet(
                enabled=[P("CustomPlugin"), P("DefaultPlugin2")], disabled=[P("DefaultPlugin2")]
            )
        ),
        Plugins(filter=PluginSet(enabled=[P("DefaultPlugin1"), P("DefaultPlugin2")])),
        Plugins(
            filter=PluginSet(
                enabled=[P("DefaultPlugin1"), P("CustomPlugin"), P("DefaultPlugin2")],
                disabled=[P("DefaultPlugin2")],
            )
        ),
        id="InsertAfterDefaultPlugins2",
    ),
    pytest.param(
        Plugins(
            filter=PluginSet(
                enabled=[P("CustomPlugin"), P("DefaultPlugin1"), P("DefaultPlugin2")],
                disabled=[P("*")],
            )
        ),
        Plugins(filter=PluginSet(enabled=[P("DefaultPlugin1"), P("DefaultPlugin2")])),
        Plugins(
            filter=PluginSet(
                enabled=[P("CustomPlugin"), P("DefaultPlugin1"), P("DefaultPlugin2")],
                disabled=[P("*")],
            )
        ),
        id="InsertBeforeAllPlugins",
    ),
    pytest.param(
        Plugins(
            filter=PluginSet(enabled=[P("DefaultPlugin2"), P("DefaultPlugin1")], disabled=[P("*")])
        ),
        Plugins(filter=PluginSet(enabled=[P("DefaultPlugin1"), P("DefaultPlugin2")])),
        Plugins(
            filter=PluginSet(enabled=[P("DefaultPlugin2"), P("DefaultPlugin1")], disabled=[P("*")])
        ),
        id="ReorderDefaultPlugins",
    ),
    pytest.param(
        None,
        Plugins(filter=PluginSet(enabled=[P("DefaultPlugin1"), P("DefaultPlugin2")])),
        Plugins(filter=PluginSet(enabled=[P("DefaultPlugin1"), P("DefaultPlugin2")])),
        id="ApplyNilCustomPlugin",
    ),
    pytest.param(
        Plugins(filter=PluginSet(enabled=[P("Plugin1", 2), P("Plugin3", 3)])),
        Plugins(filter=PluginSet(enabled=[P("Plugin1"), P("Plugin2"), P("Plugin3")])),
        Plugins(filter=PluginSet(enabled=[P("Plugin1", 2), P("Plugin2"), P("Plugin3", 3)])),
        id="CustomPluginOverrideDefaultPlugin",
    ),
    pytest.param(
        Plugins(filter=PluginSet(enabled=[P("Plugin2", 2), P("Plugin1", 1)])),
        Plugins(filter=PluginSet(enabled=[P("Plugin1"), P("Plugin2"), P("Plugin3")])),
        Plugins(filter=PluginSet(enabled=[P("Plugin1", 1), P("Plugin2", 2), P("Plugin3")])),
        id="OrderPreserveAfterOverride",
    ),
    pytest.param(
        Plugins(
            filter=PluginSet(enabled=[P("Plugin1"), P("Plugin2", 2), P("Plugin3"), P("Plugin2", 4)])
        ),
        Plugins(filter=PluginSet(enabled=[P("Plugin1"), P("Plugin2"), P("Plugin3")])),
        Plugins(
            filter=PluginSet(enabled=[P("Plugin1"), P("Plugin2", 4), P("Plugin3"), P("Plugin2", 2)])
        ),
        id="RepeatedCustomPlugin",
    ),
    pytest.param(
        Plugins(multi_point=PluginSet(enabled=[P("CustomPlugin")])),
        Plugins(multi_point=PluginSet(enabled=[P("DefaultPlugin1"), P("DefaultPlugin2")])),
        Plugins(
            multi_point=PluginSet(
                enabled=[P("DefaultPlugin1"), P("DefaultPlugin2"), P("CustomPlugin")]
            )
        ),
        id="Append custom MultiPoint plugin",
    ),
    pytest.param(
        Plugins(
            multi_point=PluginSet(
                enabled=[P("CustomPlugin"), P("CustomPlugin2")], disabled=[P("DefaultPlugin2")]
            ),
            score=PluginSet(disabled=[P("CustomPlugin2")]),
        ),
        Plugins(multi_point=PluginSet(enabled=[P("DefaultPlugin1"), P("DefaultPlugin2")])),
        Plugins(
            multi_point=PluginSet(
                enabled=[P("DefaultPlugin1"), P("CustomPlugin"), P("CustomPlugin2")],
                disabled=[P("DefaultPlugin2")],
            ),
            score=PluginSet(disabled=[P("CustomPlugin2")]),
        ),
        id="Append disabled Multipoint plugins",
    ),
    pytest.param(
        Plugins(multi_point=PluginSet(enabled=[P("DefaultPlugin", 5)])),
        Plugins(multi_point=PluginSet(enabled=[P("DefaultPlugin")])),
        Plugins(multi_point=PluginSet(enabled=[P("DefaultPlugin", 5)])),
        id="override default MultiPoint plugins with custom value",
    ),
    pytest.param(
        Plugins(multi_point=PluginSet(enabled=[P("CustomPlugin")])),
        Plugins(
            multi_point=PluginSet(enabled=[P("DefaultPlugin")], disabled=[P("DefaultPlugin2")])
        ),
        Plugins(
            multi_point=PluginSet(
                enabled=[P("DefaultPlugin"), P("CustomPlugin")], disabled=[P("DefaultPlugin2")]
            )
        ),
        id="disabled MultiPoint plugin in default set",
    ),
    pytest.param(
        Plugins(multi_point=PluginSet(enabled=[P("CustomPlugin")])),
        Plugins(
            multi_point=PluginSet(enabled=[P("DefaultPlugin")]),
            score=PluginSet(disabled=[P("DefaultPlugin2")]),
        ),
        Plugins(
            multi_point=PluginSet(enabled=[P("DefaultPlugin"), P("CustomPlugin")]),
            score=PluginSet(disabled=[P("DefaultPlugin2")]),
        ),
        id="disabled MultiPoint plugin in default set for specific extension point",
    ),
    pytest.param(
        Plugins(multi_point=PluginSet(disabled=[P("DefaultPlugin")])),
        Plugins(multi_point=PluginSet(enabled=[P("DefaultPlugin")])),
        Plugins(multi_point=PluginSet(disabled=[P("DefaultPlugin")])),
        id="multipoint with only disabled gets merged",
    ),
]


@pytest.mark.parametrize(("custom", "defaults", "expected"), MERGE_CASES)
def test_merge_plugins(custom: Plugins | None, defaults: Plugins, expected: Plugins) -> None:
    assert merge_plugins(defaults, custom) == expected


def test_disabled_entries_lose_their_weight() -> None:
    merged = merge_plugin_set(PluginSet(), PluginSet(disabled=[P("A", 7)]))
    assert merged == PluginSet(disabled=[P("A")])


# --- merging against the real defaults, through a file -----------------------------------------


def _profile(plugins: dict[str, object]) -> Profile:
    (profile,) = load_config({**HEADER, "profiles": [{"plugins": plugins}]}).profiles
    return profile


def _defaults_named() -> list[str]:
    return [name for name, _ in UPSTREAM_DEFAULT_MULTI_POINT]


def test_disable_star_drops_every_default_of_that_point() -> None:
    profile = _profile({"multiPoint": {"disabled": [{"name": "*"}]}})
    assert profile.plugins.multi_point == PluginSet(disabled=[P("*")])


def test_disable_star_then_re_enable_in_a_new_order() -> None:
    profile = _profile(
        {
            "multiPoint": {
                "enabled": [{"name": "DefaultBinder"}, {"name": "PrioritySort"}],
                "disabled": [{"name": "*"}],
            }
        }
    )
    assert profile.plugins.multi_point == PluginSet(
        enabled=[P("DefaultBinder"), P("PrioritySort")], disabled=[P("*")]
    )


def test_replacing_a_default_weight_keeps_its_position() -> None:
    profile = _profile({"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 10}]}})
    enabled = profile.plugins.multi_point.enabled
    assert [p.name for p in enabled] == _defaults_named()
    assert enabled[17] == P("ImageLocality", 10)
    assert enabled[4] == P("TaintToleration", 3)


def test_custom_plugins_are_appended_after_the_defaults() -> None:
    profile = _profile(
        {
            "multiPoint": {"enabled": [{"name": "GpuSpread", "weight": 2}]},
            "score": {"enabled": [{"name": "MyScore", "weight": 5}]},
        }
    )
    assert [p.name for p in profile.plugins.multi_point.enabled] == [
        *_defaults_named(),
        "GpuSpread",
    ]
    assert profile.plugins.multi_point.enabled[-1] == P("GpuSpread", 2)
    assert profile.plugins.score == PluginSet(enabled=[P("MyScore", 5)])


def test_disabling_one_default_removes_only_it() -> None:
    profile = _profile({"multiPoint": {"disabled": [{"name": "ImageLocality"}]}})
    assert [p.name for p in profile.plugins.multi_point.enabled] == [
        n for n in _defaults_named() if n != "ImageLocality"
    ]
    assert profile.plugins.multi_point.disabled == (P("ImageLocality"),)


def test_each_profile_is_merged_on_its_own() -> None:
    config = load_config(
        {
            **HEADER,
            "profiles": [
                {"schedulerName": "a"},
                {
                    "schedulerName": "b",
                    "plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}},
                },
            ],
        }
    )
    a, b = config.profiles
    assert a.plugins == default_plugins()
    assert [p.name for p in b.plugins.multi_point.enabled] == [
        n for n in _defaults_named() if n != "NodeResourcesFit"
    ]


# --- upstream TestSchedulerDefaults -------------------------------------------------------------


def test_defaults_empty_config() -> None:
    assert load_config(HEADER) == KubeSchedulerConfiguration()


def test_defaults_no_scheduler_name() -> None:
    config = load_config({**HEADER, "profiles": [{}]})
    assert config.profiles == (Profile(scheduler_name="default-scheduler"),)


def test_defaults_two_profiles() -> None:
    config = load_config(
        {
            **HEADER,
            "parallelism": 16,
            "profiles": [
                {"schedulerName": "first", "pluginConfig": [{"name": "FooPlugin"}]},
                {
                    "schedulerName": "custom-scheduler",
                    "plugins": {
                        "bind": {
                            "enabled": [{"name": "BarPlugin"}],
                            "disabled": [{"name": "DefaultBinder"}],
                        }
                    },
                },
            ],
        }
    )
    first, custom = config.profiles
    assert first == Profile(scheduler_name="first", plugin_config=[PluginConfig(name="FooPlugin")])
    assert custom.plugins == Plugins(
        multi_point=default_plugins().multi_point,
        bind=PluginSet(enabled=[P("BarPlugin")], disabled=[P("DefaultBinder")]),
    )


def test_defaults_two_profiles_leave_a_missing_name_empty() -> None:
    # Upstream defaults the name only for a lone profile; validation then rejects the gap.
    from schedframe.config._codec import decode_document
    from schedframe.config._defaults import set_defaults

    wire, issues = decode_document(
        {**HEADER, "profiles": [{"pluginConfig": [{"name": "FooPlugin"}]}, {"schedulerName": "x"}]}
    )
    assert not issues and wire is not None
    assert set_defaults(wire).profiles[0].scheduler_name == ""


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param({"parallelism": 16}, {"parallelism": 16}, id="Prallelism with no port"),
        pytest.param({"parallelism": 8}, {"parallelism": 8}, id="set non default parallelism"),
        pytest.param(
            {"delayCacheUntilActive": True},
            {"delay_cache_until_active": True},
            id="set non default delayCacheUntilActive",
        ),
        pytest.param(
            {"percentageOfNodesToScore": 50},
            {"percentage_of_nodes_to_score": 50},
            id="set non default global percentageOfNodesToScore",
        ),
    ],
)
def test_defaults_top_level_overrides(
    given: dict[str, object], expected: dict[str, object]
) -> None:
    config = load_config({**HEADER, **given})
    for attr, value in expected.items():
        assert getattr(config, attr) == value
    assert config.profiles == (Profile(),)


def test_defaults_profile_percentage_is_kept_and_global_stays_default() -> None:
    config = load_config({**HEADER, "profiles": [{"percentageOfNodesToScore": 50}]})
    assert config.percentage_of_nodes_to_score == 0
    assert config.profiles[0].percentage_of_nodes_to_score == 50


def test_defaults_global_and_profile_percentage() -> None:
    config = load_config(
        {**HEADER, "percentageOfNodesToScore": 10, "profiles": [{"percentageOfNodesToScore": 50}]}
    )
    assert config.percentage_of_nodes_to_score == 10
    assert config.profiles[0].percentage_of_nodes_to_score == 50


def test_defaults_unknown_plugin_config_is_kept_as_given() -> None:
    config = load_config(
        {**HEADER, "profiles": [{"pluginConfig": [{"name": "Out", "args": {"a": 1}}]}]}
    )
    assert config.profiles[0].plugin_config == (PluginConfig(name="Out", args={"a": 1}),)


def test_contention_profiling_follows_profiling_only_when_unset() -> None:
    off = load_config({**HEADER, "enableProfiling": False})
    assert (off.enable_profiling, off.enable_contention_profiling) == (False, False)
    explicit = load_config({**HEADER, "enableProfiling": False, "enableContentionProfiling": True})
    assert explicit.enable_contention_profiling is True


def test_configurations_are_hashable_values() -> None:
    config = load_config(
        {**HEADER, "profiles": [{"pluginConfig": [{"name": "A", "args": {"x": [1]}}]}]}
    )
    assert hash(config) == hash(load_config(to_dict(config)))
    assert {default_config(), KubeSchedulerConfiguration()} == {default_config()}
