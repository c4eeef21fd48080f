"""A sweep case's result depends on its input, configuration and seed only: not on the other
cases, their order, their ids or the number of jobs."""

from __future__ import annotations

import functools
from pathlib import Path

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe.simulation import CaseResult, SweepCase, load_sweep, sweep

SPEC = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "sweep" / "hundred.yaml"


@functools.cache
def _reference() -> dict[tuple[str, str, int], CaseResult]:
    """Every case of the spec run once, in one sweep, by (input, config, seed)."""
    return {(r.case.input, r.case.config, r.case.seed): r for r in sweep(SPEC, jobs=2).results}


def _key(case: SweepCase) -> tuple[str, str, int]:
    return (case.input, case.config, case.seed)


@settings(max_examples=6)
@given(
    picked=st.lists(st.sampled_from(load_sweep(SPEC)), min_size=1, max_size=8, unique=True),
    jobs=st.integers(min_value=1, max_value=3),
    first_id=st.integers(min_value=0, max_value=1000),
)
def test_a_case_result_depends_only_on_its_input_config_and_seed(
    picked: list[SweepCase], jobs: int, first_id: int
) -> None:
    # New ids, in the order drawn: the results come back in id order all the same.
    cases = [attrs.evolve(c, id=first_id + i) for i, c in enumerate(picked)]
    result = sweep(cases[::-1], jobs=jobs)
    assert [r.case for r in result.results] == cases
    reference = _reference()
    for got in result.results:
        want = reference[_key(got.case)]
        assert attrs.evolve(got, case=want.case) == want
