"""``python -m schedframe.cli`` (or ``python -m schedframe``): the ``schedframe`` command."""

from __future__ import annotations

import sys

from schedframe.cli import main

sys.exit(main())
