"""Custom kinds: objects schedframe does not model, stored and listed as plain data.

Out-of-tree plugins read kinds the scheduler core knows nothing of (a PodGroup, an
ElasticQuota). Upstream they reach them through a dynamic or generated informer; here a kind is
*declared* once, with :func:`declare_custom_kind` or by loading its CustomResourceDefinition,
and from then on manifests of that kind decode to :class:`CustomObject` (metadata checked as
the API server checks it, the rest kept as given: schedframe does not validate a custom
resource against the CRD's OpenAPI schema), the in-memory backend stores them, and plugins
list them through ``Handle.lister(kind)``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from types import MappingProxyType

import attrs

from schedframe.objects._meta import ObjectMeta

__all__ = [
    "CustomKind",
    "CustomObject",
    "custom_kind",
    "custom_kinds",
    "declare_custom_kind",
]

_lock = threading.Lock()
_DECLARED: dict[str, CustomKind] = {}


@attrs.frozen(kw_only=True)
class CustomKind:
    """A declared kind: ``scheduling.x-k8s.io/v1alpha1`` ``PodGroup``, plural ``podgroups``.

    Attributes:
        group: the API group (``scheduling.x-k8s.io``).
        version: the served version (``v1alpha1``).
        kind: the kind (``PodGroup``), unique among declared and modelled kinds.
        plural: the resource name in URLs (``podgroups``).
        namespaced: False for a cluster-scoped kind.
    """

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        """``group/version`` (``version`` alone for the core group)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def resource(self) -> str:
        """The qualified resource name the API server prints (``podgroups.scheduling.x-k8s.io``)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _freeze(value: object) -> object:
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: object) -> object:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


@attrs.frozen(kw_only=True)
class CustomObject:
    """One object of a declared custom kind (upstream ``unstructured.Unstructured``).

    Attributes:
        api_version: ``group/version`` as written in the manifest.
        kind: the declared kind.
        metadata: the object's metadata, decoded as for every other kind.
        body: every other top-level field (``spec``, ``status``, ...), read-only; lists
            become tuples and mappings read-only mappings. Left out of the hash (equal
            objects still hash alike).
    """

    api_version: str
    kind: str
    metadata: ObjectMeta
    body: Mapping[str, object] = attrs.field(factory=dict, converter=_freeze, hash=False)

    @property
    def spec(self) -> Mapping[str, object]:
        """``body["spec"]``, or an empty mapping."""
        spec = self.body.get("spec")
        return spec if isinstance(spec, Mapping) else MappingProxyType({})

    @property
    def status(self) -> Mapping[str, object]:
        """``body["status"]``, or an empty mapping."""
        status = self.body.get("status")
        return status if isinstance(status, Mapping) else MappingProxyType({})

    def with_status(self, status: Mapping[str, object]) -> CustomObject:
        """A copy with ``status`` replaced (what a controller's status update writes)."""
        return attrs.evolve(self, body={**self.body, "status": status})

    def to_dict(self) -> dict[str, object]:
        """The body as plain, mutable JSON data (without apiVersion, kind and metadata)."""
        out = _thaw(self.body)
        assert isinstance(out, dict)
        return out


def declare_custom_kind(
    api_version: str, kind: str, *, plural: str | None = None, namespaced: bool = True
) -> CustomKind:
    """Declare a custom kind so manifests of it load and backends store it.

    ``plural`` defaults to the lower-cased kind plus ``s`` (as ``kubectl`` guesses). Declaring
    the same kind again with the same values is harmless.

    Raises:
        ValueError: for a kind the core models, or a kind already declared differently.
    """
    from schedframe.objects._codec import _PARSERS  # the kinds the core decodes itself

    group, _, version = api_version.rpartition("/")
    if not version or not kind or not kind[0].isupper():
        raise ValueError(
            f"cannot declare {api_version!r} {kind!r}: want apiVersion group/version and a kind"
            " starting with an upper-case letter"
        )
    declared = CustomKind(
        group=group,
        version=version,
        kind=kind,
        plural=plural or kind.lower() + "s",
        namespaced=namespaced,
    )
    with _lock:
        if kind in _PARSERS:
            raise ValueError(f"cannot declare {kind!r}: schedframe models that kind itself")
        existing = _DECLARED.get(kind)
        if existing is not None and existing != declared:
            raise ValueError(
                f"kind {kind!r} is already declared as {existing.api_version} "
                f"({existing.plural}); cannot declare it as {declared.api_version} "
                f"({declared.plural})"
            )
        _DECLARED[kind] = declared
    return declared


def custom_kind(kind: str) -> CustomKind | None:
    """The declaration of ``kind``, or ``None``."""
    return _DECLARED.get(kind)


def custom_kinds() -> tuple[CustomKind, ...]:
    """Every declared kind, by kind name."""
    return tuple(_DECLARED[k] for k in sorted(_DECLARED))


def undeclare_custom_kind(kind: str) -> None:
    """Forget a declaration (for tests that declare kinds of their own)."""
    with _lock:
        _DECLARED.pop(kind, None)
