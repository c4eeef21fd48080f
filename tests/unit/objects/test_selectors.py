"""Label and node selector matching, ported from apimachinery ``labels`` and ``nodeaffinity``."""

from __future__ import annotations

import pytest

from schedframe.objects import (
    LabelSelector,
    LabelSelectorRequirement,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    PreferredSchedulingTerm,
)


def expr(key: str, operator: str, *values: str) -> LabelSelectorRequirement:
    return LabelSelectorRequirement(key=key, operator=operator, values=values)


def node_expr(key: str, operator: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key=key, operator=operator, values=values)


def term(
    *expressions: NodeSelectorRequirement, fields: tuple[NodeSelectorRequirement, ...] = ()
) -> NodeSelectorTerm:
    return NodeSelectorTerm(match_expressions=expressions, match_fields=fields)


@pytest.mark.parametrize(
    ("selector", "labels", "want"),
    [
        pytest.param(LabelSelector(), {}, True, id="empty selector matches everything"),
        pytest.param(LabelSelector(), {"a": "b"}, True, id="empty selector matches labels"),
        pytest.param(LabelSelector(match_labels={"a": "b"}), {"a": "b", "c": "d"}, True, id="eq"),
        pytest.param(LabelSelector(match_labels={"a": "b"}), {"a": "c"}, False, id="eq other"),
        pytest.param(LabelSelector(match_labels={"a": "b"}), {}, False, id="eq missing"),
        pytest.param(LabelSelector(match_labels={"a": ""}), {"a": ""}, True, id="eq empty value"),
        pytest.param(LabelSelector(match_labels={"a": ""}), {}, False, id="eq empty missing"),
        pytest.param(
            LabelSelector(match_expressions=(expr("a", "In", "x", "y"),)), {"a": "y"}, True, id="in"
        ),
        pytest.param(
            LabelSelector(match_expressions=(expr("a", "In", "x"),)), {}, False, id="in missing"
        ),
        pytest.param(
            LabelSelector(match_expressions=(expr("a", "NotIn", "x"),)),
            {"a": "x"},
            False,
            id="notin present",
        ),
        pytest.param(
            LabelSelector(match_expressions=(expr("a", "NotIn", "x"),)),
            {},
            True,
            id="notin matches a missing key",
        ),
        pytest.param(
            LabelSelector(match_expressions=(expr("a", "Exists"),)), {"a": ""}, True, id="exists"
        ),
        pytest.param(
            LabelSelector(match_expressions=(expr("a", "Exists"),)), {"b": "a"}, False, id="no key"
        ),
        pytest.param(
            LabelSelector(match_expressions=(expr("a", "DoesNotExist"),)),
            {"b": "a"},
            True,
            id="does not exist",
        ),
        pytest.param(
            LabelSelector(match_labels={"app": "web"}, match_expressions=(expr("tier", "Exists"),)),
            {"app": "web"},
            False,
            id="labels and expressions are ANDed",
        ),
        pytest.param(
            LabelSelector(match_expressions=(expr("a", "Gt", "1"),)),
            {"a": "2"},
            False,
            id="Gt is not a label selector operator",
        ),
        pytest.param(
            LabelSelector(match_expressions=(expr("a", "In"),)),
            {"a": ""},
            False,
            id="In without values fails to parse",
        ),
        pytest.param(
            LabelSelector(match_expressions=(expr("a", "Exists", "x"),)),
            {"a": "x"},
            False,
            id="Exists with values fails to parse",
        ),
        pytest.param(
            LabelSelector(match_expressions=(expr("invalid key", "Exists"),)),
            {"invalid key": "x"},
            False,
            id="invalid key fails to parse",
        ),
        pytest.param(
            LabelSelector(match_labels={"a": "not valid!"}),
            {"a": "not valid!"},
            False,
            id="invalid value fails to parse",
        ),
    ],
)
def test_label_selector_matches(
    selector: LabelSelector, labels: dict[str, str], want: bool
) -> None:
    assert selector.matches(labels) is want
    assert selector.matches(labels) is want  # the compiled form is reused


