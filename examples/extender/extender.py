"""A scheduler extender in plain Python (standard library only).

It speaks kube-scheduler's extender/v1 JSON, so it works with kube-scheduler and with
schedframe alike:

* ``POST /filter``: nodes labelled ``example.com/maintenance: "true"`` fail with
  ``node(s) under maintenance``;
* ``POST /prioritize``: ``example.com/tier: gold`` scores 10, ``silver`` 5, others 0.

Run it with ``python examples/extender/extender.py --port 8888``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAINTENANCE = "example.com/maintenance"
TIER = "example.com/tier"
TIER_SCORES = {"gold": 10, "silver": 5}
REASON = "node(s) under maintenance"


def _labels(node: Mapping[str, Any]) -> Mapping[str, str]:
    return node.get("metadata", {}).get("labels") or {}


def filter_nodes(args: Mapping[str, Any]) -> dict[str, Any]:
    """ExtenderArgs -> ExtenderFilterResult. Needs whole nodes (nodeCacheCapable: false)."""
    if args.get("nodes") is None:
        return {"error": "this extender needs whole nodes: set nodeCacheCapable: false"}
    kept, failed = [], {}
    for node in args["nodes"].get("items") or []:
        if _labels(node).get(MAINTENANCE) == "true":
            failed[node["metadata"]["name"]] = REASON
        else:
            kept.append(node)
    return {"nodes": {"metadata": {}, "items": kept}, "failedNodes": failed}


def prioritize_nodes(args: Mapping[str, Any]) -> list[dict[str, Any]]:
    """ExtenderArgs -> HostPriorityList (scores 0..10)."""
    return [
        {"host": node["metadata"]["name"], "score": TIER_SCORES.get(_labels(node).get(TIER, ""), 0)}
        for node in (args.get("nodes") or {}).get("items") or []
    ]


VERBS = {"filter": filter_nodes, "prioritize": prioritize_nodes}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        verb = self.path.strip("/")
        handler = VERBS.get(verb)
        if handler is None:
            self.send_error(404)
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            args = json.loads(self.rfile.read(length))
        except ValueError:
            self.send_error(400, "invalid JSON")
            return
        body = json.dumps(handler(args)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve(port: int, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """A server for the extender on ``host:port`` (0: a free port); call ``serve_forever``."""
    return ThreadingHTTPServer((host, port), Handler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8888)
    parser.add_argument("--host", default="127.0.0.1")
    options = parser.parse_args()
    server = serve(options.port, options.host)
    print(f"extender listening on http://{options.host}:{server.server_address[1]}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
