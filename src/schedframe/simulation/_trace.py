"""Traces: the watch events a scheduler's backend saw, as versioned JSON Lines.

A trace file is one JSON object per line. The first line is the header::

    {"kind": "SchedframeTrace", "version": 1, "source": "kubernetes"}

and every other line one watch event, at seconds since recording started::

    {"t": 0.0, "type": "ADDED", "kind": "Node", "initial": true, "object": {...}}
    {"t": 2.318204, "type": "MODIFIED", "kind": "Pod", "object": {...}}

``initial`` marks the objects the backend held when recording started (its list); they
come first. ``object`` is the object as the backend decoded it from the API server,
written back as Kubernetes JSON (:func:`~schedframe.objects.to_dict`): the fields
schedframe models. :class:`TraceRecorder` writes traces from any backend's watch
(``schedframe run --record-trace``), :func:`trace_from_scenario` turns a pod history
exported as a scenario into one, and :func:`load_trace` reads one strictly.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, NoReturn, Protocol

import attrs

from schedframe.errors import INVALID, FieldIssue, ManifestError

if TYPE_CHECKING:
    from schedframe.backends import Subscription, WatchEvent
    from schedframe.simulation._scenario import Scenario

__all__ = [
    "TRACE_KIND",
    "TRACE_VERSION",
    "Trace",
    "TraceEvent",
    "TraceRecorder",
    "load_trace",
    "trace_from_lines",
    "trace_from_scenario",
]

log = logging.getLogger("schedframe.simulation")

#: The header's ``kind``.
TRACE_KIND: Final = "SchedframeTrace"
#: The format version this library writes and reads.
TRACE_VERSION: Final = 1
#: Watch event types a trace holds.
EVENT_TYPES: Final = ("ADDED", "MODIFIED", "DELETED")
#: Kinds never recorded (nor read back): they hold credentials.
NEVER_RECORDED: Final = frozenset({"Secret"})
#: Annotations left out of recorded objects: kubectl's copy of the whole applied manifest
#: (which may hold literal environment values).
REDACTED_ANNOTATIONS: Final = frozenset({"kubectl.kubernetes.io/last-applied-configuration"})
#: A recorder stops writing past this many bytes (1 GiB).
DEFAULT_MAX_BYTES: Final = 1 << 30

_HEADER_FIELDS: Final = ("kind", "version", "source")
_EVENT_FIELDS: Final = ("t", "type", "kind", "initial", "object")


@attrs.frozen(kw_only=True)
class TraceEvent:
    """One watch event of a trace.

    Attributes:
        time: seconds since recording started.
        type: ``ADDED``, ``MODIFIED`` or ``DELETED``.
        kind: the object's kind (``Pod``, ``Node`` ...).
        obj: the object (a schedframe object).
        initial: part of the backend's state when recording started.
        line: the line of the trace file (0 when not read from a file).
    """

    time: float
    type: str
    kind: str
    obj: object
    initial: bool = False
    line: int = attrs.field(default=0, eq=False)

    def to_dict(self) -> dict[str, object]:
        """The event's JSON line, as a mapping."""
        out: dict[str, object] = {"t": round(self.time, 6), "type": self.type, "kind": self.kind}
        if self.initial:
            out["initial"] = True
        out["object"] = _encode(self.obj)
        return out


