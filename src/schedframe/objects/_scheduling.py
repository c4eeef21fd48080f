"""PriorityClass (``scheduling.k8s.io/v1``) and the two built-in system classes."""

from __future__ import annotations

from typing import Final

import attrs

from schedframe.objects._meta import ObjectMeta

__all__ = [
    "HIGHEST_USER_DEFINABLE_PRIORITY",
    "SYSTEM_CLUSTER_CRITICAL",
    "SYSTEM_NODE_CRITICAL",
    "SYSTEM_PRIORITY_CLASSES",
    "PriorityClass",
]

#: Upstream ``scheduling.HighestUserDefinablePriority``: user classes may not go above it.
HIGHEST_USER_DEFINABLE_PRIORITY: Final = 1_000_000_000
#: Name of the built-in class for cluster-critical pods (value 2000000000).
SYSTEM_CLUSTER_CRITICAL: Final = "system-cluster-critical"
#: Name of the built-in class for node-critical pods (value 2000001000).
SYSTEM_NODE_CRITICAL: Final = "system-node-critical"


@attrs.frozen(kw_only=True)
class PriorityClass:
    """A priority class (upstream ``scheduling.k8s.io/v1.PriorityClass``).

    What the Priority admission plugin reads when a pod is created: ``value`` becomes the
    pod's ``spec.priority`` and ``preemption_policy`` its ``spec.preemptionPolicy``; the
    class with ``global_default`` (the lowest-valued one if several) applies to pods naming
    no class. Cluster-scoped.
    """

    metadata: ObjectMeta
    value: int
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"
    description: str = ""

    @property
    def name(self) -> str:
        """The class's name."""
        return self.metadata.name


#: The classes kube-apiserver creates at start-up (upstream ``SystemPriorityClasses``).
SYSTEM_PRIORITY_CLASSES: Final = (
    PriorityClass(
        metadata=ObjectMeta(name=SYSTEM_NODE_CRITICAL, uid=SYSTEM_NODE_CRITICAL),
        value=2_000_001_000,
        description="Used for system critical pods that must not be moved from their current node.",
    ),
    PriorityClass(
        metadata=ObjectMeta(name=SYSTEM_CLUSTER_CRITICAL, uid=SYSTEM_CLUSTER_CRITICAL),
        value=2_000_000_000,
        description="Used for system critical pods that must run in the cluster, but can be "
        "moved to another node if necessary.",
    ),
)
