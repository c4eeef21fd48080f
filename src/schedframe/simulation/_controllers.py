"""Workload objects to pods, as their controllers would create them.

Deployments (through the ReplicaSet they own), ReplicaSets, ReplicationControllers,
StatefulSets and Jobs become their pods here; DaemonSets are expanded per node by
:func:`daemon_set_pods` once the nodes are known. Names follow the controllers' shapes
(``<rs>-<5 chars>``, ``<sts>-<ordinal>``), made deterministic: the suffix comes from a hash
of the owner and the pod's index instead of a random draw, so runs repeat.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Final

import attrs

from schedframe.objects import (
    DaemonSet,
    Deployment,
    Job,
    LabelSelector,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    PersistentVolumeClaim,
    Pod,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
    Toleration,
    Volume,
)
from schedframe.objects._pod import Affinity

__all__ = ["controller_pods", "daemon_set_pods", "daemon_set_should_run"]

# Upstream utilrand.String's alphabet (no vowels, no confusable digits).
_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
#: The label a Deployment's ReplicaSet and pods carry (upstream DefaultDeploymentUniqueLabelKey).
POD_TEMPLATE_HASH: Final = "pod-template-hash"
_NOT_READY = "node.kubernetes.io/not-ready"
_UNREACHABLE = "node.kubernetes.io/unreachable"
# Upstream AddOrUpdateDaemonPodTolerations: what every DaemonSet pod tolerates.
_DAEMON_TOLERATIONS: Final = (
    Toleration(key=_NOT_READY, operator="Exists", effect="NoExecute"),
    Toleration(key=_UNREACHABLE, operator="Exists", effect="NoExecute"),
    Toleration(key="node.kubernetes.io/disk-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/memory-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/pid-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"),
)
_HOST_NETWORK_TOLERATION: Final = Toleration(
    key="node.kubernetes.io/network-unavailable", operator="Exists", effect="NoSchedule"
)


def _chars(seed: str, n: int) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:n])


def _owner(api_version: str, kind: str, meta: ObjectMeta) -> OwnerReference:
    return OwnerReference(
        api_version=api_version, kind=kind, name=meta.name, uid=meta.uid, controller=True
    )


def _pod(
    template: Pod,
    name: str,
    namespace: str,
    owner: OwnerReference,
    labels: dict[str, str] | None = None,
) -> Pod:
    meta = attrs.evolve(
        template.metadata,
        name=name,
        namespace=namespace,
        uid=f"{namespace}/{name}",
        labels={**template.labels, **(labels or {})},
        owner_references=(owner,),
        generate_name="",
    )
    return attrs.evolve(template, metadata=meta)


def _replica_pods(
    template: Pod, meta: ObjectMeta, owner: OwnerReference, replicas: int
) -> list[Pod]:
    # Upstream: generateName "<owner>-" and a random 5-character suffix.
    return [
        _pod(template, f"{meta.name}-{_chars(f'{meta.uid}/{i}', 5)}", meta.namespace, owner)
        for i in range(replicas)
    ]


def _deployment(d: Deployment) -> tuple[ReplicaSet, list[Pod]]:
    """The ReplicaSet a Deployment creates, ``<deployment>-<pod-template-hash>``, and its pods."""
    digest = _chars(f"{d.metadata.uid}/{d.template!r}", 10)
    name = f"{d.name}-{digest}"
    template = d.template.with_metadata(labels={**d.template.labels, POD_TEMPLATE_HASH: digest})
    rs_meta = ObjectMeta(
        name=name,
        namespace=d.namespace,
        uid=f"{d.namespace}/{name}",
        labels=dict(template.labels),
        owner_references=(_owner("apps/v1", "Deployment", d.metadata),),
    )
    selector = LabelSelector(
        match_labels={**d.selector.match_labels, POD_TEMPLATE_HASH: digest},
        match_expressions=d.selector.match_expressions,
    )
    rs = ReplicaSet(metadata=rs_meta, replicas=d.replicas, selector=selector, template=template)
    return rs, _replica_pods(
        template, rs_meta, _owner("apps/v1", "ReplicaSet", rs_meta), d.replicas
    )


def _stateful_set_pods(s: StatefulSet) -> tuple[list[PersistentVolumeClaim], list[Pod]]:
    """The set's claims and pods, as the StatefulSet controller makes them: for each ordinal
    and claim template, a claim ``<template>-<set>-<ordinal>`` labelled with the set's
    selector labels, used by the pod's volume named after the template (upstream
    ``getPersistentVolumeClaims`` and ``updateStorage``)."""
    owner = _owner("apps/v1", "StatefulSet", s.metadata)
    claims: list[PersistentVolumeClaim] = []
    pods = []
    for i in range(s.replicas):
        name = f"{s.name}-{i}"
        labels = {
            "statefulset.kubernetes.io/pod-name": name,
            "apps.kubernetes.io/pod-index": str(i),
        }
        pod = _pod(s.template, name, s.namespace, owner, labels)
        if s.volume_claim_templates:
            volumes = {v.name: v for v in pod.spec.volumes}
            for template in s.volume_claim_templates:
                claim_name = f"{template.name}-{s.name}-{i}"
                claims.append(
                    attrs.evolve(
                        template,
                        metadata=attrs.evolve(
                            template.metadata,
                            name=claim_name,
                            namespace=s.namespace,
                            uid=f"{s.namespace}/{claim_name}",
                            labels={**template.metadata.labels, **s.selector.match_labels},
                        ),
                    )
                )
                volumes[template.name] = Volume(
                    name=template.name, persistent_volume_claim=claim_name
                )
            pod = attrs.evolve(pod, spec=attrs.evolve(pod.spec, volumes=tuple(volumes.values())))
        pods.append(pod)
    return claims, pods


def _job_pods(j: Job) -> list[Pod]:
    owner = _owner("batch/v1", "Job", j.metadata)
    labels = {
        "batch.kubernetes.io/controller-uid": j.metadata.uid,
        "batch.kubernetes.io/job-name": j.name,
        "controller-uid": j.metadata.uid,
        "job-name": j.name,
    }
    count = j.parallelism if j.completions is None else j.completions
    return [
        _pod(
            j.template, f"{j.name}-{_chars(f'{j.metadata.uid}/{i}', 5)}", j.namespace, owner, labels
        )
        for i in range(count)
    ]


def controller_pods(obj: object) -> tuple[list[object], list[Pod], int]:
    """What a controller object leads to: the objects to store (the ReplicaSet a Deployment
    owns; the ReplicaSet, StatefulSet or RC itself, for default spreading; a StatefulSet's
    PersistentVolumeClaims), its pods in
    creation order, and how many of them may exist at once.

    A StatefulSet with ``OrderedReady`` creates one pod at a time (the next once the last is
    running, taken as bound here); a Job runs ``parallelism`` pods at once until
    ``completions`` have run. Others create all their pods at once.

    Raises:
        TypeError: for another kind of object.
    """
    if isinstance(obj, Deployment):
        rs, pods = _deployment(obj)
        return [rs], pods, len(pods)
    if isinstance(obj, ReplicaSet):
        owner = _owner("apps/v1", "ReplicaSet", obj.metadata)
        return [obj], _replica_pods(obj.template, obj.metadata, owner, obj.replicas), obj.replicas
    if isinstance(obj, ReplicationController):
        if obj.template is None:
            return [obj], [], 0
        owner = _owner("v1", "ReplicationController", obj.metadata)
        return [obj], _replica_pods(obj.template, obj.metadata, owner, obj.replicas), obj.replicas
    if isinstance(obj, StatefulSet):
        claims, pods = _stateful_set_pods(obj)
        at_once = 1 if obj.pod_management_policy == "OrderedReady" else len(pods)
        return [obj, *claims], pods, at_once
    if isinstance(obj, Job):
        pods = _job_pods(obj)
        return [], pods, min(obj.parallelism, len(pods))
    raise TypeError(f"not a workload controller: {type(obj).__name__}")


def _with_daemon_tolerations(
    tolerations: Sequence[Toleration], host_network: bool
) -> tuple[Toleration, ...]:
    result = list(tolerations)
    extra = [*_DAEMON_TOLERATIONS, *((_HOST_NETWORK_TOLERATION,) if host_network else ())]
    for t in extra:
        if not any(t.key == have.key and t.effect == have.effect for have in result):
            result.append(t)
    return tuple(result)


def _required_affinity_matches(pod: Pod, node: Node) -> bool:
    # Upstream nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): the nodeSelector and
    # the required node affinity terms.
    labels = node.metadata.labels
    if any(labels.get(k) != v for k, v in pod.spec.node_selector.items()):
        return False
    affinity = pod.spec.affinity
    required = (
        None
        if affinity is None or affinity.node_affinity is None
        else affinity.node_affinity.required
    )
    return required is None or required.matches(node.metadata.name, labels)


def daemon_set_should_run(ds: DaemonSet, node: Node) -> bool:
    """Whether the DaemonSet controller puts a pod on ``node`` (upstream
    ``NodeShouldRunDaemonPod``): the template's nodeSelector and required node affinity match,
    and every NoSchedule/NoExecute taint is tolerated (with the DaemonSet tolerations added)."""
    template = ds.template
    if not _required_affinity_matches(template, node):
        return False
    tolerations = _with_daemon_tolerations(template.spec.tolerations, template.spec.host_network)
    for taint in node.spec.taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(t.tolerates(taint) for t in tolerations):
            return False
    return True


def _pinned(affinity: Affinity | None, node_name: str) -> Affinity:
    # Upstream ReplaceDaemonSetPodNodeNameNodeAffinity: the required terms become one term
    # matching the node by metadata.name; preferences are kept.
    term = NodeSelectorTerm(
        match_fields=(
            NodeSelectorRequirement(key="metadata.name", operator="In", values=(node_name,)),
        )
    )
    required = NodeSelector(node_selector_terms=(term,))
    if affinity is None:
        return Affinity(node_affinity=NodeAffinity(required=required))
    preferred = () if affinity.node_affinity is None else affinity.node_affinity.preferred
    return attrs.evolve(
        affinity, node_affinity=NodeAffinity(required=required, preferred=preferred)
    )


def daemon_set_pods(ds: DaemonSet, nodes: Iterable[Node]) -> list[Pod]:
    """One pod per node the DaemonSet should run on, pinned to it by node affinity."""
    owner = _owner("apps/v1", "DaemonSet", ds.metadata)
    template = ds.template
    tolerations = _with_daemon_tolerations(template.spec.tolerations, template.spec.host_network)
    pods = []
    for node in nodes:
        if not daemon_set_should_run(ds, node):
            continue
        name = f"{ds.name}-{_chars(f'{ds.metadata.uid}/{node.metadata.name}', 5)}"
        spec = attrs.evolve(
            template.spec,
            affinity=_pinned(template.spec.affinity, node.metadata.name),
            tolerations=tolerations,
        )
        pods.append(_pod(attrs.evolve(template, spec=spec), name, ds.namespace, owner))
    return pods
