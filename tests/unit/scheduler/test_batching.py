"""Opportunistic batching: ported cases of upstream TestBatchBasic (runtime/batch_test.go)."""

from __future__ import annotations

import attrs
import pytest

from schedframe.framework import Code, CycleState, NodeInfo, Status
from schedframe.objects import Node, ObjectMeta, Pod, PodSpec
from schedframe.scheduler._batching import (
    MAX_BATCH_AGE,
    OpportunisticBatch,
    SortedScoredNodes,
)

# Upstream's test plugin: a node holds at most one pod whose UID starts with "b" (blocking);
# pods starting with "a" never block.


def _pod(uid: str, name: str) -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace="default", uid=uid), spec=PodSpec())


def _filter(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
    for other in node_info.pods:
        if pod.uid.startswith("b") and other.pod.uid.startswith("b"):
            return Status(Code.UNSCHEDULABLE, "unsched")
    return None


@attrs.frozen
class Case:
    name: str
    first_pod: str
    first_sig: bytes | None
    first_chosen: str
    first_others: list[str] | None
    first_succeeded: bool
    second_pod: str
    second_sig: bytes | None
    second_chosen: str
    expected_hint: str
    skip_pod: bool = False
    expected_state: list[str] | None = None  # remaining nodes kept; None = empty


CASES = [
    Case("a second pod with the same signature gets a hint",
         "b-1", b"sig", "n3", ["n1"], True, "b-2", b"sig", "n1", "n1"),
    Case("a second pod with a different signature doesn't get a hint",
         "a-1", b"sig", "n3", ["n1"], True, "a-2", b"sig2", "n1", ""),
    Case("a second pod doesn't get a hint if it's not 1-pod-per-node",
         "a-1", b"sig", "n3", ["n1"], True, "a-2", b"sig", "n1", ""),
    Case("pod doesn't get hint if previous pod didn't scheduled",
         "b-1", b"sig", "n3", ["n1"], False, "b-2", b"sig", "n1", ""),
    Case("empty list", "b-1", b"sig", "n3", [], True, "b-2", b"sig", "n4", ""),
    Case("nil list", "b-1", b"sig", "n3", None, True, "b-2", b"sig", "n4", ""),
    Case("pod doesn't get hint because the previous pod is to a different profile",
         "b-1", b"sig", "n3", ["n1"], True, "b-2", b"sig", "n1", "", skip_pod=True),
    Case("pod uses batch from preceding pod and leaves remaining batch to next pod",
         "b-1", b"sig", "n3", ["n1", "n2"], True, "b-2", b"sig", "n1", "n1",
         expected_state=["n2"]),
]  # fmt: skip


class _Harness:
    def __init__(self) -> None:
        self.signature: bytes | None = None
        self.nodes: dict[str, NodeInfo] = {}
        self.time = 100.0
        self.batch = OpportunisticBatch(
            profile_name="default-scheduler",
            sign=lambda pod: self.signature,
            get_node=self.nodes.__getitem__,
            run_filter_plugins=_filter,
            now=lambda: self.time,
        )


def _run_first(h: _Harness, case: Case) -> None:
    h.signature = case.first_sig
    hint, _ = h.batch.get_node_hint(_pod(case.first_pod, "pod"), CycleState(), 1)
    assert hint == ""
    if case.first_succeeded:
        others = None if case.first_others is None else SortedScoredNodes(case.first_others)
        h.batch.store_schedule_results(case.first_sig, hint, case.first_chosen, others, 1)
    # The first pod now sits on the node it was given.
    node = NodeInfo(Node(metadata=ObjectMeta(name=case.first_chosen, uid=case.first_chosen)))
    node.add_pod(_pod(case.first_pod, "pod"))
    h.nodes[case.first_chosen] = node


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_batch_basic(case: Case) -> None:
    h = _Harness()
    _run_first(h, case)
    cycle = 3 if case.skip_pod else 2
    h.signature = case.second_sig
    hint, signature = h.batch.get_node_hint(_pod(case.second_pod, "pod2"), CycleState(), cycle)
    assert hint == case.expected_hint
    assert signature == case.second_sig
    h.batch.store_schedule_results(case.second_sig, hint, case.second_chosen, None, cycle)
    if case.expected_state is None:
        assert h.batch.state_empty()
    else:
        assert h.batch.state is not None
        assert h.batch.state.signature == case.second_sig
        assert h.batch.state.sorted_nodes == SortedScoredNodes(case.expected_state)


@pytest.mark.parametrize(
    ("case_name", "flushes", "attempts"),
    [
        ("a second pod with the same signature gets a hint", {}, {"no_hint": 1, "hint_used": 1}),
        (
            "a second pod with a different signature doesn't get a hint",
            {"pod_incompatible": 1, "empty_list": 1},
            {"no_hint": 2},
        ),
        (
            "a second pod doesn't get a hint if it's not 1-pod-per-node",
            {"node_not_full": 1, "empty_list": 1},
            {"no_hint": 2},
        ),
        (
            "pod doesn't get hint because the previous pod is to a different profile",
            {"pod_skipped": 1, "empty_list": 1},
            {"no_hint": 2},
        ),
        ("nil list", {"empty_list": 2}, {"no_hint": 2}),
    ],
)
def test_flush_reasons_and_attempts_use_upstream_labels(
    case_name: str, flushes: dict[str, int], attempts: dict[str, int]
) -> None:
    case = next(c for c in CASES if c.name == case_name)
    h = _Harness()
    _run_first(h, case)
    h.signature = case.second_sig
    hint, _ = h.batch.get_node_hint(_pod(case.second_pod, "pod2"), CycleState(), 2 + case.skip_pod)
    h.batch.store_schedule_results(case.second_sig, hint, case.second_chosen, None, 2)
    assert dict(h.batch.flushes) == flushes
    assert dict(h.batch.attempts) == attempts
    assert h.batch.batched_pods == (1 if hint else 0)


def test_a_kept_list_older_than_max_batch_age_is_dropped() -> None:
    h = _Harness()
    _run_first(h, CASES[0])
    h.time += MAX_BATCH_AGE + 0.001
    h.signature = b"sig"
    hint, _ = h.batch.get_node_hint(_pod("b-2", "pod2"), CycleState(), 2)
    assert hint == ""
    assert dict(h.batch.flushes) == {"expired": 1}


def test_a_missing_previous_node_drops_the_list() -> None:
    h = _Harness()
    _run_first(h, CASES[0])
    del h.nodes["n3"]
    h.signature = b"sig"
    hint, _ = h.batch.get_node_hint(_pod("b-2", "pod2"), CycleState(), 2)
    assert hint == ""
    assert dict(h.batch.flushes) == {"node_missing": 1}


def test_an_unused_hint_replaces_the_list_with_the_new_ranking() -> None:
    h = _Harness()
    _run_first(h, CASES[7])
    h.signature = b"sig"
    hint, _ = h.batch.get_node_hint(_pod("b-2", "pod2"), CycleState(), 2)
    assert hint == "n1"
    h.batch.store_schedule_results(b"sig", hint, "n2", SortedScoredNodes(["n5", "n6"]), 2)
    assert dict(h.batch.attempts) == {"no_hint": 1, "hint_not_used": 1}
    assert h.batch.state is not None
    assert h.batch.state.sorted_nodes.remaining() == ["n5", "n6"]
    assert h.batch.last_cycle.chosen_node == "n2"
