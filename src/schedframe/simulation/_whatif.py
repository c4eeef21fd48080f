"""Counterfactuals: the smallest change that makes pending pods schedule, each one checked by
scheduling it in a fork of the cluster.

Kinds of change, each searched for its smallest amount: add nodes of a shape (1, 2, ...
nodes), tolerate a taint, drop a nodeSelector key, drop the required node affinity, drop one
required pod (anti-)affinity term, raise a topology spread constraint's ``maxSkew`` (by 1, 2,
...), lower one resource request (the largest value that fits, to a granularity), move one
running pod elsewhere.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from schedframe.objects import Node, Pod

if TYPE_CHECKING:
    from schedframe.scheduler import Scheduler

__all__ = ["Suggestion", "counterfactuals", "try_change"]

# The granularity of a request search, per resource (millicores for cpu, bytes otherwise).
_REQUEST_STEPS: Final[Mapping[str, int]] = {"cpu": 10, "memory": 1 << 20}
_DEFAULT_STEP: Final = 1
_NODE_PREFIX: Final = "whatif-node-"


@attrs.frozen(kw_only=True)
class Suggestion:
    """One verified change that makes every asked pod schedule.

    Attributes:
        kind: ``addNodes``, ``tolerateTaint``, ``dropNodeSelector``, ``dropNodeAffinity``,
            ``dropPodAffinityTerm``, ``dropPodAntiAffinityTerm``, ``raiseMaxSkew``,
            ``lowerRequest`` or ``movePod``.
        description: the change in words.
        amount: its size: nodes added, the new ``maxSkew``, the new request (millicores for
            cpu), or 1 (one taint, key, term or pod).
        target: what is changed: the taint ``key=value:effect``, the selector key, the term
            index, the constraint index, the resource name or the moved pod.
        placements: where the asked pods (and a moved pod) went in the checking fork.
    """

    kind: str
    description: str
    amount: int = 1
    target: str = ""
    placements: Mapping[str, str] = attrs.field(factory=dict)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        return {
            "kind": self.kind,
            "description": self.description,
            "amount": self.amount,
            "target": self.target,
            "placements": dict(sorted(self.placements.items())),
        }


def _rebuild(pod: Pod, change: Callable[[dict[str, object]], None]) -> Pod:
    from schedframe.objects import from_dict, to_dict

    doc = copy.deepcopy(to_dict(pod))
    change(doc)
    out = from_dict(doc)
    assert isinstance(out, Pod)
    return out


def _spec(doc: dict[str, object]) -> dict[str, object]:
    spec = doc.setdefault("spec", {})
    assert isinstance(spec, dict)
    return spec


def try_change(
    scheduler: Scheduler,
    pods: Sequence[Pod],
    *,
    nodes: Iterable[Node] = (),
    move: Pod | None = None,
) -> dict[str, str] | None:
    """Schedule ``pods`` in a fork of ``scheduler`` after adding ``nodes`` and deleting
    ``move`` (recreated unbound after ``pods``, so it must be placed again too); the
    placements when every one of them was bound, else ``None``. The fork is discarded."""
    from schedframe.backends import BackendFork

    fork = scheduler.fork()
    backend = fork.backend
    assert isinstance(backend, BackendFork)
    try:
        for node in nodes:
            backend.create(node)
        if move is not None:
            backend.delete(move)
        for pod in pods:
            backend.create(pod)
        fork.run_until_idle()
        moved: list[Pod] = []
        if move is not None:
            again = move.with_changes(
                node_name="",
                metadata={"uid": "", "resource_version": ""},
            )
            backend.create(again)
            moved.append(again)
            fork.run_until_idle()
        placements: dict[str, str] = {}
        for pod in (*pods, *moved):
            stored = backend.get("Pod", pod.name, pod.namespace)
            if not isinstance(stored, Pod) or not stored.spec.node_name:
                return None
            placements[pod.key] = stored.spec.node_name
        # A pod preempted to make room counts as not moved but evicted: refuse that change.
        moved_key = move.key if move is not None else ""
        for other in scheduler.backend.list("Pod"):
            if isinstance(other, Pod) and other.spec.node_name and other.key != moved_key:
                if backend.get("Pod", other.name, other.namespace) is None:
                    return None
        return placements
    finally:
        fork.stop()
        backend.discard()


def _node_shape(scheduler: Scheduler, shape: Node | None) -> Node:
    if shape is not None:
        return shape
    nodes = [n for n in scheduler.backend.list("Node") if isinstance(n, Node)]
    if not nodes:
        raise ValueError("the cluster has no node to copy the shape of; pass node_shape")
    return max(nodes, key=lambda n: (n.allocatable.get("cpu", 0), n.allocatable.get("memory", 0)))


def _new_nodes(shape: Node, count: int) -> list[Node]:
    from schedframe.objects import from_dict, to_dict

    out = []
    for i in range(1, count + 1):
        doc = copy.deepcopy(to_dict(shape))
        name = f"{_NODE_PREFIX}{i}"
        meta = doc["metadata"]
        assert isinstance(meta, dict)
        for drop in ("uid", "resourceVersion", "creationTimestamp"):
            meta.pop(drop, None)
        meta["name"] = name
        labels = dict(meta.get("labels") or {})
        if "kubernetes.io/hostname" in labels:
            labels["kubernetes.io/hostname"] = name
        meta["labels"] = labels
        spec = doc.get("spec")
        if isinstance(spec, dict):
            spec.pop("unschedulable", None)
        node = from_dict(doc)
        assert isinstance(node, Node)
        out.append(node)
    return out


def counterfactuals(
    pods: Sequence[Pod],
    scheduler: Scheduler,
    *,
    node_shape: Node | None = None,
    max_nodes: int = 10,
    max_moves: int = 50,
    kinds: Iterable[str] | None = None,
) -> list[Suggestion]:
    """For ``pods`` that do not all schedule on ``scheduler``'s cluster, the smallest change
    of each kind that makes them all schedule, each one verified in a fork.

    Args:
        pods: the pending pod, or the pods of a workload (a change to a pod's spec is made to
            every pod sharing that part of the spec).
        scheduler: the live scheduler; never changed.
        node_shape: the node to add copies of; by default a copy of the largest node.
        max_nodes: give up adding nodes beyond this many.
        max_moves: how many running pods to try moving (lowest priority first).
        kinds: only these kinds of change (see :class:`Suggestion`); all by default.

    Returns:
        One suggestion per kind and target that works, smallest first within a kind; empty
        when the pods already schedule.
    """
    want = set(kinds) if kinds is not None else None
    pods = list(pods)
    if try_change(scheduler, pods) is not None:
        return []
    out: list[Suggestion] = []

    def wanted(kind: str) -> bool:
        return want is None or kind in want

    def check(kind: str, description: str, changed: Sequence[Pod], **fields: object) -> bool:
        placed = try_change(scheduler, changed)
        if placed is None:
            return False
        out.append(
            Suggestion(kind=kind, description=description, placements=placed, **fields)  # type: ignore[arg-type]
        )
        return True

    if wanted("addNodes"):
        shape = _node_shape(scheduler, node_shape)
        for count in range(1, max_nodes + 1):
            placed = try_change(scheduler, pods, nodes=_new_nodes(shape, count))
            if placed is not None:
                out.append(
                    Suggestion(
                        kind="addNodes",
                        description=f"add {count} node(s) shaped like {shape.metadata.name}",
                        amount=count,
                        target=shape.metadata.name,
                        placements=placed,
                    )
                )
                break

    first = pods[0]
    if wanted("tolerateTaint"):
        taints = {
            (t.key, t.value, t.effect)
            for n in scheduler.backend.list("Node")
            if isinstance(n, Node)
            for t in n.spec.taints
            if t.effect in ("NoSchedule", "NoExecute")
        }
        for key, value, effect in sorted(taints):
            toleration = {"key": key, "operator": "Equal", "value": value, "effect": effect}

            def tolerate(doc: dict[str, object], tol: dict[str, str] = toleration) -> None:
                spec = _spec(doc)
                spec["tolerations"] = [*(spec.get("tolerations") or []), tol]  # type: ignore[misc]

            text = f"{key}={value}:{effect}" if value else f"{key}:{effect}"
            check(
                "tolerateTaint",
                f"tolerate the taint {text}",
                [_rebuild(p, tolerate) for p in pods],
                target=text,
            )

    if wanted("dropNodeSelector"):
        for key in sorted(first.spec.node_selector):

            def drop_key(doc: dict[str, object], k: str = key) -> None:
                selector = dict(_spec(doc).get("nodeSelector") or {})  # type: ignore[call-overload]
                selector.pop(k, None)
                _spec(doc)["nodeSelector"] = selector

            check(
                "dropNodeSelector",
                f"drop nodeSelector {key}",
                [_rebuild(p, drop_key) for p in pods],
                target=key,
            )

    affinity = first.spec.affinity
    if wanted("dropNodeAffinity") and affinity is not None and affinity.node_affinity is not None:

        def drop_required(doc: dict[str, object]) -> None:
            node_aff = _spec(doc)["affinity"]["nodeAffinity"]  # type: ignore[index]
            node_aff.pop("requiredDuringSchedulingIgnoredDuringExecution", None)

        if affinity.node_affinity.required is not None:
            check(
                "dropNodeAffinity",
                "drop the required node affinity",
                [_rebuild(p, drop_required) for p in pods],
                target="requiredDuringSchedulingIgnoredDuringExecution",
            )

    for kind, field, label in (
        ("dropPodAffinityTerm", "podAffinity", "pod affinity"),
        ("dropPodAntiAffinityTerm", "podAntiAffinity", "pod anti-affinity"),
    ):
        if not wanted(kind) or affinity is None:
            continue
        from schedframe.objects import to_dict

        spec_doc: Any = to_dict(first).get("spec") or {}
        section: Any = (spec_doc.get("affinity") or {}).get(field) or {}
        terms = section.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        for index in range(len(terms)):

            def drop_term(doc: dict[str, object], i: int = index, f: str = field) -> None:
                section = _spec(doc)["affinity"][f]  # type: ignore[index]
                required = section["requiredDuringSchedulingIgnoredDuringExecution"]
                del required[i]

            check(
                kind,
                f"drop required {label} term {index}",
                [_rebuild(p, drop_term) for p in pods],
                target=str(index),
            )

    if wanted("raiseMaxSkew"):
        # The skew never exceeds the number of pods: that many always satisfies the
        # constraint, so search (maxSkew, pods + 1] for the smallest that schedules.
        pod_count = len(scheduler.backend.list("Pod")) + len(pods)
        for index, constraint in enumerate(first.spec.topology_spread_constraints):
            if constraint.when_unsatisfiable != "DoNotSchedule":
                continue

            def with_skew(skew: int, i: int = index) -> list[Pod]:
                def set_skew(doc: dict[str, object]) -> None:
                    spec: Any = _spec(doc)
                    spec["topologySpreadConstraints"][i]["maxSkew"] = skew

                return [_rebuild(p, set_skew) for p in pods]

            low, high = constraint.max_skew + 1, max(pod_count + 1, constraint.max_skew + 1)
            placed = try_change(scheduler, with_skew(high))
            if placed is None:
                continue
            while low < high:
                mid = (low + high) // 2
                trial = try_change(scheduler, with_skew(mid))
                if trial is not None:
                    high, placed = mid, trial
                else:
                    low = mid + 1
            out.append(
                Suggestion(
                    kind="raiseMaxSkew",
                    description=f"raise topologySpreadConstraints[{index}].maxSkew from "
                    f"{constraint.max_skew} to {high}",
                    amount=high,
                    target=str(index),
                    placements=placed,
                )
            )

    if wanted("lowerRequest"):
        for resource in sorted(first.requests):
            found = _lower_request(scheduler, pods, resource)
            if found is not None:
                out.append(found)

    if wanted("movePod"):
        running = sorted(
            (p for p in scheduler.backend.list("Pod") if isinstance(p, Pod) and p.spec.node_name),
            key=lambda p: (p.spec.priority or 0, p.key),
        )[:max_moves]
        for candidate in running:
            placed = try_change(scheduler, pods, move=candidate)
            if placed is not None:
                out.append(
                    Suggestion(
                        kind="movePod",
                        description=f"move {candidate.key} off {candidate.spec.node_name}",
                        target=candidate.key,
                        placements=placed,
                    )
                )
                break
    return out


def _with_request(pod: Pod, resource: str, value: int) -> Pod:
    """``pod`` with its request of ``resource`` set to ``value`` (the first container that
    requests it gets the new amount; the others keep theirs)."""
    others = pod.requests.get(resource, 0) - _first_request(pod, resource)

    def change(doc: dict[str, object]) -> None:
        containers: Any = _spec(doc).get("containers", [])
        for container in containers:
            requests = container.get("resources", {}).get("requests", {})
            if resource in requests:
                amount = max(0, value - others)
                requests[resource] = f"{amount}m" if resource == "cpu" else str(amount)
                return

    return _rebuild(pod, change)


def _first_request(pod: Pod, resource: str) -> int:
    for container in pod.spec.containers:
        if resource in container.requests:
            return container.requests[resource]
    return 0


def _lower_request(scheduler: Scheduler, pods: Sequence[Pod], resource: str) -> Suggestion | None:
    """The largest request of ``resource`` (to its step) with which every pod schedules."""
    first = pods[0]
    current = first.requests.get(resource, 0)
    if _first_request(first, resource) == 0:
        return None
    step = _REQUEST_STEPS.get(resource, _DEFAULT_STEP)
    others = current - _first_request(first, resource)
    low, high = others // step, (current - 1) // step  # in steps; ``low`` may not fit either

    def fits(steps: int) -> dict[str, str] | None:
        value = max(others, steps * step)
        return try_change(scheduler, [_with_request(p, resource, value) for p in pods])

    placed = fits(low)
    if placed is None:
        return None
    best, best_placed = low, placed
    while low < high:
        mid = (low + high + 1) // 2
        placed = fits(mid)
        if placed is not None:
            best, best_placed, low = mid, placed, mid
        else:
            high = mid - 1
    value = max(others, best * step)
    shown = f"{value}m" if resource == "cpu" else str(value)
    return Suggestion(
        kind="lowerRequest",
        description=f"lower the {resource} request from "
        f"{f'{current}m' if resource == 'cpu' else current} to {shown}",
        amount=value,
        target=resource,
        placements=best_placed,
    )
