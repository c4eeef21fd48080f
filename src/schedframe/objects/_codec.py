"""Kubernetes JSON/YAML dicts to objects and back; camelCase lives only in this module.

Reading is strict by default, as ``kubectl --validate=strict``: a key that is not a field of
the Kubernetes API is an ``Unknown field`` issue naming its path, and a repeated key is an
error of the YAML/JSON reader. Fields of the API that the scheduler does not read (``kubectl
get -o yaml`` output carries ``managedFields``, probes, ``status.containerStatuses``, ...) are
accepted with any content; their names are listed in :mod:`schedframe.objects._fields`.
``validate="warn"`` turns unknown fields into :class:`~schedframe.errors.ManifestWarning`s,
``validate="ignore"`` does not look for them. A field we model is checked: a wrong type, a
bad quantity, operator, effect, port or date is a :class:`~schedframe.errors.ManifestError`
naming the JSON path, and every issue of one object is reported together. Defaults are the
API server's where the scheduler depends on them.

Over 1,000 lines on purpose: every kind's decoder and encoder shares the same field readers,
path bookkeeping and error collection, and the kind dispatch sits beside them; a kind added
later brings its own decoder here so that the rules of reading a manifest stay in one place.
"""

from __future__ import annotations

import json
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Final, Literal

import attrs

from schedframe._yaml import MAX_INT_DIGITS, YAMLError, load_all_strict, replace_lone_surrogates
from schedframe.errors import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    NOT_FOUND,
    REQUIRED,
    UNKNOWN_FIELD,
    UNSUPPORTED,
    FieldIssue,
    ManifestError,
    ManifestWarning,
)
from schedframe.objects import _apivalidation as _api
from schedframe.objects import _fields
from schedframe.objects._meta import (
    LABEL_SELECTOR_OPERATORS,
    NODE_FIELD_NAME,
    NODE_SELECTOR_OPERATORS,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    PreferredSchedulingTerm,
    parse_int64,
)
from schedframe.objects._node import (
    TAINT_EFFECTS,
    ContainerImage,
    Node,
    NodeCondition,
    NodeSpec,
    NodeStatus,
    Taint,
)
from schedframe.objects._pod import (
    DEFAULT_SCHEDULER_NAME,
    Affinity,
    Container,
    ContainerPort,
    DiskSource,
    NodeAffinity,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    PodCondition,
    PodSpec,
    PodStatus,
    ResourceRequirements,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
    is_supported_pod_level_resource,
)
from schedframe.objects._policy import PodDisruptionBudget
from schedframe.objects._quantity import (
    Quantity,
    ResourceList,
    parse_quantity,
    resource_amount,
    resource_quantity,
)
from schedframe.objects._report import LoadReport
from schedframe.objects._workload_api import WorkloadReference
from schedframe.objects.validation import (
    annotation_issues,
    is_dns1123_label,
    is_qualified_name,
    is_valid_label_value,
    label_issues,
    label_name_issues,
    name_is_dns_label,
    name_is_dns_subdomain,
)

__all__ = [
    "from_dict",
    "load_manifests",
    "loads_manifests",
    "namespace_from_dict",
    "node_from_dict",
    "pdb_from_dict",
    "pod_from_dict",
    "to_dict",
]

_KINDS: Final = (
    "CSIDriver",
    "CSINode",
    "CSIStorageCapacity",
    "DaemonSet",
    "Deployment",
    "DeviceClass",
    "Job",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Pod",
    "PodDisruptionBudget",
    "PriorityClass",
    "ReplicaSet",
    "ReplicationController",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "ResourceSlice",
    "Service",
    "StatefulSet",
    "StorageClass",
    "VolumeAttachment",
    "Workload",
)
#: The ``validate`` modes, as ``kubectl --validate``: an unknown field is an error
#: (``strict``, the default), a :class:`~schedframe.errors.ManifestWarning` (``warn``), or
#: not looked for (``ignore``). Duplicated keys are always errors.
VALIDATE_MODES: Final = ("strict", "warn", "ignore")
Validate = Literal["strict", "warn", "ignore"]
_MANIFEST_SUFFIXES: Final = (".json", ".yaml", ".yml")
_RFC3339_RE: Final = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")
_PERCENT_RE: Final = re.compile(r"[0-9]+%")
_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")  # upstream lists the set sorted
_TOLERATION_OPERATORS: Final = ("Equal", "Exists", "Gt", "Lt")
_PREEMPTION_POLICIES: Final = ("Never", "PreemptLowerPriority")
_WHEN_UNSATISFIABLE: Final = ("DoNotSchedule", "ScheduleAnyway")
_SPREAD_POLICIES: Final = ("Honor", "Ignore")
_REQUIRED_AFFINITY: Final = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED_AFFINITY: Final = "preferredDuringSchedulingIgnoredDuringExecution"

# Keys are Any: YAML may give int or bool keys, which the readers report.
_Dict = Mapping[Any, object]


class _GoStrings:
    """A string list rendered the way upstream's field errors print ``[]string`` values."""

    __slots__ = ("values",)

    def __init__(self, values: tuple[str, ...]) -> None:
        self.values = values

    def __str__(self) -> str:
        return "[]string{" + ", ".join(json.dumps(v) for v in self.values) + "}"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _describe(value: object) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, datetime | date):
        return "a date"
    return type(value).__name__


def _supported(values: tuple[str, ...]) -> str:
    return "supported values: " + ", ".join(json.dumps(v) for v in values)


