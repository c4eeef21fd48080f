"""Workloads: which pods arrive when, and how long each runs once bound.

Two forms are read by :func:`load_workload`:

* **Pod manifests** (a multi-document YAML or JSON file, or a folder of them): every pod
  arrives at time 0, in file order, and runs forever, unless its annotations say otherwise:
  ``schedframe.io/arrival: "12.5"`` (seconds of virtual time) and
  ``schedframe.io/duration: "60"`` (seconds it runs after being bound, then it completes and
  frees its resources).
* **A generator spec**, one YAML/JSON document with ``kind: Workload``::

      kind: Workload                # apiVersion: schedframe.io/v1alpha1 is optional
      seed: 7                       # seeds random arrivals and durations (default 0)
      pods:
        - name: web                 # pods web-0, web-1, ... (in namespace of the template)
          count: 20                 # default 1
          arrival:                  # default: all at time 0
            at: 0                   # first arrival, seconds
            every: 2                # fixed gap between arrivals ...
            # rate: 0.5             # ... or Poisson arrivals at this mean rate (pods/second)
          duration: 60              # seconds; or {min: 30, max: 90} (uniform); omit = forever
          template:                 # a Pod manifest without a name
            metadata: {labels: {app: web}}
            spec:
              containers: [{name: app, resources: {requests: {cpu: 500m, memory: 256Mi}}}]

* **Workload objects** in the manifests: a Deployment (through the ReplicaSet it owns), a
  ReplicaSet, ReplicationController, StatefulSet or Job becomes its pods, named, labelled
  and owned as its controller makes them (:mod:`schedframe.simulation._controllers`); a
  DaemonSet becomes one pod per node it should run on, once the nodes are known. The
  object's ``schedframe.io/arrival`` annotation sets when its pods are created (the
  template's ``schedframe.io/duration`` how long each runs). A StatefulSet with
  ``OrderedReady`` creates its next pod once the previous one is bound; a Job keeps
  ``parallelism`` pods at once until ``completions`` have run. Services in the file (and
  the ReplicaSets, StatefulSets and RCs) are stored for default spreading.

Arrivals of all groups are merged by time; equal times keep the order of the file.
"""

from __future__ import annotations

import heapq
import math
import os
import random
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from schedframe._yaml import YAMLError, load_all_strict
from schedframe.errors import (
    INVALID,
    REQUIRED,
    UNKNOWN_FIELD,
    UNSUPPORTED,
    FieldIssue,
    ManifestError,
    ManifestWarning,
)
from schedframe.objects import (
    DaemonSet,
    Deployment,
    Job,
    Pod,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    load_manifests,
    pod_from_dict,
)
from schedframe.simulation._controllers import controller_pods

if TYPE_CHECKING:
    from schedframe.objects._codec import Validate

__all__ = [
    "ANNOTATION_ARRIVAL",
    "ANNOTATION_DURATION",
    "MAX_COUNT",
    "MAX_SECONDS",
    "Arrival",
    "Workload",
    "generate_workload",
    "load_workload",
    "workload_from_pods",
]

#: Pod annotation: arrival time in seconds of virtual time (manifest workloads).
ANNOTATION_ARRIVAL = "schedframe.io/arrival"
#: Pod annotation: seconds the pod runs once bound, then completes (manifest workloads).
ANNOTATION_DURATION = "schedframe.io/duration"
#: The longest time a workload may name (arrival, gap, duration), in seconds: about 317
#: years. Virtual time starts at the epoch and objects carry datetimes, which end in 9999;
#: this also bounds ``rate`` from below (``1 / MAX_SECONDS``).
MAX_SECONDS = 1e10
#: The most pods one workload group may ask for.
MAX_COUNT = 1_000_000

_SPEC_KIND = "Workload"
_SPEC_API_VERSION = "schedframe.io/v1alpha1"


