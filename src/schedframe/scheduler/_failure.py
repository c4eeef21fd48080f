"""What happens to a pod whose attempt failed (upstream ``handleSchedulingFailure``).

The pod is never dropped: it goes back to the queue with the plugins that rejected it (so
queueing hints know which events may help), its nomination is updated, a ``FailedScheduling``
event is recorded and the ``PodScheduled=False`` condition is written through the backend.
The only pods not requeued are the ones upstream does not requeue either: pods that are gone
from the informer, and pods that got a node meanwhile (someone else bound them).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from schedframe.framework import FitError, NominatingInfo, NominatingMode, PodInfo, Status
from schedframe.objects import PodCondition
from schedframe.scheduler._schedule_one import NoNodesAvailableError, ScheduleResult, record_event

if TYPE_CHECKING:
    from schedframe import framework as fw
    from schedframe.objects import Pod
    from schedframe.runtime import Framework
    from schedframe.scheduler._scheduler import Scheduler

__all__ = [
    "NOTE_LENGTH_LIMIT",
    "POD_REASON_SCHEDULER_ERROR",
    "POD_REASON_UNSCHEDULABLE",
    "handle_scheduling_failure",
    "truncate_message",
]

log = logging.getLogger("schedframe.scheduler")

#: Upstream ``validation.NoteLengthLimit`` for events.k8s.io notes.
NOTE_LENGTH_LIMIT: Final = 1024
#: ``v1.PodReasonUnschedulable``.
POD_REASON_UNSCHEDULABLE: Final = "Unschedulable"
#: ``v1.PodReasonSchedulerError``.
POD_REASON_SCHEDULER_ERROR: Final = "SchedulerError"


def truncate_message(message: str) -> str:
    """Cut a message to the event note limit, ending with ``" ..."`` (upstream ``truncateMessage``)."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    suffix = " ..."
    return message[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix


def _update_nomination(sched: Scheduler, pod_info: PodInfo, info: NominatingInfo | None) -> None:
    """Upstream ``nominator.AddNominatedPod(podInfo, nominatingInfo)``."""
    pod = pod_info.pod
    if info is not None and info.mode is NominatingMode.OVERRIDE:
        node_name = info.nominated_node_name
    else:
        node_name = pod.status.nominated_node_name
    sched.queue.delete_nominated_pod_if_exists(pod)
    if not node_name:
        return
    # A pod that is gone or already scheduled is not nominated (upstream checks the lister).
    current = sched.pod_store.get(pod.namespace, pod.name)
    if current is None or current.uid != pod.uid or current.spec.node_name:
        return
    sched.queue.add_nominated_pod(pod_info, node_name)


def _needs_condition_update(pod: Pod, condition: PodCondition) -> bool:
    """Upstream ``podutil.UpdatePodCondition`` says whether anything but the time changed."""
    for existing in pod.status.conditions:
        if existing.type == condition.type:
            return (existing.status, existing.reason, existing.message) != (
                condition.status,
                condition.reason,
                condition.message,
            )
    return True


def handle_scheduling_failure(
    sched: Scheduler,
    fwk: Framework,
    qpi: fw.QueuedPodInfo,
    status: Status,
    nominating_info: NominatingInfo | None,
    start: float,
) -> None:
    """Requeue the pod, update its nomination, record the event and the condition.

    Mirrors upstream ``handleSchedulingFailure`` step by step; every backend write that fails
    is logged and the loop goes on (the queue already holds the pod).
    """
    pod = qpi.pod
    called_done = False
    reason = POD_REASON_UNSCHEDULABLE if status.is_rejected() else POD_REASON_SCHEDULER_ERROR
    err = status.as_error()
    message = status.message()
    try:
        if isinstance(err, NoNodesAvailableError):
            log.info("unable to schedule pod %s; no nodes are registered; waiting", pod.key)
        elif isinstance(err, FitError):
            qpi.unschedulable_plugins = set(err.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(err.diagnosis.pending_plugins)
            log.info("unable to schedule pod %s; no fit; waiting: %s", pod.key, message)
        else:
            log.error("error scheduling pod %s; retrying: %s", pod.key, message)

        cached = sched.pod_store.get(pod.namespace, pod.name)
        if cached is None or cached.uid != pod.uid:
            log.info("pod %s does not exist in the informer cache", pod.key)
        elif cached.spec.node_name:
            log.info(
                "pod %s has been assigned to node %s; not adding it back to the queue",
                pod.key,
                cached.spec.node_name,
            )
        else:
            qpi.pod_info = PodInfo(cached)
            try:
                sched.queue.add_unschedulable_if_not_present(qpi, sched.queue.scheduling_cycle)
                called_done = True
            except Exception:
                # Upstream logs this too: the pod is already queued (an update re-added it),
                # so nothing is lost; the event and condition below must still be written.
                log.exception("requeueing pod %s failed", pod.key)

        _update_nomination(sched, qpi.pod_info, nominating_info)
    finally:
        if not called_done:
            sched.queue.done(pod.uid)

    plugins = tuple(sorted(qpi.unschedulable_plugins | qpi.pending_plugins))
    outcome = "unschedulable" if status.is_rejected() else "error"
    sched.record_result(
        ScheduleResult(
            nominating_info=nominating_info,
            pod=qpi.pod,
            profile=fwk.profile_name,
            outcome=outcome,
            message=message,
            plugins=plugins,
            attempts=qpi.attempts,
        )
    )
    if status.is_rejected():
        sched.observers.pod_unschedulable(
            pod=qpi.pod,
            profile=fwk.profile_name,
            message=message,
            plugins=list(plugins),
            attempts=qpi.attempts,
        )
    else:
        sched.observers.scheduling_error(pod=qpi.pod, profile=fwk.profile_name, message=message)

    if err is None:
        return  # upstream: only tests get here (e.g. a Skip status from Bind)

    note = truncate_message(message)
    record_event(fwk, qpi.pod, "Warning", "FailedScheduling", "Scheduling", note)

    target = sched.pod_store.get(pod.namespace, pod.name) or qpi.pod
    condition = PodCondition(
        type="PodScheduled",
        status="False",
        reason=reason,
        message=message,
        last_transition_time=datetime.fromtimestamp(sched.clock.now(), UTC),
    )
    nominated: str | None = None
    if (
        nominating_info is not None
        and nominating_info.mode is NominatingMode.OVERRIDE
        and target.status.nominated_node_name != nominating_info.nominated_node_name
    ):
        nominated = nominating_info.nominated_node_name
    needs_condition = _needs_condition_update(target, condition)
    if not needs_condition and nominated is None:
        return
    try:
        sched.backend.patch_pod_status(
            target,
            condition=condition if needs_condition else None,
            nominated_node_name=nominated,
        )
    except Exception as exc:
        log.warning("updating pod %s status failed: %s", pod.key, exc)
