"""What a plugin is given at construction: the :class:`Handle` and the protocols it exposes.

Upstream: ``framework.Handle``, ``SharedLister``, ``NodeInfoLister``, ``WaitingPod``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, overload, runtime_checkable

if TYPE_CHECKING:
    from schedframe.extender import HTTPExtender
    from schedframe.features import FeatureGates
    from schedframe.framework._cycle_state import CycleState
    from schedframe.framework._extension_points import FilterPlugin
    from schedframe.framework._status import Status
    from schedframe.framework._types import NodeInfo, PodInfo
    from schedframe.objects import (
        CustomObject,
        DeviceClass,
        Namespace,
        ObjectReference,
        Pod,
        PodCondition,
        PodDisruptionBudget,
        PodExtendedResourceClaimStatus,
        Quantity,
        ReplicaSet,
        ReplicationController,
        ResourceClaim,
        ResourceSlice,
        Service,
        StatefulSet,
    )
    from schedframe.objects._storage import (
        CSIDriver,
        CSINode,
        CSIStorageCapacity,
        PersistentVolume,
        PersistentVolumeClaim,
        StorageClass,
        VolumeAttachment,
    )

__all__ = [
    "Binder",
    "Clock",
    "CustomObjectWriter",
    "EventRecorder",
    "Handle",
    "NodeInfoLister",
    "Nominator",
    "ObjectLister",
    "PluginsRunner",
    "SharedDRAManager",
    "SharedLister",
    "StorageLister",
    "VolumeWriter",
    "WaitingPod",
    "WorkloadLister",
]


class Clock(Protocol):
    """Time as the scheduler sees it: real, or virtual in deterministic mode."""

    def now(self) -> float:
        """Seconds since the epoch (virtual clocks start where they are told)."""
        ...


class NodeInfoLister(Protocol):
    """Read access to the NodeInfos of the current snapshot."""

    def list(self) -> Sequence[NodeInfo]:
        """Every node, in the snapshot's (zone-interleaved) order."""
        ...

    def get(self, node_name: str) -> NodeInfo:
        """One node; raises ``KeyError`` when it is not in the snapshot."""
        ...

    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]:
        """The nodes that hold at least one pod with pod affinity or anti-affinity terms."""
        ...

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]:
        """The nodes that hold at least one pod with required anti-affinity terms."""
        ...


class SharedLister(Protocol):
    """The snapshot a plugin reads during one scheduling cycle."""

    @property
    def node_infos(self) -> NodeInfoLister:
        """The nodes."""
        ...

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """True when a pod on some node uses the claim ``namespace/name``."""
        ...


class WorkloadLister(Protocol):
    """The objects default spreading takes its selectors from.

    What upstream's ``helper.DefaultSelector`` reads through the Service,
    ReplicationController, ReplicaSet and StatefulSet listers of the informer factory.
    Provisional: a general lister accessor may replace it.

    .. versionadded:: 0.2
    """

    def services(self, namespace: str) -> Sequence[Service]:
        """Every Service of ``namespace``."""
        ...

    def replication_controller(self, namespace: str, name: str) -> ReplicationController | None:
        """A ReplicationController by namespace and name, or ``None``."""
        ...

    def replica_set(self, namespace: str, name: str) -> ReplicaSet | None:
        """A ReplicaSet by namespace and name, or ``None``."""
        ...

    def stateful_set(self, namespace: str, name: str) -> StatefulSet | None:
        """A StatefulSet by namespace and name, or ``None``."""
        ...


