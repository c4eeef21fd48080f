"""What "a pod fits a node" means for the kit: the resources NodeResourcesFit checks."""

from __future__ import annotations

from collections.abc import Mapping

from schedframe.objects import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Pod, is_scalar_resource_name

__all__ = ["checked_resource", "fits_on", "reserve_on"]


def checked_resource(name: str) -> bool:
    """True for the resources NodeResourcesFit compares with allocatable: cpu, memory,
    ephemeral-storage and scalar resources (extended, hugepages, ``kubernetes.io/``-prefixed).
    """
    return name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource_name(name)


def fits_on(
    pod: Pod,
    allocatable: Mapping[str, int],
    used: Mapping[str, int],
    pod_count: int,
    ports: set[int],
) -> bool:
    """True when ``pod`` fits next to what is ``used`` (requests, pod count, host ports)."""
    if pod_count + 1 > allocatable.get(PODS, 0):
        return False
    for name, amount in pod.requests.items():
        if amount > 0 and checked_resource(name):
            if used.get(name, 0) + amount > allocatable.get(name, 0):
                return False
    return not any(port in ports for _, _, port in pod.host_ports)


def reserve_on(pod: Pod, used: dict[str, int], ports: set[int]) -> None:
    """Account ``pod``'s requests and host ports in ``used`` and ``ports``."""
    for name, amount in pod.requests.items():
        used[name] = used.get(name, 0) + amount
    ports.update(port for _, _, port in pod.host_ports)
