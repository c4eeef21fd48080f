"""Traces: the JSON Lines format read strictly, recorded from a backend's watch, and made
from a pod history exported as a scenario."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from schedframe.backends import MemoryBackend, WatchEvent
from schedframe.errors import ManifestError
from schedframe.objects import Node, Pod, Taint
from schedframe.simulation import (
    Operation,
    Scenario,
    Trace,
    TraceEvent,
    TraceRecorder,
    load_trace,
    trace_from_lines,
    trace_from_scenario,
)
from schedframe.testing.builders import make_node, make_pod

HEADER = '{"kind":"SchedframeTrace","version":1,"source":"test"}'
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"}}


def _line(**fields: object) -> str:
    return json.dumps(fields)


def test_a_written_trace_reads_back_equal(tmp_path: Path) -> None:
    node = make_node("n0").capacity(cpu="2", memory="4Gi", pods=10).obj()
    pod = make_pod("p").req(cpu="1").obj()
    trace = Trace(
        events=(
            TraceEvent(time=0.0, type="ADDED", kind="Node", obj=node, initial=True),
            TraceEvent(time=1.5, type="ADDED", kind="Pod", obj=pod),
            TraceEvent(
                time=2.25, type="MODIFIED", kind="Pod", obj=pod.with_changes(node_name="n0")
            ),
            TraceEvent(time=3.0, type="DELETED", kind="Pod", obj=pod.with_changes(node_name="n0")),
        ),
        source="test",
    )
    path = tmp_path / "t.jsonl"
    trace.write(path)
    again = load_trace(path)
    assert again.events == trace.events
    assert again.source == "test"
    assert [e.line for e in again.events] == [2, 3, 4, 5]
    assert path.read_text().splitlines()[0] == HEADER


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        pytest.param([], "t.jsonl:1: Required value: an empty file is not a trace", id="empty"),
        pytest.param(
            ["{"],
            "t.jsonl:1: Invalid value: not JSON: Expecting property name enclosed in double "
            "quotes at column 2",
            id="not-json",
        ),
        pytest.param(
            [_line(kind="Scenario")],
            't.jsonl:1: kind: Unsupported value: "Scenario": the first line of a trace is its '
            'header, kind "SchedframeTrace"',
            id="not-a-header",
        ),
        pytest.param(
            ['{"kind":"SchedframeTrace","version":2}'],
            "t.jsonl:1: version: Unsupported value: 2: supported versions: 1",
            id="future-version",
        ),
        pytest.param(
            [HEADER, _line(t=0, type="ADDED", kind="Node", object=NODE, extra=1)],
            "t.jsonl:2: extra: Unknown field: a trace event has t, type, kind, initial, object",
            id="unknown-field",
        ),
        pytest.param(
            [HEADER, _line(type="ADDED", kind="Node", object=NODE)],
            "t.jsonl:2: t: Required value: every trace event has it",
            id="no-time",
        ),
        pytest.param(
            [
                HEADER,
                _line(t=2, type="ADDED", kind="Node", object=NODE),
                _line(t=1, type="DELETED", kind="Node", object=NODE),
            ],
            "t.jsonl:3: t: Invalid value: 1: events are in time order; the line before is at 2",
            id="time-goes-back",
        ),
        pytest.param(
            [HEADER, _line(t=0, type="BOOKMARK", kind="Node", object=NODE)],
            't.jsonl:2: type: Unsupported value: "BOOKMARK": supported values: "ADDED", '
            '"MODIFIED", "DELETED"',
            id="bad-type",
        ),
        pytest.param(
            [HEADER, '{"t":NaN,"type":"ADDED","kind":"Node","object":{}}'],
            "t.jsonl:2: t: Invalid value: nan: expected a number of seconds >= 0",
            id="not-a-number",
        ),
        pytest.param(
            [HEADER, _line(t=0, type="ADDED", kind="Deployment", object={"metadata": {}})],
            't.jsonl:2: kind: Unsupported value: "Deployment": a trace holds the kinds a '
            "scheduler watches (and declared custom kinds)",
            id="not-watched",
        ),
        pytest.param(
            [HEADER, _line(t=0, type="ADDED", kind="Secret", object={"metadata": {}})],
            "t.jsonl:2: kind: Forbidden: a trace never holds Secrets",
            id="secret",
        ),
        pytest.param(
            [
                HEADER,
                _line(t=0, type="ADDED", kind="Node", object=NODE),
                _line(t=0, type="ADDED", kind="Node", initial=True, object=NODE),
            ],
            "t.jsonl:3: initial: Invalid value: true: initial objects come before every "
            "other event",
            id="initial-after-live",
        ),
        pytest.param(
            [HEADER, _line(t=0, type="ADDED", kind="Pod", object=NODE)],
            't.jsonl:2: object.kind: Invalid value: "Node": the event\'s kind is Pod',
            id="kind-mismatch",
        ),
        pytest.param(
            [
                HEADER,
                _line(
                    t=0,
                    type="ADDED",
                    kind="Pod",
                    object={"metadata": {"name": "p"}, "spec": {"containers": "c"}},
                ),
            ],
            't.jsonl:2: object.spec.containers: Invalid value: "c": must be a list',
            id="bad-object-field",
        ),
    ],
)
def test_a_bad_trace_names_the_file_the_line_and_the_field(
    tmp_path: Path, lines: list[str], message: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(f"{line}\n" for line in lines))
    with pytest.raises(ManifestError) as info:
        load_trace(path)
    assert str(info.value) == message.replace("t.jsonl", str(path))


def test_an_unreadable_trace_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"missing.jsonl: Invalid value: cannot read"):
        load_trace(tmp_path / "missing.jsonl")


def _ticks() -> Callable[[], float]:
    now = [100.0]

    def clock() -> float:
        now[0] += 0.5
        return now[0]

    return clock


def test_the_recorder_marks_the_backends_objects_initial_and_times_later_events(
    tmp_path: Path,
) -> None:
    node = make_node("n0").capacity(cpu="2", memory="4Gi", pods=10).obj()
    backend = MemoryBackend([node])
    path = tmp_path / "t.jsonl"
    applied = "kubectl.kubernetes.io/last-applied-configuration"
    with TraceRecorder(path, source="memory", clock=_ticks()).attach(backend) as recorder:
        pod = backend.create(make_pod("p").annotation(applied, "{secret}").label("a", "b").obj())
        worker = threading.Thread(target=backend.delete, args=(pod,))
        worker.start()
        worker.join()
    backend.create(make_pod("after").obj())  # not recorded: the recorder is closed
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0] == {"kind": "SchedframeTrace", "version": 1, "source": "memory"}
    assert [(e["t"], e["type"], e["kind"], e.get("initial", False)) for e in lines[1:]] == [
        (0.0, "ADDED", "Node", True),
        (0.5, "ADDED", "Pod", False),
        (1.0, "DELETED", "Pod", False),
    ]
    assert lines[2]["object"]["metadata"]["labels"] == {"a": "b"}
    assert "annotations" not in lines[2]["object"]["metadata"]
    assert "{secret}" not in path.read_text()
    assert recorder.events == 3
    assert len(load_trace(path).events) == 3


def test_the_recorder_never_writes_secrets(tmp_path: Path) -> None:
    class Secret:
        kind = "Secret"

    class Backend:
        def subscribe(self, callback: Callable[[WatchEvent], None]) -> Backend:
            callback(WatchEvent(type="ADDED", obj=Secret(), old=None, resource_version=1))
            return self

        def cancel(self) -> None:
            pass

    path = tmp_path / "t.jsonl"
    with TraceRecorder(path).attach(Backend()) as recorder:
        pass
    assert recorder.events == 0
    assert path.read_text() == '{"kind":"SchedframeTrace","version":1,"source":""}\n'


def test_the_recorder_stops_at_its_size_limit_and_leaves_a_readable_trace(
    tmp_path: Path,
) -> None:
    nodes = [make_node(f"n{i}").obj() for i in range(10)]
    path = tmp_path / "t.jsonl"
    with TraceRecorder(path, max_bytes=1500).attach(MemoryBackend(nodes)) as recorder:
        pass
    assert recorder.stopped == "the trace reached its limit of 1500 bytes"
    assert 0 < recorder.events < 10
    assert path.stat().st_size == recorder.bytes <= 1500
    assert len(load_trace(path).events) == recorder.events


def test_a_pod_history_becomes_creations_bindings_and_deletions() -> None:
    node = make_node("n0").obj()
    running = make_pod("old").node("n0").obj()
    pod = make_pod("p").obj()
    scenario = Scenario(
        cluster=(node, running),
        operations=(
            Operation(at=1.0, op="createPod", obj=pod),
            Operation(at=1.2, op="updatePod", obj=pod.with_changes(node_name="n0")),
            Operation(at=2.0, op="createPod", obj=make_pod("q").node("n0").obj()),
            Operation(at=3.0, op="taint", name="n0", taint=Taint(key="k", effect="NoSchedule")),
            Operation(at=4.0, op="deletePod", name="p"),
        ),
    )
    trace = trace_from_scenario(scenario)
    assert [
        (e.time, e.type, e.kind, getattr(e.obj, "name", ""), e.initial) for e in trace.events
    ] == [
        (0.0, "ADDED", "Node", "n0", True),
        (0.0, "ADDED", "Pod", "old", True),
        (1.0, "ADDED", "Pod", "p", False),
        (1.2, "MODIFIED", "Pod", "p", False),
        (2.0, "ADDED", "Pod", "q", False),
        (2.0, "MODIFIED", "Pod", "q", False),
        (3.0, "MODIFIED", "Node", "n0", False),
        (4.0, "DELETED", "Pod", "p", False),
    ]
    pods = [e.obj for e in trace.events if isinstance(e.obj, Pod)]
    assert [p.spec.node_name for p in pods] == ["n0", "", "n0", "", "n0", "n0"]
    tainted = trace.events[6].obj
    assert isinstance(tainted, Node)
    assert [t.key for t in tainted.spec.taints] == ["k"]


def test_a_history_holds_no_controllers_and_names_what_it_cannot_hold() -> None:
    scenario = Scenario(
        cluster=(make_node("n0").obj(),),
        operations=(
            Operation(at=1.0, op="drain", name="n0"),
            Operation(at=2.0, op="deletePod", name="ghost"),
            Operation(at=3.0, op="cordon", name="n9"),
        ),
    )
    with pytest.raises(ManifestError) as info:
        trace_from_scenario(scenario, name="history.yaml")
    assert str(info.value).splitlines() == [
        'history.yaml: operations[0].op: Unsupported value: "drain": a pod history holds '
        '"createPod", "updatePod", "deletePod", "createNode", "updateNode", "deleteNode", '
        '"cordon", "uncordon", "taint", "untaint"',
        'history.yaml: operations[1].name: Not found: "default/ghost"',
        'history.yaml: operations[2].name: Not found: "n9"',
    ]


def test_lines_without_a_file_name_their_source() -> None:
    with pytest.raises(ManifestError, match=r"^<trace>:2: t: Invalid value: -1"):
        trace_from_lines([HEADER, _line(t=-1, type="ADDED", kind="Node", object=NODE)])


def test_what_the_object_model_does_not_keep_never_reaches_a_trace(tmp_path: Path) -> None:
    from schedframe.objects._codec import server_decoder

    raw = {
        "metadata": {
            "name": "p",
            "namespace": "default",
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
        },
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "app:1",
                    "env": [{"name": "PASSWORD", "value": "hunter2"}],
                    "resources": {"requests": {"cpu": "100m"}},
                }
            ]
        },
    }
    pod = server_decoder("Pod")(raw)
    path = tmp_path / "t.jsonl"
    with TraceRecorder(path).attach(MemoryBackend([pod])) as recorder:
        pass
    assert recorder.events == 1
    text = path.read_text()
    assert "hunter2" not in text
    assert "PASSWORD" not in text
    assert "managedFields" not in text
    assert '"requests":{"cpu":"100m"}' in text
