"""PriorityClass and the workload kinds: decoding with the API server's defaults, field-path
errors, and the round trip through ``to_dict``."""

from __future__ import annotations

import pytest

from schedframe.errors import ManifestError
from schedframe.objects import (
    DaemonSet,
    Deployment,
    Job,
    LabelSelector,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    from_dict,
    loads_manifests,
    to_dict,
)

_TEMPLATE = """
  template:
    metadata: {labels: {app: web, tier: front}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: 250m}}}]
"""


def _one(text: str) -> object:
    objs = loads_manifests(text)
    assert len(objs) == 1
    return objs[0]


def test_priority_class_defaults() -> None:
    pc = _one(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    )
    assert isinstance(pc, PriorityClass)
    assert (pc.name, pc.value, pc.global_default, pc.preemption_policy, pc.description) == (
        "high",
        1000,
        False,
        "PreemptLowerPriority",
        "",
    )
    assert pc.metadata.namespace == ""


def test_deployment_with_its_template() -> None:
    d = _one(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n"
        "spec:\n  selector: {matchLabels: {app: web}}\n" + _TEMPLATE
    )
    assert isinstance(d, Deployment)
    assert d.replicas == 1
    assert d.selector == LabelSelector(match_labels={"app": "web"})
    assert d.template.name == ""
    assert d.template.namespace == "shop"
    assert d.template.labels == {"app": "web", "tier": "front"}
    assert d.template.requests == {"cpu": 250}


def test_statefulset_defaults() -> None:
    s = _one(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\n"
        "spec:\n  serviceName: db\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n"
        + _TEMPLATE
    )
    assert isinstance(s, StatefulSet)
    assert (s.replicas, s.service_name, s.pod_management_policy) == (3, "db", "OrderedReady")


def test_replication_controller_selector_defaults_to_template_labels() -> None:
    rc = _one(
        "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\nspec:\n" + _TEMPLATE
    )
    assert isinstance(rc, ReplicationController)
    assert rc.selector == {"app": "web", "tier": "front"}


def test_service_without_selector_is_none_not_empty() -> None:
    svc = _one("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n")
    assert isinstance(svc, Service)
    assert svc.selector is None
    svc = _one("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {selector: {}}\n")
    assert isinstance(svc, Service)
    assert svc.selector == {}


@pytest.mark.parametrize(
    ("spec", "parallelism", "completions"),
    [
        pytest.param("", 1, 1, id="neither: one pod once"),
        pytest.param("  parallelism: 3\n", 3, None, id="work queue"),
        pytest.param("  completions: 5\n", 1, 5, id="completions only"),
        pytest.param("  completions: 5\n  parallelism: 2\n", 2, 5, id="both"),
    ],
)
def test_job_defaults(spec: str, parallelism: int, completions: int | None) -> None:
    job = _one("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n" + spec + _TEMPLATE)
    assert isinstance(job, Job)
    assert (job.parallelism, job.completions) == (parallelism, completions)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "kind: PriorityClass\nmetadata: {name: p}\n",
            "value: Required value",
            id="class without value",
        ),
        pytest.param(
            "kind: PriorityClass\nmetadata: {name: p}\nvalue: 1000000001\n",
            "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
            id="class above the user maximum",
        ),
        pytest.param(
            "kind: PriorityClass\nmetadata: {name: system-mine}\nvalue: 10\n",
            "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
            "for system use only",
            id="reserved class name",
        ),
        pytest.param(
            "kind: PriorityClass\nmetadata: {name: p}\nvalue: 1\npreemptionPolicy: Sometimes\n",
            'preemptionPolicy: Unsupported value: "Sometimes": supported values: "Never", '
            '"PreemptLowerPriority"',
            id="bad preemption policy",
        ),
        pytest.param(
            "kind: Deployment\nmetadata: {name: d}\nspec:\n" + _TEMPLATE,
            "spec.selector: Required value",
            id="deployment without selector",
        ),
        pytest.param(
            "kind: ReplicaSet\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {app: db}}\n"
            + _TEMPLATE,
            'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web", '
            '"tier":"front"}: `selector` does not match template `labels`',
            id="selector not matching the template",
        ),
        pytest.param(
            "kind: DaemonSet\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {app: web}}\n",
            "spec.template: Required value",
            id="daemonset without template",
        ),
        pytest.param(
            "kind: StatefulSet\nmetadata: {name: d}\nspec:\n  podManagementPolicy: Random\n"
            "  selector: {matchLabels: {app: web}}\n" + _TEMPLATE,
            'spec.podManagementPolicy: Unsupported value: "Random": supported values: '
            '"OrderedReady", "Parallel"',
            id="bad pod management policy",
        ),
        pytest.param(
            "kind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: -1\n"
            "  selector: {matchLabels: {app: web}}\n" + _TEMPLATE,
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
            id="negative replicas",
        ),
        pytest.param(
            "kind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {app: web}}\n"
            "  template:\n    metadata: {labels: {app: web}}\n    spec:\n"
            "      containers: [{name: c, resources: {requests: {cpu: lots}}}]\n",
            "spec.template.spec.containers[0].resources.requests.cpu: Invalid value",
            id="template errors carry the template path",
        ),
    ],
)
def test_errors_name_the_field(text: str, message: str) -> None:
    with pytest.raises(ManifestError) as info:
        loads_manifests(text, source="dump.yaml")
    assert f"dump.yaml: {message}" in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: p}\nvalue: 7\n"
        "globalDefault: true\npreemptionPolicy: Never\ndescription: low\n",
        "kind: Service\nmetadata: {name: s, namespace: a}\nspec: {selector: {app: web}}\n",
        "kind: Service\nmetadata: {name: s}\nspec: {}\n",
        "kind: ReplicationController\nmetadata: {name: rc}\nspec:\n  replicas: 2\n" + _TEMPLATE,
        "kind: ReplicaSet\nmetadata: {name: rs}\nspec:\n  selector: {matchLabels: {app: web}}\n"
        + _TEMPLATE,
        "kind: StatefulSet\nmetadata: {name: ss}\nspec:\n  podManagementPolicy: Parallel\n"
        "  serviceName: ss\n  selector: {matchLabels: {app: web}}\n" + _TEMPLATE,
        "kind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 0\n"
        "  selector: {matchLabels: {app: web}}\n" + _TEMPLATE,
        "kind: DaemonSet\nmetadata: {name: ds}\nspec:\n  selector: {matchLabels: {app: web}}\n"
        + _TEMPLATE,
        "kind: Job\nmetadata: {name: j}\nspec:\n  parallelism: 4\n" + _TEMPLATE,
    ],
)
def test_round_trip(text: str) -> None:
    obj = _one(text)
    assert isinstance(
        obj, PriorityClass | Service | ReplicationController | ReplicaSet
    ) or isinstance(obj, StatefulSet | Deployment | DaemonSet | Job)
    assert from_dict(to_dict(obj)) == obj
