"""Errors schedframe raises at people: each names where (file, field path) and what.

Field issues render exactly like upstream's ``field.Error`` strings
(``profiles[0].plugins.score.enabled[0].weight: Invalid value: 0: must be greater than 0``),
prefixed by the source file when one is known.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

__all__ = [
    "DUPLICATE",
    "FORBIDDEN",
    "INVALID",
    "NOT_FOUND",
    "REQUIRED",
    "UNKNOWN_FIELD",
    "UNSUPPORTED",
    "BackendError",
    "ConfigError",
    "FieldIssue",
    "ManifestError",
    "ManifestWarning",
    "PluginError",
    "SchedframeError",
    "join_path",
]

#: Issue kinds, spelled as upstream's ``field.ErrorType`` strings.
INVALID = "Invalid value"
UNSUPPORTED = "Unsupported value"
REQUIRED = "Required value"
DUPLICATE = "Duplicate value"
FORBIDDEN = "Forbidden"
NOT_FOUND = "Not found"
UNKNOWN_FIELD = "Unknown field"

_KINDS_WITHOUT_VALUE = frozenset({REQUIRED, FORBIDDEN, UNKNOWN_FIELD})
_NO_VALUE = object()


#: The longest text of a value (or path, or detail) a message quotes in full.
_SHOWN_CHARS = 200


def _clip(text: str) -> str:
    """``text`` on one line (line breaks and other control characters escaped) and, past
    :data:`_SHOWN_CHARS` characters, cut with a note of its length: a 50 MB bad value is
    named, not echoed."""
    size = len(text)
    if size > _SHOWN_CHARS:
        text = text[:_SHOWN_CHARS]
    if not text.isprintable():
        text = "".join(c if c.isprintable() or c == " " else _escape(c) for c in text)
    if size > _SHOWN_CHARS:
        text += f"...({size} characters)"
    return text


def _escape(c: str) -> str:
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c)
    if named is not None:
        return named
    code = ord(c)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def _clip_long(text: str) -> str:
    """Like :func:`_clip`, with room for a sentence: paths and details are ours, mostly."""
    if len(text) <= 4 * _SHOWN_CHARS and text.isprintable():
        return text
    head = _clip(text[: 4 * _SHOWN_CHARS])
    return head if len(text) <= 4 * _SHOWN_CHARS else f"{head}...({len(text)} characters)"


def _render_value(value: object) -> str:
    # Upstream quotes strings (Go's %q: escapes included) and prints numbers and booleans bare.
    if isinstance(value, str):
        return '"' + _clip(value.replace("\\", "\\\\").replace('"', '\\"')) + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int) and value.bit_length() > 600:  # str() of it may even refuse
        return f"<an integer of about {int(value.bit_length() * 0.30103)} digits>"
    try:
        return _clip(str(value))
    except Exception:  # a value that cannot print itself still leaves a message
        return f"<{type(value).__name__}>"


@attrs.frozen(kw_only=True)
class FieldIssue:
    """One problem at one field path, e.g. ``profiles[0].schedulerName: Required value``.

    Attributes:
        path: the field path in upstream syntax (``a.b[2].c``); empty for the document root.
        kind: one of the upstream error types (``Invalid value``, ``Unsupported value``,
            ``Required value``, ``Duplicate value``, ``Forbidden``, ``Not found``) or
            ``Unknown field``.
        detail: what was expected, in words.
        value: the offending value, when the kind shows one.
    """

    path: str
    kind: str
    detail: str = ""
    value: object = attrs.field(default=_NO_VALUE, eq=False)

    def with_prefix(self, prefix: str) -> FieldIssue:
        """Return this issue with ``prefix`` joined in front of its path."""
        return attrs.evolve(self, path=join_path(prefix, self.path))

    def __str__(self) -> str:
        body = self.kind
        if self.kind not in _KINDS_WITHOUT_VALUE and self.value is not _NO_VALUE:
            body += ": " + _render_value(self.value)
        if self.detail:
            body += ": " + _clip_long(self.detail)
        path = _clip_long(self.path)
        return f"{path}: {body}" if path else body


def join_path(prefix: str, path: str) -> str:
    """Join two field paths: ``join_path("a", "b[0]") == "a.b[0]"``, ``join_path("a", "[0]") == "a[0]"``."""
    if not prefix:
        return path
    if not path:
        return prefix
    return prefix + path if path.startswith("[") else f"{prefix}.{path}"


class SchedframeError(Exception):
    """Base of every error schedframe raises on purpose."""


class _IssuesError(SchedframeError):
    """An error made of one or more :class:`FieldIssue` in one source."""

    def __init__(self, issues: Iterable[FieldIssue] | str, *, source: str | None = None) -> None:
        if isinstance(issues, str):
            issues = [FieldIssue(path="", kind=INVALID, detail=issues)]
        self.issues: tuple[FieldIssue, ...] = tuple(issues)
        self.source = source
        super().__init__(self._render())

    def _render(self) -> str:
        prefix = f"{self.source}: " if self.source else ""
        return "\n".join(prefix + str(issue) for issue in self.issues)

    def with_source(self, source: str) -> _IssuesError:
        """Return a copy of this error that names ``source`` (a file path)."""
        return type(self)(self.issues, source=source)

    def with_prefix(self, prefix: str) -> _IssuesError:
        """Return a copy of this error with ``prefix`` joined in front of every path."""
        return type(self)([i.with_prefix(prefix) for i in self.issues], source=self.source)

    @property
    def paths(self) -> Sequence[str]:
        """The field paths of every issue, in order."""
        return [issue.path for issue in self.issues]


class ConfigError(_IssuesError):
    """A ``KubeSchedulerConfiguration`` (or plugin args) that cannot be used as given."""


class ManifestError(_IssuesError):
    """A Kubernetes object manifest (Pod, Node, ...) that cannot be read as given."""


class ManifestWarning(UserWarning):
    """A manifest problem that ``validate="warn"`` reports instead of failing: one warning per
    unknown field, its message ``<source>: <path>: Unknown field``."""


class PluginError(SchedframeError):
    """A plugin that cannot be found, loaded or built (unknown name, name clash, bad factory)."""


class BackendError(SchedframeError):
    """A cluster backend refused or failed an operation (conflict, not found, transport)."""

    def __init__(self, message: str, *, reason: str = "InternalError", code: int = 500) -> None:
        super().__init__(message)
        self.reason = reason
        self.code = code
