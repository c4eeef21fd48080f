"""The schedframe command: output, exit codes and one-line errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from schedframe.cli import EXIT_BAD_INPUT, EXIT_INTERNAL, main
from schedframe.cli._render import ProgressDisplay
from schedframe.config import load_config
from schedframe.errors import ConfigError
from schedframe.simulation import Progress

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {topology.kubernetes.io/zone: b}}
spec: {taints: [{key: dedicated, value: infra, effect: NoSchedule}]}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
"""

WORKLOAD = """\
kind: Workload
pods:
  - name: web
    count: 3
    template:
      spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
"""

CONFIG_HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "workload.yaml").write_text(WORKLOAD)
    return {"cluster": str(tmp_path / "cluster.yaml"), "workload": str(tmp_path / "workload.yaml")}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_simulate_prints_the_summary_and_writes_decisions(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], tmp_path: Path
) -> None:
    out_file = tmp_path / "d.jsonl"
    code, out, err = run(
        capsys,
        "simulate",
        "-c",
        files["cluster"],
        "-w",
        files["workload"],
        "--decisions",
        str(out_file),
    )
    assert code == 0, err
    assert out.startswith("Simulated 3 pods on 2 nodes")
    assert "unschedulable      1" in out
    assert "Insufficient cpu" in out
    assert f"Decisions: {out_file} (3 lines)" in out
    events = [json.loads(line)["event"] for line in out_file.read_text().splitlines()]
    assert events == ["scheduled", "scheduled", "unschedulable"]


def test_simulate_explains_a_pods_first_attempt(
    capsys: pytest.CaptureFixture[str], files: dict[str, str]
) -> None:
    code, out, _ = run(
        capsys, "simulate", "-c", files["cluster"], "-w", files["workload"], "--explain", "web-2"
    )
    assert code == 0
    tail = out.split("First attempt of default/web-2 at t=0s, as the cluster stood then:\n")[1]
    assert tail.startswith("Pod default/web-2 (profile default-scheduler): stays pending.")
    assert (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)." in tail
    )


def test_simulate_json(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    code, out, _ = run(
        capsys, "simulate", "-c", files["cluster"], "-w", files["workload"], "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert (data["bound"], data["unschedulable"]) == (2, 1)


@pytest.mark.parametrize("command", ["simulate", "explain", "plugins"])
@pytest.mark.parametrize("output", ["json", "yaml"])
def test_every_result_command_prints_json_and_yaml_with_dash_o(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], command: str, output: str
) -> None:
    argv = {
        "simulate": ["simulate", "-c", files["cluster"], "-w", files["workload"]],
        "explain": ["explain", "web-0", "-c", files["cluster"], "-w", files["workload"]],
        "plugins": ["plugins", "--no-points"],
    }[command]
    wall = {"wallSeconds", "podsPerSecond", "attemptsPerSecond"}  # simulate's timings vary
    code, out, err = run(capsys, *argv, "-o", output)
    assert code == 0, err
    first = yaml.safe_load(out)
    code, out, _ = run(capsys, *argv, "--json")
    assert code == 0
    second = json.loads(out)
    if command == "simulate":
        first, second = ({k: v for k, v in d.items() if k not in wall} for d in (first, second))
    assert first == second  # the same document either way


def test_dash_o_table_is_the_text_and_json_contradicting_it_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], files: dict[str, str]
) -> None:
    argv = ["simulate", "-c", files["cluster"], "-w", files["workload"]]
    code, table, _ = run(capsys, *argv, "-o", "table")
    assert code == 0
    _, text, _ = run(capsys, *argv)
    assert table.splitlines()[1:] == text.splitlines()[1:]  # the first line has wall time
    assert table.startswith("Simulated 3 pods on 2 nodes")
    code, out, err = run(capsys, *argv, "-o", "yaml", "--json")
    assert code == EXIT_BAD_INPUT and out == ""
    assert "--json contradicts -o yaml" in err
    code, _, err = run(capsys, *argv, "-o", "decisions.jsonl")
    assert code == EXIT_BAD_INPUT
    assert "'decisions.jsonl' is not one of 'table', 'json', 'yaml'" in err


def test_a_configuration_on_stdin(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = CONFIG_HEAD + "profiles:\n  - schedulerName: from-stdin\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(config))
    code, out, err = run(capsys, "config", "-", "-o", "json")
    assert code == 0, err
    assert json.loads(out)["profiles"][0]["schedulerName"] == "from-stdin"
    monkeypatch.setattr(sys, "stdin", io.StringIO(CONFIG_HEAD + "parallelism: 0\n"))
    code, out, err = run(capsys, "simulate", "-c", files["cluster"], "-f", "-")
    assert code == EXIT_BAD_INPUT and out == ""
    assert err.startswith("error: <stdin>: parallelism: Invalid value: 0")


def test_python_dash_m_schedframe_is_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "schedframe", "--help"], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith("Usage: schedframe [OPTIONS] COMMAND [ARGS]...")


