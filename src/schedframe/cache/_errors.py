"""The error the cache raises (upstream returns these as ``error`` values)."""

from __future__ import annotations

from schedframe.errors import SchedframeError

__all__ = ["CacheError"]


class CacheError(SchedframeError):
    """A cache operation that does not fit the cache's state machine, with upstream's message.

    For example assuming a pod twice (``pod <uid>(<ns>/<name>) is in the cache, so can't be
    assumed``) or removing a node the cache never saw (``node n is not found``).
    """
