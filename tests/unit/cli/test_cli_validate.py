"""The CLI reads manifests strictly: a typo exits 2 naming its field; --validate relaxes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedframe.cli import EXIT_BAD_INPUT, main

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
NODE_TYPO = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatabel: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web-1}
spec:
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
"""
POD_SELECTOR_TYPO = """\
apiVersion: v1
kind: Pod
metadata: {name: web-1}
spec:
  nodeSelecter: {disk: ssd}
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
"""
POD_RESOURCES_TYPO = """\
apiVersion: v1
kind: Pod
metadata: {name: web-1}
spec:
  containers: [{name: c, resouces: {requests: {cpu: "1"}}}]
"""
WORKLOAD_TYPO = """\
kind: Workload
pods:
  - name: web
    count: 1
    template:
      spec: {nodeSelecter: {disk: ssd}, containers: [{name: c}]}
"""


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("cluster", "pod", "path"),
    [
        (NODE_TYPO, POD, "status.allocatabel"),
        (NODE, POD_SELECTOR_TYPO, "spec.nodeSelecter"),
        (NODE, POD_RESOURCES_TYPO, "spec.containers[0].resouces"),
    ],
)
@pytest.mark.parametrize("command", ["simulate", "explain"])
def test_a_typo_exits_2_with_its_field_path(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    cluster: str,
    pod: str,
    path: str,
    command: str,
) -> None:
    cluster_file = _write(tmp_path, "cluster.yaml", cluster)
    pod_file = _write(tmp_path, "pod.yaml", pod)
    if command == "simulate":
        argv = ["simulate", "-c", cluster_file, "-w", pod_file, "--no-progress"]
    else:
        argv = ["explain", pod_file, "-c", cluster_file]
    code = main(argv)
    out, err = capsys.readouterr()
    bad = cluster_file if "allocatabel" in path else pod_file
    assert code == EXIT_BAD_INPUT
    assert err.splitlines() == [f"error: {bad}: {path}: Unknown field"]
    assert out == ""


def test_a_typo_in_a_workload_template_names_the_template(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cluster_file = _write(tmp_path, "cluster.yaml", NODE)
    workload_file = _write(tmp_path, "workload.yaml", WORKLOAD_TYPO)
    code = main(["simulate", "-c", cluster_file, "-w", workload_file, "--no-progress"])
    _, err = capsys.readouterr()
    assert code == EXIT_BAD_INPUT
    assert err.splitlines() == [
        f"error: {workload_file}: pods[0].template.spec.nodeSelecter: Unknown field"
    ]


def test_validate_warn_prints_one_line_per_field_and_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cluster_file = _write(tmp_path, "cluster.yaml", NODE)
    pod_file = _write(tmp_path, "pod.yaml", POD_SELECTOR_TYPO)
    workload_file = _write(tmp_path, "workload.yaml", WORKLOAD_TYPO)
    code = main(
        [
            "simulate",
            "--validate=warn",
            "-c",
            cluster_file,
            "-w",
            pod_file,
            "-w",
            workload_file,
            "--no-progress",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0
    assert err.splitlines() == [
        f"warning: {pod_file}: spec.nodeSelecter: Unknown field",
        f"warning: {workload_file}: pods[0].template.spec.nodeSelecter: Unknown field",
    ]
    assert "Bound" in out or "bound" in out


def test_validate_ignore_is_silent(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cluster_file = _write(tmp_path, "cluster.yaml", NODE)
    pod_file = _write(tmp_path, "pod.yaml", POD_RESOURCES_TYPO)
    code = main(["explain", "--validate", "ignore", pod_file, "-c", cluster_file])
    _, err = capsys.readouterr()
    assert code == 0
    assert err == ""


def test_validate_warn_on_a_zero_capacity_typo_still_warns(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cluster_file = _write(tmp_path, "cluster.yaml", NODE_TYPO)
    pod_file = _write(tmp_path, "pod.yaml", POD)
    code = main(["explain", "--validate=warn", pod_file, "-c", cluster_file])
    out, err = capsys.readouterr()
    assert code == 0
    assert err.splitlines() == [f"warning: {cluster_file}: status.allocatabel: Unknown field"]
    assert "Insufficient cpu" in out
