"""The kit on the real scheduler: generated clusters keep every invariant, and a seed fixes
the placements."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from schedframe.config import KubeSchedulerConfiguration
from schedframe.testing import deterministic, invariants
from schedframe.testing import strategies as sst

pytestmark = pytest.mark.property

CLUSTERS = sst.clusters(
    max_nodes=3,
    max_pods=4,
    max_pending=4,
    namespaces=("default", "team-a"),
    taints=True,
    affinities=True,
    spread=True,
    pdbs=True,
)


@settings(max_examples=25, deadline=None)
@given(CLUSTERS)
def test_a_run_keeps_every_invariant(cluster: sst.Cluster) -> None:
    with deterministic.scheduler(objects=cluster, seed=1) as sched:
        sched.run_until_idle(max_cycles=200)
        invariants.assert_no_overcommit(sched)
        invariants.assert_nothing_lost(sched, cluster.pending)
        invariants.assert_preemption_only_lower_priority(sched)


@settings(max_examples=15, deadline=None)
@given(CLUSTERS)
def test_the_same_seed_gives_the_same_placements(cluster: sst.Cluster) -> None:
    first = deterministic.placements(objects=cluster, seed=5, max_cycles=200)
    again = deterministic.placements(objects=cluster, seed=5, max_cycles=200)
    assert first == again


@settings(max_examples=10, deadline=None)
@given(sst.configs(), sst.clusters(max_nodes=2, max_pods=2, max_pending=3))
def test_generated_configs_schedule(
    config: KubeSchedulerConfiguration, cluster: sst.Cluster
) -> None:
    # Pods name the first profile's scheduler, so every generated profile set is usable.
    with deterministic.scheduler(config, cluster) as sched:
        sched.run_until_idle(max_cycles=100)
        invariants.assert_no_overcommit(sched)
        invariants.assert_nothing_lost(sched, cluster.pending)
