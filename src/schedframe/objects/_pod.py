"""Pods and what they contain; the values plugins derive from a pod are computed once.

A pod is built once and read by every plugin for every node, so its effective requests,
host ports and affinity flags are :func:`functools.cached_property` values.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Final

import attrs

from schedframe._evolve import evolve as _evolve
from schedframe.objects._meta import (
    LabelSelector,
    NodeSelector,
    ObjectMeta,
    PreferredSchedulingTerm,
    parse_int64,
)
from schedframe.objects._node import Taint
from schedframe.objects._quantity import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    ResourceList,
)
from schedframe.objects._workload_api import WorkloadReference

__all__ = [
    "DiskSource",
    "DEFAULT_SCHEDULER_NAME",
    "Affinity",
    "Container",
    "ContainerExtendedResourceRequest",
    "ContainerPort",
    "NodeAffinity",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodAntiAffinity",
    "PodCondition",
    "PodExtendedResourceClaimStatus",
    "PodResourceClaim",
    "PodSpec",
    "PodStatus",
    "ResourceRequirements",
    "Toleration",
    "TopologySpreadConstraint",
    "Volume",
    "WeightedPodAffinityTerm",
]

#: The scheduler name a pod gets when it names none (upstream ``v1.DefaultSchedulerName``).
DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"
# Feature gate PodLevelResources (on by default since v1.34): whether spec.resources counts
# in a pod's effective requests. The one switch point, until feature gates are configurable.
_POD_LEVEL_RESOURCES: Final = True
_DEFAULT_BIND_ALL_HOST_IP: Final = "0.0.0.0"


@attrs.frozen(kw_only=True)
class ContainerPort:
    """A port a container exposes; ``host_port > 0`` claims that port on the node."""

    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""
    name: str = ""


@attrs.frozen(kw_only=True)
class Container:
    """A container: its resource requests and limits (scheduler integers) and ports.

    ``restart_policy`` is ``"Always"`` for a sidecar (a restartable init container).
    """

    name: str
    image: str = ""
    requests: ResourceList = attrs.field(factory=dict, hash=False)
    limits: ResourceList = attrs.field(factory=dict, hash=False)
    ports: tuple[ContainerPort, ...] = ()
    restart_policy: str | None = None
    #: The ``action`` of each ``restartPolicyRules`` entry (exit-code matching not modelled).
    restart_policy_rules: tuple[str, ...] = ()
    #: ``resources.claims[].name``: the pod resource claims this container uses (DRA).
    claims: tuple[str, ...] = ()

    @property
    def is_restartable_init(self) -> bool:
        """Whether this init container keeps running beside the app (a sidecar)."""
        return self.restart_policy == "Always"


@attrs.frozen(kw_only=True)
class Toleration:
    """A pod toleration (upstream ``v1.Toleration``).

    ``operator`` is ``Equal`` (also spelled ``""``), ``Exists``, or the numeric ``Gt``/``Lt``.
    """

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """Whether this toleration tolerates ``taint`` (upstream ``Toleration.ToleratesTaint``).

        An empty effect matches every effect; an empty key matches every key; ``Exists``
        ignores the value; ``Equal`` compares values; ``Gt``/``Lt`` compare the taint's value
        with this one as integers (a value that does not parse tolerates nothing).
        """
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        op = self.operator
        if op == "Equal" or op == "":
            return self.value == taint.value
        if op == "Exists":
            return True
        if op == "Gt" or op == "Lt":
            mine = parse_int64(self.value)
            theirs = parse_int64(taint.value)
            if mine is None or theirs is None:
                return False
            return theirs > mine if op == "Gt" else theirs < mine
        return False


@attrs.frozen(kw_only=True)
class NodeAffinity:
    """Node affinity: a required node selector and weighted preferences."""

    required: NodeSelector | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@attrs.frozen(kw_only=True)
class PodAffinityTerm:
    """Pods (selected by labels, in some namespaces) to be near or away from, per topology.

    ``label_selector=None`` selects no pod; ``namespaces=()`` with ``namespace_selector=None``
    means the pod's own namespace (upstream ``PodAffinityTerm``).
    """

    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class WeightedPodAffinityTerm:
    """A pod affinity term with a weight (1-100) for scoring."""

    weight: int
    term: PodAffinityTerm


@attrs.frozen(kw_only=True)
class PodAffinity:
    """Inter-pod affinity: required terms and weighted preferred terms."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@attrs.frozen(kw_only=True)
