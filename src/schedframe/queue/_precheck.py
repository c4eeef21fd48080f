"""The node pre-check the event handlers apply without queueing hints.

Upstream: ``preCheckForNode`` in ``pkg/scheduler/eventhandlers.go`` and ``AdmissionCheck``.
With ``SchedulerQueueingHints`` off, a ``Node/Add`` or ``Node/UpdateNodeXYZ`` event moves only
the pool's pods that the node could admit: enough room (NodeResourcesFit's pod count and
requests), the required node affinity and node selector, ``spec.nodeName``, free host ports,
and no untolerated ``NoSchedule`` taint. Preemption is not considered, as upstream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from schedframe.framework import NodeInfo
from schedframe.objects import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Pod, is_scalar_resource_name

__all__ = ["admission_check", "pre_check_for_node"]

_NO_SCHEDULE: Final = "NoSchedule"


def _fits_resources(pod: Pod, node_info: NodeInfo) -> bool:
    # Upstream noderesources.Fits: the pod count, then cpu, memory, ephemeral storage and the
    # scalar resources the pod requests (none ignored here).
    allocatable = node_info.allocatable
    requested = node_info.requested
    if len(node_info.pods) + 1 > allocatable.get(PODS, 0):
        return False
    for name, amount in pod.requests.items():
        if amount <= 0:
            continue
        if name not in (CPU, MEMORY, EPHEMERAL_STORAGE) and not is_scalar_resource_name(name):
            continue
        if amount > allocatable.get(name, 0) - requested.get(name, 0):
            return False
    return True


def _matches_node_affinity(pod: Pod, node_info: NodeInfo) -> bool:
    # Upstream GetRequiredNodeAffinity(pod).Match(node): nodeSelector, then required terms.
    node = node_info.node
    if node is None:
        return False
    labels = node.metadata.labels
    for key, value in pod.spec.node_selector.items():
        if labels.get(key) != value:
            return False
    affinity = pod.spec.affinity
    node_affinity = affinity.node_affinity if affinity is not None else None
    required = node_affinity.required if node_affinity is not None else None
    return required is None or required.matches(node.metadata.name, labels)


def _fits_node_name(pod: Pod, node_info: NodeInfo) -> bool:
    return not pod.spec.node_name or pod.spec.node_name == node_info.name


def _fits_host_ports(pod: Pod, node_info: NodeInfo) -> bool:
    used = node_info.used_ports
    return not any(used.check_conflict(ip, proto, port) for ip, proto, port in pod.host_ports)


def admission_check(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether the node admits the pod (upstream ``AdmissionCheck`` with no failure listed):
    resources, node affinity, node name, host ports."""
    return (
        _fits_resources(pod, node_info)
        and _matches_node_affinity(pod, node_info)
        and _fits_node_name(pod, node_info)
        and _fits_host_ports(pod, node_info)
    )


def pre_check_for_node(node_info: NodeInfo) -> Callable[[Pod], bool]:
    """The pre-check of a node event without queueing hints (upstream ``preCheckForNode``):
    :func:`admission_check`, and no ``NoSchedule`` taint of the node the pod does not
    tolerate."""
    node = node_info.node
    taints = [t for t in node.spec.taints if t.effect == _NO_SCHEDULE] if node is not None else []

    def check(pod: Pod) -> bool:
        if not admission_check(pod, node_info):
            return False
        tolerations = pod.spec.tolerations
        return all(any(t.tolerates(taint) for t in tolerations) for taint in taints)

    return check
