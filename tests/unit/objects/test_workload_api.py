"""The v1alpha1 Workload and a pod's workloadRef: decoding, validation, round trips."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe.errors import ManifestError
from schedframe.objects import (
    GangSchedulingPolicy,
    ObjectMeta,
    Pod,
    PodGroup,
    Workload,
    WorkloadReference,
    from_dict,
    to_dict,
)

_LABEL = st.from_regex(r"\A[a-z]([a-z0-9-]{0,8}[a-z0-9])?\Z")


def manifest(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": spec,
    }


@st.composite
def workloads(draw: st.DrawFn) -> Workload:
    names = draw(st.lists(_LABEL, min_size=1, max_size=8, unique=True))
    groups = tuple(
        PodGroup(
            name=n,
            gang=draw(
                st.none() | st.builds(GangSchedulingPolicy, min_count=st.integers(1, 2**31 - 1))
            ),
        )
        for n in names
    )
    controller = draw(st.none() | st.tuples(st.just("batch"), st.just("Job"), _LABEL))
    return Workload(
        metadata=ObjectMeta(name=draw(_LABEL), namespace="ns", uid="u"),
        pod_groups=groups,
        controller_ref=controller,
    )


@given(workloads())
def test_a_workload_round_trips(w: Workload) -> None:
    assert from_dict(to_dict(w)) == w


def test_decodes_pod_groups_and_policies() -> None:
    w = from_dict(
        manifest(
            {
                "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "j"},
                "podGroups": [
                    {"name": "workers", "policy": {"gang": {"minCount": 4}}},
                    {"name": "driver", "policy": {"basic": {}}},
                ],
            }
        )
    )
    assert isinstance(w, Workload)
    assert w.pod_groups == (
        PodGroup(name="workers", gang=GangSchedulingPolicy(min_count=4)),
        PodGroup(name="driver"),
    )
    assert w.controller_ref == ("batch", "Job", "j")
    assert w.pod_group("driver") == PodGroup(name="driver")
    assert w.pod_group("nope") is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param({}, "spec.podGroups: Required value: must have at least one item", id="none"),
        pytest.param(
            {"podGroups": [{"name": f"g{i}", "policy": {"basic": {}}} for i in range(9)]},
            "spec.podGroups: Too many: 9: must have at most 8 items",
            id="too many",
        ),
        pytest.param(
            {"podGroups": [{"name": "g", "policy": {"gang": {"minCount": 0}}}]},
            "spec.podGroups[0].policy.gang.minCount: Invalid value: 0: must be greater than zero",
            id="minCount zero",
        ),
        pytest.param(
            {"podGroups": [{"name": "g", "policy": {}}]},
            'spec.podGroups[0].policy: Invalid value: "": must specify exactly one of: '
            "`basic`, `gang`",
            id="no policy",
        ),
        pytest.param(
            {"podGroups": [{"name": "g", "policy": {"basic": {}, "gang": {"minCount": 1}}}]},
            'spec.podGroups[0].policy: Invalid value: "": must specify exactly one of: '
            "`basic`, `gang`",
            id="two policies",
        ),
        pytest.param(
            {"podGroups": [{"name": "g", "policy": {"basic": {}}}] * 2},
            'spec.podGroups[1].name: Duplicate value: "g"',
            id="duplicate names",
        ),
        pytest.param(
            {"podGroups": [{"name": "G_1", "policy": {"basic": {}}}]},
            'spec.podGroups[0].name: Invalid value: "G_1"',
            id="not a DNS label",
        ),
        pytest.param(
            {"podGroups": [{"name": "g", "policy": {"gang": {"minCount": 1, "max": 2}}}]},
            "spec.podGroups[0].policy.gang.max: Unknown field",
            id="unknown field",
        ),
    ],
)
def test_invalid_workloads_name_the_field(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError) as info:
        from_dict(manifest(spec))
    assert message in str(info.value)


def pod(ref: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}], "workloadRef": ref},
    }


def test_a_pods_workload_ref_is_read_and_written() -> None:
    p = from_dict(pod({"name": "w", "podGroup": "g", "podGroupReplicaKey": "r1"}))
    assert isinstance(p, Pod)
    assert p.spec.workload_ref == WorkloadReference(
        name="w", pod_group="g", pod_group_replica_key="r1"
    )
    spec = to_dict(p)["spec"]
    assert isinstance(spec, dict)
    assert spec["workloadRef"] == {"name": "w", "podGroup": "g", "podGroupReplicaKey": "r1"}


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ({"podGroup": "g"}, "spec.workloadRef.name: Required value"),
        ({"name": "w"}, "spec.workloadRef.podGroup: Required value"),
        ({"name": "w", "podGroup": "G!"}, 'spec.workloadRef.podGroup: Invalid value: "G!"'),
        ({"name": "w", "podGroup": "g", "extra": 1}, "spec.workloadRef.extra: Unknown field"),
    ],
)
def test_invalid_workload_refs_name_the_field(ref: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError) as info:
        from_dict(pod(ref))
    assert message in str(info.value)
