"""The conformance kit catches each kind of broken plugin, and passes a correct one."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import pytest
from hypothesis import Phase, settings

from schedframe import framework as fw
from schedframe.errors import INVALID, FieldIssue
from schedframe.objects import Pod
from schedframe.runtime import Registry
from schedframe.testing.conformance import CHECKS, ConformanceError, check_plugin

EXAMPLES = 25
# Finding a failure is what these tests are about; shrinking it (tens of seconds for rich
# clusters) is tested once, in tests/property/test_kit_conformance.py. The examples are drawn
# the same way on every run: a test expecting a flaw to be found must not depend on luck
# (with random draws, 25 examples sometimes missed the forgetful AddPod extension).
NO_SHRINK = settings(database=None, phases=[Phase.explicit, Phase.generate], derandomize=True)
_NODE_ADD = fw.ClusterEventWithHint(fw.ClusterEvent(fw.EventResource.NODE, fw.ActionType.ADD))


class _Events:
    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        return (_NODE_ADD,)


@attrs.frozen(kw_only=True)
class GoodArgs:
    """Args with a default and a validate()."""

    max_pods: int = 3

    def validate(self) -> list[FieldIssue]:
        if self.max_pods < 1:
            return [
                FieldIssue(path="maxPods", kind=INVALID, value=self.max_pods, detail="too small")
            ]
        return []


class Good(_Events, fw.FilterPlugin, fw.ScorePlugin, fw.ScoreExtensions, fw.EnqueueExtensions):
    """Rejects nodes holding max_pods pods; prefers the emptiest."""

    name: ClassVar[str] = "Good"
    args_type: ClassVar[type] = GoodArgs

    def __init__(self, args: GoodArgs, handle: fw.Handle) -> None:
        self._max = args.max_pods

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        if len(node_info.pods) >= self._max:
            return fw.Status(fw.Code.UNSCHEDULABLE, "too many pods here")
        return None

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        return len(node_info.pods) * 1000

    def normalize_score(
        self, state: fw.CycleState, pod: Pod, scores: fw.NodeScoreList
    ) -> fw.Status | None:
        top = max(scores.scores, default=0) or 1
        scores.scores[:] = [100 - 100 * s // top for s in scores.scores]
        return None


def check(plugin: type, **kwargs: object) -> ConformanceError:
    kwargs.setdefault("settings", NO_SHRINK)
    with pytest.raises(ConformanceError) as err:
        check_plugin(plugin, max_examples=EXAMPLES, **kwargs)  # type: ignore[arg-type]
    return err.value


def test_a_correct_plugin_passes() -> None:
    check_plugin(Good, max_examples=EXAMPLES)


def test_a_correct_plugin_passes_with_raw_args_and_invalid_args() -> None:
    check_plugin(
        Good,
        args={"maxPods": 2},
        invalid_args=[{"maxPods": 0}, {"maxPods": "x"}],
        max_examples=5,
    )


def test_the_error_names_plugin_check_and_example() -> None:
    class Skips(_Events, fw.FilterPlugin, fw.EnqueueExtensions):
        name: ClassVar[str] = "Skips"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

        def filter(
            self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo
        ) -> fw.Status | None:
            return fw.Status(fw.Code.SKIP)

    err = check(Skips)
    assert isinstance(err, AssertionError)
    assert err.plugin == "Skips" and err.check == "allowed-codes"
    text = str(err)
    assert text.startswith("plugin Skips fails conformance check 'allowed-codes': filter on node-0")
    assert "minimal example:" in text and '"name":"incoming"' in text
    assert err.check in CHECKS


def test_entry_point_name_must_equal_the_plugin_name() -> None:
    registry = Registry()
    registry.register("Published", Good)
    err = check_plugin_error("Published", registry=registry)
    assert err.check == "entry-point-name"
    assert "registered as 'Published' but its 'name' is 'Good'" in err.detail


def check_plugin_error(name: str, **kwargs: object) -> ConformanceError:
    kwargs.setdefault("settings", NO_SHRINK)
    with pytest.raises(ConformanceError) as err:
        check_plugin(name, max_examples=EXAMPLES, **kwargs)  # type: ignore[arg-type]
    return err.value


def test_unknown_names_fail_to_load() -> None:
    err = check_plugin_error("NoSuchPlugin", registry=Registry())
    assert err.check == "entry-point-name" and "cannot load" in err.detail


def test_a_plugin_needs_an_extension_point() -> None:
    class Nothing:
        name: ClassVar[str] = "Nothing"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

    assert check(Nothing).check == "extension-points"


def test_score_extensions_without_score_are_reported() -> None:
    class Normalizes(fw.PreScorePlugin, fw.ScoreExtensions):
        name: ClassVar[str] = "Normalizes"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

        def pre_score(
            self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
        ) -> fw.Status | None:
            return None

        def normalize_score(
            self, state: fw.CycleState, pod: Pod, scores: fw.NodeScoreList
        ) -> fw.Status | None:
            return None

    err = check(Normalizes)
    assert err.check == "extension-points" and "ScoreExtensions" in err.detail


def test_every_claimed_method_must_be_defined() -> None:
    class Forgot(_Events, fw.FilterPlugin, fw.ScorePlugin, fw.EnqueueExtensions):
        name: ClassVar[str] = "Forgot"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

        def filter(
            self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo
        ) -> fw.Status | None:
            return None

    err = check(Forgot)
    assert err.check == "methods-overridden" and "score()" in err.detail


def test_a_rejecting_plugin_declares_its_events() -> None:
    class Silent(fw.FilterPlugin):
        name: ClassVar[str] = "Silent"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

        def filter(
            self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo
        ) -> fw.Status | None:
            return None

    err = check(Silent)
    assert err.check == "enqueue-extensions" and "FilterPlugin" in err.detail


def test_events_must_be_cluster_events() -> None:
    class Odd(fw.FilterPlugin, fw.EnqueueExtensions):
        name: ClassVar[str] = "Odd"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

        def filter(
            self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo
        ) -> fw.Status | None:
            return None

        def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
            return ("NodeAdd",)  # type: ignore[return-value]

    assert check(Odd).check == "enqueue-extensions"


def test_queueing_hints_must_answer_a_hint() -> None:
    class BadHint(fw.FilterPlugin, fw.EnqueueExtensions):
        name: ClassVar[str] = "BadHint"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

        def filter(
            self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo
        ) -> fw.Status | None:
            return None

        def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
            return (
                fw.ClusterEventWithHint(
                    fw.ClusterEvent(fw.EventResource.NODE, fw.ActionType.ADD),
                    lambda pod, old, new: True,  # type: ignore[arg-type,return-value]
                ),
            )

    assert check(BadHint).check == "enqueue-extensions"


def test_scores_must_be_in_range() -> None:
    class Big(fw.ScorePlugin):
        name: ClassVar[str] = "Big"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

        def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
            return 100 + len(node_info.pods)

    err = check(Big)
    assert err.check == "score-range" and "(no normalize_score)" in err.detail


def test_raising_is_not_an_answer() -> None:
    class Raises(_Events, fw.FilterPlugin, fw.EnqueueExtensions):
        name: ClassVar[str] = "Raises"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

        def filter(
            self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo
        ) -> fw.Status | None:
            if node_info.pods:
                raise KeyError("boom")
            return None

    err = check(Raises)
    assert err.check == "allowed-codes" and "raised KeyError" in err.detail


def test_inputs_must_not_be_mutated() -> None:
    class Mutates(_Events, fw.FilterPlugin, fw.EnqueueExtensions):
        name: ClassVar[str] = "Mutates"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

        def filter(
            self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo
        ) -> fw.Status | None:
            node_info.requested["cpu"] = node_info.requested.get("cpu", 0) + 1
            return None

    err = check(Mutates)
    assert err.check == "no-mutation" and "NodeInfo of node-0" in err.detail
    assert "requested" in err.detail


def test_the_pod_must_not_be_mutated() -> None:
    class Labels(fw.PreScorePlugin, fw.ScorePlugin):
        name: ClassVar[str] = "Labels"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

        def pre_score(
            self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
        ) -> fw.Status | None:
            pod.labels["seen"] = "yes"
            return None

        def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
            return 0

    err = check(Labels)
    assert err.check == "no-mutation" and "the pod incoming" in err.detail


_counter = itertools.count()


def test_same_inputs_same_answers() -> None:
    class Flaky(fw.ScorePlugin):
        name: ClassVar[str] = "Flaky"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

        def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
            return next(_counter) % 100

    assert check(Flaky).check == "deterministic"


def test_handle_rng_is_deterministic() -> None:
    class Seeded(fw.ScorePlugin):
        name: ClassVar[str] = "Seeded"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            self._rng = handle.rng

        def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
            return self._rng.randrange(101)

    check_plugin(Seeded, max_examples=EXAMPLES)


_COUNT = fw.StateKey[list[int]]("Count")


class _Counting(_Events, fw.PreFilterPlugin, fw.FilterPlugin, fw.EnqueueExtensions):
    """Rejects nodes once the cluster holds 3 pods or more (counted in PreFilter)."""

    def __init__(self, args: None, handle: fw.Handle) -> None:
        pass

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        state[_COUNT] = [sum(len(ni.pods) for ni in nodes)]
        return None

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        if state[_COUNT][0] >= 3:
            return fw.Status(fw.Code.UNSCHEDULABLE, "crowded")
        return None


def test_prefilter_extensions_must_match_recomputation() -> None:
    class Forgetful(_Counting, fw.PreFilterExtensions):
        name: ClassVar[str] = "Forgetful"

        def add_pod(
            self,
            state: fw.CycleState,
            pod_to_schedule: Pod,
            pod_info_to_add: fw.PodInfo,
            node_info: fw.NodeInfo,
        ) -> fw.Status | None:
            return None  # forgets to count the pod

        def remove_pod(
            self,
            state: fw.CycleState,
            pod_to_schedule: Pod,
            pod_info_to_remove: fw.PodInfo,
            node_info: fw.NodeInfo,
        ) -> fw.Status | None:
            return None

    err = check(Forgetful)
    assert err.check == "prefilter-extensions"


def test_prefilter_extensions_that_copy_state_pass() -> None:
    class Careful(_Counting, fw.PreFilterExtensions):
        name: ClassVar[str] = "Careful"

        def add_pod(
            self,
            state: fw.CycleState,
            pod_to_schedule: Pod,
            pod_info_to_add: fw.PodInfo,
            node_info: fw.NodeInfo,
        ) -> fw.Status | None:
            state[_COUNT] = [state[_COUNT][0] + 1]
            return None

        def remove_pod(
            self,
            state: fw.CycleState,
            pod_to_schedule: Pod,
            pod_info_to_remove: fw.PodInfo,
            node_info: fw.NodeInfo,
        ) -> fw.Status | None:
            state[_COUNT] = [state[_COUNT][0] - 1]
            return None

    check_plugin(Careful, max_examples=EXAMPLES)


class _Reserving(_Events, fw.FilterPlugin, fw.ReservePlugin, fw.EnqueueExtensions):
    """Rejects every node while some pod is reserved."""

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self.reserved: dict[str, int] = {}

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        if any(self.reserved.values()):
            return fw.Status(fw.Code.UNSCHEDULABLE, "something is reserved")
        return None

    def reserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> fw.Status | None:
        self.reserved[pod.uid] = self.reserved.get(pod.uid, 0) + 1
        return None


def test_unreserve_must_undo_reserve() -> None:
    class Sticky(_Reserving):
        name: ClassVar[str] = "Sticky"

        def unreserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> None:
            pass

    assert check(Sticky).check == "reserve-symmetry"


def test_unreserve_must_be_idempotent() -> None:
    class Decrements(_Reserving):
        name: ClassVar[str] = "Decrements"

        def unreserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> None:
            self.reserved[pod.uid] = self.reserved.get(pod.uid, 0) - 1

    # Without a reserve first, the count goes negative: any() still sees it.
    err = check(Decrements)
    assert err.check in ("reserve-symmetry", "unreserve-idempotent")
    err = check(Decrements, skip=["reserve-symmetry"])
    assert err.check == "unreserve-idempotent"


def test_a_symmetric_reserve_passes() -> None:
    class Symmetric(_Reserving):
        name: ClassVar[str] = "Symmetric"

        def unreserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> None:
            self.reserved.pop(pod.uid, None)

    check_plugin(Symmetric, max_examples=EXAMPLES)


def test_permit_wait_needs_a_timeout() -> None:
    class Waits(_Events, fw.PermitPlugin, fw.EnqueueExtensions):
        name: ClassVar[str] = "Waits"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

        def permit(self, state: fw.CycleState, pod: Pod, node_name: str) -> fw.Status | None:
            return fw.Status(fw.Code.WAIT)

    err = check(Waits)
    assert err.check == "allowed-codes" and "timeout None" in err.detail


def test_queue_sort_must_be_a_strict_order() -> None:
    class Reflexive(fw.QueueSortPlugin):
        name: ClassVar[str] = "Reflexive"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

        def less(self, a: fw.QueuedPodInfo, b: fw.QueuedPodInfo) -> bool:
            return a.pod.priority >= b.pod.priority

    err = check(Reflexive)
    assert err.check == "allowed-codes" and "less(a, a)" in err.detail


class _HighFirst(fw.QueueSortPlugin):
    name: ClassVar[str] = "HighFirst"

    def __init__(self, args: None, handle: fw.Handle) -> None:
        pass

    def less(self, a: fw.QueuedPodInfo, b: fw.QueuedPodInfo) -> bool:
        p1, p2 = a.pod.priority, b.pod.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)


def test_queue_sort_key_must_agree_with_less() -> None:
    class LateFirstKey(_HighFirst):
        name: ClassVar[str] = "LateFirstKey"

        def sort_key(self, qpi: fw.QueuedPodInfo) -> tuple[int, float]:
            return (-qpi.pod.priority, -qpi.timestamp)  # ties the wrong way round

    err = check(LateFirstKey)
    assert err.check == "sort-key" and "sort keys" in err.detail
    check_plugin(LateFirstKey, max_examples=EXAMPLES, skip=["sort-key"])


def test_queue_sort_with_an_agreeing_key_or_none_passes() -> None:
    class Keyed(_HighFirst):
        name: ClassVar[str] = "Keyed"

        def sort_key(self, qpi: fw.QueuedPodInfo) -> tuple[int, float]:
            return (-qpi.pod.priority, qpi.timestamp)

    check_plugin(Keyed, max_examples=EXAMPLES)
    check_plugin(_HighFirst, max_examples=EXAMPLES)


@attrs.frozen(kw_only=True)
class NoDefaultArgs:
    """An args class whose field has no default."""

    limit: int


def test_args_need_defaults() -> None:
    class NeedsArgs(_Events, fw.FilterPlugin, fw.EnqueueExtensions):
        name: ClassVar[str] = "NeedsArgs"
        args_type: ClassVar[type] = NoDefaultArgs

        def __init__(self, args: NoDefaultArgs, handle: fw.Handle) -> None:
            pass

        def filter(
            self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo
        ) -> fw.Status | None:
            return None

    err = check(NeedsArgs, args={"limit": 1})
    assert err.check == "args" and "decoding empty args failed" in err.detail


def test_invalid_args_must_be_rejected() -> None:
    err = check(Good, invalid_args=[{"maxPods": 5}])
    assert err.check == "args" and "was accepted" in err.detail


def test_unknown_checks_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown checks"):
        check_plugin(Good, skip=["typo"])


def test_skipping_a_check() -> None:
    class Big(fw.ScorePlugin):
        name: ClassVar[str] = "BigSkipped"

        def __init__(self, args: None, handle: fw.Handle) -> None:
            pass

        def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
            return 1000

    check_plugin(Big, max_examples=5, skip=["score-range"])


class _GoodBatch(Good):
    """Good, with batch forms that agree with its per-node methods."""

    name: ClassVar[str] = "GoodBatch"

    def filter_batch(self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns) -> Any:
        import numpy as np

        full = columns.num_pods >= self._max
        return np.where(full, np.int8(fw.FILTER_REJECT), np.int8(fw.FILTER_PASS))

    def score_batch(
        self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns, rows: Any
    ) -> Any:
        return columns.num_pods[rows].astype("int64") * 1000

    def normalize_batch(self, state: fw.CycleState, pod: Pod, scores: Any) -> Any:
        top = int(scores.max()) if len(scores) else 0
        return 100 - 100 * scores // (top or 1)


def test_batch_forms_that_agree_pass() -> None:
    check_plugin(_GoodBatch, max_examples=EXAMPLES)


def test_a_batch_filter_passing_a_node_filter_rejects_fails() -> None:
    class LaxBatch(_GoodBatch):
        name: ClassVar[str] = "LaxBatch"

        def filter_batch(self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns) -> Any:
            import numpy as np

            return np.zeros(columns.size, dtype=np.int8)  # passes every node

    err = check(LaxBatch)
    assert err.check == "batch-forms"
    assert "filter_batch passes" in err.detail and "too many pods here" in err.detail


def test_a_batch_score_differing_from_score_fails() -> None:
    class OffByOne(_GoodBatch):
        name: ClassVar[str] = "OffByOne"

        def score_batch(
            self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns, rows: Any
        ) -> Any:
            return columns.num_pods[rows].astype("int64") * 1000 + 1

    err = check(OffByOne)
    assert err.check == "batch-forms" and err.detail.startswith("score_batch gives")


def test_a_raising_batch_form_fails() -> None:
    class Broken(_GoodBatch):
        name: ClassVar[str] = "Broken"

        def filter_batch(self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns) -> Any:
            raise ValueError("no columns today")

    err = check(Broken)
    assert err.check == "batch-forms"
    assert err.detail == "filter_batch raised ValueError: no columns today"


def test_batch_forms_can_be_skipped() -> None:
    class LaxBatch(_GoodBatch):
        name: ClassVar[str] = "LaxBatch2"

        def filter_batch(self, state: fw.CycleState, pod: Pod, columns: fw.NodeColumns) -> Any:
            import numpy as np

            return np.zeros(columns.size, dtype=np.int8)

    check_plugin(LaxBatch, max_examples=EXAMPLES, skip=["batch-forms"])