@attrs.frozen(kw_only=True)
class Arrival:
    """One pod entering the cluster.

    Attributes:
        time: when it is created, in seconds of virtual time.
        pod: the pod (unbound).
        duration: seconds it runs once bound, after which it completes and is deleted;
            ``None`` for a pod that runs until the end.
        group: the controller the pod belongs to (``namespace/name``) when its creation
            waits on the group's earlier pods; empty otherwise.
        wait_for: ``""`` (arrives at ``time``), ``"bound"`` (created once an earlier pod of
            ``group`` is bound: a StatefulSet's ``OrderedReady``) or ``"completed"``
            (created once an earlier pod of ``group`` completes: a Job's ``parallelism``).
    """

    time: float
    pod: Pod
    duration: float | None = None
    group: str = ""
    wait_for: str = ""


@attrs.frozen
class Workload:
    """Pods and their arrival times, ordered by time (ties keep their given order).

    ``objects`` are the workload objects the pods belong to that default spreading reads
    (Services, ReplicaSets, StatefulSets, ReplicationControllers); ``daemon_sets`` are
    expanded per node by :func:`~schedframe.simulation.simulate`.
    """

    arrivals: tuple[Arrival, ...] = ()
    objects: tuple[object, ...] = ()
    daemon_sets: tuple[DaemonSet, ...] = ()

    def __len__(self) -> int:
        return len(self.arrivals)

    def __iter__(self) -> Iterator[Arrival]:
        return iter(self.arrivals)

    @property
    def pods(self) -> tuple[Pod, ...]:
        """Every pod, in arrival order."""
        return tuple(a.pod for a in self.arrivals)

    def __add__(self, other: Workload) -> Workload:
        return Workload(
            _merge([self.arrivals, other.arrivals]),
            objects=self.objects + other.objects,
            daemon_sets=self.daemon_sets + other.daemon_sets,
        )


def _merge(groups: Sequence[Sequence[Arrival]]) -> tuple[Arrival, ...]:
    keyed = [(a.time, g, i, a) for g, arrivals in enumerate(groups) for i, a in enumerate(arrivals)]
    return tuple(a for _, _, _, a in sorted(keyed, key=lambda k: (k[0], k[1], k[2])))


# --------------------------------------------------------------------------------------------
# Pods from manifests
# --------------------------------------------------------------------------------------------


def _seconds_annotation(pod: Pod, key: str, issues: list[FieldIssue]) -> float | None:
    raw = pod.metadata.annotations.get(key)
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or value > MAX_SECONDS:
        issues.append(
            FieldIssue(
                path=f"metadata.annotations[{key}]",
                kind=INVALID,
                value=raw,
                detail=f"must be a non-negative number of seconds, at most {MAX_SECONDS:g}",
            )
        )
        return None
    return value


def workload_from_pods(pods: Iterable[Pod], *, source: str | None = None) -> Workload:
    """Arrivals for pods: at time 0 and running forever, unless annotated otherwise.

    See :data:`ANNOTATION_ARRIVAL` and :data:`ANNOTATION_DURATION`.

    Raises:
        ManifestError: an annotation is not a non-negative number.
    """
    arrivals: list[Arrival] = []
    for pod in pods:
        issues: list[FieldIssue] = []
        at = _seconds_annotation(pod, ANNOTATION_ARRIVAL, issues)
        duration = _seconds_annotation(pod, ANNOTATION_DURATION, issues)
        if issues:
            where = f"{source}: pod {pod.key}" if source else f"pod {pod.key}"
            raise ManifestError(issues, source=where)
        arrivals.append(Arrival(time=at or 0.0, pod=pod, duration=duration))
    return Workload(_merge([arrivals]))


# --------------------------------------------------------------------------------------------
# The generator spec
# --------------------------------------------------------------------------------------------


_NO_VALUE = object()


