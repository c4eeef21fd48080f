"""Node tree cases ported from upstream ``node_tree_test.go``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe.cache import CacheError, get_zone_key
from schedframe.cache._node_tree import NodeTree
from schedframe.objects import Node, ObjectMeta

REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"


def node(name: str, **labels: str) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels=dict(labels)))


def _labels(region: str | None = None, zone: str | None = None) -> dict[str, str]:
    out = {}
    if region is not None:
        out[REGION] = region
    if zone is not None:
        out[ZONE] = zone
    return out


ALL_NODES = [
    Node(metadata=ObjectMeta(name="node-0")),
    Node(metadata=ObjectMeta(name="node-1", labels=_labels(region="region-1"))),
    Node(metadata=ObjectMeta(name="node-2", labels=_labels(zone="zone-2"))),
    Node(metadata=ObjectMeta(name="node-3", labels=_labels("region-1", "zone-2"))),
    Node(metadata=ObjectMeta(name="node-4", labels=_labels("region-1", "zone-2"))),
    Node(metadata=ObjectMeta(name="node-5", labels=_labels("region-1", "zone-3"))),
    Node(metadata=ObjectMeta(name="node-6", labels=_labels("region-2", "zone-2"))),
    Node(metadata=ObjectMeta(name="node-7", labels=_labels("region-2", "zone-2"))),
    Node(metadata=ObjectMeta(name="node-8", labels=_labels("region-2", "zone-2"))),
    Node(
        metadata=ObjectMeta(
            name="node-9",
            labels={
                REGION: "region-2",
                ZONE: "zone-2",
                BETA_REGION: "region-2",
                BETA_ZONE: "zone-2",
            },
        )
    ),
    Node(
        metadata=ObjectMeta(name="node-10", labels={BETA_REGION: "region-2", BETA_ZONE: "zone-3"})
    ),
]


def verify(nt: NodeTree, expected: dict[str, list[str]]) -> None:
    assert nt.num_nodes == sum(len(v) for v in expected.values())
    assert nt.tree == expected
    assert sorted(nt.zones) == sorted(expected)


@pytest.mark.parametrize(
    ("to_add", "expected"),
    [
        pytest.param(ALL_NODES[:1], {"": ["node-0"]}, id="single node no labels"),
        pytest.param(
            [ALL_NODES[0], ALL_NODES[0]], {"": ["node-0"]}, id="same node specified twice"
        ),
        pytest.param(
            ALL_NODES[:4],
            {
                "": ["node-0"],
                "region-1:\x00:": ["node-1"],
                ":\x00:zone-2": ["node-2"],
                "region-1:\x00:zone-2": ["node-3"],
            },
            id="mix of nodes with and without proper labels",
        ),
        pytest.param(
            ALL_NODES[:7],
            {
                "": ["node-0"],
                "region-1:\x00:": ["node-1"],
                ":\x00:zone-2": ["node-2"],
                "region-1:\x00:zone-2": ["node-3", "node-4"],
                "region-1:\x00:zone-3": ["node-5"],
                "region-2:\x00:zone-2": ["node-6"],
            },
            id="mix of nodes with and without proper labels and some zones with multiple nodes",
        ),
        pytest.param(
            ALL_NODES[9:],
            {"region-2:\x00:zone-2": ["node-9"], "region-2:\x00:zone-3": ["node-10"]},
            id="nodes also using deprecated zone/region label",
        ),
    ],
)
def test_add_node(to_add: list[Node], expected: dict[str, list[str]]) -> None:
    nt = NodeTree()
    for n in to_add:
        nt.add_node(n)
    verify(nt, expected)


@pytest.mark.parametrize(
    ("existing", "to_remove", "expected", "expect_error"),
    [
        pytest.param(
            ALL_NODES[:7],
            ALL_NODES[:1],
            {
                "region-1:\x00:": ["node-1"],
                ":\x00:zone-2": ["node-2"],
                "region-1:\x00:zone-2": ["node-3", "node-4"],
                "region-1:\x00:zone-3": ["node-5"],
                "region-2:\x00:zone-2": ["node-6"],
            },
            False,
            id="remove a single node with no labels",
        ),
        pytest.param(
            ALL_NODES[:7],
            ALL_NODES[1:4],
            {
                "": ["node-0"],
                "region-1:\x00:zone-2": ["node-4"],
                "region-1:\x00:zone-3": ["node-5"],
                "region-2:\x00:zone-2": ["node-6"],
            },
            False,
            id="remove a few nodes including one from a zone with multiple nodes",
        ),
        pytest.param(ALL_NODES[:7], ALL_NODES[:7], {}, False, id="remove all nodes"),
        pytest.param([], ALL_NODES[:5], {}, True, id="remove non-existing node"),
    ],
)
def test_remove_node(
    existing: list[Node],
    to_remove: list[Node],
    expected: dict[str, list[str]],
    expect_error: bool,
) -> None:
    nt = NodeTree(existing)
    for n in to_remove:
        if expect_error:
            with pytest.raises(CacheError, match="was not found"):
                nt.remove_node(n)
        else:
            nt.remove_node(n)
    verify(nt, expected)


def test_remove_error_message_quotes_like_go() -> None:
    nt = NodeTree()
    with pytest.raises(CacheError) as info:
        nt.remove_node(ALL_NODES[3])
    assert str(info.value) == 'node "node-3" in group "region-1:\\x00:zone-2" was not found'


@pytest.mark.parametrize(
    ("existing", "updated", "expected"),
    [
        pytest.param(
            ALL_NODES[:7],
            node("node-0", **{REGION: "region-1", ZONE: "zone-2"}),
            {
                "region-1:\x00:": ["node-1"],
                ":\x00:zone-2": ["node-2"],
                "region-1:\x00:zone-2": ["node-3", "node-4", "node-0"],
                "region-1:\x00:zone-3": ["node-5"],
                "region-2:\x00:zone-2": ["node-6"],
            },
            id="update a node without label",
        ),
        pytest.param(
            ALL_NODES[:1],
            node("node-0", **{REGION: "region-1", ZONE: "zone-2"}),
            {"region-1:\x00:zone-2": ["node-0"]},
            id="update the only existing node",
        ),
        pytest.param(
            ALL_NODES[:1],
            node("node-new", **{REGION: "region-1", ZONE: "zone-2"}),
            {"": ["node-0"], "region-1:\x00:zone-2": ["node-new"]},
            id="update non-existing node",
        ),
    ],
)
def test_update_node(existing: list[Node], updated: Node, expected: dict[str, list[str]]) -> None:
    nt = NodeTree(existing)
    old = next((n for n in ALL_NODES if n.metadata.name == updated.metadata.name), None)
    if old is None:
        old = node("nonexisting-node")
    nt.update_node(old, updated)
    verify(nt, expected)


@pytest.mark.parametrize(
    ("to_add", "expected"),
    [
        pytest.param([], [], id="empty tree"),
        pytest.param(ALL_NODES[:1], ["node-0"], id="one node"),
        pytest.param(ALL_NODES[:4], ["node-0", "node-1", "node-2", "node-3"], id="four nodes"),
        pytest.param(
            ALL_NODES[:9],
            [
                "node-0",
                "node-1",
                "node-2",
                "node-3",
                "node-5",
                "node-6",
                "node-4",
                "node-7",
                "node-8",
            ],
            id="all nodes",
        ),
    ],
)
def test_list(to_add: list[Node], expected: list[str]) -> None:
    assert NodeTree(to_add).list() == expected


def test_list_exhausted() -> None:
    nt = NodeTree(ALL_NODES[:9])
    nt.num_nodes += 1
    with pytest.raises(CacheError, match="all zones exhausted"):
        nt.list()


@pytest.mark.parametrize(
    ("to_add", "to_remove", "operations", "expected"),
    [
        pytest.param(
            ALL_NODES[2:9],
            ALL_NODES[2:9],
            ["add", "add", "add", "remove", "remove", "remove"],
            [],
            id="add and remove all nodes",
        ),
        pytest.param(
            ALL_NODES[2:9],
            ALL_NODES[2:9],
            ["add", "add", "add", "remove"],
            ["node-3", "node-4"],
            id="add and remove some nodes",
        ),
        pytest.param(
            ALL_NODES[2:9],
            ALL_NODES[2:9],
            ["add", "add", "add", "remove", "remove", "remove", "add"],
            ["node-5"],
            id="remove three nodes",
        ),
        pytest.param(
            [*ALL_NODES[4:9], ALL_NODES[3]],
            [],
            ["add"] * 6,
            ["node-4", "node-5", "node-6", "node-3", "node-7", "node-8"],
            id="add more nodes to an exhausted zone",
        ),
        pytest.param(
            [*ALL_NODES[3:5], *ALL_NODES[6:8]],
            ALL_NODES[3:5],
            ["add", "add", "remove", "add", "add", "remove"],
            ["node-6", "node-7"],
            id="remove zone and add new",
        ),
    ],
)
def test_multi_operations(
    to_add: list[Node], to_remove: list[Node], operations: list[str], expected: list[str]
) -> None:
    nt = NodeTree()
    adds, removes = iter(to_add), iter(to_remove)
    for op in operations:
        if op == "add":
            nt.add_node(next(adds))
        else:
            nt.remove_node(next(removes))
    assert nt.list() == expected


@pytest.mark.parametrize(
    ("labels", "key"),
    [
        pytest.param({}, "", id="no labels"),
        pytest.param({REGION: "r", ZONE: "z"}, "r:\x00:z", id="topology labels"),
        pytest.param(
            {REGION: "r", ZONE: "z", BETA_REGION: "br", BETA_ZONE: "bz"},
            "br:\x00:bz",
            id="deprecated labels win",
        ),
        pytest.param({BETA_ZONE: "bz", REGION: "r"}, "r:\x00:bz", id="mixed"),
        pytest.param({"other": "x"}, "", id="unrelated labels"),
    ],
)
def test_get_zone_key(labels: dict[str, str], key: str) -> None:
    assert get_zone_key(node("n", **labels)) == key


def test_version_moves_only_on_structural_changes() -> None:
    nt = NodeTree()
    nt.add_node(ALL_NODES[0])
    v = nt.version
    nt.add_node(ALL_NODES[0])  # duplicate: ignored
    nt.update_node(ALL_NODES[0], ALL_NODES[0])  # same zone
    assert nt.version == v
    nt.update_node(ALL_NODES[0], node("node-0", **{ZONE: "z"}))
    assert nt.version > v


def test_tree_filled_from_outside_still_refuses_duplicates() -> None:
    # A copy assigns ``tree`` directly: membership must follow it, not a stale index.
    tree = NodeTree()
    tree.tree = {"": ["node-0", "node-1"]}
    tree.zones = [""]
    tree.num_nodes = 2
    tree.add_node(node("node-1"))
    assert tree.tree == {"": ["node-0", "node-1"]}
    tree.add_node(node("node-2"))
    tree.remove_node(node("node-0"))
    assert tree.tree == {"": ["node-1", "node-2"]}
    assert tree.num_nodes == 2
    with pytest.raises(CacheError):
        tree.remove_node(node("node-0"))


_OPS = st.lists(
    st.tuples(
        st.booleans(),
        st.sampled_from([f"node-{i}" for i in range(6)]),
        st.sampled_from(["", "zone-a", "zone-b"]),
    ),
    max_size=40,
)


@given(_OPS)
def test_adds_and_removes_match_a_list_model(ops: list[tuple[bool, str, str]]) -> None:
    tree = NodeTree()
    model: dict[str, list[str]] = {}
    for add, name, zone in ops:
        n = node(name, **({ZONE: zone} if zone else {}))
        key = get_zone_key(n)
        names = model.get(key, [])
        if add:
            tree.add_node(n)
            if name not in names:
                model[key] = [*names, name]
        elif name in names:
            tree.remove_node(n)
            names.remove(name)
            if not names:
                del model[key]
        else:
            with pytest.raises(CacheError):
                tree.remove_node(n)
        assert tree.tree == model
        assert tree.num_nodes == sum(len(v) for v in model.values())
