"""How ``trace.jsonl`` was made: ``schedframe run --record-trace`` against the testing kit's
fake API server, with pods created one at a time (each bound before the next) and a few
deleted. Needs ``schedframe[kubernetes,testing]``; run from the repository root:

    python examples/replay/record.py examples/replay/trace.jsonl
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from schedframe.testing.fakeapi import FakeAPIServer


def node(name: str, cpu: int, zone: str) -> dict[str, Any]:
    capacity = {"cpu": str(cpu), "memory": f"{2 * cpu}Gi", "pods": "110"}
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def pod(name: str, cpu: str, memory: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name.split("-")[0]}},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "main",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": cpu, "memory": memory}},
                }
            ],
        },
    }


def wait(check: Any) -> None:
    deadline = time.monotonic() + 30
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.01)


def main(out: str) -> None:
    with FakeAPIServer(bookmark_interval=0.5) as server, tempfile.TemporaryDirectory() as tmp:
        for name, size, zone in (
            ("node-a", 4, "zone-1"),
            ("node-b", 10, "zone-1"),
            ("node-c", 18, "zone-2"),
        ):
            server.create(node(name, size, zone))
        kubeconfig = server.write_kubeconfig(Path(tmp) / "kubeconfig")
        command = [sys.executable, "-m", "schedframe", "run", "--kubeconfig", str(kubeconfig)]
        command += ["--no-leader-elect", "--port", "0", "--record-trace", out, "-v", "0"]
        scheduler = subprocess.Popen(command)
        wait(lambda: Path(out).exists() and Path(out).read_text().count("\n") >= 5)
        work = [(f"web-{i}", "1", "2Gi") for i in range(6)]
        work += [(f"batch-{i}", "4", "8Gi") for i in range(3)]
        work += [("huge-0", "32", "64Gi")]
        for name, cpu, memory in work:
            server.create(pod(name, cpu, memory))
            if name.startswith("huge"):
                wait(lambda: "Unschedulable" in Path(out).read_text())
            else:
                wait(lambda n=name: (server.get("Pod", n) or {})["spec"].get("nodeName"))
            time.sleep(0.05)
        for name in ("web-0", "batch-1"):
            server.delete("Pod", name)
            wait(lambda n=name: server.get("Pod", n) is None)
        server.create(pod("web-6", "1", "2Gi"))
        wait(lambda: (server.get("Pod", "web-6") or {})["spec"].get("nodeName"))
        wait(lambda: Path(out).read_text().count('"DELETED"') == 2)
        time.sleep(0.5)
        scheduler.send_signal(signal.SIGTERM)
        scheduler.wait(30)


if __name__ == "__main__":
    main(sys.argv[1])
