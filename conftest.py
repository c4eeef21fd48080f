"""Repository-wide pytest set-up: Hypothesis profiles and the fast/slow test split.

Hypothesis profiles, chosen with ``HYPOTHESIS_PROFILE`` (``dev`` when unset):

* ``dev`` — quick local runs: few examples, random seeds, no deadline;
* ``ci`` — derandomised (the same examples on every run, so a red CI run is reproducible),
  the default example count, no deadline (a shared CI core makes timings meaningless), and
  the failing example's reproduction blob printed;
* ``fuzz`` — long hunts for counter-examples: many examples, random seeds.

A test that sets ``max_examples`` itself keeps its own count: the profile fills in what the
test leaves unset.

Every Hypothesis test (``@given`` or a state machine's ``TestCase``) is marked ``property``
at collection, so ``-m "not property"`` is the fast session and ``-m property`` the slow one
(``nox -s tests`` and ``nox -s property_tests``).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=20, deadline=None)
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("fuzz", max_examples=5_000, deadline=None)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
# An unknown name is an error (hypothesis.errors.InvalidArgument), never a silent default.
settings.load_profile(PROFILE)


def pytest_report_header(config: pytest.Config) -> str:
    return f"hypothesis profile: {PROFILE} (HYPOTHESIS_PROFILE)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.property)
