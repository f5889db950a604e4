"""Per-call cost of an MCP tool call from a cell over stdio, against the same call made
directly with the SDK (target: at most 1.3x).

Both sides talk to the same server (the test server's `echo` tool, a fresh process per side).
A cell makes `CALLS` sequential calls; one round's per-call time is its wall time divided by
`CALLS`, so the cell's own start-up is included and amortised. Prints medians and writes
`bench/results/mcp.json`.
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

from clawcell import CodeMode, Limits
from clawcell.mcp import StdioServer
from mcp import Client

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "mcp.json"
CALLS = 200
ROUNDS = 7
ARGS = ["-m", "tests.mcp.servers.kitchen"]
CELL = f"""
for (let i = 0; i < {CALLS}; i++) await MCP.kitchen.echo({{ value: "x" + i }});
return {CALLS};
"""


async def direct() -> list[float]:
    params = StdioServerParameters(command=sys.executable, args=ARGS, cwd=str(ROOT))
    rounds: list[float] = []
    with open("/dev/null", "w", encoding="utf-8") as sink:
        async with Client(stdio_client(params, errlog=sink), cache=None) as client:
            await client.list_tools()
            for _ in range(ROUNDS):
                start = time.perf_counter()
                for i in range(CALLS):
                    await client.call_tool("echo", {"value": f"x{i}"})
                rounds.append((time.perf_counter() - start) / CALLS)
    return rounds


async def from_cell() -> list[float]:
    servers = {"kitchen": StdioServer(command=sys.executable, args=ARGS, cwd=str(ROOT))}
    rounds: list[float] = []
    async with CodeMode(mcp_servers=servers, limits=Limits(timeout_ms=60_000)) as mode:
        await mode.exec("return 0;")  # connect and list outside the measurement
        for _ in range(ROUNDS):
            start = time.perf_counter()
            envelope = await mode.exec(CELL)
            rounds.append((time.perf_counter() - start) / CALLS)
            assert envelope["status"] == "completed", envelope
    return rounds


def main() -> None:
    sdk = asyncio.run(direct())
    cell = asyncio.run(from_cell())
    report: dict[str, Any] = {
        "calls_per_round": CALLS,
        "rounds": ROUNDS,
        "direct_sdk_median_us": round(statistics.median(sdk) * 1e6, 1),
        "cell_median_us": round(statistics.median(cell) * 1e6, 1),
    }
    report["ratio"] = round(report["cell_median_us"] / report["direct_sdk_median_us"], 3)
    report["target_ratio"] = 1.3
    print("| path | median per call |")
    print("|---|---|")
    print(f"| direct SDK `call_tool` | {report['direct_sdk_median_us']} µs |")
    print(f"| cell `MCP.kitchen.echo()` | {report['cell_median_us']} µs |")
    print(f"| ratio | {report['ratio']}x (target ≤ 1.3x) |")
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
