"""``from_dict(to_dict(x)) == x`` for generated pods, nodes, namespaces and budgets.

The strategies build objects the API server would accept (the codec validates), in the
canonical form the codec produces (defaults filled in, requests covering limits, ...).
"""

from __future__ import annotations

from datetime import UTC, datetime

import attrs
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe.objects import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    TAINT_EFFECTS,
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
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    PodCondition,
    PodDisruptionBudget,
    PodSpec,
    PodStatus,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
    from_dict,
    loads_manifests,
    to_dict,
)

pytestmark = pytest.mark.property

# Plain alphanumeric text is always a valid name, label key and label value; drawing it is
# much cheaper than regex strategies, and the codec does not care about the exact spelling.
ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
names = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)
label_keys = st.builds(
    lambda prefix, name: prefix + name,
    st.sampled_from(["", "example.com/", "topology.kubernetes.io/"]),
    st.text(ALNUM, min_size=1, max_size=8) | st.sampled_from(["app", "a-b.c_d", "zone"]),
)
label_values = st.text(ALNUM, max_size=8) | st.sampled_from(["v1.2", "x_y-z"])
labels = st.dictionaries(label_keys, label_values, max_size=3)
free_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)
times = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
optional_times = st.none() | times
resource_names = st.sampled_from(
    [CPU, MEMORY, EPHEMERAL_STORAGE, PODS, "nvidia.com/gpu", "hugepages-2Mi"]
)
resources = st.dictionaries(resource_names, st.integers(min_value=0, max_value=2**50), max_size=4)


def metas(*, namespaced: bool) -> st.SearchStrategy[ObjectMeta]:
    return st.builds(
        ObjectMeta,
        name=names,
        namespace=names if namespaced else st.just(""),
        uid=st.uuids().map(str),
        labels=labels,
        annotations=st.dictionaries(label_keys, free_text, max_size=2),
        owner_references=st.lists(
            st.builds(
                OwnerReference,
                api_version=st.sampled_from(["v1", "apps/v1"]),
                kind=st.sampled_from(["ReplicaSet", "StatefulSet", "Job"]),
                name=names,
                uid=st.uuids().map(str),
                controller=st.booleans(),
            ),
            max_size=2,
        ).map(tuple),
        creation_timestamp=optional_times,
        deletion_timestamp=optional_times,
        resource_version=st.integers(min_value=0, max_value=10**6).map(
            lambda n: str(n) if n else ""
        ),
        generate_name=st.sampled_from(["", "web-"]),
    )


@st.composite
def selector_requirements(draw: st.DrawFn, *, node: bool) -> tuple[str, str, tuple[str, ...]]:
    operators = ["In", "NotIn", "Exists", "DoesNotExist"] + (["Gt", "Lt"] if node else [])
    op = draw(st.sampled_from(operators))
    if op in ("In", "NotIn"):
        values = draw(st.lists(label_values, min_size=1, max_size=3))
    elif op in ("Gt", "Lt"):
        values = [str(draw(st.integers(min_value=0, max_value=10**6)))]
    else:
        values = []
    return draw(label_keys), op, tuple(values)


label_selectors = st.builds(
    LabelSelector,
    match_labels=labels,
    match_expressions=st.lists(
        selector_requirements(node=False).map(
            lambda r: LabelSelectorRequirement(key=r[0], operator=r[1], values=r[2])
        ),
        max_size=2,
    ).map(tuple),
)
node_terms = st.builds(
    NodeSelectorTerm,
    match_expressions=st.lists(
        selector_requirements(node=True).map(
            lambda r: NodeSelectorRequirement(key=r[0], operator=r[1], values=r[2])
        ),
        max_size=2,
    ).map(tuple),
    match_fields=st.lists(
        st.builds(
            NodeSelectorRequirement,
            key=st.just("metadata.name"),
            operator=st.sampled_from(["In", "NotIn"]),
            values=names.map(lambda n: (n,)),
        ),
        max_size=1,
    ).map(tuple),
)
weights = st.integers(min_value=1, max_value=100)
pod_affinity_terms = st.builds(
    PodAffinityTerm,
    label_selector=st.none() | label_selectors,
    namespaces=st.lists(names, max_size=2).map(tuple),
    topology_key=label_keys,
    namespace_selector=st.none() | label_selectors,
    match_label_keys=st.lists(label_keys, max_size=1).map(tuple),
    mismatch_label_keys=st.lists(label_keys, max_size=1).map(tuple),
)
weighted_terms = st.lists(
    st.builds(WeightedPodAffinityTerm, weight=weights, term=pod_affinity_terms), max_size=2
).map(tuple)
affinities = st.builds(
    Affinity,
    node_affinity=st.none()
    | st.builds(
        NodeAffinity,
        required=st.none()
        | st.builds(
            NodeSelector,
            node_selector_terms=st.lists(node_terms, min_size=1, max_size=2).map(tuple),
        ),
        preferred=st.lists(
            st.builds(PreferredSchedulingTerm, weight=weights, preference=node_terms), max_size=2
        ).map(tuple),
    ),
    pod_affinity=st.none()
    | st.builds(
        PodAffinity,
        required=st.lists(pod_affinity_terms, max_size=2).map(tuple),
        preferred=weighted_terms,
    ),
    pod_anti_affinity=st.none()
    | st.builds(
        PodAntiAffinity,
        required=st.lists(pod_affinity_terms, max_size=2).map(tuple),
        preferred=weighted_terms,
    ),
)


