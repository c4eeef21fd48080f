"""The README's main job: simulate the basic scenario, spreading and then bin-packing.

Runs exactly what ``schedframe simulate`` runs (the command's own entry point, in-process)
on the in-memory backend in deterministic virtual time, and prints both summaries::

    python examples/demo.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from schedframe.cli import main

HERE = Path(__file__).resolve().parent / "basic"


def run() -> int:
    for title, config in (
        ("Spreading (LeastAllocated, kube-scheduler's default)", "spread.yaml"),
        ("Bin-packing (MostAllocated)", "binpack.yaml"),
    ):
        print(f"== {title} ==", flush=True)
        code = main(
            [
                "simulate",
                "--cluster",
                str(HERE / "cluster.yaml"),
                "--workload",
                str(HERE / "workload.yaml"),
                "--config",
                str(HERE / config),
                "--seed",
                "0",
            ]
        )
        if code != 0:
            return code
        print(flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run())
