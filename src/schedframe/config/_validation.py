"""Upstream validation of a defaulted configuration, with upstream's paths and messages.

Ports ``pkg/scheduler/apis/config/validation/validation.go`` (``ValidateKubeSchedulerConfiguration``
and helpers) and component-base's client-connection and leader-election validation, in
upstream's order. Plugin args are validated by the runtime, which owns the args classes.
"""

from __future__ import annotations

from collections.abc import Iterator

from schedframe.config._codec import plugin_set_dict
from schedframe.config._common import Shown, format_duration, shown
from schedframe.config._types import (
    ClientConnectionConfiguration,
    Extender,
    KubeSchedulerConfiguration,
    LeaderElectionConfiguration,
    Profile,
)
from schedframe.errors import DUPLICATE, INVALID, REQUIRED, FieldIssue
from schedframe.objects.validation import is_qualified_name

__all__ = ["validate", "validate_extended_resource_name"]


def _invalid(path: str, value: object, detail: str) -> FieldIssue:
    return FieldIssue(path=path, kind=INVALID, value=value, detail=detail)


def _client_connection(cc: ClientConnectionConfiguration) -> Iterator[FieldIssue]:
    if cc.burst < 0:
        yield _invalid("clientConnection.burst", cc.burst, "must be non-negative")


def _leader_election(le: LeaderElectionConfiguration) -> Iterator[FieldIssue]:
    if not le.leader_elect:
        return
    path = "leaderElection"
    # Durations print as Go's Duration.String, bare, as upstream's Stringer values do.
    if le.lease_duration <= 0:
        yield _invalid(
            f"{path}.leaseDuration",
            Shown(format_duration(le.lease_duration)),
            "must be greater than zero",
        )
    if le.renew_deadline <= 0:
        yield _invalid(
            f"{path}.renewDeadline",
            Shown(format_duration(le.renew_deadline)),
            "must be greater than zero",
        )
    if le.retry_period <= 0:
        yield _invalid(
            f"{path}.retryPeriod",
            Shown(format_duration(le.retry_period)),
            "must be greater than zero",
        )
    if le.lease_duration <= le.renew_deadline:
        # Upstream reports the renew deadline as the bad value here.
        yield _invalid(
            f"{path}.leaseDuration",
            Shown(format_duration(le.renew_deadline)),
            "must be greater than `RenewDeadline`",
        )
    for key, value in (
        ("resourceLock", le.resource_lock),
        ("resourceNamespace", le.resource_namespace),
        ("resourceName", le.resource_name),
    ):
        if not value:
            yield FieldIssue(path=f"{path}.{key}", kind=REQUIRED)


def _percentage(path: str, value: int | None) -> Iterator[FieldIssue]:
    if value is not None and not 0 <= value <= 100:
        yield _invalid(path, value, "not in valid range [0-100]")


def _profile(path: str, profile: Profile) -> Iterator[FieldIssue]:
    if not profile.scheduler_name:
        yield FieldIssue(path=f"{path}.schedulerName", kind=REQUIRED)
    yield from _percentage(f"{path}.percentageOfNodesToScore", profile.percentage_of_nodes_to_score)
    # v1 has no removed or deprecated plugins to reject; only duplicates are checked here.
    seen: set[str] = set()
    for index, plugin_config in enumerate(profile.plugin_config):
        if plugin_config.name in seen:
            yield FieldIssue(
                path=f"{path}.pluginConfig[{index}]", kind=DUPLICATE, value=plugin_config.name
            )
        seen.add(plugin_config.name)


def _common_queue_sort(profiles: tuple[Profile, ...]) -> Iterator[FieldIssue]:
    canon = profiles[0].plugins.queue_sort
    sort_name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        # "Enabled" is capitalised upstream too.
        yield _invalid(
            "profiles[0].plugins.queueSort.Enabled",
            len(canon.enabled),
            "only one queue sort plugin can be enabled",
        )
    sort_args: object = None
    for plugin_config in profiles[0].plugin_config:
        if sort_name and plugin_config.name == sort_name:
            sort_args = plugin_config.args
    for index in range(1, len(profiles)):
        current = profiles[index].plugins.queue_sort
        if current != canon:
            yield _invalid(
                f"profiles[{index}].plugins.queueSort",
                shown(plugin_set_dict(current)),
                "queueSort must be the same for all profiles",
            )
        for plugin_config in profiles[index].plugin_config:
            if plugin_config.name == sort_name and plugin_config.args != sort_args:
                yield _invalid(
                    f"profiles[{index}].pluginConfig.args",
                    shown(plugin_config.args),
                    "queueSort must be the same for all profiles",
                )


