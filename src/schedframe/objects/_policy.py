"""PodDisruptionBudget, which preemption consults when it picks victims."""

from __future__ import annotations

from datetime import datetime

import attrs

from schedframe.objects._meta import LabelSelector, ObjectMeta

__all__ = ["PodDisruptionBudget"]


@attrs.frozen(kw_only=True)
class PodDisruptionBudget:
    """A disruption budget (upstream ``policy/v1.PodDisruptionBudget``, what preemption reads).

    ``min_available`` and ``max_unavailable`` are an ``int`` or a percentage string such as
    ``"50%"`` (upstream ``IntOrString``). ``selector=None`` selects no pod and an empty
    selector every pod in the namespace, as in ``policy/v1``. ``disrupted_pods`` maps a pod
    name to when its eviction was processed; ``disruptions_allowed`` is the status the
    disruption controller last wrote.
    """

    metadata: ObjectMeta
    selector: LabelSelector | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    disruptions_allowed: int = 0
    disrupted_pods: dict[str, datetime] = attrs.field(factory=dict, hash=False)

    @property
    def name(self) -> str:
        """The budget's name."""
        return self.metadata.name

    @property
    def namespace(self) -> str:
        """The budget's namespace."""
        return self.metadata.namespace
