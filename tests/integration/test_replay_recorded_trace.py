"""Acceptance (issue 26, replay): ``schedframe run --record-trace`` against the fake API
server, then ``schedframe replay`` of that trace, twice and under another configuration.

The workload is built so the answers are known without schedframe: five pairs of nodes, a
small one (2 cpu, 4Gi) and a big one (32 cpu, 64Gi), labelled with their pair. Every pod
asks for 250m and 512Mi, the nodes' own cpu:memory ratio, so BalancedAllocation scores every
node alike and NodeResourcesFit alone orders them. *Pinned* pods name their node; *pair*
pods may go to either node of their pair. Under MostAllocated (the live configuration) a
pair pod goes to the fuller node (the small one: >= 12 against <= 2 for the big one);
under LeastAllocated to the emptier one (the big one: >= 94 against <= 87). Pair 3's small
node is filled by pinned pods first, so its pair pods go to the big node under both.
Hence the pods whose decision changes are exactly the pair pods of pairs 0, 1, 2 and 4.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("kubernetes")
pytest.importorskip("aiohttp")

from schedframe.cli import main  # noqa: E402
from schedframe.testing.fakeapi import FakeAPIServer  # noqa: E402

pytestmark = pytest.mark.integration

WAIT = 60.0
SCHEDULER = "schedframe"
PAIRS = 5


def _config(path: Path, strategy: str) -> Path:
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "leaderElection:\n"
        "  leaderElect: false\n"
        "profiles:\n"
        f"  - schedulerName: {SCHEDULER}\n"
        "    pluginConfig:\n"
        "      - name: NodeResourcesFit\n"
        "        args:\n"
        "          scoringStrategy:\n"
        f"            type: {strategy}\n"
    )
    return path


def _node(name: str, pair: int, cpu: int) -> dict[str, object]:
    capacity = {"cpu": str(cpu), "memory": f"{2 * cpu}Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "pair": str(pair)},
        },
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def _pod(name: str, selector: dict[str, str]) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "replay"}},
        "spec": {
            "schedulerName": SCHEDULER,
            "nodeSelector": selector,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "250m", "memory": "512Mi"}},
                }
            ],
        },
    }


def _workload() -> list[tuple[str, dict[str, str]]]:
    """(pod name, nodeSelector) in creation order: 18 pinned pods, then 22 pair pods."""
    pods: list[tuple[str, dict[str, str]]] = []
    for k in range(PAIRS):
        for i in range(2):
            pods.append((f"pin-b{k}-{i}", {"kubernetes.io/hostname": f"big-{k}"}))
    for i in range(8):  # 8 x 250m: pair 3's small node is full
        pods.append((f"pin-s3-{i}", {"kubernetes.io/hostname": "small-3"}))
    for i in range(5):
        for k in range(PAIRS):
            if k != 3 or i < 2:
                pods.append((f"pair{k}-{i}", {"pair": str(k)}))
    return pods


#: The pods the second configuration moves, by design (see the module doc).
CHANGED = {f"default/pair{k}-{i}" for k in (0, 1, 2, 4) for i in range(5)}
#: Deleted along the way (after all pods are bound): pinned and pair pods.
DELETED = ["pin-b0-0", "pair0-0", "pair3-1", "pin-s3-0"]


@pytest.fixture
def fake() -> Iterator[FakeAPIServer]:
    with FakeAPIServer(bookmark_interval=0.5) as server:
        for k in range(PAIRS):
            server.create(_node(f"small-{k}", k, 2))
            server.create(_node(f"big-{k}", k, 32))
        yield server


def _wait(predicate: object, what: str) -> None:
    assert callable(predicate)
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def _lines(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()[: text.count("\n")] if line]


def _record(fake: FakeAPIServer, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Run ``schedframe run --record-trace`` as a process; create the pods one at a time
    (each bound before the next), delete a few, stop it with SIGTERM."""
    kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
    trace = tmp_path / "trace.jsonl"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    log = (tmp_path / "run.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "schedframe.cli",
            "run",
            "--kubeconfig",
            str(kubeconfig),
            "--config",
            str(_config(tmp_path / "most.yaml", "MostAllocated")),
            "--port",
            "0",
            "--record-trace",
            str(trace),
            "-v",
            "0",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,  # a file: a pipe nobody reads could fill up and block the process
        env=env,
    )
    try:
        _wait(lambda: len(_lines(trace)) >= 1 + 2 * PAIRS, "the trace's initial nodes")
        for name, selector in _workload():
            fake.create(_pod(name, selector))
            _wait(
                lambda name=name: (fake.get("Pod", name) or {}).get("spec", {}).get("nodeName"),
                f"{name} to be bound",
            )
        bound = {f"{b.namespace}/{b.name}": b.node for b in fake.bindings}
        for name in DELETED:
            fake.delete("Pod", name)
            _wait(lambda name=name: fake.get("Pod", name) is None, f"{name} to be gone")
        _wait(
            lambda: sum(1 for e in _lines(trace) if e.get("type") == "DELETED") == len(DELETED),
            "the deletions in the trace",
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=WAIT)
        log.close()
    assert proc.returncode == 0, (tmp_path / "run.log").read_text()
    return trace, bound


