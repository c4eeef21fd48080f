"""Node affinity matching as kube-scheduler does it (``component-helpers/.../nodeaffinity``).

:class:`RequiredNodeAffinity` is upstream ``GetRequiredNodeAffinity``: the pod's
``nodeSelector`` AND its required node affinity. :class:`PreferredSchedulingTerms` sums the
weights of the preferred terms a node matches. Both are built once per pod.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from schedframe.objects import Node, NodeSelector, NodeSelectorTerm, Pod, PreferredSchedulingTerm
from schedframe_plugins.nodeaffinity._validation import (
    aggregate_message,
    preferred_terms_issues,
    term_issues,
)

__all__ = ["PreferredSchedulingTerms", "RequiredNodeAffinity", "required_node_selector"]


def required_node_selector(pod: Pod) -> NodeSelector | None:
    """``spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution``, if set."""
    affinity = pod.spec.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    return affinity.node_affinity.required


@functools.lru_cache(maxsize=4096)
def parsable_terms(selector: NodeSelector) -> NodeSelector:
    """``selector`` without the terms upstream would fail to parse.

    Upstream matches required affinity with a lazy-error selector: a term that does not parse
    (an invalid key or value, a bad operator...) never matches, the other terms still do.
    Cached, since one pod's selector is checked on every node and by several plugins.
    """
    terms = selector.node_selector_terms
    kept = tuple(t for t in terms if not t.is_empty and not term_issues(t, ""))
    if len(kept) == len(terms):
        return selector
    return NodeSelector(node_selector_terms=kept)


class RequiredNodeAffinity:
    """The pod's hard node constraints: ``nodeSelector`` and required node affinity.

    Upstream ``nodeaffinity.RequiredNodeAffinity``. A term that does not parse never matches
    (upstream's lazy-error selector ignores it), so matching never fails.
    """

    __slots__ = ("_label_selector", "_node_selector")

    def __init__(self, pod: Pod) -> None:
        node_selector = pod.spec.node_selector
        self._label_selector: tuple[tuple[str, str], ...] | None = (
            tuple(node_selector.items()) if node_selector else None
        )
        required = required_node_selector(pod)
        self._node_selector = parsable_terms(required) if required is not None else None

    @property
    def matches_every_node(self) -> bool:
        """True when the pod has neither a node selector nor required node affinity."""
        return self._label_selector is None and self._node_selector is None

    def matches(self, node: Node) -> bool:
        """Whether ``node`` satisfies both the node selector and the required affinity."""
        labels = node.metadata.labels
        if self._label_selector is not None:
            for key, value in self._label_selector:
                if labels.get(key) != value:
                    return False
        if self._node_selector is not None:
            return self._node_selector.matches(node.metadata.name, labels)
        return True


class PreferredSchedulingTerms:
    """Weighted preferred terms, parsed once (upstream ``nodeaffinity.PreferredSchedulingTerms``).

    Terms of weight 0 and empty terms are dropped, as upstream does.
    """

    __slots__ = ("_terms",)

    def __init__(self, terms: Sequence[PreferredSchedulingTerm], *, path: str = "") -> None:
        """Parse ``terms``; raises ``ValueError`` with upstream's message if one does not parse."""
        issues = preferred_terms_issues(terms, path)
        if issues:
            raise ValueError(aggregate_message(issues))
        self._terms: tuple[tuple[NodeSelectorTerm, int], ...] = tuple(
            (t.preference, t.weight) for t in terms if t.weight != 0 and not t.preference.is_empty
        )

    def score(self, node: Node) -> int:
        """The sum of the weights of the terms ``node`` matches."""
        name = node.metadata.name
        labels = node.metadata.labels
        total = 0
        for term, weight in self._terms:
            if term.matches(name, labels):
                total += weight
        return total
