"""Pod signatures for opportunistic batching (upstream ``SignPlugin``, KEP-5598).

Upstream: ``k8s.io/kube-scheduler/framework`` ``SignPlugin``, ``SignFragment`` and the signer
names of ``signers.go``. Two pods with the same signature get the same feasibility and scores
on the same nodes in the same state, which lets the scheduler reuse a cycle's results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

import attrs

from schedframe.framework._extension_points import Plugin

if TYPE_CHECKING:
    from schedframe.framework._status import Status
    from schedframe.objects import Pod

__all__ = [
    "DYNAMIC_RESOURCES_SIGNER_NAME",
    "FEATURES_SIGNER_NAME",
    "HOST_PORTS_SIGNER_NAME",
    "IMAGE_NAMES_SIGNER_NAME",
    "INTER_POD_AFFINITY_SIGNER_NAME",
    "LABELS_SIGNER_NAME",
    "NODE_AFFINITY_SIGNER_NAME",
    "NODE_NAME_SIGNER_NAME",
    "NODE_SELECTOR_SIGNER_NAME",
    "POD_TOPOLOGY_SPREAD_SIGNER_NAME",
    "RESOURCES_SIGNER_NAME",
    "SCHEDULER_NAME_SIGNER_NAME",
    "TOLERATIONS_SIGNER_NAME",
    "VOLUMES_SIGNER_NAME",
    "SignFragment",
    "SignPlugin",
]

# Upstream's signer names (``signers.go``): the key says which part of the pod the value is.
DYNAMIC_RESOURCES_SIGNER_NAME: Final = "v1.Pod.Spec.DynamicResources"
IMAGE_NAMES_SIGNER_NAME: Final = "v1.Pod.Spec.CanonicalImageNames()"
LABELS_SIGNER_NAME: Final = "v1.Pod.Labels"
NODE_NAME_SIGNER_NAME: Final = "v1.Pod.Spec.NodeName"
NODE_AFFINITY_SIGNER_NAME: Final = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR_SIGNER_NAME: Final = "v1.Pod.Spec.Affinity.NodeSelector"
INTER_POD_AFFINITY_SIGNER_NAME: Final = "v1.Pod.Spec.Affinity.InterPodAffinity"
HOST_PORTS_SIGNER_NAME: Final = "v1.Pod.Spec.HostPorts()"
RESOURCES_SIGNER_NAME: Final = "v1.Pod.Spec.ContainerResourcesAndOverheads()"
SCHEDULER_NAME_SIGNER_NAME: Final = "v1.Pod.Spec.SchedulerName"
TOLERATIONS_SIGNER_NAME: Final = "v1.Pod.Spec.Tolerations"
POD_TOPOLOGY_SPREAD_SIGNER_NAME: Final = "v1.Pod.Spec.PodTopologySpread"
VOLUMES_SIGNER_NAME: Final = "v1.Pod.Spec.Volumes.NonSyntheticSources()"
FEATURES_SIGNER_NAME: Final = "v1.Pod.Spec.RequiredFeatures()"


@attrs.frozen(kw_only=True)
class SignFragment:
    """One part of a pod's signature (upstream ``SignFragment``).

    Attributes:
        key: which part of the pod the value stands for, one of the ``*_SIGNER_NAME``
            constants or, for a part no constant names, ``v1.Pod.<path>`` (with ``()`` after a
            derived value). Two plugins giving the same key must give the same value; the
            framework keeps one.
        value: a JSON-serialisable value; lists whose order does not matter must be sorted,
            since signatures are compared across pods.
    """

    key: str
    value: object


@runtime_checkable
class SignPlugin(Plugin, Protocol):
    """A PreFilter, Filter, PreScore or Score plugin that can sign pods.

    When every such plugin of a profile signs (and the OpportunisticBatching gate is on), the
    framework builds one signature per pod from their fragments
    (:meth:`~schedframe.runtime.Framework.sign_pod`); a profile with a plugin that does not
    sign gives no signatures at all, as upstream.

    Upstream: ``framework.SignPlugin``.

    .. versionadded:: 0.2
    """

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status | None]:
        """The fragments this plugin's verdicts and scores depend on.

        ``None`` (success) signs with the fragments; ``Unschedulable`` refuses to sign this pod
        (it is then scheduled without the batching optimisation); ``Error`` does the same and
        is logged.

        .. versionadded:: 0.2
        """
        ...
