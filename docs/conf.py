"""Sphinx configuration for the schedframe documentation (built with -W -n in CI)."""

from __future__ import annotations

project = "schedframe"
author = "the schedframe developers"
copyright = "2026, the schedframe developers"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
html_theme = "furo"
html_title = "schedframe"
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
# Render "Attributes:" sections as fields, so attributes autodoc also documents are not
# described twice.
napoleon_use_ivar = True
# Several modules re-export the same names (Clock, Binder); type hints then resolve to more
# than one target, which is harmless.
suppress_warnings = ["ref.python"]
# Type hints name objects that autodoc cannot always resolve (forward references in
# TYPE_CHECKING blocks, type aliases); nitpicky mode would flag each one.
nitpick_ignore_regex = [(r"py:.*", r".*")]
