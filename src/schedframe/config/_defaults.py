"""Upstream v1 defaulting: the default plugins, ``mergePlugins`` and ``SetDefaults_*``.

Ports ``pkg/scheduler/apis/config/v1/default_plugins.go`` and ``defaults.go`` (plus
component-base's recommended leader-election and client-connection defaults).

The default plugin list is upstream's for the emulated version and feature gates (see
:func:`default_plugins`), as the ``TestSchedulerDefaults`` table in ``defaults_test.go`` spells
it out (after the in-tree EBSLimits, GCEPDLimits and AzureDiskLimits plugins were removed;
SchedulingGates first). The workload/placement plugins are never added: their gates are off by
default and cannot be turned on here (see :mod:`schedframe.features`). Plugin args defaults are
the runtime's job (args classes live beside plugins), so nothing is appended to
``pluginConfig`` here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

from schedframe.config._types import (
    DEFAULT_SCHEDULER_NAME,
    ClientConnectionConfiguration,
    KubeSchedulerConfiguration,
    LeaderElectionConfiguration,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)
from schedframe.features import FeatureGates

if TYPE_CHECKING:
    # Only decoded documents are defaulted here; the default configuration is built without
    # the codec (``Profile()`` asks this module for the default plugins).
    from schedframe.config._codec import (
        WireClientConnection,
        WireConfig,
        WireLeaderElection,
        WireProfile,
    )

__all__ = [
    "DEFAULT_MULTI_POINT",
    "default_plugins",
    "merge_plugin_set",
    "merge_plugins",
    "set_defaults",
]

#: ``getDefaultPlugins().MultiPoint.Enabled``, in upstream order, with upstream weights.
DEFAULT_MULTI_POINT: Final = (
    PluginRef(name="SchedulingGates"),
    PluginRef(name="PrioritySort"),
    PluginRef(name="NodeUnschedulable"),
    PluginRef(name="NodeName"),
    PluginRef(name="TaintToleration", weight=3),
    PluginRef(name="NodeAffinity", weight=2),
    PluginRef(name="NodePorts"),
    PluginRef(name="NodeResourcesFit", weight=1),
    PluginRef(name="VolumeRestrictions"),
    PluginRef(name="NodeVolumeLimits"),
    PluginRef(name="VolumeBinding"),
    PluginRef(name="VolumeZone"),
    PluginRef(name="PodTopologySpread", weight=2),
    PluginRef(name="InterPodAffinity", weight=2),
    PluginRef(name="DefaultPreemption"),
    PluginRef(name="NodeResourcesBalancedAllocation", weight=1),
    PluginRef(name="ImageLocality", weight=1),
    PluginRef(name="DefaultBinder"),
)

_DEFAULT_PLUGINS: dict[FeatureGates, Plugins] = {}


def default_plugins(features: FeatureGates | None = None) -> Plugins:
    """The default plugin sets of a profile (upstream ``getDefaultPlugins``).

    :data:`DEFAULT_MULTI_POINT`, then upstream's ``applyFeatureGates`` for ``features`` (the
    default gates when ``None``): with DynamicResourceAllocation on (the default, and locked on
    from v1.35), ``DynamicResources`` goes just before ``DefaultPreemption``, with weight 2 from
    v1.36 (when it gained a Score extension) and no weight before; with NodeDeclaredFeatures on
    (the default from v1.36), ``NodeDeclaredFeatures`` is appended; with GenericWorkload on
    (alpha, off by default), ``GangScheduling`` is appended.
    """
    gates = features if features is not None else FeatureGates()
    cached = _DEFAULT_PLUGINS.get(gates)
    if cached is not None:
        return cached
    enabled = list(DEFAULT_MULTI_POINT)
    if gates.enabled("DynamicResourceAllocation"):
        at = next(i for i, p in enumerate(enabled) if p.name == "DefaultPreemption")
        weight = 2 if gates.at_least("1.36") else None
        enabled.insert(at, PluginRef(name="DynamicResources", weight=weight))
    if gates.enabled("NodeDeclaredFeatures"):
        enabled.append(PluginRef(name="NodeDeclaredFeatures"))
    if gates.enabled("GenericWorkload"):
        enabled.append(PluginRef(name="GangScheduling"))
    plugins = Plugins(multi_point=PluginSet(enabled=enabled))
    _DEFAULT_PLUGINS[gates] = plugins
    return plugins


def merge_plugin_set(defaults: PluginSet, custom: PluginSet) -> PluginSet:
    """Merge one extension point's user set into its default set (upstream ``mergePluginSet``).

    A ``"*"`` in ``custom.disabled`` drops every default; a default named in ``custom.enabled``
    is replaced in place (keeping its position, taking the user's weight); the other user
    plugins are appended in order; disabled names are kept (weights dropped) so that
    ``multiPoint`` expansion can honour them later.
    """
    # Disabled entries carry names only: user ones first, then the defaults' own.
    disabled = tuple(PluginRef(name=p.name) for p in (*custom.disabled, *defaults.disabled))
    disabled_names = {p.name for p in disabled}
    # Upstream indexes the user's enabled list by name, so the last duplicate wins a replacement.
    custom_by_name = {p.name: (index, p) for index, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_names:
        for default in defaults.enabled:
            if default.name in disabled_names:
                continue
            if default.name in custom_by_name:
                index, default = custom_by_name[default.name]
                replaced.add(index)
            enabled.append(default)
    enabled.extend(p for index, p in enumerate(custom.enabled) if index not in replaced)
    return PluginSet(enabled=enabled, disabled=disabled)


def merge_plugins(defaults: Plugins, custom: Plugins | None) -> Plugins:
    """Merge a profile's plugins into the defaults, point by point (upstream ``mergePlugins``)."""
    if custom is None:
        return defaults
    return Plugins(
        **{
            point: merge_plugin_set(defaults.point(point), custom.point(point))
            for point in Plugins.EXTENSION_POINTS
        }
    )


def _leader_election(wire: WireLeaderElection) -> LeaderElectionConfiguration:
    base = LeaderElectionConfiguration()
    # Zero durations and empty strings take the recommended defaults, as upstream's do.
    return LeaderElectionConfiguration(
        leader_elect=base.leader_elect if wire.leader_elect is None else wire.leader_elect,
        lease_duration=wire.lease_duration or base.lease_duration,
        renew_deadline=wire.renew_deadline or base.renew_deadline,
        retry_period=wire.retry_period or base.retry_period,
        resource_lock=wire.resource_lock or base.resource_lock,
        resource_name=wire.resource_name or base.resource_name,
        resource_namespace=wire.resource_namespace or base.resource_namespace,
    )


def _client_connection(wire: WireClientConnection) -> ClientConnectionConfiguration:
    base = ClientConnectionConfiguration()
    return ClientConnectionConfiguration(
        kubeconfig=wire.kubeconfig,
        accept_content_types=wire.accept_content_types,
        content_type=wire.content_type or base.content_type,
        qps=wire.qps or base.qps,
        burst=wire.burst or base.burst,
    )


def _profile(wire: WireProfile, scheduler_name: str, features: FeatureGates) -> Profile:
    return Profile(
        scheduler_name=scheduler_name,
        percentage_of_nodes_to_score=wire.percentage_of_nodes_to_score,
        plugins=merge_plugins(default_plugins(features), wire.plugins),
        plugin_config=wire.plugin_config,
    )


def set_defaults(
    wire: WireConfig, features: FeatureGates | None = None
) -> KubeSchedulerConfiguration:
    """Apply upstream ``SetDefaults_KubeSchedulerConfiguration`` to a decoded document, with
    the default plugins of ``features`` (the default gates when ``None``)."""
    features = features if features is not None else FeatureGates()
    from schedframe.config._codec import WireProfile

    profiles = wire.profiles or (WireProfile(),)
    # Only a lone profile gets the default name; validation requires names otherwise.
    if len(profiles) == 1 and profiles[0].scheduler_name is None:
        profiles = (attrs.evolve(profiles[0], scheduler_name=DEFAULT_SCHEDULER_NAME),)
    enable_profiling = True if wire.enable_profiling is None else wire.enable_profiling
    contention = wire.enable_contention_profiling
    if contention is None:
        # Contention profiling defaults on only when profiling itself is on.
        contention = enable_profiling
    return KubeSchedulerConfiguration(
        parallelism=16 if wire.parallelism is None else wire.parallelism,
        leader_election=_leader_election(wire.leader_election),
        client_connection=_client_connection(wire.client_connection),
        percentage_of_nodes_to_score=(
            0 if wire.percentage_of_nodes_to_score is None else wire.percentage_of_nodes_to_score
        ),
        pod_initial_backoff_seconds=(
            1 if wire.pod_initial_backoff_seconds is None else wire.pod_initial_backoff_seconds
        ),
        pod_max_backoff_seconds=(
            10 if wire.pod_max_backoff_seconds is None else wire.pod_max_backoff_seconds
        ),
        profiles=[_profile(p, p.scheduler_name or "", features) for p in profiles],
        extenders=wire.extenders,
        delay_cache_until_active=wire.delay_cache_until_active,
        enable_profiling=enable_profiling,
        enable_contention_profiling=contention,
        feature_gates=features,
    )
