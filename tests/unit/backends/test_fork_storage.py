"""A fork of a MemoryBackend keeps its parent's storage controller settings and state."""

from __future__ import annotations

import attrs

from schedframe.backends import MemoryBackend
from schedframe.objects import (
    Node,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)

GI = 2**30
DRIVER = "ebs.csi.aws.com"
IMMEDIATE = StorageClass(metadata=ObjectMeta(name="fast"), provisioner=DRIVER)


def _claim(name: str) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name, namespace="default"),
        access_modes=("ReadWriteOnce",),
        request=GI,
        storage_class_name="fast",
    )


def _handles(backend: MemoryBackend) -> list[str]:
    volumes = backend.list("PersistentVolume")
    return sorted(pv.volume_handle for pv in volumes if isinstance(pv, PersistentVolume))


def test_a_fork_provisions_volumes_with_new_handles_and_commit_keeps_them_unique() -> None:
    parent = MemoryBackend([IMMEDIATE])
    parent.create(_claim("a"))
    assert _handles(parent) == [f"{DRIVER}-1"]
    fork = parent.fork()
    fork.create(_claim("b"))
    assert _handles(fork) == [f"{DRIVER}-1", f"{DRIVER}-2"]
    fork.commit()
    parent.create(_claim("c"))
    assert _handles(parent) == [f"{DRIVER}-1", f"{DRIVER}-2", f"{DRIVER}-3"]


def test_a_fork_inherits_injected_provisioning_failures() -> None:
    wait = StorageClass(
        metadata=ObjectMeta(name="fast"),
        provisioner=DRIVER,
        volume_binding_mode="WaitForFirstConsumer",
    )
    parent = MemoryBackend([wait, Node(metadata=ObjectMeta(name="n1"))])
    parent.inject_provisioning_failure(times=1)
    fork = parent.fork()
    claim = _claim("a")
    selected = {"volume.kubernetes.io/selected-node": "n1"}
    fork.create(attrs.evolve(claim, metadata=attrs.evolve(claim.metadata, annotations=selected)))
    # The provisioner failed: no volume, and the selected node is taken off the claim.
    assert _handles(fork) == []
    stored = fork.get("PersistentVolumeClaim", "a", "default")
    assert isinstance(stored, PersistentVolumeClaim)
    assert "volume.kubernetes.io/selected-node" not in stored.metadata.annotations


def test_a_fork_of_a_backend_without_storage_controller_has_none() -> None:
    parent = MemoryBackend([IMMEDIATE], storage_controller=False)
    fork = parent.fork()
    fork.create(_claim("a"))
    assert _handles(fork) == []
