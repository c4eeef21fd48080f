"""DRA-backed extended resources (the DRAExtendedResource feature gate).

A DeviceClass with ``spec.extendedResourceName``, and every DeviceClass through its implicit
name ``deviceclass.resource.kubernetes.io/<class>``, lets a pod ask for devices of that class
in its containers' ``resources.requests`` as if they were an extended resource. On a node
that does not advertise the resource in its allocatable, the devices come from DRA instead:
NodeResourcesFit leaves such a request to DynamicResources, and the scoring plugins count the
class's devices on the node as the resource's allocatable amount.

This module holds what NodeResourcesFit, NodeResourcesBalancedAllocation and DynamicResources
share: the resource-name -> DeviceClass resolution (upstream's ``ExtendedResourceCache``) and
the per-node device totals the scorers use (upstream ``calculateDRAResourceTotals``).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

import attrs

from schedframe import framework as fw
from schedframe.objects import DeviceClass, Node, ResourceSlice, is_extended_resource_name
from schedframe_plugins._dra.allocator import DeviceID, node_matches
from schedframe_plugins._dra.cel import CELCache, CELError, DeviceView

__all__ = [
    "IMPLICIT_PREFIX",
    "DRAScoreState",
    "device_class_mapping",
    "dra_resource_totals",
    "dra_score_state",
    "dra_totals",
    "is_dra_extended_resource_name",
]

#: Upstream ``resourceapi.ResourceDeviceClassPrefix``: every class's implicit resource name.
IMPLICIT_PREFIX: Final = "deviceclass.resource.kubernetes.io/"

_EPOCH: Final = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def is_dra_extended_resource_name(name: str) -> bool:
    """Upstream ``IsDRAExtendedResourceName``: an extended resource name, or an implicit
    ``deviceclass.resource.kubernetes.io/<class>`` name."""
    return is_extended_resource_name(name) or name.startswith(IMPLICIT_PREFIX)


def _created(dc: DeviceClass) -> datetime.datetime:
    ts = dc.metadata.creation_timestamp
    if ts is None:
        return _EPOCH
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=datetime.UTC)


def device_class_mapping(classes: Iterable[DeviceClass]) -> dict[str, DeviceClass]:
    """Resource name -> the DeviceClass that provides it (upstream ``ExtendedResourceCache``).

    Every class provides its implicit name. An explicit ``extendedResourceName`` shared by
    several classes goes to the newest class (``creationTimestamp``), the alphabetically
    lowest name breaking ties, as upstream arbitrates.
    """
    mapping: dict[str, DeviceClass] = {}
    explicit: dict[str, DeviceClass] = {}
    for dc in classes:
        mapping[IMPLICIT_PREFIX + dc.name] = dc
        name = dc.extended_resource_name
        if not name:
            continue
        current = explicit.get(name)
        if current is None or (_created(dc), _reverse(dc.name)) > (
            _created(current),
            _reverse(current.name),
        ):
            explicit[name] = dc
    mapping.update(explicit)
    return mapping


def _reverse(name: str) -> tuple[int, ...]:
    # Orders names descending, so that the larger key is the alphabetically lower name.
    return tuple(-ord(c) for c in name) + (0,)


@attrs.frozen(kw_only=True)
class DRAScoreState:
    """What the scorers read for DRA-backed resources (upstream ``draPreScoreState``): the
    resource -> class mapping, the allocated devices and the slices, gathered once a cycle."""

    mapping: Mapping[str, DeviceClass] = attrs.field(hash=False)
    allocated: frozenset[DeviceID]
    slices: Sequence[ResourceSlice]


def dra_score_state(
    dra: fw.SharedDRAManager, resource_names: Iterable[str]
) -> DRAScoreState | None:
    """Upstream ``getDRAPreScoredParams``: the DRA data for scoring, or ``None`` when none of
    ``resource_names`` is provided by a DeviceClass (nothing to look at then)."""
    names = [n for n in resource_names if is_dra_extended_resource_name(n)]
    if not names:
        return None  # cpu and memory (the defaults): no class can provide them
    mapping = device_class_mapping(dra.device_classes())
    if not any(n in mapping for n in names):
        return None
    return DRAScoreState(
        mapping=mapping,
        allocated=dra.list_all_allocated_devices(),
        slices=tuple(dra.resource_slices()),
    )


def _class_matches(cel: CELCache, device_class: DeviceClass, view: DeviceView) -> bool:
    """Whether every selector of the class accepts the device.

    Raises:
        CELError: a selector does not compile or fails at runtime (upstream then gives up on
            the node's totals).
    """
    for selector in device_class.selectors:
        compiled = cel.get_or_compile(selector.expression)
        if not compiled.device_matches(view):  # raises the compile error too
            return False
    return True


def dra_resource_totals(
    state: DRAScoreState, node: Node, resource: str, cel: CELCache
) -> tuple[int, int]:
    """Upstream ``calculateDRAExtendedResourceAllocatableRequest``: how many devices of the
    class providing ``resource`` the node reaches, and how many of those are allocated;
    ``(0, 0)`` when no class provides it or a class selector does not compile."""
    device_class = state.mapping.get(resource)
    if device_class is None:
        return 0, 0
    capacity = allocated = 0
    try:
        for rs in state.slices:
            if rs.per_device_node_selection:
                devices = [
                    d
                    for d in rs.devices
                    if node_matches(node, d.node_name, d.all_nodes, d.node_selector)
                ]
            elif node_matches(node, rs.node_name, rs.all_nodes, rs.node_selector):
                devices = list(rs.devices)
            else:
                continue
            for dev in devices:
                view = DeviceView(
                    driver=rs.driver, attributes=dev.attributes, capacity=dev.capacity
                )
                if device_class.selectors and not _class_matches(cel, device_class, view):
                    continue
                capacity += 1
                if (rs.driver, rs.pool.name, dev.name) in state.allocated:
                    allocated += 1
    except CELError:
        return 0, 0
    return capacity, allocated


def dra_totals(
    state: DRAScoreState | None, cel: CELCache
) -> Callable[[Node, str], tuple[int, int]] | None:
    """:func:`dra_resource_totals` bound to ``state`` for the scorers; ``None`` without it."""
    if state is None:
        return None

    def totals(node: Node, resource: str) -> tuple[int, int]:
        return dra_resource_totals(state, node, resource, cel)

    return totals
