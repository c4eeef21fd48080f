"""Node names bucketed by zone, listed round robin across zones (upstream ``node_tree.go``)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from schedframe.cache._errors import CacheError

if TYPE_CHECKING:
    from schedframe.objects import Node

__all__ = ["NodeTree", "get_zone_key"]

_log = logging.getLogger("schedframe.cache")

LABEL_TOPOLOGY_ZONE: Final = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION: Final = "topology.kubernetes.io/region"
LABEL_FAILURE_DOMAIN_BETA_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION: Final = "failure-domain.beta.kubernetes.io/region"


def get_zone_key(node: Node) -> str:
    """The zone a node is bucketed in: ``region + ":\\x00:" + zone``, ``""`` without either.

    Mirrors ``k8s.io/component-helpers/node/topology.GetZoneKey``: the deprecated
    ``failure-domain.beta`` labels win over the ``topology.kubernetes.io`` ones when present.
    """
    labels = node.metadata.labels
    if not labels:
        return ""
    zone = labels.get(LABEL_FAILURE_DOMAIN_BETA_ZONE)
    if zone is None:
        zone = labels.get(LABEL_TOPOLOGY_ZONE, "")
    region = labels.get(LABEL_FAILURE_DOMAIN_BETA_REGION)
    if region is None:
        region = labels.get(LABEL_TOPOLOGY_REGION, "")
    if not region and not zone:
        return ""
    # The NUL guards against a colon inside region or zone names, as upstream says.
    return region + ":\x00:" + zone


class NodeTree:
    """Node names per zone key; :meth:`list` interleaves zones (upstream ``nodeTree``).

    Not thread-safe: the cache calls it under its lock.
    """

    __slots__ = ("_members", "num_nodes", "tree", "version", "zones")

    def __init__(self, nodes: tuple[Node, ...] | list[Node] = ()) -> None:
        #: zone key -> node names in insertion order.
        self.tree: dict[str, list[str]] = {}
        #: zone keys in the order they first appeared.
        self.zones: list[str] = []
        self.num_nodes = 0
        #: Bumped whenever :meth:`list` may answer differently; the cache rebuilds the
        #: snapshot's node list when it moves.
        self.version = 0
        #: zone key -> the names of ``tree[zone]`` as a set (membership in O(1): a list scan
        #: made listing 5,000 nodes at start-up quadratic); rebuilt when out of step.
        self._members: dict[str, set[str]] = {}
        for node in nodes:
            self.add_node(node)

    def copy(self) -> NodeTree:
        """An independent copy (the same zones and names in the same order)."""
        other = NodeTree()
        other.tree = {zone: list(names) for zone, names in self.tree.items()}
        other.zones = list(self.zones)
        other.num_nodes = self.num_nodes
        other.version = self.version
        return other

    def add_node(self, node: Node) -> None:
        """Add ``node`` to its zone; a name already in that zone is left alone."""
        zone = get_zone_key(node)
        name = node.metadata.name
        names = self.tree.get(zone)
        if names is not None:
            members = self._zone_members(zone, names)
            if name in members:
                _log.info("Did not add to the NodeTree because it already exists: node=%s", name)
                return
            names.append(name)
            members.add(name)
        else:
            self.zones.append(zone)
            self.tree[zone] = [name]
            self._members[zone] = {name}
        self.num_nodes += 1
        self.version += 1

    def remove_node(self, node: Node) -> None:
        """Remove ``node`` from its zone (dropping the zone when it empties).

        Raises:
            CacheError: ``node "n" in group "z" was not found`` when it is not in that zone.
        """
        zone = get_zone_key(node)
        name = node.metadata.name
        names = self.tree.get(zone)
        if names is not None and name in self._zone_members(zone, names):
            names.remove(name)
            self._members[zone].discard(name)
            if not names:
                del self.tree[zone]
                del self._members[zone]
                self.zones.remove(zone)
            self.num_nodes -= 1
            self.version += 1
            return
        _log.error("Did not remove Node in NodeTree because it was not found: node=%s", name)
        raise CacheError(f'node "{_go_quote(name)}" in group "{_go_quote(zone)}" was not found')

    def _zone_members(self, zone: str, names: list[str]) -> set[str]:
        members = self._members.get(zone)
        if members is None or len(members) != len(names):
            # ``tree`` was filled or changed from outside (a copy): index it again.
            members = self._members[zone] = set(names)
        return members

    def update_node(self, old: Node | None, new: Node) -> None:
        """Move a node whose zone changed; a node that kept its zone is left in place."""
        old_zone = get_zone_key(old) if old is not None else ""
        if old_zone == get_zone_key(new):
            return
        if old is not None:
            try:
                self.remove_node(old)
            except CacheError:
                pass  # upstream ignores whether the old node was there
        self.add_node(new)

    def list(self) -> list[str]:
        """Every node name, one per zone per round: zone order, then position in the zone.

        Raises:
            CacheError: when the zones run out before ``num_nodes`` names (a corrupt tree).
        """
        if not self.zones:
            return []
        out: list[str] = []
        buckets = [self.tree[z] for z in self.zones]
        if len(buckets) == 1:
            out = list(buckets[0])
        else:
            depth = max(len(b) for b in buckets)
            for index in range(depth):
                for bucket in buckets:
                    if index < len(bucket):
                        out.append(bucket[index])
        if len(out) < self.num_nodes:
            raise CacheError("all zones exhausted before reaching count of nodes expected")
        return out


def _go_quote(text: str) -> str:
    # Go's %q escapes the NUL of a zone key as \x00.
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\x00", "\\x00")
