"""Framework: building from a profile (upstream NewFramework) and running every extension point."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import pytest

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.config import PluginConfig, PluginRef, Plugins, PluginSet, Profile
from schedframe.errors import ConfigError, PluginError
from schedframe.framework import Code, CycleState, NodeInfo, Status
from schedframe.objects import Node, Pod, node_from_dict, pod_from_dict
from schedframe.runtime import Framework, Registry

# --------------------------------------------------------------------------------------------
# Test plugins (the upstream test file's testPlugin / scorePlugin1 / ... shapes)
# --------------------------------------------------------------------------------------------


class AllPoints(
    fw.QueueSortPlugin,
    fw.PreFilterPlugin,
    fw.FilterPlugin,
    fw.PostFilterPlugin,
    fw.PreScorePlugin,
    fw.ScorePlugin,
    fw.ReservePlugin,
    fw.PermitPlugin,
    fw.PreBindPlugin,
    fw.BindPlugin,
    fw.PostBindPlugin,
):
    """Implements every point but PreEnqueue, like upstream's testPlugin."""

    name: ClassVar[str] = "TestPlugin"

    def __init__(self, args: object, handle: fw.Handle) -> None:
        self.args = args

    def less(self, a: fw.QueuedPodInfo, b: fw.QueuedPodInfo) -> bool:
        return False

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> None:
        return None

    def post_filter(
        self, state: CycleState, pod: Pod, m: fw.NodeToStatus
    ) -> tuple[fw.PostFilterResult | None, Status | None]:
        return None, None

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> None:
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 0

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None


class _Scorer(fw.PreScorePlugin, fw.ScorePlugin):
    name: ClassVar[str] = "ScorePlugin1"

    def __init__(self, args: object, handle: fw.Handle) -> None:
        pass

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> None:
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 1


class ScorePlugin2(_Scorer):
    name: ClassVar[str] = "ScorePlugin2"


class ScoreWithNormalize(_Scorer, fw.ScoreExtensions):
    name: ClassVar[str] = "ScoreWithNormalizePlugin1"

    def normalize_score(self, state: CycleState, pod: Pod, scores: fw.NodeScoreList) -> None:
        return None


class QueueSortOnly(fw.QueueSortPlugin):
    name: ClassVar[str] = "QueueSortPlugin"

    def __init__(self, args: object, handle: fw.Handle) -> None:
        pass

    def less(self, a: fw.QueuedPodInfo, b: fw.QueuedPodInfo) -> bool:
        return a.pod.priority > b.pod.priority


class BindOnly(fw.BindPlugin):
    name: ClassVar[str] = "BindPlugin"

    def __init__(self, args: object, handle: fw.Handle) -> None:
        pass

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None


def registry() -> Registry:
    return Registry(
        {
            "TestPlugin": AllPoints,
            "ScorePlugin1": _Scorer,
            "ScorePlugin2": ScorePlugin2,
            "ScoreWithNormalizePlugin1": ScoreWithNormalize,
            "QueueSortPlugin": QueueSortOnly,
            "BindPlugin": BindOnly,
        }
    )


def refs(*items: str | tuple[str, int]) -> list[PluginRef]:
    return [
        PluginRef(name=i) if isinstance(i, str) else PluginRef(name=i[0], weight=i[1])
        for i in items
    ]


def profile(**sets: PluginSet) -> Profile:
    return Profile(plugins=Plugins(**sets))


# --------------------------------------------------------------------------------------------
# multiPoint expansion: upstream TestNewFrameworkMultiPointExpansion, as data
# --------------------------------------------------------------------------------------------

_ALL_BUT_SCORE = {
    "queue_sort": [("TestPlugin", None)],
    "pre_filter": [("TestPlugin", None)],
    "filter": [("TestPlugin", None)],
    "post_filter": [("TestPlugin", None)],
    "reserve": [("TestPlugin", None)],
    "permit": [("TestPlugin", None)],
    "pre_bind": [("TestPlugin", None)],
    "bind": [("TestPlugin", None)],
    "post_bind": [("TestPlugin", None)],
}

