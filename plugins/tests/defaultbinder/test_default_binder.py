"""Port of upstream defaultbinder/default_binder_test.go, on the in-memory backend."""

from __future__ import annotations

from schedframe import errors
from schedframe import framework as fw
from schedframe.backends import MemoryBackend
from schedframe.objects import ObjectMeta, Pod, PodSpec
from schedframe.runtime import Framework
from schedframe_plugins.defaultbinder import DefaultBinder

POD = Pod(metadata=ObjectMeta(name="foo", namespace="ns", uid="foo"), spec=PodSpec())


def test_successful() -> None:
    backend = MemoryBackend([POD])
    status = DefaultBinder(None, Framework(binder=backend)).bind(
        fw.CycleState(), POD, "foohost.kubernetes.mydomain.com"
    )
    assert status is None
    bound = backend.get("Pod", "foo", "ns")
    assert isinstance(bound, Pod)
    assert bound.spec.node_name == "foohost.kubernetes.mydomain.com"


def test_binding_error() -> None:
    backend = MemoryBackend([POD])
    backend.inject_failure("bind", error=errors.BackendError("binding error"))
    status = DefaultBinder(None, Framework(binder=backend)).bind(
        fw.CycleState(), POD, "foohost.kubernetes.mydomain.com"
    )
    assert status is not None
    assert status.code is fw.Code.ERROR
    assert status.reasons == ("binding error",)
    bound = backend.get("Pod", "foo", "ns")
    assert isinstance(bound, Pod) and bound.spec.node_name == ""
