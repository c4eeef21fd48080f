"""``from_dict(to_dict(x)) == x`` for generated PriorityClasses and workload objects."""

from __future__ import annotations

import attrs
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe.objects import (
    DaemonSet,
    Deployment,
    Job,
    LabelSelector,
    ObjectMeta,
    Pod,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    from_dict,
    loads_manifests,
    to_dict,
)

from .test_objects_roundtrip import free_text, labels, metas, pod_specs

pytestmark = pytest.mark.property

_APP = {"app": "x"}


@st.composite
def _owner_and_template(draw: st.DrawFn) -> tuple[ObjectMeta, Pod]:
    meta = draw(metas(namespaced=True))
    template_meta = draw(metas(namespaced=True))
    template = Pod(
        metadata=attrs.evolve(
            template_meta,
            name="",
            uid="",
            namespace=meta.namespace,
            labels={**template_meta.labels, **_APP},
        ),
        spec=draw(pod_specs),
    )
    return meta, template


replicas = st.integers(min_value=0, max_value=50)


@st.composite
def workload_objects(draw: st.DrawFn) -> object:
    meta, template = draw(_owner_and_template())
    selector = LabelSelector(match_labels=dict(_APP))
    kind = draw(st.sampled_from(["rs", "sts", "deploy", "ds", "job", "rc"]))
    if kind == "rs":
        return ReplicaSet(
            metadata=meta, replicas=draw(replicas), selector=selector, template=template
        )
    if kind == "deploy":
        return Deployment(
            metadata=meta, replicas=draw(replicas), selector=selector, template=template
        )
    if kind == "ds":
        return DaemonSet(metadata=meta, selector=selector, template=template)
    if kind == "rc":
        return ReplicationController(
            metadata=meta, replicas=draw(replicas), selector=dict(_APP), template=template
        )
    if kind == "job":
        return Job(
            metadata=meta,
            parallelism=draw(replicas),
            completions=draw(st.none() | replicas),
            selector=draw(st.none() | st.just(selector)),
            template=template,
        )
    return StatefulSet(
        metadata=meta,
        replicas=draw(replicas),
        selector=selector,
        template=template,
        service_name=draw(st.sampled_from(["", "db"])),
        pod_management_policy=draw(st.sampled_from(["OrderedReady", "Parallel"])),
    )


priority_classes = st.builds(
    PriorityClass,
    metadata=metas(namespaced=False).map(lambda m: attrs.evolve(m, namespace="")),
    value=st.integers(min_value=-(2**31), max_value=10**9),
    global_default=st.booleans(),
    preemption_policy=st.sampled_from(["Never", "PreemptLowerPriority"]),
    description=free_text,
)
# Service names are DNS-1035 labels: they start with a letter.
services = st.builds(
    Service,
    metadata=metas(namespaced=True).map(lambda m: attrs.evolve(m, name="svc-" + m.name)),
    selector=st.none() | labels,
)


@given(st.one_of(workload_objects(), priority_classes, services))
@settings(deadline=None)
def test_round_trip_through_yaml_text(obj: object) -> None:
    assert from_dict(to_dict(obj)) == obj
    text = yaml.safe_dump(to_dict(obj), sort_keys=False)
    assert loads_manifests(text) == [obj]
