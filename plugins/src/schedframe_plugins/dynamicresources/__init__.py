"""DynamicResources: Dynamic Resource Allocation (DRA), as far as schedframe models it.

Upstream ``pkg/scheduler/framework/plugins/dynamicresources``. schedframe does not model DRA
(ResourceClaims, ResourceSlices, DeviceClasses). This plugin is exactly upstream's for the pods
DRA leaves alone, those without ``spec.resourceClaims`` (and, with no DeviceClasses in the
cluster, without DRA-backed extended resources): PreFilter and PreScore skip, Filter and
Reserve pass, PostFilter answers Unschedulable ``no new claims to deallocate`` (the text
kube-scheduler adds to every FailedScheduling message since v1.34). A pod *with* resource
claims is rejected loudly in PreFilter, UnschedulableAndUnresolvable, naming what is missing,
rather than scheduled as if its claims did not exist.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import ClassVar, Final

import attrs

from schedframe import framework as fw
from schedframe.objects import Pod
from schedframe_plugins import names

__all__ = ["NOT_MODELLED", "DynamicResources", "DynamicResourcesArgs"]

NAME: Final = names.DYNAMIC_RESOURCES

#: Upstream's PostFilter reason for a pod with no claims (``dynamicresources.go``).
NO_NEW_CLAIMS: Final = "no new claims to deallocate"
#: PreFilter's reason for a pod with resource claims: schedframe cannot allocate devices.
NOT_MODELLED: Final = (
    "pod has resourceClaims, but schedframe does not model dynamic resource allocation "
    "(ResourceClaims, ResourceSlices, DeviceClasses)"
)

_TEN_SECONDS: Final = datetime.timedelta(seconds=10)


def _non_negative(
    _: object, attribute: attrs.Attribute[datetime.timedelta], value: datetime.timedelta
) -> None:
    if value < datetime.timedelta(0):
        raise ValueError("must be zero or greater")


@attrs.frozen(kw_only=True)
class DynamicResourcesArgs:
    """Upstream ``DynamicResourcesArgs`` (v1), defaulted as in v1.36 (both timeouts 10s).

    Attributes:
        filter_timeout: per-node Filter time budget (``filterTimeout``; 0 disables it).
        binding_timeout: how long PreBind waits for device binding conditions
            (``bindingTimeout``).
    """

    filter_timeout: datetime.timedelta = attrs.field(default=_TEN_SECONDS, validator=_non_negative)
    binding_timeout: datetime.timedelta = attrs.field(default=_TEN_SECONDS, validator=_non_negative)


class DynamicResources(
    fw.PreFilterPlugin,
    fw.FilterPlugin,
    fw.PostFilterPlugin,
    fw.PreScorePlugin,
    fw.ScorePlugin,
    fw.ReservePlugin,
    fw.EnqueueExtensions,
    fw.SignPlugin,
):
    """Skips every pod without resource claims; refuses, loudly, every pod with some."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type] = DynamicResourcesArgs

    def __init__(self, args: DynamicResourcesArgs, handle: fw.Handle) -> None:
        self._args = args
        self._handle = handle
        # Upstream's factory: with the gate off the plugin exists but does nothing.
        self._enabled = handle.features.enabled("DynamicResourceAllocation")

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        """Skip without claims; UnschedulableAndUnresolvable (:data:`NOT_MODELLED`) with."""
        if not self._enabled or not pod.spec.resource_claims:
            return fw.Status(fw.Code.SKIP)
        return fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NOT_MODELLED)

    def pre_filter_extensions(self) -> fw.PreFilterExtensions | None:
        """None, as upstream."""
        return None

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        """Pass: only pods PreFilter skipped ever get here."""
        return None

    def post_filter(
        self, state: fw.CycleState, pod: Pod, filtered_node_status_map: fw.NodeToStatus
    ) -> tuple[fw.PostFilterResult | None, fw.Status | None]:
        """Unschedulable ``no new claims to deallocate`` (``plugin disabled`` with the gate off)."""
        if not self._enabled:
            return None, fw.Status(fw.Code.UNSCHEDULABLE, "plugin disabled")
        return None, fw.Status(fw.Code.UNSCHEDULABLE, NO_NEW_CLAIMS)

    def pre_score(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.Status | None:
        """Skip: a pod without claims has nothing to score."""
        return fw.Status(fw.Code.SKIP)

    def score(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> int:
        """0 (never called: PreScore skips)."""
        return 0

    def reserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> fw.Status | None:
        """Nothing to reserve."""
        return None

    def unreserve(self, state: fw.CycleState, pod: Pod, node_name: str) -> None:
        """Nothing to release."""

    def sign_pod(self, pod: Pod) -> tuple[Sequence[fw.SignFragment], fw.Status | None]:
        """No fragment; a pod with claims is not signable (upstream ``SignPod``)."""
        if pod.spec.resource_claims:
            return (), fw.Status(
                fw.Code.UNSCHEDULABLE, "pods with dra resource claims are not signable"
            )
        return (), None

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """None: no pod this plugin rejects can become schedulable by a cluster change."""
        return ()
