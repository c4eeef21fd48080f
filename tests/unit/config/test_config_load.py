"""Loading KubeSchedulerConfiguration files: sources, upstream examples, and every error path."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedframe.config import (
    Extender,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    KubeSchedulerConfiguration,
    PluginConfig,
    PluginRef,
    PluginSet,
    default_config,
    load_config,
    loads_config,
    to_dict,
)
from schedframe.errors import ConfigError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "configs"
UPSTREAM = sorted((FIXTURES / "upstream").glob("*.yaml"))

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def _load(body: str) -> KubeSchedulerConfiguration:
    return loads_config(HEADER + textwrap.dedent(body), source="bad.yaml")


def _error(body: str, *, header: bool = True) -> str:
    text = (HEADER if header else "") + textwrap.dedent(body)
    with pytest.raises(ConfigError) as info:
        loads_config(text, source="bad.yaml")
    return str(info.value)


# --- sources ------------------------------------------------------------------------------------


def test_none_gives_the_default_configuration() -> None:
    assert load_config() == load_config(None) == default_config() == KubeSchedulerConfiguration()


def test_header_only_document_equals_the_default_configuration() -> None:
    assert loads_config(HEADER) == default_config()


def test_a_mapping_is_read_as_a_file_named_dict() -> None:
    with pytest.raises(ConfigError) as info:
        load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "x"})
    assert str(info.value) == (
        '<dict>: kind: Unsupported value: "x": supported values: "KubeSchedulerConfiguration"'
    )
    assert info.value.source == "<dict>"


def test_a_mapping_loads() -> None:
    config = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "parallelism": 4,
        }
    )
    assert config.parallelism == 4


def test_json_text_loads() -> None:
    config = loads_config(
        '{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",'
        ' "profiles": [{"schedulerName": "json"}]}'
    )
    assert config.profiles[0].scheduler_name == "json"


def test_a_path_object_and_a_string_path_load_alike(tmp_path: Path) -> None:
    file = tmp_path / "sched.yaml"
    file.write_text(HEADER + "parallelism: 3\n", encoding="utf-8")
    assert load_config(file) == load_config(str(file))
    assert load_config(file).parallelism == 3


def test_a_missing_file_is_a_config_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as info:
        load_config(missing)
    assert str(info.value) == (
        f"{missing}: Invalid value: cannot read file: No such file or directory"
    )


def test_a_directory_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(info.value).startswith(f"{tmp_path}: Invalid value: cannot read file: ")


def test_non_utf8_file_is_a_config_error(tmp_path: Path) -> None:
    file = tmp_path / "latin1.yaml"
    file.write_bytes(b"kind: \xff\n")
    with pytest.raises(ConfigError) as info:
        load_config(file)
    assert str(info.value) == f"{file}: Invalid value: not UTF-8 text: invalid start byte"


@pytest.mark.parametrize("path", UPSTREAM, ids=[p.name for p in UPSTREAM])
def test_upstream_example_configurations_load(path: Path) -> None:
    config = load_config(path)
    assert config.profiles
    # Printing and reading back gives the same configuration.
    assert load_config(to_dict(config)) == config


def test_there_are_enough_upstream_examples() -> None:
    assert len(UPSTREAM) >= 3


def test_upstream_multiple_profiles_example() -> None:
    config = load_config(FIXTURES / "upstream" / "multiple-profiles.yaml")
    assert [p.scheduler_name for p in config.profiles] == [
        "default-scheduler",
        "no-scoring-scheduler",
    ]
    no_scoring = config.profile("no-scoring-scheduler")
    assert no_scoring.plugins.score == PluginSet(disabled=[PluginRef(name="*")])
    assert no_scoring.plugins.pre_score == PluginSet(disabled=[PluginRef(name="*")])
    assert no_scoring.plugins.multi_point == default_config().profiles[0].plugins.multi_point


def test_upstream_score_plugins_example_gets_the_default_name() -> None:
    config = load_config(FIXTURES / "upstream" / "score-plugins.yaml")
    (profile,) = config.profiles
    assert profile.scheduler_name == "default-scheduler"
    assert profile.plugins.score == PluginSet(
        enabled=[
            PluginRef(name="MyCustomPluginA", weight=2),
            PluginRef(name="MyCustomPluginB", weight=1),
        ],
        disabled=[PluginRef(name="PodTopologySpread")],
    )


def test_upstream_plugin_args_are_kept_raw() -> None:
    config = load_config(FIXTURES / "upstream" / "requested-to-capacity-ratio.yaml")
    (plugin_config,) = config.profiles[0].plugin_config
    assert plugin_config.name == "NodeResourcesFit"
    assert plugin_config.args == {
        "scoringStrategy": {
            "resources": [
                {"name": "intel.com/foo", "weight": 3},
                {"name": "intel.com/bar", "weight": 3},
            ],
            "requestedToCapacityRatio": {
                "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
            },
            "type": "RequestedToCapacityRatio",
        }
    }


def test_profile_lookup_by_name() -> None:
    config = default_config()
    assert config.profile("default-scheduler") is config.profiles[0]
    with pytest.raises(KeyError):
        config.profile("other")


# --- decoding of every field --------------------------------------------------------------------


def test_every_field_is_read() -> None:
    config = _load(
        """
        parallelism: 32
        leaderElection:
          leaderElect: false
          leaseDuration: 1m30s
          renewDeadline: 500ms
          retryPeriod: 1.5s
          resourceLock: leases
          resourceName: sched
          resourceNamespace: ns
        clientConnection:
          kubeconfig: /kubeconfig
          acceptContentTypes: application/json
          contentType: application/json
          qps: 12.5
          burst: 7
        enableProfiling: false
        percentageOfNodesToScore: 40
        podInitialBackoffSeconds: 2
        podMaxBackoffSeconds: 20
        delayCacheUntilActive: true
        profiles:
          - schedulerName: one
            percentageOfNodesToScore: 0
            pluginConfig:
              - name: Foo
                args: {a: [1, {b: null}]}
              - name: Bar
        extenders:
          - urlPrefix: https://ext.example.com
            filterVerb: filter
            preemptVerb: preempt
            prioritizeVerb: prioritize
            weight: 5
            bindVerb: bind
            enableHTTPS: true
            tlsConfig:
              insecure: true
              serverName: ext
              certFile: /c
              keyFile: /k
              caFile: /ca
              certData: aGVsbG8=
            httpTimeout: 30s
            nodeCacheCapable: true
            managedResources:
              - name: example.com/gpu
                ignoredByScheduler: true
            ignorable: true
        """
    )
    assert config.parallelism == 32
    le = config.leader_election
    assert (le.leader_elect, le.lease_duration, le.renew_deadline, le.retry_period) == (
        False,
        90.0,
        0.5,
        1.5,
    )
    assert (le.resource_lock, le.resource_name, le.resource_namespace) == ("leases", "sched", "ns")
    cc = config.client_connection
    assert (cc.kubeconfig, cc.accept_content_types, cc.content_type, cc.qps, cc.burst) == (
        "/kubeconfig",
        "application/json",
        "application/json",
        12.5,
        7,
    )
    assert config.enable_profiling is False
    # Contention profiling is defaulted on only when profiling is on.
    assert config.enable_contention_profiling is False
    assert config.percentage_of_nodes_to_score == 40
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (2, 20)
    assert config.delay_cache_until_active is True
    (profile,) = config.profiles
    assert profile.scheduler_name == "one"
    assert profile.percentage_of_nodes_to_score == 0
    assert profile.plugin_config == (
        PluginConfig(name="Foo", args={"a": [1, {"b": None}]}),
        PluginConfig(name="Bar"),
    )
    assert config.extenders == (
        Extender(
            url_prefix="https://ext.example.com",
            filter_verb="filter",
            preempt_verb="preempt",
            prioritize_verb="prioritize",
            weight=5,
            bind_verb="bind",
            enable_https=True,
            tls_config=ExtenderTLSConfig(
                insecure=True,
                server_name="ext",
                cert_file="/c",
                key_file="/k",
                ca_file="/ca",
                cert_data=b"hello",
            ),
            http_timeout=30.0,
            node_cache_capable=True,
            managed_resources=[
                ExtenderManagedResource(name="example.com/gpu", ignored_by_scheduler=True)
            ],
            ignorable=True,
        ),
    )
    assert load_config(to_dict(config)) == config


def test_null_means_not_given() -> None:
    config = _load(
        """
        parallelism: null
        leaderElection: null
        profiles:
          - schedulerName: null
            plugins: null
        extenders: null
        """
    )
    assert config == default_config()


def test_zero_durations_and_rates_take_the_defaults() -> None:
    config = _load(
        """
        leaderElection: {leaseDuration: 0s, renewDeadline: "0", retryPeriod: 0ms, resourceLock: ""}
        clientConnection: {qps: 0, burst: 0, contentType: ""}
        extenders: [{urlPrefix: x, httpTimeout: 0s}]
        """
    )
    assert config.leader_election == default_config().leader_election
    assert config.client_connection == default_config().client_connection
    assert config.extenders[0].http_timeout == 5.0


def test_extender_weight_has_no_default() -> None:
    config = _load("extenders: [{urlPrefix: x, filterVerb: filter}]\n")
    assert config.extenders[0].weight == 0


def test_to_dict_shows_every_field_of_the_default() -> None:
    printed = to_dict(default_config())
    assert printed == {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "parallelism": 16,
        "leaderElection": {
            "leaderElect": True,
            "leaseDuration": "15s",
            "renewDeadline": "10s",
            "retryPeriod": "2s",
            "resourceLock": "leases",
            "resourceName": "kube-scheduler",
            "resourceNamespace": "kube-system",
        },
        "clientConnection": {
            "kubeconfig": "",
            "acceptContentTypes": "",
            "contentType": "application/vnd.kubernetes.protobuf",
            "qps": 50.0,
            "burst": 100,
        },
        "enableProfiling": True,
        "enableContentionProfiling": True,
        "percentageOfNodesToScore": 0,
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 10,
        "profiles": printed["profiles"],
        "extenders": [],
        "delayCacheUntilActive": False,
    }
    profiles: Any = printed["profiles"]
    (profile,) = profiles
    assert profile["schedulerName"] == "default-scheduler"
    assert "percentageOfNodesToScore" not in profile
    assert list(profile["plugins"]) == [
        "preEnqueue",
        "queueSort",
        "preFilter",
        "filter",
        "postFilter",
        "preScore",
        "score",
        "reserve",
        "permit",
        "preBind",
        "bind",
        "postBind",
        "multiPoint",
    ]
    assert profile["plugins"]["multiPoint"]["enabled"][4] == {
        "name": "TaintToleration",
        "weight": 3,
    }
    assert profile["pluginConfig"] == []


def test_to_dict_output_is_plain_yaml() -> None:
    text = yaml.safe_dump(to_dict(default_config()))
    assert loads_config(text) == default_config()


# --- bad configurations: one exact message each -------------------------------------------------

BAD = [
    pytest.param(
        "parallelism: 0\n",
        "bad.yaml: parallelism: Invalid value: 0: should be an integer value greater than zero",
        id="parallelism-zero",
    ),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: NodeResourcesFit
          - name: NodeResourcesFit
        """,
        'bad.yaml: profiles[0].pluginConfig[1]: Duplicate value: "NodeResourcesFit"',
        id="duplicate-plugin-config",
    ),
    pytest.param(
        "parallelism: 1\nprofiles: []\nparallelism: 2\n",
        'bad.yaml: Duplicate value: "parallelism": mapping key repeated at line 5, column 1',
        id="duplicate-yaml-key",
    ),
    pytest.param(
        "profiles:\n- schedulerName: a\n  schedulerName: b\n",
        'bad.yaml: Duplicate value: "schedulerName": mapping key repeated at line 5, column 3',
        id="duplicate-nested-yaml-key",
    ),
    pytest.param(
        "parallelizm: 4\n",
        "bad.yaml: parallelizm: Unknown field",
        id="unknown-top-level-field",
    ),
    pytest.param(
        """
        profiles:
        - plugins:
            scroe: {}
            score:
              enabled: [{name: A, wieght: 2}]
        """,
        "bad.yaml: profiles[0].plugins.scroe: Unknown field\n"
        "bad.yaml: profiles[0].plugins.score.enabled[0].wieght: Unknown field",
        id="unknown-nested-fields",
    ),
    pytest.param(
        "Parallelism: 4\n",
        "bad.yaml: Parallelism: Unknown field",
        id="field-names-are-case-sensitive",
    ),
    pytest.param(
        "leaderElection: {leaderElect: true, lockName: x}\nclientConnection: {QPS: 1}\n",
        "bad.yaml: leaderElection.lockName: Unknown field\n"
        "bad.yaml: clientConnection.QPS: Unknown field",
        id="unknown-component-base-fields",
    ),
    pytest.param(
        "parallelism: '16'\n",
        'bad.yaml: parallelism: Invalid value: "16": expected an integer',
        id="string-for-integer",
    ),
    pytest.param(
        "parallelism: true\n",
        "bad.yaml: parallelism: Invalid value: true: expected an integer",
        id="boolean-is-not-an-integer",
    ),
    pytest.param(
        "parallelism: 2.5\n",
        "bad.yaml: parallelism: Invalid value: 2.5: expected an integer",
        id="float-for-integer",
    ),
    pytest.param(
        "parallelism: 2147483648\n",
        "bad.yaml: parallelism: Invalid value: 2147483648: out of range for int32",
        id="int32-overflow",
    ),
    pytest.param(
        "podMaxBackoffSeconds: 9223372036854775808\n",
        "bad.yaml: podMaxBackoffSeconds: Invalid value: 9223372036854775808: out of range for int64",
        id="int64-overflow",
    ),
    pytest.param(
        "enableProfiling: 'true'\n",
        'bad.yaml: enableProfiling: Invalid value: "true": expected a boolean',
        id="string-for-boolean",
    ),
    pytest.param(
        "clientConnection: {qps: fast}\n",
        'bad.yaml: clientConnection.qps: Invalid value: "fast": expected a number',
        id="string-for-number",
    ),
    pytest.param(
        "profiles:\n- schedulerName: 7\n",
        "bad.yaml: profiles[0].schedulerName: Invalid value: 7: expected a string",
        id="number-for-string",
    ),
    pytest.param(
        "profiles: {schedulerName: a}\n",
        'bad.yaml: profiles: Invalid value: {"schedulerName":"a"}: expected a list',
        id="object-for-list",
    ),
    pytest.param(
        "leaderElection: [1, 2]\n",
        "bad.yaml: leaderElection: Invalid value: [1,2]: expected an object",
        id="list-for-object",
    ),
    pytest.param(
        "leaderElection: {leaseDuration: '15'}\n",
        'bad.yaml: leaderElection.leaseDuration: Invalid value: "15": missing unit in duration',
        id="duration-without-unit",
    ),
    pytest.param(
        "leaderElection: {renewDeadline: 1d}\n",
        'bad.yaml: leaderElection.renewDeadline: Invalid value: "1d": unknown unit "d" in duration',
        id="duration-unknown-unit",
    ),
    pytest.param(
        "leaderElection: {retryPeriod: 2}\n",
        "bad.yaml: leaderElection.retryPeriod: Invalid value: 2: "
        'expected a duration string such as "15s"',
        id="duration-as-number",
    ),
    pytest.param(
        "extenders: [{urlPrefix: x, httpTimeout: soon}]\n",
        'bad.yaml: extenders[0].httpTimeout: Invalid value: "soon": invalid duration',
        id="extender-bad-timeout",
    ),
    pytest.param(
        "percentageOfNodesToScore: 101\n",
        "bad.yaml: percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        id="global-percentage-above-100",
    ),
    pytest.param(
        "percentageOfNodesToScore: -1\n",
        "bad.yaml: percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
        id="global-percentage-negative",
    ),
    pytest.param(
        "profiles:\n- percentageOfNodesToScore: 101\n",
        "bad.yaml: profiles[0].percentageOfNodesToScore: Invalid value: 101: "
        "not in valid range [0-100]",
        id="profile-percentage-above-100",
    ),
    pytest.param(
        "profiles:\n- schedulerName: a\n- schedulerName: b\n- schedulerName: a\n",
        "bad.yaml: profiles[2].schedulerName: Duplicate value: profiles[0].schedulerName",
        id="duplicate-scheduler-name",
    ),
    pytest.param(
        "profiles:\n- schedulerName: a\n- percentageOfNodesToScore: 5\n",
        "bad.yaml: profiles[1].schedulerName: Required value",
        id="scheduler-name-required-with-two-profiles",
    ),
    pytest.param(
        "profiles:\n- schedulerName: ''\n",
        "bad.yaml: profiles[0].schedulerName: Required value",
        id="empty-scheduler-name",
    ),
    pytest.param(
        """
        profiles:
        - schedulerName: a
        - schedulerName: b
          plugins:
            queueSort:
              enabled: [{name: CustomSort}]
              disabled: [{name: '*'}]
        """,
        'bad.yaml: profiles[1].plugins.queueSort: Invalid value: {"enabled":[{"name":"CustomSort"}],'
        '"disabled":[{"name":"*"}]}: queueSort must be the same for all profiles',
        id="different-queue-sort",
    ),
    pytest.param(
        """
        profiles:
        - schedulerName: a
          plugins: {queueSort: {enabled: [{name: A}, {name: B}]}}
        """,
        "bad.yaml: profiles[0].plugins.queueSort.Enabled: Invalid value: 2: "
        "only one queue sort plugin can be enabled",
        id="two-queue-sort-plugins",
    ),
    pytest.param(
        """
        profiles:
        - schedulerName: a
          plugins: {queueSort: {enabled: [{name: S}]}}
          pluginConfig: [{name: S, args: {x: 1}}]
        - schedulerName: b
          plugins: {queueSort: {enabled: [{name: S}]}}
          pluginConfig: [{name: S, args: {x: 2}}]
        """,
        'bad.yaml: profiles[1].pluginConfig.args: Invalid value: {"x":2}: '
        "queueSort must be the same for all profiles",
        id="different-queue-sort-args",
    ),
    pytest.param(
        """
        extenders:
        - {urlPrefix: a, bindVerb: bind}
        - {urlPrefix: b, bindVerb: bind}
        - {urlPrefix: c, bindVerb: bind}
        """,
        'bad.yaml: extenders: Invalid value: "found 3 extenders implementing bind": '
        "only one extender can implement bind",
        id="multiple-extender-binders",
    ),
    pytest.param(
        "extenders: [{urlPrefix: a, prioritizeVerb: prioritize, weight: -1}]\n",
        "bad.yaml: extenders[0].weight: Invalid value: -1: must have a positive weight applied to it",
        id="extender-negative-weight",
    ),
    pytest.param(
        "extenders: [{urlPrefix: a, prioritizeVerb: prioritize}]\n",
        "bad.yaml: extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
        id="extender-prioritizer-without-weight",
    ),
    pytest.param(
        """
        extenders:
        - urlPrefix: a
          managedResources: [{name: example.com/foo}, {name: example.com/foo}]
        """,
        'bad.yaml: extenders[0].managedResources[1].name: Invalid value: "example.com/foo": '
        "duplicate extender managed resource name",
        id="extender-duplicate-managed-resource",
    ),
    pytest.param(
        "extenders: [{urlPrefix: a, managedResources: [{name: kubernetes.io/gpu}]}]\n",
        'bad.yaml: extenders[0].managedResources[0].name: Invalid value: "kubernetes.io/gpu": '
        "is an invalid extended resource name",
        id="extender-native-resource-name",
    ),
    pytest.param(
        "extenders: [{urlPrefix: a, managedResources: [{name: example.com/-gpu}]}]\n",
        'bad.yaml: extenders[0].managedResources[0].name: Invalid value: "example.com/-gpu": '
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
        "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        id="extender-bad-resource-name",
    ),
    pytest.param(
        "extenders: [{urlPrefix: a, managedResources: [{name: Example.com/gpu}]}]\n",
        'bad.yaml: extenders[0].managedResources[0].name: Invalid value: "Example.com/gpu": '
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
        "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        id="extender-bad-resource-prefix",
    ),
    pytest.param(
        "podInitialBackoffSeconds: 0\n",
        "bad.yaml: podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
        id="initial-backoff-zero",
    ),
    pytest.param(
        "podInitialBackoffSeconds: 20\n",
        "bad.yaml: podMaxBackoffSeconds: Invalid value: 10: "
        "must be greater than or equal to PodInitialBackoffSeconds",
        id="max-backoff-below-initial",
    ),
    pytest.param(
        "leaderElection: {resourceLock: endpointsleases}\n",
        'bad.yaml: leaderElection.resourceLock: Invalid value: "endpointsleases": '
        'resourceLock value must be "leases"',
        id="resource-lock-not-leases",
    ),
    pytest.param(
        "leaderElection: {leaseDuration: 10s, renewDeadline: 10s}\n",
        "bad.yaml: leaderElection.leaseDuration: Invalid value: 10s: "
        "must be greater than `RenewDeadline`",
        id="lease-not-longer-than-renew-deadline",
    ),
    pytest.param(
        "leaderElection: {leaseDuration: -5s, retryPeriod: -1ms}\n",
        "bad.yaml: leaderElection.leaseDuration: Invalid value: -5s: must be greater than zero\n"
        "bad.yaml: leaderElection.retryPeriod: Invalid value: -1ms: must be greater than zero\n"
        "bad.yaml: leaderElection.leaseDuration: Invalid value: 10s: "
        "must be greater than `RenewDeadline`",
        id="negative-durations",
    ),
    pytest.param(
        "clientConnection: {burst: -1}\n",
        "bad.yaml: clientConnection.burst: Invalid value: -1: must be non-negative",
        id="negative-burst",
    ),
    pytest.param(
        "profiles:\n- pluginConfig: [{name: A, args: [1]}]\n",
        "bad.yaml: profiles[0].pluginConfig[0].args: Invalid value: [1]: expected an object",
        id="args-not-an-object",
    ),
    pytest.param(
        "profiles:\n- plugins: {score: {enabled: NodeAffinity}}\n",
        'bad.yaml: profiles[0].plugins.score.enabled: Invalid value: "NodeAffinity": '
        "expected a list",
        id="plugin-list-not-a-list",
    ),
    pytest.param(
        "profiles:\n- plugins: {score: {enabled: [{name: A, weight: 1.5}]}}\n",
        "bad.yaml: profiles[0].plugins.score.enabled[0].weight: Invalid value: 1.5: "
        "expected an integer",
        id="plugin-weight-not-an-integer",
    ),
    pytest.param(
        "extenders: [{urlPrefix: a, tlsConfig: {caData: '***'}}]\n",
        'bad.yaml: extenders[0].tlsConfig.caData: Invalid value: "***": '
        "expected base64-encoded data",
        id="tls-data-not-base64",
    ),
]


