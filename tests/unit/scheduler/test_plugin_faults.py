"""A plugin that returns garbage, raises anything or asks for an absurd wait loses no pod.

Each failure is an ``ERROR`` status naming the plugin (upstream's ``running Reserve plugin
"X": ...`` wording), the pod is unreserved and forgotten, and it is retried after the error
backoff; so a plugin that fails once per pod leaves every pod bound in the end.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any, ClassVar, cast

import pytest

from schedframe import framework as fw
from schedframe.backends import MemoryBackend
from schedframe.cache import Cache
from schedframe.config import load_config
from schedframe.framework import Code, CycleState, NodeInfo, Status
from schedframe.objects import Container, Node, NodeStatus, ObjectMeta, Pod, PodSpec
from schedframe.queue import SchedulingQueue
from schedframe.runtime import Registry
from schedframe.scheduler import Scheduler, VirtualClock


def _node(name: str, cpu: int = 4000) -> Node:
    alloc = {"cpu": cpu, "memory": 16 << 30, "pods": 110}
    return Node(
        metadata=ObjectMeta(name=name),
        status=NodeStatus(capacity=dict(alloc), allocatable=dict(alloc)),
    )


def _pod(name: str, cpu: int = 100) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=PodSpec(containers=(Container(name="c", requests={"cpu": cpu}),)),
    )


def _scheduler(point: str, plugin: type[Any], nodes: int = 4) -> tuple[Scheduler, MemoryBackend]:
    registry = Registry.discover()
    registry.register(plugin.name, plugin, replace=True)
    enabled: dict[str, Any] = {point: {"enabled": [{"name": plugin.name}]}}
    if point == "score":  # the plugin alone, so a direct run needs no PreScore state
        enabled[point]["disabled"] = [{"name": "*"}]
    cfg = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "plugins": enabled}],
        }
    )
    clock = VirtualClock()
    backend = MemoryBackend([_node(f"n{i}") for i in range(nodes)], clock=clock)
    sched = Scheduler.from_config(
        cfg, backend, registry=registry, clock=clock, seed=0, deterministic=True
    )
    return sched, backend


class _OncePerPod:
    """Fails (as ``failure`` says) on each pod's first attempt, then behaves."""

    failure: ClassVar[Any] = "garbage"
    seen: ClassVar[set[str]]

    def __init__(self, args: object, handle: fw.Handle) -> None:
        self._handle = handle

    def _first(self, pod: Pod) -> bool:
        if pod.uid in self.seen:
            return False
        self.seen.add(pod.uid)
        return True

    def _fail(self) -> Any:
        failure = type(self).failure
        if isinstance(failure, BaseException):
            raise failure
        if isinstance(failure, type) and issubclass(failure, BaseException):
            raise failure()
        return failure


def _reserve_plugin(failure: object) -> type[Any]:
    class FlakyReserve(_OncePerPod, fw.ReservePlugin):
        name: ClassVar[str] = "FlakyReserve"
        seen: ClassVar[set[str]] = set()

        def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            if self._first(pod):
                return self._fail()  # type: ignore[no-any-return]
            return None

        def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
            pass

    FlakyReserve.failure = failure
    return FlakyReserve


def _permit_plugin(failure: object) -> type[Any]:
    class FlakyPermit(_OncePerPod, fw.PermitPlugin):
        name: ClassVar[str] = "FlakyPermit"
        seen: ClassVar[set[str]] = set()

        def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            if self._first(pod):
                return self._fail()  # type: ignore[no-any-return]
            return None

    FlakyPermit.failure = failure
    return FlakyPermit


def _cache(sched: Scheduler) -> Cache:
    return cast(Cache, sched.cache)


def _queue(sched: Scheduler) -> SchedulingQueue:
    return cast(SchedulingQueue, sched.queue)


def _pods(backend: MemoryBackend) -> list[Pod]:
    return [p for p in backend.list("Pod") if isinstance(p, Pod)]


