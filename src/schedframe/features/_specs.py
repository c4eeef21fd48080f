"""Upstream's versioned feature specs for the gates kube-scheduler consults.

Transcribed from kubernetes ``pkg/features/kube_features.go`` (the scheduler's part of
``defaultVersionedKubernetesFeatureGates``), keeping every entry up to v1.36: for each gate, the
release where its default or maturity changed. Gates that first appear after v1.36 are left
out, as an emulated version never reaches them.
"""

from __future__ import annotations

from typing import Final

import attrs

__all__ = ["ALPHA", "BETA", "GA", "PRE_ALPHA", "SPECS", "FeatureSpec"]

PRE_ALPHA: Final = "PreAlpha"
ALPHA: Final = "Alpha"
BETA: Final = "Beta"
GA: Final = "GA"


@attrs.frozen(kw_only=True)
class FeatureSpec:
    """A gate's state from one release on (upstream ``featuregate.FeatureSpec``).

    Attributes:
        version: the first release (``"1.34"``) this state applies to.
        default: whether the gate is on unless set.
        pre_release: ``"Alpha"``, ``"Beta"`` or ``"GA"`` (``"PreAlpha"`` before its first spec).
        lock_to_default: setting it to anything but ``default`` is an error.
    """

    version: str
    default: bool
    pre_release: str
    lock_to_default: bool = False


def _s(version: str, default: bool, pre_release: str, lock: bool = False) -> FeatureSpec:
    return FeatureSpec(
        version=version, default=default, pre_release=pre_release, lock_to_default=lock
    )


#: Gate name -> its specs, oldest first.
SPECS: Final[dict[str, tuple[FeatureSpec, ...]]] = {
    "DRAAdminAccess": (
        _s("1.32", False, ALPHA),
        _s("1.34", True, BETA),
        _s("1.36", True, GA, True),
    ),
    "DRAConsumableCapacity": (_s("1.34", False, ALPHA), _s("1.36", True, BETA)),
    "DRADeviceBindingConditions": (_s("1.34", False, ALPHA), _s("1.36", True, BETA)),
    "DRADeviceTaintRules": (_s("1.35", False, ALPHA), _s("1.36", False, BETA)),
    "DRADeviceTaints": (_s("1.33", False, ALPHA), _s("1.36", True, BETA)),
    "DRAExtendedResource": (_s("1.34", False, ALPHA), _s("1.36", True, BETA)),
    "DRAListTypeAttributes": (_s("1.36", False, ALPHA),),
    "DRANodeAllocatableResources": (_s("1.36", False, ALPHA),),
    "DRAPartitionableDevices": (_s("1.33", False, ALPHA), _s("1.36", True, BETA)),
    "DRAPrioritizedList": (
        _s("1.33", False, ALPHA),
        _s("1.34", True, BETA),
        _s("1.36", True, GA),
    ),
    "DRAResourceClaimDeviceStatus": (_s("1.32", False, ALPHA), _s("1.33", True, BETA)),
    "DRASchedulerFilterTimeout": (_s("1.34", True, BETA),),
    "DRAWorkloadResourceClaims": (_s("1.36", False, ALPHA),),
    "DynamicResourceAllocation": (
        _s("1.26", False, ALPHA),
        _s("1.32", False, BETA),
        _s("1.34", True, GA),
        _s("1.35", True, GA, True),
    ),
    "GenericWorkload": (_s("1.35", False, ALPHA),),
    "InPlacePodLevelResourcesVerticalScaling": (_s("1.35", False, ALPHA), _s("1.36", True, BETA)),
    "InPlacePodVerticalScaling": (
        _s("1.27", False, ALPHA),
        _s("1.33", True, BETA),
        _s("1.35", True, GA, True),
    ),
    "MatchLabelKeysInPodTopologySpread": (_s("1.25", False, ALPHA), _s("1.27", True, BETA)),
    "NodeDeclaredFeatures": (_s("1.35", False, ALPHA), _s("1.36", True, BETA)),
    "NodeInclusionPolicyInPodTopologySpread": (
        _s("1.25", False, ALPHA),
        _s("1.26", True, BETA),
        _s("1.33", True, GA, True),
    ),
    "NominatedNodeNameForExpectation": (_s("1.34", False, ALPHA), _s("1.35", True, BETA)),
    "OpportunisticBatching": (_s("1.35", True, BETA),),
    "PodLevelResources": (_s("1.32", False, ALPHA), _s("1.34", True, BETA)),
    "SchedulerAsyncAPICalls": (_s("1.34", False, BETA),),
    "SchedulerAsyncPreemption": (_s("1.32", False, ALPHA), _s("1.33", True, BETA)),
    "SchedulerPopFromBackoffQ": (_s("1.33", True, BETA),),
    "SchedulerQueueingHints": (
        _s("1.28", False, BETA),
        _s("1.32", True, BETA),
        _s("1.34", True, GA, True),
    ),
    "SidecarContainers": (
        _s("1.28", False, ALPHA),
        _s("1.29", True, BETA),
        _s("1.33", True, GA, True),
    ),
    "StorageCapacityScoring": (_s("1.33", False, ALPHA),),
    "TaintTolerationComparisonOperators": (_s("1.35", False, ALPHA),),
    "TopologyAwareWorkloadScheduling": (_s("1.36", False, ALPHA),),
    "VolumeAttributesClass": (
        _s("1.29", False, ALPHA),
        _s("1.31", False, BETA),
        _s("1.34", True, GA),
        _s("1.36", True, GA, True),
    ),
    "VolumeLimitScaling": (_s("1.35", False, ALPHA),),
}
