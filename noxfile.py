"""Every developer and CI task, as a nox session.

``nox`` with no arguments runs the default sessions in order (lint, typecheck, docs, tests), so the
pytest summary closes the log. ``nox -s demo`` runs the README's main job.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "typecheck", "docs", "tests"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = False

PYTHON = "3.11"
LOCAL = [
    "-e",
    ".[testing,kubernetes]",
    "-e",
    "./plugins",
    # The example out-of-tree plugin packages: installed, discovered and tested like a third
    # party's.
    "-e",
    "./examples/gpu-spread",
    "-e",
    "./examples/coscheduling",
]
TEST_DEPS = ["pytest>=8", "hypothesis>=6.100"]


def install_project(session: nox.Session, *extra: str) -> None:
    # Entry points exist only for installed distributions, so every session installs both.
    session.install(*LOCAL, *extra)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict on both source trees."""
    install_project(session, "mypy>=1.10", "types-PyYAML", *TEST_DEPS)
    session.run("mypy", "src/schedframe", "plugins/src/schedframe_plugins")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Unit, property, plugin and integration tests (HYPOTHESIS_PROFILE=ci)."""
    install_project(session, *TEST_DEPS)
    session.env["HYPOTHESIS_PROFILE"] = "ci"
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """The README's main job: a simulation on the in-memory backend."""
    install_project(session)
    session.run("python", "examples/demo.py", *session.posargs)


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Build the documentation strictly (warnings are errors)."""
    install_project(session, "sphinx>=8", "furo", "myst-parser")
    session.run("sphinx-build", "-W", "-n", "-b", "html", "docs", "docs/_build/html")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks: pods/s and peak memory per workload (never part of the tests)."""
    install_project(session)
    session.run("python", "bench/run.py", *session.posargs)


@nox.session(python=PYTHON)
def startup(session: nox.Session) -> None:
    """Start-up benchmark: import and first-build times in fresh processes (never a test)."""
    install_project(session)
    session.run("python", "bench/startup.py", *session.posargs)


@nox.session(python=PYTHON)
def fuzz(session: nox.Session) -> None:
    """The fuzzers (configs, manifests, workloads, kubeconfigs) and the fault-injection machine
    with a large budget: ``nox -s fuzz -- 2500`` runs 2,500 inputs per fuzzer (10,000 in all),
    each bounded to 10 s of wall time (a hang fails)."""
    install_project(session, *TEST_DEPS)
    session.env["SCHEDFRAME_FUZZ_EXAMPLES"] = session.posargs[0] if session.posargs else "2500"
    session.env["SCHEDFRAME_FUZZ_DEADLINE"] = "10"
    session.run(
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/property/test_fuzz_loaders.py",
        "tests/integration/test_fault_injection.py",
    )
