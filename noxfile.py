"""Every developer and CI task, as a nox session.

``nox`` with no arguments runs the default sessions in order: lint, typecheck, docs, then the
fast tests and the slow property tests on every supported Python found on this machine, so a
pytest summary closes the log. ``nox -s demo`` runs the README's main job.

Supported Pythons are 3.11 to 3.13. The test sessions run on each one that is installed and
works (a pyenv shim without its version does not count); when none is, every session fails
instead of being skipped, so a machine without a suitable Python never passes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import nox

nox.options.sessions = ["lint", "typecheck", "docs", "tests", "property_tests"]
nox.options.reuse_existing_virtualenvs = True
# With no supported Python found, PYTHONS below lists them all, and each session errors.
nox.options.error_on_missing_interpreters = True

SUPPORTED = ("3.11", "3.12", "3.13")


def _works(version: str) -> bool:
    """True if ``python<version>`` exists and runs (pyenv installs shims for absent versions).

    nox also uses the interpreter running it when its version matches, as this does.
    """
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        return True
    exe = shutil.which(f"python{version}")
    if exe is None:
        return False
    try:
        done = subprocess.run(
            [exe, "-c", "import sys, venv; print(sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and done.stdout.strip() == str(tuple(map(int, version.split("."))))


FOUND = [v for v in SUPPORTED if _works(v)]
#: Every supported Python found; all of them when none is, so that nox reports each missing.
PYTHONS = FOUND or list(SUPPORTED)
#: Lint, type check and docs need one interpreter: the oldest supported one found.
PYTHON = PYTHONS[0]
#: The example out-of-tree plugin packages under examples/.
EXAMPLES = ("gpu-spread", "coscheduling", "capacityscheduling")
LOCAL = [
    "-e",
    ".[testing,kubernetes,metrics]",
    "-e",
    "./plugins",
    # The example out-of-tree plugin packages: installed, discovered and tested like a third
    # party's.
    "-e",
    "./examples/gpu-spread",
    "-e",
    "./examples/coscheduling",
    "-e",
    "./examples/capacityscheduling",
]
TEST_DEPS = ["pytest>=8", "hypothesis>=6.100"]
#: The Pythons Ray publishes wheels for (cp311 to cp313, ``pip index versions ray``): the
#: fast test session installs the ``ray`` extra there, for the sweep tests on a local Ray
#: instance (which fail in CI without it).
RAY_PYTHONS = ("3.11", "3.12", "3.13")
# Pinned: a new release of either adds rules or checks, which must be a deliberate upgrade.
RUFF = "ruff==0.17.6"
MYPY = "mypy==2.4.1"


def install_project(session: nox.Session, *extra: str, ray: bool = False) -> None:
    # Entry points exist only for installed distributions, so every session installs both.
    local = list(LOCAL)
    if ray and session.python in RAY_PYTHONS:
        local[1] = ".[testing,kubernetes,metrics,ray]"
    session.install(*local, *extra)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    session.install(RUFF)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict on both source trees, the tests and the example plugin packages.

    The tests are held to the same strict configuration as the sources (pyproject.toml's
    [tool.mypy]); their folders are namespace packages, named by path from the root.
    """
    install_project(session, MYPY, "types-PyYAML", *TEST_DEPS)
    session.run("mypy", "src/schedframe", "plugins/src/schedframe_plugins")
    session.run("mypy", "--explicit-package-bases", "conftest.py", "tests", "plugins/tests")
    for example in EXAMPLES:
        session.run(
            "mypy",
            f"examples/{example}/src",
            f"examples/{example}/tests",
            env={"MYPYPATH": f"examples/{example}/src"},
        )


def ensure_chromium(session: nox.Session) -> None:
    """Install Debian's chromium for the HTML report's browser test when it is missing and
    this runs as root with apt-get (browser builds cannot be downloaded on CI machines).

    Otherwise the test skips, or fails when CI=true.
    """
    if shutil.which("chromium") or shutil.which("chromium-browser"):
        return
    if os.name != "posix" or os.geteuid() != 0 or not shutil.which("apt-get"):
        session.log("chromium is missing and cannot be installed here (needs root and apt-get)")
        return
    session.log("installing Debian's chromium for the report's browser test")
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    session.run("apt-get", "update", external=True, env=env)
    session.run("apt-get", "install", "-y", "chromium", external=True, env=env)


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The fast session: every test but the Hypothesis properties (HYPOTHESIS_PROFILE, ci by default)."""
    install_project(session, *TEST_DEPS, ray=True)
    ensure_chromium(session)
    session.env["HYPOTHESIS_PROFILE"] = os.environ.get("HYPOTHESIS_PROFILE", "ci")
    session.run("pytest", "-m", "not property", *session.posargs)


@nox.session(python=PYTHONS)
def property_tests(session: nox.Session) -> None:
    """The slow session: every Hypothesis property (HYPOTHESIS_PROFILE, ci by default)."""
    install_project(session, *TEST_DEPS)
    session.env["HYPOTHESIS_PROFILE"] = os.environ.get("HYPOTHESIS_PROFILE", "ci")
    session.run("pytest", "-m", "property", *session.posargs)


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
