"""What the codec, the args decoder and validation share: issue values and Go durations.

Kept apart from ``_codec`` so that decoding plugin args (every Framework build) does not build
the codec's wire classes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

from schedframe.errors import UNSUPPORTED, FieldIssue

__all__ = [
    "DurationError",
    "Shown",
    "format_duration",
    "key_text",
    "parse_duration",
    "shown",
    "unsupported",
]


# --- values shown in issues -------------------------------------------------------------------


class Shown:
    """An issue value printed as-is (upstream prints Stringers and structs bare, unquoted)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Shown({self.text!r})"


def _jsonable(value: object) -> object:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def shown(value: object) -> object:
    """Return ``value`` ready for :class:`FieldIssue`: scalars as they are, the rest as JSON."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    import json

    return Shown(json.dumps(_jsonable(value), separators=(",", ":"), ensure_ascii=False))


def key_text(key: object) -> str:
    # YAML->JSON conversion upstream turns non-string keys into their JSON spelling.
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)


def unsupported(path: str, value: object, supported: tuple[str, ...]) -> FieldIssue:
    """An upstream ``field.NotSupported`` issue."""
    import json

    listed = ", ".join(json.dumps(s) for s in supported)
    return FieldIssue(
        path=path, kind=UNSUPPORTED, value=shown(value), detail=f"supported values: {listed}"
    )


# --- Go durations -------------------------------------------------------------------------------

_UNIT_NS: Final = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,
    "\u03bcs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_MAX_NS: Final = 2**63


class DurationError(ValueError):
    """A Go duration that does not parse; ``reason`` is Go's wording without the value."""

    def __init__(self, reason: str, text: str) -> None:
        self.reason = reason
        super().__init__(f"time: {reason} {_go_quote(text)}")


def _go_quote(text: str) -> str:
    # The quoting of Go's time package: ASCII printable kept, other bytes as \xNN.
    out = ['"']
    for char in text:
        if char >= "\x80" or char < " ":
            out.extend(f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
        else:
            out.append("\\" + char if char in '"\\' else char)
    out.append('"')
    return "".join(out)


def _parse_duration_ns(text: str) -> int:
    # A port of Go's time.ParseDuration, including its overflow limits and float rounding.
    orig, s, neg = text, text, False
    if s and s[0] in "+-":
        neg, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    if not s:
        raise DurationError("invalid duration", orig)
    total = 0
    while s:
        if not (s[0] == "." or s[0].isascii() and s[0].isdigit()):
            raise DurationError("invalid duration", orig)
        i = 0
        while i < len(s) and "0" <= s[i] <= "9":
            i += 1
        pre, whole, s = i > 0, int(s[:i] or "0"), s[i:]
        if whole > _MAX_NS:
            raise DurationError("invalid duration", orig)
        frac, scale, post = 0, 1.0, False
        if s and s[0] == ".":
            s = s[1:]
            i, overflow = 0, False
            while i < len(s) and "0" <= s[i] <= "9":
                if not overflow:
                    # Go keeps the fraction digits it can hold and drops the rest.
                    nxt = frac * 10 + int(s[i])
                    if frac > (_MAX_NS - 1) // 10 or nxt > _MAX_NS:
                        overflow = True
                    else:
                        frac, scale = nxt, scale * 10
                i += 1
            post, s = i > 0, s[i:]
        if not pre and not post:
            raise DurationError("invalid duration", orig)
        i = 0
        while i < len(s) and s[i] != "." and not ("0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise DurationError("missing unit in duration", orig)
        unit_text, s = s[:i], s[i:]
        unit = _UNIT_NS.get(unit_text)
        if unit is None:
            raise DurationError(f"unknown unit {_go_quote(unit_text)} in duration", orig)
        if whole > _MAX_NS // unit:
            raise DurationError("invalid duration", orig)
        value = whole * unit
        if frac > 0:
            value += int(float(frac) * (float(unit) / scale))
            if value > _MAX_NS:
                raise DurationError("invalid duration", orig)
        total += value
        if total > _MAX_NS:
            raise DurationError("invalid duration", orig)
    if neg:
        return -total
    if total > _MAX_NS - 1:
        raise DurationError("invalid duration", orig)
    return total


def parse_duration(text: str) -> float:
    """Parse a Go duration (``"15s"``, ``"1m30s"``, ``"500ms"``, ``"1.5h"``) into seconds.

    Exactly Go's ``time.ParseDuration``: units ``ns us µs ms s m h``, an optional sign, a bare
    ``"0"``, at most 2^63-1 nanoseconds.

    Raises:
        ValueError: the text is not a Go duration; the message is Go's
            (``time: missing unit in duration "15"``).
    """
    if not isinstance(text, str):
        raise ValueError(f"time: invalid duration {text!r}")
    return _parse_duration_ns(text) / 1e9


def format_duration(seconds: float) -> str:
    """Print seconds as Go's ``time.Duration.String`` does (``90.0 -> "1m30s"``)."""
    ns = round(seconds * 1e9)
    neg, u = ns < 0, abs(ns)
    if u < 1_000_000_000:
        if u == 0:
            return "0s"
        if u < 1_000:
            body = f"{u}ns"
        elif u < 1_000_000:
            body = _with_fraction(u, 3) + "\u00b5s"
        else:
            body = _with_fraction(u, 6) + "ms"
    else:
        secs = _with_fraction(u, 9, modulo=60) + "s"
        minutes = u // 1_000_000_000 // 60
        if minutes > 0:
            hours = minutes // 60
            secs = f"{minutes % 60}m" + secs
            if hours > 0:
                secs = f"{hours}h" + secs
        body = secs
    return "-" + body if neg else body


def _with_fraction(value: int, precision: int, *, modulo: int | None = None) -> str:
    whole, frac = divmod(value, 10**precision)
    if modulo is not None:
        whole %= modulo
    digits = f"{frac:0{precision}d}".rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)
