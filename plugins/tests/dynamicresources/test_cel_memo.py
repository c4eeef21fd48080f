"""CompiledExpression.device_matches_memo: one evaluation per expression and device."""

from __future__ import annotations

import pytest

from schedframe.objects import Device, DeviceAttribute
from schedframe_plugins._dra.cel import CELError, CompiledExpression, DeviceView

DRIVER = "gpu.example.com"


def _device(name: str, model: str) -> Device:
    return Device(name=name, attributes={"model": DeviceAttribute(string_value=model)})


def _view(dev: Device, driver: str = DRIVER) -> DeviceView:
    return DeviceView(driver=driver, attributes=dev.attributes, capacity=dev.capacity)


class _Counting(CompiledExpression):
    __slots__ = ("calls",)

    def __init__(self, expression: str) -> None:
        super().__init__(expression)
        self.calls = 0

    def device_matches(self, device: DeviceView) -> bool:
        self.calls += 1
        return super().device_matches(device)


def test_each_device_is_evaluated_once() -> None:
    compiled = _Counting('device.attributes["gpu.example.com"].model == "a100"')
    a, b = _device("d0", "a100"), _device("d1", "h100")
    for _ in range(3):
        assert compiled.device_matches_memo(a, _view(a)) is True
        assert compiled.device_matches_memo(b, _view(b)) is False
    assert compiled.calls == 2


def test_equal_content_other_object_and_driver_evaluate_anew() -> None:
    compiled = _Counting('device.driver == "gpu.example.com"')
    a = _device("d0", "a100")
    assert compiled.device_matches_memo(a, _view(a)) is True
    assert compiled.device_matches_memo(a, _view(a, "other.example.com")) is False
    twin = _device("d0", "a100")
    assert compiled.device_matches_memo(twin, _view(twin)) is True
    assert compiled.calls == 3


def test_runtime_errors_are_raised_each_time() -> None:
    compiled = _Counting('device.attributes["gpu.example.com"].missing == "x"')
    a = _device("d0", "a100")
    for _ in range(2):
        with pytest.raises(CELError, match="no such key: missing"):
            compiled.device_matches_memo(a, _view(a))
    assert compiled.calls == 2
