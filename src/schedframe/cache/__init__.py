"""The scheduler's cluster cache and its per-cycle snapshots (provisional API).

:class:`Cache` keeps every node with the pods bound or assumed to it; at the start of each
scheduling cycle :meth:`Cache.update_snapshot` refreshes a :class:`Snapshot`, the read-only
view plugins get, copying only what changed. Upstream: ``pkg/scheduler/backend/cache``.
"""

from __future__ import annotations

from schedframe.cache._cache import Cache, CacheDump
from schedframe.cache._errors import CacheError
from schedframe.cache._node_tree import get_zone_key
from schedframe.cache._snapshot import Snapshot

__all__ = ["Cache", "CacheDump", "CacheError", "Snapshot", "get_zone_key"]
