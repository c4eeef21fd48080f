"""Fluent builders for test objects, modelled on upstream's ``st.MakePod()`` / ``st.MakeNode()``.

Each ``make_*`` function returns a mutable wrapper; every method changes it and returns it, and
``.obj()`` builds the frozen object::

    pod = make_pod("web").req(cpu="100m", memory="128Mi").priority(5).obj()
    node = make_node("n1").capacity(cpu="4", memory="8Gi").zone("a").taint("gpu").obj()

Resource amounts are Kubernetes quantities (``"100m"``, ``"1Gi"``, ``2``), read as the YAML
codec reads them; keyword names use ``_`` for ``-`` (``ephemeral_storage="1Gi"``), and names
that are not identifiers go in a mapping (``req({"nvidia.com/gpu": 1}, cpu="1")``).

Upstream: ``pkg/scheduler/testing/wrappers.go``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC as _UTC
from datetime import datetime
from typing import Final

from schedframe.objects import (
    DEFAULT_SCHEDULER_NAME as _DEFAULT_SCHEDULER_NAME,
)
from schedframe.objects import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    NodeAffinity,
    NodeCondition,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    PodCondition,
    PodDisruptionBudget,
    PodSpec,
    PodStatus,
    PreferredSchedulingTerm,
    ResourceList,
    ResourceRequirements,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
    parse_quantity,
    resource_amount,
)

__all__ = [
    "LABEL_HOSTNAME",
    "LABEL_REGION",
    "LABEL_ZONE",
    "NamespaceWrapper",
    "NodeWrapper",
    "PdbWrapper",
    "PodWrapper",
    "lenient_from_dict",
    "make_namespace",
    "make_node",
    "make_pdb",
    "make_pod",
    "resources",
]

#: The node label kubelet sets to the node's name (upstream ``v1.LabelHostname``).
LABEL_HOSTNAME: Final = "kubernetes.io/hostname"
#: The well-known zone label (upstream ``v1.LabelTopologyZone``).
LABEL_ZONE: Final = "topology.kubernetes.io/zone"
#: The well-known region label (upstream ``v1.LabelTopologyRegion``).
LABEL_REGION: Final = "topology.kubernetes.io/region"

_DEFAULT_PODS_CAPACITY: Final = 110
_PAUSE_IMAGE: Final = "registry.k8s.io/pause:3.10"

Amount = str | int | float


def resources(amounts: Mapping[str, Amount] | None = None, /, **named: Amount) -> ResourceList:
    """A resource list in scheduler integers from quantities: ``resources(cpu="1", memory="1Gi")``.

    Keyword names use ``_`` for ``-``; other names go in the positional mapping. ``cpu`` is
    counted in millicores, everything else in units (bytes, pods, devices).

    Raises:
        ValueError: an amount is not a valid quantity.
    """
    out: dict[str, int] = {}
    merged: dict[str, Amount] = dict(amounts or {})
    merged.update({k.replace("_", "-"): v for k, v in named.items()})
    for name, amount in merged.items():
        out[name] = resource_amount(name, parse_quantity(amount))
    return out


def _selector(match_labels: Mapping[str, str] | None) -> LabelSelector | None:
    return None if match_labels is None else LabelSelector(match_labels=dict(match_labels))


class PodWrapper:
    """Builds a :class:`~schedframe.objects.Pod` step by step (upstream ``PodWrapper``).

    Every method returns the wrapper; :meth:`obj` returns the pod. The uid defaults to
    ``namespace/name``, as the manifest codec and the memory backend give it.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._namespace = "default"
        self._uid = ""
        self._labels: dict[str, str] = {}
        self._annotations: dict[str, str] = {}
        self._owners: list[OwnerReference] = []
        self._created: datetime | None = None
        self._deleted: datetime | None = None
        self._containers: list[Container] = []
        self._init_containers: list[Container] = []
        self._overhead: dict[str, int] = {}
        self._pod_resources: ResourceRequirements | None = None
        self._node_name = ""
        self._scheduler_name = _DEFAULT_SCHEDULER_NAME
        self._priority: int | None = None
        self._preemption_policy = "PreemptLowerPriority"
        self._node_selector: dict[str, str] = {}
        self._required_terms: list[NodeSelectorTerm] = []
        self._preferred_terms: list[PreferredSchedulingTerm] = []
        self._pod_affinity: list[PodAffinityTerm] = []
        self._pod_affinity_preferred: list[WeightedPodAffinityTerm] = []
        self._pod_anti_affinity: list[PodAffinityTerm] = []
        self._pod_anti_affinity_preferred: list[WeightedPodAffinityTerm] = []
        self._tolerations: list[Toleration] = []
        self._spread: list[TopologySpreadConstraint] = []
        self._gates: list[str] = []
        self._volumes: list[Volume] = []
        self._host_network = False
        self._grace: int | None = None
        self._phase = "Pending"
        self._nominated = ""
        self._conditions: list[PodCondition] = []
        self._start_time: datetime | None = None

    # -- metadata ---------------------------------------------------------------------------

    def name(self, name: str) -> PodWrapper:
        """Set the name."""
        self._name = name
        return self

    def namespace(self, namespace: str) -> PodWrapper:
        """Set the namespace (``default`` by default)."""
        self._namespace = namespace
        return self

    def uid(self, uid: str) -> PodWrapper:
        """Set the uid (``namespace/name`` by default)."""
        self._uid = uid
        return self

    def label(self, key: str, value: str) -> PodWrapper:
        """Add one label."""
        self._labels[key] = value
        return self

    def labels(self, labels: Mapping[str, str] | None = None, /, **more: str) -> PodWrapper:
        """Add labels from a mapping and/or keywords."""
        self._labels.update(labels or {})
        self._labels.update(more)
        return self

    def annotation(self, key: str, value: str) -> PodWrapper:
        """Add one annotation."""
        self._annotations[key] = value
        return self

    def owner(self, kind: str, name: str, *, controller: bool = True) -> PodWrapper:
        """Add an owner reference (a controller by default), e.g. ``owner("ReplicaSet", "rs")``."""
        api = (
            "apps/v1" if kind in ("ReplicaSet", "StatefulSet", "DaemonSet", "Deployment") else "v1"
        )
        self._owners.append(
            OwnerReference(
                api_version=api, kind=kind, name=name, uid=f"{kind}/{name}", controller=controller
            )
        )
        return self

    def created(self, when: datetime | float) -> PodWrapper:
        """Set ``creationTimestamp`` (a datetime, or seconds since the epoch)."""
        self._created = _time(when)
        return self

    def terminating(self, when: datetime | float = 0.0) -> PodWrapper:
        """Set ``deletionTimestamp``: the pod is being deleted."""
        self._deleted = _time(when)
        return self

    # -- containers and resources ------------------------------------------------------------

    def container(
        self,
        name: str | None = None,
        *,
        image: str = _PAUSE_IMAGE,
        requests: Mapping[str, Amount] | None = None,
        limits: Mapping[str, Amount] | None = None,
        host_ports: Iterable[int] = (),
    ) -> PodWrapper:
        """Add an application container."""
        self._containers.append(
            _container(
                name or f"c{len(self._containers)}", image, requests, limits, host_ports, None
            )
        )
        return self

    def req(self, amounts: Mapping[str, Amount] | None = None, /, **named: Amount) -> PodWrapper:
        """Add a container requesting ``amounts`` (upstream ``Req``): ``req(cpu="100m")``."""
        requests = dict(amounts or {})
        requests.update({k.replace("_", "-"): v for k, v in named.items()})
        return self.container(requests=requests)

    def lim(self, amounts: Mapping[str, Amount] | None = None, /, **named: Amount) -> PodWrapper:
        """Add a container whose requests equal its limits (the API server's defaulting)."""
        limits = dict(amounts or {})
        limits.update({k.replace("_", "-"): v for k, v in named.items()})
        return self.container(requests=limits, limits=limits)

    def init_req(
        self,
        amounts: Mapping[str, Amount] | None = None,
        /,
        *,
        sidecar: bool = False,
        **named: Amount,
    ) -> PodWrapper:
        """Add an init container requesting ``amounts``; ``sidecar=True`` makes it restartable."""
        requests = dict(amounts or {})
        requests.update({k.replace("_", "-"): v for k, v in named.items()})
        self._init_containers.append(
            _container(
                f"init{len(self._init_containers)}",
                _PAUSE_IMAGE,
                requests,
                None,
                (),
                "Always" if sidecar else None,
            )
        )
        return self

    def overhead(
        self, amounts: Mapping[str, Amount] | None = None, /, **named: Amount
    ) -> PodWrapper:
        """Set the pod overhead (RuntimeClass)."""
        self._overhead = resources(amounts, **named)
        return self

    def pod_req(
        self, amounts: Mapping[str, Amount] | None = None, /, **named: Amount
    ) -> PodWrapper:
        """Set pod-level requests (``spec.resources.requests``; cpu, memory, hugepages)."""
        limits = {} if self._pod_resources is None else self._pod_resources.limits
        self._pod_resources = ResourceRequirements(
            requests=resources(amounts, **named), limits=limits
        )
        return self

    def pod_lim(
        self, amounts: Mapping[str, Amount] | None = None, /, **named: Amount
    ) -> PodWrapper:
        """Set pod-level limits (``spec.resources.limits``); a limit without a request is
        also the request, as the API server defaults it."""
        limits = resources(amounts, **named)
        requests = {} if self._pod_resources is None else dict(self._pod_resources.requests)
        for name, amount in limits.items():
            requests.setdefault(name, amount)
        self._pod_resources = ResourceRequirements(requests=requests, limits=limits)
        return self

    def host_port(self, port: int, *, protocol: str = "TCP", host_ip: str = "") -> PodWrapper:
        """Add a container claiming ``port`` on the node (upstream ``HostPort``)."""
        self._containers.append(
            Container(
                name=f"c{len(self._containers)}",
                image=_PAUSE_IMAGE,
                ports=(
                    ContainerPort(
                        container_port=port, host_port=port, protocol=protocol, host_ip=host_ip
                    ),
                ),
            )
        )
        return self

    def image(self, image: str) -> PodWrapper:
        """Add a container running ``image`` with no requests."""
        return self.container(image=image)

    def pvc(self, claim: str, *, name: str | None = None) -> PodWrapper:
        """Add a volume backed by PersistentVolumeClaim ``claim``."""
        self._volumes.append(
            Volume(name=name or f"vol{len(self._volumes)}", persistent_volume_claim=claim)
        )
        return self

    # -- scheduling --------------------------------------------------------------------------

    def node(self, node_name: str) -> PodWrapper:
        """Bind the pod to ``node_name`` (``spec.nodeName``)."""
        self._node_name = node_name
        return self

    def scheduler_name(self, name: str) -> PodWrapper:
        """Set ``spec.schedulerName``."""
        self._scheduler_name = name
        return self

    def priority(self, priority: int) -> PodWrapper:
        """Set ``spec.priority``."""
        self._priority = priority
        return self

    def preemption_policy(self, policy: str) -> PodWrapper:
        """Set ``spec.preemptionPolicy`` (``PreemptLowerPriority`` or ``Never``)."""
        self._preemption_policy = policy
        return self

    def node_selector(
        self, selector: Mapping[str, str] | None = None, /, **more: str
    ) -> PodWrapper:
        """Add ``spec.nodeSelector`` entries."""
        self._node_selector.update(selector or {})
        self._node_selector.update(more)
        return self

    def node_affinity_in(self, key: str, values: Iterable[str]) -> PodWrapper:
        """Require a node whose label ``key`` is one of ``values`` (a new required term)."""
        return self._node_term(key, "In", values)

    def node_affinity_not_in(self, key: str, values: Iterable[str]) -> PodWrapper:
        """Require a node whose label ``key`` is none of ``values`` (a new required term)."""
        return self._node_term(key, "NotIn", values)

    def node_affinity_exists(self, key: str) -> PodWrapper:
        """Require a node that has label ``key`` (a new required term)."""
        return self._node_term(key, "Exists", ())

    def _node_term(self, key: str, op: str, values: Iterable[str]) -> PodWrapper:
        self._required_terms.append(
            NodeSelectorTerm(
                match_expressions=(
                    NodeSelectorRequirement(key=key, operator=op, values=tuple(values)),
                )
            )
        )
        return self

    def preferred_node_affinity(
        self, weight: int, key: str, values: Iterable[str], *, operator: str = "In"
    ) -> PodWrapper:
        """Prefer nodes whose label ``key`` matches (weight 1-100)."""
        self._preferred_terms.append(
            PreferredSchedulingTerm(
                weight=weight,
                preference=NodeSelectorTerm(
                    match_expressions=(
                        NodeSelectorRequirement(key=key, operator=operator, values=tuple(values)),
                    )
                ),
            )
        )
        return self

    def pod_affinity(
        self,
        topology_key: str,
        match_labels: Mapping[str, str],
        *,
        namespaces: Iterable[str] = (),
        weight: int | None = None,
    ) -> PodWrapper:
        """Require (or, with ``weight``, prefer) being in a domain with pods matching the labels."""
        term = PodAffinityTerm(
            label_selector=_selector(match_labels),
            namespaces=tuple(namespaces),
            topology_key=topology_key,
        )
        if weight is None:
            self._pod_affinity.append(term)
        else:
            self._pod_affinity_preferred.append(WeightedPodAffinityTerm(weight=weight, term=term))
        return self

    def pod_anti_affinity(
        self,
        topology_key: str,
        match_labels: Mapping[str, str],
        *,
        namespaces: Iterable[str] = (),
        weight: int | None = None,
    ) -> PodWrapper:
        """Require (or, with ``weight``, prefer) no pod matching the labels in the domain."""
        term = PodAffinityTerm(
            label_selector=_selector(match_labels),
            namespaces=tuple(namespaces),
            topology_key=topology_key,
        )
        if weight is None:
            self._pod_anti_affinity.append(term)
        else:
            self._pod_anti_affinity_preferred.append(
                WeightedPodAffinityTerm(weight=weight, term=term)
            )
        return self

    def toleration(
        self,
        key: str = "",
        value: str = "",
        *,
        effect: str = "",
        operator: str | None = None,
        seconds: int | None = None,
    ) -> PodWrapper:
        """Tolerate a taint; ``operator`` defaults to ``Equal`` with a value, else ``Exists``."""
        op = operator if operator is not None else ("Equal" if value else "Exists")
        self._tolerations.append(
            Toleration(key=key, operator=op, value=value, effect=effect, toleration_seconds=seconds)
        )
        return self

    def spread_constraint(
        self,
        max_skew: int,
        topology_key: str,
        match_labels: Mapping[str, str] | None,
        *,
        when_unsatisfiable: str = "DoNotSchedule",
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: Iterable[str] = (),
    ) -> PodWrapper:
        """Add a topology spread constraint (upstream ``SpreadConstraint``)."""
        self._spread.append(
            TopologySpreadConstraint(
                max_skew=max_skew,
                topology_key=topology_key,
                when_unsatisfiable=when_unsatisfiable,
                label_selector=_selector(match_labels),
                min_domains=min_domains,
                node_affinity_policy=node_affinity_policy,
                node_taints_policy=node_taints_policy,
                match_label_keys=tuple(match_label_keys),
            )
        )
        return self

    def scheduling_gates(self, *gates: str) -> PodWrapper:
        """Add scheduling gates."""
        self._gates.extend(gates)
        return self

    def host_network(self, on: bool = True) -> PodWrapper:
        """Set ``spec.hostNetwork``."""
        self._host_network = on
        return self

    def termination_grace_period(self, seconds: int) -> PodWrapper:
        """Set ``spec.terminationGracePeriodSeconds``."""
        self._grace = seconds
        return self

    # -- status ------------------------------------------------------------------------------

    def phase(self, phase: str) -> PodWrapper:
        """Set ``status.phase``."""
        self._phase = phase
        return self

    def nominated_node(self, node_name: str) -> PodWrapper:
        """Set ``status.nominatedNodeName``."""
        self._nominated = node_name
        return self

    def condition(self, type: str, status: str, *, reason: str = "") -> PodWrapper:
        """Add a status condition."""
        self._conditions.append(PodCondition(type=type, status=status, reason=reason))
        return self

    def start_time(self, when: datetime | float) -> PodWrapper:
        """Set ``status.startTime`` (a datetime, or seconds since the epoch)."""
        self._start_time = _time(when)
        return self

    # -- result ------------------------------------------------------------------------------

    def obj(self) -> Pod:
        """The pod."""
        affinity = None
        if (
            self._required_terms
            or self._preferred_terms
            or self._pod_affinity
            or self._pod_affinity_preferred
            or self._pod_anti_affinity
            or self._pod_anti_affinity_preferred
        ):
            node_affinity = None
            if self._required_terms or self._preferred_terms:
                node_affinity = NodeAffinity(
                    required=NodeSelector(node_selector_terms=tuple(self._required_terms))
                    if self._required_terms
                    else None,
                    preferred=tuple(self._preferred_terms),
                )
            affinity = Affinity(
                node_affinity=node_affinity,
                pod_affinity=PodAffinity(
                    required=tuple(self._pod_affinity),
                    preferred=tuple(self._pod_affinity_preferred),
                )
                if self._pod_affinity or self._pod_affinity_preferred
                else None,
                pod_anti_affinity=PodAntiAffinity(
                    required=tuple(self._pod_anti_affinity),
                    preferred=tuple(self._pod_anti_affinity_preferred),
                )
                if self._pod_anti_affinity or self._pod_anti_affinity_preferred
                else None,
            )
        return Pod(
            metadata=ObjectMeta(
                name=self._name,
                namespace=self._namespace,
                uid=self._uid or f"{self._namespace}/{self._name}",
                labels=dict(self._labels),
                annotations=dict(self._annotations),
                owner_references=tuple(self._owners),
                creation_timestamp=self._created,
                deletion_timestamp=self._deleted,
            ),
            spec=PodSpec(
                node_name=self._node_name,
                scheduler_name=self._scheduler_name,
                priority=self._priority,
                preemption_policy=self._preemption_policy,
                node_selector=dict(self._node_selector),
                affinity=affinity,
                tolerations=tuple(self._tolerations),
                containers=tuple(self._containers),
                init_containers=tuple(self._init_containers),
                overhead=dict(self._overhead),
                resources=self._pod_resources,
                topology_spread_constraints=tuple(self._spread),
                scheduling_gates=tuple(self._gates),
                host_network=self._host_network,
                termination_grace_period_seconds=self._grace,
                volumes=tuple(self._volumes),
            ),
            status=PodStatus(
                phase=self._phase,
                nominated_node_name=self._nominated,
                conditions=tuple(self._conditions),
                start_time=self._start_time,
            ),
        )


