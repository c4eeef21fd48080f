"""Go duration parsing and printing, ported from Go's time package test tables as data."""

from __future__ import annotations

import pytest

from schedframe.config import parse_duration
from schedframe.config._common import _parse_duration_ns, format_duration

NS = 1
US = 1_000
MS = 1_000_000
S = 1_000_000_000
M = 60 * S
H = 60 * M

# Go: time_test.go parseDurationTests.
PARSE = [
    ("0", 0),
    ("5s", 5 * S),
    ("30s", 30 * S),
    ("1478s", 1478 * S),
    ("-5s", -5 * S),
    ("+5s", 5 * S),
    ("-0", 0),
    ("+0", 0),
    ("5.0s", 5 * S),
    ("5.6s", 5 * S + 600 * MS),
    ("5.s", 5 * S),
    (".5s", 500 * MS),
    ("1.0s", 1 * S),
    ("1.00s", 1 * S),
    ("1.004s", 1 * S + 4 * MS),
    ("1.0040s", 1 * S + 4 * MS),
    ("100.00100s", 100 * S + 1 * MS),
    ("10ns", 10 * NS),
    ("11us", 11 * US),
    ("12\u00b5s", 12 * US),
    ("12\u03bcs", 12 * US),
    ("13ms", 13 * MS),
    ("14s", 14 * S),
    ("15m", 15 * M),
    ("16h", 16 * H),
    ("3h30m", 3 * H + 30 * M),
    ("10.5s4m", 4 * M + 10 * S + 500 * MS),
    ("-2m3.4s", -(2 * M + 3 * S + 400 * MS)),
    ("1h2m3s4ms5us6ns", 1 * H + 2 * M + 3 * S + 4 * MS + 5 * US + 6 * NS),
    ("39h9m14.425s", 39 * H + 9 * M + 14 * S + 425 * MS),
    ("52763797000ns", 52763797000 * NS),
    ("0.3333333333333333333h", 20 * M),
    ("9007199254740993ns", (1 << 53) + 1),
    ("9223372036854775807ns", (1 << 63) - 1),
    ("9223372036854775.807us", (1 << 63) - 1),
    ("9223372036s854ms775us807ns", (1 << 63) - 1),
    ("-9223372036854775808ns", -(1 << 63)),
    ("-9223372036854775.808us", -(1 << 63)),
    ("-9223372036s854ms775us808ns", -(1 << 63)),
    ("-2562047h47m16.854775808s", -(1 << 63)),
    ("0.100000000000000000000h", 6 * M),
    ("0.830103483285477580700h", 49 * M + 48 * S + 372539827 * NS),
]


@pytest.mark.parametrize(("text", "ns"), PARSE, ids=[t for t, _ in PARSE])
def test_parse_duration_exact_nanoseconds(text: str, ns: int) -> None:
    assert _parse_duration_ns(text) == ns
    assert parse_duration(text) == ns / 1e9


# Go: time_test.go parseDurationErrorTests (the strings Python can hold).
PARSE_ERRORS = [
    ("", 'time: invalid duration ""'),
    ("3", 'time: missing unit in duration "3"'),
    ("-", 'time: invalid duration "-"'),
    ("s", 'time: invalid duration "s"'),
    (".", 'time: invalid duration "."'),
    ("-.", 'time: invalid duration "-."'),
    (".s", 'time: invalid duration ".s"'),
    ("+.s", 'time: invalid duration "+.s"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),
    ("\ufffd", 'time: invalid duration "\\xef\\xbf\\xbd"'),
    (
        "\ufffd hello \ufffd world",
        'time: invalid duration "\\xef\\xbf\\xbd hello \\xef\\xbf\\xbd world"',
    ),
    ("9223372036854775810ns", 'time: invalid duration "9223372036854775810ns"'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
    ("-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"'),
    ("9223372036854776us", 'time: invalid duration "9223372036854776us"'),
    ("3000000h", 'time: invalid duration "3000000h"'),
    ("9223372036854775.808us", 'time: invalid duration "9223372036854775.808us"'),
    ("9223372036854ms775us808ns", 'time: invalid duration "9223372036854ms775us808ns"'),
    ("1 s", 'time: unknown unit " s" in duration "1 s"'),
    ('1"s', 'time: unknown unit "\\"s" in duration "1\\"s"'),
]


@pytest.mark.parametrize(("text", "message"), PARSE_ERRORS)
def test_parse_duration_errors_use_go_wording(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_duration(text)
    assert str(info.value) == message


def test_parse_duration_refuses_non_strings() -> None:
    with pytest.raises(ValueError):
        parse_duration(15)  # type: ignore[arg-type]


# Go: time_test.go durationTests (Duration.String).
FORMAT = [
    ("0s", 0),
    ("1ns", 1 * NS),
    ("1.1\u00b5s", 1100 * NS),
    ("2.2ms", 2200 * US),
    ("3.3s", 3300 * MS),
    ("4m5s", 4 * M + 5 * S),
    ("4m5.001s", 4 * M + 5001 * MS),
    ("5h6m7.001s", 5 * H + 6 * M + 7001 * MS),
    ("8m0.000000001s", 8 * M + 1 * NS),
    ("-1ns", -1),
    ("1h0m0s", H),
    ("15s", 15 * S),
    ("1m30s", 90 * S),
    ("500ms", 500 * MS),
]


@pytest.mark.parametrize(("text", "ns"), FORMAT, ids=[t for t, _ in FORMAT])
def test_format_duration_like_go(text: str, ns: int) -> None:
    assert format_duration(ns / 1e9) == text
