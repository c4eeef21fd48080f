"""The per-cycle snapshot plugins read (upstream ``backend/cache/snapshot.go``)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

from schedframe.framework import (
    ImageStateSummary,
    NodeColumns,
    NodeInfo,
    PodInfo,
    normalized_image_name,
)
from schedframe.objects import Node, Pod

__all__ = ["Snapshot"]


class Snapshot:
    """An immutable-by-convention view of the cluster for one scheduling cycle.

    Implements :class:`schedframe.framework.SharedLister` and
    :class:`schedframe.framework.NodeInfoLister`. The cache refreshes one Snapshot in place
    between cycles, copying only the NodeInfos whose generation changed; tests and tools build
    one directly with :meth:`from_objects`.
    """

    __slots__ = (
        "_by_name",
        "_changed",
        "_columns",
        "_have_affinity",
        "_have_required_anti_affinity",
        "_node_list",
        "_owned",
        "_position",
        "_pvc_counts",
        "_tree_version",
        "generation",
    )

    def __init__(self) -> None:
        # The cache updates these in place (Cache.update_snapshot); NodeInfos in _by_name keep
        # their identity across updates so the lists need not be rebuilt.
        self._by_name: dict[str, NodeInfo] = {}
        self._node_list: list[NodeInfo] = []
        # NodeInfo identity -> its index in _node_list (keeps the side lists in list order).
        self._position: dict[int, int] = {}
        self._have_affinity: list[NodeInfo] = []
        self._have_required_anti_affinity: list[NodeInfo] = []
        # Claim key -> number of pods in the snapshot using it (upstream usedPVCRefCounts).
        self._pvc_counts: dict[str, int] = {}
        # The cache's node-tree version the node list was built from (-1: never built).
        self._tree_version = -1
        #: The newest NodeInfo generation copied in; the cache copies only newer ones.
        self.generation = 0
        # Columnar view (built on first use) and the nodes changed since it was refreshed.
        self._columns: NodeColumns | None = None
        self._changed: set[str] = set()
        # Once copied (see copy_state), the nodes whose NodeInfo is this snapshot's own; the
        # others may be held by another snapshot too. ``None``: never copied.
        self._owned: set[str] | None = None

    @classmethod
    def from_objects(cls, nodes: Iterable[Node], pods: Iterable[Pod] = ()) -> Snapshot:
        """A snapshot of ``nodes`` with ``pods`` placed by their ``spec.nodeName``.

        Nodes keep the order given; pods naming an unknown node are left out, as upstream's
        ``NewSnapshot`` does. Image states count, per image, the nodes that have it.
        """
        snap = cls()
        infos: dict[str, NodeInfo] = {}
        for node in nodes:
            infos[node.metadata.name] = NodeInfo(node)
        for pod in pods:
            info = infos.get(pod.spec.node_name)
            if info is not None:
                info.add_pod(PodInfo(pod))
        # Upstream createImageExistenceMap: image name -> set of nodes having it.
        spread: dict[str, int] = {}
        for info in infos.values():
            assert info.node is not None
            for name in {
                normalized_image_name(n) for img in info.node.status.images for n in img.names
            }:
                spread[name] = spread.get(name, 0) + 1
        for info in infos.values():
            assert info.node is not None
            states: dict[str, ImageStateSummary] = {}
            for img in info.node.status.images:
                for n in img.names:
                    name = normalized_image_name(n)
                    states[name] = ImageStateSummary(size=img.size_bytes, num_nodes=spread[name])
            info.image_states = states
        snap.set_node_infos(list(infos.values()))
        return snap

    def set_node_infos(self, node_list: list[NodeInfo]) -> None:
        """Replace the node list (the cache calls this when nodes appear, go or flip side lists)."""
        self._node_list = node_list
        self._by_name = {info.name: info for info in node_list}
        self.refresh_side_lists()

    def refresh_side_lists(self) -> None:
        """Recompute the affinity side lists and the PVC usage counts from the node list."""
        self._refresh_affinity_lists()
        counts: dict[str, int] = {}
        for info in self._node_list:
            for key, n in info.pvc_ref_counts.items():
                counts[key] = counts.get(key, 0) + n
        self._pvc_counts = counts

    def _refresh_affinity_lists(self) -> None:
        self._position = {id(info): i for i, info in enumerate(self._node_list)}
        self._have_affinity = [i for i in self._node_list if i.pods_with_affinity]
        self._have_required_anti_affinity = [
            i for i in self._node_list if i.pods_with_required_anti_affinity
        ]

    def _update_affinity_lists(self, infos: Iterable[NodeInfo]) -> None:
        """Add ``infos`` to, or drop them from, the affinity side lists as their pods now say,
        keeping node-list order (the cache calls this for nodes that changed in place)."""
        position = self._position
        for info in infos:
            at = position.get(id(info))
            if at is None:  # not in the node list: the next full rebuild sorts it out
                continue
            for side, member in (
                (self._have_affinity, bool(info.pods_with_affinity)),
                (self._have_required_anti_affinity, bool(info.pods_with_required_anti_affinity)),
            ):
                index = bisect.bisect_left(side, at, key=lambda i: position[id(i)])
                present = index < len(side) and side[index] is info
                if member and not present:
                    side.insert(index, info)
                elif present and not member:
                    del side[index]

    def copy_state(self, other: Snapshot) -> None:
        """Make this (new) snapshot hold what ``other`` holds: a fork's starting point.

        Copy-on-write: both snapshots keep the same NodeInfo objects; the cache copies one
        before it refreshes it in place (``_unshare``), so neither snapshot ever sees the
        other's later refreshes. The columnar view is copied too.
        """
        self._by_name = dict(other._by_name)
        self._node_list = list(other._node_list)
        self._position = dict(other._position)
        self._have_affinity = list(other._have_affinity)
        self._have_required_anti_affinity = list(other._have_required_anti_affinity)
        self._pvc_counts = dict(other._pvc_counts)
        self._tree_version = other._tree_version
        self.generation = other.generation
        columns = other._columns
        if columns is not None and columns.infos is other._node_list:
            self._columns = columns.copy(self._node_list)
        else:
            self._columns = None
        self._changed = set(other._changed)
        self._owned = set()
        other._owned = set()

    def _unshare(self, name: str, info: NodeInfo) -> NodeInfo:
        """Replace ``info`` (the NodeInfo of ``name``, maybe shared with another snapshot) by
        a private copy everywhere this snapshot refers to it; returns the copy."""
        if self._owned is not None:
            self._owned.add(name)
        own = info.clone()
        self._by_name[name] = own
        position = self._position
        at = position.get(id(info))
        if at is None:
            return own
        for side in (self._have_affinity, self._have_required_anti_affinity):
            index = bisect.bisect_left(side, at, key=lambda i: position[id(i)])
            if index < len(side) and side[index] is info:
                side[index] = own
        del position[id(info)]
        position[id(own)] = at
        self._node_list[at] = own
        return own

    # -- SharedLister ------------------------------------------------------------------------

    @property
    def node_infos(self) -> Snapshot:
        """This snapshot, as the NodeInfo lister."""
        return self

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """True when a pod on some node uses the claim ``namespace/name``."""
        return self._pvc_counts.get(key, 0) > 0

    # -- NodeInfoLister ----------------------------------------------------------------------

    def list(self) -> Sequence[NodeInfo]:
        """Every node in snapshot order."""
        return self._node_list

    def get(self, node_name: str) -> NodeInfo:
        """One node; ``KeyError`` naming it when absent."""
        try:
            return self._by_name[node_name]
        except KeyError:
            raise KeyError(f"nodeinfo not found for node name {node_name!r}") from None

    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]:
        """Nodes with at least one pod that has pod affinity or anti-affinity."""
        return self._have_affinity

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]:
        """Nodes with at least one pod that has required anti-affinity."""
        return self._have_required_anti_affinity

    def columns(self) -> NodeColumns:
        """The nodes as NumPy columns (:class:`schedframe.framework.NodeColumns`), row ``i``
        being ``list()[i]``.

        Built on first use (NumPy is imported then) and refreshed row by row for the nodes the
        cache copied in since; a new node list means new columns. NodeInfos in a snapshot are
        read-only for everyone but the cache, which reports what it changes.
        """
        columns = self._columns
        if columns is None or columns.infos is not self._node_list:
            columns = self._columns = NodeColumns(self._node_list)
            self._changed.clear()
        elif self._changed:
            index = columns.index
            columns.refresh([index[name] for name in self._changed if name in index])
            self._changed.clear()
        return columns

    def node_changed(self, name: str) -> None:
        """Tell the snapshot that the NodeInfo of ``name`` was updated in place."""
        self._changed.add(name)

    def num_nodes(self) -> int:
        """How many nodes the snapshot holds."""
        return len(self._node_list)

    def __len__(self) -> int:
        return len(self._node_list)
