"""The conformance kit's ``batch-forms`` check: a plugin's fast forms against its plain ones.

For a plugin whose class declares fast forms (see :mod:`schedframe.framework.batch`), on each
generated example, after the framework's PreFilter (and PreScore for scores):

* ``prepare_filter``'s function gives ``filter``'s answer on every node;
* ``filter_batch`` has one ``int8`` verdict per node: ``FILTER_PASS`` only where ``filter``
  passes, ``FILTER_REJECT`` only where it rejects (``FILTER_CHECK`` anywhere);
* ``filter_batch_statuses`` gives ``filter``'s status on the rows it is asked about;
* ``score_many`` and ``score_batch`` give ``score`` node for node, ``normalize_batch`` what
  ``normalize_score`` leaves in a NodeScoreList.

A fast form may decline (``None``); raising is a failure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from schedframe import framework as fw
from schedframe.framework import CycleState, NodeInfo, Status
from schedframe.framework import batch as fb
from schedframe.framework.batch import declares
from schedframe.objects import Pod

__all__ = ["FAST_FORMS", "check_batch_forms"]

#: The fast forms the check compares with their plain forms.
FAST_FORMS: tuple[type, ...] = (
    fb.PreparedFilter,
    fb.BatchFilter,
    fb.BatchFilterStatuses,
    fb.ManyScore,
    fb.BatchScore,
    fb.BatchNormalize,
)


def _answer(out: object) -> tuple[object, ...]:
    if out is None:
        return ("ok",)
    if isinstance(out, Status):
        if out.code is fw.Code.SUCCESS:
            return ("ok",)
        return (out.code.name, out.reasons)
    return (repr(out),)


def check_batch_forms(
    fwk: Any, plugin: Any, pod: Pod, fail: Callable[[str], AssertionError]
) -> None:
    """Compare ``plugin``'s declared fast forms with its plain methods (see the module doc);
    ``fail(detail)`` builds the error to raise. ``fwk`` is the Framework the plugin is in."""
    forms = [proto for proto in FAST_FORMS if declares(plugin, proto)]
    if not forms:
        return
    snapshot = fwk.snapshot_shared_lister()
    infos: Sequence[NodeInfo] = snapshot.list()
    if not infos:
        return
    state = CycleState()
    _, status, _ = fwk.run_pre_filter_plugins(state, pod)
    if status is not None and not status.is_success():
        return
    columns = snapshot.columns()
    fast: Any = plugin  # the declared forms, called by name

    def call(what: str, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as exc:
            raise fail(f"{what} raised {type(exc).__name__}: {exc}") from exc

    if isinstance(plugin, fw.FilterPlugin) and plugin.name not in state.skip_filter_plugins:
        plain = [call("filter", plugin.filter, state, pod, ni) for ni in infos]
        if fb.PreparedFilter in forms:
            prepared = call("prepare_filter", fast.prepare_filter, state, pod)
            if prepared is not None:
                for ni, want in zip(infos, plain, strict=True):
                    got = call("prepare_filter's function", prepared, ni)
                    if _answer(got) != _answer(want):
                        raise fail(
                            f"prepare_filter's function on {ni.name} gives {_answer(got)}, "
                            f"filter {_answer(want)}"
                        )
        verdicts = None
        if fb.BatchFilter in forms:
            verdicts = call("filter_batch", fast.filter_batch, state, pod, columns)
        if verdicts is not None:
            import numpy as np

            if getattr(verdicts, "shape", None) != (len(infos),) or verdicts.dtype != np.int8:
                raise fail(
                    f"filter_batch returned {type(verdicts).__name__} "
                    f"{getattr(verdicts, 'shape', '')} {getattr(verdicts, 'dtype', '')}, "
                    f"not an int8 array of {len(infos)} verdicts"
                )
            for ni, verdict, want in zip(infos, verdicts.tolist(), plain, strict=True):
                ok = _answer(want) == ("ok",)
                rejected = isinstance(want, Status) and want.is_rejected()
                if verdict == fw.FILTER_PASS and not ok:
                    raise fail(f"filter_batch passes {ni.name}; filter gives {_answer(want)}")
                if verdict == fw.FILTER_REJECT and not rejected:
                    raise fail(f"filter_batch rejects {ni.name}; filter gives {_answer(want)}")
                if verdict not in (fw.FILTER_PASS, fw.FILTER_CHECK, fw.FILTER_REJECT):
                    raise fail(f"filter_batch gives {verdict} for {ni.name}, not a verdict")
            if fb.BatchFilterStatuses in forms:
                rows = np.flatnonzero(verdicts == fw.FILTER_REJECT)
                if len(rows):
                    got = call(
                        "filter_batch_statuses",
                        fast.filter_batch_statuses,
                        state,
                        pod,
                        columns,
                        rows,
                    )
                    if got is not None:
                        if len(got) != len(rows):
                            raise fail(
                                f"filter_batch_statuses gave {len(got)} statuses "
                                f"for {len(rows)} rows"
                            )
                        for row, status in zip(rows.tolist(), got, strict=True):
                            if _answer(status) != _answer(plain[row]):
                                raise fail(
                                    f"filter_batch_statuses on {infos[row].name} gives "
                                    f"{_answer(status)}, filter {_answer(plain[row])}"
                                )

    if isinstance(plugin, fw.ScorePlugin) and {
        fb.ManyScore,
        fb.BatchScore,
        fb.BatchNormalize,
    } & set(forms):
        if plugin.name in state.skip_score_plugins:
            return
        status = fwk.run_pre_score_plugins(state, pod, infos)
        if status is not None and not status.is_success():
            return
        if plugin.name in state.skip_score_plugins:
            return
        plain_scores = [call("score", plugin.score, state, pod, ni) for ni in infos]
        if fb.ManyScore in forms:
            many = call("score_many", fast.score_many, state, pod, infos)
            if many is not None and list(many) != plain_scores:
                raise fail(f"score_many gives {list(many)}, score {plain_scores}")
        import numpy as np

        if fb.BatchScore in forms:
            rows = np.arange(len(infos), dtype=np.intp)
            batch = call("score_batch", fast.score_batch, state, pod, columns, rows)
            if batch is not None and np.asarray(batch).tolist() != plain_scores:
                raise fail(f"score_batch gives {np.asarray(batch).tolist()}, score {plain_scores}")
        if fb.BatchNormalize in forms and isinstance(plugin, fw.ScoreExtensions):
            scores = fw.NodeScoreList([ni.name for ni in infos], list(plain_scores))
            call("normalize_score", plugin.normalize_score, state, pod, scores)
            array = np.array(plain_scores, dtype=np.int64)
            got = call("normalize_batch", fast.normalize_batch, state, pod, array)
            if got is not None and np.asarray(got).tolist() != list(scores.scores):
                raise fail(
                    f"normalize_batch gives {np.asarray(got).tolist()}, "
                    f"normalize_score {list(scores.scores)}"
                )
