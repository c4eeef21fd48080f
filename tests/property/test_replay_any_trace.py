"""Replay takes any well-formed trace, whatever order its events come in: pods and nodes
modified before they exist, deleted twice, bound to missing nodes, of other schedulers."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe.objects import Pod
from schedframe.simulation import Trace, TraceEvent, replay
from schedframe.testing.builders import make_node, make_pod

pytestmark = pytest.mark.property


@st.composite
def traces(draw: st.DrawFn) -> Trace:
    events: list[TraceEvent] = []
    for i in range(draw(st.integers(0, 2))):
        node = make_node(f"n{i}").capacity(cpu="2", memory="4Gi", pods=10).obj()
        events.append(TraceEvent(time=0.0, type="ADDED", kind="Node", obj=node, initial=True))
    t = 0.0
    for _ in range(draw(st.integers(0, 10))):
        t += draw(st.sampled_from([0.0, 0.5, 1.0]))
        event_type = draw(st.sampled_from(["ADDED", "MODIFIED", "DELETED"]))
        if draw(st.booleans()):
            obj: object = make_node(f"n{draw(st.integers(0, 2))}").obj()
            kind = "Node"
        else:
            pod: Pod = make_pod(f"p{draw(st.integers(0, 2))}").req(cpu="1").obj()
            if draw(st.booleans()):
                pod = make_pod(pod.name).scheduler_name("other").req(cpu="1").obj()
            if draw(st.booleans()):
                pod = pod.with_changes(node_name=f"n{draw(st.integers(0, 2))}")
            obj, kind = pod, "Pod"
        events.append(TraceEvent(time=t, type=event_type, kind=kind, obj=obj))
    return Trace(events=tuple(events))


@settings(max_examples=100, deadline=None)
@given(trace=traces())
def test_any_trace_replays_and_twice_the_same(trace: Trace) -> None:
    first = replay(trace)
    assert first.matched + len(first.divergences) == first.decisions
    assert json.dumps(replay(trace).to_dict()) == json.dumps(first.to_dict())
