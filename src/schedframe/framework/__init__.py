"""The plugin contract: everything a schedframe plugin may import.

This module changes only with a deprecation (see the compatibility policy in the docs).
Plugin authors import from here, never from the private modules::

    from schedframe import framework as fw

    class MyFilter(fw.FilterPlugin):
        name = "MyFilter"

        def filter(self, state, pod, node_info):
            return None
"""

from __future__ import annotations

from schedframe.framework._columns import (
    EXACT_LIMIT,
    FILTER_CHECK,
    FILTER_PASS,
    FILTER_REJECT,
    LabelColumn,
    NodeColumns,
)
from schedframe.framework._cycle_state import CycleState, StateKey
from schedframe.framework._events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    QueueingHintFn,
)
from schedframe.framework._extension_points import (
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from schedframe.framework._handle import (
    Binder,
    Clock,
    EventRecorder,
    Handle,
    NodeInfoLister,
    Nominator,
    PluginsRunner,
    SharedLister,
    StorageLister,
    VolumeWriter,
    WaitingPod,
    WorkloadLister,
)
from schedframe.framework._status import Code, Status
from schedframe.framework._types import (
    MAX_NODE_SCORE,
    MAX_TOTAL_SCORE,
    MIN_NODE_SCORE,
    AffinityTerm,
    Diagnosis,
    FitError,
    HostPortInfo,
    ImageStateSummary,
    NodeInfo,
    NodeScoreList,
    NodeToStatus,
    NominatingInfo,
    NominatingMode,
    PodInfo,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
    WeightedAffinityTerm,
    normalized_image_name,
)

__all__ = [
    "EXACT_LIMIT",
    "FILTER_CHECK",
    "FILTER_PASS",
    "FILTER_REJECT",
    "MAX_NODE_SCORE",
    "MAX_TOTAL_SCORE",
    "MIN_NODE_SCORE",
    "ActionType",
    "AffinityTerm",
    "BindPlugin",
    "Binder",
    "Clock",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "Diagnosis",
    "EnqueueExtensions",
    "EventRecorder",
    "EventResource",
    "FilterPlugin",
    "FitError",
    "Handle",
    "HostPortInfo",
    "LabelColumn",
    "ImageStateSummary",
    "NodeColumns",
    "NodeInfo",
    "NodeInfoLister",
    "NodeScoreList",
    "NodeToStatus",
    "NominatingInfo",
    "NominatingMode",
    "Nominator",
    "PermitPlugin",
    "Plugin",
    "PluginsRunner",
    "PodInfo",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "QueuedPodInfo",
    "QueueingHint",
    "QueueingHintFn",
    "ReservePlugin",
    "ScoreExtensions",
    "ScorePlugin",
    "SharedLister",
    "StateKey",
    "Status",
    "StorageLister",
    "VolumeWriter",
    "WaitingPod",
    "WeightedAffinityTerm",
    "WorkloadLister",
    "normalized_image_name",
]
