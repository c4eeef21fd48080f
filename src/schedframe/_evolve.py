"""``attrs.evolve`` without its per-call class inspection, for the copies made per pod.

``evolve`` looks up the class's fields and runs ``__init__`` on every call. For a class whose
fields are all init arguments under their own names, with no converter, validator or init
hooks (nor a cached hash), ``__init__`` only stores the values it gets, so the copy can be made by storing them
directly. Which path a class takes is decided once per class; any other class goes through
``attrs.evolve`` itself.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

import attrs

__all__ = ["evolve"]

_T = TypeVar("_T")

#: class -> its field names when it takes the direct path, ``None`` when it does not.
_PLAIN: dict[type, frozenset[str] | None] = {}


def _plain_fields(cls: type) -> frozenset[str] | None:
    fields = attrs.fields(cast("Any", cls))
    if hasattr(cls, "__attrs_pre_init__") or hasattr(cls, "__attrs_post_init__"):
        return None
    if "_attrs_cached_hash" in getattr(cls, "__slots__", ()):
        return None  # cache_hash: __init__ also clears the cached hash
    for field in fields:
        if not field.init or field.alias != field.name:
            return None
        if field.converter is not None or field.validator is not None:
            return None
    return frozenset(field.name for field in fields)


def evolve(obj: _T, **changes: Any) -> _T:
    """What ``attrs.evolve(obj, **changes)`` returns (unknown names raise ``TypeError``)."""
    cls = type(obj)
    try:
        names = _PLAIN[cls]
    except KeyError:
        names = _PLAIN[cls] = _plain_fields(cls)
    if names is None:
        return attrs.evolve(cast("Any", obj), **changes)  # type: ignore[no-any-return]
    unknown = changes.keys() - names
    if unknown:
        raise TypeError(f"{cls.__name__} has no field(s) {', '.join(sorted(unknown))}")
    new = object.__new__(cls)
    set_field = object.__setattr__
    for name in names:
        set_field(new, name, changes[name] if name in changes else getattr(obj, name))
    return new
