"""``metadata.finalizers``: decoded, validated as the API server does, written back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe.errors import ManifestError
from schedframe.objects import ResourceClaim, from_dict, to_dict


def _claim(finalizers: object) -> dict[str, object]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default", "finalizers": finalizers},
        "spec": {},
    }


def test_finalizers_are_read_in_order_and_written_back() -> None:
    fin = ["resource.kubernetes.io/delete-protection", "example.com/keep", "orphan"]
    claim = from_dict(_claim(fin))
    assert isinstance(claim, ResourceClaim)
    assert claim.metadata.finalizers == tuple(fin)
    out = to_dict(claim)
    assert out["metadata"]["finalizers"] == fin  # type: ignore[index]
    assert from_dict(out) == claim


def test_no_finalizers_writes_no_key() -> None:
    claim = from_dict(_claim([]))
    assert isinstance(claim, ResourceClaim)
    assert claim.metadata.finalizers == ()
    assert "finalizers" not in to_dict(claim)["metadata"]  # type: ignore[operator]


def test_a_finalizer_must_be_a_qualified_name() -> None:
    # Upstream ValidateFinalizerName: the issue names the list's path, not the entry's.
    with pytest.raises(ManifestError) as info:
        from_dict(_claim(["example.com/bad name"]))
    text = str(info.value)
    assert "metadata.finalizers: Invalid value: " in text
    assert "example.com/bad name" in text
    assert "name part must consist of alphanumeric characters" in text


def test_orphan_and_foreground_deletion_exclude_each_other() -> None:
    with pytest.raises(ManifestError) as info:
        from_dict(_claim(["orphan", "foregroundDeletion"]))
    assert "finalizer orphan and foregroundDeletion cannot be both set" in str(info.value)


def test_a_finalizer_must_be_a_string() -> None:
    with pytest.raises(ManifestError, match=r"metadata\.finalizers\[0\]"):
        from_dict(_claim([3]))


_NAME = st.from_regex(
    r"\A([a-z0-9]{1,8}(\.[a-z0-9]{1,8}){0,2}/)?[A-Za-z0-9]([A-Za-z0-9_.-]{0,30}[A-Za-z0-9])?\Z"
)


@given(st.lists(_NAME, max_size=4).filter(lambda f: not {"orphan", "foregroundDeletion"} <= set(f)))
def test_round_trip_keeps_valid_finalizers(fin: list[str]) -> None:
    claim = from_dict(_claim(fin))
    assert isinstance(claim, ResourceClaim)
    assert claim.metadata.finalizers == tuple(fin)
    assert from_dict(to_dict(claim)) == claim
