"""Builders and fake plugins for the DefaultPreemption tests (upstream ``st.MakePod()`` & co.)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import ClassVar

from schedframe import framework as fw
from schedframe.backends import MemoryBackend
from schedframe.cache import Snapshot
from schedframe.objects import (
    Affinity,
    Container,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodAffinityTerm,
    PodAntiAffinity,
    PodCondition,
    PodDisruptionBudget,
    PodSpec,
    PodStatus,
    TopologySpreadConstraint,
    parse_quantity,
    resource_amount,
)
from schedframe.runtime import Framework
from schedframe.runtime._standalone import _SimpleNominator

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000

SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: The scheduler clock of these tests (pods without a start time started "now").
NOW = datetime(2024, 1, 1, tzinfo=UTC)


def epoch(n: int) -> datetime:
    """Upstream's ``epochTime<n>`` = ``time.Unix(0, n)``; microseconds here, since datetimes
    have no nanoseconds (only the order matters)."""
    return EPOCH + timedelta(microseconds=n)


def amounts(q: Mapping[str, str]) -> dict[str, int]:
    """Kubernetes quantity strings -> scheduler integers."""
    return {k: resource_amount(k, parse_quantity(v)) for k, v in q.items()}


def pod(
    name: str,
    *,
    uid: str | None = None,
    namespace: str = "default",
    node: str = "",
    priority: int | None = None,
    req: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    start: datetime | None = None,
    nominated: str = "",
    policy: str | None = None,
    terminating: bool = False,
    conditions: Sequence[PodCondition] = (),
    anti_affinity_exists: tuple[str, str] | None = None,
    spread: Sequence[TopologySpreadConstraint] = (),
    containers: int | None = None,
    scheduler_name: str = "default-scheduler",
) -> Pod:
    """``st.MakePod().Name(name).UID(uid)...Obj()``; ``req`` adds one container with requests."""
    cs: list[Container] = []
    if req is not None:
        cs.append(Container(name="c", requests=amounts(req)))
    if containers is not None:
        cs = [Container(name=f"container{i + 1}") for i in range(containers)]
    affinity = None
    if anti_affinity_exists is not None:
        key, topology = anti_affinity_exists
        term = PodAffinityTerm(
            label_selector=LabelSelector(
                match_expressions=(LabelSelectorRequirement(key=key, operator="Exists"),)
            ),
            topology_key=topology,
        )
        affinity = Affinity(pod_anti_affinity=PodAntiAffinity(required=(term,)))
    spec_kw: dict[str, object] = {}
    if policy is not None:
        spec_kw["preemption_policy"] = policy
    return Pod(
        metadata=ObjectMeta(
            name=name,
            namespace=namespace,
            uid=uid if uid is not None else name,
            labels=dict(labels or {}),
            deletion_timestamp=NOW - timedelta(seconds=100) if terminating else None,
        ),
        spec=PodSpec(
            node_name=node,
            priority=priority,
            containers=tuple(cs),
            affinity=affinity,
            topology_spread_constraints=tuple(spread),
            scheduler_name=scheduler_name,
            **spec_kw,  # type: ignore[arg-type]
        ),
        status=PodStatus(
            nominated_node_name=nominated, conditions=tuple(conditions), start_time=start
        ),
    )


def node(
    name: str, capacity: Mapping[str, str] | None = None, labels: Mapping[str, str] | None = None
) -> Node:
    """``st.MakeNode().Name(name).Capacity(capacity)``: 32 pods unless ``capacity`` says."""
    res = {"pods": 32, **amounts(capacity or {})}
    return Node(
        metadata=ObjectMeta(name=name, uid=name, labels=dict(labels or {})),
        status=NodeStatus(capacity=res, allocatable=res),
    )


def topo_node(spec: str, capacity: Mapping[str, str]) -> Node:
    """A node from ``"name/zone/region"``: labels hostname, zone, region (upstream's tests)."""
    parts = spec.split("/")
    labels = dict(zip(("hostname", "zone", "region"), parts, strict=False))
    return node(parts[0], capacity, labels)


def pdb(
    name: str = "",
    *,
    namespace: str = "default",
    match_labels: Mapping[str, str] | None = None,
    allowed: int = 0,
    disrupted: Iterable[str] = (),
    min_available: int | str | None = None,
) -> PodDisruptionBudget:
    """A PodDisruptionBudget with a ``matchLabels`` selector and its status."""
    return PodDisruptionBudget(
        metadata=ObjectMeta(name=name, namespace=namespace),
        selector=LabelSelector(match_labels=dict(match_labels)) if match_labels else None,
        min_available=min_available,
        disruptions_allowed=allowed,
        disrupted_pods=dict.fromkeys(disrupted, NOW),
    )


def unschedulable(*names: str) -> fw.NodeToStatus:
    """Every named node Unschedulable; the others absent (UnschedulableAndUnresolvable)."""
    return fw.NodeToStatus({n: fw.Status(fw.Code.UNSCHEDULABLE) for n in names})


class FakeClock:
    """A fixed scheduler clock whose timers only fire when told to (graceful deletions)."""

    def __init__(self, now: datetime = NOW) -> None:
        self.t = now.timestamp()
        self.timers: list[tuple[float, Callable[[], None]]] = []

    def now(self) -> float:
        return self.t

    def call_later(self, delay: float, callback: Callable[[], None]) -> object:
        self.timers.append((delay, callback))
        return callback


class SequenceRandom(random.Random):
    """An rng whose ``randrange`` returns given values: upstream's tests fix the offsets their
    seeded ``rand.Int31n`` draws (seed 4, five nodes: 4, 1, 3)."""

    def __init__(self, values: Sequence[int]) -> None:
        super().__init__(0)
        self.values = list(values)

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        return self.values.pop(0)


PluginFactory = Callable[[fw.Handle], fw.Plugin]


# A nominator that, as the scheduling queue does, hands out the same list for a node until
# the pods nominated to it change: the Framework's own stand-alone one.
KeepingNominator = _SimpleNominator


def cluster(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    plugins: Sequence[PluginFactory] = (),
    *,
    pdbs: Sequence[PodDisruptionBudget] = (),
    rng: random.Random | None = None,
    graceful_deletion: bool = False,
    nominator: fw.Nominator | None = None,
) -> tuple[Framework, MemoryBackend]:
    """A Framework over a snapshot of ``nodes``/``pods`` with ``plugins`` enabled, writing to a
    MemoryBackend holding the same objects."""
    clock = FakeClock()
    backend = MemoryBackend(
        [*nodes, *pods, *pdbs], clock=clock, graceful_deletion=graceful_deletion
    )
    fwk = Framework(
        snapshot=Snapshot.from_objects(nodes, pods),
        pdbs=pdbs,
        binder=backend,
        clock=clock,
        rng=rng if rng is not None else random.Random(0),
        nominator=nominator,
    )
    for factory in plugins:
        fwk.add_plugin(factory(fwk))
    return fwk, backend


def stored_pods(backend: MemoryBackend) -> list[Pod]:
    """The pods the backend holds now."""
    return [p for p in backend.list("Pod") if isinstance(p, Pod)]


def pre_filter(fwk: Framework, pod: Pod) -> fw.CycleState:
    """A CycleState filled by the PreFilter plugins, as the scheduling cycle leaves it."""
    state = fw.CycleState()
    _, status, _ = fwk.run_pre_filter_plugins(state, pod)
    assert status is None or status.is_success(), status
    return state


# --------------------------------------------------------------------------------------------
# Fake plugins (upstream tf.FakeFilterPlugin, TrueFilter, FalseFilter, MatchFilter, TestPlugin)
# --------------------------------------------------------------------------------------------

ERR_REASON_FAKE = "Nodes failed the fake plugin"


class FakeFilter(fw.FilterPlugin):
    """Counts Filter calls; fails the nodes listed in ``codes`` with their code."""

    name: ClassVar[str] = "FakeFilter"

    def __init__(self, codes: Mapping[str, fw.Code] | None = None) -> None:
        self.codes = dict(codes or {})
        self.calls = 0

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        self.calls += 1
        code = self.codes.get(node_info.name, fw.Code.SUCCESS)
        if code is fw.Code.SUCCESS:
            return None
        return fw.Status(code, f"injecting failure for pod {pod.name}")


class TrueFilter(fw.FilterPlugin):
    name: ClassVar[str] = "TrueFilter"

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        return None


class FalseFilter(fw.FilterPlugin):
    name: ClassVar[str] = "FalseFilter"

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        return fw.Status(fw.Code.UNSCHEDULABLE, ERR_REASON_FAKE)


class MatchFilter(fw.FilterPlugin):
    """Passes only the node named like the pod."""

    name: ClassVar[str] = "MatchFilter"

    def filter(self, state: fw.CycleState, pod: Pod, node_info: fw.NodeInfo) -> fw.Status | None:
        if pod.name == node_info.name:
            return None
        return fw.Status(fw.Code.UNSCHEDULABLE, ERR_REASON_FAKE)


class ErrorOnLabelPlugin(fw.PreFilterPlugin, fw.PreFilterExtensions):
    """Upstream's ``TestPlugin``: AddPod/RemovePod fail on nodes labelled ``error=true``."""

    name: ClassVar[str] = "test-plugin"

    def pre_filter(
        self, state: fw.CycleState, pod: Pod, nodes: Sequence[fw.NodeInfo]
    ) -> fw.PreFilterResult | fw.Status | None:
        return None

    def add_pod(
        self, state: fw.CycleState, pod: Pod, pod_info_to_add: fw.PodInfo, node_info: fw.NodeInfo
    ) -> fw.Status | None:
        if node_info.node is not None and node_info.node.labels.get("error") == "true":
            return fw.Status(fw.Code.ERROR, f"failed to add pod: {pod.name}")
        return None

    def remove_pod(
        self,
        state: fw.CycleState,
        pod: Pod,
        pod_info_to_remove: fw.PodInfo,
        node_info: fw.NodeInfo,
    ) -> fw.Status | None:
        if node_info.node is not None and node_info.node.labels.get("error") == "true":
            return fw.Status(fw.Code.ERROR, f"failed to remove pod: {pod.name}")
        return None
