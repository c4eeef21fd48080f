"""The plugin conformance kit: one call checks a plugin keeps the framework's contract.

A plugin package adds one test (model: hypothesis's ``run_conformance_test``)::

    from schedframe.testing import conformance

    def test_my_plugin_conforms() -> None:
        conformance.check_plugin("MyPlugin")   # loaded through its entry point

:func:`check_plugin` first checks what can be read off the class (name, extension points,
overridden methods, EnqueueExtensions, args), then drives the plugin with hypothesis over
generated clusters, pods and cycle states, the way the framework would, and checks every
answer. A failure raises :class:`ConformanceError` (an :class:`AssertionError`) naming the
plugin, the check (one of :data:`CHECKS`) and a minimal example.

Requires the hypothesis package to be installed.

Over 1,000 lines on purpose: the checks share one example driver, one checker (answers,
traces, mutation fingerprints) and one way of reporting a minimal example, and most checks
are a few lines of it; a self-contained check lives apart (``batch-forms`` in
``_batch_conformance``).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Final

import attrs
from hypothesis import HealthCheck, given
from hypothesis import settings as Settings
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.backends import MemoryBackend
from schedframe.cache import Snapshot
from schedframe.config import decode_args, encode_args
from schedframe.errors import ConfigError, PluginError
from schedframe.framework import Code, CycleState, NodeInfo, PodInfo, Status
from schedframe.objects import Node, Pod, PodStatus, Toleration, Volume, to_dict
from schedframe.runtime import (
    EXTENSION_POINTS as _EXTENSION_POINTS,
)
from schedframe.runtime import (
    ClusterView,
    Framework,
    PluginFactory,
    Registry,
    WaitingPod,
)
from schedframe.runtime import _cycle as cycle
from schedframe.scheduler import VirtualClock
from schedframe.testing import strategies as sst
from schedframe.testing._batch_conformance import check_batch_forms
from schedframe.testing._cluster import Cluster
from schedframe.testing._vocabulary import Vocabulary, learn_vocabulary
from schedframe.testing.builders import LABEL_HOSTNAME as _LABEL_HOSTNAME

__all__ = [
    "ALLOWED_CODES",
    "CHECKS",
    "ConformanceError",
    "Vocabulary",
    "check_plugin",
    "default_clusters",
    "default_pods",
    "learn_vocabulary",
]

#: The checks, by name. ``check_plugin(..., skip=...)`` takes these names.
CHECKS: Final = (
    "entry-point-name",  # the entry-point name equals the plugin's name
    "extension-points",  # at least one extension point; extensions only beside their point
    "methods-overridden",  # every method of every claimed Protocol is the plugin's own
    "enqueue-extensions",  # a plugin that can reject declares valid events; hints answer
    "args",  # args_type decodes camelCase defaults, round-trips, rejects bad args with a path
    "allowed-codes",  # each extension point answers only with the codes it may return
    "score-range",  # scores lie in [MIN_NODE_SCORE, MAX_NODE_SCORE] after normalize_score
    "no-mutation",  # the pod, the nodes and the snapshot's NodeInfos are left untouched
    "deterministic",  # the same inputs give the same answers
    "prefilter-extensions",  # add_pod/remove_pod agree with recomputing PreFilter
    "reserve-symmetry",  # reserve then unreserve leaves no trace; unreserve alone neither
    "unreserve-idempotent",  # a second unreserve changes nothing
    "sort-key",  # QueueSort's optional sort_key orders pods exactly as less does
    "hint-soundness",  # after a QueueSkip, the plugin still rejects the pod on the changed cluster
    "batch-forms",  # declared fast forms (framework.batch) answer as the plain methods do
)

_PROTOCOLS: Final[tuple[type, ...]] = (
    *(proto for _, proto, _, _ in _EXTENSION_POINTS),
    fw.PreFilterExtensions,
    fw.ScoreExtensions,
    fw.EnqueueExtensions,
)
_POINT_PROTOCOLS: Final[tuple[type, ...]] = tuple(proto for _, proto, _, _ in _EXTENSION_POINTS)
_REJECTING: Final[tuple[type, ...]] = (
    fw.PreEnqueuePlugin,
    fw.PreFilterPlugin,
    fw.FilterPlugin,
    fw.ReservePlugin,
    fw.PermitPlugin,
)
_REJECTIONS: Final = frozenset(
    {Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING}
)
#: The codes each extension point may answer with, on valid inputs (``None`` = SUCCESS).
ALLOWED_CODES: Final[Mapping[str, frozenset[Code]]] = {
    "pre_enqueue": frozenset({Code.SUCCESS}) | _REJECTIONS,
    "pre_filter": frozenset({Code.SUCCESS, Code.SKIP}) | _REJECTIONS,
    "filter": frozenset({Code.SUCCESS}) | _REJECTIONS,
    "post_filter": frozenset(
        {Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE}
    ),
    "pre_score": frozenset({Code.SUCCESS, Code.SKIP}),
    "normalize_score": frozenset({Code.SUCCESS}),
    "reserve": frozenset({Code.SUCCESS}) | _REJECTIONS,
    "permit": frozenset({Code.SUCCESS, Code.WAIT}) | _REJECTIONS,
    "pre_bind": frozenset({Code.SUCCESS}) | _REJECTIONS,
    "bind": frozenset({Code.SUCCESS, Code.SKIP}),
    "add_pod": frozenset({Code.SUCCESS}),
    "remove_pod": frozenset({Code.SUCCESS}),
}
_JUNK: Final = fw.StateKey[object]("ConformanceForeignKey")
_EVENT_LABEL: Final = "conformance.schedframe.io/changed"


class ConformanceError(AssertionError):
    """A plugin broke the contract.

    Attributes:
        plugin: the plugin's name.
        check: the check that failed (one of :data:`CHECKS`).
        detail: what went wrong.
        example: the (minimal) inputs, as Kubernetes JSON, when the check ran on examples.
    """

    def __init__(self, plugin: str, check: str, detail: str, example: str = "") -> None:
        self.plugin = plugin
        self.check = check
        self.detail = detail
        self.example = example
        text = f"plugin {plugin} fails conformance check {check!r}: {detail}"
        if example:
            text += "\nminimal example:\n" + example
        super().__init__(text)


# --------------------------------------------------------------------------------------------
# Loading and static checks
# --------------------------------------------------------------------------------------------


@attrs.frozen
class _Target:
    name: str
    factory: PluginFactory
    cls: type
    args: object
    registry: Registry


def _fail(name: str, check: str, detail: str, example: str = "") -> ConformanceError:
    return ConformanceError(name, check, detail, example)


def _load(
    name_or_class: str | PluginFactory,
    args: object,
    registry: Registry | None,
    skip: frozenset[str],
) -> _Target:
    reg = registry if registry is not None else Registry.discover()
    if isinstance(name_or_class, str):
        name = name_or_class
        try:
            factory = reg.load(name)
        except PluginError as exc:
            raise _fail(name, "entry-point-name", f"cannot load it: {exc}") from exc
    else:
        factory = name_or_class
        claimed = getattr(factory, "name", None)
        if not isinstance(claimed, str) or not claimed:
            raise _fail(
                getattr(factory, "__qualname__", repr(factory)),
                "entry-point-name",
                "the plugin class has no non-empty class attribute 'name'",
            )
        name = claimed
    plugin_args = _default_args(name, factory, args)
    try:
        instance = factory(plugin_args, _framework(Snapshot(), seed=0, binder=None))
    except Exception as exc:
        raise _fail(
            name, "args", f"building it with {plugin_args!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    cls = type(instance)
    own = getattr(instance, "name", None)
    if "entry-point-name" not in skip:
        if own != name:
            raise _fail(
                name,
                "entry-point-name",
                f"registered as {name!r} but its 'name' is {own!r}; they must be equal",
            )
        if not isinstance(name_or_class, str):
            _check_published_name(name, factory, reg)
    return _Target(name=name, factory=factory, cls=cls, args=plugin_args, registry=reg)


def _check_published_name(name: str, factory: PluginFactory, reg: Registry) -> None:
    # A class given directly: find the entry points that may point at it and compare names.
    qualname = getattr(factory, "__qualname__", None)
    for source in reg.sources():
        if source.distribution is None or not source.value.endswith(f":{qualname}"):
            continue
        try:
            loaded = reg.load(source.name)
        except PluginError:
            continue
        if loaded is factory and source.name != name:
            raise _fail(
                name,
                "entry-point-name",
                f"entry point {source.name!r} ({source.value}, from {source.distribution}) "
                f"names it differently from its 'name' {name!r}",
            )


def _default_args(name: str, factory: PluginFactory, given_args: object) -> object:
    args_type = getattr(factory, "args_type", None)
    if args_type is None:
        if given_args is not None:
            raise _fail(name, "args", "args were given but the plugin declares no args_type")
        return None
    if given_args is None or isinstance(given_args, Mapping):
        try:
            return decode_args(args_type, given_args, path="args")
        except ConfigError as exc:
            raise _fail(name, "args", f"decoding {given_args!r} failed: {exc}") from exc
        except TypeError as exc:
            raise _fail(name, "args", f"args_type cannot be decoded: {exc}") from exc
    return given_args


def _protocol_methods(proto: type) -> list[str]:
    return [
        k
        for k, v in vars(proto).items()
        if callable(v) and not k.startswith("_") and k not in ("name",)
    ]


def _owner(cls: type, method: str) -> type | None:
    for klass in cls.__mro__:
        if method in vars(klass):
            return klass
    return None


def _check_static(target: _Target, skip: frozenset[str]) -> None:
    name, cls = target.name, target.cls
    if "extension-points" not in skip:
        points = [p.__name__ for p in _POINT_PROTOCOLS if _implements(cls, p)]
        if not points:
            raise _fail(
                name,
                "extension-points",
                "it implements no extension point (subclass e.g. framework.FilterPlugin and "
                "define its method)",
            )
        for ext, point in (
            (fw.PreFilterExtensions, fw.PreFilterPlugin),
            (fw.ScoreExtensions, fw.ScorePlugin),
        ):
            if _implements(cls, ext) and not _implements(cls, point):
                raise _fail(
                    name,
                    "extension-points",
                    f"it implements {ext.__name__} but not {point.__name__}, so the framework "
                    "never calls it",
                )
    if "methods-overridden" not in skip:
        for proto in _PROTOCOLS:
            if proto not in cls.__mro__:
                continue
            for method in _protocol_methods(proto):
                owner = _owner(cls, method)
                if (
                    owner is None
                    or owner in _PROTOCOLS
                    or owner.__module__.startswith("schedframe.framework")
                ):
                    raise _fail(
                        name,
                        "methods-overridden",
                        f"it subclasses {proto.__name__} but does not define {method}(); the "
                        "Protocol's empty body would silently return None",
                    )
    if "enqueue-extensions" not in skip:
        _check_enqueue_static(target)
    if "args" not in skip:
        _check_args(target)


def _implements(cls: type, proto: type) -> bool:
    """As the framework detects it (a runtime-checkable Protocol): every method is there."""
    return all(callable(getattr(cls, m, None)) for m in _protocol_methods(proto))


def _instance(target: _Target, fwk: Framework) -> fw.Plugin:
    plugin = target.factory(target.args, fwk)
    return plugin


def _check_enqueue_static(target: _Target) -> None:
    name, cls = target.name, target.cls
    if not any(_implements(cls, p) for p in _REJECTING):
        return
    if not _implements(cls, fw.EnqueueExtensions):
        kinds = ", ".join(p.__name__ for p in _REJECTING if _implements(cls, p))
        raise _fail(
            name,
            "enqueue-extensions",
            f"it can reject pods ({kinds}) but implements no EnqueueExtensions: declare the "
            "cluster events that may make a rejected pod schedulable (events_to_register)",
        )
    plugin = _instance(target, _framework(Snapshot(), seed=0, binder=None))
    assert isinstance(plugin, fw.EnqueueExtensions)
    try:
        events = list(plugin.events_to_register())
    except Exception as exc:
        raise _fail(
            name, "enqueue-extensions", f"events_to_register() raised {type(exc).__name__}: {exc}"
        ) from exc
    for i, item in enumerate(events):
        where = f"events_to_register()[{i}]"
        if not isinstance(item, fw.ClusterEventWithHint):
            raise _fail(
                name, "enqueue-extensions", f"{where} is {item!r}, not a ClusterEventWithHint"
            )
        event = item.event
        if not isinstance(event, fw.ClusterEvent) or not isinstance(event.resource, str):
            raise _fail(name, "enqueue-extensions", f"{where} has no valid ClusterEvent: {event!r}")
        if (
            not isinstance(event.action_type, fw.ActionType)
            or event.action_type == fw.ActionType.NONE
        ):
            raise _fail(name, "enqueue-extensions", f"{where} has no action type: {event!r}")
        if item.queueing_hint_fn is not None and not callable(item.queueing_hint_fn):
            raise _fail(name, "enqueue-extensions", f"{where} has a hint that is not callable")


def _check_args(target: _Target) -> None:
    name = target.name
    args_type = getattr(target.factory, "args_type", None)
    if args_type is None:
        return
    if not attrs.has(args_type):
        raise _fail(name, "args", f"args_type {args_type!r} is not an attrs class")
    try:
        defaults = decode_args(args_type, {}, path="args")
    except (ConfigError, TypeError) as exc:
        raise _fail(name, "args", f"decoding empty args failed: {exc}") from exc
    try:
        built = args_type()
    except Exception as exc:
        raise _fail(
            name, "args", f"{args_type.__name__}() needs arguments; every field needs a default"
        ) from exc
    if defaults != built:
        raise _fail(name, "args", f"decoding {{}} gave {defaults!r}, not the defaults {built!r}")
    encoded = encode_args(defaults)
    if any("_" in key for key in encoded):
        raise _fail(name, "args", f"encoded args are not camelCase: {sorted(encoded)}")
    try:
        again = decode_args(args_type, encoded, path="args")
    except (ConfigError, TypeError) as exc:
        raise _fail(
            name, "args", f"its own encoded defaults {encoded!r} do not decode: {exc}"
        ) from exc
    if again != defaults:
        raise _fail(name, "args", f"defaults do not round-trip: {encoded!r} -> {again!r}")
    bad: list[tuple[Mapping[str, object], str]] = [
        ({**encoded, "conformanceUnknownField": 1}, "args.conformanceUnknownField")
    ]
    for key, value in encoded.items():
        wrong = _wrong_type(value)
        if wrong is not _NO_WRONG:
            bad.append(({**encoded, key: wrong}, f"args.{key}"))
    for raw, path in bad:
        try:
            decode_args(args_type, raw, path="args")
        except ConfigError as exc:
            if not any(p == path or p.startswith((path + ".", path + "[")) for p in exc.paths):
                raise _fail(
                    name,
                    "args",
                    f"{raw!r} was rejected, but not at {path}: {exc}",
                ) from exc
        except TypeError as exc:
            raise _fail(name, "args", f"decoding {raw!r} raised TypeError: {exc}") from exc
        else:
            raise _fail(name, "args", f"{raw!r} was accepted; expected an error at {path}")


_NO_WRONG: Final = object()


def _wrong_type(value: object) -> object:
    # A value of a kind no field of this value's kind accepts.
    if isinstance(value, bool):
        return "not-a-boolean"
    if isinstance(value, int | float):
        return "not-a-number"
    if isinstance(value, str):
        return {"conformance": ["not", "a", "string"]}
    if isinstance(value, list | tuple):
        return "not-a-list"
    if isinstance(value, Mapping):
        return ["not", "an", "object"]
    return _NO_WRONG


def _check_invalid_args(target: _Target, invalid: Sequence[Mapping[str, object]]) -> None:
    args_type = getattr(target.factory, "args_type", None)
    for raw in invalid:
        if args_type is None:
            raise _fail(target.name, "args", "invalid_args given but the plugin has no args_type")
        try:
            decode_args(args_type, raw, path="args")
        except ConfigError as exc:
            if not all(p.startswith("args.") or p.startswith("args[") for p in exc.paths):
                raise _fail(
                    target.name, "args", f"{raw!r} was rejected without a field path: {exc}"
                ) from exc
            continue
        raise _fail(target.name, "args", f"{raw!r} was accepted; it should be rejected")


# --------------------------------------------------------------------------------------------
# Generated cases
# --------------------------------------------------------------------------------------------


def default_pods(*, namespaces: Sequence[str] = ("default", "team-a")) -> st.SearchStrategy[Pod]:
    """The pods :func:`check_plugin` schedules by default: every scheduling feature, plus
    scheduling gates, claim-backed volumes and ``preemptionPolicy: Never`` now and then."""
    # Repeated choices weigh the draw: most pods are neither gated, nor claim volumes, nor
    # refuse to preempt, so most examples go through every point.
    return sst.pods(
        name=st.just("pod"),
        namespace=st.sampled_from(tuple(namespaces)),
        scheduling_gates=st.sampled_from(((),) * 5 + (("example.com/gate",),)),
        volumes=st.sampled_from(
            ((),) * 5 + ((Volume(name="data", persistent_volume_claim="data"),),)
        ),
        preemption_policy=st.sampled_from(("PreemptLowerPriority",) * 3 + ("Never",)),
    )


def default_clusters(
    *, pods: st.SearchStrategy[Pod] | None = None, vocabulary: Vocabulary | None = None
) -> st.SearchStrategy[Cluster]:
    """The clusters :func:`check_plugin` runs in by default: up to 3 nodes in zones, tainted
    or cordoned now and then, up to 4 running pods with labels, requests, host ports,
    priorities and pod (anti-)affinity (what plugins read off running pods), and budgets.
    A ``vocabulary`` adds its node labels, taints, resources (and pod labels to running
    pods)."""
    vocab = vocabulary if vocabulary is not None else Vocabulary()
    namespaces = ("default", "team-a")
    running = (
        pods
        if pods is not None
        else sst.pods(
            namespace=st.sampled_from(namespaces),
            node_selector=st.just({}),
            tolerations=st.just(()),
            topology_spread_constraints=st.just(()),
            affinity=st.none() | sst.affinities(node_affinity=st.none()),
        )
    )
    nodes = None
    if vocab:
        running = vocab.pods(running)
        nodes = vocab.nodes(
            sst.nodes(
                name=st.just("node"),
                zone=st.none(),
                taints=st.lists(sst.taints(), max_size=2),
                unschedulable=st.booleans(),
            )
        )
    return sst.clusters(
        max_nodes=3,
        max_pods=4,
        namespaces=namespaces,
        pods=running,
        nodes=nodes,
        taints=True,
        pdbs=True,
    )


@attrs.frozen(kw_only=True)
class _Case:
    cluster: Cluster
    pod: Pod
    other: Pod
    added: Pod
    added_node: int
    removed: int
    rejections: tuple[bool, ...]
    seed: int


def _named(pod: Pod, name: str) -> Pod:
    meta = attrs.evolve(pod.metadata, name=name, uid=f"{pod.namespace}/{name}")
    return attrs.evolve(
        pod, metadata=meta, spec=attrs.evolve(pod.spec, node_name=""), status=PodStatus()
    )


def _cases(
    clusters: st.SearchStrategy[Cluster], pods: st.SearchStrategy[Pod]
) -> st.SearchStrategy[_Case]:
    @st.composite
    def build(draw: st.DrawFn) -> _Case:
        cluster = draw(clusters)
        pod = _named(draw(pods), "incoming")
        drawn = draw(pods)
        # The other pod is a sibling (same labels and spec) or the pod added in what-ifs.
        other = _named(pod if draw(st.booleans()) else drawn, "other")
        mask = draw(st.integers(0, 255))
        return _Case(
            cluster=cluster,
            pod=pod,
            other=other,
            added=_named(drawn, "added"),
            added_node=draw(st.integers(0, 7)),
            removed=draw(st.integers(0, 7)),
            rejections=tuple(bool(mask >> i & 1) for i in range(8)),
            seed=draw(st.integers(0, 2**16)),
        )

    return build()


def _compact(obj: object) -> str:
    d = to_dict(obj)
    d.pop("apiVersion", None)
    d.pop("kind", None)
    meta = d.get("metadata")
    if isinstance(meta, dict):
        for key in ("uid", "creationTimestamp", "resourceVersion"):
            meta.pop(key, None)
    return json.dumps(d, separators=(",", ":"), sort_keys=False)


def _describe(case: _Case) -> str:
    lines = [
        f"  pod:       {_compact(case.pod)}",
        f"  other pod: {_compact(case.other)}",
        f"  added pod: {_compact(case.added)} (for add_pod, on node #{case.added_node})",
    ]
    lines += [f"  node:      {_compact(n)}" for n in case.cluster.nodes]
    lines += [f"  running:   {_compact(p)}" for p in case.cluster.pods]
    lines += [f"  namespace: {_compact(n)}" for n in case.cluster.namespaces]
    lines += [f"  pdb:       {_compact(b)}" for b in case.cluster.pdbs]
    lines.append(f"  seed:      {case.seed}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Driving the plugin
# --------------------------------------------------------------------------------------------


def _framework(
    snapshot: Snapshot, *, seed: int, binder: fw.Binder | None, cluster: Cluster | None = None
) -> Framework:
    clock = VirtualClock()
    view = ClusterView()
    if cluster is not None:
        listed = [*cluster.custom, *cluster.nodes, *cluster.pods, *cluster.pending]
        view = ClusterView(cluster.namespaces, cluster.pdbs, listed)
    return Framework(
        snapshot=snapshot,
        cluster=view,
        clock=clock,
        timers=clock,
        rng=random.Random(seed),
        binder=binder,
    )


class _Rejecter(fw.FilterPlugin, fw.EnqueueExtensions):
    """Stands for the profile's other Filter plugins when a PostFilter plugin is checked alone:
    rejects every node, Unschedulable or UnschedulableAndUnresolvable as the case says, so
    PostFilter gets a node-status map the framework's own filters agree with."""

    name: ClassVar[str] = "ConformanceRejecter"

    def __init__(self, codes: Mapping[str, Code]) -> None:
        self._codes = codes

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status(
            self._codes.get(node_info.name, Code.UNSCHEDULABLE),
            "rejected by another plugin (conformance)",
        )

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        return ()


