"""Handle listers through the real scheduler loop: typed kinds, custom kinds, custom events."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar

import pytest

from schedframe import framework as fw
from schedframe.framework import ActionType, ClusterEvent, Code, QueueingHint, Status
from schedframe.objects import CustomObject, Namespace, ObjectMeta, Pod, declare_custom_kind
from schedframe.objects._custom import undeclare_custom_kind
from schedframe.runtime import Registry

from ._support import config, make_node, make_pod, new_scheduler, profile


@pytest.fixture(autouse=True)
def _ticket_kind() -> Iterator[None]:
    declare_custom_kind("example.com/v1", "Ticket")
    yield
    undeclare_custom_kind("Ticket")


def ticket(name: str, namespace: str = "default") -> CustomObject:
    return CustomObject(
        api_version="example.com/v1",
        kind="Ticket",
        metadata=ObjectMeta(name=name, namespace=namespace),
    )


class NeedsTicket(fw.PreEnqueuePlugin, fw.EnqueueExtensions):
    """Admits a pod only when a Ticket named after it exists (read through a lister)."""

    name: ClassVar[str] = "NeedsTicket"
    seen_hints: ClassVar[list[tuple[str, str]]] = []
    instances: ClassVar[list[NeedsTicket]] = []

    def __init__(self, args: object, handle: fw.Handle) -> None:
        NeedsTicket.instances.append(self)
        self.tickets = handle.lister("Ticket")
        self.pods = handle.lister("Pod")
        self.typed_pods = handle.lister(Pod)  # an ObjectLister[Pod]
        self.namespaces = handle.lister("Namespace")

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if self.tickets.get(pod.metadata.name, pod.metadata.namespace) is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no ticket")
        return None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        return (fw.ClusterEventWithHint(ClusterEvent("Ticket", ActionType.ADD), self.hint),)

    def hint(self, pod: Pod, old: object, new: object) -> QueueingHint:
        assert isinstance(new, CustomObject)
        NeedsTicket.seen_hints.append((pod.metadata.name, new.metadata.name))
        if new.metadata.name == pod.metadata.name:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def test_a_custom_kind_event_wakes_the_pod_through_its_hint() -> None:
    NeedsTicket.seen_hints.clear()
    registry = Registry.discover()
    registry.register("NeedsTicket", NeedsTicket)
    cfg = config(profile(plugins={"preEnqueue": {"enabled": [{"name": "NeedsTicket"}]}}))
    sched, backend = new_scheduler(cfg, [make_node("n1")], registry=registry)
    backend.create(make_pod("a"))
    sched.run_until_idle()
    a = backend.get("Pod", "a")
    assert isinstance(a, Pod) and a.spec.node_name == ""
    backend.create(ticket("other"))
    sched.run_until_idle()
    assert NeedsTicket.seen_hints == [("a", "other")]
    a = backend.get("Pod", "a")
    assert isinstance(a, Pod) and a.spec.node_name == ""
    backend.create(ticket("a"))
    sched.run_until_idle()
    a = backend.get("Pod", "a")
    assert isinstance(a, Pod) and a.spec.node_name == "n1"
    plugin = NeedsTicket.instances[-1]
    assert [p.spec.node_name for p in plugin.typed_pods.list()] == ["n1"]
    typed = plugin.typed_pods.get("a", "default")
    assert typed is not None and typed.metadata.name == "a"
    assert [p.metadata.name for p in plugin.pods.list("default") if isinstance(p, Pod)] == ["a"]
    assert [t.metadata.name for t in plugin.tickets.list() if isinstance(t, CustomObject)] == [
        "a",
        "other",
    ]
    assert plugin.namespaces.list() == [] or all(
        isinstance(n, Namespace) for n in plugin.namespaces.list()
    )
    backend.delete(ticket("other"))
    sched.run_until_idle()
    assert plugin.tickets.get("other", "default") is None
