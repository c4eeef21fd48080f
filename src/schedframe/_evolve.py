"""``attrs.evolve`` without its per-call class inspection, for the copies made per pod.

``evolve`` looks up the class's fields and runs ``__init__`` on every call. For a class whose
fields are all init arguments under their own names, with no converter, validator or init
hooks (nor a cached hash), ``__init__`` only stores the values it gets, so the copy can be made by storing them
directly. Which path a class takes is decided once per class; any other class goes through
``attrs.evolve`` itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import attrs

__all__ = ["evolve"]

_T = TypeVar("_T")

#: class -> (its field names, a function copying an instance with changes) when it takes
#: the direct path, ``None`` when it does not.
_PLAIN: dict[type, tuple[frozenset[str], Callable[[Any, dict[str, Any]], Any]] | None] = {}


def _plain_fields(cls: type) -> frozenset[str] | None:
    fields = attrs.fields(cast("Any", cls))
    if hasattr(cls, "__attrs_pre_init__") or hasattr(cls, "__attrs_post_init__"):
        return None
    if "_attrs_cached_hash" in getattr(cls, "__slots__", ()):
        return None  # cache_hash: __init__ also clears the cached hash
    for field in fields:
        if not field.init or field.alias != field.name or not field.name.isidentifier():
            return None
        if field.converter is not None or field.validator is not None:
            return None
    return frozenset(field.name for field in fields)


def _copier(cls: type, names: frozenset[str]) -> Callable[[Any, dict[str, Any]], Any]:
    # One statement per field, as attrs writes its __init__: attribute loads instead of a
    # getattr loop; the changed fields are written again after the copy.
    lines = ["def copy(obj, changes):", "    new = new_(cls)"]
    lines += [f"    set_(new, {name!r}, obj.{name})" for name in sorted(names)]
    lines += ["    for name, value in changes.items():", "        set_(new, name, value)"]
    lines += ["    return new"]
    namespace: dict[str, Any] = {"new_": object.__new__, "set_": object.__setattr__, "cls": cls}
    exec("\n".join(lines), namespace)  # noqa: S102 - field names checked to be identifiers
    copy: Callable[[Any, dict[str, Any]], Any] = namespace["copy"]
    return copy


def evolve(obj: _T, **changes: Any) -> _T:
    """What ``attrs.evolve(obj, **changes)`` returns (unknown names raise ``TypeError``)."""
    cls = type(obj)
    try:
        plain = _PLAIN[cls]
    except KeyError:
        names = _plain_fields(cls)
        plain = _PLAIN[cls] = None if names is None else (names, _copier(cls, names))
    if plain is None:
        return attrs.evolve(cast("Any", obj), **changes)  # type: ignore[no-any-return]
    names, copy = plain
    unknown = changes.keys() - names
    if unknown:
        raise TypeError(f"{cls.__name__} has no field(s) {', '.join(sorted(unknown))}")
    return copy(obj, changes)  # type: ignore[no-any-return]
