"""A trace file, however wrong, is read or refused with one error: never a traceback."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedframe.errors import ManifestError
from schedframe.simulation import trace_from_lines

pytestmark = pytest.mark.property

HEADER = '{"kind":"SchedframeTrace","version":1}'

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
_fields = st.sampled_from(
    ["metadata", "spec", "status", "name", "containers", "resources", "nodeName", "labels"]
)


def _object() -> st.SearchStrategy[object]:
    nested = st.recursive(
        _json,
        lambda inner: st.dictionaries(_fields, inner, max_size=4) | st.lists(inner, max_size=2),
        max_leaves=12,
    )
    return st.one_of(
        nested,
        st.fixed_dictionaries(
            {"metadata": st.fixed_dictionaries({"name": st.text(min_size=1, max_size=5)})},
            optional={"spec": nested, "status": nested},
        ),
    )


_events = st.fixed_dictionaries(
    {},
    optional={
        "t": st.one_of(st.integers(-1, 5), st.floats(), st.text(max_size=2)),
        "type": st.sampled_from(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", 3]),
        "kind": st.sampled_from(
            ["Pod", "Node", "Namespace", "PersistentVolumeClaim", "Secret", "X", ""]
        ),
        "initial": st.one_of(st.booleans(), st.integers()),
        "object": _object(),
        "extra": st.none(),
    },
)


@settings(max_examples=300, deadline=None)
@given(events=st.lists(_events, max_size=4), raw=st.lists(st.text(max_size=20), max_size=2))
def test_any_trace_is_read_or_refused_with_a_field_error(
    events: list[dict[str, object]], raw: list[str]
) -> None:
    lines = [HEADER, *(json.dumps(e) for e in events), *raw]
    try:
        trace_from_lines(lines, name="fuzz.jsonl")
    except ManifestError as exc:
        assert str(exc).startswith("fuzz.jsonl:")
