"""CapacityScheduling keeps the plugin contract, checked by schedframe's conformance kit,
with ElasticQuotas in every generated cluster (the kit serves them through Handle.lister)."""

from __future__ import annotations

from schedframe_capacityscheduling import CapacityScheduling, elastic_quota

from schedframe.testing.conformance import Vocabulary, check_plugin

QUOTAS = Vocabulary(
    objects=[
        elastic_quota("default", min={"cpu": "1"}, max={"cpu": "2"}),
        elastic_quota("team-a", min={"cpu": "500m", "memory": "1Gi"}),
    ]
)


def test_capacity_scheduling_conforms() -> None:
    check_plugin(
        CapacityScheduling,
        max_examples=40,
        vocabulary=QUOTAS,
        companions=["NodeResourcesFit"],
    )


def test_capacity_scheduling_conforms_without_quotas() -> None:
    check_plugin(CapacityScheduling, max_examples=15, companions=["NodeResourcesFit"])
