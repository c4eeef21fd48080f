"""Small manifest builders for the explain, simulation and CLI tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from schedframe.objects import Node, Pod, node_from_dict, pod_from_dict

#: The default profile with every default plugin (what kube-scheduler runs).
DEFAULT = None


def node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    zone: str | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str]] = (),
    unschedulable: bool = False,
    extra: Mapping[str, str] | None = None,
) -> Node:
    all_labels = {"kubernetes.io/hostname": name, **(labels or {})}
    if zone is not None:
        all_labels["topology.kubernetes.io/zone"] = zone
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": all_labels},
        "spec": {"taints": list(taints), "unschedulable": unschedulable},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110", **(extra or {})}},
    }
    return node_from_dict(doc)


def pod(
    name: str,
    *,
    cpu: str | None = "1",
    memory: str | None = None,
    node_name: str = "",
    priority: int | None = None,
    labels: Mapping[str, str] | None = None,
    spec: Mapping[str, Any] | None = None,
    annotations: Mapping[str, str] | None = None,
    nominated: str = "",
) -> Pod:
    requests: dict[str, str] = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    body: dict[str, Any] = {
        "containers": [{"name": "c", "image": "app:1", "resources": {"requests": requests}}],
        **(spec or {}),
    }
    if node_name:
        body["nodeName"] = node_name
    if priority is not None:
        body["priority"] = priority
    meta: dict[str, Any] = {"name": name, "labels": dict(labels or {})}
    if annotations:
        meta["annotations"] = dict(annotations)
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}
    if nominated:
        doc["status"] = {"nominatedNodeName": nominated}
    return pod_from_dict(doc)
