"""HTTP to kube-apiserver: a urllib3 pool, JSON bodies, watches read as a byte stream.

The kubeconfig (or the pod's service account) is read by :mod:`._connection`: server, CA,
client certificate and key, bearer token or token file, basic auth, TLS options. Only a
kubeconfig user with an ``exec`` plugin or an ``auth-provider``, or a cluster with a
``proxy-url``, goes through the official ``kubernetes`` client (imported then, not before:
it costs about half a second of start-up); its requests still go out through
``ApiClient.param_serialize`` / ``ApiClient.call_api`` and come back as raw JSON.

Credentials never reach a log line or an exception message: errors carry the method, the
path and the server's ``metav1.Status``, never request headers.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

import urllib3

from schedframe.backends.kubernetes._connection import (
    POOL_MAXSIZE,
    USER_AGENT,
    ClientSession,
    Session,
    in_cluster_session,
    kubeconfig_session,
    needs_client,
)
from schedframe.errors import BackendError

if TYPE_CHECKING:
    from kubernetes.client.configuration import Configuration

__all__ = [
    "ApiError",
    "ApiTransport",
    "RateLimiter",
    "TransportError",
    "WatchStream",
]

log = logging.getLogger("schedframe.backends.kubernetes")

_REASONS: Final = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Gone",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
#: Default (connect, read) timeouts for ordinary requests, in seconds.
DEFAULT_TIMEOUT: Final = (10.0, 60.0)


class ApiError(Exception):
    """The API server answered with an error status (its ``metav1.Status``).

    Attributes:
        code: the HTTP status.
        reason: the Status reason (``Conflict``, ``NotFound``, ``Expired`` ...).
        message: the Status message.
        retry_after: seconds from ``Retry-After`` (or ``details.retryAfterSeconds``), if any.
        method: the request's method.
        path: the request's path.
    """

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        retry_after: float | None = None,
        method: str = "",
        path: str = "",
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.retry_after = retry_after
        self.method = method
        self.path = path

    @classmethod
    def from_status(
        cls,
        code: int,
        body: Mapping[str, Any] | None,
        *,
        retry_after: float | None = None,
        method: str = "",
        path: str = "",
    ) -> ApiError:
        """Build from an HTTP code and a (possibly absent) ``metav1.Status`` body."""
        reason = _REASONS.get(code, "Unknown" if code < 500 else "InternalError")
        message = f"the server responded with the status code {code}"
        if body is not None and body.get("kind") == "Status":
            reason = str(body.get("reason") or reason)
            message = str(body.get("message") or message)
            details = body.get("details")
            if retry_after is None and isinstance(details, Mapping):
                seconds = details.get("retryAfterSeconds")
                if isinstance(seconds, int | float) and seconds > 0:
                    retry_after = float(seconds)
            status_code = body.get("code")
            if isinstance(status_code, int) and status_code:
                code = status_code
        return cls(code, reason, message, retry_after=retry_after, method=method, path=path)

    def to_backend_error(self) -> BackendError:
        """The same failure as schedframe's :class:`~schedframe.errors.BackendError`."""
        return BackendError(self.message, reason=self.reason, code=self.code)

    def __str__(self) -> str:
        where = f"{self.method} {self.path}: " if self.method else ""
        return f"{where}{self.code} {self.reason}: {self.message}"


class TransportError(Exception):
    """No HTTP response: connection refused or reset, timeout, TLS failure.

    Attributes:
        maybe_sent: ``False`` only when the request surely never reached the server
            (the connection could not be opened), so a write cannot have happened.
    """

    def __init__(self, message: str, *, maybe_sent: bool = True) -> None:
        super().__init__(message)
        self.maybe_sent = maybe_sent

    def to_backend_error(self) -> BackendError:
        """As a :class:`~schedframe.errors.BackendError` (503 ``ServiceUnavailable``)."""
        return BackendError(str(self), reason="ServiceUnavailable", code=503)


