"""`clawcell mcp serve --http` against FastMCP's code-mode transform, side by side.

A script, not a test. Both servers offer the same three tools (`_mcp_tools.py`,
`_fastmcp_server.py`); a client sends one cell (clawcell: JavaScript to `exec`; FastMCP:
Python for Monty to `execute`) that calls all three and returns their results. N concurrent
sessions of the official `mcp` client (this process) each send their share of `--calls`
requests one after another, all sessions starting together after one untimed call each.
Per server and N: requests per second, the latency median and p99, and the server's CPU per
request (its process tree's user + system time from `/proc`). Rounds alternate the servers
in a shuffled order, each round starting every server afresh; printed and written are the
medians over rounds and the clawcell / FastMCP ratios paired round by round, with the load
average after each round, to `bench/results/fastmcp_comparison.{json,md}`.

FastMCP runs in its own virtual environment, never clawcell's:

    python3.11 -m venv /tmp/fastmcp-venv
    /tmp/fastmcp-venv/bin/pip install "fastmcp[code-mode]==4.2.3"
    .venv/bin/python bench/compare_fastmcp.py --fastmcp-python /tmp/fastmcp-venv/bin/python

`--baseline SRC` adds a server: `clawcell mcp serve` from another tree's `src/`, run by
`--baseline-python` (default: this one) so that it can have that tree's own dependencies
(uvicorn picks httptools, and clawcell uvloop, whenever they import). Each `--variant
NAME=MODULES` adds this tree's server with those installed modules made unimportable
(`_without.py`): `--variant h11=httptools,uvloop` measures it without either.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

import mcp
from _common import cpu_model

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
TOKEN = "bench-token-0123456789"
CELL_JS = """const s = await add({ a: 2, b: 3 });
const u = await upper({ text: "hi" });
const l = await lookup({ key: "beta" });
return { sum: s.sum, text: u.text, value: l.value };"""
CELL_PY = """s = await call_tool("add", {"a": 2, "b": 3})
u = await call_tool("upper", {"text": "hi"})
l = await call_tool("lookup", {"key": "beta"})
return {"sum": s["sum"], "text": u["text"], "value": l["value"]}"""


@dataclass(frozen=True, kw_only=True)
class Server:
    name: str
    command: list[str]
    env: dict[str, str]
    tool: str
    code: str
    port: int | None = None
    """Given on the command line (FastMCP); `None`: read from the server's first line."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _clawcell(
    name: str, source: Path | None, *, python: str = sys.executable, without: str = ""
) -> Server:
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # leave the other tree as it is
    launcher = [python, str(ROOT / "bench" / "_without.py"), without] if without else [python, "-m"]
    command = [*launcher, "clawcell", "mcp", "serve", "--http", "--port", "0"]
    command += ["--token", TOKEN, "--store", ":memory:", "--tools", "bench._mcp_tools:TOOLS"]
    return Server(name=name, command=command, env=env, tool="exec", code=CELL_JS)


