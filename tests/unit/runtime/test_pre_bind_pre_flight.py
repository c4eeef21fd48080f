"""Framework.run_pre_bind_pre_flights (upstream RunPreBindPreFlights) and its effect on
run_pre_bind_plugins."""

from __future__ import annotations

from typing import ClassVar

import pytest

from schedframe import framework as fw
from schedframe.framework import Code, CycleState, Status
from schedframe.objects import ObjectMeta, Pod
from schedframe.runtime import Framework

POD = Pod(metadata=ObjectMeta(name="p", namespace="default", uid="p"))


def _plugin(name: str, answer: Status | None | Exception | str) -> fw.Plugin:
    """A PreBind plugin whose PreBindPreFlight answers ``answer`` ("none": no such method)."""
    ran: list[str] = []

    class _PreBind(fw.PreBindPlugin):
        name: ClassVar[str] = ""
        calls: ClassVar[list[str]] = ran

        def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            ran.append(self.name)
            return None

    if answer != "none":

        def pre_bind_pre_flight(
            self: object, state: CycleState, pod: Pod, node_name: str
        ) -> Status | None:
            if isinstance(answer, Exception):
                raise answer
            assert not isinstance(answer, str)
            return answer

        _PreBind.pre_bind_pre_flight = pre_bind_pre_flight  # type: ignore[attr-defined]
    _PreBind.name = name
    return _PreBind()


SKIP = Status(Code.SKIP)


@pytest.mark.parametrize(
    ("answers", "want", "want_skipped"),
    [
        pytest.param([], SKIP, set(), id="no plugins: Skip"),
        pytest.param([SKIP, SKIP], SKIP, {"a", "b"}, id="all skip: Skip"),
        pytest.param([SKIP, None], None, {"a"}, id="one success: Success"),
        pytest.param(["none", SKIP], None, {"b"}, id="no PreBindPreFlight counts as Success"),
        pytest.param(
            [Status(Code.ERROR, "boom"), None],
            Status(Code.ERROR, 'running PreBindPreFlight "a": boom', plugin="a"),
            set(),
            id="error",
        ),
        pytest.param(
            [RuntimeError("boom")],
            Status(Code.ERROR, 'running PreBindPreFlight "a": RuntimeError: boom', plugin="a"),
            set(),
            id="raise",
        ),
        pytest.param(
            [Status(Code.UNSCHEDULABLE, "no")],
            Status(
                Code.ERROR,
                'PreBindPreFlight a returned "Unschedulable", which is unsupported. '
                "It is supposed to return Success, Skip, or Error status",
                plugin="a",
            ),
            set(),
            id="unsupported code",
        ),
    ],
)
def test_run_pre_bind_pre_flights(
    answers: list[Status | None | Exception | str], want: Status | None, want_skipped: set[str]
) -> None:
    fwk = Framework()
    for name, answer in zip("abc", answers, strict=False):
        fwk.add_plugin(_plugin(name, answer))
    state = CycleState()
    got = fwk.run_pre_bind_pre_flights(state, POD, "n1")
    if want is None:
        assert got is None
    else:
        assert got is not None
        assert (got.code, got.message(), got.plugin) == (want.code, want.message(), want.plugin)
    assert state.skip_pre_bind_plugins == want_skipped


def test_skipped_pre_bind_plugins_are_not_run() -> None:
    fwk = Framework()
    a, b = _plugin("a", SKIP), _plugin("b", None)
    fwk.add_plugin(a)
    fwk.add_plugin(b)
    state = CycleState()
    assert fwk.run_pre_bind_pre_flights(state, POD, "n1") is None
    assert fwk.run_pre_bind_plugins(state, POD, "n1") is None
    assert type(a).calls == [] and type(b).calls == ["b"]  # type: ignore[attr-defined]
    assert state.clone().skip_pre_bind_plugins == {"a"}


def test_will_wait_on_permit() -> None:
    fwk = Framework()
    assert fwk.will_wait_on_permit(POD) is False
