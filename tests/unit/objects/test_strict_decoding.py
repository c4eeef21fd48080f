"""Strict decoding, as ``kubectl --validate=strict``: unknown fields are errors with paths."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedframe.errors import ManifestError, ManifestWarning
from schedframe.objects import (
    Pod,
    from_dict,
    load_manifests,
    loads_manifests,
    node_from_dict,
    pod_from_dict,
)
from schedframe.testing.builders import lenient_from_dict

# A pod as `kubectl get pod -o yaml` prints it from a v1.34 cluster: every part the scheduler
# ignores (managedFields, probes, env, mounts, security contexts, status) must be accepted.
REAL_POD = """\
apiVersion: v1
kind: Pod
metadata:
  annotations: {kubectl.kubernetes.io/restartedAt: "2024-05-01T10:00:00Z"}
  creationTimestamp: "2024-05-01T10:00:01Z"
  generateName: web-7d9c8b6f5d-
  generation: 1
  labels: {app: web, pod-template-hash: 7d9c8b6f5d}
  managedFields:
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {"f:metadata": {"f:generateName": {}}}
    manager: kube-controller-manager
    operation: Update
    time: "2024-05-01T10:00:01Z"
  name: web-7d9c8b6f5d-x2x4q
  namespace: shop
  ownerReferences:
  - apiVersion: apps/v1
    blockOwnerDeletion: true
    controller: true
    kind: ReplicaSet
    name: web-7d9c8b6f5d
    uid: 0e1c3c8e-1111-2222-3333-444455556666
  resourceVersion: "123456"
  uid: 6f0b7c1e-aaaa-bbbb-cccc-ddddeeeeffff
spec:
  automountServiceAccountToken: false
  containers:
  - args: ["--port=8080"]
    command: ["/web"]
    env:
    - {name: MODE, value: prod}
    - name: POD_IP
      valueFrom: {fieldRef: {apiVersion: v1, fieldPath: status.podIP}}
    envFrom: [{configMapRef: {name: web-config}}]
    image: registry.example.com/web:1.2.3
    imagePullPolicy: IfNotPresent
    lifecycle: {preStop: {exec: {command: [sleep, "5"]}}}
    livenessProbe:
      failureThreshold: 3
      httpGet: {path: /healthz, port: 8080, scheme: HTTP}
      periodSeconds: 10
    name: web
    ports:
    - {containerPort: 8080, name: http, protocol: TCP}
    readinessProbe: {tcpSocket: {port: 8080}}
    resizePolicy: [{resourceName: cpu, restartPolicy: NotRequired}]
    resources:
      limits: {memory: 512Mi}
      requests: {cpu: 250m, memory: 256Mi}
    securityContext:
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
      readOnlyRootFilesystem: true
    startupProbe: {exec: {command: [cat, /ready]}}
    terminationMessagePath: /dev/termination-log
    terminationMessagePolicy: File
    volumeMounts:
    - {mountPath: /data, name: data}
    - {mountPath: /var/run/secrets/kubernetes.io/serviceaccount, name: kube-api-access, readOnly: true}
  dnsPolicy: ClusterFirst
  enableServiceLinks: true
  initContainers:
  - image: busybox
    name: init
    resources: {}
    terminationMessagePath: /dev/termination-log
    terminationMessagePolicy: File
  nodeName: node-a
  preemptionPolicy: PreemptLowerPriority
  priority: 0
  restartPolicy: Always
  schedulerName: default-scheduler
  securityContext: {fsGroup: 2000, runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
  serviceAccount: web
  serviceAccountName: web
  terminationGracePeriodSeconds: 30
  tolerations:
  - {effect: NoExecute, key: node.kubernetes.io/not-ready, operator: Exists, tolerationSeconds: 300}
  - {effect: NoExecute, key: node.kubernetes.io/unreachable, operator: Exists, tolerationSeconds: 300}
  topologySpreadConstraints:
  - labelSelector: {matchLabels: {app: web}}
    maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: ScheduleAnyway
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: web-data, readOnly: false}
  - name: kube-api-access
    projected:
      defaultMode: 420
      sources:
      - serviceAccountToken: {expirationSeconds: 3607, path: token}
  - configMap: {name: web-config}
    name: config