MULTIPOINT_CASES = [
    pytest.param(
        {"multi_point": PluginSet(enabled=refs(("TestPlugin", 5)))},
        {
            **_ALL_BUT_SCORE,
            "pre_score": [("TestPlugin", None)],
            "score": [("TestPlugin", 5)],
        },
        id="plugin expansion",
    ),
    pytest.param(
        {
            "multi_point": PluginSet(enabled=refs("TestPlugin")),
            "pre_score": PluginSet(disabled=refs("TestPlugin")),
            "score": PluginSet(disabled=refs("TestPlugin")),
        },
        _ALL_BUT_SCORE,
        id="disable MultiPoint plugin at some extension points",
    ),
    pytest.param(
        {"multi_point": PluginSet(enabled=refs("TestPlugin", "ScorePlugin1"))},
        {
            **_ALL_BUT_SCORE,
            "pre_score": [("TestPlugin", None), ("ScorePlugin1", None)],
            "score": [("TestPlugin", 1), ("ScorePlugin1", 1)],
        },
        id="Multiple MultiPoint plugins",
    ),
    pytest.param(
        {
            "multi_point": PluginSet(enabled=refs("TestPlugin", "ScorePlugin1")),
            "pre_score": PluginSet(disabled=refs("*")),
        },
        {**_ALL_BUT_SCORE, "score": [("TestPlugin", 1), ("ScorePlugin1", 1)]},
        id="disable MultiPoint extension",
    ),
    pytest.param(
        {
            "multi_point": PluginSet(
                enabled=refs("ScoreWithNormalizePlugin1", "TestPlugin", "ScorePlugin1")
            ),
            "score": PluginSet(enabled=refs("ScorePlugin1", "TestPlugin")),
        },
        {
            **_ALL_BUT_SCORE,
            "pre_score": [
                ("ScoreWithNormalizePlugin1", None),
                ("TestPlugin", None),
                ("ScorePlugin1", None),
            ],
            "score": [("ScorePlugin1", 1), ("TestPlugin", 1), ("ScoreWithNormalizePlugin1", 1)],
        },
        id="Reorder MultiPoint plugins (specified extension takes precedence)",
    ),
    pytest.param(
        {
            "multi_point": PluginSet(enabled=refs("TestPlugin", "ScorePlugin1")),
            "score": PluginSet(
                enabled=refs("ScoreWithNormalizePlugin1", "ScorePlugin1", "TestPlugin")
            ),
        },
        {
            **_ALL_BUT_SCORE,
            "pre_score": [("TestPlugin", None), ("ScorePlugin1", None)],
            "score": [("ScorePlugin1", 1), ("TestPlugin", 1), ("ScoreWithNormalizePlugin1", 1)],
        },
        id="Reorder MultiPoint plugins (specified extension only takes precedence when it exists in MultiPoint)",
    ),
    pytest.param(
        {
            "multi_point": PluginSet(enabled=refs("TestPlugin", "ScorePlugin1")),
            "score": PluginSet(enabled=refs(("ScorePlugin1", 5), ("TestPlugin", 3))),
        },
        {
            **_ALL_BUT_SCORE,
            "pre_score": [("TestPlugin", None), ("ScorePlugin1", None)],
            "score": [("ScorePlugin1", 5), ("TestPlugin", 3)],
        },
        id="Override MultiPoint plugins weights",
    ),
    pytest.param(
        {
            "multi_point": PluginSet(
                enabled=refs("QueueSortPlugin", "BindPlugin", "ScorePlugin1"),
                disabled=refs("*"),
            )
        },
        {
            "queue_sort": [("QueueSortPlugin", None)],
            "pre_score": [("ScorePlugin1", None)],
            "score": [("ScorePlugin1", 1)],
            "bind": [("BindPlugin", None)],
        },
        id="disable and enable MultiPoint plugins with '*'",
    ),
    pytest.param(
        {
            "multi_point": PluginSet(
                enabled=refs("BindPlugin", "QueueSortPlugin", "ScorePlugin1"),
                disabled=refs("ScorePlugin1"),
            )
        },
        {
            "queue_sort": [("QueueSortPlugin", None)],
            "pre_score": [("ScorePlugin1", None)],
            "score": [("ScorePlugin1", 1)],
            "bind": [("BindPlugin", None)],
        },
        id="disable and enable MultiPoint plugin by name",
    ),
    pytest.param(
        {
            "multi_point": PluginSet(enabled=refs("TestPlugin", "ScorePlugin1")),
            "score": PluginSet(
                enabled=refs(("ScorePlugin1", 5), ("ScorePlugin2", 5), ("TestPlugin", 3))
            ),
        },
        {
            **_ALL_BUT_SCORE,
            "pre_score": [("TestPlugin", None), ("ScorePlugin1", None)],
            "score": [("ScorePlugin1", 5), ("TestPlugin", 3), ("ScorePlugin2", 5)],
        },
        id="Override MultiPoint plugins weights and avoid a plugin being loaded multiple times",
    ),
]


@pytest.mark.parametrize(("sets", "want"), MULTIPOINT_CASES)
def test_multi_point_expansion(sets: dict[str, PluginSet], want: dict[str, Any]) -> None:
    fwk = Framework.from_profile(profile(**sets), registry())
    assert fwk.list_plugins() == want


def test_multi_point_double_registration_is_an_error() -> None:
    with pytest.raises(ConfigError) as err:
        Framework.from_profile(
            profile(multi_point=PluginSet(enabled=refs("TestPlugin", "TestPlugin"))), registry()
        )
    assert 'plugin "TestPlugin" already registered as "QueueSortPlugin"' in str(err.value)
    assert err.value.paths[0] == "profiles[0].plugins.multiPoint.enabled[1].name"


