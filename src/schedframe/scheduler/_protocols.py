"""What the scheduler needs from its queue, cache and backend, as structural types.

The concrete classes live in :mod:`schedframe.queue`, :mod:`schedframe.cache` and
:mod:`schedframe.backends` (see ``specs/loop.md``); these Protocols name only the members the
scheduling loop uses, so the loop type-checks against the contract, not an implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from schedframe import framework as fw
    from schedframe.cache import Snapshot
    from schedframe.objects import ObjectReference, Pod, PodCondition

__all__ = [
    "BackendLike",
    "CacheLike",
    "KindWatcher",
    "QueueLike",
    "SubscriptionLike",
    "WatchEventLike",
]


class WatchEventLike(Protocol):
    """One watch event: ``type`` is ``ADDED``, ``MODIFIED`` or ``DELETED``."""

    @property
    def type(self) -> str: ...

    @property
    def obj(self) -> object: ...

    @property
    def old(self) -> object | None: ...


class SubscriptionLike(Protocol):
    """A live watch; ``cancel()`` stops the deliveries."""

    def cancel(self) -> None: ...


class BackendLike(Protocol):
    """The cluster: a lister/watcher and a binder (``schedframe.backends.Backend``)."""

    def list(self, kind: str) -> list[object]: ...

    def subscribe(self, callback: Callable[[WatchEventLike], None]) -> SubscriptionLike: ...

    def bind(self, pod: Pod, node_name: str) -> None: ...

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None: ...

    def delete_pod(self, pod: Pod, *, condition: PodCondition | None = None) -> None: ...

    def record_event(
        self,
        regarding: Pod,
        *,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        related: ObjectReference | None = None,
    ) -> None: ...


@runtime_checkable
class KindWatcher(Protocol):
    """A backend that watches a kind only once asked (the Kubernetes backend's custom kinds);
    ``Handle.lister(kind)`` asks."""

    def watch_kind(self, kind: str) -> None:
        """Start watching ``kind`` if it is not watched yet."""
        ...


class CacheLike(Protocol):
    """The scheduler cache (``schedframe.cache.Cache``)."""

    def add_node(self, node: object) -> object: ...

    def update_node(self, old: object, new: object) -> object: ...

    def remove_node(self, node: object) -> object: ...

    def add_pod(self, pod: Pod) -> object: ...

    def update_pod(self, old: Pod, new: Pod) -> object: ...

    def remove_pod(self, pod: Pod) -> object: ...

    def assume_pod(self, pod: Pod) -> object: ...

    def finish_binding(self, pod: Pod) -> object: ...

    def forget_pod(self, pod: Pod) -> object: ...

    def is_assumed_pod(self, pod: Pod) -> bool: ...

    def get_pod(self, uid: str) -> Pod | None: ...

    def update_snapshot(self, snapshot: Snapshot) -> object: ...


class QueueLike(Protocol):
    """The scheduling queue (``schedframe.queue.SchedulingQueue``), nominator included."""

    @property
    def scheduling_cycle(self) -> int: ...

    def add(self, pod: Pod) -> object: ...

    def update(self, old: Pod, new: Pod) -> object: ...

    def delete(self, pod: Pod) -> object: ...

    def activate(self, pods: Iterable[Pod]) -> object: ...

    def pop(self, block: bool = False, timeout: float | None = None) -> fw.QueuedPodInfo | None: ...

    def done(self, uid: str) -> object: ...

    def add_unschedulable_if_not_present(
        self, qpi: fw.QueuedPodInfo, scheduling_cycle: int
    ) -> object: ...

    def move_all_to_active_or_backoff_queue(
        self,
        event: fw.ClusterEvent,
        old_obj: object,
        new_obj: object,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> object: ...

    def flush_backoff_q_completed(self) -> object: ...

    def flush_unschedulable_pods_leftover(self) -> object: ...

    def add_nominated_pod(self, pod_info: fw.PodInfo, node_name: str) -> None: ...

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None: ...

    def nominated_pods_for_node(self, node_name: str) -> list[fw.PodInfo]: ...
    def nominated_pods_for_nodes(
        self, node_names: Iterable[str]
    ) -> dict[str, list[fw.PodInfo]]: ...

    def nominated_node_names(self) -> frozenset[str]: ...

    def nominated_generation(self) -> int: ...

    def nominated_generations(self, node_names: Iterable[str]) -> dict[str, int]: ...

    def pending_pods(self) -> list[Pod]: ...

    def active_pods(self) -> list[Pod]: ...

    def backoff_pods(self) -> list[Pod]: ...

    def unschedulable_pods(self) -> list[Pod]: ...

    def has_active(self) -> bool: ...

    def next_wakeup(self) -> float | None: ...

    def next_leftover_flush(self) -> float | None: ...

    def close(self) -> object: ...

    def __len__(self) -> int: ...
