"""The Kubernetes backend (``schedframe[kubernetes]``): schedule the pods of a real cluster.

:class:`KubernetesBackend` implements :class:`~schedframe.backends.Backend` over
kube-apiserver: one :class:`Reflector` per kind (list, then watch with bookmarks; relist and
diff on ``410``) feeds ``list``/``subscribe`` exactly like the in-memory backend, and the
Binder side posts ``pods/binding``, patches ``pods/status``, evicts preemption victims and
writes events.k8s.io/v1 Events. :class:`LeaderElector` holds a coordination.k8s.io/v1 Lease.

Connections are urllib3 pools set up from the kubeconfig (or the pod's service account) by
schedframe itself; the official ``kubernetes`` client is imported only for what it alone
supports (``exec`` credential plugins, ``auth-provider`` entries, ``proxy-url``). Responses
are read as raw JSON and turned into schedframe objects with
:func:`schedframe.objects.from_dict`'s readers. ``schedframe run`` is
``schedframe.backends.kubernetes._cli.run_command``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from schedframe._lazy import lazy_attributes

if TYPE_CHECKING:
    from schedframe.backends.kubernetes._backend import POD_FIELD_SELECTOR, KubernetesBackend
    from schedframe.backends.kubernetes._events import EventSink, ObjectReference
    from schedframe.backends.kubernetes._leaderelection import (
        LeaderElectionLost,
        LeaderElectionRecord,
        LeaderElector,
    )
    from schedframe.backends.kubernetes._reflector import Reflector, ReflectorStats
    from schedframe.backends.kubernetes._transport import (
        ApiError,
        ApiTransport,
        RateLimiter,
        TransportError,
        WatchStream,
    )

__all__ = [
    "POD_FIELD_SELECTOR",
    "ApiError",
    "ApiTransport",
    "EventSink",
    "KubernetesBackend",
    "LeaderElectionLost",
    "LeaderElectionRecord",
    "LeaderElector",
    "ObjectReference",
    "RateLimiter",
    "Reflector",
    "ReflectorStats",
    "TransportError",
    "WatchStream",
]

# Resolved on first use, so that importing the package (or its ``_cli``) needs neither the
# ``kubernetes`` client nor urllib3 until a backend is built.
_WHERE: Final = {
    "POD_FIELD_SELECTOR": "_backend",
    "KubernetesBackend": "_backend",
    "EventSink": "_events",
    "ObjectReference": "_events",
    "LeaderElectionLost": "_leaderelection",
    "LeaderElectionRecord": "_leaderelection",
    "LeaderElector": "_leaderelection",
    "Reflector": "_reflector",
    "ReflectorStats": "_reflector",
    "ApiError": "_transport",
    "ApiTransport": "_transport",
    "RateLimiter": "_transport",
    "TransportError": "_transport",
    "WatchStream": "_transport",
}


# Hidden from type checkers, which would otherwise accept any name as an attribute.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)
