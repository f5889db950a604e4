"""What running a cell's segments inline under a budget, with a memory rollback point, would cost.

A script, not a test (issue 39). The default path runs each segment of a cell on its guest's
thread: two thread hand-offs per tool call. The option measured here runs a segment inline on
the loop thread under a budget and, when it overruns, rolls the guest's memory back to where
the segment began and reruns it on the guest thread. Its fast path (every segment that ends
within the budget) is the loop-thread path plus one *rollback point* per segment: what must be
kept to undo the segment. The guest's memory can only be put back if every page the segment
may write is kept, and the host cannot know in advance which ones (wasmtime has no write
tracking that Python can reach), so a rollback point is at least:

- the pages in memory now (`/proc/self/pagemap`, one `pread` of 8 bytes per page, turned into
  runs with `bytes.find`); pages not in memory read as zeros and are dropped again on a
  rollback. `mincore` answers faster but counts a swapped-out page as untouched, and dropping
  that page on a rollback would lose it;
- a copy of those pages (`memmove` run by run into a buffer kept per guest);
- the few host-held values (stack pointer, the unhandled-rejection table; negligible).

Each round is one fresh process that runs a cell of 1,000 sequential echo calls in five modes,
alternated cell by cell: on the guest thread (the default); on the loop thread; on the loop
thread with a rollback point taken before every segment ("inline + point"); with only the copy
of the pages found at the cell's first segment ("inline + copy": it skips finding them, so no
point that copies what is in memory can be cheaper); and with a shadow copy kept by soft-dirty
bits ("inline + soft-dirty": the cell's first segment copies the pages in memory; before each
segment `/proc/self/clear_refs` clears the soft-dirty bit of every page of the process, after
it the pages the segment wrote are copied into the shadow, the next segment's rollback point).
It prints per mode the median wall and CPU per call, the paired ratios against the loop thread
and the guest thread, the pages a point copies and a segment writes, and the load average;
writes `bench/results/inline_segments.{json,md}`. Only the cost of the fast path is measured:
no segment here overruns, so none is rolled back.

    .venv/bin/python bench/bench_inline_segments.py [--rounds 5] [--cells 6]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
CALLS = 1000
MODES = ("guest", "loop", "inline + point", "inline + copy", "inline + soft-dirty")
CHILD = """
import asyncio, ctypes, json, os, statistics, time
import clawcell
import clawcell.runtime._guest as guest_module
from clawcell.runtime._wasm._pages import PAGE_BYTES

SEQUENTIAL = "for (let i = 0; i < {calls}; i++) await echo({{ i }}); return 1;"
TOUCHED = bytes(ord("1") if byte & 0xC0 else ord("0") for byte in range(256))
SOFT_DIRTY = bytes(ord("1") if byte & 0x80 else ord("0") for byte in range(256))  # bit 55
state = {{"mode": "", "pages": [], "dirty": [], "buffers": {{}}, "runs": {{}}}}


async def echo(params):
    return params


