"""Priority admission in simulate: priorityClassName resolves (system classes included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedframe.errors import BackendError
from schedframe.objects import loads_manifests
from schedframe.simulation import Workload, load_workload, simulate

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low, namespace: apps}
spec:
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: "2"}}}]
"""


def _workload(tmp_path: Path, class_name: str) -> Workload:
    path = tmp_path / "w.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: critical, namespace: kube-system}\n"
        f"spec:\n  priorityClassName: {class_name}\n"
        "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n"
    )
    return load_workload(path)


def test_a_system_cluster_critical_pod_preempts(tmp_path: Path) -> None:
    # Regression: priorityClassName was ignored, the pod stayed pending with
    # "No preemption victims found for incoming pod".
    result = simulate(
        cluster=loads_manifests(CLUSTER), workload=_workload(tmp_path, "system-cluster-critical")
    )
    assert result.victims == ("apps/low",)
    assert result.placements() == {"kube-system/critical": "n1"}


def test_a_user_class_from_the_cluster_file(tmp_path: Path) -> None:
    classes = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    result = simulate(
        cluster=loads_manifests(CLUSTER + classes), workload=_workload(tmp_path, "high")
    )
    assert result.victims == ("apps/low",)


def test_an_unknown_class_is_rejected_before_the_run(tmp_path: Path) -> None:
    with pytest.raises(
        BackendError,
        match='pods "critical" is forbidden: no PriorityClass with name nope was found',
    ):
        simulate(cluster=loads_manifests(CLUSTER), workload=_workload(tmp_path, "nope"))
