"""Will it fit: placements, victims with their PDBs, pending pods; the cluster untouched."""

from __future__ import annotations

from schedframe.backends import MemoryBackend, canonical_state
from schedframe.simulation import cluster_scheduler, will_it_fit
from schedframe.testing.builders import make_node, make_pdb, make_pod


def _cluster() -> list[object]:
    return [
        make_node("n0").capacity(cpu="4", memory="8Gi", pods=110).obj(),
        make_pod("low").label("app", "low").req(cpu="3").priority(0).node("n0").obj(),
        make_pdb("low").selector(app="low").min_available(1).obj(),
    ]


def test_a_pod_that_fits_leaves_the_cluster_untouched() -> None:
    sched = cluster_scheduler(_cluster())
    assert isinstance(sched.backend, MemoryBackend)
    before = canonical_state(sched.backend)
    result = will_it_fit([make_pod("small").req(cpu="1").obj()], sched)
    assert result.fits
    assert result.placements == {"default/small": "n0"}
    assert canonical_state(sched.backend) == before


def test_preemption_victims_are_reported_with_their_pdbs() -> None:
    sched = cluster_scheduler(_cluster())
    result = will_it_fit([make_pod("high").req(cpu="2").priority(100).obj()], sched)
    assert result.placements == {"default/high": "n0"}
    assert [(v.pod, v.node, v.by, v.pdbs, v.violates_pdb) for v in result.victims] == [
        ("default/low", "n0", "default/high", ("default/low",), True)
    ]


def test_a_gang_fits_only_whole() -> None:
    sched = cluster_scheduler(_cluster())
    gang = [make_pod(f"g{i}").req(cpu="1").obj() for i in range(2)]
    result = will_it_fit(gang, sched)
    assert not result.fits
    assert len(result.placements) == 1
    (message,) = result.pending.values()
    assert message.startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_commit_applies_the_answer() -> None:
    sched = cluster_scheduler(_cluster())
    will_it_fit([make_pod("small").req(cpu="1").obj()], sched, commit=True)
    stored = sched.backend.get("Pod", "small", "default")  # type: ignore[attr-defined]
    assert stored.spec.node_name == "n0"
