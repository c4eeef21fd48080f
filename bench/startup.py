"""Start-up: what importing schedframe and building the default framework cost, in fresh processes.

Each run is a new interpreter (bytecode cached, as after an install), timed step by step with
``time.perf_counter``:

``import schedframe``
    the package alone (its names load on first use).
``import config, runtime``
    ``from schedframe.config import load_config`` and ``from schedframe.runtime import
    Framework, Registry``: the imports of a program that builds a framework.
``import objects``
    ``from schedframe.objects import Node, Pod``: the object model such a program builds its
    pods and nodes with (the plugins' modules import it, so a program that has not imported it
    yet pays for it in its first build instead).
``first build``
    ``Framework.from_profile(load_config(None).profiles[0], Registry.discover())``: the plugin
    discovery, the default configuration, the enabled plugins' modules (imported when a profile
    first enables them) and the framework itself.
``build again``
    the same call once more in the process.

A second kind of run, ``first build, objects not imported``, leaves out ``import objects``, so
its first build imports the object model too. The steps are reported as the median and the
best over ``--runs`` processes; wall time on a shared machine drifts, so compare medians of
many runs, or count instructions (``valgrind --tool=callgrind``) for small differences.

Usage::

    python bench/startup.py                    # 15 runs of each kind
    python bench/startup.py --runs 31 --json startup.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

DEFAULT_RUNS = 15

#: The probe each fresh process runs; ``OBJECTS`` says whether it imports the object model
#: before building. It prints one JSON object of step -> milliseconds.
PROBE = """
import time
T = time.perf_counter
steps = {}
t = T(); import schedframe; steps["import schedframe"] = T() - t
t = T()
from schedframe.config import load_config
from schedframe.runtime import Framework, Registry
steps["import config, runtime"] = T() - t
if OBJECTS:
    t = T(); from schedframe.objects import Node, Pod; steps["import objects"] = T() - t
t = T()
Framework.from_profile(load_config(None).profiles[0], Registry.discover())
steps["first build" if OBJECTS else "first build, objects not imported"] = T() - t
t = T()
Framework.from_profile(load_config(None).profiles[0], Registry.discover())
steps["build again"] = T() - t
import json
print(json.dumps({k: v * 1e3 for k, v in steps.items()}))
"""

KINDS = {"objects imported": True, "objects not imported": False}


def probe(objects: bool) -> dict[str, float]:
    """One fresh interpreter's step timings (ms)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure as installed: bytecode cached
    code = PROBE.replace("OBJECTS", repr(objects))
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"start-up probe failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def measure(runs: int) -> dict[str, dict[str, float]]:
    """Step -> median and best (ms) over ``runs`` processes of each kind, interleaved."""
    for objects in KINDS.values():
        probe(objects)  # writes the bytecode caches, so no run pays for compiling
    samples: dict[str, list[float]] = {}
    for _ in range(runs):
        for objects in KINDS.values():
            steps = probe(objects)
            total = sum(v for k, v in steps.items() if k != "build again")
            if objects:
                steps["import to first build"] = total
            else:  # its import steps are the other kind's; only its build differs
                build = "first build, objects not imported"
                steps = {build: steps[build], "import to first build, objects not imported": total}
            for step, ms in steps.items():
                samples.setdefault(step, []).append(ms)
    return {
        step: {"median_ms": statistics.median(values), "best_ms": min(values), "runs": len(values)}
        for step, values in samples.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="processes of each kind")
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    results = measure(args.runs)
    print(f"\nschedframe start-up: {args.runs} fresh process(es) of each kind")
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs\n")
    width = max(len(step) for step in results)
    print(f"{'step':<{width}}  {'median ms':>9}  {'best ms':>7}")
    for step, figures in results.items():
        print(f"{step:<{width}}  {figures['median_ms']:9.1f}  {figures['best_ms']:7.1f}")
    if args.json:
        from run import run_meta  # this script's directory is on sys.path

        doc: dict[str, Any] = {
            "meta": run_meta("bench/startup.py", runs=args.runs),
            "steps": results,
        }
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
