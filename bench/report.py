"""A Markdown table of ``bench/run.py --json`` files, for docs/explanation/performance.md.

A real-mode row also gives its CPU ms/pod over the deterministic row's of the same file
(medians over medians): the target of issue 21 is 1.2x or less.

Usage::

    python bench/report.py bench/results/issue21-*.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def rows(doc: dict[str, Any]) -> list[str]:
    out = []
    for name, by_mode in doc["workloads"].items():
        det = by_mode.get("deterministic")
        for mode, r in by_mode.items():
            ratio = (
                f"{r['cpu_ms_per_pod'] / det['cpu_ms_per_pod']:.2f}×"
                if mode == "real" and det and det["cpu_ms_per_pod"]
                else "–"
            )
            lat = (
                f"{r['latency_ms_p50']:.0f} / {r['latency_ms_p99']:.0f}"
                if "latency_ms_p50" in r
                else "–"
            )
            out.append(
                f"| {name} | {mode} | {r['runs']} | {r['pods_per_s']:.0f} "
                f"({r['pods_per_s_min']:.0f}–{r['pods_per_s_max']:.0f}) | "
                f"{r['cpu_ms_per_pod']:.2f} ({r['cpu_ms_per_pod_min']:.2f}–"
                f"{r['cpu_ms_per_pod_max']:.2f}) | {ratio} | {r['first_binding_s']:.2f} | {lat} | "
                f"{r['peak_rss_mib']:.0f} | {min(r['bound_all_runs'])}/{r['measured_pods']} |"
            )
    return out


def main(argv: list[str]) -> int:
    print(
        "| workload | mode | runs | pods/s (min–max) | CPU ms/pod (min–max) | real / det. CPU "
        "| first binding s | latency p50 / p99 ms | peak RSS MiB | bound |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in argv:
        doc = json.loads(Path(path).read_text())
        for row in rows(doc):
            print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
