"""Connections without the kubernetes client: TLS (CA, server name, client certificates,
skipped verification), credentials (token, token file re-read, basic auth), the in-cluster
service account, and the client imported only for what needs it."""

from __future__ import annotations

import base64
import json
import logging
import os
import shutil
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedframe.backends.kubernetes import ApiTransport, TransportError, _connection
from schedframe.errors import BackendError
from schedframe.testing.fakeapi import FakeAPIServer

SERVER_NAME = "kubernetes.default"


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _issue(directory: Path, name: str, subject: str, extensions: str | None = None) -> None:
    _openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject, cwd=directory,
    )  # fmt: skip
    command = ["x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key"]
    command += ["-CAcreateserial", "-out", f"{name}.crt", "-days", "1"]
    if extensions is not None:
        (directory / f"{name}.ext").write_text(extensions)
        command += ["-extfile", f"{name}.ext"]
    _openssl(*command, cwd=directory)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    directory = tmp_path_factory.mktemp("pki")
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=test-ca",
        cwd=directory,
    )  # fmt: skip
    _issue(directory, "server", "/CN=kube-apiserver", f"subjectAltName=DNS:{SERVER_NAME}\n")
    _issue(directory, "client", "/CN=scheduler")
    _issue(directory, "other", "/CN=other")
    return directory


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        peer = self.connection.getpeercert() if hasattr(self.connection, "getpeercert") else None
        client = None
        if peer:
            client = dict(pair[0] for pair in peer["subject"]).get("commonName")
        body = json.dumps(
            {"authorization": self.headers.get("Authorization"), "client": client}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def https_server(pki: Path) -> Iterator[str]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki / "server.crt", pki / "server.key")
    context.load_verify_locations(pki / "ca.crt")
    context.verify_mode = ssl.CERT_OPTIONAL
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _kubeconfig(path: Path, cluster: dict[str, Any], user: dict[str, Any]) -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c",
    }
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode("ascii")


def _get(path: Path) -> dict[str, Any]:
    transport = ApiTransport.from_kubeconfig(path, qps=0)
    try:
        answer = transport.request("GET", "/version")
    finally:
        transport.close()
    assert isinstance(answer, dict)
    return answer


def test_ca_data_server_name_and_token(https_server: str, pki: Path, tmp_path: Path) -> None:
    cluster = {
        "server": https_server,
        "certificate-authority-data": _b64(pki / "ca.crt"),
        "tls-server-name": SERVER_NAME,
    }
    path = _kubeconfig(tmp_path / "kubeconfig", cluster, {"token": "t0ken"})
    assert _get(path) == {"authorization": "Bearer t0ken", "client": None}


def test_the_server_name_is_verified(https_server: str, pki: Path, tmp_path: Path) -> None:
    # The certificate names kubernetes.default only, not 127.0.0.1.
    cluster = {"server": https_server, "certificate-authority": str(pki / "ca.crt")}
    path = _kubeconfig(tmp_path / "kubeconfig", cluster, {"token": "t0ken"})
    with pytest.raises(TransportError, match="SSLError|CERTIFICATE_VERIFY_FAILED|match"):
        _get(path)


def test_an_unknown_authority_is_refused(https_server: str, tmp_path: Path) -> None:
    cluster = {"server": https_server, "tls-server-name": SERVER_NAME}
    path = _kubeconfig(tmp_path / "kubeconfig", cluster, {"token": "t0ken"})
    with pytest.raises(TransportError, match="CERTIFICATE_VERIFY_FAILED"):
        _get(path)


def test_skipped_verification_connects(https_server: str, tmp_path: Path) -> None:
    cluster = {"server": https_server, "insecure-skip-tls-verify": True}
    path = _kubeconfig(tmp_path / "kubeconfig", cluster, {"username": "a", "password": "b"})
    transport = ApiTransport.from_kubeconfig(path, qps=0)
    assert not transport.verify_ssl
    transport.close()
    expected = "Basic " + base64.b64encode(b"a:b").decode()
    assert _get(path) == {"authorization": expected, "client": None}


def test_client_certificate_data(https_server: str, pki: Path, tmp_path: Path) -> None:
    cluster = {
        "server": https_server,
        "certificate-authority-data": _b64(pki / "ca.crt"),
        "tls-server-name": SERVER_NAME,
    }
    user = {
        "client-certificate-data": _b64(pki / "client.crt"),
        "client-key-data": _b64(pki / "client.key"),
    }
    path = _kubeconfig(tmp_path / "kubeconfig", cluster, user)
    assert _get(path) == {"authorization": None, "client": "scheduler"}


def test_files_are_relative_to_the_kubeconfig(https_server: str, pki: Path) -> None:
    cluster = {
        "server": https_server,
        "certificate-authority": "ca.crt",
        "tls-server-name": SERVER_NAME,
    }
    user = {"client-certificate": "client.crt", "client-key": "client.key"}
    path = _kubeconfig(pki / "kubeconfig", cluster, user)
    assert _get(path) == {"authorization": None, "client": "scheduler"}


