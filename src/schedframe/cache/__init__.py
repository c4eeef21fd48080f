"""The scheduler's cluster cache and its per-cycle snapshots (provisional API)."""

from __future__ import annotations

from schedframe.cache._snapshot import Snapshot

__all__ = ["Snapshot"]
