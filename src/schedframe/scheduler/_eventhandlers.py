"""What the scheduler does with each watch event (upstream ``pkg/scheduler/eventhandlers.go``).

Assigned pods (``spec.nodeName`` set, whoever scheduled them) go to the cache; unassigned pods
whose ``schedulerName`` names one of our profiles go to the queue, others are ignored. Node
events update the cache and move unschedulable pods with the :class:`ClusterEvent` upstream
computes (``NodeSchedulingPropertiesChange``). Namespaces and PodDisruptionBudgets feed the
:class:`LiveClusterView` plugins read through their Handle.

This follows upstream with the ``SchedulerQueueingHints`` feature on (GA, locked since 1.34):
assigned pod events reach the queue through ``MoveAllToActiveOrBackoffQueue`` and node events
carry no pre-check.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Final

from schedframe.framework import ActionType, ClusterEvent, EventResource
from schedframe.objects import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    CustomObject,
    Namespace,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    StorageClass,
    VolumeAttachment,
    Workload,
)
from schedframe.objects._resource import (
    DeviceClass,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from schedframe.runtime import ClusterView

if TYPE_CHECKING:
    from schedframe.hooks._observers import Observers
    from schedframe.runtime import Framework
    from schedframe.scheduler._protocols import CacheLike, QueueLike, WatchEventLike

__all__ = [
    "EVENT_ASSIGNED_POD_ADD",
    "EVENT_ASSIGNED_POD_DELETE",
    "EVENT_ASSIGNED_POD_UPDATE",
    "EVENT_NODE_ADD",
    "EVENT_NODE_DELETE",
    "EVENT_UNSCHEDULED_POD_ADD",
    "EVENT_UNSCHEDULED_POD_DELETE",
    "EVENT_UNSCHEDULED_POD_UPDATE",
    "EventHandlers",
    "LiveClusterView",
    "PodStore",
    "node_scheduling_properties_change",
    "pod_scheduling_properties_change",
]

log = logging.getLogger("schedframe.scheduler")

EVENT_ASSIGNED_POD_ADD: Final = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)
EVENT_ASSIGNED_POD_UPDATE: Final = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE)
EVENT_ASSIGNED_POD_DELETE: Final = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
EVENT_UNSCHEDULED_POD_ADD: Final = ClusterEvent(EventResource.UNSCHEDULABLE_POD, ActionType.ADD)
EVENT_UNSCHEDULED_POD_UPDATE: Final = ClusterEvent(
    EventResource.UNSCHEDULABLE_POD, ActionType.UPDATE
)
EVENT_UNSCHEDULED_POD_DELETE: Final = ClusterEvent(
    EventResource.UNSCHEDULABLE_POD, ActionType.DELETE
)
EVENT_NODE_ADD: Final = ClusterEvent(EventResource.NODE, ActionType.ADD)
_DRA_TYPES: Final = (DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate)
_DRA_RESOURCE: Final[dict[type, EventResource]] = {
    DeviceClass: EventResource.DEVICE_CLASS,
    ResourceSlice: EventResource.RESOURCE_SLICE,
    ResourceClaim: EventResource.RESOURCE_CLAIM,
}
EVENT_NODE_DELETE: Final = ClusterEvent(EventResource.NODE, ActionType.DELETE)
# The event resource of each storage kind (upstream addAllEventHandlers' gvk cases).
_STORAGE_RESOURCE: Final[dict[type, EventResource]] = {
    PersistentVolume: EventResource.PERSISTENT_VOLUME,
    PersistentVolumeClaim: EventResource.PERSISTENT_VOLUME_CLAIM,
    StorageClass: EventResource.STORAGE_CLASS,
    CSINode: EventResource.CSI_NODE,
    CSIDriver: EventResource.CSI_DRIVER,
    CSIStorageCapacity: EventResource.CSI_STORAGE_CAPACITY,
    VolumeAttachment: EventResource.VOLUME_ATTACHMENT,
}


# --------------------------------------------------------------------------------------------
# Which update is which event (upstream framework/events.go)
# --------------------------------------------------------------------------------------------


_ACTIONS: Final = {
    "ADDED": ActionType.ADD,
    "MODIFIED": ActionType.UPDATE,
    "DELETED": ActionType.DELETE,
}


def _event_label(event_type: str, obj: object) -> str:
    """Upstream's event label for metrics (``NodeAdd``, ``AssignedPodUpdate``,
    ``UnschedulablePodDelete``); empty for kinds upstream does not time."""
    action = _ACTIONS.get(event_type)
    if action is None:
        return ""
    if isinstance(obj, Pod):
        resource = (
            EventResource.ASSIGNED_POD if obj.spec.node_name else EventResource.UNSCHEDULABLE_POD
        )
    elif isinstance(obj, Node):
        resource = EventResource.NODE
    else:
        return ""
    return ClusterEvent(resource, action).label()


def _pod_scale_down(new: Pod, old: Pod) -> bool:
    new_requests = new.requests
    for name, old_amount in old.requests.items():
        new_amount = new_requests.get(name)
        if new_amount is None or old_amount > new_amount:
            return True
    return False


def pod_scheduling_properties_change(new: Pod, old: Pod) -> list[ClusterEvent]:
    """The ``UpdatePodXYZ`` events of a pod update (upstream ``PodSchedulingPropertiesChange``).

    The resource is ``AssignedPod`` when the new pod has a node, else ``UnschedulablePod``;
    with no specific change the general ``Update`` action is returned.
    """
    resource = EventResource.ASSIGNED_POD if new.spec.node_name else EventResource.UNSCHEDULABLE_POD
    actions: list[ActionType] = []
    if new.labels != old.labels:
        actions.append(ActionType.UPDATE_POD_LABEL)
    if _pod_scale_down(new, old):
        actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
    if not new.spec.scheduling_gates and old.spec.scheduling_gates:
        actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(new.spec.tolerations) != len(old.spec.tolerations):
        actions.append(ActionType.UPDATE_POD_TOLERATION)
    if new.status.resource_claim_statuses != old.status.resource_claim_statuses:
        actions.append(ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    if not actions:
        actions.append(ActionType.UPDATE)
    return [ClusterEvent(resource, a) for a in actions]


def _condition_statuses(node: Node) -> dict[str, str]:
    return {c.type: c.status for c in node.status.conditions}


def node_scheduling_properties_change(new: Node, old: Node) -> list[ClusterEvent]:
    """The ``UpdateNodeXYZ`` events of a node update (upstream ``NodeSchedulingPropertiesChange``).

    In upstream order: ``spec.unschedulable`` turned off (reported as ``UpdateNodeTaint``),
    allocatable, labels, taints, condition statuses, annotations, declared features. An update
    that changes none of them yields no event.
    """
    actions: list[ActionType] = []
    if new.spec.unschedulable != old.spec.unschedulable and not new.spec.unschedulable:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if new.status.allocatable != old.status.allocatable:
        actions.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if new.metadata.labels != old.metadata.labels:
        actions.append(ActionType.UPDATE_NODE_LABEL)
    if new.spec.taints != old.spec.taints:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if _condition_statuses(new) != _condition_statuses(old):
        actions.append(ActionType.UPDATE_NODE_CONDITION)
    if new.metadata.annotations != old.metadata.annotations:
        actions.append(ActionType.UPDATE_NODE_ANNOTATION)
    if new.status.declared_features != old.status.declared_features:
        actions.append(ActionType.UPDATE_NODE_DECLARED_FEATURE)
    return [ClusterEvent(EventResource.NODE, a) for a in actions]


def _le_priority_pre_check(priority: int) -> Callable[[Pod], bool]:
    """Upstream ``getLEPriorityPreCheck``: only pods of lower or equal priority."""

    def check(pod: Pod) -> bool:
        return pod.priority <= priority

    return check


# --------------------------------------------------------------------------------------------
# The informer-side stores
# --------------------------------------------------------------------------------------------


class PodStore:
    """The pod informer's store: the latest version of every pod seen, by ``namespace/name``.

    The failure handler reads it (upstream re-reads the pod from the informer's lister before
    requeueing it).
    """

    def __init__(self) -> None:
        self._pods: dict[str, Pod] = {}
        self._lock = threading.Lock()

    def set(self, pod: Pod) -> None:
        with self._lock:
            self._pods[pod.key] = pod

    def copy_state(self, other: PodStore) -> None:
        """Make this (new) store hold ``other``'s pods, in the same order."""
        with other._lock, self._lock:
            self._pods = dict(other._pods)

    def delete(self, pod: Pod) -> None:
        with self._lock:
            current = self._pods.get(pod.key)
            if current is not None and current.uid == pod.uid:
                del self._pods[pod.key]

    def get(self, namespace: str, name: str) -> Pod | None:
        """The pod ``namespace/name``, or ``None``."""
        with self._lock:
            return self._pods.get(f"{namespace}/{name}")

    def list(self) -> list[Pod]:
        """Every pod, in arrival order."""
        with self._lock:
            return list(self._pods.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._pods)


