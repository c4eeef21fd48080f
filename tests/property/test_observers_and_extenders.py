"""Properties: observer isolation, and extender filtering/scoring invariants."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe import hooks
from schedframe.config import Extender
from schedframe.extender import HTTPExtender, extender_scores, find_nodes_that_pass_extenders
from schedframe.framework import Code, Diagnosis, NodeInfo
from schedframe.objects import Pod
from schedframe.testing.builders import make_node, make_pod
from schedframe.testing.extender import ExtenderServer, node_names

pytestmark = pytest.mark.property


class _Observer:
    def __init__(self, raises: bool) -> None:
        self.raises = raises
        self.seen = 0

    @hooks.impl
    def schedframe_scheduling_error(self, pod: Pod, profile: str, message: str) -> None:
        self.seen += 1
        if self.raises:
            raise ValueError("observer bug")


@settings(max_examples=50, deadline=None)
@given(st.lists(st.booleans(), max_size=6), st.integers(min_value=1, max_value=3))
def test_every_observer_sees_every_call_whatever_the_others_raise(
    raising: list[bool], calls: int
) -> None:
    pm = hooks.plugin_manager(load_entry_points=False)
    observers = [_Observer(r) for r in raising]
    for i, obs in enumerate(observers):
        pm.register(obs, name=f"o{i}")
    facade = hooks.Observers(pm)
    pod = make_pod("p").obj()
    for _ in range(calls):
        facade.scheduling_error(pod=pod, profile="x", message="m")
    assert [o.seen for o in observers] == [calls] * len(observers)
    assert facade.failures == {
        (f"o{i}", "schedframe_scheduling_error"): calls for i, r in enumerate(raising) if r
    }


# One extender server for the whole property: its replies are set per example.
_REPLY: dict[str, Any] = {}
_SERVER = ExtenderServer(
    filter=lambda args: _REPLY["filter"](args), prioritize=lambda args: _REPLY["prioritize"](args)
)


@pytest.fixture(scope="module", autouse=True)
def _server() -> Any:
    with _SERVER:
        yield


NAMES = [f"n{i}" for i in range(6)]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(NAMES), min_size=1, max_size=6, unique=True),
    st.dictionaries(st.sampled_from(NAMES), st.sampled_from(["soft", "hard"])),
    st.dictionaries(st.sampled_from(NAMES), st.integers(min_value=0, max_value=10)),
    st.integers(min_value=1, max_value=5),
)
def test_extenders_keep_a_subset_give_each_removed_node_a_status_and_scale_scores(
    names: list[str], verdicts: dict[str, str], scores: dict[str, int], weight: int
) -> None:
    def filter_(args: dict[str, Any]) -> object:
        sent = node_names(args)
        return {
            "nodenames": [n for n in sent if n not in verdicts],
            "failedNodes": {n: "soft" for n in sent if verdicts.get(n) == "soft"},
            "failedAndUnresolvableNodes": {n: "hard" for n in sent if verdicts.get(n) == "hard"},
        }

    _REPLY["filter"] = filter_
    _REPLY["prioritize"] = lambda args: [
        {"host": n, "score": scores.get(n, 0)} for n in node_names(args)
    ]
    ext = HTTPExtender(
        Extender(
            url_prefix=_SERVER.url,
            filter_verb="filter",
            prioritize_verb="prioritize",
            weight=weight,
            node_cache_capable=True,
        )
    )
    infos = [NodeInfo(make_node(n).obj()) for n in names]
    diagnosis = Diagnosis()
    pod = make_pod("p").obj()
    kept = find_nodes_that_pass_extenders([ext], pod, infos, diagnosis)
    assert [n.name for n in kept] == [n for n in names if n not in verdicts]
    statuses = dict(diagnosis.node_to_status.items())
    assert set(statuses) == {n for n in names if n in verdicts}
    for name, status in statuses.items():
        want = (
            Code.UNSCHEDULABLE if verdicts[name] == "soft" else Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        )
        assert status.code is want and status.reasons == (verdicts[name],)
    assert ("Extender" in diagnosis.unschedulable_plugins) == (len(kept) != len(names))
    added = extender_scores([ext], pod, kept)
    assert added == {n.name: scores.get(n.name, 0) * weight * 10 for n in kept}
