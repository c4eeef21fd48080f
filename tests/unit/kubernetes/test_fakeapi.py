"""The fake API server speaks kube-apiserver's protocol (ecosystem.md §2c, item by item)."""

from __future__ import annotations

import gc
import socket
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from schedframe.testing.fakeapi import Authorizer, FakeAPIServer

from ._support import Raw, node, pod

PODS = "/api/v1/namespaces/default/pods"


def status_of(body: dict[str, Any]) -> tuple[str, int, str]:
    assert body["kind"] == "Status" and body["apiVersion"] == "v1"
    assert body["status"] == "Failure"
    return body["reason"], body["code"], body["message"]


# -- resourceVersion, list, selectors ------------------------------------------------------------


def test_every_write_takes_the_next_global_resource_version(fake: FakeAPIServer, raw: Raw) -> None:
    before = fake.resource_version
    n = fake.create(node("n1"))
    p = fake.create(pod("p1"))
    assert int(n["metadata"]["resourceVersion"]) == before + 1
    assert int(p["metadata"]["resourceVersion"]) == before + 2
    code, body, _ = raw.request("GET", "/api/v1/pods")
    assert code == 200
    assert body["kind"] == "PodList" and body["metadata"]["resourceVersion"] == str(before + 2)
    item = body["items"][0]
    assert "kind" not in item and "apiVersion" not in item  # as the real server lists
    assert item["metadata"]["uid"] and item["status"]["phase"] == "Pending"
    assert item["spec"]["schedulerName"] == "default-scheduler"


def test_list_resource_version_semantics(fake: FakeAPIServer, raw: Raw) -> None:
    fake.create(pod("p1"))
    rv = fake.resource_version
    assert raw.request("GET", PODS, query={"resourceVersion": "0"})[0] == 200
    assert raw.request("GET", PODS, query={"resourceVersion": str(rv - 1)})[0] == 200
    code, body, _ = raw.request(
        "GET", PODS, query={"resourceVersion": str(rv - 1), "resourceVersionMatch": "Exact"}
    )
    assert code == 410 and status_of(body)[0] == "Expired"
    code, body, _ = raw.request("GET", PODS, query={"resourceVersion": str(rv + 100)})
    assert code == 504 and "Too large resource version" in body["message"]


def test_field_selectors(fake: FakeAPIServer, raw: Raw) -> None:
    fake.create(pod("a"))
    fake.create(pod("b", node_name="n1"))
    fake.create(pod("c", scheduler="other"))
    fake.patch("Pod", "a", {"status": {"phase": "Succeeded"}}, subresource="status")

    def names(selector: str) -> list[str]:
        code, body, _ = raw.request("GET", "/api/v1/pods", query={"fieldSelector": selector})
        assert code == 200, body
        return [i["metadata"]["name"] for i in body["items"]]

    assert names("status.phase!=Succeeded,status.phase!=Failed") == ["b", "c"]
    assert names("spec.nodeName=") == ["a", "c"]
    assert names("spec.nodeName==n1") == ["b"]
    assert names("spec.schedulerName=other,metadata.name=c") == ["c"]
    code, body, _ = raw.request("GET", "/api/v1/pods", query={"fieldSelector": "spec.bogus=1"})
    assert code == 400
    assert status_of(body) == ("BadRequest", 400, "field label not supported: spec.bogus")
    code, body, _ = raw.request("GET", "/api/v1/pods", query={"fieldSelector": "nonsense"})
    assert code == 400 and "can't understand" in body["message"]


def test_label_selectors(fake: FakeAPIServer, raw: Raw) -> None:
    fake.create(pod("a", labels={"app": "web", "tier": "1"}))
    fake.create(pod("b", labels={"app": "db"}))
    fake.create(pod("c"))

    def names(selector: str) -> list[str]:
        code, body, _ = raw.request("GET", PODS, query={"labelSelector": selector})
        assert code == 200, body
        return [i["metadata"]["name"] for i in body["items"]]

    assert names("app=web") == ["a"]
    assert names("app!=web") == ["b", "c"]
    assert names("app in (web,db)") == ["a", "b"]
    assert names("app notin (web)") == ["b", "c"]
    assert names("app") == ["a", "b"]
    assert names("!app") == ["c"]
    assert names("tier>0") == ["a"]
    assert raw.request("GET", PODS, query={"labelSelector": "a in b"})[0] == 400


