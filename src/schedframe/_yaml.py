"""Strict YAML loading: PyYAML's safe loader, refusing duplicate keys as upstream's strict codec does.

PyYAML follows YAML 1.1 like Kubernetes' sigs.k8s.io/yaml (``on`` is a boolean, ``0777`` is
octal), but silently keeps the last of two equal keys; kube-scheduler's strict decoding rejects
them, so this loader does too, naming the line and column of the repeat.

PyYAML is imported on the first parse, not with this module: building a scheduler from a
mapping or the defaults never pays for it.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterator
from typing import Any

from schedframe.errors import DUPLICATE, FieldIssue

__all__ = ["YAMLError", "load_all_strict", "load_strict"]


class YAMLError(ValueError):
    """A document that is not YAML, or repeats a key. ``issue`` names the line and column."""

    def __init__(self, issue: FieldIssue, *, source: str) -> None:
        self.issue = issue
        self.source = source
        super().__init__(f"{source}: {issue}")


@functools.cache
def _loader() -> Any:
    """The strict loader class, built (and PyYAML imported) on first use."""
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class _StrictLoader(base):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Hashable, Any]:
            seen: dict[object, bool] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                # Keyed by type too: YAML's `1:` and `true:` are different keys, though 1 == True.
                marker = (type(key), key) if isinstance(key, Hashable) else None
                if marker is not None and marker in seen:
                    mark = key_node.start_mark
                    raise _DuplicateKey(str(key), mark.line + 1, mark.column + 1)
                seen[marker] = True
            mapping: dict[Hashable, Any] = super().construct_mapping(node, deep=deep)
            return mapping

    _StrictLoader.add_constructor(
        yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _StrictLoader.construct_mapping
    )
    return _StrictLoader


class _DuplicateKey(Exception):
    def __init__(self, key: str, line: int, column: int) -> None:
        self.key, self.line, self.column = key, line, column


def _issue_from(exc: BaseException) -> FieldIssue:
    if isinstance(exc, _DuplicateKey):
        return FieldIssue(
            path="",
            kind=DUPLICATE,
            value=exc.key,
            detail=f"mapping key repeated at line {exc.line}, column {exc.column}",
        )
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc)
    return FieldIssue(path="", kind="Invalid value", detail=f"not valid YAML{where}: {problem}")


def load_strict(text: str, source: str = "<string>") -> Any:
    """Parse one YAML document; raise :class:`YAMLError` on bad syntax or a repeated key."""
    loader = _loader()
    import yaml

    try:
        return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader subclass
    except (yaml.YAMLError, _DuplicateKey, ValueError, TypeError) as exc:
        raise YAMLError(_issue_from(exc), source=source) from None


def load_all_strict(text: str, source: str = "<string>") -> Iterator[Any]:
    """Parse every document of a multi-document YAML stream, strictly; ``None`` docs are skipped."""
    loader = _loader()
    import yaml

    try:
        docs = list(yaml.load_all(text, Loader=loader))  # noqa: S506
    except (yaml.YAMLError, _DuplicateKey, ValueError, TypeError) as exc:
        raise YAMLError(_issue_from(exc), source=source) from None
    return (doc for doc in docs if doc is not None)
