"""``python -m schedframe``: the ``schedframe`` command."""

from __future__ import annotations

import sys

from schedframe.cli import main

if __name__ == "__main__":
    sys.exit(main())
