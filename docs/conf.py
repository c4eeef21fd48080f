"""Sphinx configuration for the schedframe documentation (built with -W -n in CI)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

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
# Several modules re-export the same names (Clock, Binder): a short name in a type hint then
# resolves to more than one target, all of them the same object.
suppress_warnings = ["ref.python"]

# Nitpicky mode is on (here and with -n in CI): every cross-reference must resolve. What
# cannot, and is ignored below: objects of the standard library and of third-party packages,
# whose inventories (intersphinx) would need the network at build time; type variables and
# type-checking-only aliases, which are not documented objects; and objects of private
# modules. Everything else that does not resolve is an error of the docs.
nitpick_ignore_regex = [
    (
        r"py:.*",
        r"(collections\.abc|datetime|os|random|enum|fractions|threading|pathlib|typing"
        r"|hypothesis|pluggy|_pytest|pytest|numpy|attrs?|ssl)(\..*)?",
    ),
    (r"py:.*", r"(Path|datetime|npt\.NDArray|np\.\w+|st\.SearchStrategy|Settings)"),
    # prometheus_client's metric family, imported by its short name for type checkers only.
    (r"py:class", r"Metric"),
    # NumPy array aliases, defined for type checkers only (in TYPE_CHECKING blocks).
    (r"py:class", r"\w+Array"),
    (r"py:.*", r"(.*\.)?_?[TF]"),
    # Type-checking-only aliases of private modules used in public signatures:
    # ``Validate`` (objects._codec, a Literal of the validation modes) and ``BatchVerdicts``
    # (runtime._batch, a tuple of arrays).
    (r"py:class", r"(Validate|BatchVerdicts)"),
    # Objects of private modules that no public module re-exports.
    (r"py:.*", r"schedframe(\.\w+)*\._\w+(\.\w+)*"),
]

#: Abbreviations the sources use for modules in type hints (``import ... as fw``).
_ALIASES = {"fw.": "schedframe.framework."}
#: Private protocols that stand for a public class in type hints.
_STANDS_FOR = {"BackendLike": "schedframe.backends.Backend"}


def _resolve_alias(app: Sphinx, env: BuildEnvironment, node: Any, contnode: Any) -> Any:
    """Resolve ``fw.X`` as ``schedframe.framework.X``, and a bare name (``Binder``) as the one
    documented object of that name, as a reader of the hint would."""
    if node.get("refdomain") != "py":
        return None
    target = _STANDS_FOR.get(node["reftarget"], node["reftarget"])
    for short, full in _ALIASES.items():
        if target.startswith(short):
            target = full + target[len(short) :]
    domain = env.get_domain("py")
    retry = node.deepcopy()
    retry["reftarget"] = target
    retry["refspecific"] = True
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], target, retry, contnode
    )


def setup(app: Sphinx) -> None:
    app.connect("missing-reference", _resolve_alias)
