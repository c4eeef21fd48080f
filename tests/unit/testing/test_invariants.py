"""The invariants pass on good runs and name what is wrong on bad states."""

from __future__ import annotations

import pytest

from schedframe.backends import MemoryBackend
from schedframe.cache import Cache, Snapshot
from schedframe.testing import deterministic
from schedframe.testing.builders import make_node, make_pod
from schedframe.testing.invariants import (
    PreemptionLog,
    PreemptionRecord,
    assert_no_overcommit,
    assert_nothing_lost,
    assert_preemption_only_lower_priority,
)

NODE = make_node("n1").capacity(cpu="1", memory="1Gi", pods=2).obj()


def test_no_overcommit_on_a_backend_names_node_resource_and_pods() -> None:
    pods = [make_pod(f"p{i}").req(cpu="600m").node("n1").obj() for i in range(2)]
    with pytest.raises(AssertionError) as err:
        assert_no_overcommit(MemoryBackend([NODE, *pods]))
    assert str(err.value) == (
        "overcommitted:\n  backend: node n1: cpu requested 1200 > allocatable 1000 "
        "(pods: default/p0, default/p1)"
    )
    assert_no_overcommit(MemoryBackend([NODE, *pods]), ignore=["cpu"])


def test_pod_count_and_terminated_pods() -> None:
    pods = [make_pod(f"p{i}").node("n1").obj() for i in range(3)]
    with pytest.raises(AssertionError, match="3 pods > allocatable pods 2"):
        assert_no_overcommit(MemoryBackend([NODE, *pods]))
    done = make_pod("done").node("n1").phase("Succeeded").obj()
    assert_no_overcommit(MemoryBackend([NODE, *pods[:2], done]))


def test_no_overcommit_on_a_cache_and_a_snapshot() -> None:
    big = make_pod("big").req(memory="2Gi").node("n1").obj()
    cache = Cache()
    cache.add_node(NODE)
    cache.add_pod(big)
    with pytest.raises(AssertionError, match="cache: node n1: memory requested"):
        assert_no_overcommit(cache)
    with pytest.raises(AssertionError, match="snapshot: node n1: memory"):
        assert_no_overcommit(Snapshot.from_objects([NODE], [big]))
    with pytest.raises(TypeError):
        assert_no_overcommit(object())


def test_a_real_run_keeps_every_invariant() -> None:
    nodes = [make_node(f"n{i}").capacity(cpu="2", memory="2Gi").obj() for i in range(2)]
    low = [make_pod(f"low{i}").req(cpu="1").priority(1).node(f"n{i % 2}").obj() for i in range(4)]
    high = make_pod("high").req(cpu="2").priority(100).obj()
    never = make_pod("never").req(cpu="8").obj()
    with deterministic.scheduler(objects=[*nodes, *low, high, never]) as sched:
        sched.run_until_idle()
        assert_no_overcommit(sched)
        assert_nothing_lost(sched)
        assert_nothing_lost(sched, [never, "default/high"])
        assert_preemption_only_lower_priority(sched)
        log = PreemptionLog.of(sched)
        assert log is not None and len(log.records) == 1
        (record,) = log.records
        assert record.preemptor.name == "high" and len(record.victims) == 2
        assert sched.placements()["default/high"] == record.node_name


def test_a_pod_nobody_knows_is_lost() -> None:
    stray = make_pod("stray").req(cpu="8").obj()
    with deterministic.scheduler(objects=[NODE, stray]) as sched:
        sched.run_until_idle()
        assert_nothing_lost(sched)
        sched.queue.delete(stray)  # the bug a scheduler could have: dropping a pending pod
        with pytest.raises(AssertionError) as err:
            assert_nothing_lost(sched)
        assert str(err.value) == (
            "pods lost:\n  default/stray: unbound and not queued, in flight or assumed "
            "(last outcome 'unschedulable')"
        )


def test_preemption_rules() -> None:
    preemptor = make_pod("p").priority(10).obj()
    fine = PreemptionRecord(
        preemptor=preemptor,
        node_name="n1",
        victims=(make_pod("v").priority(1).node("n1").obj(),),
        profile="default-scheduler",
    )
    assert_preemption_only_lower_priority([fine])
    bad = PreemptionRecord(
        preemptor=make_pod("p").priority(10).preemption_policy("Never").obj(),
        node_name="n1",
        victims=(make_pod("v").priority(10).node("n2").obj(),),
        profile="default-scheduler",
    )
    with pytest.raises(AssertionError) as err:
        assert_preemption_only_lower_priority([bad])
    text = str(err.value)
    assert "preemptionPolicy is Never" in text
    assert "evicted default/v of priority 10, not lower" in text
    assert "from another node (n2)" in text


def test_schedulers_without_a_log_are_refused() -> None:
    from schedframe.scheduler import Scheduler

    sched = Scheduler.from_config(None, deterministic=True)
    try:
        with pytest.raises(ValueError, match="records no preemptions"):
            assert_preemption_only_lower_priority(sched)
    finally:
        sched.stop()
