"""Feature gates at an emulated Kubernetes version (upstream component-base ``featuregate``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, final

import attrs

from schedframe.errors import INVALID, UNSUPPORTED, ConfigError, FieldIssue, join_path
from schedframe.features._specs import PRE_ALPHA, SPECS, FeatureSpec

__all__ = [
    "DEFAULT_EMULATED_VERSION",
    "SUPPORTED_VERSIONS",
    "FeatureGates",
    "parse_feature_gates",
]

#: The Kubernetes versions schedframe can emulate, oldest first.
SUPPORTED_VERSIONS: Final = ("1.34", "1.35", "1.36")
#: The version emulated unless told otherwise (upstream: the binary's own version).
DEFAULT_EMULATED_VERSION: Final = "1.36"

# Gate settings schedframe cannot honour (the behaviour they turn on is not modelled, or the
# one they turn off is always on here): setting one is an error, not a silent no-op.
_NOT_MODELLED: Final[dict[str, tuple[bool, str]]] = {
    "TopologyAwareWorkloadScheduling": (True, "workload placement plugins"),
    "StorageCapacityScoring": (True, "VolumeBinding's storage capacity scoring"),
    "TaintTolerationComparisonOperators": (True, "the Lt and Gt toleration operators"),
    "MatchLabelKeysInPodTopologySpread": (
        False,
        "PodTopologySpread without matchLabelKeys (it always honours them)",
    ),
    "PodLevelResources": (
        False,
        "pods read without their pod-level resources (spec.resources is always counted)",
    ),
}


def _key(version: str) -> tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


def spec_at(name: str, version: str) -> FeatureSpec:
    """The spec of gate ``name`` in effect at ``version`` (PreAlpha before its first spec).

    Raises:
        KeyError: ``name`` is not a known gate.
    """
    current = FeatureSpec(version="0.0", default=False, pre_release=PRE_ALPHA)
    for spec in SPECS[name]:
        if _key(spec.version) <= _key(version):
            current = spec
    return current


def _overrides(
    value: Mapping[str, bool] | Iterable[tuple[str, bool]],
) -> tuple[tuple[str, bool], ...]:
    items = value.items() if isinstance(value, Mapping) else value
    return tuple(sorted(dict(items).items()))


def gate_issues(
    overrides: Iterable[tuple[str, object]], version: str, path: str
) -> list[FieldIssue]:
    """What is wrong with setting ``overrides`` at ``version``; each issue at ``path.<gate>``.

    Mirrors upstream ``featureGate.SetFromMap``: an unknown gate, a non-boolean value, a gate
    locked to its default set otherwise, or a PreAlpha gate turned on, is an error.
    """
    issues: list[FieldIssue] = []
    if version not in SUPPORTED_VERSIONS:
        return [
            FieldIssue(
                path="emulatedVersion" if path == "featureGates" else "--emulated-version",
                kind=UNSUPPORTED,
                value=version,
                detail="supported values: " + ", ".join(f'"{v}"' for v in SUPPORTED_VERSIONS),
            )
        ]
    for name, enabled in overrides:
        where = join_path(path, name)
        if name not in SPECS:
            issues.append(
                FieldIssue(path=where, kind=INVALID, detail=f"unrecognized feature gate: {name}")
            )
            continue
        if not isinstance(enabled, bool):
            issues.append(
                FieldIssue(path=where, kind=INVALID, value=enabled, detail="expected a boolean")
            )
            continue
        spec = spec_at(name, version)
        shown = "true" if enabled else "false"
        if spec.lock_to_default and spec.default != enabled:
            locked = "true" if spec.default else "false"
            issues.append(
                FieldIssue(
                    path=where,
                    kind=INVALID,
                    detail=f"cannot set feature gate {name} to {shown}, "
                    f"feature is locked to {locked}",
                )
            )
        elif name in _NOT_MODELLED and enabled is _NOT_MODELLED[name][0]:
            what = _NOT_MODELLED[name][1]
            issues.append(
                FieldIssue(
                    path=where,
                    kind=INVALID,
                    detail=f"schedframe does not model {what}, "
                    f"so feature gate {name} cannot be set to {shown}",
                )
            )
        elif spec.pre_release == PRE_ALPHA and enabled:
            issues.append(
                FieldIssue(
                    path=where,
                    kind=INVALID,
                    detail=f"cannot set feature gate {name} to {shown}, "
                    f"feature is PreAlpha at emulated version {version}",
                )
            )
    return issues


@final
@attrs.frozen(kw_only=True, cache_hash=True)
class FeatureGates:
    """Which Kubernetes feature gates are on, at an emulated version.

    The value kube-scheduler reads through ``utilfeature.DefaultFeatureGate`` and hands to its
    plugin factories as ``feature.Features``; here it is one immutable value, carried by the
    configuration (:attr:`~schedframe.config.KubeSchedulerConfiguration.feature_gates`), the
    :class:`~schedframe.runtime.Framework` and every plugin's Handle (``handle.features``)::

        gates = FeatureGates(emulated_version="1.35", overrides={"NodeDeclaredFeatures": True})
        gates.enabled("NodeDeclaredFeatures")  # True
        gates.enabled("DRAExtendedResource")   # False: alpha, off by default in 1.35

    Defaults per version are upstream's versioned specs (``pkg/features/kube_features.go``).

    Attributes:
        emulated_version: one of :data:`SUPPORTED_VERSIONS` (``--emulated-version``).
        overrides: gates set explicitly (``--feature-gates`` / ``featureGates``), sorted by name.

    Raises:
        ConfigError: on construction, for an unsupported version, an unknown gate, a gate locked
            to its default set otherwise, or a gate not yet available at that version turned on
            (paths ``emulatedVersion`` and ``featureGates.<Gate>``).
    """

    emulated_version: str = DEFAULT_EMULATED_VERSION
    overrides: tuple[tuple[str, bool], ...] = attrs.field(default=(), converter=_overrides)

    def __attrs_post_init__(self) -> None:
        issues = gate_issues(self.overrides, self.emulated_version, "featureGates")
        if issues:
            raise ConfigError(issues)

    def enabled(self, name: str) -> bool:
        """Whether gate ``name`` is on (upstream ``FeatureGate.Enabled``).

        Raises:
            KeyError: ``name`` is not a gate schedframe knows (upstream panics).
        """
        for gate, value in self.overrides:
            if gate == name:
                return value
        if name not in SPECS:
            raise KeyError(f"unrecognized feature gate: {name}")
        return spec_at(name, self.emulated_version).default

    def at_least(self, version: str) -> bool:
        """Whether the emulated version is ``version`` (``"1.36"``) or newer."""
        return _key(self.emulated_version) >= _key(version)

    def spec(self, name: str) -> FeatureSpec:
        """The upstream spec of gate ``name`` at :attr:`emulated_version`.

        Raises:
            KeyError: unknown gate.
        """
        return spec_at(name, self.emulated_version)

    def known(self) -> tuple[str, ...]:
        """Every gate schedframe knows, sorted."""
        return tuple(sorted(SPECS))

    def as_dict(self) -> dict[str, bool]:
        """Every known gate and whether it is on."""
        return {name: self.enabled(name) for name in self.known()}

    def with_overrides(
        self, overrides: Mapping[str, bool], *, emulated_version: str | None = None
    ) -> FeatureGates:
        """A copy with more gates set (later settings win), optionally at another version."""
        merged = dict(self.overrides)
        merged.update(overrides)
        return FeatureGates(
            emulated_version=emulated_version or self.emulated_version, overrides=merged
        )


def parse_feature_gates(text: str, *, path: str = "--feature-gates") -> dict[str, bool]:
    """Parse a ``--feature-gates`` value (``A=true,B=false``) into a mapping.

    Like upstream's flag, values are ``true``/``false`` in any case and later pairs win. Only
    the syntax is checked here; :class:`FeatureGates` checks the names.

    Raises:
        ConfigError: a pair without ``=`` or a value that is not a boolean, at ``path``.
    """
    out: dict[str, bool] = {}
    issues: list[FieldIssue] = []
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep:
            issues.append(
                FieldIssue(
                    path=path, kind=INVALID, value=item, detail=f"missing bool value for {name}"
                )
            )
            continue
        lowered = value.strip().lower()
        if lowered not in ("true", "false"):
            issues.append(
                FieldIssue(
                    path=path,
                    kind=INVALID,
                    value=item,
                    detail=f"invalid value of {name}={value.strip()}, expected true or false",
                )
            )
            continue
        out[name] = lowered == "true"
    if issues:
        raise ConfigError(issues)
    return out


def check_gates(
    overrides: Mapping[str, object], version: str, *, path: str, source: str | None = None
) -> FeatureGates:
    """Build :class:`FeatureGates`, reporting problems at ``path.<gate>`` in ``source``.

    Raises:
        ConfigError: as :class:`FeatureGates`, with the given path and source.
    """
    issues = gate_issues(sorted(overrides.items()), version, path)
    if issues:
        raise ConfigError(issues, source=source)
    return FeatureGates(
        emulated_version=version, overrides={k: bool(v) for k, v in overrides.items()}
    )
