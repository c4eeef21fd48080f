"""Per-plugin metrics of a Framework: evaluation counts, sampled plugin durations and
extension-point durations, as upstream's framework runtime records them.

Upstream: ``framework/runtime/instrumented_plugins.go`` (``scheduler_plugin_evaluation_total``:
every PreFilter and PreScore call that did not Skip, every Filter and Score call, one per
node), ``framework.go`` (``scheduler_plugin_execution_duration_seconds`` for every plugin call
of a sampled cycle; ``scheduler_framework_extension_point_duration_seconds`` for every run of
an extension point, with the code of the status it returned).

Counts are kept by the Framework itself (plain integers, no lock per call) and read by the
recorder at scrape time. Nothing here runs unless a recorder is attached
(:attr:`Framework.metrics_recorder <schedframe.runtime.Framework.metrics_recorder>`).

The batch engine decides many nodes without calling a plugin per node. Its evaluations are
counted afterwards from its verdicts (:func:`count_batch_filter`): for every node the
per-node path would have visited, each plugin up to the first one that does not pass it,
which is what the per-node path counts; nodes with nominated pods take the per-node path
when counting (their two runs are counted as they happen).
"""

from __future__ import annotations

import functools
import time
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from schedframe import framework as fw
from schedframe.framework import Status

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from schedframe.framework import CycleState, NodeInfo
    from schedframe.objects import Pod

__all__ = [
    "EVALUATED_POINTS",
    "FilterTally",
    "PluginEvaluations",
    "PluginMetricsRecorder",
    "count_batch_filter",
    "counted_filter",
    "counted_prepared",
    "extension_point",
    "status_label",
    "timed",
]

#: The extension points whose plugin calls upstream counts (``PluginEvaluationTotal``).
EVALUATED_POINTS: Final = ("PreFilter", "Filter", "PreScore", "Score")


class PluginMetricsRecorder(typing.Protocol):
    """Where a Framework reports its per-plugin metrics (upstream ``MetricAsyncRecorder`` and
    the extension-point histogram); :class:`~schedframe.metrics.SchedulerMetrics` is one.
    Evaluation counts are not reported: the Framework keeps them
    (:meth:`Framework.plugin_evaluations <schedframe.runtime.Framework.plugin_evaluations>`)."""

    def sample_cycle(self) -> bool:
        """Whether the scheduling cycle starting now records plugin durations (upstream:
        ``pluginMetricsSamplePercent`` of the cycles)."""

    def plugin_duration(
        self, plugin: str, extension_point: str, status: str, seconds: float
    ) -> None:
        """One plugin call's duration, in a sampled cycle."""

    def extension_point_duration(
        self, extension_point: str, status: str, profile: str, seconds: float
    ) -> None:
        """One run of an extension point, with the code of the status it returned."""


def status_label(out: object) -> str:
    """Upstream's ``status`` label for what a plugin or a runner returned: the status code's
    name, ``Success`` for no status; for a ``(result, status)`` pair, the status's."""
    if out is None:
        return "Success"
    if isinstance(out, Status):
        return str(out.code)
    if isinstance(out, tuple) and len(out) == 2:
        return status_label(out[1])
    return "Success"


_T = typing.TypeVar("_T")


def timed(
    rec: PluginMetricsRecorder, plugin: str, point: str, fn: Callable[..., _T], *args: Any
) -> _T:
    """``fn(*args)``, its duration recorded with the status it returned (``Error`` when it
    raised)."""
    started = time.perf_counter()
    try:
        out = fn(*args)
    except BaseException:
        rec.plugin_duration(plugin, point, "Error", time.perf_counter() - started)
        raise
    rec.plugin_duration(plugin, point, status_label(out), time.perf_counter() - started)
    return out


class _Recording(typing.Protocol):
    _metrics_recorder: PluginMetricsRecorder | None

    @property
    def profile_name(self) -> str: ...


_S = typing.TypeVar("_S", bound=_Recording)
_P = typing.ParamSpec("_P")
_R = typing.TypeVar("_R")


