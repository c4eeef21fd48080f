"""The supported surface: each public module's ``__all__`` is exactly its public names."""

from __future__ import annotations

import importlib
import inspect

import pytest

PUBLIC_MODULES = [
    "schedframe",
    "schedframe.errors",
    "schedframe.framework",
    "schedframe.objects",
    "schedframe.objects.validation",
    "schedframe.config",
    "schedframe.features",
    "schedframe.runtime",
    "schedframe.hooks",
    "schedframe.metrics",
    "schedframe.extender",
    "schedframe.cache",
    "schedframe.backends",
    "schedframe.queue",
    "schedframe.scheduler",
    "schedframe.explain",
    "schedframe.simulation",
    "schedframe.report",
    "schedframe.preemption",
]


def _public_names(module: object) -> set[str]:
    """Names the module itself defines (or its private submodules do): classes and functions
    whose ``__module__`` lies in the package, and UPPER_CASE constants; imports are not counted."""
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


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_all_equals_public_names(module_name: str) -> None:
    module = importlib.import_module(module_name)
    declared = set(module.__all__)
    if module_name == "schedframe":
        # The front door resolves its names lazily; dir() lists exactly __all__.
        assert set(dir(module)) == declared
    else:
        public = _public_names(module)
        assert sorted(public - declared) == [], "public but not in __all__"
        assert [n for n in sorted(declared) if not hasattr(module, n)] == [], (
            "in __all__ but missing"
        )


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_public_callable_has_a_docstring(module_name: str) -> None:
    module = importlib.import_module(module_name)
    missing = []
    for name in module.__all__:
        obj = getattr(module, name)
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and not inspect.getdoc(obj):
            missing.append(name)
    assert missing == []


def test_import_is_lazy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, schedframe\n"
        "heavy = [m for m in ('schedframe.scheduler', 'schedframe.runtime', 'yaml') "
        "if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


LAZY_PACKAGES = ["schedframe.objects", "schedframe.cache", "schedframe.backends.kubernetes"]


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_lazy_packages_list_each_name_alike(package: str) -> None:
    """A lazy package names each public name three times: imported for type checkers, in
    ``__all__``, and in ``_WHERE`` (where ``__getattr__`` finds it). The three must agree."""
    import ast

    module = importlib.import_module(package)
    where: dict[str, str] = dict(module._WHERE)
    assert set(where) == set(module.__all__)
    assert module.__file__ is not None
    with open(module.__file__, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    typed: dict[str, str] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
        ):
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module is not None:
                    sub = stmt.module.removeprefix(package + ".")
                    typed.update({alias.asname or alias.name: sub for alias in stmt.names})
    assert typed == where
