"""Whole ``kubectl get ... -A -o yaml`` dumps: Lists and streams, stdin, and the kinds
skipped (counted per kind, never silently)."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

from schedframe.errors import ManifestError
from schedframe.objects import LoadReport, Node, Pod, Service, load_manifests, loads_manifests

DUMP = """\
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: x}, data: {k: v}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: x}}
- {apiVersion: v1, kind: Secret, metadata: {name: s}, data: {token: c2VjcmV0}}
- {apiVersion: v1, kind: Event, metadata: {name: e}}
- {apiVersion: monitoring.coreos.com/v1, kind: ServiceMonitor, metadata: {name: m}}
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- {apiVersion: v1, kind: Service, metadata: {name: web}, spec: {selector: {app: web}}}
- apiVersion: v1
  kind: Pod
  metadata: {name: running, labels: {app: web}}
  spec: {nodeName: n1, containers: [{name: c}]}
metadata: {resourceVersion: ""}
"""


def test_a_list_dump_keeps_what_the_scheduler_reads_and_counts_the_rest() -> None:
    report = LoadReport()
    objects = loads_manifests(DUMP, source="dump.yaml", report=report)
    assert [type(o) for o in objects] == [Node, Service, Pod]
    running = objects[2]
    assert isinstance(running, Pod) and running.spec.node_name == "n1"  # bound pods keep it
    assert report.skipped == {"ConfigMap": 2, "Secret": 1, "Event": 1, "ServiceMonitor": 1}
    assert report.not_modelled == {}
    assert report.lines() == [
        "skipped 2 ConfigMap: not read by kube-scheduler",
        "skipped 1 Event: not read by kube-scheduler",
        "skipped 1 Secret: not read by kube-scheduler",
        "skipped 1 ServiceMonitor: not read by kube-scheduler",
    ]


def test_without_a_report_each_skipped_kind_is_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = "kind: ConfigMap\nmetadata: {name: a}\n---\nkind: ConfigMap\nmetadata: {name: b}\n"
    with caplog.at_level(logging.WARNING, logger="schedframe.objects"):
        assert loads_manifests(text) == []
    assert [r.getMessage() for r in caplog.records] == [
        "skipped 2 ConfigMap: not read by kube-scheduler"
    ]


def test_an_unknown_builtin_kind_is_still_an_error() -> None:
    with pytest.raises(ManifestError, match=r'dump.yaml: kind: Unsupported value: "Podd"'):
        loads_manifests("apiVersion: v1\nkind: Podd\nmetadata: {name: p}\n", source="dump.yaml")


def test_a_bad_object_in_a_dump_names_its_item() -> None:
    text = "kind: List\nitems:\n- {kind: ConfigMap}\n- {kind: Pod, metadata: {name: p}, spec: {nodeName: 3}}\n"
    with pytest.raises(ManifestError, match=r"dump.yaml: items\[1\].spec.nodeName: Invalid value"):
        loads_manifests(text, source="dump.yaml")


def test_dash_reads_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(DUMP))
    report = LoadReport()
    assert len(load_manifests("-", report=report)) == 3
    assert report.skipped["ConfigMap"] == 2


def test_errors_from_standard_input_name_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("kind: Pod\nmetadata: {}\n"))
    with pytest.raises(ManifestError, match=r"<stdin>: metadata.name: Required value"):
        load_manifests("-")


def test_a_directory_shares_one_report(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("kind: Secret\nmetadata: {name: a}\n")
    (tmp_path / "b.yaml").write_text("kind: Secret\nmetadata: {name: b}\n")
    report = LoadReport()
    assert load_manifests(tmp_path, report=report) == []
    assert report.skipped == {"Secret": 2}


def test_a_kind_read_but_not_modelled_is_a_loud_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every kind kube-scheduler reads is modelled today (NOT_MODELLED_KINDS is empty); one that
    # is not is skipped with a warning line of its own, never silently.
    monkeypatch.setattr("schedframe.objects._report.NOT_MODELLED_KINDS", frozenset({"Lease"}))
    report = LoadReport()
    text = "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: l}\n"
    assert loads_manifests(text, report=report) == []
    assert report.not_modelled == {"Lease": 1}
    assert report.lines() == [
        "warning: skipped 1 Lease: read by kube-scheduler but NOT modelled by "
        "schedframe; pods that use them may be placed differently than in the cluster",
    ]
