"""Loading kubectl-style manifests (files, multi-document streams, Lists, directories) and
writing objects back as Kubernetes JSON."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from schedframe.objects import (
    CPU,
    MEMORY,
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    NodeAffinity,
    NodeCondition,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodAffinityTerm,
    PodAntiAffinity,
    PodCondition,
    PodDisruptionBudget,
    PodSpec,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
    from_dict,
    load_manifests,
    loads_manifests,
    namespace_from_dict,
    node_from_dict,
    pdb_from_dict,
    pod_from_dict,
    to_dict,
)

MANIFESTS = Path(__file__).parents[2] / "fixtures" / "manifests"
KI, MI, GI = 1024, 1024**2, 1024**3


def t(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


@pytest.fixture(scope="module")
def kubectl_pod() -> Pod:
    (obj,) = load_manifests(MANIFESTS / "pod-kubectl.yaml")
    assert isinstance(obj, Pod)
    return obj


def test_kubectl_pod_metadata(kubectl_pod: Pod) -> None:
    assert kubectl_pod.metadata == ObjectMeta(
        name="web-7d4b9c8f5d-x2x9q",
        namespace="shop",
        uid="7f1d2c3b-4a5e-6f70-8192-a3b4c5d6e7f8",
        labels={"app": "web", "pod-template-hash": "7d4b9c8f5d"},
        annotations={"kubectl.kubernetes.io/restartedAt": "2024-05-01T10:00:00Z"},
        owner_references=(
            OwnerReference(
                api_version="apps/v1",
                kind="ReplicaSet",
                name="web-7d4b9c8f5d",
                uid="0c4e6a9e-3f0e-4d8e-9a8b-2f6b1c1d2e3f",
                controller=True,
            ),
        ),
        creation_timestamp=t("2024-05-01T10:00:03+00:00"),
        resource_version="123456",
        generate_name="web-7d4b9c8f5d-",
    )
    assert kubectl_pod.key == "shop/web-7d4b9c8f5d-x2x9q"


def test_kubectl_pod_containers(kubectl_pod: Pod) -> None:
    nginx, envoy = kubectl_pod.spec.containers
    assert nginx.name == "nginx"
    assert nginx.image == "nginx:1.25"
    assert nginx.requests == {CPU: 250, MEMORY: 256 * MI}
    assert nginx.limits == {CPU: 1000, MEMORY: 512 * MI}
    assert nginx.ports == (
        ContainerPort(container_port=80, name="http"),
        ContainerPort(container_port=9113, host_port=9113),
    )
    # API defaulting: a limit without a request is the request too.
    assert envoy.requests == {CPU: 500, MEMORY: 128 * MI}
    migrate, shipper = kubectl_pod.spec.init_containers
    assert (migrate.requests, migrate.is_restartable_init) == ({CPU: 2000}, False)
    assert (shipper.requests, shipper.is_restartable_init) == ({CPU: 100, MEMORY: 64 * MI}, True)
    # 250m + 500m + 100m sidecar = 850m, below the 2 cpu migrate init container.
    assert kubectl_pod.requests == {CPU: 2000, MEMORY: 448 * MI}
    assert kubectl_pod.host_ports == (("0.0.0.0", "TCP", 9113),)


def test_kubectl_pod_spec(kubectl_pod: Pod) -> None:
    spec = kubectl_pod.spec
    assert (spec.node_name, spec.priority, spec.priority_class_name) == (
        "node-1",
        1000,
        "shop-high",
    )
    assert spec.scheduler_name == "default-scheduler"
    assert spec.preemption_policy == "PreemptLowerPriority"
    assert spec.termination_grace_period_seconds == 30
    assert spec.tolerations == (
        Toleration(
            key="node.kubernetes.io/not-ready",
            operator="Exists",
            effect="NoExecute",
            toleration_seconds=300,
        ),
        Toleration(
            key="node.kubernetes.io/unreachable",
            operator="Exists",
            effect="NoExecute",
            toleration_seconds=300,
        ),
    )
    assert spec.affinity == Affinity(
        node_affinity=NodeAffinity(
            required=NodeSelector(
                node_selector_terms=(
                    NodeSelectorTerm(
                        match_expressions=(
                            NodeSelectorRequirement(
                                key="kubernetes.io/arch", operator="In", values=("amd64", "arm64")
                            ),
                            NodeSelectorRequirement(
                                key="node.kubernetes.io/generation", operator="Gt", values=("3",)
                            ),
                        )
                    ),
                )
            ),
            preferred=(
                PreferredSchedulingTerm(
                    weight=20,
                    preference=NodeSelectorTerm(
                        match_expressions=(
                            NodeSelectorRequirement(
                                key="topology.kubernetes.io/zone", operator="In", values=("zone-a",)
                            ),
                        )
                    ),
                ),
            ),
        ),
        pod_anti_affinity=PodAntiAffinity(
            preferred=(
                WeightedPodAffinityTerm(
                    weight=100,
                    term=PodAffinityTerm(
                        label_selector=LabelSelector(match_labels={"app": "web"}),
                        topology_key="kubernetes.io/hostname",
                    ),
                ),
            )
        ),
    )
    assert spec.topology_spread_constraints == (
        TopologySpreadConstraint(
            max_skew=1,
            topology_key="topology.kubernetes.io/zone",
            when_unsatisfiable="ScheduleAnyway",
            label_selector=LabelSelector(match_labels={"app": "web"}),
        ),
    )
    assert spec.volumes == (
        Volume(name="data", persistent_volume_claim="web-data"),
        Volume(name="kube-api-access-abcde"),
    )
    assert kubectl_pod.has_affinity
    assert not kubectl_pod.has_required_anti_affinity


def test_kubectl_pod_status(kubectl_pod: Pod) -> None:
    status = kubectl_pod.status
    assert status.phase == "Running"
    assert status.start_time == t("2024-05-01T10:00:03+00:00")
    assert status.conditions == (
        PodCondition(
            type="Initialized", status="True", last_transition_time=t("2024-05-01T10:00:05+00:00")
        ),
        PodCondition(
            type="PodScheduled", status="True", last_transition_time=t("2024-05-01T10:00:03+00:00")
        ),
    )


def test_kubectl_node() -> None:
    (node,) = load_manifests(MANIFESTS / "node-kubectl.yaml")
    assert isinstance(node, Node)
    assert node.name == "node-1"
    assert node.uid == "5b8a4c2e-1d3f-4e5a-8b7c-9d0e1f2a3b4c"
    assert node.labels["topology.kubernetes.io/zone"] == "zone-a"
    assert node.spec.pod_cidr == "10.244.1.0/24"
    assert node.taints == (
        Taint(key="dedicated", value="shop", effect="PreferNoSchedule"),
        Taint(
            key="node.kubernetes.io/disk-pressure",
            effect="NoSchedule",
            time_added=t("2024-05-01T09:59:00+00:00"),
        ),
    )
    assert node.allocatable == {
        CPU: 3800,
        "ephemeral-storage": 95551679124,
        "hugepages-2Mi": 0,
        MEMORY: 7901888 * KI,
        "nvidia.com/gpu": 2,
        "pods": 110,
    }
    assert node.status.capacity[MEMORY] == 8004288 * KI
    assert node.status.capacity["ephemeral-storage"] == 103676272 * KI
    assert node.status.conditions == (
        NodeCondition(
            type="MemoryPressure",
            status="False",
            reason="KubeletHasSufficientMemory",
            message="kubelet has sufficient memory available",
        ),
        NodeCondition(
            type="Ready",
            status="True",
            reason="KubeletReady",
            message="kubelet is posting ready status",
        ),
    )
    assert node.status.images == (
        ContainerImage(
            names=("docker.io/library/nginx@sha256:abcd", "docker.io/library/nginx:1.25"),
            size_bytes=70549612,
        ),
        ContainerImage(names=("registry.k8s.io/pause:3.9",), size_bytes=321520),
    )
    assert not node.unschedulable


def test_multi_document_file() -> None:
    ns, pod, pdb = load_manifests(str(MANIFESTS / "multi.yaml"))
    assert ns == Namespace(metadata=ObjectMeta(name="team-a", uid="team-a", labels={"team": "a"}))
    assert isinstance(pod, Pod)
    assert (pod.namespace, pod.uid) == ("team-a", "team-a/worker")
    assert pod.requests == {CPU: 500, MEMORY: GI}  # "cpu: 0.5" is a YAML float
    assert pdb == PodDisruptionBudget(
        metadata=ObjectMeta(name="worker-pdb", namespace="team-a", uid="team-a/worker-pdb"),
        selector=LabelSelector(match_labels={"app": "worker"}),
        min_available="50%",
        disruptions_allowed=1,
        disrupted_pods={"worker-old": t("2024-05-01T10:00:00+00:00")},
    )


def test_list_file_is_flattened_and_allocatable_defaults_to_capacity() -> None:
    small, big = load_manifests(MANIFESTS / "list.yaml")
    assert isinstance(small, Node) and isinstance(big, Node)
    assert small.allocatable == {CPU: 2000, MEMORY: 4 * GI, "pods": 110}
    assert small.allocatable == small.status.capacity
    assert big.allocatable == {CPU: 63500, MEMORY: 250 * GI, "pods": 250}
    assert big.unschedulable


def test_directory_loads_manifest_files_in_name_order() -> None:
    objects = load_manifests(MANIFESTS / "dir")
    assert [(type(o).__name__, o.metadata.name) for o in objects] == [  # type: ignore[attr-defined]
        ("Node", "dir-node"),
        ("Pod", "json-a"),
        ("Pod", "json-b"),
        ("Pod", "yml-pod"),
    ]
    json_b = objects[2]
    assert isinstance(json_b, Pod)
    assert json_b.key == "ops/json-b"
    assert json_b.requests == {MEMORY: GI}
    yml_pod = objects[3]
    assert isinstance(yml_pod, Pod)
    assert yml_pod.spec.scheduling_gates == ("example.com/wait",)
    assert yml_pod.is_scheduling_gated


@pytest.mark.parametrize(
    "name", ["pod-kubectl.yaml", "node-kubectl.yaml", "multi.yaml", "list.yaml", "dir"]
)
def test_fixtures_round_trip(name: str) -> None:
    for obj in load_manifests(MANIFESTS / name):
        assert from_dict(to_dict(obj)) == obj


def test_defaults_for_a_minimal_pod() -> None:
    pod = pod_from_dict({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})
    assert pod == Pod(
        metadata=ObjectMeta(name="p", namespace="default", uid="default/p"),
        spec=PodSpec(containers=(Container(name="c"),)),
    )
    assert pod.spec.scheduler_name == "default-scheduler"
    assert pod.status.phase == "Pending"
    assert pod.priority == 0


def test_typed_builders_dispatch() -> None:
    assert node_from_dict({"metadata": {"name": "n"}}).uid == "n"
    assert namespace_from_dict({"kind": "Namespace", "metadata": {"name": "ns"}}).name == "ns"
    pdb = pdb_from_dict({"metadata": {"name": "b"}, "spec": {"maxUnavailable": 1}})
    assert (pdb.namespace, pdb.max_unavailable, pdb.selector) == ("default", 1, None)
    assert isinstance(from_dict({"kind": "Node", "metadata": {"name": "n"}}), Node)


def test_pod_list_kinds_are_flattened() -> None:
    spec = "spec: {containers: [{name: c}]}"
    text = (
        f"kind: PodList\nitems:\n- {{kind: Pod, metadata: {{name: a}}, {spec}}}\n"
        f"- {{kind: Pod, metadata: {{name: b}}, {spec}}}\n"
    )
    assert [p.name for p in loads_manifests(text)] == ["a", "b"]  # type: ignore[attr-defined]


def test_empty_documents_are_skipped() -> None:
    assert loads_manifests("---\n---\nkind: Node\nmetadata: {name: n}\n---\n") == [
        Node(metadata=ObjectMeta(name="n", uid="n"))
    ]
    assert loads_manifests("") == []


def test_datetimes_are_utc_and_keep_microseconds() -> None:
    pod = pod_from_dict(
        {
            "metadata": {
                "name": "p",
                "creationTimestamp": "2024-01-02T05:04:05+02:00",
                "deletionTimestamp": "2024-01-02T03:04:05.123456Z",
            },
            "spec": {"containers": [{"name": "c"}]},
        }
    )
    assert pod.creation_timestamp == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert pod.creation_timestamp is not None and pod.creation_timestamp.tzinfo is UTC
    metadata = to_dict(pod)["metadata"]
    assert isinstance(metadata, dict)
    assert metadata["creationTimestamp"] == "2024-01-02T03:04:05Z"
    assert metadata["deletionTimestamp"] == "2024-01-02T03:04:05.123456Z"
    # An unquoted YAML timestamp arrives as a datetime already.
    (loaded,) = loads_manifests(
        "kind: Pod\nmetadata: {name: p, creationTimestamp: 2024-01-02T03:04:05Z}\n"
        "spec: {containers: [{name: c}]}\n"
    )
    assert loaded.creation_timestamp == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)  # type: ignore[attr-defined]


def test_to_dict_writes_kubernetes_json() -> None:
    pod = Pod(
        metadata=ObjectMeta(name="web", namespace="shop", uid="u", labels={"app": "web"}),
        spec=PodSpec(
            containers=(
                Container(
                    name="c",
                    requests={CPU: 1500, MEMORY: 3 * GI // 2, "nvidia.com/gpu": 1},
                    limits={"nvidia.com/gpu": 1},
                    ports=(ContainerPort(container_port=80, host_port=8080, protocol="UDP"),),
                ),
            ),
            tolerations=(Toleration(operator="Exists"),),
            node_selector={"disk": "ssd"},
            priority=0,
        ),
    )
    assert to_dict(pod) == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u", "labels": {"app": "web"}},
        "spec": {
            "priority": 0,
            "nodeSelector": {"disk": "ssd"},
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": "c",
                    "resources": {
                        "requests": {"cpu": "1500m", "memory": "1536Mi", "nvidia.com/gpu": "1"},
                        "limits": {"nvidia.com/gpu": "1"},
                    },
                    "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "UDP"}],
                }
            ],
        },
        "status": {"phase": "Pending"},
    }
    assert from_dict(to_dict(pod)) == pod


def test_to_dict_selectors_and_empty_affinity_survive() -> None:
    pod = Pod(
        metadata=ObjectMeta(name="p", namespace="default", uid="default/p"),
        spec=PodSpec(
            containers=(Container(name="c"),),
            affinity=Affinity(
                pod_anti_affinity=PodAntiAffinity(),
                node_affinity=NodeAffinity(),
            ),
            topology_spread_constraints=(
                TopologySpreadConstraint(
                    max_skew=2,
                    topology_key="zone",
                    when_unsatisfiable="DoNotSchedule",
                    label_selector=LabelSelector(
                        match_expressions=(
                            LabelSelectorRequirement(key="app", operator="In", values=("a", "b")),
                        )
                    ),
                    min_domains=3,
                    node_affinity_policy="Honor",
                    node_taints_policy="Ignore",
                    match_label_keys=("pod-template-hash",),
                ),
            ),
        ),
    )
    d = to_dict(pod)
    spec = d["spec"]
    assert isinstance(spec, dict)
    assert spec["affinity"] == {"nodeAffinity": {}, "podAntiAffinity": {}}
    assert from_dict(d) == pod
    assert pod.has_affinity


def test_namespace_and_pdb_to_dict() -> None:
    ns = Namespace(metadata=ObjectMeta(name="a", uid="a", labels={"x": "y"}))
    assert to_dict(ns) == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "a", "uid": "a", "labels": {"x": "y"}},
    }
    pdb = PodDisruptionBudget(
        metadata=ObjectMeta(name="b", namespace="default", uid="default/b"),
        selector=LabelSelector(),
        max_unavailable=0,
    )
    assert to_dict(pdb) == {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b", "namespace": "default", "uid": "default/b"},
        "spec": {"maxUnavailable": 0, "selector": {}},
    }
    assert from_dict(to_dict(pdb)) == pdb


def test_to_dict_refuses_other_types() -> None:
    with pytest.raises(TypeError, match="to_dict\\(\\) cannot encode str"):
        to_dict("pod")
