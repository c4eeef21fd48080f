"""VolumeBinding on what schedframe models, and its args (upstream validation rules)."""

from __future__ import annotations

import pytest

from schedframe import errors
from schedframe import framework as fw
from schedframe.config import decode_args
from schedframe.objects import ObjectMeta, Pod, PodSpec, Volume
from schedframe.runtime import Framework
from schedframe_plugins.volumebinding import VolumeBinding, VolumeBindingArgs


def pod(*claims: str | None) -> Pod:
    volumes = tuple(Volume(name=f"v{i}", persistent_volume_claim=c) for i, c in enumerate(claims))
    return Pod(metadata=ObjectMeta(name="p", namespace="default"), spec=PodSpec(volumes=volumes))


def plugin() -> VolumeBinding:
    return VolumeBinding(None, Framework())


def test_pod_has_no_pvcs() -> None:
    p = pod()
    vb = plugin()
    state = fw.CycleState()
    status = vb.pre_filter(state, p, [])
    assert isinstance(status, fw.Status) and status.code is fw.Code.SKIP
    pre_score = vb.pre_score(state, p, [])
    assert pre_score is not None and pre_score.code is fw.Code.SKIP
    assert vb.reserve(state, p, "node-a") is None
    # Every volume bound: PreBindPreFlight skips (upstream), so PreBind has nothing to do.
    assert vb.pre_bind_pre_flight(state, p, "node-a") == fw.Status(fw.Code.SKIP)
    assert vb.pre_bind(state, p, "node-a") is None
    vb.unreserve(state, p, "node-a")


def test_pre_bind_pre_flight_without_state_is_an_error() -> None:
    status = plugin().pre_bind_pre_flight(fw.CycleState(), pod(), "node-a")
    assert status == fw.Status(fw.Code.ERROR, "not found")


def test_pvc_not_found() -> None:
    status = plugin().pre_filter(fw.CycleState(), pod("pvc-a"), [])
    assert isinstance(status, fw.Status)
    assert status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ('persistentvolumeclaim "pvc-a" not found',)


def test_default_args() -> None:
    args = decode_args(VolumeBindingArgs, None, path="args")
    assert args.bind_timeout_seconds == 600
    assert args.shape is None


@pytest.mark.parametrize(
    ("data", "want"),
    [
        pytest.param(
            {"bindTimeoutSeconds": -10},
            [
                "args.bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, should not be a negative value"
            ],
            id="[StorageCapacityScoring=off] negative value is invalid config",
        ),
        pytest.param(
            {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]},
            ["args.shape"],
            id="[StorageCapacityScoring=off] shape should be nil when the feature is off",
        ),
    ],
)
def test_args_validation(data: dict[str, object], want: list[str]) -> None:
    with pytest.raises(errors.ConfigError) as info:
        decode_args(VolumeBindingArgs, data, path="args")
    got = [str(i) for i in info.value.issues]
    assert [g[: len(w)] for g, w in zip(got, want, strict=True)] == want
    if "args.shape" in want:
        assert got[0].endswith(
            "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"
        )


def test_invalid_args_rejected_by_plugin() -> None:
    with pytest.raises(errors.ConfigError):
        VolumeBinding(VolumeBindingArgs(bind_timeout_seconds=-1), Framework())