@pytest.mark.parametrize(("body", "message"), BAD)
def test_bad_configuration_message(body: str, message: str) -> None:
    assert _error(body) == message


def test_there_are_enough_bad_configurations() -> None:
    assert len(BAD) >= 20


WRONG_TYPE_META = [
    pytest.param(
        "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
        'bad.yaml: apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3": '
        'supported values: "kubescheduler.config.k8s.io/v1"',
        id="old-api-version",
    ),
    pytest.param(
        "kind: KubeSchedulerConfiguration\n",
        'bad.yaml: apiVersion: Required value: must be "kubescheduler.config.k8s.io/v1"',
        id="missing-api-version",
    ),
    pytest.param(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeletConfiguration\n",
        'bad.yaml: kind: Unsupported value: "KubeletConfiguration": '
        'supported values: "KubeSchedulerConfiguration"',
        id="wrong-kind",
    ),
    pytest.param(
        "parallelism: 1\n",
        'bad.yaml: apiVersion: Required value: must be "kubescheduler.config.k8s.io/v1"\n'
        'bad.yaml: kind: Required value: must be "KubeSchedulerConfiguration"',
        id="no-type-meta",
    ),
    pytest.param(
        "- a\n- b\n",
        'bad.yaml: Invalid value: ["a","b"]: expected a KubeSchedulerConfiguration object',
        id="document-is-a-list",
    ),
    pytest.param(
        "",
        "bad.yaml: Invalid value: null: expected a KubeSchedulerConfiguration object",
        id="empty-document",
    ),
    pytest.param(
        "apiVersion: [\n",
        "bad.yaml: Invalid value: not valid YAML at line 2, column 1: "
        "did not find expected node content",
        id="not-yaml",
    ),
    pytest.param(
        "---\na: 1\n---\nb: 2\n",
        "bad.yaml: Invalid value: not valid YAML at line 3, column 1: but found another document",
        id="two-documents",
    ),
    pytest.param(
        "1: one\n~: yes\n",
        "bad.yaml: 1: Unknown field\n"
        "bad.yaml: null: Unknown field\n"
        'bad.yaml: apiVersion: Required value: must be "kubescheduler.config.k8s.io/v1"\n'
        'bad.yaml: kind: Required value: must be "KubeSchedulerConfiguration"',
        id="non-string-keys",
    ),
]


