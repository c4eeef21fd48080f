"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's ``leaderelection``.

One replica holds the Lease and schedules; the others wait. The algorithm is client-go's
``tryAcquireOrRenew``: the holder renews optimistically (PUT with the Lease's
resourceVersion); a candidate takes the Lease over only when the record it observed has not
changed for ``leaseDuration`` on its own clock; every write is an optimistic-concurrency PUT,
so two candidates can never both succeed. The acquire loop retries every ``retryPeriod``
(jittered by 1.2); the holder retries renewal every ``retryPeriod`` and gives up leadership
when it could not renew within ``renewDeadline``.

Unlike client-go (whose config helper calls ``sys.exit``), bad settings raise
:class:`ValueError` and a lost Lease raises :class:`LeaderElectionLost`: the caller decides.

Leadership is a fence (:meth:`LeaderElector.leading`): it holds only while the last successful
renewal is less than ``renewDeadline`` old, so a replica cut off from the API server stops
binding on its own clock before any standby can take the Lease over (which needs
``leaseDuration`` without a change). Stricter than client-go, which keeps retrying until the
renew deadline: observing the Lease held by another identity is a loss at once, and every
Lease request times out at the renew deadline, so a hung request cannot hold the loop.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

import attrs

from schedframe.backends.kubernetes._transport import ApiError, ApiTransport, TransportError
from schedframe.errors import SchedframeError

if TYPE_CHECKING:
    from schedframe.config import LeaderElectionConfiguration

__all__ = ["LeaderElectionLost", "LeaderElectionRecord", "LeaderElector"]

log = logging.getLogger("schedframe.backends.kubernetes")

#: client-go ``JitterFactor``.
JITTER_FACTOR: Final = 1.2
#: kube-scheduler's healthz tolerance past an expired lease.
MAX_TOLERABLE_EXPIRED_LEASE: Final = 20.0


class LeaderElectionLost(SchedframeError):
    """This replica could not renew its Lease within the renew deadline."""