class _Reader:
    """Reads typed fields out of plain dicts, collecting one issue per bad field.

    Every mapping the reader hands out (and every mapping it reads a key of) is tracked with
    its path and the keys read from it; :meth:`finish` reports the keys nobody read nor
    declared with :meth:`known` as unknown fields (``validate="strict"``: issues, ``"warn"``:
    warnings, ``"ignore"``: nothing). A parser therefore gets strict decoding by reading its
    fields through the reader and listing the API fields it accepts without reading them.

    ``api`` turns the API server's create-time validation on (the default) or off (the
    testing kit's lenient decoder, for upstream-style objects that skip the API server).
    """

    __slots__ = ("_seen", "api", "issues", "validate", "warnings")

    def __init__(self, validate: str = "strict", *, api: bool = True) -> None:
        self.issues: list[FieldIssue] = []
        self.warnings: list[FieldIssue] = []
        self.validate = validate
        self.api = api
        # id(mapping) -> (mapping, its path, keys read); the mapping is kept so its id stays
        # unique while the reader lives.
        self._seen: dict[int, tuple[_Dict, str, set[object]]] = {}

    # -- strictness -----------------------------------------------------------------------
    def track(self, d: _Dict, path: str) -> set[object]:
        """Start tracking ``d`` (found at ``path``); the set of its keys read so far."""
        entry = self._seen.get(id(d))
        if entry is None:
            entry = self._seen[id(d)] = (d, path, set())
        return entry[2]

    def get(self, d: _Dict, key: str, path: str) -> object:
        """``d[key]`` or ``None``, marking ``key`` as read."""
        # The decoder's hottest call: track() inlined.
        entry = self._seen.get(id(d))
        if entry is None:
            entry = self._seen[id(d)] = (d, path, set())
        entry[2].add(key)
        return d.get(key)

    def known(self, d: _Dict, path: str, names: tuple[str, ...]) -> None:
        """Accept ``names`` in ``d`` with any content: API fields the scheduler ignores."""
        self.track(d, path).update(names)

    def finish(self) -> None:
        """Report every key of a tracked mapping that was neither read nor declared known."""
        if self.validate == "ignore":
            self._seen.clear()
            return
        target = self.issues if self.validate == "strict" else self.warnings
        for d, path, read in self._seen.values():
            for key in d:
                if key not in read:
                    target.append(FieldIssue(path=_join(path, str(key)), kind=UNKNOWN_FIELD))
        self._seen.clear()

    # -- issues ---------------------------------------------------------------------------
    def invalid(self, path: str, value: object, detail: str) -> None:
        self.issues.append(FieldIssue(path=path, kind=INVALID, value=value, detail=detail))

    def required(self, path: str, detail: str = "") -> None:
        self.issues.append(FieldIssue(path=path, kind=REQUIRED, detail=detail))

    def forbidden(self, path: str, detail: str) -> None:
        self.issues.append(FieldIssue(path=path, kind=FORBIDDEN, detail=detail))

    def unsupported(self, path: str, value: object, supported: tuple[str, ...]) -> None:
        self.issues.append(
            FieldIssue(path=path, kind=UNSUPPORTED, value=value, detail=_supported(supported))
        )

    def wrong_type(self, path: str, value: object, expected: str) -> None:
        if value is None or isinstance(value, str | int | float):
            self.invalid(path, value, f"must be {expected}")
        else:
            self.issues.append(
                FieldIssue(
                    path=path, kind=INVALID, detail=f"must be {expected}, not {_describe(value)}"
                )
            )

    # -- typed getters (a missing or null field gives the default) -------------------------
    def map_(self, d: _Dict, key: str, path: str, *, open_: bool = False) -> _Dict | None:
        """The mapping at ``key``, tracked for unknown fields unless ``open_`` (any keys)."""
        value = self.get(d, key, path)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.wrong_type(_join(path, key), value, "a mapping")
            return None
        if not open_:
            self.track(value, _join(path, key))
        return value

    def seq(self, d: _Dict, key: str, path: str) -> list[object]:
        value = self.get(d, key, path)
        if value is None:
            return []
        if not isinstance(value, list):
            self.wrong_type(_join(path, key), value, "a list")
            return []
        return value

    def items(self, d: _Dict, key: str, path: str) -> Iterator[tuple[_Dict, str]]:
        """Each entry of a list of mappings, with its path; bad entries are reported."""
        where = _join(path, key)
        for i, item in enumerate(self.seq(d, key, path)):
            item_path = f"{where}[{i}]"
            if isinstance(item, Mapping):
                self.track(item, item_path)
                yield item, item_path
            else:
                self.wrong_type(item_path, item, "a mapping")

    def text(self, d: _Dict, key: str, path: str, default: str = "") -> str:
        value = self.get(d, key, path)
        if value is None:
            return default
        if not isinstance(value, str):
            self.wrong_type(_join(path, key), value, "a string")
            return default
        return value

    def opt_text(self, d: _Dict, key: str, path: str) -> str | None:
        value = self.get(d, key, path)
        if value is None:
            return None
        if not isinstance(value, str):
            self.wrong_type(_join(path, key), value, "a string")
            return None
        return value

    def integer(self, d: _Dict, key: str, path: str, default: int = 0, *, bits: int = 64) -> int:
        value = self.opt_integer(d, key, path, bits=bits)
        return default if value is None else value

    def opt_integer(self, d: _Dict, key: str, path: str, *, bits: int = 64) -> int | None:
        """An integer field; ``bits`` is its Go type's width (``int32``, ``int64``): a value
        that does not fit is refused, as the API server's decoder refuses it."""
        value = self.get(d, key, path)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.wrong_type(_join(path, key), value, "an integer")
            return None
        limit = 1 << (bits - 1)
        if not -limit <= value < limit:
            self.invalid(
                _join(path, key),
                value,
                f"must fit in int{bits} (between {-limit} and {limit - 1})",
            )
            return None
        return value

    def flag(self, d: _Dict, key: str, path: str) -> bool:
        value = self.get(d, key, path)
        if value is None:
            return False
        if not isinstance(value, bool):
            self.wrong_type(_join(path, key), value, "a boolean")
            return False
        return value

    def texts(self, d: _Dict, key: str, path: str) -> tuple[str, ...]:
        where = _join(path, key)
        result = []
        for i, item in enumerate(self.seq(d, key, path)):
            if isinstance(item, str):
                result.append(item)
            else:
                self.wrong_type(f"{where}[{i}]", item, "a string")
        return tuple(result)

    def text_map(self, d: _Dict, key: str, path: str) -> dict[str, str]:
        mapping = self.map_(d, key, path, open_=True)
        if not mapping:
            return {}
        where = _join(path, key)
        result: dict[str, str] = {}
        for name, value in mapping.items():
            if not isinstance(name, str):
                self.wrong_type(where, name, "a mapping with string keys")
            elif isinstance(value, str):
                result[name] = value
            else:
                self.wrong_type(f"{where}.{name}", value, "a string")
        return result

    def time(self, d: _Dict, key: str, path: str) -> datetime | None:
        value = self.get(d, key, path)
        if value is None:
            return None
        where = _join(path, key)
        if isinstance(value, datetime):  # YAML reads an unquoted timestamp itself
            if value.tzinfo is None:
                self.invalid(where, value.isoformat(), "must be an RFC 3339 date-time with a zone")
                return None
            return value.astimezone(UTC)
        if not isinstance(value, str):
            self.wrong_type(where, value, 'an RFC 3339 date-time such as "2024-01-02T03:04:05Z"')
            return None
        if _RFC3339_RE.fullmatch(value):
            try:
                return datetime.fromisoformat(value).astimezone(UTC)
            except ValueError:
                pass
        self.invalid(where, value, 'must be an RFC 3339 date-time such as "2024-01-02T03:04:05Z"')
        return None

    def resources(self, d: _Dict, key: str, path: str) -> ResourceList:
        return _amounts(self.quantities(d, key, path))

    def quantities(self, d: _Dict, key: str, path: str) -> dict[str, Quantity]:
        """A resource list as parsed quantities (what the API server's validation reads)."""
        mapping = self.map_(d, key, path, open_=True)
        if not mapping:
            return {}
        where = _join(path, key)
        result: dict[str, Quantity] = {}
        for name, value in mapping.items():
            if not isinstance(name, str):
                self.wrong_type(where, name, "a mapping with string keys")
                continue
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                self.wrong_type(f"{where}.{name}", value, "a quantity")
                continue
            try:
                result[name] = parse_quantity(value)
            except ValueError as exc:
                self.invalid(f"{where}.{name}", value, str(exc))
        return result

    def check(self, issues: list[FieldIssue]) -> None:
        """Record the API server's validation issues, unless API validation is off."""
        if self.api:
            self.issues.extend(issues)

    def one_of(
        self, d: _Dict, key: str, path: str, supported: tuple[str, ...], default: str
    ) -> str:
        value = self.text(d, key, path) or default
        if value not in supported:
            self.unsupported(_join(path, key), value, supported)
        return value


def _amounts(quantities: Mapping[str, Quantity]) -> ResourceList:
    return {name: resource_amount(name, q) for name, q in quantities.items()}


# ---- metadata and selectors -----------------------------------------------------------------


def _metadata(
    r: _Reader,
    obj: _Dict,
    base: str,
    *,
    default_namespace: str,
    name_rule: Callable[..., list[str]] = name_is_dns_subdomain,
) -> ObjectMeta:
    """``metadata``, validated as upstream ``ValidateObjectMeta``: the name by ``name_rule``
    (a DNS subdomain unless the kind says otherwise; one of the ``name_is_*`` functions of
    :mod:`schedframe.objects.validation`, which take ``prefix=True`` for ``generateName``),
    the namespace of a namespaced kind (``default_namespace`` not empty) as a DNS label,
    labels and annotations."""
    path = _join(base, "metadata")
    d = r.map_(obj, "metadata", base) or {}
    r.known(d, path, _fields.OBJECT_META)
    name = r.text(d, "name", path)
    if d.get("name") in (None, ""):
        r.required(_join(path, "name"))
    namespace = r.text(d, "namespace", path) or default_namespace
    owners = tuple(
        _known(r, o, p, _fields.OWNER_REFERENCE)
        and OwnerReference(
            api_version=r.text(o, "apiVersion", p),
            kind=r.text(o, "kind", p),
            name=r.text(o, "name", p),
            uid=r.text(o, "uid", p),
            controller=r.flag(o, "controller", p),
        )
        for o, p in r.items(d, "ownerReferences", path)
    )
    meta = ObjectMeta(
        name=name,
        namespace=namespace,
        uid=r.text(d, "uid", path),
        labels=r.text_map(d, "labels", path),
        annotations=r.text_map(d, "annotations", path),
        owner_references=owners,
        creation_timestamp=r.time(d, "creationTimestamp", path),
        deletion_timestamp=r.time(d, "deletionTimestamp", path),
        resource_version=r.text(d, "resourceVersion", path),
        generate_name=r.text(d, "generateName", path),
        finalizers=r.texts(d, "finalizers", path),
    )
    if r.api:
        _check_finalizers(r, meta.finalizers, _join(path, "finalizers"))
        if name:
            r.check(_api.name_issues(name, _join(path, "name"), name_rule))
        if meta.generate_name:
            r.check(
                _api.name_issues(
                    meta.generate_name,
                    _join(path, "generateName"),
                    lambda n: name_rule(n, prefix=True),
                )
            )
        if default_namespace and namespace:
            r.check(_api.name_issues(namespace, _join(path, "namespace"), name_is_dns_label))
        r.check(label_issues(meta.labels, _join(path, "labels")))
        r.check(annotation_issues(meta.annotations, _join(path, "annotations")))
    return meta


def _check_finalizers(r: _Reader, finalizers: tuple[str, ...], where: str) -> None:
    # Upstream ValidateFinalizers (apimachinery ValidateObjectMetaAccessor): each a qualified
    # name, reported at the list's path; "orphan" and "foregroundDeletion" not both.
    for finalizer in finalizers:
        for message in is_qualified_name(finalizer):
            r.invalid(where, finalizer, message)
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        r.invalid(
            where, list(finalizers), "finalizer orphan and foregroundDeletion cannot be both set"
        )


