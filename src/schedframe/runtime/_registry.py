"""Where plugins come from: entry points in group ``schedframe.plugins``, plus in-process additions.

Discovery reads installed distributions' metadata only, through :mod:`importlib.metadata` (the
``importlib_metadata`` backport before Python 3.12); a plugin's module is imported the first
time a profile enables it (or :meth:`Registry.load` is called). The scan is done once per process
and ``sys.path`` state (see :meth:`Registry.discover`). Upstream: ``runtime.Registry`` (a name ->
factory map, merged from in-tree and out-of-tree registries; a clash is an error).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from schedframe.errors import PluginError

if TYPE_CHECKING:
    from schedframe.framework import Handle, Plugin

__all__ = ["ENTRY_POINT_GROUP", "PluginFactory", "PluginSource", "Registry"]

#: The entry-point group schedframe reads plugins from.
ENTRY_POINT_GROUP: Final = "schedframe.plugins"

#: ``factory(args, handle) -> plugin``. A plugin class taking ``(args, handle)`` is its own
#: factory; its optional ``args_type`` attribute names the args class.
PluginFactory = Callable[[Any, "Handle"], "Plugin"]


@attrs.frozen(kw_only=True)
class PluginSource:
    """Where one plugin name comes from, as discovery saw it (nothing imported)."""

    name: str
    #: ``module:attribute`` of the factory, or ``<in-process>`` for :meth:`Registry.register`.
    value: str
    #: The distribution that declares the entry point (``None`` for in-process plugins).
    distribution: str | None = None
    version: str | None = None


#: One scan per group: what it found, and the ``sys.path`` state it was made for (see
#: ``_path_state``). A new Registry is built from it on every ``Registry.discover()``.
_scans: dict[
    str, tuple[tuple[tuple[str, int | None], ...], tuple[tuple[PluginSource, Any], ...]]
] = {}


def _path_state() -> tuple[tuple[str, int | None], ...]:
    """Every ``sys.path`` entry (absolute) with its directory's modification time.

    Installing, upgrading or removing a distribution adds or removes a ``*.dist-info`` (or
    ``.egg-info``, ``.pth``) entry in a ``sys.path`` directory, which changes that directory's
    mtime; a changed ``sys.path`` or working directory changes the entries. A few ``stat``
    calls, against tens of milliseconds for a scan.
    """
    state = []
    for entry in sys.path:
        try:
            path = os.path.abspath(entry or os.curdir)
        except (TypeError, ValueError):
            continue  # not a path (a finder hook's key): metadata is not read from it either
        try:
            mtime: int | None = os.stat(path).st_mtime_ns
        except OSError:
            mtime = None
        state.append((path, mtime))
    return tuple(state)


def _scan(group: str) -> tuple[tuple[PluginSource, Any], ...]:
    """Every entry point in ``group`` with the distribution that declares it.

    ``entry_points(group=...)`` of :mod:`importlib.metadata` (its backport,
    ``importlib_metadata``, before Python 3.12): each distribution counted where it is first
    found on ``sys.path``. Each distribution's name and version are read once.
    """
    library = _metadata_library()
    try:
        points = library.entry_points(group=group)
    except (TypeError, ValueError) as exc:  # the library's errors for an unreadable file
        raise _unreadable_entry_points(library, exc) from exc
    found: list[tuple[PluginSource, Any]] = []
    dists: dict[int, tuple[str | None, str | None]] = {}
    for ep in points:
        dist = getattr(ep, "dist", None)
        if dist is None:
            name = version = None
        else:
            known = dists.get(id(dist))
            if known is None:
                known = dists[id(dist)] = (dist.name, dist.version)
            name, version = known
        found.append(
            (PluginSource(name=ep.name, value=ep.value, distribution=name, version=version), ep)
        )
    return tuple(found)


def _metadata_library() -> Any:
    """``importlib.metadata``, or its backport before Python 3.12 (imported on first use)."""
    if sys.version_info >= (3, 12):
        import importlib.metadata as library
    else:  # pragma: no cover - exercised on 3.11 only
        import importlib_metadata as library
    return library


def _unreadable_entry_points(library: Any, exc: Exception) -> PluginError:
    """The error for an ``entry_points.txt`` the library cannot read, naming the file.

    ``entry_points()`` reads every distribution's file, and its own error (a ``TypeError`` from
    deep inside its parser) names none; on this error path only, each distribution is read
    again on its own to find the culprit and the first line that is not ``name = value``.
    """
    for dist in library.distributions():
        try:
            dist.entry_points  # noqa: B018 - parsing is the point
        except (TypeError, ValueError):
            pass
        else:
            continue
        base = getattr(dist, "_path", None)
        where = str(base / "entry_points.txt") if base is not None else dist.name
        section = None
        for number, raw in enumerate((dist.read_text("entry_points.txt") or "").splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):  # the library reads no other comments
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line
            elif section is not None and "=" not in line:
                return PluginError(
                    f"cannot read the entry points in {where}: line {number} ({line!r}) is "
                    "not 'name = value'; reinstall or remove the distribution"
                )
        return PluginError(
            f"cannot read the entry points in {where}: {type(exc).__name__}: {exc}; "
            "reinstall or remove the distribution"
        )
    return PluginError(f"cannot read the installed entry points: {type(exc).__name__}: {exc}")


class Registry:
    """A name -> plugin factory map, lazily loaded.

    >>> reg = Registry()
    >>> reg.register("Noop", NoopPlugin)            # doctest: +SKIP
    >>> Registry.discover().names()                 # doctest: +SKIP
    ['DefaultBinder', 'DefaultPreemption', ...]
    """

    def __init__(self, factories: Mapping[str, PluginFactory] | None = None) -> None:
        self._sources: dict[str, list[PluginSource]] = {}
        self._entry_points: dict[str, Any] = {}
        self._loaded: dict[str, PluginFactory] = {}
        for name, factory in (factories or {}).items():
            self.register(name, factory)

    @classmethod
    def discover(cls, group: str = ENTRY_POINT_GROUP, *, refresh: bool = False) -> Registry:
        """A new registry of every installed plugin in ``group``; imports no plugin module.

        The entry-point scan (``importlib.metadata.entry_points``, tens of milliseconds in a
        typical environment) is cached per process: it is
        repeated only when ``sys.path`` changed, one of its directories' mtime changed (a
        distribution was installed or removed there), or ``refresh`` is true. Pass
        ``refresh=True`` after a change the mtimes do not show, such as an entry point edited
        in place in an existing ``*.dist-info``/``*.egg-info``. Each call returns a new, independent registry.
        """
        state = _path_state()
        scan = _scans.get(group)
        if refresh or scan is None or scan[0] != state:
            scan = (state, _scan(group))
            _scans[group] = scan
        reg = cls()
        for source, ep in scan[1]:
            reg._sources.setdefault(source.name, []).append(source)
            reg._entry_points.setdefault(source.name, ep)
        return reg

    def register(self, name: str, factory: PluginFactory, *, replace: bool = False) -> None:
        """Add an in-process plugin (embedding, tests). A taken name raises unless ``replace``."""
        if name in self._sources and not replace:
            raise PluginError(
                f"a plugin named {name} already exists (from {self._describe(name)}); "
                "pass replace=True to override it"
            )
        value = f"{getattr(factory, '__module__', '?')}:{getattr(factory, '__qualname__', '?')}"
        self._sources[name] = [PluginSource(name=name, value=value)]
        self._entry_points.pop(name, None)
        self._loaded[name] = factory

    def merge(self, other: Registry) -> None:
        """Add every plugin of ``other``; a name in both is an error (upstream ``Registry.Merge``)."""
        for name in other.names():
            if name in self._sources:
                raise PluginError(
                    f"a plugin named {name} already exists (from {self._describe(name)}; "
                    f"again from {other._describe(name)})"
                )
        for name, sources in other._sources.items():
            self._sources[name] = list(sources)
            if name in other._loaded:
                self._loaded[name] = other._loaded[name]
            if name in other._entry_points:
                self._entry_points[name] = other._entry_points[name]

    def names(self) -> list[str]:
        """Every plugin name, sorted."""
        return sorted(self._sources)

    def sources(self) -> list[PluginSource]:
        """Where every plugin comes from (clashing names list each source)."""
        return [s for name in self.names() for s in self._sources[name]]

    def __contains__(self, name: object) -> bool:
        return name in self._sources

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._sources)

    def is_loaded(self, name: str) -> bool:
        """True once ``name``'s module has been imported."""
        return name in self._loaded

    def load(self, name: str) -> PluginFactory:
        """The factory for ``name``, importing its module on first use.

        Raises:
            PluginError: the name is unknown (the message lists what is installed), declared
                by two distributions, or its module or attribute cannot be imported.
        """
        factory = self._loaded.get(name)
        if factory is not None:
            return factory
        sources = self._sources.get(name)
        if not sources:
            available = ", ".join(self.names()) or "none"
            raise PluginError(f'no plugin named "{name}" is installed; available: {available}')
        if len(sources) > 1:
            raise PluginError(
                f'plugin name "{name}" is declared by several distributions: '
                f"{self._describe(name)}; uninstall one of them"
            )
        try:
            loaded: PluginFactory = self._entry_points[name].load()
        except Exception as exc:
            raise PluginError(
                f'cannot load plugin "{name}" from {sources[0].value}: {type(exc).__name__}: {exc}'
            ) from exc
        if not callable(loaded):
            raise PluginError(f'plugin "{name}" entry point {sources[0].value} is not callable')
        self._loaded[name] = loaded
        return loaded

    def _describe(self, name: str) -> str:
        parts = []
        for s in self._sources.get(name, []):
            where = f"{s.distribution} {s.version}" if s.distribution else "in-process"
            parts.append(f"{where} ({s.value})")
        return ", ".join(parts)
