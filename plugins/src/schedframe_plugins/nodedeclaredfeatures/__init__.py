"""NodeDeclaredFeatures: a pod goes only to nodes that declare the features it needs.

Port of upstream ``pkg/scheduler/framework/plugins/nodedeclaredfeatures`` (gate
NodeDeclaredFeatures: alpha in v1.35, beta and on by default in v1.36) with the scheduling-time
half of ``k8s.io/component-helpers/nodedeclaredfeatures``: the features a pod needs are
inferred from its spec by the release's feature registry, and a node qualifies when its
``status.declaredFeatures`` lists every one of them.

The registry is the emulated release's. v1.35's holds only GuaranteedQoSPodCPUResize, which
infers nothing at scheduling time (only on resize), so every pod is skipped. v1.36's infers two
at scheduling time, and only these are modelled (the others infer only on update):

* ``RestartAllContainersOnContainerExits``: a container or init container has a
  ``restartPolicyRules`` entry with action ``RestartAllContainers``;
* ``UserNamespacesHostNetworkSupport``: ``hostNetwork: true`` with ``hostUsers: false``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar, Final

import attrs

from schedframe import framework as fw
from schedframe.objects import Node, Pod
from schedframe_plugins import names

__all__ = [
    "RESTART_ALL_CONTAINERS",
    "USER_NAMESPACES_HOST_NETWORK",
    "NodeDeclaredFeatures",
    "infer_for_scheduling",
]

NAME: Final = names.NODE_DECLARED_FEATURES

RESTART_ALL_CONTAINERS: Final = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK: Final = "UserNamespacesHostNetworkSupport"


def _needs_restart_all_containers(pod: Pod) -> bool:
    return any(
        action == "RestartAllContainers"
        for container in (*pod.spec.containers, *pod.spec.init_containers)
        for action in container.restart_policy_rules
    )


def _needs_user_namespaces_host_network(pod: Pod) -> bool:
    return pod.spec.host_network and pod.spec.host_users is False


# Release -> (feature name, scheduling-time inference) in the registry's order.
_REGISTRY: Final[dict[str, tuple[tuple[str, Callable[[Pod], bool]], ...]]] = {
    "1.35": (),
    "1.36": (
        (RESTART_ALL_CONTAINERS, _needs_restart_all_containers),
        (USER_NAMESPACES_HOST_NETWORK, _needs_user_namespaces_host_network),
    ),
}


def infer_for_scheduling(pod: Pod, version: str) -> frozenset[str]:
    """The declared features ``pod`` needs from a node, by release ``version``'s registry
    (upstream ``Framework.InferForPodScheduling``); empty for a release without the plugin."""
    return frozenset(name for name, infer in _REGISTRY.get(version, ()) if infer(pod))


@attrs.frozen
class _PreFilterState:
    requirements: tuple[str, ...]


_PRE_FILTER: Final = fw.StateKey[_PreFilterState]("PreFilterNodeDeclaredFeatures")


class NodeDeclaredFeatures(
    fw.PreFilterPlugin, fw.FilterPlugin, fw.EnqueueExtensions, fw.SignPlugin
):
    """Filters out nodes that do not declare every feature the pod needs."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        features = handle.features
        # Upstream's factory: with the gate off the plugin is built but does nothing.
        self._enabled = features.enabled("NodeDeclaredFeatures")
        self._version = features.emulated_version

    def _requirements(self, pod: Pod) -> tuple[str, ...]:
        return tuple(sorted(infer_for_scheduling(pod, self._version)))

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Skip when disabled or when the pod needs no declared feature."""
        if not self._enabled:
            return fw.Status(fw.Code.SKIP)
        requirements = self._requirements(pod)
        if not requirements:
            return fw.Status(fw.Code.SKIP)
        state[_PRE_FILTER] = _PreFilterState(requirements)
        return None

    def pre_filter_extensions(self) -> fw.PreFilterExtensions | None:
        """None, as upstream."""
        return None

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """UnschedulableAndUnresolvable, listing what the node does not declare."""
        if not self._enabled:
            return None
        requirements = state[_PRE_FILTER].requirements
        node = node_info.node
        declared = set(node.status.declared_features) if node is not None else set()
        missing = [name for name in requirements if name not in declared]
        if missing:
            return fw.Status(
                fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                "node declared features check failed - unsatisfied requirements: "
                + ", ".join(missing),
            )
        return None

    def sign_pod(self, pod: Pod) -> tuple[Sequence[fw.SignFragment], fw.Status | None]:
        """The features the pod needs, sorted (upstream ``SignPod``)."""
        return (
            (fw.SignFragment(key=fw.FEATURES_SIGNER_NAME, value=list(self._requirements(pod))),),
            None,
        )

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """A node added or its declared features changed; the pod itself updated."""
        if not self._enabled:
            return ()
        return (
            fw.ClusterEventWithHint(
                fw.ClusterEvent(
                    fw.EventResource.NODE,
                    fw.ActionType.ADD | fw.ActionType.UPDATE_NODE_DECLARED_FEATURE,
                ),
                self.is_schedulable_after_node_change,
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.UPDATE),
                self.is_schedulable_after_pod_update,
            ),
        )

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Skip when the node's declared features did not change."""
        if not isinstance(new_obj, Node) or (old_obj is not None and not isinstance(old_obj, Node)):
            raise TypeError("expected Node objects")
        if old_obj is not None and old_obj.status.declared_features == (
            new_obj.status.declared_features
        ):
            return fw.QueueingHint.QUEUE_SKIP
        return fw.QueueingHint.QUEUE

    def is_schedulable_after_pod_update(
        self, pod: Pod, old_obj: object, new_obj: object
    ) -> fw.QueueingHint:
        """Queue only an update of the pod itself that changes what it needs."""
        if not isinstance(new_obj, Pod) or not isinstance(old_obj, Pod):
            raise TypeError("expected Pod objects")
        if new_obj.uid != pod.uid:
            return fw.QueueingHint.QUEUE_SKIP
        if self._requirements(old_obj) == self._requirements(new_obj):
            return fw.QueueingHint.QUEUE_SKIP
        return fw.QueueingHint.QUEUE
