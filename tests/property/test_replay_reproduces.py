"""A trace recorded from a deterministic scheduler replays to the same decisions."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedframe.backends import MemoryBackend
from schedframe.config import load_config
from schedframe.objects import Node, Pod
from schedframe.scheduler import Scheduler, VirtualClock
from schedframe.simulation import TraceRecorder, load_trace, replay
from schedframe.testing.builders import make_node, make_pod

pytestmark = pytest.mark.property

_Op = tuple[float, str, int, int]  # (time, op, pod or node index, cpu)


@st.composite
def workloads(draw: st.DrawFn) -> tuple[list[int], list[_Op]]:
    nodes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4))
    ops: list[_Op] = []
    for n in range(draw(st.integers(1, 12))):
        at = float(draw(st.integers(0, 40))) / 4
        op = draw(st.sampled_from(("createPod", "createPod", "deletePod", "cordon", "uncordon")))
        target = draw(st.integers(0, max(n, len(nodes)) - 1)) if op != "createPod" else n
        ops.append((at, op, target, draw(st.integers(1, 3))))
    return nodes, sorted(ops, key=lambda o: o[0])


def _apply(backend: MemoryBackend, op: _Op) -> None:
    _, name, index, cpu = op
    if name == "createPod":
        backend.create(make_pod(f"p{index}").req(cpu=f"{cpu * 500}m").obj())
        return
    if name == "deletePod":
        pod = backend.get("Pod", f"p{index}", "default")
        if isinstance(pod, Pod):
            backend.delete(pod)
        return
    node = backend.get("Node", f"n{index}")
    if isinstance(node, Node):
        backend.update(
            attrs.evolve(node, spec=attrs.evolve(node.spec, unschedulable=name == "cordon"))
        )


def _record(path: Path, nodes: list[int], ops: list[_Op], seed: int) -> dict[str, list[str]]:
    """Run the workload with a deterministic scheduler, recorded, as the replay drives its
    own (operations as timers on the virtual clock); the nodes each pod was bound to."""
    from schedframe.hooks import impl, plugin_manager

    bound: dict[str, list[str]] = {}

    class Observer:
        @impl
        def schedframe_pod_scheduled(self, pod: Pod, node_name: str) -> None:
            bound.setdefault(pod.key, []).append(node_name)

    clock = VirtualClock(start=0.0)
    backend = MemoryBackend(
        [
            make_node(f"n{i}").capacity(cpu=str(c), memory="64Gi", pods=110).obj()
            for i, c in enumerate(nodes)
        ],
        clock=clock,
    )
    pm = plugin_manager(load_entry_points=False)
    pm.register(Observer())
    sched = Scheduler(
        load_config(None), backend, clock=clock, seed=seed, deterministic=True, hooks=pm
    )
    step: Callable[[_Op], None] = functools.partial(_apply, backend)
    with TraceRecorder(path, source="memory", clock=clock.now).attach(backend):
        for op in ops:
            clock.call_at(op[0], functools.partial(step, op))
        for when in sorted({op[0] for op in ops}):
            clock.run_due()
            sched.run_until_idle()
            clock.advance_to(when)
        clock.run_due()
        sched.run_until_idle()
    sched.stop()
    return bound


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(workload=workloads(), seed=st.integers(0, 5))
def test_replaying_a_recording_under_its_configuration_and_seed_changes_nothing(
    tmp_path: Path, workload: tuple[list[int], list[_Op]], seed: int
) -> None:
    nodes, ops = workload
    path = tmp_path / "trace.jsonl"
    bound = _record(path, nodes, ops, seed)
    result = replay(load_trace(path), seed=seed)
    assert result.divergences == ()
    replayed = {
        key: [e.node for e in events if e.event == "bound"]
        for key, events in result.replay.timelines.items()
    }
    assert {k: v for k, v in replayed.items() if v} == bound
    again = replay(load_trace(path), seed=seed)
    assert json.dumps(again.to_dict()) == json.dumps(result.to_dict())