class _Issues:
    def __init__(self) -> None:
        self.items: list[FieldIssue] = []

    def add(self, path: str, kind: str, detail: str = "", value: object = _NO_VALUE) -> None:
        if value is _NO_VALUE or kind in (REQUIRED, UNKNOWN_FIELD):
            self.items.append(FieldIssue(path=path, kind=kind, detail=detail))
        else:
            self.items.append(FieldIssue(path=path, kind=kind, detail=detail, value=value))

    def unknown(self, d: Mapping[str, object], allowed: Iterable[str], base: str) -> None:
        known = set(allowed)
        for key in d:
            if key not in known:
                self.add(f"{base}.{key}" if base else str(key), UNKNOWN_FIELD)

    def number(
        self,
        d: Mapping[str, object],
        key: str,
        path: str,
        *,
        minimum: float,
        strict: bool,
        maximum: float = MAX_SECONDS,
    ) -> float | None:
        value = d.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.add(path, INVALID, "must be a number", value)
            return None
        try:
            number = float(value)
        except OverflowError:  # an int beyond any float
            number = math.inf
        if not math.isfinite(number) or number < minimum or (strict and number == minimum):
            relation = "greater than" if strict else "at least"
            self.add(path, INVALID, f"must be {relation} {minimum:g}", value)
            return None
        if number > maximum:
            self.add(path, INVALID, f"must be at most {maximum:g}", value)
            return None
        return number


@attrs.frozen
class _Group:
    name: str
    count: int
    at: float
    every: float | None
    rate: float | None
    duration: float | tuple[float, float] | None
    template: Pod


def _group(
    issues: _Issues, raw: object, path: str, source: str, validate: Validate = "strict"
) -> _Group | None:
    if not isinstance(raw, Mapping):
        issues.add(path, INVALID, "must be a mapping", _describe(raw))
        return None
    issues.unknown(raw, ("name", "count", "arrival", "duration", "template"), path)
    before = len(issues.items)
    name = raw.get("name")
    if name is None:
        issues.add(f"{path}.name", REQUIRED)
    elif not isinstance(name, str) or not name:
        issues.add(f"{path}.name", INVALID, "must be a non-empty string", name)
    count = raw.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        issues.add(f"{path}.count", INVALID, "must be a non-negative integer", count)
    elif count > MAX_COUNT:
        issues.add(f"{path}.count", INVALID, f"must be at most {MAX_COUNT}", count)

    at, every, rate = 0.0, None, None
    arrival = raw.get("arrival")
    if arrival is not None:
        if not isinstance(arrival, Mapping):
            issues.add(f"{path}.arrival", INVALID, "must be a mapping", _describe(arrival))
        else:
            apath = f"{path}.arrival"
            issues.unknown(arrival, ("at", "every", "rate"), apath)
            at = issues.number(arrival, "at", f"{apath}.at", minimum=0, strict=False) or 0.0
            every = issues.number(arrival, "every", f"{apath}.every", minimum=0, strict=False)
            rate = issues.number(
                arrival, "rate", f"{apath}.rate", minimum=1 / MAX_SECONDS, strict=False
            )
            if "every" in arrival and "rate" in arrival:
                issues.add(apath, INVALID, "set either every or rate, not both")

    duration: float | tuple[float, float] | None = None
    dur = raw.get("duration")
    dpath = f"{path}.duration"
    if isinstance(dur, Mapping):
        issues.unknown(dur, ("min", "max"), dpath)
        low = issues.number(dur, "min", f"{dpath}.min", minimum=0, strict=True)
        high = issues.number(dur, "max", f"{dpath}.max", minimum=0, strict=True)
        if "min" not in dur:
            issues.add(f"{dpath}.min", REQUIRED)
        if "max" not in dur:
            issues.add(f"{dpath}.max", REQUIRED)
        if low is not None and high is not None:
            if low > high:
                issues.add(f"{dpath}.max", INVALID, "must be at least min", dur.get("max"))
            duration = (low, high)
    elif dur is not None:
        duration = issues.number(raw, "duration", dpath, minimum=0, strict=True)

    template = raw.get("template")
    pod: Pod | None = None
    tpath = f"{path}.template"
    if template is None:
        issues.add(tpath, REQUIRED, "a Pod manifest (metadata and spec)")
    elif not isinstance(template, Mapping):
        issues.add(tpath, INVALID, "must be a Pod manifest", _describe(template))
    else:
        doc = dict(template)
        doc.setdefault("apiVersion", "v1")
        doc.setdefault("kind", "Pod")
        meta = doc.get("metadata") or {}
        if isinstance(meta, Mapping):
            doc["metadata"] = {**meta, "name": meta.get("name") or str(name or "pod")}
        try:
            pod = pod_from_dict(doc, validate="ignore" if validate == "ignore" else "strict")
        except ManifestError as exc:
            found = [i.with_prefix(tpath) for i in exc.issues]
            if validate == "warn":
                for issue in found:
                    if issue.kind == UNKNOWN_FIELD:
                        warnings.warn(ManifestWarning(f"{source}: {issue}"), stacklevel=2)
                found = [i for i in found if i.kind != UNKNOWN_FIELD]
                if not found:
                    pod = pod_from_dict(doc, validate="ignore")
            issues.items.extend(found)
    if len(issues.items) > before or pod is None:
        return None
    assert isinstance(name, str) and isinstance(count, int)
    return _Group(name, count, at, every, rate, duration, pod)


