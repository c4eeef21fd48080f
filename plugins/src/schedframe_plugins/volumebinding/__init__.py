"""VolumeBinding: the pod's claims must be bound, or bindable, to volumes reachable from the node.

Port of upstream ``pkg/scheduler/framework/plugins/volumebinding/volume_binding.go``.

Limitation: schedframe does not model PersistentVolumeClaims, PersistentVolumes,
StorageClasses or CSI storage capacity. What can be seen is handled as upstream does: a pod
without claims is skipped (PreFilter writes an empty state and returns Skip; Reserve then marks
its volumes all bound and PreBind has nothing to do), and a pod that references a claim is
UnschedulableAndUnresolvable with upstream's ``persistentvolumeclaim "<name>" not found``.
Storage capacity scoring (the StorageCapacityScoring feature, alpha and off) is not enabled,
so PreScore returns Skip and Score gives 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final

import attrs

from schedframe import errors
from schedframe import framework as fw
from schedframe.objects import Pod
from schedframe_plugins import names
from schedframe_plugins._signers import volumes_signer

__all__ = [
    "DEFAULT_BIND_TIMEOUT_SECONDS",
    "UtilizationShapePoint",
    "VolumeBinding",
    "VolumeBindingArgs",
]

NAME: Final = names.VOLUME_BINDING

#: Upstream's default ``bindTimeoutSeconds``.
DEFAULT_BIND_TIMEOUT_SECONDS: Final = 600


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
    all_bound: bool = False

    def clone(self) -> _StateData:
        return _StateData(self.all_bound)


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

    def sign_pod(self, pod: Pod) -> tuple[Sequence[fw.SignFragment], fw.Status | None]:
        """The pod's volume sources (upstream ``VolumeBinding.SignPod``)."""
        return (fw.SignFragment(key=fw.VOLUMES_SIGNER_NAME, value=volumes_signer(pod)),), None

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Skip pods without claims; a referenced claim cannot be found."""
        for volume in pod.spec.volumes:
            if volume.persistent_volume_claim is not None:
                return fw.Status(
                    fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    claim_not_found(volume.persistent_volume_claim),
                )
        state[_STATE] = _StateData()
        return fw.Status(fw.Code.SKIP)

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """Nothing to check once PreFilter has passed (no claims are modelled)."""
        if state.get(_STATE) is None:
            return fw.Status(fw.Code.ERROR, "not found")
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
        """Record that the pod's volumes are all bound (it has none to bind)."""
        s = state.get(_STATE)
        if s is None:
            return fw.Status(fw.Code.ERROR, "not found")
        s.all_bound = True
        return None

    def unreserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> None:
        """Nothing was assumed, so nothing to revert."""

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
        """Nothing to bind when every volume is bound."""
        s = state.get(_STATE)
        if s is None:
            return fw.Status(fw.Code.ERROR, "not found")
        if s.all_bound:
            return None
        return fw.Status(fw.Code.ERROR, "volumes of the pod are not bound")

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """Storage objects appearing or changing, and node additions or label changes."""
        r = fw.EventResource
        a = fw.ActionType
        return (
            fw.ClusterEventWithHint(fw.ClusterEvent(r.STORAGE_CLASS, a.ADD | a.UPDATE)),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(r.PERSISTENT_VOLUME_CLAIM, a.ADD | a.UPDATE),
                self.is_schedulable_after_persistent_volume_claim_change,
            ),
            fw.ClusterEventWithHint(fw.ClusterEvent(r.PERSISTENT_VOLUME, a.ADD | a.UPDATE)),
            fw.ClusterEventWithHint(fw.ClusterEvent(r.NODE, a.ADD | a.UPDATE_NODE_LABEL)),
            fw.ClusterEventWithHint(fw.ClusterEvent(r.CSI_NODE, a.ADD | a.UPDATE)),
            fw.ClusterEventWithHint(fw.ClusterEvent(r.CSI_DRIVER, a.UPDATE)),
            fw.ClusterEventWithHint(fw.ClusterEvent(r.CSI_STORAGE_CAPACITY, a.ADD | a.UPDATE)),
        )

    def is_schedulable_after_persistent_volume_claim_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue when the claim (anything with ``namespace`` and ``name``) is one the pod uses."""
        namespace = getattr(new_obj, "namespace", None)
        claim = getattr(new_obj, "name", None)
        if not isinstance(namespace, str) or not isinstance(claim, str):
            raise TypeError(f"expected a PersistentVolumeClaim, got {type(new_obj).__name__}")
        if namespace != pod.namespace:
            return fw.QueueingHint.QUEUE_SKIP
        if any(v.persistent_volume_claim == claim for v in pod.spec.volumes):
            return fw.QueueingHint.QUEUE
        return fw.QueueingHint.QUEUE_SKIP