class LiveClusterView(ClusterView):
    """Namespaces and PodDisruptionBudgets as the backend's watch reports them."""

    def __init__(self, kind_watcher: Callable[[str], None] | None = None) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._kind_watcher = kind_watcher
        self._pdb_by_key: dict[str, PodDisruptionBudget] = {}

    def copy_state(self, other: LiveClusterView) -> None:
        """Make this (new) view hold what ``other`` holds: namespaces, PodDisruptionBudgets,
        workloads, storage and DRA objects and every object by kind (a fork's starting point)."""
        with other._lock, self._lock:
            self._namespaces = other._namespaces  # replaced whole on every write
            self._pdb_by_key = dict(other._pdb_by_key)
            self._pdbs = list(other._pdbs)
        self.workloads.copy_state(other.workloads)
        self.storage.copy_state(other.storage)
        self.dra.copy_state(other.dra)
        self.objects.copy_state(other.objects)

    def set_namespace(self, ns: Namespace) -> None:
        with self._lock:
            self._namespaces = {**self._namespaces, ns.metadata.name: ns}

    def delete_namespace(self, ns: Namespace) -> None:
        with self._lock:
            self._namespaces = {k: v for k, v in self._namespaces.items() if k != ns.metadata.name}

    def set_pdb(self, pdb: PodDisruptionBudget) -> None:
        key = f"{pdb.metadata.namespace}/{pdb.metadata.name}"
        with self._lock:
            self._pdb_by_key[key] = pdb
            self._pdbs = list(self._pdb_by_key.values())

    def on_lister_requested(self, kind: str) -> None:
        """A plugin asked for ``kind``'s lister: a backend that watches kinds on demand starts."""
        if self._kind_watcher is not None:
            self._kind_watcher(kind)

    def delete_pdb(self, pdb: PodDisruptionBudget) -> None:
        key = f"{pdb.metadata.namespace}/{pdb.metadata.name}"
        with self._lock:
            self._pdb_by_key.pop(key, None)
            self._pdbs = list(self._pdb_by_key.values())


