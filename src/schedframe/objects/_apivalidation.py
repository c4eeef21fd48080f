"""The API server's create-time validation of the objects the scheduler reads.

Mirrors ``pkg/apis/core/validation`` (``ValidatePodCreate``, ``ValidateNode``,
``ValidateResourceRequirements``, ``ValidateObjectMeta``) and ``pkg/apis/policy/validation``
for the parts that change what the scheduler sees: names, labels, resource quantities,
containers, host ports. Each function returns :class:`~schedframe.errors.FieldIssue` values
with upstream's paths and messages; the codec runs them unless the testing kit's lenient
decoder asked it not to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Final

from schedframe.errors import DUPLICATE, INVALID, REQUIRED, UNSUPPORTED, FieldIssue
from schedframe.objects._quantity import (
    Quantity,
    is_extended_resource_name,
    is_hugepage_resource_name,
    is_native_resource,
)
from schedframe.objects.validation import is_qualified_name, label_issues

__all__: list[str] = []

_NEGATIVE: Final = "must be greater than or equal to 0"
_NOT_INTEGER: Final = "must be an integer"
# Upstream standardContainerResources (hugepages-* are added by prefix).
_CONTAINER_RESOURCES: Final = frozenset({"cpu", "memory", "ephemeral-storage"})
# Upstream standardResources: what an unprefixed resource name may be anywhere.
_STANDARD_RESOURCES: Final = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)
# Upstream integerResources: counted in whole units.
_INTEGER_RESOURCES: Final = frozenset(
    {
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)


def _invalid(path: str, value: object, detail: str) -> FieldIssue:
    return FieldIssue(path=path, kind=INVALID, value=value, detail=detail)


def _key(path: str, name: str) -> str:
    # Upstream field.Path.Key: a map key in brackets.
    return f"{path}[{name}]"


def is_overcommit_allowed(name: str) -> bool:
    """Whether requests may be below limits for ``name`` (upstream ``IsOvercommitAllowed``):
    native resources other than hugepages; extended resources must request their limit."""
    return is_native_resource(name) and not is_hugepage_resource_name(name)


def quantity_value_issues(name: str, value: Quantity, path: str) -> list[FieldIssue]:
    """Upstream ``ValidateResourceQuantityValue``: not negative; whole for integer resources
    (``pods`` and extended resources such as ``nvidia.com/gpu``)."""
    issues = []
    if value.amount < 0:
        issues.append(_invalid(path, str(value), _NEGATIVE))
    if value.amount.denominator != 1 and (
        name in _INTEGER_RESOURCES or is_extended_resource_name(name)
    ):
        if value.milli_value() % 1000 != 0:
            issues.append(_invalid(path, value, _NOT_INTEGER))
    return issues


def _resource_name_issues(name: str, path: str) -> list[FieldIssue]:
    # Upstream validateResourceName.
    issues = [_invalid(path, name, msg) for msg in is_qualified_name(name)]
    if issues:
        return issues
    standard = name in _STANDARD_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-"))
    if "/" not in name and not standard:
        issues.append(_invalid(path, name, "must be a standard resource type or fully qualified"))
    return issues


def container_resource_name_issues(name: str, path: str) -> list[FieldIssue]:
    """Upstream ``validateContainerResourceName``."""
    if name in _CONTAINER_RESOURCES:  # the common case, valid by definition
        return []
    issues = _resource_name_issues(name, path)
    if "/" not in name:
        if name not in _CONTAINER_RESOURCES and not is_hugepage_resource_name(name):
            issues.append(_invalid(path, name, "must be a standard resource for containers"))
    elif not is_native_resource(name) and not is_extended_resource_name(name):
        issues.append(_invalid(path, name, "doesn't follow extended resource name standard"))
    return issues


def pod_resource_name_issues(name: str, path: str) -> list[FieldIssue]:
    """Upstream ``validatePodResourceName``: cpu, memory and hugepages only."""
    issues = _resource_name_issues(name, path)
    if issues:
        return issues
    if name not in ("cpu", "memory") and not is_hugepage_resource_name(name):
        issues.append(
            FieldIssue(
                path=path,
                kind=UNSUPPORTED,
                value=name,
                detail='supported values: "cpu", "hugepages-", "memory"',
            )
        )
    return issues


def pod_level_resources_issues(
    requests: Mapping[str, Quantity], limits: Mapping[str, Quantity], path: str
) -> list[FieldIssue]:
    """Upstream ``validatePodResources`` on ``spec.resources`` (after defaulting)."""
    return resource_requirements_issues(requests, limits, path, names=pod_resource_name_issues)


def resource_requirements_issues(
    requests: Mapping[str, Quantity],
    limits: Mapping[str, Quantity],
    path: str,
    *,
    names: Callable[[str, str], list[FieldIssue]] = container_resource_name_issues,
) -> list[FieldIssue]:
    """Upstream ``validateResourceRequirements`` of one container (``path`` ends in
    ``resources``); ``requests`` are after defaulting (a limit without a request is both)."""
    issues: list[FieldIssue] = []
    lim_path = f"{path}.limits"
    req_path = f"{path}.requests"
    for name, value in limits.items():
        issues.extend(names(name, _key(lim_path, name)))
        issues.extend(quantity_value_issues(name, value, _key(lim_path, name)))
    for name, value in requests.items():
        issues.extend(names(name, _key(req_path, name)))
        issues.extend(quantity_value_issues(name, value, _key(req_path, name)))
        limit = limits.get(name)
        if limit is not None:
            if value != limit and not is_overcommit_allowed(name):
                issues.append(
                    _invalid(req_path, str(value), f"must be equal to {name} limit of {limit}")
                )
            elif value > limit:
                issues.append(
                    _invalid(
                        req_path,
                        str(value),
                        f"must be less than or equal to {name} limit of {limit}",
                    )
                )
        elif not is_overcommit_allowed(name):
            issues.append(
                FieldIssue(
                    path=lim_path,
                    kind=REQUIRED,
                    detail="Limit must be set for non overcommitable resources",
                )
            )
    return issues


def node_resources_issues(amounts: Mapping[str, Quantity], path: str) -> list[FieldIssue]:
    """Upstream ``ValidateNode`` on ``status.capacity``/``status.allocatable``."""
    issues: list[FieldIssue] = []
    for name, value in amounts.items():
        issues.extend(quantity_value_issues(name, value, f"{path}.{name}"))
    return issues


def overhead_issues(amounts: Mapping[str, Quantity], path: str) -> list[FieldIssue]:
    """Upstream ``validateOverhead``: resource names and non-negative quantities."""
    issues: list[FieldIssue] = []
    for name, value in amounts.items():
        issues.extend(_resource_name_issues(name, _key(path, name)))
        issues.extend(quantity_value_issues(name, value, _key(path, name)))
    return issues


def name_issues(name: str, path: str, rule: Callable[[str], list[str]]) -> list[FieldIssue]:
    """An object (or container) name checked by ``rule``, one issue per broken rule."""
    return [_invalid(path, name, msg) for msg in rule(name)]


def container_names_issues(
    containers: Iterable[tuple[str, str]], rule: Callable[[str], list[str]]
) -> list[FieldIssue]:
    """Upstream ``validateContainers``/``validateInitContainers`` on names: required, a DNS
    label, unique across init containers and containers. ``containers`` are ``(name, path)``
    pairs, the path being the container's."""
    issues: list[FieldIssue] = []
    seen: set[str] = set()
    for name, path in containers:
        where = f"{path}.name"
        if not name:
            issues.append(FieldIssue(path=where, kind=REQUIRED))
            continue
        issues.extend(name_issues(name, where, rule))
        if name in seen:
            issues.append(FieldIssue(path=where, kind=DUPLICATE, value=name))
        seen.add(name)
    return issues


def host_port_issues(ports: Iterable[tuple[int, str, str]]) -> list[FieldIssue]:
    """Upstream ``AccumulateUniqueHostPorts``: a host port and protocol claimed once per pod.
    ``ports`` are ``(host_port, protocol, port_path)``."""
    issues: list[FieldIssue] = []
    seen: set[str] = set()
    for host_port, protocol, path in ports:
        if host_port == 0:
            continue
        claim = f"{host_port}/{protocol}"
        if claim in seen:
            issues.append(FieldIssue(path=f"{path}.hostPort", kind=DUPLICATE, value=claim))
        seen.add(claim)
    return issues


def node_selector_issues(labels: Mapping[str, str], path: str) -> list[FieldIssue]:
    """Upstream validates ``spec.nodeSelector`` as labels."""
    return label_issues(labels, path)
