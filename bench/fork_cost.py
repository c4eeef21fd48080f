"""Fork cost on a 5,000-node cluster: MemoryBackend.fork(), Scheduler.fork(), and the first
scheduling cycle in a fork against the same cycle in the original.

Run: ``PYTHONPATH=src:plugins/src python bench/fork_cost.py [nodes] [pods] [repeats]``.

Each figure is the minimum and the median over ``repeats`` runs (wall time: on a loaded
machine the minimum is the better estimate of the cost itself).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

from schedframe.backends import BackendFork, MemoryBackend
from schedframe.scheduler import Scheduler, VirtualClock
from schedframe.testing.builders import make_node, make_pod


def _ms(samples: list[float]) -> str:
    return f"min {min(samples) * 1000:7.2f} ms   median {statistics.median(samples) * 1000:7.2f} ms"


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    nodes = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    pods = int(sys.argv[2]) if len(sys.argv) > 2 else 2 * nodes
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    clock = VirtualClock()
    objects: list[object] = [
        make_node(f"n{i}").capacity(cpu="32", memory="128Gi", pods=110).obj() for i in range(nodes)
    ]
    objects += [make_pod(f"p{i}").req(cpu="1").node(f"n{i % nodes}").obj() for i in range(pods)]
    backend = MemoryBackend(objects, clock=clock)
    sched = Scheduler.from_config(None, backend, deterministic=True, clock=clock)
    backend.create(make_pod("warm-up").req(cpu="1").obj())
    sched.run_until_idle()

    backend_fork = [_timed(lambda: backend.fork().discard()) for _ in range(repeats)]
    sched_fork: list[float] = []
    fork_first: list[float] = []
    original_next: list[float] = []
    for n in range(repeats):
        start = time.perf_counter()
        fork = sched.fork()
        sched_fork.append(time.perf_counter() - start)
        forked = fork.backend
        assert isinstance(forked, BackendFork)
        forked.create(make_pod(f"f{n}").req(cpu="1").obj())
        fork_first.append(_timed(fork.run_until_idle))
        fork.stop()
        forked.discard()
        backend.create(make_pod(f"o{n}").req(cpu="1").obj())
        original_next.append(_timed(sched.run_until_idle))
    print(f"{nodes} nodes, {pods} bound pods, {repeats} repeats")
    print(f"MemoryBackend.fork():             {_ms(backend_fork)}")
    print(f"Scheduler.fork():                 {_ms(sched_fork)}")
    print(f"first pod scheduled in the fork:  {_ms(fork_first)}")
    print(f"next pod scheduled, original:     {_ms(original_next)}")


if __name__ == "__main__":
    main()
