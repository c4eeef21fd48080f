"""The nominator's node-name set follows nominations as they come and go."""

from __future__ import annotations

from schedframe.framework import NominatingInfo, NominatingMode, PodInfo
from schedframe.queue._nominator import Nominator
from schedframe.testing.builders import PodWrapper


def _nominate(nominator: Nominator, name: str, node: str) -> PodInfo:
    info = PodInfo(PodWrapper(name).uid(name).obj())
    nominator.add(info, NominatingInfo(node, NominatingMode.OVERRIDE))
    return info


def test_node_names_follow_adds_moves_and_deletes() -> None:
    nominator = Nominator()
    assert nominator.node_names() == frozenset()
    a = _nominate(nominator, "a", "n1")
    b = _nominate(nominator, "b", "n1")
    assert nominator.node_names() == {"n1"}
    assert nominator.node_names() is nominator.node_names()  # kept between changes
    _nominate(nominator, "c", "n2")
    assert nominator.node_names() == {"n1", "n2"}
    nominator.delete(a.pod)
    assert nominator.node_names() == {"n1", "n2"}  # b is still nominated to n1
    nominator.add(b, NominatingInfo("n3", NominatingMode.OVERRIDE))  # moved
    assert nominator.node_names() == {"n2", "n3"}
    nominator.add(b, NominatingInfo("", NominatingMode.OVERRIDE))  # cleared
    assert nominator.node_names() == {"n2"}
    nominator.update(
        PodWrapper("c").uid("c").obj(), PodInfo(PodWrapper("c").uid("c").nominated_node("n4").obj())
    )
    assert nominator.node_names() == {"n4"}
