"""Upstream TestRunScorePlugins (runtime/framework_test.go), its cases as data, and the text of
Score failures: the plugin's own message, as upstream prints it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.framework import Code, CycleState, NodeInfo, Status, StatusError
from schedframe.objects import Pod
from schedframe.runtime import Framework
from schedframe.testing.builders import make_node, make_pod

SCORE_PLUGIN_1 = "score-plugin-1"
SCORE_WITH_NORMALIZE_1 = "score-with-normalize-plugin-1"
SCORE_WITH_NORMALIZE_2 = "score-with-normalize-plugin-2"
INJECTED = "injecting failure."


class Injected(fw.ScorePlugin):
    """Upstream's TestScorePlugin: a fixed score, or a failure with "injecting failure."."""

    def __init__(self, name: str, *, score: int = 0, score_status: Code = Code.SUCCESS) -> None:
        self.name = name
        self._score = score
        self._status = score_status
        self.calls = 0

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        self.calls += 1
        if self._status is not Code.SUCCESS:
            raise StatusError(Status(self._status, INJECTED))
        return self._score


class InjectedNormalize(Injected, fw.ScoreExtensions):
    """Upstream's TestScoreWithNormalizePlugin: NormalizeScore overwrites every score."""

    def __init__(
        self,
        name: str,
        *,
        score: int = 0,
        score_status: Code = Code.SUCCESS,
        normalize: int = 0,
        normalize_status: Code = Code.SUCCESS,
    ) -> None:
        super().__init__(name, score=score, score_status=score_status)
        self._normalize = normalize
        self._normalize_status = normalize_status

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: fw.NodeScoreList
    ) -> Status | None:
        if self._normalize_status is not Code.SUCCESS:
            return Status(self._normalize_status, INJECTED)
        for i in range(len(scores.scores)):
            scores.scores[i] = self._normalize
        return None


def framework(plugins: Sequence[tuple[fw.ScorePlugin, int]]) -> Framework:
    fwk = Framework(
        snapshot=Snapshot.from_objects([make_node("node1").obj(), make_node("node2").obj()])
    )
    for plugin, weight in plugins:
        fwk.add_plugin(plugin, weight=weight)
    return fwk


def run(
    plugins: Sequence[tuple[fw.ScorePlugin, int]], skipped: frozenset[str] = frozenset()
) -> tuple[dict[str, dict[str, int]] | None, Status | None]:
    fwk = framework(plugins)
    state = CycleState()
    state.skip_score_plugins = set(skipped)
    scores, status = fwk.run_score_plugins(
        state, make_pod("p").obj(), fwk.snapshot_shared_lister().list()
    )
    if scores is None:
        return None, status
    by_node: dict[str, dict[str, int]] = {name: {} for name in scores.names}
    for ps in scores.by_plugin:
        for name, value in zip(scores.names, ps.normalized, strict=True):
            by_node[name][ps.plugin] = value * ps.weight
    totals = dict(zip(scores.names, scores.totals, strict=True))
    for name, per_plugin in by_node.items():
        assert totals[name] == sum(per_plugin.values())
    return by_node, status


def both(per_plugin: dict[str, int]) -> dict[str, dict[str, int]]:
    return {"node1": dict(per_plugin), "node2": dict(per_plugin)}


@pytest.mark.parametrize(
    ("plugins", "skipped", "want"),
    [
        pytest.param([], frozenset(), both({}), id="no Score plugins"),
        pytest.param(
            [(Injected(SCORE_PLUGIN_1, score=1), 1)],
            frozenset(),
            both({SCORE_PLUGIN_1: 1}),
            id="single Score plugin",
        ),
        pytest.param(
            [(InjectedNormalize(SCORE_WITH_NORMALIZE_1, score=10, normalize=5), 1)],
            frozenset(),
            both({SCORE_WITH_NORMALIZE_1: 5}),
            id="single ScoreWithNormalize plugin",
        ),
        pytest.param(
            [
                (Injected(SCORE_PLUGIN_1, score=1), 1),
                (InjectedNormalize(SCORE_WITH_NORMALIZE_1, score=3, normalize=4), 1),
                (InjectedNormalize(SCORE_WITH_NORMALIZE_2, score=4, normalize=5), 2),
            ],
            frozenset(),
            both({SCORE_PLUGIN_1: 1, SCORE_WITH_NORMALIZE_1: 4, SCORE_WITH_NORMALIZE_2: 10}),
            id="3 Score plugins, 2 NormalizeScore plugins",
        ),
        pytest.param(
            [(Injected(SCORE_PLUGIN_1, score=1), 3)],
            frozenset(),
            both({SCORE_PLUGIN_1: 3}),
            id="single Score plugin with MultiPointExpansion",
        ),
        pytest.param(
            [
                (Injected(SCORE_PLUGIN_1, score=1), 1),
                (InjectedNormalize(SCORE_WITH_NORMALIZE_1, score_status=Code.ERROR), 1),
            ],
            frozenset({SCORE_WITH_NORMALIZE_1}),
            both({SCORE_PLUGIN_1: 1}),
            id="one success plugin, one skip plugin",
        ),
        pytest.param(
            [(Injected(SCORE_PLUGIN_1, score_status=Code.ERROR), 1)],
            frozenset({SCORE_PLUGIN_1}),
            both({}),
            id="all plugins are skipped in prescore",
        ),
        pytest.param(
            [(Injected(SCORE_PLUGIN_1), 1)],
            frozenset({SCORE_PLUGIN_1, "score-plugin-unknown"}),
            both({}),
            id="skipped prescore plugin number greater than the number of score plugins",
        ),
    ],
)
def test_run_score_plugins(
    plugins: list[tuple[fw.ScorePlugin, int]],
    skipped: frozenset[str],
    want: dict[str, dict[str, int]],
) -> None:
    got, status = run(plugins, skipped)
    assert status is None
    assert got == want


