"""kube-scheduler's Prometheus metrics, fed by the observer hooks (needs ``schedframe[metrics]``).

One :class:`SchedulerMetrics` per :class:`~schedframe.scheduler.Scheduler`, each with its own
``prometheus_client`` registry::

    from schedframe.metrics import SchedulerMetrics

    metrics = SchedulerMetrics()
    metrics.attach(scheduler)      # registers its observer on scheduler.hooks
    ...
    print(metrics.exposition())    # Prometheus text format

Names, label names, help texts and bucket boundaries are upstream's
(``pkg/scheduler/metrics/metrics.go``).
"""

from __future__ import annotations

from schedframe.metrics._registry import (
    EXTENSION_POINTS,
    FAMILIES,
    PLUGIN_METRICS_SAMPLE_PERCENT,
    Family,
    SchedulerMetrics,
    exponential_buckets,
)

__all__ = [
    "EXTENSION_POINTS",
    "FAMILIES",
    "PLUGIN_METRICS_SAMPLE_PERCENT",
    "Family",
    "SchedulerMetrics",
    "exponential_buckets",
]