class _Run:
    """One fresh world: snapshot, backend, framework (with companions) and the plugin."""

    def __init__(
        self,
        target: _Target,
        companions: Sequence[tuple[str, PluginFactory, object]],
        cluster: Cluster,
        extra: Sequence[Pod],
        seed: int,
        rejections: Sequence[bool] = (),
    ) -> None:
        self.target = target
        self.cluster = cluster
        self.snapshot = cluster.snapshot()
        self.backend = MemoryBackend([*cluster.objects(), *extra])
        self.fwk = _framework(self.snapshot, seed=seed, binder=self.backend, cluster=cluster)
        self.companions: list[fw.Plugin] = []
        for _, factory, args in companions:
            comp = factory(args, self.fwk)
            self.fwk.add_plugin(comp)
            self.companions.append(comp)
        if not companions and rejections and _implements(target.cls, fw.PostFilterPlugin):
            codes = {
                ni.name: Code.UNSCHEDULABLE
                if rejections[i % len(rejections)]
                else Code.UNSCHEDULABLE_AND_UNRESOLVABLE
                for i, ni in enumerate(self.snapshot.list())
            }
            rejecter = _Rejecter(codes)
            self.fwk.add_plugin(rejecter)
            self.companions.append(rejecter)
        self.plugin: Any = _instance(target, self.fwk)
        self.fwk.add_plugin(self.plugin)
        self.name = target.name
        self.clock = self.fwk.clock

    def has(self, proto: type) -> bool:
        return isinstance(self.plugin, proto)


