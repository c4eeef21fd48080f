"""The example out-of-tree plugin: discovered through its entry point, enabled from a file."""

from __future__ import annotations

from pathlib import Path

import pytest
from schedframe_gpu_spread import GpuSpreadArgs

from schedframe.cache import Snapshot
from schedframe.config import load_config
from schedframe.errors import ConfigError
from schedframe.framework import Code, CycleState
from schedframe.objects import Node, Pod, node_from_dict, pod_from_dict
from schedframe.runtime import Framework, Registry

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: GpuSpread
        weight: 2
  pluginConfig:
  - name: GpuSpread
    args:
      maxGpusInUse: 2
"""


def gpu_node(name: str, gpus: int) -> Node:
    return node_from_dict(
        {
            "metadata": {"name": name},
            "status": {
                "capacity": {
                    "cpu": "8",
                    "memory": "32Gi",
                    "pods": "110",
                    "nvidia.com/gpu": str(gpus),
                }
            },
        }
    )


def gpu_pod(name: str, gpus: int, node: str = "") -> Pod:
    return pod_from_dict(
        {
            "metadata": {"name": name},
            "spec": {
                "nodeName": node,
                "containers": [
                    {"name": "c", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}
                ],
            },
        }
    )


def test_discovered_through_its_entry_point() -> None:
    registry = Registry.discover()
    assert "GpuSpread" in registry
    (source,) = [s for s in registry.sources() if s.name == "GpuSpread"]
    assert source.distribution == "schedframe-gpu-spread"
    assert source.value == "schedframe_gpu_spread:GpuSpread"


def test_enabled_from_a_config_file_and_runs(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG)
    config = load_config(path)
    nodes = [gpu_node("busy", 4), gpu_node("free", 4)]
    pods = [gpu_pod("a", 1, "busy"), gpu_pod("b", 1, "busy")]
    fwk = Framework.from_profile(config.profiles[0], Registry.discover(), source=str(path))
    fwk.set_snapshot(Snapshot.from_objects(nodes, pods))
    assert fwk.score_weights["GpuSpread"] == 2
    args = fwk.plugin_args["GpuSpread"]
    assert isinstance(args, GpuSpreadArgs) and args.max_gpus_in_use == 2

    incoming = gpu_pod("c", 1)
    state = CycleState()
    _, status, _ = fwk.run_pre_filter_plugins(state, incoming)
    assert status is None
    busy, free = fwk.snapshot_shared_lister().list()
    status = fwk.run_filter_plugins(state, incoming, busy)
    assert status is not None and status.code is Code.UNSCHEDULABLE
    assert status.reasons == ("node(s) had too many GPUs in use",)
    assert status.plugin == "GpuSpread"
    assert fwk.run_filter_plugins(state, incoming, free) is None
    assert fwk.run_pre_score_plugins(state, incoming, [free]) is None
    scores, err = fwk.run_score_plugins(state, incoming, [free])
    assert err is None and scores is not None
    gpu = next(p for p in scores.by_plugin if p.plugin == "GpuSpread")
    assert gpu.normalized == [100]


def test_bad_args_name_the_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(CONFIG.replace("maxGpusInUse: 2", "maxGpusInUse: 0"))
    config = load_config(path)
    with pytest.raises(ConfigError) as err:
        Framework.from_profile(config.profiles[0], Registry.discover(), source=str(path))
    assert str(err.value) == (
        f"{path}: profiles[0].pluginConfig[0].args.maxGpusInUse: Invalid value: 0: must be at least 1"
    )
