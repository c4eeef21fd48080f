"""Properties of quantity parsing and printing: round trips and rounding direction."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe.objects import (
    BINARY_SI,
    CPU,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    EPHEMERAL_STORAGE,
    MEMORY,
    Quantity,
    parse_quantity,
    resource_amount,
    resource_quantity,
)

pytestmark = pytest.mark.property

MAX_INT64 = 2**63 - 1
SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]


@st.composite
def quantity_strings(draw: st.DrawFn) -> str:
    """Strings in the Kubernetes quantity grammar, exponent forms included."""
    sign = draw(st.sampled_from(["", "+", "-"]))
    whole = draw(st.from_regex(r"[0-9]{0,12}", fullmatch=True))
    fraction = draw(st.one_of(st.just(None), st.from_regex(r"[0-9]{0,12}", fullmatch=True)))
    number = whole + ("" if fraction is None else "." + fraction)
    if not number:
        number = "0"
    suffix = draw(
        st.one_of(
            st.sampled_from(SUFFIXES),
            st.builds(
                lambda e, s, n: f"{e}{s}{n}",
                st.sampled_from(["e", "E"]),
                st.sampled_from(["", "+", "-"]),
                st.integers(min_value=0, max_value=40),
            ),
        )
    )
    return sign + number + suffix


nano_amounts = st.integers(min_value=-(10**30), max_value=10**30).map(lambda n: Fraction(n, 10**9))


@given(quantity_strings())
@settings(deadline=None)
def test_printed_quantity_parses_back_to_the_same_amount(text: str) -> None:
    q = parse_quantity(text)
    printed = str(q)
    again = parse_quantity(printed)
    assert again.amount == q.amount
    assert str(again) == printed  # the canonical form is a fixed point


@given(nano_amounts, st.sampled_from([DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT]))
def test_any_nano_amount_round_trips(amount: Fraction, fmt: str) -> None:
    if fmt == BINARY_SI and abs(amount) > MAX_INT64:
        amount = Fraction(MAX_INT64)  # parsing caps BinarySI here, as upstream does
    q = Quantity(amount=amount, format=fmt)
    assert parse_quantity(str(q)).amount == amount


@given(quantity_strings())
def test_amounts_are_whole_nano_units(text: str) -> None:
    assert (parse_quantity(text).amount * 10**9).denominator == 1


@given(nano_amounts)
def test_value_rounds_away_from_zero(amount: Fraction) -> None:
    q = Quantity(amount=amount)
    value = q.value()
    milli = q.milli_value()
    if amount >= 0:
        assert value - 1 < amount <= value
        assert milli - 1 < amount * 1000 <= milli
    else:
        assert value <= amount < value + 1
        assert milli <= amount * 1000 < milli + 1
    assert q.value() == -Quantity(amount=-amount).value()


@given(st.integers(min_value=-(2**70), max_value=2**70))
def test_integers_are_exact(n: int) -> None:
    q = parse_quantity(n)
    assert q.value() == n
    assert q.milli_value() == n * 1000


@given(
    st.sampled_from([CPU, MEMORY, EPHEMERAL_STORAGE, "pods", "nvidia.com/gpu", "hugepages-2Mi"]),
    st.integers(min_value=0, max_value=MAX_INT64),
)
def test_resource_quantity_inverts_resource_amount(name: str, amount: int) -> None:
    printed = str(resource_quantity(name, amount))
    assert resource_amount(name, parse_quantity(printed)) == amount


@given(quantity_strings(), quantity_strings())
def test_order_follows_amounts(a: str, b: str) -> None:
    qa, qb = parse_quantity(a), parse_quantity(b)
    assert (qa < qb) == (qa.amount < qb.amount)
    assert (qa == qb) == (qa.amount == qb.amount)
    if qa == qb:
        assert hash(qa) == hash(qb)
