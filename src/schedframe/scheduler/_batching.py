"""Opportunistic batching: reuse the previous pod's scores for a pod with the same signature.

Upstream: ``pkg/scheduler/framework/runtime/batch.go`` (``OpportunisticBatch``, KEP-5598,
gate ``OpportunisticBatching``, beta and on from 1.35), called from ``schedule_one.go``. After
a pod is scheduled, the nodes it could have gone to, best first, are kept with its signature.
The next pod gets the head of that list as a hint when it has the same signature, comes in the
very next scheduling cycle, the previous pod succeeded, the list is younger than
:data:`MAX_BATCH_AGE` and the node the previous pod took now rejects it (one pod per node,
so the remaining order is still right). The hinted node is then filtered alone, like a
nominated node; when it passes the pod goes there without scoring.

The ages are read on the scheduler's clock (virtual in deterministic runs, where no time
passes within a burst of cycles). Upstream's Prometheus series (``batch_attempts_total``,
``batch_cache_flushed_total`` and the two duration histograms) are not exported: the counts
are kept on :class:`OpportunisticBatch` (:attr:`~OpportunisticBatch.attempts`,
:attr:`~OpportunisticBatch.flushes`, :attr:`~OpportunisticBatch.batched_pods`).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Final

import attrs

if TYPE_CHECKING:
    from schedframe.framework import CycleState, NodeInfo, Status
    from schedframe.objects import Pod

__all__ = [
    "BATCH_ATTEMPT_HINT_NOT_USED",
    "BATCH_ATTEMPT_HINT_USED",
    "BATCH_ATTEMPT_NO_HINT",
    "BATCH_FLUSH_EMPTY_LIST",
    "BATCH_FLUSH_EXPIRED",
    "BATCH_FLUSH_NODE_MISSING",
    "BATCH_FLUSH_NODE_NOT_FULL",
    "BATCH_FLUSH_POD_FAILED",
    "BATCH_FLUSH_POD_INCOMPATIBLE",
    "BATCH_FLUSH_POD_NOT_BATCHABLE",
    "BATCH_FLUSH_POD_SKIPPED",
    "MAX_BATCH_AGE",
    "OpportunisticBatch",
    "SortedScoredNodes",
]

log = logging.getLogger("schedframe.scheduler.batching")

#: Upstream ``maxBatchAge``: a kept list older than this (seconds) is dropped.
MAX_BATCH_AGE: Final = 0.5

# Upstream's label values of ``batch_attempts_total`` and ``batch_cache_flushed_total``.
BATCH_ATTEMPT_NO_HINT: Final = "no_hint"
BATCH_ATTEMPT_HINT_USED: Final = "hint_used"
BATCH_ATTEMPT_HINT_NOT_USED: Final = "hint_not_used"
BATCH_FLUSH_POD_FAILED: Final = "pod_failed"
BATCH_FLUSH_POD_SKIPPED: Final = "pod_skipped"
BATCH_FLUSH_NODE_MISSING: Final = "node_missing"
BATCH_FLUSH_NODE_NOT_FULL: Final = "node_not_full"
BATCH_FLUSH_EMPTY_LIST: Final = "empty_list"
BATCH_FLUSH_EXPIRED: Final = "expired"
BATCH_FLUSH_POD_INCOMPATIBLE: Final = "pod_incompatible"
BATCH_FLUSH_POD_NOT_BATCHABLE: Final = "pod_not_batchable"


class SortedScoredNodes:
    """Node names, best first (upstream ``SortedScoredNodes``): :meth:`pop` takes the head."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names = list(names)
        self._head = 0

    def pop(self) -> str:
        """The best remaining node, removed from the list.

        Raises:
            IndexError: the list is empty.
        """
        if self._head >= len(self._names):
            raise IndexError("pop from an empty SortedScoredNodes")
        name = self._names[self._head]
        self._head += 1
        return name

    def __len__(self) -> int:
        return len(self._names) - self._head

    def remaining(self) -> list[str]:
        """The names not yet popped, best first."""
        return self._names[self._head :]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SortedScoredNodes):
            return NotImplemented
        return self.remaining() == other.remaining()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SortedScoredNodes({self.remaining()!r})"


@attrs.define
class _BatchState:
    signature: bytes
    sorted_nodes: SortedScoredNodes
    creation_time: float


@attrs.define
class _LastCycle:
    cycle_count: int = 0
    chosen_node: str = ""
    succeeded: bool = False