@attrs.frozen(kw_only=True)
class Trace:
    """A recorded trace: the initial objects, then the events in order.

    Attributes:
        events: every event, initial ones first, in time order.
        source: what recorded it (``kubernetes``, ``memory``, ``scenario`` ...).
        name: the file it was read from (named in replay errors).
    """

    events: tuple[TraceEvent, ...]
    source: str = ""
    name: str = "<trace>"

    @property
    def initial(self) -> tuple[TraceEvent, ...]:
        """The events describing the state when recording started."""
        return tuple(e for e in self.events if e.initial)

    @property
    def live(self) -> tuple[TraceEvent, ...]:
        """The events after recording started."""
        return tuple(e for e in self.events if not e.initial)

    def lines(self) -> list[str]:
        """The trace as JSON Lines (header first), without line ends."""
        header = {"kind": TRACE_KIND, "version": TRACE_VERSION, "source": self.source}
        return [_dumps(header), *(_dumps(e.to_dict()) for e in self.events)]

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the trace file."""
        Path(path).write_text("".join(f"{line}\n" for line in self.lines()), encoding="utf-8")


def _dumps(doc: Mapping[str, object]) -> str:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def _encode(obj: object) -> dict[str, object]:
    """Kubernetes JSON of ``obj`` with what a trace never keeps left out."""
    from schedframe.objects import to_dict

    doc = to_dict(obj)
    meta = doc.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
        annotations = meta.get("annotations")
        if isinstance(annotations, dict) and REDACTED_ANNOTATIONS & annotations.keys():
            kept = {k: v for k, v in annotations.items() if k not in REDACTED_ANNOTATIONS}
            if kept:
                meta["annotations"] = kept
            else:
                del meta["annotations"]
    return doc


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _replayable(kind: str) -> bool:
    """A kind the in-memory backend stores: the watched kinds, PriorityClasses, and
    declared custom kinds."""
    from schedframe.backends._memory import STORED_KINDS
    from schedframe.objects._custom import custom_kind

    return kind in STORED_KINDS or custom_kind(kind) is not None


def _decode_object(kind: str, raw: Mapping[str, Any]) -> object:
    """``raw`` as the Kubernetes backend's watch decodes it (the server has validated it)."""
    from schedframe.objects import from_dict
    from schedframe.objects._codec import server_decoder

    try:
        decode = server_decoder(kind)
    except KeyError:
        # A declared custom kind, as the backend reads one; an unknown kind is an error.
        return from_dict({**raw, "kind": kind}, validate="ignore")
    return decode(raw)


def _fail(
    source: str, line: int, path: str, kind: str, detail: str, value: object = None
) -> NoReturn:
    issue = (
        FieldIssue(path=path, kind=kind, detail=detail)
        if value is None
        else FieldIssue(path=path, kind=kind, detail=detail, value=value)
    )
    raise ManifestError([issue], source=f"{source}:{line}")


