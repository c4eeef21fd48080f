"""Object metadata, label selectors and node selectors, with matching compiled once per object.

Selectors are matched millions of times (per pod, per node), so each one turns its
requirements into a tuple of ``(op, key, argument)`` triples the first time it is used and
``matches`` walks that tuple; no attrs instance or set is built per call.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import datetime
from typing import Final, TypeAlias

import attrs

from schedframe.objects.validation import is_qualified_name, is_valid_label_value

__all__ = [
    "LABEL_SELECTOR_OPERATORS",
    "NODE_SELECTOR_OPERATORS",
    "LabelSelector",
    "LabelSelectorRequirement",
    "Namespace",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "ObjectMeta",
    "ObjectReference",
    "OwnerReference",
    "PreferredSchedulingTerm",
]

#: Operators of ``metav1.LabelSelectorRequirement``, in upstream order.
LABEL_SELECTOR_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist")
#: Operators of ``v1.NodeSelectorRequirement``, in upstream order.
NODE_SELECTOR_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
#: The only field ``matchFields`` may name (upstream ``supportedNodeSelectorFieldKeys``).
NODE_FIELD_NAME: Final = "metadata.name"

# Compiled operator codes; ints compare fastest in the matching loop.
_EQ, _IN, _NOT_IN, _EXISTS, _NOT_EXISTS, _GT, _LT, _NEVER = range(8)
_Compiled: TypeAlias = tuple[tuple[int, str, object], ...]
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


@functools.lru_cache(maxsize=8192)
def parse_int64(text: str) -> int | None:
    """Parse ``text`` as Go's ``strconv.ParseInt(text, 10, 64)`` would; ``None`` if it can't.

    Cached: ``Gt``/``Lt`` requirements parse the same few label values over and over.
    """
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits.isdigit() or not digits.isascii():
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def _compile_requirement(
    key: str, operator: str, values: tuple[str, ...], *, numeric: bool
) -> tuple[int, str, object]:
    # Mirrors labels.NewRequirement: a requirement it would refuse becomes _NEVER, so the
    # selector matches nothing, as callers treat a selector that failed to parse.
    if is_qualified_name(key) or any(is_valid_label_value(v) for v in values):
        return (_NEVER, key, None)
    if operator == "In" and values:
        return (_IN, key, frozenset(values))
    if operator == "NotIn" and values:
        return (_NOT_IN, key, frozenset(values))
    if operator == "Exists" and not values:
        return (_EXISTS, key, None)
    if operator == "DoesNotExist" and not values:
        return (_NOT_EXISTS, key, None)
    if numeric and operator in ("Gt", "Lt") and len(values) == 1:
        bound = parse_int64(values[0])
        if bound is not None:
            return (_GT if operator == "Gt" else _LT, key, bound)
    return (_NEVER, key, None)


def _requirements_match(compiled: _Compiled, labels: Mapping[str, str]) -> bool:
    """AND of compiled requirements against ``labels`` (upstream ``Requirement.Matches``)."""
    for op, key, arg in compiled:
        value = labels.get(key)
        if op == _EQ:
            if value != arg:
                return False
        elif op == _IN:
            if value is None or value not in arg:  # type: ignore[operator]
                return False
        elif op == _NOT_IN:
            if value is not None and value in arg:  # type: ignore[operator]
                return False
        elif op == _EXISTS:
            if value is None:
                return False
        elif op == _NOT_EXISTS:
            if value is not None:
                return False
        elif op == _GT or op == _LT:
            number = None if value is None else parse_int64(value)
            if number is None:
                return False
            if op == _GT and not number > arg:  # type: ignore[operator]
                return False
            if op == _LT and not number < arg:  # type: ignore[operator]
                return False
        else:
            return False
    return True


@attrs.frozen(kw_only=True)
class OwnerReference:
    """An owner of an object (upstream ``metav1.OwnerReference``)."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool = False


