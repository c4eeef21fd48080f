"""Registry.discover: one entry-point scan per process, redone when distributions change."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from schedframe.runtime import Registry, _registry

GROUP = _registry.ENTRY_POINT_GROUP


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count the real scans (the cache is emptied first and restored by monkeypatch)."""
    monkeypatch.setattr(_registry, "_scans", {})
    calls: list[str] = []
    real = _registry._scan

    def counting(group: str) -> tuple[tuple[_registry.PluginSource, object], ...]:
        calls.append(group)
        return real(group)

    monkeypatch.setattr(_registry, "_scan", counting)
    return calls


def _install(site: Path, dist: str, version: str, entry_points: dict[str, str]) -> None:
    """Write a distribution's metadata into ``site``, as an installer would."""
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[schedframe.plugins]\n{lines}")
    # File-system timestamps can be coarser than two installs in a row in a test.
    stat = site.stat()
    os.utime(site, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_discover_scans_once_and_returns_independent_registries(scans: list[str]) -> None:
    first = Registry.discover()
    second = Registry.discover()
    assert len(scans) == 1
    assert first.sources() == second.sources()
    first.register("OnlyInFirst", lambda args, handle: None)  # type: ignore[arg-type,return-value]
    assert "OnlyInFirst" not in second
    assert "OnlyInFirst" not in Registry.discover()


def test_refresh_scans_again(scans: list[str]) -> None:
    Registry.discover()
    Registry.discover(refresh=True)
    assert len(scans) == 2


def test_groups_are_cached_apart(scans: list[str]) -> None:
    Registry.discover()
    assert len(Registry.discover("schedframe.no-such-group")) == 0
    Registry.discover()
    assert scans == ["schedframe.plugins", "schedframe.no-such-group"]


def test_a_distribution_installed_in_the_process_is_picked_up(
    scans: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = Registry.discover()
    assert "CacheProbe" not in before
    monkeypatch.syspath_prepend(str(tmp_path))  # a new sys.path entry
    _install(tmp_path, "cache-probe", "1.0", {"CacheProbe": "cache_probe:Plugin"})
    found = Registry.discover()
    assert [s for s in found.sources() if s.name == "CacheProbe"] == [
        _registry.PluginSource(
            name="CacheProbe", value="cache_probe:Plugin", distribution="cache-probe", version="1.0"
        )
    ]
    # Another install into a directory already on sys.path changes the directory's mtime.
    _install(tmp_path, "cache-probe-two", "2.0", {"CacheProbeTwo": "cache_probe_two:Plugin"})
    assert {"CacheProbe", "CacheProbeTwo"} <= set(Registry.discover().names())
    assert Registry.discover().names() == Registry.discover().names()
    assert len(scans) == 3


def test_a_directory_leaving_sys_path_takes_its_plugins_along(
    scans: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, "cache-probe", "1.0", {"CacheProbe": "cache_probe:Plugin"})
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "CacheProbe" in Registry.discover()
    sys.path.remove(str(tmp_path))
    assert "CacheProbe" not in Registry.discover()
    assert len(scans) == 2


def test_an_entry_point_edited_in_place_needs_refresh(
    scans: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, "cache-probe", "1.0", {"CacheProbe": "cache_probe:Plugin"})
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "CacheProbe" in Registry.discover()
    # Rewritten inside the existing .dist-info: the sys.path directory itself is untouched.
    (tmp_path / "cache_probe-1.0.dist-info" / "entry_points.txt").write_text(
        "[schedframe.plugins]\nCacheProbeRenamed = cache_probe:Plugin\n"
    )
    assert "CacheProbeRenamed" not in Registry.discover()
    assert "CacheProbeRenamed" in Registry.discover(refresh=True)


def test_sources_name_each_distribution_as_its_metadata_does() -> None:
    if sys.version_info >= (3, 12):
        from importlib.metadata import entry_points
    else:
        from importlib_metadata import entry_points

    expected = {(ep.name, ep.dist.name, ep.dist.version) for ep in entry_points(group=GROUP)}
    found = {(s.name, s.distribution, s.version) for s in Registry.discover(refresh=True).sources()}
    assert found == expected


class _Dist:
    """A distribution whose metadata the header scan cannot read."""

    name = "from-the-parser"
    version = "9.9"

    def __init__(self, text: str | None) -> None:
        self._text = text

    def read_text(self, filename: str) -> str | None:
        return self._text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "Metadata-Version: 2.1\nName: probe\nSummary: x: y\nVersion: 1.2\n\nName: body\n",
            ("probe", "1.2"),
            id="headers read up to the blank line",
        ),
        pytest.param("Metadata-Version: 2.1\nName: probe\n\nVersion: 1\n", None, id="no version"),
        pytest.param(None, None, id="no metadata file"),
    ],
)
def test_name_and_version_fall_back_to_the_full_parser(
    text: str | None, expected: tuple[str, str] | None
) -> None:
    fallback = ("from-the-parser", "9.9")
    assert _registry._name_and_version(_Dist(text)) == (expected or fallback)