class PodAntiAffinity:
    """Inter-pod anti-affinity: required terms and weighted preferred terms."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@attrs.frozen(kw_only=True)
class Affinity:
    """A pod's scheduling constraints (upstream ``v1.Affinity``)."""

    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


@attrs.frozen(kw_only=True)
class TopologySpreadConstraint:
    """How to spread matching pods across a topology (upstream ``TopologySpreadConstraint``).

    ``when_unsatisfiable`` is ``DoNotSchedule`` or ``ScheduleAnyway``; the policies are
    ``Honor``/``Ignore`` or ``None`` (plugin defaults apply).
    """

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class PodCondition:
    """One entry of ``status.conditions`` (``PodScheduled``, ``Ready``, ...)."""

    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: datetime | None = None


@attrs.frozen(kw_only=True)
class DiskSource:
    """An in-tree disk a pod mounts directly (VolumeRestrictions' conflicts, attach limits).

    Attributes:
        kind: the source's field name: ``gcePersistentDisk``, ``awsElasticBlockStore``,
            ``rbd``, ``iscsi`` or ``azureDisk``.
        name: what identifies the disk: ``pdName``, ``volumeID``, ``image``, ``iqn`` or
            ``diskName``.
        read_only: ``readOnly``.
        monitors: ``rbd.monitors``; pool: ``rbd.pool`` (defaulted to ``rbd``).
    """

    kind: str
    name: str
    read_only: bool = False
    monitors: tuple[str, ...] = ()
    pool: str = ""


@attrs.frozen(kw_only=True)
class PodResourceClaim:
    """``spec.resourceClaims[]``: a claim by name, or one made per pod from a template.

    Exactly one of ``resource_claim_name`` and ``resource_claim_template_name`` is set on a
    valid pod.
    """

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@attrs.frozen(kw_only=True)
class Volume:
    """A pod volume; the claim sources are modelled: a PersistentVolumeClaim (its
    ``claimName``) and a generic ephemeral volume (``ephemeral``), whose claim the
    ephemeral volume controller names ``<pod>-<volume>``."""

    name: str
    persistent_volume_claim: str | None = None
    ephemeral: bool = False
    disk: DiskSource | None = None

    def claim_name(self, pod_name: str) -> str | None:
        """The claim this volume uses in pod ``pod_name``, or ``None`` for another source
        (upstream ``ephemeral.VolumeClaimName`` for ephemeral volumes)."""
        if self.ephemeral:
            return f"{pod_name}-{self.name}"
        return self.persistent_volume_claim


@attrs.frozen(kw_only=True)
class ResourceRequirements:
    """Pod-level ``spec.resources`` (upstream ``v1.ResourceRequirements``), in scheduler
    integers; only ``cpu``, ``memory`` and ``hugepages-*`` may appear (upstream
    ``IsSupportedPodLevelResource``)."""

    requests: ResourceList = attrs.field(factory=dict, hash=False)
    limits: ResourceList = attrs.field(factory=dict, hash=False)


def is_supported_pod_level_resource(name: str) -> bool:
    """Whether ``name`` may be set in a pod's ``spec.resources`` (cpu, memory, hugepages)."""
    return name in (CPU, MEMORY) or name.startswith("hugepages-")


