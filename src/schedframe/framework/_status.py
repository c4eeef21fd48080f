"""Status codes and the Status a plugin returns (upstream ``framework.Code`` / ``framework.Status``)."""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable
from typing import Final

__all__ = ["Code", "Status", "StatusError"]


class Code(enum.IntEnum):
    """What a plugin's verdict makes the framework do. Values equal upstream's ``Code`` constants.

    ``str(code)`` gives upstream's spelling (``UnschedulableAndUnresolvable``), because messages,
    logs and metric labels must read as kube-scheduler's do.
    """

    #: The plugin ran correctly and found the pod fit (or had nothing to say).
    SUCCESS = 0
    #: An internal or unexpected failure. The scheduling attempt is aborted and the pod is
    #: retried after the *error* backoff, whatever cluster events happen meanwhile.
    ERROR = 1
    #: The pod does not fit now. PostFilter (preemption) may make room; the pod waits for a
    #: cluster event its rejecting plugins care about, then retries after backoff.
    UNSCHEDULABLE = 2
    #: The pod does not fit and preemption on this node cannot help; the node is excluded from
    #: preemption candidates. From PreFilter it stops the remaining PreFilter plugins at once.
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    #: From Permit only. Parks the pod as a *waiting pod* until allowed, rejected or timed out.
    WAIT = 4
    #: From PreFilter, skip this plugin's Filter (and PreFilterExtensions) for this cycle;
    #: from PreScore, skip this plugin's Score; from Bind, let the next Bind plugin bind the pod.
    SKIP = 5
    #: The attempt stops, waiting for something outside the scheduler; a matching queueing hint
    #: moves the pod straight back to the active queue, without backoff.
    PENDING = 6

    def __str__(self) -> str:
        return _CODE_NAMES[self]


_CODE_NAMES: Final = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}

_REJECTED: Final = frozenset(
    {Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING}
)


