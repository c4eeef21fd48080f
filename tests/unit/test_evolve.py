"""``schedframe._evolve.evolve`` makes the copies ``attrs.evolve`` makes, and falls back to it
for classes whose ``__init__`` does more than store its arguments."""

from __future__ import annotations

from typing import Any, cast

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe._evolve import _PLAIN, evolve
from schedframe.objects import Node, ObjectMeta, Pod, PodCondition, PodDisruptionBudget
from schedframe.scheduler import ScheduleResult
from schedframe.testing import strategies as sst


def _same_copy(obj: Any, **changes: Any) -> None:
    ours = evolve(obj, **changes)
    theirs = attrs.evolve(obj, **changes)
    assert type(ours) is type(theirs)
    if cast(object, type(obj).__eq__) is not object.__eq__:
        assert ours == theirs
    for field in attrs.fields(type(obj)):
        assert getattr(ours, field.name) is getattr(theirs, field.name), field.name


@settings(max_examples=60, deadline=None)
@given(sst.pods(), sst.nodes(), sst.pod_disruption_budgets(), st.text(max_size=5))
def test_object_copies_are_those_of_attrs_evolve(
    pod: Pod, node: Node, pdb: PodDisruptionBudget, text: str
) -> None:
    _same_copy(pod, metadata=evolve(pod.metadata, resource_version=text))
    _same_copy(pod.metadata, uid=text, namespace=text)
    _same_copy(pod.spec, node_name=text)
    _same_copy(pod.status, nominated_node_name=text)
    _same_copy(node, metadata=evolve(node.metadata, resource_version=text))
    _same_copy(pdb, metadata=evolve(pdb.metadata, resource_version=text))
    _same_copy(PodCondition(type="PodScheduled", status="False"), reason=text)


def test_scheduler_records_take_the_direct_path() -> None:
    info = fw.QueuedPodInfo(pod_info=fw.PodInfo(Pod(metadata=ObjectMeta(name="p"))), timestamp=1.0)
    _same_copy(info, attempts=3)
    _same_copy(ScheduleResult(suggested_host="n1"), evaluated_nodes=2)
    for cls in (Pod, ObjectMeta, fw.QueuedPodInfo, ScheduleResult):
        assert _PLAIN[cls] is not None, cls


def test_unknown_fields_raise_type_error() -> None:
    with pytest.raises(TypeError, match="no field"):
        evolve(ObjectMeta(name="p"), nme="q")


@attrs.frozen
class _Converted:
    value: int = attrs.field(converter=int)


@attrs.frozen
class _PostInit:
    value: int
    double: int = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "double", self.value * 2)


@attrs.frozen
class _Private:
    _value: int


@attrs.frozen(cache_hash=True)
class _CachedHash:
    value: int


@attrs.define
class _Validated:
    value: int = attrs.field(validator=attrs.validators.instance_of(int))


def test_classes_init_does_more_for_go_through_attrs_evolve() -> None:
    assert evolve(_Converted(1), value="7") == _Converted(7)
    assert evolve(_PostInit(2), value=5).double == 10
    assert evolve(_Private(1), value=3) == _Private(3)
    copy = evolve(_CachedHash(1), value=2)
    assert hash(copy) == hash(_CachedHash(2))
    with pytest.raises(TypeError):
        evolve(_Validated(1), value="x")
    for cls in (_Converted, _PostInit, _Private, _CachedHash, _Validated):
        assert _PLAIN[cls] is None, cls
