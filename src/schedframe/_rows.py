"""Picking many items by position at once, for the per-pod loops over node rows."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

__all__ = ["pick", "picker"]

_T = TypeVar("_T")


def picker(rows: Sequence[Any]) -> Callable[[Sequence[_T] | Mapping[Any, _T]], list[_T]]:
    """``seq -> [seq[r] for r in rows]``, with ``operator.itemgetter`` doing the loop; for
    picking the same rows out of several sequences."""
    if not rows:
        return lambda seq: []
    if len(rows) == 1:
        only = rows[0]
        return lambda seq: [seq[only]]
    get = operator.itemgetter(*rows)
    return lambda seq: list(get(seq))


def pick(seq: Sequence[_T] | Mapping[Any, _T], rows: Sequence[Any]) -> list[_T]:
    """``[seq[r] for r in rows]`` (``seq`` may be a mapping keyed by row)."""
    return picker(rows)(seq)
