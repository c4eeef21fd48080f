"""Hostile and duplicated inputs at the command line: exit 2, one line per problem, the file
named; never an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedframe.cli import EXIT_BAD_INPUT, main

NODE = """\
apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{allocatable: {{cpu: "2", memory: 4Gi, pods: "110"}}}}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec: {{containers: [{{name: c}}]}}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_duplicate_node_names_its_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    one = tmp_path / "one.yaml"
    one.write_text(NODE.format(name="n1"))
    two = tmp_path / "two.yaml"
    two.write_text(NODE.format(name="n1"))
    code, _, err = run(capsys, "simulate", "-c", str(one), "-c", str(two), "--no-progress")
    assert code == EXIT_BAD_INPUT
    assert err == (
        f'error: {two}: metadata.name: Duplicate value: "n1": a Node of this name is already '
        f"in {one}\n"
    )


def test_a_duplicate_pod_is_blamed_on_the_workload_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(NODE.format(name="n1") + "---\n" + POD.format(name="p"))
    workload = tmp_path / "pods.yaml"
    workload.write_text(POD.format(name="p"))
    code, _, err = run(capsys, "simulate", "-c", str(cluster), "-w", str(workload), "--no-progress")
    assert code == EXIT_BAD_INPUT
    assert err == (
        f'error: {workload}: metadata.name: Duplicate value: "default/p": a Pod of this name is '
        f"already in {cluster}\n"
    )


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("deep.json", '{"a":' * 5000 + "1" + "}" * 5000, "not valid JSON: nested too deeply"),
        ("deep.yaml", "x: " + "{a: " * 400 + "1" + "}" * 400, "kind: Required value"),
        ("bigint.yaml", "kind: Pod\nzzz: " + "9" * 5000, "an integer of 5000 digits"),
        ("newline.yaml", 'kind: Nodee\nmetadata: {name: "a\\nb"}\n', "kind: Unsupported value"),
        (
            "laughs.yaml",
            "a0: &a0 [x,x,x,x,x,x,x,x,x]\n"
            + "".join(
                f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 10)
            ),
            "document contains excessive aliasing",
        ),
    ],
)
@pytest.mark.parametrize("flag", ["-c", "-w", "-f"])
def test_hostile_files_exit_2_with_one_line_per_problem(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    name: str,
    text: str,
    expected: str,
    flag: str,
) -> None:
    path = tmp_path / name
    path.write_text(text)
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(NODE.format(name="n1"))
    argv = ["simulate", "--no-progress"]
    argv += [flag, str(path)] if flag == "-c" else ["-c", str(cluster), flag, str(path)]
    code, _, err = run(capsys, *argv)
    assert code == EXIT_BAD_INPUT, err
    assert "internal error" not in err
    assert err.startswith(f"error: {path}")
    if flag != "-f":  # a config reads other fields first
        assert expected in err
    assert all(line.startswith("error: ") for line in err.splitlines())
