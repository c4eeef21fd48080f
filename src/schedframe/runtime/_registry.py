"""Where plugins come from: entry points in group ``schedframe.plugins``, plus in-process additions.

Discovery reads installed distributions' metadata only; a plugin's module is imported the first
time a profile enables it (or :meth:`Registry.load` is called). The scan is done once per process
and ``sys.path`` state (see :meth:`Registry.discover`). Upstream: ``runtime.Registry`` (a name ->
factory map, merged from in-tree and out-of-tree registries; a clash is an error).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import re
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
    """Every entry point in ``group`` with its source, the same distribution seen twice dropped."""
    found: list[tuple[PluginSource, Any]] = []
    seen: set[tuple[str, str]] = set()
    dists: dict[int, tuple[str | None, str | None]] = {}
    for ep in _entry_points(group):
        if (ep.name, ep.value) in seen:
            continue  # the same distribution seen twice on sys.path
        seen.add((ep.name, ep.value))
        dist = getattr(ep, "dist", None)
        if dist is None:
            name = version = None
        else:
            known = dists.get(id(dist))
            if known is None:
                known = dists[id(dist)] = _name_and_version(dist)
            name, version = known
        found.append(
            (PluginSource(name=ep.name, value=ep.value, distribution=name, version=version), ep)
        )
    return tuple(found)


def _entry_points(group: str) -> list[Any]:
    """``entry_points(group=group)``: the group's entry points of every distribution on
    ``sys.path``, a distribution installed twice counted where it is found first.

    ``entry_points()`` parses every distribution's ``entry_points.txt`` (a hundred and more in
    a typical environment) before selecting the group; here a file that does not mention the
    group is passed over unparsed, which makes the scan several times faster.
    """
    plain = _read_metadata_directories(group)
    if plain is not None:
        return plain
    found: list[Any] = []
    seen: set[object] = set()
    for dist in _metadata_library().distributions():
        # The key entry_points() tells distributions apart by (the normalised name).
        key = getattr(dist, "_normalized_name", None) or dist.metadata["Name"]
        if key in seen:
            continue
        seen.add(key)
        text = dist.read_text("entry_points.txt")
        if text and group in text:
            try:
                found.extend(dist.entry_points.select(group=group))
            except (TypeError, ValueError) as exc:  # the library's errors for a bad line
                where = getattr(dist, "_path", None) or key
                raise PluginError(
                    f"cannot read the entry points of {where}: {type(exc).__name__}: {exc}; "
                    "reinstall or remove the distribution"
                ) from exc
    return found


def _metadata_library() -> Any:
    """``importlib.metadata``, or its backport before Python 3.12 (imported on first use)."""
    if sys.version_info >= (3, 12):
        import importlib.metadata as library
    else:  # pragma: no cover - exercised on 3.11 only
        import importlib_metadata as library
    return library


#: How an entry point's value reads (the packaging spec's ``module:attr [extras]``).
_REFERENCE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")
_SEPARATORS = re.compile(r"[-_.]+")
#: The finder importlib-metadata installs in place of the standard library's path finder when it
#: is imported: its distributions too are exactly the metadata directories in the ``sys.path``
#: directories.
_BACKPORT_FINDER: Final = ("importlib_metadata", "MetadataPathFinder")


class _MetadataDirectory:
    """A ``*.dist-info``/``*.egg-info`` directory: what :func:`_scan` reads of a distribution."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path

    def read_text(self, filename: str) -> str | None:
        try:
            with open(os.path.join(self.path, filename), encoding="utf-8") as file:
                return file.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            return None

    def _parsed(self) -> Any:
        import pathlib

        return _metadata_library().PathDistribution(pathlib.Path(self.path))

    @property
    def name(self) -> str:
        """The ``Name`` field, by the full metadata parser (the header scan found none)."""
        return str(self._parsed().name)

    @property
    def version(self) -> str:
        return str(self._parsed().version)


class _EntryPoint:
    """One entry point read from a metadata directory; :meth:`load` as importlib-metadata's."""

    __slots__ = ("dist", "group", "name", "value")

    def __init__(self, name: str, value: str, group: str, dist: _MetadataDirectory) -> None:
        self.name = name
        self.value = value
        self.group = group
        self.dist = dist

    def load(self) -> Any:
        """The module the value names, or the attribute path in it after the colon."""
        match = _REFERENCE.match(self.value)
        if match is None:
            raise ValueError(f"{self.value!r} is not a valid entry point reference")
        target: Any = importlib.import_module(match.group("module"))
        for part in filter(None, (match.group("attr") or "").split(".")):
            target = getattr(target, part)
        return target


