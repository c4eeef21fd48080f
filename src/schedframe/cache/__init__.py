"""The scheduler's cluster cache and its per-cycle snapshots (provisional API).

:class:`Cache` keeps every node with the pods bound or assumed to it; at the start of each
scheduling cycle :meth:`Cache.update_snapshot` refreshes a :class:`Snapshot`, the read-only
view plugins get, copying only what changed. Upstream: ``pkg/scheduler/backend/cache``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from schedframe._lazy import lazy_attributes

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
    __getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)