# -- watch ---------------------------------------------------------------------------------------


def test_watch_streams_ndjson_from_a_resource_version_and_ends_cleanly(
    fake: FakeAPIServer, raw: Raw
) -> None:
    fake.create(pod("old"))
    rv = fake.resource_version
    fake.create(pod("p1"))
    fake.delete("Pod", "p1")
    events = list(raw.watch(PODS, {"resourceVersion": str(rv), "timeoutSeconds": "1"}))
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "p1"),
        ("DELETED", "p1"),
    ]
    assert events[0]["object"]["kind"] == "Pod"  # watch objects carry their kind
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and rvs[0] > rv


def test_watch_from_zero_starts_with_the_current_objects(fake: FakeAPIServer, raw: Raw) -> None:
    fake.create(pod("p1"))
    events = list(raw.watch(PODS, {"resourceVersion": "0", "timeoutSeconds": "1"}))
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "p1")]


def test_bookmarks_carry_only_a_resource_version(fake: FakeAPIServer, raw: Raw) -> None:
    fake.create(pod("p1"))
    fake.create(node("n1"))  # a later revision of another resource
    rv = fake.resource_version
    events = list(
        raw.watch(
            PODS, {"resourceVersion": str(rv), "allowWatchBookmarks": "true", "timeoutSeconds": "1"}
        )
    )
    bookmarks = [e for e in events if e["type"] == "BOOKMARK"]
    assert bookmarks and len(bookmarks) == len(events)
    assert bookmarks[0]["object"] == {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": str(rv)},
    }


def test_no_bookmarks_unless_asked(fake: FakeAPIServer, raw: Raw) -> None:
    events = list(
        raw.watch(PODS, {"resourceVersion": str(fake.resource_version), "timeoutSeconds": "1"})
    )
    assert events == []


def test_selector_transitions_become_added_and_deleted(fake: FakeAPIServer, raw: Raw) -> None:
    fake.create(pod("p1"))
    rv = fake.resource_version
    fake.patch("Pod", "p1", {"status": {"phase": "Succeeded"}}, subresource="status")
    events = list(
        raw.watch(
            "/api/v1/pods",
            {
                "resourceVersion": str(rv),
                "fieldSelector": "status.phase!=Succeeded,status.phase!=Failed",
                "timeoutSeconds": "1",
            },
        )
    )
    assert [e["type"] for e in events] == ["DELETED"]
    gone = events[0]["object"]
    assert gone["status"]["phase"] == "Pending"  # the old content ...
    assert int(gone["metadata"]["resourceVersion"]) == rv + 1  # ... at the event's revision
    # And an object that starts matching is ADDED.
    rv = fake.resource_version
    fake.create(pod("p2", node_name="n1"))
    fake.create(pod("p3"))
    events = list(
        raw.watch(
            PODS,
            {"resourceVersion": str(rv), "fieldSelector": "spec.nodeName=", "timeoutSeconds": "1"},
        )
    )
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "p3")]


def test_too_old_resource_version_is_an_in_stream_410(raw: Raw) -> None:
    with FakeAPIServer(window_size=2) as fake:
        r = Raw(fake.port, token=None)
        start = fake.resource_version
        for i in range(5):
            fake.create(pod(f"p{i}"))
        events = list(r.watch(PODS, {"resourceVersion": str(start), "timeoutSeconds": "5"}))
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    reason, code, message = status_of(events[0]["object"])
    assert (reason, code) == ("Expired", 410)
    assert message.startswith(f"too old resource version: {start} (")