def present_runs(base, size, column=7, table=TOUCHED):
    fd = os.open("/proc/self/pagemap", os.O_RDONLY)
    try:
        entries = os.pread(fd, 8 * (size // PAGE_BYTES), 8 * (base // PAGE_BYTES))
    finally:
        os.close(fd)
    flags, runs, at = entries[column::8].translate(table), [], 0
    while (start := flags.find(b"1", at)) >= 0:  # `find` is memchr: faster than a regex here
        at = flags.find(b"0", start)
        at = len(flags) if at < 0 else at
        runs.append((start * PAGE_BYTES, (at - start) * PAGE_BYTES))
    return runs


def rollback_point(guest):
    memory = guest.instance.memory
    base, size = memory.base, memory.size
    buffer = state["buffers"].get(id(guest))
    if buffer is None or len(buffer) < size:
        buffer = state["buffers"][id(guest)] = ctypes.create_string_buffer(size)
    if state["mode"] == "inline + point" or id(guest) not in state["runs"]:
        state["runs"][id(guest)] = present_runs(base, size)
    runs = state["runs"][id(guest)]
    into = ctypes.addressof(buffer)
    for offset, length in runs:
        ctypes.memmove(into + offset, base + offset, length)
    kept = (memory.stack_pointer, dict(guest._rejections))
    state["pages"].append(sum(length for _, length in runs) // PAGE_BYTES)
    return kept


def clear_soft_dirty():
    # Clears the bit on every page of the process and write-protects them all: the next
    # write to any page (the Python heap's too) takes a fault that sets it again.
    fd = os.open("/proc/self/clear_refs", os.O_WRONLY)
    try:
        os.write(fd, b"4")
    finally:
        os.close(fd)


def shadow_update(guest):
    # After the segment: copy the pages it wrote into the shadow, which is then the next
    # segment's rollback point.
    memory = guest.instance.memory
    base, size = memory.base, memory.size
    buffer = state["buffers"][id(guest)]
    if len(buffer) < size:
        return rollback_point(guest)  # the memory grew: start the shadow again
    runs = present_runs(base, size, 6, SOFT_DIRTY)
    into = ctypes.addressof(buffer)
    for offset, length in runs:
        ctypes.memmove(into + offset, base + offset, length)
    state["dirty"].append(sum(length for _, length in runs) // PAGE_BYTES)


def soft_dirty_works():
    # Kernels built without CONFIG_MEM_SOFT_DIRTY accept `clear_refs` but never set the bit.
    page = ctypes.create_string_buffer(2 * PAGE_BYTES)
    address = (ctypes.addressof(page) // PAGE_BYTES + 1) * PAGE_BYTES
    clear_soft_dirty()
    ctypes.memset(address, 1, 1)
    return bool(present_runs(address, PAGE_BYTES, 6, SOFT_DIRTY))


segment = guest_module.Guest.run_segment


def run_segment(self, *args):
    mode = state["mode"]
    if mode == "inline + soft-dirty":
        if id(self) not in state["runs"]:  # the cell's first segment: a full point
            rollback_point(self)
        clear_soft_dirty()
        result = segment(self, *args)
        shadow_update(self)
        return result
    if mode.startswith("inline"):
        rollback_point(self)
    return segment(self, *args)


guest_module.Guest.run_segment = run_segment


async def timed(name, mode):
    state["mode"], state["runs"] = name, {{}}
    cpu, start = time.process_time(), time.perf_counter()
    envelope = await mode.exec(SEQUENTIAL)
    wall = (time.perf_counter() - start) * 1e6 / {calls}
    assert envelope["status"] == "completed", envelope
    return wall, (time.process_time() - cpu) * 1e6 / {calls}


async def main():
    tools = [clawcell.Tool(name="echo", execute=echo, parameters={{"type": "object"}})]
    names = {modes!r}
    out = {{name: [] for name in names}}
    async with clawcell.CodeMode(tools) as guest, clawcell.CodeMode(
        tools, guest_thread=False
    ) as loop:
        modes = {{name: guest if name == "guest" else loop for name in names}}
        for name, mode in modes.items():
            await timed(name, mode)
        for cell in range({cells}):
            order = list(names) if cell % 2 == 0 else list(reversed(names))
            for name in order:
                out[name].append(await timed(name, modes[name]))
    state["mode"] = ""
    pages, dirty = statistics.median(state["pages"]), statistics.median(state["dirty"])
    found = {{"samples": out, "pages": pages, "dirty": dirty, "soft_dirty": soft_dirty_works()}}
    print(json.dumps(found))


asyncio.run(main())
"""


def _round(cells: int) -> dict[str, Any]:
    code = CHILD.format(calls=CALLS, cells=cells, modes=MODES)
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _paired(rounds: list[dict[str, Any]], top: str, bottom: str, field: int) -> float:
    ratios = [
        a[field] / b[field]
        for one in rounds
        for a, b in zip(one["samples"][top], one["samples"][bottom], strict=True)
    ]
    return statistics.median(ratios)


def _median(rounds: list[dict[str, Any]], mode: str, field: int) -> float:
    return statistics.median(s[field] for one in rounds for s in one["samples"][mode])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cells", type=int, default=6, help="cells per mode per process")
    args = parser.parse_args()
    rounds: list[dict[str, Any]] = []
    loads: list[float] = []
    for _ in range(args.rounds):
        rounds.append(_round(args.cells))
        loads.append(os.getloadavg()[0])
    rows = [
        {
            "mode": mode,
            "wall_us_per_call": round(_median(rounds, mode, 0), 1),
            "cpu_us_per_call": round(_median(rounds, mode, 1), 1),
            "wall_vs_loop": round(_paired(rounds, mode, "loop", 0), 3),
            "cpu_vs_loop": round(_paired(rounds, mode, "loop", 1), 3),
            "wall_vs_guest": round(_paired(rounds, mode, "guest", 0), 3),
            "cpu_vs_guest": round(_paired(rounds, mode, "guest", 1), 3),
        }
        for mode in MODES
    ]
    pages = statistics.median(one["pages"] for one in rounds)
    dirty = statistics.median(one["dirty"] for one in rounds)
    soft_dirty = all(one["soft_dirty"] for one in rounds)
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "rounds": args.rounds,
        "cells": args.cells,
        "calls": CALLS,
        "pages_per_point": pages,
        "pages_written_per_segment": dirty,
        "soft_dirty_bits_work": soft_dirty,
        "load_average": [round(load, 2) for load in loads],
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "inline_segments.json").write_text(
        json.dumps({"meta": meta, "rows": rows}, indent=2)
    )
    lines = [
        "| mode | wall µs/call | CPU µs/call | wall ÷ loop | CPU ÷ loop "
        "| wall ÷ guest | CPU ÷ guest |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        *(
            f"| {r['mode']} | {r['wall_us_per_call']} | {r['cpu_us_per_call']} | "
            f"{r['wall_vs_loop']} | {r['cpu_vs_loop']} | {r['wall_vs_guest']} | "
            f"{r['cpu_vs_guest']} |"
            for r in rows
        ),
        "",
        f"{CALLS} sequential echo calls per cell; {args.rounds} processes × {args.cells} cells "
        f"per mode, alternated; medians, ratios paired cell by cell. A rollback point copies "
        f"{pages:.0f} pages of 4 KiB ({pages * 4 / 1024:.2f} MiB); a segment writes "
        f"{dirty:.0f} by soft-dirty bits, which "
        f"{'work' if soft_dirty else 'never set on this kernel (a lower bound then)'}. "
        "Load average per round: "
        f"{', '.join(str(round(load, 2)) for load in loads)}. {meta['date']}.",
    ]
    (RESULTS / "inline_segments.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
