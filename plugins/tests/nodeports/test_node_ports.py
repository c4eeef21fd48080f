"""Port of upstream nodeports/node_ports_test.go."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.objects import Container, ContainerPort, ObjectMeta, Pod, PodSpec
from schedframe.runtime import Framework
from schedframe_plugins.nodeports import ERR_REASON, NodePorts

_n = iter(range(1_000_000))


def new_pod(node: str, *port_infos: str) -> Pod:
    """Upstream newPod(host, "PROTO/IP/PORT", ...): one container with those host ports."""
    ports = []
    for info in port_infos:
        protocol, ip, port = info.split("/")
        ports.append(
            ContainerPort(container_port=0, host_port=int(port), protocol=protocol, host_ip=ip)
        )
    i = next(_n)
    return Pod(
        metadata=ObjectMeta(name=f"p{i}", namespace="default", uid=f"u{i}"),
        spec=PodSpec(node_name=node, containers=(Container(name="c", ports=tuple(ports)),)),
    )


def host_port_pod(port: int | None = None, node: str = "") -> Pod:
    """Upstream st.MakePod().HostPort(port).Node(node)."""
    return new_pod(node, f"TCP//{port}") if port else new_pod(node)


def plugin() -> NodePorts:
    return NodePorts(None, Framework())


U = (fw.Code.UNSCHEDULABLE, ERR_REASON)


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8080"),
            new_pod("m1", "UDP/127.0.0.1/9090"),
            None,
            id="other port",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8080"),
            new_pod("m1", "UDP/127.0.0.1/8080"),
            U,
            id="same udp port",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8080"),
            new_pod("m1", "TCP/127.0.0.1/8080"),
            U,
            id="same tcp port",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8080"),
            new_pod("m1", "TCP/127.0.0.2/8080"),
            None,
            id="different host ip",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8080"),
            new_pod("m1", "TCP/127.0.0.1/8080"),
            None,
            id="different protocol",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
            new_pod("m1", "UDP/127.0.0.1/8080"),
            U,
            id="second udp port conflict",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
            new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"),
            U,
            id="first tcp port conflict",
        ),
        pytest.param(
            new_pod("m1", "TCP/0.0.0.0/8001"),
            new_pod("m1", "TCP/127.0.0.1/8001"),
            U,
            id="first tcp port conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
            new_pod("m1", "TCP/127.0.0.1/8001"),
            U,
            id="TCP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8001"),
            new_pod("m1", "TCP/0.0.0.0/8001"),
            U,
            id="second tcp port conflict to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8001"),
            new_pod("m1", "TCP/0.0.0.0/8001"),
            None,
            id="second different protocol",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8001"),
            new_pod("m1", "TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"),
            U,
            id="UDP hostPort conflict due to 0.0.0.0 hostIP",
        ),
    ],
)
def test_node_ports(pod: Pod, existing: Pod, want: tuple[object, ...] | None) -> None:
    node_info = fw.NodeInfo(None, [existing])
    p = plugin()
    state = fw.CycleState()
    assert p.pre_filter(state, pod, [node_info]) is None
    status = p.filter(state, pod, node_info)
    assert (None if status is None else (status.code, *status.reasons)) == want


def test_skip_filter() -> None:
    status = plugin().pre_filter(fw.CycleState(), new_pod(""), [])
    assert isinstance(status, fw.Status) and status.code is fw.Code.SKIP


def test_pre_filter_disabled() -> None:
    status = plugin().filter(fw.CycleState(), new_pod(""), fw.NodeInfo())
    assert status is not None and status.code is fw.Code.ERROR
    assert status.message() == 'reading "PreFilterNodePorts" from cycleState: not found'


@pytest.mark.parametrize(
    ("old", "want"),
    [
        pytest.param(host_port_pod(), fw.QueueingHint.QUEUE_SKIP, id="skip-queue-on-unscheduled"),
        pytest.param(
            host_port_pod(node="fake-node"),
            fw.QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-non-hostport",
        ),
        pytest.param(
            host_port_pod(8081, "fake-node"),
            fw.QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-unrelated-hostport",
        ),
        pytest.param(
            host_port_pod(8080, "fake-node"), fw.QueueingHint.QUEUE, id="queue-on-released-hostport"
        ),
    ],
)
def test_is_schedulable_after_pod_deleted(old: Pod, want: fw.QueueingHint) -> None:
    assert plugin().is_schedulable_after_pod_deleted(host_port_pod(8080), old, None) == want


def test_hint_wrong_old_object() -> None:
    with pytest.raises(TypeError):
        plugin().is_schedulable_after_pod_deleted(host_port_pod(8080), "not-a-pod", None)


def test_events_to_register() -> None:
    events = [(e.event, e.queueing_hint_fn is not None) for e in plugin().events_to_register()]
    assert events == [
        (fw.ClusterEvent(fw.EventResource.POD, fw.ActionType.DELETE), True),
        (fw.ClusterEvent(fw.EventResource.NODE, fw.ActionType.ADD), False),
    ]


@pytest.mark.property
@given(
    st.lists(st.sampled_from([8000, 8001, 8002]), max_size=3),
    st.lists(st.sampled_from([8000, 8001, 8002]), min_size=1, max_size=3),
)
def test_conflict_iff_shared_port(used: list[int], wanted: list[int]) -> None:
    existing = new_pod("n", *(f"TCP/0.0.0.0/{p}" for p in used))
    pod = new_pod("", *(f"TCP/127.0.0.1/{p}" for p in wanted))
    p = plugin()
    state = fw.CycleState()
    p.pre_filter(state, pod, [])
    status = p.filter(state, pod, fw.NodeInfo(None, [existing]))
    assert (status is None) == (not set(used) & set(wanted))
