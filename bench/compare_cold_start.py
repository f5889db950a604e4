"""Cold start of this tree against another clawcell source tree, measured alternately.

A script, not a test, and not part of `make bench` (it needs a second tree): prints a table
and writes `bench/results/cold_start_comparison.{json,md}`. For example, against 0.1:

    git worktree add /tmp/v01 5a44a76
    .venv/bin/python bench/compare_cold_start.py --baseline /tmp/v01/src

Each round starts one process per tree, in a shuffled order, running the cold-start cell of
`bench_runtime.py` (import clawcell, open a `CodeMode`, run `return 1`). Wall time on a shared
machine drifts by a fifth within minutes, so the table also gives what does not depend on
the machine's speed: the child's page faults (`getrusage`) and, with `--instructions` and
valgrind installed, the instructions it executes (`callgrind`, one run per tree after a
warm-up that fills the module cache for valgrind's CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _ab import prepare, shuffled_rounds
from bench_runtime import COLD_START

RESULTS = Path(__file__).resolve().parent / "results"
HERE_SOURCE = Path(__file__).resolve().parents[1] / "src"


def _environment(source: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(source)}


def _one(source: Path) -> tuple[float, float, int]:
    """Wall ms, CPU ms and minor page faults of one cold start from `source`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", COLD_START],
        check=True,
        capture_output=True,
        cwd=tempfile.gettempdir(),
        env=_environment(source),
    )
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
    return wall, cpu, after.ru_minflt - before.ru_minflt


def _instructions(source: Path) -> int | None:
    """Instructions of one cold start under callgrind, or `None` without valgrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    with tempfile.TemporaryDirectory() as scratch:
        command = [valgrind, "--tool=callgrind", f"--callgrind-out-file={scratch}/out"]
        command += [sys.executable, "-c", COLD_START]
        # The first run may compile the module for valgrind's CPU; the second one counts.
        # No check: the count is read from what callgrind printed.
        runs = [
            subprocess.run(
                command, check=False, capture_output=True, text=True, env=_environment(source)
            )
            for _ in range(2)
        ]
    counts = [line for line in runs[-1].stderr.splitlines() if "Collected :" in line]
    return int(counts[-1].rsplit(":", 1)[1].strip()) if counts else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, required=True, help="another tree's src/")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--instructions", action="store_true", help="also count with callgrind")
    args = parser.parse_args()
    loads = [round(os.getloadavg()[0], 2)]
    trees = {"this tree": HERE_SOURCE, "baseline": args.baseline.resolve()}
    prepare(trees, _one)
    samples = shuffled_rounds(trees, args.rounds, _one)
    loads.append(round(os.getloadavg()[0], 2))
    counts = {n: _instructions(s) if args.instructions else None for n, s in trees.items()}
    rows = [_row(name, samples[name], counts[name]) for name in trees]
    _ratios(rows, samples)
    _write(rows, args, loads)


def _row(name: str, values: list[tuple[float, float, int]], count: int | None) -> dict[str, Any]:
    return {
        "tree": name,
        "wall_median_ms": round(statistics.median(v[0] for v in values), 1),
        "wall_min_ms": round(min(v[0] for v in values), 1),
        "cpu_median_ms": round(statistics.median(v[1] for v in values), 1),
        "page_faults": int(statistics.median(v[2] for v in values)),
        "instructions": count,
    }


def _ratios(rows: list[dict[str, Any]], samples: dict[str, list[tuple[float, float, int]]]) -> None:
    mine, base = rows
    pairs = list(zip(samples["this tree"], samples["baseline"], strict=True))
    ratio: dict[str, Any] = {
        "tree": "ratio",
        "paired_wall_median": round(statistics.median(a[0] / b[0] for a, b in pairs), 3),
        # (the CPU is the figure to read on a loaded machine: the wall is the scheduler's)
        "paired_cpu_median": round(statistics.median(a[1] / b[1] for a, b in pairs), 3),
    }
    for key in ("wall_median_ms", "wall_min_ms", "cpu_median_ms", "page_faults", "instructions"):
        if mine[key] and base[key]:
            ratio[key] = round(mine[key] / base[key], 3)
    rows.append(ratio)


def _write(rows: list[dict[str, Any]], args: argparse.Namespace, loads: list[float]) -> None:
    keys = ["wall_median_ms", "wall_min_ms", "cpu_median_ms", "page_faults", "instructions"]
    lines = [
        "| tree | wall, median (ms) | wall, min (ms) | CPU, median (ms) | page faults "
        "| instructions |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        cells = ["" if row.get(k) is None else f"{row[k]:,}" for k in keys]
        lines.append(f"| {row['tree']} | " + " | ".join(cells) + " |")
    wall, cpu = rows[-1]["paired_wall_median"], rows[-1]["paired_cpu_median"]
    table = "\n".join(lines) + (
        f"\n\nPaired ratios per round, medians: wall {wall}, CPU {cpu}"
        f" (load average {loads[0]} → {loads[1]})\n"
    )
    meta = {
        "baseline": str(args.baseline),
        "rounds": args.rounds,
        "date": time.strftime("%F %R"),
        "load_average": loads,
    }
    RESULTS.mkdir(exist_ok=True)
    payload = {"meta": meta, "rows": rows}
    (RESULTS / "cold_start_comparison.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / "cold_start_comparison.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
