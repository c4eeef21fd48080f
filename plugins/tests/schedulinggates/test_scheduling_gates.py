"""Port of upstream schedulinggates/scheduling_gates_test.go."""

from __future__ import annotations

import pytest

from schedframe import framework as fw
from schedframe.objects import ObjectMeta, Pod, PodSpec
from schedframe.runtime import Framework
from schedframe_plugins.schedulinggates import SchedulingGates


def pod(*gates: str, uid: str = "uid") -> Pod:
    return Pod(
        metadata=ObjectMeta(name="p", namespace="default", uid=uid),
        spec=PodSpec(scheduling_gates=gates),
    )


def plugin() -> SchedulingGates:
    return SchedulingGates(None, Framework())


@pytest.mark.parametrize(
    ("p", "want"),
    [
        pytest.param(pod(), None, id="pod does not carry scheduling gates"),
        pytest.param(
            pod("foo", "bar"),
            (fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: [foo bar]"),
            id="pod carries scheduling gates",
        ),
    ],
)
def test_pre_enqueue(p: Pod, want: tuple[object, ...] | None) -> None:
    status = plugin().pre_enqueue(p)
    assert (None if status is None else (status.code, *status.reasons)) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            pod("foo", uid="other"),
            pod(uid="other"),
            fw.QueueingHint.QUEUE_SKIP,
            id="skip queue on other pod update",
        ),
        pytest.param(
            pod("foo"), pod(), fw.QueueingHint.QUEUE, id="queue on the pod's own gates eliminated"
        ),
    ],
)
def test_is_schedulable_after_update_pod_scheduling_gates_eliminated(
    old: Pod, new: Pod, want: fw.QueueingHint
) -> None:
    hint = plugin().is_schedulable_after_update_pod_scheduling_gates_eliminated(
        pod("foo"), old, new
    )
    assert hint == want


def test_hint_wrong_object() -> None:
    with pytest.raises(TypeError):
        plugin().is_schedulable_after_update_pod_scheduling_gates_eliminated(pod("foo"), None, "x")


def test_events_to_register() -> None:
    assert [e.event for e in plugin().events_to_register()] == [
        fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    ]
