"""One Framework per profile: builds the profile's plugins and runs each extension point.

Upstream: ``pkg/scheduler/framework/runtime/framework.go`` (``frameworkImpl``). Semantics are
carried over point by point; the docstring of each ``run_*`` method says which rule it keeps.
The Framework is also the :class:`~schedframe.framework.Handle` its plugins receive.

The batch engine (filtering and scoring over the snapshot's columns) lives in
:mod:`schedframe.runtime._batch` and the stand-alone helpers (cluster view, event recorder,
nominator and no-backend Binder of a Framework used on its own) in
:mod:`schedframe.runtime._standalone`. This module stays above 1,000 lines on purpose: it
keeps every extension point's runner (``run_*``), one method per upstream ``Run*Plugins``
function with its own rules, next to the profile building they depend on, as upstream's
``framework.go`` does; splitting the runners across modules would separate rules that are
read and changed together.
"""

from __future__ import annotations

import abc
import functools
import logging
import random
import time
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

import attrs

from schedframe import framework as fw
from schedframe.errors import (
    INVALID,
    NOT_FOUND,
    ConfigError,
    FieldIssue,
    PluginError,
)
from schedframe.features import FeatureGates
from schedframe.framework import Code, CycleState, NodeInfo, PodInfo, Status
from schedframe.framework import batch as fb
from schedframe.framework.batch import declares, fast_paths_from_env
from schedframe.runtime._batch import BatchEngine
from schedframe.runtime._guard import (
    SHUTDOWN,
    bad_result,
    check_permit_timeout,
    check_scores,
    describe,
    not_instance,
    not_status,
    status_or_none,
)
from schedframe.runtime._metrics import (
    PluginEvaluations,
    PluginMetricsRecorder,
    counted_filter,
    counted_prepared,
    extension_point,
    timed,
)
from schedframe.runtime._object_store import KindLister
from schedframe.runtime._standalone import (
    ClusterView,
    RecordingEventRecorder,
    _NoBackend,
    _RealClock,
    _SimpleNominator,
)
from schedframe.runtime._waiting_pods import ThreadTimers, Timers, WaitingPod, WaitingPods

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from schedframe.cache import Snapshot
    from schedframe.config import PluginSet, Profile
    from schedframe.extender import HTTPExtender
    from schedframe.objects import (
        Namespace,
        Pod,
        PodDisruptionBudget,
    )
    from schedframe.runtime._batch import BatchVerdicts
    from schedframe.runtime._registry import Registry

    VerdictArray = npt.NDArray[np.int8]
    IntArray = npt.NDArray[np.int64]
    RowArray = npt.NDArray[np.intp]

__all__ = [
    "EXTENSION_POINTS",
    "ClusterView",
    "Framework",
    "NodeScores",
    "PluginRuntimeError",
    "PluginScores",
]

log = logging.getLogger("schedframe.runtime")

#: (config attribute, Protocol, upstream type name, camelCase config key), in upstream order.
EXTENSION_POINTS: Final[tuple[tuple[str, type, str, str], ...]] = (
    ("pre_enqueue", fw.PreEnqueuePlugin, "PreEnqueuePlugin", "preEnqueue"),
    ("queue_sort", fw.QueueSortPlugin, "QueueSortPlugin", "queueSort"),
    ("pre_filter", fw.PreFilterPlugin, "PreFilterPlugin", "preFilter"),
    ("filter", fw.FilterPlugin, "FilterPlugin", "filter"),
    ("post_filter", fw.PostFilterPlugin, "PostFilterPlugin", "postFilter"),
    ("pre_score", fw.PreScorePlugin, "PreScorePlugin", "preScore"),
    ("score", fw.ScorePlugin, "ScorePlugin", "score"),
    ("reserve", fw.ReservePlugin, "ReservePlugin", "reserve"),
    ("permit", fw.PermitPlugin, "PermitPlugin", "permit"),
    ("pre_bind", fw.PreBindPlugin, "PreBindPlugin", "preBind"),
    ("bind", fw.BindPlugin, "BindPlugin", "bind"),
    ("post_bind", fw.PostBindPlugin, "PostBindPlugin", "postBind"),
)

# Plugins of these kinds may reject a pod, so their EnqueueExtensions matter (upstream
# shouldHaveEnqueueExtensions).
_REJECTING_KINDS: Final = (
    fw.PreEnqueuePlugin,
    fw.PreFilterPlugin,
    fw.FilterPlugin,
    fw.ReservePlugin,
    fw.PermitPlugin,
)
# What a plugin without EnqueueExtensions is taken to care about: everything.
_ALL_EVENTS: Final = (
    fw.ClusterEventWithHint(fw.ClusterEvent(fw.EventResource.WILDCARD, fw.ActionType.ALL)),
)


_UNKNOWN: Final = object()
_PROTOCOL_MEMBERS: dict[type, object] = {}


def _protocol_members(proto: type) -> tuple[str, ...] | None:
    """The members a runtime-checkable Protocol's structural check looks at (cached)."""
    members = _PROTOCOL_MEMBERS.get(proto, _UNKNOWN)
    if members is _UNKNOWN:
        getter = getattr(typing, "_get_protocol_attrs", None)
        try:
            members = tuple(sorted(getter(proto))) if getter is not None else None
        except Exception:  # a typing without it: always ask isinstance
            members = None
        _PROTOCOL_MEMBERS[proto] = members
    return cast("tuple[str, ...] | None", members)


def _implements(plugin: object, kind: type | tuple[type, ...]) -> bool:
    """``isinstance(plugin, kind)``, without the cost of the Protocol machinery where the
    answer is plain.

    On Python 3.11 ``isinstance`` against a runtime-checkable Protocol recomputes the
    Protocol's members on every call (tens of microseconds), and building a profile asks a
    few hundred times. A nominal subclass is always an instance; an object lacking one of the
    Protocol's members can only be an instance through ABC registration, which
    ``ABCMeta.__instancecheck__`` answers. Everything else takes the full structural check.
    """
    kinds = kind if isinstance(kind, tuple) else (kind,)
    mro = type(plugin).__mro__
    for k in kinds:
        if k in mro:
            return True
        members = _protocol_members(k)
        if members is not None and not all(hasattr(plugin, m) for m in members):
            if abc.ABCMeta.__instancecheck__(cast("abc.ABCMeta", k), plugin):
                return True
            continue
        if isinstance(plugin, k):
            return True
    return False


def _optional_method(plugin: object, proto: type, name: str, on: bool = True) -> Any:
    """A plugin's fast form ``name`` when its class declares the fast-path Protocol ``proto``
    (see :mod:`schedframe.framework.batch`; answered once per class) and fast paths are
    ``on``, else ``None``."""
    return getattr(plugin, name) if on and declares(plugin, proto) else None


