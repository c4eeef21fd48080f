"""The storage control loop the in-memory backend plays: what kube-controller-manager's
PersistentVolume controller and an external CSI provisioner do in a real cluster.

Reacting to each PV and PVC write, as those controllers react to their watches:

* a new unbound volume becomes ``Available`` (``syncVolume``);
* a claim of an Immediate class (or of no class) is bound to the smallest matching
  ``Available`` volume, or provisioned when its class has a provisioner (``syncUnboundClaim``);
* a volume the scheduler pre-bound to a claim (``claimRef``) gets its claim bound:
  ``spec.volumeName``, ``pv.kubernetes.io/bind-completed``, phase ``Bound`` on both;
* a claim the scheduler annotated with ``volume.kubernetes.io/selected-node`` is provisioned
  on that node's topology (the driver's CSINode topology keys), the matching
  CSIStorageCapacity is decremented, and the new volume is bound to it.

A provisioning failure (injected) removes the selected-node annotation, the provisioner's
signal for the scheduler to retry.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Final

from schedframe._evolve import evolve
from schedframe.objects import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    NOT_SUPPORTED_PROVISIONER,
    ClaimReference,
    CSINode,
    CSIStorageCapacity,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    find_matching_volume,
    is_volume_bound_to_claim,
)

__all__ = ["StorageController"]

#: Annotation the provisioner sets on the volumes it creates.
ANN_DYNAMICALLY_PROVISIONED: Final = "pv.kubernetes.io/provisioned-by"

Get = Callable[[str, str, str], object | None]
List = Callable[[str], Sequence[object]]
Write = Callable[[object], object]


class StorageController:
    """Reconciles PVs and PVCs after each write; see the module docstring.

    Args:
        get: ``get(kind, name, namespace)`` over the store (lock held).
        list_: ``list_(kind)`` over the store.
        write: stores a changed object (create or update) and returns it as stored.
    """

    def __init__(self, get: Get, list_: List, write: Write) -> None:
        self._get = get
        self._list = list_
        self._write = write
        #: Provisioning attempts left to fail (failure injection).
        self.failing_provisions = 0
        #: Scheduler pre-bindings left undone (failure injection: a stalled controller).
        self.stalled_bindings = 0
        self._provisioned = 0
        # A work queue of (kind, namespace, name), as the controllers' own: a write made while
        # reconciling is reconciled after the current object, from its latest version.
        self._queue: deque[tuple[str, str, str]] = deque()
        self._busy = False

    def copy_state(self, other: StorageController) -> None:
        """Take ``other``'s injected failures and provisioning count (a fork's controller,
        or a parent's when a fork is committed)."""
        self.failing_provisions = other.failing_provisions
        self.stalled_bindings = other.stalled_bindings
        self._provisioned = other._provisioned

    def reconcile(self, obj: object) -> None:
        """React to a PV or PVC that was just written."""
        if isinstance(obj, PersistentVolume):
            self._queue.append(("PersistentVolume", "", obj.name))
        elif isinstance(obj, PersistentVolumeClaim):
            self._queue.append(("PersistentVolumeClaim", obj.namespace, obj.name))
        if self._busy:
            return
        self._busy = True
        try:
            while self._queue:
                kind, namespace, name = self._queue.popleft()
                latest = self._get(kind, name, namespace)
                if isinstance(latest, PersistentVolume):
                    self._sync_volume(latest)
                elif isinstance(latest, PersistentVolumeClaim):
                    self._sync_claim(latest)
        finally:
            self._busy = False

    # -- volumes -----------------------------------------------------------------------------

    def _sync_volume(self, pv: PersistentVolume) -> None:
        if pv.claim_ref is None:
            if pv.phase == "Pending":
                self._write(evolve(pv, phase="Available"))
            return
        pvc = self._get("PersistentVolumeClaim", pv.claim_ref.name, pv.claim_ref.namespace)
        if not isinstance(pvc, PersistentVolumeClaim) or pvc.phase == "Bound":
            return
        if pvc.volume_name and pvc.volume_name != pv.name:
            return
        if self.stalled_bindings > 0:
            self.stalled_bindings -= 1
            return
        self._bind(pv, pvc)

    def _bind(self, pv: PersistentVolume, pvc: PersistentVolumeClaim) -> None:
        """Upstream ``bind``: the volume names the claim with its uid, then the claim names
        the volume and is marked bind-completed; both turn ``Bound``."""
        ref = ClaimReference(
            namespace=pvc.namespace,
            name=pvc.name,
            uid=pvc.metadata.uid,
            resource_version=pvc.metadata.resource_version,
        )
        if pv.claim_ref != ref or pv.phase != "Bound":
            pv = evolve(pv, claim_ref=ref, phase="Bound")
            stored = self._write(pv)
            assert isinstance(stored, PersistentVolume)
            pv = stored
        annotations = {**pvc.metadata.annotations, ANN_BIND_COMPLETED: "yes"}
        if not pvc.volume_name:
            annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        self._write(
            evolve(
                pvc,
                metadata=evolve(pvc.metadata, annotations=annotations),
                volume_name=pv.name,
                phase="Bound",
                capacity=pv.capacity,
            )
        )

    # -- claims ------------------------------------------------------------------------------

    def _sync_claim(self, pvc: PersistentVolumeClaim) -> None:
        if pvc.phase == "Bound" or pvc.metadata.deletion_timestamp is not None:
            return
        cls = self._get("StorageClass", pvc.class_name, "") if pvc.class_name else None
        storage_class = cls if isinstance(cls, StorageClass) else None
        volumes = [v for v in self._list("PersistentVolume") if isinstance(v, PersistentVolume)]
        if pvc.volume_name:
            pv = next((v for v in volumes if v.name == pvc.volume_name), None)
            if pv is not None and (pv.claim_ref is None or is_volume_bound_to_claim(pv, pvc)):
                self._bind(pv, pvc)
            return
        delay = (
            storage_class is not None
            and storage_class.volume_binding_mode == "WaitForFirstConsumer"
        )
        selected = pvc.metadata.annotations.get(ANN_SELECTED_NODE)
        if delay and selected is None:
            return  # waits for the scheduler
        if not delay:
            match = find_matching_volume(pvc, volumes, None, lambda _: False, delay_binding=False)
            if match is not None:
                self._bind(match, pvc)
                return
        if storage_class is None or storage_class.provisioner in ("", NOT_SUPPORTED_PROVISIONER):
            return
        node = self._get("Node", selected, "") if selected else None
        self._provision(pvc, storage_class, node if isinstance(node, Node) else None)

    def _provision(
        self, pvc: PersistentVolumeClaim, storage_class: StorageClass, node: Node | None
    ) -> None:
        """What a CSI external-provisioner does: create a volume of the claim's size on the
        selected node's topology, then the PV controller binds it."""
        provisioner = storage_class.provisioner
        affinity = None
        if node is not None:
            csi_node = self._get("CSINode", node.name, "")
            keys: tuple[str, ...] = ()
            if isinstance(csi_node, CSINode):
                driver = csi_node.driver(provisioner)
                keys = driver.topology_keys if driver is not None else ()
            requirements = tuple(
                NodeSelectorRequirement(key=k, operator="In", values=(node.labels[k],))
                for k in keys
                if k in node.labels
            )
            if requirements:
                affinity = NodeSelector(
                    node_selector_terms=(NodeSelectorTerm(match_expressions=requirements),)
                )
        # The PV controller names the provisioner on the claim before it provisions.
        annotations = dict(pvc.metadata.annotations)
        annotations.setdefault(ANN_STORAGE_PROVISIONER, provisioner)
        pvc_stored = self._write(
            evolve(pvc, metadata=evolve(pvc.metadata, annotations=annotations))
        )
        assert isinstance(pvc_stored, PersistentVolumeClaim)
        if self.failing_provisions > 0:
            # The provisioner's failure signal: the selected node is taken off the claim.
            self.failing_provisions -= 1
            annotations.pop(ANN_SELECTED_NODE, None)
            meta = evolve(pvc_stored.metadata, annotations=annotations)
            self._write(evolve(pvc_stored, metadata=meta))
            return
        if node is not None:
            self._take_capacity(storage_class, node, pvc.request)
        self._provisioned += 1
        uid = pvc.metadata.uid.replace("/", "-")
        pv = PersistentVolume(
            metadata=ObjectMeta(
                name=f"pvc-{uid}",
                annotations={ANN_DYNAMICALLY_PROVISIONED: provisioner},
            ),
            capacity=pvc.request,
            access_modes=pvc.access_modes,
            claim_ref=ClaimReference(namespace=pvc.namespace, name=pvc.name, uid=pvc.metadata.uid),
            storage_class_name=storage_class.name,
            volume_mode=pvc.volume_mode,
            reclaim_policy=storage_class.reclaim_policy,
            source="csi",
            csi_driver=provisioner,
            volume_handle=f"{provisioner}-{self._provisioned}",
            node_affinity=affinity,
        )
        stored = self._write(pv)
        assert isinstance(stored, PersistentVolume)
        self._bind(stored, pvc_stored)

    def _take_capacity(self, storage_class: StorageClass, node: Node, size: int) -> None:
        for cap in self._list("CSIStorageCapacity"):
            if (
                isinstance(cap, CSIStorageCapacity)
                and cap.storage_class_name == storage_class.name
                and cap.node_topology is not None
                and cap.node_topology.matches(node.labels)
                and cap.capacity is not None
            ):
                self._write(evolve(cap, capacity=max(cap.capacity - size, 0)))
                return