class RateLimiter:
    """A token bucket (client-go's ``flowcontrol.NewTokenBucketRateLimiter``).

    ``qps <= 0`` disables limiting.
    """

    def __init__(
        self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.qps = qps
        self.burst = max(1, burst)
        self._clock = clock
        self._tokens = float(self.burst)
        self._last = clock()
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take a token; returns how long the caller must wait before using it."""
        if self.qps <= 0:
            return 0.0
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            if self._tokens >= 0:
                return 0.0
            return -self._tokens / self.qps

    def wait(self) -> None:
        """Block until a token is available."""
        delay = self.reserve()
        if delay > 0:
            time.sleep(delay)


def _retry_after(headers: Any) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    if value is None:
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if seconds > 0 else None


def _load_json(data: bytes) -> Any:
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def _describe(exc: BaseException) -> str:
    # urllib3 messages name the host and path, never headers.
    return f"{type(exc).__name__}: {exc}"


class WatchStream:
    """One open watch: iterate to get each decoded event dict; :meth:`close` ends it (from
    any thread)."""

    def __init__(self, response: urllib3.BaseHTTPResponse, path: str) -> None:
        self._response = response
        self._path = path
        self._closed = False

    def __iter__(self) -> Iterator[dict[str, Any]]:
        buffer = b""
        try:
            for chunk in self._response.stream(65536, decode_content=True):
                buffer += chunk
                while True:
                    index = buffer.find(b"\n")
                    if index < 0:
                        break
                    line, buffer = buffer[:index], buffer[index + 1 :]
                    if line.strip():
                        yield self._decode(line)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            if self._closed:
                return
            raise TransportError(f"watch {self._path} broke: {_describe(exc)}") from None
        if buffer.strip() and not self._closed:
            yield self._decode(buffer)

    def _decode(self, line: bytes) -> dict[str, Any]:
        try:
            event = json.loads(line)
        except ValueError:
            raise TransportError(f"watch {self._path}: undecodable event") from None
        if not isinstance(event, dict):
            raise TransportError(f"watch {self._path}: event is not an object")
        return event

    def close(self) -> None:
        """Stop reading; unblocks a thread waiting in the iterator."""
        self._closed = True
        try:
            self._response.shutdown()
        except Exception:  # already closed
            pass
        try:
            self._response.release_conn()
        except Exception:
            pass


class ApiTransport:
    """Requests to one API server.

    Args:
        api_client: a configured ``kubernetes.client.ApiClient`` (its Configuration carries
            host, TLS and credentials), or a session of :mod:`._connection`.
        qps: client-side request rate (client-go's ``QPS``; 0 or less disables it).
        burst: client-side burst (client-go's ``Burst``).

    Build one with :meth:`from_kubeconfig`, :meth:`in_cluster` or :meth:`from_environment`.
    """

    def __init__(self, api_client: Any, *, qps: float = 50.0, burst: int = 100) -> None:
        self._session: Session = (
            ClientSession(api_client) if hasattr(api_client, "param_serialize") else api_client
        )
        self.limiter = RateLimiter(qps, burst)

    # -- construction --------------------------------------------------------------------------

    @staticmethod
    def _configuration() -> Configuration:
        from kubernetes.client.configuration import Configuration

        config = Configuration()
        config.connection_pool_maxsize = POOL_MAXSIZE
        # One retry layer, ours (bind attempts, status patch backoff, reflector relists):
        # urllib3's default of three retries would stack inside it during an outage.
        config.retries = False
        return config

    @classmethod
    def _from_configuration(cls, config: Configuration, qps: float, burst: int) -> ApiTransport:
        from kubernetes.client.api_client import ApiClient

        client = ApiClient(config)
        client.user_agent = USER_AGENT
        return cls._from_session(ClientSession(client), qps, burst)

    @classmethod
    def _from_session(cls, session: Session, qps: float, burst: int) -> ApiTransport:
        if not session.verify_ssl and session.host.startswith("https"):
            _warn_insecure(session.host)
        return cls(session, qps=qps, burst=burst)

    @classmethod
    def from_kubeconfig(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        context: str | None = None,
        qps: float = 50.0,
        burst: int = 100,
    ) -> ApiTransport:
        """From a kubeconfig file (``None``: ``$KUBECONFIG`` or ``~/.kube/config``).

        TLS verification is on unless the cluster entry sets ``insecure-skip-tls-verify``.
        The ``kubernetes`` client is imported only for a user with an ``exec`` plugin or an
        ``auth-provider``, or a cluster with a ``proxy-url``.

        Raises:
            BackendError: the kubeconfig cannot be read or names no usable context.
        """
        location = os.fspath(path) if path is not None else None
        if location is None:
            location = os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or os.path.expanduser(
                KUBE_CONFIG_DEFAULT_LOCATION
            )
        current, cluster, user = _resolve_kubeconfig(location, context)
        if not needs_client(cluster[1], user[1]):
            return cls._from_session(kubeconfig_session(location, cluster, user), qps, burst)
        from kubernetes.config.config_exception import ConfigException
        from kubernetes.config.kube_config import load_kube_config

        config = cls._configuration()
        loader = cast("Callable[..., None]", load_kube_config)
        try:
            loader(
                config_file=location,
                context=context,
                client_configuration=config,
                persist_config=False,
            )
        except Exception as exc:
            # The client's messages quote kubeconfig sections, credentials included: never
            # forwarded, only the kind of failure.
            kind = "ConfigException" if isinstance(exc, ConfigException) else type(exc).__name__
            raise BackendError(
                f"cannot load kubeconfig {location}: the kubernetes client rejected context "
                f'"{current}" ({kind}); check its cluster and user entries',
                reason="InvalidConfiguration",
                code=0,
            ) from None
        return cls._from_configuration(config, qps, burst)

    @classmethod
    def in_cluster(cls, *, qps: float = 50.0, burst: int = 100) -> ApiTransport:
        """From the pod's service account (``KUBERNETES_SERVICE_HOST`` and the mounted token).

        Raises:
            BackendError: not running in a pod.
        """
        return cls._from_session(in_cluster_session(), qps, burst)

    @classmethod
    def from_environment(
        cls,
        kubeconfig: str | os.PathLike[str] | None = None,
        *,
        context: str | None = None,
        qps: float = 50.0,
        burst: int = 100,
    ) -> ApiTransport:
        """A kubeconfig when given; else in-cluster inside a pod; else the default kubeconfig
        (kube-scheduler's order)."""
        if kubeconfig:
            return cls.from_kubeconfig(kubeconfig, context=context, qps=qps, burst=burst)
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            return cls.in_cluster(qps=qps, burst=burst)
        return cls.from_kubeconfig(None, context=context, qps=qps, burst=burst)

    # -- introspection -------------------------------------------------------------------------

    @property
    def host(self) -> str:
        """The API server URL (no credentials)."""
        return self._session.host

    @property
    def verify_ssl(self) -> bool:
        """Whether the server's certificate is verified."""
        return self._session.verify_ssl

    def close(self) -> None:
        """Close the connection pool."""
        self._session.close()

    # -- requests ------------------------------------------------------------------------------

    def _send(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]],
        body: Any,
        content_type: str | None,
        timeout: float | tuple[float, float] | None,
    ) -> urllib3.BaseHTTPResponse:
        headers = {"Accept": "application/json"}
        if content_type is not None:
            headers["Content-Type"] = content_type
        try:
            response = self._session.send(method, path, query, headers, body, timeout)
        except urllib3.exceptions.NewConnectionError as exc:
            raise TransportError(f"{method} {path}: {_describe(exc)}", maybe_sent=False) from None
        except urllib3.exceptions.MaxRetryError as exc:
            sent = not isinstance(exc.reason, urllib3.exceptions.NewConnectionError)
            raise TransportError(f"{method} {path}: {_describe(exc)}", maybe_sent=sent) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise TransportError(f"{method} {path}: {_describe(exc)}") from None
        except Exception as exc:  # the client's ApiException for TLS failures
            if type(exc).__name__ == "ApiException":
                raise TransportError(f"{method} {path}: {_first_line(exc)}") from None
            raise
        return response

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Sequence[tuple[str, str]] = (),
        body: Any = None,
        content_type: str | None = None,
        timeout: float | tuple[float, float] | None = DEFAULT_TIMEOUT,
        limiter: RateLimiter | None = None,
    ) -> Any:
        """Send one request and return its decoded JSON body.

        ``limiter`` replaces the transport's own rate limiter for this request.

        Raises:
            ApiError: the server answered with a status of 400 or more.
            TransportError: no answer.
        """
        if body is not None and content_type is None:
            content_type = "application/json"
        (limiter or self.limiter).wait()
        response = self._send(method, path, query, body, content_type, timeout)
        try:
            data = response.data
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise TransportError(
                f"{method} {path}: reading the response: {_describe(exc)}"
            ) from None
        finally:
            response.release_conn()
        decoded = _load_json(data)
        if response.status >= 400:
            raise ApiError.from_status(
                response.status,
                decoded if isinstance(decoded, Mapping) else None,
                retry_after=_retry_after(response.headers),
                method=method,
                path=path,
            )
        return decoded

    def watch(
        self,
        path: str,
        *,
        query: Sequence[tuple[str, str]],
        timeout: tuple[float, float],
    ) -> WatchStream:
        """Open a watch (``query`` must hold ``watch=true``).

        Raises:
            ApiError: the server refused the watch with an HTTP error status.
            TransportError: no answer.
        """
        self.limiter.wait()
        response = self._send("GET", path, query, None, None, timeout)
        if response.status >= 400:
            try:
                data = response.data
            except (urllib3.exceptions.HTTPError, OSError):
                data = b""
            finally:
                response.release_conn()
            decoded = _load_json(data)
            raise ApiError.from_status(
                response.status,
                decoded if isinstance(decoded, Mapping) else None,
                retry_after=_retry_after(response.headers),
                method="GET",
                path=path,
            )
        return WatchStream(response, path)


def _kubeconfig_error(location: str, detail: str) -> BackendError:
    return BackendError(
        f"cannot load kubeconfig {location}: {detail}", reason="InvalidConfiguration", code=0
    )


def _named(
    doc: Mapping[str, Any], section: str, body_key: str, location: str
) -> list[tuple[str, Mapping[str, Any]]]:
    entries = doc.get(section)
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise _kubeconfig_error(location, f"{section}: must be a list")
    out: list[tuple[str, Mapping[str, Any]]] = []
    for index, entry in enumerate(entries):
        where = f"{section}[{index}]"
        if not isinstance(entry, Mapping):
            raise _kubeconfig_error(location, f"{where}: must be a mapping")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise _kubeconfig_error(location, f"{where}.name: must be a non-empty string")
        body = entry.get(body_key)
        if body is None:
            raise _kubeconfig_error(location, f"{where}.{body_key}: Required value")
        if not isinstance(body, Mapping):
            raise _kubeconfig_error(location, f"{where}.{body_key}: must be a mapping")
        out.append((name, body))
    return out


#: The kubeconfig read when none is named and ``$KUBECONFIG`` is unset (client-go's).
KUBE_CONFIG_DEFAULT_LOCATION: Final = "~/.kube/config"

_Entry = tuple[int, Mapping[str, Any]]


def check_kubeconfig(location: str, context: str | None = None) -> str:
    """Check a kubeconfig before it is used: one clear line naming the file and the field for
    what is wrong, never a value that could be a credential.

    Returns:
        The name of the context to use.

    Raises:
        BackendError: (``reason="InvalidConfiguration"``) the file cannot be read, is not
            YAML, or does not name a context, its cluster with a server URL, and its user.
    """
    return _resolve_kubeconfig(location, context)[0]


def _resolve_kubeconfig(location: str, context: str | None) -> tuple[str, _Entry, _Entry]:
    """:func:`check_kubeconfig`, and the context's cluster and user entries with their
    indexes (the user ``(-1, {})`` when the context names none)."""
    import yaml

    try:
        with open(location, encoding="utf-8") as handle:
            text = handle.read()
    except UnicodeDecodeError:
        raise _kubeconfig_error(location, "not UTF-8 text") from None
    except OSError as exc:
        raise _kubeconfig_error(location, exc.strerror or type(exc).__name__) from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise _kubeconfig_error(location, f"not valid YAML{where}") from None
    except RecursionError:
        raise _kubeconfig_error(location, "nested too deeply") from None
    except ValueError:  # a scalar YAML resolves but Python cannot build (a 5,000-digit int)
        raise _kubeconfig_error(location, "not valid YAML (a value cannot be converted)") from None
    if not isinstance(doc, Mapping):
        raise _kubeconfig_error(location, "must be a mapping (a kind: Config document)")
    clusters = _named(doc, "clusters", "cluster", location)
    users = _named(doc, "users", "user", location)
    contexts = _named(doc, "contexts", "context", location)
    current = context if context else doc.get("current-context")
    if not current:
        raise _kubeconfig_error(location, "current-context: Required value (or pass --context)")
    if not isinstance(current, str):
        raise _kubeconfig_error(location, "current-context: must be a string")
    found = [(i, body) for i, (name, body) in enumerate(contexts) if name == current]
    if not found:
        raise _kubeconfig_error(location, f'context "{current}" is not defined in contexts')
    index, ctx = found[0]
    cluster_name = ctx.get("cluster")
    if not isinstance(cluster_name, str) or not cluster_name:
        raise _kubeconfig_error(
            location, f"contexts[{index}].context.cluster: must be a non-empty string"
        )
    matching = [(i, body) for i, (name, body) in enumerate(clusters) if name == cluster_name]
    if not matching:
        raise _kubeconfig_error(
            location,
            f'cluster "{cluster_name}" (of context "{current}") is not defined in clusters',
        )
    c_index, cluster = matching[0]
    server = cluster.get("server")
    if not isinstance(server, str) or not server.startswith(("http://", "https://")):
        raise _kubeconfig_error(
            location, f"clusters[{c_index}].cluster.server: must be an http:// or https:// URL"
        )
    user_name = ctx.get("user")
    user: _Entry = (-1, {})
    if user_name is not None and user_name != "":
        if not isinstance(user_name, str):
            raise _kubeconfig_error(location, f"contexts[{index}].context.user: must be a string")
        named = [(i, body) for i, (name, body) in enumerate(users) if name == user_name]
        if not named:
            raise _kubeconfig_error(
                location, f'user "{user_name}" (of context "{current}") is not defined in users'
            )
        user = named[0]
    return current, (c_index, cluster), user


_insecure_hosts: set[str] = set()
_insecure_lock = threading.Lock()


def _warn_insecure(host: str) -> None:
    """One warning per run and host, in the log format, instead of urllib3's
    ``InsecureRequestWarning`` on every request."""
    warnings.filterwarnings("ignore", category=urllib3.exceptions.InsecureRequestWarning)
    with _insecure_lock:
        if host in _insecure_hosts:
            return
        _insecure_hosts.add(host)
    log.warning(
        "TLS verification of the API server %s is disabled (insecure-skip-tls-verify): "
        "its identity is not checked",
        host,
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def jittered(duration: float, factor: float = 1.0) -> float:
    """client-go's ``wait.Jitter``: ``duration`` plus up to ``factor`` times itself."""
    return duration + random.random() * factor * duration


class Backoff:
    """Exponential backoff with jitter (client-go's backoff manager: 0.8 s doubling to
    30 s, reset after a quiet period)."""

    def __init__(
        self,
        initial: float = 0.8,
        cap: float = 30.0,
        *,
        reset_after: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.initial = initial
        self.cap = cap
        self.reset_after = reset_after
        self._clock = clock
        self._current = initial
        self._last = clock()

    def next(self) -> float:
        """The next delay (jittered)."""
        now = self._clock()
        if now - self._last > self.reset_after:
            self._current = self.initial
        self._last = now
        delay = jittered(self._current)
        self._current = min(self.cap, self._current * 2)
        return min(delay, self.cap)

    def reset(self) -> None:
        """Start again from the initial delay."""
        self._current = self.initial
