"""Node resource plugins: NodeResourcesFit and NodeResourcesBalancedAllocation.

Port of upstream ``pkg/scheduler/framework/plugins/noderesources``.
"""

from __future__ import annotations

from schedframe_plugins.noderesources.balanced_allocation import (
    BalancedAllocation,
    NodeResourcesBalancedAllocationArgs,
)
from schedframe_plugins.noderesources.fit import (
    Fit,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ScoringStrategy,
    UtilizationShapePoint,
)
from schedframe_plugins.noderesources.resource_allocation import ResourceSpec

__all__ = [
    "BalancedAllocation",
    "Fit",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "RequestedToCapacityRatioParam",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
]