class _Checker:
    """Runs one example: checks answers as they come, and keeps a trace for determinism."""

    def __init__(self, run: _Run, case: _Case, skip: frozenset[str], watch: Sequence[Pod]) -> None:
        self.run = run
        self.case = case
        self.skip = skip
        self.trace: list[tuple[object, ...]] = []
        self.watch = watch
        self.before = _fingerprint(run.snapshot, watch) if "no-mutation" not in skip else None

    def fail(self, check: str, detail: str) -> ConformanceError:
        return _fail(self.run.name, check, detail, _describe(self.case))

    def mutated(self, point: str) -> None:
        if self.before is None:
            return
        after = _fingerprint(self.run.snapshot, self.watch)
        if after != self.before:
            what = _difference(self.before, after)
            raise self.fail("no-mutation", f"{point} changed its input: {what}")

    def call(self, point: str, fn: Callable[..., object], *args: object, where: str = "") -> object:
        try:
            out = fn(*args)
        except Exception as exc:
            if "allowed-codes" in self.skip:
                self.trace.append((point, where, "raised", type(exc).__name__))
                return _RAISED
            raise self.fail(
                "allowed-codes",
                f"{point}{where} raised {type(exc).__name__}: {exc} (plugins answer with a "
                "Status; on valid inputs nothing should raise)",
            ) from exc
        self.mutated(f"{point}{where}")
        return out

    def status(self, point: str, out: object, where: str = "") -> Status | None:
        if out is _RAISED:
            return Status(Code.ERROR, "raised")
        if out is not None and not isinstance(out, Status):
            raise self.fail(
                "allowed-codes", f"{point}{where} returned {out!r}, not a Status or None"
            )
        code = Code.SUCCESS if out is None else out.code
        if "allowed-codes" not in self.skip and code not in ALLOWED_CODES[point]:
            allowed = ", ".join(sorted(str(c) for c in ALLOWED_CODES[point]))
            raise self.fail(
                "allowed-codes",
                f"{point}{where} returned {out!r}; {point} may only answer {allowed}",
            )
        self.trace.append((point, where, *_outcome(out)))
        return None if out is None or out.is_success() else out


