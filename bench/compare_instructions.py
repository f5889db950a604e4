"""Instructions per figure of this tree against another source tree, counted by callgrind.

A script, not a test, and not part of `make bench` (it needs valgrind and a second tree).
Wall-clock comparisons on a shared machine drift by a fifth within minutes (an unchanged
1e7-iteration loop once read 1.20×); the instructions a figure executes do not depend on
the machine's load. `_instructions_child.py` runs the figures under
`valgrind --tool=callgrind --dump-before=math_lgamma`, one dump per measured stretch with the
instructions of every thread (the guest's wasm code included); this prints the median per
stretch for both trees and their ratio, and writes
`bench/results/instructions_comparison.{json,md}` (or `--stem`'s name). With `--keep DIR`
the dumps stay in `DIR/0` (baseline) and `DIR/1` (this tree), one per stretch in the order of
`labels`, for `callgrind_annotate`. `<stem>_parts.md` splits each figure by the part of the
process its instructions ran in (the Python interpreter, the guest's compiled wasm, ctypes and
libffi, wasmtime, the rest), per unit of the figure (`UNITS`: a call, a cell), medians.

    .venv/bin/python bench/compare_instructions.py --baseline /path/to/other/src

The trees run at the same time (counts do not depend on it); expect ~10 minutes on an idle
core per tree for the default figures, far more under load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from _callgrind import PARTS, dumps_by_label, finish, parts, start
from _callgrind import counts as stretch_counts

BENCH = Path(__file__).resolve().parent
HERE = BENCH.parent / "src"
RESULTS = BENCH / "results"
CHILD = BENCH / "_instructions_child.py"
FIGURES = (
    "exec,exec_l,seq,seq_l,batch,batch_l,park_memory,park_sqlite,first_memory,first_sqlite,loop"
)
NAMES = {
    "exec": "warm exec('return 1'), 20 × repeat",
    "exec_l": "warm exec('return 1'), 20 × repeat [loop thread]",
    "seq": "100 sequential echo calls, × repeat",
    "seq_l": "100 sequential echo calls, × repeat [loop thread]",
    "batch": "256 echo calls in batches of 128, × repeat",
    "batch_l": "256 echo calls in batches of 128, × repeat [loop thread]",
    "park_memory": "exec that yields → waiting, memory",
    "resume_memory": "wait → completed, memory",
    "park_sqlite": "exec that yields → waiting, SQLite",
    "resume_sqlite": "wait → completed, SQLite",
    "first_memory": "new CodeMode + first cell, memory",
    "first_sqlite": "new CodeMode + first cell, SQLite",
    "first_tools": "new CodeMode (echo tool) + first cell, memory",
    "loop": "1e5-iteration loop, × repeat",
    "calls": "300 sequential echo calls, × repeat",
    "calls_l": "300 sequential echo calls, × repeat [loop thread]",
    "call_batches": "300 echo calls in batches of 128, × repeat",
    "call_batches_l": "300 echo calls in batches of 128, × repeat [loop thread]",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, required=True, help="another tree's src/")
    parser.add_argument("--figures", default=FIGURES, help=f"comma-separated ({FIGURES})")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="keep the callgrind dumps in this folder")
    parser.add_argument("--stem", default="instructions_comparison", help="results file name")
    args = parser.parse_args()
    trees = {"baseline": args.baseline.resolve(), "this tree": HERE}
    counts: dict[str, dict[str, list[int]]] = {}
    split: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) if args.keep is None else args.keep
        dirs = {name: root / str(index) for index, name in enumerate(trees)}
        running: dict[str, subprocess.Popen[bytes]] = {}
        for name, source in trees.items():
            dirs[name].mkdir(parents=True, exist_ok=True)
            for stale in dirs[name].glob("out*"):
                stale.unlink()
            running[name] = start(source, CHILD, [args.figures, str(args.repeat)], dirs[name])
        for name, process in running.items():
            finish(name, process)
            counts[name] = stretch_counts(dirs[name])
            split[name] = {
                label: {
                    part: statistics.median(parts(dump)[part] for dump in found)
                    / _unit(label, args.repeat)
                    for part in PARTS
                }
                for label, found in dumps_by_label(dirs[name]).items()
            }
    _write(_rows(counts), args)
    _write_parts(split, args)


def _rows(counts: dict[str, dict[str, list[int]]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for label, samples in counts["this tree"].items():
        base = statistics.median(counts["baseline"][label])
        this = statistics.median(samples)
        row = {"figure": NAMES.get(label, label), "key": label, "n": len(samples)}
        rows.append({**row, "baseline": base, "this": this, "ratio": round(this / base, 4)})
    return rows


def _write(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    lines = [
        "| figure | baseline (instructions) | this tree | ratio |",
        "| --- | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['figure']} | {r['baseline']:,.0f} | {r['this']:,.0f} | {r['ratio']:.3f} |"
        for r in rows
    ]
    table = "\n".join(lines)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M"), "repeat": args.repeat}
    payload = {"meta": meta, "baseline": str(args.baseline), "rows": rows}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.stem}.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / f"{args.stem}.md").write_text(table + "\n")
    print(table)


# What one stretch of a figure holds per `--repeat`: its parts are given per call (per cell
# for warm exec, per operation where each stretch is one).
UNITS = {"exec": 20, "seq": 100, "batch": 256, "calls": 300, "call_batches": 300, "loop": 1}


def _unit(label: str, repeat: int) -> int:
    base = label.removesuffix("_l")
    return UNITS[base] * repeat if base in UNITS else 1


def _write_parts(split: dict[str, dict[str, dict[str, float]]], args: argparse.Namespace) -> None:
    lines = ["Instructions by part of the process, per call (warm exec: per cell; parking and"]
    lines += ["first cells: per operation), medians: baseline, this tree, ratio.", "", "```text"]
    for label, this in split["this tree"].items():
        base = split["baseline"].get(label, {})
        lines.append(label)
        for part in (*PARTS, "whole"):
            b = sum(base.values()) if part == "whole" else base.get(part, 0.0)
            t = sum(this.values()) if part == "whole" else this[part]
            ratio = f"{t / b:.3f}" if b else "-"
            lines.append(f"  {part:<22} {b:>12,.0f} {t:>12,.0f}  {ratio}")
    lines.append("```")
    (RESULTS / f"{args.stem}_parts.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
