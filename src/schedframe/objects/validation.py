"""Kubernetes name and label rules, in the API server's words.

The one place schedframe checks object names, label keys and values, qualified names and
DNS labels: the object decoder, the configuration validator and the in-tree plugins all call
these functions. Each ``is_*`` function returns the list of reasons a value is invalid (empty
when it is valid), worded exactly as ``k8s.io/apimachinery/pkg/util/validation`` words them,
so a message printed by schedframe reads like the API server's::

    >>> is_dns1123_label("web_1")
    ["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]

The ``*_issues`` functions turn those reasons into :class:`~schedframe.errors.FieldIssue`
values at a field path, as upstream's ``ValidateLabels``/``ValidateLabelName`` and the object
name checks of ``ValidateObjectMeta`` do.

Patterns are compiled on first use, not at import: most programs never validate a name.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Final

from schedframe import errors as _errors
from schedframe.errors import FieldIssue

__all__ = [
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "LABEL_VALUE_MAX_LENGTH",
    "QUALIFIED_NAME_MAX_LENGTH",
    "annotation_issues",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
    "is_valid_percent",
    "label_issues",
    "label_name_issues",
    "name_is_dns1035_label",
    "name_is_dns_label",
    "name_is_dns_subdomain",
    "regex_error",
]

#: Longest DNS-1123 label (and DNS-1035 label).
DNS1123_LABEL_MAX_LENGTH: Final = 63
#: Longest DNS-1123 subdomain.
DNS1123_SUBDOMAIN_MAX_LENGTH: Final = 253
#: Longest name part of a qualified name.
QUALIFIED_NAME_MAX_LENGTH: Final = 63
#: Longest label value.
LABEL_VALUE_MAX_LENGTH: Final = 63
# Upstream's TotalAnnotationSizeLimitB: keys plus values of one object.
_TOTAL_ANNOTATION_SIZE: Final = 256 * (1 << 10)

_QNAME_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT: Final = f"({_QNAME_FMT})?"
_LABEL_VALUE_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT: Final = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG: Final = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character"
)
_PERCENT_FMT: Final = "[0-9]+%"
_PERCENT_MSG: Final = "a valid percent string must be a numeric string followed by an ending '%'"


@functools.lru_cache(maxsize=8192)
def _matches(fmt: str, value: str) -> bool:
    return _regex(fmt).fullmatch(value) is not None


@functools.cache
def _regex(fmt: str) -> re.Pattern[str]:
    return re.compile(fmt)


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``msg`` with its examples and pattern, as upstream's ``RegexError`` words it."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _size(value: str) -> int:
    # Upstream measures lengths in bytes of UTF-8.
    return len(value) if value.isascii() else len(value.encode())


def _max_len(length: int) -> str:
    return f"must be no more than {length} characters"


def is_dns1123_label(value: str) -> list[str]:
    """Why ``value`` is not a DNS-1123 label (upstream ``IsDNS1123Label``)."""
    errs: list[str] = []
    if _size(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(_max_len(DNS1123_LABEL_MAX_LENGTH))
    if not _matches(_DNS1123_LABEL_FMT, value):
        if _matches(_DNS1123_SUBDOMAIN_FMT, value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """Why ``value`` is not a DNS-1123 subdomain (upstream ``IsDNS1123Subdomain``)."""
    errs: list[str] = []
    if _size(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(_max_len(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _matches(_DNS1123_SUBDOMAIN_FMT, value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """Why ``value`` is not a DNS-1035 label (upstream ``IsDNS1035Label``)."""
    errs: list[str] = []
    if _size(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(_max_len(DNS1123_LABEL_MAX_LENGTH))
    if not _matches(_DNS1035_LABEL_FMT, value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """Why ``value`` is not a qualified name: an optional DNS-subdomain prefix and ``/``,
    then a name part (upstream ``IsQualifiedName``, the rule for label keys)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + msg for msg in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _size(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + _max_len(QUALIFIED_NAME_MAX_LENGTH))
    if not _matches(_QNAME_FMT, name):
        errs.append(
            "name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """Why ``value`` is not a label value (upstream ``IsValidLabelValue``); ``""`` is valid."""
    errs: list[str] = []
    if _size(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(_max_len(LABEL_VALUE_MAX_LENGTH))
    if not _matches(_LABEL_VALUE_FMT, value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_valid_percent(value: str) -> list[str]:
    """Why ``value`` is not a percentage such as ``"25%"`` (upstream ``IsValidPercent``)."""
    if _matches(_PERCENT_FMT, value):
        return []
    return [regex_error(_PERCENT_MSG, _PERCENT_FMT, "1%", "93%")]


def _mask_trailing_dash(name: str) -> str:
    # A generateName prefix may end in '-': the server appends a suffix after it.
    return name[:-2] + "a" if _size(name) > 1 and name.endswith("-") else name


def name_is_dns_subdomain(name: str, *, prefix: bool = False) -> list[str]:
    """Why ``name`` is not a valid object name for kinds named by DNS subdomains (Pod, Node,
    PodDisruptionBudget, ...); ``prefix=True`` checks a ``generateName`` prefix."""
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, *, prefix: bool = False) -> list[str]:
    """Why ``name`` is not a valid object name for kinds named by DNS labels (Namespace)."""
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, *, prefix: bool = False) -> list[str]:
    """Why ``name`` is not a valid object name for kinds named by DNS-1035 labels (Service)."""
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


def label_name_issues(name: str, path: str) -> list[FieldIssue]:
    """Upstream ``ValidateLabelName``: one ``Invalid value`` issue at ``path`` per broken rule."""
    return [
        FieldIssue(path=path, kind=_errors.INVALID, value=name, detail=msg)
        for msg in is_qualified_name(name)
    ]


def label_issues(labels: Mapping[str, str], path: str) -> list[FieldIssue]:
    """Upstream ``ValidateLabels``: every bad key and value, each reported at ``path``."""
    issues: list[FieldIssue] = []
    for key, value in labels.items():
        issues.extend(label_name_issues(key, path))
        issues.extend(
            FieldIssue(path=path, kind=_errors.INVALID, value=value, detail=msg)
            for msg in is_valid_label_value(value)
        )
    return issues


def annotation_issues(annotations: Mapping[str, str], path: str) -> list[FieldIssue]:
    """Upstream ``ValidateAnnotations``: qualified keys (compared in lower case), and at most
    256 KiB of keys and values together."""
    issues: list[FieldIssue] = []
    total = 0
    for key, value in annotations.items():
        issues.extend(
            FieldIssue(path=path, kind=_errors.INVALID, value=key, detail=msg)
            for msg in is_qualified_name(key.lower())
        )
        total += _size(key) + _size(value)
    if total > _TOTAL_ANNOTATION_SIZE:
        issues.append(
            FieldIssue(
                path=path,
                kind="Too long",
                detail=f"may not be more than {_TOTAL_ANNOTATION_SIZE} bytes",
            )
        )
    return issues
