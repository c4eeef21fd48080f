"""API validation on load, as kube-apiserver validates on create: upstream's messages and paths."""

from __future__ import annotations

from typing import Any

import pytest

from schedframe.errors import ManifestError
from schedframe.objects import from_dict, loads_manifests
from schedframe.testing.builders import lenient_from_dict

_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
    "[a-z0-9])?)*')"
)
_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def pod(**spec: Any) -> dict[str, Any]:
    spec.setdefault("containers", [{"name": "c"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def container(**fields: Any) -> dict[str, Any]:
    return {"name": "c", **fields}


def node(**status: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": status}


def pdb(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b"},
        "spec": spec,
    }


CASES = [
    pytest.param(
        pod(containers=[container(resources={"requests": {"cpu": "-100"}})]),
        [
            'spec.containers[0].resources.requests[cpu]: Invalid value: "-100": '
            "must be greater than or equal to 0"
        ],
        id="negative cpu request",
    ),
    pytest.param(
        pod(containers=[container(resources={"limits": {"memory": "-1Gi"}})]),
        [
            'spec.containers[0].resources.limits[memory]: Invalid value: "-1Gi": '
            "must be greater than or equal to 0",
            'spec.containers[0].resources.requests[memory]: Invalid value: "-1Gi": '
            "must be greater than or equal to 0",
        ],
        id="negative memory limit, defaulted into the request",
    ),
    pytest.param(
        pod(containers=[container(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})]),
        [
            'spec.containers[0].resources.requests: Invalid value: "2": '
            "must be less than or equal to cpu limit of 1"
        ],
        id="request above limit",
    ),
    pytest.param(
        pod(
            containers=[
                container(
                    resources={
                        "requests": {"example.com/gpu": "500m"},
                        "limits": {"example.com/gpu": "500m"},
                    }
                )
            ]
        ),
        [
            "spec.containers[0].resources.limits[example.com/gpu]: Invalid value: 500m: "
            "must be an integer",
            "spec.containers[0].resources.requests[example.com/gpu]: Invalid value: 500m: "
            "must be an integer",
        ],
        id="fractional extended resource",
    ),
    pytest.param(
        pod(containers=[container(resources={"requests": {"example.com/gpu": "1"}})]),
        [
            "spec.containers[0].resources.limits: Required value: "
            "Limit must be set for non overcommitable resources"
        ],
        id="extended resource without a limit",
    ),
    pytest.param(
        pod(
            containers=[
                container(
                    resources={
                        "requests": {"example.com/gpu": "1"},
                        "limits": {"example.com/gpu": "2"},
                    }
                )
            ]
        ),
        [
            'spec.containers[0].resources.requests: Invalid value: "1": '
            "must be equal to example.com/gpu limit of 2"
        ],
        id="extended resource request below its limit",
    ),
    pytest.param(
        pod(containers=[container(resources={"requests": {"gpu": "1"}})]),
        [
            'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": '
            "must be a standard resource type or fully qualified",
            'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": '
            "must be a standard resource for containers",
        ],
        id="unprefixed unknown resource",
    ),
    pytest.param(
        pod(containers=[container(resources={"requests": {"pods": "1"}})]),
        [
            'spec.containers[0].resources.requests[pods]: Invalid value: "pods": '
            "must be a standard resource for containers"
        ],
        id="pods is not a container resource",
    ),
    pytest.param(pod(containers=[]), ["spec.containers: Required value"], id="no containers"),
    pytest.param(
        {"kind": "Pod", "metadata": {"name": "p"}},
        ["spec.containers: Required value"],
        id="no spec",
    ),
    pytest.param(
        pod(containers=[container(), container()], initContainers=[container()]),
        [
            'spec.containers[1].name: Duplicate value: "c"',
            'spec.initContainers[0].name: Duplicate value: "c"',
        ],
        id="duplicate container names",
    ),
    pytest.param(
        pod(containers=[{"name": "Web_1"}, {"image": "x"}]),
        [
            f'spec.containers[0].name: Invalid value: "Web_1": {_LABEL}',
            "spec.containers[1].name: Required value",
        ],
        id="bad and missing container names",
    ),
    pytest.param(
        pod(
            containers=[
                container(ports=[{"containerPort": 80, "hostPort": 8080}]),
                {"name": "d", "ports": [{"containerPort": 81, "hostPort": 8080}]},
            ]
        ),
        ['spec.containers[1].ports[0].hostPort: Duplicate value: "8080/TCP"'],
        id="host port claimed twice",
    ),
    pytest.param(
        pod(containers=[container(ports=[{"containerPort": 2**40}])]),
        [
            "spec.containers[0].ports[0].containerPort: Invalid value: 1099511627776: "
            "must fit in int32 (between -2147483648 and 2147483647)"
        ],
        id="containerPort overflows int32, reported once",
    ),
    pytest.param(
        pod(
            topologySpreadConstraints=[
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                {
                    "maxSkew": 2,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "minDomains": 2,
                },
                {
                    "maxSkew": 1,
                    "topologyKey": "node",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "minDomains": 3,
                },
            ]
        ),
        [
            "spec.topologySpreadConstraints[1].{topologyKey, whenUnsatisfiable}: "
            'Duplicate value: "{zone, DoNotSchedule}"',
            "spec.topologySpreadConstraints[2].minDomains: Invalid value: 3: "
            "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
        ],
        id="spread constraints repeated, minDomains with ScheduleAnyway",
    ),
    pytest.param(
        pod(
            nodeName="Node_1",
            schedulerName="my scheduler",
            schedulingGates=[{"name": "example.com/wait"}, {"name": "example.com/wait"}],
        ),
        [
            f'spec.nodeName: Invalid value: "Node_1": {_SUBDOMAIN}',
            f'spec.schedulerName: Invalid value: "my scheduler": {_SUBDOMAIN}',
            'spec.schedulingGates[1].name: Duplicate value: "example.com/wait"',
        ],
        id="bad node and scheduler names, a gate twice",
    ),
    pytest.param(
        pod(priority=2**31),
        [
            "spec.priority: Invalid value: 2147483648: "
            "must fit in int32 (between -2147483648 and 2147483647)"
        ],
        id="priority overflows int32",
    ),
    pytest.param(
        pod(
            topologySpreadConstraints=[
                {
                    "maxSkew": 2**31,
                    "minDomains": 2**32,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                }
            ]
        ),
        [
            "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 2147483648: "
            "must fit in int32 (between -2147483648 and 2147483647)",
            "spec.topologySpreadConstraints[0].minDomains: Invalid value: 4294967296: "
            "must fit in int32 (between -2147483648 and 2147483647)",
        ],
        id="maxSkew and minDomains overflow int32",
    ),
    pytest.param(
        pod(
            tolerations=[
                {
                    "key": "k",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 2**63,
                }
            ]
        ),
        [
            "spec.tolerations[0].tolerationSeconds: Invalid value: 9223372036854775808: "
            "must fit in int64 (between -9223372036854775808 and 9223372036854775807)"
        ],
        id="tolerationSeconds overflows int64",
    ),
    pytest.param(
        pod(
            tolerations=[
                {
                    "key": "k",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 2**31,
                }
            ]
        ),
        [],
        id="tolerationSeconds is int64",
    ),
    pytest.param(
        {"kind": "Pod", "metadata": {"name": "Web-1"}, "spec": {"containers": [{"name": "c"}]}},
        [f'metadata.name: Invalid value: "Web-1": {_SUBDOMAIN}'],
        id="pod name not a DNS subdomain",
    ),
    pytest.param(
        {
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "a.b"},
            "spec": {"containers": [{"name": "c"}]},
        },
        ['metadata.namespace: Invalid value: "a.b": must not contain dots'],
        id="namespace not a DNS label",
    ),
    pytest.param(
        {"kind": "Namespace", "metadata": {"name": "team.a"}},
        ['metadata.name: Invalid value: "team.a": must not contain dots'],
        id="namespace name not a DNS label",
    ),
    pytest.param(
        {"kind": "Node", "metadata": {"name": "Node_1"}},
        [f'metadata.name: Invalid value: "Node_1": {_SUBDOMAIN}'],
        id="node name not a DNS subdomain",
    ),
    pytest.param(
        {
            "kind": "Pod",
            "metadata": {"name": "p", "labels": {"app": "-web"}},
            "spec": {"containers": [{"name": "c"}], "nodeSelector": {"/zone": "a"}},
        },
        [
            'metadata.labels: Invalid value: "-web": a valid label must be an empty string or '
            "consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
            "an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
            "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            'spec.nodeSelector: Invalid value: "/zone": prefix part must be non-empty',
        ],
        id="bad label value and node selector key",
    ),
    pytest.param(
        pod(overhead={"cpu": "-1"}),
        ['spec.overhead[cpu]: Invalid value: "-1": must be greater than or equal to 0'],
        id="negative overhead",
    ),
    pytest.param(
        node(allocatable={"cpu": "-4", "pods": "110"}, capacity={"example.com/fpga": "1.5"}),
        [
            "status.capacity.example.com/fpga: Invalid value: 1500m: must be an integer",
            'status.allocatable.cpu: Invalid value: "-4": must be greater than or equal to 0',
        ],
        id="negative allocatable and fractional extended capacity",
    ),
    pytest.param(
        {
            "kind": "Node",
            "metadata": {"name": "n"},
            "spec": {"taints": [{"key": "a/b/c", "value": "-x", "effect": "NoSchedule"}]},
        },
        [
            'spec.taints[0].key: Invalid value: "a/b/c": a qualified name must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
            "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional "
            "DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
            'spec.taints[0].value: Invalid value: "-x": a valid label must be an empty string '
            "or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
            "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ],
        id="bad taint key and value",
    ),
    pytest.param(
        pdb(maxUnavailable="1000%"),
        ['spec.maxUnavailable: Invalid value: "1000%": must not be greater than 100%'],
        id="PDB maxUnavailable above 100%",
    ),
    pytest.param(pdb(minAvailable="100%"), [], id="PDB minAvailable at 100%"),
]


@pytest.mark.parametrize(("doc", "expected"), CASES)
def test_the_api_servers_rules(doc: dict[str, Any], expected: list[str]) -> None:
    if not expected:
        from_dict(doc)
        return
    with pytest.raises(ManifestError) as info:
        from_dict(doc)
    assert str(info.value).splitlines() == expected


@pytest.mark.parametrize(("doc", "expected"), [c for c in CASES if "overflow" not in str(c.id)])
def test_the_lenient_decoder_skips_them(doc: dict[str, Any], expected: list[str]) -> None:
    lenient_from_dict(doc)


def test_negative_cpu_no_longer_lets_pods_overcommit_a_node() -> None:
    """Regression: with cpu "-100" in a pod, two 50-CPU pods bound on a 4-CPU node."""
    text = """\
kind: Pod
metadata: {name: negative}
spec:
  nodeName: n
  containers: [{name: c, resources: {requests: {cpu: "-100"}}}]
"""
    with pytest.raises(ManifestError, match=r"requests\[cpu\]: Invalid value: \"-100\""):
        loads_manifests(text, source="cluster.yaml")
