"""Cluster backends: where the scheduler reads objects from and writes bindings to.

:class:`MemoryBackend` is the embedded default, an in-process API server with the semantics
the scheduler relies on (resourceVersions, watches, ``pods/binding`` conflicts, status
patches, deletions, events). Any object satisfying :class:`Backend` (:class:`Lister` plus
:class:`Binder`) can take its place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from schedframe._lazy import lazy_attributes

if TYPE_CHECKING:
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
    ResourceClaimWriter,
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
    "ResourceClaimWriter",
    "Subscription",
    "WatchEvent",
    "admit_priority",
    "canonical_state",
    "default_priority_class",
    "validate_priority_class",
]

# The in-memory backend, its fork and its admission are resolved on first use: a program that
# talks to a cluster (``schedframe run``) never loads them.
_WHERE: Final = {
    "admit_priority": "_admission",
    "default_priority_class": "_admission",
    "validate_priority_class": "_admission",
    "BackendFork": "_fork",
    "canonical_state": "_fork",
    "OPERATIONS": "_memory",
    "STORED_KINDS": "_memory",
    "Event": "_memory",
    "MemoryBackend": "_memory",
}

# Hidden from type checkers, which would otherwise accept any name as an attribute.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)
