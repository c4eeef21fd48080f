"""Default spreading with the objects it takes selectors from: upstream's
``filtering_test.go`` (TestPreFilterState), ``scoring_test.go`` (TestPreScoreSkip,
TestPreScoreStateEmptyNodes) cases with Services and ReplicaSets, the same shapes with a
StatefulSet and a ReplicationController, and ``helper/spread_test.go`` (TestGetPodServices)."""

from __future__ import annotations

import pytest

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.objects import (
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    ObjectMeta,
    OwnerReference,
    Pod,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    TopologySpreadConstraint,
)
from schedframe.runtime import ClusterView, Framework
from schedframe_plugins.podtopologyspread import PodTopologySpread, PodTopologySpreadArgs
from schedframe_plugins.podtopologyspread.common import default_selector
from schedframe_plugins.podtopologyspread.scoring import (
    PRE_SCORE_STATE_KEY,
    topology_normalizing_weight,
)

from ._builders import DNS, FOO, HOSTNAME, SA, ZONE, exists, labels_sel, node, pod, spread
from .test_filtering import C, _expect, _state_of

_TEMPLATE = Pod(metadata=ObjectMeta(name=""))


def service(selector: dict[str, str] | None, *, ns: str = "", name: str = "svc") -> Service:
    return Service(metadata=ObjectMeta(name=name, namespace=ns), selector=selector)


def replica_set(name: str, selector: LabelSelector, ns: str = "default") -> ReplicaSet:
    return ReplicaSet(
        metadata=ObjectMeta(name=name, namespace=ns), selector=selector, template=_TEMPLATE
    )


def stateful_set(name: str, selector: LabelSelector, ns: str = "default") -> StatefulSet:
    return StatefulSet(
        metadata=ObjectMeta(name=name, namespace=ns), selector=selector, template=_TEMPLATE
    )


def owned(p: Pod, kind: str, name: str, api_version: str = "apps/v1") -> Pod:
    ref = OwnerReference(api_version=api_version, kind=kind, name=name, uid=name, controller=True)
    return p.with_metadata(owner_references=(ref,))


def handle(nodes: list[Node], workloads: list[object]) -> tuple[Snapshot, Framework]:
    snap = Snapshot.from_objects(nodes, [])
    return snap, Framework(snapshot=snap, cluster=ClusterView(workloads=workloads))


def list_args(*constraints: TopologySpreadConstraint) -> PodTopologySpreadArgs:
    return PodTopologySpreadArgs(defaulting_type="List", default_constraints=constraints)


# -- PreFilter (filtering_test.go TestPreFilterState) ---------------------------------------


def test_default_constraints_and_a_service() -> None:
    snap, h = handle([], [service({"foo": "bar"})])
    args = list_args(
        spread(3, "node", DNS, None), spread(2, "node", SA, None), spread(5, "rack", DNS, None)
    )
    state = fw.CycleState()
    p = pod("p", labels={"foo": "bar", "baz": "kar"})
    assert PodTopologySpread(args, h).pre_filter(state, p, snap.list()) is None
    sel = labels_sel(foo="bar")
    no_paths = (("", 2**31 - 1), ("", 2**31 - 1))
    assert _state_of(state) == _expect(
        [(C(3, "node", sel), {}, no_paths), (C(5, "rack", sel), {}, no_paths)]
    )


@pytest.mark.parametrize(
    ("p", "constraints", "workloads"),
    [
        pytest.param(
            pod("p", labels={"foo": "bar"}),
            (spread(3, "node", DNS, None),),
            [service({"baz": "kep"})],
            id="default constraints and a service that doesn't match",
        ),
        pytest.param(
            pod("p", labels={"foo": "bar"}),
            (spread(2, "node", SA, None),),
            [service({"foo": "bar"})],
            id="default soft constraints and a service",
        ),
        pytest.param(
            pod("p", labels={"foo": "bar"}),
            (spread(3, "node", DNS, None),),
            [service(None)],
            id="a service without selector selects nothing",
        ),
        pytest.param(
            pod("p", ns="other", labels={"foo": "bar"}),
            (spread(3, "node", DNS, None),),
            [service({"foo": "bar"})],
            id="a service of another namespace",
        ),
    ],
)
def test_pre_filter_skips_without_a_default_selector(
    p: Pod, constraints: tuple[TopologySpreadConstraint, ...], workloads: list[object]
) -> None:
    snap, h = handle([], workloads)
    state = fw.CycleState()
    assert PodTopologySpread(list_args(*constraints), h).pre_filter(
        state, p, snap.list()
    ) == fw.Status(fw.Code.SKIP)


