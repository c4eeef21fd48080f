"""Columnar node data: the snapshot's nodes as NumPy arrays, for batch plugins.

A :class:`NodeColumns` is built by :meth:`schedframe.cache.Snapshot.columns` and kept up to
date row by row as the cache copies changed NodeInfos into the snapshot, so a scheduling cycle
pays for the few nodes that changed, not for every node. Row ``i`` describes
``snapshot.list()[i]``.

Batch plugins (``filter_batch``, ``score_batch``, ``normalize_batch``; see
:doc:`/explanation/performance`) read these arrays instead of calling their per-node method on
thousands of NodeInfos. They must give exactly the per-node answers; when the arrays cannot
(for instance :attr:`NodeColumns.exact` is false) they return ``None`` and the framework uses
the per-node path.

NumPy is imported when the first columns are built, never by ``import schedframe``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, overload

from schedframe._rows import picker

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from schedframe.framework._types import NodeInfo, PodInfo

    IntArray = npt.NDArray[np.int64]
    BoolArray = npt.NDArray[np.bool_]
    CodeArray = npt.NDArray[np.int32]
    VerdictArray = npt.NDArray[np.int8]
else:
    IntArray = BoolArray = CodeArray = VerdictArray = Any

__all__ = [
    "FILTER_CHECK",
    "FILTER_PASS",
    "FILTER_REJECT",
    "EXACT_LIMIT",
    "LabelColumn",
    "NodeColumns",
]

#: Batch filter verdict: the plugin's ``filter`` would pass the node.
FILTER_PASS: Final = 0
#: Batch filter verdict: undecided here; the framework calls the plugin's ``filter`` on the node.
FILTER_CHECK: Final = 1
#: Batch filter verdict: the plugin's ``filter`` would reject the node (Unschedulable or
#: UnschedulableAndUnresolvable). The per-node path still writes the status when one is needed.
FILTER_REJECT: Final = 2

#: Integer columns are exact while every value lies strictly within this bound: float64 then
#: holds them without rounding and ``value * 100`` cannot overflow int64.
EXACT_LIMIT: Final = 2**53


_INT_FIELDS: Final = (
    "allocatable_cpu",
    "allocatable_memory",
    "allocatable_ephemeral_storage",
    "allocatable_pods",
    "requested_cpu",
    "requested_memory",
    "requested_ephemeral_storage",
    "non_zero_requested_cpu",
    "non_zero_requested_memory",
    "num_pods",
)
_BOOL_FIELDS: Final = (
    "unschedulable",
    "hard_taints",
    "prefer_no_schedule_taints",
    "used_ports",
    "images",
)


def _row(info: NodeInfo) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    allocatable = info.allocatable
    requested = info.requested
    non_zero = info.non_zero_requested
    ints = (
        allocatable.get("cpu", 0),
        allocatable.get("memory", 0),
        allocatable.get("ephemeral-storage", 0),
        allocatable.get("pods", 0),
        requested.get("cpu", 0),
        requested.get("memory", 0),
        requested.get("ephemeral-storage", 0),
        non_zero.get("cpu", 0),
        non_zero.get("memory", 0),
        len(info.pods),
    )
    node = info.node
    hard = prefer = unschedulable = False
    if node is not None:
        unschedulable = bool(node.spec.unschedulable)
        for taint in node.spec.taints:
            if taint.effect == "PreferNoSchedule":
                prefer = True
            elif taint.effect in ("NoSchedule", "NoExecute"):
                hard = True
    bools = (unschedulable, hard, prefer, bool(info.used_ports), bool(info.image_states))
    return ints, bools


def _label(info: NodeInfo, key: str) -> str | None:
    node = info.node
    if node is None:
        return None
    return node.metadata.labels.get(key)


def _added_sums(added: Sequence[Sequence[PodInfo]]) -> IntArray:
    # Per group of pods, one row: requested cpu, memory and ephemeral storage, non-zero cpu
    # and memory, whether any host port is taken (0 or 1), and the pod count (the layout of
    # NodeColumns.with_pods_added's ``sums``). A value beyond int64 is clipped to
    # EXACT_LIMIT, which still marks its row inexact.
    import numpy as np

    if not added:
        return np.zeros((0, 7), dtype=np.int64)
    if all(len(infos) == 1 for infos in added):  # the usual case: one nominated pod a node
        cpu, memory, storage, nz_cpu, nz_memory, ports = map(
            list, zip(*[infos[0]._request_sums for infos in added], strict=True)
        )
        counts = [1] * len(added)
    else:
        sums: list[tuple[int, int, int, int, int, bool]] = []
        for infos in added:
            c = m = e = nc = nm = 0
            port = False
            for info in infos:
                pc, pm, pe, pnc, pnm, pport = info._request_sums
                c += pc
                m += pm
                e += pe
                nc += pnc
                nm += pnm
                port = port or pport
            sums.append((c, m, e, nc, nm, port))
        cpu, memory, storage, nz_cpu, nz_memory, ports = map(list, zip(*sums, strict=True))
        counts = [len(infos) for infos in added]
    columns = []
    for values in (cpu, memory, storage, nz_cpu, nz_memory, ports, counts):
        try:
            columns.append(np.array(values, dtype=np.int64))
        except OverflowError:  # beyond int64: those rows are inexact
            columns.append(
                np.array(
                    [v if -EXACT_LIMIT < v < EXACT_LIMIT else EXACT_LIMIT for v in values],
                    dtype=np.int64,
                )
            )
    return np.column_stack(columns)


class _CopiesWithPods(Sequence["NodeInfo"]):
    """NodeInfo copies with pods added, each made on first access."""

    def __init__(self, bases: list[NodeInfo], added: Sequence[Sequence[PodInfo]]) -> None:
        self._bases = bases
        self._added = added
        self._made: dict[int, NodeInfo] = {}

    def __len__(self) -> int:
        return len(self._bases)

    @overload
    def __getitem__(self, index: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[NodeInfo]: ...

    def __getitem__(self, index: int | slice) -> NodeInfo | Sequence[NodeInfo]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self._bases)
        made = self._made.get(index)
        if made is None:
            made = self._bases[index].clone()
            for info in self._added[index]:
                made.add_pod(info)
            self._made[index] = made
        return made


class LabelColumn:
    """One label key over every row: an integer code per row (``-1`` where the node lacks the
    label) and the distinct values, ``values[code]``.

    Attributes:
        codes: int32 array, one code per row.
        values: the distinct values seen, indexed by code (values stay once seen, even when no
            node has them any more).
        code_of: value -> code.
    """

    __slots__ = ("code_of", "codes", "key", "values")

    def __init__(self, key: str, infos: Sequence[NodeInfo]) -> None:
        import numpy as np

        self.key = key
        self.values: list[str] = []
        self.code_of: dict[str, int] = {}
        self.codes: CodeArray = np.fromiter(
            (self._code(_label(info, key)) for info in infos), dtype=np.int32, count=len(infos)
        )

    def _code(self, value: str | None) -> int:
        if value is None:
            return -1
        code = self.code_of.get(value)
        if code is None:
            code = len(self.values)
            self.code_of[value] = code
            self.values.append(value)
        return code

    def update(self, row: int, info: NodeInfo) -> None:
        self.codes[row] = self._code(_label(info, self.key))

    def copy(self) -> LabelColumn:
        """An independent copy (values seen, codes and rows)."""
        column = LabelColumn.__new__(LabelColumn)
        column.key = self.key
        column.values = list(self.values)
        column.code_of = dict(self.code_of)
        column.codes = self.codes.copy()
        return column

    @classmethod
    def taken_from(cls, other: LabelColumn, rows: npt.NDArray[np.intp]) -> LabelColumn:
        """The column of ``other``'s ``rows`` (same codes and values)."""
        column = cls.__new__(cls)
        column.key = other.key
        column.values = other.values
        column.code_of = other.code_of
        column.codes = other.codes[rows]
        return column


