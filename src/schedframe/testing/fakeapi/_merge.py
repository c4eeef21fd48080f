"""JSON merge patch (RFC 7386) and strategic merge patch, for the fake API server.

Strategic merge follows ``k8s.io/apimachinery/pkg/util/strategicpatch`` for what the
scheduler and its tests send: maps merge recursively and ``null`` deletes a key; lists with a
``patchMergeKey`` (pod ``status.conditions`` by ``type``, containers by ``name`` ...) merge
element by element, other lists are replaced; the directives ``$patch: replace|delete``,
``$setElementOrder/<list>``, ``$deleteFromPrimitiveList/<list>`` and ``$retainKeys`` are
honoured. Merge keys come from the Kubernetes API types (``patchMergeKey`` struct tags).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["PatchError", "json_merge_patch", "strategic_merge_patch"]


class PatchError(ValueError):
    """A patch document that cannot be applied (HTTP 422/400)."""


_ANY: Final = "*"

#: (resource, path of the list with list indices as "*") -> merge key; primitive lists
#: with merge strategy (set semantics) map to "".
MERGE_KEYS: Final[dict[str, dict[tuple[str, ...], str]]] = {
    "pods": {
        ("metadata", "ownerReferences"): "uid",
        ("metadata", "finalizers"): "",
        ("spec", "containers"): "name",
        ("spec", "initContainers"): "name",
        ("spec", "ephemeralContainers"): "name",
        ("spec", "containers", _ANY, "ports"): "containerPort",
        ("spec", "containers", _ANY, "env"): "name",
        ("spec", "containers", _ANY, "volumeMounts"): "mountPath",
        ("spec", "initContainers", _ANY, "ports"): "containerPort",
        ("spec", "initContainers", _ANY, "env"): "name",
        ("spec", "initContainers", _ANY, "volumeMounts"): "mountPath",
        ("spec", "volumes"): "name",
        ("spec", "imagePullSecrets"): "name",
        ("spec", "schedulingGates"): "name",
        ("spec", "resourceClaims"): "name",
        ("status", "conditions"): "type",
        ("status", "podIPs"): "ip",
        ("status", "hostIPs"): "ip",
        ("status", "resourceClaimStatuses"): "name",
    },
    "nodes": {
        ("metadata", "ownerReferences"): "uid",
        ("metadata", "finalizers"): "",
        ("status", "conditions"): "type",
        ("status", "addresses"): "type",
    },
}
_DEFAULT_KEYS: Final[dict[tuple[str, ...], str]] = {
    ("metadata", "ownerReferences"): "uid",
    ("metadata", "finalizers"): "",
}


def json_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: maps merge recursively, ``null`` removes, anything else replaces."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = json_merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(resource: str, target: Mapping[str, Any], patch: Any) -> dict[str, Any]:
    """Apply a strategic merge patch to ``target`` (a ``resource`` object); returns a copy.

    Raises:
        PatchError: the patch is not a JSON object, or a directive is malformed.
    """
    if not isinstance(patch, Mapping):
        raise PatchError("the patch must be a JSON object")
    keys = MERGE_KEYS.get(resource, _DEFAULT_KEYS)
    result = _merge_map(dict(copy.deepcopy(target)), patch, (), keys)
    return result


def _key_for(path: tuple[str, ...], keys: Mapping[tuple[str, ...], str]) -> str | None:
    return keys.get(path)


def _merge_map(
    target: dict[str, Any],
    patch: Mapping[str, Any],
    path: tuple[str, ...],
    keys: Mapping[tuple[str, ...], str],
) -> dict[str, Any]:
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return {}
    if directive is not None:
        raise PatchError(f"Unknown patch type: {directive}")
    retain = patch.get("$retainKeys")
    orders: dict[str, list[Any]] = {}
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$setElementOrder/"):
            if not isinstance(value, list):
                raise PatchError(f"{key} must be a list")
            orders[key.split("/", 1)[1]] = value
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            if not isinstance(value, list):
                raise PatchError(f"{key} must be a list")
            current = target.get(field)
            if isinstance(current, list):
                target[field] = [v for v in current if v not in value]
            continue
        if value is None:
            target.pop(key, None)
            continue
        sub = (*path, key)
        if isinstance(value, Mapping):
            existing = target.get(key)
            target[key] = _merge_map(
                dict(existing) if isinstance(existing, Mapping) else {}, value, sub, keys
            )
        elif isinstance(value, list):
            merge_key = _key_for(sub, keys)
            existing_list = target.get(key)
            if merge_key is None or not isinstance(existing_list, list):
                target[key] = _strip_directives(value)
            elif merge_key == "":
                merged = list(existing_list)
                for item in value:
                    if item not in merged:
                        merged.append(item)
                target[key] = merged
            else:
                target[key] = _merge_list(existing_list, value, merge_key, sub, keys)
        else:
            target[key] = copy.deepcopy(value)
    for field, order in orders.items():
        current = target.get(field)
        if isinstance(current, list):
            target[field] = _apply_order(current, order, _key_for((*path, field), keys))
    if isinstance(retain, list):
        for key in list(target):
            if key not in retain:
                del target[key]
    return target


def _strip_directives(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            k: _strip_directives(v)
            for k, v in value.items()
            if not (isinstance(k, str) and k.startswith("$"))
        }
    if isinstance(value, list):
        return [_strip_directives(v) for v in value]
    return value


def _merge_list(
    existing: list[Any],
    patch: list[Any],
    merge_key: str,
    path: tuple[str, ...],
    keys: Mapping[tuple[str, ...], str],
) -> list[Any]:
    result = [copy.deepcopy(item) for item in existing]
    item_path = (*path, _ANY)
    for item in patch:
        if not isinstance(item, Mapping):
            raise PatchError(f"list items at {'.'.join(path)} must be objects")
        if item.get("$patch") == "replace":
            return [_strip_directives(i) for i in patch if i.get("$patch") != "replace"]
        if merge_key not in item:
            raise PatchError(f"map: {dict(item)} does not contain declared merge key: {merge_key}")
        value = item[merge_key]
        index = next(
            (
                i
                for i, cur in enumerate(result)
                if isinstance(cur, Mapping) and cur.get(merge_key) == value
            ),
            None,
        )
        if item.get("$patch") == "delete":
            if index is not None:
                del result[index]
            continue
        if index is None:
            result.append(_strip_directives(item))
        else:
            result[index] = _merge_map(dict(result[index]), item, item_path, keys)
    return result


def _apply_order(current: list[Any], order: list[Any], merge_key: str | None) -> list[Any]:
    """``$setElementOrder``: items named in ``order`` first, in that order; others after."""
    if not merge_key:
        ranked = {json_key(v): i for i, v in enumerate(order)}
        return sorted(current, key=lambda v: ranked.get(json_key(v), len(ranked)))
    ranks = {
        json_key(item.get(merge_key)): i
        for i, item in enumerate(order)
        if isinstance(item, Mapping)
    }

    def rank(item: Any) -> int:
        if isinstance(item, Mapping):
            return ranks.get(json_key(item.get(merge_key)), len(ranks))
        return len(ranks)

    return sorted(current, key=rank)


def json_key(value: Any) -> str:
    """A hashable rendering of a JSON value."""
    return repr(value)