def trace_from_lines(lines: Iterable[str], *, name: str = "<trace>") -> Trace:
    """Read a trace from its JSON Lines strictly (blank lines are skipped).

    Raises:
        ManifestError: the first bad line, as ``<name>:<line>: <field path>: <problem>``.
    """
    from schedframe.objects import Node, Pod

    header: Mapping[str, Any] | None = None
    events: list[TraceEvent] = []
    source = ""
    last_time = 0.0
    live_seen = False
    number = 0
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            doc = json.loads(text.rstrip("\r\n"))
        except json.JSONDecodeError as exc:
            _fail(name, number, "", INVALID, f"not JSON: {exc.msg} at column {exc.colno}")
        if not isinstance(doc, Mapping):
            _fail(name, number, "", INVALID, "expected a JSON object")
        if header is None:
            header = doc
            for key in doc:
                if key not in _HEADER_FIELDS:
                    _fail(
                        name,
                        number,
                        str(key),
                        "Unknown field",
                        f"a trace header has {', '.join(_HEADER_FIELDS)}",
                    )
            if doc.get("kind") != TRACE_KIND:
                _fail(
                    name,
                    number,
                    "kind",
                    "Unsupported value" if "kind" in doc else "Required value",
                    f'the first line of a trace is its header, kind "{TRACE_KIND}"',
                    doc.get("kind"),
                )
            if doc.get("version") != TRACE_VERSION or isinstance(doc.get("version"), bool):
                _fail(
                    name,
                    number,
                    "version",
                    "Unsupported value" if "version" in doc else "Required value",
                    f"supported versions: {TRACE_VERSION}",
                    doc.get("version"),
                )
            raw_source = doc.get("source", "")
            if not isinstance(raw_source, str):
                _fail(name, number, "source", INVALID, "expected a string", raw_source)
            source = str(raw_source)
            continue
        for key in doc:
            if key not in _EVENT_FIELDS:
                _fail(
                    name,
                    number,
                    str(key),
                    "Unknown field",
                    f"a trace event has {', '.join(_EVENT_FIELDS)}",
                )
        for key in ("t", "type", "kind", "object"):
            if key not in doc:
                _fail(name, number, key, "Required value", "every trace event has it")
        t = doc["t"]
        if not _number(t) or t < 0:
            _fail(name, number, "t", INVALID, "expected a number of seconds >= 0", t)
        if t < last_time:
            _fail(
                name,
                number,
                "t",
                INVALID,
                f"events are in time order; the line before is at {last_time:g}",
                t,
            )
        last_time = float(t)
        event_type = doc["type"]
        if event_type not in EVENT_TYPES:
            _fail(
                name,
                number,
                "type",
                "Unsupported value",
                "supported values: " + ", ".join(f'"{v}"' for v in EVENT_TYPES),
                event_type,
            )
        kind = doc["kind"]
        if not isinstance(kind, str) or not kind:
            _fail(name, number, "kind", INVALID, "expected a kind name", kind)
        if kind in NEVER_RECORDED:
            _fail(name, number, "kind", "Forbidden", f"a trace never holds {kind}s")
        if not _replayable(kind):
            _fail(
                name,
                number,
                "kind",
                "Unsupported value",
                "a trace holds the kinds a scheduler watches (and declared custom kinds)",
                kind,
            )
        initial = doc.get("initial", False)
        if not isinstance(initial, bool):
            _fail(name, number, "initial", INVALID, "expected true or false", initial)
        if initial and live_seen:
            _fail(
                name,
                number,
                "initial",
                INVALID,
                "initial objects come before every other event",
                initial,
            )
        if initial and event_type != "ADDED":
            _fail(name, number, "type", INVALID, "an initial object is ADDED", event_type)
        live_seen = live_seen or not initial
        raw = doc["object"]
        if not isinstance(raw, Mapping):
            _fail(name, number, "object", INVALID, "expected an object", raw)
        if raw.get("kind", kind) != kind:
            _fail(name, number, "object.kind", INVALID, f"the event's kind is {kind}", raw["kind"])
        try:
            obj = _decode_object(kind, raw)
        except ManifestError as exc:
            raise exc.with_prefix("object").with_source(f"{name}:{number}") from None
        want = {"Pod": Pod, "Node": Node}.get(kind)
        if want is not None and not isinstance(obj, want):
            _fail(name, number, "kind", INVALID, f"the object is not a {kind}", kind)
        events.append(
            TraceEvent(
                time=float(t),
                type=str(event_type),
                kind=kind,
                obj=obj,
                initial=initial,
                line=number,
            )
        )
    if header is None:
        _fail(name, max(number, 1), "", "Required value", "an empty file is not a trace")
    return Trace(events=tuple(events), source=source, name=name)


def load_trace(path: str | os.PathLike[str]) -> Trace:
    """Read a trace file (JSON Lines, see the module doc).

    Raises:
        ManifestError: the file cannot be read, or its first bad line, naming the file, the
            line and the field path.
    """
    name = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            return trace_from_lines(f, name=name)
    except OSError as exc:
        raise ManifestError(f"cannot read: {exc.strerror}", source=name) from None
    except UnicodeDecodeError as exc:
        raise ManifestError(f"not UTF-8 text: {exc.reason}", source=name) from None


# --------------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------------


class _Watchable(Protocol):
    """What a recorder needs of a backend: its watch (both backends have it)."""

    def subscribe(self, callback: Callable[[WatchEvent], None]) -> Subscription: ...


