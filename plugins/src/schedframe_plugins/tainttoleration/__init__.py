"""TaintToleration: keep pods off nodes whose taints they do not tolerate (upstream ``tainttoleration``)."""

from __future__ import annotations

from schedframe_plugins.tainttoleration.taint_toleration import (
    ERR_REASON_NOT_MATCH,
    TaintToleration,
    do_not_schedule_taints_filter,
    find_matching_untolerated_taint,
    tolerations_tolerate_taint,
    untolerated_taint_reason,
)

__all__ = [
    "ERR_REASON_NOT_MATCH",
    "TaintToleration",
    "do_not_schedule_taints_filter",
    "find_matching_untolerated_taint",
    "tolerations_tolerate_taint",
    "untolerated_taint_reason",
]