status:
  conditions:
  - {lastProbeTime: null, lastTransitionTime: "2024-05-01T10:00:05Z", status: "True", type: PodScheduled}
  containerStatuses:
  - containerID: containerd://abc
    image: registry.example.com/web:1.2.3
    imageID: registry.example.com/web@sha256:0
    lastState: {}
    name: web
    ready: true
    restartCount: 0
    started: true
    state: {running: {startedAt: "2024-05-01T10:00:07Z"}}
  hostIP: 10.0.0.5
  hostIPs: [{ip: 10.0.0.5}]
  phase: Running
  podIP: 10.244.1.17
  podIPs: [{ip: 10.244.1.17}]
  qosClass: Burstable
  startTime: "2024-05-01T10:00:05Z"
"""

REAL_NODE = """\
apiVersion: v1
kind: Node
metadata:
  annotations: {node.alpha.kubernetes.io/ttl: "0", volumes.kubernetes.io/controller-managed-attach-detach: "true"}
  creationTimestamp: "2024-04-01T00:00:00Z"
  labels:
    kubernetes.io/arch: amd64
    kubernetes.io/hostname: node-a
    kubernetes.io/os: linux
    topology.kubernetes.io/zone: eu-west-1a
  managedFields: [{manager: kubelet, operation: Update, apiVersion: v1}]
  name: node-a
  resourceVersion: "999"
  uid: 11111111-2222-3333-4444-555555555555
spec:
  podCIDR: 10.244.1.0/24
  podCIDRs: [10.244.1.0/24]
  providerID: aws:///eu-west-1a/i-0123
  taints: [{effect: NoSchedule, key: dedicated, value: web}]
status:
  addresses: [{address: 10.0.0.5, type: InternalIP}, {address: node-a, type: Hostname}]
  allocatable: {cpu: 3920m, ephemeral-storage: "95551679124", hugepages-2Mi: "0", memory: 15208324Ki, pods: "110"}
  capacity: {cpu: "4", ephemeral-storage: 103682020Ki, hugepages-2Mi: "0", memory: 16335748Ki, pods: "110"}
  conditions:
  - {lastHeartbeatTime: "2024-05-01T10:00:00Z", lastTransitionTime: "2024-04-01T00:01:00Z", message: kubelet is posting ready status, reason: KubeletReady, status: "True", type: Ready}
  daemonEndpoints: {kubeletEndpoint: {Port: 10250}}
  features: {supplementalGroupsPolicy: true}
  images:
  - names: [registry.example.com/web@sha256:0, registry.example.com/web:1.2.3]
    sizeBytes: 52000000
  nodeInfo: {architecture: amd64, kubeletVersion: v1.34.1, osImage: Ubuntu 24.04}
  runtimeHandlers: [{name: runc, features: {recursiveReadOnlyMounts: true}}]
  volumesAttached: [{devicePath: "", name: kubernetes.io/csi/ebs.csi.aws.com^vol-1}]
  volumesInUse: [kubernetes.io/csi/ebs.csi.aws.com^vol-1]
"""

REAL_PDB = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop, generation: 1, resourceVersion: "5"}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: web}}
  unhealthyPodEvictionPolicy: AlwaysAllow
status:
  conditions: [{type: DisruptionAllowed, status: "True", reason: SufficientPods, message: "", lastTransitionTime: "2024-05-01T10:00:00Z", observedGeneration: 1}]
  currentHealthy: 3
  desiredHealthy: 2
  disruptionsAllowed: 1
  expectedPods: 3
  observedGeneration: 1
"""

