"""The reusable preemption library (upstream ``pkg/scheduler/framework/preemption``).

A PostFilter plugin that preempts implements :class:`Interface` (its policy: who may
preempt, which victims on a node, how many candidates to look for) and delegates the rest to
an :class:`Evaluator`::

    from schedframe import preemption

    class MyPreemption(fw.PostFilterPlugin):
        name = "MyPreemption"

        def __init__(self, args, handle):
            self.evaluator = preemption.Evaluator(self.name, handle, self)

        def post_filter(self, state, pod, m):
            return self.evaluator.preempt(state, pod, m)

        # ... the Interface methods ...

When preemption succeeds the chosen :class:`Candidate` (node and victims) is in the cycle
state under :data:`CHOSEN_CANDIDATE_KEY`, which the scheduler reads to report it.

Victims are evicted through the Handle's binder off the scheduling cycle, as upstream with
``SchedulerAsyncPreemption`` (``Evaluator(..., async_preemption=False)`` evicts them within
PostFilter instead); while they go, :meth:`Evaluator.is_pod_running_preemption` holds for
the preemptor, for a PreEnqueue plugin to gate it. See :mod:`schedframe.preemption._evaluator`
for this and the documented divergences.
"""

from __future__ import annotations

from schedframe.preemption._evaluator import (
    DISRUPTION_TARGET,
    MSG_NO_CANDIDATE,
    MSG_NOT_HELPFUL,
    REASON_PREEMPTION_BY_SCHEDULER,
    Evaluator,
    PreemptPodFunc,
)
from schedframe.preemption._types import (
    CHOSEN_CANDIDATE_KEY,
    Candidate,
    DryRun,
    Interface,
    PreemptionError,
    ScoreFunc,
    Victims,
    VictimsInPlace,
)
from schedframe.preemption._util import (
    filter_pods_with_pdb_violation,
    get_earliest_pod_start_time,
    get_lower_priority_nominated_pods,
    get_pod_start_time,
    importance_key,
    more_important_pod,
    pick_one_node_for_preemption,
    sort_by_importance,
)

__all__ = [
    "CHOSEN_CANDIDATE_KEY",
    "DISRUPTION_TARGET",
    "MSG_NOT_HELPFUL",
    "MSG_NO_CANDIDATE",
    "REASON_PREEMPTION_BY_SCHEDULER",
    "Candidate",
    "DryRun",
    "Evaluator",
    "Interface",
    "PreemptPodFunc",
    "PreemptionError",
    "ScoreFunc",
    "VictimsInPlace",
    "Victims",
    "filter_pods_with_pdb_violation",
    "get_earliest_pod_start_time",
    "get_lower_priority_nominated_pods",
    "get_pod_start_time",
    "importance_key",
    "more_important_pod",
    "pick_one_node_for_preemption",
    "sort_by_importance",
]
