"""The figures of `compare_instructions.py`, run once under callgrind (or natively, to try).

Arguments: a comma-separated list of figures and a repeat count. Before and after each
measured stretch the script calls `math.lgamma`, whose C function (`math_lgamma`) callgrind
is told to dump before (`--dump-before=math_lgamma`): every dump then holds exactly the
instructions of one stretch, of every thread. The labels of the dumps, in order, go to the
file named by `$LABELS` (one a line; `warm:` stretches are warm-up and not counted).

Figures: `exec`, `seq`, `batch` (warm `exec('return 1')` ×20 per repeat, 100 sequential echo
calls, 256 calls in `Promise.all` batches of 128 — a tenth and a quarter of `bench_runtime.py`'s,
so a cell stays within its 60 s budget under valgrind; `_l` runs them on the loop thread),
`loop` (a 1e5-iteration loop, a hundredth of `bench_runtime.py`'s), `calls` and
`call_batches` (one cell of 300 echo calls, sequential and in batches of 128), `park_memory` and
`park_sqlite` (one dump for the `exec` that parks, one for the `wait` that completes),
`first_memory` and `first_sqlite` (a new `CodeMode` and its first cell), `first_tools` (the
same with the echo tool, as `compare_original.py`'s "new runtime + first cell").
"""

from __future__ import annotations

import asyncio
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from clawcell import CodeMode, Limits, Tool
from clawcell.store import SQLiteStore

SEQUENTIAL = "for (let i = 0; i < 100; i++) await echo({ i }); return 1;"
PARALLEL = (
    "for (let b = 0; b < 256; b += 128) {\n"
    "  await Promise.all(Array.from({ length: 128 }, (_, i) => echo({ i: b + i })));\n"
    "}\nreturn 1;"
)
LOOP = "let s = 0; for (let i = 0; i < 1e5; i++) s += i; return s;"
PARK = "await yield_control('bench');\nreturn 1;"
# A cell of 300 calls, sequential and in batches of 128 (the guest's cost per call: issue 39).
CALLS = "for (let i = 0; i < 300; i++) await echo({ i }); return 1;"
CALL_BATCHES = (
    "for (let b = 0; b < 300; b += 128) {\n"
    "  const n = Math.min(128, 300 - b);\n"
    "  await Promise.all(Array.from({ length: n }, (_, i) => echo({ i: b + i })));\n"
    "}\nreturn 1;"
)
CODE = {
    "exec": "return 1",
    "seq": SEQUENTIAL,
    "batch": PARALLEL,
    "loop": LOOP,
    "calls": CALLS,
    "call_batches": CALL_BATCHES,
}
LIMITS = Limits(timeout_ms=60_000)
# A leg whose tool calls never suspend gives the event loop a turn every `LOOP_TURN_S` of wall
# time (1 ms, about 17 sequential calls natively). Under callgrind everything runs some 50×
# slower, so every turn would be due: the interval is scaled by as much, for the same loop
# turns per call as a native run (a tree without the setting ignores it).
_cell_module: Any = sys.modules.get("clawcell._cell._cell")
if _cell_module is not None and hasattr(_cell_module, "LOOP_TURN_S"):
    _cell_module.LOOP_TURN_S = 50 * _cell_module.LOOP_TURN_S
_labels: list[str] = []


async def _echo(params: dict[str, Any]) -> dict[str, Any]:
    return params


def _tools() -> list[Tool]:
    return [Tool(name="echo", execute=_echo, parameters={"type": "object"})]


def _mark(label: str) -> None:
    """End the current stretch: callgrind dumps its counts before `math_lgamma` runs."""
    _labels.append(label)
    math.lgamma(2.5)


async def _cells(figure: str, repeat: int) -> None:
    name = figure.removesuffix("_l")
    count = repeat * (20 if name == "exec" else 1)
    thread = not figure.endswith("_l")
    async with CodeMode(_tools(), limits=LIMITS, guest_thread=thread) as mode:
        await mode.exec(CODE[name])
        _mark(f"warm:{figure}")
        for _ in range(count):
            envelope = await mode.exec(CODE[name])
            assert envelope["status"] == "completed", envelope
        _mark(figure)


async def _parking(kind: str, repeat: int, directory: Path) -> None:
    store = SQLiteStore(directory / "park.sqlite") if kind == "sqlite" else None
    async with CodeMode(limits=LIMITS, store=store, session_id="bench") as mode:
        for _ in range(5):
            parked = await mode.exec(PARK)
            await mode.wait(parked["runId"])
        _mark("warm:park")
        for _ in range(repeat):
            parked = await mode.exec(PARK)
            _mark(f"park_{kind}")
            done = await mode.wait(parked["runId"])
            assert done["status"] == "completed", done
            _mark(f"resume_{kind}")
    if store is not None:
        await store.close()


async def _first(kind: str, repeat: int, directory: Path) -> None:
    store = SQLiteStore(directory / "first.sqlite") if kind == "sqlite" else None
    tools = _tools() if kind == "tools" else []
    for index in range(3 + repeat):
        async with CodeMode(tools, limits=LIMITS, store=store, session_id="bench") as mode:
            envelope = await mode.exec("return 1")
            assert envelope["status"] == "completed", envelope
        _mark(f"first_{kind}" if index >= 3 else "warm:first")
    if store is not None:
        await store.close()


async def main(figures: list[str], repeat: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        for figure in figures:
            if figure.startswith("park_"):
                await _parking(figure.removeprefix("park_"), repeat, directory)
            elif figure.startswith("first_"):
                await _first(figure.removeprefix("first_"), repeat, directory)
            else:
                await _cells(figure, repeat)
    _mark("end")
    Path(os.environ.get("LABELS", os.devnull)).write_text("\n".join(_labels) + "\n")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1].split(","), int(sys.argv[2])))