def extension_point(
    point: str, status_of: Callable[[Any], object] = lambda out: out
) -> Callable[[Callable[typing.Concatenate[_S, _P], _R]], Callable[typing.Concatenate[_S, _P], _R]]:
    """Record the decorated runner's duration under ``point``, with the code of the status
    it returned (``status_of`` picks it from the result), when a recorder is attached
    (upstream ``FrameworkExtensionPointDuration``, observed on every return)."""

    def wrap(
        fn: Callable[typing.Concatenate[_S, _P], _R],
    ) -> Callable[typing.Concatenate[_S, _P], _R]:
        @functools.wraps(fn)
        def run(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            rec = self._metrics_recorder
            if rec is None:
                return fn(self, *args, **kwargs)
            started = time.perf_counter()
            out = fn(self, *args, **kwargs)
            rec.extension_point_duration(
                point,
                status_label(status_of(out)),
                self.profile_name,
                time.perf_counter() - started,
            )
            return out

        return run

    return wrap


class PluginEvaluations:
    """One Framework's evaluation counts: per extension point of :data:`EVALUATED_POINTS`,
    the plugins at that point (in order) and a count for each."""

    __slots__ = ("counts", "names")

    def __init__(self) -> None:
        self.names: dict[str, tuple[str, ...]] = {p: () for p in EVALUATED_POINTS}
        self.counts: dict[str, list[int]] = {p: [] for p in EVALUATED_POINTS}

    def rebuild(self, point: str, names: Sequence[str]) -> None:
        """Set the plugins of ``point``, keeping the counts of those already there."""
        old = dict(zip(self.names[point], self.counts[point], strict=True))
        self.names[point] = tuple(names)
        self.counts[point] = [old.get(name, 0) for name in names]

    def snapshot(self) -> dict[tuple[str, str], int]:
        """``(plugin, extension point) -> count``, every plugin listed (upstream creates each
        series, at zero, when it builds the framework)."""
        out: dict[tuple[str, str], int] = {}
        for point in EVALUATED_POINTS:
            for name, count in zip(self.names[point], list(self.counts[point]), strict=True):
                out[(name, point)] = count
        return out


def counted_filter(
    rec: PluginMetricsRecorder,
    counts: list[int],
    k: int,
    name: str,
    fn: Callable[[CycleState, Pod, NodeInfo], Status | None],
) -> Callable[[CycleState, Pod, NodeInfo], Status | None]:
    """The Filter ``fn`` of plugin ``k`` counting its calls in ``counts[k]`` and, in sampled
    cycles, recording each call's duration (upstream ``instrumentedFilterPlugin`` and
    ``runFilterPlugin``)."""

    def run(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        counts[k] += 1
        if state.record_plugin_metrics:
            return timed(rec, name, "Filter", fn, state, pod, node_info)
        return fn(state, pod, node_info)

    return run


def counted_prepared(
    rec: PluginMetricsRecorder,
    counts: list[int],
    k: int,
    name: str,
    fn: Callable[[NodeInfo], Status | None],
    sampled: bool,
) -> Callable[[NodeInfo], Status | None]:
    """:func:`counted_filter` for a plugin's per-pod prepared filter (``node_info -> status``)."""
    if sampled:

        def run_timed(node_info: NodeInfo) -> Status | None:
            counts[k] += 1
            return timed(rec, name, "Filter", fn, node_info)

        return run_timed

    def run(node_info: NodeInfo) -> Status | None:
        counts[k] += 1
        return fn(node_info)

    return run


class FilterTally:
    """What the batch engine's :meth:`~schedframe.runtime._batch.BatchEngine.filter_rows`
    leaves for :func:`count_batch_filter`: the verdicts and deciding plugins of every row, the
    statuses of the rows it ran node by node and rejected, and the rows with nominated pods
    (run node by node, their evaluations counted as they ran)."""

    __slots__ = ("checked", "deciders", "nominated", "verdicts")

    def __init__(self) -> None:
        self.verdicts: npt.NDArray[np.int8] | None = None
        self.deciders: npt.NDArray[np.int16] | None = None
        self.checked: Mapping[int, Status] = {}
        self.nominated: npt.NDArray[np.intp] | None = None


def count_batch_filter(
    counts: list[int],
    names: Sequence[str],
    skip: set[str],
    tally: FilterTally,
    start: int,
    visited: int,
    error: Status | None,
) -> None:
    """Add to ``counts`` (one per Filter plugin, in order) the Filter evaluations the per-node
    path makes on the ``visited`` nodes from row ``start`` on (wrapping round): on each node,
    every plugin not skipped up to the first one that does not pass it (the plugin whose
    verdict the node got). ``error``: the Error status that stopped the search on the last
    node visited, if any."""
    import numpy as np

    verdicts, deciders = tally.verdicts, tally.deciders
    if verdicts is None or deciders is None or not visited:
        return
    n = len(verdicts)
    top = len(names)
    # Positions 0..visited-1 in the per-node path's order: one or two runs of rows.
    stop = start + visited
    parts = (verdicts[start:stop],) if stop <= n else (verdicts[start:], verdicts[: stop - n])
    checked = tally.checked
    nominated = tally.nominated
    if (
        not checked
        and error is None
        and (nominated is None or not len(nominated))
        and not any((part == fw.FILTER_REJECT).any() for part in parts)
    ):
        # Every node visited passes every plugin (the usual case).
        for k, name in enumerate(names):
            if name not in skip:
                counts[k] += visited
        return
    if stop <= n:
        where = slice(start, stop)
        first = np.where(verdicts[where] == fw.FILTER_REJECT, deciders[where], top)
    else:
        rows = np.arange(start, stop, dtype=np.intp)
        rows[rows >= n] -= n
        first = np.where(verdicts[rows] == fw.FILTER_REJECT, deciders[rows], top)
    if checked or error is not None:
        index = {name: k for k, name in enumerate(names)}
        for row, status in checked.items():
            pos = (row - start) % n
            if pos < visited:
                first[pos] = index.get(status.plugin, top)
        if error is not None:
            first[visited - 1] = index.get(error.plugin, top)
    if nominated is not None and len(nominated):
        at = (nominated - start) % n
        first[at[at < visited]] = top + 1  # counted as they ran, node by node
    at_least = np.bincount(first, minlength=top + 2)[: top + 1][::-1].cumsum()[::-1].tolist()
    for k, name in enumerate(names):
        if name not in skip:
            counts[k] += at_least[k]
