"""A bad kubeconfig is one clear line naming the file and the field, exit 2, never a
traceback and never a credential; TLS verification skipped is one warning per run."""

from __future__ import annotations

import copy
import json
import logging
import os
import random
import warnings
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml
from click.testing import CliRunner

from schedframe.backends.kubernetes import ApiTransport
from schedframe.backends.kubernetes._cli import run_command
from schedframe.errors import BackendError

TOKEN = "SUPER-SECRET-TOKEN-0123"
PASSWORD = "hunter2-password"
KEY_DATA = "c2VjcmV0LWtleS1kYXRh"
SECRETS = (TOKEN, PASSWORD, KEY_DATA)
#: Inputs of the kubeconfig fuzz; ``SCHEDFRAME_FUZZ_EXAMPLES=400`` for the full budget.
FUZZ_EXAMPLES = int(os.environ.get("SCHEDFRAME_FUZZ_EXAMPLES", "100"))


def base() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "c",
                "cluster": {"server": "http://127.0.0.1:9", "insecure-skip-tls-verify": False},
            }
        ],
        "users": [
            {"name": "u", "user": {"token": TOKEN}},
            {"name": "p", "user": {"username": "admin", "password": PASSWORD}},
            {
                "name": "k",
                "user": {"client-key-data": KEY_DATA, "client-certificate-data": "Y2VydA=="},
            },
        ],
        "contexts": [
            {"name": "c", "context": {"cluster": "c", "user": "u"}},
            {"name": "pc", "context": {"cluster": "c", "user": "p"}},
        ],
        "current-context": "c",
    }


