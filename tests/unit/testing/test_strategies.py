"""The strategies draw valid objects, consistent clusters and valid configurations."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe.config import KubeSchedulerConfiguration, load_config
from schedframe.config import to_dict as config_to_dict
from schedframe.objects import (
    LABEL_SELECTOR_OPERATORS,
    NODE_SELECTOR_OPERATORS,
    Node,
    Pod,
    Quantity,
    from_dict,
    parse_quantity,
    to_dict,
)
from schedframe.testing import strategies as sst
from schedframe.testing._fit import checked_resource
from schedframe.testing.builders import LABEL_HOSTNAME, LABEL_ZONE

FAST = settings(max_examples=30, deadline=None)


@FAST
@given(sst.names())
def test_names_are_dns_labels(name: str) -> None:
    assert 1 <= len(name) <= 8
    assert name[0].isalnum() and name[-1].isalnum() and name == name.lower()


def test_names_refuse_bad_sizes() -> None:
    with pytest.raises(ValueError):
        sst.names(min_size=0)


@FAST
@given(sst.quantities())
def test_quantities_print_and_parse_back(q: Quantity) -> None:
    assert parse_quantity(str(q)) == q


@FAST
@given(sst.quantities(resource="cpu", max_amount=10_000))
def test_cpu_quantities_are_milli(q: Quantity) -> None:
    assert q.milli_value() <= 10_000


@FAST
@given(sst.pods())
def test_pods_round_trip_through_the_codec(pod: Pod) -> None:
    assert from_dict(to_dict(pod)) == pod
    assert pod.uid == f"{pod.namespace}/{pod.name}"
    ports = [p for _, _, p in pod.host_ports]
    assert len(ports) == len(set(ports))


@FAST
@given(sst.nodes(taints=st.lists(sst.taints(), max_size=4)))
def test_nodes_round_trip_and_have_hostnames(node: Node) -> None:
    assert from_dict(to_dict(node)) == node
    assert node.labels[LABEL_HOSTNAME] == node.name
    keys = [(t.key, t.effect) for t in node.taints]
    assert len(keys) == len(set(keys))


@FAST
@given(sst.tolerations())
def test_tolerations_are_valid(t: object) -> None:
    from schedframe.objects import Toleration

    assert isinstance(t, Toleration)
    if t.operator == "Exists":
        assert t.value == ""
    if not t.key:
        assert t.operator == "Exists"
    if t.toleration_seconds is not None:
        assert t.effect == "NoExecute"


@FAST
@given(sst.node_selector_requirements())
def test_node_selector_requirements_are_well_formed(r: object) -> None:
    from schedframe.objects import NodeSelectorRequirement

    assert isinstance(r, NodeSelectorRequirement)
    assert r.operator in NODE_SELECTOR_OPERATORS
    if r.operator in ("In", "NotIn"):
        assert r.values
    elif r.operator in ("Gt", "Lt"):
        assert len(r.values) == 1 and r.values[0].isdigit()
    else:
        assert r.values == ()


@FAST
@given(sst.label_selectors())
def test_label_selectors_are_well_formed(s: object) -> None:
    from schedframe.objects import LabelSelector

    assert isinstance(s, LabelSelector)
    for r in s.match_expressions:
        assert r.operator in LABEL_SELECTOR_OPERATORS
        assert bool(r.values) == (r.operator in ("In", "NotIn"))


@FAST
@given(
    sst.pods(topology_spread_constraints=st.lists(sst.topology_spread_constraints(), max_size=4))
)
def test_spread_constraints_are_unique_and_valid(pod: Pod) -> None:
    keys = [(c.topology_key, c.when_unsatisfiable) for c in pod.spec.topology_spread_constraints]
    assert len(keys) == len(set(keys))
    for c in pod.spec.topology_spread_constraints:
        assert c.max_skew >= 1
        if c.min_domains is not None:
            assert c.when_unsatisfiable == "DoNotSchedule"


@FAST
@given(sst.pod_disruption_budgets())
def test_budgets_have_one_of_min_or_max(pdb: object) -> None:
    from schedframe.objects import PodDisruptionBudget

    assert isinstance(pdb, PodDisruptionBudget)
    assert (pdb.min_available is None) != (pdb.max_unavailable is None)
    assert from_dict(to_dict(pdb)) == pdb


@FAST
@given(
    sst.clusters(
        max_pending=3,
        namespaces=("default", "team-a"),
        taints=True,
        affinities=True,
        spread=True,
        pdbs=True,
    )
)
def test_clusters_are_consistent(cluster: sst.Cluster) -> None:
    names = [n.name for n in cluster.nodes]
    assert names == [f"node-{i}" for i in range(len(names))]
    uids = [p.uid for p in (*cluster.pods, *cluster.pending)]
    assert len(uids) == len(set(uids))
    for node in cluster.nodes:
        assert node.labels[LABEL_ZONE] in sst.DEFAULT_ZONES
        running = cluster.pods_on(node.name)
        assert len(running) <= node.allocatable["pods"]
        for name in {r for p in running for r in p.requests}:
            if checked_resource(name):
                used = sum(p.requests.get(name, 0) for p in running)
                assert used <= node.allocatable.get(name, 0)
        for pod in running:
            assert pod.status.phase == "Running" and pod.start_time is not None
            for taint in node.taints:
                if taint.effect == "NoExecute":
                    assert any(t.tolerates(taint) for t in pod.spec.tolerations)
    assert all(p.node_name == "" for p in cluster.pending)
    assert {p.namespace for p in (*cluster.pods, *cluster.pending)} <= {"default", "team-a"}
    for obj in cluster.objects():
        assert from_dict(to_dict(obj)) == obj
    snapshot = cluster.snapshot()
    assert sum(len(ni.pods) for ni in snapshot.list()) == len(cluster.pods)


def test_cluster_helpers() -> None:
    cluster = sst.Cluster()
    with pytest.raises(KeyError):
        cluster.node("nope")
    assert list(cluster) == [] and cluster.with_pending().pending == ()
    assert cluster.backend().list("Node") == []


def test_clusters_refuse_bad_bounds() -> None:
    with pytest.raises(ValueError):
        sst.clusters(min_nodes=3, max_nodes=1)
    with pytest.raises(ValueError):
        sst.clusters(namespaces=())


@settings(max_examples=15, deadline=None)
@given(sst.configs())
def test_configs_are_valid_and_load_back(config: KubeSchedulerConfiguration) -> None:
    assert config.profiles[0].scheduler_name == "default-scheduler"
    assert load_config(config_to_dict(config)) == config


@FAST
@given(sst.resource_lists(kind="capacity", required=("cpu", "memory", "pods")))
def test_capacities_have_the_required_resources(amounts: dict[str, int]) -> None:
    assert {"cpu", "memory", "pods"} <= set(amounts)
    assert amounts["cpu"] > 0
