"""Server-owned turns in a real browser: a reload resuming the live stream, and Stop.

Run: `.venv/bin/python bench/bench_ui_turns.py [--rounds 20]`. A `ScriptedModel` agent runs a
cell that writes a line and then waits on a tool until it is cancelled; Chromium (Playwright)
drives the chat page. Per round:

* `reload → live`: `page.reload()` → the running turn's cell output is on the page again and
  the page follows the turn (`body[data-turn=running]`: the backlog replayed over the live
  stream),
* `Stop → cell cancelled`: the Stop click → the waiting tool sees its cancellation (in the
  server's process, same clock),
* `Stop → page says stopped`: the Stop click → "■ stopped" on the page.

Prints p50 / p99 / max per measure with the load average, and writes
`bench/results/ui_turns.json`. Rounds alternate nothing (one configuration); under load the
spread is the figure to read.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import json
import os
import platform
import shutil
import statistics
import threading
import time
from collections.abc import AsyncGenerator, Generator
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from clawcell import Limits, Tool
from clawcell.agent import Agent, ScriptedModel, exec_call
from clawcell.store import MemoryStore
from clawcell.ui import UiSettings, serve_ui

RESULTS = Path(__file__).resolve().parent / "results"
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
CANCELLED: list[float] = []
"""`perf_counter()` when the held tool saw its cancellation (one per round)."""


async def _hold(_: dict[str, Any]) -> str:
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        CANCELLED.append(time.perf_counter())
        raise
    return "never"


@contextlib.asynccontextmanager
async def _agent(rounds: int) -> AsyncGenerator[Agent]:
    code = exec_call('text("holding on"); return await hold();', title="held")
    model = ScriptedModel([code] * rounds)
    async with Agent(model=model, tools=[Tool(name="hold", execute=_hold)], store=MemoryStore(),
                     limits=Limits(timeout_ms=600_000)) as agent:  # fmt: skip
        yield agent


@contextlib.contextmanager
def serving(rounds: int) -> Generator[str]:
    """The UI's login URL, served in a thread."""
    started: concurrent.futures.Future[tuple[str, asyncio.AbstractEventLoop, asyncio.Event]] = (
        concurrent.futures.Future()
    )

    async def main() -> None:
        settings = UiSettings(port=0)
        async with _agent(rounds) as agent, serve_ui(agent, settings) as ui:
            stop = asyncio.Event()
            started.set_result((f"{ui.base_url}/?token={ui.settings.token}",
                                asyncio.get_running_loop(), stop))  # fmt: skip
            await stop.wait()

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    url, loop, stop = started.result(timeout=120)
    try:
        yield url
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=60)


def measure(rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"reload → live": [], "Stop → cell cancelled": [],
                                     "Stop → page says stopped": []}  # fmt: skip
    executable = shutil.which("chromium")
    assert executable, "Debian's chromium is missing: run scripts/ensure-chromium.sh"
    with serving(rounds) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        page.goto(url)
        for _ in range(rounds):
            page.wait_for_selector("body[data-ready=true]")
            page.fill("#composer textarea", "hold on")
            page.press("#composer textarea", "Enter")
            held = page.locator(".cell .out-text", has_text="holding on").last
            held.wait_for()
            start = time.perf_counter()
            page.reload()
            page.wait_for_selector("body[data-turn=running]")
            page.locator(".cell .out-text", has_text="holding on").last.wait_for()
            times["reload → live"].append(time.perf_counter() - start)
            stopped = page.locator(".turn-stopped").count()
            cancelled = len(CANCELLED)
            start = time.perf_counter()
            page.get_by_role("button", name="Stop").click()
            page.locator(".turn-stopped").nth(stopped).wait_for()
            times["Stop → page says stopped"].append(time.perf_counter() - start)
            while len(CANCELLED) == cancelled:  # the server's side of the same stop
                page.wait_for_timeout(5)
            times["Stop → cell cancelled"].append(CANCELLED[-1] - start)
            page.wait_for_selector("body[data-turn=done]")
        browser.close()
    return times


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description="Server-owned turns: reload and Stop timings.")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    load_before = os.getloadavg()
    times = measure(args.rounds)
    load_after = os.getloadavg()
    rows = {
        name: {"p50_ms": statistics.median(v) * 1000, "p99_ms": _quantile(v, 0.99) * 1000,
               "max_ms": max(v) * 1000, "n": len(v)}
        for name, v in times.items()
    }  # fmt: skip
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min); "
          f"{os.cpu_count()} cores")  # fmt: skip
    print(f"{'measure':<28}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}{'n':>5}")
    for name, row in rows.items():
        print(f"{name:<28}{row['p50_ms']:>10.1f}{row['p99_ms']:>10.1f}{row['max_ms']:>10.1f}"
              f"{row['n']:>5}")  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    result = {"rounds": args.rounds, "load_average": [load_before, load_after],
              "machine": platform.platform(), "results": rows}  # fmt: skip
    (RESULTS / "ui_turns.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
