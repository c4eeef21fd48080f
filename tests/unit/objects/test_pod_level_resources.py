"""Pod-level resources (``spec.resources``, PodLevelResources) and overhead: decoding,
defaulting, the API server's rules, and the pod's effective requests."""

from __future__ import annotations

from typing import Any

import pytest

from schedframe.errors import ManifestError
from schedframe.objects import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    ResourceRequirements,
    from_dict,
    pod_from_dict,
    to_dict,
)

MI = 1 << 20


def pod(
    pod_resources: dict[str, Any] | None,
    container: dict[str, Any] | None = None,
    *,
    init: bool = True,
    overhead: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Upstream's getPod/getPodWithPodLevelResources: one container and one init container
    with the same resources, optional overhead and pod-level resources."""
    resources = container or {}
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": resources}]}
    if init:
        spec["initContainers"] = [{"name": "init-c", "resources": resources}]
    if overhead:
        spec["overhead"] = overhead
    if pod_resources is not None:
        spec["resources"] = pod_resources
    return {"kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


# Upstream pkg/api/v1/resource TestGetResourceRequest: (pod-level, containers, resource, value).
GET_RESOURCE_REQUEST = [
    pytest.param(None, {"requests": {"cpu": "9"}}, "cpu", 9000, id="cpu request"),
    pytest.param(None, {"requests": {"memory": "90Mi"}}, "memory", 94371840, id="memory request"),
    pytest.param(
        {"requests": {"cpu": "10"}},
        {"requests": {"cpu": "8"}},
        "cpu",
        10000,
        id="pod level resources cpu req, container cpu req",
    ),
    pytest.param(
        {"requests": {"memory": "100Mi"}},
        {"requests": {"memory": "80Mi"}},
        "memory",
        104857600,
        id="pod level resources mem req, container mem req",
    ),
    pytest.param(
        {"requests": {"cpu": "5"}},
        {"requests": {"memory": "50Mi"}},
        "cpu",
        5000,
        id="pod level resources cpu req, container mem req",
    ),
    pytest.param(
        {"requests": {"memory": "100Mi"}},
        {"requests": {"cpu": "8"}},
        "memory",
        104857600,
        id="pod level resources mem req, container cpu req",
    ),
    pytest.param(
        {"requests": {"cpu": "10"}},
        {},
        "cpu",
        10000,
        id="pod level resources cpu req, container no req",
    ),
    pytest.param(
        {"requests": {"memory": "100Mi"}},
        {},
        "memory",
        104857600,
        id="pod level resources mem req, container no req",
    ),
]


@pytest.mark.parametrize(("pod_level", "container", "name", "value"), GET_RESOURCE_REQUEST)
def test_effective_requests(
    pod_level: dict[str, Any] | None, container: dict[str, Any], name: str, value: int
) -> None:
    assert pod_from_dict(pod(pod_level, container)).requests.get(name, 0) == value


def test_overhead_is_added_after_pod_level_requests() -> None:
    p = pod_from_dict(
        pod({"requests": {"cpu": "2"}}, {"requests": {"cpu": "1"}}, overhead={"cpu": "500m"})
    )
    assert p.requests["cpu"] == 2500
    assert p.spec.overhead == {"cpu": 500}


def test_non_zero_requests_take_pod_level_values_and_default_the_rest() -> None:
    # cpu set at pod level; memory missing everywhere, so the containers' defaults count.
    p = pod_from_dict(pod({"requests": {"cpu": "2"}}, {}, init=False))
    assert p.non_zero_requests == {"cpu": 2000, "memory": DEFAULT_MEMORY_REQUEST}
    p = pod_from_dict(pod({"requests": {"memory": "1Gi"}}, {}, init=False))
    assert p.non_zero_requests == {"cpu": DEFAULT_MILLI_CPU_REQUEST, "memory": 1 << 30}


def test_pod_level_limits_default_the_requests() -> None:
    p = pod_from_dict(pod({"limits": {"cpu": "2", "memory": "1Gi"}}, {}, init=False))
    assert p.spec.resources == ResourceRequirements(
        requests={"cpu": 2000, "memory": 1 << 30}, limits={"cpu": 2000, "memory": 1 << 30}
    )
    assert p.requests == {"cpu": 2000, "memory": 1 << 30}


def test_pod_level_hugepages_request_defaults_to_the_containers_total() -> None:
    container = {
        "requests": {"cpu": "1", "hugepages-2Mi": "4Mi"},
        "limits": {"hugepages-2Mi": "4Mi"},
    }
    p = pod_from_dict(pod({"limits": {"cpu": "2", "hugepages-2Mi": "4Mi"}}, container, init=False))
    assert p.spec.resources is not None
    assert p.spec.resources.requests == {"cpu": 2000, "hugepages-2Mi": 4 * MI}


def test_round_trip() -> None:
    p = pod_from_dict(pod({"requests": {"cpu": "2"}, "limits": {"cpu": "3"}}, {}, init=False))
    assert from_dict(to_dict(p)) == p
    spec = to_dict(p)["spec"]
    assert isinstance(spec, dict)
    assert spec["resources"] == {"requests": {"cpu": "2"}, "limits": {"cpu": "3"}}


def test_pod_level_resources_are_forbidden_for_windows_pods() -> None:
    doc = pod({"requests": {"cpu": "1"}}, {}, init=False)
    doc["spec"]["os"] = {"name": "windows"}
    with pytest.raises(ManifestError) as info:
        pod_from_dict(doc)
    assert str(info.value) == "spec.resources: Forbidden: may not be set for a windows pod"


@pytest.mark.parametrize(
    ("pod_level", "container", "expected"),
    [
        pytest.param(
            {"requests": {"cpu": "1"}},
            {"requests": {"cpu": "1500m"}},
            [
                'spec.resources.requests[cpu]: Invalid value: "1": must be greater than or '
                "equal to aggregate container requests of 1500m"
            ],
            id="pod-level request below the containers' total",
        ),
        pytest.param(
            {"requests": {"memory": "576Mi"}},
            {"requests": {"memory": "6Gi"}},
            [
                'spec.resources.requests[memory]: Invalid value: "576Mi": must be greater than '
                "or equal to aggregate container requests of 6Gi"
            ],
            id="pod-level memory below the containers' total",
        ),
        pytest.param(
            {"limits": {"cpu": "1"}},
            {"limits": {"cpu": "2"}},
            [
                'spec.resources.requests[cpu]: Invalid value: "1": must be greater than or '
                "equal to aggregate container requests of 2",
                'spec.resources.containers[0][cpu].limits: Invalid value: "2": must be less '
                "than or equal to pod limits of 1",
            ],
            id="container limit above the pod's",
        ),
        pytest.param(
            {"requests": {"example.com/gpu": "1"}},
            {},
            [
                'spec.resources.requests[example.com/gpu]: Unsupported value: "example.com/gpu": '
                'supported values: "cpu", "hugepages-", "memory"',
                "spec.resources.limits: Required value: "
                "Limit must be set for non overcommitable resources",
            ],
            id="unsupported pod-level resource",
        ),
        pytest.param(
            {"requests": {"cpu": "-1"}},
            {},
            [
                'spec.resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'
            ],
            id="negative pod-level request",
        ),
        pytest.param(
            {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
            {},
            [
                'spec.resources.requests: Invalid value: "2": '
                "must be less than or equal to cpu limit of 1"
            ],
            id="pod-level request above its limit",
        ),
        pytest.param(
            {"requests": {"cpu": "1"}, "claims": [{"name": "x"}], "limitz": {}},
            {},
            ["spec.resources.limitz: Unknown field"],
            id="unknown field in pod-level resources",
        ),
    ],
)
def test_the_api_servers_rules(
    pod_level: dict[str, Any], container: dict[str, Any], expected: list[str]
) -> None:
    with pytest.raises(ManifestError) as info:
        pod_from_dict(pod(pod_level, container, init=False))
    assert str(info.value).splitlines() == expected


def _manifest(name: str, **spec: Any) -> dict[str, Any]:
    spec.setdefault("containers", [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}])
    return {"kind": "Pod", "metadata": {"name": name}, "spec": spec}


def test_explain_and_preemption_count_pod_level_requests() -> None:
    from schedframe.explain import explain
    from schedframe.objects import node_from_dict

    node = node_from_dict(
        {"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4", "pods": "10"}}}
    )
    # Its containers ask for 100m, but the pod as a whole for 3 cpus.
    running = pod_from_dict(
        _manifest("big", nodeName="n", priority=0, resources={"requests": {"cpu": "3"}})
    )
    incoming = pod_from_dict(_manifest("new", priority=10, resources={"requests": {"cpu": "2"}}))
    result = explain(incoming, nodes=[node], pods=[running])
    assert result.chosen is None
    assert result.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert result.post_filter is not None
    assert result.post_filter.victims == ("default/big",)
