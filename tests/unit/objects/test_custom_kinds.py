"""Custom kinds: declaration, strict loading, encoding, storage in the memory backend."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from schedframe.backends import MemoryBackend, WatchEvent
from schedframe.errors import BackendError, ManifestError
from schedframe.objects import (
    CustomObject,
    ObjectMeta,
    custom_kind,
    declare_custom_kind,
    from_dict,
    loads_manifests,
    to_dict,
)
from schedframe.objects._custom import undeclare_custom_kind

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - {name: v1beta1, served: true, storage: false}
  - {name: v1, served: true, storage: true}
"""

WIDGET = """
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, labels: {a: b}}
spec: {size: 3, parts: [x, y]}
"""


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    yield
    for kind in ("Widget", "Gadget"):
        undeclare_custom_kind(kind)


def test_an_undeclared_custom_kind_is_skipped_as_before() -> None:
    assert loads_manifests(WIDGET) == []


def test_a_crd_declares_its_kind_for_the_rest_of_the_load() -> None:
    objs = loads_manifests(CRD + "---" + WIDGET)
    assert len(objs) == 1
    w = objs[0]
    assert isinstance(w, CustomObject)
    assert (w.api_version, w.kind, w.metadata.namespace, w.metadata.uid) == (
        "example.com/v1",
        "Widget",
        "default",
        "default/w1",
    )
    assert w.spec["size"] == 3 and w.spec["parts"] == ("x", "y")
    kind = custom_kind("Widget")
    assert kind is not None and kind.resource == "widgets.example.com" and kind.namespaced


def test_round_trip_and_plain_body() -> None:
    declare_custom_kind("example.com/v1", "Widget")
    w = from_dict(loads_manifests_dict())
    assert isinstance(w, CustomObject)
    out = to_dict(w)
    assert out["spec"] == {"size": 3, "parts": ["x", "y"]}
    assert from_dict(out) == w
    assert w.with_status({"phase": "Ready"}).status == {"phase": "Ready"}
    assert hash(w) == hash(from_dict(out)) and len({w, from_dict(out)}) == 1


def loads_manifests_dict() -> dict[str, object]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w1", "labels": {"a": "b"}},
        "spec": {"size": 3, "parts": ["x", "y"]},
    }


def test_wrong_api_version_and_bad_metadata_are_field_errors() -> None:
    declare_custom_kind("example.com/v1", "Widget")
    bad = WIDGET.replace("example.com/v1", "example.com/v2").replace("name: w1, ", "")
    with pytest.raises(ManifestError) as err:
        loads_manifests(bad, source="w.yaml")
    text = str(err.value)
    assert "w.yaml" in text and "apiVersion" in text and "metadata.name" in text


def test_a_bad_crd_names_its_fields() -> None:
    bad = CRD.replace("scope: Namespaced", "scope: Everywhere").replace("group: example.com", "")
    with pytest.raises(ManifestError) as err:
        loads_manifests(bad, source="crd.yaml")
    text = str(err.value)
    assert "spec.scope" in text and "spec.group" in text


def test_core_kinds_cannot_be_redeclared_nor_kinds_changed() -> None:
    with pytest.raises(ValueError, match="models that kind itself"):
        declare_custom_kind("example.com/v1", "Pod")
    declare_custom_kind("example.com/v1", "Widget")
    declare_custom_kind("example.com/v1", "Widget")  # the same again is harmless
    with pytest.raises(ValueError, match="already declared"):
        declare_custom_kind("other.io/v1", "Widget")


def test_memory_backend_stores_lists_and_watches_custom_objects() -> None:
    declare_custom_kind("example.com/v1", "Widget")
    declare_custom_kind("example.com/v1", "Gadget", namespaced=False)
    w = from_dict(loads_manifests_dict())
    assert isinstance(w, CustomObject)
    g = CustomObject(
        api_version="example.com/v1",
        kind="Gadget",
        metadata=ObjectMeta(name="g1"),
    )
    backend = MemoryBackend([w, g])
    assert [o.metadata.name for o in backend.list("Widget") if isinstance(o, CustomObject)] == [
        "w1"
    ]
    assert backend.get("Gadget", "g1") is not None
    assert backend.get("Widget", "w1", "default") is not None
    seen: list[WatchEvent] = []
    backend.subscribe(seen.append)
    assert [type(e.obj).__name__ for e in seen] == ["CustomObject", "CustomObject"]
    stored = backend.get("Widget", "w1")
    assert isinstance(stored, CustomObject)
    backend.update(stored.with_status({"phase": "Ready"}))
    assert seen[-1].type == "MODIFIED" and isinstance(seen[-1].obj, CustomObject)
    assert seen[-1].obj.status == {"phase": "Ready"}
    with pytest.raises(BackendError, match='widgets.example.com "w1" already exists'):
        backend.create(w)
    backend.delete(stored)
    assert backend.list("Widget") == []
    assert [e.type for e in seen][-1:] == ["DELETED"]


def test_memory_backend_refuses_an_undeclared_kind() -> None:
    with pytest.raises(ValueError, match="unknown kind 'Widget'"):
        MemoryBackend().list("Widget")
