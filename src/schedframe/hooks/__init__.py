"""Observer hooks (pluggy): mark implementations with :data:`impl`.

Observers are found through the entry-point group :data:`ENTRY_POINT_GROUP`
(``schedframe.hooks``) or registered directly on a plugin manager from
:func:`plugin_manager`. Set ``SCHEDFRAME_DISABLE_HOOK_AUTOLOAD=1`` to skip entry points.
"""

from __future__ import annotations

import logging
import os
from typing import Final

import pluggy

from schedframe.hooks import _spec
from schedframe.hooks._observers import Observers

__all__ = ["ENTRY_POINT_GROUP", "NAME", "Observers", "impl", "plugin_manager"]

#: The pluggy project name.
NAME: Final = "schedframe"
#: Entry-point group observers are loaded from.
ENTRY_POINT_GROUP: Final = "schedframe.hooks"
#: Decorator marking an observer hook implementation.
impl = pluggy.HookimplMarker(NAME)

log = logging.getLogger("schedframe.hooks")


def plugin_manager(*, load_entry_points: bool = True) -> pluggy.PluginManager:
    """A plugin manager with schedframe's hookspecs, observers from entry points loaded.

    Entry points are skipped when ``load_entry_points`` is false or the environment variable
    ``SCHEDFRAME_DISABLE_HOOK_AUTOLOAD`` is set.
    """
    pm = pluggy.PluginManager(NAME)
    pm.add_hookspecs(_spec)
    if load_entry_points and not os.environ.get("SCHEDFRAME_DISABLE_HOOK_AUTOLOAD"):
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    return pm