def test_compaction_and_http_410_knob(fake: FakeAPIServer, raw: Raw) -> None:
    fake.create(pod("p1"))
    rv = fake.resource_version
    fake.create(pod("p2"))
    fake.compact()
    events = list(raw.watch(PODS, {"resourceVersion": str(rv), "timeoutSeconds": "1"}))
    assert [e["type"] for e in events] == ["ERROR"]
    fake.fail_watches_with_gone()
    code, body, _ = raw.request(
        "GET", PODS, query={"watch": "true", "resourceVersion": str(fake.resource_version)}
    )
    assert code == 410 and status_of(body)[0] == "Gone"


def test_expire_and_drop_open_watches(fake: FakeAPIServer, raw: Raw) -> None:
    got: list[list[dict[str, Any]]] = [[], []]

    def watch(i: int) -> None:
        got[i] = list(
            raw.watch(PODS, {"resourceVersion": str(fake.resource_version), "timeoutSeconds": "10"})
        )

    t = threading.Thread(target=watch, args=(0,))
    t.start()
    assert fake.wait_for_watches(1, "pods")
    assert fake.expire_watches("pods") == 1
    t.join(5)
    assert [e["type"] for e in got[0]] == ["ERROR"] and got[0][0]["object"]["code"] == 410
    t = threading.Thread(target=watch, args=(1,))
    t.start()
    assert fake.wait_for_watches(1, "pods")
    assert fake.drop_watches() == 1
    t.join(5)
    assert not t.is_alive() and got[1] == []
    assert fake.open_watches() == 0


# -- errors, binding, status, deletion -----------------------------------------------------------


def test_error_bodies_are_metav1_status(fake: FakeAPIServer, raw: Raw) -> None:
    code, body, _ = raw.request("GET", f"{PODS}/nope")
    assert code == 404
    assert status_of(body) == ("NotFound", 404, 'pods "nope" not found')
    assert body["details"] == {"name": "nope", "kind": "pods"}
    assert raw.request("POST", PODS, pod("p1"))[0] == 201
    code, body, _ = raw.request("POST", PODS, pod("p1"))
    assert code == 409 and status_of(body) == ("AlreadyExists", 409, 'pods "p1" already exists')
    code, body, _ = raw.request(
        "POST", "/api/v1/namespaces/ghost/pods", pod("x", namespace="ghost")
    )
    assert code == 404 and body["message"] == 'namespaces "ghost" not found'
    code, body, _ = raw.request("GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/x")
    assert body["message"] == 'poddisruptionbudgets.policy "x" not found'
    assert Raw(fake.port, token="wrong").request("GET", PODS)[0] == 401


def test_optimistic_concurrency(fake: FakeAPIServer, raw: Raw) -> None:
    created = fake.create(pod("p1"))
    stale = dict(created, metadata={**created["metadata"], "labels": {"a": "1"}})
    code, _, _ = raw.request("PUT", f"{PODS}/p1", stale)
    assert code == 200
    code, body, _ = raw.request("PUT", f"{PODS}/p1", stale)
    assert code == 409
    assert body["message"] == (
        'Operation cannot be fulfilled on pods "p1": the object has been modified; please apply '
        "your changes to the latest version and try again"
    )


