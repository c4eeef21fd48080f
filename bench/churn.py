"""Memory of a long-running ``schedframe run`` under steady pod churn (not run in CI).

A fake API server (in this process) holds ``--nodes`` nodes; every second ``--rate`` new pods
are created and as many of the oldest bound pods deleted, so the cluster stays near
``--pods`` pods while the scheduler keeps binding. The resident set size (``VmRSS``) of the
``schedframe run`` process is sampled every ``--every`` seconds. The verdict compares the
last sample with the first one taken after ``--warmup`` seconds: flat means within 10 %.

The documented acceptance run (30 minutes)::

    PYTHONPATH=src:plugins/src python bench/churn.py --minutes 30

A shorter look::

    PYTHONPATH=src:plugins/src python bench/churn.py --minutes 4 --warmup 60
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from schedframe.testing.fakeapi import FakeAPIServer


def _node(name: str) -> dict[str, object]:
    capacity = {"cpu": "256", "memory": "1Ti", "pods": "500"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def _pod(name: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "10m"}}}]
        },
    }


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no VmRSS")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--rate", type=int, default=50, help="pods created (and deleted) a second")
    parser.add_argument("--every", type=float, default=15.0, help="seconds between RSS samples")
    parser.add_argument("--warmup", type=float, default=120.0, help="seconds before the baseline")
    args = parser.parse_args()

    with FakeAPIServer(kubelet_delay=0.0) as fake, tempfile.TemporaryDirectory() as tmp:
        for i in range(args.nodes):
            fake.create(_node(f"node-{i:04d}"))
        kubeconfig = fake.write_kubeconfig(Path(tmp) / "kubeconfig")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "schedframe.cli",
                "run",
                "--kubeconfig",
                str(kubeconfig),
                "--no-leader-elect",
                "--port",
                "0",
                "-v",
                "0",
            ],
            env=dict(os.environ),
        )
        live: collections.deque[str] = collections.deque()
        serial = 0
        start = time.monotonic()
        end = start + args.minutes * 60
        next_sample = start
        baseline: float | None = None
        samples: list[tuple[float, float]] = []
        try:
            while time.monotonic() < end and proc.poll() is None:
                tick = time.monotonic()
                target = args.pods if len(live) < args.pods else len(live)
                for _ in range(args.rate if len(live) >= args.pods else target - len(live)):
                    name = f"churn-{serial:08d}"
                    serial += 1
                    fake.create(_pod(name))
                    live.append(name)
                if len(live) > args.pods:
                    for _ in range(min(args.rate, len(live) - args.pods)):
                        name = live.popleft()
                        pod = fake.get("Pod", name)
                        if pod is not None and pod["spec"].get("nodeName"):
                            fake.delete("Pod", name, grace_period_seconds=0)
                        else:
                            live.appendleft(name)  # not bound yet: delete later
                            break
                now = time.monotonic()
                if now >= next_sample:
                    elapsed = now - start
                    rss = rss_mb(proc.pid)
                    samples.append((elapsed, rss))
                    if baseline is None and elapsed >= args.warmup:
                        baseline = rss
                    print(
                        f"{elapsed:7.0f} s  RSS {rss:7.1f} MB  pods created {serial:7d}  "
                        f"bindings {len(fake.bindings):7d}",
                        flush=True,
                    )
                    next_sample += args.every
                time.sleep(max(0.0, 1.0 - (time.monotonic() - tick)))
        finally:
            proc.terminate()
            proc.wait(30)
    if baseline is None or not samples:
        print("too short: no baseline after the warm-up")
        return 1
    last = samples[-1][1]
    growth = (last - baseline) / baseline * 100.0
    verdict = "flat" if abs(growth) <= 10.0 else "NOT flat"
    print(f"baseline {baseline:.1f} MB -> last {last:.1f} MB: {growth:+.1f} % ({verdict})")
    return 0 if abs(growth) <= 10.0 else 1


if __name__ == "__main__":
    sys.exit(main())