_RAISED: Final = object()


def _outcome(out: object) -> tuple[object, ...]:
    if out is None:
        return ("ok",)
    if isinstance(out, Status):
        return (out.code.name, out.reasons, out.timeout)
    if isinstance(out, fw.PreFilterResult):
        return ("result", None if out.node_names is None else tuple(sorted(out.node_names)))
    return (repr(out),)


def _fingerprint(snapshot: Snapshot, pods: Sequence[Pod]) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = [("pod", _pod_fp(p)) for p in pods]
    out.append(("order", tuple(ni.name for ni in snapshot.list())))
    out.append(("affinity", tuple(ni.name for ni in snapshot.have_pods_with_affinity_list())))
    out.append(
        (
            "anti-affinity",
            tuple(ni.name for ni in snapshot.have_pods_with_required_anti_affinity_list()),
        )
    )
    for ni in snapshot.list():
        out.append(_node_info_fp(ni))
    return out


def _pod_fp(pod: Pod) -> tuple[object, ...]:
    return (
        id(pod),
        json.dumps(to_dict(pod), sort_keys=True),
        tuple(sorted(pod.requests.items())),
        tuple(sorted(pod.non_zero_requests.items())),
        pod.host_ports,
    )


def _node_info_fp(ni: NodeInfo) -> tuple[object, ...]:
    node = ni.node
    return (
        "node",
        ni.name,
        id(node),
        json.dumps(to_dict(node), sort_keys=True) if node is not None else None,
        tuple((id(pi), *_pod_fp(pi.pod)) for pi in ni.pods),
        tuple(pi.pod.uid for pi in ni.pods_with_affinity),
        tuple(pi.pod.uid for pi in ni.pods_with_required_anti_affinity),
        tuple(sorted(ni.requested.items())),
        tuple(sorted(ni.non_zero_requested.items())),
        tuple(sorted(ni.allocatable.items())),
        tuple(sorted(ni.used_ports)),
        tuple(sorted((k, v.size, v.num_nodes) for k, v in ni.image_states.items())),
        tuple(sorted(ni.pvc_ref_counts.items())),
        ni.generation,
    )


def _difference(before: list[tuple[object, ...]], after: list[tuple[object, ...]]) -> str:
    for b, a in zip(before, after, strict=False):
        if b != a:
            if b[0] == "pod":
                return f"the pod {json.loads(str(_pod_json(b)))['metadata']['name']} was modified"
            if b[0] == "node":
                return f"the snapshot's NodeInfo of {b[1]} was modified ({_which(b, a)})"
            return f"the snapshot's {b[0]} list was modified"
    return "the snapshot was modified"


def _pod_json(fp: tuple[object, ...]) -> object:
    inner = fp[1]
    assert isinstance(inner, tuple)
    return inner[1]


_NODE_FIELDS: Final = (
    "kind",
    "name",
    "node identity",
    "node",
    "pods",
    "pods_with_affinity",
    "pods_with_required_anti_affinity",
    "requested",
    "non_zero_requested",
    "allocatable",
    "used_ports",
    "image_states",
    "pvc_ref_counts",
    "generation",
)


def _which(b: tuple[object, ...], a: tuple[object, ...]) -> str:
    return ", ".join(f for f, x, y in zip(_NODE_FIELDS, b, a, strict=False) if x != y)


def _queued(pod: Pod, timestamp: float) -> fw.QueuedPodInfo:
    return fw.QueuedPodInfo(pod_info=PodInfo(pod), timestamp=timestamp)


def _framework_verdicts(
    run: _Run,
    state: CycleState,
    pod: Pod,
    allowed: set[str] | None,
    rejection: Status | None,
) -> fw.NodeToStatus | None:
    """The node-status map the framework would hand PostFilter, or ``None`` when some node is
    feasible (PostFilter is not called then). Only the plugin, its companions and the
    rejecter count: they are the whole profile here."""
    m = fw.NodeToStatus()
    if rejection is not None:
        m.absent_nodes_status = rejection  # upstream: a PreFilter rejection covers every node
        return m
    # Nodes PreFilter cut are absent: UnschedulableAndUnresolvable.
    narrowed = None if allowed is None else tuple(sorted(allowed))
    pre = cycle.PreFiltered(state, None, None, (), narrowed)
    for ni, status in cycle.filter_nodes(run.fwk, pre, pod, run.snapshot.list()):
        if status is None:
            return None
        m.set(ni.name, status)
    return m


@attrs.define
class _CycleResult:
    state: CycleState
    feasible: list[str]
    node: str | None
    pre_filter_ok: bool