def test_one_instance_per_plugin_shared_by_all_points() -> None:
    fwk = Framework.from_profile(
        profile(multi_point=PluginSet(enabled=refs("TestPlugin"))), registry()
    )
    shared: list[object] = [fwk.filter_plugins[0], fwk.score_plugins[0], fwk.bind_plugins[0]]
    assert len({id(plugin) for plugin in shared}) == 1


# --------------------------------------------------------------------------------------------
# Build errors: paths and messages
# --------------------------------------------------------------------------------------------


def test_unknown_plugin_names_path_and_lists_available() -> None:
    with pytest.raises(ConfigError) as err:
        Framework.from_profile(
            profile(
                multi_point=PluginSet(enabled=refs("TestPlugin")),
                filter=PluginSet(enabled=refs("Nope")),
            ),
            registry(),
            source="cfg.yaml",
        )
    text = str(err.value)
    assert text.startswith(
        'cfg.yaml: profiles[0].plugins.filter.enabled[0].name: Not found: "Nope": '
        'no plugin named "Nope" is installed; available: BindPlugin, QueueSortPlugin,'
    )


def test_plugin_enabled_at_a_point_it_does_not_implement() -> None:
    with pytest.raises(ConfigError) as err:
        Framework.from_profile(
            profile(
                multi_point=PluginSet(enabled=refs("TestPlugin")),
                filter=PluginSet(enabled=refs("ScorePlugin1")),
            ),
            registry(),
        )
    assert str(err.value) == (
        'profiles[0].plugins.filter.enabled[0].name: Invalid value: "ScorePlugin1": '
        'plugin "ScorePlugin1" does not extend FilterPlugin plugin'
    )


def test_queue_sort_and_bind_are_required() -> None:
    with pytest.raises(ConfigError) as err:
        Framework.from_profile(profile(bind=PluginSet(enabled=refs("BindPlugin"))), registry())
    assert str(err.value) == (
        "profiles[0].plugins.queueSort: Invalid value: only one queue sort plugin required for "
        'profile with scheduler name "default-scheduler", but got 0'
    )
    with pytest.raises(ConfigError) as err:
        Framework.from_profile(
            profile(queue_sort=PluginSet(enabled=refs("QueueSortPlugin"))), registry()
        )
    assert "at least one bind plugin is needed" in str(err.value)


def test_args_for_a_plugin_without_args_type_is_an_error() -> None:
    prof = Profile(
        plugins=Plugins(multi_point=PluginSet(enabled=refs("TestPlugin"))),
        plugin_config=[PluginConfig(name="TestPlugin", args={"x": 1})],
    )
    with pytest.raises(ConfigError) as err:
        Framework.from_profile(prof, registry())
    assert str(err.value) == (
        "profiles[0].pluginConfig[0].args: Invalid value: plugin TestPlugin takes no arguments"
    )


def test_factory_failure_is_a_plugin_error_naming_the_plugin() -> None:
    def broken(args: object, handle: fw.Handle) -> fw.Plugin:
        raise RuntimeError("no GPU driver")

    reg = registry()
    reg.register("Broken", broken)
    with pytest.raises(
        PluginError, match='initializing plugin "Broken": RuntimeError: no GPU driver'
    ):
        Framework.from_profile(
            profile(
                multi_point=PluginSet(enabled=refs("TestPlugin")),
                filter=PluginSet(enabled=refs("Broken")),
            ),
            reg,
        )


def test_score_weight_overflow() -> None:
    huge = (1 << 63) // 100
    with pytest.raises(ConfigError, match="total score of Score plugins could overflow"):
        Framework.from_profile(
            profile(
                multi_point=PluginSet(enabled=refs("TestPlugin")),
                score=PluginSet(enabled=refs(("ScorePlugin1", huge), ("ScorePlugin2", huge))),
            ),
            registry(),
        )


# --------------------------------------------------------------------------------------------
# Running the points, with plugins that return what they are told
# --------------------------------------------------------------------------------------------


def make_pod(name: str = "p", priority: int = 0, uid: str | None = None) -> Pod:
    return pod_from_dict(
        {
            "metadata": {"name": name, "namespace": "default", "uid": uid or name},
            "spec": {"priority": priority, "containers": [{"name": "c"}]},
        }
    )


def make_node(name: str) -> Node:
    return node_from_dict({"metadata": {"name": name}, "status": {"capacity": {"pods": "10"}}})


