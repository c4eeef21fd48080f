"""Field and label selectors, parsed and matched the way kube-apiserver does.

Field selectors (``k8s.io/apimachinery/pkg/fields``): ``key=value``, ``key==value`` and
``key!=value`` terms joined by commas (AND). Only the fields a resource's registry exposes
are accepted (``GetAttrs``/``ToSelectableFields``); any other is a 400 BadRequest
``field label not supported: <key>``.

Label selectors (``k8s.io/apimachinery/pkg/labels``): ``key``, ``!key``, ``key=value``,
``key==value``, ``key!=value``, ``key in (a,b)``, ``key notin (a,b)``, ``key>n``, ``key<n``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

__all__ = [
    "FIELDS",
    "FieldSelector",
    "LabelSelector",
    "SelectorError",
    "field_value",
]

_Obj = Mapping[str, Any]


class SelectorError(ValueError):
    """A selector that cannot be parsed or names an unsupported field (HTTP 400)."""


def _get(obj: _Obj, *path: str) -> object:
    cur: object = obj
    for key in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(key)
    return cur


def _text(obj: _Obj, *path: str) -> str:
    value = _get(obj, *path)
    return "" if value is None else str(value)


def _flag(obj: _Obj, *path: str) -> str:
    return "true" if _get(obj, *path) is True else "false"


def _pod_ips(obj: _Obj) -> str:
    ips = _get(obj, "status", "podIPs")
    if isinstance(ips, list):
        return ",".join(str(i.get("ip", "")) for i in ips if isinstance(i, Mapping))
    return ""


_Getter = Callable[[_Obj], str]

_META: Final[dict[str, _Getter]] = {
    "metadata.name": lambda o: _text(o, "metadata", "name"),
    "metadata.namespace": lambda o: _text(o, "metadata", "namespace"),
}

#: Selectable fields per resource (upstream registry ``GetAttrs`` / ``*ToSelectableFields``).
FIELDS: Final[dict[str, dict[str, _Getter]]] = {
    "pods": {
        **_META,
        "spec.nodeName": lambda o: _text(o, "spec", "nodeName"),
        "spec.restartPolicy": lambda o: _text(o, "spec", "restartPolicy"),
        "spec.schedulerName": lambda o: _text(o, "spec", "schedulerName"),
        "spec.serviceAccountName": lambda o: _text(o, "spec", "serviceAccountName"),
        "spec.hostNetwork": lambda o: _flag(o, "spec", "hostNetwork"),
        "status.phase": lambda o: _text(o, "status", "phase"),
        "status.podIP": lambda o: _text(o, "status", "podIP"),
        "status.podIPs": _pod_ips,
        "status.nominatedNodeName": lambda o: _text(o, "status", "nominatedNodeName"),
    },
    "nodes": {
        "metadata.name": lambda o: _text(o, "metadata", "name"),
        "spec.unschedulable": lambda o: _flag(o, "spec", "unschedulable"),
    },
    "namespaces": {
        "metadata.name": lambda o: _text(o, "metadata", "name"),
        "status.phase": lambda o: _text(o, "status", "phase"),
    },
    "events": {
        **_META,
        "reason": lambda o: _text(o, "reason"),
        "type": lambda o: _text(o, "type"),
        "reportingController": lambda o: _text(o, "reportingController"),
        "regarding.kind": lambda o: _text(o, "regarding", "kind"),
        "regarding.name": lambda o: _text(o, "regarding", "name"),
        "regarding.namespace": lambda o: _text(o, "regarding", "namespace"),
        "regarding.uid": lambda o: _text(o, "regarding", "uid"),
    },
}


def field_value(resource: str, field: str, obj: _Obj) -> str:
    """The value of selectable ``field`` of ``obj`` (a ``resource`` object)."""
    getter = FIELDS.get(resource, _META).get(field)
    if getter is None:
        raise SelectorError(f"field label not supported: {field}")
    return getter(obj)


def _split_terms(text: str) -> list[str]:
    """Split on commas outside parentheses, honouring backslash escapes."""
    terms: list[str] = []
    depth = 0
    current: list[str] = []
    escaped = False
    for ch in text:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\":
            current.append(ch)
            escaped = True
        elif ch == "(":
            depth += 1
            current.append(ch)
        elif ch == ")":
            depth -= 1
            current.append(ch)
        elif ch == "," and depth == 0:
            terms.append("".join(current))
            current = []
        else:
            current.append(ch)
    terms.append("".join(current))
    return terms


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


_FIELD_TERM: Final = re.compile(r"^(?P<field>[^=!]+)(?P<op>!=|==|=)(?P<value>.*)$")


@attrs.frozen
class _FieldTerm:
    field: str
    op: str  # "=" or "!="
    value: str


@attrs.frozen
class FieldSelector:
    """A parsed field selector for one resource; empty matches everything."""

    resource: str
    terms: tuple[_FieldTerm, ...] = ()

    @classmethod
    def parse(cls, resource: str, text: str | None) -> FieldSelector:
        """Parse ``text`` for ``resource``.

        Raises:
            SelectorError: bad syntax or an unsupported field.
        """
        if not text:
            return cls(resource)
        supported = FIELDS.get(resource, _META)
        terms = []
        for raw in _split_terms(text):
            term = raw.strip()
            if not term:
                continue
            m = _FIELD_TERM.match(term)
            if m is None:
                raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
            field, op, value = m["field"].strip(), m["op"], m["value"].strip()
            if field not in supported:
                raise SelectorError(f"field label not supported: {field}")
            terms.append(_FieldTerm(field, "!=" if op == "!=" else "=", _unescape(value)))
        return cls(resource, tuple(terms))

    def matches(self, obj: _Obj) -> bool:
        """Whether ``obj`` satisfies every term."""
        for term in self.terms:
            value = field_value(self.resource, term.field, obj)
            if (value == term.value) != (term.op == "="):
                return False
        return True

    def __bool__(self) -> bool:
        return bool(self.terms)


_LABEL_TERM: Final = re.compile(
    r"""^\s*(?P<neg>!)?\s*(?P<key>[A-Za-z0-9./_-]+)\s*
        (?:(?P<op>==|=|!=|>|<)\s*(?P<value>[A-Za-z0-9._-]*)
          |\s+(?P<setop>in|notin)\s*\((?P<values>[^)]*)\)
        )?\s*$""",
    re.VERBOSE,
)


@attrs.frozen
class _LabelTerm:
    key: str
    op: str  # exists, !exists, =, !=, in, notin, gt, lt
    values: tuple[str, ...] = ()


@attrs.frozen
class LabelSelector:
    """A parsed label selector; empty matches everything."""

    terms: tuple[_LabelTerm, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> LabelSelector:
        """Parse ``text``.

        Raises:
            SelectorError: bad syntax.
        """
        if not text:
            return cls()
        terms = []
        for raw in _split_terms(text):
            if not raw.strip():
                continue
            m = _LABEL_TERM.match(raw)
            if m is None:
                raise SelectorError(f"unable to parse requirement: {raw.strip()!r}")
            key, neg, op = m["key"], m["neg"], m["op"]
            if neg and (op or m["setop"]):
                raise SelectorError(f"unable to parse requirement: {raw.strip()!r}")
            if neg:
                terms.append(_LabelTerm(key, "!exists"))
            elif m["setop"]:
                values = tuple(v.strip() for v in m["values"].split(",") if v.strip())
                terms.append(_LabelTerm(key, m["setop"], values))
            elif op in ("=", "=="):
                terms.append(_LabelTerm(key, "=", (m["value"],)))
            elif op == "!=":
                terms.append(_LabelTerm(key, "!=", (m["value"],)))
            elif op in (">", "<"):
                try:
                    int(m["value"])
                except ValueError:
                    raise SelectorError(
                        f"unable to parse requirement: {raw.strip()!r}: for 'Gt', 'Lt' "
                        "operators, the value must be an integer"
                    ) from None
                terms.append(_LabelTerm(key, "gt" if op == ">" else "lt", (m["value"],)))
            else:
                terms.append(_LabelTerm(key, "exists"))
        return cls(tuple(terms))

    def matches(self, obj: _Obj) -> bool:
        """Whether ``obj``'s ``metadata.labels`` satisfy every term."""
        labels = _get(obj, "metadata", "labels")
        if not isinstance(labels, Mapping):
            labels = {}
        for term in self.terms:
            present = term.key in labels
            value = str(labels.get(term.key, ""))
            if term.op == "exists":
                ok = present
            elif term.op == "!exists":
                ok = not present
            elif term.op == "=":
                ok = present and value == term.values[0]
            elif term.op == "!=":
                ok = not present or value != term.values[0]
            elif term.op == "in":
                ok = present and value in term.values
            elif term.op == "notin":
                ok = not present or value not in term.values
            else:
                try:
                    number = int(value)
                except ValueError:
                    ok = False
                else:
                    bound = int(term.values[0])
                    ok = present and (number > bound if term.op == "gt" else number < bound)
            if not ok:
                return False
        return True

    def __bool__(self) -> bool:
        return bool(self.terms)