@st.composite
def tolerations(draw: st.DrawFn) -> Toleration:
    effect = draw(st.sampled_from(["", *TAINT_EFFECTS]))
    seconds = (
        draw(st.none() | st.integers(min_value=0, max_value=3600))
        if effect == "NoExecute"
        else None
    )
    kind = draw(st.sampled_from(["all", "exists", "equal", "empty-op", "numeric"]))
    if kind == "all":
        return Toleration(operator="Exists", effect=effect, toleration_seconds=seconds)
    key = draw(label_keys)
    if kind == "exists":
        return Toleration(key=key, operator="Exists", effect=effect, toleration_seconds=seconds)
    if kind == "numeric":
        value = str(draw(st.integers(min_value=0, max_value=1000)))
        op = draw(st.sampled_from(["Gt", "Lt"]))
        return Toleration(key=key, operator=op, value=value, effect=effect)
    op = "Equal" if kind == "equal" else ""
    return Toleration(
        key=key, operator=op, value=draw(label_values), effect=effect, toleration_seconds=seconds
    )


# A container may not ask for pods, and extended resources and hugepages need a limit equal
# to the request (the API server's rules); requests never exceed limits.
container_resources = st.dictionaries(
    st.sampled_from([CPU, MEMORY, EPHEMERAL_STORAGE, "nvidia.com/gpu", "hugepages-2Mi"]),
    st.integers(min_value=0, max_value=2**50),
    max_size=4,
)
_OVERCOMMITTABLE = (CPU, MEMORY, EPHEMERAL_STORAGE)


@st.composite
def containers(draw: st.DrawFn, *, init: bool = False) -> Container:
    limits = draw(container_resources)
    extra = {n: v for n, v in draw(container_resources).items() if n in _OVERCOMMITTABLE}
    # The codec copies limits into absent requests; a request may be below its limit.
    requests = {**limits, **{n: min(v, limits.get(n, v)) for n, v in extra.items()}}
    ports = draw(
        st.lists(
            st.builds(
                ContainerPort,
                container_port=st.integers(min_value=1, max_value=65535),
                host_port=st.sampled_from([0, 80, 8080, 65535]),
                protocol=st.sampled_from(["TCP", "UDP", "SCTP"]),
                host_ip=st.sampled_from(["", "10.0.0.1"]),
                name=st.sampled_from(["", "http"]),
            ),
            max_size=2,
        )
    )
    return Container(
        name=draw(names),
        image=draw(st.sampled_from(["", "nginx:1.25"])),
        requests=requests,
        limits=limits,
        ports=tuple(ports),
        restart_policy=draw(st.sampled_from([None, "Always"])) if init else None,
    )


spread_constraints = st.builds(
    TopologySpreadConstraint,
    max_skew=st.integers(min_value=1, max_value=5),
    topology_key=label_keys,
    when_unsatisfiable=st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]),
    label_selector=st.none() | label_selectors,
    min_domains=st.none(),
    node_affinity_policy=st.sampled_from([None, "Honor", "Ignore"]),
    node_taints_policy=st.sampled_from([None, "Honor", "Ignore"]),
    match_label_keys=st.lists(label_keys, max_size=1).map(tuple),
)


def _api_valid(items: list[Container], prefix: str) -> tuple[Container, ...]:
    # The API server wants unique container names and each host port claimed once.
    seen: set[tuple[int, str]] = set()
    out = []
    for i, c in enumerate(items):
        ports = []
        for p in c.ports:
            if p.host_port and (p.host_port, p.protocol) in seen:
                continue
            seen.add((p.host_port, p.protocol))
            ports.append(p)
        out.append(attrs.evolve(c, name=f"{prefix}{i}", ports=tuple(ports)))
    return tuple(out)


# minDomains goes with DoNotSchedule only.
spread_constraints = spread_constraints | st.builds(
    TopologySpreadConstraint,
    max_skew=st.integers(min_value=1, max_value=5),
    topology_key=label_keys,
    when_unsatisfiable=st.just("DoNotSchedule"),
    min_domains=st.integers(min_value=1, max_value=5),
)