def test_label_selector_helpers() -> None:
    assert LabelSelector.everything().is_empty
    assert LabelSelector.everything().matches({"x": "y"})
    assert not LabelSelector(match_labels={"a": "b"}).is_empty
    assert not LabelSelector(match_expressions=(expr("a", "Exists"),)).is_empty
    assert LabelSelector(match_labels={"a": "b"}) == LabelSelector(match_labels={"a": "b"})
    assert hash(LabelSelector(match_labels={"a": "b"})) == hash(LabelSelector())


HOST = "host_1"


@pytest.mark.parametrize(
    ("selector", "node_name", "labels", "want"),
    [
        # TestNodeSelectorMatch (matching through the lazy selector: bad terms never match).
        pytest.param(
            NodeSelector(
                node_selector_terms=(
                    term(fields=(node_expr("metadata.name", "In", "host_1", "host_2"),)),
                    term(
                        node_expr("label_1", "In", "label_1_val"),
                        fields=(node_expr("metadata.name", "In", HOST),),
                    ),
                    term(node_expr("invalid key", "In", "label_value")),
                )
            ),
            HOST,
            {"label_1": "label_1_val", "invalid key": "label_value"},
            True,
            id="invalid terms are skipped, a valid one matches",
        ),
        pytest.param(
            NodeSelector(
                node_selector_terms=(
                    term(fields=(node_expr("metadata.name", "In", "host_1", "host_2"),)),
                    term(node_expr("invalid key", "In", "label_value")),
                )
            ),
            HOST,
            {"invalid key": "label_value"},
            False,
            id="invalid field selector and label selector",
        ),
        pytest.param(
            NodeSelector(
                node_selector_terms=(
                    term(
                        node_expr("label_1", "In", "label_1_val"),
                        fields=(node_expr("metadata.name", "In", HOST),),
                    ),
                )
            ),
            HOST,
            {},
            False,
            id="node matches field selector, but not labels",
        ),
        pytest.param(
            NodeSelector(
                node_selector_terms=(
                    term(
                        node_expr("label_1", "In", "label_1_val"),
                        fields=(node_expr("metadata.name", "In", HOST),),
                    ),
                )
            ),
            HOST,
            {"label_1": "label_1_val"},
            True,
            id="node matches field selector and label selector",
        ),
        pytest.param(
            NodeSelector(
                node_selector_terms=(
                    term(node_expr("label_1", "In", "label_1_val")),
                    term(fields=(node_expr("metadata.name", "In", HOST),)),
                )
            ),
            HOST,
            {},
            True,
            id="second term matches",
        ),
        pytest.param(
            NodeSelector(node_selector_terms=(term(node_expr("foo", "In", "bar", "value2")),)),
            "n",
            {"foo": "bar"},
            True,
            id="In operator that matches the existing node",
        ),
        pytest.param(
            NodeSelector(node_selector_terms=(term(node_expr("kernel-version", "Gt", "0204")),)),
            "n",
            {"kernel-version": "0206"},
            True,
            id="Gt operator that matches the existing node",
        ),
        pytest.param(
            NodeSelector(node_selector_terms=(term(node_expr("kernel-version", "Lt", "0204")),)),
            "n",
            {"kernel-version": "0206"},
            False,
            id="Lt operator that does not match",
        ),
        pytest.param(
            NodeSelector(
                node_selector_terms=(term(node_expr("mem-type", "NotIn", "DDR", "DDR2")),)
            ),
            "n",
            {"mem-type": "DDR3"},
            True,
            id="NotIn operator that matches the existing node",
        ),
        pytest.param(
            NodeSelector(node_selector_terms=(term(node_expr("GPU", "Exists")),)),
            "n",
            {"GPU": "NVIDIA-GRID-K1"},
            True,
            id="Exists operator that matches the existing node",
        ),
        pytest.param(
            NodeSelector(node_selector_terms=(term(node_expr("foo", "In", "value1", "value2")),)),
            "n",
            {"foo": "bar"},
            False,
            id="affinity that doesn't match node's labels",
        ),
        pytest.param(NodeSelector(), "n", {"foo": "bar"}, False, id="no terms match nothing"),
        pytest.param(
            NodeSelector(node_selector_terms=(NodeSelectorTerm(),)),
            "n",
            {"foo": "bar"},
            False,
            id="an empty term matches nothing",
        ),
        pytest.param(
            NodeSelector(node_selector_terms=(term(node_expr("n", "Gt", "1")),)),
            "n",
            {"n": "abc"},
            False,
            id="Gt against a label that is not a number",
        ),
        pytest.param(
            NodeSelector(node_selector_terms=(term(node_expr("n", "Gt", "1", "2")),)),
            "n",
            {"n": "5"},
            False,
            id="Gt with two values fails to parse",
        ),
        pytest.param(
            NodeSelector(node_selector_terms=(term(node_expr("n", "Lt", "x")),)),
            "n",
            {"n": "5"},
            False,
            id="Lt with a value that is not a number fails to parse",
        ),
        pytest.param(
            NodeSelector(node_selector_terms=(term(node_expr("n", "Gt", "0")),)),
            "n",
            {"n": "+1"},
            True,
            id="signed labels parse like strconv.ParseInt",
        ),
        pytest.param(
            NodeSelector(node_selector_terms=(term(node_expr("n", "Gt", "-3")),)),
            "n",
            {"n": "5"},
            False,
            id="a negative bound is not a valid label value, so it fails to parse",
        ),
        pytest.param(
            NodeSelector(node_selector_terms=(term(node_expr("n", "Lt", "10")),)),
            "n",
            {"n": "1_0"},
            False,
            id="underscores are not integers",
        ),
        pytest.param(
            NodeSelector(
                node_selector_terms=(term(fields=(node_expr("metadata.name", "NotIn", HOST),)),)
            ),
            "host_2",
            {},
            True,
            id="NotIn field",
        ),
        pytest.param(
            NodeSelector(
                node_selector_terms=(term(fields=(node_expr("metadata.name", "In", HOST),)),)
            ),
            "",
            {},
            True,
            id="field requirements are not checked for a node without a name",
        ),
        pytest.param(
            NodeSelector(
                node_selector_terms=(term(fields=(node_expr("metadata.name", "Exists"),)),)
            ),
            HOST,
            {},
            False,
            id="Exists is not a field selector operator",
        ),
    ],
)
def test_node_selector_matches(
    selector: NodeSelector, node_name: str, labels: dict[str, str], want: bool
) -> None:
    assert selector.matches(node_name, labels) is want


