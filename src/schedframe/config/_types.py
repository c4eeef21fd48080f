"""The ``kubescheduler.config.k8s.io/v1`` model as frozen value objects (snake_case attributes).

Every class here equals its upstream v1 struct after defaulting: constructing one with no
arguments gives the fully defaulted value (``KubeSchedulerConfiguration() == default_config()``).
camelCase spellings live only in ``_codec.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar, Final

import attrs

from schedframe.features import FeatureGates

__all__ = [
    "DEFAULT_SCHEDULER_NAME",
    "ClientConnectionConfiguration",
    "Extender",
    "ExtenderManagedResource",
    "ExtenderTLSConfig",
    "KubeSchedulerConfiguration",
    "LeaderElectionConfiguration",
    "PluginConfig",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "Profile",
]

#: The profile name pods get when they name no scheduler (upstream ``v1.DefaultSchedulerName``).
DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"


def _plugin_refs(value: Iterable[PluginRef]) -> tuple[PluginRef, ...]:
    return tuple(value)


@attrs.frozen(kw_only=True)
class PluginRef:
    """A plugin named in a :class:`PluginSet` (upstream ``v1.Plugin``).

    Attributes:
        name: the registered plugin name, e.g. ``NodeResourcesFit``; ``"*"`` in a disabled list
            means every default plugin of that extension point.
        weight: the Score weight; ``None`` when not given (the framework then uses 1).
    """

    name: str
    weight: int | None = None


@attrs.frozen(kw_only=True)
class PluginSet:
    """Enabled and disabled plugins of one extension point (upstream ``v1.PluginSet``)."""

    enabled: tuple[PluginRef, ...] = attrs.field(default=(), converter=_plugin_refs)
    disabled: tuple[PluginRef, ...] = attrs.field(default=(), converter=_plugin_refs)


@attrs.frozen(kw_only=True)
class Plugins:
    """Plugin sets per extension point, plus ``multi_point`` (upstream ``v1.Plugins``).

    ``Plugins()`` has every set empty; the defaulted sets of a profile come from
    ``Profile().plugins``.
    """

    #: Attribute names in upstream field order.
    EXTENSION_POINTS: ClassVar[tuple[str, ...]] = (
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

    pre_enqueue: PluginSet = attrs.field(factory=PluginSet)
    queue_sort: PluginSet = attrs.field(factory=PluginSet)
    pre_filter: PluginSet = attrs.field(factory=PluginSet)
    filter: PluginSet = attrs.field(factory=PluginSet)
    post_filter: PluginSet = attrs.field(factory=PluginSet)
    pre_score: PluginSet = attrs.field(factory=PluginSet)
    score: PluginSet = attrs.field(factory=PluginSet)
    reserve: PluginSet = attrs.field(factory=PluginSet)
    permit: PluginSet = attrs.field(factory=PluginSet)
    pre_bind: PluginSet = attrs.field(factory=PluginSet)
    bind: PluginSet = attrs.field(factory=PluginSet)
    post_bind: PluginSet = attrs.field(factory=PluginSet)
    multi_point: PluginSet = attrs.field(factory=PluginSet)

    def point(self, name: str) -> PluginSet:
        """Return the set of one extension point, by attribute name (``"pre_filter"``).

        Raises:
            KeyError: ``name`` is not one of :attr:`EXTENSION_POINTS`.
        """
        if name not in self.EXTENSION_POINTS:
            raise KeyError(name)
        result: PluginSet = getattr(self, name)
        return result


def _args_copy(value: Mapping[str, object]) -> Mapping[str, object]:
    return dict(value)


@attrs.frozen(kw_only=True)
class PluginConfig:
    """Arguments for one plugin (upstream ``v1.PluginConfig``).

    ``args`` is kept raw, camelCase, as written in the file; the runtime decodes it with
    :func:`schedframe.config.decode_args` into the plugin's own args class. It takes no part in
    hashing.
    """

    name: str
    args: Mapping[str, object] = attrs.field(factory=dict, converter=_args_copy, hash=False)


def _default_profile_plugins() -> Plugins:
    from schedframe.config._defaults import default_plugins

    return default_plugins()


def _plugin_configs(value: Iterable[PluginConfig]) -> tuple[PluginConfig, ...]:
    return tuple(value)


@attrs.frozen(kw_only=True)
class Profile:
    """One scheduling profile (upstream ``v1.KubeSchedulerProfile``), defaulted.

    Attributes:
        scheduler_name: pods whose ``spec.schedulerName`` equals it are scheduled by this profile.
        percentage_of_nodes_to_score: overrides the global value when not ``None``.
        plugins: the plugin sets after merging the user's sets into the default ones (the
            default ``multiPoint`` list when constructed without arguments).
        plugin_config: raw plugin arguments, in file order.
    """

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins = attrs.field(factory=_default_profile_plugins)
    plugin_config: tuple[PluginConfig, ...] = attrs.field(default=(), converter=_plugin_configs)


@attrs.frozen(kw_only=True)
class LeaderElectionConfiguration:
    """Leader election settings (component-base ``LeaderElectionConfiguration``); seconds."""

    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


@attrs.frozen(kw_only=True)
class ClientConnectionConfiguration:
    """API client settings (component-base ``ClientConnectionConfiguration``)."""

    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = "application/vnd.kubernetes.protobuf"
    qps: float = 50.0
    burst: int = 100


@attrs.frozen(kw_only=True)
class ExtenderManagedResource:
    """An extended resource an extender manages (upstream ``v1.ExtenderManagedResource``)."""

    name: str
    ignored_by_scheduler: bool = False


@attrs.frozen(kw_only=True)
class ExtenderTLSConfig:
    """TLS settings for talking to an extender (upstream ``v1.ExtenderTLSConfig``)."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""


