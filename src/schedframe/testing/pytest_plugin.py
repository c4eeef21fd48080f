"""pytest fixtures of the schedframe testing kit, registered through the ``pytest11`` entry point.

Fixtures:

* ``schedframe_seed`` — the seed for deterministic schedulers: ``--schedframe-seed`` (0 by
  default);
* ``schedframe_scheduler`` — a factory of deterministic schedulers (same arguments as
  :func:`schedframe.testing.deterministic.scheduler`, seeded with ``schedframe_seed`` unless
  given one), each stopped when the test ends::

      def test_binds(schedframe_scheduler):
          sched = schedframe_scheduler(objects=[node, pod])
          sched.run_until_idle()
          assert sched.placements() == {"default/p": "n"}

Without the entry point (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``), enable it with
``-p schedframe.testing.pytest_plugin``.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator
from typing import Any

import pytest

if typing.TYPE_CHECKING:
    from schedframe.scheduler import Scheduler

__all__ = ["pytest_addoption", "schedframe_scheduler", "schedframe_seed"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--schedframe-seed``."""
    group = parser.getgroup("schedframe")
    group.addoption(
        "--schedframe-seed",
        type=int,
        default=0,
        help="seed of the schedulers made by the schedframe_scheduler fixture (default 0)",
    )


@pytest.fixture
def schedframe_seed(request: pytest.FixtureRequest) -> int:
    """The seed deterministic schedulers get (``--schedframe-seed``, 0 by default)."""
    try:
        value = request.config.getoption("--schedframe-seed")
    except ValueError:  # the option is not registered: the plugin was imported, not loaded
        return 0
    return int(value) if value is not None else 0


@pytest.fixture
def schedframe_scheduler(schedframe_seed: int) -> Iterator[Callable[..., Scheduler]]:
    """A factory of deterministic schedulers, stopped at teardown."""
    from schedframe.testing import deterministic

    made: list[Scheduler] = []

    def make(*args: Any, **kwargs: Any) -> Scheduler:
        kwargs.setdefault("seed", schedframe_seed)
        sched = deterministic.scheduler(*args, **kwargs)
        made.append(sched)
        return sched

    yield make
    for sched in made:
        sched.stop()
