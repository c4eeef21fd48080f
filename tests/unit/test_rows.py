"""``schedframe._rows``: items picked by position, in the order of the rows asked for."""

from __future__ import annotations

from schedframe._rows import pick, picker


def test_pick_takes_rows_in_the_order_given() -> None:
    seq = ["a", "b", "c", "d"]
    assert pick(seq, []) == []
    assert pick(seq, [2]) == ["c"]
    assert pick(seq, [3, 0, 3]) == ["d", "a", "d"]
    assert pick({5: "x", 7: "y"}, [7, 5]) == ["y", "x"]


def test_one_picker_serves_several_sequences() -> None:
    take = picker([1, 0])
    assert take("pq") == ["q", "p"]
    assert take([10, 20]) == [20, 10]
    assert isinstance(take((1, 2)), list)