def test_binding_semantics_and_messages(fake: FakeAPIServer, raw: Raw) -> None:
    created = fake.create(pod("p1"))
    uid = created["metadata"]["uid"]

    def binding(name: str, node_name: str = "n1", **meta: Any) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, **meta},
            "target": {"kind": "Node", "name": node_name},
        }

    code, body, _ = raw.request("POST", f"{PODS}/p1/binding", binding("p2"))
    assert code == 400 and body["message"] == "name in URL does not match name in Binding object"
    code, body, _ = raw.request("POST", f"{PODS}/zz/binding", binding("zz"))
    assert code == 404
    code, body, _ = raw.request("POST", f"{PODS}/p1/binding", binding("p1", uid="other"))
    assert code == 409 and "Precondition failed: UID in precondition: other" in body["message"]
    rv = fake.resource_version
    code, body, _ = raw.request(
        "POST", f"{PODS}/p1/binding", binding("p1", uid=uid, annotations={"k": "v"})
    )
    assert code == 201 and body["status"] == "Success"
    bound = fake.get("Pod", "p1")
    assert bound is not None
    assert bound["spec"]["nodeName"] == "n1"
    assert bound["metadata"]["annotations"] == {"k": "v"}
    assert int(bound["metadata"]["resourceVersion"]) == rv + 1
    assert [c["type"] for c in bound["status"]["conditions"]] == ["PodScheduled"]
    assert bound["status"]["conditions"][0]["status"] == "True"
    code, body, _ = raw.request("POST", f"{PODS}/p1/binding", binding("p1", "n2"))
    assert code == 409
    assert status_of(body) == (
        "Conflict",
        409,
        'Operation cannot be fulfilled on pods/binding "p1": pod p1 is already assigned to node "n1"',
    )
    fake.create(pod("gated", gates=("g",)))
    code, body, _ = raw.request("POST", f"{PODS}/gated/binding", binding("gated"))
    assert body["message"].endswith("pod gated has non-empty .spec.schedulingGates")
    # Legacy POST .../bindings.
    fake.create(pod("legacy"))
    assert raw.request("POST", "/api/v1/namespaces/default/bindings", binding("legacy"))[0] == 201
    assert [b.name for b in fake.bindings] == ["p1", "legacy"]
    assert len(fake.binding_conflicts) == 2


def test_binding_a_pod_being_deleted(fake: FakeAPIServer, raw: Raw) -> None:
    fake.create(pod("p1", node_name="n1"))
    fake.create(pod("p2"))
    p2 = fake.get("Pod", "p2")
    assert p2 is not None
    p2["metadata"]["finalizers"] = ["x"]
    fake.update(p2)
    fake.delete("Pod", "p2")
    code, body, _ = raw.request(
        "POST", f"{PODS}/p2/binding", {"metadata": {"name": "p2"}, "target": {"name": "n1"}}
    )
    assert code == 409 and body["message"].endswith(
        "pod p2 is being deleted, cannot be assigned to a host"
    )


def test_status_strategic_merge_patch(fake: FakeAPIServer, raw: Raw) -> None:
    fake.create(pod("p1"))
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "no"}
    patch: dict[str, Any] = {
        "status": {
            "conditions": [cond],
            "nominatedNodeName": "n2",
            "$setElementOrder/conditions": [{"type": "PodScheduled"}],
        }
    }
    code, body, _ = raw.request(
        "PATCH", f"{PODS}/p1/status", patch, content_type="application/strategic-merge-patch+json"
    )
    assert code == 200, body
    assert body["status"]["conditions"] == [cond]
    assert body["status"]["nominatedNodeName"] == "n2"
    other = {"type": "DisruptionTarget", "status": "True"}
    patch = {
        "status": {
            "conditions": [other, {"type": "PodScheduled", "message": "still no"}],
            "nominatedNodeName": None,
        }
    }
    code, body, _ = raw.request(
        "PATCH", f"{PODS}/p1/status", patch, content_type="application/strategic-merge-patch+json"
    )
    conditions = body["status"]["conditions"]
    assert conditions == [{**cond, "message": "still no"}, other]  # merged by type
    assert "nominatedNodeName" not in body["status"]
    # The status subresource never changes the spec; a no-op patch writes nothing.
    rv = fake.resource_version
    code, body, _ = raw.request(
        "PATCH",
        f"{PODS}/p1/status",
        {"spec": {"nodeName": "x"}},
        content_type="application/merge-patch+json",
    )
    assert code == 200 and "nodeName" not in body["spec"]
    assert fake.resource_version == rv
    code, body, _ = raw.request("PATCH", f"{PODS}/p1/status", {}, content_type="text/plain")
    assert code == 415


