"""GpuSpread: refuse nodes with too many GPUs in use; prefer the emptiest GPU nodes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import attrs

from schedframe import framework as fw
from schedframe.errors import INVALID, FieldIssue
from schedframe.objects import Pod

__all__ = ["GPU", "GpuSpread", "GpuSpreadArgs"]

GPU = "nvidia.com/gpu"
ERR_TOO_MANY_GPUS = "node(s) had too many GPUs in use"


@attrs.frozen(kw_only=True)
class GpuSpreadArgs:
    """Arguments (``pluginConfig[].args``, camelCase ``maxGpusInUse``)."""

    max_gpus_in_use: int = 4

    def validate(self) -> list[FieldIssue]:
        """Reject a limit below 1."""
        if self.max_gpus_in_use < 1:
            return [
                FieldIssue(
                    path="maxGpusInUse",
                    kind=INVALID,
                    value=self.max_gpus_in_use,
                    detail="must be at least 1",
                )
            ]
        return []


class GpuSpread(fw.FilterPlugin, fw.ScorePlugin, fw.EnqueueExtensions):
    """Filter out nodes at the GPU limit; score by the share of GPUs still free."""

    name: ClassVar[str] = "GpuSpread"
    args_type: ClassVar[type] = GpuSpreadArgs

    def __init__(self, args: GpuSpreadArgs, handle: fw.Handle) -> None:
        self._limit = args.max_gpus_in_use

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        if pod.requests.get(GPU, 0) and node_info.requested.get(GPU, 0) >= self._limit:
            return fw.Status(fw.Code.UNSCHEDULABLE, ERR_TOO_MANY_GPUS)
        return None

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        used = node_info.requested.get(GPU, 0)
        total = node_info.allocatable.get(GPU, 0)
        if total == 0:
            return fw.MAX_NODE_SCORE
        return fw.MAX_NODE_SCORE * max(total - used, 0) // total

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        # A GPU frees up when a pod on a node goes away, or a node is added or grows.
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.ASSIGNED_POD, fw.ActionType.DELETE)
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(
                    fw.EventResource.NODE,
                    fw.ActionType.ADD | fw.ActionType.UPDATE_NODE_ALLOCATABLE,
                )
            ),
        )