def _assert_all_bound(sched: Scheduler, backend: MemoryBackend, count: int) -> None:
    bound = [p for p in _pods(backend) if p.spec.node_name]
    assert len(bound) == count
    assert sched.in_flight() == 0
    assert not _cache(sched).dump().assumed_pods


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param("garbage", id="a string"),
        pytest.param(42, id="an int"),
        pytest.param(Code.SUCCESS, id="a bare Code"),
        pytest.param(ValueError("boom"), id="an exception"),
        pytest.param(asyncio.CancelledError(), id="CancelledError"),
        pytest.param(GeneratorExit(), id="GeneratorExit"),
    ],
)
@pytest.mark.parametrize("point", ["reserve", "permit"])
def test_a_plugin_failing_once_per_pod_loses_no_pod(point: str, failure: object) -> None:
    factory = _reserve_plugin if point == "reserve" else _permit_plugin
    plugin = factory(failure)
    sched, backend = _scheduler(point, plugin)
    for i in range(160):
        backend.create(_pod(f"p{i}"))
    sched.run_until_idle()
    _assert_all_bound(sched, backend, 160)
    failed = [r for r in sched.events if r.reason == "FailedScheduling"]
    assert len(failed) == 160


@pytest.mark.parametrize(
    ("point", "text"),
    [
        (
            "reserve",
            "running Reserve plugin \"FlakyReserve\": returned str ('garbage'), "
            "expected a Status or None",
        ),
        (
            "permit",
            "running Permit plugin \"FlakyPermit\": returned str ('garbage'), "
            "expected a Status or None",
        ),
    ],
)
def test_a_wrong_typed_result_is_an_error_status_naming_the_plugin(point: str, text: str) -> None:
    plugin = (_reserve_plugin if point == "reserve" else _permit_plugin)("garbage")
    sched, backend = _scheduler(point, plugin)
    backend.create(_pod("p"))
    assert sched.schedule_one()
    qpi = _queue(sched).get_queued_pod_info(_pods(backend)[0].uid)
    assert qpi is not None
    # Error backoff, not the unschedulable pool; capacity released at once.
    assert [p.name for p in sched.queue.backoff_pods()] == ["p"]
    assert not _cache(sched).dump().assumed_pods
    messages = [e.note for e in sched.events]
    assert text in messages


def test_a_plugin_that_always_returns_garbage_holds_no_capacity() -> None:
    class Garbage(fw.ReservePlugin):
        name: ClassVar[str] = "Garbage"

        def __init__(self, args: object, handle: fw.Handle) -> None:
            pass

        def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            return "nope"  # type: ignore[return-value]

        def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
            pass

    sched, backend = _scheduler("reserve", Garbage, nodes=1)
    for i in range(20):
        backend.create(_pod(f"p{i}", cpu=1000))
    sched.run_until_idle(stall_timeout=30.0)
    dump = _cache(sched).dump()
    assert not dump.assumed_pods
    assert sched.in_flight() == 0
    pending = {p.name for p in sched.queue.pending_pods()}
    assert pending == {f"p{i}" for i in range(20)}


class _BadScore(fw.ScorePlugin):
    name: ClassVar[str] = "BadScore"
    value: ClassVar[Any] = math.nan

    def __init__(self, args: object, handle: fw.Handle) -> None:
        pass

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return type(self).value  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        (math.nan, "returned the score float (nan), expected an integer"),
        (1.5, "returned the score float (1.5), expected an integer"),
        (True, "returned the score bool (True), expected an integer"),
        ("7", "returned the score str ('7'), expected an integer"),
    ],
)
def test_a_non_integer_score_is_the_plugins_error(value: object, detail: str) -> None:
    _BadScore.value = value
    sched, backend = _scheduler("score", _BadScore, nodes=2)
    fwk = sched.profiles["default-scheduler"]
    nodes = [_cache(sched).get_node_info(n) for n in ("n0", "n1")]
    state = CycleState()
    state.skip_score_plugins = set()
    scores, status = fwk.run_score_plugins(state, _pod("p"), [n for n in nodes if n])
    assert scores is None
    assert status is not None
    assert status.code is Code.ERROR
    assert status.plugin == "BadScore"
    assert status.message() == f'running Score plugins: plugin "BadScore" failed with: {detail}'


