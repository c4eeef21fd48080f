"""Strict YAML loading: PyYAML's safe loader, refusing duplicate keys as upstream's strict codec does.

PyYAML follows YAML 1.1 like Kubernetes' sigs.k8s.io/yaml (``on`` is a boolean, ``0777`` is
octal), but silently keeps the last of two equal keys; kube-scheduler's strict decoding rejects
them, so this loader does too, naming the line and column of the repeat.

Hostile documents get one clear error, as upstream's decoder gives them: alias expansion is
capped by go-yaml's own rule (``document contains excessive aliasing``: more than 100 aliased
nodes, more than 1,000 decoded, and aliased nodes over 99% of the decoded ones up to 400,000,
that share falling to 10% at 4,000,000), an anchor that contains itself is refused, nesting
stops at libyaml's 1,000 levels (go-yaml allows 10,000; the Python constructor here builds
iteratively, so no depth short of that raises ``RecursionError``), and an integer of more
than 4,300 digits (Python's conversion limit) is named with its line instead of Python's own
message.

PyYAML is imported on the first parse, not with this module: building a scheduler from a
mapping or the defaults never pays for it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Hashable, Iterator
from typing import Any

from schedframe.errors import DUPLICATE, FieldIssue

__all__ = [
    "MAX_INT_DIGITS",
    "YAMLError",
    "load_all_strict",
    "load_strict",
    "replace_lone_surrogates",
]

#: Python's default limit on converting a decimal string to an int (``sys.int_info``).
MAX_INT_DIGITS = 4300
#: go-yaml's ``allowedAliasRatio`` range and its bounds (decode.go).
_ALIAS_RATIO_LOW = 400_000
_ALIAS_RATIO_HIGH = 4_000_000


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
        def construct_strict_map(self, node: Any) -> Iterator[dict[Hashable, Any]]:
            # A generator, as PyYAML's own map constructor: the mapping is filled in after
            # it is handed out, so nested mappings are built one after another instead of by
            # recursion (which stopped near 300 levels with a RecursionError).
            data: dict[Hashable, Any] = {}
            yield data
            data.update(self.construct_mapping(node))

        def construct_yaml_int(self, node: Any) -> int:
            text = str(node.value)
            if sum(c.isdigit() for c in text) > MAX_INT_DIGITS:
                mark = node.start_mark
                raise _TooManyDigits(len(text), mark.line + 1, mark.column + 1)
            value: int = super().construct_yaml_int(node)
            return value

        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Hashable, Any]:
            seen: dict[object, bool] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # ``<<: *base`` merges; the mapping's own keys override it
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
        yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _StrictLoader.construct_strict_map
    )
    _StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_yaml_int)
    return _StrictLoader


class _DuplicateKey(Exception):
    def __init__(self, key: str, line: int, column: int) -> None:
        self.key, self.line, self.column = key, line, column


class _TooManyDigits(Exception):
    def __init__(self, digits: int, line: int, column: int) -> None:
        self.digits, self.line, self.column = digits, line, column


class _Refused(Exception):
    """A document the decoder refuses as a whole (go-yaml's wording)."""


def _allowed_alias_ratio(decodes: int) -> float:
    """go-yaml's ``allowedAliasRatio``: 99% up to 400,000 decodes, 10% from 4,000,000."""
    if decodes <= _ALIAS_RATIO_LOW:
        return 0.99
    if decodes >= _ALIAS_RATIO_HIGH:
        return 0.10
    span = _ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW
    return 0.99 - 0.89 * ((decodes - _ALIAS_RATIO_LOW) / span)


def _check_aliases(root: Any) -> None:
    """Walk a composed document as go-yaml decodes it, aliases expanded, and stop it as go-yaml
    does: ``document contains excessive aliasing``, or an anchor whose value holds itself.

    PyYAML shares an anchored node among its aliases: a node reached from anywhere but the
    place it is first written (document order) is an alias.
    Iterative, and it stops as soon as the ratio is exceeded: a billion laughs costs a few
    hundred thousand steps.
    """
    decodes = 0
    aliased = 0
    alias_depth = 0
    home: dict[int, tuple[int, int]] = {}  # node -> (parent, index) where it is written
    on_path: set[int] = set()
    # (node, parent, index, step): step 0 enters, 1 leaves, 2 leaves an alias.
    stack: list[tuple[Any, int, int, int]] = [(root, 0, 0, 0)]
    while stack:
        node, parent, index, step = stack.pop()
        key = id(node)
        if step:
            on_path.discard(key)
            if step == 2:
                alias_depth -= 1
            continue
        if key in on_path:
            raise _Refused("an anchor's value contains itself")
        where = home.setdefault(key, (parent, index))
        is_alias = where != (parent, index)
        decodes += 1  # this node; for an alias, the alias node itself
        if alias_depth > 0:
            aliased += 1
        if is_alias:  # then what it names, inside the alias
            alias_depth += 1
            decodes += 1
            aliased += 1
        if aliased > 100 and decodes > 1000 and aliased / decodes > _allowed_alias_ratio(decodes):
            raise _Refused("document contains excessive aliasing")
        value = node.value
        if not isinstance(value, list):  # a scalar
            if is_alias:
                alias_depth -= 1
            continue
        on_path.add(key)
        stack.append((node, parent, index, 2 if is_alias else 1))
        i = 2 * len(value)
        for item in reversed(value):
            if isinstance(item, tuple):  # a mapping's (key, value)
                stack.append((item[1], key, i - 1, 0))
                stack.append((item[0], key, i - 2, 0))
            else:
                stack.append((item, key, i - 1, 0))
            i -= 2


def _documents(text: str, loader_class: Any, *, single: bool) -> list[Any]:
    """Compose, check and construct each document of ``text``."""
    loader = loader_class(text)
    try:
        docs: list[Any] = []
        checking = "*" in text  # no alias without an asterisk
        if single:
            node = loader.get_single_node()
            nodes = [node] if node is not None else []
        else:
            nodes = []
            while loader.check_node():
                nodes.append(loader.get_node())
        for node in nodes:
            if checking:
                _check_aliases(node)
            docs.append(loader.construct_document(node))
        return docs
    finally:
        loader.dispose()


def _issue_from(exc: BaseException) -> FieldIssue:
    if isinstance(exc, _TooManyDigits):
        return FieldIssue(
            path="",
            kind="Invalid value",
            detail=(
                f"not valid YAML at line {exc.line}, column {exc.column}: an integer of "
                f"{exc.digits} digits, more than the {MAX_INT_DIGITS} that can be read"
            ),
        )
    if isinstance(exc, _Refused):
        return FieldIssue(path="", kind="Invalid value", detail=f"not valid YAML: {exc}")
    if isinstance(exc, RecursionError):
        return FieldIssue(path="", kind="Invalid value", detail="not valid YAML: nested too deeply")
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
    if not isinstance(exc, ValueError | TypeError) and not hasattr(exc, "problem"):
        problem = f"{type(exc).__name__}: {problem}" if problem else type(exc).__name__
    return FieldIssue(path="", kind="Invalid value", detail=f"not valid YAML{where}: {problem}")


#: What a parse may raise: PyYAML's errors, ours, and Python's own on odd input. PyYAML's
#: constructors fail in more ways than they document (``!!int`` with no value is an
#: ``IndexError``), so any ``Exception`` of theirs is the document's fault.
_FAILURES: tuple[type[BaseException], ...] = (Exception,)


def load_strict(text: str, source: str = "<string>") -> Any:
    """Parse one YAML document; raise :class:`YAMLError` on bad syntax or a repeated key."""
    loader = _loader()
    import yaml

    try:
        docs = _documents(text, loader, single=True)
    except (yaml.YAMLError, *_FAILURES) as exc:  # type: ignore[misc]
        raise YAMLError(_issue_from(exc), source=source) from None
    return docs[0] if docs else None


def load_all_strict(text: str, source: str = "<string>") -> Iterator[Any]:
    """Parse every document of a multi-document YAML stream, strictly; ``None`` docs are skipped."""
    loader = _loader()
    import yaml

    try:
        docs = _documents(text, loader, single=False)
    except (yaml.YAMLError, *_FAILURES) as exc:  # type: ignore[misc]
        raise YAMLError(_issue_from(exc), source=source) from None
    return (doc for doc in docs if doc is not None)


#: A ``\\uD800``-``\\uDFFF`` escape not preceded by an odd run of backslashes, with what
#: may pair with it.
_SURROGATE_ESCAPE = re.compile(
    r"(?<!\\)((?:\\\\)*)\\u([dD][89abAB][0-9a-fA-F]{2})(\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
    r"|(?<!\\)((?:\\\\)*)\\u([dD][c-fC-F][0-9a-fA-F]{2})"
)


def replace_lone_surrogates(text: str) -> str:
    """JSON text with every unpaired surrogate escape (``"\\ud800"``) made U+FFFD, as Go's
    ``encoding/json`` decodes it; Python would build a string that cannot be encoded."""
    if "\\u" not in text:
        return text

    def fix(m: re.Match[str]) -> str:
        if m.group(2) is not None:
            if m.group(3) is not None:
                return m.group(0)  # a proper pair
            return m.group(1) + "\\ufffd"
        return m.group(4) + "\\ufffd"

    return _SURROGATE_ESCAPE.sub(fix, text)