class StorageLister(Protocol):
    """The storage objects the volume plugins read.

    What upstream's VolumeBinding, VolumeZone, VolumeRestrictions and NodeVolumeLimits read
    through the PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver,
    CSIStorageCapacity and VolumeAttachment informers' listers. Provisional.

    .. versionadded:: 0.2
    """

    #: Changes on every write (memos key on it).
    generation: int

    def persistent_volume_claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """A claim by namespace and name, or ``None``."""
        ...

    def persistent_volume(self, name: str) -> PersistentVolume | None:
        """A volume by name, or ``None``."""
        ...

    def persistent_volumes(self) -> Sequence[PersistentVolume]:
        """Every PersistentVolume, by name."""
        ...

    def storage_class(self, name: str) -> StorageClass | None:
        """A StorageClass by name, or ``None``."""
        ...

    def csi_node(self, name: str) -> CSINode | None:
        """The CSINode of a node, or ``None``."""
        ...

    def csi_driver(self, name: str) -> CSIDriver | None:
        """A CSIDriver by name, or ``None``."""
        ...

    def csi_storage_capacities(self) -> Sequence[CSIStorageCapacity]:
        """Every CSIStorageCapacity."""
        ...

    def volume_attachments(self) -> Sequence[VolumeAttachment]:
        """Every VolumeAttachment."""
        ...

    def wait_for_change(self, generation: int, timeout: float) -> int:
        """Block until :attr:`generation` differs from ``generation`` or ``timeout`` seconds
        pass; returns the generation then."""
        ...


@runtime_checkable
class VolumeWriter(Protocol):
    """The API writes VolumeBinding's PreBind makes (an optional part of a backend's
    :class:`Binder`; both backends have it). Provisional.

    .. versionadded:: 0.2
    """

    def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        """PUT the volume (optimistic concurrency on its resourceVersion); returns it as
        stored. Raises :class:`~schedframe.errors.BackendError` on failure."""
        ...

    def update_persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
        """PUT the claim; returns it as stored. Raises
        :class:`~schedframe.errors.BackendError` on failure."""
        ...


@runtime_checkable
class CustomObjectWriter(Protocol):
    """Status writes of custom objects (an optional part of a backend's :class:`Binder`;
    both backends have it): what an out-of-tree plugin writes on its own custom resource, as
    scheduler-plugins' coscheduling patches a PodGroup's ``status``. Provisional.

    On the Kubernetes backend this writes the ``<plural>/status`` subresource, which needs
    RBAC ``update`` on ``<plural>/status`` of the kind's API group.

    .. versionadded:: 0.2
    """

    def update_custom_object_status(
        self, obj: CustomObject, status: Mapping[str, object]
    ) -> CustomObject:
        """Replace ``obj``'s ``status`` with ``status`` (the status subresource: nothing
        else of the object changes), with ``obj``'s resourceVersion as the
        optimistic-concurrency check; returns the object as stored (a new resourceVersion,
        and a watch event). Raises :class:`~schedframe.errors.BackendError` on failure
        (409 ``Conflict`` on a stale resourceVersion, 404 ``NotFound``)."""
        ...


_T_co = TypeVar("_T_co", covariant=True)
_K = TypeVar("_K")


class ObjectLister(Protocol, Generic[_T_co]):
    """Read access to the objects of one kind, as the backend's watch reports them.

    Typed by the class asked for: ``handle.lister(Pod)`` is an ``ObjectLister[Pod]``;
    ``handle.lister("PodGroup")`` an ``ObjectLister[object]``.

    What a Go plugin gets from ``SharedInformerFactory.<Group>().<Version>().<Kind>().Lister()``
    (or a dynamic informer's lister for a custom resource): a cache, eventually consistent
    with the API server, never a round trip. Objects are the codec's values (``Pod``,
    ``Node``, ...; a :class:`~schedframe.objects.CustomObject` for a custom kind).

    .. versionadded:: 0.2
    """

    def list(self, namespace: str | None = None) -> Sequence[_T_co]:
        """Every object of the kind, or those of ``namespace``, ordered by namespace and name."""
        ...

    def get(self, name: str, namespace: str = "") -> _T_co | None:
        """One object, or ``None`` (``namespace`` empty for cluster-scoped kinds)."""
        ...


