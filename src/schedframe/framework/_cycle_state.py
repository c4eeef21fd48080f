"""Per-attempt scratch space shared by a profile's plugins (upstream ``framework.CycleState``).

Values are stored under typed keys, as pytest's Stash does, so ``state[key]`` is statically
typed. A value that is mutated by PreFilter extensions (AddPod/RemovePod) must define
``clone()``; :meth:`CycleState.clone` calls it, and shares every other value as is (frozen values
need no copy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar, cast

if TYPE_CHECKING:
    from schedframe.objects import Pod

__all__ = ["CycleState", "StateKey"]

T = TypeVar("T")
_MISSING = object()


class StateKey(Generic[T]):
    """A typed key into :class:`CycleState`; create one per value kind, at module level::

        _PRE_FILTER: Final = StateKey[_PreFilterState]("PreFilterNodeResourcesFit")

    The name is for messages and for upstream parity only; identity is the key object.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"StateKey({self.name!r})"


class CycleState:
    """Data plugins share within one scheduling attempt of one pod.

    The scheduling cycle is serial, so a CycleState is never read and written at once from two
    threads, except through :meth:`clone` copies made for what-if evaluation (nominated pods,
    preemption dry runs).

    Attributes:
        skip_filter_plugins: plugins whose PreFilter returned Skip; their Filter is not run.
        skip_score_plugins: plugins whose PreScore returned Skip; their Score is not run.
        skip_pre_bind_plugins: plugins whose PreBindPreFlight returned Skip; their PreBind is
            not run.
        pods_to_activate: pods (by uid) plugins want moved to the active queue when this
            attempt ends (upstream ``PodsToActivate``).
        record_plugin_metrics: whether per-plugin timings are sampled in this attempt.
        durations: seconds spent per extension point in this attempt (``"PreFilter"`` ...),
            filled by the framework for observers; never per node.
    """

    __slots__ = (
        "_data",
        "durations",
        "pods_to_activate",
        "record_plugin_metrics",
        "skip_filter_plugins",
        "skip_pre_bind_plugins",
        "skip_score_plugins",
    )

    def __init__(self) -> None:
        self._data: dict[StateKey[object], object] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()
        self.pods_to_activate: dict[str, Pod] = {}
        self.record_plugin_metrics = False
        self.durations: dict[str, float] = {}

    def __getitem__(self, key: StateKey[T]) -> T:
        try:
            return cast(T, self._data[cast("StateKey[object]", key)])
        except KeyError:
            raise KeyError(f"{key.name} not found in cycle state") from None

    def __setitem__(self, key: StateKey[T], value: T) -> None:
        self._data[cast("StateKey[object]", key)] = value

    def __delitem__(self, key: StateKey[T]) -> None:
        self._data.pop(cast("StateKey[object]", key), None)

    def __contains__(self, key: StateKey[T]) -> bool:
        return cast("StateKey[object]", key) in self._data

    def get(self, key: StateKey[T], default: T | None = None) -> T | None:
        """The value under ``key``, or ``default``."""
        value = self._data.get(cast("StateKey[object]", key), _MISSING)
        return default if value is _MISSING else cast(T, value)

    def read(self, key: StateKey[T]) -> T:
        """Same as ``state[key]`` (upstream ``Read``); raises ``KeyError`` naming the key."""
        return self[key]

    def write(self, key: StateKey[T], value: T) -> None:
        """Same as ``state[key] = value`` (upstream ``Write``)."""
        self[key] = value

    def delete(self, key: StateKey[T]) -> None:
        """Remove ``key`` if present (upstream ``Delete``)."""
        del self[key]

    def __len__(self) -> int:
        return len(self._data)

    def keys(self) -> list[StateKey[object]]:
        """Every key present, in insertion order."""
        return list(self._data)

    def clone(self) -> CycleState:
        """A copy for what-if evaluation: values with a ``clone()`` method are cloned.

        Mirrors upstream ``CycleState.Clone``: the skip sets are copied and
        ``record_plugin_metrics`` is kept; ``pods_to_activate`` is shared, as upstream shares the
        same PodsToActivate entry.
        """
        copy = CycleState()
        data = copy._data
        for key, value in self._data.items():
            clone = getattr(value, "clone", None)
            data[key] = clone() if clone is not None else value
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        copy.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        copy.pods_to_activate = self.pods_to_activate
        copy.record_plugin_metrics = self.record_plugin_metrics
        copy.durations = self.durations
        return copy
