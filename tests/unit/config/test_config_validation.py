"""Upstream TestValidateKubeSchedulerConfigurationV1, ported as data (cases on fields we model)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest

from schedframe.config import (
    ClientConnectionConfiguration,
    Extender,
    ExtenderManagedResource,
    KubeSchedulerConfiguration,
    LeaderElectionConfiguration,
    PluginConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)
from schedframe.config._validation import validate, validate_extended_resource_name
from schedframe.errors import DUPLICATE, INVALID, REQUIRED

Config = KubeSchedulerConfiguration


def valid_config() -> Config:
    return Config(
        parallelism=8,
        client_connection=ClientConnectionConfiguration(
            accept_content_types="application/json",
            content_type="application/json",
            qps=10,
            burst=10,
        ),
        leader_election=LeaderElectionConfiguration(
            resource_lock="leases",
            leader_elect=True,
            lease_duration=30,
            renew_deadline=15,
            retry_period=5,
            resource_namespace="name",
            resource_name="name",
        ),
        pod_initial_backoff_seconds=1,
        pod_max_backoff_seconds=1,
        profiles=[
            Profile(
                scheduler_name="me",
                percentage_of_nodes_to_score=35,
                plugins=Plugins(
                    queue_sort=PluginSet(enabled=[PluginRef(name="CustomSort")]),
                    score=PluginSet(disabled=[PluginRef(name="*")]),
                ),
                plugin_config=[
                    PluginConfig(
                        name="DefaultPreemption",
                        args={"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
                    )
                ],
            ),
            Profile(
                scheduler_name="other",
                percentage_of_nodes_to_score=35,
                plugins=Plugins(
                    queue_sort=PluginSet(enabled=[PluginRef(name="CustomSort")]),
                    bind=PluginSet(enabled=[PluginRef(name="CustomBind")]),
                ),
            ),
        ],
        extenders=[Extender(url_prefix="", prioritize_verb="prioritize", weight=1)],
    )


def _profile(config: Config, index: int, **changes: Any) -> Config:
    profiles = list(config.profiles)
    profiles[index] = attrs.evolve(profiles[index], **changes)
    return attrs.evolve(config, profiles=profiles)


def _leader(config: Config, **changes: Any) -> Config:
    return attrs.evolve(config, leader_election=attrs.evolve(config.leader_election, **changes))


def _mismatch_queue_sort(c: Config) -> Config:
    return attrs.evolve(
        c,
        profiles=[
            Profile(
                scheduler_name="me",
                plugins=Plugins(queue_sort=PluginSet(enabled=[PluginRef(name="PrioritySort")])),
                plugin_config=[PluginConfig(name="PrioritySort")],
            ),
            Profile(
                scheduler_name="other",
                plugins=Plugins(queue_sort=PluginSet(enabled=[PluginRef(name="CustomSort")])),
                plugin_config=[PluginConfig(name="CustomSort")],
            ),
        ],
    )


def _extender(c: Config, **changes: Any) -> Config:
    return attrs.evolve(c, extenders=[attrs.evolve(c.extenders[0], **changes)])


Mutation = Callable[[Config], Config]

CASES: list[object] = [
    pytest.param(lambda c: c, [], id="good"),
    pytest.param(
        lambda c: attrs.evolve(c, parallelism=0),
        [(INVALID, "parallelism")],
        id="bad-parallelism-invalid-value",
    ),
    pytest.param(
        lambda c: _leader(c, resource_name=""),
        [(REQUIRED, "leaderElection.resourceName")],
        id="bad-resource-name-not-set",
    ),
    pytest.param(
        lambda c: _leader(c, resource_namespace=""),
        [(REQUIRED, "leaderElection.resourceNamespace")],
        id="bad-resource-namespace-not-set",
    ),
    pytest.param(
        lambda c: _leader(c, resource_lock="configmap"),
        [(INVALID, "leaderElection.resourceLock")],
        id="bad-resource-lock-not-leases",
    ),
    pytest.param(
        lambda c: attrs.evolve(c, percentage_of_nodes_to_score=101),
        [(INVALID, "percentageOfNodesToScore")],
        id="bad-percentage-of-nodes-to-score",
    ),
    pytest.param(
        lambda c: attrs.evolve(c, percentage_of_nodes_to_score=-1),
        [(INVALID, "percentageOfNodesToScore")],
        id="negative-percentage-of-nodes-to-score",
    ),
    pytest.param(
        lambda c: _profile(c, 1, scheduler_name=""),
        [(REQUIRED, "profiles[1].schedulerName")],
        id="scheduler-name-not-set",
    ),
    pytest.param(
        lambda c: _profile(c, 0, scheduler_name="other"),
        [(DUPLICATE, "profiles[1].schedulerName")],
        id="repeated-scheduler-name",
    ),
    pytest.param(
        lambda c: _profile(c, 1, percentage_of_nodes_to_score=101),
        [(INVALID, "profiles[1].percentageOfNodesToScore")],
        id="greater-than-100-profile-percentage-of-nodes-to-score",
    ),
    pytest.param(
        lambda c: _profile(c, 1, percentage_of_nodes_to_score=-1),
        [(INVALID, "profiles[1].percentageOfNodesToScore")],
        id="negative-profile-percentage-of-nodes-to-score",
    ),
    pytest.param(
        lambda c: _profile(
            c,
            1,
            plugins=attrs.evolve(
                c.profiles[1].plugins,
                queue_sort=PluginSet(enabled=[PluginRef(name="AnotherSort")]),
            ),
        ),
        [(INVALID, "profiles[1].plugins.queueSort")],
        id="different-queue-sort",
    ),
    pytest.param(
        lambda c: _profile(c, 0, plugins=Plugins()),
        [(INVALID, "profiles[1].plugins.queueSort")],
        id="one-empty-queue-sort",
    ),
    pytest.param(
        lambda c: _extender(c, weight=-1),
        [(INVALID, "extenders[0].weight")],
        id="extender-negative-weight",
    ),
    pytest.param(
        lambda c: _extender(
            c,
            managed_resources=[
                ExtenderManagedResource(name="example.com/foo"),
                ExtenderManagedResource(name="example.com/foo"),
            ],
        ),
        [(INVALID, "extenders[0].managedResources[1].name")],
        id="extender-duplicate-managed-resources",
    ),
    pytest.param(
        lambda c: attrs.evolve(
            c,
            extenders=[
                attrs.evolve(c.extenders[0], bind_verb="foo"),
                Extender(url_prefix="", prioritize_verb="prioritize", bind_verb="bar", weight=1),
            ],
        ),
        [(INVALID, "extenders")],
        id="extender-duplicate-bind",
    ),
    pytest.param(
        lambda c: _profile(
            c, 0, plugin_config=[PluginConfig(name="config"), PluginConfig(name="config")]
        ),
        [(DUPLICATE, "profiles[0].pluginConfig[1]")],
        id="duplicated-plugin-config",
    ),
    pytest.param(
        _mismatch_queue_sort,
        [(INVALID, "profiles[1].plugins.queueSort")],
        id="mismatch-queue-sort",
    ),
    pytest.param(
        lambda c: _profile(
            c,
            0,
            plugins=attrs.evolve(
                c.profiles[0].plugins,
                score=PluginSet(
                    enabled=[PluginRef(name="PodTopologySpread", weight=2)],
                    disabled=[PluginRef(name="*")],
                ),
            ),
        ),
        [],
        id="valid-plugins",
    ),
]


@pytest.mark.parametrize(("mutate", "want"), CASES)
def test_validate_kube_scheduler_configuration_v1(
    mutate: Mutation, want: list[tuple[str, str]]
) -> None:
    issues = validate(mutate(valid_config()))
    assert [(i.kind, i.path) for i in issues] == want


# component-base TestValidateLeaderElectionConfiguration / TestValidateClientConnectionConfiguration
LEADER_CASES = [
    pytest.param({}, [], id="good"),
    pytest.param(
        {"leader_elect": False, "lease_duration": -45},
        [],
        id="good-dont-check-leader-config-if-not-enabled",
    ),
    pytest.param(
        {"renew_deadline": 45},
        ["leaderElection.leaseDuration: Invalid value: 45s: must be greater than `RenewDeadline`"],
        id="bad-renew-deadline-exceeds-lease-duration",
    ),
    pytest.param(
        {"retry_period": -45},
        ["leaderElection.retryPeriod: Invalid value: -45s: must be greater than zero"],
        id="bad-negative-value-for-retry-period",
    ),
    pytest.param(
        {"lease_duration": -45},
        [
            "leaderElection.leaseDuration: Invalid value: -45s: must be greater than zero",
            "leaderElection.leaseDuration: Invalid value: 15s: must be greater than `RenewDeadline`",
        ],
        id="bad-negative-value-for-lease-duration",
    ),
    pytest.param(
        {"renew_deadline": -45},
        ["leaderElection.renewDeadline: Invalid value: -45s: must be greater than zero"],
        id="bad-negative-value-for-renew-deadline",
    ),
    pytest.param(
        {"renew_deadline": 0},
        ["leaderElection.renewDeadline: Invalid value: 0s: must be greater than zero"],
        id="bad-renew-deadline-zero",
    ),
    pytest.param(
        {"lease_duration": 0},
        [
            "leaderElection.leaseDuration: Invalid value: 0s: must be greater than zero",
            "leaderElection.leaseDuration: Invalid value: 15s: must be greater than `RenewDeadline`",
        ],
        id="bad-lease-duration-zero",
    ),
    pytest.param(
        {"resource_lock": ""},
        [
            "leaderElection.resourceLock: Required value",
            'leaderElection.resourceLock: Invalid value: "": resourceLock value must be "leases"',
        ],
        id="bad-resource-lock-not-defined",
    ),
]


@pytest.mark.parametrize(("changes", "want"), LEADER_CASES)
def test_validate_leader_election(changes: dict[str, object], want: list[str]) -> None:
    issues = validate(_leader(valid_config(), **changes))
    assert [str(i) for i in issues] == want


@pytest.mark.parametrize(
    ("qps", "burst", "want"),
    [
        pytest.param(10.0, 10, [], id="good"),
        pytest.param(-1.0, 10, [], id="good-qps-less-than-zero"),
        pytest.param(
            10.0,
            -1,
            ["clientConnection.burst: Invalid value: -1: must be non-negative"],
            id="bad-burst-less-then-zero",
        ),
    ],
)
def test_validate_client_connection(qps: float, burst: int, want: list[str]) -> None:
    config = attrs.evolve(
        valid_config(),
        client_connection=ClientConnectionConfiguration(qps=qps, burst=burst),
    )
    assert [str(i) for i in validate(config)] == want


def test_no_profiles_is_required() -> None:
    issues = validate(attrs.evolve(valid_config(), profiles=[]))
    assert [str(i) for i in issues] == ["profiles: Required value"]


def test_queue_sort_args_are_compared_only_for_the_first_profiles_sort_plugin() -> None:
    config = _mismatch_queue_sort(valid_config())
    # Profile 1 configures "CustomSort", not profile 0's "PrioritySort": no args mismatch.
    assert [i.path for i in validate(config)] == ["profiles[1].plugins.queueSort"]


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("example.com/foo", []),
        ("foo", ["is an invalid extended resource name"]),
        ("kubernetes.io/foo", ["is an invalid extended resource name"]),
        ("requests.example.com/foo", ["is an invalid extended resource name"]),
        ("/foo", ["prefix part must be non-empty"]),
        (
            "example.com/",
            [
                "name part must be non-empty",
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
                "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ],
        ),
        (
            "a/b/c",
            [
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name', "
                " or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
                "prefix and '/' (e.g. 'example.com/MyName')"
            ],
        ),
        ("example.com/" + "x" * 64, ["name part must be no more than 63 characters"]),
    ],
)
def test_extended_resource_names(name: str, want: list[str]) -> None:
    issues = validate_extended_resource_name("n", name)
    assert [i.detail for i in issues] == want
    assert all(i.path == "n" and i.kind == INVALID for i in issues)