def _check_values(
    r: _Reader, operator: str, values: tuple[str, ...], path: str, *, numeric: bool
) -> None:
    # Upstream ValidateNodeSelectorRequirement / ValidateLabelSelectorRequirement, with the
    # integer check of labels.NewRequirement for Gt/Lt.
    where = _join(path, "values")
    if operator in ("In", "NotIn"):
        if not values:
            r.required(where, "must be specified when `operator` is 'In' or 'NotIn'")
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            r.forbidden(where, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    elif numeric and operator in ("Gt", "Lt"):
        if len(values) != 1:
            r.required(where, "must be specified single value when `operator` is 'Lt' or 'Gt'")
        for i, value in enumerate(values):
            if parse_int64(value) is None:
                r.invalid(
                    f"{where}[{i}]", value, "for 'Gt', 'Lt' operators, the value must be an integer"
                )


def _check_key(r: _Reader, e: _Dict, key: str, path: str) -> None:
    # Upstream ValidateLabelName on a selector requirement's key.
    if e.get("key") in (None, ""):
        r.required(_join(path, "key"))
    elif key:
        for message in is_qualified_name(key):
            r.invalid(_join(path, "key"), key, message)


def _label_selector(r: _Reader, d: _Dict, key: str, path: str) -> LabelSelector | None:
    sel = r.map_(d, key, path)
    if sel is None:
        return None
    where = _join(path, key)
    expressions = []
    for e, p in r.items(sel, "matchExpressions", where):
        operator = r.text(e, "operator", p)
        values = r.texts(e, "values", p)
        if operator not in LABEL_SELECTOR_OPERATORS:
            r.unsupported(_join(p, "operator"), operator, LABEL_SELECTOR_OPERATORS)
        else:
            _check_values(r, operator, values, p, numeric=False)
        key_ = r.text(e, "key", p)
        _check_key(r, e, key_, p)
        expressions.append(LabelSelectorRequirement(key=key_, operator=operator, values=values))
    return LabelSelector(
        match_labels=r.text_map(sel, "matchLabels", where), match_expressions=tuple(expressions)
    )


def _node_selector_term(r: _Reader, d: _Dict, path: str) -> NodeSelectorTerm:
    expressions = []
    for e, p in r.items(d, "matchExpressions", path):
        operator = r.text(e, "operator", p)
        values = r.texts(e, "values", p)
        if operator not in NODE_SELECTOR_OPERATORS:
            r.unsupported(_join(p, "operator"), operator, NODE_SELECTOR_OPERATORS)
        else:
            _check_values(r, operator, values, p, numeric=True)
        key = r.text(e, "key", p)
        _check_key(r, e, key, p)
        expressions.append(NodeSelectorRequirement(key=key, operator=operator, values=values))
    fields = []
    for e, p in r.items(d, "matchFields", path):
        key = r.text(e, "key", p)
        operator = r.text(e, "operator", p)
        values = r.texts(e, "values", p)
        if key != NODE_FIELD_NAME:
            r.unsupported(_join(p, "key"), key, (NODE_FIELD_NAME,))
        if operator not in ("In", "NotIn"):
            r.unsupported(_join(p, "operator"), operator, ("In", "NotIn"))
        elif len(values) != 1:
            r.invalid(_join(p, "values"), _GoStrings(values), "must have one element")
        fields.append(NodeSelectorRequirement(key=key, operator=operator, values=values))
    return NodeSelectorTerm(match_expressions=tuple(expressions), match_fields=tuple(fields))


def _weight(r: _Reader, d: _Dict, path: str) -> int:
    # An absent weight is 0 once decoded, hence out of range, as upstream reports it.
    raw = d.get("weight")
    read = r.opt_integer(d, "weight", path, bits=32)
    weight = 0 if read is None else read
    if (raw is None or read is not None) and not 1 <= weight <= 100:
        r.invalid(_join(path, "weight"), weight, "must be in the range 1-100")
    return weight


# ---- pods ---------------------------------------------------------------------------------------


def _container(r: _Reader, d: _Dict, path: str) -> Container:
    r.known(d, path, _fields.CONTAINER)
    res_path = _join(path, "resources")
    res = r.map_(d, "resources", path) or {}
    r.known(res, res_path, _fields.RESOURCE_REQUIREMENTS)
    requested = r.quantities(res, "requests", res_path)
    limited = r.quantities(res, "limits", res_path)
    # API server defaulting (SetDefaults_Pod): a limit without a request is also the request.
    for name, value in limited.items():
        requested.setdefault(name, value)
    r.check(_api.resource_requirements_issues(requested, limited, res_path))
    requests = _amounts(requested)
    limits = _amounts(limited)
    ports = []
    for p, pp in r.items(d, "ports", path):
        raw = p.get("containerPort")
        read = r.opt_integer(p, "containerPort", pp, bits=32)
        container_port = 0 if read is None else read
        if raw is None or raw == 0:
            r.required(_join(pp, "containerPort"))
        elif read is not None and not 1 <= container_port <= 65535:
            r.invalid(
                _join(pp, "containerPort"), container_port, "must be between 1 and 65535, inclusive"
            )
        host_port = r.integer(p, "hostPort", pp, bits=32)
        if host_port != 0 and not 1 <= host_port <= 65535:
            r.invalid(_join(pp, "hostPort"), host_port, "must be between 1 and 65535, inclusive")
        protocol = r.text(p, "protocol", pp) or "TCP"
        if protocol not in _PROTOCOLS:
            r.unsupported(_join(pp, "protocol"), protocol, _PROTOCOLS)
        ports.append(
            ContainerPort(
                container_port=container_port,
                host_port=host_port,
                protocol=protocol,
                host_ip=r.text(p, "hostIP", pp),
                name=r.text(p, "name", pp),
            )
        )
    return Container(
        name=r.text(d, "name", path),
        image=r.text(d, "image", path),
        requests=requests,
        limits=limits,
        ports=tuple(ports),
        restart_policy=r.opt_text(d, "restartPolicy", path),
        restart_policy_rules=tuple(
            _known(r, rule, p, _fields.CONTAINER_RESTART_RULE) and r.text(rule, "action", p)
            for rule, p in r.items(d, "restartPolicyRules", path)
        ),
        claims=tuple(
            _known(r, cl, p, _fields.CONTAINER_RESOURCE_CLAIM) and r.text(cl, "name", p)
            for cl, p in r.items(res, "claims", res_path)
        ),
    )


def _toleration(r: _Reader, d: _Dict, path: str) -> Toleration:
    key = r.text(d, "key", path)
    operator = r.text(d, "operator", path, "Equal")
    value = r.text(d, "value", path)
    effect = r.text(d, "effect", path)
    seconds = r.opt_integer(d, "tolerationSeconds", path)
    op_path = _join(path, "operator")
    if operator not in _TOLERATION_OPERATORS and operator != "":
        r.unsupported(op_path, operator, _TOLERATION_OPERATORS)
    elif not key and operator != "Exists":
        r.invalid(
            op_path,
            operator,
            'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        )
    elif operator == "Exists" and value:
        r.invalid(op_path, operator, "value must be empty when `operator` is 'Exists'")
    if effect and effect not in TAINT_EFFECTS:
        r.unsupported(_join(path, "effect"), effect, TAINT_EFFECTS)
    elif seconds is not None and effect != "NoExecute":
        r.invalid(
            _join(path, "effect"),
            effect,
            "effect must be 'NoExecute' when `tolerationSeconds` is set",
        )
    if key:
        r.check(label_name_issues(key, _join(path, "key")))
    return Toleration(
        key=key, operator=operator, value=value, effect=effect, toleration_seconds=seconds
    )


def _pod_affinity_term(r: _Reader, d: _Dict, path: str) -> PodAffinityTerm:
    topology_key = r.text(d, "topologyKey", path)
    if not topology_key:
        r.required(_join(path, "topologyKey"), "can not be empty")
    return PodAffinityTerm(
        label_selector=_label_selector(r, d, "labelSelector", path),
        namespaces=r.texts(d, "namespaces", path),
        topology_key=topology_key,
        namespace_selector=_label_selector(r, d, "namespaceSelector", path),
        match_label_keys=r.texts(d, "matchLabelKeys", path),
        mismatch_label_keys=r.texts(d, "mismatchLabelKeys", path),
    )


def _pod_affinity_parts(
    r: _Reader, d: _Dict, path: str
) -> tuple[tuple[PodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]:
    required = tuple(_pod_affinity_term(r, t, p) for t, p in r.items(d, _REQUIRED_AFFINITY, path))
    preferred = []
    for t, p in r.items(d, _PREFERRED_AFFINITY, path):
        weight = _weight(r, t, p)
        term = r.map_(t, "podAffinityTerm", p)
        if term is None:
            r.required(_join(p, "podAffinityTerm"))
            term = {}
        preferred.append(
            WeightedPodAffinityTerm(
                weight=weight, term=_pod_affinity_term(r, term, _join(p, "podAffinityTerm"))
            )
        )
    return required, tuple(preferred)


def _affinity(r: _Reader, spec: _Dict, path: str) -> Affinity | None:
    d = r.map_(spec, "affinity", path)
    if d is None:
        return None
    path = _join(path, "affinity")
    node_affinity = None
    na = r.map_(d, "nodeAffinity", path)
    if na is not None:
        na_path = _join(path, "nodeAffinity")
        required = None
        req = r.map_(na, _REQUIRED_AFFINITY, na_path)
        if req is not None:
            req_path = _join(na_path, _REQUIRED_AFFINITY)
            terms = tuple(
                _node_selector_term(r, t, p) for t, p in r.items(req, "nodeSelectorTerms", req_path)
            )
            if req.get("nodeSelectorTerms") in (None, []):
                r.required(
                    _join(req_path, "nodeSelectorTerms"),
                    "must have at least one node selector term",
                )
            required = NodeSelector(node_selector_terms=terms)
        preferred = []
        for t, p in r.items(na, _PREFERRED_AFFINITY, na_path):
            weight = _weight(r, t, p)
            pref = r.map_(t, "preference", p)
            if pref is None:
                r.required(_join(p, "preference"))
                pref = {}
            preferred.append(
                PreferredSchedulingTerm(
                    weight=weight, preference=_node_selector_term(r, pref, _join(p, "preference"))
                )
            )
        node_affinity = NodeAffinity(required=required, preferred=tuple(preferred))
    pod_affinity = None
    pa = r.map_(d, "podAffinity", path)
    if pa is not None:
        required_terms, preferred_terms = _pod_affinity_parts(r, pa, _join(path, "podAffinity"))
        pod_affinity = PodAffinity(required=required_terms, preferred=preferred_terms)
    pod_anti_affinity = None
    paa = r.map_(d, "podAntiAffinity", path)
    if paa is not None:
        required_terms, preferred_terms = _pod_affinity_parts(
            r, paa, _join(path, "podAntiAffinity")
        )
        pod_anti_affinity = PodAntiAffinity(required=required_terms, preferred=preferred_terms)
    return Affinity(
        node_affinity=node_affinity, pod_affinity=pod_affinity, pod_anti_affinity=pod_anti_affinity
    )


def _spread_constraint(r: _Reader, d: _Dict, path: str) -> TopologySpreadConstraint:
    raw = d.get("maxSkew")
    read = r.opt_integer(d, "maxSkew", path, bits=32)
    max_skew = 0 if read is None else read
    if (raw is None or read is not None) and max_skew <= 0:
        r.invalid(_join(path, "maxSkew"), max_skew, "must be greater than zero")
    topology_key = r.text(d, "topologyKey", path)
    if not topology_key:
        r.required(_join(path, "topologyKey"), "can not be empty")
    when = r.text(d, "whenUnsatisfiable", path)
    if when not in _WHEN_UNSATISFIABLE:
        r.unsupported(_join(path, "whenUnsatisfiable"), when, _WHEN_UNSATISFIABLE)
    min_domains = r.opt_integer(d, "minDomains", path, bits=32)
    if min_domains is not None and min_domains <= 0:
        r.invalid(_join(path, "minDomains"), min_domains, "must be greater than 0")
    policies = []
    for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        policy = r.opt_text(d, key, path)
        if policy is not None and policy not in _SPREAD_POLICIES:
            r.unsupported(_join(path, key), policy, _SPREAD_POLICIES)
        policies.append(policy)
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=topology_key,
        when_unsatisfiable=when,
        label_selector=_label_selector(r, d, "labelSelector", path),
        min_domains=min_domains,
        node_affinity_policy=policies[0],
        node_taints_policy=policies[1],
        match_label_keys=r.texts(d, "matchLabelKeys", path),
    )


def _known(r: _Reader, d: _Dict, path: str, names: tuple[str, ...]) -> Literal[True]:
    # r.known as an expression, for generators that build one object per entry.
    r.known(d, path, names)
    return True


def _check_kind(r: _Reader, obj: _Dict, base: str, kind: str) -> bool:
    """Whether ``obj`` is of ``kind`` (or names none); reports it when not."""
    r.known(obj, base, _fields.TYPE_META)
    value = obj.get("kind")
    if value is not None and value != kind:
        r.unsupported(_join(base, "kind"), value, (kind,))
        return False
    return True


# In-tree disk sources of a pod volume, with the field naming the disk.
_DISK_SOURCES: Final = (
    ("gcePersistentDisk", "pdName"),
    ("awsElasticBlockStore", "volumeID"),
    ("rbd", "image"),
    ("iscsi", "iqn"),
    ("azureDisk", "diskName"),
)


def _disk_source(r: _Reader, v: _Dict, path: str) -> DiskSource | None:
    for kind, key in _DISK_SOURCES:
        d = r.map_(v, kind, path)
        if d is None:
            continue
        where = _join(path, kind)
        r.known(d, where, _fields.DISK_SOURCES[kind])
        return DiskSource(
            kind=kind,
            name=r.text(d, key, where),
            read_only=r.flag(d, "readOnly", where),
            monitors=r.texts(d, "monitors", where) if kind == "rbd" else (),
            pool=(r.text(d, "pool", where) or "rbd") if kind == "rbd" else "",
        )
    return None


def _workload_ref(r: _Reader, d: _Dict, path: str) -> WorkloadReference | None:
    """``spec.workloadRef``, validated as upstream ``validateWorkloadReference``."""
    ref = r.map_(d, "workloadRef", path)
    if ref is None:
        return None
    p = _join(path, "workloadRef")
    value = WorkloadReference(
        name=r.text(ref, "name", p),
        pod_group=r.text(ref, "podGroup", p),
        pod_group_replica_key=r.text(ref, "podGroupReplicaKey", p),
    )
    if r.api:
        for key, text, rule, required in (
            ("name", value.name, name_is_dns_subdomain, True),
            ("podGroup", value.pod_group, name_is_dns_label, True),
            ("podGroupReplicaKey", value.pod_group_replica_key, name_is_dns_label, False),
        ):
            if not text:
                if required:
                    r.required(_join(p, key))
                continue
            for msg in rule(text):
                r.invalid(_join(p, key), text, msg)
    return value


def _pod(r: _Reader, obj: _Dict, base: str) -> Pod:
    kind_ok = _check_kind(r, obj, base, "Pod")
    meta = _metadata(r, obj, base, default_namespace="default")
    if not meta.uid:
        meta = _with_uid(meta, f"{meta.namespace}/{meta.name}")
    path = _join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
    gates = tuple(r.text(g, "name", p) for g, p in r.items(d, "schedulingGates", path))
    volumes = []
    r.known(d, path, _fields.POD_SPEC)
    for v, p in r.items(d, "volumes", path):
        r.known(v, p, _fields.VOLUME_SOURCES)
        pvc = r.map_(v, "persistentVolumeClaim", p)
        if pvc is not None:
            r.known(pvc, _join(p, "persistentVolumeClaim"), _fields.PVC_VOLUME_SOURCE)
        claim = None if pvc is None else r.text(pvc, "claimName", _join(p, "persistentVolumeClaim"))
        ephemeral = r.map_(v, "ephemeral", p)
        if ephemeral is not None:
            r.known(ephemeral, _join(p, "ephemeral"), _fields.EPHEMERAL_VOLUME_SOURCE)
        volumes.append(
            Volume(
                name=r.text(v, "name", p),
                persistent_volume_claim=claim,
                ephemeral=ephemeral is not None,
                disk=_disk_source(r, v, p),
            )
        )
    overhead = r.quantities(d, "overhead", path)
    pod_resources = _pod_resources(r, d, path)
    spec = PodSpec(
        node_name=r.text(d, "nodeName", path),
        scheduler_name=r.text(d, "schedulerName", path) or DEFAULT_SCHEDULER_NAME,
        priority=r.opt_integer(d, "priority", path, bits=32),
        priority_class_name=r.text(d, "priorityClassName", path),
        preemption_policy=r.one_of(
            d, "preemptionPolicy", path, _PREEMPTION_POLICIES, "PreemptLowerPriority"
        ),
        node_selector=r.text_map(d, "nodeSelector", path),
        affinity=_affinity(r, d, path),
        tolerations=tuple(_toleration(r, t, p) for t, p in r.items(d, "tolerations", path)),
        containers=tuple(_container(r, c, p) for c, p in r.items(d, "containers", path)),
        init_containers=tuple(_container(r, c, p) for c, p in r.items(d, "initContainers", path)),
        overhead=_amounts(overhead),
        topology_spread_constraints=tuple(
            _spread_constraint(r, c, p) for c, p in r.items(d, "topologySpreadConstraints", path)
        ),
        scheduling_gates=gates,
        host_network=r.flag(d, "hostNetwork", path),
        termination_grace_period_seconds=r.opt_integer(d, "terminationGracePeriodSeconds", path),
        volumes=tuple(volumes),
        resource_claims=_codec_resource.pod_resource_claims(r, d, path),
        host_users=None if d.get("hostUsers") is None else r.flag(d, "hostUsers", path),
        workload_ref=_workload_ref(r, d, path),
    )
    if pod_resources is not None:
        _default_pod_requests(spec, *pod_resources)
        spec = attrs.evolve(
            spec,
            resources=ResourceRequirements(
                requests=_amounts(pod_resources[0]), limits=_amounts(pod_resources[1])
            ),
        )
    if r.api and kind_ok:
        _check_pod_spec(r, spec, overhead, path, d.get("containers") in (None, []))
        if pod_resources is not None:
            pod_os = d.get("os")
            if isinstance(pod_os, Mapping) and pod_os.get("name") == "windows":
                r.forbidden(_join(path, "resources"), "may not be set for a windows pod")
            else:
                _check_pod_resources(r, spec, *pod_resources, _join(path, "resources"))
    path = _join(base, "status")
    s = r.map_(obj, "status", base) or {}
    r.known(s, path, _fields.POD_STATUS)
    conditions = tuple(
        _known(r, c, p, _fields.POD_CONDITION)
        and PodCondition(
            type=r.text(c, "type", p),
            status=r.text(c, "status", p),
            reason=r.text(c, "reason", p),
            message=r.text(c, "message", p),
            last_transition_time=r.time(c, "lastTransitionTime", p),
        )
        for c, p in r.items(s, "conditions", path)
    )
    status = PodStatus(
        phase=r.text(s, "phase", path, "Pending"),
        nominated_node_name=r.text(s, "nominatedNodeName", path),
        conditions=conditions,
        start_time=r.time(s, "startTime", path),
        resource_claim_statuses=_codec_resource.pod_claim_statuses(r, s, path),
        extended_resource_claim_status=_codec_resource.pod_extended_resource_claim_status(
            r, s, path
        ),
    )
    return Pod(metadata=meta, spec=spec, status=status)


def _pod_resources(
    r: _Reader, d: _Dict, path: str
) -> tuple[dict[str, Quantity], dict[str, Quantity]] | None:
    """Pod-level ``spec.resources`` as quantities; ``None`` when absent."""
    res = r.map_(d, "resources", path)
    if res is None:
        return None
    where = _join(path, "resources")
    r.known(res, where, _fields.RESOURCE_REQUIREMENTS)
    return r.quantities(res, "requests", where), r.quantities(res, "limits", where)


def _default_pod_requests(
    spec: PodSpec, requested: dict[str, Quantity], limited: Mapping[str, Quantity]
) -> None:
    # Upstream defaultPodRequests, with pod-level limits only: a hugepages request missing at
    # pod level is the containers' total; any other supported resource limited at pod level
    # and not requested there is requested as much.
    if not limited:
        return
    for name, amount in _pod_requests_of_containers(spec).items():
        if name.startswith("hugepages-") and name not in requested:
            requested[name] = resource_quantity(name, amount)
    for name, value in limited.items():
        if name not in requested and is_supported_pod_level_resource(name):
            requested[name] = value


def _check_pod_resources(
    r: _Reader,
    spec: PodSpec,
    requests: Mapping[str, Quantity],
    limits: Mapping[str, Quantity],
    path: str,
) -> None:
    # Upstream validatePodResources and validatePodResourceConsistency.
    r.check(_api.pod_level_resources_issues(requests, limits, path))
    aggregate = {
        name: resource_quantity(name, amount)
        for name, amount in _pod_requests_of_containers(spec).items()
    }
    for name, total in sorted(aggregate.items()):
        pod_request = requests.get(name)
        if pod_request is not None and total > pod_request:
            r.check(
                [
                    FieldIssue(
                        path=f"{path}.requests[{name}]",
                        kind=INVALID,
                        value=str(pod_request),
                        detail=f"must be greater than or equal to aggregate container "
                        f"requests of {total}",
                    )
                ]
            )
    for i, c in enumerate(spec.containers):
        for name, amount in sorted(c.limits.items()):
            pod_limit = limits.get(name)
            limit = resource_quantity(name, amount)
            if pod_limit is not None and limit > pod_limit:
                r.check(
                    [
                        FieldIssue(
                            path=f"{path}.containers[{i}][{name}].limits",
                            kind=INVALID,
                            value=str(limit),
                            detail=f"must be less than or equal to pod limits of {pod_limit}",
                        )
                    ]
                )


def _pod_requests_of_containers(spec: PodSpec) -> ResourceList:
    # The containers' aggregate, without pod-level requests or overhead.
    return Pod(
        metadata=ObjectMeta(name=""), spec=attrs.evolve(spec, resources=None, overhead={})
    ).requests


def _check_pod_spec(
    r: _Reader,
    spec: PodSpec,
    overhead: Mapping[str, Quantity],
    path: str,
    no_containers: bool,
) -> None:
    # Upstream ValidatePodSpec, for what the scheduler reads: containers present, their
    # names (unique DNS labels across containers and init containers, in that order),
    # host ports claimed once, nodeSelector labels, overhead quantities.
    containers_path = _join(path, "containers")
    if no_containers:  # not when the field is there but unreadable: that is reported
        r.required(containers_path)
    init_path = _join(path, "initContainers")
    named = [(c.name, f"{containers_path}[{i}]") for i, c in enumerate(spec.containers)]
    named.extend((c.name, f"{init_path}[{i}]") for i, c in enumerate(spec.init_containers))
    r.check(_api.container_names_issues(named, is_dns1123_label))
    r.check(
        _api.host_port_issues(
            (port.host_port, port.protocol, f"{containers_path}[{i}].ports[{j}]")
            for i, c in enumerate(spec.containers)
            for j, port in enumerate(c.ports)
        )
    )
    r.check(_api.node_selector_issues(spec.node_selector, _join(path, "nodeSelector")))
    r.check(_api.overhead_issues(overhead, _join(path, "overhead")))
    # Names the spec refers to: a node, a scheduler, a PriorityClass (DNS subdomains).
    for key, value in (
        ("nodeName", spec.node_name),
        ("schedulerName", spec.scheduler_name),
        ("priorityClassName", spec.priority_class_name),
    ):
        if value:
            r.check(_api.name_issues(value, _join(path, key), name_is_dns_subdomain))
    # Scheduling gates: qualified names, each once.
    gates_path = _join(path, "schedulingGates")
    seen_gates: set[str] = set()
    for i, gate in enumerate(spec.scheduling_gates):
        where = f"{gates_path}[{i}].name"
        r.check(_api.name_issues(gate, where, is_qualified_name))
        if gate in seen_gates:
            r.check([FieldIssue(path=where, kind=DUPLICATE, value=gate)])
        seen_gates.add(gate)
    # Spread constraints: one per topologyKey and whenUnsatisfiable; minDomains only with
    # DoNotSchedule.
    spread_path = _join(path, "topologySpreadConstraints")
    seen_spread: set[tuple[str, str]] = set()
    for i, c in enumerate(spec.topology_spread_constraints):
        where = f"{spread_path}[{i}]"
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in seen_spread:
            r.check(
                [
                    FieldIssue(
                        path=f"{where}.{{topologyKey, whenUnsatisfiable}}",
                        kind=DUPLICATE,
                        value=f"{{{c.topology_key}, {c.when_unsatisfiable}}}",
                    )
                ]
            )
        seen_spread.add(pair)
        if c.min_domains is not None and c.when_unsatisfiable == "ScheduleAnyway":
            r.check(
                [
                    FieldIssue(
                        path=f"{where}.minDomains",
                        kind=INVALID,
                        value=c.min_domains,
                        detail="can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                        "not ScheduleAnyway",
                    )
                ]
            )


def _with_uid(meta: ObjectMeta, uid: str) -> ObjectMeta:
    return ObjectMeta(
        name=meta.name,
        namespace=meta.namespace,
        uid=uid,
        labels=meta.labels,
        annotations=meta.annotations,
        owner_references=meta.owner_references,
        creation_timestamp=meta.creation_timestamp,
        deletion_timestamp=meta.deletion_timestamp,
        resource_version=meta.resource_version,
        generate_name=meta.generate_name,
        finalizers=meta.finalizers,
    )


# ---- nodes, namespaces, budgets ------------------------------------------------------------


def _node(r: _Reader, obj: _Dict, base: str) -> Node:
    _check_kind(r, obj, base, "Node")
    meta = _metadata(r, obj, base, default_namespace="")
    if not meta.uid:
        meta = _with_uid(meta, meta.name)
    path = _join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
    r.known(d, path, _fields.NODE_SPEC)
    taints = []
    for t, p in r.items(d, "taints", path):
        key = r.text(t, "key", p)
        if not key:
            r.required(_join(p, "key"))
        effect = r.text(t, "effect", p)
        if t.get("effect") in (None, ""):
            r.required(_join(p, "effect"))
        elif effect and effect not in TAINT_EFFECTS:
            r.unsupported(_join(p, "effect"), effect, TAINT_EFFECTS)
        if key:
            r.check(label_name_issues(key, _join(p, "key")))
        taint_value = t.get("value")
        if isinstance(taint_value, str):
            errors = is_valid_label_value(taint_value)
            if errors:
                r.check(
                    [
                        FieldIssue(
                            path=_join(p, "value"),
                            kind=INVALID,
                            value=taint_value,
                            detail=";".join(errors),
                        )
                    ]
                )
        taints.append(
            Taint(
                key=key,
                value=r.text(t, "value", p),
                effect=effect,
                time_added=r.time(t, "timeAdded", p),
            )
        )
    spec = NodeSpec(
        unschedulable=r.flag(d, "unschedulable", path),
        taints=tuple(taints),
        pod_cidr=r.text(d, "podCIDR", path),
    )
    path = _join(base, "status")
    s = r.map_(obj, "status", base) or {}
    r.known(s, path, _fields.NODE_STATUS)
    capacity_q = r.quantities(s, "capacity", path)
    allocatable_q = r.quantities(s, "allocatable", path)
    r.check(_api.node_resources_issues(capacity_q, _join(path, "capacity")))
    r.check(_api.node_resources_issues(allocatable_q, _join(path, "allocatable")))
    capacity = _amounts(capacity_q)
    allocatable = _amounts(allocatable_q)
    status = NodeStatus(
        capacity=capacity,
        # As the API server's defaulting: no allocatable means all of the capacity.
        allocatable=allocatable if allocatable else dict(capacity),
        conditions=tuple(
            _known(r, c, p, _fields.NODE_CONDITION)
            and NodeCondition(
                type=r.text(c, "type", p),
                status=r.text(c, "status", p),
                reason=r.text(c, "reason", p),
                message=r.text(c, "message", p),
            )
            for c, p in r.items(s, "conditions", path)
        ),
        images=tuple(
            ContainerImage(names=r.texts(i, "names", p), size_bytes=r.integer(i, "sizeBytes", p))
            for i, p in r.items(s, "images", path)
        ),
        declared_features=r.texts(s, "declaredFeatures", path),
    )
    return Node(metadata=meta, spec=spec, status=status)


def _namespace(r: _Reader, obj: _Dict, base: str) -> Namespace:
    _check_kind(r, obj, base, "Namespace")
    r.known(obj, base, _fields.NAMESPACE)
    meta = _metadata(r, obj, base, default_namespace="", name_rule=name_is_dns_label)
    if not meta.uid:
        meta = _with_uid(meta, meta.name)
    return Namespace(metadata=meta)


def _int_or_percent(r: _Reader, d: _Dict, key: str, path: str) -> int | str | None:
    value = r.get(d, key, path)
    where = _join(path, key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        r.wrong_type(where, value, "an integer or a percentage")
        return None
    if isinstance(value, int):
        if value < 0:
            r.invalid(where, value, "must be greater than or equal to 0")
        return value
    if not _PERCENT_RE.fullmatch(value):
        r.invalid(
            where,
            value,
            "a valid percent string must be a numeric string followed by an ending '%' "
            "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        )
    return value


def _pdb(r: _Reader, obj: _Dict, base: str) -> PodDisruptionBudget:
    _check_kind(r, obj, base, "PodDisruptionBudget")
    meta = _metadata(r, obj, base, default_namespace="default")
    if not meta.uid:
        meta = _with_uid(meta, f"{meta.namespace}/{meta.name}")
    path = _join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
    r.known(d, path, _fields.PDB_SPEC)
    min_available = _int_or_percent(r, d, "minAvailable", path)
    max_unavailable = _int_or_percent(r, d, "maxUnavailable", path)
    for key, amount in (("minAvailable", min_available), ("maxUnavailable", max_unavailable)):
        # Upstream IsNotMoreThan100Percent.
        if isinstance(amount, str) and _PERCENT_RE.fullmatch(amount) and int(amount[:-1]) > 100:
            r.check(
                [
                    FieldIssue(
                        path=_join(path, key),
                        kind=INVALID,
                        value=amount,
                        detail="must not be greater than 100%",
                    )
                ]
            )
    if min_available is not None and max_unavailable is not None:
        r.issues.append(
            FieldIssue(
                path=path, kind=INVALID, detail="minAvailable and maxUnavailable cannot be both set"
            )
        )
    spath = _join(base, "status")
    s = r.map_(obj, "status", base) or {}
    r.known(s, spath, _fields.PDB_STATUS)
    disrupted: dict[str, datetime] = {}
    pods = r.map_(s, "disruptedPods", spath, open_=True) or {}
    for name in pods:
        when = r.time(pods, name, _join(spath, "disruptedPods"))
        if when is not None:
            disrupted[str(name)] = when
    return PodDisruptionBudget(
        metadata=meta,
        selector=_label_selector(r, d, "selector", path),
        min_available=min_available,
        max_unavailable=max_unavailable,
        disruptions_allowed=r.integer(s, "disruptionsAllowed", spath, bits=32),
        disrupted_pods=disrupted,
    )


_PARSERS: Final[dict[str, Callable[[_Reader, _Dict, str], object]]] = {
    "Namespace": _namespace,
    "Node": _node,
    "Pod": _pod,
    "PodDisruptionBudget": _pdb,
}


def _run(
    parse: Callable[[_Reader, _Dict, str], object],
    d: object,
    source: str | None,
    *,
    validate: str = "strict",
    api: bool = True,
) -> object:
    if not isinstance(d, Mapping):
        raise ManifestError(
            [
                FieldIssue(
                    path="",
                    kind=INVALID,
                    detail=f"a manifest must be a mapping (a Kubernetes object), not {_describe(d)}",
                )
            ],
            source=source,
        )
    return _decode(_reader(validate, api=api), parse, d, "", source)


def _reader(validate: str, *, api: bool = True) -> _Reader:
    if validate not in VALIDATE_MODES:
        raise ValueError(f"validate must be 'strict', 'warn' or 'ignore', not {validate!r}")
    return _Reader(validate, api=api)


def _decode(
    r: _Reader,
    parse: Callable[[_Reader, _Dict, str], object],
    d: _Dict,
    base: str,
    source: str | None,
) -> object:
    obj = parse(r, d, base)
    r.finish()
    if r.issues:
        raise ManifestError(r.issues, source=source)
    prefix = f"{source}: " if source else ""
    for issue in r.warnings:
        warnings.warn(ManifestWarning(prefix + str(issue)), stacklevel=4)
    return obj


def server_decoder(kind: str) -> Callable[[Mapping[str, object]], object]:
    """A decoder for ``kind`` as an API server serves it (the Kubernetes backend's watch):
    no unknown-field check and no create-time validation, since the server has done both,
    possibly for a newer API than this library knows; types are still checked."""
    parse = _PARSERS[kind]

    def decode(d: Mapping[str, object]) -> object:
        return _run(parse, d, None, validate="ignore", api=False)

    return decode


def _from_dict_lenient(d: Mapping[str, object]) -> object:
    """:func:`from_dict` without unknown-field checks or the API server's validation (the
    testing kit's lenient decoder); type errors are still errors."""
    return _run(_dispatch, d, None, validate="ignore", api=False)


def pod_from_dict(
    d: Mapping[str, object], *, source: str | None = None, validate: Validate = "strict"
) -> Pod:
    """Build a :class:`Pod` from a Kubernetes ``v1.Pod`` dict (``kubectl get pod -o yaml``).

    Applies the API server's defaults the scheduler relies on: namespace ``default``,
    scheduler ``default-scheduler``, requests taken from limits (pod-level ones too), port
    protocol ``TCP``, phase ``Pending``, and a deterministic uid ``"<namespace>/<name>"`` when
    none is given; then the API server's validation. ``validate`` as for
    :func:`load_manifests`.

    Raises:
        ManifestError: listing every bad field of the object, each with its JSON path.
    """
    pod = _run(_pod, d, source, validate=validate)
    assert isinstance(pod, Pod)
    return pod


def node_from_dict(
    d: Mapping[str, object], *, source: str | None = None, validate: Validate = "strict"
) -> Node:
    """Build a :class:`Node` from a ``v1.Node`` dict; an empty allocatable copies capacity.

    The uid defaults to the node's name.

    Raises:
        ManifestError: listing every bad field of the object, each with its JSON path.
    """
    node = _run(_node, d, source, validate=validate)
    assert isinstance(node, Node)
    return node


def namespace_from_dict(
    d: Mapping[str, object], *, source: str | None = None, validate: Validate = "strict"
) -> Namespace:
    """Build a :class:`Namespace` from a ``v1.Namespace`` dict (uid defaults to the name).

    Raises:
        ManifestError: listing every bad field of the object, each with its JSON path.
    """
    ns = _run(_namespace, d, source, validate=validate)
    assert isinstance(ns, Namespace)
    return ns


def pdb_from_dict(
    d: Mapping[str, object], *, source: str | None = None, validate: Validate = "strict"
) -> PodDisruptionBudget:
    """Build a :class:`PodDisruptionBudget` from a ``policy/v1`` dict.

    Raises:
        ManifestError: listing every bad field of the object, each with its JSON path.
    """
    pdb = _run(_pdb, d, source, validate=validate)
    assert isinstance(pdb, PodDisruptionBudget)
    return pdb


def _dispatch(r: _Reader, d: _Dict, base: str) -> object:
    kind = d.get("kind")
    parse = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parse is None:
        custom = _codec_custom.declared(kind)
        if custom is not None:
            return _codec_custom.parse_custom(r, d, base, custom)
        if kind is None:
            r.required(_join(base, "kind"))
        else:
            r.unsupported(_join(base, "kind"), kind, _KINDS)
        return None
    return parse(r, d, base)


def from_dict(
    d: Mapping[str, object], *, source: str | None = None, validate: Validate = "strict"
) -> object:
    """Build the object a dict describes, by its ``kind`` (see :func:`load_manifests`).

    Unknown fields are errors unless ``validate`` is ``"warn"`` or ``"ignore"`` (see
    :func:`load_manifests`); the API server's create-time validation always applies.

    Raises:
        ManifestError: for a missing or unsupported ``kind`` or any bad field.
    """
    return _run(_dispatch, d, source, validate=validate)


# ---- loading files --------------------------------------------------------------------------


def _is_list(d: _Dict) -> bool:
    kind = d.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "items" in d


def _skipped(d: object, report: LoadReport) -> bool:
    """Whether ``d`` is an object of a kind to skip (counted in ``report``)."""
    if not isinstance(d, Mapping):
        return False
    kind = d.get("kind")
    if not isinstance(kind, str) or kind in _PARSERS or _codec_custom.declared(kind):
        return False
    if report.add(kind):
        return True
    api_version = d.get("apiVersion")
    group = api_version.rpartition("/")[0] if isinstance(api_version, str) else ""
    if "." in group and not group.endswith(".k8s.io"):
        report.add_custom(kind)  # a custom resource: kube-scheduler reads none
        return True
    return False


def _declare_if_crd(d: _Dict, where: str, base: str) -> None:
    """A CustomResourceDefinition declares its kind (the object itself is then skipped)."""
    if _codec_custom.is_crd(d):
        r = _Reader()
        _codec_custom.declare_crd(r, d, base)
        if r.issues:
            raise ManifestError(r.issues, source=where)


def _objects_of(
    docs: list[object], source: str, report: LoadReport, validate: str = "strict"
) -> list[object]:
    result: list[object] = []
    many = len(docs) > 1
    for index, doc in enumerate(docs):
        where = f"{source}#{index}" if many else source
        if isinstance(doc, Mapping) and _is_list(doc):
            items = doc.get("items")
            if items is None:
                continue
            if not isinstance(items, list):
                r = _Reader()
                r.wrong_type("items", items, "a list")
                raise ManifestError(r.issues, source=where)
            for i, item in enumerate(items):
                if not isinstance(item, Mapping):
                    r = _Reader()
                    r.wrong_type(f"items[{i}]", item, "a mapping")
                    raise ManifestError(r.issues, source=where)
                _declare_if_crd(item, where, f"items[{i}]")
                if _skipped(item, report):
                    continue
                result.append(_decode(_reader(validate), _dispatch, item, f"items[{i}]", where))
        else:
            if isinstance(doc, Mapping):
                _declare_if_crd(doc, where, "")
            if not _skipped(doc, report):
                result.append(_run(_dispatch, doc, where, validate=validate))
    return result


def loads_manifests(
    text: str,
    *,
    source: str = "<string>",
    report: LoadReport | None = None,
    validate: Validate = "strict",
) -> list[object]:
    """Parse every object of a YAML (or JSON) stream; ``kind: List`` items are flattened.

    Errors name ``source``, with ``#<index>`` (counting from 0) when the stream holds
    several documents. Kinds the scheduler does not read are skipped as
    :func:`load_manifests` says; ``validate`` as for :func:`load_manifests`.

    Raises:
        ManifestError: bad YAML, a repeated mapping key (with its line and column), a
            document that is not a mapping, or any bad object.
    """
    own = report is None
    report = LoadReport() if report is None else report
    result = _objects_of(_load_yaml(text, source), source, report, validate)
    if own:
        report.log()
    return result


def _load_yaml(text: str, source: str) -> list[object]:
    try:
        return list(load_all_strict(text, source))
    except YAMLError as exc:
        raise ManifestError([exc.issue], source=source) from None


def _reject_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise _JSONDuplicate(key)
        result[key] = value
    return result


class _JSONTooManyDigits(Exception):
    pass


def _json_int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS:
        raise _JSONTooManyDigits(
            f"an integer of {len(text)} digits, more than the {MAX_INT_DIGITS} that can be read"
        )
    return int(text)


class _JSONDuplicate(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _load_file(path: Path, report: LoadReport, validate: Validate = "strict") -> list[object]:
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ManifestError(
            [FieldIssue(path="", kind=INVALID, detail=f"cannot read file: {detail}")],
            source=source,
        ) from None
    if path.suffix != ".json":
        return loads_manifests(text, source=source, report=report, validate=validate)
    try:
        doc = json.loads(
            replace_lone_surrogates(text),
            object_pairs_hook=_reject_duplicates,
            parse_int=_json_int,
        )
    except _JSONDuplicate as exc:
        issue = FieldIssue(path="", kind=DUPLICATE, value=exc.key, detail="mapping key repeated")
        raise ManifestError([issue], source=source) from None
    except (RecursionError, _JSONTooManyDigits) as exc:
        detail = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        issue = FieldIssue(path="", kind=INVALID, detail=f"not valid JSON: {detail}")
        raise ManifestError([issue], source=source) from None
    except json.JSONDecodeError as exc:
        issue = FieldIssue(
            path="",
            kind=INVALID,
            detail=f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
        )
        raise ManifestError([issue], source=source) from None
    return _objects_of([doc], source, report, validate)


def load_manifests(
    source: str | os.PathLike[str],
    *,
    report: LoadReport | None = None,
    validate: Validate = "strict",
) -> list[object]:
    """Load every object from a file, a directory of manifests, or ``-`` (standard input).

    A file may hold several YAML documents, or JSON (by its ``.json`` suffix); a directory
    contributes each ``*.yaml``, ``*.yml`` and ``*.json`` directly inside it, in name order.
    ``kind: List`` (and ``PodList`` ...) items are flattened. Objects come back in order, so
    a whole ``kubectl get ... -A -o yaml`` dump loads as is.

    Objects of kinds kube-scheduler never reads (ConfigMap, Secret, Event, custom
    resources, ... see :data:`UNREAD_KINDS`) are skipped, and so are kinds it reads that
    schedframe does not model yet (:data:`NOT_MODELLED_KINDS`: ResourceSlice,
    ResourceClaim, DeviceClass, ...). Neither is silent:
    each skipped kind is counted in ``report``, or, without one, logged as one warning line
    per kind on the ``schedframe.objects`` logger. Any other unknown kind is an error.

    ``validate`` treats fields the Kubernetes API does not have as ``kubectl --validate``
    does: ``"strict"`` errors, ``"warn"`` warns (:class:`~schedframe.errors.ManifestWarning`,
    one per field), ``"ignore"`` does not look. Whatever the mode, objects are validated as
    the API server validates them on create.

    Custom kinds a plugin reads load once declared (:func:`declare_custom_kind`, or a
    ``apiextensions.k8s.io/v1`` CustomResourceDefinition earlier in the same load, which
    declares its kind and is then counted as skipped): they decode to :class:`CustomObject`.

    Raises:
        ManifestError: naming the file (and ``#<document index>``) and the field path.
    """
    own = report is None
    report = LoadReport() if report is None else report
    result = _load_source(source, report, validate)
    if own:
        report.log()
    return result


def _load_source(
    source: str | os.PathLike[str], report: LoadReport, validate: Validate = "strict"
) -> list[object]:
    if os.fspath(source) == "-":
        try:
            text = sys.stdin.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ManifestError(
                [FieldIssue(path="", kind=INVALID, detail=f"cannot read standard input: {exc}")],
                source="<stdin>",
            ) from None
        return loads_manifests(text, source="<stdin>", report=report, validate=validate)
    path = Path(source)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in _MANIFEST_SUFFIXES and p.is_file())
        result: list[object] = []
        for file in files:
            result.extend(_load_file(file, report, validate))
        return result
    if not path.exists():
        raise ManifestError(
            [FieldIssue(path="", kind=NOT_FOUND, detail="no such file or directory")],
            source=str(path),
        )
    return _load_file(path, report, validate)


# ---- to_dict --------------------------------------------------------------------------------


def _time_str(value: datetime) -> str:
    value = value.astimezone(UTC)
    if value.microsecond:
        return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def _resources_out(amounts: ResourceList) -> dict[str, object]:
    return {name: str(resource_quantity(name, amount)) for name, amount in amounts.items()}


def _put(out: dict[str, object], key: str, value: object) -> None:
    # Omit empty, zero and unset values, as Kubernetes' omitempty does.
    if not value:
        return
    out[key] = value


def _meta_out(meta: ObjectMeta) -> dict[str, object]:
    out: dict[str, object] = {"name": meta.name}
    _put(out, "generateName", meta.generate_name)
    _put(out, "namespace", meta.namespace)
    _put(out, "uid", meta.uid)
    _put(out, "resourceVersion", meta.resource_version)
    _put(out, "labels", dict(meta.labels))
    _put(out, "annotations", dict(meta.annotations))
    refs = []
    for ref in meta.owner_references:
        entry: dict[str, object] = {
            "apiVersion": ref.api_version,
            "kind": ref.kind,
            "name": ref.name,
            "uid": ref.uid,
        }
        _put(entry, "controller", ref.controller)
        refs.append(entry)
    _put(out, "ownerReferences", refs)
    _put(out, "finalizers", list(meta.finalizers))
    if meta.creation_timestamp is not None:
        out["creationTimestamp"] = _time_str(meta.creation_timestamp)
    if meta.deletion_timestamp is not None:
        out["deletionTimestamp"] = _time_str(meta.deletion_timestamp)
    return out


def _requirement_out(req: LabelSelectorRequirement | NodeSelectorRequirement) -> dict[str, object]:
    out: dict[str, object] = {"key": req.key, "operator": req.operator}
    _put(out, "values", list(req.values))
    return out


def _selector_out(sel: LabelSelector) -> dict[str, object]:
    out: dict[str, object] = {}
    _put(out, "matchLabels", dict(sel.match_labels))
    _put(out, "matchExpressions", [_requirement_out(r) for r in sel.match_expressions])
    return out


def _term_out(term: NodeSelectorTerm) -> dict[str, object]:
    out: dict[str, object] = {}
    _put(out, "matchExpressions", [_requirement_out(r) for r in term.match_expressions])
    _put(out, "matchFields", [_requirement_out(r) for r in term.match_fields])
    return out


def _pod_term_out(term: PodAffinityTerm) -> dict[str, object]:
    out: dict[str, object] = {}
    if term.label_selector is not None:
        out["labelSelector"] = _selector_out(term.label_selector)
    _put(out, "namespaces", list(term.namespaces))
    out["topologyKey"] = term.topology_key
    if term.namespace_selector is not None:
        out["namespaceSelector"] = _selector_out(term.namespace_selector)
    _put(out, "matchLabelKeys", list(term.match_label_keys))
    _put(out, "mismatchLabelKeys", list(term.mismatch_label_keys))
    return out


def _pod_affinity_out(aff: PodAffinity | PodAntiAffinity) -> dict[str, object]:
    out: dict[str, object] = {}
    _put(out, _REQUIRED_AFFINITY, [_pod_term_out(t) for t in aff.required])
    _put(
        out,
        _PREFERRED_AFFINITY,
        [{"weight": w.weight, "podAffinityTerm": _pod_term_out(w.term)} for w in aff.preferred],
    )
    return out


def _affinity_out(aff: Affinity) -> dict[str, object]:
    out: dict[str, object] = {}
    if aff.node_affinity is not None:
        na: dict[str, object] = {}
        if aff.node_affinity.required is not None:
            na[_REQUIRED_AFFINITY] = {
                "nodeSelectorTerms": [
                    _term_out(t) for t in aff.node_affinity.required.node_selector_terms
                ]
            }
        _put(
            na,
            _PREFERRED_AFFINITY,
            [
                {"weight": p.weight, "preference": _term_out(p.preference)}
                for p in aff.node_affinity.preferred
            ],
        )
        out["nodeAffinity"] = na
    if aff.pod_affinity is not None:
        out["podAffinity"] = _pod_affinity_out(aff.pod_affinity)
    if aff.pod_anti_affinity is not None:
        out["podAntiAffinity"] = _pod_affinity_out(aff.pod_anti_affinity)
    return out


def _container_out(c: Container) -> dict[str, object]:
    out: dict[str, object] = {"name": c.name}
    _put(out, "image", c.image)
    resources: dict[str, object] = {}
    _put(resources, "requests", _resources_out(c.requests))
    _put(resources, "limits", _resources_out(c.limits))
    _put(resources, "claims", [{"name": n} for n in c.claims])
    _put(out, "resources", resources)
    ports = []
    for p in c.ports:
        port: dict[str, object] = {"containerPort": p.container_port}
        _put(port, "hostPort", p.host_port)
        if p.protocol != "TCP":
            port["protocol"] = p.protocol
        _put(port, "hostIP", p.host_ip)
        _put(port, "name", p.name)
        ports.append(port)
    _put(out, "ports", ports)
    if c.restart_policy is not None:
        out["restartPolicy"] = c.restart_policy
    _put(out, "restartPolicyRules", [{"action": a} for a in c.restart_policy_rules])
    return out


def _toleration_out(t: Toleration) -> dict[str, object]:
    out: dict[str, object] = {}
    _put(out, "key", t.key)
    if t.operator != "Equal":
        out["operator"] = t.operator
    _put(out, "value", t.value)
    _put(out, "effect", t.effect)
    if t.toleration_seconds is not None:
        out["tolerationSeconds"] = t.toleration_seconds
    return out


def _spread_out(c: TopologySpreadConstraint) -> dict[str, object]:
    out: dict[str, object] = {
        "maxSkew": c.max_skew,
        "topologyKey": c.topology_key,
        "whenUnsatisfiable": c.when_unsatisfiable,
    }
    if c.label_selector is not None:
        out["labelSelector"] = _selector_out(c.label_selector)
    if c.min_domains is not None:
        out["minDomains"] = c.min_domains
    _put(out, "nodeAffinityPolicy", c.node_affinity_policy)
    _put(out, "nodeTaintsPolicy", c.node_taints_policy)
    _put(out, "matchLabelKeys", list(c.match_label_keys))
    return out


def _pod_out(pod: Pod) -> dict[str, object]:
    s = pod.spec
    spec: dict[str, object] = {}
    _put(spec, "nodeName", s.node_name)
    if s.scheduler_name != DEFAULT_SCHEDULER_NAME:
        spec["schedulerName"] = s.scheduler_name
    if s.priority is not None:
        spec["priority"] = s.priority
    _put(spec, "priorityClassName", s.priority_class_name)
    if s.preemption_policy != "PreemptLowerPriority":
        spec["preemptionPolicy"] = s.preemption_policy
    _put(spec, "nodeSelector", dict(s.node_selector))
    if s.affinity is not None:
        spec["affinity"] = _affinity_out(s.affinity)
    _put(spec, "tolerations", [_toleration_out(t) for t in s.tolerations])
    _put(spec, "initContainers", [_container_out(c) for c in s.init_containers])
    _put(spec, "containers", [_container_out(c) for c in s.containers])
    _put(spec, "overhead", _resources_out(s.overhead))
    if s.resources is not None:
        pod_resources: dict[str, object] = {}
        _put(pod_resources, "requests", _resources_out(s.resources.requests))
        _put(pod_resources, "limits", _resources_out(s.resources.limits))
        spec["resources"] = pod_resources
    _put(spec, "topologySpreadConstraints", [_spread_out(c) for c in s.topology_spread_constraints])
    _put(spec, "schedulingGates", [{"name": g} for g in s.scheduling_gates])
    _put(spec, "hostNetwork", s.host_network)
    if s.termination_grace_period_seconds is not None:
        spec["terminationGracePeriodSeconds"] = s.termination_grace_period_seconds
    volumes = []
    for v in s.volumes:
        volume: dict[str, object] = {"name": v.name}
        if v.persistent_volume_claim is not None:
            volume["persistentVolumeClaim"] = {"claimName": v.persistent_volume_claim}
        if v.ephemeral:
            volume["ephemeral"] = {"volumeClaimTemplate": {"spec": {}}}
        if v.disk is not None:
            key = dict(_DISK_SOURCES)[v.disk.kind]
            disk: dict[str, object] = {key: v.disk.name}
            _put(disk, "readOnly", v.disk.read_only)
            if v.disk.kind == "rbd":
                disk["monitors"] = list(v.disk.monitors)
                disk["pool"] = v.disk.pool
            volume[v.disk.kind] = disk
        volumes.append(volume)
    _put(spec, "volumes", volumes)
    _put(spec, "resourceClaims", _codec_resource.pod_resource_claims_out(s.resource_claims))
    if s.host_users is not None:
        spec["hostUsers"] = s.host_users
    if s.workload_ref is not None:
        ref: dict[str, object] = {"name": s.workload_ref.name, "podGroup": s.workload_ref.pod_group}
        _put(ref, "podGroupReplicaKey", s.workload_ref.pod_group_replica_key)
        spec["workloadRef"] = ref
    st = pod.status
    status: dict[str, object] = {"phase": st.phase}
    _put(status, "nominatedNodeName", st.nominated_node_name)
    conditions = []
    for c in st.conditions:
        cond: dict[str, object] = {"type": c.type, "status": c.status}
        _put(cond, "reason", c.reason)
        _put(cond, "message", c.message)
        if c.last_transition_time is not None:
            cond["lastTransitionTime"] = _time_str(c.last_transition_time)
        conditions.append(cond)
    _put(status, "conditions", conditions)
    _put(status, "resourceClaimStatuses", _codec_resource.claim_statuses_out(st))
    _put(
        status,
        "extendedResourceClaimStatus",
        _codec_resource.extended_resource_claim_status_out(st),
    )
    if st.start_time is not None:
        status["startTime"] = _time_str(st.start_time)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta_out(pod.metadata),
        "spec": spec,
        "status": status,
    }


def _node_out(node: Node) -> dict[str, object]:
    spec: dict[str, object] = {}
    _put(spec, "podCIDR", node.spec.pod_cidr)
    _put(spec, "unschedulable", node.spec.unschedulable)
    taints = []
    for t in node.spec.taints:
        taint: dict[str, object] = {"key": t.key}
        _put(taint, "value", t.value)
        taint["effect"] = t.effect
        if t.time_added is not None:
            taint["timeAdded"] = _time_str(t.time_added)
        taints.append(taint)
    _put(spec, "taints", taints)
    st = node.status
    status: dict[str, object] = {}
    _put(status, "capacity", _resources_out(st.capacity))
    _put(status, "allocatable", _resources_out(st.allocatable))
    conditions = []
    for c in st.conditions:
        cond: dict[str, object] = {"type": c.type, "status": c.status}
        _put(cond, "reason", c.reason)
        _put(cond, "message", c.message)
        conditions.append(cond)
    _put(status, "conditions", conditions)
    _put(
        status,
        "images",
        [{"names": list(i.names), "sizeBytes": i.size_bytes} for i in st.images],
    )
    _put(status, "declaredFeatures", list(st.declared_features))
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _meta_out(node.metadata),
        "spec": spec,
        "status": status,
    }


def _pdb_out(pdb: PodDisruptionBudget) -> dict[str, object]:
    spec: dict[str, object] = {}
    if pdb.min_available is not None:
        spec["minAvailable"] = pdb.min_available
    if pdb.max_unavailable is not None:
        spec["maxUnavailable"] = pdb.max_unavailable
    if pdb.selector is not None:
        spec["selector"] = _selector_out(pdb.selector)
    status: dict[str, object] = {}
    _put(status, "disruptionsAllowed", pdb.disruptions_allowed)
    _put(
        status,
        "disruptedPods",
        {name: _time_str(when) for name, when in pdb.disrupted_pods.items()},
    )
    out: dict[str, object] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": _meta_out(pdb.metadata),
        "spec": spec,
    }
    _put(out, "status", status)
    return out


def to_dict(obj: object) -> dict[str, object]:
    """Kubernetes JSON for ``obj`` (any kind :func:`from_dict` builds).

    camelCase keys with ``apiVersion`` and ``kind``; quantities as canonical strings (cpu in
    milli-units, memory in binary units where exact); datetimes as RFC 3339 in UTC; empty
    and default fields left out. ``from_dict(to_dict(x)) == x`` for every object the codec
    produces.

    Raises:
        TypeError: for any other type.
    """
    if isinstance(obj, Pod):
        return _pod_out(obj)
    if isinstance(obj, Node):
        return _node_out(obj)
    if isinstance(obj, Namespace):
        return {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta_out(obj.metadata)}
    if isinstance(obj, PodDisruptionBudget):
        return _pdb_out(obj)
    out = _codec_workloads.encode(obj) or _codec_storage.encode(obj) or _codec_custom.encode(obj)
    if out is not None:
        return out
    out = _codec_resource.encode(obj)
    if out is not None:
        return out
    raise TypeError(f"to_dict() cannot encode {type(obj).__name__}")


# The PriorityClass, workload, storage and resource.k8s.io (DRA) kinds register their decoders
# in _PARSERS on import; custom kinds and CustomResourceDefinitions are decoded by _codec_custom.
from schedframe.objects import (  # noqa: E402
    _codec_custom,
    _codec_resource,
    _codec_storage,
    _codec_workloads,
)
