"""camelCase documents <-> config objects: strict v1 decoding and ``to_dict``.

Decoding mirrors upstream's strict codec: unknown or mis-typed fields are issues with a path,
``null`` means "not given", and ints keep their Go width (int32/int64). The result is an
undefaulted *wire* value, with ``None`` wherever upstream has a nil pointer or zero value, so
that ``_defaults`` can apply upstream's defaulting rules exactly. Go durations and issue values
are ``_common``'s (re-exported here).
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable, Mapping
from typing import Final, TypeVar

import attrs

from schedframe.config._common import (
    DurationError,
    Shown,
    format_duration,
    key_text,
    parse_duration,
    shown,
    unsupported,
)
from schedframe.config._types import (
    ClientConnectionConfiguration,
    Extender,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    KubeSchedulerConfiguration,
    LeaderElectionConfiguration,
    PluginConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)
from schedframe.errors import INVALID, REQUIRED, UNKNOWN_FIELD, FieldIssue, join_path
from schedframe.features import DEFAULT_EMULATED_VERSION

__all__ = [
    "API_VERSION",
    "KIND",
    "Shown",
    "WireClientConnection",
    "WireConfig",
    "WireLeaderElection",
    "WireProfile",
    "decode_document",
    "format_duration",
    "key_text",
    "parse_duration",
    "shown",
    "to_dict",
    "unsupported",
]

API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
KIND: Final = "KubeSchedulerConfiguration"

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)

T = TypeVar("T")


# --- strict decoding ----------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class WireLeaderElection:
    """Undefaulted leaderElection: ``None`` / 0 / "" where upstream would default."""

    leader_elect: bool | None = None
    lease_duration: float = 0.0
    renew_deadline: float = 0.0
    retry_period: float = 0.0
    resource_lock: str = ""
    resource_name: str = ""
    resource_namespace: str = ""


@attrs.frozen(kw_only=True)
class WireClientConnection:
    """Undefaulted clientConnection."""

    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = ""
    qps: float = 0.0
    burst: int = 0


@attrs.frozen(kw_only=True)
class WireProfile:
    """Undefaulted profile; ``plugins`` is ``None`` when the profile gives none."""

    scheduler_name: str | None = None
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins | None = None
    plugin_config: tuple[PluginConfig, ...] = ()


@attrs.frozen(kw_only=True)
class WireConfig:
    """Undefaulted configuration, as decoded."""

    parallelism: int | None = None
    leader_election: WireLeaderElection = WireLeaderElection()
    client_connection: WireClientConnection = WireClientConnection()
    enable_profiling: bool | None = None
    enable_contention_profiling: bool | None = None
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int | None = None
    pod_max_backoff_seconds: int | None = None
    profiles: tuple[WireProfile, ...] = ()
    extenders: tuple[Extender, ...] = ()
    delay_cache_until_active: bool = False
    #: schedframe extensions: ``featureGates`` (gate -> bool) and ``emulatedVersion``.
    feature_gates: tuple[tuple[str, object], ...] = ()
    emulated_version: str | None = None


class _Decoder:
    """Reads one document, recording every problem as a :class:`FieldIssue`."""

    def __init__(self) -> None:
        self.issues: list[FieldIssue] = []

    def invalid(self, path: str, value: object, detail: str) -> None:
        self.issues.append(FieldIssue(path=path, kind=INVALID, value=shown(value), detail=detail))

    def mapping(
        self, value: object, path: str, known: tuple[str, ...] | None
    ) -> dict[str, object] | None:
        """A JSON object; unknown keys are reported and dropped. ``None`` when absent or bad."""
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.invalid(path, value, "expected an object")
            return None
        out: dict[str, object] = {}
        for key, item in value.items():
            if not isinstance(key, str) or (known is not None and key not in known):
                self.issues.append(
                    FieldIssue(path=join_path(path, key_text(key)), kind=UNKNOWN_FIELD)
                )
                continue
            out[key] = item
        return out

    def sequence(self, value: object, path: str) -> list[object]:
        if value is None:
            return []
        if not isinstance(value, (list, tuple)):
            self.invalid(path, value, "expected a list")
            return []
        return list(value)

    def integer(self, value: object, path: str, bits: tuple[int, int]) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.invalid(path, value, "expected an integer")
            return None
        if not bits[0] <= value <= bits[1]:
            width = "int32" if bits == _INT32 else "int64"
            self.invalid(path, value, f"out of range for {width}")
            return None
        return value

    def number(self, value: object, path: str) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.invalid(path, value, "expected a number")
            return None
        if isinstance(value, float) and not math.isfinite(value):
            self.invalid(path, value, "expected a finite number")
            return None
        return float(value)

    def string(self, value: object, path: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.invalid(path, value, "expected a string")
            return None
        return value

    def boolean(self, value: object, path: str) -> bool | None:
        if value is None:
            return None
        if not isinstance(value, bool):
            self.invalid(path, value, "expected a boolean")
            return None
        return value

    def duration(self, value: object, path: str) -> float | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.invalid(path, value, 'expected a duration string such as "15s"')
            return None
        try:
            return parse_duration(value)
        except DurationError as exc:
            self.invalid(path, value, exc.reason)
            return None

    def base64(self, value: object, path: str) -> bytes | None:
        text = self.string(value, path)
        if text is None:
            return None
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            self.invalid(path, text, "expected base64-encoded data")
            return None


def _or(value: T | None, default: T) -> T:
    return default if value is None else value


def _read(
    dec: _Decoder,
    data: Mapping[str, object],
    path: str,
    key: str,
    reader: Callable[[object, str], T | None],
) -> T | None:
    return reader(data.get(key), join_path(path, key))


_LEADER_KEYS: Final = (
    "leaderElect",
    "leaseDuration",
    "renewDeadline",
    "retryPeriod",
    "resourceLock",
    "resourceName",
    "resourceNamespace",
)


def _leader_election(dec: _Decoder, value: object, path: str) -> WireLeaderElection:
    data = dec.mapping(value, path, _LEADER_KEYS)
    if data is None:
        return WireLeaderElection()
    return WireLeaderElection(
        leader_elect=_read(dec, data, path, "leaderElect", dec.boolean),
        lease_duration=_or(_read(dec, data, path, "leaseDuration", dec.duration), 0.0),
        renew_deadline=_or(_read(dec, data, path, "renewDeadline", dec.duration), 0.0),
        retry_period=_or(_read(dec, data, path, "retryPeriod", dec.duration), 0.0),
        resource_lock=_or(_read(dec, data, path, "resourceLock", dec.string), ""),
        resource_name=_or(_read(dec, data, path, "resourceName", dec.string), ""),
        resource_namespace=_or(_read(dec, data, path, "resourceNamespace", dec.string), ""),
    )


_CLIENT_KEYS: Final = ("kubeconfig", "acceptContentTypes", "contentType", "qps", "burst")


def _client_connection(dec: _Decoder, value: object, path: str) -> WireClientConnection:
    data = dec.mapping(value, path, _CLIENT_KEYS)
    if data is None:
        return WireClientConnection()
    return WireClientConnection(
        kubeconfig=_or(_read(dec, data, path, "kubeconfig", dec.string), ""),
        accept_content_types=_or(_read(dec, data, path, "acceptContentTypes", dec.string), ""),
        content_type=_or(_read(dec, data, path, "contentType", dec.string), ""),
        qps=_or(_read(dec, data, path, "qps", dec.number), 0.0),
        burst=_or(dec.integer(data.get("burst"), join_path(path, "burst"), _INT32), 0),
    )


#: camelCase key of each Plugins attribute, in upstream order.
POINT_KEYS: Final = {
    "pre_enqueue": "preEnqueue",
    "queue_sort": "queueSort",
    "pre_filter": "preFilter",
    "filter": "filter",
    "post_filter": "postFilter",
    "pre_score": "preScore",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "pre_bind": "preBind",
    "bind": "bind",
    "post_bind": "postBind",
    "multi_point": "multiPoint",
}


def _plugin_list(dec: _Decoder, value: object, path: str) -> tuple[PluginRef, ...]:
    refs = []
    for index, item in enumerate(dec.sequence(value, path)):
        item_path = f"{path}[{index}]"
        data = dec.mapping(item, item_path, ("name", "weight"))
        if data is None:
            if item is None:
                refs.append(PluginRef(name=""))
            continue
        name = _or(_read(dec, data, item_path, "name", dec.string), "")
        weight = dec.integer(data.get("weight"), join_path(item_path, "weight"), _INT32)
        refs.append(PluginRef(name=name, weight=weight))
    return tuple(refs)


def _plugin_set(dec: _Decoder, value: object, path: str) -> PluginSet:
    data = dec.mapping(value, path, ("enabled", "disabled"))
    if data is None:
        return PluginSet()
    return PluginSet(
        enabled=_plugin_list(dec, data.get("enabled"), join_path(path, "enabled")),
        disabled=_plugin_list(dec, data.get("disabled"), join_path(path, "disabled")),
    )


def _plugins(dec: _Decoder, value: object, path: str) -> Plugins | None:
    data = dec.mapping(value, path, tuple(POINT_KEYS.values()))
    if data is None:
        return None
    return Plugins(
        **{
            attr: _plugin_set(dec, data.get(key), join_path(path, key))
            for attr, key in POINT_KEYS.items()
        }
    )


def _plugin_configs(dec: _Decoder, value: object, path: str) -> tuple[PluginConfig, ...]:
    configs = []
    for index, item in enumerate(dec.sequence(value, path)):
        item_path = f"{path}[{index}]"
        data = dec.mapping(item, item_path, ("name", "args"))
        if data is None:
            if item is None:
                configs.append(PluginConfig(name=""))
            continue
        name = _or(_read(dec, data, item_path, "name", dec.string), "")
        args = data.get("args")
        if args is not None and not isinstance(args, Mapping):
            dec.invalid(join_path(item_path, "args"), args, "expected an object")
            args = None
        configs.append(PluginConfig(name=name, args=_copy_args(args or {})))
    return tuple(configs)


def _copy_args(value: Mapping[object, object]) -> dict[str, object]:
    return {key_text(k): _copy_raw(v) for k, v in value.items()}


def _copy_raw(value: object) -> object:
    if isinstance(value, Mapping):
        return _copy_args(value)
    if isinstance(value, (list, tuple)):
        return [_copy_raw(v) for v in value]
    return value


_PROFILE_KEYS: Final = ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig")


def _profile(dec: _Decoder, value: object, path: str) -> WireProfile:
    data = dec.mapping(value, path, _PROFILE_KEYS)
    if data is None:
        return WireProfile()
    return WireProfile(
        scheduler_name=_read(dec, data, path, "schedulerName", dec.string),
        percentage_of_nodes_to_score=dec.integer(
            data.get("percentageOfNodesToScore"),
            join_path(path, "percentageOfNodesToScore"),
            _INT32,
        ),
        plugins=_plugins(dec, data.get("plugins"), join_path(path, "plugins")),
        plugin_config=_plugin_configs(
            dec, data.get("pluginConfig"), join_path(path, "pluginConfig")
        ),
    )


_TLS_KEYS: Final = (
    "insecure",
    "serverName",
    "certFile",
    "keyFile",
    "caFile",
    "certData",
    "keyData",
    "caData",
)


def _tls_config(dec: _Decoder, value: object, path: str) -> ExtenderTLSConfig | None:
    data = dec.mapping(value, path, _TLS_KEYS)
    if data is None:
        return None
    return ExtenderTLSConfig(
        insecure=_or(_read(dec, data, path, "insecure", dec.boolean), False),
        server_name=_or(_read(dec, data, path, "serverName", dec.string), ""),
        cert_file=_or(_read(dec, data, path, "certFile", dec.string), ""),
        key_file=_or(_read(dec, data, path, "keyFile", dec.string), ""),
        ca_file=_or(_read(dec, data, path, "caFile", dec.string), ""),
        cert_data=_or(_read(dec, data, path, "certData", dec.base64), b""),
        key_data=_or(_read(dec, data, path, "keyData", dec.base64), b""),
        ca_data=_or(_read(dec, data, path, "caData", dec.base64), b""),
    )


def _managed_resources(
    dec: _Decoder, value: object, path: str
) -> tuple[ExtenderManagedResource, ...]:
    resources = []
    for index, item in enumerate(dec.sequence(value, path)):
        item_path = f"{path}[{index}]"
        data = dec.mapping(item, item_path, ("name", "ignoredByScheduler"))
        if data is None:
            if item is None:
                resources.append(ExtenderManagedResource(name=""))
            continue
        resources.append(
            ExtenderManagedResource(
                name=_or(_read(dec, data, item_path, "name", dec.string), ""),
                ignored_by_scheduler=_or(
                    _read(dec, data, item_path, "ignoredByScheduler", dec.boolean), False
                ),
            )
        )
    return tuple(resources)


_EXTENDER_KEYS: Final = (
    "urlPrefix",
    "filterVerb",
    "preemptVerb",
    "prioritizeVerb",
    "weight",
    "bindVerb",
    "enableHTTPS",
    "tlsConfig",
    "httpTimeout",
    "nodeCacheCapable",
    "managedResources",
    "ignorable",
)


def _extender(dec: _Decoder, value: object, path: str) -> Extender | None:
    data = dec.mapping(value, path, _EXTENDER_KEYS)
    if data is None:
        return Extender(url_prefix="") if value is None else None
    timeout = _read(dec, data, path, "httpTimeout", dec.duration)
    return Extender(
        url_prefix=_or(_read(dec, data, path, "urlPrefix", dec.string), ""),
        filter_verb=_or(_read(dec, data, path, "filterVerb", dec.string), ""),
        preempt_verb=_or(_read(dec, data, path, "preemptVerb", dec.string), ""),
        prioritize_verb=_or(_read(dec, data, path, "prioritizeVerb", dec.string), ""),
        weight=_or(dec.integer(data.get("weight"), join_path(path, "weight"), _INT64), 0),
        bind_verb=_or(_read(dec, data, path, "bindVerb", dec.string), ""),
        enable_https=_or(_read(dec, data, path, "enableHTTPS", dec.boolean), False),
        tls_config=_tls_config(dec, data.get("tlsConfig"), join_path(path, "tlsConfig")),
        # Upstream's extender client treats a zero timeout as its 5 s default.
        http_timeout=timeout if timeout else 5.0,
        node_cache_capable=_or(_read(dec, data, path, "nodeCacheCapable", dec.boolean), False),
        managed_resources=_managed_resources(
            dec, data.get("managedResources"), join_path(path, "managedResources")
        ),
        ignorable=_or(_read(dec, data, path, "ignorable", dec.boolean), False),
    )


_TOP_KEYS: Final = (
    "featureGates",
    "emulatedVersion",
    "apiVersion",
    "kind",
    "parallelism",
    "leaderElection",
    "clientConnection",
    "enableProfiling",
    "enableContentionProfiling",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "profiles",
    "extenders",
    "delayCacheUntilActive",
)


def _type_meta(dec: _Decoder, data: Mapping[str, object]) -> None:
    for key, expected in (("apiVersion", API_VERSION), ("kind", KIND)):
        value = data.get(key)
        if value is None:
            dec.issues.append(FieldIssue(path=key, kind=REQUIRED, detail=f'must be "{expected}"'))
        elif value != expected:
            dec.issues.append(unsupported(key, value, (expected,)))


def decode_document(document: object) -> tuple[WireConfig | None, list[FieldIssue]]:
    """Decode one parsed YAML/JSON document strictly; return the wire value and every issue."""
    dec = _Decoder()
    if not isinstance(document, Mapping):
        dec.invalid("", document, f"expected a {KIND} object")
        return None, dec.issues
    data = dec.mapping(document, "", _TOP_KEYS)
    assert data is not None
    _type_meta(dec, data)
    profiles = tuple(
        _profile(dec, item, f"profiles[{index}]")
        for index, item in enumerate(dec.sequence(data.get("profiles"), "profiles"))
    )
    extenders = tuple(
        extender
        for index, item in enumerate(dec.sequence(data.get("extenders"), "extenders"))
        if (extender := _extender(dec, item, f"extenders[{index}]")) is not None
    )
    wire = WireConfig(
        parallelism=dec.integer(data.get("parallelism"), "parallelism", _INT32),
        leader_election=_leader_election(dec, data.get("leaderElection"), "leaderElection"),
        client_connection=_client_connection(dec, data.get("clientConnection"), "clientConnection"),
        enable_profiling=dec.boolean(data.get("enableProfiling"), "enableProfiling"),
        enable_contention_profiling=dec.boolean(
            data.get("enableContentionProfiling"), "enableContentionProfiling"
        ),
        percentage_of_nodes_to_score=dec.integer(
            data.get("percentageOfNodesToScore"), "percentageOfNodesToScore", _INT32
        ),
        pod_initial_backoff_seconds=dec.integer(
            data.get("podInitialBackoffSeconds"), "podInitialBackoffSeconds", _INT64
        ),
        pod_max_backoff_seconds=dec.integer(
            data.get("podMaxBackoffSeconds"), "podMaxBackoffSeconds", _INT64
        ),
        profiles=profiles,
        extenders=extenders,
        delay_cache_until_active=_or(
            dec.boolean(data.get("delayCacheUntilActive"), "delayCacheUntilActive"), False
        ),
        feature_gates=_feature_gates(dec, data.get("featureGates")),
        emulated_version=dec.string(data.get("emulatedVersion"), "emulatedVersion"),
    )
    return wire, dec.issues


def _feature_gates(dec: _Decoder, value: object) -> tuple[tuple[str, object], ...]:
    """``featureGates`` (a schedframe extension): gate name -> boolean; names checked later."""
    data = dec.mapping(value, "featureGates", None)
    if data is None:
        return ()
    out: list[tuple[str, object]] = []
    for name, enabled in data.items():
        flag = dec.boolean(enabled, join_path("featureGates", name))
        if flag is not None:
            out.append((name, flag))
    return tuple(out)


# --- encoding -----------------------------------------------------------------------------------


def _ref_dict(ref: PluginRef) -> dict[str, object]:
    out: dict[str, object] = {"name": ref.name}
    if ref.weight is not None:
        out["weight"] = ref.weight
    return out


def plugin_set_dict(plugin_set: PluginSet) -> dict[str, object]:
    """A PluginSet in camelCase."""
    return {
        "enabled": [_ref_dict(r) for r in plugin_set.enabled],
        "disabled": [_ref_dict(r) for r in plugin_set.disabled],
    }


def _profile_dict(profile: Profile) -> dict[str, object]:
    out: dict[str, object] = {"schedulerName": profile.scheduler_name}
    if profile.percentage_of_nodes_to_score is not None:
        out["percentageOfNodesToScore"] = profile.percentage_of_nodes_to_score
    out["plugins"] = {
        key: plugin_set_dict(profile.plugins.point(attr)) for attr, key in POINT_KEYS.items()
    }
    out["pluginConfig"] = [
        {"name": pc.name, "args": _copy_raw(pc.args)} for pc in profile.plugin_config
    ]
    return out


def _leader_dict(le: LeaderElectionConfiguration) -> dict[str, object]:
    return {
        "leaderElect": le.leader_elect,
        "leaseDuration": format_duration(le.lease_duration),
        "renewDeadline": format_duration(le.renew_deadline),
        "retryPeriod": format_duration(le.retry_period),
        "resourceLock": le.resource_lock,
        "resourceName": le.resource_name,
        "resourceNamespace": le.resource_namespace,
    }


def _client_dict(cc: ClientConnectionConfiguration) -> dict[str, object]:
    return {
        "kubeconfig": cc.kubeconfig,
        "acceptContentTypes": cc.accept_content_types,
        "contentType": cc.content_type,
        "qps": cc.qps,
        "burst": cc.burst,
    }


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _extender_dict(ext: Extender) -> dict[str, object]:
    out: dict[str, object] = {
        "urlPrefix": ext.url_prefix,
        "filterVerb": ext.filter_verb,
        "preemptVerb": ext.preempt_verb,
        "prioritizeVerb": ext.prioritize_verb,
        "weight": ext.weight,
        "bindVerb": ext.bind_verb,
        "enableHTTPS": ext.enable_https,
    }
    if ext.tls_config is not None:
        tls = ext.tls_config
        out["tlsConfig"] = {
            "insecure": tls.insecure,
            "serverName": tls.server_name,
            "certFile": tls.cert_file,
            "keyFile": tls.key_file,
            "caFile": tls.ca_file,
            "certData": _b64(tls.cert_data),
            "keyData": _b64(tls.key_data),
            "caData": _b64(tls.ca_data),
        }
    out["httpTimeout"] = format_duration(ext.http_timeout)
    out["nodeCacheCapable"] = ext.node_cache_capable
    out["managedResources"] = [
        {"name": r.name, "ignoredByScheduler": r.ignored_by_scheduler}
        for r in ext.managed_resources
    ]
    out["ignorable"] = ext.ignorable
    return out


def to_dict(config: KubeSchedulerConfiguration) -> dict[str, object]:
    """Return ``config`` as a camelCase ``kubescheduler.config.k8s.io/v1`` document.

    Every field is shown; plugin args are printed as stored. ``load_config(to_dict(c)) == c``
    for any configuration that validates.
    """
    out: dict[str, object] = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "parallelism": config.parallelism,
        "leaderElection": _leader_dict(config.leader_election),
        "clientConnection": _client_dict(config.client_connection),
        "enableProfiling": config.enable_profiling,
        "enableContentionProfiling": config.enable_contention_profiling,
    }
    if config.percentage_of_nodes_to_score is not None:
        out["percentageOfNodesToScore"] = config.percentage_of_nodes_to_score
    out["podInitialBackoffSeconds"] = config.pod_initial_backoff_seconds
    out["podMaxBackoffSeconds"] = config.pod_max_backoff_seconds
    out["profiles"] = [_profile_dict(p) for p in config.profiles]
    out["extenders"] = [_extender_dict(e) for e in config.extenders]
    out["delayCacheUntilActive"] = config.delay_cache_until_active
    # The schedframe extensions appear only when they differ from the defaults, so that the
    # output of a plain configuration stays an upstream document.
    gates = config.feature_gates
    if gates.overrides:
        out["featureGates"] = dict(gates.overrides)
    if gates.emulated_version != DEFAULT_EMULATED_VERSION:
        out["emulatedVersion"] = gates.emulated_version
    return out