def _fastmcp(python: str) -> Server:
    port = _free_port()
    command = [python, str(ROOT / "bench" / "_fastmcp_server.py"), str(port)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return Server(name="FastMCP", command=command, env=env, tool="execute", code=CELL_PY,
                  port=port)  # fmt: skip


def _cpu_seconds(root: int) -> float:
    """User + system time of `root` and every process below it."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = (int(fields[11]) + int(fields[12])) / ticks
    total = 0.0
    for pid, seconds in times.items():
        walk = pid
        while walk > 1 and walk != root:
            walk = parents.get(walk, 0)
        if walk == root:
            total += seconds
    return total


@asynccontextmanager
async def _running(server: Server) -> AsyncGenerator[tuple[str, int]]:
    process = subprocess.Popen(
        server.command, cwd=ROOT, env=server.env, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        if server.port is None:
            assert process.stderr is not None
            line = await asyncio.to_thread(process.stderr.readline)
            if not line.startswith("clawcell: MCP endpoint http://"):
                raise RuntimeError(f"{server.name} did not start: {line!r}")
            url = line.split()[-1]
        else:
            url = f"http://127.0.0.1:{server.port}/mcp"
            await _until_listening(server.port, process)
        yield url, process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()


async def _until_listening(port: int, process: subprocess.Popen[str]) -> None:
    for _ in range(600):
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            await asyncio.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after 30 s")


@asynccontextmanager
async def _session(url: str) -> AsyncGenerator[mcp.Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        async with mcp.Client(streamable_http_client(url, http_client=http)) as client:
            yield client
    finally:
        await http.aclose()


async def _call(client: mcp.Client, server: Server) -> None:
    result = await client.call_tool(server.tool, {"code": server.code})
    text = "".join(str(getattr(block, "text", "")) for block in result.content)
    if result.is_error or '"HI"' not in text or '"sum":5' not in text.replace(" ", ""):
        raise RuntimeError(f"{server.name} answered {text[:500]!r}")


async def _load(url: str, server: Server, sessions: int, calls: int) -> tuple[float, list[float]]:
    """Requests per second and every request's latency, `sessions` clients at once."""
    start = asyncio.Event()
    ready = 0
    each = max(1, calls // sessions)
    latencies: list[float] = []

    async def one() -> None:
        nonlocal ready
        async with _session(url) as client:
            await _call(client, server)  # untimed: the session and a warm guest
            ready += 1
            if ready == sessions:
                start.set()
            await start.wait()
            for _ in range(each):
                began = time.perf_counter()
                await _call(client, server)
                latencies.append(time.perf_counter() - began)

    tasks = [asyncio.create_task(one()) for _ in range(sessions)]
    await start.wait()
    began = time.perf_counter()
    await asyncio.gather(*tasks)
    return len(latencies) / (time.perf_counter() - began), latencies


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


async def _round(servers: list[Server], levels: list[int], calls: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for server in random.sample(servers, len(servers)):
        async with _running(server) as (url, pid):
            for sessions in levels:
                cpu = _cpu_seconds(pid)
                rate, latencies = await _load(url, server, sessions, calls)
                used = _cpu_seconds(pid) - cpu
                figures[f"{server.name}|{sessions}"] = {
                    "requests_per_s": rate,
                    "p50_ms": statistics.median(latencies) * 1000,
                    "p99_ms": _p99(latencies) * 1000,
                    "server_cpu_ms_per_request": used * 1000 / (len(latencies) + sessions),
                }
    return figures


def _summary(
    rounds: list[dict[str, Any]], names: list[str], levels: list[int]
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in names:
        for sessions in levels:
            key = f"{name}|{sessions}"
            row: dict[str, Any] = {"server": name, "sessions": sessions}
            for figure in rounds[0][key]:
                row[figure] = statistics.median(r[key][figure] for r in rounds)
            if name != "FastMCP":
                other = f"FastMCP|{sessions}"
                row["rps_vs_fastmcp_paired"] = statistics.median(
                    r[key]["requests_per_s"] / r[other]["requests_per_s"] for r in rounds
                )
                row["p99_vs_fastmcp_paired"] = statistics.median(
                    r[key]["p99_ms"] / r[other]["p99_ms"] for r in rounds
                )
            rows.append(row)
    return rows


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| server | N | requests/s | p50 ms | p99 ms | server CPU ms/request "
        "| requests/s vs FastMCP (paired) | p99 vs FastMCP (paired) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        ratio = r.get("rps_vs_fastmcp_paired")
        p99 = r.get("p99_vs_fastmcp_paired")
        lines.append(
            f"| {r['server']} | {r['sessions']} | {r['requests_per_s']:.1f} | {r['p50_ms']:.1f} "
            f"| {r['p99_ms']:.1f} | {r['server_cpu_ms_per_request']:.2f} "
            f"| {'–' if ratio is None else f'{ratio:.2f}×'} "
            f"| {'–' if p99 is None else f'{p99:.2f}×'} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fastmcp-python", required=True, help="python of FastMCP's venv")
    parser.add_argument("--baseline", type=Path, help="another clawcell tree's src/")
    parser.add_argument("--baseline-python", default=sys.executable, help="python for --baseline")
    parser.add_argument(
        "--variant", action="append", default=[], metavar="NAME=MODULES",
        help="this tree's server with MODULES (comma-separated) unimportable",
    )  # fmt: skip
    parser.add_argument("--output", default="fastmcp_comparison", help="results file stem")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sessions", default="1,8,32")
    parser.add_argument("--calls", type=int, default=128, help="timed requests per level")
    args = parser.parse_args()
    levels = [int(n) for n in args.sessions.split(",")]
    servers = [_clawcell("clawcell", None), _fastmcp(args.fastmcp_python)]
    for variant in args.variant:
        label, _, modules = variant.partition("=")
        servers.append(_clawcell(f"clawcell ({label})", None, without=modules))
    if args.baseline is not None:
        servers.append(
            _clawcell("clawcell (baseline)", args.baseline.resolve(), python=args.baseline_python)
        )
    rounds: list[dict[str, Any]] = []
    loads: list[float] = []
    for _ in range(args.rounds):
        rounds.append(asyncio.run(_round(servers, levels, args.calls)))
        loads.append(round(os.getloadavg()[0], 2))
    rows = _summary(rounds, [s.name for s in servers], levels)
    table = _table(rows) + f"\n\nLoad average (1 min) after each round: {loads}\n"
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": commit,
        "rounds": args.rounds,
        "calls_per_level": args.calls,
        "load_after_each_round": loads,
        "cpus": os.cpu_count(),
        "cpu_model": cpu_model(),
        "baseline": None if args.baseline is None else str(args.baseline),
        "baseline_python": args.baseline_python,
        "variants": args.variant,
    }
    RESULTS.mkdir(exist_ok=True)
    payload = {"meta": meta, "rows": rows, "rounds": rounds}
    (RESULTS / f"{args.output}.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / f"{args.output}.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