class NodeWrapper:
    """Builds a :class:`~schedframe.objects.Node` step by step (upstream ``NodeWrapper``).

    The ``kubernetes.io/hostname`` label is set to the node's name, as kubelet does.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._uid = ""
        self._labels: dict[str, str] = {}
        self._annotations: dict[str, str] = {}
        self._capacity: dict[str, int] = {}
        self._allocatable: dict[str, int] | None = None
        self._taints: list[Taint] = []
        self._unschedulable = False
        self._images: list[ContainerImage] = []
        self._conditions: list[NodeCondition] = []

    def uid(self, uid: str) -> NodeWrapper:
        """Set the uid (the name by default)."""
        self._uid = uid
        return self

    def label(self, key: str, value: str) -> NodeWrapper:
        """Add one label."""
        self._labels[key] = value
        return self

    def labels(self, labels: Mapping[str, str] | None = None, /, **more: str) -> NodeWrapper:
        """Add labels from a mapping and/or keywords."""
        self._labels.update(labels or {})
        self._labels.update(more)
        return self

    def annotation(self, key: str, value: str) -> NodeWrapper:
        """Add one annotation."""
        self._annotations[key] = value
        return self

    def zone(self, zone: str, *, region: str | None = None) -> NodeWrapper:
        """Set ``topology.kubernetes.io/zone`` (and ``/region`` when given)."""
        self._labels[LABEL_ZONE] = zone
        if region is not None:
            self._labels[LABEL_REGION] = region
        return self

    def capacity(
        self, amounts: Mapping[str, Amount] | None = None, /, **named: Amount
    ) -> NodeWrapper:
        """Set capacity (and allocatable, unless set apart) from quantities.

        ``pods`` defaults to 110 (kubelet's default) when not given, so a node built with
        ``capacity(cpu="4", memory="8Gi")`` can hold pods.
        """
        amounts_out = resources(amounts, **named)
        amounts_out.setdefault("pods", _DEFAULT_PODS_CAPACITY)
        self._capacity = amounts_out
        return self

    def allocatable(
        self, amounts: Mapping[str, Amount] | None = None, /, **named: Amount
    ) -> NodeWrapper:
        """Set allocatable apart from capacity (kube-reserved and friends)."""
        self._allocatable = resources(amounts, **named)
        return self

    def taint(self, key: str, value: str = "", *, effect: str = "NoSchedule") -> NodeWrapper:
        """Add a taint (``NoSchedule`` by default)."""
        self._taints.append(Taint(key=key, value=value, effect=effect))
        return self

    def unschedulable(self, on: bool = True) -> NodeWrapper:
        """Cordon the node (``spec.unschedulable``)."""
        self._unschedulable = on
        return self

    def image(self, name: str, size_bytes: int, *more_names: str) -> NodeWrapper:
        """Record an image present on the node."""
        self._images.append(ContainerImage(names=(name, *more_names), size_bytes=size_bytes))
        return self

    def condition(self, type: str, status: str, *, reason: str = "") -> NodeWrapper:
        """Add a status condition (``Ready``...)."""
        self._conditions.append(NodeCondition(type=type, status=status, reason=reason))
        return self

    def obj(self) -> Node:
        """The node."""
        labels = {LABEL_HOSTNAME: self._name, **self._labels}
        allocatable = self._allocatable if self._allocatable is not None else self._capacity
        return Node(
            metadata=ObjectMeta(
                name=self._name,
                uid=self._uid or self._name,
                labels=labels,
                annotations=dict(self._annotations),
            ),
            spec=NodeSpec(unschedulable=self._unschedulable, taints=tuple(self._taints)),
            status=NodeStatus(
                capacity=dict(self._capacity),
                allocatable=dict(allocatable),
                conditions=tuple(self._conditions),
                images=tuple(self._images),
            ),
        )


class NamespaceWrapper:
    """Builds a :class:`~schedframe.objects.Namespace`."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._labels: dict[str, str] = {"kubernetes.io/metadata.name": name}

    def label(self, key: str, value: str) -> NamespaceWrapper:
        """Add one label (``kubernetes.io/metadata.name`` is always set, as the API server does)."""
        self._labels[key] = value
        return self

    def labels(self, labels: Mapping[str, str] | None = None, /, **more: str) -> NamespaceWrapper:
        """Add labels from a mapping and/or keywords."""
        self._labels.update(labels or {})
        self._labels.update(more)
        return self

    def obj(self) -> Namespace:
        """The namespace."""
        return Namespace(metadata=ObjectMeta(name=self._name, uid=self._name, labels=self._labels))


class PdbWrapper:
    """Builds a :class:`~schedframe.objects.PodDisruptionBudget`."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._namespace = "default"
        self._selector: LabelSelector | None = LabelSelector()
        self._min_available: int | str | None = None
        self._max_unavailable: int | str | None = None
        self._allowed = 0

    def namespace(self, namespace: str) -> PdbWrapper:
        """Set the namespace (``default`` by default)."""
        self._namespace = namespace
        return self

    def selector(self, match_labels: Mapping[str, str] | None = None, /, **more: str) -> PdbWrapper:
        """Select pods by labels (every pod of the namespace by default)."""
        self._selector = LabelSelector(match_labels={**(match_labels or {}), **more})
        return self

    def match_expression(self, key: str, operator: str, values: Iterable[str] = ()) -> PdbWrapper:
        """Add a selector expression."""
        base = self._selector or LabelSelector()
        self._selector = LabelSelector(
            match_labels=base.match_labels,
            match_expressions=(
                *base.match_expressions,
                LabelSelectorRequirement(key=key, operator=operator, values=tuple(values)),
            ),
        )
        return self

    def min_available(self, value: int | str) -> PdbWrapper:
        """Set ``minAvailable`` (a count or ``"50%"``)."""
        self._min_available = value
        return self

    def max_unavailable(self, value: int | str) -> PdbWrapper:
        """Set ``maxUnavailable`` (a count or ``"50%"``)."""
        self._max_unavailable = value
        return self

    def disruptions_allowed(self, n: int) -> PdbWrapper:
        """Set ``status.disruptionsAllowed``, what preemption reads."""
        self._allowed = n
        return self

    def obj(self) -> PodDisruptionBudget:
        """The budget."""
        return PodDisruptionBudget(
            metadata=ObjectMeta(
                name=self._name,
                namespace=self._namespace,
                uid=f"{self._namespace}/{self._name}",
            ),
            selector=self._selector,
            min_available=self._min_available,
            max_unavailable=self._max_unavailable,
            disruptions_allowed=self._allowed,
        )


def make_pod(name: str = "pod") -> PodWrapper:
    """Start building a pod named ``name`` in namespace ``default`` (upstream ``MakePod``)."""
    return PodWrapper(name)


def make_node(name: str = "node") -> NodeWrapper:
    """Start building a node named ``name`` (upstream ``MakeNode``); no capacity until
    :meth:`NodeWrapper.capacity` is called."""
    return NodeWrapper(name)


def make_namespace(name: str) -> NamespaceWrapper:
    """Start building a namespace."""
    return NamespaceWrapper(name)


def make_pdb(name: str) -> PdbWrapper:
    """Start building a PodDisruptionBudget selecting every pod of its namespace."""
    return PdbWrapper(name)


def lenient_from_dict(d: Mapping[str, object]) -> object:
    """Decode a Kubernetes dict as :func:`schedframe.objects.from_dict` does, but without
    the API server's part: no unknown-field check and no create-time validation.

    For tests that build objects the way upstream's unit tests do, straight into the
    scheduler without an API server (a negative request, a fractional extended resource, a
    name with capitals). A field of the wrong type is still a
    :class:`~schedframe.errors.ManifestError`: the object could not be built at all.
    """
    from schedframe.objects._codec import _from_dict_lenient

    return _from_dict_lenient(d)


def _container(
    name: str,
    image: str,
    requests: Mapping[str, Amount] | None,
    limits: Mapping[str, Amount] | None,
    host_ports: Iterable[int],
    restart_policy: str | None,
) -> Container:
    req = resources(requests)
    lim = resources(limits)
    # As the API server defaults: a limit without a request is also the request.
    for key, amount in lim.items():
        req.setdefault(key, amount)
    return Container(
        name=name,
        image=image,
        requests=req,
        limits=lim,
        ports=tuple(ContainerPort(container_port=p, host_port=p) for p in host_ports),
        restart_policy=restart_policy,
    )


def _time(when: datetime | float) -> datetime:
    if isinstance(when, datetime):
        return when if when.tzinfo is not None else when.replace(tzinfo=_UTC)
    return datetime.fromtimestamp(when, tz=_UTC)
