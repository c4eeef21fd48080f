"""Upstream's parse-time checks of node selectors, as field issues.

Mirrors ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity`` (``NewNodeSelector``,
``NewPreferredSchedulingTerms``), ``labels.NewRequirement`` and the qualified-name and
label-value rules of ``k8s.io/apimachinery/pkg/util/validation``, with upstream's paths and
messages. Used by :class:`NodeAffinityArgs` validation, by PreScore (a preferred term that
does not parse is an error there, as upstream), and by PodTopologySpread's args validation.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Final

from schedframe.errors import FORBIDDEN, INVALID, REQUIRED, UNSUPPORTED, FieldIssue
from schedframe.objects import (
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from schedframe.objects.validation import (
    is_qualified_name,
    is_valid_label_value,
    label_name_issues,
)

__all__ = [
    "GoValue",
    "aggregate_message",
    "forbidden_issue",
    "is_qualified_name",
    "is_valid_label_value",
    "label_name_issues",
    "node_selector_issues",
    "preferred_terms_issues",
    "required_issue",
    "term_issues",
    "unsupported_issue",
]


@functools.cache
def _regex(pattern: str) -> re.Pattern[str]:
    # Compiled on first use: compiling every validation pattern at import time was a large
    # part of building a profile, and most profiles never validate what they match.
    return re.compile(pattern)


_INT64_RE: Final = r"[+-]?[0-9]+"

_LABEL_OPERATORS: Final = {
    "In": "in",
    "NotIn": "notin",
    "Exists": "exists",
    "DoesNotExist": "!",
    "Gt": "gt",
    "Lt": "lt",
}


class GoValue:
    """A bad value shown as Go's ``%#v`` prints it (``[]string{"a", "b"}``)."""

    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        self._text = text

    @classmethod
    def strings(cls, values: Sequence[str]) -> GoValue:
        """A ``[]string`` value."""
        inner = ", ".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values)
        return cls("[]string{" + inner + "}")

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"GoValue({self._text!r})"


def unsupported_issue(path: str, value: str, supported: Sequence[str] | None) -> FieldIssue:
    """Upstream ``field.NotSupported``; ``supported=None`` lists nothing."""
    if not supported:
        return FieldIssue(path=path, kind=UNSUPPORTED, value=value)
    listed = ", ".join(f'"{s}"' for s in supported)
    return FieldIssue(
        path=path, kind=UNSUPPORTED, value=value, detail=f"supported values: {listed}"
    )


def required_issue(path: str, detail: str) -> FieldIssue:
    """Upstream ``field.Required``."""
    return FieldIssue(path=path, kind=REQUIRED, detail=detail)


def forbidden_issue(path: str, detail: str) -> FieldIssue:
    """Upstream ``field.Forbidden``."""
    return FieldIssue(path=path, kind=FORBIDDEN, detail=detail)


def _requirement_issues(req: NodeSelectorRequirement, path: str) -> list[FieldIssue]:
    # nodeSelectorRequirementsAsSelector + labels.NewRequirement.
    if req.operator not in _LABEL_OPERATORS:
        return [unsupported_issue(f"{path}.operator", req.operator, None)]
    issues: list[FieldIssue] = []
    key_errs = is_qualified_name(req.key)
    if key_errs:
        issues.append(
            FieldIssue(path=f"{path}.key", kind=INVALID, value=req.key, detail="; ".join(key_errs))
        )
    values = req.values
    values_path = f"{path}.values"
    op = req.operator
    if op in ("In", "NotIn"):
        if not values:
            issues.append(
                FieldIssue(
                    path=values_path,
                    kind=INVALID,
                    value=GoValue.strings(values),
                    detail="for 'in', 'notin' operators, values set can't be empty",
                )
            )
    elif op in ("Exists", "DoesNotExist"):
        if values:
            issues.append(
                FieldIssue(
                    path=values_path,
                    kind=INVALID,
                    value=GoValue.strings(values),
                    detail="values set must be empty for exists and does not exist",
                )
            )
    else:
        if len(values) != 1:
            issues.append(
                FieldIssue(
                    path=values_path,
                    kind=INVALID,
                    value=GoValue.strings(values),
                    detail="for 'Gt', 'Lt' operators, exactly one value is required",
                )
            )
        for i, v in enumerate(values):
            if not _regex(_INT64_RE).fullmatch(v) or not -(2**63) <= int(v) < 2**63:
                issues.append(
                    FieldIssue(
                        path=f"{values_path}[{i}]",
                        kind=INVALID,
                        value=v,
                        detail="for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    for i, v in enumerate(values):
        errs = is_valid_label_value(v)
        if errs:
            issues.append(
                FieldIssue(
                    path=f"{values_path}[{i}][{req.key}]",
                    kind=INVALID,
                    value=v,
                    detail="; ".join(errs),
                )
            )
    return issues


def _field_requirement_issues(req: NodeSelectorRequirement, path: str) -> list[FieldIssue]:
    # nodeSelectorRequirementsAsFieldSelector.
    if len(req.values) != 1:
        return [
            FieldIssue(
                path=f"{path}.values",
                kind=INVALID,
                value=GoValue.strings(req.values),
                detail="must have one element",
            )
        ]
    if req.operator not in ("In", "NotIn"):
        return [unsupported_issue(f"{path}.operator", req.operator, ("In", "NotIn"))]
    return []


def term_issues(term: NodeSelectorTerm, path: str) -> list[FieldIssue]:
    """Why a node selector term would not parse upstream (``newNodeSelectorTerm``)."""
    issues: list[FieldIssue] = []
    for i, req in enumerate(term.match_expressions):
        issues.extend(_requirement_issues(req, f"{path}.matchExpressions[{i}]"))
    for i, req in enumerate(term.match_fields):
        issues.extend(_field_requirement_issues(req, f"{path}.matchFields[{i}]"))
    return issues


def node_selector_issues(selector: NodeSelector, path: str) -> list[FieldIssue]:
    """Upstream ``NewNodeSelector`` errors; empty terms select nothing and are not checked."""
    issues: list[FieldIssue] = []
    for i, term in enumerate(selector.node_selector_terms):
        if term.is_empty:
            continue
        issues.extend(term_issues(term, f"{path}.nodeSelectorTerms[{i}]"))
    return issues


def preferred_terms_issues(terms: Sequence[PreferredSchedulingTerm], path: str) -> list[FieldIssue]:
    """Upstream ``NewPreferredSchedulingTerms`` errors (weight-0 and empty terms are skipped)."""
    issues: list[FieldIssue] = []
    for i, term in enumerate(terms):
        if term.weight == 0 or term.preference.is_empty:
            continue
        issues.extend(term_issues(term.preference, f"{path}[{i}]"))
    return issues


def aggregate_message(issues: Sequence[FieldIssue]) -> str:
    """Go's ``errors.NewAggregate`` text: one message, or ``[a, b]`` for several."""
    if len(issues) == 1:
        return str(issues[0])
    return "[" + ", ".join(str(i) for i in issues) + "]"
