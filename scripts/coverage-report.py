#!/usr/bin/env python3
"""Print the coverage `make test` measured and fail under the floor.

`make test` runs the parallel suite under SlipCover, which writes its merged JSON report
(every xdist worker's lines combined) to the file given here. This prints the files below
100 %, least covered first, with the lines they miss, then the total, and exits 1 when the
total is under `--floor` (the Makefile's `COVERAGE_FLOOR`).

SlipCover's own `fail-under` is not used: in slipcover 1.1.0 the check consumes the workers'
data, and the report printed after it shows the controller's lines alone (10 % instead of 94 %).

    python scripts/coverage-report.py .venv/coverage.json --floor 93
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _ranges(lines: list[int]) -> str:
    """`[1, 2, 3, 7]` as `1-3, 7`."""
    spans: list[str] = []
    start = end = None
    for line in sorted(lines):
        if end is not None and line == end + 1:
            end = line
            continue
        if start is not None:
            spans.append(str(start) if start == end else f"{start}-{end}")
        start = end = line
    if start is not None:
        spans.append(str(start) if start == end else f"{start}-{end}")
    return ", ".join(spans)


def _rows(files: dict[str, Any]) -> list[tuple[float, str, int, int, str]]:
    rows: list[tuple[float, str, int, int, str]] = []
    for name, data in files.items():
        summary = data["summary"]
        if summary["missing_lines"]:
            lines = summary["covered_lines"] + summary["missing_lines"]
            missing = _ranges(data["missing_lines"])
            if len(missing) > 60:
                missing = missing[:57] + "..."
            rows.append(
                (summary["percent_covered"], name, lines, summary["missing_lines"], missing)
            )
    return sorted(rows)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Print the coverage; fail under the floor.")
    parser.add_argument("report", type=Path, help="SlipCover's JSON report")
    parser.add_argument("--floor", type=float, required=True, help="fail under this percent")
    args = parser.parse_args(argv)
    try:
        report = json.loads(args.report.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        print(f"coverage: cannot read {args.report}: {exc}; did the test run finish?")
        return 1
    print(f"{'file':<58} {'lines':>6} {'miss':>5} {'cover':>6}  missing")
    for percent, name, lines, missed, missing in _rows(report["files"]):
        print(f"{name:<58} {lines:>6} {missed:>5} {percent:>5.1f}%  {missing}")
    total = report["summary"]
    lines = total["covered_lines"] + total["missing_lines"]
    percent = total["percent_covered"]
    label = "total (files at 100 % not shown)"
    print(f"{label:<58} {lines:>6} {total['missing_lines']:>5} {percent:>5.1f}%")
    if percent < args.floor:
        print(f"coverage: {percent:.1f} % is under the floor of {args.floor:g} % (COVERAGE_FLOOR)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
