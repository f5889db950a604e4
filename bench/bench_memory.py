"""Host memory benchmark: is the host's RSS bounded by what cells do?

A script, not a test: prints a table and writes `bench/results/memory.json`. Each scenario
runs in a fresh subprocess, so its RSS is its own. Run it with `make bench` or
`.venv/bin/python bench/bench_memory.py [--skip-corpus]`.

* `corpus`: the peak RSS of one pytest process running the whole hostile corpus
  (`tests/hostile/`; target under 1 GiB);
* `open_close`: RSS after each of 1,000 cycles of opening a `CodeMode`, running one cell and
  closing it; the median of the first 100 against the median of the last 100 (target: flat);
* `parked`: the RSS that 1,000 cells parked idle on `yield_control` add, spread over 16
  `CodeMode`s since a runtime holds at most 64 parked runs (target: at most 50 MB);
* `released`: the RSS left after 40 concurrent cells that each kept a 3 MB string have ended
  (their guests idle in the pool: what they used of the free heap and stack is given back).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import clawcell
from clawcell.runtime import compiled_reactor

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
ROOMY = clawcell.Limits(timeout_ms=120_000)
PARK_CELL = "await yield_control('parked');\nreturn 1;"
_PEAK_LINE = re.compile(r"hostile corpus: peak host RSS (\d+) MiB")


def rss_mib() -> float:
    """This process's resident set size now, in MiB (Linux `/proc/self/statm`)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _open_close(cycles: int) -> dict[str, Any]:
    samples: list[float] = []
    for i in range(cycles):
        async with clawcell.CodeMode(limits=ROOMY) as mode:
            envelope = await mode.exec(f"return [{i}, 'x'.repeat(1000).length];")
            assert envelope["status"] == "completed", envelope
        gc.collect()
        samples.append(rss_mib())
    first = statistics.median(samples[:100])
    last = statistics.median(samples[-100:])
    return {
        "cycles": cycles,
        "first_100_median_mib": round(first, 1),
        "last_100_median_mib": round(last, 1),
        "growth_mib": round(last - first, 1),
    }


async def _parked(cells: int) -> dict[str, Any]:
    modes = [clawcell.CodeMode(limits=ROOMY, session_id=f"s{i}") for i in range(16)]
    warm: list[str] = []
    for mode in modes:  # warm: engine, guests, canonical image; then end those runs
        envelope = await mode.exec(PARK_CELL)
        warm.append(envelope["runId"])
    for mode, run_id in zip(modes, warm, strict=True):
        assert (await mode.wait(run_id))["status"] == "completed"
    gc.collect()
    before = rss_mib()
    for n in range(cells):
        envelope = await modes[n % 16].exec(PARK_CELL)
        assert envelope["status"] == "waiting", envelope
    gc.collect()
    added = rss_mib() - before
    for mode in modes:
        await mode.aclose()
    return {
        "cells": cells,
        "added_rss_mib": round(added, 1),
        "added_mb": round(added * 2**20 / 1e6, 1),
        "per_cell_kib": round(added * 1024 / cells, 1),
    }


async def _released(cells: int) -> dict[str, Any]:
    """`cells // 25` cells at once (40 of the usual 1,000), each keeping a 3 MB string."""
    at_once = cells // 25
    async with clawcell.CodeMode(limits=ROOMY) as mode:
        await mode.exec("return 1")  # the template guest, before the baseline
        gc.collect()
        before = rss_mib()
        cell = "const kept = 'x'.repeat(3e6); return kept.length"
        envelopes = await asyncio.gather(*[mode.exec(cell) for _ in range(at_once)])
        assert all(e["status"] == "completed" for e in envelopes), envelopes[0]
        for _ in range(2):  # released guests are put away in the loop's next iteration
            await asyncio.sleep(0)
        gc.collect()
        added = rss_mib() - before
    return {"cells": at_once, "added_rss_mib": round(added, 1)}


SCENARIOS = {"open_close": _open_close, "parked": _parked, "released": _released}


def _child(name: str) -> None:
    compiled_reactor()
    result = asyncio.run(SCENARIOS[name](1000))
    result["peak_rss_mib"] = round(peak_mib(), 1)
    print(json.dumps(result))


def _corpus() -> dict[str, Any]:
    """Run `tests/hostile` in one pytest process; its conftest reports the peak RSS."""
    command = [sys.executable, "-m", "pytest", "tests/hostile", "-q", "-p", "no:cacheprovider"]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    match = _PEAK_LINE.search(out.stdout)
    if out.returncode != 0 or match is None:
        raise SystemExit(f"the hostile corpus failed:\n{out.stdout[-4000:]}")
    cases = re.search(r"(\d+) passed", out.stdout)
    return {
        "cases": int(cases.group(1)) if cases else None,
        "peak_rss_mib": int(match.group(1)),
        "target_mib": 1024,
    }


def _scenario(name: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--scenario", name],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--skip-corpus", action="store_true")
    args = parser.parse_args()
    if args.scenario:
        _child(args.scenario)
        return 0
    results: dict[str, Any] = {name: _scenario(name) for name in SCENARIOS}
    if not args.skip_corpus:
        results["corpus"] = _corpus()
    for name, figures in results.items():
        print(f"{name:11} {figures}")
    results["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "memory.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
