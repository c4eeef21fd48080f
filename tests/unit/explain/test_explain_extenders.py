"""explain calls the configuration's extenders as the scheduler does."""

from __future__ import annotations

from typing import Any

from schedframe.explain import explain
from schedframe.testing.extender import ExtenderServer, keep_nodes, score_nodes

from ._builders import node, pod

HEAD: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
}


def test_extender_rejections_and_scores_are_explained() -> None:
    nodes = [node("n1", zone="a"), node("n2", zone="b"), node("n3", zone="c")]
    with ExtenderServer(
        filter=keep_nodes(lambda n: n != "n3", reason="node is draining"),
        prioritize=score_nodes({"n1": 10}),
    ) as ext:
        config = {
            **HEAD,
            "extenders": [
                {
                    "urlPrefix": ext.url,
                    "filterVerb": "filter",
                    "prioritizeVerb": "prioritize",
                    "weight": 2,
                }
            ],
        }
        result = explain(pod("p"), nodes=nodes, config=config)
    n1, n3 = result.node("n1"), result.node("n3")
    assert not n3.feasible
    assert (n3.code, n3.reasons) == ("Unschedulable", ("node is draining",))
    extender = n1.score("Extender")
    assert extender is not None and extender.weighted == 10 * 2 * 10
    assert n1.total == sum(s.weighted for s in n1.scores)
    assert result.chosen == "n1"


def test_every_node_rejected_by_an_extender_is_in_the_message() -> None:
    nodes = [node("n1"), node("n2")]
    with ExtenderServer(filter=keep_nodes(lambda n: False, reason="node is draining")) as ext:
        config = {**HEAD, "extenders": [{"urlPrefix": ext.url, "filterVerb": "filter"}]}
        result = explain(pod("p"), nodes=nodes, config=config)
    assert result.chosen is None
    assert result.message.startswith("0/2 nodes are available: 2 node is draining.")


def test_a_failing_extender_is_the_explained_error() -> None:
    with ExtenderServer(filter=lambda args: {}) as ext:
        ext.fault("filter", status=500)
        config = {**HEAD, "extenders": [{"urlPrefix": ext.url, "filterVerb": "filter"}]}
        result = explain(pod("p"), nodes=[node("n1")], config=config)
    assert result.error == f"failed filter with extender at URL {ext.url}/filter, code 500"
    assert result.chosen is None
