"""The fast-path contract: optional batch and prepared forms of plugin methods (provisional).

A plugin may offer, beside its extension-point methods, faster forms of them that the runtime
uses when they are there: a per-pod prepared ``filter``, verdicts over every node at once from
the snapshot's NumPy columns (:class:`NodeColumns`), scores over many nodes, a queue-sort key,
preemption dry-run shortcuts. Each is a small ``runtime_checkable`` Protocol below; a plugin
*declares* a form by defining its member **on the class** (an instance attribute or a
``__getattr__`` answer never counts, so a plugin cannot grow one by accident). Subclassing the
Protocol is optional and documents the intent.

Every fast form must give exactly the answer of its plain form (the method it stands in for),
node for node; a fast form may always decline (return ``None``), and the runtime then runs the
plain form. :func:`schedframe.testing.conformance.check_plugin` compares the two for a
third-party plugin, and the runtime counts and logs a fast form that raises (see
:mod:`schedframe.runtime`); fast forms can be switched off for bisecting
(``Framework(fast_paths=False)`` or ``SCHEDFRAME_FAST_PATHS=0``).

**Provisional:** this module may change in a minor release, unlike the rest of
:mod:`schedframe.framework`; such a change is announced in the changelog. ``NodeColumns``,
``LabelColumn``, ``EXACT_LIMIT`` and the ``FILTER_*`` verdicts are also importable from
:mod:`schedframe.framework`, as before.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from schedframe.framework._columns import (
    EXACT_LIMIT,
    FILTER_CHECK,
    FILTER_PASS,
    FILTER_REJECT,
    LabelColumn,
    NodeColumns,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from schedframe.framework._cycle_state import CycleState
    from schedframe.framework._status import Status
    from schedframe.framework._types import NodeInfo, NodeToStatus, QueuedPodInfo
    from schedframe.objects import Pod
    from schedframe.preemption import DryRun

    VerdictArray = npt.NDArray[np.int8]
    IntArray = npt.NDArray[np.int64]
    RowArray = npt.NDArray[np.intp]
else:
    VerdictArray = IntArray = RowArray = Any

__all__ = [
    "EXACT_LIMIT",
    "FILTER_CHECK",
    "FILTER_PASS",
    "FILTER_REJECT",
    "BatchFilter",
    "BatchFilterStatuses",
    "BatchNormalize",
    "BatchScore",
    "DryRunPreparer",
    "LabelColumn",
    "ManyScore",
    "NodeColumns",
    "NodeOnlyFilter",
    "PreparedFilter",
    "ResourceBound",
    "SortKey",
    "FAST_PATHS_ENV",
    "declares",
    "fast_paths_from_env",
]


@runtime_checkable
class PreparedFilter(Protocol):
    """A Filter plugin's per-pod prepared ``filter``.

    ``prepare_filter(state, pod)`` is called once per pod after PreFilter and returns a
    function ``node_info -> Status | None`` equal to ``filter(state, pod, node_info)`` for this
    cycle (per-pod work done once), or ``None`` to use ``filter``.
    """

    def prepare_filter(
        self, state: CycleState, pod: Pod
    ) -> Callable[[NodeInfo], Status | None] | None: ...


@runtime_checkable
class BatchFilter(Protocol):
    """A Filter plugin's verdicts over every node at once.

    ``filter_batch(state, pod, columns)`` returns an ``int8`` array of ``columns.size``
    verdicts: :data:`~schedframe.framework.FILTER_PASS` where ``filter`` would pass the node,
    :data:`~schedframe.framework.FILTER_REJECT` where it would reject it (Unschedulable or
    UnschedulableAndUnresolvable), and :data:`~schedframe.framework.FILTER_CHECK` where it does
    not know (the runtime then calls ``filter`` on that node). ``None`` declines the pod.
    """

    def filter_batch(
        self, state: CycleState, pod: Pod, columns: NodeColumns
    ) -> VerdictArray | None: ...


@runtime_checkable
class BatchFilterStatuses(Protocol):
    """The statuses of rows a :class:`BatchFilter` rejected.

    ``filter_batch_statuses(state, pod, columns, rows)`` returns one status per row, equal to
    what ``filter`` returns on that node, or ``None`` to let ``filter`` run on each.
    """

    def filter_batch_statuses(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: RowArray
    ) -> Sequence[Status | None] | None: ...


@runtime_checkable
class ManyScore(Protocol):
    """A Score plugin's scores of many nodes in one call.

    ``score_many(state, pod, nodes)`` returns ``[score(state, pod, n) for n in nodes]`` (each
    an ``int``), or ``None`` to let ``score`` run on each node.
    """

    def score_many(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> list[int] | None: ...


@runtime_checkable
class BatchScore(Protocol):
    """A Score plugin's scores over rows of the snapshot's columns.

    ``score_batch(state, pod, columns, rows)`` returns an ``int64`` array with the score of
    each row, equal to ``score`` on that node, or ``None`` to decline.
    """

    def score_batch(
        self, state: CycleState, pod: Pod, columns: NodeColumns, rows: RowArray
    ) -> IntArray | None: ...


@runtime_checkable
class BatchNormalize(Protocol):
    """A Score plugin's ``normalize_score`` over an array.

    ``normalize_batch(state, pod, scores)`` returns the normalised ``int64`` array, equal to
    what ``normalize_score`` leaves in a ``NodeScoreList`` of those scores, or ``None``.
    """

    def normalize_batch(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray | None: ...


@runtime_checkable
class SortKey(Protocol):
    """A QueueSort plugin's order as a key: ``less(a, b)`` exactly when
    ``sort_key(a) < sort_key(b)``, over keys that are totally ordered (see
    :class:`schedframe.framework.QueueSortPlugin`)."""

    def sort_key(self, qpi: QueuedPodInfo) -> Any: ...


@runtime_checkable
class NodeOnlyFilter(Protocol):
    """A Filter plugin that says whether its ``filter`` reads the node's pods.

    ``filter_reads_node_pods = False`` (a class attribute) declares that the verdict depends
    on the node object only (labels, taints, ...), never on the pods placed on it: preemption
    may then decide victims without re-running this filter for every removal. A plugin
    without it is taken to read the pods.
    """

    filter_reads_node_pods: ClassVar[bool]


@runtime_checkable
class DryRunPreparer(Protocol):
    """A preemption plugin's dry-run shortcuts (see :class:`schedframe.preemption.DryRun`).

    ``prepare_dry_run(state, pod, m)`` returns shortcuts for one preemption's dry run, or
    ``None`` for none.
    """

    def prepare_dry_run(self, state: CycleState, pod: Pod, m: NodeToStatus) -> DryRun | None: ...


@runtime_checkable
class ResourceBound(Protocol):
    """A Filter plugin that rejects a node whose plain resources the pod would exceed.

    ``resource_bound(state)`` returns, for the pod of ``state`` (after PreFilter), its
    ``(milli_cpu, memory, ephemeral_storage)`` request and whether that is all it asks for
    (``True`` when no extended or other resource counts), or ``None`` when this plugin does
    not bound the pod in this cycle. Declaring it promises: the plugin's ``filter`` rejects a
    node holding ``n`` pods when ``n + 1`` exceeds its ``pods`` allocatable, or when any of
    the three requests is positive and above what its allocatable leaves beside the pods'
    requests; and, when the second item is ``True``, passes it otherwise. Preemption reads
    it to decide victims by arithmetic (NodeResourcesFit declares it).
    """

    def resource_bound(self, state: CycleState) -> tuple[tuple[int, int, int], bool] | None: ...


#: (class, Protocol) -> whether the class declares the Protocol's members.
_DECLARES: dict[tuple[type, type], bool] = {}


def _members(proto: type) -> tuple[str, ...]:
    return tuple(
        name
        for name in (*vars(proto), *getattr(proto, "__annotations__", {}))
        if not name.startswith("_") and name not in ("register",)
    )


def declares(plugin: object, proto: type) -> bool:
    """Whether ``plugin``'s class declares the fast form ``proto`` (one of this module's
    Protocols): ``isinstance(plugin, proto)`` with every member defined on the class, never
    an instance attribute. Answered once per plugin class."""
    klass = type(plugin)
    key = (klass, proto)
    found = _DECLARES.get(key)
    if found is None:
        found = isinstance(plugin, proto) and all(
            any(name in vars(k) for k in klass.__mro__ if k is not proto)
            for name in _members(proto)
        )
        _DECLARES[key] = found
    return found


#: The environment variable that turns fast paths off for bisecting. ``0``, ``false``, ``no``
#: or ``off`` (any case) turns them off; anything else, or unset, leaves them on.
FAST_PATHS_ENV = "SCHEDFRAME_FAST_PATHS"


def fast_paths_from_env() -> bool:
    """Whether fast paths are on by :data:`FAST_PATHS_ENV` (read when a Framework is built)."""
    value = os.environ.get(FAST_PATHS_ENV, "").strip().lower()
    return value not in ("0", "false", "no", "off")