def test_the_scan_finds_what_entry_points_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan skips files that do not mention the group; it still equals
    ``entry_points(group=...)``: a distribution installed twice counts where it is found
    first (even when only the shadowed copy declares plugins), and a file mentioning the
    group outside a section header declares nothing in it."""
    import importlib_metadata

    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    _install(first, "probe-a", "2.0", {"ProbeA": "probe_a:New"})
    _install(second, "probe-a", "1.0", {"ProbeA": "probe_a:Old", "ProbeOld": "probe_a:Gone"})
    info = first / "probe_b-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: probe-b\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[console_scripts]\nprobe = schedframe.plugins.cli:main\n"
    )
    shadowed = second / "probe_c-1.0.dist-info"
    shadowed.mkdir()
    (shadowed / "METADATA").write_text("Metadata-Version: 2.1\nName: probe-c\nVersion: 1.0\n")
    (shadowed / "entry_points.txt").write_text(f"[{GROUP}]\nProbeC = probe_c:Plugin\n")
    _install(second, "probe-d", "1.0", {"ProbeD": "probe_d:Plugin"})
    plain = first / "probe_c-2.0.dist-info"  # probe-c again, first on the path, no plugins
    plain.mkdir()
    (plain / "METADATA").write_text("Metadata-Version: 2.1\nName: probe-c\nVersion: 2.0\n")
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(first))

    got = _view(_registry._entry_points(GROUP))
    assert got == _view(importlib_metadata.entry_points(group=GROUP))
    probes = [entry for entry in got if entry[0].startswith("Probe")]
    assert probes == [("ProbeA", "probe_a:New", "2.0"), ("ProbeD", "probe_d:Plugin", "1.0")]


def _zipped_distribution(directory: Path, entry_points: str) -> Path:
    """A zip archive holding distribution ``zipped-probe`` 1.0 with ``entry_points``."""
    import zipfile

    archive = directory / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(
            "zipped_probe-1.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: zipped-probe\nVersion: 1.0\n",
        )
        zf.writestr("zipped_probe-1.0.dist-info/entry_points.txt", entry_points)
    return archive


def _view(eps: object) -> list[tuple[str, str, str | None]]:
    """Each entry point as (name, value, version of its distribution)."""
    return [(ep.name, ep.value, _registry._name_and_version(ep.dist)[1]) for ep in eps]  # type: ignore[attr-defined]


def _library_scan(group: str) -> list[tuple[str, str, str | None]]:
    """The scan as importlib-metadata does it: every distribution, the first of a name kept."""
    import importlib_metadata

    found, seen = [], set()
    for dist in importlib_metadata.distributions():
        if dist._normalized_name in seen:  # type: ignore[attr-defined]
            continue
        seen.add(dist._normalized_name)  # type: ignore[attr-defined]
        found.extend(dist.entry_points.select(group=group))
    return _view(found)


@pytest.mark.parametrize("group", [GROUP, "console_scripts", "pytest11", "no.such.group"])
def test_reading_the_metadata_directories_finds_what_the_library_finds(group: str) -> None:
    """On this environment's own sys.path (real installs: wheels, editable installs, the
    standard library's missing zip), with and without importlib-metadata's finder installed."""
    import importlib_metadata  # noqa: F401  (installs its finder on 3.11)

    direct = _registry._read_metadata_directories(group)
    assert direct is not None
    assert _view(direct) == _library_scan(group)


def test_reading_the_metadata_directories_matches_the_library_on_awkward_layouts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Names with dots and capitals, an egg-info directory and an egg-info file, comments and
    other sections around the group, a missing sys.path entry and an empty one."""
    site = tmp_path / "site"
    site.mkdir()
    dotted = site / "Zope.Probe-4.0.dist-info"
    dotted.mkdir()
    (dotted / "METADATA").write_text("Metadata-Version: 2.1\nName: Zope.Probe\nVersion: 4.0\n")
    (dotted / "entry_points.txt").write_text(
        f"# a comment\n[console_scripts]\nzp = zope_probe:main\n\n[{GROUP}]\n"
        "  ZopeProbe =  zope_probe.plugin:Plugin [extra]  \n; not a comment in this format = x\n"
    )
    egg = site / "legacy_probe.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: legacy-probe\nVersion: 0.1\n")
    (egg / "entry_points.txt").write_text(f"[{GROUP}]\nLegacyProbe = legacy_probe:Plugin\n")
    (site / "old_file-1.0-py3.11.egg-info").write_text("Metadata-Version: 1.0\nName: old-file\n")
    _install(site, "zope-probe", "3.0", {"Shadowed": "zope_probe:Old"})  # same name, later
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(tmp_path / "missing"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", *sys.path])

    direct = _registry._read_metadata_directories(GROUP)
    assert direct is not None
    assert _view(direct) == _library_scan(GROUP)
    probes = sorted(entry[:2] for entry in _view(direct) if "Probe" in entry[0])
    assert probes == [
        ("LegacyProbe", "legacy_probe:Plugin"),
        ("ZopeProbe", "zope_probe.plugin:Plugin [extra]"),
    ]


def test_layouts_only_the_library_reads_are_left_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _zipped_distribution(tmp_path, f"[{GROUP}]\nZipped = zp:Plugin\n")
    with monkeypatch.context() as patch:
        patch.syspath_prepend(str(archive))
        assert _registry._read_metadata_directories(GROUP) is None
        assert ("Zipped", "zp:Plugin", "1.0") in _view(_registry._entry_points(GROUP))

    upper = tmp_path / "upper"
    (upper / "Upper_Probe-1.0.DIST-INFO").mkdir(parents=True)
    with monkeypatch.context() as patch:
        patch.syspath_prepend(str(upper))
        assert _registry._read_metadata_directories(GROUP) is None

    class OwnFinder:
        """A meta-path finder that supplies distributions of its own."""

        def find_spec(self, *args: object) -> None:
            return None

        def find_distributions(self, *args: object) -> list[object]:
            return []

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, OwnFinder()])
    assert _registry._read_metadata_directories(GROUP) is None


