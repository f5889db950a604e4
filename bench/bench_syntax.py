"""What wording syntax errors the release's way costs (acorn in a guest of its own).

Run: `python bench/bench_syntax.py`. Prints a table of medians and writes
`bench/results/syntax.json`. Measured: the first acorn parse in a process (the parser guest is
created and acorn is loaded), a warm acorn parse of a short and of a 20 KB cell, and an `exec`
of a cell with a syntax error end to end, next to an `exec` of a valid cell (which never asks
acorn).
"""

from __future__ import annotations

import asyncio
import json
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import clawcell
from clawcell.runtime import compiled_reactor, parse_failure

RESULTS = Path(__file__).parent / "results" / "syntax.json"
LONG = "const rows = [];\n" + "rows.push({ a: 1, b: 'two', c: [3, 4] });\n" * 500 + "let = ;"


def _median_us(fn: Callable[[], Any], reps: int) -> float:
    samples: list[float] = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def _cold_ms() -> float:
    """The first parse in a fresh process, after the reactor is compiled (as in a server)."""
    code = (
        "import time; from clawcell.runtime import compiled_reactor, parse_failure;"
        "compiled_reactor(); t = time.perf_counter(); parse_failure('let = ;');"
        "print((time.perf_counter() - t) * 1000)"
    )
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(5)
    ]
    return statistics.median(runs)


async def _exec_us(code: str, reps: int) -> float:
    async with clawcell.CodeMode([]) as mode:
        await mode.exec(code)
        samples: list[float] = []
        for _ in range(reps):
            start = time.perf_counter()
            await mode.exec(code)
            samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def main() -> None:
    compiled_reactor()
    parse_failure("let = ;")
    rows = {
        "first parse in a process (ms)": _cold_ms(),
        "warm parse, short cell (µs)": _median_us(lambda: parse_failure("const = 1;"), 2000),
        "warm parse, 20 KB cell (µs)": _median_us(lambda: parse_failure(LONG), 200),
        "exec of a syntax error (µs)": asyncio.run(_exec_us("const = 1;", 300)),
        "exec of `return 1` (µs)": asyncio.run(_exec_us("return 1;", 300)),
    }
    width = max(len(name) for name in rows)
    for name, value in rows.items():
        print(f"{name:<{width}}  {value:10.1f}")
    RESULTS.write_text(
        json.dumps(
            {"machine": platform.platform(), "python": platform.python_version(), "medians": rows},
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
