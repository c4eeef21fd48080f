"""A/B comparison of one scenario under two configurations."""

from __future__ import annotations

from schedframe.simulation import Operation, Scenario, compare_scenario, pod_latencies, run_scenario
from schedframe.testing.builders import make_node, make_pod

BINPACK = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {"scoringStrategy": {"type": "MostAllocated"}},
                }
            ],
        }
    ],
}


def _scenario() -> Scenario:
    nodes = tuple(
        make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods=110).obj() for i in range(2)
    )
    ops = (
        Operation(at=1, op="createPod", obj=make_pod("s1").req(cpu="1").obj()),
        Operation(at=2, op="createPod", obj=make_pod("s2").req(cpu="1").obj()),
        Operation(at=5, op="createPod", obj=make_pod("big").req(cpu="4").obj()),
    )
    return Scenario(cluster=nodes, operations=ops)


def test_spreading_strands_the_big_pod_that_bin_packing_places() -> None:
    cmp = compare_scenario(_scenario(), None, BINPACK, names=("spread", "binpack"))
    assert cmp.pending_diff == (("default/big",), ())
    assert cmp.placement_diff["default/big"] == ("", "n0")
    doc = cmp.to_dict()
    assert doc["pendingOnly"] == {"spread": ["default/big"], "binpack": []}
    assert doc["binpack"]["fragmentation"]["cpu"] == 0.0  # type: ignore[index]
    assert doc["spread"]["fragmentation"]["cpu"] == 0.5  # type: ignore[index]
    assert "Pending only with spread: default/big" in cmp.to_text()


def test_the_same_configuration_on_both_sides_makes_no_difference() -> None:
    cmp = compare_scenario(_scenario(), None, None)
    assert cmp.placement_diff == {}
    assert cmp.pending_diff == ((), ())


def test_latency_runs_from_queued_to_bound() -> None:
    scenario = Scenario(
        cluster=(make_node("n0").capacity(cpu="1", memory="1Gi", pods=110).obj(),),
        operations=(
            Operation(at=0, op="cordon", name="n0"),
            Operation(at=1, op="createPod", obj=make_pod("p").obj()),
            Operation(at=7, op="uncordon", name="n0"),
        ),
    )
    assert pod_latencies(run_scenario(scenario)) == {"default/p": 6.0}


def test_the_summary_rows_are_the_totals_side_by_side_in_the_callers_formats() -> None:
    cmp = compare_scenario(_scenario(), None, BINPACK, names=("spread", "binpack"))
    rows = cmp.summary_rows(lambda v: f"<{v}>", lambda v: f"[{v}]")
    assert [label for label, _, _ in rows] == [
        "bound",
        "pending",
        "attempts",
        "cpu used (end)",
        "cpu used (mean)",
        "cpu fragmentation",
        "memory used (end)",
        "memory used (mean)",
        "memory fragmentation",
        "latency mean",
        "latency max",
    ]
    table = {label: (a, b) for label, a, b in rows}
    assert table["bound"] == (2, 3)
    assert table["pending"] == (1, 0)
    assert table["cpu used (end)"] == ("<0.25>", "<0.75>")
    assert table["cpu fragmentation"] == ("0.500", "0.000")
    assert table["latency max"] == ("[0]", "[0]")
    # The text table is these rows in its own formats.
    lines = cmp.to_text().splitlines()
    assert lines[5].split() == ["cpu", "used", "(end)", "25.0%", "75.0%"]