@pytest.mark.parametrize(
    ("plugins", "message"),
    [
        pytest.param(
            [
                (Injected(SCORE_PLUGIN_1), 1),
                (InjectedNormalize(SCORE_WITH_NORMALIZE_1, score_status=Code.ERROR), 1),
            ],
            f'running Score plugins: plugin "{SCORE_WITH_NORMALIZE_1}" failed with: {INJECTED}',
            id="score fails",
        ),
        pytest.param(
            [
                (Injected(SCORE_PLUGIN_1), 1),
                (InjectedNormalize(SCORE_WITH_NORMALIZE_1, normalize_status=Code.ERROR), 1),
            ],
            "running Normalize on Score plugins: "
            f'plugin "{SCORE_WITH_NORMALIZE_1}" failed with: {INJECTED}',
            id="normalize fails",
        ),
        pytest.param(
            [(Injected(SCORE_PLUGIN_1, score=fw.MAX_NODE_SCORE + 1), 1)],
            "applying score defaultWeights on Score plugins: "
            f'plugin "{SCORE_PLUGIN_1}" returns an invalid score 101, it should in the range of '
            "[0, 100] after normalizing",
            id="Score plugin return score greater than MaxNodeScore",
        ),
        pytest.param(
            [(Injected(SCORE_PLUGIN_1, score=fw.MIN_NODE_SCORE - 1), 1)],
            "applying score defaultWeights on Score plugins: "
            f'plugin "{SCORE_PLUGIN_1}" returns an invalid score -1, it should in the range of '
            "[0, 100] after normalizing",
            id="Score plugin return score less than MinNodeScore",
        ),
        pytest.param(
            [(InjectedNormalize(SCORE_WITH_NORMALIZE_1, normalize=fw.MAX_NODE_SCORE + 1), 1)],
            "applying score defaultWeights on Score plugins: "
            f'plugin "{SCORE_WITH_NORMALIZE_1}" returns an invalid score 101, it should in the '
            "range of [0, 100] after normalizing",
            id="ScoreWithNormalize plugin return score greater than MaxNodeScore",
        ),
        pytest.param(
            [(InjectedNormalize(SCORE_WITH_NORMALIZE_1, normalize=fw.MIN_NODE_SCORE - 1), 1)],
            "applying score defaultWeights on Score plugins: "
            f'plugin "{SCORE_WITH_NORMALIZE_1}" returns an invalid score -1, it should in the '
            "range of [0, 100] after normalizing",
            id="ScoreWithNormalize plugin return score less than MinNodeScore",
        ),
    ],
)
def test_run_score_plugins_errors(plugins: list[tuple[fw.ScorePlugin, int]], message: str) -> None:
    got, status = run(plugins)
    assert got is None
    assert status is not None and status.code is Code.ERROR
    assert status.message() == message


def test_a_plain_exception_in_score_reports_its_own_text() -> None:
    class Raises(Injected):
        def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
            raise RuntimeError(f"getting node {node_info.name!r} from Snapshot: not found")

    _, status = run([(Raises("A"), 1)])
    assert status is not None and status.code is Code.ERROR and status.plugin == "A"
    assert status.message() == (
        "running Score plugins: plugin \"A\" failed with: getting node 'node1' from Snapshot: "
        "not found"
    )
    # The exception stays reachable for debugging.
    err = status.as_error()
    assert err is not None and isinstance(err.__cause__, RuntimeError)


def test_status_error_needs_a_failure() -> None:
    with pytest.raises(ValueError, match="non-success"):
        StatusError(Status(Code.SUCCESS))
    assert str(StatusError(Status(Code.ERROR, "a", "b"))) == "a, b"


def test_status_error_from_another_point_keeps_the_status_message() -> None:
    class Filters(fw.FilterPlugin):
        name = "F"

        def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
            raise StatusError(Status(Code.ERROR, "cannot read the node"))

    fwk = Framework(snapshot=Snapshot.from_objects([make_node("node1").obj()]))
    fwk.add_plugin(Filters())
    status = fwk.run_filter_plugins(
        CycleState(), make_pod("p").obj(), fwk.snapshot_shared_lister().get("node1")
    )
    assert status is not None
    assert status.message() == 'running "F" filter plugin: cannot read the node'
