"""Filter evaluations counted from the batch verdicts (``count_batch_filter``), by hand."""

from __future__ import annotations

import numpy as np

from schedframe import framework as fw
from schedframe.framework import Code, Status
from schedframe.runtime._metrics import FilterTally, count_batch_filter, status_label

PASS, REJECT, CHECK = fw.FILTER_PASS, fw.FILTER_REJECT, fw.FILTER_CHECK
NAMES = ("A", "B", "C")


def _tally(
    verdicts: list[int],
    deciders: list[int],
    checked: dict[int, Status] | None = None,
    nominated: list[int] | None = None,
) -> FilterTally:
    tally = FilterTally()
    tally.verdicts = np.array(verdicts, dtype=np.int8)
    tally.deciders = np.array(deciders, dtype=np.int16)
    tally.checked = checked or {}
    if nominated is not None:
        tally.nominated = np.array(nominated, dtype=np.intp)
    return tally


def test_each_visited_row_counts_plugins_up_to_its_first_failure() -> None:
    # Rows 4, 5, 0, 1 visited (wrapping round): passes all; rejected in batch by C; rejected
    # node by node by A; passed node by node. B was skipped by PreFilter: never counted.
    tally = _tally(
        [CHECK, CHECK, PASS, PASS, PASS, REJECT],
        [0, 0, -1, -1, -1, 2],
        checked={0: Status(Code.UNSCHEDULABLE, "no", plugin="A")},
    )
    counts = [0, 0, 0]
    count_batch_filter(counts, NAMES, {"B"}, tally, start=4, visited=4, error=None)
    assert counts == [4, 0, 3]


def test_rows_not_visited_are_not_counted() -> None:
    tally = _tally([PASS] * 6, [-1] * 6, checked={3: Status(Code.UNSCHEDULABLE, plugin="A")})
    counts = [1, 1, 1]
    count_batch_filter(counts, NAMES, set(), tally, start=0, visited=2, error=None)
    assert counts == [3, 3, 3]


def test_the_erring_node_counts_up_to_the_erring_plugin() -> None:
    tally = _tally([PASS, CHECK, PASS], [-1, 1, -1])
    counts = [0, 0, 0]
    error = Status(Code.ERROR, "broke", plugin="B")
    count_batch_filter(counts, NAMES, set(), tally, start=0, visited=2, error=error)
    assert counts == [2, 2, 1]


def test_nominated_rows_are_left_to_the_per_node_path() -> None:
    tally = _tally([PASS, CHECK, PASS, PASS], [-1, 0, -1, -1], nominated=[1, 3])
    counts = [0, 0, 0]
    count_batch_filter(counts, NAMES, set(), tally, start=2, visited=4, error=None)
    assert counts == [2, 2, 2]  # rows 2 and 0 only


def test_status_labels_are_upstream_code_names() -> None:
    assert status_label(None) == "Success"
    assert status_label(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)) == (
        "UnschedulableAndUnresolvable"
    )
    assert status_label((None, Status(Code.UNSCHEDULABLE))) == "Unschedulable"
    assert status_label(42) == "Success"  # a score


def test_every_visited_row_passing_counts_each_plugin_once_per_row() -> None:
    # Undecided rows that are not among the rejected ones passed node by node.
    tally = _tally([PASS, CHECK, PASS, REJECT, PASS], [-1, 1, -1, 0, -1])
    counts = [0, 0, 0]
    count_batch_filter(counts, NAMES, {"C"}, tally, start=4, visited=3, error=None)
    assert counts == [3, 3, 0]
