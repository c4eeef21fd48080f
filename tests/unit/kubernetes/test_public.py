"""The Kubernetes backend's and the fake API server's public surface."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

MODULES = ["schedframe.backends.kubernetes", "schedframe.testing.fakeapi"]


@pytest.mark.parametrize("module_name", MODULES)
def test_all_is_the_public_surface_and_documented(module_name: str) -> None:
    module = importlib.import_module(module_name)
    own = module.__name__
    public = {
        name
        for name in dir(module)
        if not name.startswith("_")
        and (inspect.isclass(getattr(module, name)) or inspect.isfunction(getattr(module, name)))
        and getattr(getattr(module, name), "__module__", "").startswith(own + ".")
    }
    assert public <= set(module.__all__)
    assert all(hasattr(module, name) for name in module.__all__)
    undocumented = [
        name
        for name in module.__all__
        if (inspect.isclass(getattr(module, name)) or inspect.isfunction(getattr(module, name)))
        and not inspect.getdoc(getattr(module, name))
    ]
    assert undocumented == []


def test_the_core_never_imports_the_client() -> None:
    code = (
        "import sys\n"
        "import schedframe.backends, schedframe.scheduler, schedframe.testing.fakeapi\n"
        "import schedframe.backends.kubernetes._cli\n"
        "print('kubernetes' in sys.modules, 'urllib3' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_the_run_path_never_imports_the_memory_backend() -> None:
    # What `schedframe run` imports before its first binding (start-up time).
    code = (
        "import sys\n"
        "import schedframe.cli._main, schedframe.config, schedframe.scheduler\n"
        "import schedframe.backends.kubernetes._backend, schedframe.backends.kubernetes._cli\n"
        "from schedframe.backends import KINDS, WatchEvent\n"
        "print(sorted(m for m in ('schedframe.backends._memory', 'kubernetes') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_fake_imports_on_its_own() -> None:
    code = "from schedframe.testing.fakeapi import FakeAPIServer; print(FakeAPIServer.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "FakeAPIServer"