def _cycle(ck: _Checker, pod: Pod, *, reserve: bool, finish: bool, label: str) -> _CycleResult:
    """Run ``pod`` through the plugin's points up to Reserve (and, with ``finish``, beyond)."""
    run = ck.run
    plugin = run.plugin
    snapshot = run.snapshot
    nodes = snapshot.list()
    state = CycleState()
    state[_JUNK] = object()  # a foreign key a plugin must ignore
    w = f" [{label}]"

    if pod.spec.scheduling_gates:
        # A gated pod never leaves the queue (and the API server refuses to bind it).
        return _CycleResult(state, [], None, False)

    # Companions first, as a profile would run them, so their state is there for handle calls.
    rejection: Status | None = None
    for comp in run.companions:
        if isinstance(comp, fw.PreFilterPlugin):
            comp_out = comp.pre_filter(state, pod, nodes)
            if isinstance(comp_out, Status) and comp_out.is_skip():
                state.skip_filter_plugins.add(comp.name)
            elif isinstance(comp_out, Status) and comp_out.is_rejected() and rejection is None:
                rejection = comp_out.with_plugin(comp.name)

    allowed: set[str] | None = None
    pre_filter_ok = True
    skipped = False
    if run.has(fw.PreFilterPlugin):
        out: object = ck.call("pre_filter", plugin.pre_filter, state, pod, nodes, where=w)
        if isinstance(out, fw.PreFilterResult):
            ck.trace.append(("pre_filter", w, *_outcome(out)))
            if out.node_names is not None:
                allowed = set(out.node_names)
        else:
            status = ck.status("pre_filter", out, w)
            if status is not None and status.is_skip():
                skipped = True
                state.skip_filter_plugins.add(run.name)
            elif status is not None:
                pre_filter_ok = False
                if rejection is None and status.is_rejected():
                    rejection = status.with_plugin(run.name)

    feasible: list[str] = []
    own: dict[str, Status] = {}
    if pre_filter_ok:
        for ni in nodes:
            if allowed is not None and ni.name not in allowed:
                continue
            if run.has(fw.FilterPlugin) and not skipped:
                where = f" on {ni.name}{w}"
                status = ck.status(
                    "filter", ck.call("filter", plugin.filter, state, pod, ni, where=where), where
                )
                if status is not None:
                    own[ni.name] = status
                    continue
            feasible.append(ni.name)

    m = _framework_verdicts(run, state, pod, allowed, rejection) if finish else None
    if run.has(fw.PostFilterPlugin) and m is not None:
        pf_out = ck.call("post_filter", plugin.post_filter, state, pod, m, where=w)
        if pf_out is not _RAISED:
            if not isinstance(pf_out, tuple) or len(pf_out) != 2:
                raise ck.fail(
                    "allowed-codes", f"post_filter{w} returned {pf_out!r}, not (result, status)"
                )
            result, status_ = pf_out
            if result is not None and not isinstance(result, fw.PostFilterResult):
                raise ck.fail(
                    "allowed-codes",
                    f"post_filter{w} returned result {result!r}, not a PostFilterResult",
                )
            ck.status("post_filter", status_, w)
            ck.trace.append(("post_filter result", w, repr(result)))

    node = feasible[0] if feasible else None
    scoring = [snapshot.get(n) for n in feasible]
    if scoring and run.has(fw.ScorePlugin):
        score_skipped = False
        if run.has(fw.PreScorePlugin):
            status = ck.status(
                "pre_score", ck.call("pre_score", plugin.pre_score, state, pod, scoring, where=w), w
            )
            score_skipped = status is not None
        if not score_skipped:
            raw: list[int] = []
            for ni in scoring:
                where = f" on {ni.name}{w}"
                value = ck.call("score", plugin.score, state, pod, ni, where=where)
                if value is _RAISED:
                    value = 0
                if not isinstance(value, int) or isinstance(value, bool):
                    raise ck.fail("allowed-codes", f"score{where} returned {value!r}, not an int")
                raw.append(value)
            ck.trace.append(("score", w, tuple(raw)))
            scores = list(raw)
            normalized = run.has(fw.ScoreExtensions)
            if normalized:
                nsl = fw.NodeScoreList(list(feasible), scores)
                ck.status(
                    "normalize_score",
                    ck.call("normalize_score", plugin.normalize_score, state, pod, nsl, where=w),
                    w,
                )
                scores = nsl.scores
                if len(scores) != len(raw):
                    raise ck.fail(
                        "score-range",
                        f"normalize_score{w} changed the number of scores ({len(raw)} -> {len(scores)})",
                    )
                ck.trace.append(("normalized", w, tuple(scores)))
            if "score-range" not in ck.skip:
                for n, s in zip(feasible, scores, strict=True):
                    if not isinstance(s, int) or not fw.MIN_NODE_SCORE <= s <= fw.MAX_NODE_SCORE:
                        after = "after normalize_score" if normalized else "(no normalize_score)"
                        raise ck.fail(
                            "score-range",
                            f"node {n} scored {s!r} {after}{w}; scores must lie in "
                            f"[{fw.MIN_NODE_SCORE}, {fw.MAX_NODE_SCORE}] (raw scores {raw})",
                        )
            if scores:
                best = max(scores)
                node = feasible[scores.index(best)]

    if node is None or not reserve:
        return _CycleResult(state, feasible, node, pre_filter_ok)

    assumed = pod.with_node_name(node)
    where = f" on {node}{w}"
    if run.has(fw.ReservePlugin):
        status = ck.status(
            "reserve", ck.call("reserve", plugin.reserve, state, assumed, node, where=where), where
        )
        if status is not None:
            ck.call("unreserve", plugin.unreserve, state, assumed, node, where=where)
            return _CycleResult(state, feasible, node, pre_filter_ok)
    if not finish:
        return _CycleResult(state, feasible, node, pre_filter_ok)
    if run.has(fw.PermitPlugin):
        permit_out = ck.call("permit", plugin.permit, state, assumed, node, where=where)
        status = ck.status("permit", permit_out, where)
        if status is not None and status.is_wait():
            timeout = status.timeout
            if timeout is None or not math.isfinite(timeout) or timeout < 0:
                raise ck.fail(
                    "allowed-codes",
                    f"permit{where} asked to Wait with timeout {timeout!r}; use Status.wait(seconds)",
                )
            waiting = WaitingPod(assumed, {run.name: timeout}, run.fwk._timers, node)
            run.fwk.waiting_pods.add(waiting)
            # Let the wait run out, as the framework's timer would, and follow the rejection.
            assert isinstance(run.clock, VirtualClock)
            run.clock.advance(min(timeout, 15 * 60.0) + 1)
            ck.trace.append(("waited", where, repr(waiting.status)))
            run.fwk.waiting_pods.remove(assumed.uid)
            status = waiting.status if waiting.status is not None else Status(Code.UNSCHEDULABLE)
        if status is not None and not status.is_success():
            if run.has(fw.ReservePlugin):
                ck.call("unreserve", plugin.unreserve, state, assumed, node, where=where)
            return _CycleResult(state, feasible, node, pre_filter_ok)
    if run.has(fw.PreBindPlugin):
        status = ck.status(
            "pre_bind",
            ck.call("pre_bind", plugin.pre_bind, state, assumed, node, where=where),
            where,
        )
        if status is not None:
            if run.has(fw.ReservePlugin):
                ck.call("unreserve", plugin.unreserve, state, assumed, node, where=where)
            return _CycleResult(state, feasible, node, pre_filter_ok)
    if run.has(fw.BindPlugin):
        ck.status("bind", ck.call("bind", plugin.bind, state, assumed, node, where=where), where)
    if run.has(fw.PostBindPlugin):
        ck.call("post_bind", plugin.post_bind, state, assumed, node, where=where)
    return _CycleResult(state, feasible, node, pre_filter_ok)


def _enqueue(ck: _Checker, pods: Sequence[Pod]) -> _Checker:
    """The pending pods enter the queue: PreEnqueue sees each one, in order."""
    if ck.run.has(fw.PreEnqueuePlugin):
        for pod in pods:
            w = f" [{pod.name}]"
            out = ck.call("pre_enqueue", ck.run.plugin.pre_enqueue, pod, where=w)
            ck.status("pre_enqueue", out, w)
    return ck


def _check_queue_sort(ck: _Checker) -> None:
    run = ck.run
    if not run.has(fw.QueueSortPlugin):
        return
    pods = [ck.case.pod, ck.case.other, *ck.case.cluster.pods[:2]]
    infos = [_queued(p, float(i % 2)) for i, p in enumerate(pods)]
    less = run.plugin.less
    table: dict[tuple[int, int], bool] = {}
    for i, a in enumerate(infos):
        for j, b in enumerate(infos):
            out = ck.call("less", less, a, b, where=f" ({pods[i].name}, {pods[j].name})")
            if not isinstance(out, bool):
                raise ck.fail("allowed-codes", f"less() returned {out!r}, not a bool")
            table[i, j] = out
    ck.trace.append(("less", tuple(sorted(table.items()))))
    n = len(infos)
    for i in range(n):
        if table[i, i]:
            raise ck.fail(
                "allowed-codes", f"less(a, a) is True for {pods[i].name}: not a strict order"
            )
        for j in range(n):
            if table[i, j] and table[j, i]:
                raise ck.fail(
                    "allowed-codes",
                    f"less() says both {pods[i].name} < {pods[j].name} and the reverse",
                )
            for k in range(n):
                if table[i, j] and table[j, k] and not table[i, k]:
                    raise ck.fail(
                        "allowed-codes",
                        f"less() is not transitive over {pods[i].name}, {pods[j].name}, {pods[k].name}",
                    )
    if "sort-key" not in ck.skip:
        _check_sort_key(ck, pods, infos, table)


def _check_sort_key(
    ck: _Checker,
    pods: Sequence[Pod],
    infos: Sequence[fw.QueuedPodInfo],
    table: Mapping[tuple[int, int], bool],
) -> None:
    """A plugin whose class defines ``sort_key`` (the framework takes only a method of the
    class): ``less(a, b)`` exactly when ``sort_key(a) < sort_key(b)``."""
    plugin = ck.run.plugin
    if _owner(type(plugin), "sort_key") is None or not callable(plugin.sort_key):
        return
    sort_key = plugin.sort_key
    keys = [
        ck.call("sort_key", sort_key, info, where=f" ({pods[i].name})")
        for i, info in enumerate(infos)
    ]
    if any(k is _RAISED for k in keys):
        return
    ck.trace.append(("sort_key", tuple(repr(k) for k in keys)))
    for i, a in enumerate(keys):
        for j, b in enumerate(keys):
            try:
                before = bool(a < b)  # type: ignore[operator]
            except Exception as exc:
                raise ck.fail(
                    "sort-key", f"sort_key values {a!r} and {b!r} do not compare: {exc}"
                ) from exc
            if before != table[i, j]:
                raise ck.fail(
                    "sort-key",
                    f"less({pods[i].name}, {pods[j].name}) is {table[i, j]}, but their sort "
                    f"keys {a!r} and {b!r} say {before}",
                )