class Scripted(fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin, fw.ScorePlugin):
    """Answers each point from a script; records calls."""

    name: ClassVar[str] = "Scripted"

    def __init__(self, name: str, **script: Any) -> None:
        self.name = name  # type: ignore[misc]
        self.script = script
        self.calls: list[str] = []

    def _answer(self, point: str, *key: str) -> Any:
        self.calls.append(":".join((point, *key)))
        value = self.script.get(point)
        if callable(value):
            return value(*key)
        if isinstance(value, BaseException):
            raise value
        return value

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Any:
        return self._answer("pre_filter")

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Any:
        return self._answer("filter", node_info.name)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Any:
        return self._answer("pre_score")

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return int(self._answer("score", node_info.name) or 0)


class Normalizing(Scripted, fw.ScoreExtensions):
    def normalize_score(self, state: CycleState, pod: Pod, scores: fw.NodeScoreList) -> Any:
        fn = self.script.get("normalize")
        return fn(scores) if fn else None


def framework_with(*plugins: fw.Plugin, weights: dict[str, int] | None = None) -> Framework:
    snap = Snapshot.from_objects([make_node("n1"), make_node("n2"), make_node("n3")])
    fwk = Framework(snapshot=snap)
    for p in plugins:
        fwk.add_plugin(p, weight=(weights or {}).get(p.name, 1))
    return fwk


def test_pre_filter_skip_skips_that_plugins_filter() -> None:
    a = Scripted("A", pre_filter=Status(Code.SKIP), filter=Status(Code.UNSCHEDULABLE, "no"))
    fwk = framework_with(a)
    state = CycleState()
    result, status, _ = fwk.run_pre_filter_plugins(state, make_pod())
    assert (result, status) == (None, None)
    assert state.skip_filter_plugins == {"A"}
    assert fwk.run_filter_plugins(state, make_pod(), fwk.snapshot_shared_lister().get("n1")) is None
    assert a.calls == ["pre_filter"]


class Extended(Scripted, fw.PreFilterExtensions):
    """A Scripted plugin with AddPod/RemovePod extensions."""

    def add_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_add: fw.PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        return None

    def remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: fw.PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        return None


def test_cycle_plugins_leave_out_what_pre_filter_skipped() -> None:
    a = Scripted("A", pre_filter=Status(Code.SKIP))
    b = Extended("B", pre_filter=None)
    c = Scripted("C", pre_filter=None)
    fwk = framework_with(a, b, c)
    state = CycleState()
    fwk.run_pre_filter_plugins(state, make_pod())
    assert [p.name for p in fwk.cycle_filter_plugins(state)] == ["B", "C"]
    assert fwk.cycle_has_pre_filter_extensions(state)
    b.script["pre_filter"] = Status(Code.SKIP)
    state = CycleState()
    fwk.run_pre_filter_plugins(state, make_pod())
    assert [p.name for p in fwk.cycle_filter_plugins(state)] == ["C"]
    assert not fwk.cycle_has_pre_filter_extensions(state)


def test_pre_filter_unschedulable_runs_remaining_plugins_then_reports_it() -> None:
    a = Scripted("A", pre_filter=Status(Code.UNSCHEDULABLE, "a says no"))
    b = Scripted("B", pre_filter=None)
    fwk = framework_with(a, b)
    _, status, _ = fwk.run_pre_filter_plugins(CycleState(), make_pod())
    assert status == Status(Code.UNSCHEDULABLE, "a says no", plugin="A")
    assert b.calls == ["pre_filter"]


def test_pre_filter_unresolvable_stops_at_once() -> None:
    a = Scripted("A", pre_filter=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "never"))
    b = Scripted("B", pre_filter=None)
    fwk = framework_with(a, b)
    _, status, _ = fwk.run_pre_filter_plugins(CycleState(), make_pod())
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "never", plugin="A")
    assert b.calls == []


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (Status(Code.ERROR, "disk on fire"), 'running PreFilter plugin "A": disk on fire'),
        (Status(Code.WAIT), 'running PreFilter plugin "A": Wait'),
        (ValueError("bad"), 'running PreFilter plugin "A": ValueError: bad'),
    ],
)
def test_pre_filter_errors_and_exceptions_become_error_status(answer: Any, message: str) -> None:
    fwk = framework_with(Scripted("A", pre_filter=answer))
    _, status, _ = fwk.run_pre_filter_plugins(CycleState(), make_pod())
    assert status is not None and status.code is Code.ERROR
    assert status.plugin == "A"
    assert status.message() == message


def test_pre_filter_results_intersect() -> None:
    a = Scripted("A", pre_filter=fw.PreFilterResult(frozenset({"n1", "n2"})))
    b = Scripted("B", pre_filter=fw.PreFilterResult(frozenset({"n2", "n3"})))
    fwk = framework_with(a, b)
    result, status, with_nodes = fwk.run_pre_filter_plugins(CycleState(), make_pod())
    assert status is None
    assert result == fw.PreFilterResult(frozenset({"n2"}))
    assert with_nodes == {"A", "B"}