@pytest.mark.parametrize(
    ("cluster", "user", "detail"),
    [
        (
            {"certificate-authority-data": "not base64!"},
            {},
            "clusters[0].cluster.certificate-authority-data: must be base64",
        ),
        (
            {"certificate-authority-data": base64.b64encode(b"SECRET-CA").decode()},
            {},
            "clusters[0].cluster.certificate-authority: is not a PEM certificate bundle",
        ),
        (
            {"insecure-skip-tls-verify": "yes"},
            {},
            "clusters[0].cluster.insecure-skip-tls-verify: must be true or false",
        ),
        ({}, {"token": "SECRET\nX"}, "users[0].user.token: must be a single line"),
        (
            {},
            {"client-certificate": "client.crt"},
            "users[0].user.client-key: Required value (a client certificate needs its key)",
        ),
        (
            {},
            {"client-certificate": "client.crt", "client-key": "other.key"},
            "users[0].user.client-certificate: and client-key are not a matching PEM pair",
        ),
        (
            {},
            {"client-certificate": "SECRET-NAME.crt", "client-key": "other.key"},
            "users[0].user.client-certificate: cannot be read (FileNotFoundError)",
        ),
    ],
)
def test_unusable_fields_are_named_never_shown(
    pki: Path, tmp_path: Path, cluster: dict[str, Any], user: dict[str, Any], detail: str
) -> None:
    for name in ("client.crt", "other.key"):
        shutil.copy(pki / name, tmp_path / name)
    path = _kubeconfig(tmp_path / "kubeconfig", {"server": "https://127.0.0.1:1", **cluster}, user)
    with pytest.raises(BackendError) as caught:
        ApiTransport.from_kubeconfig(path, qps=0)
    assert str(caught.value) == f"cannot load kubeconfig {path}: {detail}"
    assert caught.value.reason == "InvalidConfiguration"
    assert "SECRET" not in str(caught.value)


def test_a_token_file_is_read_again_after_a_minute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "token").write_text("first\n")
    path = _kubeconfig(
        tmp_path / "kubeconfig", {"server": "http://127.0.0.1:1"}, {"tokenFile": "token"}
    )
    session = _connection.kubeconfig_session(
        str(path), (0, {"server": "http://127.0.0.1:1"}), (0, {"tokenFile": "token"})
    )
    credentials = session._credentials
    assert credentials.header() == "Bearer first"
    (tmp_path / "token").write_text("second\n")
    assert credentials.header() == "Bearer first"  # not yet
    monkeypatch.setattr(_connection, "TOKEN_REFRESH", 0.0)
    assert credentials.header() == "Bearer second"
    os.remove(tmp_path / "token")
    assert credentials.header() == "Bearer second"  # kept while the file is away


def _in_cluster_files(tmp_path: Path, pki: Path, token: str = "sa-token") -> tuple[str, str]:
    (tmp_path / "token").write_text(token)
    return str(tmp_path / "token"), str(pki / "ca.crt")


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({}, "Service host/port is not set."),
        (
            {"KUBERNETES_SERVICE_HOST": "", "KUBERNETES_SERVICE_PORT": "443"},
            "Service host/port is set but empty.",
        ),
    ],
)
def test_in_cluster_outside_a_pod(environ: dict[str, str], message: str) -> None:
    with pytest.raises(BackendError) as caught:
        _connection.in_cluster_session(environ)
    assert str(caught.value) == f"cannot load the in-cluster configuration: {message}"


def test_in_cluster_service_account(tmp_path: Path, pki: Path) -> None:
    token_file, ca_file = _in_cluster_files(tmp_path, pki)
    env = {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"}
    session = _connection.in_cluster_session(env, token_file=token_file, ca_file=ca_file)
    assert session.host == "https://[fd00::1]:443"
    assert session.verify_ssl
    assert session._credentials.header() == "Bearer sa-token"
    session.close()
    with pytest.raises(BackendError, match="Service token file does not exist."):
        _connection.in_cluster_session(env, token_file=str(tmp_path / "none"), ca_file=ca_file)
    empty, _ = _in_cluster_files(tmp_path, pki, token="")
    with pytest.raises(BackendError, match="Token file exists but empty."):
        _connection.in_cluster_session(env, token_file=empty, ca_file=ca_file)
    token_file, _ = _in_cluster_files(tmp_path, pki)
    with pytest.raises(BackendError, match="Service certification file does not exist."):
        _connection.in_cluster_session(env, token_file=token_file, ca_file=str(tmp_path / "x"))


@pytest.mark.parametrize(
    ("user", "imported"),
    [
        ({"token": "t"}, False),
        ({"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "true"}}, True),
    ],
)
def test_the_client_is_imported_only_for_what_needs_it(
    tmp_path: Path, user: dict[str, Any], imported: bool
) -> None:
    path = _kubeconfig(tmp_path / "kubeconfig", {"server": "http://127.0.0.1:1"}, user)
    code = (
        "import sys\n"
        "from schedframe.backends.kubernetes import ApiTransport\n"
        f"ApiTransport.from_kubeconfig({str(path)!r}, qps=0).close()\n"
        "print('kubernetes' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(imported)


def test_a_hundred_requests_at_once_keep_their_connections(
    fake: FakeAPIServer, kubeconfig: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # As many as schedframe run's binding cycles in flight: no connection is discarded (nor
    # logged as such) when they come back to the pool.
    transport = ApiTransport.from_kubeconfig(kubeconfig, qps=0)
    fake.delay_requests(0.3, times=None, method="GET", path="^/version$")
    barrier = threading.Barrier(100, timeout=30)
    errors: list[BaseException] = []

    def get() -> None:
        try:
            barrier.wait()
            transport.request("GET", "/version")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=get) for _ in range(100)]
    with caplog.at_level(logging.WARNING, logger="urllib3"):
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    fake.clear_failures()
    transport.close()
    assert errors == []
    assert [r.getMessage() for r in caplog.records if "pool is full" in r.getMessage()] == []
