"""InterPodAffinity: required and preferred inter-pod affinity and anti-affinity.

Upstream: ``pkg/scheduler/framework/plugins/interpodaffinity``.
"""

from __future__ import annotations

from schedframe_plugins.interpodaffinity.plugin import InterPodAffinity, InterPodAffinityArgs

__all__ = ["InterPodAffinity", "InterPodAffinityArgs"]
