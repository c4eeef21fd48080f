"""Record traces in tests, for :func:`schedframe.simulation.replay`.

* :func:`recording` — record any backend's watch (a
  :class:`~schedframe.backends.MemoryBackend` driven by a deterministic scheduler, say) with
  its own clock, so that the trace's times are the test's virtual seconds;
* :func:`recording_fake_cluster` — record what a Kubernetes backend sees of the testing
  kit's fake API server (``schedframe.testing.fakeapi.FakeAPIServer``), as
  ``schedframe run --record-trace`` would, without a scheduler of its own: the test drives
  the cluster (creates, binds, deletes) through the server.

::

    with FakeAPIServer() as server, recording_fake_cluster(server, "t.jsonl") as recorder:
        server.create(pod)
        ...
    result = replay("t.jsonl")
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from schedframe.simulation._trace import TraceRecorder

__all__ = ["recording", "recording_fake_cluster"]


@contextmanager
def recording(
    backend: Any,
    path: str | os.PathLike[str],
    *,
    source: str = "memory",
    clock: Callable[[], float] | None = None,
) -> Iterator[TraceRecorder]:
    """Record ``backend``'s watch to ``path`` while the block runs.

    Args:
        backend: anything with ``subscribe(callback)`` (both backends).
        path: the trace file.
        source: the header's ``source``.
        clock: seconds for the events' times (a ``VirtualClock``'s ``now``); monotonic
            wall time by default.
    """
    recorder = TraceRecorder(path, source=source, clock=clock or time.monotonic)
    recorder.attach(backend)
    try:
        yield recorder
    finally:
        recorder.close()


@contextmanager
def recording_fake_cluster(
    server: Any,
    path: str | os.PathLike[str],
    *,
    settle: float = 5.0,
) -> Iterator[TraceRecorder]:
    """Record what a Kubernetes backend sees of ``server`` (a ``FakeAPIServer``) while the
    block runs.

    A ``KubernetesBackend`` (``schedframe.backends.kubernetes``) connects through a
    kubeconfig for the server, lists every kind (the trace's initial objects) and watches.
    On leaving the block, waits up to ``settle`` seconds for every watch to have reached the
    server's latest revision (the fake sends bookmarks), so that the last changes are in
    the trace.

    Needs ``schedframe[kubernetes,testing]``.
    """
    from schedframe.backends.kubernetes import KubernetesBackend

    with tempfile.TemporaryDirectory(prefix="schedframe-trace-") as tmp:
        kubeconfig = server.write_kubeconfig(Path(tmp) / "kubeconfig")
        backend = KubernetesBackend.from_kubeconfig(kubeconfig, min_watch_timeout=60.0)
        try:
            backend.start(timeout=30.0)
            recorder = TraceRecorder(path, source="kubernetes")
            recorder.attach(backend)
            try:
                yield recorder
                target = server.resource_version
                deadline = time.monotonic() + settle
                while time.monotonic() < deadline and any(
                    int(r.last_sync_resource_version or 0) < target
                    for r in backend.reflectors.values()
                ):
                    time.sleep(0.01)
            finally:
                recorder.close()
        finally:
            backend.close()
