"""What-if forks of a live scheduler: ask, inspect, then discard or commit.

Run from the repository root: ``python examples/capacity/fork.py``.
"""

from __future__ import annotations

from pathlib import Path

from schedframe.backends import BackendFork, canonical_state
from schedframe.objects import Node, Pod, load_manifests
from schedframe.simulation import cluster_scheduler
from schedframe.testing.builders import make_pod

HERE = Path(__file__).parent


def _gone(original: object, fork: BackendFork) -> list[Pod]:
    """Pods of the original cluster the fork no longer has."""
    pods = original.list("Pod")  # type: ignore[attr-defined]
    return [p for p in pods if fork.get("Pod", p.name, p.namespace) is None]


def main() -> None:
    live = cluster_scheduler(load_manifests(HERE / "running.yaml"))
    original = live.backend
    before = canonical_state(original)  # type: ignore[arg-type]

    # 1. What if node-2 went away? Delete it in a fork and reschedule its pod.
    fork = live.fork()
    backend = fork.backend
    assert isinstance(backend, BackendFork)
    node = backend.get("Node", "node-2")
    assert isinstance(node, Node)
    backend.delete(node)
    web2 = backend.get("Pod", "web-2")
    assert isinstance(web2, Pod)
    backend.delete(web2)
    # Its ReplicaSet would create it again, unbound: the same pod without node or identity.
    backend.create(web2.with_changes(node_name="", metadata={"uid": "", "resource_version": ""}))
    fork.run_until_idle()
    fork.stop()
    moved = backend.get("Pod", "web-2")
    assert isinstance(moved, Pod)
    print(f"without node-2, web-2 goes to: {moved.spec.node_name or '(nowhere: pending)'}")
    print("and evicts:", ", ".join(p.key for p in _gone(original, backend)) or "nothing")
    backend.discard()
    print("discarded; original unchanged:", canonical_state(original) == before)  # type: ignore[arg-type]

    # 2. Place a pod in a fork, look at the answer, then keep it.
    fork = live.fork()
    backend = fork.backend
    assert isinstance(backend, BackendFork)
    backend.create(make_pod("report").req(cpu="1", memory="512Mi").obj())
    fork.run_until_idle()
    fork.stop()
    print(f"committed {backend.commit()} write(s)")
    live.run_until_idle()
    stored = original.get("Pod", "report")  # type: ignore[attr-defined]
    print(f"report runs on {stored.spec.node_name} in the original cluster")
    live.stop()


if __name__ == "__main__":
    main()
