"""Workloads: manifests with arrival/duration annotations, and the generator spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from schedframe.errors import ManifestError
from schedframe.simulation import (
    ANNOTATION_ARRIVAL,
    ANNOTATION_DURATION,
    Arrival,
    Workload,
    generate_workload,
    load_workload,
    workload_from_pods,
)

from ..explain._builders import pod

TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]},
}


def spec(*groups: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"kind": "Workload", "pods": list(groups), **top}


def test_groups_expand_to_named_pods_with_fixed_gaps_and_durations() -> None:
    wl = generate_workload(
        spec(
            {
                "name": "web",
                "count": 3,
                "arrival": {"at": 2, "every": 1.5},
                "duration": 10,
                "template": TEMPLATE,
            },
        )
    )
    assert [(a.time, a.pod.key, a.duration) for a in wl] == [
        (2.0, "default/web-0", 10.0),
        (3.5, "default/web-1", 10.0),
        (5.0, "default/web-2", 10.0),
    ]
    first = wl.arrivals[0].pod
    assert first.uid == "default/web-0"
    assert first.labels == {"app": "web"}
    assert first.requests["cpu"] == 100


def test_groups_merge_by_time_and_keep_file_order_on_ties() -> None:
    wl = generate_workload(
        spec(
            {"name": "a", "count": 2, "arrival": {"every": 1}, "template": TEMPLATE},
            {"name": "b", "count": 2, "arrival": {"at": 0, "every": 1}, "template": TEMPLATE},
        )
    )
    assert [a.pod.name for a in wl] == ["a-0", "b-0", "a-1", "b-1"]
    assert len(wl) == 4 and wl.pods[0].name == "a-0"


def test_random_arrivals_and_durations_are_seeded() -> None:
    group = {
        "name": "w",
        "count": 20,
        "arrival": {"rate": 2},
        "duration": {"min": 5, "max": 9},
        "template": TEMPLATE,
    }
    one = generate_workload(spec(group, seed=4))
    two = generate_workload(spec(group, seed=4))
    other = generate_workload(spec(group, seed=5))
    assert [(a.time, a.duration) for a in one] == [(a.time, a.duration) for a in two]
    assert [a.time for a in one] != [a.time for a in other]
    times = [a.time for a in one]
    assert times == sorted(times) and times[0] == 0.0
    assert all(a.duration is not None and 5 <= a.duration <= 9 for a in one)


def test_namespace_comes_from_the_template() -> None:
    template = {**TEMPLATE, "metadata": {"namespace": "team"}}
    wl = generate_workload(spec({"name": "x", "template": template}))
    assert wl.pods[0].key == "team/x-0"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        pytest.param(
            {"kind": "Workload"}, "w.yaml: pods: Required value: a list of pod groups", id="no pods"
        ),
        pytest.param(
            spec({"name": "a", "count": -1, "template": TEMPLATE}),
            "w.yaml: pods[0].count: Invalid value: -1: must be a non-negative integer",
            id="negative count",
        ),
        pytest.param(
            spec({"name": "a", "arrival": {"every": 1, "rate": 2}, "template": TEMPLATE}),
            "w.yaml: pods[0].arrival: Invalid value: set either every or rate, not both",
            id="every and rate",
        ),
        pytest.param(
            spec({"name": "a", "arrival": {"rate": 0}, "template": TEMPLATE}),
            "w.yaml: pods[0].arrival.rate: Invalid value: 0: must be at least 1e-10",
            id="zero rate",
        ),
        pytest.param(
            spec({"name": "a", "duration": {"min": 5, "max": 2}, "template": TEMPLATE}),
            "w.yaml: pods[0].duration.max: Invalid value: 2: must be at least min",
            id="min above max",
        ),
        pytest.param(
            spec({"name": "a", "template": TEMPLATE, "replicas": 3}),
            "w.yaml: pods[0].replicas: Unknown field",
            id="unknown field",
        ),
        pytest.param(
            spec({"name": "a"}),
            "w.yaml: pods[0].template: Required value: a Pod manifest (metadata and spec)",
            id="no template",
        ),
        pytest.param(
            spec(
                {
                    "name": "a",
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "c", "resources": {"requests": {"cpu": "lots"}}}
                            ]
                        }
                    },
                }
            ),
            "w.yaml: pods[0].template.spec.containers[0].resources.requests.cpu: Invalid value",
            id="bad template",
        ),
        pytest.param(
            spec({"name": "a", "template": TEMPLATE}, {"name": "a", "template": TEMPLATE}),
            'w.yaml: pods[1].name: Duplicate value: "a": also the name of pods[0]',
            id="duplicate group",
        ),
    ],
)
def test_spec_errors_name_the_file_and_field_path(document: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError) as info:
        generate_workload(document, source="w.yaml")
    assert str(info.value).startswith(message)


def test_manifest_pods_arrive_at_zero_unless_annotated() -> None:
    wl = workload_from_pods(
        [
            pod("late", annotations={ANNOTATION_ARRIVAL: "5", ANNOTATION_DURATION: "30"}),
            pod("now"),
        ]
    )
    assert [(a.pod.name, a.time, a.duration) for a in wl] == [
        ("now", 0.0, None),
        ("late", 5.0, 30.0),
    ]


def test_a_bad_annotation_is_a_manifest_error() -> None:
    with pytest.raises(ManifestError, match=r"metadata\.annotations\[schedframe\.io/arrival\]"):
        workload_from_pods([pod("p", annotations={ANNOTATION_ARRIVAL: "soon"})], source="w.yaml")


def test_load_workload_reads_specs_and_manifests(tmp_path: Path) -> None:
    gen = tmp_path / "gen.yaml"
    gen.write_text(
        "kind: Workload\npods:\n  - name: w\n    count: 2\n    template:\n"
        "      spec: {containers: [{name: c}]}\n"
    )
    assert [p.name for p in load_workload(gen).pods] == ["w-0", "w-1"]
    manifests = tmp_path / "pods.yaml"
    manifests.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n"
    )
    assert [p.name for p in load_workload(manifests).pods] == ["a"]
    folder = tmp_path / "dir"
    folder.mkdir()
    (folder / "p.yaml").write_text(manifests.read_text())
    assert [p.name for p in load_workload(folder).pods] == ["a"]


def test_a_workload_holds_pods_only(tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n")
    with pytest.raises(ManifestError, match='nodes.yaml: kind: Unsupported value: "Node"'):
        load_workload(path)


def test_workloads_add_up_by_time() -> None:
    a = Workload((Arrival(time=1.0, pod=pod("a")),))
    b = Workload((Arrival(time=0.5, pod=pod("b")),))
    assert [p.name for p in (a + b).pods] == ["b", "a"]
