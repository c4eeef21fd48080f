"""Mutated manifests never escape as a traceback: each decodes or raises ManifestError.

Starts from realistic ``kubectl get -o yaml`` objects (every kind the codec reads) and
applies random mutations anywhere in them: a value replaced by any JSON/YAML value (huge
integers, floats, booleans, nulls, strings, lists, mappings, dates), a key removed, renamed
or added, a list entry duplicated. Every validate mode is tried.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedframe.errors import ManifestError
from schedframe.objects import from_dict, loads_manifests
from schedframe.testing.builders import lenient_from_dict

pytestmark = pytest.mark.property

_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "manifests"
# Real `kubectl get -o yaml` objects, and the repository's manifest fixtures.
_BASES: list[Any] = [
    doc
    for path in sorted(_FIXTURES.rglob("*.yaml"))
    for doc in yaml.safe_load_all(path.read_text(encoding="utf-8"))
    if isinstance(doc, dict)
]
_BASES.append(
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "1Gi"}},
            "overhead": {"cpu": "100m"},
            "containers": [{"name": "c", "resources": {"limits": {"example.com/gpu": "1"}}}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "gen", "operator": "Gt", "values": ["3"]}
                                ]
                            }
                        ]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 5,
                            "preference": {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["n"]}
                                ]
                            },
                        }
                    ],
                },
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 10,
                            "podAffinityTerm": {
                                "topologyKey": "zone",
                                "labelSelector": {
                                    "matchExpressions": [
                                        {"key": "app", "operator": "NotIn", "values": ["a"]}
                                    ]
                                },
                                "namespaceSelector": {},
                                "matchLabelKeys": ["pod-template-hash"],
                            },
                        }
                    ]
                },
            },
            "schedulingGates": [{"name": "wait"}],
        },
        "status": {"nominatedNodeName": "n", "disruptedPods": {}},
    }
)
_BASES.append(
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b"},
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"a": "b"}}},
        "status": {"disruptedPods": {"p": "2024-01-01T00:00:00Z"}},
    }
)

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", "-1", "1.5", "1e999", "100%", "1000%", "Exists", "In", "Gt", "a/b/c"]),
    st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)),
    st.dates(),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
_keys = st.one_of(
    st.text(max_size=8),
    st.integers(-3, 3),
    st.booleans(),
    st.none(),
    st.sampled_from(["kind", "spec", "name"]),
)


def _containers(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every mapping and list in ``doc``, the root included."""
    found = [path]
    if isinstance(doc, dict):
        for key, value in doc.items():
            if isinstance(value, dict | list):
                found.extend(_containers(value, (*path, key)))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            if isinstance(value, dict | list):
                found.extend(_containers(value, (*path, i)))
    return found


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    doc = copy.deepcopy(draw(st.sampled_from(_BASES)))
    for _ in range(draw(st.integers(1, 4))):
        spots = _containers(doc)
        target = _at(doc, draw(st.sampled_from(spots)))
        action = draw(st.sampled_from(["replace", "delete", "add", "rename", "duplicate"]))
        if isinstance(target, dict):
            keys = list(target)
            if action == "add" or not keys:
                target[draw(_keys)] = draw(_values)
            else:
                key = draw(st.sampled_from(keys))
                if action == "delete":
                    del target[key]
                elif action == "rename":
                    target[draw(_keys)] = target.pop(key)
                else:
                    target[key] = draw(_values)
        elif isinstance(target, list):
            if not target or action == "add":
                target.append(draw(_values))
            else:
                i = draw(st.integers(0, len(target) - 1))
                if action == "delete":
                    del target[i]
                elif action == "duplicate":
                    target.append(copy.deepcopy(target[i]))
                else:
                    target[i] = draw(_values)
    if draw(st.booleans()):
        doc = draw(st.sampled_from([doc, [doc], "text", 3, None, {"kind": "List", "items": [doc]}]))
    return doc


def _refused(exc: ManifestError) -> None:
    """A refusal speaks to people: a message naming what is wrong, no Python internals."""
    message = str(exc)
    assert message.strip(), "an empty ManifestError"
    assert "Traceback" not in message


def _decode_all_ways(doc: Any) -> None:
    for mode in ("strict", "warn", "ignore"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if isinstance(doc, dict) and doc.get("kind") == "List":
                    decoded: object = loads_manifests(json.dumps(doc, default=str), validate=mode)
                    assert isinstance(decoded, list)
                else:
                    decoded = from_dict(doc, validate=mode)
                    assert decoded is not None
        except ManifestError as exc:
            _refused(exc)
    try:
        assert lenient_from_dict(doc) is not None
    except ManifestError as exc:
        _refused(exc)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_a_mutated_manifest_decodes_or_raises_manifest_error(doc: Any) -> None:
    _decode_all_ways(doc)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_a_mutated_manifest_as_yaml_text_decodes_or_raises_manifest_error(doc: Any) -> None:
    try:
        text = yaml.safe_dump(doc)
    except yaml.YAMLError:
        return
    try:
        assert isinstance(loads_manifests(text, source="fuzz.yaml"), list)
    except ManifestError as exc:
        _refused(exc)