def test_preferred_terms_score() -> None:
    # TestPreferredSchedulingTermsScore "first and third term match": 5 + 11.
    terms = (
        PreferredSchedulingTerm(
            weight=5, preference=term(fields=(node_expr("metadata.name", "In", HOST),))
        ),
        PreferredSchedulingTerm(
            weight=7, preference=term(node_expr("unknown_label", "In", "unknown_label_val"))
        ),
        PreferredSchedulingTerm(
            weight=11, preference=term(node_expr("label_1", "In", "label_1_val"))
        ),
    )
    labels = {"label_1": "label_1_val"}
    score = sum(t.weight for t in terms if t.preference.matches(HOST, labels))
    assert score == 16


def test_empty_term_helpers() -> None:
    assert NodeSelectorTerm().is_empty
    assert not NodeSelectorTerm().matches("n", {})
    assert not term(node_expr("a", "Exists")).is_empty


def test_controller_ref() -> None:
    from schedframe.objects import OwnerReference

    owner = OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="rs", uid="u1")
    controller = OwnerReference(
        api_version="apps/v1", kind="ReplicaSet", name="rs2", uid="u2", controller=True
    )
    assert ObjectMeta(name="p", owner_references=(owner,)).controller_ref is None
    assert ObjectMeta(name="p", owner_references=(owner, controller)).controller_ref == controller
