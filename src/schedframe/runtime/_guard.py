"""What the extension-point runners accept back from a plugin, and what they let escape.

Upstream's Go plugins cannot return a value of the wrong type, and a plugin panic is a bug
the process dies of. A Python plugin can return anything and raise anything, so the runners
check every result here, *inside* their guard: a wrong type, a NaN score or an invalid Permit
timeout becomes an ``ERROR`` status naming the plugin, worded as upstream words a plugin
failure (``running Reserve plugin "X": ...``). The pod is then unreserved, forgotten and
retried after the error backoff, as for any other plugin error.

Which exceptions a runner turns into a status: every
:class:`BaseException` except :class:`KeyboardInterrupt` and :class:`SystemExit`. Those two are
how the *process* is asked to stop (Ctrl-C, ``sys.exit``), and a library must not swallow
them; they propagate, and the scheduling and binding cycles catch them on the way out only to
put the pod back (unreserve, forget, requeue, in-flight count released) before re-raising.
So a plugin raising ``SystemExit`` stops the scheduler, but loses no pod. Anything else,
``asyncio.CancelledError`` and ``GeneratorExit`` included, is the plugin's failure.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Final

from schedframe.framework import Code, Status
from schedframe.runtime._waiting_pods import MAX_PERMIT_TIMEOUT

__all__ = [
    "PluginResultError",
    "SHUTDOWN",
    "bad_result",
    "check_permit_timeout",
    "check_scores",
    "describe",
    "not_instance",
    "not_status",
    "status_or_none",
]

#: The exceptions that are the process's own shutdown: never turned into a plugin status.
SHUTDOWN: Final = (KeyboardInterrupt, SystemExit)


#: The longest text of a returned value quoted in a message.
_QUOTE_LIMIT: Final = 80


def describe(value: object) -> str:
    """``str ('abc')``: the type of a returned value and a short, one-line ``repr`` of it."""
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__: the type alone says enough
        return type(value).__name__
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    if len(text) > _QUOTE_LIMIT:
        text = text[: _QUOTE_LIMIT - 3] + "..."
    return f"{type(value).__name__} ({text})"


def bad_result(prefix: str, plugin: str, detail: str) -> Status:
    """An ``ERROR`` status for a plugin whose result the runner cannot use."""
    message = f"{prefix}: {detail}"
    return Status(Code.ERROR, message, error=PluginResultError(message), plugin=plugin)


class PluginResultError(TypeError):
    """A plugin returned something its extension point does not allow."""


def not_instance(value: object, kinds: type | tuple[type, ...]) -> bool:
    """True when ``value`` is neither ``None`` nor one of ``kinds``: not what the point allows.

    A function, so the type checker does not take the plugin's annotations for a guarantee.
    """
    return value is not None and not isinstance(value, kinds)


def not_status(value: object) -> bool:
    """True when ``value`` is neither ``None`` nor a :class:`Status`."""
    return value is not None and not isinstance(value, Status)


def status_or_none(prefix: str, plugin: str, value: object) -> Status | None:
    """``value`` if it is a :class:`Status` or ``None``; else an error status saying what came back.

    The caller returns the error status as the plugin's failure.
    """
    if value is None or isinstance(value, Status):
        return value
    return bad_result(prefix, plugin, f"returned {describe(value)}, expected a Status or None")


def check_scores(scores: object, count: int) -> str | None:
    """Why ``scores`` is not one integer score per node (``count`` nodes), or ``None``.

    Upstream scores are ``int64``: a float (NaN above all, which passes every range check),
    a bool or anything else is the plugin's error, never a silently odd total.
    """
    try:
        n = len(scores)  # type: ignore[arg-type]
    except Exception:
        return f"returned the scores {describe(scores)}, expected one integer per node"
    if n != count:
        return f"returned {n} scores for {count} nodes"
    try:
        if all(s.__class__ is int for s in scores):  # type: ignore[attr-defined]
            return None
        for s in scores:  # type: ignore[attr-defined]
            if isinstance(s, bool) or not isinstance(s, Integral):
                return f"returned the score {describe(s)}, expected an integer"
    except Exception:
        return f"returned the scores {describe(scores)}, expected one integer per node"
    return None


def check_permit_timeout(timeout: object) -> tuple[float, str | None]:
    """A Permit ``WAIT``'s timeout in seconds, capped at :data:`MAX_PERMIT_TIMEOUT`, or why not.

    ``None`` (no timeout given) is a zero wait, as upstream's zero ``time.Duration``; a timeout
    must otherwise be a finite real number of seconds, zero or more.
    """
    if timeout is None:
        return 0.0, None
    if isinstance(timeout, bool) or not isinstance(timeout, Real):
        return 0.0, f"asked to wait {describe(timeout)}, expected a number of seconds"
    seconds = float(timeout)
    if math.isnan(seconds) or math.isinf(seconds):
        return 0.0, f"asked to wait {seconds} seconds, expected a finite number of seconds"
    if seconds < 0:
        return 0.0, f"asked to wait {seconds} seconds, expected zero or more"
    return min(seconds, MAX_PERMIT_TIMEOUT), None
