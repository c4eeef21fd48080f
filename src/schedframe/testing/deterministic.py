"""Schedulers that always do the same thing: virtual time, a seeded random source, no threads.

::

    from schedframe.testing import deterministic

    with deterministic.scheduler(objects=[node, pod], seed=1) as sched:
        sched.run_until_idle()
        assert sched.placements() == {"default/pod": "node"}

The same configuration, objects and seed give the same placements, events and timings, run
after run (see :class:`~schedframe.scheduler.Scheduler`'s deterministic mode). The pytest
plugin offers this as the ``schedframe_scheduler`` fixture.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from schedframe.backends import MemoryBackend
from schedframe.config import KubeSchedulerConfiguration
from schedframe.runtime import PluginFactory, Registry
from schedframe.scheduler import Scheduler, VirtualClock
from schedframe.testing.invariants import PreemptionLog

if typing.TYPE_CHECKING:
    import pluggy

__all__ = ["placements", "registry_with", "scheduler"]

Config = KubeSchedulerConfiguration | str | os.PathLike[str] | Mapping[str, Any] | None


def registry_with(
    plugins: Sequence[PluginFactory] = (), *, base: Registry | None = None
) -> Registry:
    """The installed plugins (or ``base``) plus ``plugins`` registered in-process by their
    ``name``; an in-process plugin replaces an installed one of the same name."""
    registry = base if base is not None else Registry.discover()
    for factory in plugins:
        name = getattr(factory, "name", None)
        if not isinstance(name, str):
            raise TypeError(f"{factory!r} has no class attribute 'name'")
        registry.register(name, factory, replace=True)
    return registry


def scheduler(
    config: Config = None,
    objects: Iterable[object] = (),
    *,
    seed: int = 0,
    plugins: Sequence[PluginFactory] = (),
    registry: Registry | None = None,
    start: float = 0.0,
    hooks: pluggy.PluginManager | None = None,
    graceful_deletion: bool = False,
) -> Scheduler:
    """A deterministic :class:`~schedframe.scheduler.Scheduler` on a new in-memory cluster.

    Args:
        config: a configuration, a path to one, a mapping, or ``None`` for the defaults.
        objects: Namespaces, Nodes, PodDisruptionBudgets and Pods to create first (a
            :class:`~schedframe.testing.strategies.Cluster` works too); pods with
            ``spec.nodeName`` are running, the others are queued.
        seed: seeds the scheduler's random source (tie-breaking, preemption offsets).
        plugins: plugin classes to register in-process (not installed), by their ``name``.
        registry: where plugins come from (installed entry points by default).
        start: the virtual clock's start time, in seconds since the epoch.
        hooks: a pluggy plugin manager observing the scheduler (a new one with the installed
            observers by default); a :class:`~schedframe.testing.invariants.PreemptionLog`
            is registered on it, for
            :func:`~schedframe.testing.invariants.assert_preemption_only_lower_priority`.
        graceful_deletion: delete bound pods gracefully (see
            :class:`~schedframe.backends.MemoryBackend`).

    Returns:
        The scheduler, not yet run; its backend is ``sched.backend`` and its clock a
        :class:`~schedframe.scheduler.VirtualClock`. Stop it (or use it as a context manager).
    """
    clock = VirtualClock(start=start)
    backend = MemoryBackend(list(objects), clock=clock, graceful_deletion=graceful_deletion)
    reg = registry_with(plugins, base=registry) if plugins or registry is None else registry
    if hooks is None:
        from schedframe.hooks import plugin_manager

        hooks = plugin_manager()
    PreemptionLog().register(hooks)
    return Scheduler.from_config(
        config,
        backend,
        registry=reg,
        clock=clock,
        seed=seed,
        deterministic=True,
        hooks=hooks,
    )


def placements(
    config: Config = None,
    objects: Iterable[object] = (),
    *,
    seed: int = 0,
    plugins: Sequence[PluginFactory] = (),
    registry: Registry | None = None,
    max_cycles: int | None = None,
) -> dict[str, str]:
    """Run a deterministic scheduler until idle; ``namespace/name -> node`` of every pod bound.

    A shortcut for property tests (same inputs and seed, same placements).
    """
    with scheduler(config, objects, seed=seed, plugins=plugins, registry=registry) as sched:
        sched.run_until_idle(max_cycles=max_cycles)
        return sched.placements()
