"""Connections to kube-apiserver without the ``kubernetes`` client package.

A kubeconfig's cluster and user entries (server, CA, client certificate and key, bearer token
or token file, basic auth, ``insecure-skip-tls-verify``, ``tls-server-name``) and the pod's
service account are read here and turned into a urllib3 pool with an ``ssl.SSLContext`` and an
``Authorization`` header. Importing the client costs about half a second of start-up (its
models and their pydantic machinery); what it adds over this module (``exec`` credential
plugins, ``auth-provider`` entries, ``proxy-url``) is still used through it: see
:func:`needs_client`.

Errors name the file and the field path and the kind of failure, never a value from the
kubeconfig (a token, a key, even a file name can be a secret).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import ssl
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol
from urllib.parse import urlencode

import urllib3

from schedframe.errors import BackendError

__all__ = ["ClientSession", "PoolSession", "Session", "in_cluster_session", "kubeconfig_session"]

#: What the scheduler's requests say they are.
USER_AGENT: Final = "schedframe/0.1 (kubernetes-backend)"
#: Connections kept open to the server: watches, binding cycles (``schedframe run`` allows 256
#: at once) and event writes share the pool. A smaller pool discards the connections returned
#: beyond it (urllib3 logs "Connection pool is full" for each) and opens new ones.
POOL_MAXSIZE: Final = 320
#: client-go re-reads a token file (and the service account token) at most this often.
TOKEN_REFRESH: Final = 60.0
SERVICE_HOST_ENV: Final = "KUBERNETES_SERVICE_HOST"
SERVICE_PORT_ENV: Final = "KUBERNETES_SERVICE_PORT"
SERVICE_TOKEN_FILE: Final = "/var/run/secrets/kubernetes.io/serviceaccount/token"
SERVICE_CA_FILE: Final = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
#: Entries only the ``kubernetes`` client knows how to use.
_CLIENT_USER_KEYS: Final = ("exec", "auth-provider")
_CLIENT_CLUSTER_KEYS: Final = ("proxy-url",)

Timeout = float | tuple[float, float] | None


class Session(Protocol):
    """One API server: where requests go and how they are authenticated."""

    @property
    def host(self) -> str: ...

    @property
    def verify_ssl(self) -> bool: ...

    def send(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]],
        headers: dict[str, str],
        body: Any,
        timeout: Timeout,
    ) -> urllib3.BaseHTTPResponse:
        """The response, its body not read yet."""
        ...

    def close(self) -> None: ...


class _Credentials:
    """The ``Authorization`` header: fixed, or a token file re-read every minute."""

    def __init__(
        self, header: str | None = None, *, token_file: str | None = None, prefix: str = "Bearer"
    ) -> None:
        self._header = header
        self._token_file = token_file
        self._prefix = prefix
        self._read_at = time.monotonic()
        self._lock = threading.Lock()

    def header(self) -> str | None:
        if self._token_file is None or time.monotonic() - self._read_at < TOKEN_REFRESH:
            return self._header
        with self._lock:
            if time.monotonic() - self._read_at >= TOKEN_REFRESH:
                try:
                    token = _read_token(self._token_file)
                except OSError:
                    token = None  # keep the last token; the server says if it expired
                if token:
                    self._header = f"{self._prefix} {token}"
                self._read_at = time.monotonic()
        return self._header


def _read_token(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read().strip()


class PoolSession:
    """Requests through a urllib3 pool with its own TLS context and credentials."""

    def __init__(
        self,
        host: str,
        *,
        credentials: _Credentials,
        ssl_context: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
    ) -> None:
        self._host = host.rstrip("/")
        self._credentials = credentials
        self._verify = ssl_context is None or ssl_context.verify_mode != ssl.CERT_NONE
        options: dict[str, Any] = {"num_pools": 4, "maxsize": POOL_MAXSIZE, "retries": False}
        if self._host.startswith("https"):
            options["ssl_context"] = ssl_context
            if not self._verify:
                options["cert_reqs"] = "CERT_NONE"
                options["assert_hostname"] = False
            if server_hostname:
                options["server_hostname"] = server_hostname
        self._pool = urllib3.PoolManager(**options)

    @property
    def host(self) -> str:
        return self._host

    @property
    def verify_ssl(self) -> bool:
        return self._verify

    def send(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]],
        headers: dict[str, str],
        body: Any,
        timeout: Timeout,
    ) -> urllib3.BaseHTTPResponse:
        url = self._host + path
        if query:
            url += "?" + urlencode(list(query))
        headers = {**headers, "User-Agent": USER_AGENT}
        authorization = self._credentials.header()
        if authorization:
            headers["Authorization"] = authorization
        data: bytes | None
        if body is None:
            data = None
        elif isinstance(body, bytes):
            data = body
        elif isinstance(body, str):
            data = body.encode("utf-8")
        else:
            data = json.dumps(body, separators=(",", ":")).encode("utf-8")
        if isinstance(timeout, tuple):
            limit: urllib3.Timeout | float | None = urllib3.Timeout(
                connect=timeout[0], read=timeout[1]
            )
        else:
            limit = timeout
        return self._pool.request(
            method,
            url,
            body=data,
            headers=headers,
            timeout=limit,
            preload_content=False,
            redirect=False,
        )

    def close(self) -> None:
        self._pool.clear()


class ClientSession:
    """Requests through a configured ``kubernetes.client.ApiClient`` (for what only the
    client supports: ``exec`` plugins, ``auth-provider`` entries, ``proxy-url``)."""

    def __init__(self, api_client: Any) -> None:
        self._client = api_client

    @property
    def host(self) -> str:
        return str(self._client.configuration.host)

    @property
    def verify_ssl(self) -> bool:
        return bool(self._client.configuration.verify_ssl)

    def send(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]],
        headers: dict[str, str],
        body: Any,
        timeout: Timeout,
    ) -> urllib3.BaseHTTPResponse:
        request = self._client.param_serialize(
            method,
            path,
            query_params=list(query) or None,
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        rest = self._client.call_api(*request, _request_timeout=timeout)
        response: urllib3.BaseHTTPResponse = rest.response
        return response

    def close(self) -> None:
        self._client.close()


# -- kubeconfig ---------------------------------------------------------------------------------


def _error(location: str, detail: str) -> BackendError:
    return BackendError(
        f"cannot load kubeconfig {location}: {detail}", reason="InvalidConfiguration", code=0
    )


def needs_client(cluster: Mapping[str, Any], user: Mapping[str, Any]) -> bool:
    """Whether the entries ask for what only the ``kubernetes`` client does."""
    return any(cluster.get(k) for k in _CLIENT_CLUSTER_KEYS) or any(
        user.get(k) for k in _CLIENT_USER_KEYS
    )


class _Entries:
    """Reads one kubeconfig section's fields, naming ``where`` in errors."""

    def __init__(self, location: str, where: str, body: Mapping[str, Any], base: str) -> None:
        self.location = location
        self.where = where
        self.body = body
        self.base = base

    def error(self, key: str, detail: str) -> BackendError:
        return _error(self.location, f"{self.where}.{key}: {detail}")

    def text(self, key: str) -> str | None:
        value = self.body.get(key)
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise self.error(key, "must be a string")
        return value

    def flag(self, key: str) -> bool:
        value = self.body.get(key)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self.error(key, "must be true or false")
        return value

    def path(self, key: str) -> str | None:
        value = self.text(key)
        return None if value is None else os.path.normpath(os.path.join(self.base, value))

    def data(self, key: str) -> bytes | None:
        """``<key>-data`` (base64) if set, else the file ``<key>`` names (data wins, as the
        client and client-go)."""
        encoded = self.text(f"{key}-data")
        if encoded is not None:
            try:
                return base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError):
                raise self.error(f"{key}-data", "must be base64") from None
        path = self.path(key)
        if path is None:
            return None
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except OSError as exc:
            raise self.error(key, f"cannot be read ({type(exc).__name__})") from None


