"""Throughput of `clawcell.reply` on the shared rich-output corpus (a script, not a test).

Run: `.venv/bin/python bench/bench_reply.py`. Reads `../shared/bench-corpus/` beside the
checkout, prints a table of medians and writes `bench/results/reply.json` and `.md`.
Targets: >= 20 MB/s on `mixed-1mb.txt`, <= 5 us median per reply of `short-replies.jsonl`.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clawcell import reply

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "bench-corpus"
RESULTS = ROOT / "bench" / "results"
ROUNDS = 7

FUNCTIONS: dict[str, Callable[[str], Any]] = {
    "split_media_from_output": reply.split_media_from_output,
    "parse_inline_directives": reply.parse_inline_directives,
    "extract_canvas_shortcodes": reply.extract_canvas_shortcodes,
    "parse_reply_directives": reply.parse_reply_directives,
}
ORIGINAL = {  # MB/s, us per short reply (../shared/bench-corpus/README.md)
    "split_media_from_output": (0.74, 12.8),
    "parse_inline_directives": (0.86, 7.8),
    "extract_canvas_shortcodes": (2.77, 0.54),
}


def _corpus() -> tuple[str, list[str]]:
    mixed, short = CORPUS / "mixed-1mb.txt", CORPUS / "short-replies.jsonl"
    if not mixed.is_file() or not short.is_file():
        sys.exit(f"benchmark corpus not found in {CORPUS}; expected the shared checkout beside")
    lines = short.read_text(encoding="utf-8").splitlines()
    return mixed.read_text(encoding="utf-8"), [json.loads(line)["text"] for line in lines]


def _throughput(function: Callable[[str], Any], text: str) -> tuple[float, float]:
    """Wall-clock and process-CPU MB/s (medians); CPU time is steadier on a shared machine."""
    size = len(text.encode("utf-8"))
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(ROUNDS):
        start, start_cpu = time.perf_counter(), time.process_time()
        function(text)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return size / statistics.median(wall) / 1e6, size / statistics.median(cpu) / 1e6


def _per_reply(function: Callable[[str], Any], replies: list[str]) -> float:
    samples: list[float] = []
    clock = time.perf_counter_ns
    for text in replies:
        function(text)  # warm
        best = min(_once(function, text, clock) for _ in range(3))
        samples.append(best)
    return statistics.median(samples) / 1000


def _once(function: Callable[[str], Any], text: str, clock: Callable[[], int]) -> int:
    start = clock()
    function(text)
    return clock() - start


def main() -> None:
    """Measure, print the table and write the result files."""
    mixed, replies = _corpus()
    rows: list[dict[str, Any]] = []
    for name, function in FUNCTIONS.items():
        wall, cpu = _throughput(function, mixed)
        rows.append(
            {
                "function": name,
                "mb_per_s": round(wall, 2),
                "cpu_mb_per_s": round(cpu, 2),
                "us_per_short_reply_median": round(_per_reply(function, replies), 2),
            }
        )
    header = (
        "| function | MB/s (1 MB corpus) | CPU MB/s | µs median / short reply | original MB/s, µs |"
    )
    lines = [header, "| --- | ---: | ---: | ---: | --- |"]
    for row in rows:
        original = ORIGINAL.get(str(row["function"]))
        reference = f"{original[0]}, {original[1]}" if original else "–"
        lines.append(
            f"| `{row['function']}` | {row['mb_per_s']} | {row['cpu_mb_per_s']} "
            f"| {row['us_per_short_reply_median']} | {reference} |"
        )
    table = "\n".join(lines)
    print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    meta = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "rounds": ROUNDS,
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
    }
    (RESULTS / "reply.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    note = (
        "Targets: >= 20 MB/s on the corpus, <= 5 µs median per short reply. "
        f"Measured at a 1-minute load average of {meta['load_average_1m']} on {meta['cpus']} "
        "CPUs; CPU MB/s counts this process's CPU time only.\n"
    )
    (RESULTS / "reply.md").write_text(f"# clawcell.reply benchmark\n\n{note}\n{table}\n")


if __name__ == "__main__":
    main()