def load(path: Path) -> BackendError | None:
    try:
        transport = ApiTransport.from_kubeconfig(path, qps=0)
    except BackendError as exc:
        return exc
    transport.close()
    return None


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("garbage: [\n", "not valid YAML (line 2, column 1)"),
        ("- a\n- b\n", "must be a mapping (a kind: Config document)"),
        ("clusters: 5\n", "clusters: must be a list"),
        ("clusters: [5]\n", "clusters[0]: must be a mapping"),
        ("clusters: [{cluster: {}}]\n", "clusters[0].name: must be a non-empty string"),
        ("clusters: [{name: c}]\n", "clusters[0].cluster: Required value"),
        ("kind: Config\n", "current-context: Required value (or pass --context)"),
        ("current-context: x\n", 'context "x" is not defined in contexts'),
        ("9" * 5000 + "\n", "not valid YAML (a value cannot be converted)"),
        ("when: 2001-13-45\n", "not valid YAML (a value cannot be converted)"),
    ],
)
def test_structure_errors_name_the_field(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    error = load(path)
    assert error is not None
    assert str(error) == f"cannot load kubeconfig {path}: {expected}"
    assert error.reason == "InvalidConfiguration"


def test_server_that_is_not_a_url(tmp_path: Path) -> None:
    doc = base()
    doc["clusters"][0]["cluster"]["server"] = 5
    path = write(tmp_path, yaml.safe_dump(doc))
    assert str(load(path)) == (
        f"cannot load kubeconfig {path}: clusters[0].cluster.server: must be an http:// or "
        "https:// URL"
    )


def test_a_typo_in_the_user_section_never_echoes_the_token(tmp_path: Path) -> None:
    doc = base()
    doc["users"][0] = {"name": "u", "usr": {"token": TOKEN}}
    path = write(tmp_path, yaml.safe_dump(doc))
    error = load(path)
    assert str(error) == f"cannot load kubeconfig {path}: users[0].user: Required value"
    assert TOKEN not in str(error)


def test_a_file_that_cannot_be_read_is_named_by_its_field_only(tmp_path: Path) -> None:
    # The file's name can be a secret too: only the field and the kind of failure are shown.
    doc = base()
    doc["users"][0]["user"] = {"tokenFile": str(tmp_path / TOKEN)}
    path = write(tmp_path, yaml.safe_dump(doc))
    error = load(path)
    assert error is not None
    assert str(error) == (
        f"cannot load kubeconfig {path}: users[0].user.tokenFile: cannot be read "
        "(FileNotFoundError)"
    )


def test_a_client_error_is_never_forwarded(tmp_path: Path) -> None:
    # A proxy-url goes through the kubernetes client. Whatever it says (its messages quote
    # kubeconfig sections, credentials included), only the kind of failure is shown.
    doc = base()
    doc["clusters"][0]["cluster"] = {
        "server": "https://127.0.0.1:6443",
        "proxy-url": "http://127.0.0.1:3128",
        "certificate-authority": str(tmp_path / TOKEN),
    }
    path = write(tmp_path, yaml.safe_dump(doc))
    error = load(path)
    assert error is not None
    assert str(error) == (
        f'cannot load kubeconfig {path}: the kubernetes client rejected context "c" '
        "(ConfigException); check its cluster and user entries"
    )


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("garbage: [\n", "not valid YAML"),
        (
            json.dumps({**base(), "users": [{"name": "u", "usr": {"token": TOKEN}}]}),
            "users[0].user",
        ),
    ],
)
def test_cli_exit_2_one_line_no_traceback_no_secret(
    tmp_path: Path, text: str, fragment: str
) -> None:
    path = write(tmp_path, text)
    result = CliRunner().invoke(run_command, ["--kubeconfig", str(path), "--port", "0"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [f"Error: cannot load kubeconfig {path}: " + lines[0].split(": ", 2)[2]]
    assert fragment in lines[0]
    assert "Traceback" not in result.output and TOKEN not in result.output
    assert not isinstance(result.exception, BaseException) or isinstance(
        result.exception, SystemExit
    )


def _mutate(rng: random.Random, doc: Any, depth: int = 0) -> Any:
    """One random change somewhere in ``doc`` (a deep copy is changed)."""
    if isinstance(doc, dict) and doc and rng.random() < 0.8:
        key = rng.choice(sorted(doc, key=str))
        action = rng.randrange(5)
        if action == 0:
            del doc[key]
        elif action == 1:  # a typo in the key
            value = doc.pop(key)
            doc[str(key)[:-1] or "x"] = value
        elif action == 2:
            doc[key] = rng.choice([5, None, [], {}, "", True, 3.5, ["x"], {"a": 1}])
        else:
            doc[key] = _mutate(rng, doc[key], depth + 1)
        return doc
    if isinstance(doc, list) and doc and rng.random() < 0.8:
        index = rng.randrange(len(doc))
        if rng.random() < 0.3:
            del doc[index]
        else:
            doc[index] = _mutate(rng, doc[index], depth + 1)
        return doc
    return rng.choice([5, None, [], {}, "", "x", True, [TOKEN], {"token": TOKEN}])


def _fuzz_text(rng: random.Random) -> str:
    doc = copy.deepcopy(base())
    if rng.random() < 0.5:
        doc["current-context"] = rng.choice(["c", "pc"])
    for _ in range(rng.randint(1, 3)):
        doc = _mutate(rng, doc)
    text = yaml.safe_dump(doc) if rng.random() < 0.7 else json.dumps(doc)
    if rng.random() < 0.2:  # damage the text itself
        cut = rng.randrange(len(text) + 1)
        text = text[:cut] + rng.choice(["", "[", "{", ": :", "\t", "'", "&a *a"]) + text[cut:]
    return text


def test_kubeconfig_fuzz_no_traceback_no_secret(tmp_path: Path) -> None:
    rng = random.Random(19)
    failures: list[str] = []
    loaded = 0
    for number in range(FUZZ_EXAMPLES):
        text = _fuzz_text(rng)
        path = write(tmp_path, text)
        try:
            error = load(path)
        except Exception as exc:  # a traceback at the CLI
            failures.append(f"#{number}: {type(exc).__name__}: {exc}\n{text}")
            continue
        if error is None:
            loaded += 1
            continue
        message = str(error)
        assert message.startswith(f"cannot load kubeconfig {path}: "), message
        assert "\n" not in message
        leaked = [s for s in SECRETS if s in message]
        if leaked:
            failures.append(f"#{number}: leaks {leaked}: {message}")
    assert failures == []
    assert 0 < loaded < FUZZ_EXAMPLES  # both kinds of input were exercised


def test_skipped_tls_verification_is_one_warning_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    doc = base()
    doc["clusters"][0]["cluster"] = {
        "server": "https://127.0.0.1:6443",
        "insecure-skip-tls-verify": True,
    }
    path = write(tmp_path, yaml.safe_dump(doc))
    with caplog.at_level(logging.WARNING, logger="schedframe.backends.kubernetes"):
        for _ in range(3):
            ApiTransport.from_kubeconfig(path, qps=0).close()
    warned = [r.getMessage() for r in caplog.records if "TLS verification" in r.getMessage()]
    assert warned == [
        "TLS verification of the API server https://127.0.0.1:6443 is disabled "
        "(insecure-skip-tls-verify): its identity is not checked"
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        ApiTransport.from_kubeconfig(path, qps=0).close()  # re-installs the filter
        warnings.warn("x", urllib3.exceptions.InsecureRequestWarning, stacklevel=1)
    assert not [
        w for w in caught if issubclass(w.category, urllib3.exceptions.InsecureRequestWarning)
    ]