def _check_hints(ck: _Checker) -> None:
    run = ck.run
    if not run.has(fw.EnqueueExtensions) or "enqueue-extensions" in ck.skip:
        return
    case = ck.case
    node = case.cluster.nodes[0] if case.cluster.nodes else None
    bound = case.cluster.pods[0] if case.cluster.pods else case.other.with_node_name("node-0")
    for item in run.plugin.events_to_register():
        hint = item.queueing_hint_fn
        if hint is None:
            continue
        for old, new in _event_objects(item.event, node, bound, case):
            where = f" for {item.event.label()} ({_kind(old)} -> {_kind(new)})"
            first = ck.call("queueing hint", hint, case.pod, old, new, where=where)
            second = ck.call("queueing hint", hint, case.pod, old, new, where=where)
            if first is _RAISED:
                continue
            if not isinstance(first, fw.QueueingHint):
                raise ck.fail(
                    "enqueue-extensions",
                    f"queueing hint{where} returned {first!r}, not a QueueingHint",
                )
            if first != second and "deterministic" not in ck.skip:
                raise ck.fail(
                    "deterministic", f"queueing hint{where} answered {first} then {second}"
                )
            ck.trace.append(("hint", where, int(first)))


def _kind(obj: object) -> str:
    return "none" if obj is None else type(obj).__name__


def _event_objects(
    event: fw.ClusterEvent, node: Node | None, bound: Pod, case: _Case
) -> list[tuple[object, object]]:
    resource = event.resource
    action = event.action_type
    pairs: list[tuple[object, object]] = []
    objects: list[object] = []
    if resource in (fw.EventResource.NODE, fw.EventResource.WILDCARD) and node is not None:
        changed = attrs.evolve(
            node,
            metadata=attrs.evolve(
                node.metadata, labels={**node.metadata.labels, _EVENT_LABEL: "true"}
            ),
            spec=attrs.evolve(node.spec, taints=node.spec.taints[1:]),
        )
        objects.append((node, changed))
    if resource in (
        fw.EventResource.POD,
        fw.EventResource.ASSIGNED_POD,
        fw.EventResource.WILDCARD,
    ):
        objects.append((bound, _changed_pod(bound)))
    if resource in (
        fw.EventResource.POD,
        fw.EventResource.UNSCHEDULABLE_POD,
        fw.EventResource.WILDCARD,
    ):
        objects.append((case.other, _changed_pod(case.other)))
        objects.append((case.pod, _changed_pod(case.pod)))
    for pair in objects:
        assert isinstance(pair, tuple)
        old, new = pair
        if action & fw.ActionType.ADD:
            pairs.append((None, new))
        if action & fw.ActionType.DELETE:
            pairs.append((old, None))
        if action & fw.ActionType.UPDATE:
            pairs.append((old, new))
    return pairs


def _changed_pod(pod: Pod) -> Pod:
    return attrs.evolve(
        pod,
        metadata=attrs.evolve(pod.metadata, labels={**pod.metadata.labels, _EVENT_LABEL: "true"}),
        spec=attrs.evolve(
            pod.spec,
            tolerations=(*pod.spec.tolerations, Toleration(key=_EVENT_LABEL, operator="Exists")),
            scheduling_gates=(),
        ),
    )


# --------------------------------------------------------------------------------------------
# One example, and the checks that need several runs
# --------------------------------------------------------------------------------------------

_Companions = Sequence[tuple[str, PluginFactory, object]]


def _example(target: _Target, companions: _Companions, case: _Case, skip: frozenset[str]) -> None:
    extra = (case.pod, case.other)
    watch = (case.pod, case.other)
    first = _Checker(
        _Run(target, companions, case.cluster, extra, case.seed, case.rejections), case, skip, watch
    )
    _enqueue(first, extra)
    _check_queue_sort(first)
    _cycle(first, case.pod, reserve=True, finish=True, label="pod")
    _check_hints(first)
    if "batch-forms" not in skip:
        check_batch_forms(
            first.run.fwk,
            first.run.plugin,
            case.pod,
            lambda detail: _fail(target.name, "batch-forms", detail, _describe(case)),
        )
    if "deterministic" not in skip:
        again = _Checker(
            _Run(target, companions, case.cluster, extra, case.seed, case.rejections),
            case,
            skip | {"no-mutation"},
            watch,
        )
        _enqueue(again, extra)
        _check_queue_sort(again)
        _cycle(again, case.pod, reserve=True, finish=True, label="pod")
        _check_hints(again)
        _compare_traces(first, first.trace, again.trace, "the same inputs, run again")
    if (
        "prefilter-extensions" not in skip
        and first.run.has(fw.PreFilterPlugin)
        and first.run.has(fw.PreFilterExtensions)
    ):
        _check_prefilter_extensions(target, case, skip)
    if (
        first.run.has(fw.ReservePlugin)
        and not {
            "reserve-symmetry",
            "unreserve-idempotent",
        }
        <= skip
    ):
        _check_reserve(target, companions, case, skip)
    if "hint-soundness" not in skip and first.run.has(fw.EnqueueExtensions):
        _check_hint_soundness(target, companions, case)


def _compare_traces(
    ck: _Checker,
    expected: Sequence[tuple[object, ...]],
    got: Sequence[tuple[object, ...]],
    what: str,
    check: str = "deterministic",
) -> None:
    for i, (a, b) in enumerate(zip(expected, got, strict=False)):
        if a != b:
            raise ck.fail(check, f"{what}: answer {i} differs: {_show(a)} vs {_show(b)}")
    if len(expected) != len(got):
        longer, label = (expected, "first") if len(expected) > len(got) else (got, "second")
        step = longer[min(len(expected), len(got))]
        raise ck.fail(check, f"{what}: only the {label} run went on to {_show(step)}")


def _show(step: tuple[object, ...]) -> str:
    point, where, *rest = step
    return f"{point}{where} -> {', '.join(repr(r) for r in rest)}"


def _filter_verdicts(
    ck: _Checker, state: CycleState, pod: Pod, infos: Sequence[NodeInfo], label: str
) -> dict[str, tuple[object, ...]]:
    out: dict[str, tuple[object, ...]] = {}
    plugin = ck.run.plugin
    if not ck.run.has(fw.FilterPlugin):
        return {ni.name: ("ok",) for ni in infos}
    for ni in infos:
        where = f" on {ni.name} [{label}]"
        status = ck.call("filter", plugin.filter, state, pod, ni, where=where)
        ck.status("filter", status, where)
        out[ni.name] = _outcome(status)
    return out


def _pre_filter(
    ck: _Checker, state: CycleState, pod: Pod, label: str
) -> tuple[str, set[str] | None]:
    """``("ok" | "skip" | "rejected", allowed node names)``."""
    out = ck.call(
        "pre_filter", ck.run.plugin.pre_filter, state, pod, ck.run.snapshot.list(), where=label
    )
    if isinstance(out, fw.PreFilterResult):
        return "ok", None if out.node_names is None else set(out.node_names)
    status = ck.status("pre_filter", out, label)
    if status is None:
        return "ok", None
    if status.is_skip():
        state.skip_filter_plugins.add(ck.run.name)
        return "skip", None
    return "rejected", None