class Status:
    """The outcome of running a plugin: a :class:`Code`, human reasons, and who said it.

    Plugins return ``None`` for success (as upstream returns a nil ``*Status``) and a Status
    otherwise::

        return Status(Code.UNSCHEDULABLE, "Insufficient cpu")

    A Status is immutable once made; the framework stamps the plugin name on rejections with
    :meth:`with_plugin`, which returns a copy.

    Upstream: ``k8s.io/kube-scheduler/framework.Status``.
    """

    __slots__ = ("_code", "_error", "_plugin", "_reasons", "_timeout")

    def __init__(
        self,
        code: Code = Code.SUCCESS,
        *reasons: str,
        error: BaseException | None = None,
        plugin: str = "",
        timeout: float | None = None,
    ) -> None:
        if error is not None and not reasons:
            reasons = (str(error),)
        # Code(code) checks an int; a Code (nearly always given) skips the enum machinery.
        self._code = code if code.__class__ is Code else Code(code)
        self._reasons: tuple[str, ...] = reasons
        self._error = error
        self._plugin = plugin
        self._timeout = timeout

    # -- construction helpers ---------------------------------------------------------------

    @classmethod
    def from_error(cls, error: BaseException, *, plugin: str = "") -> Status:
        """An ``ERROR`` status carrying ``error`` (upstream ``AsStatus``)."""
        return cls(Code.ERROR, error=error, plugin=plugin)

    @classmethod
    def wait(cls, timeout: float) -> Status:
        """A Permit verdict: make the pod wait up to ``timeout`` seconds (capped at 15 minutes).

        ``timeout`` must be a finite number of seconds, zero or more (zero: the pod is rejected
        at once unless allowed in the same instant); anything else raises :class:`ValueError`,
        which the framework reports as the plugin's error. A Status built directly with a bad
        ``timeout`` is refused the same way when Permit returns it.
        """
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise ValueError(f"Permit wait timeout must be a number of seconds, not {timeout!r}")
        if not math.isfinite(timeout) or timeout < 0:
            raise ValueError(
                f"Permit wait timeout must be a finite number of seconds >= 0, not {timeout!r}"
            )
        return cls(Code.WAIT, timeout=timeout)

    def with_plugin(self, plugin: str) -> Status:
        """Return a copy naming ``plugin`` as the one that produced it."""
        if plugin == self._plugin:
            return self
        return Status(
            self._code, *self._reasons, error=self._error, plugin=plugin, timeout=self._timeout
        )

    def with_reasons(self, *reasons: str) -> Status:
        """Return a copy with ``reasons`` appended."""
        return Status(
            self._code,
            *self._reasons,
            *reasons,
            error=self._error,
            plugin=self._plugin,
            timeout=self._timeout,
        )

    # -- reading ---------------------------------------------------------------------------

    @property
    def code(self) -> Code:
        """The verdict."""
        return self._code

    @property
    def reasons(self) -> tuple[str, ...]:
        """Reasons in the order given; they feed the ``FailedScheduling`` histogram."""
        return self._reasons

    @property
    def error(self) -> BaseException | None:
        """The exception behind an ``ERROR`` status, if any."""
        return self._error

    @property
    def plugin(self) -> str:
        """The plugin that returned this status (set by the framework on rejections)."""
        return self._plugin

    @property
    def timeout(self) -> float | None:
        """For ``WAIT`` from Permit: how long the pod may wait, in seconds."""
        return self._timeout

    def message(self) -> str:
        """The reasons joined by ``", "`` (upstream ``Status.Message``)."""
        return ", ".join(self._reasons)

    def is_success(self) -> bool:
        """True for ``SUCCESS``."""
        return self._code is Code.SUCCESS

    def is_wait(self) -> bool:
        """True for ``WAIT``."""
        return self._code is Code.WAIT

    def is_skip(self) -> bool:
        """True for ``SKIP``."""
        return self._code is Code.SKIP

    def is_rejected(self) -> bool:
        """True for ``UNSCHEDULABLE``, ``UNSCHEDULABLE_AND_UNRESOLVABLE`` and ``PENDING``."""
        return self._code in _REJECTED

    def as_error(self) -> BaseException | None:
        """An exception for non-success codes other than ``WAIT``/``SKIP``; ``None`` otherwise."""
        if self._code in (Code.SUCCESS, Code.WAIT, Code.SKIP):
            return None
        if self._error is not None:
            return self._error
        return RuntimeError(self.message())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        # Upstream compares code, reasons, plugin and the error's text.
        return (
            self._code is other._code
            and self._reasons == other._reasons
            and self._plugin == other._plugin
            and str(self._error) == str(other._error)
        )

    def __hash__(self) -> int:
        return hash((self._code, self._reasons, self._plugin))

    def __repr__(self) -> str:
        parts = [f"Code.{self._code.name}"]
        parts += [repr(r) for r in self._reasons]
        if self._plugin:
            parts.append(f"plugin={self._plugin!r}")
        if self._timeout is not None:
            parts.append(f"timeout={self._timeout!r}")
        return f"Status({', '.join(parts)})"


def codes_of(statuses: Iterable[Status | None]) -> list[Code]:
    """The codes of ``statuses``, ``None`` read as success (handy in tests)."""
    return [Code.SUCCESS if s is None else s.code for s in statuses]


class StatusError(Exception):
    """Raised by a plugin method that returns a value (``score``) to fail with a Status.

    Upstream's ``Score`` returns ``(int64, *Status)``; a schedframe ``score`` returns an
    ``int``, so a plugin that must fail raises this instead, and the framework reports exactly
    the status's message, as upstream does::

        raise fw.StatusError(fw.Status(fw.Code.ERROR, f"node {name!r} has no zone label"))

    gives ``running Score plugins: plugin "MyScore" failed with: node 'n1' has no zone label``.
    Any other exception is reported with its own text (``str(exc)``). Raised from another
    extension point, the status's message is used likewise.

    .. versionadded:: 0.2
    """

    def __init__(self, status: Status) -> None:
        if status.is_success():
            raise ValueError("StatusError needs a non-success status")
        super().__init__(status.message() or str(status.code))
        self.status = status
