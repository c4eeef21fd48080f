"""A keyed binary heap with update and delete by key (upstream ``pkg/scheduler/backend/heap``).

Ties under ``less`` are broken by insertion order, so pop order is deterministic.

Given a ``sort_key`` consistent with ``less`` (``less(a, b)`` exactly when
``sort_key(a) < sort_key(b)``), each entry keeps the rank ``(sort_key(item), seq)``, computed
when the item is stored, and the heap compares ranks: one tuple comparison instead of up to
two ``less`` calls. The sift steps are the same, so the heap holds and pops the items in the
same order as with ``less``.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

__all__ = ["KeyedHeap"]

T = TypeVar("T")


class _Entry(Generic[T]):
    __slots__ = ("index", "item", "rank", "seq")

    def __init__(self, item: T, seq: int, index: int, rank: Any = None) -> None:
        self.item = item
        self.seq = seq
        self.index = index
        #: ``(sort_key(item), seq)`` in a heap with a ``sort_key``, else ``None``.
        self.rank = rank


_rank_of = operator.attrgetter("rank")


def split_counter(
    counter: itertools.count[int],
) -> tuple[itertools.count[int], itertools.count[int]]:
    """Two independent counters, each going on from where ``counter`` is (which is spent)."""
    start = next(counter)
    return itertools.count(start), itertools.count(start)


class KeyedHeap(Generic[T]):
    """Items ordered by ``less``, addressable by ``key(item)``.

    An item updated in place keeps its insertion rank, so among equals it keeps its position.

    ``sort_key``, when given, must agree with ``less`` (``less(a, b)`` exactly when
    ``sort_key(a) < sort_key(b)``, over totally ordered keys) and depend only on what changes
    through :meth:`add_or_update`: the key is computed when an item is stored, so an item
    changed in place without it would keep its old place (as it would with ``less``, whose
    heap is only restored by :meth:`add_or_update` too).
    """

    __slots__ = ("_counter", "_entries", "_heap", "_key", "_less", "_sort_key")

    def __init__(
        self,
        key: Callable[[T], str],
        less: Callable[[T, T], bool],
        sort_key: Callable[[T], Any] | None = None,
    ) -> None:
        self._key = key
        self._less = less
        self._sort_key = sort_key
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

    def copy_state(self, other: KeyedHeap[T], convert: Callable[[T], T]) -> None:
        """Make this (empty) heap hold ``convert(item)`` for each item of ``other``, in the
        same layout with the same insertion ranks, so both pop in the same order from here.

        ``convert`` must keep each item's key and sort key.
        """
        heap = [_Entry(convert(e.item), e.seq, e.index, e.rank) for e in other._heap]
        self._heap = heap
        self._entries = {self._key(e.item): e for e in heap}
        self._counter, other._counter = split_counter(other._counter)

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
        sort_key = self._sort_key
        if entry is not None:
            entry.item = item
            if sort_key is not None:
                entry.rank = (sort_key(item), entry.seq)
            self._fix(entry.index)
            return
        seq = next(self._counter)
        rank = None if sort_key is None else (sort_key(item), seq)
        entry = _Entry(item, seq, len(self._heap), rank)
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
        if self._sort_key is not None:
            entries = sorted(self._heap, key=_rank_of)
        else:
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

    # With ranks, ``_up`` and ``_down`` compare them inline and slide the moving entry along
    # its path rather than swapping at each step: the same comparisons and the same final
    # layout as the ``less`` loop after them (a test holds the two to that), in fewer steps.

    def _up(self, i: int) -> None:
        h = self._heap
        if self._sort_key is not None:
            entry = h[i]
            rank = entry.rank
            while i > 0:
                parent = (i - 1) // 2
                above = h[parent]
                if not rank < above.rank:
                    break
                h[i] = above
                above.index = i
                i = parent
            h[i] = entry
            entry.index = i
            return
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
        if self._sort_key is not None:
            entry = h[i]
            rank = entry.rank
            while True:
                child = 2 * i + 1
                if child >= n:
                    break
                below = h[child]
                right = child + 1
                if right < n and h[right].rank < below.rank:
                    child = right
                    below = h[right]
                if not below.rank < rank:
                    break
                h[i] = below
                below.index = i
                i = child
            h[i] = entry
            entry.index = i
            return i > start
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