@attrs.frozen(kw_only=True)
class ObjectReference:
    """A reference to an object (upstream ``v1.ObjectReference``): what an event is about
    (``regarding``) and what it relates to (``related``, e.g. a preemptor).

    Build one from any object with metadata with :meth:`of`; ``to_dict`` gives the API form.
    """

    kind: str
    name: str
    namespace: str = ""
    uid: str = ""
    api_version: str = "v1"
    resource_version: str = ""

    @classmethod
    def of(cls, obj: object) -> ObjectReference:
        """The reference to ``obj`` (its class name is its kind; an ObjectReference is
        returned as is).

        Raises:
            TypeError: ``obj`` has no ``metadata``.
        """
        if isinstance(obj, ObjectReference):
            return obj
        meta = getattr(obj, "metadata", None)
        if not isinstance(meta, ObjectMeta):
            raise TypeError(f"cannot reference a {type(obj).__name__}: it has no metadata")
        return cls(
            kind=type(obj).__name__,
            name=meta.name,
            namespace=meta.namespace,
            uid=meta.uid,
            resource_version=meta.resource_version,
        )

    @property
    def key(self) -> str:
        """``namespace/name``, or ``name`` for cluster-scoped objects."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def to_dict(self) -> dict[str, str]:
        """The API form (``apiVersion``, ``kind``, ``name`` and the non-empty rest)."""
        out = {"apiVersion": self.api_version, "kind": self.kind, "name": self.name}
        if self.namespace:
            out["namespace"] = self.namespace
        if self.uid:
            out["uid"] = self.uid
        if self.resource_version:
            out["resourceVersion"] = self.resource_version
        return out


@attrs.frozen(kw_only=True)
class ObjectMeta:
    """The metadata every object carries (upstream ``metav1.ObjectMeta``, the fields we use).

    Datetimes are timezone-aware, in UTC. ``labels`` and ``annotations`` are plain dicts that
    must not be changed after construction; they take no part in hashing.
    """

    name: str
    namespace: str = ""
    uid: str = ""
    labels: dict[str, str] = attrs.field(factory=dict, hash=False)
    annotations: dict[str, str] = attrs.field(factory=dict, hash=False)
    owner_references: tuple[OwnerReference, ...] = ()
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    resource_version: str = ""
    generate_name: str = ""
    #: ``metadata.finalizers``: the keys that keep a deleted object stored (its
    #: ``deletionTimestamp`` set) until every one is removed; in the API's order.
    finalizers: tuple[str, ...] = ()

    @property
    def controller_ref(self) -> OwnerReference | None:
        """The owner reference marked ``controller: true``, if any (``metav1.GetControllerOf``)."""
        for ref in self.owner_references:
            if ref.controller:
                return ref
        return None


@attrs.frozen(kw_only=True)
class LabelSelectorRequirement:
    """One expression of a label selector: ``key`` ``operator`` ``values``.

    ``operator`` is one of :data:`LABEL_SELECTOR_OPERATORS`.
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class LabelSelector:
    """A label query over a set of objects (upstream ``metav1.LabelSelector``).

    An empty selector (no labels, no expressions) matches everything, as
    ``metav1.LabelSelectorAsSelector`` says; a *missing* selector is ``None`` where it is
    used and matches nothing. A requirement upstream would refuse to parse (an unknown
    operator, ``In`` without values) makes the selector match nothing.
    """

    match_labels: dict[str, str] = attrs.field(factory=dict, hash=False)
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()

    @classmethod
    def everything(cls) -> LabelSelector:
        """A selector that matches every set of labels (upstream ``labels.Everything()``)."""
        return _EVERYTHING

    @property
    def is_empty(self) -> bool:
        """Whether the selector puts no restriction, hence matches everything."""
        return not self.match_labels and not self.match_expressions

    @functools.cached_property
    def _compiled(self) -> _Compiled:
        compiled: list[tuple[int, str, object]] = [
            (_EQ, key, value)
            if not is_qualified_name(key) and not is_valid_label_value(value)
            else (_NEVER, key, None)
            for key, value in self.match_labels.items()
        ]
        compiled.extend(
            _compile_requirement(r.key, r.operator, r.values, numeric=False)
            for r in self.match_expressions
        )
        return tuple(compiled)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy every requirement (upstream ``Selector.Matches``)."""
        return _requirements_match(self._compiled, labels)


_EVERYTHING: Final = LabelSelector()


@attrs.frozen(kw_only=True)
class NodeSelectorRequirement:
    """One node selector expression: ``key`` ``operator`` ``values``.

    ``operator`` is one of :data:`NODE_SELECTOR_OPERATORS`. ``Gt``/``Lt`` take exactly one
    integer value and compare it with the label parsed as an integer; a label that does not
    parse does not match (upstream ``labels.Requirement.Matches``).
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()


