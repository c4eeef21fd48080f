"""DefaultPreemption: the PostFilter plugin that preempts lower-priority pods.

Upstream: ``pkg/scheduler/framework/plugins/defaultpreemption``. The machinery lives in the
reusable library :mod:`schedframe.preemption`.
"""

from __future__ import annotations

from schedframe_plugins.defaultpreemption.default_preemption import (
    MSG_NO_VICTIMS,
    MSG_PREEMPTION_POLICY_NEVER,
    MSG_TERMINATING_POD_ON_NOMINATED_NODE,
    DefaultPreemption,
    DefaultPreemptionArgs,
    IsEligiblePodFunc,
    MoreImportantPodFunc,
    pod_terminating_by_preemption,
)

__all__ = [
    "MSG_NO_VICTIMS",
    "MSG_PREEMPTION_POLICY_NEVER",
    "MSG_TERMINATING_POD_ON_NOMINATED_NODE",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "IsEligiblePodFunc",
    "MoreImportantPodFunc",
    "pod_terminating_by_preemption",
]
