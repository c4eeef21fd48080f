"""The fast-path contract of :mod:`schedframe.framework.batch`: declared on the class only."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from schedframe import framework as fw
from schedframe.framework import batch as fb


class _Plain:
    name: ClassVar[str] = "Plain"

    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        return None


class _Batch(_Plain):
    def filter_batch(self, state: Any, pod: Any, columns: Any) -> None:
        return None


class _Inherits(_Batch):
    pass


class _Declared(fb.BatchScore):
    def score_batch(self, state: Any, pod: Any, columns: Any, rows: Any) -> None:
        return None


class _OnlyProtocolStub(fb.BatchScore):
    """Subclasses the Protocol without defining the method: not a declaration."""


class _NodeOnly:
    filter_reads_node_pods: ClassVar[bool] = False


def test_a_method_on_the_class_declares_the_form() -> None:
    assert fb.declares(_Batch(), fb.BatchFilter)
    assert fb.declares(_Inherits(), fb.BatchFilter)
    assert fb.declares(_Declared(), fb.BatchScore)
    assert not fb.declares(_Plain(), fb.BatchFilter)


def test_an_instance_attribute_never_declares_a_form() -> None:
    plugin = _Plain()
    plugin.filter_batch = lambda *a: None  # type: ignore[attr-defined]
    assert isinstance(plugin, fb.BatchFilter)  # the structural check alone would say yes
    assert not fb.declares(plugin, fb.BatchFilter)


def test_subclassing_the_protocol_without_the_method_is_not_a_declaration() -> None:
    assert not fb.declares(_OnlyProtocolStub(), fb.BatchScore)  # type: ignore[abstract]


def test_data_member_protocol() -> None:
    assert fb.declares(_NodeOnly(), fb.NodeOnlyFilter)
    assert not fb.declares(_Plain(), fb.NodeOnlyFilter)


@pytest.mark.parametrize(
    "name", ["NodeColumns", "LabelColumn", "EXACT_LIMIT", "FILTER_PASS", "FILTER_CHECK"]
)
def test_old_import_paths_still_work(name: str) -> None:
    assert getattr(fw, name) is getattr(fb, name)


def test_every_protocol_is_exported() -> None:
    protocols = {
        n
        for n, v in vars(fb).items()
        if isinstance(v, type) and v.__module__ == fb.__name__ and getattr(v, "_is_protocol", False)
    }
    assert protocols <= set(fb.__all__)
    assert all(hasattr(fb, n) for n in fb.__all__)
