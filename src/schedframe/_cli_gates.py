"""``--feature-gates`` and ``--emulated-version`` for every command that loads a config.

Outside ``schedframe.cli`` so that ``schedframe run`` (defined with the Kubernetes backend,
which ``schedframe.cli`` imports) can use it without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

__all__ = ["gate_options", "gate_settings"]

F = TypeVar("F", bound=Callable[..., Any])

_GATES_KEY = "schedframe.feature_gates"
_VERSION_KEY = "schedframe.emulated_version"


def _store(key: str) -> Callable[[click.Context, click.Parameter, object], None]:
    def callback(ctx: click.Context, param: click.Parameter, value: object) -> None:
        if value is not None:
            ctx.meta[key] = value

    return callback


def gate_options(fn: F) -> F:
    """Add ``--feature-gates A=true,B=false`` and ``--emulated-version 1.35`` to a command.

    The values are checked when the configuration is loaded (:func:`gate_settings`), so that a
    bad gate is one ``error:`` line and exit code 2 like any other bad input.
    """
    fn = click.option(
        "--emulated-version",
        metavar="VERSION",
        expose_value=False,
        callback=_store(_VERSION_KEY),
        help="Kubernetes version whose behaviour, default plugins and feature gate defaults "
        "to emulate: 1.34, 1.35 or 1.36 (default: 1.36, or the config's emulatedVersion).",
    )(fn)
    fn = click.option(
        "--feature-gates",
        metavar="A=true,B=false",
        expose_value=False,
        callback=_store(_GATES_KEY),
        help="Feature gates to set, as kube-scheduler's flag; they win over the config's "
        "featureGates.",
    )(fn)
    return fn


def gate_settings() -> tuple[Mapping[str, bool] | None, str | None]:
    """The current command's ``--feature-gates`` (checked) and ``--emulated-version``.

    Raises:
        ConfigError: a malformed pair, an unknown gate, a locked gate set otherwise, or an
            unsupported version, with the flag as the field path.
    """
    from schedframe.features import DEFAULT_EMULATED_VERSION, check_gates, parse_feature_gates

    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return None, None
    text = ctx.meta.get(_GATES_KEY)
    version = ctx.meta.get(_VERSION_KEY)
    gates = parse_feature_gates(text) if isinstance(text, str) else None
    if gates is not None or version is not None:
        # Checked here at the flags' names; the config file's own settings are checked at
        # their field paths when it loads.
        check_gates(
            gates or {},
            version if isinstance(version, str) else DEFAULT_EMULATED_VERSION,
            path="--feature-gates",
        )
    return gates, version if isinstance(version, str) else None
