"""Helpers shared by the in-tree plugins (upstream ``plugins/helper``)."""

from __future__ import annotations

from schedframe.framework import NodeScoreList


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
