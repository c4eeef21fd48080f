"""Property tests: any input gives a configuration or a ConfigError, never another exception."""

from __future__ import annotations

from typing import Literal

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedframe.config import (
    KubeSchedulerConfiguration,
    decode_args,
    encode_args,
    load_config,
    loads_config,
    to_dict,
)
from schedframe.config._validation import validate
from schedframe.errors import ConfigError

pytestmark = pytest.mark.property

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["15s", "1m30s", "-1s", "0", "leases", "*", "example.com/gpu", "bind"])
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=16,
)
keys = st.text(max_size=10) | st.integers() | st.none() | st.booleans()


def _object(fields: dict[str, st.SearchStrategy[object]]) -> st.SearchStrategy[dict[str, object]]:
    """Dicts using known keys (any subset), sometimes with a stray key, values possibly wrong."""
    return st.fixed_dictionaries(
        {}, optional={k: v | json_values for k, v in fields.items()}
    ) | st.dictionaries(
        st.sampled_from(sorted(fields)) | st.text(max_size=6), json_values, max_size=3
    )


plugin = _object(
    {"name": st.sampled_from(["A", "B", "PrioritySort", "*", ""]), "weight": st.integers(-3, 5)}
)
plugin_set = _object(
    {"enabled": st.lists(plugin, max_size=3), "disabled": st.lists(plugin, max_size=2)}
)
plugins = _object(
    {k: plugin_set for k in ["queueSort", "filter", "score", "multiPoint", "bind", "preEnqueue"]}
)
profile = _object(
    {
        "schedulerName": st.sampled_from(["default-scheduler", "a", "b", ""]),
        "percentageOfNodesToScore": st.integers(-5, 110),
        "plugins": plugins,
        "pluginConfig": st.lists(
            _object({"name": st.sampled_from(["A", "B"]), "args": json_values}), max_size=3
        ),
    }
)
extender = _object(
    {
        "urlPrefix": st.text(max_size=5),
        "prioritizeVerb": st.sampled_from(["", "prioritize"]),
        "bindVerb": st.sampled_from(["", "bind"]),
        "weight": st.integers(-2, 3),
        "httpTimeout": st.sampled_from(["5s", "0s", "x", "1h"]),
        "managedResources": st.lists(
            _object(
                {
                    "name": st.sampled_from(["example.com/a", "a", "kubernetes.io/x", "a/b/c"]),
                    "ignoredByScheduler": st.booleans(),
                }
            ),
            max_size=2,
        ),
        "tlsConfig": _object(
            {"caData": st.sampled_from(["aGk=", "!!"]), "insecure": st.booleans()}
        ),
    }
)
structured = st.fixed_dictionaries(
    {
        "apiVersion": st.just("kubescheduler.config.k8s.io/v1") | json_values,
        "kind": st.just("KubeSchedulerConfiguration"),
    },
    optional={
        "parallelism": st.integers(-2, 40) | json_values,
        "percentageOfNodesToScore": st.integers(-5, 110),
        "podInitialBackoffSeconds": st.integers(-1, 20),
        "podMaxBackoffSeconds": st.integers(-1, 20),
        "enableProfiling": st.booleans(),
        "leaderElection": _object(
            {
                "leaderElect": st.booleans(),
                "leaseDuration": st.sampled_from(["15s", "5s", "-1s", "0s", "1x"]),
                "renewDeadline": st.sampled_from(["10s", "20s", "0"]),
                "resourceLock": st.sampled_from(["leases", "endpoints", ""]),
            }
        ),
        "clientConnection": _object({"qps": st.floats(), "burst": st.integers(-3, 3)}),
        "profiles": st.lists(profile, max_size=3),
        "extenders": st.lists(extender, max_size=3),
    },
)


def _check(source: object) -> None:
    try:
        config = load_config(source)  # type: ignore[arg-type]
    except ConfigError as exc:
        assert exc.issues, "a ConfigError always names at least one issue"
        assert str(exc)
        return
    assert isinstance(config, KubeSchedulerConfiguration)
    assert validate(config) == []
    assert load_config(to_dict(config)) == config


@FUZZ
@given(st.dictionaries(keys, json_values, max_size=6))
def test_arbitrary_mappings_load_or_raise_config_error(document: dict[object, object]) -> None:
    _check(document)


@FUZZ
@given(structured)
def test_structured_documents_load_or_raise_config_error(document: dict[str, object]) -> None:
    _check(document)


@FUZZ
@given(json_values)
def test_any_json_value_loads_or_raises_config_error(document: object) -> None:
    try:
        load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "profiles": document})
    except ConfigError:
        pass


@FUZZ
@given(st.text(max_size=80) | st.sampled_from(["a: 2001-13-45", "a: !!int x", "[" * 300]))
def test_any_text_loads_or_raises_config_error(text: str) -> None:
    try:
        loads_config(text)
    except ConfigError:
        pass


@attrs.frozen(kw_only=True)
class _Point:
    utilization: int
    score: int = 0


@attrs.frozen(kw_only=True)
class _Args:
    kind_of: Literal["A", "B"] = "A"
    points: tuple[_Point, ...] = ()
    ratio: float = 1.0
    names: dict[str, int] = attrs.field(factory=dict)
    note: str | None = None
    count: int = attrs.field(default=1, validator=attrs.validators.ge(0))


@FUZZ
@given(
    st.dictionaries(
        st.sampled_from(["kindOf", "points", "ratio", "names", "note", "count", "kind", "x"]),
        json_values
        | st.lists(_object({"utilization": st.integers(), "score": st.integers()}), max_size=3),
        max_size=6,
    )
)
def test_decode_args_gives_an_object_or_config_error(data: dict[str, object]) -> None:
    try:
        args = decode_args(_Args, data, path="args")
    except ConfigError as exc:
        assert all(issue.path.startswith("args") for issue in exc.issues)
        return
    assert decode_args(_Args, encode_args(args), path="args") == args
