"""Time the agent loop on top of code mode, with a zero-latency `ScriptedModel`.

Run: `.venv/bin/python bench/bench_agent.py`. Prints medians and writes
`bench/results/agent.json`. A script, not a test: timings never gate anything.

* **loop overhead per model turn**: a turn of `[exec("return 1"), "done"]` (two model turns,
  one cell) minus the same cell run directly with `CodeMode.exec` on a warm session, halved.
  Each sample is a fresh session whose `CodeMode` was warmed first (the two are timed in
  alternating order), so the transcript is the turn's own; a second figure measures the
  turns after the 40th of one session (transcripts of 160 entries and more).
* **first `cell_output` latency**: from the `on_update` callback that reports a guest output
  item to the consumer receiving the `cell_output` event (the agent's own hop), and, as an
  upper bound from the guest's side, from a tool the cell awaits just before `text()` to that
  event (this one includes the return into the guest).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any, cast

import clawcell
from clawcell.agent import Agent, CellOutput, ScriptedModel, exec_call

RESULTS = Path(__file__).resolve().parent / "results"
SAMPLES = 200
TARGET_OVERHEAD_MS = 1.0
TARGET_FIRST_EVENT_MS = 2.0


async def _turn(agent: Agent, session_id: str) -> float:
    start = time.perf_counter()
    async for _ in agent.run(session_id, "go"):
        pass
    return (time.perf_counter() - start) * 1000


async def _cell(mode: clawcell.CodeMode) -> float:
    start = time.perf_counter()
    await mode.exec("return 1")
    return (time.perf_counter() - start) * 1000


async def overhead() -> dict[str, float]:
    """Median turn, cell and per-model-turn overhead in milliseconds."""
    model = ScriptedModel([exec_call("return 1"), "done"] * (SAMPLES + 60))
    turns: list[float] = []
    cells: list[float] = []
    async with Agent(model=model) as agent:
        for n in range(SAMPLES):
            mode = agent.mode(f"s{n}")
            for _ in range(3):  # warm this session's guest pool and the worker thread
                await mode.exec("return 1")
            if n % 2:  # alternate the order, so neither side always runs warmer
                cells.append(await _cell(mode))
                turns.append(await _turn(agent, f"s{n}"))
            else:
                turns.append(await _turn(agent, f"s{n}"))
                cells.append(await _cell(mode))
        long_turns = [await _turn(agent, "long") for _ in range(50)]
    turn, cell = statistics.median(turns), statistics.median(cells)
    return {
        "turn_ms": turn,
        "cell_ms": cell,
        "overhead_per_model_turn_ms": (turn - cell) / 2,
        "turn_50_of_a_session_ms": long_turns[-1],
        "overhead_per_model_turn_at_turn_50_ms": (statistics.median(long_turns[-10:]) - cell) / 2,
    }


async def first_event() -> dict[str, float]:
    """Median latency to the first `cell_output` event, in milliseconds."""
    marks: list[float] = []

    async def mark(_: dict[str, Any]) -> None:
        marks.append(time.perf_counter())

    tools = [clawcell.Tool(name="mark", execute=mark)]
    code = "await mark(); text('x'); return 1"
    model = ScriptedModel([exec_call(code), "done"] * SAMPLES)
    from_callback: list[float] = []
    from_guest: list[float] = []
    async with Agent(model=model, tools=tools) as agent:
        for n in range(SAMPLES):
            mode = agent.mode(f"s{n}")
            await mode.exec("return 1")
            callbacks = _stamp_updates(mode)
            async for event in agent.run(f"s{n}", "go"):
                if isinstance(event, CellOutput):
                    now = time.perf_counter()
                    from_callback.append((now - callbacks[0]) * 1000)
                    from_guest.append((now - marks[-1]) * 1000)
    return {
        "on_update_to_event_ms": statistics.median(from_callback),
        "guest_tool_before_text_to_event_ms": statistics.median(from_guest),
    }


def _stamp_updates(mode: clawcell.CodeMode) -> list[float]:
    """Record when `mode` reports each output item, by wrapping its `call_tool` (bench only)."""
    stamps: list[float] = []
    call_tool = mode.call_tool

    async def stamped(name: str, arguments: Any, *, on_update: Any = None) -> dict[str, Any]:
        def callback(update: clawcell.CellUpdate) -> None:
            if update.kind == "output":
                stamps.append(time.perf_counter())
            on_update(update)

        return await call_tool(name, arguments, on_update=callback)

    cast(Any, mode).call_tool = stamped
    return stamps


async def main() -> None:
    loop = await overhead()
    latency = await first_event()
    rows = [
        ("turn: 2 model turns + 1 cell", loop["turn_ms"], None),
        ("the cell alone (CodeMode.exec)", loop["cell_ms"], None),
        ("loop overhead per model turn", loop["overhead_per_model_turn_ms"], TARGET_OVERHEAD_MS),
        (
            "  same, after the 40th turn of a session",
            loop["overhead_per_model_turn_at_turn_50_ms"],
            TARGET_OVERHEAD_MS,
        ),
        ("on_update → cell_output event", latency["on_update_to_event_ms"], TARGET_FIRST_EVENT_MS),
        (
            "guest (tool before text) → cell_output",
            latency["guest_tool_before_text_to_event_ms"],
            TARGET_FIRST_EVENT_MS,
        ),
    ]
    print(f"{'case':<42} {'median ms':>10} {'target':>8}")
    for name, value, target in rows:
        print(f"{name:<42} {value:>10.3f} {'' if target is None else f'≤ {target}':>8}")
    RESULTS.mkdir(exist_ok=True)
    result = {"samples": SAMPLES, **loop, **latency}
    (RESULTS / "agent.json").write_text(json.dumps(result, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    asyncio.run(main())
