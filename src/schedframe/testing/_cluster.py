"""The :class:`Cluster` value the strategies generate and the harness and kit consume."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import attrs

from schedframe.objects import Namespace, Node, Pod, PodDisruptionBudget

if TYPE_CHECKING:
    from schedframe.backends import MemoryBackend
    from schedframe.cache import Snapshot
    from schedframe.framework import Clock

__all__ = ["Cluster"]


@attrs.frozen(kw_only=True)
class Cluster:
    """A consistent cluster: nodes, the pods running on them, and pods waiting to be scheduled.

    Every pod in :attr:`pods` is bound to one of :attr:`nodes` and fits it; every pod in
    :attr:`pending` is unbound. Names (and so uids) are unique.

    Attributes:
        nodes: the nodes, in creation order.
        pods: pods already running on the nodes (``spec.nodeName`` set).
        pending: pods not scheduled yet.
        namespaces: the namespaces the pods live in.
        pdbs: PodDisruptionBudgets over the running pods.
        custom: other objects the cluster holds (custom objects plugins list through
            ``Handle.lister``); created before the pods.
    """

    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    pending: tuple[Pod, ...] = ()
    namespaces: tuple[Namespace, ...] = ()
    pdbs: tuple[PodDisruptionBudget, ...] = ()
    custom: tuple[object, ...] = ()

    def objects(self) -> list[Namespace | Node | PodDisruptionBudget | Pod]:
        """Every object, in the order an API server would need them created."""
        return [*self.namespaces, *self.nodes, *self.pdbs, *self.pods, *self.pending]

    def __iter__(self) -> Iterator[Namespace | Node | PodDisruptionBudget | Pod]:
        return iter(self.objects())

    def snapshot(self) -> Snapshot:
        """A scheduler :class:`~schedframe.cache.Snapshot` of the nodes and running pods."""
        from schedframe.cache import Snapshot

        return Snapshot.from_objects(self.nodes, self.pods)

    def backend(self, *, clock: Clock | None = None) -> MemoryBackend:
        """A new :class:`~schedframe.backends.MemoryBackend` holding every object."""
        from schedframe.backends import MemoryBackend

        objects = [*self.namespaces, *self.nodes, *self.pdbs, *self.custom]
        return MemoryBackend([*objects, *self.pods, *self.pending], clock=clock)

    def node(self, name: str) -> Node:
        """The node called ``name``.

        Raises:
            KeyError: no such node.
        """
        for node in self.nodes:
            if node.metadata.name == name:
                return node
        raise KeyError(name)

    def pods_on(self, node_name: str) -> list[Pod]:
        """The running pods bound to ``node_name``."""
        return [p for p in self.pods if p.spec.node_name == node_name]

    def with_pending(self, *pods: Pod) -> Cluster:
        """A copy with ``pods`` added to :attr:`pending`."""
        return attrs.evolve(self, pending=(*self.pending, *pods))
