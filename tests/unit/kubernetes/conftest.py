"""Fixtures: a fake API server on 127.0.0.1 and clients of it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kubernetes")
pytest.importorskip("aiohttp")

from schedframe.backends.kubernetes import ApiTransport, KubernetesBackend  # noqa: E402
from schedframe.testing.fakeapi import FakeAPIServer  # noqa: E402

from ._support import TOKEN, Raw  # noqa: E402


@pytest.fixture
def fake() -> Iterator[FakeAPIServer]:
    with FakeAPIServer(token=TOKEN, bookmark_interval=0.2, kubelet_delay=None) as server:
        yield server


@pytest.fixture
def raw(fake: FakeAPIServer) -> Raw:
    return Raw(fake.port)


@pytest.fixture
def kubeconfig(fake: FakeAPIServer, tmp_path: Path) -> Path:
    return fake.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def transport(kubeconfig: Path) -> Iterator[ApiTransport]:
    t = ApiTransport.from_kubeconfig(kubeconfig, qps=0)
    yield t
    t.close()


@pytest.fixture
def make_backend(kubeconfig: Path) -> Iterator[Callable[..., KubernetesBackend]]:
    made: list[KubernetesBackend] = []

    def make(**kwargs: Any) -> KubernetesBackend:
        kwargs.setdefault("backoff", (0.05, 0.5))
        kwargs.setdefault("qps", 0)
        backend = KubernetesBackend.from_kubeconfig(kubeconfig, **kwargs)
        made.append(backend)
        return backend

    yield make
    for backend in made:
        backend.close()
