"""Out-of-tree plugins that do nothing, for the bench's "third-party plugin" shapes.

They are what a plugin author writes first: plain per-node ``filter``/``score`` methods, no
batch forms (see :mod:`schedframe.framework.batch`). A workload naming ``extraPlugins`` runs
the default profile with these enabled at their extension point, after the default plugins,
so the figures show what one third-party plugin without batch methods costs.
"""

from __future__ import annotations

from typing import Any, ClassVar

from schedframe import framework as fw


class NoopFilter(fw.FilterPlugin):
    """Passes every node."""

    name: ClassVar[str] = "NoopFilter"

    def __init__(self, args: object = None, handle: object = None) -> None:
        self.handle = handle

    def filter(self, state: fw.CycleState, pod: Any, node_info: fw.NodeInfo) -> fw.Status | None:
        return None


class NoopScore(fw.ScorePlugin):
    """Scores every node 0."""

    name: ClassVar[str] = "NoopScore"

    def __init__(self, args: object = None, handle: object = None) -> None:
        self.handle = handle

    def score(self, state: fw.CycleState, pod: Any, node_info: fw.NodeInfo) -> int:
        return 0


#: name -> (factory, extension point key in the configuration)
PLUGINS: dict[str, tuple[Any, str]] = {
    "NoopFilter": (NoopFilter, "filter"),
    "NoopScore": (NoopScore, "score"),
}
