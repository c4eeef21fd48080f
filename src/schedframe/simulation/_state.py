"""The cluster as a backend holds it at the end of a run, kept on results for reports."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from schedframe.backends import MemoryBackend, WatchEvent

__all__ = ["final_objects"]


def final_objects(backend: MemoryBackend) -> tuple[object, ...]:
    """Every object ``backend`` holds now, as a new watcher would list them (kinds in replay
    order, pods last; custom kinds included; Succeeded and Failed pods left out, as the
    scheduler's informer leaves them out)."""
    seen: list[object] = []

    def collect(event: WatchEvent) -> None:
        seen.append(event.obj)

    # Subscribing replays the current objects as ADDED; nothing changes after a run, so the
    # replay is all this subscription ever receives.
    backend.subscribe(collect).cancel()
    return tuple(seen)