class SharedDRAManager(Protocol):
    """DRA objects and in-flight allocations (upstream ``SharedDRAManager``).

    DynamicResources reads DeviceClasses, ResourceSlices and ResourceClaims through it, records
    Reserve's allocations as in flight (their devices count as in use until PreBind wrote them),
    writes claim statuses, and creates and deletes the claims of DRA-backed extended resources
    (recording them in the pod's ``status.extendedResourceClaimStatus``). Provisional.

    .. versionadded:: 0.2
    """

    def device_class(self, name: str) -> DeviceClass | None:
        """A DeviceClass by name, or ``None``."""
        ...

    def device_classes(self) -> Sequence[DeviceClass]:
        """Every DeviceClass, by name."""
        ...

    def resource_slices(self) -> Sequence[ResourceSlice]:
        """Every ResourceSlice, by name."""
        ...

    def resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """A ResourceClaim, or ``None``."""
        ...

    def resource_claims(self) -> Sequence[ResourceClaim]:
        """Every ResourceClaim."""
        ...

    def list_all_allocated_devices(self) -> frozenset[tuple[str, str, str]]:
        """(driver, pool, device) of every allocated or in-flight device."""
        ...

    def list_allocated_capacity(self) -> dict[tuple[str, str, str], dict[str, Quantity]]:
        """Per shared device, the capacity its allocations consume (DRAConsumableCapacity)."""
        ...

    def claim_has_pending_allocation(self, uid: str) -> bool:
        """Whether the claim's allocation is in flight."""
        ...

    def signal_claim_pending_allocation(self, uid: str, claim: ResourceClaim) -> None:
        """Record an in-flight allocation (Reserve)."""
        ...

    def remove_claim_pending_allocation(self, uid: str) -> bool:
        """Forget an in-flight allocation; True if there was one."""
        ...

    def assume_claim_after_api_call(self, claim: ResourceClaim) -> None:
        """Keep a written claim until the watch reports it."""
        ...

    def assumed_claim_restore(self, namespace: str, name: str) -> None:
        """Drop the assumed version of a claim."""
        ...

    def update_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        """Write a claim's status to the cluster; the stored claim back."""
        ...

    def update_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """Write a claim itself (its finalizers), not its status; the stored claim back."""
        ...

    def create_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """Create a claim in the cluster (named from ``generateName`` when it has no name);
        the stored claim back (DRA-backed extended resources)."""
        ...

    def delete_claim(self, claim: ResourceClaim) -> None:
        """Delete a claim from the cluster (DRA-backed extended resources)."""
        ...

    def patch_pod_extended_resource_claim_status(
        self, pod: Pod, status: PodExtendedResourceClaimStatus
    ) -> None:
        """Set a pod's ``status.extendedResourceClaimStatus`` (DRA-backed extended
        resources)."""
        ...


class WaitingPod(Protocol):
    """A pod parked by Permit (upstream ``WaitingPod``)."""

    @property
    def pod(self) -> Pod:
        """The waiting pod."""
        ...

    def pending_plugins(self) -> list[str]:
        """Plugins that made the pod wait and have not allowed it yet."""
        ...

    def allow(self, plugin_name: str) -> None:
        """``plugin_name`` allows the pod; it is bound once every waiting plugin has."""
        ...

    def reject(self, plugin_name: str, message: str) -> None:
        """Reject the pod; it is unreserved and requeued."""
        ...

    def preempt(self, plugin_name: str, message: str) -> bool:
        """Preempt the pod in memory: it is unreserved and requeued as after an error (to the
        backoffQ, not the unschedulable pool). False when it was no longer waiting (upstream
        ``WaitingPod.Preempt``)."""
        ...


class EventRecorder(Protocol):
    """Records events.k8s.io/v1 Events about objects (upstream ``events.EventRecorder``)."""

    def eventf(
        self,
        regarding: Pod,
        related: object | None,
        event_type: str,
        reason: str,
        action: str,
        note: str,
    ) -> None:
        """Record one event: ``event_type`` is ``Normal`` or ``Warning``."""
        ...


