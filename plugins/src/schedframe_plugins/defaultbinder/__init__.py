"""DefaultBinder: bind the pod through the cluster backend (upstream POST ``pods/binding``).

Port of upstream ``pkg/scheduler/framework/plugins/defaultbinder/default_binder.go``.
"""

from __future__ import annotations

from typing import ClassVar, Final

from schedframe import errors
from schedframe import framework as fw
from schedframe.objects import Pod
from schedframe_plugins import names

__all__ = ["DefaultBinder"]

NAME: Final = names.DEFAULT_BINDER


class DefaultBinder(fw.BindPlugin):
    """Binds pods with the handle's :class:`~schedframe.framework.Binder`."""

    name: ClassVar[str] = NAME
    args_type: ClassVar[type | None] = None

    def __init__(self, args: None, handle: fw.Handle) -> None:
        self._handle = handle

    def bind(self, state: fw.CycleState, pod: Pod, node_name: str) -> fw.Status | None:
        """Bind ``pod`` to ``node_name``; a backend failure becomes an Error status."""
        try:
            self._handle.binder.bind(pod, node_name)
        except errors.BackendError as exc:
            return fw.Status.from_error(exc)
        return None
