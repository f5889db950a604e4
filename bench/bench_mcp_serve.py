"""What `clawcell mcp serve` adds: an `exec` round trip from the SDK's client over stdio,
against the same cell run with `CodeMode.exec` in-process, and the server's start-up (spawn to
`tools/list` answered). Prints medians and writes `bench/results/mcp_serve.json`.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters, stdio_client

from clawcell import CodeMode, Tool
from mcp import Client

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "mcp_serve.json"
ROUNDS = 30
STARTS = 5
CELL = "return await double({ n: 21 });"


async def _double(params: dict[str, Any]) -> Any:
    return {"twice": params["n"] * 2}  # the same tool as `tests.cli.test_main:TOOLS`


TOOLS = [Tool(name="double", execute=_double)]
ARGS = [
    "-m",
    "clawcell",
    "mcp",
    "serve",
    "--store",
    ":memory:",
    "--tools",
    "tests.cli.test_main:TOOLS",
]


def _params() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=ARGS, cwd=str(ROOT))


async def served() -> list[float]:
    rounds: list[float] = []
    async with Client(stdio_client(_params()), cache=None) as client:
        await client.call_tool("exec", {"code": CELL})  # warm the guest pool
        for _ in range(ROUNDS):
            start = time.perf_counter()
            await client.call_tool("exec", {"code": CELL})
            rounds.append(time.perf_counter() - start)
    return rounds


async def in_process() -> list[float]:
    rounds: list[float] = []
    async with CodeMode(TOOLS) as mode:
        await mode.exec(CELL)
        for _ in range(ROUNDS):
            start = time.perf_counter()
            await mode.exec(CELL)
            rounds.append(time.perf_counter() - start)
    return rounds


async def start_up() -> list[float]:
    rounds: list[float] = []
    for _ in range(STARTS):
        start = time.perf_counter()
        async with Client(stdio_client(_params()), cache=None) as client:
            await client.list_tools()
            rounds.append(time.perf_counter() - start)
    return rounds


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def main() -> None:
    report: dict[str, Any] = {
        "rounds": ROUNDS,
        "exec_over_stdio_median_ms": _ms(asyncio.run(served())),
        "exec_in_process_median_ms": _ms(asyncio.run(in_process())),
        "start_to_tools_list_median_ms": _ms(asyncio.run(start_up())),
    }
    print("| path | median |")
    print("|---|---|")
    print(f"| `exec` from the SDK client over stdio | {report['exec_over_stdio_median_ms']} ms |")
    print(f"| `CodeMode.exec` in process | {report['exec_in_process_median_ms']} ms |")
    print(f"| server start to `tools/list` | {report['start_to_tools_list_median_ms']} ms |")
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