@pytest.mark.parametrize(
    "value",
    ["os.path:join", "os.path", "os:path.join", "os.path : join [extra1, extra2]", "os:"],
)
def test_an_entry_point_read_directly_loads_what_the_library_loads(value: str) -> None:
    import importlib_metadata

    dist = _registry._MetadataDirectory(os.devnull)
    ours = _registry._EntryPoint("probe", value, GROUP, dist)
    library = importlib_metadata.EntryPoint(name="probe", value=value, group=GROUP)
    try:
        expected: object = library.load()
    except Exception as exc:
        with pytest.raises(type(exc)):
            ours.load()
    else:
        assert ours.load() is expected


def test_an_invalid_reference_fails_to_load_with_its_value_named() -> None:
    ours = _registry._EntryPoint(
        "probe", "not a reference!", GROUP, _registry._MetadataDirectory("")
    )
    with pytest.raises(ValueError, match="'not a reference!' is not a valid entry point reference"):
        ours.load()


def test_discovery_imports_no_metadata_library(tmp_path: Path) -> None:
    """In a fresh process the plugins are found without importing importlib-metadata (a tenth
    of the work from interpreter start to a first framework)."""
    import subprocess

    code = (
        "import sys\n"
        "from schedframe.runtime import Registry\n"
        "names = Registry.discover().names()\n"
        "assert 'NodeResourcesFit' in names, names\n"
        "print(sorted(m for m in sys.modules if m.startswith(('importlib_metadata', 'importlib.metadata'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert out.stdout.strip() == "[]"


def test_an_unreadable_entry_points_file_is_one_error_naming_the_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """importlib-metadata cannot read it either (its own error is a TypeError from deep
    inside); discovery names the file, the line and its text instead."""
    import importlib_metadata

    from schedframe.errors import PluginError

    _install(tmp_path, "broken-probe", "1.0", {})
    info = tmp_path / "broken_probe-1.0.dist-info"
    (info / "entry_points.txt").write_text(
        f"# comment\n[{GROUP}]\nGood = broken_probe:Plugin\nno equals sign here\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises((TypeError, ValueError)):
        importlib_metadata.entry_points(group=GROUP)
    expected = (
        f"cannot read the entry points in {info / 'entry_points.txt'}: line 4 "
        "('no equals sign here') is not 'name = value'; reinstall or remove the distribution"
    )
    with pytest.raises(PluginError) as raised:
        Registry.discover(refresh=True)
    assert str(raised.value) == expected


def test_an_unreadable_entry_points_file_in_a_zip_is_one_error_naming_the_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from schedframe.errors import PluginError

    archive = _zipped_distribution(tmp_path, f"[{GROUP}]\nnot a pair\n")
    monkeypatch.syspath_prepend(str(archive))
    with pytest.raises(
        PluginError,
        match=r"cannot read the entry points of .*zipped_probe-1\.0\.dist-info/?: TypeError",
    ):
        Registry.discover(refresh=True)