class OpportunisticBatch:
    """One profile's batch (upstream ``OpportunisticBatch``).

    Args:
        profile_name: for the logs.
        sign: the pod's signature (``Framework.sign_pod``), ``None`` when it has none.
        get_node: the snapshot's node by name; raises ``KeyError`` when absent.
        run_filter_plugins: ``Framework.run_filter_plugins`` (``None`` is success).
        now: the clock, in seconds.
    """

    def __init__(
        self,
        *,
        profile_name: str,
        sign: Callable[[Pod], bytes | None],
        get_node: Callable[[str], NodeInfo],
        run_filter_plugins: Callable[[CycleState, Pod, NodeInfo], Status | None],
        now: Callable[[], float],
    ) -> None:
        self.profile_name = profile_name
        self._sign = sign
        self._get_node = get_node
        self._run_filter_plugins = run_filter_plugins
        self._now = now
        self.state: _BatchState | None = None
        self.last_cycle = _LastCycle()
        #: Pods placed on a hinted node (upstream ``batchedPods``).
        self.batched_pods = 0
        #: ``batch_attempts_total`` by result.
        self.attempts: Counter[str] = Counter()
        #: ``batch_cache_flushed_total`` by reason.
        self.flushes: Counter[str] = Counter()

    def get_node_hint(
        self, pod: Pod, state: CycleState, cycle_count: int
    ) -> tuple[str, bytes | None]:
        """Upstream ``GetNodeHint``: the node to try first ("" for none) and the pod's
        signature."""
        signature = self._sign(pod)
        if not self._state_compatible(pod, signature, cycle_count, state):
            self.attempts[BATCH_ATTEMPT_NO_HINT] += 1
            log.debug(
                "OpportunisticBatch no node hint available for pod profile=%s pod=%s cycleCount=%d",
                self.profile_name,
                pod.key,
                cycle_count,
            )
            return "", signature
        assert self.state is not None
        hint = self.state.sorted_nodes.pop()
        log.debug(
            "OpportunisticBatch provided node hint profile=%s pod=%s cycleCount=%d hint=%s "
            "remainingNodes=%d",
            self.profile_name,
            pod.key,
            cycle_count,
            hint,
            len(self.state.sorted_nodes),
        )
        return hint, signature

    def store_schedule_results(
        self,
        signature: bytes | None,
        hinted_node: str,
        chosen_node: str,
        other_nodes: SortedScoredNodes | None,
        cycle_count: int,
    ) -> None:
        """Upstream ``StoreScheduleResults``, after a pod got ``chosen_node``: remember the
        cycle and, unless the hint was used, keep ``other_nodes`` (best first) for the next
        pod of the same signature."""
        self.last_cycle = _LastCycle(cycle_count, chosen_node, True)
        if hinted_node == chosen_node:
            # The hint was used: the kept list, one node shorter, stays.
            self.attempts[BATCH_ATTEMPT_HINT_USED] += 1
            self.batched_pods += 1
            return
        if hinted_node:
            self.attempts[BATCH_ATTEMPT_HINT_NOT_USED] += 1
            log.debug(
                "OpportunisticBatch hint not used profile=%s hint=%s chosen=%s",
                self.profile_name,
                hinted_node,
                chosen_node,
            )
        if signature is not None and other_nodes is not None and len(other_nodes) > 0:
            self.state = _BatchState(signature, other_nodes, self._now())
            log.debug(
                "OpportunisticBatch set batch information profile=%s nodes=%d cycleCount=%d",
                self.profile_name,
                len(other_nodes),
                cycle_count,
            )
            return
        reason = BATCH_FLUSH_POD_NOT_BATCHABLE
        if other_nodes is None or len(other_nodes) == 0:
            reason = BATCH_FLUSH_EMPTY_LIST
        self._flush(cycle_count, reason)
        self.state = None

    def _flush(self, cycle_count: int, reason: str) -> None:
        self.flushes[reason] += 1
        log.debug(
            "OpportunisticBatch found unusable state profile=%s cycleCount=%d reason=%s",
            self.profile_name,
            cycle_count,
            reason,
        )

    def state_empty(self) -> bool:
        """No kept list, or an empty one."""
        return self.state is None or len(self.state.sorted_nodes) == 0

    def _state_compatible(
        self, pod: Pod, signature: bytes | None, cycle_count: int, state: CycleState
    ) -> bool:
        if self.state_empty():
            return False
        assert self.state is not None
        if cycle_count != self.last_cycle.cycle_count + 1:
            # Another pod (another profile's, or one that failed) came in between.
            self._flush(cycle_count, BATCH_FLUSH_POD_SKIPPED)
            return False
        if not self.last_cycle.succeeded:
            self._flush(cycle_count, BATCH_FLUSH_POD_FAILED)
            return False
        if signature is None or signature != self.state.signature:
            self._flush(cycle_count, BATCH_FLUSH_POD_INCOMPATIBLE)
            return False
        if self._now() > self.state.creation_time + MAX_BATCH_AGE:
            self._flush(cycle_count, BATCH_FLUSH_EXPIRED)
            return False
        # Only when the previous pod's node now rejects this pod is the rest of the list
        # still in the right order (the used node's new score is unknown).
        try:
            last_node = self._get_node(self.last_cycle.chosen_node)
        except KeyError:
            self._flush(cycle_count, BATCH_FLUSH_NODE_MISSING)
            return False
        status = self._run_filter_plugins(state, pod, last_node)
        if status is None or not status.is_rejected():
            self._flush(cycle_count, BATCH_FLUSH_NODE_NOT_FULL)
            return False
        return True