@pytest.mark.parametrize(
    ("results", "message"),
    [
        ([frozenset()], "node(s) didn't satisfy plugin A"),
        (
            [frozenset({"n1"}), frozenset({"n2"})],
            "node(s) didn't satisfy plugin(s) [A B] simultaneously",
        ),
    ],
)
def test_pre_filter_empty_intersection_is_unresolvable(
    results: list[frozenset[str]], message: str
) -> None:
    plugins = [
        Scripted(name, pre_filter=fw.PreFilterResult(r))
        for name, r in zip("AB", results, strict=False)
    ]
    fwk = framework_with(*plugins)
    _, status, _ = fwk.run_pre_filter_plugins(CycleState(), make_pod())
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


def test_filter_first_failure_wins_and_names_plugin() -> None:
    a = Scripted("A", filter=Status(Code.UNSCHEDULABLE, "Insufficient cpu"))
    b = Scripted("B", filter=Status(Code.UNSCHEDULABLE, "never reached"))
    fwk = framework_with(a, b)
    status = fwk.run_filter_plugins(
        CycleState(), make_pod(), fwk.snapshot_shared_lister().get("n1")
    )
    assert status == Status(Code.UNSCHEDULABLE, "Insufficient cpu", plugin="A")
    assert b.calls == []


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (Status(Code.WAIT, "w"), 'running "A" filter plugin: w'),
        (Status(Code.SKIP), 'running "A" filter plugin: Skip'),
        (KeyError("k"), "running \"A\" filter plugin: KeyError: 'k'"),
    ],
)
def test_filter_non_rejection_codes_and_exceptions_are_errors(answer: Any, message: str) -> None:
    fwk = framework_with(Scripted("A", filter=answer))
    status = fwk.run_filter_plugins(
        CycleState(), make_pod(), fwk.snapshot_shared_lister().get("n1")
    )
    assert status is not None and status.code is Code.ERROR and status.plugin == "A"
    assert status.message() == message


def test_filter_pending_is_a_rejection() -> None:
    fwk = framework_with(Scripted("A", filter=Status(Code.PENDING, "wait for claim")))
    status = fwk.run_filter_plugins(
        CycleState(), make_pod(), fwk.snapshot_shared_lister().get("n1")
    )
    assert status == Status(Code.PENDING, "wait for claim", plugin="A")


def test_pre_score_skip_skips_score() -> None:
    a = Scripted("A", pre_score=Status(Code.SKIP), score=lambda n: 50)
    b = Scripted("B", score=lambda n: {"n1": 10, "n2": 20, "n3": 30}[n])
    fwk = framework_with(a, b, weights={"B": 2})
    state = CycleState()
    nodes = fwk.snapshot_shared_lister().list()
    assert fwk.run_pre_score_plugins(state, make_pod(), nodes) is None
    assert state.skip_score_plugins == {"A"}
    scores, status = fwk.run_score_plugins(state, make_pod(), nodes)
    assert status is None and scores is not None
    assert scores.totals == [20, 40, 60]
    assert [ps.plugin for ps in scores.by_plugin] == ["B"]


def test_pre_score_failure_is_an_error() -> None:
    fwk = framework_with(Scripted("A", pre_score=Status(Code.UNSCHEDULABLE, "x")))
    status = fwk.run_pre_score_plugins(CycleState(), make_pod(), [])
    assert status is not None and status.code is Code.ERROR
    assert status.message() == 'running PreScore plugin "A": x'