def _read_metadata_directories(group: str) -> list[Any] | None:
    """What :func:`_entry_points` returns, read straight from the metadata directories in the
    ``sys.path`` directories, without importing importlib-metadata (a tenth of the work from
    interpreter start to a first framework); ``None`` where that library must search instead.

    The search is the library's: each ``sys.path`` entry in order, in each the children named
    ``*.dist-info``/``*.egg-info`` grouped by normalised name in listing order, the first
    distribution of a name shadowing later ones. Anything else that can supply distributions
    (a zip archive or ``.egg`` on ``sys.path``, a meta-path finder of another kind, a name the
    library would read from the metadata) is left to the library, so both ways give the same
    result. An ``entry_points.txt`` that mentions the group and that the library cannot read
    either is a :class:`PluginError` both ways.
    """
    for finder in sys.meta_path:
        if getattr(finder, "find_distributions", None) is None:
            continue
        if finder is importlib.machinery.PathFinder:
            continue
        kind = type(finder)
        if (kind.__module__, kind.__qualname__) != _BACKPORT_FINDER:
            return None
    found: list[Any] = []
    seen: set[str] = set()
    for entry in sys.path:
        if not isinstance(entry, str) or entry.lower().endswith(".egg"):
            return None
        try:
            children = os.listdir(entry or ".")
        except NotADirectoryError:
            return None  # a zip archive: its metadata is read from the archive
        except OSError:
            continue  # missing or unreadable: the library finds nothing there either
        # The library lists an entry's distributions grouped by name, in the order each name
        # first appears; of a name, only the first counts (on this entry or an earlier one).
        first_of_name: dict[str, str] = {}
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                if not child.endswith((".dist-info", ".egg-info")):
                    return None  # the library names it from its metadata, not its stem
                key = _SEPARATORS.sub("_", low.rpartition(".")[0].partition("-")[0])
                first_of_name.setdefault(key, child)
        for key, child in first_of_name.items():
            if key in seen:
                continue
            seen.add(key)
            dist = _MetadataDirectory(os.path.join(entry, child))
            text = dist.read_text("entry_points.txt")
            if text and group in text:
                found.extend(_group_entries(text, group, dist))
    return found


def _group_entries(text: str, group: str, dist: _MetadataDirectory) -> list[_EntryPoint]:
    """The ``group`` section's entries of one ``entry_points.txt``.

    Raises:
        PluginError: a line in a section is not ``name = value`` (importlib-metadata cannot
            read the file either); the message names the file, the line and its text.
    """
    section = None
    points = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section is None:
            continue
        name, sep, value = line.partition("=")
        if not sep:
            where = os.path.join(dist.path, "entry_points.txt")
            raise PluginError(
                f"cannot read the entry points in {where}: line {number} ({line!r}) is not "
                "'name = value'; reinstall or remove the distribution"
            )
        if section == group:
            points.append(_EntryPoint(name.strip(), value.strip(), group, dist))
    return points


def _name_and_version(dist: Any) -> tuple[str | None, str | None]:
    """``Name`` and ``Version`` from the metadata's header block.

    ``dist.name``/``dist.version`` parse the whole file with :mod:`email` on every access;
    importing and running that parser was most of a scan. Both fields are single-line
    headers (core metadata spec), so a line scan finds them; anything unexpected falls back
    to the full parser.
    """
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    name = version = None
    for line in text.splitlines():
        if not line:
            break  # the end of the headers
        key, sep, value = line.partition(":")
        if not sep:
            continue
        if key == "Name" and name is None:
            name = value.strip()
        elif key == "Version" and version is None:
            version = value.strip()
        if name is not None and version is not None:
            return name, version
    return dist.name, dist.version


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

        The entry-point scan (a millisecond or two reading the metadata directories; tens of
        milliseconds where importlib-metadata must search) is cached per process: it is
        repeated only when ``sys.path`` changed, one of its directories' mtime changed (a
        distribution was installed or removed there), or ``refresh`` is true. Pass
        ``refresh=True`` after a change the mtimes do not show, such as an entry point edited in place in an existing
        ``*.dist-info``/``*.egg-info``. Each call returns a new, independent registry.
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
