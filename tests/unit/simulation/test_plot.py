"""PNG plots (skipped when matplotlib is not installed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedframe.simulation import Arrival, Workload, plot_simulation, simulate

from ..explain._builders import node, pod

pytest.importorskip("matplotlib")

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("nodes", [2, 15], ids=["lines", "heatmap"])
def test_utilisation_and_score_heatmap_are_written(tmp_path: Path, nodes: int) -> None:
    cluster = [node(f"n{i}") for i in range(nodes)]
    cluster.append(node("tainted", taints=[{"key": "k", "effect": "NoSchedule"}]))
    wl = Workload(tuple(Arrival(time=float(i), pod=pod(f"p{i}"), duration=5.0) for i in range(6)))
    result = simulate(cluster=cluster, workload=wl, capture=["default/p5"])
    written = plot_simulation(result, tmp_path / "plots", pod="default/p5")
    assert [p.name for p in written] == ["utilisation.png", "scores-default-p5.png"]
    for path in written:
        assert path.read_bytes().startswith(PNG)


def test_a_run_without_virtual_time_draws_bars(tmp_path: Path) -> None:
    result = simulate(cluster=[node("n1")], workload=Workload((Arrival(time=0, pod=pod("a")),)))
    (path,) = plot_simulation(result, tmp_path)
    assert path.read_bytes().startswith(PNG)


def test_plotting_leaves_the_callers_backend_and_pyplot_alone(tmp_path: Path) -> None:
    """It used to call ``matplotlib.use("Agg")``, switching a notebook's or a GUI's backend."""
    import subprocess
    import sys

    code = f"""
import sys
import matplotlib
matplotlib.use("svg")
from schedframe.simulation import Arrival, Workload, plot_simulation, simulate
from schedframe.objects import loads_manifests
objects = loads_manifests('''
kind: Node
apiVersion: v1
metadata: {{name: n1}}
status: {{allocatable: {{cpu: "2", memory: 1Gi, pods: "10"}}}}
---
kind: Pod
apiVersion: v1
metadata: {{name: a, namespace: default}}
spec: {{containers: [{{name: c, image: i}}]}}
''')
result = simulate(cluster=objects[:1], workload=Workload((Arrival(time=0, pod=objects[1]),)))
plot_simulation(result, {str(tmp_path)!r})
print(matplotlib.get_backend(), "matplotlib.pyplot" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["svg", "False"]
    assert (tmp_path / "utilisation.png").read_bytes().startswith(PNG)
