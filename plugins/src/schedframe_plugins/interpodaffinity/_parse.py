"""Why a pod's affinity terms would not parse upstream (``framework.NewPodInfo``).

Upstream builds a PodInfo from the pod at PreFilter and PreScore; turning each term's label
selector and namespace selector into a selector (``metav1.LabelSelectorAsSelector``, then
``labels.NewRequirement``) checks keys, operators and label values, and a term that does not
parse fails the pod: PreFilter answers UnschedulableAndUnresolvable ``parsing pod: ...`` and
PreScore an Error ``failed to parse pod: ...``. The texts here are upstream's, including
``field.Error`` paths such as ``values[0][service]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from schedframe.errors import INVALID, FieldIssue
from schedframe.objects import LabelSelector, Pod, PodAffinityTerm
from schedframe_plugins.nodeaffinity._validation import (
    GoValue,
    aggregate_message,
    is_qualified_name,
    is_valid_label_value,
)

__all__ = ["pod_parse_error"]

_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist")


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _requirement_issues(key: str, op: str, values: Sequence[str]) -> list[FieldIssue]:
    # labels.NewRequirement with an empty root path; "=" is matchLabels' Equals.
    issues: list[FieldIssue] = []
    key_errs = is_qualified_name(key)
    if key_errs:
        issues.append(FieldIssue(path="key", kind=INVALID, value=key, detail="; ".join(key_errs)))
    shown = GoValue.strings(values)
    if op in ("In", "NotIn") and not values:
        issues.append(
            FieldIssue(
                path="values",
                kind=INVALID,
                value=shown,
                detail="for 'in', 'notin' operators, values set can't be empty",
            )
        )
    elif op == "=" and len(values) != 1:
        issues.append(
            FieldIssue(
                path="values",
                kind=INVALID,
                value=shown,
                detail="exact-match compatibility requires one single value",
            )
        )
    elif op in ("Exists", "DoesNotExist") and values:
        issues.append(
            FieldIssue(
                path="values",
                kind=INVALID,
                value=shown,
                detail="values set must be empty for exists and does not exist",
            )
        )
    for i, value in enumerate(values):
        errs = is_valid_label_value(value)
        if errs:
            issues.append(
                FieldIssue(
                    path=f"values[{i}][{key}]", kind=INVALID, value=value, detail="; ".join(errs)
                )
            )
    return issues


def selector_error(selector: LabelSelector | None) -> str | None:
    """Upstream ``metav1.LabelSelectorAsSelector``'s error text, or ``None`` when it parses."""
    if selector is None:
        return None
    for key, value in selector.match_labels.items():
        issues = _requirement_issues(key, "=", (value,))
        if issues:
            return aggregate_message(issues)
    for req in selector.match_expressions:
        if req.operator not in _OPERATORS:
            return f"{_go_quote(req.operator)} is not a valid label selector operator"
        issues = _requirement_issues(req.key, req.operator, req.values)
        if issues:
            return aggregate_message(issues)
    return None


def _terms_error(terms: Iterable[PodAffinityTerm]) -> str | None:
    # getAffinityTerms stops at the first term that does not parse; a term's label selector
    # is parsed before its namespace selector.
    for term in terms:
        error = selector_error(term.label_selector) or selector_error(term.namespace_selector)
        if error is not None:
            return error
    return None


def pod_parse_error(pod: Pod) -> str | None:
    """The error ``framework.NewPodInfo`` would return for ``pod``, or ``None``.

    Required affinity, required anti-affinity, preferred affinity and preferred anti-affinity
    terms are parsed in that order; each failing group adds ``<group>: <error>``, and several
    are shown as Go's aggregate, ``[a, b]``.
    """
    affinity = pod.spec.affinity
    if affinity is None:
        return None
    pa = affinity.pod_affinity
    paa = affinity.pod_anti_affinity
    if pa is None and paa is None:
        return None
    groups = (
        ("requiredAffinityTerms", pa.required if pa is not None else ()),
        ("requiredAntiAffinityTerms", paa.required if paa is not None else ()),
        (
            "preferredAffinityTerms",
            tuple(w.term for w in pa.preferred) if pa is not None else (),
        ),
        (
            "preferredAntiAffinityTerms",
            tuple(w.term for w in paa.preferred) if paa is not None else (),
        ),
    )
    errors = [
        f"{label}: {error}" for label, terms in groups if (error := _terms_error(terms)) is not None
    ]
    if not errors:
        return None
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