@runtime_checkable
class Binder(Protocol):
    """The write side of a cluster backend: what the scheduler asks the API server to do."""

    def bind(self, pod: Pod, node_name: str) -> None:
        """Bind ``pod`` to ``node_name``.

        Raises:
            schedframe.errors.BackendError: with ``reason="Conflict"`` (code 409) when the pod
                is already bound, being deleted or gated, ``"NotFound"`` (404) when it is gone,
                anything else for transport or server failures.
        """
        ...

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        """Set a pod condition (replacing one of the same type) and/or ``nominatedNodeName``.

        ``nominated_node_name=""`` clears the nomination; ``None`` leaves it.
        """
        ...

    def delete_pod(self, pod: Pod, *, condition: PodCondition | None = None) -> None:
        """Delete a preemption victim, first adding ``condition`` (``DisruptionTarget``)."""
        ...

    def record_event(
        self,
        regarding: Pod,
        *,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        related: ObjectReference | None = None,
    ) -> None:
        """Record an events.k8s.io/v1 Event about ``regarding``; ``related`` is the object
        it relates to (a preemptor, for ``Preempted``).

        ``related`` is a :class:`~schedframe.objects.ObjectReference` (in 0.1.0 it was a
        ``Kind/namespace/name`` string, which backends had to split, and split wrongly).
        """
        ...


class Nominator(Protocol):
    """Pods nominated to nodes by preemption, waiting for room (upstream ``PodNominator``)."""

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """The pods nominated to ``node_name``, in nomination order."""
        ...

    def nominated_pods_for_nodes(self, node_names: Iterable[str]) -> dict[str, list[PodInfo]]:
        """:meth:`nominated_pods_for_node` of each of ``node_names`` in one call (nodes
        without nominated pods may be left out). The lists are shared: do not change them."""
        ...

    def nominated_node_names(self) -> frozenset[str]:
        """The nodes that have at least one nominated pod (read once per scheduling cycle)."""
        ...

    def nominated_generation(self) -> int:
        """A number that changes whenever the pods nominated to any node (or their latest
        versions) change; what a plugin derives from nominated pods holds while it is the
        same. Memos key on it, never on the identity of the lists handed out."""
        ...

    def nominated_generations(self, node_names: Iterable[str]) -> dict[str, int]:
        """Per node, the :meth:`nominated_generation` at the last change of the pods
        nominated to it (0 if none yet): what is derived from one node's nominated pods
        holds while its number is the same. Read it before the pods themselves."""
        ...

    def add_nominated_pod(self, pod_info: PodInfo, node_name: str) -> None:
        """Nominate ``pod_info`` to ``node_name`` (replacing an earlier nomination)."""
        ...

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        """Drop ``pod``'s nomination, if any."""
        ...


class PluginsRunner(Protocol):
    """Runs a profile's plugins on behalf of another plugin (preemption's dry runs)."""

    def run_pre_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Run every PreScore plugin."""
        ...

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Run every Filter plugin on one node, first failure wins."""
        ...

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Run the filters as the scheduling cycle does, nominated pods of equal or higher
        priority taken into account."""
        ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Call every PreFilter plugin's ``add_pod`` (plugins that skipped are left out)."""
        ...

    def run_pre_filter_extension_remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        """Call every PreFilter plugin's ``remove_pod`` (plugins that skipped are left out)."""
        ...


