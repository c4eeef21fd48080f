"""explain() admits the pods it is given as the API server would create them."""

from __future__ import annotations

import pytest

from schedframe.errors import BackendError
from schedframe.explain import explain
from schedframe.objects import Container, Node, NodeStatus, ObjectMeta, Pod, PodSpec, PriorityClass

NODE = Node(
    metadata=ObjectMeta(name="n1"),
    status=NodeStatus(allocatable={"cpu": 2000, "memory": 4 << 30, "pods": 110}),
)


def _pod(
    name: str, cpu: int, *, node: str = "", class_name: str = "", priority: int | None = None
) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", uid=f"default/{name}"),
        spec=PodSpec(
            node_name=node,
            priority_class_name=class_name,
            priority=priority,
            containers=(Container(name="c", requests={"cpu": cpu}),),
        ),
    )


def test_a_class_named_pod_gets_its_priority_and_preempts() -> None:
    running = _pod("low", 2000, node="n1", priority=0)
    high = PriorityClass(metadata=ObjectMeta(name="high"), value=1000)
    result = explain(
        _pod("new", 1000, class_name="high"), nodes=[NODE], pods=[running], priority_classes=[high]
    )
    assert result.post_filter is not None
    assert result.post_filter.victims == ("default/low",)


def test_an_unknown_class_is_rejected() -> None:
    with pytest.raises(BackendError, match="no PriorityClass with name high was found"):
        explain(_pod("new", 1000, class_name="high"), nodes=[NODE])
