"""VolumeBinding: the pod's claims must be bound, or bindable, to volumes reachable from the node.

Port of upstream ``pkg/scheduler/framework/plugins/volumebinding/volume_binding.go`` with its
binder (:mod:`.binder`). PreFilter sorts the pod's claims (an unbound claim of an Immediate
class is UnschedulableAndUnresolvable); Filter checks bound volumes' node affinity and finds,
for WaitForFirstConsumer claims, the smallest fitting volume or a dynamic provisioning allowed
by the class's topology and CSIStorageCapacity; Reserve assumes the choice in the binder's
assume caches, Unreserve reverts it; PreBind writes the PV and PVC updates through the
backend (:class:`~schedframe.framework.VolumeWriter`) and waits, on the storage watch, until
the PersistentVolume controller has bound them.

Limitations: the storage-capacity scorer (the StorageCapacityScoring feature, alpha and off)
is not enabled, so PreScore returns Skip and Score gives 0; in-tree volumes are not
translated to CSI for node-affinity checks (CSI migration); PreBind does not check that the
pod still exists while it waits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final

import attrs

from schedframe import errors
from schedframe import framework as fw
from schedframe.objects import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    Node,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
)
from schedframe_plugins import names
from schedframe_plugins._signers import volumes_signer
from schedframe_plugins.volumebinding.binder import (
    BindingError,
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
    volume_is_for_pod,
)

__all__ = [
    "DEFAULT_BIND_TIMEOUT_SECONDS",
    "ERR_UNBOUND_IMMEDIATE",
    "UtilizationShapePoint",
    "VolumeBinding",
    "VolumeBindingArgs",
]

NAME: Final = names.VOLUME_BINDING

#: Upstream's default ``bindTimeoutSeconds``.
DEFAULT_BIND_TIMEOUT_SECONDS: Final = 600
#: PreFilter's reason when a claim of an Immediate class is not bound yet.
ERR_UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"
#: The CSINode annotation listing the in-tree plugins migrated to CSI on the node.
MIGRATED_PLUGINS_ANNOTATION: Final = "storage.alpha.kubernetes.io/migrated-plugins"


@attrs.frozen(kw_only=True)
class UtilizationShapePoint:
    """A point of the storage-capacity scoring curve (utilisation %, score 0..10)."""

    utilization: int
    score: int


@attrs.frozen(kw_only=True)
class VolumeBindingArgs:
    """Args of VolumeBinding (upstream ``VolumeBindingArgs``).

    Attributes:
        bind_timeout_seconds: how long PreBind waits for volumes to bind.
        shape: the storage-capacity scoring curve; only accepted with the
            StorageCapacityScoring feature, which schedframe does not enable.
    """

    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    shape: tuple[UtilizationShapePoint, ...] | None = None

    def validate(self) -> list[errors.FieldIssue]:
        """Upstream ``ValidateVolumeBindingArgs`` with StorageCapacityScoring off."""
        issues: list[errors.FieldIssue] = []
        if self.bind_timeout_seconds < 0:
            issues.append(
                errors.FieldIssue(
                    path="bindTimeoutSeconds",
                    kind=errors.INVALID,
                    value=self.bind_timeout_seconds,
                    detail="invalid BindTimeoutSeconds, should not be a negative value",
                )
            )
        if self.shape is not None:
            issues.append(
                errors.FieldIssue(
                    path="shape",
                    kind=errors.INVALID,
                    value=[{"utilization": p.utilization, "score": p.score} for p in self.shape],
                    detail="unexpected field `shape`, remove it or turn on the feature gate "
                    "StorageCapacityScoring",
                )
            )
        return issues


@attrs.define
class _StateData:
    """Upstream ``stateData``; shared by cycle-state clones, as upstream's pointer is."""

    all_bound: bool = False
    pod_volumes_by_node: dict[str, PodVolumes] = attrs.field(factory=dict)
    pod_volume_claims: PodVolumeClaims | None = None
    has_static_bindings: bool = False

    def clone(self) -> _StateData:
        return self


_STATE: Final = fw.StateKey[_StateData](NAME)


def claim_not_found(name: str) -> str:
    """Upstream's NotFound error text for a claim (``persistentvolumeclaim "x" not found``)."""
    return f'persistentvolumeclaim "{name}" not found'