# --------------------------------------------------------------------------------------------
# The handlers
# --------------------------------------------------------------------------------------------


class EventHandlers:
    """Feeds watch events to the cache, the queue and the cluster view (upstream
    ``addAllEventHandlers`` with its pod, node and resource handlers).

    Called in the writer's thread by the backend; every target is thread-safe. A failing
    handler is logged and the event dropped, as upstream's ``HandleError`` does: the watch
    never breaks.
    """

    def __init__(
        self,
        *,
        cache: CacheLike,
        queue: QueueLike,
        profiles: Mapping[str, Framework],
        cluster: LiveClusterView,
        pods: PodStore,
    ) -> None:
        self.cache = cache
        self.queue = queue
        self.profiles = profiles
        self.cluster = cluster
        self.pods = pods

    #: Observer hooks told how long each event took (``schedframe_event_handled``).
    observers: Observers | None = None

    def __call__(self, event: WatchEventLike) -> None:
        started = time.perf_counter()
        try:
            self.dispatch(event.type, event.obj, event.old)
        except Exception:
            log.exception("handling %s event for %r failed", event.type, event.obj)
        if self.observers is not None:
            label = _event_label(event.type, event.obj)
            if label:
                self.observers.event_handled(event=label, seconds=time.perf_counter() - started)

    def dispatch(self, event_type: str, obj: object, old: object | None) -> None:
        """Route one event by object kind and type (``ADDED``/``MODIFIED``/``DELETED``)."""
        if event_type == "DELETED":
            self.cluster.objects.delete(obj)
        else:
            self.cluster.objects.set(obj)
        if isinstance(obj, Pod):
            if event_type == "ADDED":
                self.add_pod(obj)
            elif event_type == "MODIFIED":
                self.update_pod(old if isinstance(old, Pod) else obj, obj)
            elif event_type == "DELETED":
                self.delete_pod(obj)
        elif isinstance(obj, Node):
            if event_type == "ADDED":
                self.add_node(obj)
            elif event_type == "MODIFIED":
                self.update_node(old if isinstance(old, Node) else obj, obj)
            elif event_type == "DELETED":
                self.delete_node(obj)
        elif isinstance(obj, Namespace):
            if event_type == "DELETED":
                self.cluster.delete_namespace(obj)
            else:
                self.cluster.set_namespace(obj)
        elif isinstance(obj, PodDisruptionBudget):
            if event_type == "DELETED":
                self.cluster.delete_pdb(obj)
            else:
                self.cluster.set_pdb(obj)
        elif _STORAGE_RESOURCE.get(type(obj)) is not None:
            self.on_storage(event_type, obj, old)
        elif isinstance(obj, _DRA_TYPES):
            self.dra_object(event_type, obj, old)
        elif event_type == "DELETED" and self.cluster.workloads.delete(obj):
            pass  # a Service, RC, ReplicaSet or StatefulSet (default spreading's selectors)
        elif event_type != "DELETED" and self.cluster.workloads.set(obj):
            pass
        elif isinstance(obj, CustomObject | Workload):
            self.custom_object_event(event_type, obj, old)
        else:
            log.debug("ignoring %s event for %s", event_type, type(obj).__name__)

    def on_storage(self, event_type: str, obj: object, old: object | None) -> None:
        """Upstream's storage informer handlers: keep the object for the volume plugins,
        then move the pods a change of that resource may help (``MoveAllToActiveOrBackoff``).
        """
        resource = _STORAGE_RESOURCE[type(obj)]
        if event_type == "DELETED":
            self.cluster.storage.delete(obj)
            action, old_obj, new_obj = ActionType.DELETE, obj, None
        else:
            self.cluster.storage.set(obj)
            if event_type == "ADDED":
                action, old_obj, new_obj = ActionType.ADD, None, obj
            else:
                action, old_obj, new_obj = ActionType.UPDATE, old, obj
        event = ClusterEvent(resource, action)
        self.queue.move_all_to_active_or_backoff_queue(event, old_obj, new_obj, None)

    def dra_object(self, event_type: str, obj: object, old: object | None) -> None:
        """A DeviceClass, ResourceSlice, ResourceClaim or template: stored for DynamicResources,
        then the queue moves for its event (upstream's DRA informer handlers)."""
        if event_type == "DELETED":
            self.cluster.dra.delete(obj)
            action = ActionType.DELETE
        else:
            self.cluster.dra.set(obj)
            action = ActionType.ADD if event_type == "ADDED" else ActionType.UPDATE
        resource = _DRA_RESOURCE.get(type(obj))
        if resource is not None:
            self.queue.move_all_to_active_or_backoff_queue(
                ClusterEvent(resource, action), old, None if event_type == "DELETED" else obj, None
            )

    def custom_object_event(
        self, event_type: str, obj: CustomObject | Workload, old: object | None
    ) -> None:
        """A custom object (or a Workload) changed: requeue the pods whose plugins registered
        the kind (the event is ``ClusterEvent(kind, ADD|UPDATE|DELETE)``)."""
        kind = obj.kind if isinstance(obj, CustomObject) else type(obj).__name__
        if event_type == "ADDED":
            self.queue.move_all_to_active_or_backoff_queue(
                ClusterEvent(kind, ActionType.ADD), None, obj
            )
        elif event_type == "DELETED":
            self.queue.move_all_to_active_or_backoff_queue(
                ClusterEvent(kind, ActionType.DELETE), obj, None
            )
        else:
            self.queue.move_all_to_active_or_backoff_queue(
                ClusterEvent(kind, ActionType.UPDATE), old, obj
            )

    def initial_sync(self, objects: Iterable[tuple[str, object]]) -> None:
        """Replay ``(kind, object)`` pairs as ADDED events (a list-then-watch start)."""
        for _, obj in objects:
            self.dispatch("ADDED", obj, None)

    def responsible_for(self, pod: Pod) -> bool:
        """Upstream ``responsibleForPod``: one of our profiles is named by ``schedulerName``."""
        return pod.spec.scheduler_name in self.profiles

    # -- nodes -------------------------------------------------------------------------------

    def add_node(self, node: Node) -> None:
        """Upstream ``addNodeToCache``."""
        self.cache.add_node(node)
        pre_check = self._pre_check_for_node(node)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_NODE_ADD, None, node, pre_check)

    def update_node(self, old: Node, new: Node) -> None:
        """Upstream ``updateNodeInCache``: one queue move per scheduling-relevant change."""
        self.cache.update_node(old, new)
        events = node_scheduling_properties_change(new, old)
        pre_check = self._pre_check_for_node(new) if events else None
        for event in events:
            self.queue.move_all_to_active_or_backoff_queue(event, old, new, pre_check)

    def _pre_check_for_node(self, node: Node) -> Callable[[Pod], bool] | None:
        """Upstream ``preCheckForNode``: none with queueing hints; without them, only the pods
        the node could admit are moved (``schedframe.queue.pre_check_for_node``)."""
        if getattr(self.queue, "queueing_hints", True):
            return None
        from schedframe.framework import NodeInfo
        from schedframe.queue import pre_check_for_node

        get_node_info = getattr(self.cache, "get_node_info", None)
        node_info = get_node_info(node.metadata.name) if get_node_info is not None else None
        if node_info is None:
            node_info = NodeInfo(node)
        return pre_check_for_node(node_info)

    def delete_node(self, node: Node) -> None:
        """Upstream ``deleteNodeFromCache``."""
        self.queue.move_all_to_active_or_backoff_queue(EVENT_NODE_DELETE, node, None, None)
        self.cache.remove_node(node)

    # -- pods --------------------------------------------------------------------------------

    def add_pod(self, pod: Pod) -> None:
        """Upstream ``addPod``: assigned pods to the cache, ours to the queue."""
        self.pods.set(pod)
        if pod.spec.node_name:
            self.add_assigned_pod_to_cache(pod)
        elif self.responsible_for(pod):
            self.queue.add(pod)

    def update_pod(self, old: Pod, new: Pod) -> None:
        """Upstream ``updatePod``: a bind shows up as an unassigned -> assigned update."""
        self.pods.set(new)
        if old.spec.node_name:
            self.update_assigned_pod_in_cache(old, new)
        elif new.spec.node_name:
            self.add_assigned_pod_to_cache(new)
            if self.responsible_for(old):
                # Removal caused by the binding, not by the pod going away.
                self.queue.delete(old)
        elif self.responsible_for(old):
            self.update_pod_in_scheduling_queue(old, new)

    def delete_pod(self, pod: Pod) -> None:
        """Upstream ``deletePod``."""
        self.pods.delete(pod)
        if pod.spec.node_name:
            self.delete_assigned_pod_from_cache(pod)
        elif self.responsible_for(pod):
            self.delete_pod_from_scheduling_queue(pod)

    def add_assigned_pod_to_cache(self, pod: Pod) -> None:
        """Upstream ``addAssignedPodToCache`` (confirms an assumed pod)."""
        try:
            self.cache.add_pod(pod)
        except Exception:
            log.exception("scheduler cache AddPod failed for %s", pod.key)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_ADD, None, pod, None)

    def update_assigned_pod_in_cache(self, old: Pod, new: Pod) -> None:
        """Upstream ``updateAssignedPodInCache``."""
        try:
            self.cache.update_pod(old, new)
        except Exception:
            log.exception("scheduler cache UpdatePod failed for %s", old.key)
        for event in pod_scheduling_properties_change(new, old):
            self.queue.move_all_to_active_or_backoff_queue(event, old, new, None)

    def delete_assigned_pod_from_cache(self, pod: Pod) -> None:
        """Upstream ``deleteAssignedPodFromCache``."""
        try:
            self.cache.remove_pod(pod)
        except Exception:
            log.exception("scheduler cache RemovePod failed for %s", pod.key)
        self.queue.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_DELETE, pod, None, None)

    def update_pod_in_scheduling_queue(self, old: Pod, new: Pod) -> None:
        """Upstream ``updatePodInSchedulingQueue``."""
        rv_old, rv_new = old.metadata.resource_version, new.metadata.resource_version
        if rv_old and rv_old == rv_new:
            return  # identical objects (a resync): see upstream #96071
        if self.cache.is_assumed_pod(new):
            if new.deletion_timestamp is not None and old.deletion_timestamp is None:
                self.handle_assumed_pod_deletion(new)
            return
        self.queue.update(old, new)
        if old.nominated_node_name and old.nominated_node_name != new.nominated_node_name:
            # Treated as if the pod left its old nominated node.
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, old, None, _le_priority_pre_check(old.priority)
            )

    def delete_pod_from_scheduling_queue(self, pod: Pod) -> None:
        """Upstream ``deletePodFromSchedulingQueue(pod, inBinding=false)``."""
        self.queue.delete(pod)
        if self.cache.is_assumed_pod(pod):
            self.handle_assumed_pod_deletion(pod)
        elif pod.nominated_node_name:
            self.queue.move_all_to_active_or_backoff_queue(
                EVENT_ASSIGNED_POD_DELETE, pod, None, _le_priority_pre_check(pod.priority)
            )

    def handle_assumed_pod_deletion(self, pod: Pod) -> None:
        """Upstream ``handleAssumedPodDeletion``: free what an assumed pod holds, now."""
        assumed = self.cache.get_pod(pod.uid)
        if assumed is None:
            return
        fwk = self.profiles.get(assumed.spec.scheduler_name)
        if fwk is None:
            log.error("no profile for scheduler name %r of pod %s", assumed.scheduler_name, pod.key)
            return
        if not fwk.reject_waiting_pod(assumed.uid):
            try:
                self.cache.forget_pod(assumed)
            except Exception:
                log.exception("scheduler cache ForgetPod failed for %s", pod.key)
        self.queue.move_all_to_active_or_backoff_queue(
            EVENT_ASSIGNED_POD_DELETE, assumed, None, None
        )
