"""Fork cost on a 5,000-node cluster: MemoryBackend.fork() and Scheduler.fork().

Run: ``PYTHONPATH=src:plugins/src python bench/fork_cost.py [nodes] [pods]``.
"""

from __future__ import annotations

import sys
import time

from schedframe.backends import MemoryBackend
from schedframe.scheduler import Scheduler, VirtualClock
from schedframe.testing.builders import make_node, make_pod


def main() -> None:
    nodes = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    pods = int(sys.argv[2]) if len(sys.argv) > 2 else 2 * nodes
    clock = VirtualClock()
    objects: list[object] = [
        make_node(f"n{i}").capacity(cpu="32", memory="128Gi", pods=110).obj() for i in range(nodes)
    ]
    objects += [make_pod(f"p{i}").req(cpu="1").node(f"n{i % nodes}").obj() for i in range(pods)]
    backend = MemoryBackend(objects, clock=clock)
    sched = Scheduler.from_config(None, backend, deterministic=True, clock=clock)
    sched.run_until_idle()
    runs = 50
    start = time.perf_counter()
    for _ in range(runs):
        backend.fork().discard()
    backend_ms = (time.perf_counter() - start) / runs * 1000
    runs = 3
    start = time.perf_counter()
    for _ in range(runs):
        fork = sched.fork()
        fork.stop()
        fork.backend.discard()  # type: ignore[attr-defined]
    sched_ms = (time.perf_counter() - start) / runs * 1000
    print(f"{nodes} nodes, {pods} bound pods")
    print(f"MemoryBackend.fork(): {backend_ms:.2f} ms")
    print(f"Scheduler.fork():     {sched_ms:.0f} ms")


if __name__ == "__main__":
    main()