class Handle(PluginsRunner, Protocol):
    """Everything the framework lends a plugin, given to its factory with its args.

    Upstream: ``framework.Handle``.
    """

    @property
    def profile_name(self) -> str:
        """The ``schedulerName`` of the profile the plugin belongs to."""
        ...

    @property
    def clock(self) -> Clock:
        """The scheduler's clock; use it instead of ``time`` so virtual time works."""
        ...

    @property
    def rng(self) -> random.Random:
        """The scheduler's seeded random source; use it instead of ``random``."""
        ...

    @property
    def parallelism(self) -> int:
        """The configured ``parallelism`` (kept for parity; the loop itself is serial)."""
        ...

    @property
    def features(self) -> FeatureGates:
        """The feature gates and emulated version of this scheduler.

        Upstream hands plugin factories a ``feature.Features`` struct; a plugin reads a gate
        with ``handle.features.enabled("SidecarContainers")``, once, in its constructor.

        .. versionadded:: 0.2
        """
        ...

    def snapshot_shared_lister(self) -> SharedLister:
        """The snapshot of the current scheduling cycle."""
        ...

    def namespace(self, name: str) -> Namespace | None:
        """A namespace by name (for namespace selectors), or ``None``."""
        ...

    def namespaces(self) -> Iterable[Namespace]:
        """Every namespace known to the backend."""
        ...

    def pod_disruption_budgets(self) -> Iterable[PodDisruptionBudget]:
        """Every PodDisruptionBudget known to the backend."""
        ...

    @property
    def extenders(self) -> Sequence[HTTPExtender]:
        """The scheduler's HTTP extenders, in configuration order (preemption passes its
        candidates through them).

        Upstream: ``Handle.Extenders``.

        .. versionadded:: 0.2
        """
        ...

    def workload_lister(self) -> WorkloadLister:
        """Services, ReplicationControllers, ReplicaSets and StatefulSets, as the backend's
        watch reports them (PodTopologySpread's default selectors come from them)."""
        ...

    def storage_lister(self) -> StorageLister:
        """PersistentVolumes, claims, StorageClasses and the CSI objects, as the backend's
        watch reports them (the volume plugins read them).

        .. versionadded:: 0.2
        """
        ...

    def shared_dra_manager(self) -> SharedDRAManager:
        """DeviceClasses, ResourceSlices, ResourceClaims and in-flight allocations, as the
        backend's watch reports them (DynamicResources reads them).

        .. versionadded:: 0.2
        """
        ...

    @overload
    def lister(self, kind: type[_K]) -> ObjectLister[_K]: ...

    @overload
    def lister(self, kind: str) -> ObjectLister[object]: ...

    def lister(self, kind: type[_K] | str) -> ObjectLister[_K] | ObjectLister[object]:
        """The lister of ``kind`` — a modelled class (``Pod``, ``Node``, ``Namespace``, ...:
        a typed lister) or a kind name: ``"Pod"``, ``"Node"``, ``"Namespace"``,
        ``"PodDisruptionBudget"``, ``"PriorityClass"`` where the backend serves it, the workload
        kinds, and any declared custom kind (``"PodGroup"``).

        Call it in the plugin's constructor: on the Kubernetes backend the first call for a
        kind the scheduler does not watch starts a watch of it (which needs RBAC ``list`` and
        ``watch`` on that resource). A kind nothing reports lists empty.

        .. versionadded:: 0.2
        """
        ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """A pod parked by Permit, by uid."""
        ...

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        """Call ``callback`` for every waiting pod."""
        ...

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject a waiting pod; True if there was one."""
        ...

    @property
    def binder(self) -> Binder:
        """The backend's write side (binding, status patches, deletions, events)."""
        ...

    @property
    def event_recorder(self) -> EventRecorder:
        """Records events about pods."""
        ...

    @property
    def nominator(self) -> Nominator:
        """Nominated pods by node."""
        ...

    def activate(self, pods: Iterable[Pod]) -> None:
        """Move ``pods`` to the active queue if they wait in the backoff or unschedulable pool."""
        ...

    @property
    def fast_paths(self) -> bool:
        """Whether plugins' fast forms (:mod:`schedframe.framework.batch`) may be used; off
        for bisecting a suspected fast-path bug (``SCHEDFRAME_FAST_PATHS=0``). A plugin that
        takes shortcuts of its own on another plugin's declared forms reads it too."""
        ...

    def cycle_filter_plugins(self, state: CycleState) -> list[FilterPlugin]:
        """The Filter plugins that run for the pod of ``state``, in order, without those its
        PreFilter skipped (preemption reads them to know which filters a dry run runs)."""
        ...

    def cycle_has_pre_filter_extensions(self, state: CycleState) -> bool:
        """Whether any PreFilter AddPod/RemovePod extension runs for the pod of ``state``."""
        ...
