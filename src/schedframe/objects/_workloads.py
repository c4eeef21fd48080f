"""The workload objects the scheduler reads or simulate expands into pods.

Services, ReplicationControllers, ReplicaSets and StatefulSets give PodTopologySpread its
default selectors (upstream ``helper.DefaultSelector``); Deployments, Jobs and DaemonSets
(and ReplicaSets, StatefulSets) are sources of pods for ``simulate``. Only the fields those
two uses read are modelled. A ``template`` is a :class:`~schedframe.objects.Pod` with an
empty name: the pod template's metadata and spec.
"""

from __future__ import annotations

from typing import Final

import attrs

from schedframe.objects._meta import LabelSelector, ObjectMeta
from schedframe.objects._pod import Pod
from schedframe.objects._storage import PersistentVolumeClaim

__all__ = [
    "POD_MANAGEMENT_POLICIES",
    "DaemonSet",
    "Deployment",
    "Job",
    "ReplicaSet",
    "ReplicationController",
    "Service",
    "StatefulSet",
]

#: ``spec.podManagementPolicy`` values of a StatefulSet, in upstream order.
POD_MANAGEMENT_POLICIES: Final = ("OrderedReady", "Parallel")


class _Named:
    __slots__ = ()
    metadata: ObjectMeta

    @property
    def name(self) -> str:
        """The object's name."""
        return self.metadata.name

    @property
    def namespace(self) -> str:
        """The object's namespace."""
        return self.metadata.namespace


@attrs.frozen(kw_only=True)
class Service(_Named):
    """A Service (upstream ``v1.Service``): only ``spec.selector`` is read.

    ``selector=None`` (no selector) selects no pod, unlike an empty mapping, as upstream's
    ``GetPodServices`` treats a nil selector.
    """

    metadata: ObjectMeta
    selector: dict[str, str] | None = attrs.field(default=None, hash=False)


@attrs.frozen(kw_only=True)
class ReplicationController(_Named):
    """A ReplicationController (upstream ``v1.ReplicationController``).

    ``selector`` is defaulted to the template's labels when empty, as the API server does.
    """

    metadata: ObjectMeta
    replicas: int = 1
    selector: dict[str, str] = attrs.field(factory=dict, hash=False)
    template: Pod | None = None


@attrs.frozen(kw_only=True)
class ReplicaSet(_Named):
    """A ReplicaSet (upstream ``apps/v1.ReplicaSet``)."""

    metadata: ObjectMeta
    replicas: int = 1
    selector: LabelSelector = attrs.field(factory=LabelSelector)
    template: Pod


@attrs.frozen(kw_only=True)
class StatefulSet(_Named):
    """A StatefulSet (upstream ``apps/v1.StatefulSet``); its pods are ``<name>-<ordinal>``."""

    metadata: ObjectMeta
    replicas: int = 1
    selector: LabelSelector = attrs.field(factory=LabelSelector)
    template: Pod
    service_name: str = ""
    pod_management_policy: str = "OrderedReady"
    #: ``spec.volumeClaimTemplates``: each pod gets a claim ``<template>-<name>-<ordinal>``.
    volume_claim_templates: tuple[PersistentVolumeClaim, ...] = ()


@attrs.frozen(kw_only=True)
class Deployment(_Named):
    """A Deployment (upstream ``apps/v1.Deployment``), a source of pods for ``simulate``."""

    metadata: ObjectMeta
    replicas: int = 1
    selector: LabelSelector = attrs.field(factory=LabelSelector)
    template: Pod


@attrs.frozen(kw_only=True)
class Job(_Named):
    """A Job (upstream ``batch/v1.Job``), a source of pods for ``simulate``.

    ``parallelism`` defaults to 1; ``completions`` is ``None`` for a work-queue Job, and
    both default to 1 when neither is given (upstream ``SetDefaults_Job``).
    """

    metadata: ObjectMeta
    parallelism: int = 1
    completions: int | None = None
    selector: LabelSelector | None = None
    template: Pod


@attrs.frozen(kw_only=True)
class DaemonSet(_Named):
    """A DaemonSet (upstream ``apps/v1.DaemonSet``): one pod per node that admits it."""

    metadata: ObjectMeta
    selector: LabelSelector = attrs.field(factory=LabelSelector)
    template: Pod
