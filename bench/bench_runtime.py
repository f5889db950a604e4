"""Guest runtime benchmark: cold start, warm exec, bridge round trips, loop, timeout overshoot.

A script, not a test: prints a table of medians and writes `bench/results/runtime.{json,md}`.
Run it with `make bench` or `.venv/bin/python bench/bench_runtime.py [--repeat N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import clawcell

RESULTS = Path(__file__).resolve().parent / "results"

COLD_START = """
import asyncio, time
t0 = time.perf_counter()
import clawcell
async def main():
    async with clawcell.CodeMode() as mode:
        envelope = await mode.exec("return 1")
    assert envelope["value"] == 1, envelope
asyncio.run(main())
print(time.perf_counter() - t0)
"""

SEQUENTIAL = "for (let i = 0; i < 1000; i++) await echo({ i }); return 1;"
PARALLEL = (
    "for (let b = 0; b < 1000; b += 128) {\n"
    "  const n = Math.min(128, 1000 - b);\n"
    "  await Promise.all(Array.from({ length: n }, (_, i) => echo({ i: b + i })));\n"
    "}\nreturn 1;"
)
LOOP = "let s = 0; for (let i = 0; i < 1e7; i++) s += i; return s;"


async def _echo(params: dict[str, Any]) -> dict[str, Any]:
    return params


def _tools() -> list[clawcell.Tool]:
    return [clawcell.Tool(name="echo", execute=_echo, parameters={"type": "object"})]


async def _timed(mode: clawcell.CodeMode, code: str, repeat: int) -> list[float]:
    samples: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        envelope = await mode.exec(code)
        samples.append((time.perf_counter() - start) * 1000)
        if envelope["status"] == "failed" and envelope["code"] != "timeout":
            raise RuntimeError(f"benchmark cell failed: {envelope}")
    return samples


async def _warm(repeat: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    # The default begins each segment on the loop thread for a 2 ms slice and moves what
    # computes longer to clawcell's worker thread (the event loop stays free);
    # `guest_thread=False` runs everything on the loop's thread, however long it computes.
    for guest_thread, suffix in ((True, ""), (False, " [loop thread]")):
        async with clawcell.CodeMode(_tools(), guest_thread=guest_thread) as mode:
            await mode.exec("return 1")
            out[f"warm exec('return 1'){suffix}"] = await _timed(mode, "return 1", repeat * 50)
            out[f"1,000 sequential echo calls{suffix}"] = await _timed(mode, SEQUENTIAL, repeat)
            out[f"1,000 echo calls, Promise.all batches of 128{suffix}"] = await _timed(
                mode, PARALLEL, repeat
            )
    async with clawcell.CodeMode(_tools()) as mode:
        out["1e7-iteration loop"] = await _timed(mode, LOOP, max(3, repeat // 3))
    limits = clawcell.Limits(timeout_ms=200)
    async with clawcell.CodeMode(_tools(), limits=limits) as mode:
        samples = await _timed(mode, "while (true) {}", repeat)
        out["busy loop: overshoot past timeoutMs=200"] = [s - 200 for s in samples]
    return out


def _cold(repeat: int) -> list[float]:
    samples: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", COLD_START], check=True, capture_output=True)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


TARGETS = {
    "cold start: new process to first envelope": 150.0,
    "warm exec('return 1')": 1.0,
    "1,000 sequential echo calls": 50.0,
    "1,000 echo calls, Promise.all batches of 128": 15.0,
    "warm exec('return 1') [loop thread]": 1.0,
    "1,000 sequential echo calls [loop thread]": 50.0,
    "1,000 echo calls, Promise.all batches of 128 [loop thread]": 15.0,
    "busy loop: overshoot past timeoutMs=200": 5.0,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    # Byte-compile first, as an installed package is: the environment may forbid writing
    # `__pycache__` (PYTHONDONTWRITEBYTECODE), which would otherwise recompile every start.
    source = Path(clawcell.__file__).resolve().parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(source)], check=True)
    subprocess.run([sys.executable, "-c", COLD_START], check=True, capture_output=True)
    samples = {"cold start: new process to first envelope": _cold(max(5, args.repeat // 2))}
    samples.update(asyncio.run(_warm(args.repeat)))
    rows: list[dict[str, Any]] = []
    for name, values in samples.items():
        median = statistics.median(values)
        target = TARGETS.get(name)
        meets = None if target is None else median <= target
        row = {"name": name, "median_ms": round(median, 3), "n": len(values)}
        rows.append({**row, "target_ms": target, "meets_target": meets})
    RESULTS.mkdir(exist_ok=True)
    meta = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "date": time.strftime("%Y-%m-%d"),
    }
    (RESULTS / "runtime.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    lines = ["| measurement | median (ms) | target (ms) | n |", "| --- | ---: | ---: | ---: |"]
    for row in rows:
        target = "" if row["target_ms"] is None else f"≤ {row['target_ms']:g}"
        lines.append(f"| {row['name']} | {row['median_ms']:.3f} | {target} | {row['n']} |")
    table = "\n".join(lines)
    (RESULTS / "runtime.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
