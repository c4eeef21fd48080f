"""Cluster backends: where the scheduler reads objects from and writes bindings to.

:class:`MemoryBackend` is the embedded default, an in-process API server with the semantics
the scheduler relies on (resourceVersions, watches, ``pods/binding`` conflicts, status
patches, deletions, events). Any object satisfying :class:`Backend` (:class:`Lister` plus
:class:`Binder`) can take its place.
"""

from __future__ import annotations

from schedframe.backends._admission import (
    admit_priority,
    default_priority_class,
    validate_priority_class,
)
from schedframe.backends._fork import BackendFork, canonical_state
from schedframe.backends._memory import OPERATIONS, STORED_KINDS, Event, MemoryBackend
from schedframe.backends._protocols import (
    KINDS,
    Backend,
    Binder,
    ExtendedResourceClaimWriter,
    Lister,
    ResourceClaimStatusWriter,
    Subscription,
    WatchEvent,
)

__all__ = [
    "KINDS",
    "OPERATIONS",
    "STORED_KINDS",
    "Backend",
    "BackendFork",
    "Binder",
    "Event",
    "ExtendedResourceClaimWriter",
    "Lister",
    "MemoryBackend",
    "ResourceClaimStatusWriter",
    "Subscription",
    "WatchEvent",
    "admit_priority",
    "canonical_state",
    "default_priority_class",
    "validate_priority_class",
]