@attrs.frozen(kw_only=True)
class PodSpec:
    """What the pod asks for. Field names follow ``v1.PodSpec`` in snake_case."""

    node_name: str = ""
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str = "PreemptLowerPriority"
    node_selector: dict[str, str] = attrs.field(factory=dict, hash=False)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: ResourceList = attrs.field(factory=dict, hash=False)
    #: ``spec.resources``: pod-level requests and limits (feature ``PodLevelResources``).
    resources: ResourceRequirements | None = None
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    scheduling_gates: tuple[str, ...] = ()
    host_network: bool = False
    termination_grace_period_seconds: int | None = None
    volumes: tuple[Volume, ...] = ()
    #: ``spec.resourceClaims``: the pod's DRA claims.
    resource_claims: tuple[PodResourceClaim, ...] = ()
    #: ``spec.hostUsers``: ``False`` runs the pod in a user namespace; ``None`` when unset.
    host_users: bool | None = None
    #: ``spec.workloadRef``: the Workload pod group the pod belongs to (GenericWorkload).
    workload_ref: WorkloadReference | None = None


@attrs.frozen(kw_only=True)
class ContainerExtendedResourceRequest:
    """Which request of the extended-resource claim serves a container's extended resource
    (upstream ``v1.ContainerExtendedResourceRequest``)."""

    container_name: str
    resource_name: str
    request_name: str


@attrs.frozen(kw_only=True)
class PodExtendedResourceClaimStatus:
    """``status.extendedResourceClaimStatus``: the ResourceClaim the scheduler made for the
    pod's DRA-backed extended resources (DRAExtendedResource), and which of its requests
    serves which container's resource (upstream ``v1.PodExtendedResourceClaimStatus``)."""

    resource_claim_name: str
    request_mappings: tuple[ContainerExtendedResourceRequest, ...] = ()


@attrs.frozen(kw_only=True)
class PodStatus:
    """What the cluster says about the pod."""

    phase: str = "Pending"
    nominated_node_name: str = ""
    conditions: tuple[PodCondition, ...] = ()
    start_time: datetime | None = None
    #: ``status.resourceClaimStatuses``: pod claim name -> generated ResourceClaim name
    #: (``None`` when the controller decided no claim is needed).
    resource_claim_statuses: tuple[tuple[str, str | None], ...] = ()
    #: ``status.extendedResourceClaimStatus`` (DRAExtendedResource), written by
    #: DynamicResources' PreBind.
    extended_resource_claim_status: PodExtendedResourceClaimStatus | None = None


def _add(total: dict[str, int], amounts: ResourceList) -> None:
    for name, amount in amounts.items():
        total[name] = total.get(name, 0) + amount


def _max_into(total: dict[str, int], amounts: ResourceList) -> None:
    for name, amount in amounts.items():
        current = total.get(name)
        if current is None or amount > current:
            total[name] = amount


def _non_missing(requests: ResourceList) -> ResourceList:
    # Upstream applyNonMissing: only an *absent* cpu/memory request gets the default;
    # an explicit zero stays zero.
    if CPU in requests and MEMORY in requests:
        return requests
    filled = dict(requests)
    filled.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST)
    filled.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
    return filled


def _pod_requests(spec: PodSpec, *, non_missing: bool) -> ResourceList:
    """Upstream ``resourcehelper.PodRequests``: container requests aggregated, then replaced
    by the pod-level request of each resource that has one (``PodLevelResources``), plus
    overhead."""
    result: dict[str, int] = {}
    for container in spec.containers:
        _add(result, _non_missing(container.requests) if non_missing else container.requests)
    # A regular init container runs while the sidecars started before it keep running, so it
    # needs its own request plus theirs; sidecars also run alongside the app containers.
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in spec.init_containers:
        requests = _non_missing(container.requests) if non_missing else container.requests
        if container.is_restartable_init:
            _add(result, requests)
            _add(sidecars, requests)
            _max_into(init_peak, sidecars)
        else:
            need = dict(requests)
            _add(need, sidecars)
            _max_into(init_peak, need)
    _max_into(result, init_peak)
    if _POD_LEVEL_RESOURCES and spec.resources is not None:
        for name, amount in spec.resources.requests.items():
            if is_supported_pod_level_resource(name):
                result[name] = amount
    _add(result, spec.overhead)
    return result