class NodeColumns:
    """The snapshot's nodes, one row each, as NumPy arrays (see the module docstring).

    Integer arrays (``int64``): ``allocatable_cpu`` (millicores), ``allocatable_memory``,
    ``allocatable_ephemeral_storage``, ``allocatable_pods``, ``requested_cpu``,
    ``requested_memory``, ``requested_ephemeral_storage``, ``non_zero_requested_cpu``,
    ``non_zero_requested_memory``, ``num_pods`` (pods on the node, assumed ones included).

    Boolean arrays: ``unschedulable`` (``spec.unschedulable``), ``hard_taints`` (a NoSchedule
    or NoExecute taint), ``prefer_no_schedule_taints``, ``used_ports`` (a host port is taken),
    ``images`` (the node reports images).

    Attributes:
        infos: the NodeInfos, row by row (the snapshot's own list).
        generations: int64, each row's NodeInfo generation when last read (a row's
            generation moves whenever its node or pods change; a plugin keeping per-row data
            across cycles compares a copy of this array with the current one).
        names: node names, row by row.
        index: node name -> row.
        size: the number of rows.
        exact: every integer lies within ``±EXACT_LIMIT``; batch plugins doing arithmetic
            return ``None`` otherwise, and the per-node path (Python integers) answers.
    """

    allocatable_cpu: IntArray
    allocatable_memory: IntArray
    allocatable_ephemeral_storage: IntArray
    allocatable_pods: IntArray
    requested_cpu: IntArray
    requested_memory: IntArray
    requested_ephemeral_storage: IntArray
    non_zero_requested_cpu: IntArray
    non_zero_requested_memory: IntArray
    num_pods: IntArray
    unschedulable: BoolArray
    hard_taints: BoolArray
    prefer_no_schedule_taints: BoolArray
    used_ports: BoolArray
    images: BoolArray

    def __init__(self, infos: Sequence[NodeInfo]) -> None:
        import numpy as np

        self.infos: Sequence[NodeInfo] = infos
        self.names: list[str] = [info.name for info in infos]
        self.index: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        self.size = len(infos)
        self.generations: IntArray = np.fromiter(
            (info.generation for info in infos), dtype=np.int64, count=len(infos)
        )
        self._nodes: list[object] = [info.node for info in infos]
        self._labels: dict[str, LabelColumn] = {}
        # (base columns, rows of base) for columns derived from another (with_pods_added).
        self._source: tuple[NodeColumns, npt.NDArray[np.intp]] | None = None
        self._inexact_rows: set[int] = set()
        rows = [_row(info) for info in infos]
        n = len(rows)
        width = len(_INT_FIELDS)
        try:
            ints = np.array([r[0] for r in rows], dtype=np.int64).reshape(n, width)
        except OverflowError:  # a value beyond int64: clip it, the row is inexact anyway
            ints = np.array(
                [
                    [v if -EXACT_LIMIT < v < EXACT_LIMIT else EXACT_LIMIT for v in r[0]]
                    for r in rows
                ],
                dtype=np.int64,
            ).reshape(n, width)
        beyond = (ints <= -EXACT_LIMIT) | (ints >= EXACT_LIMIT)
        if beyond.any():
            self._inexact_rows.update(np.flatnonzero(beyond.any(axis=1)).tolist())
            ints[beyond] = 0
        for j, field in enumerate(_INT_FIELDS):
            setattr(self, field, np.ascontiguousarray(ints[:, j]))
        flags = np.array([r[1] for r in rows], dtype=np.bool_).reshape(n, len(_BOOL_FIELDS))
        for j, field in enumerate(_BOOL_FIELDS):
            setattr(self, field, np.ascontiguousarray(flags[:, j]))

    @property
    def exact(self) -> bool:
        """Whether every integer column holds its true value (see :data:`EXACT_LIMIT`)."""
        return not self._inexact_rows

    def labels(self, key: str) -> LabelColumn:
        """The :class:`LabelColumn` of ``key``, built on first use and kept up to date."""
        column = self._labels.get(key)
        if column is None:
            source = self._source
            if source is None:
                column = LabelColumn(key, self.infos)
            else:  # the same nodes as rows of another NodeColumns: share its codes
                base, rows = source
                column = LabelColumn.taken_from(base.labels(key), rows)
            self._labels[key] = column
        return column

    @classmethod
    def with_pods_added(
        cls,
        base: NodeColumns,
        rows: Sequence[int],
        added: Sequence[Sequence[PodInfo]],
        sums: IntArray | None = None,
    ) -> NodeColumns:
        """Columns for ``rows`` of ``base`` as if ``added[i]`` were also placed on row
        ``rows[i]``'s node: what each node would be with its nominated pods.

        The arrays are computed from ``base`` and the pods' requests, without copying a
        NodeInfo; ``infos[i]`` builds the copy (the NodeInfo with the pods added) on first use.
        ``sums``, when the caller kept them, is what ``added`` adds to each row, one row of
        seven integers per group: requested cpu, memory and ephemeral storage, non-zero cpu
        and memory, 1 if a pod takes a host port (else 0), and the number of pods, each
        value beyond int64 given as :data:`EXACT_LIMIT`.
        """
        import numpy as np

        from schedframe.framework._types import next_generations

        self = cls.__new__(cls)
        size = len(rows)
        index = np.asarray(rows, dtype=np.intp)
        pick = picker(rows)
        bases = pick(base.infos)
        self.infos = _CopiesWithPods(bases, added)
        self.names = pick(base.names)
        self.index = dict(zip(self.names, range(size), strict=True))
        self.size = size
        self.generations = np.fromiter(next_generations(size), dtype=np.int64, count=size)
        self._nodes = pick(base._nodes)
        self._labels = {}
        self._source = (base, index)
        self._inexact_rows = set()
        if base._inexact_rows:
            position = {r: i for i, r in enumerate(rows)}
            self._inexact_rows = {position[r] for r in base._inexact_rows if r in position}
        for field in _INT_FIELDS + _BOOL_FIELDS:
            setattr(self, field, getattr(base, field)[index])
        if sums is None:
            sums = _added_sums(added)
        for j, field in (
            (0, "requested_cpu"),
            (1, "requested_memory"),
            (2, "requested_ephemeral_storage"),
            (3, "non_zero_requested_cpu"),
            (4, "non_zero_requested_memory"),
            (6, "num_pods"),
        ):
            delta = sums[:, j]
            column = getattr(self, field) + delta
            beyond = (column <= -EXACT_LIMIT) | (column >= EXACT_LIMIT)
            beyond |= (delta <= -EXACT_LIMIT) | (delta >= EXACT_LIMIT)
            if beyond.any():
                self._inexact_rows.update(np.flatnonzero(beyond).tolist())
                column[beyond] = 0
            setattr(self, field, column)
        self.used_ports = self.used_ports | (sums[:, 5] != 0)
        return self

    def copy(self, infos: Sequence[NodeInfo]) -> NodeColumns:
        """An independent copy over ``infos``: the same nodes in the same rows (a forked
        snapshot's node list). The arrays are copied; neither copy sees the other's refreshes."""
        other = NodeColumns.__new__(NodeColumns)
        other.infos = infos
        other.names = self.names  # never changed in place
        other.index = self.index
        other.size = self.size
        other.generations = self.generations.copy()
        other._nodes = list(self._nodes)
        other._labels = {key: column.copy() for key, column in self._labels.items()}
        other._source = self._source
        other._inexact_rows = set(self._inexact_rows)
        for field in _INT_FIELDS + _BOOL_FIELDS:
            setattr(other, field, getattr(self, field).copy())
        return other

    def refresh(self, rows: Sequence[int]) -> None:
        """Re-read ``rows`` from their NodeInfos (the snapshot calls this after the cache
        copied changed nodes in). Rows whose generation did not move are skipped."""
        infos = self.infos
        generations = self.generations
        for row in rows:
            info = infos[row]
            if generations[row] == info.generation:
                continue
            generations[row] = info.generation
            ints, bools = _row(info)
            inexact = False
            for field, value in zip(_INT_FIELDS, ints, strict=True):
                if not -EXACT_LIMIT < value < EXACT_LIMIT:
                    inexact = True
                    value = 0
                getattr(self, field)[row] = value
            if inexact:
                self._inexact_rows.add(row)
            else:
                self._inexact_rows.discard(row)
            for field, flag in zip(_BOOL_FIELDS, bools, strict=True):
                getattr(self, field)[row] = flag
            if info.node is not self._nodes[row]:
                self._nodes[row] = info.node
                for column in self._labels.values():
                    column.update(row, info)
