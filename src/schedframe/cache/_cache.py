"""The scheduler's cache of nodes and the pods on them (upstream ``backend/cache/cache.go``).

Pods move through the states of upstream's cache: *assumed* (the scheduler placed the pod and
is binding it), *added* (the informer saw it bound), then removed. NodeInfos are kept ordered by
recency (upstream's doubly linked list, here an ``OrderedDict`` whose last entry is the head) so
:meth:`Cache.update_snapshot` copies only the NodeInfos changed since the previous call.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

import attrs

from schedframe.cache._errors import CacheError
from schedframe.cache._node_tree import NodeTree
from schedframe.cache._snapshot import Snapshot
from schedframe.framework import ImageStateSummary, NodeInfo, PodInfo, normalized_image_name
from schedframe.framework._types import next_generation
from schedframe.objects import Node, Pod

__all__ = ["Cache", "CacheDump"]

_log = logging.getLogger("schedframe.cache")
_NODE_INFO_SLOTS: tuple[str, ...] = tuple(NodeInfo.__slots__)


@attrs.frozen(kw_only=True, eq=False)
class CacheDump:
    """A copy of the cache for debugging (upstream ``Dump``); ghost nodes included."""

    #: node name -> a copy of its NodeInfo (``node`` is ``None`` for a ghost).
    nodes: dict[str, NodeInfo]
    #: uids of the assumed pods.
    assumed_pods: set[str]


class _ImageState:
    """One image across the cluster: its size and the nodes holding it (``ImageStateSummary``)."""

    __slots__ = ("nodes", "size", "summary")

    def __init__(self, size: int) -> None:
        self.size = size
        self.nodes: set[str] = set()
        # Rebuilt lazily when the node count changes; shared by every NodeInfo with the image.
        self.summary = ImageStateSummary(size=size, num_nodes=0)

    def copy(self) -> _ImageState:
        other = _ImageState(self.size)
        other.nodes = set(self.nodes)
        other.summary = self.summary
        return other


def _pod_ref(pod: Pod) -> str:
    # Upstream prints the pod key (the uid) then klog.KObj(pod).
    return f"{pod.uid}({pod.namespace}/{pod.name})"


class Cache:
    """Nodes and the pods assigned or assumed to them, with incremental snapshots.

    Thread-safe: every method takes one lock. Assumed pods never expire (upstream's TTL is 0);
    they leave the cache when the informer confirms them (:meth:`add_pod`) or the scheduler
    forgets them (:meth:`forget_pod`).

    Upstream: ``pkg/scheduler/backend/cache/cache.go`` (``cacheImpl``).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # node name -> NodeInfo, least recently updated first; the last entry is upstream's
        # headNode. Every generation bump moves the entry to the end, so generations rise
        # towards the end and update_snapshot can stop at the first one it has seen.
        self._nodes: OrderedDict[str, NodeInfo] = OrderedDict()
        self._tree = NodeTree()
        self._pod_states: dict[str, Pod] = {}
        self._assumed: set[str] = set()
        self._images: dict[str, _ImageState] = {}
        # node name -> {normalised image name: size} as last added for that node.
        self._node_images: dict[str, dict[str, int]] = {}
        # Images whose node count (or size) changed since summaries were last rebuilt, and
        # nodes whose image list changed; see _refresh_images.
        self._dirty_images: set[str] = set()
        self._stale_image_nodes: set[str] = set()
        # The newest generation any snapshot was brought to; see _refresh_images.
        self._snapshot_generation = 0
        # Once copied (see copy_state), the nodes whose NodeInfo is this cache's own; the
        # others may be held by another cache too and are copied on first write. ``None``:
        # never copied, every NodeInfo is its own.
        self._owned: set[str] | None = None

    # -- nodes ---------------------------------------------------------------------------------

    def add_node(self, node: Node) -> None:
        """Add (or replace) a node; a ghost or pod-created entry gets its Node back."""
        name = node.metadata.name
        with self._lock:
            info = self._writable(name)
            if info is None:
                info = self._nodes[name] = NodeInfo()
            else:
                self._nodes.move_to_end(name)
            self._tree.add_node(node)
            self._set_node_images(name, node)
            info.set_node(node)

    def update_node(self, old: Node | None, new: Node) -> None:
        """Replace a node's object; moves it in the node tree when its zone changed."""
        name = new.metadata.name
        with self._lock:
            info = self._writable(name)
            if info is None:
                info = self._nodes[name] = NodeInfo()
                self._tree.add_node(new)
            else:
                self._nodes.move_to_end(name)
            self._tree.update_node(old, new)
            self._set_node_images(name, new)
            info.set_node(new)

    def remove_node(self, node: Node) -> None:
        """Remove a node. Its NodeInfo stays as a *ghost* (no Node, excluded from snapshots)
        until the delete events of its pods arrive, as they come on another watch.

        Raises:
            CacheError: ``node n is not found``, or the node-tree error when the node is not
                in the tree (e.g. removed twice while pods keep its ghost alive).
        """
        name = node.metadata.name
        with self._lock:
            info = self._writable(name)
            if info is None:
                raise CacheError(f"node {name} is not found")
            info.remove_node()
            if not info.pods:
                del self._nodes[name]
            else:
                self._nodes.move_to_end(name)
            self._drop_node_images(name)
            self._tree.remove_node(node)

    # -- pods ----------------------------------------------------------------------------------

    def assume_pod(self, pod: Pod) -> None:
        """Account ``pod`` (``spec.nodeName`` set) on its node while it is being bound.

        Raises:
            CacheError: the pod is already in the cache, or names no node.
        """
        with self._lock:
            if pod.uid in self._pod_states:
                raise CacheError(f"pod {_pod_ref(pod)} is in the cache, so can't be assumed")
            if not pod.spec.node_name:
                raise CacheError(f"pod {_pod_ref(pod)} has no node name, so can't be assumed")
            self._add_pod(pod, assumed=True)

    def finish_binding(self, pod: Pod) -> None:
        """The binding of an assumed pod finished.

        Upstream started the assumed pod's expiry here; with the TTL at 0 nothing expires, so
        this only exists for parity. The pod stays assumed until :meth:`add_pod` confirms it.
        """
        with self._lock:
            if pod.uid in self._assumed:
                _log.debug("Finished binding for pod %s", _pod_ref(pod))

    def forget_pod(self, pod: Pod) -> None:
        """Undo :meth:`assume_pod`; a pod no longer in the cache is ignored.

        Raises:
            CacheError: the pod was assumed on another node, or is not assumed.
        """
        with self._lock:
            current = self._pod_states.get(pod.uid)
            if current is None:
                return
            self._validate_assumed(pod, current)
            self._remove_pod(current)

    def add_pod(self, pod: Pod) -> None:
        """The informer saw ``pod`` bound: confirm it if assumed (moving it if it landed on
        another node than assumed), else add it.

        Raises:
            CacheError: ``pod ... was already in added state``.
        """
        uid = pod.uid
        with self._lock:
            current = self._pod_states.get(uid)
            if current is not None and uid in self._assumed:
                # Replace the assumed copy by the informer's, which has the current status.
                try:
                    self._remove_pod(current)
                    self._add_pod(pod, assumed=False)
                except CacheError as err:
                    _log.error("Error occurred while updating pod: %s", err)
                if current.spec.node_name != pod.spec.node_name:
                    _log.info(
                        "Pod was added to a different node than it was assumed: pod=%s "
                        "assumedNode=%s currentNode=%s",
                        pod.key,
                        current.spec.node_name,
                        pod.spec.node_name,
                    )
            elif current is None:
                self._add_pod(pod, assumed=False)
            else:
                raise CacheError(f"pod {_pod_ref(pod)} was already in added state")

    def update_pod(self, old: Pod, new: Pod) -> None:
        """Replace an added pod's object (labels, status, in-place resized requests...).

        Raises:
            CacheError: the pod is not in the cache, is still assumed, or moved to another
                node (upstream exits the process there: its cache is corrupted).
        """
        with self._lock:
            current = self._pod_states.get(old.uid)
            if current is None:
                raise CacheError(
                    f"pod {_pod_ref(old)} is not added to scheduler cache, so cannot be updated"
                )
            # An assumed pod gets an Add before any Update, which confirms it.
            if old.uid in self._assumed:
                raise CacheError(f"assumed pod {_pod_ref(old)} should not be updated")
            if current.spec.node_name != new.spec.node_name:
                raise CacheError(
                    "Pod updated on a different node than previously added to. Scheduler cache "
                    "is corrupted and can badly affect scheduling decisions"
                )
            self._remove_pod(current)
            self._add_pod(new, assumed=False)

    def remove_pod(self, pod: Pod) -> None:
        """The pod was deleted (or finished): subtract it from its node.

        Raises:
            CacheError: the pod is not in the cache, or the cache has it on another node.
        """
        with self._lock:
            current = self._pod_states.get(pod.uid)
            if current is None:
                raise CacheError(
                    f"pod {_pod_ref(pod)} is not found in scheduler cache, so cannot be "
                    "removed from it"
                )
            if current.spec.node_name != pod.spec.node_name:
                _log.error(
                    "Pod was added to a different node than it was assumed: pod=%s "
                    "assumedNode=%s currentNode=%s",
                    pod.key,
                    pod.spec.node_name,
                    current.spec.node_name,
                )
                # An empty nodeName happens when a delete was missed and the informer handed
                # over the last state it knew; anything else means a corrupted cache.
                if pod.spec.node_name:
                    raise CacheError(
                        "Scheduler cache is corrupted and can badly affect scheduling decisions"
                    )
            self._remove_pod(current)

    def is_assumed_pod(self, pod: Pod) -> bool:
        """Whether ``pod`` is assumed (placed by the scheduler, binding not yet confirmed)."""
        with self._lock:
            return pod.uid in self._assumed

    def get_pod(self, uid: str) -> Pod | None:
        """The cached pod with this uid, possibly on a node already deleted."""
        with self._lock:
            return self._pod_states.get(uid)

    # -- snapshots -----------------------------------------------------------------------------

    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Bring ``snapshot`` up to date with the cache, copying only what changed.

        NodeInfos whose generation is newer than the snapshot's are cloned into the
        snapshot's existing objects (so the node list needs no rebuild); the node list is
        rebuilt in node-tree order only when nodes appear, disappear or change zone, and the
        affinity side lists only when a node starts or stops holding such pods. Ghost nodes
        are left out.

        Raises:
            CacheError: the snapshot came out inconsistent with the node tree; it is rebuilt
                from scratch before raising, so the next cycle can go on.
        """
        with self._lock:
            self._refresh_images()
            generation = snapshot.generation
            by_name = snapshot._by_name
            pvc_counts = snapshot._pvc_counts
            update_all = snapshot._tree_version != self._tree.version
            flipped: list[NodeInfo] = []  # nodes entering or leaving an affinity side list
            for info in reversed(self._nodes.values()):
                if info.generation <= generation:
                    break  # everything further was in the previous snapshot
                node = info.node
                if node is None:
                    continue
                name = node.metadata.name
                clone = info.clone()
                existing = by_name.get(name)
                if existing is None:
                    update_all = True
                    by_name[name] = clone
                    continue
                if snapshot._owned is not None and name not in snapshot._owned:
                    existing = snapshot._unshare(name, existing)  # maybe shared: copy it first
                if (not existing.pods_with_affinity) != (not clone.pods_with_affinity) or (
                    not existing.pods_with_required_anti_affinity
                ) != (not clone.pods_with_required_anti_affinity):
                    flipped.append(existing)
                if existing.pvc_ref_counts != clone.pvc_ref_counts:
                    _apply_pvc_delta(pvc_counts, existing.pvc_ref_counts, clone.pvc_ref_counts)
                # Keep the object: the node list and side lists point at it.
                for slot in _NODE_INFO_SLOTS:
                    setattr(existing, slot, getattr(clone, slot))
                snapshot.node_changed(name)
            if self._nodes:
                snapshot.generation = next(reversed(self._nodes.values())).generation
                self._snapshot_generation = max(self._snapshot_generation, snapshot.generation)

            # Deleted nodes leave the tree but may stay in the cache as ghosts.
            if len(by_name) > self._tree.num_nodes:
                for name in list(by_name):
                    cached = self._nodes.get(name)
                    if cached is None or cached.node is None:
                        del by_name[name]
                update_all = True

            if update_all:
                self._rebuild_lists(snapshot)
            elif flipped:
                snapshot._update_affinity_lists(flipped)

            if len(snapshot._node_list) != self._tree.num_nodes:
                message = (
                    "snapshot state is not consistent, length of NodeInfoList="
                    f"{len(snapshot._node_list)} not equal to length of nodes in tree="
                    f"{self._tree.num_nodes} , length of NodeInfoMap={len(by_name)}, length of "
                    f"nodes in cache={len(self._nodes)}, trying to recover"
                )
                _log.error(message)
                self._rebuild_lists(snapshot)
                raise CacheError(message)

    def _rebuild_lists(self, snapshot: Snapshot) -> None:
        by_name = snapshot._by_name
        node_list: list[NodeInfo] = []
        for name in self._tree.list():
            info = by_name.get(name)
            if info is None:
                _log.error(
                    "Node exists in nodeTree but not in NodeInfoMap, this should not happen: "
                    "node=%s",
                    name,
                )
                continue
            node_list.append(info)
        snapshot._node_list = node_list
        snapshot.refresh_side_lists()
        snapshot._tree_version = self._tree.version

    # -- introspection -------------------------------------------------------------------------

    def node_count(self) -> int:
        """Nodes in the cache, ghosts included."""
        with self._lock:
            return len(self._nodes)

    def pod_count(self) -> int:
        """Pods in the cache, those on ghost nodes included."""
        with self._lock:
            return sum(len(info.pods) for info in self._nodes.values())

    def get_node_info(self, name: str) -> NodeInfo | None:
        """A copy of one node's NodeInfo (ghosts included), or ``None`` (upstream ``GetNode``)."""
        with self._lock:
            self._refresh_images()
            info = self._nodes.get(name)
            return info.clone() if info is not None else None

    def dump(self) -> CacheDump:
        """A copy of every NodeInfo and the assumed pods, for debugging (upstream ``Dump``)."""
        with self._lock:
            self._refresh_images()
            return CacheDump(
                nodes={name: info.clone() for name, info in self._nodes.items()},
                assumed_pods=set(self._assumed),
            )

    def _recency(self) -> list[str]:
        """Node names from the most to the least recently updated (upstream's list order)."""
        with self._lock:
            return list(reversed(self._nodes))

    def copy_state(self, other: Cache) -> None:
        """Make this (new, empty) cache hold what ``other`` holds: a fork's starting point.

        Copy-on-write: both caches keep the same NodeInfo objects, and each copies a node's
        NodeInfo the first time it changes it, so the copy costs a few dictionary copies and
        neither cache ever sees the other's later changes.
        """
        with other._lock, self._lock:
            self._nodes = other._nodes.copy()
            self._owned = set()
            other._owned = set()
            self._tree = other._tree.copy()
            self._pod_states = dict(other._pod_states)
            self._assumed = set(other._assumed)
            self._images = {key: state.copy() for key, state in other._images.items()}
            self._node_images = dict(other._node_images)  # values are replaced, never changed
            self._dirty_images = set(other._dirty_images)
            self._stale_image_nodes = set(other._stale_image_nodes)
            self._snapshot_generation = other._snapshot_generation

    # -- internals (lock held) -----------------------------------------------------------------

    def _writable(self, name: str) -> NodeInfo | None:
        """The NodeInfo of ``name`` to change in place: this cache's own (a private copy of
        one it shares with another cache, see :meth:`copy_state`), or ``None``."""
        info = self._nodes.get(name)
        owned = self._owned
        if info is not None and owned is not None and name not in owned:
            owned.add(name)
            info = self._nodes[name] = info.clone()
        return info

    def _validate_assumed(self, pod: Pod, current: Pod) -> None:
        if current.spec.node_name != pod.spec.node_name:
            raise CacheError(
                f"pod {_pod_ref(pod)} was assumed on {pod.spec.node_name} but assigned to "
                f"{current.spec.node_name}"
            )
        if pod.uid not in self._assumed:
            raise CacheError(
                f"pod {_pod_ref(pod)} is not assumed, so it cannot be removed or forgotten"
            )

    def _add_pod(self, pod: Pod, *, assumed: bool) -> None:
        name = pod.spec.node_name
        info = self._writable(name)
        if info is None:
            # A pod may arrive before its node; the NodeInfo waits without a Node.
            info = self._nodes[name] = NodeInfo()
        info.add_pod(PodInfo(pod))
        self._nodes.move_to_end(name)
        self._pod_states[pod.uid] = pod
        if assumed:
            self._assumed.add(pod.uid)

    def _remove_pod(self, pod: Pod) -> None:
        name = pod.spec.node_name
        info = self._writable(name)
        if info is None:
            _log.error("Node not found when trying to remove pod: node=%s pod=%s", name, pod.key)
        else:
            try:
                info.remove_pod(pod)
            except KeyError as err:
                raise CacheError(str(err.args[0])) from None
            if not info.pods and info.node is None:
                del self._nodes[name]
            else:
                self._nodes.move_to_end(name)
        del self._pod_states[pod.uid]
        self._assumed.discard(pod.uid)

    def _set_node_images(self, name: str, node: Node) -> None:
        # Upstream removeNodeImageStates(old) + addNodeImageStates(new); names are normalised
        # the way ImageLocality looks them up.
        new: dict[str, int] = {}
        for image in node.status.images:
            for image_name in image.names:
                new.setdefault(normalized_image_name(image_name), image.size_bytes)
        if self._node_images.get(name) == new:
            return
        self._drop_node_images(name)
        for key, size in new.items():
            state = self._images.get(key)
            if state is None:
                # The first node reporting an image sets its size, as upstream.
                state = self._images[key] = _ImageState(size)
            state.nodes.add(name)
        self._node_images[name] = new
        self._dirty_images.update(new)
        self._stale_image_nodes.add(name)

    def _drop_node_images(self, name: str) -> None:
        old = self._node_images.pop(name, None)
        if not old:
            return
        for key in old:
            state = self._images[key]
            state.nodes.discard(name)
            if not state.nodes:
                del self._images[key]
        self._dirty_images.update(old)

    def _refresh_images(self) -> None:
        """Give every node whose image counts moved fresh summaries.

        Upstream leaves the counts of untouched nodes stale until they change for another
        reason; here every node holding an image whose node count changed is refreshed, so a
        snapshot always equals one built from scratch. Batched per snapshot, not per event. A
        node gets a new generation (and moves to the head) only if a snapshot may already
        hold its old counts.
        """
        if not self._dirty_images and not self._stale_image_nodes:
            return
        affected = set(self._stale_image_nodes)
        for key in self._dirty_images:
            state = self._images.get(key)
            if state is None:
                continue
            if state.summary.num_nodes != len(state.nodes) or state.summary.size != state.size:
                state.summary = ImageStateSummary(size=state.size, num_nodes=len(state.nodes))
                affected.update(state.nodes)
        self._dirty_images.clear()
        self._stale_image_nodes.clear()
        images = self._images
        infos = [
            info
            for name in affected
            if (info := self._nodes.get(name)) is not None and info.node is not None
        ]
        # Oldest first, so the nodes keep their relative recency when moved to the head.
        infos.sort(key=lambda info: info.generation)
        for info in infos:
            name = info.name
            states = {key: images[key].summary for key in self._node_images.get(name, {})}
            if states == info.image_states:
                continue
            info = self._writable(name) or info
            info.image_states = states
            if info.generation <= self._snapshot_generation:
                info.generation = next_generation()
                self._nodes.move_to_end(name)


def _apply_pvc_delta(counts: dict[str, int], old: dict[str, int], new: dict[str, int]) -> None:
    # Upstream keeps pvcRefCountsDelta in the cache; diffing the two NodeInfos is equivalent.
    for key in old.keys() | new.keys():
        delta = new.get(key, 0) - old.get(key, 0)
        if delta:
            total = counts.get(key, 0) + delta
            if total > 0:
                counts[key] = total
            else:
                counts.pop(key, None)