def test_normalize_weights_and_raw_scores() -> None:
    def halve(scores: fw.NodeScoreList) -> None:
        scores.scores[:] = [s // 2 for s in scores.scores]

    a = Normalizing("A", score=lambda n: {"n1": 200, "n2": 100, "n3": 0}[n], normalize=halve)
    fwk = framework_with(a, weights={"A": 3})
    nodes = fwk.snapshot_shared_lister().list()
    scores, status = fwk.run_score_plugins(CycleState(), make_pod(), nodes, keep_raw=True)
    assert status is None and scores is not None
    assert scores.names == ["n1", "n2", "n3"]
    assert scores.by_plugin[0].raw == [200, 100, 0]
    assert scores.by_plugin[0].normalized == [100, 50, 0]
    assert scores.totals == [300, 150, 0]


def test_score_out_of_range_after_normalize_is_an_error() -> None:
    fwk = framework_with(Scripted("A", score=lambda n: 101))
    scores, status = fwk.run_score_plugins(
        CycleState(), make_pod(), fwk.snapshot_shared_lister().list()
    )
    assert scores is None and status is not None
    assert status.message() == (
        'applying score defaultWeights on Score plugins: plugin "A" returns an invalid score '
        "101, it should in the range of [0, 100] after normalizing"
    )


@pytest.mark.parametrize(
    ("values", "dtype", "outside"),
    [
        ([0, 50, 100], "int64", False),
        ([0, 101], "int64", True),
        ([-1, 50], "int64", True),
        ([-(2**63), 0], "int64", True),
        ([2**63 - 1], "int64", True),
        ([-1, 50], "int32", True),
        ([0, 100], "int32", False),
        ([100.5], "float64", True),
        ([-0.5], "float64", True),
    ],
)
def test_batch_scores_outside_the_range_are_found(
    values: list[float], dtype: str, outside: bool
) -> None:
    import numpy as np

    from schedframe.runtime._batch import _outside_score_range

    assert _outside_score_range(np.array(values, dtype=dtype)) is outside


def test_error_status_keeps_the_prefix_and_the_cause() -> None:
    boom = ValueError("bad")
    fwk = framework_with(Scripted("A", filter=boom))
    status = fwk.run_filter_plugins(
        CycleState(), make_pod(), fwk.snapshot_shared_lister().get("n1")
    )
    assert status is not None
    err = status.as_error()
    assert str(err) == 'running "A" filter plugin: ValueError: bad'
    assert err is not None and err.__cause__ is boom


def test_score_plugin_raising_is_an_error_naming_it() -> None:
    fwk = framework_with(Scripted("A", score=ZeroDivisionError("division by zero")))
    _, status = fwk.run_score_plugins(CycleState(), make_pod(), fwk.snapshot_shared_lister().list())
    assert status is not None and status.code is Code.ERROR and status.plugin == "A"
    assert status.message() == (
        # The plugin's own message, as upstream prints it (no Python exception type).
        'running Score plugins: plugin "A" failed with: division by zero'
    )


# -- PostFilter ------------------------------------------------------------------------------


class PostF(fw.PostFilterPlugin):
    def __init__(self, name: str, result: Any, status: Any) -> None:
        self.name = name
        self.out = (result, status)
        self.called = False

    def post_filter(self, state: CycleState, pod: Pod, m: fw.NodeToStatus) -> Any:
        self.called = True
        if isinstance(self.out[1], BaseException):
            raise self.out[1]
        return self.out


def test_post_filter_first_success_wins() -> None:
    nominate = fw.PostFilterResult(fw.NominatingInfo("n1", fw.NominatingMode.OVERRIDE))
    a = PostF("A", None, Status(Code.UNSCHEDULABLE, "a"))
    b = PostF("B", nominate, None)
    c = PostF("C", None, None)
    fwk = framework_with(a, b, c)
    result, status = fwk.run_post_filter_plugins(CycleState(), make_pod(), fw.NodeToStatus())
    assert result == nominate and status.is_success()
    assert not c.called


def test_post_filter_gathers_reasons_and_keeps_last_non_noop_result() -> None:
    clear = fw.PostFilterResult(fw.NominatingInfo("", fw.NominatingMode.OVERRIDE))
    a = PostF("A", clear, Status(Code.UNSCHEDULABLE, "a1"))
    b = PostF("B", None, Status(Code.UNSCHEDULABLE, "b1", "b2"))
    fwk = framework_with(a, b)
    result, status = fwk.run_post_filter_plugins(CycleState(), make_pod(), fw.NodeToStatus())
    assert result == clear
    assert status == Status(Code.UNSCHEDULABLE, "a1", "b1", "b2", plugin="A")


def test_post_filter_unresolvable_and_error_stop() -> None:
    a = PostF("A", None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "stop"))
    b = PostF("B", None, None)
    fwk = framework_with(a, b)
    _, status = fwk.run_post_filter_plugins(CycleState(), make_pod(), fw.NodeToStatus())
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "stop", plugin="A")
    assert not b.called
    fwk = framework_with(PostF("E", None, RuntimeError("x")))
    _, status = fwk.run_post_filter_plugins(CycleState(), make_pod(), fw.NodeToStatus())
    assert status.code is Code.ERROR and status.plugin == "E"


# -- Reserve / Permit / Bind -----------------------------------------------------------------


class Binding(
    fw.ReservePlugin, fw.PermitPlugin, fw.PreBindPlugin, fw.BindPlugin, fw.PostBindPlugin
):
    def __init__(self, name: str, log: list[str], **script: Any) -> None:
        self.name = name
        self.log = log
        self.script = script

    def _do(self, point: str) -> Any:
        self.log.append(f"{point}:{self.name}")
        value = self.script.get(point)
        if isinstance(value, BaseException):
            raise value
        return value

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Any:
        return self._do("reserve")

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self._do("unreserve")

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Any:
        return self._do("permit")

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Any:
        return self._do("pre_bind")

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Any:
        return self._do("bind")

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self._do("post_bind")


