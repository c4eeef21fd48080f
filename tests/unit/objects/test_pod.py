"""Pod derived values (requests, host ports, flags), tolerations and taints.

Request tables are ported from component-helpers ``resource/helpers_test.go``; toleration
cases from ``core/v1/toleration_test.go``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import attrs
import pytest

from schedframe.objects import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    Affinity,
    Container,
    ContainerPort,
    Node,
    NodeAffinity,
    NodeSelector,
    ObjectMeta,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    PodCondition,
    PodSpec,
    PodStatus,
    ResourceList,
    Taint,
    Toleration,
)

GI = 1024**3


def c(name: str = "c", restart: str | None = None, **requests: int) -> Container:
    """A container whose requests are given as keyword arguments (cpu in millis)."""
    return Container(name=name, requests=dict(requests), restart_policy=restart)


def sidecar(name: str = "s", **requests: int) -> Container:
    return c(name, "Always", **requests)


def pod(
    containers: tuple[Container, ...] = (),
    init: tuple[Container, ...] = (),
    overhead: ResourceList | None = None,
) -> Pod:
    return Pod(
        metadata=ObjectMeta(name="p", namespace="ns", uid="ns/p"),
        spec=PodSpec(containers=containers, init_containers=init, overhead=overhead or {}),
    )


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        # TestPodRequestsAndLimits (requests side; pods built without API defaulting).
        pytest.param(
            pod((Container(name="c", limits={CPU: 9000}),)), {}, id="just-limit-no-overhead"
        ),
        pytest.param(
            pod(overhead={CPU: 5000, MEMORY: 5}), {CPU: 5000, MEMORY: 5}, id="just-overhead"
        ),
        pytest.param(
            pod((c(cpu=1000, memory=10),), overhead={CPU: 5000, MEMORY: 5}),
            {CPU: 6000, MEMORY: 15},
            id="req-and-overhead",
        ),
        # TestPodRequestsAndLimitsWithoutOverhead (with the overhead added back in).
        pytest.param(
            pod((c("foobar", cpu=1000, memory=5), c("foobar2", cpu=4000, memory=12))),
            {CPU: 5000, MEMORY: 17},
            id="two container no overhead - should just be sum of containers",
        ),
        pytest.param(
            pod(
                (c("foobar", cpu=1000, memory=5), c("foobar2", cpu=4000, memory=12)),
                (c("small-init", cpu=1000, memory=5), c("big-init", cpu=40000, memory=120)),
                overhead={CPU: 3000, MEMORY: 8},
            ),
            {CPU: 43000, MEMORY: 128},
            id="two container with overhead, massive init - should just be the largest init",
        ),
        # TestPodResourceRequests.
        pytest.param(
            pod((c(cpu=1000),), (c(cpu=4000),)),
            {CPU: 4000},
            id="nil options, larger init container",
        ),
        pytest.param(
            pod((c(cpu=2000), c(cpu=3000)), (c(cpu=2000),)),
            {CPU: 5000},
            id="nil options, larger containers",
        ),
        pytest.param(
            pod((c(cpu=2000), c(cpu=3000)), (c(cpu=2000),), overhead={CPU: 1000, MEMORY: GI}),
            {CPU: 6000, MEMORY: GI},
            id="pod overhead included",
        ),
        pytest.param(
            pod((c("container-1", cpu=1000),), (sidecar("restartable-init-1", cpu=1000),)),
            {CPU: 2000},
            id="restartable init container",
        ),
        pytest.param(
            pod(
                (c("container-1", cpu=1000),),
                (
                    c("init-1", cpu=5000),
                    sidecar("restartable-init-1", cpu=1000),
                    sidecar("restartable-init-2", cpu=2000),
                    sidecar("restartable-init-3", cpu=3000),
                ),
            ),
            {CPU: 7000},
            id="multiple restartable init containers",
        ),
        pytest.param(
            pod(
                (c("container-1", cpu=1000),),
                (
                    c("init-1", cpu=5000),
                    sidecar("restartable-init-1", cpu=1000),
                    sidecar("restartable-init-2", cpu=2000),
                    c("init-2", cpu=5000),
                    sidecar("restartable-init-3", cpu=3000),
                ),
            ),
            {CPU: 8000},
            id="multiple restartable and regular init containers",
        ),
        pytest.param(
            pod(
                (c("container-1", cpu=100000),),
                (sidecar("restartable-init-1", cpu=10000), c("init-1", cpu=200000)),
            ),
            {CPU: 210000},
            id="restartable-init, init and regular",
        ),
        pytest.param(pod(), {}, id="nil"),
        pytest.param(
            pod((c(cpu=1000),), (c(memory=100 * 1024**2),)),
            {CPU: 1000, MEMORY: 100 * 1024**2},
            id="init container contributes only the resources it asks for",
        ),
        pytest.param(
            pod(
                (Container(name="c", requests={"nvidia.com/gpu": 1}),),
                (Container(name="s", requests={"nvidia.com/gpu": 1}, restart_policy="Always"),),
            ),
            {"nvidia.com/gpu": 2},
            id="extended resources add up like any other",
        ),
    ],
)
def test_requests(p: Pod, expected: ResourceList) -> None:
    assert p.requests == expected


D_CPU, D_MEM = DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        pytest.param(pod(), {}, id="no containers, nothing to default"),
        pytest.param(pod((c(),)), {CPU: D_CPU, MEMORY: D_MEM}, id="best effort container"),
        pytest.param(
            pod((c(cpu=0, memory=0),)), {CPU: 0, MEMORY: 0}, id="explicit zero stays zero"
        ),
        pytest.param(pod((c(cpu=1000),)), {CPU: 1000, MEMORY: D_MEM}, id="missing memory only"),
        # "non missing container requests applied to init container / regular container".
        pytest.param(
            pod(init=(c("i1", cpu=1000),)),
            {CPU: 1000, MEMORY: D_MEM},
            id="non missing container requests applied to init container",
        ),
        pytest.param(
            pod((c(), c()), (c(cpu=500),)),
            {CPU: 500, MEMORY: 2 * D_MEM},
            id="every container counts the defaults",
        ),
        pytest.param(
            pod((c(),), (sidecar(),), overhead={CPU: 10}),
            {CPU: 2 * D_CPU + 10, MEMORY: 2 * D_MEM},
            id="sidecars and overhead",
        ),
    ],
)
def test_non_zero_requests(p: Pod, expected: ResourceList) -> None:
    assert p.non_zero_requests == expected


def test_derived_values_are_computed_once() -> None:
    p = pod((c(cpu=1),))
    assert p.requests is p.requests
    assert p.non_zero_requests is p.non_zero_requests
    assert p.host_ports is p.host_ports


def test_host_ports_follow_get_host_ports() -> None:
    p = Pod(
        metadata=ObjectMeta(name="p"),
        spec=PodSpec(
            init_containers=(
                Container(name="init", ports=(ContainerPort(container_port=1, host_port=81),)),
                Container(
                    name="side",
                    restart_policy="Always",
                    ports=(ContainerPort(container_port=2, host_port=82, protocol="UDP"),),
                ),
            ),
            containers=(
                Container(
                    name="app",
                    ports=(
                        ContainerPort(container_port=80),
                        ContainerPort(container_port=8080, host_port=8080, host_ip="10.0.0.1"),
                        ContainerPort(container_port=53, host_port=53, protocol=""),
                    ),
                ),
            ),
        ),
    )
    assert p.host_ports == (
        ("0.0.0.0", "UDP", 82),
        ("10.0.0.1", "TCP", 8080),
        ("0.0.0.0", "TCP", 53),
    )


@pytest.mark.parametrize(
    ("affinity", "has_affinity", "has_required_anti"),
    [
        (None, False, False),
        (Affinity(), False, False),
        (Affinity(node_affinity=NodeAffinity(required=NodeSelector())), False, False),
        (Affinity(pod_affinity=PodAffinity()), True, False),
        (Affinity(pod_anti_affinity=PodAntiAffinity()), True, False),
        (
            Affinity(
                pod_anti_affinity=PodAntiAffinity(
                    required=(PodAffinityTerm(topology_key="kubernetes.io/hostname"),)
                )
            ),
            True,
            True,
        ),
    ],
)
def test_affinity_flags(
    affinity: Affinity | None, has_affinity: bool, has_required_anti: bool
) -> None:
    p = Pod(metadata=ObjectMeta(name="p"), spec=PodSpec(affinity=affinity))
    assert p.has_affinity is has_affinity
    assert p.has_required_anti_affinity is has_required_anti


def test_shortcuts() -> None:
    created = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    p = Pod(
        metadata=ObjectMeta(
            name="web", namespace="shop", uid="u1", labels={"a": "b"}, creation_timestamp=created
        ),
        spec=PodSpec(node_name="n1", scheduler_name="custom", scheduling_gates=("g",)),
        status=PodStatus(nominated_node_name="n2", start_time=created),
    )
    assert (p.name, p.namespace, p.uid, p.key) == ("web", "shop", "u1", "shop/web")
    assert (p.node_name, p.scheduler_name, p.nominated_node_name) == ("n1", "custom", "n2")
    assert p.labels == {"a": "b"}
    assert p.priority == 0
    assert p.creation_timestamp == created
    assert p.start_time == created
    assert p.deletion_timestamp is None
    assert p.is_scheduling_gated
    assert not pod().is_scheduling_gated
    assert attrs.evolve(p, spec=PodSpec(priority=-5)).priority == -5


def test_copy_helpers_return_new_pods_and_keep_derived_values() -> None:
    p = pod((c(cpu=100, memory=10),))
    requests = p.requests
    bound = p.with_node_name("n1")
    assert bound.node_name == "n1"
    assert p.node_name == ""
    assert bound.requests is requests
    nominated = p.with_nominated_node_name("n2")
    assert nominated.nominated_node_name == "n2"
    assert nominated.requests is requests
    assert p.nominated_node_name == ""
    fresh = pod((c(cpu=100, memory=10),)).with_node_name("n3")
    assert fresh.requests == requests  # computed on demand when the original had none


def test_copy_helpers_equal_attrs_evolve() -> None:
    """The helpers copy without attrs.evolve; the copies are what evolve makes."""
    p = pod((c(cpu=100, memory=10),))
    assert p.with_node_name("n1") == attrs.evolve(p, spec=attrs.evolve(p.spec, node_name="n1"))
    assert p.with_status(phase="Running", nominated_node_name="n2") == attrs.evolve(
        p, status=attrs.evolve(p.status, phase="Running", nominated_node_name="n2")
    )
    bound = p.with_node_name("n1")
    assert bound.metadata is p.metadata and bound.status is p.status
    assert bound.spec.containers is p.spec.containers
    with pytest.raises(TypeError, match="PodStatus has no field"):
        p.with_status(phase_typo="Running")
    requests = p.requests  # computed now: a metadata copy carries it
    stamped = p.with_metadata(resource_version="7")
    assert stamped == attrs.evolve(p, metadata=attrs.evolve(p.metadata, resource_version="7"))
    assert stamped.spec is p.spec and stamped.requests is requests


def test_with_changes_is_the_three_helpers_in_one_copy() -> None:
    p = pod((c(cpu=100, memory=10),))
    requests = p.requests
    both = p.with_changes(
        node_name="n1",
        metadata={"resource_version": "9"},
        status={"nominated_node_name": "", "phase": "Running"},
    )
    chained = (
        p.with_node_name("n1")
        .with_metadata(resource_version="9")
        .with_status(nominated_node_name="", phase="Running")
    )
    assert both == chained
    assert both.requests is requests
    only_status = p.with_changes(status={"phase": "Running"})
    assert only_status == p.with_status(phase="Running")
    assert only_status.spec is p.spec and only_status.metadata is p.metadata
    assert p.with_changes() == p


def test_with_condition_replaces_by_type() -> None:
    scheduled = PodCondition(type="PodScheduled", status="False", reason="Unschedulable")
    ready = PodCondition(type="Ready", status="False")
    p = pod().with_condition(scheduled).with_condition(ready)
    assert p.status.conditions == (scheduled, ready)
    done = PodCondition(type="PodScheduled", status="True")
    assert p.with_condition(done).status.conditions == (done, ready)
    assert p.with_status(phase="Running").status.phase == "Running"
    assert p.status.phase == "Pending"


def test_pods_compare_and_hash_by_content() -> None:
    assert pod((c(cpu=1),)) == pod((c(cpu=1),))
    assert pod((c(cpu=1),)) != pod((c(cpu=2),))
    assert hash(pod((c(cpu=1),)).with_node_name("a")) == hash(pod((c(cpu=1),)).with_node_name("a"))


def test_container_is_restartable_init() -> None:
    assert sidecar().is_restartable_init
    assert not c().is_restartable_init
    assert not c(restart="OnFailure").is_restartable_init


SLA = "node.kubernetes.io/sla"


@pytest.mark.parametrize(
    ("toleration", "taint", "tolerated"),
    [
        pytest.param(
            Toleration(key="foo", operator="Exists", effect="NoSchedule"),
            Taint(key="foo", effect="NoSchedule"),
            True,
            id="same key and effect, Exists, taint has no value",
        ),
        pytest.param(
            Toleration(key="foo", operator="Exists", effect="NoSchedule"),
            Taint(key="foo", value="bar", effect="NoSchedule"),
            True,
            id="same key and effect, Exists, taint has some value",
        ),
        pytest.param(
            Toleration(operator="Exists", effect="NoSchedule"),
            Taint(key="foo", value="bar", effect="NoSchedule"),
            True,
            id="empty key and Exists match all taints",
        ),
        pytest.param(
            Toleration(key="foo", operator="Equal", value="bar", effect="NoSchedule"),
            Taint(key="foo", value="bar", effect="NoSchedule"),
            True,
            id="same key, effect and value, Equal",
        ),
        pytest.param(
            Toleration(key="foo", operator="Equal", value="value1", effect="NoSchedule"),
            Taint(key="foo", value="value2", effect="NoSchedule"),
            False,
            id="different values, Equal",
        ),
        pytest.param(
            Toleration(key="foo", operator="Equal", value="bar", effect="NoSchedule"),
            Taint(key="foo", value="bar", effect="NoExecute"),
            False,
            id="different effects",
        ),
        pytest.param(
            Toleration(key=SLA, operator="Gt", value="950", effect="NoSchedule"),
            Taint(key=SLA, value="800", effect="NoSchedule"),
            False,
            id="Gt - taint value less than toleration value",
        ),
        pytest.param(
            Toleration(key=SLA, operator="Gt", value="750", effect="NoSchedule"),
            Taint(key=SLA, value="950", effect="NoSchedule"),
            True,
            id="Gt - taint value greater than toleration value",
        ),
        pytest.param(
            Toleration(key=SLA, operator="Lt", value="800", effect="NoSchedule"),
            Taint(key=SLA, value="950", effect="NoSchedule"),
            False,
            id="Lt - taint value greater than toleration value",
        ),
        pytest.param(
            Toleration(key=SLA, operator="Lt", value="950", effect="NoSchedule"),
            Taint(key=SLA, value="800", effect="NoSchedule"),
            True,
            id="Lt - taint value less than toleration value",
        ),
        pytest.param(
            Toleration(key=SLA, operator="Gt", value="950", effect="NoSchedule"),
            Taint(key=SLA, value="950", effect="NoSchedule"),
            False,
            id="Gt with equal numeric value",
        ),
        pytest.param(
            Toleration(key=SLA, operator="Gt", value="950", effect="NoSchedule"),
            Taint(key=SLA, value="high", effect="NoSchedule"),
            False,
            id="Gt with non-numeric taint value",
        ),
        pytest.param(
            Toleration(key="test-key", operator="Gt", value="-100", effect="NoSchedule"),
            Taint(key="test-key", value="-200", effect="NoSchedule"),
            False,
            id="Gt with negative values",
        ),
        pytest.param(
            Toleration(
                key="test-key", operator="Gt", value="9223372036854775806", effect="NoSchedule"
            ),
            Taint(key="test-key", value="100", effect="NoSchedule"),
            False,
            id="Gt with large int64 values",
        ),
        pytest.param(
            Toleration(key="foo", operator="", value="bar"),
            Taint(key="foo", value="bar", effect="PreferNoSchedule"),
            True,
            id="empty operator means Equal, empty effect matches every effect",
        ),
        pytest.param(
            Toleration(key="foo", operator="Exists"),
            Taint(key="other", effect="NoSchedule"),
            False,
            id="different keys",
        ),
        pytest.param(
            Toleration(key="foo", operator="Bogus", value="bar"),
            Taint(key="foo", value="bar", effect="NoSchedule"),
            False,
            id="unknown operator tolerates nothing",
        ),
    ],
)
def test_toleration_tolerates_taint(toleration: Toleration, taint: Taint, tolerated: bool) -> None:
    assert toleration.tolerates(taint) is tolerated


@pytest.mark.parametrize(
    ("taint", "text", "long"),
    [
        (
            Taint(key="dedicated", value="gpu", effect="NoSchedule"),
            "{dedicated: gpu}",
            "dedicated=gpu:NoSchedule",
        ),
        (Taint(key="dedicated", effect="NoExecute"), "{dedicated: }", "dedicated:NoExecute"),
        (Taint(key="k", value="v", effect=""), "{k: v}", "k=v:"),
        (Taint(key="k", effect=""), "{k: }", "k"),
    ],
)
def test_taint_strings(taint: Taint, text: str, long: str) -> None:
    assert str(taint) == text
    assert taint.to_string() == long


def test_taint_matches_by_key_and_effect() -> None:
    a = Taint(key="k", value="1", effect="NoSchedule")
    assert a.matches(Taint(key="k", value="2", effect="NoSchedule"))
    assert not a.matches(Taint(key="k", value="1", effect="NoExecute"))


def test_node_shortcuts() -> None:
    from schedframe.objects import NodeSpec, NodeStatus

    taint = Taint(key="k", effect="NoSchedule")
    node = Node(
        metadata=ObjectMeta(name="n1", uid="n1", labels={"zone": "a"}),
        spec=NodeSpec(unschedulable=True, taints=(taint,)),
        status=NodeStatus(capacity={CPU: 4000}, allocatable={CPU: 3800}),
    )
    assert (node.name, node.uid, node.labels) == ("n1", "n1", {"zone": "a"})
    assert node.allocatable == {CPU: 3800}
    assert node.taints == (taint,)
    assert node.unschedulable