@pytest.mark.parametrize(("text", "message"), WRONG_TYPE_META)
def test_bad_document_message(text: str, message: str) -> None:
    assert _error(text, header=False) == message


def test_all_decoding_issues_are_reported_together() -> None:
    message = _error(
        """
        parallelism: many
        profiles:
        - schedulerName: 1
          plugins: {sort: {}}
        extenders: [{urlPrefix: 2, weight: x}]
        """
    )
    assert message.splitlines() == [
        "bad.yaml: profiles[0].schedulerName: Invalid value: 1: expected a string",
        "bad.yaml: profiles[0].plugins.sort: Unknown field",
        "bad.yaml: extenders[0].urlPrefix: Invalid value: 2: expected a string",
        'bad.yaml: extenders[0].weight: Invalid value: "x": expected an integer',
        'bad.yaml: parallelism: Invalid value: "many": expected an integer',
    ]


def test_decoding_issues_stop_before_validation() -> None:
    # parallelism 0 would fail validation, but a decoding issue is reported alone first.
    assert _error("parallelism: 0\nextra: 1\n") == "bad.yaml: extra: Unknown field"


def test_validation_issues_are_all_reported_in_upstream_order() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(FIXTURES / "invalid" / "many-problems.yaml")
    source = str(FIXTURES / "invalid" / "many-problems.yaml")
    assert info.value.source == source
    assert info.value.paths == [
        "parallelism",
        "profiles[0].pluginConfig[1]",
        "profiles[1].percentageOfNodesToScore",
        "profiles[1].schedulerName",
        "podMaxBackoffSeconds",
        "extenders",
    ]
    assert str(info.value).splitlines()[0] == (
        f"{source}: parallelism: Invalid value: 0: should be an integer value greater than zero"
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "duplicate-key.yaml",
            'Duplicate value: "parallelism": mapping key repeated at line 4, column 1',
        ),
        (
            "v1beta3.yaml",
            'apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3": '
            'supported values: "kubescheduler.config.k8s.io/v1"',
        ),
        (
            "not-yaml.yaml",
            "Invalid value: not valid YAML at line 4, column 1: did not find expected node content",
        ),
    ],
)
def test_invalid_fixture_files_name_the_file(name: str, message: str) -> None:
    path = FIXTURES / "invalid" / name
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: {message}"
