"""Opportunistic batching never breaks a placement invariant, and off it changes nothing.

Gate off: no batch is ever consulted. Gate on: no node holds more CPU than it allocates or
the host port twice, every pod ends bound or reported unschedulable, and a run in which no
hint was given places every pod exactly as the run without batching.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.unit.scheduler.test_batching_cycle import node, placements, pod, run

nodes_st = st.lists(st.integers(2, 16), min_size=1, max_size=6).map(
    lambda cpus: [node(f"n{i}", c * 500) for i, c in enumerate(cpus)]
)
pods_st = st.lists(
    st.tuples(st.sampled_from([250, 1000, 2500]), st.booleans(), st.integers(1, 4)),
    min_size=1,
    max_size=6,
).map(
    # Runs of identical pods (the batching case), each run its own shape.
    lambda groups: [
        pod(f"g{g}-{i}", cpu, host_port=8080 if port else 0)
        for g, (cpu, port, count) in enumerate(groups)
        for i in range(count)
    ]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=nodes_st, pods=pods_st, seed=st.integers(0, 3))
def test_batching_keeps_every_invariant(nodes: list, pods: list, seed: int) -> None:  # type: ignore[type-arg]
    off = run(pods, nodes, batching=False, seed=seed)
    assert off.algorithm.batches == {}
    on = run(pods, nodes, batching=True, seed=seed)

    allocatable = {n.name: n.status.allocatable["cpu"] for n in nodes}
    requests = {p.name: p.spec.containers[0].requests["cpu"] for p in pods}
    ports = {p.name: bool(p.spec.containers[0].ports) for p in pods}
    placed = placements(on)
    assert set(placed) == {p.name for p in pods}
    assert {r.outcome for r in on.results.values()} <= {"scheduled", "unschedulable"}
    used: Counter[str] = Counter()
    port_users: Counter[str] = Counter()
    for name, host in placed.items():
        if host:
            used[host] += requests[name]
            port_users[host] += ports[name]
    assert all(used[h] <= allocatable[h] for h in used)
    assert all(count <= 1 for count in port_users.values())

    batch = on.algorithm.batches["default-scheduler"]
    if not batch.attempts["hint_used"] and not batch.attempts["hint_not_used"]:
        assert placed == placements(off)
