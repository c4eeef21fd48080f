"""The Framework's extension-point check answers as ``isinstance`` against the Protocols."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import pytest

import schedframe.framework as fw
from schedframe.runtime._framework import _implements

PROTOCOLS = [
    getattr(fw, name)
    for name in fw.__all__
    if isinstance(getattr(fw, name), type)
    and getattr(getattr(fw, name), "_is_runtime_protocol", False)
]


class Nominal(fw.FilterPlugin):
    def name(self) -> str:  # type: ignore[override]  # a method, where a name is expected
        return "Nominal"

    def filter(self, *args: Any) -> Any:
        return None


class Structural:
    """Every method of every extension point, no base class."""

    def name(self) -> str:
        return "Structural"


_EVERY_METHOD = sorted(
    {
        member
        for proto in PROTOCOLS
        for member in dir(proto)
        if not member.startswith("_") and callable(getattr(proto, member, None))
    }
)
for _member in _EVERY_METHOD:
    if _member != "name":
        setattr(Structural, _member, lambda self, *args: None)


class FilterOnly:
    def name(self) -> str:
        return "FilterOnly"

    def filter(self, *args: Any) -> Any:
        return None


class ScoreWithoutName:
    def score(self, *args: Any) -> Any:
        return None


def _blocked() -> object:
    """A complete filter plugin whose ``filter`` is blocked by setting it to None."""
    plugin = FilterOnly()
    plugin.filter = None  # type: ignore[method-assign,assignment]
    return plugin


def _data_member() -> object:
    """``name`` as a plain attribute (a data member satisfies a method member)."""

    class WithAttribute:
        name = "WithAttribute"

        def filter(self, *args: Any) -> Any:
            return None

    return WithAttribute()


OBJECTS = {
    "nominal subclass": Nominal(),
    "structural, every method": Structural(),
    "structural, filter only": FilterOnly(),
    "missing name": ScoreWithoutName(),
    "a method set to None": _blocked(),
    "name as an attribute": _data_member(),
    "not a plugin": object(),
}


@pytest.mark.parametrize("proto", PROTOCOLS, ids=lambda p: p.__name__)
@pytest.mark.parametrize("label", list(OBJECTS))
def test_implements_is_isinstance(proto: type, label: str) -> None:
    plugin = OBJECTS[label]
    assert _implements(plugin, proto) is isinstance(plugin, proto)


@pytest.mark.parametrize("label", list(OBJECTS))
def test_implements_a_tuple_is_isinstance_of_the_tuple(label: str) -> None:
    kinds = (fw.ScorePlugin, fw.FilterPlugin, fw.ReservePlugin)
    plugin = OBJECTS[label]
    assert _implements(plugin, kinds) is isinstance(plugin, kinds)


def test_a_registered_class_lacking_the_members_is_an_instance() -> None:
    @runtime_checkable
    class Probe(Protocol):
        def probe(self) -> None: ...

    class Registered:
        pass

    Probe.register(Registered)
    assert _implements(Registered(), Probe) is isinstance(Registered(), Probe) is True
    assert _implements(object(), Probe) is isinstance(object(), Probe) is False
