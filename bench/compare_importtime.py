"""`python -X importtime` of `import asyncio; import clawcell` for this tree and another one.

A script, not a test, and not part of `make bench` (it needs a second tree): prints a table
and writes `bench/results/importtime_comparison.{json,md}` (or `--stem`'s name). Each round
imports both trees in a new process each, in a shuffled order; the table gives the package's
module count, the sum of their self times (µs as `-X importtime` prints them) and `clawcell`'s
cumulative time (the package with the standard modules it brings in), medians and minimums,
and the paired ratio of the cumulative times per round. The times are wall times of a
process that imports under a profiler of its own: read them as proportions, and the
instruction counts of `compare_cold_start.py --instructions` as the figure.

    .venv/bin/python bench/compare_importtime.py --baseline /path/to/other/src
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _ab import prepare, shuffled_rounds

RESULTS = Path(__file__).resolve().parent / "results"
HERE_SOURCE = Path(__file__).resolve().parents[1] / "src"
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|\s*(\S+)")


def _one(source: Path) -> tuple[int, int, int]:
    """The package's modules, their summed self time and `clawcell`'s cumulative time (µs)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import asyncio; import clawcell"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        env={**os.environ, "PYTHONPATH": str(source)},
    )
    own: list[int] = []
    cumulative = 0
    for line in done.stderr.splitlines():
        found = _LINE.match(line)
        if found is None or not found[3].startswith("clawcell"):
            continue
        own.append(int(found[1]))
        if found[3] == "clawcell":
            cumulative = int(found[2])
    return len(own), sum(own), cumulative


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, required=True, help="another tree's src/")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--stem", default="importtime_comparison", help="results file name")
    args = parser.parse_args()
    loads = [round(os.getloadavg()[0], 2)]
    trees = {"this tree": HERE_SOURCE, "baseline": args.baseline.resolve()}
    prepare(trees, _one)
    samples = shuffled_rounds(trees, args.rounds, _one)
    loads.append(round(os.getloadavg()[0], 2))
    rows = [_row(name, values) for name, values in samples.items()]
    pairs = zip(samples["this tree"], samples["baseline"], strict=True)
    paired = round(statistics.median(mine[2] / base[2] for mine, base in pairs), 3)
    _write(rows, paired, args, loads)


def _row(name: str, values: list[tuple[int, int, int]]) -> dict[str, Any]:
    return {
        "tree": name,
        "modules": int(statistics.median(v[0] for v in values)),
        "self_median_ms": round(statistics.median(v[1] for v in values) / 1000, 1),
        "self_min_ms": round(min(v[1] for v in values) / 1000, 1),
        "cumulative_median_ms": round(statistics.median(v[2] for v in values) / 1000, 1),
        "cumulative_min_ms": round(min(v[2] for v in values) / 1000, 1),
    }


def _write(
    rows: list[dict[str, Any]], paired: float, args: argparse.Namespace, loads: list[float]
) -> None:
    keys = ["modules", "self_median_ms", "self_min_ms", "cumulative_median_ms"]
    keys.append("cumulative_min_ms")
    lines = [
        "| tree | package modules | self, median (ms) | self, min (ms) "
        "| `clawcell` cumulative, median (ms) | cumulative, min (ms) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [f"| {row['tree']} | " + " | ".join(str(row[k]) for k in keys) + " |" for row in rows]
    table = "\n".join(lines) + (
        f"\n\nPaired ratio of `clawcell`'s cumulative time per round, median: {paired}"
        f" ({args.rounds} rounds, load average {loads[0]} → {loads[1]})\n"
    )
    meta = {
        "baseline": str(args.baseline),
        "rounds": args.rounds,
        "date": time.strftime("%F %R"),
        "load_average": loads,
        "paired_cumulative_median": paired,
    }
    RESULTS.mkdir(exist_ok=True)
    payload = {"meta": meta, "rows": rows}
    (RESULTS / f"{args.stem}.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / f"{args.stem}.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
