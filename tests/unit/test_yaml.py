"""The strict YAML loader: YAML 1.1 like Kubernetes, repeated keys refused."""

from __future__ import annotations

import pytest

from schedframe._yaml import YAMLError, load_all_strict, load_strict


def test_yaml_1_1_scalars_as_kubernetes_reads_them() -> None:
    assert load_strict("a: on\nb: 0777\nc: yes") == {"a": True, "b": 511, "c": True}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "a: 1\nb: 2\na: 3",
            'x.yaml: Duplicate value: "a": mapping key repeated at line 3, column 1',
        ),
        (
            "spec:\n  x: 1\n  x: 2",
            'x.yaml: Duplicate value: "x": mapping key repeated at line 3, column 3',
        ),
        (
            "a: [1",
            "x.yaml: Invalid value: not valid YAML at line 2, column 1: did not find expected ',' or ']'",
        ),
    ],
)
def test_errors_name_line_and_column(text: str, message: str) -> None:
    with pytest.raises(YAMLError) as err:
        load_strict(text, "x.yaml")
    assert str(err.value) == message


@pytest.mark.parametrize("text", ["a: 2001-13-45", "a: !!int x"])
def test_bad_scalars_are_yaml_errors_not_crashes(text: str) -> None:
    with pytest.raises(YAMLError, match="x.yaml: Invalid value: not valid YAML"):
        load_strict(text, "x.yaml")


def test_one_and_true_are_different_keys() -> None:
    # YAML keeps them apart; Python's dict would collapse them, but they are not "repeats".
    assert len(load_strict("1: a\n2: b")) == 2
    load_strict("1: a\ntrue: b")


def test_multi_document_skips_empty_documents() -> None:
    assert list(load_all_strict("a: 1\n---\n---\nb: 2\n")) == [{"a": 1}, {"b": 2}]
