"""Upstream's common pod signers (``k8s.io/kube-scheduler/framework`` ``signers.go``).

Each returns a JSON-serialisable value for a :class:`~schedframe.framework.SignFragment`;
orders that do not matter are sorted as upstream sorts them.
"""

from __future__ import annotations

from schedframe.objects import Pod

__all__ = ["host_ports_signer", "tolerations_signer", "volumes_signer"]


def host_ports_signer(pod: Pod) -> list[int]:
    """Upstream ``HostPortsSigner``: the distinct non-zero host ports of the containers and
    init containers, ascending."""
    ports = {
        port.host_port
        for container in (*pod.spec.containers, *pod.spec.init_containers)
        for port in container.ports
        if port.host_port != 0
    }
    return sorted(ports)


def tolerations_signer(pod: Pod) -> list[dict[str, object]]:
    """Upstream ``TolerationsSigner``: the tolerations ordered by key, then value (a stable
    sort, as Go's ``sort.Slice`` on equal keys may not be: equal pairs keep pod order)."""
    ordered = sorted(pod.spec.tolerations, key=lambda t: (t.key, t.value))
    return [
        {
            "key": t.key,
            "operator": t.operator,
            "value": t.value,
            "effect": t.effect,
            "tolerationSeconds": t.toleration_seconds,
        }
        for t in ordered
    ]


def volumes_signer(pod: Pod) -> list[dict[str, object]]:
    """Upstream ``VolumesSigner``: every volume's source but ConfigMap and Secret ones.

    schedframe models a volume's source only when it is a PersistentVolumeClaim; a volume of
    any other source is left out of the value, as upstream leaves out ConfigMap and Secret
    sources (so two pods differing only by, say, an emptyDir sign alike here).
    """
    return [
        {"persistentVolumeClaim": {"claimName": v.persistent_volume_claim}}
        for v in pod.spec.volumes
        if v.persistent_volume_claim is not None
    ]
