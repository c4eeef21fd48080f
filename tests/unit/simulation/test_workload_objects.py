"""Workload objects in simulate: Deployments, ReplicaSets, StatefulSets, Jobs and DaemonSets
become the pods their controllers would create."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from schedframe.objects import NodeSpec, Pod, loads_manifests
from schedframe.simulation import load_workload, simulate

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: infra, labels: {kubernetes.io/hostname: infra}}
spec: {taints: [{key: dedicated, value: infra, effect: NoSchedule}]}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
"""


def _template(labels: str, cpu: str = "100m", extra: str = "") -> str:
    return (
        f"  template:\n    metadata: {{labels: {{{labels}}}{extra}}}\n    spec:\n"
        f"      containers: [{{name: c, resources: {{requests: {{cpu: {cpu}}}}}}}]\n"
    )


def _run(tmp_path: Path, workload: str) -> object:
    path = tmp_path / "workload.yaml"
    path.write_text(workload)
    return simulate(cluster=loads_manifests(NODES), workload=load_workload(path))


def test_a_deployment_becomes_a_replicaset_and_its_pods(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n"
        "spec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n" + _template("app: web")
    )
    workload = load_workload(path)
    pods = workload.pods
    assert len(pods) == 3
    (rs,) = workload.objects
    rs_name = rs.metadata.name  # type: ignore[attr-defined]
    assert rs_name.startswith("web-") and len(rs_name) == len("web-") + 10
    for p in pods:
        assert p.name.startswith(rs_name + "-") and len(p.name) == len(rs_name) + 6
        assert p.namespace == "shop"
        assert p.labels == {"app": "web", "pod-template-hash": rs_name.removeprefix("web-")}
        (owner,) = p.metadata.owner_references
        assert (owner.kind, owner.name, owner.controller) == ("ReplicaSet", rs_name, True)
    assert load_workload(path).pods == pods  # deterministic names


def test_the_replicaset_of_a_deployment_is_listed_for_default_spreading(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
        "spec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n" + _template("app: web"),
    )
    kinds = sorted(type(o).__name__ for o in result.workloads)  # type: ignore[attr-defined]
    assert kinds == ["ReplicaSet", "Service"]
    assert sorted(result.placements().values()) == ["n1", "n2"]  # type: ignore[attr-defined]


def test_a_statefulset_ordered_ready_waits_for_each_pod(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\n"
        "spec:\n  replicas: 4\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n"
        + _template("app: db", cpu="1500m"),
    )
    states = {r.key: r.state for r in result.pods}  # type: ignore[attr-defined]
    # Two fit (one per untainted node); db-2 is pending, so db-3 is never created.
    assert states == {
        "default/db-0": "running",
        "default/db-1": "running",
        "default/db-2": "pending",
        "default/db-3": "not-arrived",
    }


def test_a_job_runs_parallelism_pods_until_completions(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: batch}\n"
        "spec:\n  completions: 5\n  parallelism: 2\n"
        + _template("app: batch", extra=", annotations: {schedframe.io/duration: '10'}"),
    )
    records = result.pods  # type: ignore[attr-defined]
    assert [r.state for r in records] == ["completed"] * 5
    assert sorted(r.bound_at for r in records) == [0.0, 0.0, 10.0, 10.0, 20.0]


def test_a_daemonset_places_one_pinned_pod_per_admitting_node(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: kube-system}\n"
        "spec:\n  selector: {matchLabels: {app: agent}}\n" + _template("app: agent"),
    )
    placements = result.placements()  # type: ignore[attr-defined]
    assert sorted(placements.values()) == ["n1", "n2"]  # the tainted node is not tolerated


def test_a_daemonset_tolerating_the_taint_covers_every_node(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\n"
        "spec:\n  selector: {matchLabels: {app: agent}}\n  template:\n"
        "    metadata: {labels: {app: agent}}\n    spec:\n"
        "      tolerations: [{operator: Exists}]\n      containers: [{name: c}]\n"
    )
    from schedframe.simulation._controllers import daemon_set_pods

    (ds,) = load_workload(path).daemon_sets
    nodes = [o for o in loads_manifests(NODES)]
    pods = daemon_set_pods(ds, nodes)  # type: ignore[arg-type]
    pinned = []
    for p in pods:
        assert p.spec.affinity is not None and p.spec.affinity.node_affinity is not None
        required = p.spec.affinity.node_affinity.required
        assert required is not None
        (term,) = required.node_selector_terms
        (field,) = term.match_fields
        pinned.append(field.values[0])
        assert any(t.key == "node.kubernetes.io/unschedulable" for t in p.spec.tolerations)
    assert pinned == ["n1", "n2", "infra"]


_LABELS = st.dictionaries(
    st.sampled_from(["role", "zone"]), st.sampled_from(["a", "b"]), max_size=2
)


@given(
    node_labels=st.lists(_LABELS, min_size=1, max_size=5),
    tainted=st.lists(st.booleans(), min_size=5, max_size=5),
    selector=_LABELS,
    tolerate=st.booleans(),
)
def test_daemonset_pods_are_pinned_to_exactly_the_nodes_that_admit_them(
    node_labels: list[dict[str, str]], tainted: list[bool], selector: dict[str, str], tolerate: bool
) -> None:
    from schedframe.objects import (
        DaemonSet,
        LabelSelector,
        Node,
        ObjectMeta,
        PodSpec,
        Taint,
        Toleration,
    )
    from schedframe.simulation._controllers import daemon_set_pods, daemon_set_should_run

    nodes = [
        Node(
            metadata=ObjectMeta(name=f"n{i}", labels=labels),
            spec=NodeSpec(taints=(Taint(key="k", effect="NoSchedule"),) if tainted[i] else ()),
        )
        for i, labels in enumerate(node_labels)
    ]
    template = Pod(
        metadata=ObjectMeta(name="", labels={"app": "d"}),
        spec=PodSpec(
            node_selector=selector,
            tolerations=(Toleration(key="k", operator="Exists"),) if tolerate else (),
        ),
    )
    ds = DaemonSet(
        metadata=ObjectMeta(name="d", namespace="default", uid="default/d"),
        selector=LabelSelector(match_labels={"app": "d"}),
        template=template,
    )
    pods = daemon_set_pods(ds, nodes)
    admitted = [n for n in nodes if daemon_set_should_run(ds, n)]
    assert len(pods) == len(admitted)
    for p, n in zip(pods, admitted, strict=True):
        assert all(n.metadata.labels.get(k) == v for k, v in selector.items())
        assert tolerate or not n.spec.taints
        required = p.spec.affinity.node_affinity.required  # type: ignore[union-attr]
        assert required is not None
        matching = [
            m.metadata.name for m in nodes if required.matches(m.metadata.name, m.metadata.labels)
        ]
        assert matching == [n.metadata.name]
