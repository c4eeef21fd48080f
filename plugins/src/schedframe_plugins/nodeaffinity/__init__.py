"""NodeAffinity: a pod's node selector and node affinity (upstream ``nodeaffinity``)."""

from __future__ import annotations

from schedframe_plugins.nodeaffinity._helpers import (
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
)
from schedframe_plugins.nodeaffinity.node_affinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NodeAffinity,
    NodeAffinityArgs,
    node_affinity_from_dict,
)

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NodeAffinity",
    "NodeAffinityArgs",
    "PreferredSchedulingTerms",
    "RequiredNodeAffinity",
    "node_affinity_from_dict",
]