def test_graceful_deletion(fake: FakeAPIServer, raw: Raw) -> None:
    fake.create(pod("bound", node_name="n1"))
    fake.create(pod("unbound"))
    code, body, _ = raw.request("DELETE", f"{PODS}/bound", {})
    assert code == 200 and body["metadata"]["deletionTimestamp"]
    assert body["metadata"]["deletionGracePeriodSeconds"] == 30
    assert fake.get("Pod", "bound") is not None
    code, body, _ = raw.request("DELETE", f"{PODS}/unbound", {})
    assert code == 200 and fake.get("Pod", "unbound") is None
    assert fake.finalize_deletions() == 1 and fake.get("Pod", "bound") is None
    fake.create(pod("p3"))
    code, body, _ = raw.request("DELETE", f"{PODS}/p3", {"preconditions": {"uid": "nope"}})
    assert code == 409 and "Precondition failed: UID in precondition: nope" in body["message"]


def test_kubelet_delay_removes_gracefully_deleted_pods() -> None:
    with FakeAPIServer(kubelet_delay=0.05) as fake:
        fake.create(pod("p", node_name="n1"))
        fake.delete("Pod", "p")
        assert fake.get("Pod", "p") is not None
        deadline = time.monotonic() + 5
        while fake.get("Pod", "p") is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert fake.get("Pod", "p") is None


def test_events_are_validated(fake: FakeAPIServer, raw: Raw) -> None:
    path = "/apis/events.k8s.io/v1/namespaces/default/events"
    code, body, _ = raw.request("POST", path, {"metadata": {"name": "e1"}, "type": "Normal"})
    assert code == 422
    assert body["message"] == (
        'Event.events.k8s.io "e1" is invalid: [eventTime: Required value, reportingController: '
        "Required value, reportingInstance: Required value, action: Required value, reason: "
        "Required value]"
    )
    event = {
        "metadata": {"name": "e1"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "s",
        "reportingInstance": "s-h",
        "action": "Binding",
        "reason": "Scheduled",
        "type": "Normal",
        "note": "x",
    }
    assert raw.request("POST", path, event)[0] == 201
    code, body, _ = raw.request(
        "PATCH",
        f"{path}/e1",
        {"series": {"count": 2}},
        content_type="application/strategic-merge-patch+json",
    )
    assert code == 200 and body["series"] == {"count": 2}


def test_leases_use_optimistic_concurrency(fake: FakeAPIServer, raw: Raw) -> None:
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    code, lease, _ = raw.request(
        "POST", path, {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}}
    )
    assert code == 201
    lease["spec"]["holderIdentity"] = "b"
    assert raw.request("PUT", f"{path}/l", lease)[0] == 200
    code, body, _ = raw.request("PUT", f"{path}/l", lease)
    assert code == 409 and 'leases.coordination.k8s.io "l"' in body["message"]


# -- chaos and RBAC ------------------------------------------------------------------------------


def test_injected_failures(fake: FakeAPIServer, raw: Raw) -> None:
    fake.fail_requests(429, retry_after=2, method="GET")
    code, body, headers = raw.request("GET", PODS)
    assert code == 429 and headers["Retry-After"] == "2"
    assert status_of(body)[0] == "TooManyRequests" and body["details"]["retryAfterSeconds"] == 2
    assert raw.request("GET", PODS)[0] == 200
    fake.fail_requests(503, times=2, path="/binding$")
    assert raw.request("GET", PODS)[0] == 200
    fake.create(pod("p1"))
    b = {"metadata": {"name": "p1"}, "target": {"name": "n1"}}
    assert raw.request("POST", f"{PODS}/p1/binding", b)[0] == 503
    assert raw.request("POST", f"{PODS}/p1/binding", b)[0] == 503
    fake.fail_requests(500, after=True, path="/binding$")
    assert raw.request("POST", f"{PODS}/p1/binding", b)[0] == 500
    assert len(fake.bindings) == 1  # it happened all the same