def test_default_constraints_and_a_service_but_pod_has_constraints() -> None:
    snap, h = handle([], [service({"foo": "bar"})])
    p = pod(
        "p",
        labels={"foo": "bar", "baz": "tar"},
        spreads=[
            spread(1, "zone", DNS, labels_sel(baz="tar")),
            spread(2, "planet", SA, labels_sel(fot="rok")),
        ],
    )
    state = fw.CycleState()
    assert (
        PodTopologySpread(list_args(spread(2, "node", DNS, None)), h).pre_filter(
            state, p, snap.list()
        )
        is None
    )
    no_paths = (("", 2**31 - 1), ("", 2**31 - 1))
    assert _state_of(state) == _expect([(C(1, "zone", labels_sel(baz="tar")), {}, no_paths)])


# -- PreScore (scoring_test.go) ---------------------------------------------------------------


def _pre_score(
    args: PodTopologySpreadArgs, nodes: list[Node], workloads: list[object], p: Pod
) -> fw.CycleState | fw.Status:
    snap, h = handle(nodes, workloads)
    state = fw.CycleState()
    status = PodTopologySpread(args, h).pre_score(state, p, snap.list())
    return state if status is None else status


def _hn(name: str, **labels: str) -> Node:
    return node(name, {HOSTNAME: name, **labels})


RS1 = replica_set("rs1", FOO)
P_RS1 = owned(pod("p", ns="default", labels={"foo": "tar", "baz": "sup"}), "ReplicaSet", "rs1")


def test_default_constraints_and_a_replicaset_that_doesnt_match() -> None:
    p = owned(pod("p", ns="default", labels={"foo": "bar", "baz": "sup"}), "ReplicaSet", "rs2")
    args = list_args(spread(2, "planet", SA, None))
    got = _pre_score(
        args, [node("node-a", {"planet": "mars"})], [replica_set("rs1", exists("tar"))], p
    )
    assert got == fw.Status(fw.Code.SKIP)


@pytest.mark.parametrize(
    ("owner", "workloads"),
    [
        pytest.param(
            ("ReplicaSet", "rs1", "apps/v1"),
            [RS1],
            id="system default constraints and a replicaset",
        ),
        pytest.param(
            ("StatefulSet", "ss1", "apps/v1"),
            [stateful_set("ss1", FOO)],
            id="system default constraints and a statefulset",
        ),
    ],
)
def test_system_default_constraints_and_an_owner(
    owner: tuple[str, str, str], workloads: list[object]
) -> None:
    kind, name, api_version = owner
    p = owned(pod("p", ns="default", labels={"foo": "tar", "baz": "sup"}), kind, name, api_version)
    nodes = [
        _hn("node-a", **{ZONE: "mars"}),
        _hn("node-b", **{ZONE: "mars"}),
        _hn("node-c"),  # nodes without a zone count as one more zone
        _hn("node-d"),
    ]
    state = _pre_score(PodTopologySpreadArgs(), nodes, workloads, p)
    assert isinstance(state, fw.CycleState)
    s = state[PRE_SCORE_STATE_KEY]
    sel = FOO
    assert s.constraints == [C(3, HOSTNAME, sel), C(5, ZONE, sel)]
    assert s.ignored_nodes == set()
    assert s.topology_value_to_pod_counts == [{}, {"mars": 0, "": 0}]
    assert s.topology_normalizing_weight == [
        topology_normalizing_weight(4),
        topology_normalizing_weight(2),
    ]


def test_default_constraints_and_a_replicaset() -> None:
    args = list_args(
        spread(1, HOSTNAME, SA, None), spread(2, "rack", DNS, None), spread(2, "planet", SA, None)
    )
    nodes = [node("node-a", {"rack": "rack1", HOSTNAME: "node-a", "planet": "mars"})]
    state = _pre_score(args, nodes, [RS1], P_RS1)
    assert isinstance(state, fw.CycleState)
    s = state[PRE_SCORE_STATE_KEY]
    assert s.constraints == [C(1, HOSTNAME, FOO), C(2, "planet", FOO)]
    assert s.topology_value_to_pod_counts == [{}, {"mars": 0}]
    assert s.topology_normalizing_weight == [
        topology_normalizing_weight(1),
        topology_normalizing_weight(1),
    ]


