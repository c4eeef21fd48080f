"""What loading a cluster dump left out, by kind, so that nothing is dropped silently."""

from __future__ import annotations

import logging
from typing import Final

import attrs

__all__ = ["NOT_MODELLED_KINDS", "UNREAD_KINDS", "LoadReport"]

log = logging.getLogger("schedframe.objects")

#: Kinds kube-scheduler never reads: a dump may hold them, they are skipped and counted.
UNREAD_KINDS: Final = frozenset(
    {
        "APIService",
        "Binding",
        "CertificateSigningRequest",
        "ClusterRole",
        "ClusterRoleBinding",
        "ComponentStatus",
        "ConfigMap",
        "ControllerRevision",
        "CronJob",
        "CustomResourceDefinition",
        "EndpointSlice",
        "Endpoints",
        "Event",
        "FlowSchema",
        "HorizontalPodAutoscaler",
        "Ingress",
        "IngressClass",
        "Lease",
        "LimitRange",
        "MutatingWebhookConfiguration",
        "NetworkPolicy",
        "PodTemplate",
        "PriorityLevelConfiguration",
        "ResourceQuota",
        "Role",
        "RoleBinding",
        "RuntimeClass",
        "Secret",
        "ServiceAccount",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
        "VolumeSnapshot",
        "VolumeSnapshotClass",
        "VolumeSnapshotContent",
    }
)
#: Kinds kube-scheduler reads (dynamic resource allocation) that
#: schedframe does not model yet: skipped with a loud warning, never silently.
NOT_MODELLED_KINDS: Final[frozenset[str]] = frozenset()


@attrs.define
class LoadReport:
    """Objects :func:`~schedframe.objects.load_manifests` skipped, counted per kind.

    Attributes:
        skipped: kinds kube-scheduler never reads (ConfigMap, Secret, Event, custom
            resources, ...), with how many objects of each were skipped.
        not_modelled: kinds kube-scheduler reads that schedframe does not model yet
            (none at present; a kind added to Kubernetes later would be listed here):
            the results may differ from the cluster's for pods that use them.
    """

    skipped: dict[str, int] = attrs.field(factory=dict)
    not_modelled: dict[str, int] = attrs.field(factory=dict)

    def add(self, kind: str) -> bool:
        """Count an object of ``kind`` if it is one to skip; False for a kind to decode."""
        if kind in NOT_MODELLED_KINDS:
            self.not_modelled[kind] = self.not_modelled.get(kind, 0) + 1
            return True
        if kind in UNREAD_KINDS:
            self.skipped[kind] = self.skipped.get(kind, 0) + 1
            return True
        return False

    def add_custom(self, kind: str) -> None:
        """Count an object of a custom resource kind (never read by kube-scheduler)."""
        self.skipped[kind] = self.skipped.get(kind, 0) + 1

    def lines(self) -> list[str]:
        """One line per kind, the kinds that are not modelled first, each list by name."""
        return [
            *(_line(kind, n, _NOT_MODELLED) for kind, n in sorted(self.not_modelled.items())),
            *(_line(kind, n, _UNREAD) for kind, n in sorted(self.skipped.items())),
        ]

    def log(self) -> None:
        """Log :meth:`lines` as warnings on the ``schedframe.objects`` logger."""
        for line in self.lines():
            log.warning("%s", line)

    def __bool__(self) -> bool:
        return bool(self.skipped or self.not_modelled)


_UNREAD: Final = "not read by kube-scheduler"
_NOT_MODELLED: Final = (
    "read by kube-scheduler but NOT modelled by schedframe; pods that use them may be "
    "placed differently than in the cluster"
)


def _line(kind: str, count: int, why: str) -> str:
    prefix = "warning: " if why is _NOT_MODELLED else ""
    return f"{prefix}skipped {count} {kind}: {why}"
