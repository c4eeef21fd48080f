"""Package attributes resolved on first use (PEP 562), for packages whose ``__init__`` should
not import every submodule."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, where: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: a name in ``where`` is imported from the
    submodule named there (``{"Cache": "_cache"}``) the first time it is asked for, then kept
    in the package's namespace; ``dir()`` lists ``public`` (the package's ``__all__``)."""

    def __getattr__(name: str) -> Any:
        submodule = where.get(name)
        if submodule is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{submodule}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(public)

    return __getattr__, __dir__