class VolumeBinding(
    fw.PreFilterPlugin,
    fw.FilterPlugin,
    fw.ReservePlugin,
    fw.PreBindPlugin,
    fw.PreScorePlugin,
    fw.ScorePlugin,
    fw.EnqueueExtensions,
):
    """Binds the pod's claims to volumes on the chosen node."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = VolumeBindingArgs

    def __init__(self, args: VolumeBindingArgs | None, handle: fw.Handle) -> None:
        args = args if args is not None else VolumeBindingArgs()
        issues = args.validate()
        if issues:
            raise errors.ConfigError(issues)
        self.args = args
        self._handle = handle
        self._binder: VolumeBinder | None = None

    @property
    def binder(self) -> VolumeBinder:
        """The volume binder, made on first use (its caches live as long as the plugin)."""
        if self._binder is None:
            self._binder = VolumeBinder(
                self._handle.storage_lister(),
                self._node,
                self._writer(),
                float(self.args.bind_timeout_seconds),
                self._handle.clock,
            )
        return self._binder

    def _writer(self) -> fw.VolumeWriter | None:
        try:
            binder = self._handle.binder
        except Exception:  # a handle without a backend (explain, tests): nothing to write
            return None
        return binder if isinstance(binder, fw.VolumeWriter) else None

    def _node(self, name: str) -> Node | None:
        try:
            return self._handle.snapshot_shared_lister().node_infos.get(name).node
        except KeyError:
            return None

    def _pod_has_pvcs(self, pod: Pod) -> tuple[bool, str | None]:
        """Upstream ``podHasPVCs``: whether the pod uses claims, and why it cannot yet."""
        lister = self._handle.storage_lister()
        has_pvc = False
        for volume in pod.spec.volumes:
            name = volume.claim_name(pod.name)
            if name is None:
                continue
            has_pvc = True
            pvc = lister.persistent_volume_claim(pod.namespace, name)
            if pvc is None:
                if volume.ephemeral:
                    return True, (
                        "waiting for ephemeral volume controller to create the "
                        f'persistentvolumeclaim "{name}"'
                    )
                return True, claim_not_found(name)
            if pvc.phase == "Lost":
                return True, (
                    f'persistentvolumeclaim "{pvc.name}" bound to non-existent '
                    f'persistentvolume "{pvc.volume_name}"'
                )
            if pvc.metadata.deletion_timestamp is not None:
                return True, f'persistentvolumeclaim "{pvc.name}" is being deleted'
            if volume.ephemeral:
                why = volume_is_for_pod(pod, pvc)
                if why is not None:
                    return True, why
        return has_pvc, None

    def sign_pod(self, pod: Pod) -> tuple[Sequence[fw.SignFragment], fw.Status | None]:
        """The pod's volume sources (upstream ``VolumeBinding.SignPod``)."""
        return (fw.SignFragment(key=fw.VOLUMES_SIGNER_NAME, value=volumes_signer(pod)),), None

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Skip pods without claims; refuse pods with unbound Immediate claims."""
        has_pvc, why = self._pod_has_pvcs(pod)
        if why is not None:
            return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, why)
        if not has_pvc:
            state[_STATE] = _StateData()
            return fw.Status(fw.Code.SKIP)
        try:
            claims = self.binder.get_pod_volume_claims(pod)
        except BindingError as exc:
            return fw.Status(fw.Code.ERROR, str(exc))
        if claims.unbound_claims_immediate:
            return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_UNBOUND_IMMEDIATE)
        state[_STATE] = _StateData(
            pod_volume_claims=PodVolumeClaims(
                bound_claims=claims.bound_claims,
                unbound_claims_delay_binding=claims.unbound_claims_delay_binding,
                unbound_volumes_delay_binding=claims.unbound_volumes_delay_binding,
            )
        )
        return None

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """UnschedulableAndUnresolvable with the binder's reasons when the node cannot host
        the pod's volumes; records what it found for the node."""
        s = state.get(_STATE)
        if s is None:
            return fw.Status(fw.Code.ERROR, f'reading "{NAME}" from cycleState: not found')
        if s.pod_volume_claims is None:
            return None
        node = node_info.node
        assert node is not None
        try:
            volumes, reasons = self.binder.find_pod_volumes(pod, s.pod_volume_claims, node)
        except BindingError as exc:
            return fw.Status(fw.Code.ERROR, str(exc))
        if reasons:
            return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        s.pod_volumes_by_node[node.name] = volumes
        s.has_static_bindings = s.has_static_bindings or bool(volumes.static_bindings)
        return None

    def pre_score(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.Status | None:
        """Skip: there is no storage-capacity scorer without StorageCapacityScoring."""
        return fw.Status(fw.Code.SKIP)

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        """0: there is no storage-capacity scorer."""
        return 0

    def reserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> fw.Status | None:
        """Assume the volumes chosen for ``node_name`` in the binder's caches."""
        s = state.get(_STATE)
        if s is None:
            return fw.Status(fw.Code.ERROR, f'reading "{NAME}" from cycleState: not found')
        volumes = s.pod_volumes_by_node.get(node_name)
        if volumes is None:
            s.all_bound = True  # the pod uses no claim
            return None
        # Only the chosen node's volumes are read from here on (Unreserve, PreBind); the
        # binding cycle keeps the state alive, so the other nodes' are let go.
        s.pod_volumes_by_node = {node_name: volumes}
        try:
            s.all_bound = self.binder.assume_pod_volumes(pod, node_name, volumes)
        except BindingError as exc:
            return fw.Status(fw.Code.ERROR, str(exc))
        return None

    def unreserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> None:
        """Revert what Reserve assumed (idempotent)."""
        s = state.get(_STATE)
        if s is None:
            return
        volumes = s.pod_volumes_by_node.get(node_name)
        if volumes is not None:
            self.binder.revert_assumed_pod_volumes(volumes)

    def pre_bind_pre_flight(
        self, state: fw.CycleState, pod: Pod, node_name: str
    ) -> fw.Status | None:
        """Skip when every volume is bound: PreBind has nothing to do (upstream
        ``PreBindPreFlight``)."""
        s = state.get(_STATE)
        if s is None:
            return fw.Status(fw.Code.ERROR, "not found")
        if s.all_bound:
            return fw.Status(fw.Code.SKIP)
        return None

    def pre_bind(self, state: fw.CycleState, pod: Pod, node_name: str) -> fw.Status | None:
        """Write the bindings and wait until the claims are bound (or fail)."""
        s = state.get(_STATE)
        if s is None:
            return fw.Status(fw.Code.ERROR, f'reading "{NAME}" from cycleState: not found')
        if s.all_bound:
            return None
        volumes = s.pod_volumes_by_node.get(node_name)
        if volumes is None:
            return fw.Status(fw.Code.ERROR, f'no pod volumes found for node "{node_name}"')
        try:
            self.binder.bind_pod_volumes(pod, node_name, volumes)
        except BindingError as exc:
            return fw.Status(fw.Code.ERROR, str(exc))
        return None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """Storage objects appearing or changing, and node additions or label changes."""
        r = fw.EventResource
        a = fw.ActionType
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(r.STORAGE_CLASS, a.ADD | a.UPDATE),
                self.is_schedulable_after_storage_class_change,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(r.PERSISTENT_VOLUME_CLAIM, a.ADD | a.UPDATE),
                self.is_schedulable_after_persistent_volume_claim_change,
            ),
            fw.ClusterEventWithHint(fw.ClusterEvent(r.PERSISTENT_VOLUME, a.ADD | a.UPDATE)),
            fw.ClusterEventWithHint(fw.ClusterEvent(r.NODE, a.ADD | a.UPDATE_NODE_LABEL)),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(r.CSI_NODE, a.ADD | a.UPDATE),
                self.is_schedulable_after_csi_node_change,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(r.CSI_DRIVER, a.UPDATE),
                self.is_schedulable_after_csi_driver_change,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(r.CSI_STORAGE_CAPACITY, a.ADD | a.UPDATE),
                self.is_schedulable_after_csi_storage_capacity_change,
            ),
        )

    def is_schedulable_after_persistent_volume_claim_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the claim is one the pod uses (directly or as an ephemeral volume)."""
        if not isinstance(new_obj, PersistentVolumeClaim):
            raise TypeError(f"expected a PersistentVolumeClaim, got {type(new_obj).__name__}")
        if new_obj.namespace != pod.namespace:
            return fw.QueueingHint.QUEUE_SKIP
        if any(v.claim_name(pod.name) == new_obj.name for v in pod.spec.volumes):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_storage_class_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue on a new class, or on a change of a class's allowedTopologies."""
        if not isinstance(new_obj, StorageClass):
            raise TypeError(f"expected a StorageClass, got {type(new_obj).__name__}")
        if old_obj is None:
            return fw.QueueingHint.QUEUE
        if not isinstance(old_obj, StorageClass):
            raise TypeError(f"expected a StorageClass, got {type(old_obj).__name__}")
        if old_obj.allowed_topologies != new_obj.allowed_topologies:
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_csi_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue on a new CSINode, or when its migrated-plugins annotation changes."""
        if old_obj is None:
            return fw.QueueingHint.QUEUE
        if not isinstance(old_obj, CSINode) or not isinstance(new_obj, CSINode):
            raise TypeError(f"expected a CSINode, got {type(new_obj).__name__}")
        old = old_obj.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION)
        new = new_obj.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION)
        return fw.QueueingHint.QUEUE if old != new else fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_csi_driver_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """QueueSkip: upstream queues only pods with inline CSI volumes of the driver whose
        storage-capacity tracking was turned off, and schedframe's pods have no inline CSI
        volume source."""
        if not isinstance(new_obj, CSIDriver):
            raise TypeError(f"expected a CSIDriver, got {type(new_obj).__name__}")
        return fw.QueueingHint.QUEUE_SKIP

    def is_schedulable_after_csi_storage_capacity_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue on a new capacity, or when the volume limit it allows grows."""
        if not isinstance(new_obj, CSIStorageCapacity):
            raise TypeError(f"expected a CSIStorageCapacity, got {type(new_obj).__name__}")
        if old_obj is None:
            return fw.QueueingHint.QUEUE
        if not isinstance(old_obj, CSIStorageCapacity):
            raise TypeError(f"expected a CSIStorageCapacity, got {type(old_obj).__name__}")
        old_limit = _volume_limit(old_obj)
        new_limit = _volume_limit(new_obj)
        if new_limit is not None and (old_limit is None or new_limit > old_limit):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP


def _volume_limit(cap: CSIStorageCapacity) -> int | None:
    return cap.maximum_volume_size if cap.maximum_volume_size is not None else cap.capacity
