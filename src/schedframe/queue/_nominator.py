"""Pods nominated to nodes, waiting for preemption victims to go (upstream ``nominator.go``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from schedframe.framework import NominatingInfo, NominatingMode, PodInfo
from schedframe.objects import Pod

__all__ = ["Nominator"]


class Nominator:
    """``node -> [PodInfo]`` and ``uid -> node``. Not locked: the queue's lock guards it.

    ``on_node_change(node_name)``, when given, is called after the pods nominated to a node
    change (one added or removed), so that a reader can keep what it derived from the other
    nodes' pods.
    """

    def __init__(self, on_node_change: Callable[[str], object] | None = None) -> None:
        self._on_node_change = on_node_change
        self._by_node: dict[str, list[PodInfo]] = {}
        self._node_of: dict[str, str] = {}
        # node_names(), kept until a node gains its first or loses its last nominated pod.
        self._names: frozenset[str] | None = frozenset()

    def copy_state(self, other: Nominator) -> None:
        """Make this (empty) nominator hold ``other``'s nominations, in the same order."""
        self._by_node = {node: list(pods) for node, pods in other._by_node.items()}
        self._node_of = dict(other._node_of)
        self._names = other._names

    def add(self, pod_info: PodInfo, nominating_info: NominatingInfo | None) -> None:
        """Nominate the pod (upstream ``addNominatedPodUnlocked``).

        Any earlier nomination is dropped first. ``Override`` nominates to the given node;
        ``Noop`` (or no info) uses the pod's ``status.nominatedNodeName``. An empty node
        name only clears.
        """
        pod = pod_info.pod
        self.delete(pod)
        if nominating_info is not None and nominating_info.mode is NominatingMode.OVERRIDE:
            node_name = nominating_info.nominated_node_name
        else:
            node_name = pod.status.nominated_node_name
        if not node_name:
            return
        self._node_of[pod.uid] = node_name
        pods = self._by_node.get(node_name)
        if pods is None:
            pods = self._by_node[node_name] = []
            self._names = None
        if any(p.pod.uid == pod.uid for p in pods):
            return
        pods.append(pod_info)
        if self._on_node_change is not None:
            self._on_node_change(node_name)

    def update(self, old_pod: Pod, new_pod_info: PodInfo) -> None:
        """Replace the stored pod with its new version (upstream ``UpdateNominatedPod``).

        When neither version carries a nominated node name but the scheduler nominated the
        pod in memory (an update raced with preemption), that nomination is kept.
        """
        nominating_info: NominatingInfo | None = None
        if not old_pod.status.nominated_node_name and not (
            new_pod_info.pod.status.nominated_node_name
        ):
            node_name = self._node_of.get(old_pod.uid)
            if node_name is not None:
                nominating_info = NominatingInfo(node_name, NominatingMode.OVERRIDE)
        self.delete(old_pod)
        self.add(new_pod_info, nominating_info)

    def delete(self, pod: Pod) -> None:
        """Drop the pod's nomination, if any."""
        node_name = self._node_of.pop(pod.uid, None)
        if node_name is None:
            return
        pods = self._by_node.get(node_name, [])
        for i, info in enumerate(pods):
            if info.pod.uid == pod.uid:
                del pods[i]
                if self._on_node_change is not None:
                    self._on_node_change(node_name)
                break
        if not pods and self._by_node.pop(node_name, None) is not None:
            self._names = None

    def node_names(self) -> frozenset[str]:
        """Nodes with at least one nominated pod."""
        names = self._names
        if names is None:
            names = self._names = frozenset(self._by_node)  # only nodes with pods are keys
        return names

    def pods_on(self, node_name: str) -> Sequence[PodInfo]:
        """The pods nominated to ``node_name``, in nomination order: the nominator's own list
        (or an empty tuple), to be read before the nominator changes again."""
        return self._by_node.get(node_name, ())

    def node_of(self, uid: str) -> str | None:
        """The node the pod ``uid`` is nominated to."""
        return self._node_of.get(uid)

    def snapshot(self) -> dict[str, list[str]]:
        """``node -> [pod uid]`` for tests and debugging."""
        return {node: [p.pod.uid for p in pods] for node, pods in self._by_node.items()}
