"""schedframe: the Kubernetes scheduling framework, in Python.

Embed a scheduler::

    import schedframe
    from schedframe.backends import MemoryBackend

    backend = MemoryBackend(schedframe.objects.load_manifests("cluster/"))
    scheduler = schedframe.Scheduler.from_config("scheduler-config.yaml", backend, seed=1)
    scheduler.run_until_idle()

The supported surface is the ``__all__`` of this module and of ``schedframe.framework``
(the plugin contract), ``.objects``, ``.config``, ``.runtime``, ``.backends``, ``.hooks``,
``.testing`` and ``.errors``. Names are imported on first use, so ``import schedframe`` stays
cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from schedframe.config import load_config
    from schedframe.scheduler import Scheduler, ScheduleResult

__all__ = ["ScheduleResult", "Scheduler", "__version__", "load_config"]

_LAZY = {
    "Scheduler": ("schedframe.scheduler", "Scheduler"),
    "ScheduleResult": ("schedframe.scheduler", "ScheduleResult"),
    "load_config": ("schedframe.config", "load_config"),
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("schedframe")
        except PackageNotFoundError:  # running from a source tree that is not installed
            return "0+unknown"
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'schedframe' has no attribute {name!r}")
    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