@pytest.mark.parametrize("value", [math.nan, 1.5])
def test_a_non_integer_score_sends_the_pod_to_error_backoff(value: float) -> None:
    # Through the scheduler's batch score path too: 1.5 was truncated to 1 there, silently.
    _BadScore.value = value
    sched, backend = _scheduler("score", _BadScore, nodes=2)
    backend.create(_pod("p"))
    assert sched.schedule_one()
    text = (
        'running Score plugins: plugin "BadScore" failed with: '
        f"returned the score float ({value}), expected an integer"
    )
    assert text in [e.note for e in sched.events]
    assert [p.name for p in sched.queue.backoff_pods()] == ["p"]


# -- Permit timeouts -------------------------------------------------------------------------


@pytest.mark.parametrize("timeout", [math.nan, -1.0, math.inf, -math.inf, "10", None, True])
def test_status_wait_refuses_a_timeout_that_is_not_finite_and_non_negative(
    timeout: Any,
) -> None:
    with pytest.raises(ValueError, match="Permit wait timeout must be"):
        Status.wait(timeout)


@pytest.mark.parametrize("timeout", [0, 0.0, 1, 2.5, 10_000.0])
def test_status_wait_keeps_a_good_timeout(timeout: float) -> None:
    assert Status.wait(timeout).timeout == timeout


def _waiting_plugin(timeout: object, *, direct: bool) -> type[Any]:
    class Waits(fw.PermitPlugin):
        name: ClassVar[str] = "Waits"

        def __init__(self, args: object, handle: fw.Handle) -> None:
            pass

        def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            if direct:
                return Status(Code.WAIT, timeout=timeout)  # type: ignore[arg-type]
            return Status.wait(timeout)  # type: ignore[arg-type]

    return Waits


@pytest.mark.parametrize("direct", [True, False], ids=["Status(WAIT, timeout=)", "Status.wait"])
@pytest.mark.parametrize(
    ("timeout", "detail"),
    [
        (math.nan, "nan"),
        (-5.0, "-5.0"),
        (math.inf, "inf"),
        ("soon", "soon"),
    ],
)
def test_a_bad_permit_timeout_is_an_error_for_the_pod(
    timeout: object, detail: str, direct: bool
) -> None:
    sched, backend = _scheduler("permit", _waiting_plugin(timeout, direct=direct))
    backend.create(_pod("p"))
    assert sched.schedule_one()
    assert sched.in_flight() == 0
    assert len(sched.waiting_pods) == 0
    assert not _cache(sched).dump().assumed_pods
    assert [p.name for p in sched.queue.backoff_pods()] == ["p"]
    messages = [e.note for e in sched.events]
    assert any(m.startswith('running Permit plugin "Waits": ') and detail in m for m in messages)
    # The clock is untouched and still runs.
    sched.clock.advance(20.0)  # type: ignore[attr-defined]


def test_a_permit_wait_over_fifteen_minutes_is_capped() -> None:
    sched, backend = _scheduler("permit", _waiting_plugin(10_000.0, direct=False))
    backend.create(_pod("p"))
    assert sched.schedule_one()
    assert len(sched.waiting_pods) == 1
    sched.clock.advance(15 * 60.0)  # type: ignore[attr-defined]
    sched.wait_for_bindings()
    assert len(sched.waiting_pods) == 0
    messages = [e.note for e in sched.events]
    assert any("rejected due to timeout after waiting 15m0s at plugin Waits" in m for m in messages)


# -- shutdown exceptions ---------------------------------------------------------------------