def _check_prefilter_extensions(target: _Target, case: _Case, skip: frozenset[str]) -> None:
    cluster = case.cluster
    if not cluster.nodes:
        return
    pod = case.pod
    variants: list[tuple[str, Pod, str, Cluster]] = []
    if cluster.pods:
        victim = cluster.pods[case.removed % len(cluster.pods)]
        rest = tuple(p for p in cluster.pods if p.uid != victim.uid)
        variants.append(
            ("remove_pod", victim, victim.spec.node_name, attrs.evolve(cluster, pods=rest))
        )
    target_node = cluster.nodes[case.added_node % len(cluster.nodes)].metadata.name
    added = attrs.evolve(case.added.with_node_name(target_node), status=PodStatus(phase="Running"))
    variants.append(
        ("add_pod", added, target_node, attrs.evolve(cluster, pods=(*cluster.pods, added)))
    )
    for op, subject, node_name, recomputed in variants:
        label = f" [{op} {subject.key} on {node_name}]"
        ck = _enqueue(
            _Checker(_Run(target, (), cluster, (pod,), case.seed), case, skip, (pod,)), (pod,)
        )
        state = CycleState()
        outcome, allowed = _pre_filter(ck, state, pod, label)
        if outcome != "ok":
            continue  # the framework calls the extensions only after a successful PreFilter
        what_if = state.clone()
        info = ck.run.snapshot.get(node_name)
        changed = info.clone()
        if op == "remove_pod":
            pod_info = next(pi for pi in info.pods if pi.pod.uid == subject.uid)
            changed.remove_pod(subject)
        else:
            pod_info = PodInfo(subject)
            changed.add_pod(pod_info)
        ext = getattr(ck.run.plugin, op)
        ck.status(op, ck.call(op, ext, what_if, pod, pod_info, changed, where=label), label)
        infos = [changed if ni.name == node_name else ni for ni in ck.run.snapshot.list()]
        incremental = _filter_verdicts(ck, what_if, pod, infos, f"after {op}")

        fresh = _enqueue(
            _Checker(_Run(target, (), recomputed, (pod,), case.seed), case, skip, (pod,)), (pod,)
        )
        state2 = CycleState()
        outcome2, allowed2 = _pre_filter(fresh, state2, pod, " [recomputed]")
        if outcome2 == "rejected":
            continue
        recomputed_verdicts: dict[str, tuple[object, ...]]
        if outcome2 == "skip":
            recomputed_verdicts = {ni.name: ("ok",) for ni in fresh.run.snapshot.list()}
        else:
            recomputed_verdicts = _filter_verdicts(
                fresh, state2, pod, fresh.run.snapshot.list(), "recomputed"
            )
        for name, got in incremental.items():
            if allowed is not None and name not in allowed:
                continue
            if allowed2 is not None and name not in allowed2:
                continue
            want = recomputed_verdicts.get(name)
            if want != got:
                raise ck.fail(
                    "prefilter-extensions",
                    f"after {op}({subject.key}) on {node_name}, Filter on {name} answers "
                    f"{got!r}; recomputing PreFilter with the pod "
                    f"{'gone' if op == 'remove_pod' else 'there'} answers {want!r}",
                )


def _check_reserve(
    target: _Target, companions: _Companions, case: _Case, skip: frozenset[str]
) -> None:
    """Compare another pod's cycle after the pod was prepared (PreEnqueue..Score) and
    reserved/unreserved, with the same after the pod was only prepared."""
    extra = (case.pod, case.other)
    quiet = skip | {"no-mutation"}

    def prepared() -> tuple[_Checker, CycleState, Pod, str] | None:
        ck = _Checker(
            _Run(target, companions, case.cluster, extra, case.seed, case.rejections),
            case,
            quiet,
            (),
        )
        _enqueue(ck, extra)
        result = _cycle(ck, case.pod, reserve=False, finish=False, label="pod")
        if result.node is None:
            return None
        return ck, result.state, case.pod.with_node_name(result.node), result.node

    def probe(ck: _Checker) -> list[tuple[object, ...]]:
        start = len(ck.trace)
        _cycle(ck, case.other, reserve=True, finish=True, label="other")
        return ck.trace[start:]

    setup = prepared()
    if setup is None:
        return
    base = probe(setup[0])
    where = f" on {setup[3]} [pod]"
    scenarios: list[tuple[str, str, tuple[str, ...]]] = []
    if "reserve-symmetry" not in skip:
        scenarios.append(("reserve-symmetry", "reserve then unreserve", ("reserve", "unreserve")))
        scenarios.append(("reserve-symmetry", "unreserve without reserve", ("unreserve",)))
    if "unreserve-idempotent" not in skip:
        scenarios.append(
            (
                "unreserve-idempotent",
                "reserve then unreserve twice",
                ("reserve", "unreserve", "unreserve"),
            )
        )
    for check, what, calls in scenarios:
        setup = prepared()
        assert setup is not None
        ck, state, assumed, node = setup
        for method in calls:
            ck.call(method, getattr(ck.run.plugin, method), state, assumed, node, where=where)
        _compare_traces(ck, base, probe(ck), f"after {what} of the pod, another pod's cycle", check)


# --------------------------------------------------------------------------------------------
# The entry point
# --------------------------------------------------------------------------------------------


def _companion(spec: str | PluginFactory, registry: Registry) -> tuple[str, PluginFactory, object]:
    if isinstance(spec, str):
        factory = registry.load(spec)
        name = spec
    else:
        factory = spec
        name = str(getattr(spec, "name", getattr(spec, "__qualname__", spec)))
    return name, factory, _default_args(name, factory, None)


def check_plugin(
    name_or_class: str | PluginFactory,
    *,
    args: object = None,
    max_examples: int = 50,
    companions: Sequence[str | PluginFactory] = (),
    invalid_args: Sequence[Mapping[str, object]] = (),
    pods: st.SearchStrategy[Pod] | None = None,
    clusters: st.SearchStrategy[Cluster] | None = None,
    skip: Iterable[str] = (),
    registry: Registry | None = None,
    settings: Settings | None = None,
    vocabulary: Vocabulary | None = None,
    learn: bool = True,
) -> None:
    """Check that a plugin keeps the framework's contract; raise if it does not.

    Static checks come first: the entry-point name equals the plugin's ``name``; it
    implements at least one extension point and defines every method of each Protocol it
    subclasses; a plugin that can reject pods (PreEnqueue, PreFilter, Filter, Reserve,
    Permit) implements EnqueueExtensions with valid events; ``args_type`` is an attrs class
    whose camelCase defaults decode and round-trip, and that rejects an unknown field or a
    wrongly typed value with the field's path.

    Then, for ``max_examples`` generated clusters and pods, the plugin is driven as the
    framework would: PreEnqueue, QueueSort, PreFilter, Filter on each node, PostFilter,
    PreScore, Score and NormalizeScore over the feasible nodes, Reserve, Permit (a Wait is
    let run out), PreBind, Bind and PostBind on the best node, and each queueing hint on
    matching events. Each answer must use only the codes its point allows and nothing may
    raise; scores must lie in 0..100 after normalisation; the pod, the nodes and the
    snapshot's NodeInfos must be left as they were; a second run on the same inputs must give
    the same answers; ``add_pod``/``remove_pod`` on a cloned state must give the Filter
    verdicts of recomputing PreFilter with the pod added or removed; after reserve then
    unreserve, unreserve alone, or unreserve twice, another pod's cycle must go as on a fresh
    plugin; and when a queueing hint answers QueueSkip for an event, the plugin must still
    reject the pod on the cluster the event leaves (hint soundness).

    Args:
        name_or_class: the plugin's entry-point name (loaded as a profile would), or its class
            (whose ``name`` is then compared with any installed entry point for it).
        args: the args to build it with: an args object, or a camelCase mapping decoded with
            its ``args_type``; its defaults when ``None``.
        max_examples: how many generated examples to run.
        companions: other plugins (names or classes, default args) built into the same
            framework, e.g. the Filter plugins a PostFilter plugin's dry runs go through;
            their PreFilter runs before the plugin's.
        invalid_args: raw args mappings that must be rejected, each with a field path under
            ``args`` (for the checks of ``validate()``).
        pods: the strategy for the pods to schedule (:func:`default_pods` by default); pass
            one that draws what the plugin looks at (labels, annotations...).
        clusters: the strategy for the clusters (:func:`default_clusters` over ``pods``).
        skip: names of :data:`CHECKS` not to run (say why in a comment).
        registry: where plugins are loaded from (installed entry points by default).
        settings: hypothesis settings to start from (the loaded profile by default);
            ``max_examples`` and ``deadline=None`` are applied on top.
        vocabulary: the labels, annotations, taint keys, extended resources and objects the
            plugin reads; generated pods, nodes and clusters get them (on top of ``pods`` and
            ``clusters`` when given), so the paths they drive are checked.
        learn: also learn a vocabulary from the plugin's module source
            (:func:`learn_vocabulary`: literal label keys and resource names it looks up).

    Raises:
        ConformanceError: the first check that failed, with a minimal example (one line per
            object).
        ValueError: ``skip`` names an unknown check.

    Requires the hypothesis package to be installed.
    """
    skipped = frozenset(skip)
    unknown = skipped - set(CHECKS)
    if unknown:
        raise ValueError(f"unknown checks {sorted(unknown)}; known: {', '.join(CHECKS)}")
    target = _load(name_or_class, args, registry, skipped)
    _check_static(target, skipped)
    if invalid_args and "args" not in skipped:
        _check_invalid_args(target, invalid_args)
    comps = [_companion(c, target.registry) for c in companions]
    vocab = vocabulary if vocabulary is not None else Vocabulary()
    if learn:
        vocab = learn_vocabulary(target.cls).merged(vocab)
    pod_strategy = vocab.pods(pods if pods is not None else default_pods())
    cluster_strategy = (
        clusters if clusters is not None else default_clusters(pods=pods, vocabulary=vocab)
    )
    cases = _cases(vocab.clusters(cluster_strategy), pod_strategy)
    run_settings = Settings(
        settings if settings is not None else Settings(),
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )

    @run_settings
    @given(case=cases)
    def conforms(case: _Case) -> None:
        _example(target, comps, case, skipped)

    # Keep each plugin's saved failing examples apart in the hypothesis database.
    inner = conforms.hypothesis.inner_test  # type: ignore[attr-defined]
    inner._hypothesis_internal_add_digest = f"schedframe-conformance:{target.name}".encode()
    try:
        conforms()
    except ConformanceError as exc:
        # One finding, in a few lines: not hypothesis's notes with the whole drawn case.
        raise ConformanceError(exc.plugin, exc.check, exc.detail, exc.example) from None


