"""Status and Code: upstream values, spellings and predicates."""

from __future__ import annotations

import pytest

from schedframe.framework import Code, Status


@pytest.mark.parametrize(
    ("code", "value", "text"),
    [
        (Code.SUCCESS, 0, "Success"),
        (Code.ERROR, 1, "Error"),
        (Code.UNSCHEDULABLE, 2, "Unschedulable"),
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 3, "UnschedulableAndUnresolvable"),
        (Code.WAIT, 4, "Wait"),
        (Code.SKIP, 5, "Skip"),
        (Code.PENDING, 6, "Pending"),
    ],
)
def test_code_values_and_spelling_match_upstream(code: Code, value: int, text: str) -> None:
    assert int(code) == value
    assert str(code) == text


@pytest.mark.parametrize(
    ("code", "rejected", "has_error"),
    [
        (Code.SUCCESS, False, False),
        (Code.ERROR, False, True),
        (Code.UNSCHEDULABLE, True, True),
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, True, True),
        (Code.WAIT, False, False),
        (Code.SKIP, False, False),
        (Code.PENDING, True, True),
    ],
)
def test_is_rejected_and_as_error(code: Code, rejected: bool, has_error: bool) -> None:
    status = Status(code, "reason")
    assert status.is_rejected() is rejected
    assert (status.as_error() is not None) is has_error


def test_message_joins_reasons_with_comma() -> None:
    assert Status(Code.UNSCHEDULABLE, "a", "b").message() == "a, b"
    assert Status(Code.UNSCHEDULABLE).message() == ""


def test_from_error_keeps_exception_and_text() -> None:
    exc = ValueError("boom")
    status = Status.from_error(exc, plugin="P")
    assert status.code is Code.ERROR
    assert status.reasons == ("boom",)
    assert status.error is exc
    assert status.plugin == "P"
    assert status.as_error() is exc


def test_with_plugin_copies_and_equality_compares_plugin() -> None:
    s = Status(Code.UNSCHEDULABLE, "x")
    t = s.with_plugin("P")
    assert s.plugin == "" and t.plugin == "P"
    assert s != t
    assert t == Status(Code.UNSCHEDULABLE, "x", plugin="P")
    assert t.with_plugin("P") is t


def test_wait_carries_timeout() -> None:
    s = Status.wait(30)
    assert s.code is Code.WAIT and s.timeout == 30
    assert s.is_wait()
    assert repr(s) == "Status(Code.WAIT, timeout=30)"
