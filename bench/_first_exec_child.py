"""The cold start of `bench_runtime.py`'s `COLD_START`, cut at marks, for
`compare_first_exec.py`.

Natively (no argument) it prints, as JSON, the minor page faults, CPU and wall milliseconds of
the first `exec` (`getrusage` and `perf_counter` around it). Under callgrind (`--marks`) it
calls `math.lgamma` after each phase, whose C function callgrind is told to dump before: the
dumps then hold the interpreter's start, `import asyncio`, `import clawcell`, `CodeMode()`,
the first `exec`, closing, and (the dump at the program's end) the interpreter's exit.
"""

from __future__ import annotations

import math
import sys

MARKS = "--marks" in sys.argv
if MARKS:
    math.lgamma(1.0)  # the interpreter's start

import asyncio  # noqa: E402 - each import is a phase of its own
import json  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402

if MARKS:
    math.lgamma(1.0)  # `import asyncio` (with this script's own few modules)

import clawcell  # noqa: E402

if MARKS:
    math.lgamma(1.0)


async def main() -> dict[str, float]:
    async with clawcell.CodeMode() as mode:
        if MARKS:
            math.lgamma(1.0)  # `CodeMode()`
        before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        envelope = await mode.exec("return 1")
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        if MARKS:
            math.lgamma(1.0)  # the first `exec`
    assert envelope["value"] == 1, envelope
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    faults = after.ru_minflt - before.ru_minflt
    return {"faults": faults, "cpu_ms": cpu * 1000, "wall_ms": wall * 1000}


figures = asyncio.run(main())
if MARKS:
    math.lgamma(1.0)  # closing the `CodeMode` and leaving `asyncio.run`
else:
    print(json.dumps(figures))
