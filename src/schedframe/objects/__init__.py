"""The Kubernetes objects the scheduler reads, as frozen value classes, and their codec.

Objects are built once (from ``kubectl get -o yaml`` style dicts with :func:`from_dict` or
:func:`load_manifests`, or directly) and never change; copies are made with the ``with_*``
helpers or :func:`attrs.evolve`. Resource amounts are the integers the scheduler counts in:
milli-CPU for ``cpu`` and plain units (bytes, pods, devices) for everything else.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from schedframe.objects._codec import (
        from_dict,
        load_manifests,
        loads_manifests,
        namespace_from_dict,
        node_from_dict,
        pdb_from_dict,
        pod_from_dict,
        to_dict,
    )
    from schedframe.objects._meta import (
        LABEL_SELECTOR_OPERATORS,
        NODE_SELECTOR_OPERATORS,
        LabelSelector,
        LabelSelectorRequirement,
        Namespace,
        NodeSelector,
        NodeSelectorRequirement,
        NodeSelectorTerm,
        ObjectMeta,
        OwnerReference,
        PreferredSchedulingTerm,
    )
    from schedframe.objects._node import (
        TAINT_EFFECTS,
        ContainerImage,
        Node,
        NodeCondition,
        NodeSpec,
        NodeStatus,
        Taint,
    )
    from schedframe.objects._pod import (
        DEFAULT_SCHEDULER_NAME,
        Affinity,
        Container,
        ContainerPort,
        NodeAffinity,
        Pod,
        PodAffinity,
        PodAffinityTerm,
        PodAntiAffinity,
        PodCondition,
        PodSpec,
        PodStatus,
        Toleration,
        TopologySpreadConstraint,
        Volume,
        WeightedPodAffinityTerm,
    )
    from schedframe.objects._policy import PodDisruptionBudget
    from schedframe.objects._quantity import (
        BINARY_SI,
        CPU,
        DECIMAL_EXPONENT,
        DECIMAL_SI,
        DEFAULT_MEMORY_REQUEST,
        DEFAULT_MILLI_CPU_REQUEST,
        EPHEMERAL_STORAGE,
        MEMORY,
        PODS,
        Quantity,
        ResourceList,
        is_attachable_volume_resource_name,
        is_extended_resource_name,
        is_hugepage_resource_name,
        is_native_resource,
        is_prefixed_native_resource,
        is_scalar_resource_name,
        parse_quantity,
        resource_amount,
        resource_quantity,
    )

__all__ = [
    "Affinity",
    "BINARY_SI",
    "CPU",
    "Container",
    "ContainerImage",
    "ContainerPort",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "DEFAULT_SCHEDULER_NAME",
    "EPHEMERAL_STORAGE",
    "LABEL_SELECTOR_OPERATORS",
    "LabelSelector",
    "LabelSelectorRequirement",
    "MEMORY",
    "NODE_SELECTOR_OPERATORS",
    "Namespace",
    "Node",
    "NodeAffinity",
    "NodeCondition",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "NodeSpec",
    "NodeStatus",
    "ObjectMeta",
    "OwnerReference",
    "PODS",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodAntiAffinity",
    "PodCondition",
    "PodDisruptionBudget",
    "PodSpec",
    "PodStatus",
    "PreferredSchedulingTerm",
    "Quantity",
    "ResourceList",
    "TAINT_EFFECTS",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "Volume",
    "WeightedPodAffinityTerm",
    "from_dict",
    "is_attachable_volume_resource_name",
    "is_extended_resource_name",
    "is_hugepage_resource_name",
    "is_native_resource",
    "is_prefixed_native_resource",
    "is_scalar_resource_name",
    "load_manifests",
    "loads_manifests",
    "namespace_from_dict",
    "node_from_dict",
    "parse_quantity",
    "pdb_from_dict",
    "pod_from_dict",
    "resource_amount",
    "resource_quantity",
    "to_dict",
]

# Resolved on first use: a plugin that needs ``Pod`` does not pay for the manifest codec (and
# ``PodDisruptionBudget``) unless it reads manifests.
_WHERE: Final = {
    "Affinity": "_pod",
    "BINARY_SI": "_quantity",
    "CPU": "_quantity",
    "Container": "_pod",
    "ContainerImage": "_node",
    "ContainerPort": "_pod",
    "DECIMAL_EXPONENT": "_quantity",
    "DECIMAL_SI": "_quantity",
    "DEFAULT_MEMORY_REQUEST": "_quantity",
    "DEFAULT_MILLI_CPU_REQUEST": "_quantity",
    "DEFAULT_SCHEDULER_NAME": "_pod",
    "EPHEMERAL_STORAGE": "_quantity",
    "LABEL_SELECTOR_OPERATORS": "_meta",
    "LabelSelector": "_meta",
    "LabelSelectorRequirement": "_meta",
    "MEMORY": "_quantity",
    "NODE_SELECTOR_OPERATORS": "_meta",
    "Namespace": "_meta",
    "Node": "_node",
    "NodeAffinity": "_pod",
    "NodeCondition": "_node",
    "NodeSelector": "_meta",
    "NodeSelectorRequirement": "_meta",
    "NodeSelectorTerm": "_meta",
    "NodeSpec": "_node",
    "NodeStatus": "_node",
    "ObjectMeta": "_meta",
    "OwnerReference": "_meta",
    "PODS": "_quantity",
    "Pod": "_pod",
    "PodAffinity": "_pod",
    "PodAffinityTerm": "_pod",
    "PodAntiAffinity": "_pod",
    "PodCondition": "_pod",
    "PodDisruptionBudget": "_policy",
    "PodSpec": "_pod",
    "PodStatus": "_pod",
    "PreferredSchedulingTerm": "_meta",
    "Quantity": "_quantity",
    "ResourceList": "_quantity",
    "TAINT_EFFECTS": "_node",
    "Taint": "_node",
    "Toleration": "_pod",
    "TopologySpreadConstraint": "_pod",
    "Volume": "_pod",
    "WeightedPodAffinityTerm": "_pod",
    "from_dict": "_codec",
    "is_attachable_volume_resource_name": "_quantity",
    "is_extended_resource_name": "_quantity",
    "is_hugepage_resource_name": "_quantity",
    "is_native_resource": "_quantity",
    "is_prefixed_native_resource": "_quantity",
    "is_scalar_resource_name": "_quantity",
    "load_manifests": "_codec",
    "loads_manifests": "_codec",
    "namespace_from_dict": "_codec",
    "node_from_dict": "_codec",
    "parse_quantity": "_quantity",
    "pdb_from_dict": "_codec",
    "pod_from_dict": "_codec",
    "resource_amount": "_quantity",
    "resource_quantity": "_quantity",
    "to_dict": "_codec",
}


# Hidden from type checkers, which would otherwise accept any name as an attribute.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        where = _WHERE.get(name)
        if where is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{where}"), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(__all__)
