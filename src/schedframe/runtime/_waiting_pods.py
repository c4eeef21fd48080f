"""Pods parked by Permit, with per-plugin timeouts on the scheduler's clock.

Upstream: ``runtime/waiting_pods_map.go``. A waiting pod resolves once: allowed by every plugin
that made it wait, or rejected by one (a timeout is a rejection). Resolution is reported to
callbacks rather than through a blocking channel, so the binding cycle can continue in real or
virtual time alike.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final, Protocol

from schedframe.framework import Code, Status

if TYPE_CHECKING:
    from schedframe.objects import Pod

__all__ = ["MAX_PERMIT_TIMEOUT", "Timers", "WaitingPod", "WaitingPods"]

#: Upstream caps a Permit wait at 15 minutes.
MAX_PERMIT_TIMEOUT: Final = 15 * 60.0


class Cancellable(Protocol):
    """A scheduled call that can be cancelled."""

    def cancel(self) -> None:
        """Prevent the call if it has not happened yet."""
        ...


class Timers(Protocol):
    """Schedules callbacks after a delay, in the scheduler's (real or virtual) time."""

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancellable:
        """Run ``callback`` after ``delay`` seconds."""
        ...


class ThreadTimers:
    """Real-time timers on daemon threads (used when no scheduler clock is given)."""

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancellable:
        """Run ``callback`` on a timer thread after ``delay`` seconds."""
        timer = threading.Timer(delay, callback)
        timer.daemon = True
        timer.start()
        return timer


class WaitingPod:
    """A pod waiting for Permit plugins to allow it (implements ``framework.WaitingPod``)."""

    def __init__(
        self, pod: Pod, plugin_timeouts: Mapping[str, float], timers: Timers, node_name: str = ""
    ) -> None:
        self._pod = pod
        self.node_name = node_name
        self._lock = threading.Lock()
        self._status: Status | None = None
        self._callbacks: list[Callable[[Status], None]] = []
        self._pending: dict[str, Cancellable | None] = dict.fromkeys(plugin_timeouts)
        #: The longest of the (capped) waits the plugins asked for, in seconds.
        self.longest_wait = 0.0
        for plugin, timeout in plugin_timeouts.items():
            if not 0 <= timeout < math.inf:  # NaN fails too
                raise ValueError(f"plugin {plugin} asked to wait {timeout!r} seconds")
            wait = min(timeout, MAX_PERMIT_TIMEOUT)
            self.longest_wait = max(self.longest_wait, wait)
            self._pending[plugin] = timers.call_later(wait, self._timeout_callback(plugin, wait))

    def _timeout_callback(self, plugin: str, wait: float) -> Callable[[], None]:
        def fire() -> None:
            self.reject(
                plugin,
                f"rejected due to timeout after waiting {_go_duration(wait)} at plugin {plugin}",
            )

        return fire

    @property
    def pod(self) -> Pod:
        """The waiting pod."""
        return self._pod

    @property
    def status(self) -> Status | None:
        """``None`` while waiting; then the outcome (success, or a rejection naming the plugin)."""
        return self._status

    def pending_plugins(self) -> list[str]:
        """Plugins that have not allowed the pod yet."""
        with self._lock:
            return list(self._pending)

    def allow(self, plugin_name: str) -> None:
        """``plugin_name`` allows the pod; once all have, the pod is released."""
        with self._lock:
            if self._status is not None:
                return
            timer = self._pending.pop(plugin_name, None)
            if timer is not None:
                timer.cancel()
            if self._pending:
                return
            self._status = Status(Code.SUCCESS)
        self._fire()

    def reject(self, plugin_name: str, message: str) -> None:
        """Reject the pod on behalf of ``plugin_name`` (upstream: Unschedulable with the message)."""
        with self._lock:
            if self._status is not None:
                return
            for timer in self._pending.values():
                if timer is not None:
                    timer.cancel()
            self._pending.clear()
            self._status = Status(Code.UNSCHEDULABLE, message, plugin=plugin_name)
        self._fire()

    def preempt(self, plugin_name: str, message: str) -> bool:
        """Preempt the pod on behalf of ``plugin_name`` (upstream ``WaitingPod.Preempt``): it
        leaves Permit with an ``Error`` status, so it goes through the error backoff rather
        than the unschedulable pool. False when it had already been allowed or rejected."""
        with self._lock:
            if self._status is not None:
                return False
            for timer in self._pending.values():
                if timer is not None:
                    timer.cancel()
            self._pending.clear()
            self._status = Status(Code.ERROR, message, plugin=plugin_name)
        self._fire()
        return True

    def on_done(self, callback: Callable[[Status], None]) -> None:
        """Call ``callback(status)`` when the pod is released or rejected (now, if it already is)."""
        with self._lock:
            status = self._status
            if status is None:
                self._callbacks.append(callback)
                return
        callback(status)

    def _fire(self) -> None:
        status = self._status
        assert status is not None
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(status)


class WaitingPods:
    """The waiting pods of a scheduler, by pod uid (shared by all its profiles, as upstream)."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}
        self._lock = threading.Lock()

    def add(self, waiting: WaitingPod) -> None:
        """Park a pod."""
        with self._lock:
            self._pods[waiting.pod.uid] = waiting

    def remove(self, uid: str) -> None:
        """Forget a pod (after it resolved)."""
        with self._lock:
            self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        """The waiting pod with ``uid``, if any."""
        with self._lock:
            return self._pods.get(uid)

    def iterate(self, callback: Callable[[WaitingPod], None]) -> None:
        """Call ``callback`` for each waiting pod (on a copy, so it may allow or reject)."""
        with self._lock:
            pods = list(self._pods.values())
        for wp in pods:
            callback(wp)

    def __len__(self) -> int:
        with self._lock:
            return len(self._pods)


def _go_duration(seconds: float) -> str:
    """Format seconds the way Go prints a time.Duration (``15m0s``, ``1.5s``, ``500ms``)."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        ms = seconds * 1000
        return f"{ms:g}ms" if ms >= 1 else f"{seconds * 1e6:g}µs"
    total = seconds
    hours, rem = divmod(total, 3600)
    minutes, secs = divmod(rem, 60)
    out = ""
    if hours:
        out += f"{int(hours)}h"
    if hours or minutes:
        out += f"{int(minutes)}m"
    out += f"{secs:g}s"
    return out
