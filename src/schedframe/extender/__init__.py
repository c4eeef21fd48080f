"""kube-scheduler's HTTP extenders: filter, prioritize, preempt and bind over HTTP(S).

Configured under ``extenders:`` in ``KubeSchedulerConfiguration``; the wire format is
upstream's ``k8s.io/kube-scheduler/extender/v1`` JSON, so existing extenders work unchanged.
"""

from __future__ import annotations

from schedframe.extender._http import (
    DEFAULT_EXTENDER_TIMEOUT,
    EXTENDER_NAME,
    MAX_EXTENDER_PRIORITY,
    ExtenderError,
    HTTPExtender,
    Victims,
)
from schedframe.extender._scheduling import (
    apply_ignored_resources,
    build_extenders,
    call_extenders,
    extender_scores,
    extenders_binding,
    find_nodes_that_pass_extenders,
)

__all__ = [
    "DEFAULT_EXTENDER_TIMEOUT",
    "EXTENDER_NAME",
    "MAX_EXTENDER_PRIORITY",
    "ExtenderError",
    "HTTPExtender",
    "Victims",
    "apply_ignored_resources",
    "build_extenders",
    "call_extenders",
    "extender_scores",
    "extenders_binding",
    "find_nodes_that_pass_extenders",
]
