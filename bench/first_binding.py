"""Start-up to first binding of ``schedframe run`` against the testing kit's fake API server.

Each run starts a fresh fake API server holding ``--nodes`` nodes and ``--pods`` pending pods,
then a fresh ``schedframe run`` process (leader election on, as kube-scheduler runs), and
measures, on the wall clock of this process:

``first binding``
    from starting the process to the first successful ``pods/binding`` the server received;
``lease``
    from starting the process to the Lease being created (connected, validated, listed unless
    ``delayCacheUntilActive``, and elected);
``cpu``
    the CPU time (user + system) the ``schedframe run`` process had used when the first
    binding arrived: what the start-up costs whatever else runs on the machine (wall times
    grow with CPU contention; this does much less).

Each figure is reported as the median and the best over ``--runs``. Usage::

    PYTHONPATH=src:plugins/src python bench/first_binding.py --nodes 500 --pods 1000 --runs 5
    PYTHONPATH=src:plugins/src python bench/first_binding.py --nodes 5000 --pods 1000 --runs 3

The process runs with its bytecode cached, as after an install (``PYTHONDONTWRITEBYTECODE``
is dropped for it, and one uncounted run writes the caches; set ``PYTHONPYCACHEPREFIX`` to
keep them out of the source tree): compiling the sources would otherwise be measured too.

The fake server runs in this process, so it competes for the CPU with the scheduler like an
API server on the same machine would; compare medians of several runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from schedframe.testing.fakeapi import FakeAPIServer

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  resourceName: schedframe-bench
"""


def _node(name: str) -> dict[str, object]:
    capacity = {"cpu": "64", "memory": "256Gi", "pods": "110"}
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
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]
        },
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process (Linux ``/proc``), 0.0 elsewhere."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(nodes: int, pods: int, workdir: Path) -> tuple[float, float, float]:
    with FakeAPIServer(kubelet_delay=None) as fake:
        for i in range(nodes):
            fake.create(_node(f"node-{i:05d}"))
        for i in range(pods):
            fake.create(_pod(f"pod-{i:05d}"))
        kubeconfig = fake.write_kubeconfig(workdir / "kubeconfig")
        config = workdir / "config.yaml"
        config.write_text(CONFIG)
        command = [
            sys.executable,
            "-m",
            "schedframe.cli",
            "run",
            "--kubeconfig",
            str(kubeconfig),
            "--config",
            str(config),
            "--port",
            "0",
            "-v",
            "0",
        ]
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure as installed: bytecode cached
        started = time.perf_counter()
        proc = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
        lease = first = cpu = 0.0
        try:
            while proc.poll() is None and time.perf_counter() - started < 120:
                now = time.perf_counter() - started
                if not lease and fake.get("Lease", "schedframe-bench", "kube-system"):
                    lease = now
                if fake.bindings:
                    first = now
                    cpu = cpu_seconds(proc.pid)
                    break
                time.sleep(0.002)
        finally:
            proc.terminate()
            proc.wait(30)
        if not first:
            raise SystemExit("no binding within 120 s")
        return first, lease, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    firsts: list[float] = []
    leases: list[float] = []
    cpus: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        one_run(min(args.nodes, 10), 1, Path(tmp))  # writes the bytecode caches
        for run in range(args.runs):
            first, lease, cpu = one_run(args.nodes, args.pods, Path(tmp))
            firsts.append(first)
            leases.append(lease)
            cpus.append(cpu)
            print(
                f"run {run + 1}: first binding {first:.3f} s, lease {lease:.3f} s, cpu {cpu:.2f} s",
                flush=True,
            )
    print(
        f"{args.nodes} nodes, {args.pods} pods, {args.runs} runs: first binding median "
        f"{statistics.median(firsts):.3f} s (best {min(firsts):.3f} s), lease median "
        f"{statistics.median(leases):.3f} s, cpu median {statistics.median(cpus):.2f} s "
        f"(best {min(cpus):.2f} s)"
    )


if __name__ == "__main__":
    main()
