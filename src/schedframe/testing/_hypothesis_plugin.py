"""The ``hypothesis`` entry point: makes ``st.from_type`` work for schedframe's objects.

Hypothesis calls :func:`_hypothesis_setup_hook` when it is imported (unless
``HYPOTHESIS_NO_PLUGINS`` is set). Importing this module costs only the object classes; each
registration is a function, so :mod:`schedframe.testing.strategies` is imported the first time
``st.from_type`` needs one of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = ["REGISTERED", "_hypothesis_setup_hook"]

#: ``(module, class name, strategy function name in schedframe.testing.strategies)``.
REGISTERED: tuple[tuple[str, str, str], ...] = (
    ("schedframe.objects", "Quantity", "quantities"),
    ("schedframe.objects", "Pod", "pods"),
    ("schedframe.objects", "Node", "nodes"),
    ("schedframe.objects", "Namespace", "namespaces"),
    ("schedframe.objects", "PodDisruptionBudget", "pod_disruption_budgets"),
    ("schedframe.objects", "Taint", "taints"),
    ("schedframe.objects", "Toleration", "tolerations"),
    ("schedframe.objects", "LabelSelector", "label_selectors"),
    ("schedframe.objects", "NodeSelector", "node_selectors"),
    ("schedframe.objects", "NodeSelectorTerm", "node_selector_terms"),
    ("schedframe.objects", "NodeSelectorRequirement", "node_selector_requirements"),
    ("schedframe.objects", "NodeAffinity", "node_affinities"),
    ("schedframe.objects", "PodAffinityTerm", "pod_affinity_terms"),
    ("schedframe.objects", "Affinity", "affinities"),
    ("schedframe.objects", "TopologySpreadConstraint", "topology_spread_constraints"),
    ("schedframe.objects", "Container", "containers"),
    ("schedframe.objects", "Volume", "volumes"),
    ("schedframe.testing._cluster", "Cluster", "clusters"),
    ("schedframe.config", "KubeSchedulerConfiguration", "configs"),
)


def _lazy(function: str) -> Callable[[type], SearchStrategy[object]]:
    def resolve(_: type) -> SearchStrategy[object]:
        from schedframe.testing import strategies

        factory: Callable[[], SearchStrategy[object]] = getattr(strategies, function)
        return factory()

    return resolve


def _hypothesis_setup_hook() -> None:
    """Register a strategy for each class in :data:`REGISTERED` (``st.register_type_strategy``)."""
    import importlib

    from hypothesis import strategies as st

    for module_name, class_name, function in REGISTERED:
        cls = getattr(importlib.import_module(module_name), class_name)
        st.register_type_strategy(cls, _lazy(function))
