"""parse_quantity reuses its result for a spelling seen before (decoding large lists)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe.objects import parse_quantity
from schedframe.objects._quantity import _parse_quantity


def test_parsed_quantities_are_reused_by_spelling_and_type() -> None:
    first = parse_quantity("256Gi")
    assert parse_quantity("256Gi") is first
    assert parse_quantity(2) is parse_quantity(2)
    # 2, 2.0 and True hash alike: each type keeps its own parse (True is refused).
    assert parse_quantity(2.0).amount == 2
    assert str(parse_quantity(2.5)) == "2500m"
    with pytest.raises(ValueError):
        parse_quantity(True)
    with pytest.raises(ValueError):
        parse_quantity("1i")


def test_long_spellings_are_not_kept() -> None:
    text = "1" + "0" * 70 + "m"
    assert parse_quantity(text) is not parse_quantity(text)


@given(st.one_of(st.text(alphabet="0123456789.+-eEmkKMGTPiun", max_size=8), st.integers()))
def test_cached_parse_equals_a_fresh_one(value: str | int) -> None:
    try:
        fresh = _parse_quantity(value)
    except ValueError as exc:
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            parse_quantity(value)
        return
    for _ in range(2):
        got = parse_quantity(value)
        assert got == fresh
        assert got.format == fresh.format
        assert str(got) == str(fresh)
