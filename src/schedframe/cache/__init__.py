"""The scheduler's cluster cache and its per-cycle snapshots (provisional API).

:class:`Cache` keeps every node with the pods bound or assumed to it; at the start of each
scheduling cycle :meth:`Cache.update_snapshot` refreshes a :class:`Snapshot`, the read-only
view plugins get, copying only what changed. Upstream: ``pkg/scheduler/backend/cache``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from schedframe.cache._cache import Cache, CacheDump
    from schedframe.cache._errors import CacheError
    from schedframe.cache._node_tree import get_zone_key
    from schedframe.cache._snapshot import Snapshot

__all__ = ["Cache", "CacheDump", "CacheError", "Snapshot", "get_zone_key"]

# Resolved on first use: a Framework built without a scheduler needs only ``Snapshot``.
_WHERE: Final = {
    "Cache": "_cache",
    "CacheDump": "_cache",
    "CacheError": "_errors",
    "Snapshot": "_snapshot",
    "get_zone_key": "_node_tree",
}


# Hidden from type checkers, which would otherwise accept any name as an attribute.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        where = _WHERE.get(name)
        if where is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{where}"), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(__all__)