def test_default_constraints_and_a_replicaset_but_pod_has_constraints() -> None:
    p = owned(
        pod(
            "p",
            ns="default",
            labels={"foo": "bar", "baz": "sup"},
            spreads=[
                spread(1, "zone", DNS, exists("bar")),
                spread(2, "planet", SA, labels_sel(baz="sup")),
            ],
        ),
        "ReplicaSet",
        "rs1",
    )
    args = list_args(spread(2, "galaxy", SA, None))
    state = _pre_score(args, [node("node-a", {"planet": "mars", "galaxy": "andromeda"})], [RS1], p)
    assert isinstance(state, fw.CycleState)
    assert state[PRE_SCORE_STATE_KEY].constraints == [C(2, "planet", labels_sel(baz="sup"))]


# -- helper.DefaultSelector ---------------------------------------------------------------------


def _in(key: str, value: str) -> LabelSelectorRequirement:
    return LabelSelectorRequirement(key=key, operator="In", values=(value,))


@pytest.mark.parametrize(
    ("p", "workloads", "want"),
    [
        pytest.param(
            pod("p", ns="test", labels={"app": "test-0"}),
            [],
            LabelSelector(),
            id="nothing selects the pod",
        ),
        pytest.param(
            pod("p", ns="test", labels={"app": "test-0", "label": "label-0"}),
            [service({"app": f"test-{i}"}, ns="test", name=f"service-{i}") for i in range(3)],
            labels_sel(app="test-0"),
            id="GetPodServices for pod-0",
        ),
        pytest.param(
            pod("p", ns="test", labels={"app": "test-3", "label": "label-3"}),
            [service({"app": f"test-{i}"}, ns="test", name=f"service-{i}") for i in range(3)],
            LabelSelector(),
            id="GetPodServices for pod-3",
        ),
        pytest.param(
            pod("p", ns="test", labels={"app": "a", "tier": "web"}),
            [
                service({"app": "a"}, ns="test", name="s1"),
                service({"tier": "web"}, ns="test", name="s2"),
            ],
            labels_sel(app="a", tier="web"),
            id="the label sets of every selecting service merged",
        ),
        pytest.param(
            owned(
                pod("p", ns="test", labels={"app": "a", "rc": "x"}),
                "ReplicationController",
                "rc1",
                "v1",
            ),
            [
                service({"app": "a"}, ns="test"),
                ReplicationController(
                    metadata=ObjectMeta(name="rc1", namespace="test"), selector={"rc": "x"}
                ),
            ],
            labels_sel(app="a", rc="x"),
            id="a replication controller's selector merged",
        ),
        pytest.param(
            owned(pod("p", ns="test", labels={"app": "a"}), "ReplicaSet", "rs1"),
            [service({"app": "a"}, ns="test"), replica_set("rs1", labels_sel(app="a"), ns="test")],
            LabelSelector(match_labels={"app": "a"}, match_expressions=(_in("app", "a"),)),
            id="a replicaset's requirements added",
        ),
        pytest.param(
            owned(pod("p", ns="test", labels={"app": "a"}), "ReplicaSet", "gone"),
            [service({"app": "a"}, ns="test")],
            labels_sel(app="a"),
            id="a missing owner adds nothing",
        ),
        pytest.param(
            owned(
                pod("p", ns="test", labels={"app": "a"}), "ReplicaSet", "rs1", "extensions/v1beta1"
            ),
            [replica_set("rs1", labels_sel(app="a"), ns="test")],
            LabelSelector(),
            id="an owner of another group version is not a supported controller",
        ),
        pytest.param(
            owned(pod("p", ns="test", labels={"app": "a"}), "StatefulSet", "db"),
            [stateful_set("db", exists("app"), ns="test")],
            exists("app"),
            id="a statefulset's requirements",
        ),
    ],
)
def test_default_selector(p: Pod, workloads: list[object], want: LabelSelector) -> None:
    assert default_selector(p, ClusterView(workloads=workloads).workloads) == want