def _describe(value: object) -> str:
    return type(value).__name__ if not isinstance(value, str) else value


def _named(template: Pod, name: str) -> Pod:
    ns = template.metadata.namespace or "default"
    meta = attrs.evolve(template.metadata, name=name, namespace=ns, uid=f"{ns}/{name}")
    return attrs.evolve(template, metadata=meta)


def generate_workload(
    spec: Mapping[str, object], *, source: str = "<workload>", validate: Validate = "strict"
) -> Workload:
    """Expand a generator spec (see the module documentation) into arrivals.

    Random arrivals (``rate``) and durations (``{min, max}``) come from
    ``random.Random(spec["seed"])``, so the same spec gives the same workload.

    Raises:
        ManifestError: listing every problem of the spec, each with its field path.
    """
    issues = _Issues()
    issues.unknown(spec, ("apiVersion", "kind", "seed", "pods"), "")
    if spec.get("kind") != _SPEC_KIND:
        issues.add("kind", UNSUPPORTED, f'supported values: "{_SPEC_KIND}"', spec.get("kind"))
    api_version = spec.get("apiVersion")
    if api_version is not None and api_version != _SPEC_API_VERSION:
        issues.add(
            "apiVersion", UNSUPPORTED, f'supported values: "{_SPEC_API_VERSION}"', api_version
        )
    seed = spec.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        issues.add("seed", INVALID, "must be an integer", seed)
        seed = 0
    raw_groups = spec.get("pods")
    groups: list[_Group] = []
    if raw_groups is None:
        issues.add("pods", REQUIRED, "a list of pod groups")
    elif not isinstance(raw_groups, list):
        issues.add("pods", INVALID, "must be a list of pod groups", _describe(raw_groups))
    else:
        seen: dict[str, int] = {}
        for i, raw in enumerate(raw_groups):
            group = _group(issues, raw, f"pods[{i}]", source, validate)
            if group is None:
                continue
            if group.name in seen:
                issues.add(
                    f"pods[{i}].name",
                    "Duplicate value",
                    f"also the name of pods[{seen[group.name]}]",
                    group.name,
                )
                continue
            seen[group.name] = i
            groups.append(group)
    if issues.items:
        raise ManifestError(issues.items, source=source)

    rng = random.Random(seed)
    per_group: list[list[Arrival]] = []
    for g in groups:
        arrivals = []
        t = g.at
        for i in range(g.count):
            if i > 0:
                if g.rate is not None:
                    t += rng.expovariate(g.rate)
                elif g.every is not None:
                    t += g.every
            duration: float | None
            if isinstance(g.duration, tuple):
                duration = rng.uniform(*g.duration)
            else:
                duration = g.duration
            arrivals.append(
                Arrival(time=t, pod=_named(g.template, f"{g.name}-{i}"), duration=duration)
            )
        per_group.append(arrivals)
    # Merge by time, groups in file order on ties (heapq.merge is stable across inputs).
    merged = heapq.merge(
        *[[(a.time, g, i, a) for i, a in enumerate(arr)] for g, arr in enumerate(per_group)],
        key=lambda k: (k[0], k[1], k[2]),
    )
    return Workload(tuple(a for _, _, _, a in merged))


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


