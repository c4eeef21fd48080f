"""Feature gates and version emulation: which upstream behaviours are on.

kube-scheduler's behaviour depends on Kubernetes feature gates and, since v1.31, on the version
it emulates (``--emulated-version``). :class:`FeatureGates` is that state as one value; the
configuration carries it and every plugin reads it through its Handle::

    from schedframe.features import FeatureGates

    gates = FeatureGates(emulated_version="1.34")
    gates.enabled("DRAExtendedResource")  # False at 1.34

See the *Feature gates* section of the configuration reference for the gates and the
``featureGates``/``emulatedVersion`` fields (a schedframe extension of the config file).
"""

from __future__ import annotations

from schedframe.features._gates import (
    DEFAULT_EMULATED_VERSION,
    SUPPORTED_VERSIONS,
    FeatureGates,
    check_gates,
    parse_feature_gates,
    spec_at,
)
from schedframe.features._specs import ALPHA, BETA, GA, PRE_ALPHA, FeatureSpec

__all__ = [
    "ALPHA",
    "BETA",
    "DEFAULT_EMULATED_VERSION",
    "GA",
    "PRE_ALPHA",
    "SUPPORTED_VERSIONS",
    "FeatureGates",
    "FeatureSpec",
    "check_gates",
    "parse_feature_gates",
    "spec_at",
]
