"""Acceptance: scrape ``/metrics`` of a running ``schedframe run`` against the fake API server
and read it with prometheus_client's parser."""

from __future__ import annotations

import json
import threading
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("kubernetes")
pytest.importorskip("aiohttp")
pytest.importorskip("prometheus_client")

from schedframe.backends.kubernetes._cli import run  # noqa: E402
from schedframe.testing.fakeapi import FakeAPIServer  # noqa: E402

from .test_kubernetes_backend import TOKEN, node, pod, wait_for  # noqa: E402
from .test_metrics import check_upstream_shape  # noqa: E402

pytestmark = pytest.mark.integration


def test_schedframe_run_serves_upstream_families(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCHEDFRAME_DISABLE_HOOK_AUTOLOAD", "1")
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    config = tmp_path / "config.yaml"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "leaderElection": {"leaderElect": False},
                "profiles": [{"schedulerName": "schedframe"}],
            }
        )
    )
    with FakeAPIServer(token=TOKEN) as fake:
        fake.create(node("n0"))
        for i in range(3):
            fake.create(pod(f"p{i}", scheduler="schedframe"))
        fake.create(pod("huge", scheduler="schedframe", cpu="64"))
        kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
        stop = threading.Event()
        port: list[int] = []
        errors: list[BaseException] = []

        def serve() -> None:
            try:
                run(
                    kubeconfig=str(kubeconfig),
                    config_file=str(config),
                    port=0,
                    stop=stop,
                    on_serving=port.append,
                )
            except BaseException as exc:  # reported by the test thread
                errors.append(exc)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        try:
            assert wait_for(lambda: bool(port) or bool(errors), 30), errors
            assert not errors, errors
            assert wait_for(lambda: len(fake.bindings) == 3, 30)
            url = f"http://127.0.0.1:{port[0]}/metrics"

            def scrape() -> str:
                with urllib.request.urlopen(url, timeout=5) as response:
                    return str(response.read().decode())

            assert wait_for(lambda: 'result="unschedulable"' in scrape(), 30)
            text = scrape()
        finally:
            stop.set()
            thread.join(30)
    assert not errors, errors
    samples = check_upstream_shape(text)
    # Plugin evaluations, and extension points with their status, failed cycles included.
    evaluations = samples["scheduler_plugin_evaluation"]
    fit = (("extension_point", "Filter"), ("plugin", "NodeResourcesFit"), ("profile", "schedframe"))
    assert evaluations[("scheduler_plugin_evaluation_total", fit)] >= 4.0
    points = samples["scheduler_framework_extension_point_duration_seconds"]
    rejected = (("extension_point", "PostFilter"), ("profile", "schedframe"))
    key = ("scheduler_framework_extension_point_duration_seconds_count", rejected)
    assert points[(key[0], (*key[1], ("status", "Unschedulable")))] >= 1.0
    attempts = samples["scheduler_schedule_attempts"]
    assert (
        attempts[
            (
                "scheduler_schedule_attempts_total",
                (("profile", "schedframe"), ("result", "scheduled")),
            )
        ]
        == 3.0
    )
    assert 'scheduler_schedule_attempts_total{profile="schedframe",result="scheduled"} 3\n' in text
    # The backend's own families are still there, beside upstream's.
    assert "schedframe_reflector_watch_events_total" in text
