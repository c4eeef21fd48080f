"""``schedframe run`` as a click command, the health server and the metrics text."""

from __future__ import annotations

import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from schedframe.backends.kubernetes import ApiTransport, LeaderElectionLost, LeaderElector
from schedframe.backends.kubernetes._cli import run, run_command
from schedframe.backends.kubernetes._metrics import HealthServer, Metrics, MetricsObserver
from schedframe.objects import pod_from_dict
from schedframe.testing.fakeapi import FakeAPIServer

from ._support import node, pod


def test_help_names_the_options() -> None:
    result = CliRunner().invoke(run_command, ["--help"])
    assert result.exit_code == 0
    for option in ("--kubeconfig", "--config", "--bind-address", "--port", "--leader-elect"):
        assert option in result.output
    assert "127.0.0.1" in result.output


def test_bad_config_is_exit_code_2(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 0\n"
    )
    result = CliRunner().invoke(run_command, ["--config", str(config), "--port", "0"])
    assert result.exit_code == 2
    assert "parallelism" in result.output


def test_unreachable_cluster_is_a_clean_error(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(
        '{"apiVersion":"v1","kind":"Config","clusters":[{"name":"c","cluster":{"server":"http://127.0.0.1:9"}}],'
        '"users":[{"name":"u","user":{"token":"sekrit"}}],'
        '"contexts":[{"name":"c","context":{"cluster":"c","user":"u"}}],"current-context":"c"}'
    )
    result = CliRunner().invoke(
        run_command,
        [
            "--kubeconfig",
            str(kubeconfig),
            "--port",
            "0",
            "--sync-timeout",
            "1",
            "--no-leader-elect",
        ],
    )
    assert result.exit_code == 1
    assert "cannot list Namespace objects from http://127.0.0.1:9" in result.output
    assert "sekrit" not in result.output


def test_metrics_text_format() -> None:
    metrics = Metrics()
    observer = MetricsObserver(metrics)
    p = pod_from_dict(pod("p"))
    observer.schedframe_cycle_finished(pod=p, profile="a", result="scheduled", durations={})
    observer.schedframe_cycle_finished(pod=p, profile="a", result="scheduled", durations={})
    observer.schedframe_cycle_finished(pod=p, profile="a", result="unschedulable", durations={})
    metrics.describe("scheduler_pending_pods", "gauge", "Pending pods.")
    metrics.add_collector(lambda: [("scheduler_pending_pods", {"queue": "active"}, 3.0)])
    text = metrics.render()
    assert "# TYPE scheduler_schedule_attempts_total counter" in text
    assert 'scheduler_schedule_attempts_total{profile="a",result="scheduled"} 2' in text
    assert 'scheduler_schedule_attempts_total{profile="a",result="unschedulable"} 1' in text
    assert (
        '# HELP scheduler_pending_pods Pending pods.\n# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue="active"} 3'
        in text
    )
    assert (
        metrics.value("scheduler_schedule_attempts_total", {"result": "scheduled", "profile": "a"})
        == 2
    )


def test_health_server_binds_loopback_and_reports_checks() -> None:
    healthy = [True]
    server = HealthServer(Metrics(), port=0, checks={"informers": lambda: healthy[0]})
    server.start()
    try:
        assert server.address == "127.0.0.1"
        base = f"http://127.0.0.1:{server.port}"
        with urllib.request.urlopen(base + "/healthz", timeout=5) as response:
            assert response.read() == b"ok"
        healthy[0] = False
        try:
            urllib.request.urlopen(base + "/healthz", timeout=5)
        except urllib.error.HTTPError as exc:
            assert exc.code == 500
            assert b"[-]informers failed" in exc.read()
            exc.close()
        else:
            raise AssertionError("expected a 500")
        with urllib.request.urlopen(base + "/metrics", timeout=5) as response:
            assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    finally:
        server.stop()
        server.stop()


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "leaderElection:\n"
        "  leaderElect: true\n"
        "  resourceName: schedframe\n"
        "  leaseDuration: 1s\n"
        "  renewDeadline: 0.5s\n"
        "  retryPeriod: 0.1s\n"
        "profiles:\n"
        "  - schedulerName: schedframe\n"
    )
    return path


def _run_in_thread(**kwargs: Any) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def target() -> None:
        try:
            run(**kwargs)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    return thread, errors


def test_a_standby_replica_stops_cleanly(
    fake: FakeAPIServer, kubeconfig: Path, tmp_path: Path
) -> None:
    transport = ApiTransport.from_kubeconfig(kubeconfig)
    holder = LeaderElector(
        transport, name="schedframe", identity="other", lease_duration=60, renew_deadline=50
    )
    assert holder.try_acquire_or_renew()
    fake.create(pod("p", scheduler="schedframe"))
    fake.create(node("n"))
    stop = threading.Event()
    thread, errors = _run_in_thread(
        kubeconfig=str(kubeconfig), config_file=str(_config(tmp_path)), port=0, stop=stop
    )
    time.sleep(1.0)
    assert fake.bindings == []  # not the leader: not scheduling
    stop.set()
    thread.join(10)
    assert not thread.is_alive() and errors == []
    transport.close()


def test_losing_the_lease_stops_scheduling_and_raises(
    fake: FakeAPIServer, kubeconfig: Path, tmp_path: Path
) -> None:
    fake.create(node("n"))
    stop = threading.Event()
    thread, errors = _run_in_thread(
        kubeconfig=str(kubeconfig), config_file=str(_config(tmp_path)), port=0, stop=stop
    )
    try:
        deadline = time.monotonic() + 10
        while (
            fake.get("Lease", "schedframe", "kube-system") is None and time.monotonic() < deadline
        ):
            time.sleep(0.02)
        fake.fail_requests(503, path="/leases", times=100_000)
        thread.join(10)
        assert not thread.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], LeaderElectionLost)
    finally:
        stop.set()
        thread.join(10)
        fake.clear_failures()


def test_bad_plugin_args_are_found_before_anything_starts(
    fake: FakeAPIServer, kubeconfig: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "  - schedulerName: default-scheduler\n"
        "    pluginConfig:\n"
        "      - name: NodeResourcesFit\n"
        "        args:\n"
        "          scoringStrategy:\n"
        "            type: Bogus\n"
    )
    # The port is taken: had the server started first, that would be the error.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            run_command,
            ["--kubeconfig", str(kubeconfig), "--config", str(config), "--port", str(port)],
        )
    assert result.exit_code == 2, result.output
    assert "scoringStrategy.type" in result.output
    assert "Traceback" not in result.output
    assert list(fake.requests) == []  # nothing listed, no Lease taken