class TraceRecorder:
    """Writes a backend's watch events to a trace file as they arrive.

    ::

        backend.start()
        with TraceRecorder("trace.jsonl", source="kubernetes").attach(backend):
            ...  # schedule; every change the backend sees is a line

    The objects the backend holds when :meth:`attach` subscribes are written first, marked
    ``initial`` at time 0; later events at their seconds since then (``clock``, monotonic by
    default). Each event is one line, written and flushed while the watch delivers it, so a
    trace is complete up to the last event even if the process dies. Writing stops (logged
    once) past ``max_bytes`` or on a write error; the watch never fails because of the
    recorder. Secrets are never written, nor kubectl's last-applied-configuration annotation.
    Lines are written on the thread that delivers the event, while the backend holds its
    delivery lock: a slow disk slows the watch down (never reorders it).

    Args:
        path: the trace file (created or truncated).
        source: the header's ``source``.
        max_bytes: stop writing past this size.
        clock: seconds, monotonic.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        source: str = "",
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = os.fspath(path)
        self.source = source
        self.max_bytes = max_bytes
        self._clock = clock
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        self._start = 0.0
        self._attaching: int | None = None
        self._subscription: Subscription | None = None
        #: Events written so far.
        self.events = 0
        #: Bytes written so far.
        self.bytes = 0
        #: Why writing stopped early (``""`` while recording or after a clean close).
        self.stopped = ""

    def open(self) -> TraceRecorder:
        """Create the file and write the header (:meth:`attach` does it when not done yet),
        so that a path that cannot be written fails before anything else starts.

        Raises:
            OSError: the file cannot be created.
        """
        if self._file is None:
            self._file = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 (see close())
            header = {"kind": TRACE_KIND, "version": TRACE_VERSION, "source": self.source}
            self._write(_dumps(header), event=False)
        return self

    def attach(self, backend: _Watchable) -> TraceRecorder:
        """Open the file if needed, write the backend's objects, then follow its watch.

        Raises:
            OSError: the file cannot be created.
        """
        self.open()
        self._start = self._clock()
        # The subscription replays the stored objects on this thread, inside subscribe();
        # later events come from the threads that change the store.
        self._attaching = threading.get_ident()
        try:
            self._subscription = backend.subscribe(self._on_event)
        finally:
            self._attaching = None
        return self

    def _on_event(self, event: WatchEvent) -> None:
        initial = self._attaching == threading.get_ident()
        obj = event.obj
        kind = _kind_of(obj)
        if kind in NEVER_RECORDED:
            return
        t = 0.0 if initial else max(0.0, self._clock() - self._start)
        doc: dict[str, object] = {"t": round(t, 6), "type": event.type, "kind": kind}
        if initial:
            doc["initial"] = True
        try:
            doc["object"] = _encode(obj)
        except Exception:  # the watch goes on whatever the recorder fails on
            log.exception("%s: cannot encode a %s; not recorded", self.path, kind)
            return
        self._write(_dumps(doc))

    def _write(self, line: str, *, event: bool = True) -> None:
        with self._lock:
            f = self._file
            if f is None or self.stopped:
                return
            size = len(line.encode("utf-8")) + 1
            if self.bytes + size > self.max_bytes:
                self.stopped = f"the trace reached its limit of {self.max_bytes} bytes"
                log.error("%s: %s; no more events are recorded", self.path, self.stopped)
                return
            try:
                f.write(line + "\n")
                f.flush()
            except OSError as exc:
                self.stopped = f"cannot write: {exc.strerror}"
                log.error("%s: %s; no more events are recorded", self.path, self.stopped)
                return
            self.bytes += size
            self.events += event

    def close(self) -> None:
        """Stop following the watch and close the file (idempotent)."""
        if self._subscription is not None:
            self._subscription.cancel()
            self._subscription = None
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> TraceRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _kind_of(obj: object) -> str:
    kind = getattr(obj, "kind", None)
    return kind if isinstance(kind, str) and kind else type(obj).__name__


# --------------------------------------------------------------------------------------------
# From a pod history
# --------------------------------------------------------------------------------------------

#: Scenario operations a pod history may hold.
HISTORY_OPERATIONS: Final = (
    "createPod",
    "updatePod",
    "deletePod",
    "createNode",
    "updateNode",
    "deleteNode",
    "cordon",
    "uncordon",
    "taint",
    "untaint",
)


def trace_from_scenario(scenario: Scenario, *, name: str = "<scenario>") -> Trace:
    """A cluster's pod history, exported as a scenario, as a trace.

    The history is a scenario whose ``cluster`` is the state at its start (nodes, pods
    already running on their ``nodeName``, and any other object) and whose operations say
    what happened: ``createPod`` at a pod's creation time, ``updatePod`` with
    ``spec.nodeName`` set at its bind time (the node it was observed on), ``deletePod`` at
    its deletion time, and node operations. A ``createPod`` whose pod already names a node
    is a pod bound as it was created. Controllers (``scale``, ``drain``, ``failNode``) and
    generated workloads are not history: they are errors.

    Raises:
        ManifestError: an operation or object a history cannot hold, with its field path.
    """
    from schedframe.objects import Node, Pod

    issues: list[FieldIssue] = []
    if scenario.workload is not None:
        issues.append(
            FieldIssue(
                path="workload",
                kind="Forbidden",
                detail="a pod history lists its pods as createPod operations",
            )
        )
    events: list[TraceEvent] = []
    pods: dict[str, Pod] = {}
    nodes: dict[str, Node] = {}
    for i, obj in enumerate(scenario.cluster):
        kind = _kind_of(obj)
        if kind in ("Deployment", "Job", "DaemonSet"):
            issues.append(
                FieldIssue(
                    path=f"cluster[{i}]",
                    kind="Forbidden",
                    detail=f"a pod history lists the pods of a {kind}, not the {kind}",
                )
            )
            continue
        if isinstance(obj, Pod):
            pods[obj.key] = obj
        elif isinstance(obj, Node):
            nodes[obj.name] = obj
        events.append(TraceEvent(time=0.0, type="ADDED", kind=kind, obj=obj, initial=True))
    for i, op in enumerate(scenario.operations):
        path = f"operations[{i}]"
        if op.op not in HISTORY_OPERATIONS:
            issues.append(
                FieldIssue(
                    path=f"{path}.op",
                    kind="Unsupported value",
                    detail="a pod history holds " + ", ".join(f'"{o}"' for o in HISTORY_OPERATIONS),
                    value=op.op,
                )
            )
            continue
        at = op.at
        if isinstance(op.obj, Pod):
            pod = op.obj
            if op.op == "createPod":
                if pod.key in pods:
                    issues.append(
                        FieldIssue(path=f"{path}.object", kind="Duplicate value", value=pod.key)
                    )
                    continue
                unbound = pod.with_changes(node_name="") if pod.spec.node_name else pod
                events.append(TraceEvent(time=at, type="ADDED", kind="Pod", obj=unbound))
                if pod.spec.node_name:
                    events.append(TraceEvent(time=at, type="MODIFIED", kind="Pod", obj=pod))
                pods[pod.key] = pod
            else:  # updatePod
                if pod.key not in pods:
                    issues.append(
                        FieldIssue(path=f"{path}.object", kind="Not found", value=pod.key)
                    )
                    continue
                events.append(TraceEvent(time=at, type="MODIFIED", kind="Pod", obj=pod))
                pods[pod.key] = pod
        elif op.op == "deletePod":
            key = f"{op.namespace}/{op.name}"
            gone = pods.pop(key, None)
            if gone is None:
                issues.append(FieldIssue(path=f"{path}.name", kind="Not found", value=key))
                continue
            events.append(TraceEvent(time=at, type="DELETED", kind="Pod", obj=gone))
        elif isinstance(op.obj, Node):
            node = op.obj
            created = op.op == "createNode"
            if created == (node.name in nodes):
                issues.append(
                    FieldIssue(
                        path=f"{path}.object",
                        kind="Duplicate value" if created else "Not found",
                        value=node.name,
                    )
                )
                continue
            nodes[node.name] = node
            events.append(
                TraceEvent(time=at, type="ADDED" if created else "MODIFIED", kind="Node", obj=node)
            )
        else:
            current = nodes.get(op.name)
            if current is None:
                issues.append(FieldIssue(path=f"{path}.name", kind="Not found", value=op.name))
                continue
            if op.op == "deleteNode":
                del nodes[op.name]
                events.append(TraceEvent(time=at, type="DELETED", kind="Node", obj=current))
                continue
            changed = _node_change(current, op.op, op.taint)
            nodes[op.name] = changed
            events.append(TraceEvent(time=at, type="MODIFIED", kind="Node", obj=changed))
    if issues:
        raise ManifestError(issues, source=name)
    events.sort(key=lambda e: (not e.initial, e.time))  # stable: ties keep their order
    return Trace(events=tuple(events), source="scenario", name=name)


def _node_change(node: Any, op: str, taint: Any) -> Any:
    spec = node.spec
    if op in ("cordon", "uncordon"):
        return attrs.evolve(node, spec=attrs.evolve(spec, unschedulable=op == "cordon"))
    kept = tuple(t for t in spec.taints if not t.matches(taint))
    taints = (*kept, taint) if op == "taint" else kept
    return attrs.evolve(node, spec=attrs.evolve(spec, taints=taints))
