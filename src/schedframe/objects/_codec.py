"""Kubernetes JSON/YAML dicts to objects and back; camelCase lives only in this module.

Reading is lenient where ``kubectl get -o yaml`` output carries fields we do not model
(``managedFields``, ``status.containerStatuses``, ...): they are ignored. A field we model is
checked: a wrong type, a bad quantity, operator, effect, port or date is a
:class:`~schedframe.errors.ManifestError` naming the JSON path, and every issue of one object
is reported together. Defaults are the API server's where the scheduler depends on them.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Final

from schedframe._yaml import YAMLError, load_all_strict
from schedframe.errors import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    NOT_FOUND,
    REQUIRED,
    UNSUPPORTED,
    FieldIssue,
    ManifestError,
)
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
    label_key_errors,
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
    NodeAffinity,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    PodCondition,
    PodSpec,
    PodStatus,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
)
from schedframe.objects._policy import PodDisruptionBudget
from schedframe.objects._quantity import (
    ResourceList,
    parse_quantity,
    resource_amount,
    resource_quantity,
)
from schedframe.objects._report import LoadReport

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
    "DaemonSet",
    "Deployment",
    "DeviceClass",
    "Job",
    "Namespace",
    "Node",
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
)
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
    """Reads typed fields out of plain dicts, collecting one issue per bad field."""

    __slots__ = ("issues",)

    def __init__(self) -> None:
        self.issues: list[FieldIssue] = []

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
    def map_(self, d: _Dict, key: str, path: str) -> _Dict | None:
        value = d.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.wrong_type(_join(path, key), value, "a mapping")
            return None
        return value

    def seq(self, d: _Dict, key: str, path: str) -> list[object]:
        value = d.get(key)
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
                yield item, item_path
            else:
                self.wrong_type(item_path, item, "a mapping")

    def text(self, d: _Dict, key: str, path: str, default: str = "") -> str:
        value = d.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            self.wrong_type(_join(path, key), value, "a string")
            return default
        return value

    def opt_text(self, d: _Dict, key: str, path: str) -> str | None:
        value = d.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.wrong_type(_join(path, key), value, "a string")
            return None
        return value

    def integer(self, d: _Dict, key: str, path: str, default: int = 0) -> int:
        value = self.opt_integer(d, key, path)
        return default if value is None else value

    def opt_integer(self, d: _Dict, key: str, path: str) -> int | None:
        value = d.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.wrong_type(_join(path, key), value, "an integer")
            return None
        return value

    def flag(self, d: _Dict, key: str, path: str) -> bool:
        value = d.get(key)
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
        mapping = self.map_(d, key, path)
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
        value = d.get(key)
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
        mapping = self.map_(d, key, path)
        if not mapping:
            return {}
        where = _join(path, key)
        result: ResourceList = {}
        for name, value in mapping.items():
            if not isinstance(name, str):
                self.wrong_type(where, name, "a mapping with string keys")
                continue
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                self.wrong_type(f"{where}.{name}", value, "a quantity")
                continue
            try:
                result[name] = resource_amount(name, parse_quantity(value))
            except ValueError as exc:
                self.invalid(f"{where}.{name}", value, str(exc))
        return result

    def one_of(
        self, d: _Dict, key: str, path: str, supported: tuple[str, ...], default: str
    ) -> str:
        value = self.text(d, key, path) or default
        if value not in supported:
            self.unsupported(_join(path, key), value, supported)
        return value


# ---- metadata and selectors -----------------------------------------------------------------


def _metadata(r: _Reader, obj: _Dict, base: str, *, default_namespace: str) -> ObjectMeta:
    path = _join(base, "metadata")
    d = r.map_(obj, "metadata", base) or {}
    name = r.text(d, "name", path)
    if d.get("name") in (None, ""):
        r.required(_join(path, "name"))
    namespace = r.text(d, "namespace", path) or default_namespace
    owners = tuple(
        OwnerReference(
            api_version=r.text(o, "apiVersion", p),
            kind=r.text(o, "kind", p),
            name=r.text(o, "name", p),
            uid=r.text(o, "uid", p),
            controller=r.flag(o, "controller", p),
        )
        for o, p in r.items(d, "ownerReferences", path)
    )
    return ObjectMeta(
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
        for message in label_key_errors(key):
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
    weight = r.integer(d, "weight", path)
    if (raw is None or _is_int(raw)) and not 1 <= weight <= 100:
        r.invalid(_join(path, "weight"), weight, "must be in the range 1-100")
    return weight


# ---- pods ---------------------------------------------------------------------------------------


def _container(r: _Reader, d: _Dict, path: str) -> Container:
    res_path = _join(path, "resources")
    res = r.map_(d, "resources", path) or {}
    requests = r.resources(res, "requests", res_path)
    limits = r.resources(res, "limits", res_path)
    # API server defaulting (SetDefaults_Pod): a limit without a request is also the request.
    for name, amount in limits.items():
        requests.setdefault(name, amount)
    ports = []
    for p, pp in r.items(d, "ports", path):
        raw = p.get("containerPort")
        container_port = r.integer(p, "containerPort", pp)
        if raw is None or raw == 0:
            r.required(_join(pp, "containerPort"))
        elif _is_int(raw) and not 1 <= container_port <= 65535:
            r.invalid(
                _join(pp, "containerPort"), container_port, "must be between 1 and 65535, inclusive"
            )
        host_port = r.integer(p, "hostPort", pp)
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
            r.text(rule, "action", p) for rule, p in r.items(d, "restartPolicyRules", path)
        ),
        claims=tuple(r.text(cl, "name", p) for cl, p in r.items(res, "claims", res_path)),
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
    max_skew = r.integer(d, "maxSkew", path)
    if (raw is None or _is_int(raw)) and max_skew <= 0:
        r.invalid(_join(path, "maxSkew"), max_skew, "must be greater than zero")
    topology_key = r.text(d, "topologyKey", path)
    if not topology_key:
        r.required(_join(path, "topologyKey"), "can not be empty")
    when = r.text(d, "whenUnsatisfiable", path)
    if when not in _WHEN_UNSATISFIABLE:
        r.unsupported(_join(path, "whenUnsatisfiable"), when, _WHEN_UNSATISFIABLE)
    min_domains = r.opt_integer(d, "minDomains", path)
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


def _check_kind(r: _Reader, obj: _Dict, base: str, kind: str) -> None:
    value = obj.get("kind")
    if value is not None and value != kind:
        r.unsupported(_join(base, "kind"), value, (kind,))


def _pod(r: _Reader, obj: _Dict, base: str) -> Pod:
    _check_kind(r, obj, base, "Pod")
    meta = _metadata(r, obj, base, default_namespace="default")
    if not meta.uid:
        meta = _with_uid(meta, f"{meta.namespace}/{meta.name}")
    path = _join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
    gates = tuple(r.text(g, "name", p) for g, p in r.items(d, "schedulingGates", path))
    volumes = []
    for v, p in r.items(d, "volumes", path):
        pvc = r.map_(v, "persistentVolumeClaim", p)
        claim = None if pvc is None else r.text(pvc, "claimName", _join(p, "persistentVolumeClaim"))
        volumes.append(Volume(name=r.text(v, "name", p), persistent_volume_claim=claim))
    spec = PodSpec(
        node_name=r.text(d, "nodeName", path),
        scheduler_name=r.text(d, "schedulerName", path) or DEFAULT_SCHEDULER_NAME,
        priority=r.opt_integer(d, "priority", path),
        priority_class_name=r.text(d, "priorityClassName", path),
        preemption_policy=r.one_of(
            d, "preemptionPolicy", path, _PREEMPTION_POLICIES, "PreemptLowerPriority"
        ),
        node_selector=r.text_map(d, "nodeSelector", path),
        affinity=_affinity(r, d, path),
        tolerations=tuple(_toleration(r, t, p) for t, p in r.items(d, "tolerations", path)),
        containers=tuple(_container(r, c, p) for c, p in r.items(d, "containers", path)),
        init_containers=tuple(_container(r, c, p) for c, p in r.items(d, "initContainers", path)),
        overhead=r.resources(d, "overhead", path),
        topology_spread_constraints=tuple(
            _spread_constraint(r, c, p) for c, p in r.items(d, "topologySpreadConstraints", path)
        ),
        scheduling_gates=gates,
        host_network=r.flag(d, "hostNetwork", path),
        termination_grace_period_seconds=r.opt_integer(d, "terminationGracePeriodSeconds", path),
        volumes=tuple(volumes),
        resource_claims=_codec_resource.pod_resource_claims(r, d, path),
        host_users=None if d.get("hostUsers") is None else r.flag(d, "hostUsers", path),
    )
    path = _join(base, "status")
    s = r.map_(obj, "status", base) or {}
    conditions = tuple(
        PodCondition(
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
    )
    return Pod(metadata=meta, spec=spec, status=status)


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
    )


# ---- nodes, namespaces, budgets ------------------------------------------------------------


def _node(r: _Reader, obj: _Dict, base: str) -> Node:
    _check_kind(r, obj, base, "Node")
    meta = _metadata(r, obj, base, default_namespace="")
    if not meta.uid:
        meta = _with_uid(meta, meta.name)
    path = _join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
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
    capacity = r.resources(s, "capacity", path)
    allocatable = r.resources(s, "allocatable", path)
    status = NodeStatus(
        capacity=capacity,
        # As the API server's defaulting: no allocatable means all of the capacity.
        allocatable=allocatable if allocatable else dict(capacity),
        conditions=tuple(
            NodeCondition(
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
    meta = _metadata(r, obj, base, default_namespace="")
    if not meta.uid:
        meta = _with_uid(meta, meta.name)
    return Namespace(metadata=meta)


def _int_or_percent(r: _Reader, d: _Dict, key: str, path: str) -> int | str | None:
    value = d.get(key)
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
    min_available = _int_or_percent(r, d, "minAvailable", path)
    max_unavailable = _int_or_percent(r, d, "maxUnavailable", path)
    if min_available is not None and max_unavailable is not None:
        r.issues.append(
            FieldIssue(
                path=path, kind=INVALID, detail="minAvailable and maxUnavailable cannot be both set"
            )
        )
    spath = _join(base, "status")
    s = r.map_(obj, "status", base) or {}
    disrupted: dict[str, datetime] = {}
    pods = r.map_(s, "disruptedPods", spath) or {}
    for name in pods:
        when = r.time(pods, name, _join(spath, "disruptedPods"))
        if when is not None:
            disrupted[str(name)] = when
    return PodDisruptionBudget(
        metadata=meta,
        selector=_label_selector(r, d, "selector", path),
        min_available=min_available,
        max_unavailable=max_unavailable,
        disruptions_allowed=r.integer(s, "disruptionsAllowed", spath),
        disrupted_pods=disrupted,
    )


_PARSERS: Final[dict[str, Callable[[_Reader, _Dict, str], object]]] = {
    "Namespace": _namespace,
    "Node": _node,
    "Pod": _pod,
    "PodDisruptionBudget": _pdb,
}


def _run(parse: Callable[[_Reader, _Dict, str], object], d: object, source: str | None) -> object:
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
    r = _Reader()
    obj = parse(r, d, "")
    if r.issues:
        raise ManifestError(r.issues, source=source)
    return obj


def pod_from_dict(d: Mapping[str, object], *, source: str | None = None) -> Pod:
    """Build a :class:`Pod` from a Kubernetes ``v1.Pod`` dict (``kubectl get pod -o yaml``).

    Applies the API server's defaults the scheduler relies on: namespace ``default``,
    scheduler ``default-scheduler``, requests taken from limits, port protocol ``TCP``,
    phase ``Pending``, and a deterministic uid ``"<namespace>/<name>"`` when none is given.

    Raises:
        ManifestError: listing every bad field of the object, each with its JSON path.
    """
    pod = _run(_pod, d, source)
    assert isinstance(pod, Pod)
    return pod


def node_from_dict(d: Mapping[str, object], *, source: str | None = None) -> Node:
    """Build a :class:`Node` from a ``v1.Node`` dict; an empty allocatable copies capacity.

    The uid defaults to the node's name.

    Raises:
        ManifestError: listing every bad field of the object, each with its JSON path.
    """
    node = _run(_node, d, source)
    assert isinstance(node, Node)
    return node


def namespace_from_dict(d: Mapping[str, object], *, source: str | None = None) -> Namespace:
    """Build a :class:`Namespace` from a ``v1.Namespace`` dict (uid defaults to the name).

    Raises:
        ManifestError: listing every bad field of the object, each with its JSON path.
    """
    ns = _run(_namespace, d, source)
    assert isinstance(ns, Namespace)
    return ns


def pdb_from_dict(d: Mapping[str, object], *, source: str | None = None) -> PodDisruptionBudget:
    """Build a :class:`PodDisruptionBudget` from a ``policy/v1`` dict.

    Raises:
        ManifestError: listing every bad field of the object, each with its JSON path.
    """
    pdb = _run(_pdb, d, source)
    assert isinstance(pdb, PodDisruptionBudget)
    return pdb


def _dispatch(r: _Reader, d: _Dict, base: str) -> object:
    kind = d.get("kind")
    parse = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parse is None:
        if kind is None:
            r.required(_join(base, "kind"))
        else:
            r.unsupported(_join(base, "kind"), kind, _KINDS)
        return None
    return parse(r, d, base)


def from_dict(d: Mapping[str, object], *, source: str | None = None) -> object:
    """Build the object a dict describes, by its ``kind`` (see :func:`load_manifests`).

    Raises:
        ManifestError: for a missing or unsupported ``kind`` or any bad field.
    """
    return _run(_dispatch, d, source)


# ---- loading files --------------------------------------------------------------------------


def _is_list(d: _Dict) -> bool:
    kind = d.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "items" in d


def _skipped(d: object, report: LoadReport) -> bool:
    """Whether ``d`` is an object of a kind to skip (counted in ``report``)."""
    if not isinstance(d, Mapping):
        return False
    kind = d.get("kind")
    if not isinstance(kind, str) or kind in _PARSERS:
        return False
    if report.add(kind):
        return True
    api_version = d.get("apiVersion")
    group = api_version.rpartition("/")[0] if isinstance(api_version, str) else ""
    if "." in group and not group.endswith(".k8s.io"):
        report.add_custom(kind)  # a custom resource: kube-scheduler reads none
        return True
    return False


def _objects_of(docs: list[object], source: str, report: LoadReport) -> list[object]:
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
                if _skipped(item, report):
                    continue
                r = _Reader()
                obj = _dispatch(r, item, f"items[{i}]")
                if r.issues:
                    raise ManifestError(r.issues, source=where)
                result.append(obj)
        elif not _skipped(doc, report):
            result.append(_run(_dispatch, doc, where))
    return result


def loads_manifests(
    text: str, *, source: str = "<string>", report: LoadReport | None = None
) -> list[object]:
    """Parse every object of a YAML (or JSON) stream; ``kind: List`` items are flattened.

    Errors name ``source``, with ``#<index>`` (counting from 0) when the stream holds
    several documents. Kinds the scheduler does not read are skipped as
    :func:`load_manifests` says.

    Raises:
        ManifestError: bad YAML, a repeated mapping key (with its line and column), a
            document that is not a mapping, or any bad object.
    """
    try:
        docs = list(load_all_strict(text, source))
    except YAMLError as exc:
        raise ManifestError([exc.issue], source=source) from None
    own = report is None
    report = LoadReport() if report is None else report
    result = _objects_of(docs, source, report)
    if own:
        report.log()
    return result


def _reject_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise _JSONDuplicate(key)
        result[key] = value
    return result


class _JSONDuplicate(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _load_file(path: Path, report: LoadReport) -> list[object]:
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
        return loads_manifests(text, source=source, report=report)
    try:
        doc = json.loads(text, object_pairs_hook=_reject_duplicates)
    except _JSONDuplicate as exc:
        issue = FieldIssue(path="", kind=DUPLICATE, value=exc.key, detail="mapping key repeated")
        raise ManifestError([issue], source=source) from None
    except json.JSONDecodeError as exc:
        issue = FieldIssue(
            path="",
            kind=INVALID,
            detail=f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
        )
        raise ManifestError([issue], source=source) from None
    return _objects_of([doc], source, report)


def load_manifests(
    source: str | os.PathLike[str], *, report: LoadReport | None = None
) -> list[object]:
    """Load every object from a file, a directory of manifests, or ``-`` (standard input).

    A file may hold several YAML documents, or JSON (by its ``.json`` suffix); a directory
    contributes each ``*.yaml``, ``*.yml`` and ``*.json`` directly inside it, in name order.
    ``kind: List`` (and ``PodList`` ...) items are flattened. Objects come back in order, so
    a whole ``kubectl get ... -A -o yaml`` dump loads as is.

    Objects of kinds kube-scheduler never reads (ConfigMap, Secret, Event, custom
    resources, ... see :data:`UNREAD_KINDS`) are skipped, and so are kinds it reads that
    schedframe does not model yet (:data:`NOT_MODELLED_KINDS`: PersistentVolume,
    PersistentVolumeClaim, StorageClass, CSINode, ResourceSlice, ...). Neither is silent:
    each skipped kind is counted in ``report``, or, without one, logged as one warning line
    per kind on the ``schedframe.objects`` logger. Any other unknown kind is an error.

    Raises:
        ManifestError: naming the file (and ``#<document index>``) and the field path.
    """
    own = report is None
    report = LoadReport() if report is None else report
    result = _load_source(source, report)
    if own:
        report.log()
    return result


def _load_source(source: str | os.PathLike[str], report: LoadReport) -> list[object]:
    if os.fspath(source) == "-":
        try:
            text = sys.stdin.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ManifestError(
                [FieldIssue(path="", kind=INVALID, detail=f"cannot read standard input: {exc}")],
                source="<stdin>",
            ) from None
        return loads_manifests(text, source="<stdin>", report=report)
    path = Path(source)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in _MANIFEST_SUFFIXES and p.is_file())
        result: list[object] = []
        for file in files:
            result.extend(_load_file(file, report))
        return result
    if not path.exists():
        raise ManifestError(
            [FieldIssue(path="", kind=NOT_FOUND, detail="no such file or directory")],
            source=str(path),
        )
    return _load_file(path, report)


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
        volumes.append(volume)
    _put(spec, "volumes", volumes)
    _put(spec, "resourceClaims", _codec_resource.pod_resource_claims_out(s.resource_claims))
    if s.host_users is not None:
        spec["hostUsers"] = s.host_users
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
    out = _codec_workloads.encode(obj)
    if out is not None:
        return out
    out = _codec_resource.encode(obj)
    if out is not None:
        return out
    raise TypeError(f"to_dict() cannot encode {type(obj).__name__}")


# The PriorityClass, workload and resource.k8s.io (DRA) kinds register their decoders in
# _PARSERS on import.
from schedframe.objects import _codec_resource, _codec_workloads  # noqa: E402