@attrs.frozen(kw_only=True)
class LeaderElectionRecord:
    """The Lease spec as the elector reads and writes it."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str = ""
    renew_time: str = ""
    leader_transitions: int = 0

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> LeaderElectionRecord:
        return cls(
            holder_identity=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=str(spec.get("acquireTime") or ""),
            renew_time=str(spec.get("renewTime") or ""),
            leader_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.leader_transitions,
        }
        if self.holder_identity:
            spec["holderIdentity"] = self.holder_identity
        if self.acquire_time:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time:
            spec["renewTime"] = self.renew_time
        return spec


def _micro_time(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def default_identity() -> str:
    """kube-scheduler's identity: ``<hostname>_<uuid>``."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElector:
    """Campaign for, hold and release one Lease.

    Args:
        transport: the API connection.
        namespace: the Lease's namespace (kube-scheduler: ``kube-system``).
        name: the Lease's name (kube-scheduler: ``kube-scheduler``).
        identity: this replica's holder identity (``<hostname>_<uuid>`` by default).
        lease_duration: seconds a non-leader waits before taking an unrenewed Lease over.
        renew_deadline: seconds the leader keeps retrying renewal before giving up.
        retry_period: seconds between attempts.
        release_on_cancel: give the Lease up when stopped (kube-scheduler does).
        clock: monotonic time (observations); ``wall`` gives the Lease's timestamps.

    Raises:
        ValueError: ``leaseDuration <= renewDeadline``, ``renewDeadline <= 1.2 *
            retryPeriod``, a non-positive duration or an empty identity.
    """

    def __init__(
        self,
        transport: ApiTransport,
        *,
        namespace: str = "kube-system",
        name: str = "kube-scheduler",
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = True,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        if lease_duration <= renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
        if lease_duration < 1 or retry_period <= 0:
            raise ValueError("leaseDuration must be at least 1s and retryPeriod positive")
        identity = identity if identity is not None else default_identity()
        if not identity:
            raise ValueError("Lock identity is empty")
        if not name or not namespace:
            raise ValueError("the Lease needs a name and a namespace")
        self._transport = transport
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        self._clock = clock
        self._wall = wall
        self._lease: dict[str, Any] | None = None
        self._observed = LeaderElectionRecord()
        self._observed_raw: Any = None
        self._observed_time = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._reported_leader = ""
        self._renewed_at: float | None = None
        self._lost = False
        self._deadline: float | None = None

    @classmethod
    def from_config(
        cls,
        transport: ApiTransport,
        config: LeaderElectionConfiguration,
        *,
        identity: str | None = None,
        **kwargs: Any,
    ) -> LeaderElector:
        """From a ``KubeSchedulerConfiguration``'s ``leaderElection`` section.

        Raises:
            ValueError: a resource lock other than ``leases``, or bad durations.
        """
        if config.resource_lock != "leases":
            raise ValueError(
                f'leaderElection.resourceLock: Unsupported value: "{config.resource_lock}": '
                'supported values: "leases"'
            )
        return cls(
            transport,
            namespace=config.resource_namespace,
            name=config.resource_name,
            identity=identity,
            lease_duration=config.lease_duration,
            renew_deadline=config.renew_deadline,
            retry_period=config.retry_period,
            **kwargs,
        )

    # -- state ---------------------------------------------------------------------------------

    @property
    def _path(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{quote(self.namespace, safe='')}/leases"

    def is_leader(self) -> bool:
        """Whether the last record observed names this replica (never after a loss)."""
        with self._lock:
            return not self._lost and self._observed.holder_identity == self.identity

    def leading(self) -> bool:
        """The fence: this replica holds the Lease and renewed it less than ``renewDeadline``
        ago (on its own clock). Binding cycles check it before binding."""
        with self._lock:
            if self._lost or self._observed.holder_identity != self.identity:
                return False
            renewed = self._renewed_at
        return renewed is not None and self._clock() - renewed < self.renew_deadline

    @property
    def lost(self) -> bool:
        """Whether this replica lost the Lease (for good: a lost elector never leads again)."""
        with self._lock:
            return self._lost

    def _mark_lost(self) -> None:
        with self._lock:
            self._lost = True

    @property
    def leader(self) -> str:
        """The holder identity last observed (``""`` if none)."""
        with self._lock:
            return self._observed.holder_identity

    def _set_observed(self, record: LeaderElectionRecord) -> None:
        with self._lock:
            self._observed = record
            self._observed_time = self._clock()

    def _renewed(self, record: LeaderElectionRecord, started: float) -> None:
        """``record`` (naming this replica) was written; the fence counts from ``started``,
        when the write was sent, not from when its answer came."""
        self._set_observed(record)
        with self._lock:
            self._renewed_at = started

    def _timeout(self) -> tuple[float, float]:
        """Lease requests end by the renew deadline (client-go bounds the renewal with a
        context of that timeout)."""
        deadline = self._deadline
        remaining = self.renew_deadline if deadline is None else deadline - self._clock()
        remaining = max(0.05, min(remaining, self.renew_deadline))
        return (remaining, remaining)

    def _lease_valid(self, now: float) -> bool:
        with self._lock:
            return self._observed_time + self._observed.lease_duration_seconds > now

    def healthy(self, tolerance: float = MAX_TOLERABLE_EXPIRED_LEASE) -> bool:
        """kube-scheduler's leader-election healthz: unhealthy when this replica believes it
        leads but has not renewed for ``leaseDuration + tolerance``."""
        with self._lock:
            if self._observed.holder_identity != self.identity:
                return True
            return self._clock() - self._observed_time <= self.lease_duration + tolerance

    # -- the Lease -----------------------------------------------------------------------------

    def _get(self) -> dict[str, Any] | None:
        try:
            lease = self._transport.request(
                "GET", f"{self._path}/{quote(self.name, safe='')}", timeout=self._timeout()
            )
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise
        if not isinstance(lease, dict):
            raise TransportError("the Lease is not a JSON object")
        return lease

    def _create(self, record: LeaderElectionRecord) -> None:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.to_spec(),
        }
        lease = self._transport.request("POST", self._path, body=body, timeout=self._timeout())
        self._lease = lease if isinstance(lease, dict) else None

    def _update(self, record: LeaderElectionRecord) -> None:
        if self._lease is None:
            raise ApiError(409, "Conflict", "lease not initialized, call get or create first")
        body = dict(self._lease)
        body["spec"] = {**dict(self._lease.get("spec") or {}), **record.to_spec()}
        if not record.holder_identity:
            body["spec"].pop("holderIdentity", None)
        lease = self._transport.request(
            "PUT", f"{self._path}/{quote(self.name, safe='')}", body=body, timeout=self._timeout()
        )
        self._lease = lease if isinstance(lease, dict) else None

    def try_acquire_or_renew(self) -> bool:
        """One attempt (client-go ``tryAcquireOrRenew``); ``True`` when this replica holds
        the Lease afterwards. Errors are logged and count as failure."""
        wall = self._wall()
        now = self._clock()
        record = LeaderElectionRecord(
            holder_identity=self.identity,
            lease_duration_seconds=int(self.lease_duration),
            acquire_time=_micro_time(wall),
            renew_time=_micro_time(wall),
        )
        # 1. The leader renews optimistically from the record it wrote last.
        if self.is_leader() and self._lease_valid(now):
            with self._lock:
                old = self._observed
            record = attrs.evolve(
                record, acquire_time=old.acquire_time, leader_transitions=old.leader_transitions
            )
            try:
                self._update(record)
            except (ApiError, TransportError) as exc:
                log.info("failed to update the lease optimistically: %s; falling back", exc)
            else:
                self._renewed(record, now)
                return True
        # 2. Get, or create, the record.
        try:
            lease = self._get()
        except (ApiError, TransportError) as exc:
            log.warning("error retrieving lease %s/%s: %s", self.namespace, self.name, exc)
            return False
        if lease is None:
            try:
                self._create(record)
            except (ApiError, TransportError) as exc:
                log.warning("error initially creating the lease: %s", exc)
                return False
            self._renewed(record, now)
            return True
        self._lease = lease
        spec = lease.get("spec") if isinstance(lease.get("spec"), Mapping) else {}
        assert isinstance(spec, Mapping)
        old = LeaderElectionRecord.from_spec(spec)
        # 3. Check the holder and the time (observed on our clock, not the server's).
        if spec != self._observed_raw:
            self._observed_raw = dict(spec)
            self._set_observed(old)
        if old.holder_identity and self._lease_valid(self._clock()) and not self.is_leader():
            log.debug("lease is held by %s and has not yet expired", old.holder_identity)
            return False
        # 4. Take it (or renew it).
        if self.is_leader():
            record = attrs.evolve(
                record, acquire_time=old.acquire_time, leader_transitions=old.leader_transitions
            )
        else:
            record = attrs.evolve(record, leader_transitions=old.leader_transitions + 1)
        try:
            self._update(record)
        except (ApiError, TransportError) as exc:
            log.info("failed to update the lease: %s", exc)
            return False
        self._renewed(record, now)
        return True

    def _report(self) -> None:
        leader = self.leader
        if leader != self._reported_leader:
            self._reported_leader = leader
            if leader:
                log.info("new leader elected: %s", leader)

    # -- loops ---------------------------------------------------------------------------------

    def acquire(self, stop: threading.Event | None = None, timeout: float | None = None) -> bool:
        """Block until this replica holds the Lease (``True``), ``stop`` is set or
        ``timeout`` passes (``False``)."""
        stop = stop or self._stop
        deadline = None if timeout is None else self._clock() + timeout
        log.info("attempting to acquire leader lease %s/%s...", self.namespace, self.name)
        while not stop.is_set():
            succeeded = self.try_acquire_or_renew()
            self._report()
            if succeeded:
                log.info("successfully acquired lease %s/%s", self.namespace, self.name)
                return True
            wait = self.retry_period * (1.0 + JITTER_FACTOR * random.random())
            if deadline is not None:
                remaining = deadline - self._clock()
                if remaining <= 0:
                    return False
                wait = min(wait, remaining)
            if stop.wait(wait):
                break
        return False

    def renew_loop(self, stop: threading.Event | None = None) -> None:
        """Keep the Lease until ``stop`` is set (then release it, if ``release_on_cancel``).

        Raises:
            LeaderElectionLost: renewal did not succeed within ``renew_deadline``.
        """
        stop = stop or self._stop
        while not stop.wait(self.retry_period):
            with self._lock:
                renewed_at = self._renewed_at
            # The deadline runs from the last successful renewal, as the fence does.
            deadline = (self._clock() if renewed_at is None else renewed_at) + self.renew_deadline
            self._deadline = deadline
            renewed = False
            taken = ""
            while not stop.is_set():
                if self.try_acquire_or_renew():
                    renewed = True
                    break
                holder = self.leader
                if holder and holder != self.identity:
                    taken = holder  # another replica holds it: lost now, not at the deadline
                    break
                if self._clock() + self.retry_period > deadline:
                    break
                if stop.wait(min(self.retry_period, max(0.0, deadline - self._clock()))):
                    break
            self._deadline = None
            self._report()
            if stop.is_set():
                break
            if not renewed:
                self._mark_lost()
                if taken:
                    log.error("lease %s/%s is now held by %s", self.namespace, self.name, taken)
                    raise LeaderElectionLost(
                        f"leader election lost: lease {self.namespace}/{self.name} is held by "
                        f"{taken}"
                    )
                log.error("failed to renew lease %s/%s: timed out", self.namespace, self.name)
                raise LeaderElectionLost(
                    f"leader election lost: could not renew lease {self.namespace}/{self.name} "
                    f"within {self.renew_deadline:g}s"
                )
        if self.release_on_cancel:
            self.release()

    def start_renewing(self, on_lost: Callable[[LeaderElectionLost], None]) -> threading.Thread:
        """Run :meth:`renew_loop` in a daemon thread; ``on_lost`` gets the error if the Lease
        is lost. :meth:`stop` ends it."""

        def run() -> None:
            try:
                self.renew_loop(self._stop)
            except LeaderElectionLost as exc:
                on_lost(exc)

        thread = threading.Thread(target=run, name="schedframe-leader-election", daemon=True)
        self._thread = thread
        thread.start()
        return thread

    def stop(self, timeout: float = 10.0) -> None:
        """Stop campaigning or renewing (the renew thread releases the Lease on its way out)."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def release(self) -> bool:
        """Give the Lease up if held (client-go ``release``): holder cleared, duration 1 s."""
        if not self.is_leader():
            return True
        wall = _micro_time(self._wall())
        with self._lock:
            transitions = self._observed.leader_transitions
        record = LeaderElectionRecord(
            lease_duration_seconds=1,
            acquire_time=wall,
            renew_time=wall,
            leader_transitions=transitions,
        )
        try:
            self._update(record)
        except (ApiError, TransportError) as exc:
            log.warning("failed to release lock: %s", exc)
            return False
        self._set_observed(record)
        return True