def _one_line(value: str) -> bool:
    return "\n" not in value and "\r" not in value


def kubeconfig_session(
    location: str, cluster_at: tuple[int, Mapping[str, Any]], user_at: tuple[int, Mapping[str, Any]]
) -> PoolSession:
    """A session for a checked kubeconfig's cluster and user entries (``user_at`` index -1
    with an empty body when the context names no user).

    Raises:
        BackendError: (``InvalidConfiguration``) a field cannot be used; the message names
            it, never its value.
    """
    base = os.path.dirname(os.path.abspath(location))
    cluster = _Entries(location, f"clusters[{cluster_at[0]}].cluster", cluster_at[1], base)
    user = _Entries(location, f"users[{user_at[0]}].user", user_at[1], base)
    server = str(cluster.body["server"]).rstrip("/")
    credentials = _user_credentials(user)
    if not server.startswith("https"):
        return PoolSession(server, credentials=credentials)
    context = _tls_context(cluster, user)
    return PoolSession(
        server,
        credentials=credentials,
        ssl_context=context,
        server_hostname=cluster.text("tls-server-name"),
    )


def _user_credentials(user: _Entries) -> _Credentials:
    # The client's order: a token (or token file), then basic auth.
    token = user.text("token")
    if token is not None:
        if not _one_line(token):
            raise user.error("token", "must be a single line")
        return _Credentials(f"Bearer {token}")
    token_file = user.path("tokenFile")
    if token_file is not None:
        try:
            token = _read_token(token_file)
        except (OSError, UnicodeDecodeError) as exc:
            raise user.error("tokenFile", f"cannot be read ({type(exc).__name__})") from None
        if not token or not _one_line(token):
            raise user.error("tokenFile", "must hold a single-line token")
        return _Credentials(f"Bearer {token}", token_file=token_file)
    username, password = user.text("username"), user.text("password")
    if username is not None and password is not None:
        pair = f"{username}:{password}".encode()
        return _Credentials(f"Basic {base64.b64encode(pair).decode('ascii')}")
    return _Credentials(None)


