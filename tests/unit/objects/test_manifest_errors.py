"""Bad manifests: each gives one clear ManifestError naming the file, the field path and why."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedframe.errors import ManifestError
from schedframe.objects import from_dict, load_manifests, loads_manifests, pod_from_dict

QUANTITY_RE = "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
NODE_TERM = (
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
)


def node_affinity(expression: str) -> str:
    return f"""
kind: Pod
metadata: {{name: p}}
spec:
  containers: [{{name: c}}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - {expression}
"""


# (manifest, expected error text with "m.yaml: " in front of each issue).
SINGLE_ISSUE_CASES = [
    pytest.param(
        """
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: abc}}
""",
        'spec.containers[0].resources.requests.cpu: Invalid value: "abc": '
        f"quantities must match the regular expression {QUANTITY_RE}",
        id="bad quantity",
    ),
    pytest.param(
        "kind: Pod\nspec:\n  containers:\n  - name: c\n    resources: {limits: {memory: 512mi}}\n"
        "metadata: {name: p}\n",
        'spec.containers[0].resources.limits.memory: Invalid value: "512mi": '
        "unable to parse quantity's suffix",
        id="bad quantity suffix",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {namespace: x}\nspec: {containers: [{name: c}]}\n",
        "metadata.name: Required value",
        id="missing name",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {name: p}\nspec: {containers: abc}\n",
        'spec.containers: Invalid value: "abc": must be a list',
        id="wrong type for a list",
    ),
    pytest.param(
        node_affinity("matchExpressions: [{key: zone, operator: Near, values: [a]}]"),
        f'{NODE_TERM}.matchExpressions[0].operator: Unsupported value: "Near": '
        'supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        id="bad node selector operator",
    ),
    pytest.param(
        node_affinity('matchExpressions: [{key: gen, operator: Gt, values: ["1", "2"]}]'),
        f"{NODE_TERM}.matchExpressions[0].values: Required value: "
        "must be specified single value when `operator` is 'Lt' or 'Gt'",
        id="Gt with two values",
    ),
    pytest.param(
        node_affinity('matchExpressions: [{key: gen, operator: Lt, values: ["new"]}]'),
        f'{NODE_TERM}.matchExpressions[0].values[0]: Invalid value: "new": '
        "for 'Gt', 'Lt' operators, the value must be an integer",
        id="Lt with a word",
    ),
    pytest.param(
        node_affinity("matchFields: [{key: metadata.name, operator: In, values: [a, b]}]"),
        f'{NODE_TERM}.matchFields[0].values: Invalid value: []string{{"a", "b"}}: '
        "must have one element",
        id="field selector with two values",
    ),
    pytest.param(
        node_affinity("matchFields: [{key: metadata.uid, operator: In, values: [a]}]"),
        f'{NODE_TERM}.matchFields[0].key: Unsupported value: "metadata.uid": '
        'supported values: "metadata.name"',
        id="field selector on another field",
    ),
    pytest.param(
        """
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c}]
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchExpressions:
          - {key: app, operator: In}
        topologyKey: zone
