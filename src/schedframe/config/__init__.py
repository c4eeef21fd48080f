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
from schedframe.config._common import parse_duration
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
    "encode_args",
    "load_config",
    "loads_config",
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


def _from_document(document: object, source: str) -> KubeSchedulerConfiguration:
    from schedframe.config._codec import decode_document
    from schedframe.config._validation import validate

    try:
        wire, issues = decode_document(document)
    except RecursionError:
        raise _read_error("document nested too deeply", source) from None
    # Like upstream, a document that does not decode is not defaulted or validated.
    if issues or wire is None:
        raise ConfigError(issues, source=source)
    config = _set_defaults(wire)
    issues = validate(config)
    if issues:
        raise ConfigError(issues, source=source)
    return config


def _read_error(detail: str, source: str) -> ConfigError:
    return ConfigError([FieldIssue(path="", kind=_INVALID, detail=detail)], source=source)


def loads_config(text: str, *, source: str = "<string>") -> KubeSchedulerConfiguration:
    """Load a configuration from YAML or JSON text.

    Args:
        text: the document.
        source: the name used in error messages.

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
    return _from_document(document, source)


def load_config(
    source: str | os.PathLike[str] | Mapping[str, object] | None = None,
) -> KubeSchedulerConfiguration:
    """Load, default and validate a configuration.

    Args:
        source: ``None`` for the default configuration; a path to a YAML or JSON file; or an
            already parsed mapping, treated as a file named ``<dict>``.

    Returns:
        The fully defaulted configuration.

    Raises:
        ConfigError: the file cannot be read or parsed, or the configuration is not valid; it
            lists every issue found, each with its field path.
    """
    if source is None:
        return default_config()
    if isinstance(source, Mapping):
        return _from_document(source, "<dict>")
    name = os.fspath(source)
    try:
        with open(name, encoding="utf-8") as stream:
            text = stream.read()
    except OSError as exc:
        raise _read_error(f"cannot read file: {exc.strerror or exc}", name) from None
    except UnicodeDecodeError as exc:
        raise _read_error(f"not UTF-8 text: {exc.reason}", name) from None
    return loads_config(text, source=name)


def default_config() -> KubeSchedulerConfiguration:
    """The configuration kube-scheduler runs with when given none (``load_config(None)``)."""
    return KubeSchedulerConfiguration()
