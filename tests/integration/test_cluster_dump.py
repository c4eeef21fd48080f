"""Acceptance of issue 16: a realistic ``kubectl get ... -A -o yaml`` dump (several
namespaces, Deployments with Services, a StatefulSet, a DaemonSet, PriorityClasses, PDBs,
ConfigMaps, a finished Job) simulates end to end through the CLI, and ``explain`` shows the
preemption upstream would do for a ``system-cluster-critical`` pod."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedframe.cli import main
from schedframe.config import load_config
from schedframe.objects import LoadReport, Pod, load_manifests
from schedframe.simulation import load_workload, simulate

FIXTURES = Path(__file__).parent.parent / "fixtures" / "dumps"
DUMP = str(FIXTURES / "cluster-dump.yaml")
WORKLOAD = str(FIXTURES / "workload.yaml")


def test_the_dump_loads_with_one_line_per_skipped_kind() -> None:
    report = LoadReport()
    objects = load_manifests(DUMP, report=report)
    kinds = sorted({type(o).__name__ for o in objects})
    assert kinds == [
        "DaemonSet",
        "Deployment",
        "Job",
        "Namespace",
        "Node",
        "Pod",
        "PodDisruptionBudget",
        "PriorityClass",
        "ReplicaSet",
        "Service",
        "StatefulSet",
    ]
    assert report.skipped == {
        "ConfigMap": 6,
        "Endpoints": 1,
        "Event": 1,
        "Secret": 1,
        "ServiceAccount": 1,
    }
    assert report.not_modelled == {}
    bound = [o for o in objects if isinstance(o, Pod) and o.spec.node_name]
    assert len(bound) == 15  # every pod of the dump was running (or finished) on its node


def test_simulate_the_dump_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", "-c", DUMP, "-w", WORKLOAD])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("Simulated 3 pods on 3 nodes")
    assert "bound              3  running 3, completed 0" in out
    assert "preempted          1" in out
    assert err.splitlines() == [
        "skipped 6 ConfigMap: not read by kube-scheduler",
        "skipped 1 Endpoints: not read by kube-scheduler",
        "skipped 1 Event: not read by kube-scheduler",
        "skipped 1 Secret: not read by kube-scheduler",
        "skipped 1 ServiceAccount: not read by kube-scheduler",
    ]


@pytest.mark.parametrize(
    ("version", "checkout_nodes"),
    [
        # The finished backup pod holds nothing: node-b has room for a checkout pod.
        ("1.35", ["node-b", "node-c"]),
        # v1.36's BalancedAllocation scores the change in balance, which node-a wins.
        ("1.36", ["node-a", "node-c"]),
    ],
)
def test_the_critical_pod_preempts_the_lowest_priority_pod(
    version: str, checkout_nodes: list[str]
) -> None:
    result = simulate(
        cluster=load_manifests(DUMP),
        workload=load_workload(WORKLOAD),
        config=load_config(None, emulated_version=version),
    )
    assert result.victims == ("shop/reindex-c",)
    placements = result.placements()
    assert placements["kube-system/metrics-server"] == "node-c"
    checkout = sorted(n for k, n in placements.items() if k.startswith("shop/checkout-"))
    assert checkout == checkout_nodes


def test_explain_shows_the_preemption_of_a_system_cluster_critical_pod(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["explain", "kube-system/metrics-server", "-c", DUMP, "-w", WORKLOAD])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith(
        "Pod kube-system/metrics-server (profile default-scheduler): stays pending."
    )
    assert "0/3 nodes are available: 3 Insufficient cpu." in out
    assert (
        "PostFilter (dry run, nothing evicted): Success; would nominate node-c and evict "
        "shop/reindex-c" in out
    )
