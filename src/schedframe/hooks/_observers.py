"""Typed, isolated calls of the observer hooks.

Each implementation is called on its own: one observer that raises is logged and counted,
and every other observer still sees the call (pluggy's own hook call would stop at the first
exception).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final, final

if TYPE_CHECKING:
    import pluggy

    from schedframe.objects import Pod

__all__ = ["Observers"]

log = logging.getLogger("schedframe.hooks")

_WRAPPER_WARNED: Final[set[str]] = set()


@final
class Observers:
    """The observer hooks of one scheduler, as typed methods.

    Args:
        manager: the pluggy plugin manager holding the observers (``None``: no observer).

    Attributes:
        failures: how many calls raised, per ``(observer name, hook name)``.
    """

    def __init__(self, manager: pluggy.PluginManager | None) -> None:
        self.manager = manager
        self.failures: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()

    def _call(self, hook: str, kwargs: Mapping[str, object]) -> None:
        if self.manager is None:
            return
        caller = getattr(self.manager.hook, hook, None)
        if caller is None:
            return
        # pluggy runs implementations last-registered first; keep that order.
        for impl in reversed(caller.get_hookimpls()):
            if impl.hookwrapper or impl.wrapper:
                if impl.plugin_name not in _WRAPPER_WARNED:
                    _WRAPPER_WARNED.add(impl.plugin_name)
                    log.warning(
                        "observer %s: hook wrappers are not supported for %s; ignored",
                        impl.plugin_name,
                        hook,
                    )
                continue
            try:
                impl.function(*(kwargs[name] for name in impl.argnames))
            except Exception:
                with self._lock:
                    self.failures[(impl.plugin_name, hook)] += 1
                log.exception("observer %s failed in hook %s", impl.plugin_name, hook)

    def call(self, hook: str, **kwargs: object) -> None:
        """Call ``hook`` by name (for hooks without a typed method)."""
        self._call(hook, kwargs)

    def pod_scheduled(
        self,
        *,
        pod: Pod,
        node_name: str,
        profile: str,
        attempts: int,
        queued_seconds: float | None,
    ) -> None:
        """:func:`~schedframe.hooks._spec.schedframe_pod_scheduled`."""
        self._call(
            "schedframe_pod_scheduled",
            {
                "pod": pod,
                "node_name": node_name,
                "profile": profile,
                "attempts": attempts,
                "queued_seconds": queued_seconds,
            },
        )

    def pod_unschedulable(
        self, *, pod: Pod, profile: str, message: str, plugins: Sequence[str], attempts: int
    ) -> None:
        """:func:`~schedframe.hooks._spec.schedframe_pod_unschedulable`."""
        self._call(
            "schedframe_pod_unschedulable",
            {
                "pod": pod,
                "profile": profile,
                "message": message,
                "plugins": plugins,
                "attempts": attempts,
            },
        )

    def scheduling_error(self, *, pod: Pod, profile: str, message: str) -> None:
        """:func:`~schedframe.hooks._spec.schedframe_scheduling_error`."""
        self._call(
            "schedframe_scheduling_error", {"pod": pod, "profile": profile, "message": message}
        )

    def cycle_finished(
        self, *, pod: Pod, profile: str, result: str, durations: Mapping[str, float]
    ) -> None:
        """:func:`~schedframe.hooks._spec.schedframe_cycle_finished`."""
        self._call(
            "schedframe_cycle_finished",
            {"pod": pod, "profile": profile, "result": result, "durations": durations},
        )

    def preemption_attempted(self, *, pod: Pod, profile: str) -> None:
        """:func:`~schedframe.hooks._spec.schedframe_preemption_attempted`."""
        self._call("schedframe_preemption_attempted", {"pod": pod, "profile": profile})

    def preemption(
        self, *, preemptor: Pod, node_name: str, victims: Sequence[Pod], profile: str
    ) -> None:
        """:func:`~schedframe.hooks._spec.schedframe_preemption`."""
        self._call(
            "schedframe_preemption",
            {
                "preemptor": preemptor,
                "node_name": node_name,
                "victims": victims,
                "profile": profile,
            },
        )

    def event_handled(self, *, event: str, seconds: float) -> None:
        """:func:`~schedframe.hooks._spec.schedframe_event_handled`."""
        self._call("schedframe_event_handled", {"event": event, "seconds": seconds})
