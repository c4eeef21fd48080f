"""HTTPExtender: interest, wire format, victims, errors (upstream extender_test.go cases)."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from schedframe.config import Extender, ExtenderManagedResource
from schedframe.extender import ExtenderError, HTTPExtender
from schedframe.framework import NodeInfo
from schedframe.objects import Pod
from schedframe.testing.builders import make_node, make_pod
from schedframe.testing.extender import ExtenderServer, keep_nodes, score_nodes

MEMORY = (ExtenderManagedResource(name="memory"),)


def extender(url: str = "http://127.0.0.1:1", **kwargs: Any) -> HTTPExtender:
    return HTTPExtender(Extender(url_prefix=url, **kwargs))


@pytest.mark.parametrize(
    ("managed", "pod", "want"),
    [
        pytest.param((), make_pod().obj(), True, id="Empty managed resources"),
        pytest.param(
            MEMORY, make_pod().container("app").obj(), False, id="Managed memory, empty resources"
        ),
        pytest.param(
            MEMORY,
            make_pod().req({"memory": "0"}).obj(),
            True,
            id="Managed memory, container memory with Requests",
        ),
        pytest.param(
            MEMORY,
            make_pod().lim({"memory": "0"}).obj(),
            True,
            id="Managed memory, container memory with Limits",
        ),
        pytest.param(
            MEMORY,
            make_pod().container("app").init_req({"memory": "0"}).obj(),
            True,
            id="Managed memory, init container memory",
        ),
    ],
)
def test_is_interested(managed: tuple[ExtenderManagedResource, ...], pod: Pod, want: bool) -> None:
    assert extender(managed_resources=managed).is_interested(pod) is want


@pytest.fixture
def server() -> Iterator[ExtenderServer]:
    with ExtenderServer(
        filter=keep_nodes(lambda n: n == "node1", reason="nope"),
        prioritize=score_nodes({"node1": 7}),
        bind=lambda args: {},
    ) as s:
        yield s


def infos(*names: str, pods: dict[str, list[Pod]] | None = None) -> list[NodeInfo]:
    pods = pods or {}
    return [NodeInfo(make_node(n).obj(), pods.get(n, [])) for n in names]


def test_node_cache_capable_sends_names_only(server: ExtenderServer) -> None:
    ext = extender(server.url, filter_verb="filter", node_cache_capable=True)
    kept, failed, unresolvable = ext.filter(make_pod("p").obj(), infos("node1", "node2"))
    assert [n.name for n in kept] == ["node1"]
    assert (failed, unresolvable) == ({"node2": "nope"}, {})
    verb, request = server.calls[0]
    assert verb == "filter"
    assert request["nodenames"] == ["node1", "node2"]
    assert "nodes" not in request
    assert request["pod"]["metadata"]["name"] == "p"


def test_full_nodes_are_sent_as_a_node_list(server: ExtenderServer) -> None:
    ext = extender(server.url, filter_verb="filter")
    kept, failed, _ = ext.filter(make_pod("p").obj(), infos("node1", "node2"))
    assert [n.name for n in kept] == ["node1"]
    _, request = server.calls[0]
    assert "nodenames" not in request
    assert [i["metadata"]["name"] for i in request["nodes"]["items"]] == ["node1", "node2"]
    assert request["nodes"]["items"][0]["kind"] == "Node"


def test_prioritize_returns_scores_and_weight(server: ExtenderServer) -> None:
    ext = extender(server.url, prioritize_verb="prioritize", weight=3)
    assert ext.prioritize(make_pod().obj(), infos("node1", "node2")) == (
        {"node1": 7, "node2": 0},
        3,
    )


def test_bind_sends_binding_args(server: ExtenderServer) -> None:
    ext = extender(server.url, bind_verb="bind")
    ext.bind(make_pod("p").namespace("ns").uid("u-1").obj(), "node1")
    assert server.calls == [
        ("bind", {"podName": "p", "podNamespace": "ns", "podUID": "u-1", "node": "node1"})
    ]


def test_bind_error_field_is_an_error() -> None:
    with ExtenderServer(bind=lambda args: {"error": "no room"}) as s:
        with pytest.raises(ExtenderError, match="^no room$"):
            extender(s.url, bind_verb="bind").bind(make_pod().obj(), "n")


def test_filter_error_field_is_an_error() -> None:
    with ExtenderServer(filter=lambda args: {"error": "broken"}) as s:
        with pytest.raises(ExtenderError, match="^broken$"):
            extender(s.url, filter_verb="filter").filter(make_pod().obj(), infos("a"))


def test_filter_claiming_an_unknown_node_is_an_error() -> None:
    with ExtenderServer(filter=lambda args: {"nodenames": ["ghost"]}) as s:
        ext = extender(s.url, filter_verb="filter", node_cache_capable=True)
        with pytest.raises(ExtenderError) as info:
            ext.filter(make_pod().obj(), infos("a"))
    assert str(info.value) == (
        f'extender "{s.url}" claims a filtered node "ghost" which is not found in the input '
        "node list"
    )


def test_http_500_is_an_error_naming_verb_url_and_code() -> None:
    with ExtenderServer(filter=lambda args: {}) as s:
        s.fault("filter", status=500)
        with pytest.raises(ExtenderError) as info:
            extender(s.url, filter_verb="filter").filter(make_pod().obj(), infos("a"))
    assert str(info.value) == f"failed filter with extender at URL {s.url}/filter, code 500"


def test_garbage_json_is_an_error() -> None:
    with ExtenderServer(filter=lambda args: {}) as s:
        s.fault("filter", body=b"{not json")
        with pytest.raises(ExtenderError, match="filter: invalid JSON"):
            extender(s.url, filter_verb="filter").filter(make_pod().obj(), infos("a"))


def test_timeout_is_an_error() -> None:
    with ExtenderServer(filter=lambda args: {}) as s:
        s.fault("filter", delay=1.0)
        with pytest.raises(ExtenderError) as info:
            extender(s.url, filter_verb="filter", http_timeout=0.1).filter(
                make_pod().obj(), infos("a")
            )
    assert str(info.value) == (
        f'Post "{s.url}/filter": context deadline exceeded (Client.Timeout exceeded while '
        "awaiting headers)"
    )


def test_stop_ends_a_request_still_delayed() -> None:
    """A request held by a delay fault outlived stop(): its daemon handler thread, which
    nothing joined, kept the connection open until the delay ended (or the garbage collector
    closed the socket, warning in a later test). stop() now ends it: the client sees the
    connection closed without a reply instead of waiting out the delay."""
    server = ExtenderServer(filter=lambda args: {}).start()
    server.fault("filter", delay=60.0)
    conn = http.client.HTTPConnection("127.0.0.1", int(server.url.rsplit(":", 1)[1]), timeout=20)
    try:
        conn.request("POST", "/filter", body=b"{}", headers={"Content-Type": "application/json"})
        deadline = time.monotonic() + 10
        while not server.verbs_called() and time.monotonic() < deadline:
            time.sleep(0.01)  # until the server holds the request in its delay
        assert server.verbs_called() == ["filter"]
        server.stop()
        with pytest.raises(http.client.RemoteDisconnected):
            conn.getresponse()
    finally:
        conn.close()
        server.stop()


def test_connection_refused_is_an_error() -> None:
    with ExtenderServer() as s:
        url = s.url
    with pytest.raises(ExtenderError, match=f'^Post "{url}/filter": '):
        extender(url, filter_verb="filter").filter(make_pod().obj(), infos("a"))


# upstream TestConvertToMetaVictims / TestConvertToVictims, through ProcessPreemption
POD1 = make_pod("pod1").uid("uid1").node("node1").obj()
POD2 = make_pod("pod2").uid("uid2").node("node2").obj()
POD3 = make_pod("pod3").uid("uid3").node("node1").obj()
POD4 = make_pod("pod4").uid("uid4").node("node2").obj()


def _echo_meta(args: dict[str, Any]) -> object:
    meta = args.get("nodeNameToMetaVictims")
    if meta is None:
        meta = {
            node: {
                "pods": [{"uid": p["metadata"]["uid"]} for p in v["pods"]],
                "numPDBViolations": v["numPDBViolations"],
            }
            for node, v in args["nodeNameToVictims"].items()
        }
    return {"nodeNameToMetaVictims": meta}


@pytest.mark.parametrize("cache_capable", [True, False])
def test_num_pdb_violations_go_both_ways(cache_capable: bool) -> None:
    victims = {"node1": ((POD1, POD3), 1), "node2": ((POD2, POD4), 2)}
    nodes = {
        n.name: n
        for n in infos("node1", "node2", pods={"node1": [POD1, POD3], "node2": [POD2, POD4]})
    }
    with ExtenderServer(preempt=_echo_meta) as s:
        ext = extender(s.url, preempt_verb="preempt", node_cache_capable=cache_capable)
        got = ext.process_preemption(make_pod("p").obj(), victims, nodes)
        _, request = s.calls[0]
    assert got == victims
    if cache_capable:
        assert request["nodeNameToMetaVictims"] == {
            "node1": {"pods": [{"uid": "uid1"}, {"uid": "uid3"}], "numPDBViolations": 1},
            "node2": {"pods": [{"uid": "uid2"}, {"uid": "uid4"}], "numPDBViolations": 2},
        }
        assert "nodeNameToVictims" not in request
    else:
        assert [p["metadata"]["name"] for p in request["nodeNameToVictims"]["node1"]["pods"]] == [
            "pod1",
            "pod3",
        ]
        assert "nodeNameToMetaVictims" not in request


def test_victim_not_on_its_node_is_an_error() -> None:
    reply = {"nodeNameToMetaVictims": {"node1": {"pods": [{"uid": "uid2"}], "numPDBViolations": 0}}}
    nodes = {n.name: n for n in infos("node1", pods={"node1": [POD1]})}
    with ExtenderServer(preempt=lambda args: reply) as s:
        ext = extender(s.url, preempt_verb="preempt")
        with pytest.raises(ExtenderError) as info:
            ext.process_preemption(make_pod().obj(), {"node1": ((POD1,), 0)}, nodes)
    assert str(info.value) == (
        f"extender: {s.url} claims to preempt pod (UID: uid2) on node: node1, but the pod is "
        "not found on that node"
    )


def test_wire_json_is_plain_json() -> None:
    with ExtenderServer(filter=keep_nodes(lambda n: True)) as s:
        extender(s.url, filter_verb="filter").filter(make_pod("p").obj(), infos("a"))
        _, request = s.calls[0]
    assert json.loads(json.dumps(request)) == request
    assert set(request) == {"pod", "nodes"}
