"""Coscheduling keeps the plugin contract, checked by schedframe's conformance kit."""

from __future__ import annotations

import attrs
from hypothesis import strategies as st
from schedframe_coscheduling import POD_GROUP

from schedframe.objects import Pod
from schedframe.testing import strategies as sst
from schedframe.testing.conformance import check_plugin

# Group memberships to draw from: no group, and groups whose PodGroup the generated clusters
# do not hold (PreFilter's unresolvable path); test_gang.py drives the paths with PodGroups.
MEMBERSHIPS: tuple[dict[str, str], ...] = ({}, {POD_GROUP: "g1"}, {POD_GROUP: "g2"})


def _join(pod: Pod, labels: dict[str, str]) -> Pod:
    meta = attrs.evolve(pod.metadata, labels={**pod.metadata.labels, **labels})
    return attrs.evolve(pod, metadata=meta)


GANG_PODS = st.builds(_join, sst.pods(), st.sampled_from(MEMBERSHIPS))


def test_coscheduling_conforms() -> None:
    check_plugin(
        "Coscheduling",
        pods=GANG_PODS,
        invalid_args=[{"permitWaitingTimeSeconds": 0}, {"permitWaitingTimeSeconds": "1m"}],
    )


def test_coscheduling_conforms_on_the_default_pods() -> None:
    check_plugin("Coscheduling", max_examples=20)