# Cached values that a copy with another node name / nominated node / status keeps.
_SPEC_DERIVED: Final = (
    "requests",
    "non_zero_requests",
    "host_ports",
    "has_affinity",
    "has_required_anti_affinity",
    "is_scheduling_gated",
)


@attrs.frozen(kw_only=True)
class Pod:
    """A pod (upstream ``v1.Pod``) with the shortcuts and derived values plugins use.

    Derived values (``requests``, ``non_zero_requests``, ``host_ports``, ...) are computed
    on first use and kept; the copy helpers (``with_node_name`` ...) carry them over, since
    they do not change what the pod asks for.
    """

    metadata: ObjectMeta
    spec: PodSpec = attrs.field(factory=PodSpec)
    status: PodStatus = attrs.field(factory=PodStatus)

    @property
    def name(self) -> str:
        """The pod's name."""
        return self.metadata.name

    @property
    def namespace(self) -> str:
        """The pod's namespace."""
        return self.metadata.namespace

    @property
    def uid(self) -> str:
        """The pod's uid."""
        return self.metadata.uid

    @property
    def labels(self) -> dict[str, str]:
        """The pod's labels."""
        return self.metadata.labels

    @property
    def key(self) -> str:
        """``namespace/name``, the key upstream's informers and logs use."""
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def node_name(self) -> str:
        """The node the pod is bound (or assumed) to, ``""`` when unscheduled."""
        return self.spec.node_name

    @property
    def priority(self) -> int:
        """``spec.priority``, or 0 when unset (upstream ``corev1helpers.PodPriority``)."""
        priority = self.spec.priority
        return 0 if priority is None else priority

    @property
    def scheduler_name(self) -> str:
        """The scheduler profile that should schedule the pod."""
        return self.spec.scheduler_name

    @property
    def deletion_timestamp(self) -> datetime | None:
        """When deletion was requested, if it was."""
        return self.metadata.deletion_timestamp

    @property
    def creation_timestamp(self) -> datetime | None:
        """When the pod was created."""
        return self.metadata.creation_timestamp

    @property
    def nominated_node_name(self) -> str:
        """The node preemption nominated for this pod, ``""`` if none."""
        return self.status.nominated_node_name

    @property
    def start_time(self) -> datetime | None:
        """When the kubelet started the pod (``status.startTime``)."""
        return self.status.start_time

    @functools.cached_property
    def requests(self) -> ResourceList:
        """Effective requests: upstream ``resourcehelper.PodRequests`` with overhead.

        The sum over containers and sidecars, raised to the peak need of any regular init
        container (its request plus the sidecars started before it); a pod-level request
        (``spec.resources``) replaces that sum for its resource; plus ``overhead``.
        """
        return _pod_requests(self.spec, non_missing=False)

    @functools.cached_property
    def non_zero_requests(self) -> ResourceList:
        """:attr:`requests` where each container missing a cpu or memory request counts
        :data:`DEFAULT_MILLI_CPU_REQUEST` / :data:`DEFAULT_MEMORY_REQUEST`.

        Mirrors upstream ``NonMissingContainerRequests`` as the scheduler's NodeInfo uses it;
        an explicit zero request stays zero.
        """
        return _pod_requests(self.spec, non_missing=True)

    @functools.cached_property
    def host_ports(self) -> tuple[tuple[str, str, int], ...]:
        """``(host_ip, protocol, host_port)`` for every port with ``host_port > 0``.

        Mirrors upstream ``schedutil.GetHostPorts``: sidecar init containers first, then the
        app containers; regular init containers do not hold ports. An empty host IP is
        ``0.0.0.0`` and an empty protocol ``TCP``, as ``HostPortInfo`` sanitises them.
        """
        ports: list[tuple[str, str, int]] = []
        containers: Iterable[Container] = (
            *(c for c in self.spec.init_containers if c.is_restartable_init),
            *self.spec.containers,
        )
        for container in containers:
            for port in container.ports:
                if port.host_port > 0:
                    ports.append(
                        (
                            port.host_ip or _DEFAULT_BIND_ALL_HOST_IP,
                            port.protocol or "TCP",
                            port.host_port,
                        )
                    )
        return tuple(ports)

    @functools.cached_property
    def has_affinity(self) -> bool:
        """Whether the pod has pod affinity or anti-affinity (upstream ``podWithAffinity``).

        True as soon as either is present, even without terms, as upstream checks for nil.
        """
        affinity = self.spec.affinity
        return affinity is not None and (
            affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None
        )

    @functools.cached_property
    def has_required_anti_affinity(self) -> bool:
        """Whether the pod has required anti-affinity terms (``podWithRequiredAntiAffinity``)."""
        affinity = self.spec.affinity
        return (
            affinity is not None
            and affinity.pod_anti_affinity is not None
            and len(affinity.pod_anti_affinity.required) > 0
        )

    @functools.cached_property
    def is_scheduling_gated(self) -> bool:
        """Whether ``spec.schedulingGates`` still holds the pod back."""
        return len(self.spec.scheduling_gates) > 0

    def _copy_cache(self, new: Pod, names: tuple[str, ...]) -> Pod:
        # Each value is computed here if it was not yet (once, kept on self too) and carried:
        # all are cheap, pure and wanted once the pod is scheduled, and testing for a missing
        # one costs an exception per value and copy.
        for name in names:
            object.__setattr__(new, name, getattr(self, name))
        return new

    def with_node_name(self, name: str) -> Pod:
        """A copy bound (or assumed) to node ``name``."""
        return self.with_changes(node_name=name)

    def with_nominated_node_name(self, name: str) -> Pod:
        """A copy with ``status.nominatedNodeName`` set to ``name`` (``""`` clears it)."""
        return self.with_status(nominated_node_name=name)

    def with_condition(self, condition: PodCondition) -> Pod:
        """A copy where ``condition`` replaces the condition of the same type, or is added."""
        conditions = list(self.status.conditions)
        for i, existing in enumerate(conditions):
            if existing.type == condition.type:
                conditions[i] = condition
                break
        else:
            conditions.append(condition)
        return self.with_status(conditions=tuple(conditions))

    def with_metadata(self, **changes: object) -> Pod:
        """A copy whose metadata has ``changes`` applied (``attrs.evolve`` on ``metadata``),
        keeping the values derived from the spec, as the API server's stamps do not touch it."""
        return self.with_changes(metadata=changes)

    def with_changes(
        self,
        *,
        node_name: str | None = None,
        metadata: Mapping[str, object] | None = None,
        status: Mapping[str, object] | None = None,
    ) -> Pod:
        """One copy doing what :meth:`with_node_name`, :meth:`with_metadata` and
        :meth:`with_status` do, for the parts given (``attrs.evolve`` on each), keeping the
        values derived from the spec. An API server write that binds, stamps and updates the
        status of a pod at once makes one copy instead of three."""
        parts: dict[str, object] = {}
        if node_name is not None:
            parts["spec"] = _evolve(self.spec, node_name=node_name)
        if metadata:
            parts["metadata"] = _evolve(self.metadata, **metadata)
        if status:
            parts["status"] = _evolve(self.status, **status)
        return self._copy_cache(_evolve(self, **parts), _SPEC_DERIVED)

    def with_status(self, **changes: object) -> Pod:
        """A copy whose status has ``changes`` applied (``attrs.evolve`` on ``status``)."""
        return self.with_changes(status=changes)
