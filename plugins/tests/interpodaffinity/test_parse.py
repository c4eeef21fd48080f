"""Affinity terms that do not parse: upstream's invalid-selector cases (filtering_test.go,
scoring_test.go) and the texts of ``labels.NewRequirement``."""

from __future__ import annotations

import pytest

from schedframe.framework import Code, CycleState, Status
from schedframe.objects import Pod
from schedframe_plugins.interpodaffinity import InterPodAffinity
from schedframe_plugins.interpodaffinity._parse import pod_parse_error

from ._wrappers import (
    NAMESPACES,
    REQUIRED,
    affinity,
    make_handle,
    make_pod,
    node,
    pod,
    req,
    selector,
    term,
    weighted,
)
from .test_filtering import setup

BAD = "{{.bad-value.}}"
BAD_VALUE = (
    f'values[0][service]: Invalid value: "{BAD}": a valid label must be an empty string or '
    "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
POD_LABEL = {"service": "securityscan"}
NODE1 = node("node1", {"region": "r1", "zone": "z11"})


@pytest.mark.parametrize(
    ("incoming", "want"),
    [
        pytest.param(
            make_pod()
            .labels(POD_LABEL)
            .pod_affinity_in("service", "region", [BAD], REQUIRED)
            .pod_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
            .obj(),
            f"parsing pod: requiredAffinityTerms: {BAD_VALUE}",
            id="PodAffinity fails PreFilter with an invalid affinity label syntax",
        ),
        pytest.param(
            make_pod()
            .labels(POD_LABEL)
            .pod_affinity_in("service", "region", ["foo"], REQUIRED)
            .pod_affinity_in("service", "node", [BAD], REQUIRED)
            .obj(),
            f"parsing pod: requiredAffinityTerms: {BAD_VALUE}",
            id="PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
        ),
        pytest.param(
            make_pod().pod_anti_affinity_in("service", "zone", [BAD], REQUIRED).obj(),
            f"parsing pod: requiredAntiAffinityTerms: {BAD_VALUE}",
            id="required anti-affinity term with an invalid value",
        ),
        pytest.param(
            pod(
                affinity=affinity(
                    preferred=[weighted(8, term(selector(req("service", "In", BAD)), "region"))]
                )
            ),
            f"parsing pod: preferredAffinityTerms: {BAD_VALUE}",
            id="preferred terms are parsed in PreFilter too",
        ),
    ],
)
def test_pre_filter_refuses_a_pod_whose_terms_do_not_parse(incoming: Pod, want: str) -> None:
    plugin, snap = setup([NODE1], [])
    status = plugin.pre_filter(CycleState(), incoming, snap.list())
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, want)


@pytest.mark.parametrize(
    "incoming",
    [
        pytest.param(
            pod(
                affinity=affinity(
                    preferred=[weighted(8, term(selector(req("security", "In", BAD)), "region"))]
                )
            ),
            id="invalid Affinity fails PreScore",
        ),
        pytest.param(
            pod(
                affinity=affinity(
                    anti_preferred=[
                        weighted(5, term(selector(req("security", "In", BAD)), "region"))
                    ]
                )
            ),
            id="invalid AntiAffinity fails PreScore",
        ),
    ],
)
def test_pre_score_errors_on_a_pod_whose_terms_do_not_parse(incoming: Pod) -> None:
    from schedframe.cache import Snapshot

    nodes = [node("node1", {"region": "China"}), node("node2", {"region": "China"})]
    snap = Snapshot.from_objects(nodes, [])
    plugin = InterPodAffinity(None, make_handle(snap, NAMESPACES))
    status = plugin.pre_score(CycleState(), incoming, snap.list())
    assert status is not None and status.code is Code.ERROR
    # Upstream's table checks the message holds the bad value.
    assert f'Invalid value: "{BAD}"' in status.message()
    assert status.message().startswith("failed to parse pod: preferred")


@pytest.mark.parametrize(
    ("sel", "want"),
    [
        pytest.param(selector(req("service", "In", "ok")), None, id="valid"),
        pytest.param(
            selector(req("service", "Bogus", "x")),
            '"Bogus" is not a valid label selector operator',
            id="unknown operator",
        ),
        pytest.param(
            selector(req("service", "In")),
            "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't "
            "be empty",
            id="In without values",
        ),
        pytest.param(
            selector(req("service", "Exists", "x")),
            'values: Invalid value: []string{"x"}: values set must be empty for exists and does '
            "not exist",
            id="Exists with values",
        ),
        pytest.param(
            selector(req("-bad-", "Exists")),
            'key: Invalid value: "-bad-": name part must consist of alphanumeric characters, '
            "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
            "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            id="bad key",
        ),
        pytest.param(
            selector(match_labels={"app": BAD}),
            BAD_VALUE.replace("[service]", "[app]"),
            id="matchLabels value",
        ),
    ],
)
def test_selector_texts_are_upstreams(sel: object, want: str | None) -> None:
    incoming = pod(affinity=affinity(required=[term(sel, "zone")]))  # type: ignore[arg-type]
    got = pod_parse_error(incoming)
    assert got == (None if want is None else f"requiredAffinityTerms: {want}")


def test_two_failing_groups_are_an_aggregate() -> None:
    bad = term(selector(req("service", "In", BAD)), "zone")
    incoming = pod(affinity=affinity(required=[bad], anti_required=[bad]))
    assert pod_parse_error(incoming) == (
        f"[requiredAffinityTerms: {BAD_VALUE}, requiredAntiAffinityTerms: {BAD_VALUE}]"
    )


def test_namespace_selector_is_parsed_after_the_label_selector() -> None:
    bad_ns = term(
        selector(req("service", "In", "ok")),
        "zone",
        namespace_selector=selector(req("team", "In", BAD)),
    )
    error = pod_parse_error(pod(affinity=affinity(required=[bad_ns])))
    assert error == "requiredAffinityTerms: " + BAD_VALUE.replace("[service]", "[team]")