pod_specs = st.builds(
    PodSpec,
    node_name=st.sampled_from(["", "node-1"]),
    scheduler_name=st.sampled_from(["default-scheduler", "batch"]),
    priority=st.none() | st.integers(min_value=-(2**31), max_value=2**31 - 1),
    priority_class_name=st.sampled_from(["", "high"]),
    preemption_policy=st.sampled_from(["PreemptLowerPriority", "Never"]),
    node_selector=labels,
    affinity=st.none() | affinities,
    tolerations=st.lists(tolerations(), max_size=3).map(tuple),
    containers=st.lists(containers(), min_size=1, max_size=3).map(lambda cs: _api_valid(cs, "c")),
    init_containers=st.lists(containers(init=True), max_size=2).map(lambda cs: _api_valid(cs, "i")),
    overhead=resources,
    # The API server wants one constraint per topologyKey and whenUnsatisfiable, and
    # scheduling gates named once each.
    topology_spread_constraints=st.lists(
        spread_constraints,
        max_size=2,
        unique_by=lambda c: (c.topology_key, c.when_unsatisfiable),
    ).map(tuple),
    scheduling_gates=st.lists(label_keys, max_size=2, unique=True).map(tuple),
    host_network=st.booleans(),
    termination_grace_period_seconds=st.none() | st.integers(min_value=0, max_value=600),
    volumes=st.lists(
        st.builds(Volume, name=names, persistent_volume_claim=st.none() | names), max_size=2
    ).map(tuple),
)
pod_statuses = st.builds(
    PodStatus,
    phase=st.sampled_from(["Pending", "Running", "Succeeded", "Failed", "Unknown"]),
    nominated_node_name=st.sampled_from(["", "node-2"]),
    conditions=st.lists(
        st.builds(
            PodCondition,
            type=st.sampled_from(["PodScheduled", "Ready"]),
            status=st.sampled_from(["True", "False", "Unknown"]),
            reason=st.sampled_from(["", "Unschedulable"]),
            message=free_text,
            last_transition_time=optional_times,
        ),
        max_size=2,
    ).map(tuple),
    start_time=optional_times,
)
pods = st.builds(Pod, metadata=metas(namespaced=True), spec=pod_specs, status=pod_statuses)


@st.composite
def node_statuses(draw: st.DrawFn) -> NodeStatus:
    capacity = draw(resources)
    allocatable = draw(resources) or dict(capacity)  # the codec fills an empty allocatable
    return NodeStatus(
        capacity=capacity,
        allocatable=allocatable,
        conditions=tuple(
            draw(
                st.lists(
                    st.builds(
                        NodeCondition,
                        type=st.sampled_from(["Ready", "MemoryPressure"]),
                        status=st.sampled_from(["True", "False"]),
                        reason=st.sampled_from(["", "KubeletReady"]),
                        message=free_text,
                    ),
                    max_size=2,
                )
            )
        ),
        images=tuple(
            draw(
                st.lists(
                    st.builds(
                        ContainerImage,
                        names=st.lists(names, min_size=1, max_size=2).map(tuple),
                        size_bytes=st.integers(min_value=0, max_value=2**40),
                    ),
                    max_size=2,
                )
            )
        ),
    )


nodes = st.builds(
    Node,
    metadata=metas(namespaced=False),
    spec=st.builds(
        NodeSpec,
        unschedulable=st.booleans(),
        taints=st.lists(
            st.builds(
                Taint,
                key=label_keys,
                value=label_values,
                effect=st.sampled_from(TAINT_EFFECTS),
                time_added=optional_times,
            ),
            max_size=3,
        ).map(tuple),
        pod_cidr=st.sampled_from(["", "10.244.0.0/24"]),
    ),
    status=node_statuses(),
)
int_or_percent = st.none() | st.integers(min_value=0, max_value=10) | st.sampled_from(["0%", "50%"])


@st.composite
def budgets(draw: st.DrawFn) -> PodDisruptionBudget:
    bound = draw(int_or_percent)
    use_min = draw(st.booleans())
    return PodDisruptionBudget(
        metadata=draw(metas(namespaced=True)),
        selector=draw(st.none() | label_selectors),
        min_available=bound if use_min else None,
        max_unavailable=None if use_min else bound,
        disruptions_allowed=draw(st.integers(min_value=0, max_value=5)),
        disrupted_pods=draw(st.dictionaries(names, times, max_size=2)),
    )


namespaces = st.builds(Namespace, metadata=metas(namespaced=False))
objects = st.one_of(pods, nodes, namespaces, budgets())


@given(pods)
@settings(deadline=None)
def test_pod_round_trip(pod: Pod) -> None:
    again = from_dict(to_dict(pod))
    assert again == pod
    # The derived values plugins read agree too.
    assert isinstance(again, Pod)
    assert again.requests == pod.requests
    assert again.non_zero_requests == pod.non_zero_requests
    assert again.host_ports == pod.host_ports
    assert again.has_affinity == pod.has_affinity


@given(nodes)
@settings(deadline=None)
def test_node_round_trip(node: Node) -> None:
    assert from_dict(to_dict(node)) == node


@given(objects)
@settings(deadline=None)
def test_round_trip_through_yaml_text(obj: object) -> None:
    text = yaml.safe_dump(to_dict(obj), sort_keys=False)
    assert loads_manifests(text) == [obj]
    hash(obj)  # every object is hashable