REAL_NAMESPACE = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {kubernetes.io/metadata.name: shop}}
spec: {finalizers: [kubernetes]}
status: {phase: Active}
"""


def _doc(text: str) -> dict[str, Any]:
    doc = yaml.safe_load(text)
    assert isinstance(doc, dict)
    return doc


def _messages(exc: pytest.ExceptionInfo[ManifestError]) -> list[str]:
    return str(exc.value).splitlines()


@pytest.mark.parametrize("text", [REAL_POD, REAL_NODE, REAL_PDB, REAL_NAMESPACE])
def test_a_real_kubectl_dump_decodes_strictly(text: str) -> None:
    doc = _doc(text)
    assert type(from_dict(doc)).__name__ == doc["kind"]


def test_a_real_list_dump_decodes_strictly() -> None:
    listing = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [_doc(t) for t in (REAL_NAMESPACE, REAL_NODE, REAL_POD, REAL_PDB)],
        "metadata": {"resourceVersion": ""},
    }
    objects = loads_manifests(json.dumps(listing))
    assert [type(o).__name__ for o in objects] == [
        "Namespace",
        "Node",
        "Pod",
        "PodDisruptionBudget",
    ]


@pytest.mark.parametrize(
    ("text", "where", "path"),
    [
        (REAL_POD, ("spec",), "spec.nodeSelecter"),
        (REAL_POD, ("spec", "containers", 0), "spec.containers[0].resouces"),
        (REAL_POD, ("spec", "containers", 0, "resources"), "spec.containers[0].resources.limts"),
        (REAL_POD, ("spec", "containers", 0, "ports", 0), "spec.containers[0].ports[0].hostIp"),
        (REAL_POD, ("spec", "tolerations", 1), "spec.tolerations[1].tolerationSecond"),
        (
            REAL_POD,
            ("spec", "topologySpreadConstraints", 0, "labelSelector"),
            "spec.topologySpreadConstraints[0].labelSelector.matchLabel",
        ),
        (
            REAL_POD,
            ("spec", "volumes", 0, "persistentVolumeClaim"),
            "spec.volumes[0].persistentVolumeClaim.claimname",
        ),
        (REAL_POD, ("metadata",), "metadata.label"),
        (REAL_POD, ("metadata", "ownerReferences", 0), "metadata.ownerReferences[0].controler"),
        (REAL_POD, ("status",), "status.nominatedNode"),
        (REAL_POD, ("status", "conditions", 0), "status.conditions[0].lastTransition"),
        (REAL_POD, (), "spek"),
        (REAL_NODE, ("status",), "status.allocatabel"),
        (REAL_NODE, ("spec",), "spec.unschedulabel"),
        (REAL_NODE, ("spec", "taints", 0), "spec.taints[0].efect"),
        (REAL_NODE, ("status", "images", 0), "status.images[0].size"),
        (REAL_NODE, ("status", "conditions", 0), "status.conditions[0].lastHeartbeat"),
        (REAL_PDB, ("spec",), "spec.minAvailible"),
        (REAL_PDB, ("status",), "status.disruptionAllowed"),
        (REAL_NAMESPACE, (), "specs"),
    ],
)
def test_an_unknown_field_is_an_error_naming_its_path(
    text: str, where: tuple[str | int, ...], path: str
) -> None:
    doc = _doc(text)
    target: Any = doc
    for step in where:
        target = target[step]
    target[path.rsplit(".", 1)[-1]] = {"x": 1}
    with pytest.raises(ManifestError) as exc:
        from_dict(doc, source="dump.yaml")
    assert _messages(exc) == [f"dump.yaml: {path}: Unknown field"]


def test_affinity_is_checked_key_by_key() -> None:
    doc = _doc(REAL_POD)
    doc["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "a", "operator": "In", "values": ["b"], "valus": []}
                        ]
                    }
                ]
            },
            "preferredDuringScheduling": [],
        },
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "zone", "labelSelector": {"matchLabels": {}}, "namespace": "x"}
            ]
        },
    }
    with pytest.raises(ManifestError) as exc:
        pod_from_dict(doc)
    assert sorted(exc.value.paths) == [
        "spec.affinity.nodeAffinity.preferredDuringScheduling",
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].valus",
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespace",
    ]


def test_every_unknown_field_is_reported_with_the_other_issues() -> None:
    doc = _doc(REAL_NODE)
    doc["status"]["allocatabel"] = {"cpu": "4"}
    doc["spec"]["taints"][0]["effect"] = "Sometimes"
    with pytest.raises(ManifestError) as exc:
        node_from_dict(doc)
    assert exc.value.paths == ["spec.taints[0].effect", "status.allocatabel"]


def test_a_key_that_is_not_a_string_is_unknown() -> None:
    doc = _doc(REAL_POD)
    doc["spec"][1] = "one"
    with pytest.raises(ManifestError) as exc:
        pod_from_dict(doc)
    assert exc.value.paths == ["spec.1"]


def test_open_maps_take_any_key() -> None:
    doc = _doc(REAL_POD)
    doc["metadata"]["labels"]["anything.example.com/goes"] = "x"
    doc["spec"]["nodeSelector"] = {"whatever": "x"}
    doc["spec"]["containers"][0]["resources"]["requests"]["example.com/foo"] = "1"
    doc["spec"]["containers"][0]["resources"]["limits"]["example.com/foo"] = "1"
    assert pod_from_dict(doc).spec.node_selector == {"whatever": "x"}


def test_items_of_a_list_are_named_by_index(tmp_path: Path) -> None:
    node = _doc(REAL_NODE)
    pod = _doc(REAL_POD)
    pod["spec"]["nodeSelecter"] = {}
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node, pod]}))
    with pytest.raises(ManifestError) as exc:
        load_manifests(path)
    assert _messages(exc) == [f"{path}: items[1].spec.nodeSelecter: Unknown field"]


def test_a_duplicated_field_is_an_error_in_yaml_and_json(tmp_path: Path) -> None:
    yaml_file = tmp_path / "pod.yaml"
    yaml_file.write_text("kind: Pod\nmetadata: {name: a}\nspec: {}\nspec: {}\n")
    with pytest.raises(ManifestError, match="spec"):
        load_manifests(yaml_file)
    json_file = tmp_path / "pod.json"
    json_file.write_text('{"kind": "Pod", "metadata": {"name": "a"}, "spec": {}, "spec": {}}')
    with pytest.raises(ManifestError, match=r"Duplicate value: \"spec\""):
        load_manifests(json_file)


def test_warn_decodes_and_warns_once_per_unknown_field(tmp_path: Path) -> None:
    doc = _doc(REAL_POD)
    doc["spec"]["nodeSelecter"] = {"a": "b"}
    doc["spec"]["containers"][0]["resouces"] = {}
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(doc))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (pod,) = load_manifests(path, validate="warn")
    assert isinstance(pod, Pod)
    assert [str(w.message) for w in caught] == [
        f"{path}: spec.nodeSelecter: Unknown field",
        f"{path}: spec.containers[0].resouces: Unknown field",
    ]
    assert all(w.category is ManifestWarning for w in caught)


def test_ignore_decodes_silently() -> None:
    doc = _doc(REAL_POD)
    doc["spec"]["nodeSelecter"] = {"a": "b"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pod = pod_from_dict(doc, validate="ignore")
    assert pod.name == "web-7d9c8b6f5d-x2x4q"


def test_ignore_still_reports_wrong_types() -> None:
    doc = _doc(REAL_POD)
    doc["spec"]["priority"] = "high"
    with pytest.raises(ManifestError, match="spec.priority"):
        pod_from_dict(doc, validate="ignore")


def test_an_unknown_mode_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="'strict', 'warn' or 'ignore'"):
        pod_from_dict(_doc(REAL_POD), validate="lenient")  # type: ignore[arg-type]


def test_the_lenient_decoder_skips_unknown_fields() -> None:
    doc = _doc(REAL_POD)
    doc["spec"]["nodeSelecter"] = {"a": "b"}
    pod = lenient_from_dict(doc)
    assert isinstance(pod, Pod)


def test_decoding_does_not_change_its_input() -> None:
    doc = _doc(REAL_POD)
    before = copy.deepcopy(doc)
    pod_from_dict(doc)
    assert doc == before


_MODELS = {
    "V1ObjectMeta": ("metadata",),
    "V1PodSpec": ("spec",),
    "V1PodStatus": ("status",),
    "V1Container": ("spec", "containers", 0),
    "V1ResourceRequirements": ("spec", "containers", 0, "resources"),
    "V1Volume": ("spec", "volumes", 0),
    "V1PodCondition": ("status", "conditions", 0),
    "V1Toleration": ("spec", "tolerations", 0),
    "V1TopologySpreadConstraint": ("spec", "topologySpreadConstraints", 0),
    "V1ContainerPort": ("spec", "containers", 0, "ports", 0),
    "V1OwnerReference": ("metadata", "ownerReferences", 0),
}


@pytest.mark.parametrize("model", sorted(_MODELS))
def test_every_field_of_the_kubernetes_client_models_is_accepted(model: str) -> None:
    """The official Python client's models list every API field; none may be unknown."""
    client = pytest.importorskip("kubernetes.client")
    names = getattr(client, model).attribute_map.values()
    doc = _doc(REAL_POD)
    target: Any = doc
    for step in _MODELS[model]:
        target = target[step]
    missing = []
    for name in names:
        probe = copy.deepcopy(doc)
        t: Any = probe
        for step in _MODELS[model]:
            t = t[step]
        if name in t:
            continue
        t[name] = None  # null is "unset" for every field: only the name is under test
        try:
            pod_from_dict(probe)
        except ManifestError as exc:
            if any(i.kind == "Unknown field" for i in exc.issues):
                missing.append(name)
    assert missing == []


