"""Streaming in a real browser: the Control UI in Debian's Chromium through Playwright.

Run: `.venv/bin/python bench/bench_ui_browser.py [--sizes 10000,100000,1000000] [--rounds 3]`.
A `ScriptedModel` agent streams a Markdown reply of each size word by word (as a fast model
does); for each size it prints the medians of:

* `server`: POST → last SSE byte read by an HTTP client (the server's own streaming time),
* `browser`: click Send → the final rendered reply in the page (`body[data-turn=done]`),
* `longest task`: the longest main-thread task Chromium reported (`longtask`) meanwhile,
* `first event`: click Send → the first change the stream makes to the transcript,

and a 5,000-message session's first paint (navigation → `first-contentful-paint`). Results
go to `bench/results/ui_browser.json` (the test-client figures stay in `bench_ui.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import platform
import shutil
import socket
import statistics
import sys
import threading
import time
from collections.abc import AsyncGenerator, Generator, Sequence
from pathlib import Path
from typing import Any, cast

import httpx
import uvicorn
from playwright.sync_api import Page, sync_playwright

from clawcell.agent import Agent, ScriptedModel
from clawcell.store import MemoryStore
from clawcell.ui import UiSettings, create_app
from clawcell.ui._security import Secrets

RESULTS = Path(__file__).resolve().parent / "results"
TOKEN = "bench-token-0123456789"
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def reply_of(size: int) -> str:
    """Deterministic Markdown of about `size` characters: paragraphs, a list, code."""
    words = [
        "the",
        "cell",
        "read",
        "the",
        "file",
        "and",
        "counted",
        "every",
        "row",
        "of",
        "the",
        "report",
        "twice",
    ]
    parts: list[str] = []
    total, n = 0, 0
    while total < size:
        n += 1
        if n % 7 == 0:
            block = f"```python\ndef step_{n}(rows):\n    return sum(rows) * {n}\n```\n\n"
        elif n % 5 == 0:
            block = "".join(f"- item {n}.{i} {words[i % len(words)]}\n" for i in range(4)) + "\n"
        else:
            sentence = " ".join(words[(n + i) % len(words)] for i in range(60))
            block = f"Paragraph {n}: {sentence}.\n\n"
        parts.append(block)
        total += len(block)
    return "".join(parts)[:size]


@contextlib.asynccontextmanager
async def _serve(agent: Agent) -> AsyncGenerator[str]:
    try:
        from clawcell.ui import serve_ui  # the UI and its canvas listener
    except ImportError:  # a tree from before the canvas listener (for "before" figures)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        settings = UiSettings(token=TOKEN, port=sock.getsockname()[1])
        server = uvicorn.Server(uvicorn.Config(create_app(agent, settings), log_level="warning"))
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{settings.port}"
        finally:
            server.should_exit = True
            await task
        return
    async with serve_ui(agent, UiSettings(token=TOKEN, port=0)) as servers:
        yield servers.base_url


@contextlib.contextmanager
def running(turns: Sequence[str], prefill: list[dict[str, Any]] | None = None) -> Generator[str]:
    """A UI (and its canvas listener) over a scripted agent, in a thread; yields its base URL."""
    ready: asyncio.Future[Any] | None = None
    holder: dict[str, Any] = {}
    started = threading.Event()

    async def main() -> None:
        nonlocal ready
        async with Agent(model=ScriptedModel(list(turns)), store=MemoryStore()) as agent:
            if prefill:
                await agent.store.append_transcript("long", prefill)
            stop = asyncio.Event()
            holder["stop"], holder["loop"] = stop, asyncio.get_running_loop()
            async with _serve(agent) as base:
                holder["base"] = base
                started.set()
                await stop.wait()

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    started.wait(120)
    try:
        yield holder["base"]
    finally:
        holder["loop"].call_soon_threadsafe(holder["stop"].set)
        thread.join(60)


def server_seconds(base: str) -> float:
    """POST a turn and read its whole event stream (no browser)."""
    headers = {"x-csrf-token": Secrets(token=TOKEN).csrf, "authorization": f"Bearer {TOKEN}"}
    start = time.perf_counter()
    with (
        httpx.Client(timeout=600) as client,
        client.stream(
            "POST", f"{base}/api/sessions/s/turns", json={"text": "go"}, headers=headers
        ) as response,
    ):
        for _ in response.iter_bytes():
            pass
    return time.perf_counter() - start


_OBSERVE = """() => {
  window.__longest = 0; window.__first = null;
  new PerformanceObserver((list) => { for (const e of list.getEntries())
    window.__longest = Math.max(window.__longest, e.duration); }).observe({type: "longtask"});
  new MutationObserver(() => { if (window.__first === null) window.__first = performance.now(); })
    .observe(document.getElementById("transcript"), {childList: true, subtree: true});
}"""
_SEND = """() => { window.__sent = performance.now();
  document.querySelector("#composer button").click(); }"""


def browser_run(page: Page, base: str, trace: Path | None = None) -> dict[str, float]:
    page.goto(f"{base}/?token={TOKEN}&session=b")
    page.wait_for_selector("body[data-ready=true]")
    page.evaluate(_OBSERVE)
    page.fill("#composer textarea", "go")
    if trace is not None:
        assert page.context.browser is not None
        page.context.browser.start_tracing(page=page, path=str(trace), categories=[_TIMELINE])
    start = time.perf_counter()
    page.evaluate(_SEND)
    page.wait_for_selector("body[data-turn=done]", timeout=3_600_000)
    elapsed = time.perf_counter() - start
    page.wait_for_timeout(500)  # what the last frame set off (layout, paint) is measured too
    figures = page.evaluate("({longest: window.__longest, first: window.__first - window.__sent})")
    run = {"browser": elapsed, "longest": figures["longest"], "first": figures["first"]}
    if trace is not None:
        assert page.context.browser is not None
        page.context.browser.stop_tracing()
        run["longest cpu"] = longest_task_cpu_ms(trace)
        trace.unlink()
    return run


_TIMELINE = "disabled-by-default-devtools.timeline"


def longest_task_cpu_ms(trace: Path) -> float:
    """The longest main-thread task of the page's renderer in a Chromium trace, in CPU time
    (`tdur`): unlike wall time, it does not grow while a loaded machine deschedules the
    renderer, so runs under different load compare."""
    loaded: Any = json.loads(trace.read_text())  # Chromium's `{"traceEvents": [...]}`
    events = cast(list[dict[str, Any]], loaded["traceEvents"])
    mains = {
        (e["pid"], e["tid"])
        for e in events
        if e["name"] == "thread_name" and e["args"].get("name") == "CrRendererMain"
    }
    busy: dict[tuple[int, int], int] = {}
    longest: dict[tuple[int, int], int] = {}
    for e in events:
        key = (e.get("pid", 0), e.get("tid", 0))
        if e["name"] == "RunTask" and key in mains:
            busy[key] = busy.get(key, 0) + int(e.get("dur", 0))
            longest[key] = max(longest.get(key, 0), int(e.get("tdur", 0)))
    page_thread = max(busy, key=busy.__getitem__)  # the renderer that did the work
    return longest[page_thread] / 1000


def long_session_paint(page: Page, messages: int) -> float:
    entries: list[dict[str, Any]] = []
    for i in range(messages // 2):
        entries.append({"role": "user", "content": [{"type": "text", "text": f"q {i}"}]})
        text = f"Answer **{i}**: " + reply_of(200)
        entries.append({"role": "assistant", "content": [{"type": "text", "text": text}]})
    with running([], prefill=entries) as base:
        samples: list[float] = []
        page.goto(f"{base}/?token={TOKEN}&session=long")
        for _ in range(3):
            page.goto(f"{base}/?session=long")
            paint = -1.0
            for _ in range(100):  # on a loaded machine the entry can come after `load`
                paint = page.evaluate(
                    "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1"
                )
                if paint >= 0:
                    break
                time.sleep(0.1)
            samples.append(paint / 1000)
        return statistics.median(samples)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--label", default="after")
    parser.add_argument("--no-paint", action="store_true", help="skip the 5,000-message page")
    parser.add_argument(
        "--trace", action="store_true", help="also the longest task in CPU time (a trace)"
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    executable = shutil.which("chromium")
    assert executable, "Debian's chromium is missing: run scripts/ensure-chromium.sh"
    rows: dict[str, dict[str, float]] = {}
    RESULTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for size in sizes:
            rounds = 1 if size >= 1_000_000 else args.rounds
            reply = reply_of(size)
            server: list[float] = []
            runs: list[dict[str, float]] = []
            for _ in range(rounds):
                with running([reply]) as base:
                    server.append(server_seconds(base))
                with running([reply]) as base:
                    trace = RESULTS / "ui_browser_trace.json" if args.trace else None
                    runs.append(browser_run(page, base, trace))
            row = {
                "server s": statistics.median(server),
                "browser s": statistics.median(r["browser"] for r in runs),
                "longest task ms": statistics.median(r["longest"] for r in runs),
                "send to first event ms": statistics.median(r["first"] for r in runs),
                **(
                    {"longest task cpu ms": statistics.median(r["longest cpu"] for r in runs)}
                    if args.trace
                    else {}
                ),
                "rounds": rounds,
            }
            rows[f"{size // 1000} KB"] = row
            print(f"{size // 1000:>5} KB  " + "  ".join(f"{k} {v:.3f}" for k, v in row.items()))
        paint = None if args.no_paint else long_session_paint(page, 5000)
        if paint is not None:
            print(f"5,000-message session first paint: {paint:.3f} s")
        browser.close()
    out = RESULTS / "ui_browser.json"
    previous: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    previous[args.label] = {
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "streamed reply": rows,
        "5000-message first paint s": paint,
    }
    out.write_text(json.dumps(previous, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
