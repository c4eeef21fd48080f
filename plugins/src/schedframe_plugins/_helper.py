"""Helpers shared by the in-tree plugins (upstream ``plugins/helper``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from schedframe.framework import NodeScoreList

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def default_normalize_score(max_priority: int, reverse: bool, scores: NodeScoreList) -> None:
    """Scale scores so the highest becomes ``max_priority``; ``reverse`` flips them.

    Mirrors upstream ``helper.DefaultNormalizeScore``: integer arithmetic truncating toward
    zero; when every score is 0 they stay 0, or all become ``max_priority`` when reversed.
    """
    values = scores.scores
    highest = max(values, default=0)
    if highest == 0:
        if reverse:
            values[:] = [max_priority] * len(values)
        return
    if reverse:
        values[:] = [max_priority - max_priority * v // highest for v in values]
    else:
        values[:] = [max_priority * v // highest for v in values]


def default_normalize_array(
    max_priority: int, reverse: bool, scores: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """:func:`default_normalize_score` over a NumPy array of scores (a new array): the same
    integer arithmetic, element for element."""
    import numpy as np

    if not len(scores):
        return scores.copy()
    highest = int(scores.max())
    if highest == 0:
        return np.full(len(scores), max_priority if reverse else 0, dtype=np.int64)
    scaled = max_priority * scores // highest
    return max_priority - scaled if reverse else scaled