def _tls_context(cluster: _Entries, user: _Entries) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    if cluster.flag("insecure-skip-tls-verify"):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        authority = cluster.data("certificate-authority")
        if authority is not None:
            try:
                context.load_verify_locations(cadata=authority.decode("ascii"))
            except (ssl.SSLError, UnicodeDecodeError, ValueError):
                raise cluster.error(
                    "certificate-authority", "is not a PEM certificate bundle"
                ) from None
    certificate = user.data("client-certificate")
    key = user.data("client-key")
    if (certificate is None) != (key is None):
        missing = "client-key" if key is None else "client-certificate"
        raise user.error(missing, "Required value (a client certificate needs its key)")
    if certificate is not None and key is not None:
        _load_client_pair(context, certificate, key, user)
    return context


def _load_client_pair(
    context: ssl.SSLContext, certificate: bytes, key: bytes, user: _Entries
) -> None:
    # ssl loads a certificate chain from files only: private files, removed at once.
    with tempfile.TemporaryDirectory(prefix="schedframe-tls-") as directory:
        cert_path = os.path.join(directory, "cert.pem")
        key_path = os.path.join(directory, "key.pem")
        for path, content in ((cert_path, certificate), (key_path, key)):
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(content)
        try:
            context.load_cert_chain(cert_path, key_path)
        except (ssl.SSLError, ValueError, OSError):
            raise user.error(
                "client-certificate", "and client-key are not a matching PEM pair"
            ) from None


# -- in-cluster ---------------------------------------------------------------------------------


def _in_cluster_error(detail: str) -> BackendError:
    return BackendError(
        f"cannot load the in-cluster configuration: {detail}",
        reason="InvalidConfiguration",
        code=0,
    )


def in_cluster_session(
    environ: Mapping[str, str] | None = None,
    *,
    token_file: str = SERVICE_TOKEN_FILE,
    ca_file: str = SERVICE_CA_FILE,
) -> PoolSession:
    """The pod's service account: ``https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT``,
    its token (re-read every minute) and CA (the client's messages on failure).

    Raises:
        BackendError: not running in a pod, or the service account files are missing.
    """
    env = os.environ if environ is None else environ
    if SERVICE_HOST_ENV not in env or SERVICE_PORT_ENV not in env:
        raise _in_cluster_error("Service host/port is not set.")
    host, port = env[SERVICE_HOST_ENV], env[SERVICE_PORT_ENV]
    if not host or not port:
        raise _in_cluster_error("Service host/port is set but empty.")
    if ":" in host or "%" in host:
        host = f"[{host}]"
    if not os.path.isfile(token_file):
        raise _in_cluster_error("Service token file does not exist.")
    try:
        token = _read_token(token_file)
    except (OSError, UnicodeDecodeError) as exc:
        raise _in_cluster_error(f"cannot read the service token ({type(exc).__name__})") from None
    if not token:
        raise _in_cluster_error("Token file exists but empty.")
    if not os.path.isfile(ca_file):
        raise _in_cluster_error("Service certification file does not exist.")
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    try:
        context.load_verify_locations(cafile=ca_file)
    except (ssl.SSLError, OSError):
        raise _in_cluster_error("Cert file exists but empty or not PEM.") from None
    credentials = _Credentials(f"Bearer {token}", token_file=token_file)
    return PoolSession(f"https://{host}:{port}", credentials=credentials, ssl_context=context)
