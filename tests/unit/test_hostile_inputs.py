"""Hostile documents: every loader answers with its own error, file and path, on one line.

Alias bombs, deep nesting, huge integers and quantities, lone surrogates, multi-megabyte and
multi-line values used to run for minutes, raise ``RecursionError``/``ValueError`` from inside
Python, or print the whole value.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from schedframe._yaml import YAMLError, load_all_strict, load_strict
from schedframe.errors import INVALID, FieldIssue, ManifestError
from schedframe.objects import load_manifests
from schedframe.objects._quantity import parse_quantity


def _laughs(levels: int, fanout: int) -> str:
    lines = [f"a0: &a0 [{', '.join(['x'] * fanout)}]"]
    for i in range(1, levels + 1):
        refs = ", ".join([f"*a{i - 1}"] * fanout)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def test_a_billion_laughs_is_refused_as_go_yaml_refuses_it() -> None:
    with pytest.raises(YAMLError) as info:
        load_strict(_laughs(9, 9), "c.yaml")
    assert (
        str(info.value)
        == "c.yaml: Invalid value: not valid YAML: document contains excessive aliasing"
    )
    with pytest.raises(YAMLError, match="excessive aliasing"):
        list(load_all_strict("a: 1\n---\n" + _laughs(9, 9), "m.yaml"))


def test_modest_aliasing_is_read() -> None:
    # By go-yaml's rule: a0..a2 decode 1,359 nodes of which 1,320 through aliases (97%, under
    # 99%): read. Adding a3 takes the share past 99% within 13,581 decodes: refused.
    doc = load_strict(_laughs(2, 10))
    assert len(doc["a2"]) == 10
    with pytest.raises(YAMLError, match="excessive aliasing"):
        load_strict(_laughs(3, 10))
    assert load_strict("base: &b {cpu: 1}\nother: *b\nmore: {<<: *b, mem: 2}") == {
        "base": {"cpu": 1},
        "other": {"cpu": 1},
        "more": {"cpu": 1, "mem": 2},
    }


def test_an_anchor_that_contains_itself_is_refused() -> None:
    with pytest.raises(YAMLError, match="an anchor's value contains itself"):
        load_strict("a: &x {b: *x}\n")


@pytest.mark.parametrize("depth", [300, 400, 900])
def test_deep_flow_mappings_load_without_recursion_errors(depth: int) -> None:
    doc = load_strict("x: " + "{a: " * depth + "1" + "}" * depth)
    doc = doc["x"]
    for _ in range(depth):
        doc = doc["a"]
    assert doc == 1


def test_nesting_past_libyaml_s_limit_is_named_with_its_place() -> None:
    with pytest.raises(YAMLError) as info:
        load_strict("x: " + "[" * 100_000, "d.yaml")
    assert str(info.value).startswith("d.yaml: Invalid value: not valid YAML at line 1, column")
    assert "exceeded maximum nesting depth" in str(info.value)


def test_an_integer_of_more_than_4300_digits_is_named_with_its_line() -> None:
    with pytest.raises(YAMLError) as info:
        load_strict("kind: Pod\nignored: " + "9" * 5000, "p.yaml")
    assert str(info.value) == (
        "p.yaml: Invalid value: not valid YAML at line 2, column 10: an integer of 5000 "
        "digits, more than the 4300 that can be read"
    )
    assert load_strict("n: " + "9" * 4300)["n"] == int("9" * 4300)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "deep.json",
            '{"a":' * 5000 + "1" + "}" * 5000,
            "deep.json: Invalid value: not valid JSON: nested too deeply",
        ),
        (
            "big.json",
            '{"kind": "Pod", "zzz": ' + "9" * 5000 + "}",
            "big.json: Invalid value: not valid JSON: an integer of 5000 digits, more than the "
            "4300 that can be read",
        ),
        (
            "deep.yaml",
            "x: " + "{a: " * 400 + "1" + "}" * 400 + "\n",
            "deep.yaml: kind: Required value",
        ),
        (
            "laughs.yaml",
            _laughs(9, 9),
            "laughs.yaml: Invalid value: not valid YAML: document contains excessive aliasing",
        ),
    ],
)
def test_manifest_files_fail_with_the_loader_s_own_error(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ManifestError) as info:
        load_manifests(path)
    assert str(info.value).startswith(str(tmp_path / message.split(":")[0]) + ":")
    assert str(info.value).endswith(message.split(":", 1)[1])


def test_a_lone_surrogate_in_json_becomes_the_replacement_character(tmp_path: Path) -> None:
    # Go's encoding/json decodes an unpaired surrogate escape as U+FFFD.
    path = tmp_path / "ns.json"
    path.write_text(
        '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x",'
        ' "annotations": {"a": "\\ud800", "b": "\\ud83d\\ude00"}}}',
        encoding="utf-8",
    )
    (ns,) = load_manifests(path)
    # Annotations (labels would be refused: label values are restricted to ASCII).
    assert ns.metadata.annotations == {"a": "\ufffd", "b": "\U0001f600"}  # type: ignore[attr-defined]


def test_a_huge_binary_quantity_is_capped_as_upstream_caps_it() -> None:
    assert parse_quantity("9" * 5000 + "Ki").value() == 2**63 - 1
    with pytest.raises(ValueError, match="unable to parse numeric part of quantity"):
        parse_quantity(10**5000)


def test_messages_stay_on_one_line_and_short() -> None:
    issue = FieldIssue(path="metadata.name", kind=INVALID, value="a\nb\tc", detail="bad")
    assert str(issue) == 'metadata.name: Invalid value: "a\\nb\\tc": bad'
    huge = FieldIssue(path="x", kind=INVALID, value="y" * 50_000_000)
    text = str(huge)
    assert len(text) < 300
    assert text.endswith('...(50000000 characters)"')
    assert str(FieldIssue(path="n", kind=INVALID, value=10**5000)).startswith(
        "n: Invalid value: <an integer of about 500"
    )
    key = FieldIssue(path="spec.\nx", kind="Unknown field")
    assert str(key) == "spec.\\nx: Unknown field"
