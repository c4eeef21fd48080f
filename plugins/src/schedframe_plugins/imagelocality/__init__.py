"""ImageLocality: favour nodes that already have the pod's container images.

Port of upstream ``pkg/scheduler/framework/plugins/imagelocality/image_locality.go``. Each image
present on the node counts its size scaled by the share of nodes that have it (to avoid piling
pods onto the few nodes holding an image); the sum is mapped linearly from
[23 MiB, 1000 MiB x number of containers] onto [0, 100].
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Final

from schedframe import framework as fw
from schedframe.objects import Pod
from schedframe_plugins import names

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["MAX_CONTAINER_THRESHOLD", "MIN_THRESHOLD", "ImageLocality", "calculate_priority"]

NAME: Final = names.IMAGE_LOCALITY

_MB: Final = 1024 * 1024
#: Image sums below this score 0.
MIN_THRESHOLD: Final = 23 * _MB
#: Per container, image sums above this score 100.
MAX_CONTAINER_THRESHOLD: Final = 1000 * _MB


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Map ``sum_scores`` from [min, max threshold] linearly onto [0, 100] (clamped)."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    sum_scores = max(MIN_THRESHOLD, min(sum_scores, max_threshold))
    return fw.MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def scaled_image_score(state: fw.ImageStateSummary, total_num_nodes: int) -> int:
    """The image's size times the share of nodes that have it (upstream ``scaledImageScore``)."""
    spread = state.num_nodes / total_num_nodes
    return int(state.size * spread)


def sum_image_scores(node_info: fw.NodeInfo, pod: Pod, total_num_nodes: int) -> int:
    """The scaled scores of the pod's init and app container images present on the node."""
    states = node_info.image_states
    total = 0
    for container in (*pod.spec.init_containers, *pod.spec.containers):
        state = states.get(fw.normalized_image_name(container.image))
        if state is not None:
            total += scaled_image_score(state, total_num_nodes)
    return total


class ImageLocality(fw.ScorePlugin):
    """Scores nodes by how much of the pod's image data they already hold."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self._handle = handle

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        """The image-locality score of ``node_info`` for ``pod``."""
        total_num_nodes = len(self._handle.snapshot_shared_lister().node_infos.list())
        sums = sum_image_scores(node_info, pod, total_num_nodes)
        num_containers = len(pod.spec.init_containers) + len(pod.spec.containers)
        return calculate_priority(sums, num_containers)

    def score_many(self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]) -> list[int]:
        """:meth:`score` of every node, in order (the framework's batch form): the pod's image
        names and the cluster size are worked out once; a node without images scores as an
        empty sum."""
        total_num_nodes = len(self._handle.snapshot_shared_lister().node_infos.list())
        containers = (*pod.spec.init_containers, *pod.spec.containers)
        images = [fw.normalized_image_name(c.image) for c in containers]
        num_containers = len(pod.spec.init_containers) + len(pod.spec.containers)
        empty = calculate_priority(0, num_containers)
        out: list[int] = []
        append = out.append
        for ni in nodes:
            states = ni.image_states
            if not states:
                append(empty)
                continue
            total = 0
            for image in images:
                state_ = states.get(image)
                if state_ is not None:
                    total += scaled_image_score(state_, total_num_nodes)
            append(calculate_priority(total, num_containers))
        return out

    def score_batch(
        self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns, rows: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.int64]:
        """:meth:`score` of the nodes at ``rows`` (the framework's batch path): nodes reporting
        no images score as an empty sum without a look."""
        import numpy as np

        num_containers = len(pod.spec.init_containers) + len(pod.spec.containers)
        scores = np.full(len(rows), calculate_priority(0, num_containers), dtype=np.int64)
        with_images = np.flatnonzero(columns.images[rows])
        if len(with_images):
            infos = columns.infos
            picked = [infos[int(rows[i])] for i in with_images.tolist()]
            scores[with_images] = self.score_many(state, pod, picked)
        return scores