def test_reserve_stops_at_first_failure_and_unreserve_runs_in_reverse() -> None:
    log: list[str] = []
    a = Binding("A", log)
    b = Binding("B", log, reserve=Status(Code.UNSCHEDULABLE, "taken"))
    c = Binding("C", log, unreserve=RuntimeError("ignored"))
    fwk = framework_with(a, b, c)
    status = fwk.run_reserve_plugins_reserve(CycleState(), make_pod(), "n1")
    assert status == Status(Code.UNSCHEDULABLE, "taken", plugin="B")
    fwk.run_reserve_plugins_unreserve(CycleState(), make_pod(), "n1")
    assert log == ["reserve:A", "reserve:B", "unreserve:C", "unreserve:B", "unreserve:A"]


def test_reserve_error_is_wrapped() -> None:
    fwk = framework_with(Binding("A", [], reserve=Status(Code.ERROR, "quota service down")))
    status = fwk.run_reserve_plugins_reserve(CycleState(), make_pod(), "n1")
    assert status is not None and status.code is Code.ERROR
    assert status.message() == 'running Reserve plugin "A": quota service down'


def test_bind_skip_moves_to_next_bind_plugin() -> None:
    log: list[str] = []
    fwk = framework_with(
        Binding("A", log, bind=Status(Code.SKIP)), Binding("B", log), Binding("C", log)
    )
    assert fwk.run_bind_plugins(CycleState(), make_pod(), "n1") is None
    assert [e for e in log if e.startswith("bind")] == ["bind:A", "bind:B"]


def test_bind_all_skip_returns_skip_and_error_is_wrapped() -> None:
    fwk = framework_with(Binding("A", [], bind=Status(Code.SKIP)))
    status = fwk.run_bind_plugins(CycleState(), make_pod(), "n1")
    assert status is not None and status.is_skip()
    assert Framework().run_bind_plugins(CycleState(), make_pod(), "n1") == Status(Code.SKIP)
    fwk = framework_with(Binding("A", [], bind=Status(Code.ERROR, "409")))
    status = fwk.run_bind_plugins(CycleState(), make_pod(), "n1")
    assert status is not None and status.message() == 'running Bind plugin "A": 409'


def test_pre_bind_rejection_keeps_code_and_post_bind_failure_is_contained() -> None:
    log: list[str] = []
    fwk = framework_with(
        Binding(
            "A",
            log,
            pre_bind=Status(Code.UNSCHEDULABLE, "volume gone"),
            post_bind=RuntimeError("x"),
        ),
        Binding("B", log),
    )
    status = fwk.run_pre_bind_plugins(CycleState(), make_pod(), "n1")
    assert status == Status(Code.UNSCHEDULABLE, "volume gone", plugin="A")
    fwk.run_post_bind_plugins(CycleState(), make_pod(), "n1")
    assert log[-2:] == ["post_bind:A", "post_bind:B"]


class ManualTimers:
    """Timers fired by hand, to test Permit timeouts without sleeping."""

    def __init__(self) -> None:
        self.pending: list[tuple[float, Any, list[bool]]] = []

    def call_later(self, delay: float, callback: Any) -> Any:
        cancelled = [False]
        self.pending.append((delay, callback, cancelled))

        class Handle:
            def cancel(self) -> None:
                cancelled[0] = True

        return Handle()

    def fire_all(self) -> None:
        for _, cb, cancelled in list(self.pending):
            if not cancelled[0]:
                cb()


def test_permit_wait_then_allow_by_every_waiting_plugin() -> None:
    timers = ManualTimers()
    fwk = Framework(timers=timers)
    fwk.add_plugin(Binding("A", [], permit=Status.wait(10)))
    fwk.add_plugin(Binding("B", [], permit=Status.wait(20)))
    pod = make_pod()
    status = fwk.run_permit_plugins(CycleState(), pod, "n1")
    assert status == Status(
        Code.WAIT, 'one or more plugins asked to wait and no plugin rejected pod "p"'
    )
    outcome: list[Status | None] = []
    fwk.when_permitted(pod, outcome.append)
    wp = fwk.get_waiting_pod(pod.uid)
    assert wp is not None and sorted(wp.pending_plugins()) == ["A", "B"]
    wp.allow("A")
    assert outcome == []
    wp.allow("B")
    assert outcome == [None]
    assert fwk.get_waiting_pod(pod.uid) is None
    timers.fire_all()  # cancelled timers do nothing
    assert outcome == [None]


def test_permit_timeout_rejects_with_upstream_message_and_caps_at_15_minutes() -> None:
    timers = ManualTimers()
    fwk = Framework(timers=timers)
    fwk.add_plugin(Binding("A", [], permit=Status.wait(3600)))
    pod = make_pod()
    fwk.run_permit_plugins(CycleState(), pod, "n1")
    assert [d for d, _, _ in timers.pending] == [900.0]
    outcome: list[Status | None] = []
    fwk.when_permitted(pod, outcome.append)
    timers.fire_all()
    assert outcome == [
        Status(
            Code.UNSCHEDULABLE,
            "rejected due to timeout after waiting 15m0s at plugin A",
            plugin="A",
        )
    ]