# --- extended resource names (apimachinery IsQualifiedName, v1helper.IsExtendedResourceName) ---


def _is_extended_resource_name(name: str) -> bool:
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def validate_extended_resource_name(path: str, name: str) -> list[FieldIssue]:
    """Issues for a name that is not a valid extended resource name (upstream wording)."""
    issues = [_invalid(path, name, msg) for msg in is_qualified_name(name)]
    if not issues and not _is_extended_resource_name(name):
        issues.append(_invalid(path, name, "is an invalid extended resource name"))
    return issues


def _extenders(extenders: tuple[Extender, ...]) -> Iterator[FieldIssue]:
    binders = 0
    managed: set[str] = set()
    for index, extender in enumerate(extenders):
        path = f"extenders[{index}]"
        if extender.prioritize_verb and extender.weight <= 0:
            yield _invalid(
                f"{path}.weight", extender.weight, "must have a positive weight applied to it"
            )
        if extender.bind_verb:
            binders += 1
        for j, resource in enumerate(extender.managed_resources):
            name_path = f"{path}.managedResources[{j}].name"
            yield from validate_extended_resource_name(name_path, resource.name)
            if resource.name in managed:
                yield _invalid(name_path, resource.name, "duplicate extender managed resource name")
            managed.add(resource.name)
    if binders > 1:
        yield _invalid(
            "extenders",
            f"found {binders} extenders implementing bind",
            "only one extender can implement bind",
        )


def validate(config: KubeSchedulerConfiguration) -> list[FieldIssue]:
    """Every issue upstream's ``ValidateKubeSchedulerConfiguration`` finds, in its order."""
    issues = [*_client_connection(config.client_connection)]
    issues.extend(_leader_election(config.leader_election))
    le = config.leader_election
    if le.leader_elect and le.resource_lock != "leases":
        issues.append(
            _invalid(
                "leaderElection.resourceLock",
                le.resource_lock,
                'resourceLock value must be "leases"',
            )
        )
    if config.parallelism <= 0:
        issues.append(
            _invalid(
                "parallelism", config.parallelism, "should be an integer value greater than zero"
            )
        )
    if not config.profiles:
        issues.append(FieldIssue(path="profiles", kind=REQUIRED))
    else:
        holder_by_name: dict[str, int] = {}
        for index, profile in enumerate(config.profiles):
            path = f"profiles[{index}]"
            issues.extend(_profile(path, profile))
            if profile.scheduler_name in holder_by_name:
                # Upstream passes the previous holder's path as the duplicate value.
                holder = holder_by_name[profile.scheduler_name]
                issues.append(
                    FieldIssue(
                        path=f"{path}.schedulerName",
                        kind=DUPLICATE,
                        value=Shown(f"profiles[{holder}].schedulerName"),
                    )
                )
            holder_by_name[profile.scheduler_name] = index
        issues.extend(_common_queue_sort(config.profiles))
    issues.extend(_percentage("percentageOfNodesToScore", config.percentage_of_nodes_to_score))
    if config.pod_initial_backoff_seconds <= 0:
        issues.append(
            _invalid(
                "podInitialBackoffSeconds",
                config.pod_initial_backoff_seconds,
                "must be greater than 0",
            )
        )
    if config.pod_max_backoff_seconds < config.pod_initial_backoff_seconds:
        issues.append(
            _invalid(
                "podMaxBackoffSeconds",
                config.pod_max_backoff_seconds,
                "must be greater than or equal to PodInitialBackoffSeconds",
            )
        )
    issues.extend(_extenders(config.extenders))
    return issues
