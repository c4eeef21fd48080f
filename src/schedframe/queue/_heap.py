"""A keyed binary heap with update and delete by key (upstream ``pkg/scheduler/backend/heap``).

Ties under ``less`` are broken by insertion order, so pop order is deterministic.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

__all__ = ["KeyedHeap"]

T = TypeVar("T")


class _Entry(Generic[T]):
    __slots__ = ("index", "item", "seq")

    def __init__(self, item: T, seq: int, index: int) -> None:
        self.item = item
        self.seq = seq
        self.index = index


class KeyedHeap(Generic[T]):
    """Items ordered by ``less``, addressable by ``key(item)``.

    An item updated in place keeps its insertion rank, so among equals it keeps its position.
    """

    __slots__ = ("_counter", "_entries", "_heap", "_key", "_less")

    def __init__(self, key: Callable[[T], str], less: Callable[[T, T], bool]) -> None:
        self._key = key
        self._less = less
        self._heap: list[_Entry[T]] = []
        self._entries: dict[str, _Entry[T]] = {}
        self._counter = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __iter__(self) -> Iterator[T]:
        """Items in no particular order."""
        return (e.item for e in self._heap)

    def entry_getter(self) -> Callable[[str], _Entry[T] | None]:
        """``key -> entry`` (its ``item`` is the stored item), for callers looking up many
        keys in a row; valid while the heap lives."""
        return self._entries.get

    def get(self, key: str) -> T | None:
        """The item stored under ``key``."""
        entry = self._entries.get(key)
        return None if entry is None else entry.item

    def add_or_update(self, item: T) -> None:
        """Insert ``item``, or replace the item with the same key and restore heap order."""
        key = self._key(item)
        entry = self._entries.get(key)
        if entry is not None:
            entry.item = item
            self._fix(entry.index)
            return
        entry = _Entry(item, next(self._counter), len(self._heap))
        self._entries[key] = entry
        self._heap.append(entry)
        self._up(entry.index)

    def delete(self, key: str) -> T | None:
        """Remove and return the item stored under ``key`` (``None`` when absent)."""
        entry = self._entries.pop(key, None)
        if entry is None:
            return None
        i = entry.index
        last = self._heap.pop()
        if i < len(self._heap):
            self._heap[i] = last
            last.index = i
            self._fix(i)
        return entry.item

    def peek(self) -> T | None:
        """The head (the least item), without removing it."""
        return self._heap[0].item if self._heap else None

    def pop(self) -> T | None:
        """Remove and return the head."""
        if not self._heap:
            return None
        return self.delete(self._key(self._heap[0].item))

    def ordered(self) -> list[T]:
        """Every item in pop order (for introspection; the heap is left as it is)."""
        entries = sorted(self._heap, key=functools.cmp_to_key(self._cmp))
        return [e.item for e in entries]

    # -- internals ---------------------------------------------------------------------------

    def _before(self, a: _Entry[T], b: _Entry[T]) -> bool:
        if self._less(a.item, b.item):
            return True
        if self._less(b.item, a.item):
            return False
        return a.seq < b.seq

    def _cmp(self, a: _Entry[T], b: _Entry[T]) -> int:
        if a is b:
            return 0
        return -1 if self._before(a, b) else 1

    def _swap(self, i: int, j: int) -> None:
        h = self._heap
        h[i], h[j] = h[j], h[i]
        h[i].index = i
        h[j].index = j

    def _up(self, i: int) -> None:
        h = self._heap
        while i > 0:
            parent = (i - 1) // 2
            if not self._before(h[i], h[parent]):
                break
            self._swap(i, parent)
            i = parent

    def _down(self, i: int) -> bool:
        h = self._heap
        n = len(h)
        start = i
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            right = child + 1
            if right < n and self._before(h[right], h[child]):
                child = right
            if not self._before(h[child], h[i]):
                break
            self._swap(i, child)
            i = child
        return i > start

    def _fix(self, i: int) -> None:
        if not self._down(i):
            self._up(i)