def test_permit_reject_and_reject_waiting_pod() -> None:
    fwk = Framework(timers=ManualTimers())
    fwk.add_plugin(Binding("A", [], permit=Status.wait(10)))
    pod = make_pod()
    fwk.run_permit_plugins(CycleState(), pod, "n1")
    outcome: list[Status | None] = []
    fwk.when_permitted(pod, outcome.append)
    assert fwk.reject_waiting_pod(pod.uid) is True
    assert outcome == [Status(Code.UNSCHEDULABLE, "removed")]
    assert fwk.reject_waiting_pod(pod.uid) is False


def test_permit_rejection_and_error() -> None:
    fwk = framework_with(
        Binding("A", [], permit=Status.wait(1)),
        Binding("B", [], permit=Status(Code.UNSCHEDULABLE, "group incomplete")),
    )
    pod = make_pod()
    assert fwk.run_permit_plugins(CycleState(), pod, "n1") == Status(
        Code.UNSCHEDULABLE, "group incomplete", plugin="B"
    )
    assert fwk.get_waiting_pod(pod.uid) is None
    fwk = framework_with(Binding("A", [], permit=Status(Code.SKIP)))
    status = fwk.run_permit_plugins(CycleState(), pod, "n1")
    assert status is not None and status.code is Code.ERROR


def test_not_waiting_pod_is_permitted_at_once() -> None:
    outcome: list[Status | None] = []
    Framework().when_permitted(make_pod(), outcome.append)
    assert outcome == [None]


# -- PreEnqueue ------------------------------------------------------------------------------


class Gate(fw.PreEnqueuePlugin):
    def __init__(self, name: str, answer: Any) -> None:
        self.name = name
        self.answer = answer

    def pre_enqueue(self, pod: Pod) -> Any:
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def test_pre_enqueue_first_gate_wins() -> None:
    fwk = framework_with(
        Gate("Open", None),
        Gate(
            "Gates",
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: [a]"),
        ),
        Gate("Never", RuntimeError("unreached")),
    )
    status = fwk.run_pre_enqueue_plugins(make_pod())
    assert status == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: [a]", plugin="Gates"
    )
    assert framework_with(Gate("Open", None)).run_pre_enqueue_plugins(make_pod()) is None
    err = framework_with(Gate("Bad", ValueError("x"))).run_pre_enqueue_plugins(make_pod())
    assert err is not None and err.code is Code.ERROR and err.plugin == "Bad"


# -- Nominated pods --------------------------------------------------------------------------


class CountFilter(fw.FilterPlugin):
    """Rejects a node holding more than ``limit`` pods."""

    name: ClassVar[str] = "Count"

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seen: list[int] = []

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.seen.append(len(node_info.pods))
        if len(node_info.pods) >= self.limit:
            return Status(Code.UNSCHEDULABLE, "Too many pods")
        return None


def test_filter_with_nominated_pods_runs_twice_only_for_equal_or_higher_priority() -> None:
    plugin = CountFilter(limit=1)
    fwk = framework_with(plugin)
    node = fwk.snapshot_shared_lister().get("n1")
    low = fw.PodInfo(make_pod("low", priority=1))
    fwk.nominator.add_nominated_pod(low, "n1")
    # The nominated pod has lower priority than the incoming one: one pass, without it.
    assert fwk.run_filter_plugins_with_nominated_pods(CycleState(), make_pod("p", 5), node) is None
    assert plugin.seen == [0]
    high = fw.PodInfo(make_pod("high", priority=10))
    fwk.nominator.add_nominated_pod(high, "n1")
    status = fwk.run_filter_plugins_with_nominated_pods(CycleState(), make_pod("p", 5), node)
    assert status == Status(Code.UNSCHEDULABLE, "Too many pods", plugin="Count")
    assert plugin.seen == [0, 1]
    assert len(node.pods) == 0  # the snapshot's NodeInfo is untouched


def test_handle_without_backend_fails_writes_loudly() -> None:
    from schedframe.errors import BackendError

    with pytest.raises(BackendError, match="no cluster backend"):
        Framework().binder.bind(make_pod(), "n1")


def test_filter_function_takes_the_nominated_path_only_on_nominated_nodes() -> None:
    plugin = CountFilter(limit=1)
    fwk = framework_with(plugin)
    fwk.nominator.add_nominated_pod(fw.PodInfo(make_pod("high", priority=10)), "n2")
    assert fwk.nominator.nominated_node_names() == frozenset({"n2"})
    run = fwk.filter_function(CycleState(), make_pod("p", 5))
    lister = fwk.snapshot_shared_lister()
    assert run(lister.get("n1")) is None
    assert run(lister.get("n2")) == Status(Code.UNSCHEDULABLE, "Too many pods", plugin="Count")