def _failure_text(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class PluginRuntimeError(RuntimeError):
    """A plugin failed; the message says where (``running "X" filter plugin: ...``) and
    ``__cause__`` holds the plugin's own exception, if it raised one."""


def _wrapped(message: str, cause: BaseException | None) -> PluginRuntimeError:
    err = PluginRuntimeError(message)
    err.__cause__ = cause
    return err


def _as_error(prefix: str, status: Status, plugin: str) -> Status:
    """Upstream ``AsStatus(fmt.Errorf(prefix+": %w", status.AsError()))``."""
    err = status.as_error()
    # Upstream would print "%!w(<nil>)" for Wait/Skip; say what the plugin returned instead.
    text = str(err) if err is not None else (status.message() or str(status.code))
    message = f"{prefix}: {text}"
    return Status(Code.ERROR, message, error=_wrapped(message, err), plugin=plugin)


def _raised(prefix: str, exc: BaseException, plugin: str, *, typed: bool = True) -> Status:
    """An Error status for a plugin that raised. A :class:`~schedframe.framework.StatusError`
    speaks with its status's message; any other exception with its text, prefixed by its type
    unless ``typed`` is false (Score, whose upstream message is the plugin's own)."""
    log.debug("plugin %s raised", plugin, exc_info=exc)
    if isinstance(exc, fw.StatusError):
        text = exc.status.message() or str(exc.status.code)
    elif typed:
        text = _failure_text(exc)
    else:
        text = str(exc) or type(exc).__name__
    message = f"{prefix}: {text}"
    return Status(Code.ERROR, message, error=_wrapped(message, exc), plugin=plugin)


# --------------------------------------------------------------------------------------------
# Score results
# --------------------------------------------------------------------------------------------


@attrs.define
class PluginScores:
    """One Score plugin's scores for the feasible nodes, in node order."""

    plugin: str
    weight: int
    #: Scores as the plugin returned them (kept only when asked for, e.g. by ``explain``).
    raw: list[int] | None
    #: Scores after NormalizeScore (equal to raw when the plugin does not normalise).
    normalized: list[int]


@attrs.define
class NodeScores:
    """Scores of every feasible node: per plugin, and weighted totals."""

    names: list[str]
    totals: list[int]
    by_plugin: list[PluginScores]


# --------------------------------------------------------------------------------------------
# The Framework
# --------------------------------------------------------------------------------------------


class Framework:
    """A profile's plugins, wired per extension point, and the Handle they share.

    Build one from configuration with :meth:`from_profile`; a Framework with no plugins (the
    plain constructor) is a complete :class:`~schedframe.framework.Handle`, handy for testing a
    plugin on its own::

        handle = Framework(snapshot=Snapshot.from_objects(nodes, pods))
        plugin = NodeResourcesFit(NodeResourcesFitArgs(), handle)
    """

    def __init__(
        self,
        *,
        profile_name: str = "default-scheduler",
        snapshot: Snapshot | None = None,
        namespaces: Iterable[Namespace] = (),
        pdbs: Iterable[PodDisruptionBudget] = (),
        cluster: ClusterView | None = None,
        clock: fw.Clock | None = None,
        timers: Timers | None = None,
        rng: random.Random | None = None,
        binder: fw.Binder | None = None,
        event_recorder: fw.EventRecorder | None = None,
        nominator: fw.Nominator | None = None,
        activator: Callable[[Iterable[Pod]], None] | None = None,
        waiting_pods: WaitingPods | None = None,
        parallelism: int = 16,
        percentage_of_nodes_to_score: int | None = None,
        async_runner: Callable[[Callable[[], None]], None] | None = None,
        pod_lister: Callable[[str, str], Pod | None] | None = None,
        features: FeatureGates | None = None,
        fast_paths: bool | None = None,
    ) -> None:
        from schedframe.cache import Snapshot

        self._profile_name = profile_name
        #: The scheduler's HTTP extenders (set by the Scheduler; upstream ``Handle.Extenders``).
        self.extenders: tuple[HTTPExtender, ...] = ()
        self._snapshot = snapshot if snapshot is not None else Snapshot()
        self._cluster = cluster if cluster is not None else ClusterView(namespaces, pdbs)
        self._clock: fw.Clock = clock if clock is not None else _RealClock()
        self._timers: Timers = timers if timers is not None else ThreadTimers()
        self._rng = rng if rng is not None else random.Random(0)
        self._binder: fw.Binder = binder if binder is not None else _NoBackend()
        self._event_recorder: fw.EventRecorder = (
            event_recorder if event_recorder is not None else RecordingEventRecorder(binder)
        )
        self._nominator: fw.Nominator = nominator if nominator is not None else _SimpleNominator()
        self._activator = activator
        self._async_runner = async_runner
        self._pod_lister = pod_lister
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPods()
        self._parallelism = parallelism
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self._features = features if features is not None else FeatureGates()
        #: Whether plugins' fast forms (:mod:`schedframe.framework.batch`) are used; off, every
        #: plugin runs through its plain methods only (for bisecting a suspected fast-path
        #: bug). ``None`` reads ``SCHEDFRAME_FAST_PATHS`` (``0``/``false``/``off``: off).
        self._fast_paths = fast_paths_from_env() if fast_paths is None else fast_paths

        self.plugins: dict[str, fw.Plugin] = {}
        self.pre_enqueue_plugins: list[fw.PreEnqueuePlugin] = []
        self.queue_sort_plugins: list[fw.QueueSortPlugin] = []
        self.pre_filter_plugins: list[fw.PreFilterPlugin] = []
        self.filter_plugins: list[fw.FilterPlugin] = []
        self.post_filter_plugins: list[fw.PostFilterPlugin] = []
        self.pre_score_plugins: list[fw.PreScorePlugin] = []
        self.score_plugins: list[fw.ScorePlugin] = []
        self.reserve_plugins: list[fw.ReservePlugin] = []
        self.permit_plugins: list[fw.PermitPlugin] = []
        self.pre_bind_plugins: list[fw.PreBindPlugin] = []
        self.bind_plugins: list[fw.BindPlugin] = []
        self.post_bind_plugins: list[fw.PostBindPlugin] = []
        self.score_weights: dict[str, int] = {}
        #: ``(plugin name, registrations)`` for every plugin that can reject a pod.
        self.enqueue_extensions: list[tuple[str, tuple[fw.ClusterEventWithHint, ...]]] = []
        self.plugin_args: dict[str, object] = {}
        #: ``(plugin, fast form) -> how many times it raised`` (see :meth:`fast_path_failed`).
        self.fast_path_failures: dict[tuple[str, str], int] = {}
        self._metrics_recorder: PluginMetricsRecorder | None = None
        self._evaluations: PluginEvaluations | None = None
        #: The batch engine, filtering and scoring over the snapshot's columns.
        self.batch = BatchEngine(self)
        self._compile()

    # -- building ----------------------------------------------------------------------------

    @classmethod
    def from_profile(
        cls,
        profile: Profile,
        registry: Registry,
        *,
        index: int = 0,
        source: str | None = None,
        **handle_options: Any,
    ) -> Framework:
        """Build the Framework of one profile of a ``KubeSchedulerConfiguration``.

        Mirrors upstream ``NewFramework``: instantiate every plugin the profile names once
        (with its decoded args), fill each extension point from its own ``enabled`` list, then
        expand ``multiPoint`` (explicit per-point entries first, then multiPoint ones, then the
        rest), check there is exactly one QueueSort and at least one Bind plugin, and settle
        score weights (unset or 0 means 1; the sum must not overflow).

        Raises:
            ConfigError: naming the field path (``profiles[0].plugins.filter.enabled[1].name``)
                of an unknown plugin, bad args, a plugin that does not implement the point it
                is enabled at, a duplicate, or a missing QueueSort/Bind plugin.
            PluginError: a plugin's factory failed.
        """
        from schedframe.config import decode_args

        fwk = cls(
            profile_name=profile.scheduler_name,
            percentage_of_nodes_to_score=profile.percentage_of_nodes_to_score,
            **handle_options,
        )
        base = f"profiles[{index}]"
        issues: list[FieldIssue] = []

        # Every plugin named anywhere, with the first place it was named.
        needed: dict[str, str] = {}
        for attr, _, _, key in (*EXTENSION_POINTS, ("multi_point", object, "", "multiPoint")):
            for k, ref in enumerate(getattr(profile.plugins, attr).enabled):
                needed.setdefault(ref.name, f"{base}.plugins.{key}.enabled[{k}].name")

        plugin_config: dict[str, tuple[int, Mapping[str, object] | None]] = {}
        for j, pc in enumerate(profile.plugin_config):
            plugin_config.setdefault(pc.name, (j, pc.args))

        for name, where in needed.items():
            try:
                factory = registry.load(name)
            except PluginError as exc:
                issues.append(FieldIssue(path=where, kind=NOT_FOUND, value=name, detail=str(exc)))
                continue
            args_type = getattr(factory, "args_type", None)
            j, raw = plugin_config.get(name, (-1, None))
            args_path = f"{base}.pluginConfig[{j}].args"
            args: object = None
            if args_type is not None:
                try:
                    args = decode_args(args_type, raw, path=args_path, source=source)
                except ConfigError as exc:
                    issues.extend(exc.issues)
                    continue
            elif raw:
                issues.append(
                    FieldIssue(
                        path=args_path,
                        kind=INVALID,
                        detail=f"plugin {name} takes no arguments",
                    )
                )
                continue
            try:
                plugin = factory(args, fwk)
            except Exception as exc:
                raise PluginError(f'initializing plugin "{name}": {_failure_text(exc)}') from exc
            if getattr(plugin, "name", None) != name:
                raise PluginError(
                    f'plugin registered as "{name}" reports the name '
                    f'"{getattr(plugin, "name", None)}"; they must be equal'
                )
            fwk.plugins[name] = plugin
            fwk.plugin_args[name] = args
        if issues:
            raise ConfigError(issues, source=source)

        for attr, proto, type_name, key in EXTENSION_POINTS:
            issues += fwk._fill_point(profile, attr, proto, type_name, f"{base}.plugins.{key}")
        if issues:
            raise ConfigError(issues, source=source)

        if len(fwk.queue_sort_plugins) != 1:
            raise ConfigError(
                [
                    FieldIssue(
                        path=f"{base}.plugins.queueSort",
                        kind=INVALID,
                        detail="only one queue sort plugin required for profile with scheduler "
                        f'name "{profile.scheduler_name}", but got {len(fwk.queue_sort_plugins)}',
                    )
                ],
                source=source,
            )
        if not fwk.bind_plugins:
            raise ConfigError(
                [
                    FieldIssue(
                        path=f"{base}.plugins.bind",
                        kind=INVALID,
                        detail="at least one bind plugin is needed for profile with scheduler "
                        f'name "{profile.scheduler_name}"',
                    )
                ],
                source=source,
            )
        fwk._settle_weights(profile, f"{base}.plugins", source)
        for name, plugin in fwk.plugins.items():
            if _implements(plugin, _REJECTING_KINDS):
                if _implements(plugin, fw.EnqueueExtensions):
                    events = tuple(cast("fw.EnqueueExtensions", plugin).events_to_register())
                else:
                    events = _ALL_EVENTS
                fwk.enqueue_extensions.append((name, events))
        fwk._compile()
        return fwk

    def _fill_point(
        self, profile: Profile, attr: str, proto: type, type_name: str, path: str
    ) -> list[FieldIssue]:
        """Fill one extension point (upstream updatePluginList + expandMultiPointPlugins)."""
        issues: list[FieldIssue] = []
        pset: PluginSet = getattr(profile.plugins, attr)
        enabled: list[str] = []
        for k, ref in enumerate(pset.enabled):
            plugin = self.plugins.get(ref.name)
            if plugin is None:
                continue  # reported while loading
            if not _implements(plugin, proto):
                issues.append(
                    FieldIssue(
                        path=f"{path}.enabled[{k}].name",
                        kind=INVALID,
                        value=ref.name,
                        detail=f'plugin "{ref.name}" does not extend {type_name} plugin',
                    )
                )
            elif ref.name in enabled:
                issues.append(
                    FieldIssue(
                        path=f"{path}.enabled[{k}].name",
                        kind=INVALID,
                        value=ref.name,
                        detail=f'plugin "{ref.name}" already registered as "{type_name}"',
                    )
                )
            else:
                enabled.append(ref.name)

        order = list(enabled)
        disabled = {ref.name for ref in pset.disabled}
        multi = profile.plugins.multi_point
        if multi.enabled and "*" not in disabled:
            overrides: list[str] = []
            from_multi: list[str] = []
            for k, ref in enumerate(multi.enabled):
                plugin = self.plugins.get(ref.name)
                if plugin is None or not _implements(plugin, proto) or ref.name in disabled:
                    continue
                if ref.name in enabled:
                    overrides.append(ref.name)
                    continue
                if ref.name in from_multi:
                    issues.append(
                        FieldIssue(
                            path=f"{path.rsplit('.', 1)[0]}.multiPoint.enabled[{k}].name",
                            kind=INVALID,
                            value=ref.name,
                            detail=f'plugin "{ref.name}" already registered as "{type_name}"',
                        )
                    )
                    continue
                from_multi.append(ref.name)
            # Explicit per-point settings of multiPoint plugins first, in their own order;
            # then multiPoint's; then the other per-point plugins.
            order = (
                [n for n in enabled if n in overrides]
                + from_multi
                + [n for n in enabled if n not in overrides]
            )
        getattr(self, f"{attr}_plugins").extend(self.plugins[n] for n in order)
        return issues

    def _settle_weights(self, profile: Profile, path: str, source: str | None) -> None:
        total = 0
        for ref in (*profile.plugins.score.enabled, *profile.plugins.multi_point.enabled):
            plugin = self.plugins.get(ref.name)
            if plugin is None or not _implements(plugin, fw.ScorePlugin):
                continue
            if ref.name in self.score_weights:
                continue  # the per-point weight wins over multiPoint's
            weight = ref.weight or 1
            self.score_weights[ref.name] = weight
            if weight * fw.MAX_NODE_SCORE > fw.MAX_TOTAL_SCORE - total:
                raise ConfigError(
                    [
                        FieldIssue(
                            path=path,
                            kind=INVALID,
                            detail="total score of Score plugins could overflow",
                        )
                    ],
                    source=source,
                )
            total += weight * fw.MAX_NODE_SCORE
        for plugin in self.score_plugins:
            self.score_weights.setdefault(plugin.name, 1)

    def add_plugin(self, plugin: fw.Plugin, *, weight: int = 1) -> None:
        """Enable an already-built plugin at every point it implements (tests, embedding)."""
        self.plugins[plugin.name] = plugin
        for attr, proto, _, _ in EXTENSION_POINTS:
            if _implements(plugin, proto):
                getattr(self, f"{attr}_plugins").append(plugin)
        if _implements(plugin, fw.ScorePlugin):
            self.score_weights[plugin.name] = weight
        if _implements(plugin, _REJECTING_KINDS):
            events = (
                tuple(cast("fw.EnqueueExtensions", plugin).events_to_register())
                if _implements(plugin, fw.EnqueueExtensions)
                else _ALL_EVENTS
            )
            self.enqueue_extensions.append((plugin.name, events))
        self._compile()

    @property
    def metrics_recorder(self) -> PluginMetricsRecorder | None:
        """Where per-plugin and extension-point metrics go (set by
        :meth:`SchedulerMetrics.attach <schedframe.metrics.SchedulerMetrics.attach>`);
        ``None`` (the default): nothing is recorded or counted."""
        return self._metrics_recorder

    @metrics_recorder.setter
    def metrics_recorder(self, recorder: PluginMetricsRecorder | None) -> None:
        self._metrics_recorder = recorder
        if recorder is not None and self._evaluations is None:
            self._evaluations = PluginEvaluations()
        self._compile()

    def plugin_evaluations(self) -> dict[tuple[str, str], int]:
        """``(plugin, extension point) -> evaluations`` since a recorder was attached
        (upstream ``scheduler_plugin_evaluation_total``); empty without one."""
        return {} if self._evaluations is None else self._evaluations.snapshot()

    def _compile(self) -> None:
        # Bound methods resolved once, so the per-node loops do no attribute lookups.
        self._filter_fns: tuple[
            tuple[str, Callable[[CycleState, Pod, NodeInfo], Status | None]], ...
        ]
        self._filter_fns = tuple((p.name, p.filter) for p in self.filter_plugins)
        rec, evals = self._metrics_recorder, self._evaluations
        if rec is not None and evals is not None:
            for point, plugins in (
                ("PreFilter", self.pre_filter_plugins),
                ("Filter", self.filter_plugins),
                ("PreScore", self.pre_score_plugins),
                ("Score", self.score_plugins),
            ):
                evals.rebuild(point, [p.name for p in plugins])
            # Filter calls counted (and timed in sampled cycles) on the per-node path.
            counts = evals.counts["Filter"]
            self._filter_fns = tuple(
                (name, counted_filter(rec, counts, k, name, fn))
                for k, (name, fn) in enumerate(self._filter_fns)
            )
        self._pre_filter_ext = tuple(
            (p.name, cast("fw.PreFilterExtensions", p))
            for p in self.pre_filter_plugins
            if _implements(p, fw.PreFilterExtensions)
        )
        self._score_fns = tuple(
            (
                p.name,
                p.score,
                cast("fw.ScoreExtensions", p).normalize_score
                if _implements(p, fw.ScoreExtensions)
                else None,
                self.score_weights.get(p.name, 1),
                _optional_method(p, fb.ManyScore, "score_many", self._fast_paths),
            )
            for p in self.score_plugins
        )
        # Optional per-pod fast paths of in-tree plugins (see ``filter_function``).
        self._prepare_filters = tuple(
            (
                p.name,
                p.filter,
                _optional_method(p, fb.PreparedFilter, "prepare_filter", self._fast_paths),
            )
            for p in self.filter_plugins
        )
        self.batch.compile()
        self._compute_batchable_plugins()

    def _compute_batchable_plugins(self) -> None:
        """Upstream ``computeBatchablePlugins``: signatures are on only when the
        OpportunisticBatching gate is and every PreFilter, Filter, PreScore and Score plugin
        signs (each plugin once, in that order)."""
        signers: dict[str, fw.SignPlugin] = {}
        unsigned: list[str] = []
        for plugin in (
            *self.pre_filter_plugins,
            *self.filter_plugins,
            *self.pre_score_plugins,
            *self.score_plugins,
        ):
            if plugin.name in signers or plugin.name in unsigned:
                continue
            if _implements(plugin, fw.SignPlugin):
                signers[plugin.name] = cast("fw.SignPlugin", plugin)
            else:
                unsigned.append(plugin.name)
        self._signers: tuple[fw.SignPlugin, ...] = tuple(signers.values())
        self.unsigned_plugins: tuple[str, ...] = tuple(unsigned)
        self.signatures_enabled = self._features.enabled("OpportunisticBatching") and not unsigned

    def sign_pod(self, pod: Pod) -> bytes | None:
        """The pod's signature, or ``None`` when it cannot be compared with others.

        Upstream ``frameworkImpl.SignPod``: the scheduler name plus every signing plugin's
        fragments (a key given twice is kept once), as JSON with sorted keys. ``None`` when
        signatures are off for the profile (:attr:`signatures_enabled`), a plugin refuses to
        sign (an Error is logged), a plugin raises, or a value is not JSON.
        """
        import json

        if not self.signatures_enabled:
            return None
        signature: dict[str, object] = {fw.SCHEDULER_NAME_SIGNER_NAME: pod.spec.scheduler_name}
        for plugin in self._signers:
            try:
                fragments, status = plugin.sign_pod(pod)
            except Exception:
                log.exception("SignPod failed for plugin %s", plugin.name)
                return None
            if status is not None and not status.is_success():
                if status.code is Code.ERROR:
                    log.error("SignPod failed for plugin %s: %s", plugin.name, status.message())
                return None
            for fragment in fragments:
                signature[fragment.key] = fragment.value
        try:
            return json.dumps(signature, sort_keys=True, separators=(",", ":")).encode()
        except (TypeError, ValueError) as exc:
            log.error("SignPod failed to marshal signature object: %s", exc)
            return None

    def close(self) -> None:
        """Close every plugin that has a ``close()`` method; failures are logged, not raised."""
        for name, plugin in self.plugins.items():
            closer = getattr(plugin, "close", None)
            if callable(closer):
                try:
                    closer()
                except Exception:
                    log.exception("plugin %s failed to close", name)

    # -- introspection -----------------------------------------------------------------------

    def list_plugins(self) -> dict[str, list[tuple[str, int | None]]]:
        """Enabled plugins per extension point (config attribute names), score weights included."""
        out: dict[str, list[tuple[str, int | None]]] = {}
        for attr, _, _, _ in EXTENSION_POINTS:
            plugins = getattr(self, f"{attr}_plugins")
            if plugins:
                out[attr] = [
                    (p.name, self.score_weights.get(p.name) if attr == "score" else None)
                    for p in plugins
                ]
        return out

    def has_filter_plugins(self) -> bool:
        """True when at least one Filter plugin is enabled."""
        return bool(self.filter_plugins)

    def cycle_filter_plugins(self, state: CycleState) -> list[fw.FilterPlugin]:
        """The Filter plugins that run for the pod of ``state``: the profile's, in order,
        without those its PreFilter skipped."""
        skip = state.skip_filter_plugins
        return [p for p in self.filter_plugins if p.name not in skip]

    def cycle_has_pre_filter_extensions(self, state: CycleState) -> bool:
        """Whether any AddPod/RemovePod extension runs for the pod of ``state`` (a PreFilter
        plugin that skipped has its extensions left out)."""
        skip = state.skip_filter_plugins
        return any(name not in skip for name, _ in self._pre_filter_ext)

    def has_post_filter_plugins(self) -> bool:
        """True when at least one PostFilter plugin is enabled."""
        return bool(self.post_filter_plugins)

    def has_score_plugins(self) -> bool:
        """True when at least one Score plugin is enabled."""
        return bool(self.score_plugins)

    def queue_sort_less(self) -> Callable[[fw.QueuedPodInfo, fw.QueuedPodInfo], bool]:
        """The QueueSort plugin's ``less``."""
        if not self.queue_sort_plugins:
            raise PluginError(f"profile {self._profile_name} has no QueueSort plugin")
        return self.queue_sort_plugins[0].less

    def queue_sort_key(self) -> Callable[[fw.QueuedPodInfo], Any] | None:
        """The QueueSort plugin's optional ``sort_key`` (see
        :class:`~schedframe.framework.QueueSortPlugin`), or ``None`` when it has none (the
        queue then orders pods with ``less``)."""
        if not self.queue_sort_plugins:
            return None
        key: Callable[[fw.QueuedPodInfo], Any] | None = _optional_method(
            self.queue_sort_plugins[0], fb.SortKey, "sort_key", self._fast_paths
        )
        return key

    def set_snapshot(self, snapshot: Snapshot) -> None:
        """Point the Handle's snapshot lister at ``snapshot`` (the scheduler does, each cycle)."""
        self._snapshot = snapshot

    # -- the Handle --------------------------------------------------------------------------

    @property
    def profile_name(self) -> str:
        """The profile's ``schedulerName``."""
        return self._profile_name

    @property
    def clock(self) -> fw.Clock:
        """The scheduler's clock."""
        return self._clock

    @property
    def rng(self) -> random.Random:
        """The scheduler's random source."""
        return self._rng

    @property
    def features(self) -> FeatureGates:
        """The feature gates this profile runs with (upstream ``feature.Features``)."""
        return self._features

    @property
    def parallelism(self) -> int:
        """The configured parallelism."""
        return self._parallelism

    def snapshot_shared_lister(self) -> Snapshot:
        """The current cycle's snapshot."""
        return self._snapshot

    def namespace(self, name: str) -> Namespace | None:
        """A namespace by name."""
        return self._cluster.namespace(name)

    def namespaces(self) -> Iterable[Namespace]:
        """Every namespace."""
        return self._cluster.namespaces()

    def pod_disruption_budgets(self) -> Iterable[PodDisruptionBudget]:
        """Every PodDisruptionBudget."""
        return self._cluster.pod_disruption_budgets()

    def workload_lister(self) -> fw.WorkloadLister:
        """Services, RCs, ReplicaSets and StatefulSets (default spreading's selectors)."""
        return self._cluster.workloads

    def storage_lister(self) -> fw.StorageLister:
        """PersistentVolumes, claims, StorageClasses and CSI objects (the volume plugins)."""
        return self._cluster.storage

    def shared_dra_manager(self) -> fw.SharedDRAManager:
        """The DRA objects and in-flight allocations (DynamicResources)."""
        return self._cluster.dra

    def lister(self, kind: type | str) -> KindLister:
        """The objects of ``kind`` (a class or a kind name) the backend's watch reported
        (upstream informer listers)."""
        name = kind if isinstance(kind, str) else kind.__name__
        self._cluster.on_lister_requested(name)
        return self._cluster.objects.lister(name)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """A pod parked by Permit."""
        return self.waiting_pods.get(uid)

    def iterate_over_waiting_pods(self, callback: Callable[[fw.WaitingPod], None]) -> None:
        """Call ``callback`` for every waiting pod."""
        self.waiting_pods.iterate(callback)

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject a waiting pod (message ``removed``, as upstream); True if there was one."""
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    @property
    def binder(self) -> fw.Binder:
        """The backend's write side."""
        return self._binder

    @property
    def event_recorder(self) -> fw.EventRecorder:
        """The event recorder."""
        return self._event_recorder

    @property
    def nominator(self) -> fw.Nominator:
        """Nominated pods by node."""
        return self._nominator

    def activate(self, pods: Iterable[Pod]) -> None:
        """Ask the queue to activate ``pods`` (no-op without a scheduler)."""
        if self._activator is not None:
            self._activator(pods)

    def run_async(self, task: Callable[[], None]) -> None:
        """Run ``task`` off the scheduling cycle (upstream starts a goroutine): on the
        scheduler's workers, or, in deterministic mode, once the current cycle has ended.
        Without a scheduler it runs at once."""
        if self._async_runner is not None:
            self._async_runner(task)
        else:
            task()

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        """The pod ``namespace/name`` as the scheduler's informer last saw it (upstream's pod
        lister), or ``None``; always ``None`` without a scheduler."""
        if self._pod_lister is None:
            return None
        return self._pod_lister(namespace, name)

    # -- running the extension points --------------------------------------------------------

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status | None:
        """PreEnqueue: the first plugin that does not admit the pod gates it.

        The returned status names the gating plugin (``status.plugin``); an exception or a
        non-rejection code becomes ``ERROR``, which also keeps the pod out.
        """
        for plugin in self.pre_enqueue_plugins:
            name = plugin.name
            try:
                status = plugin.pre_enqueue(pod)
            except SHUTDOWN:
                raise
            except BaseException as exc:
                return _raised(f'running PreEnqueue plugin "{name}"', exc, name)
            if not_status(status):
                return status_or_none(f'running PreEnqueue plugin "{name}"', name, status)
            if status is not None and not status.is_success():
                if not status.is_rejected():
                    return _as_error(f'running PreEnqueue plugin "{name}"', status, name)
                return status.with_plugin(name)
        return None

    @extension_point("PreFilter", lambda out: out[1])
    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod
    ) -> tuple[fw.PreFilterResult | None, Status | None, set[str]]:
        """PreFilter: returns the merged result, the status, and plugins that narrowed nodes.

        Upstream ``RunPreFilterPlugins``: Skip records the plugin in
        ``state.skip_filter_plugins``; UnschedulableAndUnresolvable stops at once;
        Unschedulable is remembered while the remaining plugins still run; any other failure is
        an error; results are intersected and an empty intersection is
        UnschedulableAndUnresolvable.
        """
        started = time.perf_counter()
        nodes = self._snapshot.list()
        skip: set[str] = set()
        state.skip_filter_plugins = skip
        result: fw.PreFilterResult | None = None
        with_nodes: set[str] = set()
        returned: Status | None = None
        rec = self._metrics_recorder
        evals = self._evaluations.counts["PreFilter"] if self._evaluations is not None else None
        try:
            for k, plugin in enumerate(self.pre_filter_plugins):
                name = plugin.name
                try:
                    if rec is not None and state.record_plugin_metrics:
                        out = timed(rec, name, "PreFilter", plugin.pre_filter, state, pod, nodes)
                    else:
                        out = plugin.pre_filter(state, pod, nodes)
                    if evals is not None and not (isinstance(out, Status) and out.is_skip()):
                        evals[k] += 1
                except SHUTDOWN:
                    raise
                except BaseException as exc:
                    return None, _raised(f'running PreFilter plugin "{name}"', exc, name), set()
                if not_instance(out, (Status, fw.PreFilterResult)):
                    detail = f"returned {describe(out)}, expected a PreFilterResult, Status or None"
                    prefix = f'running PreFilter plugin "{name}"'
                    return None, bad_result(prefix, name, detail), set()
                if isinstance(out, Status):
                    if out.is_skip():
                        skip.add(name)
                        continue
                    if not out.is_success():
                        if out.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                            return None, out.with_plugin(name), set()
                        if out.code is Code.UNSCHEDULABLE:
                            returned = out.with_plugin(name)
                            continue
                        return (
                            None,
                            _as_error(f'running PreFilter plugin "{name}"', out, name),
                            set(),
                        )
                    out = None
                if out is not None and not out.all_nodes():
                    with_nodes.add(name)
                    result = out.merge(result) if result is not None else out
                    if result.node_names is not None and not result.node_names:
                        names = sorted(with_nodes)
                        if len(names) == 1:
                            msg = f"node(s) didn't satisfy plugin {names[0]}"
                        else:
                            msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                        return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg), with_nodes
            return result, returned, with_nodes
        finally:
            state.durations["PreFilter"] = time.perf_counter() - started

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Every PreFilter plugin's ``add_pod`` (plugins that skipped are left out)."""
        skip = state.skip_filter_plugins
        rec = self._metrics_recorder if state.record_plugin_metrics else None
        for name, plugin in self._pre_filter_ext:
            if name in skip:
                continue
            prefix = f'running AddPod on PreFilter plugin "{name}"'
            try:
                args = (state, pod_to_schedule, pod_info_to_add, node_info)
                if rec is not None:
                    status = timed(rec, name, "PreFilterExtensionAddPod", plugin.add_pod, *args)
                else:
                    status = plugin.add_pod(*args)
            except SHUTDOWN:
                raise
            except BaseException as exc:
                return _raised(prefix, exc, name)
            if not_status(status):
                return status_or_none(prefix, name, status)
            if status is not None and not status.is_success():
                return _as_error(prefix, status, name)
        return None

    def run_pre_filter_extension_remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        """Every PreFilter plugin's ``remove_pod`` (plugins that skipped are left out)."""
        skip = state.skip_filter_plugins
        rec = self._metrics_recorder if state.record_plugin_metrics else None
        for name, plugin in self._pre_filter_ext:
            if name in skip:
                continue
            prefix = f'running RemovePod on PreFilter plugin "{name}"'
            try:
                args = (state, pod_to_schedule, pod_info_to_remove, node_info)
                if rec is not None:
                    point = "PreFilterExtensionRemovePod"
                    status = timed(rec, name, point, plugin.remove_pod, *args)
                else:
                    status = plugin.remove_pod(*args)
            except SHUTDOWN:
                raise
            except BaseException as exc:
                return _raised(prefix, exc, name)
            if not_status(status):
                return status_or_none(prefix, name, status)
            if status is not None and not status.is_success():
                return _as_error(prefix, status, name)
        return None

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter on one node: plugins in order, the first non-success decides.

        Upstream ``RunFilterPlugins``: plugins in ``state.skip_filter_plugins`` are passed over;
        a status that is not a rejection becomes an error; the status names its plugin.
        """
        skip = state.skip_filter_plugins
        for name, filter_fn in self._filter_fns:
            if skip and name in skip:
                continue
            try:
                status = filter_fn(state, pod, node_info)
            except SHUTDOWN:
                raise
            except BaseException as exc:
                return _raised(f'running "{name}" filter plugin', exc, name)
            if status is not None and type(status) is not Status and not_status(status):
                return status_or_none(f'running "{name}" filter plugin', name, status)
            if status is not None and status.code is not Code.SUCCESS:
                if not status.is_rejected():
                    return _as_error(f'running "{name}" filter plugin', status, name)
                return status if status.plugin == name else status.with_plugin(name)
        return None

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Filter with nominated pods of equal or higher priority counted, then without them.

        Upstream ``RunFilterPluginsWithNominatedPods``: when the node has such nominated pods,
        the filters run once with them added (on cloned state and node) and, if that passes,
        once more without; both must pass.
        """
        nominated = (
            self._nominator.nominated_pods_for_node(node_info.name) if node_info.node else []
        )
        if not nominated:
            return self.run_filter_plugins(state, pod, node_info)
        priority = pod.priority
        state_out: CycleState | None = None
        info_out: NodeInfo | None = None
        for pi in nominated:
            if pi.pod.priority >= priority and pi.pod.uid != pod.uid:
                if state_out is None or info_out is None:
                    state_out, info_out = state.clone(), node_info.clone()
                info_out.add_pod(pi)
                status = self.run_pre_filter_extension_add_pod(state_out, pod, pi, info_out)
                if status is not None and not status.is_success():
                    return status
        if state_out is None or info_out is None:
            return self.run_filter_plugins(state, pod, node_info)
        status = self.run_filter_plugins(state_out, pod, info_out)
        if status is not None and not status.is_success():
            return status
        return self.run_filter_plugins(state, pod, node_info)

    def filter_function(self, state: CycleState, pod: Pod) -> Callable[[NodeInfo], Status | None]:
        """:meth:`run_filter_plugins_with_nominated_pods` for one pod, as a function of the node.

        The scheduling cycle calls it once per pod after PreFilter and then once per node: the
        plugins PreFilter skipped are dropped once, not per node, and a plugin may hand back a
        function with its per-pod work done (an optional ``prepare_filter(state, pod)``
        returning ``node_info -> Status | None``, equal to its ``filter`` for this cycle).
        Nodes with nominated pods take the general path. The verdicts are those of
        :meth:`run_filter_plugins_with_nominated_pods`, node for node.
        """
        skip = state.skip_filter_plugins
        active: list[tuple[str, Callable[[NodeInfo], Status | None]]] = []
        rec = self._metrics_recorder
        for k, (name, filter_fn, prepare) in enumerate(self._prepare_filters):
            if skip and name in skip:
                continue
            fn: Callable[[NodeInfo], Status | None] | None = None
            if prepare is not None:
                try:
                    fn = prepare(state, pod)
                except Exception as exc:  # the plain filter then reports it, node by node
                    self.fast_path_failed(name, "prepare_filter", exc)
                    fn = None
            if fn is None:
                fn = functools.partial(filter_fn, state, pod)
            if rec is not None and self._evaluations is not None:
                counts = self._evaluations.counts["Filter"]
                fn = counted_prepared(rec, counts, k, name, fn, state.record_plugin_metrics)
            active.append((name, fn))
        filters = tuple(active)
        # Read once per pod, not under the queue's lock once per node.
        nominated_nodes = self._nominator.nominated_node_names()
        general = self.run_filter_plugins_with_nominated_pods
        success = Code.SUCCESS

        def run(node_info: NodeInfo) -> Status | None:
            node = node_info.node
            if node and nominated_nodes and node.metadata.name in nominated_nodes:
                return general(state, pod, node_info)
            for name, fn in filters:
                try:
                    status = fn(node_info)
                except SHUTDOWN:
                    raise
                except BaseException as exc:
                    return _raised(f'running "{name}" filter plugin', exc, name)
                if status is not None and type(status) is not Status and not_status(status):
                    return status_or_none(f'running "{name}" filter plugin', name, status)
                if status is not None and status.code is not success:
                    if not status.is_rejected():
                        return _as_error(f'running "{name}" filter plugin', status, name)
                    return status if status.plugin == name else status.with_plugin(name)
            return None

        return run

    # -- the batch engine (runtime/_batch.py) -------------------------------------------------

    @property
    def fast_paths(self) -> bool:
        """Whether plugins' fast forms are used (see the ``fast_paths`` argument)."""
        return self._fast_paths

    def fast_path_failed(self, plugin: str, method: str, exc: BaseException) -> None:
        """Count a fast form of ``plugin`` (``method``, see :mod:`schedframe.framework.batch`)
        that raised; the runtime then runs the plugin's plain form. Logged at WARNING the first
        time for each plugin and method, at DEBUG after that."""
        key = (plugin, method)
        count = self.fast_path_failures.get(key, 0) + 1
        self.fast_path_failures[key] = count
        log.log(
            logging.WARNING if count == 1 else logging.DEBUG,
            'fast form %s of plugin "%s" raised (%s); its plain form is used instead '
            "(this is failure %d; set SCHEDFRAME_FAST_PATHS=0 to bisect)",
            method,
            plugin,
            _failure_text(exc),
            count,
            exc_info=exc if count == 1 else None,
        )

    def filter_batch(
        self, state: CycleState, pod: Pod, columns: fw.NodeColumns
    ) -> VerdictArray | None:
        """:meth:`BatchEngine.filter_batch <schedframe.runtime._batch.BatchEngine.filter_batch>`."""
        return self.batch.filter_batch(state, pod, columns)

    def filter_batch_with_deciders(
        self, state: CycleState, pod: Pod, columns: fw.NodeColumns
    ) -> BatchVerdicts | None:
        """Batch filter verdicts with the deciding plugin of each row (the batch engine's
        ``filter_batch_with_deciders``)."""
        return self.batch.filter_batch_with_deciders(state, pod, columns)

    def rejection_statuses(
        self,
        state: CycleState,
        pod: Pod,
        columns: fw.NodeColumns,
        rows: RowArray,
        plugin_index: int,
    ) -> list[Status] | None:
        """The statuses of the rows the filter plugin at ``plugin_index`` rejects (the batch
        engine's ``rejection_statuses``)."""
        return self.batch.rejection_statuses(state, pod, columns, rows, plugin_index)

    def score_batch(
        self, state: CycleState, pod: Pod, columns: fw.NodeColumns, rows: RowArray
    ) -> IntArray | None:
        """The weighted Score totals over ``rows`` of ``columns`` (the batch engine's
        ``score_batch``). Recorded as a run of Score when it gives totals (otherwise the
        per-node :meth:`run_score_plugins` runs, and is recorded)."""
        rec = self._metrics_recorder
        if rec is None:
            return self.batch.score_batch(state, pod, columns, rows)
        started = time.perf_counter()
        totals = self.batch.score_batch(state, pod, columns, rows)
        if totals is not None:
            elapsed = time.perf_counter() - started
            rec.extension_point_duration("Score", "Success", self._profile_name, elapsed)
        return totals

    @extension_point("PostFilter")
    def run_post_filter_plugins(
        self, state: CycleState, pod: Pod, node_to_status: fw.NodeToStatus
    ) -> tuple[fw.PostFilterResult | None, Status]:
        """PostFilter: plugins in order until one succeeds, is unresolvable, or errors.

        Upstream ``RunPostFilterPlugins``: otherwise the reasons of every plugin are gathered
        into one Unschedulable status naming the first rejecting plugin, with the last
        non-noop result.
        """
        started = time.perf_counter()
        try:
            result: fw.PostFilterResult | None = None
            reasons: list[str] = []
            rejector = ""
            rec = self._metrics_recorder if state.record_plugin_metrics else None
            for plugin in self.post_filter_plugins:
                name = plugin.name
                try:
                    if rec is not None:
                        args = (state, pod, node_to_status)
                        r, status = timed(rec, name, "PostFilter", plugin.post_filter, *args)
                    else:
                        r, status = plugin.post_filter(state, pod, node_to_status)
                except SHUTDOWN:
                    raise
                except BaseException as exc:
                    return None, _raised(f'running PostFilter plugin "{name}"', exc, name)
                if not_instance(r, fw.PostFilterResult):
                    detail = f"returned {describe(r)}, expected a PostFilterResult or None"
                    return None, bad_result(f'running PostFilter plugin "{name}"', name, detail)
                if not_status(status):
                    detail = f"returned {describe(status)}, expected a Status or None"
                    return None, bad_result(f'running PostFilter plugin "{name}"', name, detail)
                if status is None or status.is_success():
                    return r, Status(Code.SUCCESS)
                if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return r, status.with_plugin(name)
                if not status.is_rejected():
                    return None, _as_error(f'running PostFilter plugin "{name}"', status, name)
                if (
                    r is not None
                    and r.nominating_info is not None
                    and r.nominating_info.mode is not fw.NominatingMode.NOOP
                ):
                    result = r
                reasons.extend(status.reasons)
                if not rejector:
                    rejector = name
            return result, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector)
        finally:
            state.durations["PostFilter"] = time.perf_counter() - started

    @extension_point("PreScore")
    def run_pre_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """PreScore: Skip records the plugin in ``state.skip_score_plugins``; other failures error."""
        started = time.perf_counter()
        skip: set[str] = set()
        state.skip_score_plugins = skip
        rec = self._metrics_recorder
        evals = self._evaluations.counts["PreScore"] if self._evaluations is not None else None
        try:
            for k, plugin in enumerate(self.pre_score_plugins):
                name = plugin.name
                try:
                    if rec is not None and state.record_plugin_metrics:
                        status = timed(rec, name, "PreScore", plugin.pre_score, state, pod, nodes)
                    else:
                        status = plugin.pre_score(state, pod, nodes)
                    if evals is not None and not (isinstance(status, Status) and status.is_skip()):
                        evals[k] += 1
                except SHUTDOWN:
                    raise
                except BaseException as exc:
                    return _raised(f'running PreScore plugin "{name}"', exc, name)
                if not_status(status):
                    return status_or_none(f'running PreScore plugin "{name}"', name, status)
                if status is None or status.is_success():
                    continue
                if status.is_skip():
                    skip.add(name)
                    continue
                return _as_error(f'running PreScore plugin "{name}"', status, name)
            return None
        finally:
            state.durations["PreScore"] = time.perf_counter() - started

    @extension_point("Score")
    def run_score_plugins(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        *,
        keep_raw: bool = False,
    ) -> tuple[NodeScores | None, Status | None]:
        """Score, NormalizeScore and weights, upstream ``RunScorePlugins``.

        Every normalised score must lie in ``[0, 100]``; the weighted sum over plugins is the
        node's total. ``keep_raw`` keeps each plugin's scores from before normalisation.
        """
        started = time.perf_counter()
        try:
            names = [ni.name for ni in nodes]
            skip = state.skip_score_plugins
            by_plugin: list[PluginScores] = []
            rec = self._metrics_recorder if state.record_plugin_metrics else None
            evals = self._evaluations.counts["Score"] if self._evaluations is not None else None
            for k, (name, score_fn, normalize_fn, weight, score_many) in enumerate(self._score_fns):
                if skip and name in skip:
                    continue
                if evals is not None:
                    evals[k] += len(nodes)  # one Score call per node
                try:
                    scores = None
                    if rec is not None:
                        # Sampled: each node's call timed, as upstream times them.
                        scores = [
                            timed(rec, name, "Score", score_fn, state, pod, ni) for ni in nodes
                        ]
                    elif score_many is not None:
                        try:
                            # The plugin's batch form, equal to the per-node list below.
                            scores = score_many(state, pod, nodes)
                        except Exception as exc:  # the per-node form reports it, node by node
                            self.fast_path_failed(name, "score_many", exc)
                            scores = None
                    if scores is None:
                        scores = [score_fn(state, pod, ni) for ni in nodes]
                except SHUTDOWN:
                    raise
                except BaseException as exc:
                    return None, _raised(
                        f'running Score plugins: plugin "{name}" failed with',
                        exc,
                        name,
                        typed=False,
                    )
                problem = check_scores(scores, len(nodes))
                if problem is not None:
                    prefix = f'running Score plugins: plugin "{name}" failed with'
                    return None, bad_result(prefix, name, problem)
                raw = list(scores) if keep_raw else None
                if normalize_fn is not None:
                    nsl = fw.NodeScoreList(names, scores)
                    try:
                        if rec is not None:
                            point = "ScoreExtensionNormalize"
                            status = timed(rec, name, point, normalize_fn, state, pod, nsl)
                        else:
                            status = normalize_fn(state, pod, nsl)
                    except SHUTDOWN:
                        raise
                    except BaseException as exc:
                        return None, _raised(
                            f'running Normalize on Score plugins: plugin "{name}" failed with',
                            exc,
                            name,
                            typed=False,
                        )
                    prefix = f'running Normalize on Score plugins: plugin "{name}" failed with'
                    if not_status(status):
                        return None, status_or_none(prefix, name, status)
                    if status is not None and not status.is_success():
                        return None, _as_error(prefix, status, name)
                    scores = nsl.scores
                    problem = check_scores(scores, len(nodes))
                    if problem is not None:
                        return None, bad_result(prefix, name, problem)
                by_plugin.append(PluginScores(name, weight, raw, scores))
            totals = [0] * len(nodes)
            for ps in by_plugin:
                w = ps.weight
                normalized = ps.normalized
                try:
                    # Fast path: one range check per plugin, one pass to add.
                    fast = len(normalized) == len(totals) and (
                        not normalized
                        or (
                            max(normalized) <= fw.MAX_NODE_SCORE
                            and min(normalized) >= fw.MIN_NODE_SCORE
                        )
                    )
                    if fast:
                        totals = [t + s * w for t, s in zip(totals, normalized, strict=True)]
                except Exception:
                    fast = False
                if fast:
                    continue
                for i, s in enumerate(normalized):
                    if s > fw.MAX_NODE_SCORE or s < fw.MIN_NODE_SCORE:
                        msg = (
                            "applying score defaultWeights on Score plugins: "
                            f'plugin "{ps.plugin}" returns an invalid score {s}, it should in the '
                            f"range of [{fw.MIN_NODE_SCORE}, {fw.MAX_NODE_SCORE}] after normalizing"
                        )
                        return None, Status(Code.ERROR, msg, plugin=ps.plugin)
                    totals[i] += s * w
            return NodeScores(names, totals, by_plugin), None
        finally:
            state.durations["Score"] = time.perf_counter() - started

    @extension_point("Reserve")
    def run_reserve_plugins_reserve(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        """Reserve, in order; the first failure stops (the caller then runs Unreserve)."""
        started = time.perf_counter()
        rec = self._metrics_recorder if state.record_plugin_metrics else None
        try:
            for plugin in self.reserve_plugins:
                name = plugin.name
                prefix = f'running Reserve plugin "{name}"'
                try:
                    if rec is not None:
                        status = timed(rec, name, "Reserve", plugin.reserve, state, pod, node_name)
                    else:
                        status = plugin.reserve(state, pod, node_name)
                except SHUTDOWN:
                    raise
                except BaseException as exc:
                    return _raised(prefix, exc, name)
                if not_status(status):
                    return status_or_none(prefix, name, status)
                if status is not None and not status.is_success():
                    if status.is_rejected():
                        return status.with_plugin(name)
                    return _as_error(prefix, status, name)
            return None
        finally:
            state.durations["Reserve"] = time.perf_counter() - started

    @extension_point("Unreserve")
    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve every Reserve plugin in *reverse* order; a failing one is logged and passed."""
        shutdown: BaseException | None = None
        rec = self._metrics_recorder if state.record_plugin_metrics else None
        for plugin in reversed(self.reserve_plugins):
            try:
                if rec is not None:
                    timed(rec, plugin.name, "Unreserve", plugin.unreserve, state, pod, node_name)
                else:
                    plugin.unreserve(state, pod, node_name)
            except SHUTDOWN as exc:  # the remaining plugins still release the pod first
                shutdown = shutdown or exc
            except BaseException:
                log.exception("Unreserve of plugin %s failed for pod %s", plugin.name, pod.key)
        if shutdown is not None:
            raise shutdown

    @extension_point("Permit")
    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Permit: a rejection or error stops; any Wait parks the pod as a waiting pod.

        Upstream ``RunPermitPlugins``: each waiting plugin's timeout is capped at 15 minutes;
        the returned status is ``WAIT`` with upstream's message, and the waiting pod is then
        found through :meth:`get_waiting_pod`.
        """
        started = time.perf_counter()
        try:
            timeouts: dict[str, float] = {}
            rec = self._metrics_recorder if state.record_plugin_metrics else None
            for plugin in self.permit_plugins:
                name = plugin.name
                prefix = f'running Permit plugin "{name}"'
                try:
                    if rec is not None:
                        status = timed(rec, name, "Permit", plugin.permit, state, pod, node_name)
                    else:
                        status = plugin.permit(state, pod, node_name)
                except SHUTDOWN:
                    raise
                except BaseException as exc:
                    return _raised(prefix, exc, name)
                if not_status(status):
                    return status_or_none(prefix, name, status)
                if status is None or status.is_success():
                    continue
                if status.is_rejected():
                    return status.with_plugin(name)
                if status.is_wait():
                    timeout, problem = check_permit_timeout(status.timeout)
                    if problem is not None:
                        return bad_result(prefix, name, problem)
                    timeouts[name] = timeout
                    continue
                return _as_error(prefix, status, name)
            if timeouts:
                self.waiting_pods.add(WaitingPod(pod, timeouts, self._timers, node_name))
                return Status(
                    Code.WAIT,
                    f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"',
                )
            return None
        finally:
            state.durations["Permit"] = time.perf_counter() - started

    def when_permitted(self, pod: Pod, callback: Callable[[Status | None], None]) -> None:
        """Call ``callback`` once ``pod`` may proceed to binding (upstream ``WaitOnPermit``).

        Immediately with ``None`` when the pod is not waiting; otherwise when its waiting
        resolves: ``None`` if allowed, the rejection (Unschedulable, naming the plugin) if not.
        """
        wp = self.waiting_pods.get(pod.uid)
        if wp is None:
            callback(None)
            return

        def done(status: Status) -> None:
            self.waiting_pods.remove(pod.uid)
            if status.is_success():
                callback(None)
            elif status.is_rejected():
                callback(status)
            else:
                callback(_as_error("waiting on permit for pod", status, status.plugin))

        wp.on_done(done)

    @extension_point("PreBindPreFlight")
    def run_pre_bind_pre_flights(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        """PreBindPreFlight of every PreBind plugin (upstream ``RunPreBindPreFlights``).

        ``None`` (Success) when some plugin will do work in PreBind; ``SKIP`` when every one
        skips (each is then left out of :meth:`run_pre_bind_plugins`); an ``Error`` for the
        first plugin that fails or answers anything else. A plugin without a
        ``pre_bind_pre_flight`` method counts as Success (it may do work in PreBind).
        """
        returning: Status | None = Status(Code.SKIP)
        skipped: set[str] = set()
        rec = self._metrics_recorder if state.record_plugin_metrics else None
        for plugin in self.pre_bind_plugins:
            name = plugin.name
            pre_flight = getattr(plugin, "pre_bind_pre_flight", None)
            if pre_flight is None:
                returning = None
                continue
            try:
                if rec is not None:
                    status = timed(rec, name, "PreBindPreFlight", pre_flight, state, pod, node_name)
                else:
                    status = pre_flight(state, pod, node_name)
            except Exception as exc:
                return _raised(f'running PreBindPreFlight "{name}"', exc, name)
            if status is None or status.is_success():
                returning = None
            elif status.is_skip():
                skipped.add(name)
            elif status.code is Code.ERROR:
                return _as_error(f'running PreBindPreFlight "{name}"', status, name)
            else:
                message = (
                    f'PreBindPreFlight {name} returned "{status.code!s}", which is unsupported. '
                    "It is supposed to return Success, Skip, or Error status"
                )
                return Status(Code.ERROR, message, plugin=name)
        state.skip_pre_bind_plugins = skipped
        return returning

    def will_wait_on_permit(self, pod: Pod) -> bool:
        """Whether the pod waits on Permit (upstream ``WillWaitOnPermit``)."""
        return self.waiting_pods.get(pod.uid) is not None

    @extension_point("PreBind")
    def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """PreBind, in order; the first failure stops. Plugins whose PreBindPreFlight skipped
        are not run."""
        skipped = state.skip_pre_bind_plugins
        rec = self._metrics_recorder if state.record_plugin_metrics else None
        for plugin in self.pre_bind_plugins:
            name = plugin.name
            if name in skipped:
                continue
            prefix = f'running PreBind plugin "{name}"'
            try:
                if rec is not None:
                    status = timed(rec, name, "PreBind", plugin.pre_bind, state, pod, node_name)
                else:
                    status = plugin.pre_bind(state, pod, node_name)
            except SHUTDOWN:
                raise
            except BaseException as exc:
                return _raised(prefix, exc, name)
            if not_status(status):
                return status_or_none(prefix, name, status)
            if status is not None and not status.is_success():
                if status.is_rejected():
                    return status.with_plugin(name)
                return _as_error(prefix, status, name)
        return None

    @extension_point("Bind")
    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Bind plugins until one does not Skip; ``SKIP`` when there are none or all skip."""
        status: Status | None = Status(Code.SKIP)
        rec = self._metrics_recorder if state.record_plugin_metrics else None
        for plugin in self.bind_plugins:
            name = plugin.name
            prefix = f'running Bind plugin "{name}"'
            try:
                if rec is not None:
                    status = timed(rec, name, "Bind", plugin.bind, state, pod, node_name)
                else:
                    status = plugin.bind(state, pod, node_name)
            except SHUTDOWN:
                raise
            except BaseException as exc:
                return _raised(prefix, exc, name)
            if not_status(status):
                return status_or_none(prefix, name, status)
            if status is not None and status.is_skip():
                continue
            if status is not None and not status.is_success():
                if status.is_rejected():
                    return status.with_plugin(name)
                return _as_error(prefix, status, name)
            return None
        return status

    @extension_point("PostBind")
    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """PostBind: informational; a failing plugin is logged and the rest still run."""
        shutdown: BaseException | None = None
        rec = self._metrics_recorder if state.record_plugin_metrics else None
        for plugin in self.post_bind_plugins:
            try:
                if rec is not None:
                    timed(rec, plugin.name, "PostBind", plugin.post_bind, state, pod, node_name)
                else:
                    plugin.post_bind(state, pod, node_name)
            except SHUTDOWN as exc:
                shutdown = shutdown or exc
            except BaseException:
                log.exception("PostBind of plugin %s failed for pod %s", plugin.name, pod.key)
        if shutdown is not None:
            raise shutdown
