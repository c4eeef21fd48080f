"""Builders and a tiny raw HTTP client for the Kubernetes backend tests."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlencode

TOKEN = "t0k3n-do-not-log"


def node(
    name: str, *, cpu: str = "4", memory: str = "16Gi", pods: str = "110", **labels: str
) -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {"capacity": dict(alloc), "allocatable": dict(alloc)},
    }


def pod(
    name: str,
    *,
    namespace: str = "default",
    cpu: str = "100m",
    memory: str = "128Mi",
    scheduler: str | None = None,
    node_name: str | None = None,
    labels: Mapping[str, str] | None = None,
    priority: int | None = None,
    gates: tuple[str, ...] = (),
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "c",
                "image": "pause",
                "resources": {"requests": {"cpu": cpu, "memory": memory}},
            }
        ]
    }
    if scheduler:
        spec["schedulerName"] = scheduler
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "spec": spec,
    }


class Raw:
    """Raw HTTP to the fake (what any client would send)."""

    def __init__(self, port: int, token: str | None = TOKEN) -> None:
        self.port = port
        self.token = token

    def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: Mapping[str, str] | None = None,
        content_type: str | None = "application/json",
    ) -> tuple[int, Any, Mapping[str, str]]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            url = path + ("?" + urlencode(query) if query else "")
            data = None if body is None else json.dumps(body).encode()
            conn.request(
                method, url, body=data, headers=self._headers(content_type if data else None)
            )
            response = conn.getresponse()
            raw = response.read()
            headers = {k: v for k, v in response.getheaders()}
            return response.status, (json.loads(raw) if raw else None), headers
        finally:
            conn.close()

    def watch(
        self, path: str, query: Mapping[str, str], *, timeout: float = 10.0
    ) -> Iterator[dict[str, Any]]:
        """Yield watch events until the stream ends (cleanly) or ``timeout`` passes."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(
                "GET",
                path + "?" + urlencode({**query, "watch": "true"}),
                headers=self._headers(None),
            )
            response = conn.getresponse()
            assert response.status == 200, response.read()
            while True:
                try:
                    line = response.readline()
                except (TimeoutError, http.client.IncompleteRead):
                    return
                if not line:
                    return
                if line.strip():
                    yield json.loads(line)
        finally:
            conn.close()