def _spec_document(path: Path) -> Mapping[str, object] | None:
    """The generator spec in ``path``, or ``None`` when the file holds manifests."""
    if path.is_dir() or path.suffix not in (".yaml", ".yml", ".json"):
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # load_manifests reports it
    if "Workload" not in text:
        return None
    try:
        docs = list(load_all_strict(text, str(path)))
    except YAMLError:
        return None  # load_manifests reports it
    if len(docs) == 1 and isinstance(docs[0], Mapping) and docs[0].get("kind") == _SPEC_KIND:
        return docs[0]
    return None


def load_workload(source: str | os.PathLike[str], *, validate: Validate = "strict") -> Workload:
    """Read a workload: a generator spec file, or Pod and workload object manifests (a
    file or a folder).

    ``validate`` treats unknown fields in the Pods (and in a spec's templates) as
    :func:`~schedframe.objects.load_manifests` does.

    Raises:
        ManifestError: naming the file, the field path and what was expected.
    """
    path = Path(source)
    spec = _spec_document(path)
    if spec is not None:
        return generate_workload(spec, source=str(path), validate=validate)
    pods: list[Pod] = []
    later: list[Workload] = []
    objects: list[object] = []
    daemon_sets: list[DaemonSet] = []
    for obj in load_manifests(path, validate=validate):
        if isinstance(obj, Pod):
            pods.append(obj)
        elif isinstance(obj, DaemonSet):
            daemon_sets.append(obj)
        elif isinstance(obj, Service):
            objects.append(obj)
        elif isinstance(obj, _CONTROLLERS):
            stored, controlled, at_once = controller_pods(obj)
            objects.extend(stored)
            later.append(_controlled(obj, controlled, at_once, str(path)))
        else:
            kind = type(obj).__name__
            raise ManifestError(
                [
                    FieldIssue(
                        path="kind",
                        kind=UNSUPPORTED,
                        value=kind,
                        detail="a workload holds Pods and workload objects: supported values: "
                        + ", ".join(f'"{k}"' for k in _WORKLOAD_KINDS),
                    )
                ],
                source=str(path),
            )
    workload = workload_from_pods(pods, source=str(path))
    for w in later:
        workload = workload + w
    return workload + Workload(objects=tuple(objects), daemon_sets=tuple(daemon_sets))


_CONTROLLERS = (Deployment, ReplicaSet, ReplicationController, StatefulSet, Job)
_WORKLOAD_KINDS = (
    "DaemonSet",
    "Deployment",
    "Job",
    "Pod",
    "ReplicaSet",
    "ReplicationController",
    "Service",
    "StatefulSet",
)


def _controlled(owner: object, pods: list[Pod], at_once: int, source: str) -> Workload:
    """Arrivals of a controller's pods: the first ``at_once`` at the owner's arrival time,
    the others waiting (on a binding for a StatefulSet, a completion for a Job)."""
    meta = owner.metadata  # type: ignore[attr-defined]
    issues: list[FieldIssue] = []
    holder = Pod(metadata=meta)
    at = _seconds_annotation(holder, ANNOTATION_ARRIVAL, issues)
    if issues:
        raise ManifestError(
            issues, source=f"{source}: {type(owner).__name__} {meta.namespace}/{meta.name}"
        )
    base = workload_from_pods(pods, source=source)
    group = f"{meta.namespace}/{meta.name}"
    wait_for = "completed" if isinstance(owner, Job) else "bound"
    arrivals = []
    for i, a in enumerate(base.arrivals):
        time = a.time if ANNOTATION_ARRIVAL in a.pod.metadata.annotations else (at or 0.0)
        if i < at_once:
            arrivals.append(attrs.evolve(a, time=time, group=group))
        else:
            arrivals.append(attrs.evolve(a, time=time, group=group, wait_for=wait_for))
    return Workload(tuple(arrivals))
