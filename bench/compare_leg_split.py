"""A `wait` leg's instructions in five stretches, this tree against another, by callgrind.

A script, not a test, and not part of `make bench` (it needs valgrind and a second tree).
`_leg_split_child.py` parks and resumes `--legs` cells (the memory store, `compare_original.py`'s
echo tool) under `valgrind --tool=callgrind --dump-before=math_lgamma`, with each `wait` cut
into `pre` (the call down to the guest turn), `seg` (the turn), `mid` (the report's handling up
to the envelope), `env` (the envelope) and `post` (the leg's end), on the default path and on
the loop thread. Prints the median instructions of each stretch per tree and path and writes
`bench/results/<--stem>.{json,md}` (default `leg_split`).

    .venv/bin/python bench/compare_leg_split.py --baseline /path/to/other/src --legs 7
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from _callgrind import counts as stretch_counts
from _callgrind import finish, start
from _common import write_results

BENCH = Path(__file__).resolve().parent
HERE = BENCH.parent / "src"
CHILD = BENCH / "_leg_split_child.py"
PARTS = ("pre", "seg", "mid", "env", "post")


def _run(source: Path, path: str, legs: int, scratch: Path) -> dict[str, float]:
    run = start(source, CHILD, [path, str(legs)], scratch)
    finish(f"{source} ({path})", run)
    counts = stretch_counts(scratch)
    medians = {part: statistics.median(counts[part]) for part in PARTS}
    return {**medians, "wait": sum(medians.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, required=True, help="another tree's src/")
    parser.add_argument("--legs", type=int, default=7)
    parser.add_argument("--stem", default="leg_split", help="results file name")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    for path in ("guest", "loop"):
        for name, source in (("baseline", args.baseline.resolve()), ("this tree", HERE)):
            with tempfile.TemporaryDirectory() as scratch:
                results[f"{name}, {path}"] = _run(source, path, args.legs, Path(scratch))
    lines = ["| tree, path | " + " | ".join(PARTS) + " | wait |", "| --- |" + " ---: |" * 6]
    for key, row in results.items():
        lines.append(f"| {key} | " + " | ".join(f"{row[p]:,.0f}" for p in (*PARTS, "wait")) + " |")
    table = "\n".join(lines)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M"), "legs": args.legs}
    payload = {"meta": meta, "baseline": str(args.baseline), "rows": results}
    write_results(args.stem, payload, table + "\n")
    print(table)


if __name__ == "__main__":
    main()
