"""The Workload API of upstream v1.35 (``scheduling.k8s.io/v1alpha1``), gated by GenericWorkload.

A :class:`Workload` names pod groups and how each is scheduled: ``basic`` (pod by pod) or
``gang`` (all or nothing, at least ``minCount`` pods). A pod joins one group with
``spec.workloadRef`` (:class:`WorkloadReference`). Only the fields the scheduler reads are
modelled; ``spec.controllerRef`` is kept for round trips.
"""

from __future__ import annotations

from typing import Final

import attrs

from schedframe.objects._meta import ObjectMeta

__all__ = [
    "WORKLOAD_MAX_POD_GROUPS",
    "GangSchedulingPolicy",
    "PodGroup",
    "Workload",
    "WorkloadReference",
]

#: Upstream ``WorkloadMaxPodGroups``: a Workload lists at most this many pod groups.
WORKLOAD_MAX_POD_GROUPS: Final = 8


@attrs.frozen(kw_only=True)
class WorkloadReference:
    """A pod's ``spec.workloadRef`` (upstream ``v1.WorkloadReference``)."""

    name: str
    pod_group: str
    pod_group_replica_key: str = ""


@attrs.frozen(kw_only=True)
class GangSchedulingPolicy:
    """``policy.gang``: the group schedules only when ``min_count`` pods can."""

    min_count: int


@attrs.frozen(kw_only=True)
class PodGroup:
    """One of ``spec.podGroups``: a name and exactly one policy (``gang`` None means basic)."""

    name: str
    gang: GangSchedulingPolicy | None = None


@attrs.frozen(kw_only=True)
class Workload:
    """A ``scheduling.k8s.io/v1alpha1`` Workload.

    ``controller_ref`` is ``(apiGroup, kind, name)`` of ``spec.controllerRef``, or None.
    """

    metadata: ObjectMeta
    pod_groups: tuple[PodGroup, ...] = ()
    controller_ref: tuple[str, str, str] | None = None

    @property
    def name(self) -> str:
        """The object's name."""
        return self.metadata.name

    @property
    def namespace(self) -> str:
        """The object's namespace."""
        return self.metadata.namespace

    def pod_group(self, name: str) -> PodGroup | None:
        """The pod group called ``name``, or None (upstream ``podGroupPolicy``'s lookup)."""
        for group in self.pod_groups:
            if group.name == name:
                return group
        return None