@pytest.mark.parametrize(
    ("model", "where"),
    [
        ("V1NodeSpec", ("spec",)),
        ("V1NodeStatus", ("status",)),
        ("V1NodeCondition", ("status", "conditions", 0)),
        ("V1Taint", ("spec", "taints", 0)),
        ("V1ContainerImage", ("status", "images", 0)),
    ],
)
def test_every_node_field_of_the_client_models_is_accepted(
    model: str, where: tuple[str | int, ...]
) -> None:
    client = pytest.importorskip("kubernetes.client")
    doc = _doc(REAL_NODE)
    target: Any = doc
    for step in where:
        target = target[step]
    for name in getattr(client, model).attribute_map.values():
        target.setdefault(name, None)
    node_from_dict(doc)


REAL_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, generation: 3, annotations: {deployment.kubernetes.io/revision: "2"}}
spec:
  progressDeadlineSeconds: 600
  replicas: 2
  revisionHistoryLimit: 10
  selector: {matchLabels: {app: web}}
  strategy: {rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}, type: RollingUpdate}
  template:
    metadata: {creationTimestamp: null, labels: {app: web}}
    spec:
      containers:
      - image: nginx
        imagePullPolicy: Always
        name: web
        resources: {requests: {cpu: 100m}}
      dnsPolicy: ClusterFirst
      restartPolicy: Always
