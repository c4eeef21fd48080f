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


def test_an_unreadable_entry_points_file_is_one_error_naming_the_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """importlib-metadata's own error is a TypeError from deep inside that names no file;
    discovery names the file, the line and its text instead."""
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


def test_an_unreadable_entry_points_file_in_a_zip_is_one_error_naming_the_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from schedframe.errors import PluginError

    archive = _zipped_distribution(tmp_path, f"[{GROUP}]\nnot a pair\n")
    monkeypatch.syspath_prepend(str(archive))
    with pytest.raises(PluginError) as raised:
        Registry.discover(refresh=True)
    assert str(raised.value) == (
        f"cannot read the entry points in {archive}/zipped_probe-1.0.dist-info/entry_points.txt: "
        "line 2 ('not a pair') is not 'name = value'; reinstall or remove the distribution"
    )


def test_an_unreadable_entry_points_file_outside_the_group_still_fails_discovery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """entry_points() reads every distribution's file, so a broken file of an unrelated
    distribution stops discovery too: one error naming it, never a TypeError."""
    from schedframe.errors import PluginError

    _install(tmp_path, "broken-probe", "1.0", {})
    info = tmp_path / "broken_probe-1.0.dist-info"
    (info / "entry_points.txt").write_text("[console_scripts]\nnot a pair\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        PluginError, match=r"broken_probe-1\.0\.dist-info/entry_points\.txt: line 2"
    ):
        Registry.discover(refresh=True)
