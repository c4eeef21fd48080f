"""The testing kit: for plugin authors and for anyone property-testing scheduling behaviour.

Needs ``pip install schedframe[testing]`` (hypothesis and pytest). Each part is a module,
imported when first used, so ``import schedframe.testing`` costs nothing:

* :mod:`~schedframe.testing.strategies` — hypothesis strategies for objects, configurations
  and whole consistent clusters (also registered for ``st.from_type``);
* :mod:`~schedframe.testing.builders` — ``make_pod("p").req(cpu="100m").obj()`` and friends;
* :mod:`~schedframe.testing.harness` — :func:`~schedframe.testing.harness.run_plugins`, every
  Filter verdict and Score of given plugins over a cluster;
* :mod:`~schedframe.testing.deterministic` — schedulers on virtual time with a seeded random
  source (also the ``schedframe_scheduler`` pytest fixture);
* :mod:`~schedframe.testing.invariants` — no overcommit, nothing lost, preemption only of
  lower priority;
* :mod:`~schedframe.testing.queue` — seams into a scheduling queue (put an entry straight
  into the activeQ, the backoffQ or the pool; drain completed backoffs; where is a pod), for
  porting upstream's queue test tables;
* :mod:`~schedframe.testing.extender` — :class:`~schedframe.testing.extender.ExtenderServer`,
  a scheduler extender on 127.0.0.1 speaking upstream's extender/v1 JSON, with faults on
  demand (timeouts, HTTP 500, garbage replies);
* :mod:`~schedframe.testing.trace` — record a backend's watch, or what a Kubernetes
  backend sees of the fake API server, as a trace to replay
  (:func:`~schedframe.testing.trace.recording_fake_cluster`);
* :mod:`~schedframe.testing.conformance` —
  :func:`~schedframe.testing.conformance.check_plugin`, the conformance suite a plugin
  package runs in one line.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from schedframe.testing import (
        builders,
        conformance,
        deterministic,
        extender,
        harness,
        invariants,
        queue,
        strategies,
        trace,
    )

__all__ = [
    "builders",
    "conformance",
    "deterministic",
    "extender",
    "harness",
    "invariants",
    "queue",
    "strategies",
    "trace",
]


def __getattr__(name: str) -> ModuleType:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
