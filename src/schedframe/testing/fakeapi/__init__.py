"""A protocol-faithful fake kube-apiserver for tests (``schedframe[kubernetes,testing]``).

:class:`FakeAPIServer` serves the resources a scheduler reads and writes on
``127.0.0.1`` from a background thread, with kube-apiserver's wire semantics (one global
resourceVersion, NDJSON watches with bookmarks, an in-stream ``410 Expired`` past a bounded
event window, field and label selectors, ``pods/binding`` with upstream's conflict messages,
status patches, graceful deletion, events.k8s.io/v1 Events, coordination.k8s.io/v1 Leases,
``metav1.Status`` error bodies) and chaos knobs (dropped or expired watches, compaction,
injected 5xx/429, latency). Point any Kubernetes client at :meth:`FakeAPIServer.write_kubeconfig`.

It is not kube-apiserver: no admission chain beyond defaulting and the validation listed in
the guide, no API discovery beyond ``/version``, no ``limit``/``continue`` paging, no
server-side apply.
"""

from __future__ import annotations

from schedframe.testing.fakeapi._cluster import RESOURCES, BindingRecord, Resource, StatusError
from schedframe.testing.fakeapi._rbac import Authorizer, RequestAttributes
from schedframe.testing.fakeapi._server import FakeAPIServer, RequestRecord

__all__ = [
    "RESOURCES",
    "Authorizer",
    "BindingRecord",
    "FakeAPIServer",
    "RequestAttributes",
    "RequestRecord",
    "Resource",
    "StatusError",
]
