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

    def view(eps: object) -> list[tuple[str, str, str]]:
        return [(ep.name, ep.value, ep.dist.metadata["Version"]) for ep in eps]  # type: ignore[attr-defined]

    got = view(_registry._entry_points(GROUP))
    assert got == view(importlib_metadata.entry_points(group=GROUP))
    probes = [entry for entry in got if entry[0].startswith("Probe")]
    assert probes == [("ProbeA", "probe_a:New", "2.0"), ("ProbeD", "probe_d:Plugin", "1.0")]