def _managed_resources(
    value: Iterable[ExtenderManagedResource],
) -> tuple[ExtenderManagedResource, ...]:
    return tuple(value)


@attrs.frozen(kw_only=True)
class Extender:
    """An HTTP scheduler extender (upstream ``v1.Extender``).

    ``weight`` has no default upstream, so it is 0 unless given (validation then requires a
    positive weight when ``prioritize_verb`` is set). ``http_timeout`` is in seconds; 0 or
    absent means 5 seconds, as upstream's extender client does.
    """

    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    bind_verb: str = ""
    enable_https: bool = False
    tls_config: ExtenderTLSConfig | None = None
    http_timeout: float = 5.0
    node_cache_capable: bool = False
    managed_resources: tuple[ExtenderManagedResource, ...] = attrs.field(
        default=(), converter=_managed_resources
    )
    ignorable: bool = False


def _default_profiles() -> tuple[Profile, ...]:
    return (Profile(),)


def _profiles(value: Iterable[Profile]) -> tuple[Profile, ...]:
    return tuple(value)


def _extenders(value: Iterable[Extender]) -> tuple[Extender, ...]:
    return tuple(value)


@attrs.frozen(kw_only=True)
class KubeSchedulerConfiguration:
    """A whole ``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``), defaulted.

    Attributes:
        parallelism: how many nodes are filtered or scored at once.
        leader_election: leader election settings.
        client_connection: API client settings.
        percentage_of_nodes_to_score: 0 means adaptive (5%..50% by cluster size).
        pod_initial_backoff_seconds: first backoff of an unschedulable pod.
        pod_max_backoff_seconds: backoff ceiling.
        profiles: scheduling profiles, one per scheduler name.
        extenders: HTTP extenders shared by every profile.
        delay_cache_until_active: fill caches only once this instance leads.
        enable_profiling: serve profiling handlers.
        enable_contention_profiling: enable lock contention profiling.
        feature_gates: the feature gates and emulated Kubernetes version (a schedframe
            extension: upstream reads them from ``--feature-gates``/``--emulated-version``);
            the default profile's plugins depend on them.
    """

    parallelism: int = 16
    leader_election: LeaderElectionConfiguration = attrs.field(factory=LeaderElectionConfiguration)
    client_connection: ClientConnectionConfiguration = attrs.field(
        factory=ClientConnectionConfiguration
    )
    percentage_of_nodes_to_score: int | None = 0
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    profiles: tuple[Profile, ...] = attrs.field(factory=_default_profiles, converter=_profiles)
    extenders: tuple[Extender, ...] = attrs.field(default=(), converter=_extenders)
    delay_cache_until_active: bool = False
    enable_profiling: bool = True
    enable_contention_profiling: bool = True
    feature_gates: FeatureGates = attrs.field(factory=FeatureGates)

    def profile(self, scheduler_name: str) -> Profile:
        """Return the profile named ``scheduler_name``.

        Raises:
            KeyError: no profile has that scheduler name.
        """
        for profile in self.profiles:
            if profile.scheduler_name == scheduler_name:
                return profile
        raise KeyError(scheduler_name)
