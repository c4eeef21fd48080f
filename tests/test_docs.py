"""The guides' code runs as written.

Every Python block of the README, the getting-started guide and the plugin author's guide is
executed here, from the repository's root directory, so a guide cannot drift from the API:

* a block introduced by a line naming a file (`` `src/schedframe_max_pods/__init__.py`: ``)
  is that file of the guide's example package; the package is built in a temporary directory
  with the entry points its ``pyproject.toml`` block declares, so discovery finds the plugin as
  an installed one, and the ``test_*`` functions of its test files are run;
* any other block is a self-contained snippet, executed on its own as a reader would paste it.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from schedframe.runtime import Registry

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ROOT / "docs" / "guides"

_FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<code>.*?)^```\n", re.M | re.S)
_FILE_LABEL = re.compile(r"`(?P<path>[\w./-]+)`:$")


class Block:
    """One fenced block of a Markdown page."""

    def __init__(self, page: Path, line: int, lang: str, code: str, label: str | None) -> None:
        self.page = page
        self.line = line
        self.lang = lang
        self.code = code
        #: The file the block is, when the line before it names one.
        self.label = label

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip().rsplit("\n", 1)[-1]
        label = _FILE_LABEL.search(before)
        line = text.count("\n", 0, match.start()) + 1
        found.append(
            Block(
                page,
                line,
                match.group("lang"),
                match.group("code"),
                label.group("path") if label else None,
            )
        )
    return found


def run_block(block: Block, namespace: dict[str, Any] | None = None) -> str:
    """Execute ``block`` (in ``namespace``, a fresh one by default); what it printed."""
    code = compile(block.code, block.where(), "exec")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, namespace if namespace is not None else {"__name__": "__docs__"})
    return out.getvalue()


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize(
    "page", [ROOT / "README.md", GUIDES / "getting-started.md"], ids=lambda p: p.name
)
def test_every_python_block_runs_and_prints_what_the_page_shows(at_root: None, page: Path) -> None:
    python = [b for b in blocks(page) if b.lang == "python"]
    assert python, "the guide has no Python block"
    printed = "".join(run_block(block) for block in python)
    # Every output the page shows is what its code prints.
    for shown in (b for b in blocks(page) if b.lang == "text"):
        assert shown.code in printed, f"{shown.where()}: not printed by the guide's code"
    assert "default/web-1 -> node-b1" in printed


@contextlib.contextmanager
def _package_from_guide(
    page: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, Block]]:
    """The guide's example package, importable and discovered like an installed one."""
    files = {b.label: b for b in blocks(page) if b.label is not None}
    project = tomllib.loads(files["pyproject.toml"].code)["project"]
    for label, block in files.items():
        if label.startswith("src/"):
            target = site / label.removeprefix("src/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code, encoding="utf-8")
    dist = f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info = site / dist
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    sections = "".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in points.items())
        for group, points in project["entry-points"].items()
    )
    (info / "entry_points.txt").write_text(sections)
    monkeypatch.syspath_prepend(str(site))
    modules = set(sys.modules)
    try:
        yield files
    finally:
        for name in set(sys.modules) - modules:
            if name.startswith(project["name"].replace("-", "_")):
                del sys.modules[name]
        Registry.discover(refresh=True)


def _tests_of(block: Block) -> list[Callable[[], None]]:
    namespace: dict[str, Any] = {"__name__": f"docs_{Path(block.label or 'x').stem}"}
    run_block(block, namespace)
    tests = [f for name, f in namespace.items() if name.startswith("test_") and callable(f)]
    assert tests, f"{block.where()}: no test function"
    return tests


def test_the_plugin_guides_package_is_discovered_and_its_tests_pass(
    at_root: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = GUIDES / "writing-a-plugin.md"
    with _package_from_guide(page, tmp_path, monkeypatch) as files:
        registry = Registry.discover(refresh=True)
        assert [s.distribution for s in registry.sources() if s.name == "MaxPods"] == [
            "schedframe-max-pods"
        ]
        ran = []
        for label, block in files.items():
            if label.startswith("tests/") and label.endswith(".py"):
                for test in _tests_of(block):
                    test()
                    ran.append(test.__name__)
    assert sorted(ran) == [
        "test_a_full_node_is_filtered_out",
        "test_a_scheduler_spreads_pods_and_respects_the_cap",
        "test_max_pods_conforms",
    ]


def test_the_getting_started_guide_shows_a_filter_verdict(at_root: None) -> None:
    page = GUIDES / "getting-started.md"
    first = next(b for b in blocks(page) if b.lang == "python")
    printed = run_block(first).splitlines()
    assert printed[0] == (
        "node-a1 Status(Code.UNSCHEDULABLE, 'Insufficient cpu', plugin='NodeResourcesFit')"
    )
    assert printed[1:] == ["node-a2 None", "node-b1 None", "node-b2 None"]


def test_every_other_python_block_of_the_plugin_guide_runs_on_its_own(at_root: None) -> None:
    snippets = [
        b for b in blocks(GUIDES / "writing-a-plugin.md") if b.lang == "python" and b.label is None
    ]
    assert snippets
    for block in snippets:
        run_block(block)


def _cli_commands() -> dict[str, Any]:
    from schedframe.cli import cli

    return dict(cli.commands)


def test_the_cli_guide_has_a_section_per_command_naming_every_option() -> None:
    import click

    text = (GUIDES / "cli.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## `schedframe (\w+)", text, re.M)
    commands = _cli_commands()
    assert sorted(headings) == sorted(commands)
    common, *parts = re.split(r"^## `schedframe \w+.*$", text, flags=re.M)
    sections = dict(zip(headings, parts, strict=True))
    for name, command in commands.items():
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                for opt in [*param.opts, *param.secondary_opts]:
                    # An option several commands share may be described once, before the
                    # commands' sections (--debug, --rich, the feature-gate flags).
                    assert opt in sections[name] or opt in common, (
                        f"cli.md, {name}: {opt} is not described"
                    )


def test_the_cli_guides_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``schedframe`` line of the guide but ``run`` (which needs a cluster), from a
    directory where ``examples/`` is the repository's."""
    import shlex

    from schedframe.cli import main

    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    ran = []
    for block in blocks(GUIDES / "cli.md"):
        if block.lang != "sh":
            continue
        for line in block.code.replace("\\\n", " ").splitlines():
            words = shlex.split(line)
            if words[:1] != ["schedframe"] or words[1] == "run":
                continue
            if "<" in words:
                at = words.index("<")
                stdin = (tmp_path / words[at + 1]).read_text(encoding="utf-8")
                monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
                words = words[:at]
            for word in words:
                if word.startswith("examples/"):
                    assert (ROOT / word).exists(), f"{block.where()}: {word} does not exist"
            assert main(words[1:]) == 0, f"{block.where()}: {line}"
            ran.append(words[1])
    assert sorted(set(ran)) == [
        "compare",
        "config",
        "explain",
        "fit",
        "plugins",
        "scenario",
        "simulate",
        "sweep",
        "whatif",
    ]
