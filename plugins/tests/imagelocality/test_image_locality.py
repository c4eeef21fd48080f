"""Port of upstream imagelocality/image_locality_test.go."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe import framework as fw
from schedframe.cache import Snapshot
from schedframe.objects import Container, ContainerImage, Node, NodeStatus, ObjectMeta, Pod, PodSpec
from schedframe.runtime import Framework
from schedframe_plugins.imagelocality import ImageLocality

MB = 1024 * 1024


def spec(*images: str, init: tuple[str, ...] = ()) -> Pod:
    return Pod(
        metadata=ObjectMeta(name="p", namespace="default"),
        spec=PodSpec(
            containers=tuple(Container(name=f"c{i}", image=im) for i, im in enumerate(images)),
            init_containers=tuple(Container(name=f"i{i}", image=im) for i, im in enumerate(init)),
        ),
    )


def image(size_mb: int, *names: str) -> ContainerImage:
    return ContainerImage(names=names, size_bytes=size_mb * MB)


NODE_40_300_2000 = (
    image(40, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"),
    image(300, "gcr.io/300:latest", "gcr.io/300:v1"),
    image(2000, "gcr.io/2000:latest"),
)
NODE_250_10 = (image(250, "gcr.io/250:latest"), image(10, "gcr.io/10:latest", "gcr.io/10:v1"))
NODE_600_40_900 = (
    image(600, "gcr.io/600:latest"),
    image(40, "gcr.io/40:latest"),
    image(900, "gcr.io/900:latest"),
)
NODE_300_600_900 = (
    image(300, "gcr.io/300:latest"),
    image(600, "gcr.io/600:latest"),
    image(900, "gcr.io/900:latest"),
)
NODE_4000_30 = (image(4000, "gcr.io/4000:latest"), image(30, "gcr.io/30:latest"))
NODE_20_30_40 = (
    image(20, "gcr.io/20:latest"),
    image(30, "gcr.io/30:latest"),
    image(40, "gcr.io/40:latest"),
)


def image_node(name: str, images: tuple[ContainerImage, ...] = ()) -> Node:
    return Node(metadata=ObjectMeta(name=name), status=NodeStatus(images=images))


TEST_40_250 = spec("gcr.io/40", "gcr.io/250")
TEST_40_300 = spec("gcr.io/40", "gcr.io/300")
TEST_MIN_MAX = spec("gcr.io/10", "gcr.io/4000")
TEST_300_600_900 = spec("gcr.io/300", "gcr.io/600", "gcr.io/900")
TEST_30_40 = spec("gcr.io/30", "gcr.io/40")
TEST_30_INIT_300 = spec("gcr.io/30", init=("gcr.io/300",))


@pytest.mark.parametrize(
    ("pod", "nodes", "want"),
    [
        pytest.param(
            TEST_40_250,
            [image_node("node1", NODE_40_300_2000), image_node("node2", NODE_250_10)],
            [0, 5],
            id="two images spread on two nodes, prefer the larger image one",
        ),
        pytest.param(
            TEST_40_300,
            [image_node("node1", NODE_40_300_2000), image_node("node2", NODE_250_10)],
            [7, 0],
            id="two images on one node, prefer this node",
        ),
        pytest.param(
            TEST_MIN_MAX,
            [image_node("node1", NODE_4000_30), image_node("node2", NODE_250_10)],
            [100, 0],
            id="if exceed limit, use limit",
        ),
        pytest.param(
            TEST_MIN_MAX,
            [
                image_node("node1", NODE_4000_30),
                image_node("node2", NODE_250_10),
                image_node("node3"),
            ],
            [66, 0, 0],
            id="if exceed limit, use limit (with node which has no images present)",
        ),
        pytest.param(
            TEST_300_600_900,
            [
                image_node("node1", NODE_600_40_900),
                image_node("node2", NODE_300_600_900),
                image_node("node3"),
            ],
            [32, 36, 0],
            id="pod with multiple large images, node2 is preferred",
        ),
        pytest.param(
            TEST_30_40,
            [image_node("node1", NODE_20_30_40), image_node("node2", NODE_4000_30)],
            [1, 0],
            id="pod with multiple small images",
        ),
        pytest.param(
            TEST_30_INIT_300,
            [image_node("node1", NODE_40_300_2000), image_node("node2", NODE_20_30_40)],
            [6, 0],
            id="include InitContainers: two images spread on two nodes, prefer the larger image one",
        ),
    ],
)
def test_image_locality_priority(pod: Pod, nodes: list[Node], want: list[int]) -> None:
    snap = Snapshot.from_objects(nodes)
    plugin = ImageLocality(None, Framework(snapshot=snap))
    state = fw.CycleState()
    assert [plugin.score(state, pod, snap.get(n.name)) for n in nodes] == want


def _fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("root", "root:latest", id="add :latest postfix 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
        pytest.param("root:tag", "root:tag", id="keep it as is 1"),
        pytest.param(
            "root@" + _fake_digest("root"), "root@" + _fake_digest("root"), id="keep it as is 2"
        ),
    ],
)
def test_normalized_image_name(name: str, want: str) -> None:
    assert fw.normalized_image_name(name) == want


@pytest.mark.property
@given(st.lists(st.integers(0, 5000), min_size=1, max_size=4))
def test_score_within_range(sizes: list[int]) -> None:
    images = tuple(image(s, f"gcr.io/i{i}:latest") for i, s in enumerate(sizes))
    nodes = [image_node("node1", images), image_node("node2")]
    snap = Snapshot.from_objects(nodes)
    plugin = ImageLocality(None, Framework(snapshot=snap))
    pod = spec(*(f"gcr.io/i{i}" for i in range(len(sizes))))
    for n in nodes:
        assert 0 <= plugin.score(fw.CycleState(), pod, snap.get(n.name)) <= fw.MAX_NODE_SCORE