status: {availableReplicas: 2, observedGeneration: 3, readyReplicas: 2, replicas: 2}
"""
REAL_SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  clusterIP: 10.96.0.12
  clusterIPs: [10.96.0.12]
  internalTrafficPolicy: Cluster
  ipFamilies: [IPv4]
  ipFamilyPolicy: SingleStack
  ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080}]
  selector: {app: web}
  sessionAffinity: None
  type: ClusterIP
status: {loadBalancer: {}}
"""


@pytest.mark.parametrize(
    ("text", "where", "path"),
    [
        (REAL_DEPLOYMENT, ("spec",), "spec.replicaz"),
        (REAL_DEPLOYMENT, ("spec", "template"), "spec.template.specs"),
        (REAL_DEPLOYMENT, ("spec", "template", "spec"), "spec.template.spec.nodeSelecter"),
        (
            REAL_DEPLOYMENT,
            ("spec", "template", "spec", "containers", 0),
            "spec.template.spec.containers[0].resouces",
        ),
        (REAL_SERVICE, ("spec",), "spec.selectr"),
    ],
)
def test_workload_kinds_are_decoded_strictly(
    text: str, where: tuple[str | int, ...], path: str
) -> None:
    doc = _doc(text)
    assert type(from_dict(doc)).__name__ == doc["kind"]
    target: Any = doc
    for step in where:
        target = target[step]
    target[path.rsplit(".", 1)[-1]] = {"x": 1}
    with pytest.raises(ManifestError) as exc:
        from_dict(doc, source="dump.yaml")
    assert _messages(exc) == [f"dump.yaml: {path}: Unknown field"]