""",
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        ".labelSelector.matchExpressions[0].values: Required value: "
        "must be specified when `operator` is 'In' or 'NotIn'",
        id="label selector In without values",
    ),
    pytest.param(
        "kind: Foo\nmetadata: {name: x}\n",
        'kind: Unsupported value: "Foo": supported values: "CSIDriver", "CSINode", '
        '"CSIStorageCapacity", "DaemonSet", "Deployment", "DeviceClass", "Job", '
        '"Namespace", "Node", "PersistentVolume", "PersistentVolumeClaim", "Pod", '
        '"PodDisruptionBudget", "PriorityClass", "ReplicaSet", "ReplicationController", '
        '"ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "Service", '
        '"StatefulSet", "StorageClass", "VolumeAttachment", "Workload"',
        id="unknown kind",
    ),
    pytest.param("metadata: {name: x}\n", "kind: Required value", id="missing kind"),
    pytest.param(
        "kind: Pod\nmetadata:\n  name: a\n  name: b\n",
        'Duplicate value: "name": mapping key repeated at line 4, column 3',
        id="duplicate YAML key",
    ),
    pytest.param(
        "- a\n- b\n",
        "Invalid value: a manifest must be a mapping (a Kubernetes object), not a list",
        id="non-mapping document",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  tolerations:\n  - {key: k, operator: Maybe}\n",
        'spec.tolerations[0].operator: Unsupported value: "Maybe": '
        'supported values: "Equal", "Exists", "Gt", "Lt"',
        id="bad toleration operator",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  tolerations:\n  - {operator: Equal, value: x}\n",
        'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when '
        '`key` is empty, which means "match all values and all keys"',
        id="toleration without key",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  tolerations:\n"
        "  - {key: k, operator: Exists, effect: NoSchedule, tolerationSeconds: 5}\n",
        'spec.tolerations[0].effect: Invalid value: "NoSchedule": '
        "effect must be 'NoExecute' when `tolerationSeconds` is set",
        id="tolerationSeconds without NoExecute",
    ),
    pytest.param(
        "kind: Node\nmetadata: {name: n}\nspec:\n  taints:\n  - {key: k, effect: NoWay}\n",
        'spec.taints[0].effect: Unsupported value: "NoWay": '
        'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
        id="bad taint effect",
    ),
    pytest.param(
        "kind: Node\nmetadata: {name: n}\nspec:\n  taints:\n  - {key: k}\n",
        "spec.taints[0].effect: Required value",
        id="taint without effect",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    ports:\n"
        "    - {containerPort: 80, hostPort: -1}\n",
        "spec.containers[0].ports[0].hostPort: Invalid value: -1: "
        "must be between 1 and 65535, inclusive",
        id="negative host port",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    ports:\n"
        "    - {containerPort: 80, protocol: HTTP}\n",
        'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": '
        'supported values: "SCTP", "TCP", "UDP"',
        id="bad port protocol",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {name: p, creationTimestamp: yesterday}\nspec: {containers: [{name: c}]}\n",
        'metadata.creationTimestamp: Invalid value: "yesterday": '
        'must be an RFC 3339 date-time such as "2024-01-02T03:04:05Z"',
        id="bad datetime",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {name: p, creationTimestamp: 2024-01-02 03:04:05}\nspec: {containers: [{name: c}]}\n",
        'metadata.creationTimestamp: Invalid value: "2024-01-02T03:04:05": '
        "must be an RFC 3339 date-time with a zone",
        id="datetime without a zone",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {name: p, labels: {version: 1}}\nspec: {containers: [{name: c}]}\n",
        "metadata.labels.version: Invalid value: 1: must be a string",
        id="label value that is not a string",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}], priority: true}\n",
        "spec.priority: Invalid value: true: must be an integer",
        id="boolean where an integer belongs",
    ),
    pytest.param(
        "kind: Node\nmetadata: {name: n}\nstatus: {capacity: {cpu: [1]}}\n",
        "status.capacity.cpu: Invalid value: must be a quantity, not a list",
        id="list where a quantity belongs",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}], preemptionPolicy: Sometimes}\n",
        'spec.preemptionPolicy: Unsupported value: "Sometimes": '
        'supported values: "Never", "PreemptLowerPriority"',
        id="bad preemption policy",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  affinity:\n    nodeAffinity:\n"
        "      preferredDuringSchedulingIgnoredDuringExecution:\n      - weight: 101\n"
        "        preference: {matchExpressions: [{key: a, operator: Exists}]}\n",
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
        "Invalid value: 101: must be in the range 1-100",
        id="weight out of range",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n  affinity:\n    podAntiAffinity:\n"
        "      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "      - labelSelector: {matchLabels: {app: a}}\n",
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        ".topologyKey: Required value: can not be empty",
        id="affinity term without topology key",
    ),
    pytest.param(
        node_affinity("matchExpressions: [{key: 'bad key', operator: Exists}]"),
        f'{NODE_TERM}.matchExpressions[0].key: Invalid value: "bad key": name part must consist '
        "of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
        "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        id="invalid label key",
    ),
    pytest.param(
        "kind: PodDisruptionBudget\nmetadata: {name: x}\nspec: {maxUnavailable: five}\n",
        'spec.maxUnavailable: Invalid value: "five": a valid percent string must be a numeric '
        "string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is "
        "'[0-9]+%')",
        id="budget with a bad percentage",
    ),
    pytest.param(
        "kind: Pod\nmetadata: {name: p\n",
        "Invalid value: not valid YAML at line 3, column 1: did not find expected ',' or '}'",
        id="broken YAML",
    ),
]


@pytest.mark.parametrize(("text", "message"), SINGLE_ISSUE_CASES)
def test_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(ManifestError) as info:
        loads_manifests(text, source="m.yaml")
    error = info.value
    assert error.source == "m.yaml"
    assert len(error.issues) == 1
    assert str(error) == f"m.yaml: {message}"


def test_every_issue_of_one_object_is_reported() -> None:
    text = (
        "kind: Pod\nmetadata: {name: p}\n"
        "spec:\n  containers: [{name: c}]\n  priority: x\n  nodeSelector: [a]\n  hostNetwork: 1\n"
        "  topologySpreadConstraints:\n"
        "  - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: Maybe}\n"
    )
    with pytest.raises(ManifestError) as info:
        loads_manifests(text, source="pods.yaml")
    assert str(info.value).splitlines() == [
        'pods.yaml: spec.priority: Invalid value: "x": must be an integer',
        "pods.yaml: spec.nodeSelector: Invalid value: must be a mapping, not a list",
        "pods.yaml: spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: "
        "must be greater than zero",
        "pods.yaml: spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "
        '"Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"',
        "pods.yaml: spec.hostNetwork: Invalid value: 1: must be a boolean",
    ]


def test_multi_document_errors_name_the_document() -> None:
    text = (
        "kind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n---\n"
        "kind: Pod\nmetadata: {name: b}\nspec: {containers: [{name: c}], priority: high}\n"
    )
    with pytest.raises(ManifestError) as info:
        loads_manifests(text, source="two.yaml")
    assert info.value.source == "two.yaml#1"
    assert str(info.value) == 'two.yaml#1: spec.priority: Invalid value: "high": must be an integer'


def test_list_item_errors_carry_the_item_path() -> None:
    text = "kind: List\nitems:\n- kind: Node\n  metadata: {name: a}\n- kind: Node\n  metadata: {}\n"
    with pytest.raises(ManifestError) as info:
        loads_manifests(text, source="list.yaml")
    assert str(info.value) == "list.yaml: items[1].metadata.name: Required value"
    assert info.value.paths == ["items[1].metadata.name"]


def test_both_budget_bounds() -> None:
    d = {
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "x"},
        "spec": {"minAvailable": 1, "maxUnavailable": "10%"},
    }
    with pytest.raises(ManifestError) as info:
        from_dict(d)
    assert str(info.value) == (
        "spec: Invalid value: minAvailable and maxUnavailable cannot be both set"
    )


def test_pod_from_dict_refuses_another_kind() -> None:
    with pytest.raises(ManifestError) as info:
        pod_from_dict({"kind": "Node", "metadata": {"name": "n"}}, source="x.yaml")
    assert str(info.value) == 'x.yaml: kind: Unsupported value: "Node": supported values: "Pod"'


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ManifestError) as info:
        load_manifests(missing)
    assert str(info.value) == f"{missing}: Not found: no such file or directory"


def test_duplicate_json_key(tmp_path: Path) -> None:
    path = tmp_path / "pod.json"
    path.write_text('{"kind": "Pod", "metadata": {"name": "a", "name": "b"}}')
    with pytest.raises(ManifestError) as info:
        load_manifests(path)
    assert str(info.value) == f'{path}: Duplicate value: "name": mapping key repeated'


def test_broken_json(tmp_path: Path) -> None:
    path = tmp_path / "pod.json"
    path.write_text('{"kind": "Pod",\n "metadata": }')
    with pytest.raises(ManifestError) as info:
        load_manifests(path)
    assert str(info.value) == (
        f"{path}: Invalid value: not valid JSON at line 2, column 14: Expecting value"
    )
