"""Nodes: taints, conditions, images and what they can hold (``allocatable``)."""

from __future__ import annotations

from datetime import datetime
from typing import Final

import attrs

from schedframe.objects._meta import ObjectMeta
from schedframe.objects._quantity import ResourceList

__all__ = [
    "TAINT_EFFECTS",
    "ContainerImage",
    "Node",
    "NodeCondition",
    "NodeSpec",
    "NodeStatus",
    "Taint",
]

#: The taint effects, in upstream order (``NoSchedule``, ``PreferNoSchedule``, ``NoExecute``).
TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")


@attrs.frozen(kw_only=True)
class Taint:
    """A node taint (upstream ``v1.Taint``); ``effect`` is one of :data:`TAINT_EFFECTS`."""

    key: str
    value: str = ""
    effect: str
    time_added: datetime | None = None

    def __str__(self) -> str:
        """``{key: value}``, the form upstream puts in ``node(s) had untolerated taint {...}``."""
        return f"{{{self.key}: {self.value}}}"

    def to_string(self) -> str:
        """``key=value:effect`` (or ``key:effect``, ...), as upstream ``Taint.ToString()``."""
        if not self.effect:
            return f"{self.key}={self.value}:" if self.value else self.key
        if not self.value:
            return f"{self.key}:{self.effect}"
        return f"{self.key}={self.value}:{self.effect}"

    def matches(self, other: Taint) -> bool:
        """Whether both taints have the same key and effect (upstream ``MatchTaint``)."""
        return self.key == other.key and self.effect == other.effect


@attrs.frozen(kw_only=True)
class NodeCondition:
    """One entry of ``status.conditions`` (``Ready``, ``MemoryPressure``, ...)."""

    type: str
    status: str
    reason: str = ""
    message: str = ""


@attrs.frozen(kw_only=True)
class ContainerImage:
    """An image present on the node, under all its names, and its size."""

    names: tuple[str, ...]
    size_bytes: int = 0


@attrs.frozen(kw_only=True)
class NodeSpec:
    """The node's spec: cordoned or not, taints, pod CIDR."""

    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()
    pod_cidr: str = ""


@attrs.frozen(kw_only=True)
class NodeStatus:
    """The node's status. Resource lists hold scheduler integers (see ``resource_amount``)."""

    capacity: ResourceList = attrs.field(factory=dict, hash=False)
    allocatable: ResourceList = attrs.field(factory=dict, hash=False)
    conditions: tuple[NodeCondition, ...] = ()
    images: tuple[ContainerImage, ...] = ()
    #: ``status.declaredFeatures``: node features the kubelet declares (NodeDeclaredFeatures).
    declared_features: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class Node:
    """A node (upstream ``v1.Node``), with shortcuts for what the plugins read."""

    metadata: ObjectMeta
    spec: NodeSpec = attrs.field(factory=NodeSpec)
    status: NodeStatus = attrs.field(factory=NodeStatus)

    @property
    def name(self) -> str:
        """The node's name."""
        return self.metadata.name

    @property
    def uid(self) -> str:
        """The node's uid."""
        return self.metadata.uid

    @property
    def labels(self) -> dict[str, str]:
        """The node's labels."""
        return self.metadata.labels

    @property
    def allocatable(self) -> ResourceList:
        """What pods may use, per resource (``status.allocatable``)."""
        return self.status.allocatable

    @property
    def taints(self) -> tuple[Taint, ...]:
        """The node's taints."""
        return self.spec.taints

    @property
    def unschedulable(self) -> bool:
        """Whether the node is cordoned (``spec.unschedulable``)."""
        return self.spec.unschedulable
