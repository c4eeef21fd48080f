"""Decoding and encoding of custom kinds (:mod:`schedframe.objects._custom`) and of the
CustomResourceDefinitions that declare them; hooked into the codec by it on import."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from schedframe.objects import _codec as c
from schedframe.objects._custom import (
    CustomKind,
    CustomObject,
    custom_kind,
    declare_custom_kind,
)

__all__: list[str] = []

CRD_KIND: Final = "CustomResourceDefinition"
CRD_API_VERSION: Final = "apiextensions.k8s.io/v1"
_SCOPES: Final = ("Cluster", "Namespaced")
_HEAD: Final = frozenset({"apiVersion", "kind", "metadata"})


def parse_custom(r: c._Reader, obj: c._Dict, base: str, kind: CustomKind) -> CustomObject:
    """A :class:`CustomObject` of the declared ``kind``: metadata checked, body kept."""
    api_version = obj.get("apiVersion")
    if api_version != kind.api_version:
        r.unsupported(c._join(base, "apiVersion"), api_version, (kind.api_version,))
    meta = c._metadata(r, obj, base, default_namespace="default" if kind.namespaced else "")
    raw_meta = obj.get("metadata")
    if not kind.namespaced and isinstance(raw_meta, Mapping) and raw_meta.get("namespace"):
        r.forbidden(c._join(base, "metadata.namespace"), "not allowed on this type")
    if not meta.uid:
        ns = meta.namespace
        meta = c._with_uid(meta, f"{ns}/{meta.name}" if ns else meta.name)
    body = {k: v for k, v in obj.items() if k not in _HEAD}
    # Every top-level field is kept as given: none is unknown (no OpenAPI schema here).
    r.known(obj, base, tuple(str(k) for k in obj))
    return CustomObject(api_version=kind.api_version, kind=kind.kind, metadata=meta, body=body)


def declare_crd(r: c._Reader, obj: c._Dict, base: str) -> CustomKind | None:
    """Declare the kind an ``apiextensions.k8s.io/v1`` CustomResourceDefinition defines.

    Reads ``spec.group``, ``spec.names.kind`` and ``.plural``, ``spec.scope`` and the
    version marked ``storage`` (else the first ``served`` one)."""
    spec_path = c._join(base, "spec")
    spec = r.map_(obj, "spec", base)
    if spec is None:
        r.required(spec_path)
        return None
    group = r.text(spec, "group", spec_path)
    names_path = c._join(spec_path, "names")
    names = r.map_(spec, "names", spec_path) or {}
    kind = r.text(names, "kind", names_path)
    plural = r.text(names, "plural", names_path)
    scope = r.text(spec, "scope", spec_path)
    if scope not in _SCOPES:
        r.unsupported(c._join(spec_path, "scope"), scope, _SCOPES)
    for key, value, where in (("group", group, spec_path), ("kind", kind, names_path)):
        if not value:
            r.required(c._join(where, key))
    version = ""
    for entry, path in r.items(spec, "versions", spec_path):
        name = r.text(entry, "name", path)
        if r.flag(entry, "storage", path) or (not version and r.flag(entry, "served", path)):
            version = name
    if not version:
        r.required(c._join(spec_path, "versions"), "one served or storage version")
    # A CustomResourceDefinition's other fields (schema, printer columns...) are not read.
    r.known(obj, base, tuple(str(k) for k in obj))
    r.known(spec, spec_path, tuple(str(k) for k in spec))
    if isinstance(names, Mapping):
        r.known(names, names_path, tuple(str(k) for k in names))
    if r.issues:
        return None
    try:
        return declare_custom_kind(
            f"{group}/{version}", kind, plural=plural or None, namespaced=scope == "Namespaced"
        )
    except ValueError as exc:
        r.invalid(c._join(names_path, "kind"), kind, str(exc))
        return None


def encode(obj: object) -> dict[str, object] | None:
    """Kubernetes JSON for a :class:`CustomObject`, or ``None`` for another type."""
    if not isinstance(obj, CustomObject):
        return None
    return {
        "apiVersion": obj.api_version,
        "kind": obj.kind,
        "metadata": c._meta_out(obj.metadata),
        **obj.to_dict(),
    }


def is_crd(d: Mapping[str, object]) -> bool:
    """Whether ``d`` is a CustomResourceDefinition this module reads."""
    return d.get("kind") == CRD_KIND and d.get("apiVersion") == CRD_API_VERSION


def declared(kind: object) -> CustomKind | None:
    """The declaration of ``kind`` when it is a declared custom kind."""
    return custom_kind(kind) if isinstance(kind, str) else None