def _replay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["replay", *args])
    return code, capsys.readouterr().out


def test_a_recorded_trace_replays_identically_and_reports_what_another_config_changes(
    fake: FakeAPIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace, bound = _record(fake, tmp_path)
    assert len(bound) == 40
    # The live run placed the pods as designed (the premise of the expected set).
    for key, node in bound.items():
        name = key.split("/", 1)[1]
        if name.startswith("pair"):
            k = int(name[4])
            assert node == (f"big-{k}" if k == 3 else f"small-{k}"), key
    lines = _lines(trace)
    assert lines[0] == {"kind": "SchedframeTrace", "version": 1, "source": "kubernetes"}
    assert {e["kind"] for e in lines[1:]} == {"Namespace", "Node", "Pod"}

    most = str(tmp_path / "most.yaml")
    code, first = _replay(capsys, str(trace), "--config", most, "-o", "json")
    assert code == 0
    code, second = _replay(capsys, str(trace), "--config", most, "-o", "json", "--seed", "0")
    assert code == 0
    assert first == second  # byte-identical
    same = json.loads(first)
    assert same["summary"]["decisions"] == 40
    assert same["summary"]["diverged"] == 0
    assert same["divergences"] == []
    # The replayed scheduler bound every pod where the live one did.
    replayed = {
        pod: [e["node"] for e in events if e["event"] == "bound"]
        for pod, events in same["replay"]["timelines"].items()
    }
    assert {pod: nodes[-1] for pod, nodes in replayed.items() if nodes} == bound

    least = str(_config(tmp_path / "least.yaml", "LeastAllocated"))
    code, out = _replay(capsys, str(trace), "--config", least, "-o", "json")
    assert code == 0
    other = json.loads(out)
    assert {d["pod"] for d in other["divergences"]} == CHANGED
    for d in other["divergences"]:
        k = d["pod"].split("/", 1)[1][4]
        assert (d["kind"], d["recordedNode"], d["replayedNode"]) == (
            "node",
            f"small-{k}",
            f"big-{k}",
        )
    assert other["summary"] == {
        "events": len(lines) - 1,
        "decisions": 40,
        "matched": 40 - len(CHANGED),
        "diverged": len(CHANGED),
        "seed": 0,
    }
    code, again = _replay(capsys, str(trace), "--config", least, "-o", "json")
    assert again == out


def test_the_testing_kits_recorder_sees_the_fake_cluster_as_the_backend_does(
    fake: FakeAPIServer, tmp_path: Path
) -> None:
    from schedframe.simulation import load_trace, replay
    from schedframe.testing.trace import recording_fake_cluster

    path = tmp_path / "kit.jsonl"
    with recording_fake_cluster(fake, path) as recorder:
        # Another scheduler's work, done by hand: pin-b0-0 to big-0, pair0-0 to big-0 too.
        for name, selector in _workload()[:1] + [("pair0-0", {"pair": "0"})]:
            fake.create(_pod(name, selector))
            fake.cluster.bind(
                "default",
                name,
                {"metadata": {"name": name}, "target": {"kind": "Node", "name": "big-0"}},
            )
        fake.delete("Pod", "pin-b0-0")
    assert recorder.stopped == ""
    trace = load_trace(path)
    assert trace.source == "kubernetes"
    assert [(e.type, getattr(e.obj, "name", "")) for e in trace.live] == [
        ("ADDED", "pin-b0-0"),
        ("MODIFIED", "pin-b0-0"),
        ("ADDED", "pair0-0"),
        ("MODIFIED", "pair0-0"),
        ("DELETED", "pin-b0-0"),
    ]
    result = replay(trace, str(_config(tmp_path / "most.yaml", "MostAllocated")))
    # MostAllocated puts pair0-0 on the small node of its pair, not where it was bound.
    assert [d.to_dict() for d in result.divergences] == [
        {
            "pod": "default/pair0-0",
            "kind": "node",
            "recordedNode": "big-0",
            "replayedNode": "small-0",
        }
    ]
    assert result.decisions == 2
