"""Coscheduling keeps the plugin contract, checked by schedframe's conformance kit."""

from __future__ import annotations

import attrs
from hypothesis import strategies as st
from schedframe_coscheduling import MIN_MEMBER, POD_GROUP

from schedframe.objects import Pod
from schedframe.testing import strategies as sst
from schedframe.testing.conformance import check_plugin

# Group memberships to draw from, so the kit reaches every path: no group, a group too small
# for its pods, waiting for siblings, allowing them, an invalid size.
MEMBERSHIPS: tuple[tuple[dict[str, str], dict[str, str]], ...] = (
    ({}, {}),
    ({POD_GROUP: "g1"}, {MIN_MEMBER: "2"}),
    ({POD_GROUP: "g1"}, {MIN_MEMBER: "3"}),
    ({POD_GROUP: "g2"}, {MIN_MEMBER: "1"}),
    ({POD_GROUP: "g2", MIN_MEMBER: "2"}, {}),
    ({POD_GROUP: "g3"}, {MIN_MEMBER: "x"}),
    ({POD_GROUP: "g3"}, {}),
)


def _join(pod: Pod, membership: tuple[dict[str, str], dict[str, str]]) -> Pod:
    labels, annotations = membership
    meta = attrs.evolve(
        pod.metadata,
        labels={**pod.metadata.labels, **labels},
        annotations={**pod.metadata.annotations, **annotations},
    )
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
