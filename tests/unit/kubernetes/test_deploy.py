"""deploy/: the manifests parse, and their RBAC is enough for everything the backend does
(scheduling, preemption, status patches, events, leader election) and no more."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedframe.backends.kubernetes._cli import run
from schedframe.config import load_config
from schedframe.testing.fakeapi import Authorizer, FakeAPIServer

from ._support import node, pod

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"


def manifests(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


def test_manifests_are_consistent() -> None:
    rbac = manifests("rbac.yaml")
    (config_map,) = manifests("config.yaml")
    (deployment,) = manifests("deployment.yaml")
    kinds = [d["kind"] for d in rbac]
    assert kinds == ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]
    config = load_config(yaml.safe_load(config_map["data"]["config.yaml"]))
    assert [p.scheduler_name for p in config.profiles] == ["schedframe"]
    le = config.leader_election
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (15.0, 10.0, 2.0)
    role = next(d for d in rbac if d["kind"] == "Role")
    assert le.resource_namespace == role["metadata"]["namespace"] == "kube-system"
    assert [le.resource_name] == role["rules"][1]["resourceNames"]
    spec = deployment["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == "schedframe"
    container = spec["containers"][0]
    assert container["command"][:2] == ["schedframe", "run"]
    assert "--bind-address=127.0.0.1" in container["command"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    assert kustomization["resources"] == ["rbac.yaml", "config.yaml", "deployment.yaml"]


def test_cluster_role_is_least_privilege() -> None:
    rbac = manifests("rbac.yaml")
    grants = set()
    for doc in rbac:
        for rule in doc.get("rules", []):
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    for verb in rule["verbs"]:
                        grants.add((doc["kind"], group, resource, verb))
    assert grants == {
        ("ClusterRole", "", "pods", "list"),
        ("ClusterRole", "", "pods", "watch"),
        ("ClusterRole", "", "pods", "delete"),
        ("ClusterRole", "", "pods/binding", "create"),
        ("ClusterRole", "", "pods/status", "patch"),
        ("ClusterRole", "", "nodes", "list"),
        ("ClusterRole", "", "nodes", "watch"),
        ("ClusterRole", "", "namespaces", "list"),
        ("ClusterRole", "", "namespaces", "watch"),
        ("ClusterRole", "policy", "poddisruptionbudgets", "list"),
        ("ClusterRole", "policy", "poddisruptionbudgets", "watch"),
        ("ClusterRole", "", "services", "list"),
        ("ClusterRole", "", "services", "watch"),
        ("ClusterRole", "", "replicationcontrollers", "list"),
        ("ClusterRole", "", "replicationcontrollers", "watch"),
        ("ClusterRole", "apps", "replicasets", "list"),
        ("ClusterRole", "apps", "replicasets", "watch"),
        ("ClusterRole", "apps", "statefulsets", "list"),
        ("ClusterRole", "apps", "statefulsets", "watch"),
        ("ClusterRole", "", "persistentvolumes", "list"),
        ("ClusterRole", "", "persistentvolumes", "watch"),
        ("ClusterRole", "", "persistentvolumes", "patch"),
        ("ClusterRole", "", "persistentvolumeclaims", "list"),
        ("ClusterRole", "", "persistentvolumeclaims", "watch"),
        ("ClusterRole", "", "persistentvolumeclaims", "patch"),
        ("ClusterRole", "storage.k8s.io", "storageclasses", "list"),
        ("ClusterRole", "storage.k8s.io", "storageclasses", "watch"),
        ("ClusterRole", "storage.k8s.io", "csinodes", "list"),
        ("ClusterRole", "storage.k8s.io", "csinodes", "watch"),
        ("ClusterRole", "storage.k8s.io", "csidrivers", "list"),
        ("ClusterRole", "storage.k8s.io", "csidrivers", "watch"),
        ("ClusterRole", "storage.k8s.io", "csistoragecapacities", "list"),
        ("ClusterRole", "storage.k8s.io", "csistoragecapacities", "watch"),
        ("ClusterRole", "storage.k8s.io", "volumeattachments", "list"),
        ("ClusterRole", "storage.k8s.io", "volumeattachments", "watch"),
        *(
            ("ClusterRole", "resource.k8s.io", resource, verb)
            for resource in (
                "deviceclasses",
                "resourceslices",
                "resourceclaims",
                "resourceclaimtemplates",
            )
            for verb in ("list", "watch")
        ),
        ("ClusterRole", "resource.k8s.io", "resourceclaims/status", "update"),
        ("ClusterRole", "resource.k8s.io", "resourceclaims", "create"),
        ("ClusterRole", "resource.k8s.io", "resourceclaims", "delete"),
        ("ClusterRole", "resource.k8s.io", "resourceclaims", "update"),
        ("ClusterRole", "events.k8s.io", "events", "create"),
        ("ClusterRole", "events.k8s.io", "events", "patch"),
        ("Role", "coordination.k8s.io", "leases", "create"),
        ("Role", "coordination.k8s.io", "leases", "get"),
        ("Role", "coordination.k8s.io", "leases", "update"),
    }


def test_the_rbac_is_enough_to_schedule_and_preempt(tmp_path: Path) -> None:
    authorizer = Authorizer.from_manifests(
        manifests("rbac.yaml"), namespace="kube-system", service_account="schedframe"
    )
    (config_map,) = manifests("config.yaml")
    config = yaml.safe_load(config_map["data"]["config.yaml"])
    config["leaderElection"].update(leaseDuration="3s", renewDeadline="2s", retryPeriod="0.2s")
    config_file = tmp_path / "config.yaml"
    config_file.write_text(yaml.safe_dump(config))
    with FakeAPIServer(authorizer=authorizer, bookmark_interval=0.2, kubelet_delay=0.05) as fake:
        fake.create(node("small", cpu="1"))
        fake.create(node("big", cpu="2"))
        fake.create(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "pdb", "namespace": "default"},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "other"}}},
            }
        )
        fake.create(pod("victim", cpu="1", node_name="small", priority=0, scheduler="schedframe"))
        fake.create(pod("filler", cpu="2", node_name="big", priority=2000))  # not preemptible
        fake.create(pod("preemptor", cpu="1", priority=1000, scheduler="schedframe"))
        kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
        stop = threading.Event()
        errors: list[BaseException] = []

        def serve() -> None:
            try:
                run(kubeconfig=str(kubeconfig), config_file=str(config_file), port=0, stop=stop)
            except BaseException as exc:  # reported below
                errors.append(exc)

        thread = threading.Thread(target=serve)
        thread.start()
        try:
            deadline = time.monotonic() + 30
            while not fake.bindings and time.monotonic() < deadline and not errors:
                time.sleep(0.05)
        finally:
            stop.set()
            thread.join(30)
        assert not errors, errors
        assert [(b.name, b.node) for b in fake.bindings] == [("preemptor", "small")]
        assert fake.get("Pod", "victim") is None  # evicted
        denied = [(r.method, r.path, r.query) for r in fake.requests if r.status == 403]
        assert denied == []
        verbs = {(r.method, r.path.rsplit("/", 1)[-1]) for r in fake.requests}
        assert ("DELETE", "victim") in verbs  # preemption evicted through the API
        assert ("PATCH", "status") in verbs  # DisruptionTarget / nominatedNodeName
        reasons = {e["reason"] for e in fake.list("Event")}
        assert {"Preempted", "FailedScheduling", "Scheduled"} <= reasons
        lease = fake.get("Lease", "schedframe", "kube-system")
        assert lease is not None and "holderIdentity" not in lease["spec"]  # released on stop


def test_without_rbac_nothing_works(tmp_path: Path) -> None:
    authorizer = Authorizer.from_manifests(
        [], namespace="kube-system", service_account="schedframe"
    )
    with FakeAPIServer(authorizer=authorizer) as fake:
        kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
        from schedframe.errors import BackendError

        with pytest.raises(BackendError, match="forbidden"):
            run(kubeconfig=str(kubeconfig), port=0, sync_timeout=0.5, leader_elect=False)