def _compile_field(req: NodeSelectorRequirement) -> tuple[int, str, object]:
    # Upstream nodeSelectorRequirementsAsFieldSelector: In/NotIn with exactly one value.
    if req.operator in ("In", "NotIn") and len(req.values) == 1:
        return (_IN if req.operator == "In" else _NOT_IN, req.key, req.values[0])
    return (_NEVER, req.key, None)


@attrs.frozen(kw_only=True)
class NodeSelectorTerm:
    """Expressions over node labels and fields, ANDed (upstream ``v1.NodeSelectorTerm``).

    A term with neither expressions nor fields matches nothing. ``match_fields`` can only
    name ``metadata.name``.
    """

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()

    @property
    def is_empty(self) -> bool:
        """Whether the term has no expressions and no fields (it then selects no node)."""
        return not self.match_expressions and not self.match_fields

    @functools.cached_property
    def _compiled(self) -> tuple[_Compiled, _Compiled] | None:
        if self.is_empty:
            return None
        labels = tuple(
            _compile_requirement(r.key, r.operator, r.values, numeric=True)
            for r in self.match_expressions
        )
        return labels, tuple(_compile_field(r) for r in self.match_fields)

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        """Whether a node with this name and labels satisfies the term.

        Mirrors upstream ``nodeaffinity`` term matching, including its quirk that field
        requirements are not checked for a node whose name is empty.
        """
        compiled = self._compiled
        if compiled is None:
            return False
        return _term_matches(compiled, node_name, labels)


def _term_matches(
    compiled: tuple[_Compiled, _Compiled], node_name: str, labels: Mapping[str, str]
) -> bool:
    label_reqs, field_reqs = compiled
    if label_reqs and not _requirements_match(label_reqs, labels):
        return False
    if field_reqs:
        if any(req[0] == _NEVER for req in field_reqs):
            return False  # a term that fails to parse never matches
        if node_name:
            for op, key, arg in field_reqs:
                value = node_name if key == NODE_FIELD_NAME else ""
                if (value == arg) != (op == _IN):
                    return False
    return True


@attrs.frozen(kw_only=True)
class NodeSelector:
    """Terms over node labels and fields, ORed (upstream ``v1.NodeSelector``)."""

    node_selector_terms: tuple[NodeSelectorTerm, ...] = ()

    @functools.cached_property
    def _compiled(self) -> tuple[tuple[_Compiled, _Compiled], ...]:
        # Empty terms select nothing, so they are dropped here (upstream does the same).
        return tuple(c for t in self.node_selector_terms if (c := t._compiled) is not None)

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        """Whether any term matches the node (upstream ``NodeSelector.Match``)."""
        for compiled in self._compiled:
            if _term_matches(compiled, node_name, labels):
                return True
        return False


@attrs.frozen(kw_only=True)
class PreferredSchedulingTerm:
    """A weighted node preference (upstream ``v1.PreferredSchedulingTerm``); weight 1-100."""

    weight: int
    preference: NodeSelectorTerm


@attrs.frozen(kw_only=True)
class Namespace:
    """A namespace; the scheduler reads its labels for ``namespaceSelector`` terms."""

    metadata: ObjectMeta

    @property
    def name(self) -> str:
        """The namespace's name."""
        return self.metadata.name

    @property
    def labels(self) -> dict[str, str]:
        """The namespace's labels."""
        return self.metadata.labels
