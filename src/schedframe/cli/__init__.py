"""The ``schedframe`` command line: ``simulate``, ``explain``, ``plugins``, ``config``, ``run``.

Run ``schedframe --help`` (or ``python -m schedframe``). :func:`main` takes an argument
list and returns the exit code, so scripts can run the exact code path of the command.
"""

from __future__ import annotations

from schedframe.cli._main import EXIT_BAD_INPUT, EXIT_INTERNAL, cli, main

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERNAL", "cli", "main"]