def test_rbac_authorizer() -> None:
    rbac = [
        {
            "kind": "ClusterRole",
            "metadata": {"name": "r"},
            "rules": [
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]},
                {"apiGroups": [""], "resources": ["pods/binding"], "verbs": ["create"]},
            ],
        },
        {
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "b"},
            "roleRef": {"kind": "ClusterRole", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}],
        },
    ]
    auth = Authorizer.from_manifests(rbac, namespace="ns", service_account="sa")
    with FakeAPIServer(authorizer=auth) as fake:
        r = Raw(fake.port, token=None)
        assert r.request("GET", "/api/v1/pods")[0] == 200
        code, body, _ = r.request("GET", f"{PODS}/x")
        assert code == 403
        assert body["message"] == (
            'pods "x" is forbidden: User "system:serviceaccount:ns:sa" cannot get resource "pods" '
            'in API group "" in the namespace "default"'
        )
        fake.create(pod("p"))
        assert (
            r.request(
                "POST", f"{PODS}/p/binding", {"metadata": {"name": "p"}, "target": {"name": "n"}}
            )[0]
            == 201
        )
        assert r.request("DELETE", f"{PODS}/p")[0] == 403


@pytest.mark.parametrize(
    "path",
    ["/api/v1/widgets", "/apis/apps/v1/deployments", "/api/v1/namespaces/default/pods/p/exec"],
)
def test_unknown_paths_are_404(raw: Raw, path: str) -> None:
    assert raw.request("GET", path)[0] == 404


def test_no_watch_starts_once_the_server_is_stopping(tmp_path: Path) -> None:
    """A client reconnecting its watch while the server stopped used to get a new stream,
    which nothing ended: stop() then waited out the runner's shutdown timeout and cancelled it.
    Requests reaching a stopping server are refused (503) instead. Stopping right after the
    backend started (its lists are done, its watches being opened) is the racy moment."""
    from schedframe.backends.kubernetes import KubernetesBackend

    with FakeAPIServer() as fake:
        fake.create(pod("p1"))
        backend = KubernetesBackend.from_kubeconfig(fake.write_kubeconfig(tmp_path / "kc"))
        backend.start(timeout=10)
    try:
        stopping = fake._stopping_since
        assert stopping is not None
        assert [r for r in fake.watch_requests if r.time >= stopping] == []
    finally:
        backend.close()


def _collect_resource_warnings() -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    return [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]


def test_stop_closes_a_connection_whose_reply_is_not_read() -> None:
    """A client that stopped reading (its reply fills the server's write buffer) kept its
    connection's transport open after stop(): closing a transport waits for its buffer to
    drain, and the loop stopped first. The garbage collector closed it later, warning
    "unclosed transport" inside whichever test ran then. stop() closes it now."""
    fake = FakeAPIServer(kubelet_delay=None).start()
    padding = "x" * 10_000
    for i in range(1200):  # a list reply of some 12 MB: more than both kernels' buffers
        obj = pod(f"p{i}")
        obj["metadata"]["annotations"] = {"padding": padding}
        fake.create(obj)
    client = socket.socket()
    try:
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.settimeout(10)
        client.connect(("127.0.0.1", fake.port))
        client.sendall(b"GET /api/v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert client.recv(12) == b"HTTP/1.1 200"  # the reply is being written
        fake.stop()
        del fake
        assert _collect_resource_warnings() == []
    finally:
        client.close()


def test_stop_closes_an_idle_keep_alive_connection() -> None:
    fake = FakeAPIServer(kubelet_delay=None).start()
    client = socket.create_connection(("127.0.0.1", fake.port), timeout=10)
    try:
        client.sendall(b"GET /api/v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert client.recv(12) == b"HTTP/1.1 200"
        fake.stop()
        del fake
        assert _collect_resource_warnings() == []
        client.settimeout(5)
        while client.recv(65536):  # the server closed its end: the rest of the reply, then EOF
            pass
    finally:
        client.close()
