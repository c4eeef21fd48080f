"""What preemption produces and what a preemption plugin supplies to the Evaluator.

Upstream: ``Candidate``, ``candidate``, ``Interface`` in ``framework/preemption/preemption.go``
and ``extenderv1.Victims``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

import attrs

from schedframe.framework import CycleState, NodeInfo, StateKey, Status

if TYPE_CHECKING:
    from schedframe.objects import Pod, PodDisruptionBudget

__all__ = [
    "CHOSEN_CANDIDATE_KEY",
    "Candidate",
    "DryRun",
    "Interface",
    "PreemptionError",
    "ScoreFunc",
    "Victims",
    "VictimsInPlace",
]

#: Scores a candidate node by name; higher is better (upstream ``func(node string) int64``).
ScoreFunc = Callable[[str], int]


def _pod_tuple(pods: Iterable[Pod]) -> tuple[Pod, ...]:
    return tuple(pods)


@attrs.frozen
class Victims:
    """The pods to evict on one node, most important first, and how many of them violate a
    PodDisruptionBudget (upstream ``extenderv1.Victims``)."""

    pods: tuple[Pod, ...] = attrs.field(converter=_pod_tuple)
    num_pdb_violations: int = 0


@attrs.frozen
class Candidate:
    """A node the preemptor could be nominated to, with the victims that make room there."""

    name: str
    victims: Victims


#: Where :meth:`Evaluator.preempt <schedframe.preemption.Evaluator.preempt>` records the
#: candidate it acted on (node and evicted victims) once the victims have been preempted, so
#: the scheduler can report the preemption (``schedframe_preemption`` observer hook). Absent
#: when the attempt did not preempt anything.
CHOSEN_CANDIDATE_KEY: Final = StateKey[Candidate]("schedframe.preemption/ChosenCandidate")


class PreemptionError(Exception):
    """Dry-run failures on one or more nodes, rendered as upstream's error aggregate.

    One message reads as itself; several read ``[a, b]`` with duplicates dropped.
    """

    def __init__(self, messages: Sequence[str]) -> None:
        self.messages = tuple(messages)
        super().__init__(_aggregate(self.messages))


def _aggregate(messages: Sequence[str]) -> str:
    if len(messages) == 1:
        return messages[0]
    seen: list[str] = []
    for msg in messages:
        if msg not in seen:
            seen.append(msg)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


class Interface(Protocol):
    """What a preemption plugin plugs into the :class:`Evaluator` (upstream ``Interface``).

    DefaultPreemption implements it; a custom preemption plugin can implement it to reuse the
    Evaluator's search, selection and eviction.

    An implementation may also declare
    :class:`~schedframe.framework.batch.DryRunPreparer` (``prepare_dry_run(state, pod, m) ->
    DryRun | None``): shortcuts for one preemption's dry run, or ``None`` for none (see
    :class:`DryRun`).
    """

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random start offset among ``num_nodes`` potential nodes and how many candidates
        the dry run should find before stopping."""
        ...

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        """Node name -> victims, for candidates on distinct nodes."""
        ...

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        """Whether ``pod`` may preempt at all; the string says why not."""
        ...

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]:
        """The fewest pods to evict from ``node_info`` for ``pod`` to fit, most important
        first, with the number of PDB-violating ones; a non-success status when the node cannot
        help. ``state`` and ``node_info`` are copies the method may change."""
        ...

    def ordered_score_funcs(
        self, nodes_to_victims: Mapping[str, Victims]
    ) -> list[ScoreFunc] | None:
        """Score functions applied in order to break ties between candidates; ``None`` or empty
        selects the default criteria of :func:`pick_one_node_for_preemption`."""
        ...


class DryRun(Protocol):
    """Shortcuts a preemption plugin offers for one preemption's dry run.

    An :class:`Interface` implementation may have ``prepare_dry_run(state, pod, m)`` return
    one; :meth:`Evaluator.find_candidates <schedframe.preemption.Evaluator.find_candidates>`
    then passes over the nodes :meth:`cannot_help` rules out and calls this object's
    :meth:`select_victims_on_node` instead of the interface's. Both must leave the candidates
    exactly as they would be without them.

    It may also declare :class:`VictimsInPlace` (``victims_in_place(state, pod, node_info,
    pdbs)``, defined on its class): the same answer as
    :meth:`select_victims_on_node`, worked out from the snapshot's NodeInfo and ``state``
    without copying or changing them, or ``None`` to send that node down the usual path
    (copies, then :meth:`select_victims_on_node`). The Evaluator tries it first.
    """

    def cannot_help(self, node_info: NodeInfo) -> bool:
        """True only when the interface's ``select_victims_on_node``, run on copies of this
        node and of the cycle state, would return a non-success status or no victims. Reads
        the snapshot's NodeInfo; must not change it."""
        ...

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]:
        """The interface's answer for this node (it may skip Filter runs whose verdict it
        already knows, so plugins may see fewer Filter calls)."""
        ...


@runtime_checkable
class VictimsInPlace(Protocol):
    """A :class:`DryRun`'s optional arithmetic victim selection (see :class:`DryRun`):
    ``victims_in_place(state, pod, node_info, pdbs)`` gives ``select_victims_on_node``'s
    answer without copying or changing ``node_info`` and ``state``, or ``None`` to send the
    node down the copying path. Declared by defining it on the DryRun's class."""

    def victims_in_place(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None] | None: ...