def test_explain_shows_verdicts_and_scores(
    capsys: pytest.CaptureFixture[str], files: dict[str, str]
) -> None:
    code, out, _ = run(capsys, "explain", "web-0", "-c", files["cluster"], "-w", files["workload"])
    assert code == 0
    assert out.startswith("Pod default/web-0 (profile default-scheduler): would be bound to n1;")
    assert "Every node was evaluated (no sampling)." in out
    assert (
        "n2    b     filtered      -     -  TaintToleration (UnschedulableAndUnresolvable): "
        "node(s) had untolerated taint(s)"
    ) in out
    assert "Scores (feasible nodes, best first; weighted = normalized x weight):" in out
    assert "total (chosen)" in out


def test_explain_json(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    code, out, _ = run(
        capsys,
        "explain",
        "default/web-0",
        "-c",
        files["cluster"],
        "-w",
        files["workload"],
        "--json",
    )
    assert code == 0
    assert json.loads(out)["chosen"] == "n1"


def test_explain_a_pod_file(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\n"
        "spec: {containers: [{name: c, resources: {requests: {cpu: '3'}}}]}\n"
    )
    code, out, _ = run(capsys, "explain", str(path), "-c", files["cluster"])
    assert code == 0
    assert "stays pending" in out
    assert "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)." in out


def test_an_unknown_pod_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], files: dict[str, str]
) -> None:
    code, out, err = run(capsys, "explain", "nope", "-c", files["cluster"])
    assert code == EXIT_BAD_INPUT and out == ""
    assert err.splitlines() == [
        'error: no pod "nope" in the cluster or workload '
        "(give [namespace/]name, or a Pod manifest file)"
    ]


def test_a_bad_config_is_one_line_naming_file_and_field(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(CONFIG_HEAD + "parallelism: 0\n")
    code, out, err = run(capsys, "simulate", "-c", files["cluster"], "-f", str(bad))
    assert code == EXIT_BAD_INPUT and out == ""
    assert err.splitlines() == [
        f"error: {bad}: parallelism: Invalid value: 0: should be an integer value greater than zero"
    ]


def test_an_unknown_plugin_is_one_line_naming_file_and_field(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], tmp_path: Path
) -> None:
    bad = tmp_path / "unknown.yaml"
    bad.write_text(
        CONFIG_HEAD + "profiles:\n  - plugins:\n      score:\n        enabled: [{name: Nope}]\n"
    )
    for argv in (["simulate", "-c", files["cluster"], "-f", str(bad)], ["config", str(bad)]):
        code, _, err = run(capsys, *argv)
        assert code == EXIT_BAD_INPUT
        (line,) = err.splitlines()
        assert line.startswith(
            f'error: {bad}: profiles[0].plugins.score.enabled[0].name: Not found: "Nope": '
            'no plugin named "Nope" is installed; available: '
        )


def test_a_bad_manifest_is_one_line_naming_file_and_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "cluster.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: lots}}\n"
    )
    code, _, err = run(capsys, "simulate", "-c", str(bad))
    assert code == EXIT_BAD_INPUT
    (line,) = err.splitlines()
    assert line.startswith(f'error: {bad}: status.allocatable.cpu: Invalid value: "lots": ')


def test_a_missing_file_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.yaml"
    code, _, err = run(capsys, "simulate", "-c", str(missing))
    assert code == EXIT_BAD_INPUT
    assert err.splitlines() == [f"error: {missing}: Not found: no such file or directory"]


def test_an_unwritable_output_fails_before_running(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], tmp_path: Path
) -> None:
    target = tmp_path / "missing-dir" / "d.jsonl"
    code, out, err = run(capsys, "simulate", "-c", files["cluster"], "--decisions", str(target))
    assert code == EXIT_BAD_INPUT and out == ""
    assert err.splitlines() == [f"error: {target}: cannot write: No such file or directory"]