# --------------------------------------------------------------------------------------------
# Hint soundness
# --------------------------------------------------------------------------------------------


def _rejected_nodes(
    target: _Target, companions: _Companions, cluster: Cluster, pod: Pod, seed: int
) -> tuple[frozenset[str], frozenset[str]] | None:
    """``(every node, the nodes the plugin rejects pod on)`` in a fresh world, or ``None`` when
    something raised (other checks report that). PreEnqueue and PreFilter rejections reject
    every node; a PreFilterResult rejects the nodes it leaves out, as the framework counts it."""
    run = _Run(target, companions, cluster, (pod,), seed)
    plugin = run.plugin
    names = frozenset(ni.name for ni in run.snapshot.list())
    try:
        if run.has(fw.PreEnqueuePlugin):
            status = plugin.pre_enqueue(pod)
            if isinstance(status, Status) and status.is_rejected():
                return names, names
        if pod.spec.scheduling_gates:
            return names, frozenset()
        nodes = run.snapshot.list()
        state = CycleState()
        for comp in run.companions:
            if isinstance(comp, fw.PreFilterPlugin):
                comp.pre_filter(state, pod, nodes)
        allowed: frozenset[str] | None = None
        if run.has(fw.PreFilterPlugin):
            out = plugin.pre_filter(state, pod, nodes)
            if isinstance(out, fw.PreFilterResult):
                if out.node_names is not None:
                    allowed = frozenset(out.node_names)
            elif isinstance(out, Status) and out.is_skip():
                return names, frozenset()
            elif isinstance(out, Status) and not out.is_success():
                return names, names
        rejected = set() if allowed is None else set(names - allowed)
        if run.has(fw.FilterPlugin):
            for ni in nodes:
                if ni.name in rejected:
                    continue
                status = plugin.filter(state, pod, ni)
                if isinstance(status, Status) and not status.is_success():
                    rejected.add(ni.name)
        return names, frozenset(rejected)
    except Exception:
        return None


def _renamed_node(node: Node, name: str) -> Node:
    labels = dict(node.metadata.labels)
    if _LABEL_HOSTNAME in labels:
        labels[_LABEL_HOSTNAME] = name
    return attrs.evolve(
        node, metadata=attrs.evolve(node.metadata, name=name, uid=name, labels=labels)
    )


def _soundness_events(
    event: fw.ClusterEvent, case: _Case
) -> list[tuple[str, object, object, Cluster, Pod]]:
    """``(what, old, new, cluster after, pod after)`` for each change the event stands for."""
    cluster = case.cluster
    resource = event.resource
    action = event.action_type
    out: list[tuple[str, object, object, Cluster, Pod]] = []
    pod = case.pod
    if resource in (fw.EventResource.NODE, fw.EventResource.WILDCARD) and cluster.nodes:
        node = cluster.nodes[0]
        changed = attrs.evolve(
            node,
            metadata=attrs.evolve(
                node.metadata, labels={**node.metadata.labels, _EVENT_LABEL: "true"}
            ),
            spec=attrs.evolve(node.spec, taints=node.spec.taints[1:]),
        )
        if action & fw.ActionType.UPDATE:
            nodes = (changed, *cluster.nodes[1:])
            out.append(("node updated", node, changed, attrs.evolve(cluster, nodes=nodes), pod))
        if action & fw.ActionType.ADD:
            added = _renamed_node(changed, f"{node.metadata.name}-added")
            after = attrs.evolve(cluster, nodes=(*cluster.nodes, added))
            out.append(("node added", None, added, after, pod))
        if action & fw.ActionType.DELETE:
            name = node.metadata.name
            after = attrs.evolve(
                cluster,
                nodes=cluster.nodes[1:],
                pods=tuple(p for p in cluster.pods if p.spec.node_name != name),
            )
            out.append(("node deleted", node, None, after, pod))
    if (
        resource in (fw.EventResource.POD, fw.EventResource.ASSIGNED_POD, fw.EventResource.WILDCARD)
        and cluster.pods
    ):
        bound = cluster.pods[0]
        changed_pod = _changed_pod(bound)
        if action & fw.ActionType.UPDATE:
            pods = (changed_pod, *cluster.pods[1:])
            out.append(("pod updated", bound, changed_pod, attrs.evolve(cluster, pods=pods), pod))
        if action & fw.ActionType.ADD:
            added_pod = _named(changed_pod, "added-by-event").with_node_name(bound.spec.node_name)
            after = attrs.evolve(cluster, pods=(*cluster.pods, added_pod))
            out.append(("pod added", None, added_pod, after, pod))
        if action & fw.ActionType.DELETE:
            after = attrs.evolve(cluster, pods=cluster.pods[1:])
            out.append(("pod deleted", bound, None, after, pod))
    if (
        resource
        in (fw.EventResource.POD, fw.EventResource.UNSCHEDULABLE_POD, fw.EventResource.WILDCARD)
        and action & fw.ActionType.UPDATE
    ):
        new_pod = _changed_pod(pod)
        out.append(("the pod itself updated", pod, new_pod, cluster, new_pod))
    return out


def _check_hint_soundness(target: _Target, companions: _Companions, case: _Case) -> None:
    """A QueueSkip must be right: after the event, the plugin still rejects the pod on every
    node it rejected before that is still there, and on every node the event added.

    Upstream trusts a QueueSkip to leave the pod in the unschedulable pool; a hint that skips
    an event which does make the pod schedulable strands it until the next flush (5 minutes).
    """
    before = _rejected_nodes(target, companions, case.cluster, case.pod, case.seed)
    if before is None or not before[1]:
        return  # the plugin did not reject the pod: its hints are never asked
    names_before, rejected_before = before
    plugin = _Run(target, companions, case.cluster, (case.pod,), case.seed).plugin
    for item in plugin.events_to_register():
        hint = item.queueing_hint_fn
        if hint is None:
            continue
        for what, old, new, cluster_after, pod_after in _soundness_events(item.event, case):
            try:
                answer = hint(case.pod, old, new)
            except Exception:
                continue  # a raising hint means Queue, which is always sound
            if answer is not fw.QueueingHint.QUEUE_SKIP:
                continue
            after = _rejected_nodes(target, companions, cluster_after, pod_after, case.seed)
            if after is None:
                continue
            names_after, rejected_after = after
            must = (rejected_before & names_after) | (names_after - names_before)
            missed = sorted(must - rejected_after)
            if missed:
                raise _fail(
                    target.name,
                    "hint-soundness",
                    f"queueing hint for {item.event.label()} answered QueueSkip when {what}, "
                    f"but the plugin no longer rejects the pod on {', '.join(missed)} "
                    "(a QueueSkip must mean the event cannot make the pod schedulable)",
                    _describe(case),
                )
