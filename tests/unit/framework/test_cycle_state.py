"""CycleState: typed keys, clone semantics, and the skip sets."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe.framework import CycleState, StateKey

K_INT = StateKey[int]("int")
K_LIST = StateKey["Counter"]("counter")


class Counter:
    def __init__(self, values: list[int]) -> None:
        self.values = values

    def clone(self) -> Counter:
        return Counter(list(self.values))


def test_read_write_delete() -> None:
    state = CycleState()
    state[K_INT] = 3
    assert state[K_INT] == 3
    assert state.read(K_INT) == 3
    assert K_INT in state
    state.delete(K_INT)
    assert K_INT not in state
    with pytest.raises(KeyError, match="int not found in cycle state"):
        state.read(K_INT)
    assert state.get(K_INT, 7) == 7


def test_keys_are_identities_not_names() -> None:
    other = StateKey[int]("int")
    state = CycleState()
    state[K_INT] = 1
    assert other not in state


def test_clone_clones_cloneable_values_and_shares_frozen_ones() -> None:
    state = CycleState()
    frozen = (1, 2)
    state[StateKey[tuple[int, int]]("t")] = frozen
    state[K_LIST] = Counter([1])
    state.skip_filter_plugins.add("A")
    copy = state.clone()
    copy[K_LIST].values.append(2)
    copy.skip_filter_plugins.add("B")
    assert state[K_LIST].values == [1]
    assert copy[K_LIST].values == [1, 2]
    assert state.skip_filter_plugins == {"A"}
    assert copy.pods_to_activate is state.pods_to_activate


@pytest.mark.property
@given(st.lists(st.tuples(st.integers(0, 5), st.integers()), max_size=30))
def test_clone_is_independent_after_any_writes(ops: list[tuple[int, int]]) -> None:
    keys = [StateKey[int](f"k{i}") for i in range(6)]
    state = CycleState()
    for i, v in ops:
        state[keys[i]] = v
    snapshot = {k: state.get(k) for k in keys}
    copy = state.clone()
    for i, v in ops:
        copy[keys[i]] = v + 1
    assert {k: state.get(k) for k in keys} == snapshot
    assert len(copy) == len(state)
