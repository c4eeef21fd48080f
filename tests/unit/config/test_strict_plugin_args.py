"""Every plugin's args are decoded strictly, the objects they embed included."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedframe.errors import ConfigError
from schedframe.testing import deterministic

HEAD = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
"""

ARGS = "profiles[0].pluginConfig[0].args"


def _error(tmp_path: Path, plugin_config: str) -> str:
    path = tmp_path / "sched.yaml"
    path.write_text(HEAD + plugin_config, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        deterministic.scheduler(path)
    return str(info.value)


def test_a_typo_in_added_affinity_is_an_unknown_field(tmp_path: Path) -> None:
    text = _error(
        tmp_path,
        """  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpresions:
            - {key: zone, operator: In, values: [a]}
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 1
          preference: {matchFeilds: []}
""",
    )
    required = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    preferred = "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    assert text.splitlines() == [
        f"{tmp_path / 'sched.yaml'}: {ARGS}.{required}.nodeSelectorTerms[0].matchExpresions: "
        "Unknown field",
        f"{tmp_path / 'sched.yaml'}: {ARGS}.{preferred}[0].preference.matchFeilds: Unknown field",
    ]


def test_requested_to_capacity_ratio_without_a_shape_names_the_file_and_field(
    tmp_path: Path,
) -> None:
    text = _error(
        tmp_path,
        """  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: RequestedToCapacityRatio}
""",
    )
    assert text == (
        f"{tmp_path / 'sched.yaml'}: {ARGS}.scoringStrategy.requestedToCapacityRatio: "
        "Required value: scoring strategy RequestedToCapacityRatio needs a shape"
    )


def test_args_of_another_kind_are_refused(tmp_path: Path) -> None:
    text = _error(
        tmp_path,
        """  - name: NodeAffinity
    args: {kind: NodeResourcesFitArgs, apiVersion: kubescheduler.config.k8s.io/v1beta3}
""",
    )
    assert text.splitlines() == [
        f"{tmp_path / 'sched.yaml'}: {ARGS}.apiVersion: Unsupported value: "
        '"kubescheduler.config.k8s.io/v1beta3": supported values: '
        '"kubescheduler.config.k8s.io/v1"',
        f'{tmp_path / "sched.yaml"}: {ARGS}.kind: Unsupported value: "NodeResourcesFitArgs": '
        'supported values: "NodeAffinityArgs"',
    ]


def test_matching_type_meta_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(
        HEAD
        + """  - name: NodeAffinity
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeAffinityArgs
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: zone, operator: In, values: [a]}]
""",
        encoding="utf-8",
    )
    with deterministic.scheduler(path) as sched:
        assert sched.profiles["default-scheduler"] is not None
