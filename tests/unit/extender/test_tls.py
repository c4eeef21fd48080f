"""HTTPS extenders: CA, client certificates, insecure mode (certificates made by openssl)."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from schedframe.config import Extender, ExtenderTLSConfig, load_config
from schedframe.errors import ConfigError
from schedframe.extender import ExtenderError, HTTPExtender, build_extenders
from schedframe.framework import NodeInfo
from schedframe.testing.builders import make_node, make_pod
from schedframe.testing.extender import ExtenderServer, keep_nodes

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def _run(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _ca(d: Path, name: str) -> None:
    _run(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        "-keyout", f"{name}.key", "-out", f"{name}.pem", "-subj", f"/CN={name}",
        cwd=d,
    )  # fmt: skip


def _issue(d: Path, ca: str, name: str, *extra: str) -> None:
    _run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
         "-subj", f"/CN={name}", cwd=d)  # fmt: skip
    (d / f"{name}.ext").write_text("\n".join(extra) + "\n")
    _run("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
         "-CAcreateserial", "-days", "2", "-out", f"{name}.pem", "-extfile", f"{name}.ext",
         cwd=d)  # fmt: skip


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("pki")
    _ca(d, "ca")
    _ca(d, "other-ca")
    _issue(d, "ca", "server", "subjectAltName=IP:127.0.0.1,DNS:extender.test")
    _issue(d, "ca", "client", "extendedKeyUsage=clientAuth")
    return d


def _server_context(pki: Path, *, client_certs: bool) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki / "server.pem", pki / "server.key")
    if client_certs:
        ctx.load_verify_locations(pki / "ca.pem")
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


@pytest.fixture
def https(pki: Path) -> Iterator[ExtenderServer]:
    with ExtenderServer(
        filter=keep_nodes(lambda n: True), tls=_server_context(pki, client_certs=False)
    ) as s:
        yield s


def _filter(url: str, **kwargs: object) -> list[str]:
    ext = HTTPExtender(Extender(url_prefix=url, filter_verb="filter", **kwargs))  # type: ignore[arg-type]
    kept, _, _ = ext.filter(make_pod("p").obj(), [NodeInfo(make_node("n1").obj())])
    return [n.name for n in kept]


def test_ca_file_verifies_the_server(https: ExtenderServer, pki: Path) -> None:
    tls = ExtenderTLSConfig(ca_file=str(pki / "ca.pem"))
    assert _filter(https.url, enable_https=True, tls_config=tls) == ["n1"]


def test_ca_data_verifies_the_server(https: ExtenderServer, pki: Path) -> None:
    tls = ExtenderTLSConfig(ca_data=(pki / "ca.pem").read_bytes())
    assert _filter(https.url, enable_https=True, tls_config=tls) == ["n1"]


def test_a_server_from_another_ca_is_refused(https: ExtenderServer, pki: Path) -> None:
    tls = ExtenderTLSConfig(ca_file=str(pki / "other-ca.pem"))
    with pytest.raises(ExtenderError, match="CERTIFICATE_VERIFY_FAILED"):
        _filter(https.url, enable_https=True, tls_config=tls)


def test_https_without_a_ca_does_not_verify_as_upstream(https: ExtenderServer) -> None:
    assert _filter(https.url, enable_https=True) == ["n1"]


def test_insecure_skips_verification(https: ExtenderServer, pki: Path) -> None:
    tls = ExtenderTLSConfig(ca_file=str(pki / "other-ca.pem"), insecure=True)
    assert _filter(https.url, enable_https=True, tls_config=tls) == ["n1"]


def test_server_name_is_checked_against_the_certificate(https: ExtenderServer, pki: Path) -> None:
    good = ExtenderTLSConfig(ca_file=str(pki / "ca.pem"), server_name="extender.test")
    assert _filter(https.url, enable_https=True, tls_config=good) == ["n1"]
    bad = ExtenderTLSConfig(ca_file=str(pki / "ca.pem"), server_name="elsewhere.test")
    with pytest.raises(ExtenderError, match="CERTIFICATE_VERIFY_FAILED"):
        _filter(https.url, enable_https=True, tls_config=bad)


def test_client_certificate_from_files_and_from_data(pki: Path) -> None:
    with ExtenderServer(
        filter=keep_nodes(lambda n: True), tls=_server_context(pki, client_certs=True)
    ) as s:
        files = ExtenderTLSConfig(
            ca_file=str(pki / "ca.pem"),
            cert_file=str(pki / "client.pem"),
            key_file=str(pki / "client.key"),
        )
        assert _filter(s.url, enable_https=True, tls_config=files) == ["n1"]
        data = ExtenderTLSConfig(
            ca_data=(pki / "ca.pem").read_bytes(),
            cert_data=(pki / "client.pem").read_bytes(),
            key_data=(pki / "client.key").read_bytes(),
        )
        assert _filter(s.url, enable_https=True, tls_config=data) == ["n1"]
        without = ExtenderTLSConfig(ca_file=str(pki / "ca.pem"))
        with pytest.raises(ExtenderError):
            _filter(s.url, enable_https=True, tls_config=without)


def test_unreadable_tls_files_fail_at_start_with_the_field_path(pki: Path) -> None:
    tls = ExtenderTLSConfig(ca_file=str(pki / "missing.pem"))
    with pytest.raises(ExtenderError, match="^cannot load the TLS configuration: "):
        HTTPExtender(Extender(url_prefix="https://x", enable_https=True, tls_config=tls))
    (pki / "bad-key.pem").write_text("-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n")
    config = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "extenders": [
                {"urlPrefix": "https://x"},
                {
                    "urlPrefix": "https://y",
                    "enableHTTPS": True,
                    "tlsConfig": {
                        "certFile": str(pki / "client.pem"),
                        "keyFile": str(pki / "bad-key.pem"),
                    },
                },
            ],
        }
    )
    with pytest.raises(ConfigError) as info:
        build_extenders(config)
    message = str(info.value)
    assert message.startswith("extenders[1].tlsConfig: Invalid value: cannot load the TLS ")
    assert "c2VjcmV0" not in message
