"""The kit's public modules: ``__all__`` is exactly what they define, each name documented,
and importing the package (or the hypothesis hook) stays cheap."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

MODULES = [
    "schedframe.testing.strategies",
    "schedframe.testing.builders",
    "schedframe.testing.harness",
    "schedframe.testing.deterministic",
    "schedframe.testing.invariants",
    "schedframe.testing.conformance",
    "schedframe.testing.pytest_plugin",
]


def _public_names(module: object) -> set[str]:
    # The rule of tests/test_public_api.py.
    own = getattr(module, "__name__", "")
    names = set()
    for name in dir(module):
        if name.startswith("_"):
            continue
        obj = getattr(module, name)
        if inspect.ismodule(obj):
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            where = getattr(obj, "__module__", "")
            if where == own or where.startswith(own + "."):
                names.add(name)
        elif name.isupper() and not getattr(obj, "__module__", "").startswith("typing"):
            names.add(name)
    return names


@pytest.mark.parametrize("module_name", MODULES)
def test_all_equals_public_names(module_name: str) -> None:
    module = importlib.import_module(module_name)
    declared = set(module.__all__)
    public = _public_names(module)
    assert sorted(public - declared) == []
    assert [n for n in sorted(declared) if not hasattr(module, n)] == []


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_callable_has_a_docstring(module_name: str) -> None:
    module = importlib.import_module(module_name)
    missing = [
        n
        for n in module.__all__
        if (inspect.isclass(getattr(module, n)) or inspect.isfunction(getattr(module, n)))
        and not inspect.getdoc(getattr(module, n))
    ]
    assert missing == []


def test_the_package_lists_its_modules_lazily() -> None:
    import schedframe.testing as kit

    assert dir(kit) == sorted(kit.__all__)
    assert kit.builders.make_pod("p").obj().name == "p"
    with pytest.raises(AttributeError):
        _ = kit.nothing


def _imported_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nprint(','.join(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(out.stdout.strip().split(","))


def test_importing_the_package_imports_nothing_heavy() -> None:
    loaded = _imported_after("import sys, schedframe.testing")
    assert not {m for m in loaded if m.startswith("schedframe.testing.") or m == "hypothesis"}


def test_the_hypothesis_hook_module_is_cheap() -> None:
    loaded = _imported_after("import sys, schedframe.testing._hypothesis_plugin")
    heavy = {"hypothesis", "schedframe.testing.strategies", "schedframe.scheduler", "pytest"}
    assert not heavy & loaded
