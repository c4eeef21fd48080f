"""Fuzzers for every file schedframe reads: configs, manifests, workloads, kubeconfigs.

Each input is a seed document (the fixtures, the examples, a kubeconfig) mutated as a
hostile user would: values swapped for huge, negative, NaN, surrogate, multi-line, deeply
nested or wrongly typed ones, keys dropped or added, and the text itself cut, spliced or
salted with YAML syntax. Every load must end in success or in the loader's own error
(:class:`~schedframe.errors.SchedframeError`: what the CLI turns into exit 2), with a message
of sensible lines; never another exception (an internal error and a traceback at the CLI).

The CI budget is small (``property`` marker). The ``fuzz`` nox session raises it with
``SCHEDFRAME_FUZZ_EXAMPLES`` (examples per fuzzer) and sets ``SCHEDFRAME_FUZZ_DEADLINE``
(seconds one input may take: a hang is a failure there, never in the unit suite).
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedframe.errors import SchedframeError

pytestmark = [
    pytest.mark.property,
    # A 100 kB input is a fine input; hypothesis warns that printing it would be long.
    pytest.mark.filterwarnings("ignore:Generating overly large repr"),
]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("SCHEDFRAME_FUZZ_EXAMPLES", "12"))
DEADLINE = float(os.environ.get("SCHEDFRAME_FUZZ_DEADLINE", "0")) or None
#: The longest line an error message may have (values are quoted in 200 characters at most).
LONGEST_LINE = 4_000

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)


def _seeds(*patterns: str) -> list[Any]:
    docs: list[Any] = []
    for pattern in patterns:
        for path in sorted(ROOT.glob(pattern)):
            docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d is not None)
    assert docs, patterns
    return docs


CONFIG_SEEDS = _seeds("tests/fixtures/configs/upstream/*.yaml", "examples/basic/*pack*.yaml")
MANIFEST_SEEDS = _seeds(
    "tests/fixtures/manifests/*.yaml", "examples/*/cluster.yaml", "examples/*/pods.yaml"
)
WORKLOAD_SEEDS = _seeds("examples/*/workload.yaml")
KUBECONFIG_SEEDS: list[Any] = [
    {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443"}}],
        "users": [{"name": "u", "user": {"token": "s3cret-token"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "n"}}],
        "current-context": "x",
    }
]

HOSTILE_SCALARS = st.sampled_from(
    [
        None,
        True,
        -1,
        0,
        2**63,
        -(2**64),
        1e308,
        -1e-320,
        math.inf,
        math.nan,
        "",
        "NaN",
        "1e308",
        "-5",
        "9" * 5000 + "Ki",
        "1.5Ei",
        "\ud800",
        "a\nb\r\nc",
        "x" * 100_000,
        "'; {}[]&*!|>%@`",
        "kubescheduler.config.k8s.io/v1beta3",
        "DefaultBinder",
        "*",
        "RequestedToCapacityRatio",
        "NoSchedule",
    ]
)


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for i in range(depth):
        value = {"a": value} if i % 2 else [value]
    return value


HOSTILE_VALUES = st.one_of(
    HOSTILE_SCALARS,
    st.text(max_size=40),
    st.integers(),
    st.floats(),
    st.builds(_deep, st.integers(1, 1_200)),
    st.lists(HOSTILE_SCALARS, max_size=4),
    st.dictionaries(st.text(max_size=10), HOSTILE_SCALARS, max_size=4),
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            found.extend(_paths(v, (*prefix, k)))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            found.extend(_paths(v, (*prefix, i)))
    return found


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


@st.composite
def mutated(draw: st.DrawFn, seeds: list[Any]) -> Any:
    """A seed with a few of its values replaced, removed, or joined by unknown ones."""
    import copy

    doc = copy.deepcopy(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        if not path:
            if draw(st.booleans()):
                doc = draw(HOSTILE_VALUES)
            continue
        parent = _get(doc, path[:-1])
        action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(HOSTILE_VALUES)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "kind", "apiVersion", "args", "name"]))] = draw(
                HOSTILE_VALUES
            )
        elif isinstance(parent, list):
            parent.append(draw(HOSTILE_VALUES))
    return doc


def _dump(doc: Any) -> str:
    try:
        return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    except (yaml.YAMLError, ValueError, RecursionError):
        return "{not: [yaml"  # the loader must say so


TEXT_NOISE = st.sampled_from(
    [
        "&a ",
        "*a",
        "{",
        "}",
        "[",
        "]",
        ": ",
        "\t",
        "- ",
        "---\n",
        "!!int ",
        "<<: *a\n",
        "\\ud800",
        "9" * 5000,  # an integer past Python's conversion limit
        "[[[[[[[[[[" * 120,
    ]
)


@st.composite
def texts(draw: st.DrawFn, seeds: list[Any]) -> str:
    """A mutated seed as YAML text, sometimes cut, spliced or salted with YAML syntax."""
    text = _dump(draw(mutated(seeds)))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["noise", "cut", "dup"]))
        if kind == "noise":
            text = text[:at] + draw(TEXT_NOISE) + text[at:]
        elif kind == "cut":
            text = text[:at]
        else:
            text = text[:at] + text[at : at + 200] + text[at:]
    return text


def _check(load: Callable[[Path], object], text: str, suffix: str = ".yaml") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"input{suffix}"
        try:
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
        except UnicodeEncodeError:
            return
        started = time.perf_counter()
        try:
            load(path)
        except SchedframeError as exc:
            message = str(exc)
            assert message, "an error without a message"
            assert "Traceback" not in message
            longest = max((len(line) for line in message.splitlines()), default=0)
            assert longest <= LONGEST_LINE, f"a message line of {longest} characters"
            assert "s3cret-token" not in message, "a secret in a message"
        elapsed = time.perf_counter() - started
        if DEADLINE is not None:
            assert elapsed <= DEADLINE, f"one input took {elapsed:.1f}s"


def _load_config(path: Path) -> None:
    from schedframe.testing import deterministic

    with deterministic.scheduler(path, registry=REGISTRY):
        pass


def _load_manifests(path: Path) -> None:
    from schedframe.objects import load_manifests

    load_manifests(path)


def _load_workload(path: Path) -> None:
    from schedframe.simulation import load_workload, simulate

    workload = load_workload(path)
    if len(workload.pods) <= 30:  # and run it: it must end
        simulate(cluster=NODES, workload=workload)


def _nodes() -> list[object]:
    from schedframe.objects import load_manifests

    return [o for o in load_manifests(ROOT / "examples/basic/cluster.yaml")]


NODES = _nodes()


def _registry() -> Any:
    from schedframe.runtime import Registry

    return Registry.discover()


REGISTRY = _registry()


def _load_kubeconfig(path: Path) -> None:
    from schedframe.backends.kubernetes._transport import ApiTransport

    ApiTransport.from_kubeconfig(path)


@FUZZ
@given(texts(CONFIG_SEEDS))
def test_fuzz_configs(text: str) -> None:
    _check(_load_config, text)


@FUZZ
@given(texts(MANIFEST_SEEDS), st.booleans())
def test_fuzz_manifests(text: str, as_json: bool) -> None:
    if as_json:
        import json

        try:
            doc = yaml.safe_load(text)
            text = json.dumps(doc)
        except Exception:
            pass
    _check(_load_manifests, text, ".json" if as_json else ".yaml")


@FUZZ
@given(texts(WORKLOAD_SEEDS))
def test_fuzz_workloads(text: str) -> None:
    _check(_load_workload, text)


@FUZZ
@given(texts(KUBECONFIG_SEEDS))
def test_fuzz_kubeconfigs(text: str) -> None:
    pytest.importorskip("kubernetes")
    _check(_load_kubeconfig, text)


def test_a_kubeconfig_error_never_shows_a_secret(tmp_path: Path) -> None:
    """Found by the kubeconfig fuzzer: the client quotes the offending section, token and all."""
    pytest.importorskip("kubernetes")
    from schedframe.backends.kubernetes._transport import ApiTransport
    from schedframe.errors import BackendError

    doc = yaml.safe_load(yaml.safe_dump(KUBECONFIG_SEEDS[0]))
    doc["users"][0]["name"] = None
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(BackendError) as info:
        ApiTransport.from_kubeconfig(path)
    assert str(info.value) == (
        f"cannot load kubeconfig {path}: ConfigException: Invalid kube-config file. "
        f"Expected key name in {path}"
    )