def _raising(point: str, exc: type[BaseException]) -> type[Any]:
    if point == "reserve":
        return _reserve_plugin(exc)
    if point == "permit":
        return _permit_plugin(exc)

    if point == "filter":

        class FlakyFilter(_OncePerPod, fw.FilterPlugin):
            name: ClassVar[str] = "FlakyFilter"
            seen: ClassVar[set[str]] = set()

            def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
                if self._first(pod):
                    return self._fail()  # type: ignore[no-any-return]
                return None

        FlakyFilter.failure = exc
        return FlakyFilter

    class FlakyBind(_OncePerPod, fw.PreBindPlugin):
        name: ClassVar[str] = "FlakyBind"
        seen: ClassVar[set[str]] = set()

        def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            if self._first(pod):
                return self._fail()  # type: ignore[no-any-return]
            return None

    FlakyBind.failure = exc
    return FlakyBind


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize(
    ("point", "config"),
    [("filter", "filter"), ("reserve", "reserve"), ("permit", "permit"), ("prebind", "preBind")],
)
def test_a_shutdown_exception_from_a_plugin_propagates_but_loses_no_pod(
    point: str, config: str, exc: type[BaseException]
) -> None:
    sched, backend = _scheduler(config, _raising(point, exc))
    backend.create(_pod("p"))
    with pytest.raises(exc):
        sched.run_until_idle()
    # The pod was released and requeued before the exception went on up.
    assert sched.in_flight() == 0
    assert not _cache(sched).dump().assumed_pods
    assert [p.name for p in sched.queue.pending_pods()] == ["p"]
    # The scheduler still works afterwards: the pod is retried and bound.
    sched.run_until_idle()
    _assert_all_bound(sched, backend, 1)


class _GarbageEverywhere(fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin, fw.PreBindPlugin):
    """Returns a list where a Status (or a PreFilterResult) is due, at one chosen point."""

    name: ClassVar[str] = "GarbageEverywhere"
    point: ClassVar[str] = ""

    def __init__(self, args: object, handle: fw.Handle) -> None:
        pass

    def _out(self, point: str) -> Any:
        return ["garbage"] if type(self).point == point else None

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Any) -> Any:
        return self._out("preFilter")

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return self._out("filter")  # type: ignore[no-any-return]

    def pre_score(self, state: CycleState, pod: Pod, nodes: Any) -> Status | None:
        return self._out("preScore")  # type: ignore[no-any-return]

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self._out("preBind")  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("point", "prefix"),
    [
        ("preFilter", 'running PreFilter plugin "GarbageEverywhere"'),
        ("filter", 'running "GarbageEverywhere" filter plugin'),
        ("preScore", 'running PreScore plugin "GarbageEverywhere"'),
        ("preBind", 'running PreBind plugin "GarbageEverywhere"'),
    ],
)
def test_garbage_at_any_point_is_an_error_naming_the_plugin(point: str, prefix: str) -> None:
    _GarbageEverywhere.point = point
    registry = Registry.discover()
    registry.register(_GarbageEverywhere.name, _GarbageEverywhere, replace=True)
    enabled = {"enabled": [{"name": _GarbageEverywhere.name}]}
    cfg = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {p: enabled for p in ("preFilter", "filter", "preScore", "preBind")},
                }
            ],
        }
    )
    clock = VirtualClock()
    backend = MemoryBackend([_node("n0"), _node("n1")], clock=clock)
    sched = Scheduler.from_config(cfg, backend, registry=registry, clock=clock, deterministic=True)
    backend.create(_pod("p"))
    assert sched.schedule_one()
    notes = [e.note for e in sched.events if e.reason == "FailedScheduling"]
    assert len(notes) == 1
    assert f"{prefix}: returned list (['garbage']), expected a " in notes[0], notes[0]
    assert [p.name for p in sched.queue.backoff_pods()] == ["p"]
    assert not _cache(sched).dump().assumed_pods
    sched.stop()
