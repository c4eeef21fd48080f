"""``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``): load, default, validate.

A file is read strictly (repeated keys, unknown fields and wrong types are errors), defaulted as
kube-scheduler's v1 defaulting does (default plugins merged into each profile, one
``default-scheduler`` profile when none is given), then validated with upstream's rules. Every
problem is reported at once, as one :class:`~schedframe.errors.ConfigError` whose lines read
like upstream's field errors, prefixed by the file::

    bad.yaml: profiles[0].pluginConfig[1]: Duplicate value: "NodeResourcesFit"
    bad.yaml: parallelism: Invalid value: 0: should be an integer value greater than zero

Plugin ``args`` stay raw here; the runtime decodes them into each plugin's args class with
:func:`decode_args`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from schedframe._yaml import YAMLError, load_strict
from schedframe.config._args import decode_args, encode_args
from schedframe.config._common import format_duration, parse_duration
from schedframe.config._defaults import default_plugins
from schedframe.config._defaults import set_defaults as _set_defaults
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
from schedframe.errors import INVALID as _INVALID
from schedframe.errors import ConfigError, FieldIssue
from schedframe.features import DEFAULT_EMULATED_VERSION, FeatureGates, check_gates

_API_VERSION = "kubescheduler.config.k8s.io/v1"
_KIND = "KubeSchedulerConfiguration"

if TYPE_CHECKING:
    from schedframe.config._codec import to_dict

__all__ = [
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
    "decode_args",
    "default_config",
    "default_plugins",
    "encode_args",
    "load_config",
    "loads_config",
    "format_duration",
    "parse_duration",
    "to_dict",
]


# Hidden from type checkers, which would otherwise accept any name as an attribute.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        # The codec (and its wire classes) is imported when a document is read or written,
        # not when the default configuration is built.
        if name == "to_dict":
            from schedframe.config._codec import to_dict

            globals()[name] = to_dict
            return to_dict
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


def _gates(
    file_gates: tuple[tuple[str, object], ...],
    file_version: str | None,
    feature_gates: Mapping[str, bool] | None,
    emulated_version: str | None,
    source: str,
) -> FeatureGates:
    """The file's ``featureGates``/``emulatedVersion``, with the caller's settings winning."""
    if emulated_version is not None:
        version = emulated_version
    elif file_version is not None:
        version = file_version
    else:
        version = DEFAULT_EMULATED_VERSION
    # The file's settings are checked at their field paths; the caller's (command-line flags)
    # are the caller's to check (check_gates with path "--feature-gates").
    gates = check_gates(dict(file_gates), version, path="featureGates", source=source)
    if feature_gates:
        gates = gates.with_overrides(feature_gates)
    return gates


def _from_document(
    document: object,
    source: str,
    feature_gates: Mapping[str, bool] | None = None,
    emulated_version: str | None = None,
) -> KubeSchedulerConfiguration:
    from schedframe.config._codec import decode_document
    from schedframe.config._validation import validate

    try:
        wire, issues = decode_document(document)
    except RecursionError:
        raise _read_error("document nested too deeply", source) from None
    # Like upstream, a document that does not decode is not defaulted or validated.
    if issues or wire is None:
        raise ConfigError(issues, source=source)
    gates = _gates(
        wire.feature_gates, wire.emulated_version, feature_gates, emulated_version, source
    )
    config = _set_defaults(wire, gates)
    issues = validate(config)
    if issues:
        raise ConfigError(issues, source=source)
    return config


def _read_error(detail: str, source: str) -> ConfigError:
    return ConfigError([FieldIssue(path="", kind=_INVALID, detail=detail)], source=source)


def loads_config(
    text: str,
    *,
    source: str = "<string>",
    feature_gates: Mapping[str, bool] | None = None,
    emulated_version: str | None = None,
) -> KubeSchedulerConfiguration:
    """Load a configuration from YAML or JSON text.

    Args:
        text: the document.
        source: the name used in error messages.
        feature_gates: gates set on top of the document's ``featureGates`` (as
            ``--feature-gates`` does).
        emulated_version: overrides the document's ``emulatedVersion``.

    Raises:
        ConfigError: the text is not YAML, or the configuration is not valid.
    """
    try:
        document = load_strict(text, source)
    except YAMLError as exc:
        raise ConfigError([exc.issue], source=source) from None
    except (ValueError, TypeError, RecursionError) as exc:
        # PyYAML's constructors raise plain errors for values such as "2001-13-45" or "!!int x".
        raise _read_error(f"not valid YAML: {exc}", source) from None
    return _from_document(document, source, feature_gates, emulated_version)


def load_config(
    source: str | os.PathLike[str] | Mapping[str, object] | None = None,
    *,
    feature_gates: Mapping[str, bool] | None = None,
    emulated_version: str | None = None,
) -> KubeSchedulerConfiguration:
    """Load, default and validate a configuration.

    Args:
        source: ``None`` for the default configuration; a path to a YAML or JSON file; or an
            already parsed mapping, treated as a file named ``<dict>``.
        feature_gates: gates set on top of the file's ``featureGates`` (``--feature-gates``).
        emulated_version: the Kubernetes version to emulate (``--emulated-version``); it
            overrides the file's ``emulatedVersion``; the default is
            :data:`schedframe.features.DEFAULT_EMULATED_VERSION`.

    Returns:
        The fully defaulted configuration.

    Raises:
        ConfigError: the file cannot be read or parsed, or the configuration is not valid; it
            lists every issue found, each with its field path.
    """
    if source is None:
        if feature_gates or emulated_version is not None:
            return _from_document(
                {"apiVersion": _API_VERSION, "kind": _KIND},
                "<default>",
                feature_gates,
                emulated_version,
            )
        return default_config()
    if isinstance(source, Mapping):
        return _from_document(source, "<dict>", feature_gates, emulated_version)
    name = os.fspath(source)
    try:
        with open(name, encoding="utf-8") as stream:
            text = stream.read()
    except OSError as exc:
        raise _read_error(f"cannot read file: {exc.strerror or exc}", name) from None
    except UnicodeDecodeError as exc:
        raise _read_error(f"not UTF-8 text: {exc.reason}", name) from None
    return loads_config(
        text, source=name, feature_gates=feature_gates, emulated_version=emulated_version
    )


def default_config(features: FeatureGates | None = None) -> KubeSchedulerConfiguration:
    """The configuration kube-scheduler runs with when given none (``load_config(None)``),
    with the default profile of ``features`` (the default gates when ``None``)."""
    if features is None:
        return KubeSchedulerConfiguration()
    return KubeSchedulerConfiguration(
        profiles=(Profile(plugins=default_plugins(features)),), feature_gates=features
    )