def test_debug_shows_the_traceback_instead(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(CONFIG_HEAD + "parallelism: 0\n")
    for argv in (
        ["--debug", "simulate", "-c", files["cluster"], "-f", str(bad)],
        ["simulate", "--debug", "-c", files["cluster"], "-f", str(bad)],
    ):
        with pytest.raises(ConfigError):
            main(argv)


def test_an_internal_error_is_exit_1_with_a_hint(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import schedframe.simulation

    def broken(**kwargs: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(schedframe.simulation, "simulate", broken)
    code, _, err = run(capsys, "simulate", "-c", files["cluster"])
    assert code == EXIT_INTERNAL
    assert err.splitlines() == [
        "error: internal error: RuntimeError: bug (run with --debug for the traceback)"
    ]


def test_plot_without_matplotlib_fails_before_running(
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    import schedframe.simulation._plot as plot

    def missing() -> None:
        raise ImportError(plot.MATPLOTLIB_HINT)

    monkeypatch.setattr(plot, "require_matplotlib", missing)
    code, out, err = run(capsys, "simulate", "-c", files["cluster"], "--plot", str(tmp_path))
    assert code == EXIT_BAD_INPUT and out == ""
    assert err.splitlines() == [f"error: --plot: {plot.MATPLOTLIB_HINT}"]


def test_plot_writes_pngs(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    plots = tmp_path / "plots"
    code, out, _ = run(
        capsys, "simulate", "-c", files["cluster"], "-w", files["workload"], "--plot", str(plots)
    )
    assert code == 0
    assert sorted(p.name for p in plots.iterdir()) == [
        "scores-default-web-2.png",
        "utilisation.png",
    ]
    assert "Plots: " in out


def test_plugins_lists_names_distributions_versions_and_points(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "plugins")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["name", "distribution", "version", "extension", "points"]
    fit = next(line for line in lines if line.startswith("NodeResourcesFit "))
    assert fit.split(None, 3)[1:3] == ["schedframe-plugins", "0.1.0"]
    assert fit.endswith("preFilter, filter, preScore, score")
    code, out, _ = run(capsys, "plugins", "--json")
    entries = {e["name"]: e for e in json.loads(out)}
    assert entries["DefaultBinder"]["points"] == ["bind"]
    assert entries["PrioritySort"]["points"] == ["queueSort"]


def test_plugins_no_points_imports_no_plugin() -> None:
    script = (
        "import sys\n"
        "from schedframe.cli import main\n"
        "code = main(['plugins', '--no-points'])\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('schedframe_plugins.'))\n"
        "print('LOADED', loaded, code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert "NodeResourcesFit" in done.stdout
    assert "LOADED [] 0" in done.stdout


def test_config_prints_the_defaulted_configuration_with_plugin_args(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "binpack.yaml"
    path.write_text(
        CONFIG_HEAD + "profiles:\n  - pluginConfig:\n      - name: NodeResourcesFit\n"
        "        args: {scoringStrategy: {type: MostAllocated}}\n"
    )
    code, out, _ = run(capsys, "config", str(path))
    assert code == 0
    doc = yaml.safe_load(out)
    (profile,) = doc["profiles"]
    names = [pc["name"] for pc in profile["pluginConfig"]]
    assert names[0] == "NodeResourcesFit"  # given entries first, then the rest by name
    assert names[1:] == sorted(names[1:])
    fit = profile["pluginConfig"][0]["args"]
    assert fit["kind"] == "NodeResourcesFitArgs"
    assert fit["scoringStrategy"]["type"] == "MostAllocated"
    assert fit["scoringStrategy"]["resources"] == [
        {"name": "cpu", "weight": 1},
        {"name": "memory", "weight": 1},
    ]
    assert [p["name"] for p in profile["plugins"]["multiPoint"]["enabled"]][:2] == [
        "SchedulingGates",
        "PrioritySort",
    ]
    # What it prints is a configuration that loads again.
    again = tmp_path / "again.yaml"
    again.write_text(out)
    load_config(again)


def test_config_without_a_file_prints_kube_schedulers_defaults(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "config")
    assert code == 0
    doc = yaml.safe_load(out)
    names = [pc["name"] for pc in doc["profiles"][0]["pluginConfig"]]
    assert names == sorted(names) and "DefaultPreemption" in names


def test_rich_tables(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("rich")
    code, out, _ = run(capsys, "plugins", "--rich", "--no-points")
    assert code == 0
    assert "NodeResourcesFit" in out and "┃" in out


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for command in ("simulate", "explain", "plugins", "config"):
        assert command in out
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("schedframe, version ")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _progress(wall: float, *, done: bool = False) -> Progress:
    return Progress(
        time=12.0,
        arrived=5,
        total=10,
        bound=4,
        pending=1,
        attempts=6,
        wall_seconds=wall,
        done=done,
    )


def test_progress_stays_quiet_on_short_runs() -> None:
    stream = _Terminal()
    show = ProgressDisplay(stream, delay=1.0)
    show(_progress(0.5))
    show(_progress(0.6, done=True))
    assert stream.getvalue() == ""


def test_progress_redraws_one_line_on_a_terminal() -> None:
    stream = _Terminal()
    show = ProgressDisplay(stream, delay=1.0)
    show(_progress(1.5))
    show(_progress(2.0, done=True))
    text = stream.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n")
    assert "[###############...............] t=12.0s arrived 5/10, bound 4, pending 1" in text


def test_progress_prints_lines_elsewhere() -> None:
    stream = io.StringIO()
    show = ProgressDisplay(stream, delay=0.0, every=3600)
    show(_progress(1.0))
    show(_progress(2.0))  # too soon for another line
    show(_progress(3.0, done=True))
    assert len(stream.getvalue().splitlines()) == 2


def test_config_emulated_version_and_feature_gates_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "config", "--emulated-version", "1.34")
    assert code == 0
    names = [
        p["name"] for p in yaml.safe_load(out)["profiles"][0]["plugins"]["multiPoint"]["enabled"]
    ]
    assert "NodeDeclaredFeatures" not in names and "DynamicResources" in names
    code, out, _ = run(
        capsys,
        "config",
        "--emulated-version",
        "1.35",
        "--feature-gates",
        "NodeDeclaredFeatures=true",
    )
    assert code == 0
    doc = yaml.safe_load(out)
    assert doc["emulatedVersion"] == "1.35"
    assert doc["featureGates"] == {"NodeDeclaredFeatures": True}
    assert doc["profiles"][0]["plugins"]["multiPoint"]["enabled"][-1] == {
        "name": "NodeDeclaredFeatures"
    }


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--feature-gates", "Bogus=true"],
            "error: --feature-gates.Bogus: Invalid value: unrecognized feature gate: Bogus",
        ),
        (
            ["--feature-gates", "SchedulerQueueingHints=false"],
            "error: --feature-gates.SchedulerQueueingHints: Invalid value: cannot set feature "
            "gate SchedulerQueueingHints to false, feature is locked to true",
        ),
        (
            ["--emulated-version", "1.20"],
            'error: --emulated-version: Unsupported value: "1.20": supported values: "1.34", '
            '"1.35", "1.36"',
        ),
        (
            ["--feature-gates", "PodLevelResources"],
            'error: --feature-gates: Invalid value: "PodLevelResources": missing bool value for '
            "PodLevelResources",
        ),
    ],
)
def test_bad_gate_flags_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    code, _, err = run(capsys, "config", *flags)
    assert code == EXIT_BAD_INPUT
    assert err.strip() == message


def test_bad_gate_in_the_config_file_names_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "gates.yaml"
    path.write_text(CONFIG_HEAD + "featureGates: {Bogus: true}\n")
    code, _, err = run(capsys, "config", str(path))
    assert code == EXIT_BAD_INPUT
    assert err.strip() == (
        f"error: {path}: featureGates.Bogus: Invalid value: unrecognized feature gate: Bogus"
    )


def test_a_cluster_dump_on_stdin_reports_each_skipped_kind(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    dump = (
        "kind: List\nitems:\n"
        "- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"
        "- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: '2'}}}\n"
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(dump))
    code, out, err = run(capsys, "simulate", "-c", "-")
    assert code == 0, err
    assert out.startswith("Simulated 0 pods on 1 nodes")
    assert err.splitlines()[:1] == ["skipped 2 ConfigMap: not read by kube-scheduler"]


def test_explain_a_system_cluster_critical_pod_shows_its_preemption(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Regression: priorityClassName was ignored and the dry run found no victim.
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        'status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}\n---\n'
        "apiVersion: v1\nkind: Pod\nmetadata: {name: low, namespace: apps}\n"
        "spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: '2'}}}]}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: dns, namespace: kube-system}\n"
        "spec:\n  priorityClassName: system-cluster-critical\n"
        "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n"
    )
    code, out, err = run(capsys, "explain", "kube-system/dns", "-c", str(cluster))
    assert code == 0, err
    assert (
        "PostFilter (dry run, nothing evicted): Success; would nominate n1 and evict apps/low"
        in out
    )


def test_run_refuses_a_bad_gate_before_connecting(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(["run", "--feature-gates", "Bogus=true"])
    except SystemExit as exc:  # the run command exits itself
        code = int(exc.code or 0)
    _, err = capsys.readouterr()
    assert code == EXIT_BAD_INPUT
    assert "--feature-gates.Bogus: Invalid value: unrecognized feature gate: Bogus" in err
