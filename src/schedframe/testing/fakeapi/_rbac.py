"""RBAC for the fake API server: allow a request only if a bound (Cluster)Role rule does.

Request attributes follow kube-apiserver's ``RequestInfo``: ``GET`` on a collection is
``list`` (``watch`` with ``watch=true``), on a name ``get``; ``POST`` is ``create``; ``PUT``
``update``; ``PATCH`` ``patch``; ``DELETE`` ``delete`` (``deletecollection`` without a name).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

__all__ = ["Authorizer", "RequestAttributes"]


@attrs.frozen(kw_only=True)
class RequestAttributes:
    """What RBAC sees of one request."""

    verb: str
    api_group: str
    resource: str
    subresource: str = ""
    name: str = ""
    namespace: str = ""


@attrs.frozen
class _Rule:
    verbs: frozenset[str]
    api_groups: frozenset[str]
    resources: frozenset[str]
    resource_names: frozenset[str]
    namespace: str | None  # None: cluster-wide (ClusterRoleBinding)

    def allows(self, a: RequestAttributes) -> bool:
        if self.namespace is not None and a.namespace != self.namespace:
            return False
        if not ({"*", a.verb} & self.verbs):
            return False
        if not ({"*", a.api_group} & self.api_groups):
            return False
        full = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
        if not ({"*", full} & self.resources) and f"*/{a.subresource}" not in self.resources:
            return False
        return not self.resource_names or a.name in self.resource_names


def _strings(value: Any) -> frozenset[str]:
    if not isinstance(value, list):
        return frozenset()
    return frozenset(str(v) for v in value)


class Authorizer:
    """The rules granted to one user (a service account's rules, from RBAC manifests)."""

    def __init__(self, user: str, rules: Iterable[_Rule]) -> None:
        self.user = user
        self.rules = tuple(rules)

    @classmethod
    def from_manifests(
        cls, objects: Iterable[Mapping[str, Any]], *, namespace: str, service_account: str
    ) -> Authorizer:
        """Collect the rules bound to service account ``namespace/service_account``.

        ``objects`` are RBAC manifests as dicts (ClusterRole, Role, ClusterRoleBinding,
        RoleBinding; other kinds are ignored).
        """
        objects = list(objects)
        cluster_roles = {
            o["metadata"]["name"]: o for o in objects if o.get("kind") == "ClusterRole"
        }
        roles = {
            (o["metadata"].get("namespace", "default"), o["metadata"]["name"]): o
            for o in objects
            if o.get("kind") == "Role"
        }
        rules: list[_Rule] = []

        def bound(binding: Mapping[str, Any]) -> bool:
            for subject in binding.get("subjects") or []:
                if (
                    subject.get("kind") == "ServiceAccount"
                    and subject.get("name") == service_account
                    and subject.get("namespace", binding["metadata"].get("namespace")) == namespace
                ):
                    return True
            return False

        def add(role: Mapping[str, Any] | None, scope: str | None) -> None:
            if role is None:
                return
            for rule in role.get("rules") or []:
                rules.append(
                    _Rule(
                        verbs=_strings(rule.get("verbs")),
                        api_groups=_strings(rule.get("apiGroups")),
                        resources=_strings(rule.get("resources")),
                        resource_names=_strings(rule.get("resourceNames")),
                        namespace=scope,
                    )
                )

        for o in objects:
            if o.get("kind") == "ClusterRoleBinding" and bound(o):
                ref = o.get("roleRef") or {}
                add(cluster_roles.get(ref.get("name", "")), None)
            elif o.get("kind") == "RoleBinding" and bound(o):
                ref = o.get("roleRef") or {}
                scope = o["metadata"].get("namespace", "default")
                if ref.get("kind") == "ClusterRole":
                    add(cluster_roles.get(ref.get("name", "")), scope)
                else:
                    add(roles.get((scope, ref.get("name", ""))), scope)
        return cls(f"system:serviceaccount:{namespace}:{service_account}", rules)

    def allows(self, attributes: RequestAttributes) -> bool:
        """Whether any rule allows the request."""
        return any(rule.allows(attributes) for rule in self.rules)

    def denial(self, a: RequestAttributes, qualified_resource: str) -> str:
        """kube-apiserver's 403 message for a denied request."""
        what = f'{qualified_resource} "{a.name}"' if a.name else qualified_resource
        full = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
        where = f'in the namespace "{a.namespace}"' if a.namespace else "at the cluster scope"
        return (
            f'{what} is forbidden: User "{self.user}" cannot {a.verb} resource "{full}" '
            f'in API group "{a.api_group}" {where}'
        )
