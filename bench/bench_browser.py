"""Start and snapshot time of the `browser` tool on a mid-sized page (a script).

Run: `.venv/bin/python bench/bench_browser.py`. Serves a page of about 1,600 elements
(headings, paragraphs, links, a form) on loopback, calls the tool through a `Catalog`
(contracts checked), prints a table and writes `bench/results/browser.json` and `.md`.
Cold start is a new tool's first `open` (Chromium launch, context, guard proxy, page load);
a new session is another session's first `open` while Chromium runs.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from _common import machine_meta, median_table, serve_html, write_results
from clawcell.catalog import Catalog, call_session
from clawcell.tools import browser
from clawcell.tools._browser._browser import BrowserPool

COLD_ROUNDS = 3
ROUNDS = 7
PAGE = (
    "<html><head><title>Bench</title></head><body><main>"
    + "".join(
        f"<section><h2>Section {n}</h2><p>Text about item {n} <a href='/{n}'>link {n}</a>.</p>"
        f"<label>Field {n} <input name='f{n}'></label></section>"
        for n in range(300)
    )
    + "<form><button>Send</button></form></main></body></html>"
).encode()


async def _ms(action: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await action()
    return (time.perf_counter() - started) * 1000


async def _measure(url: str) -> tuple[list[tuple[str, float]], dict[str, int]]:
    cold: list[float] = []
    for _ in range(COLD_ROUNDS):
        fresh = browser(allow_loopback_for_tests=True)
        first = Catalog([fresh])
        started = time.perf_counter()
        await first.call("browser", {"action": "open", "url": url})
        cold.append((time.perf_counter() - started) * 1000)
        assert isinstance(fresh.execute, BrowserPool)
        await fresh.execute.aclose()
    tool = browser(allow_loopback_for_tests=True)
    catalog = Catalog([tool])
    await catalog.call("browser", {"action": "open", "url": url})
    sessions: list[float] = []
    for n in range(ROUNDS):

        async def other(n: int = n) -> Any:
            call_session.set(f"bench-{n}")
            return await catalog.call("browser", {"action": "open", "url": url})

        sessions.append(await _ms(lambda: asyncio.create_task(other())))
    snap: dict[str, Any] = {}

    async def snapshot() -> None:
        snap.update(await catalog.call("browser", {"action": "snapshot"}))

    snapshots = [await _ms(snapshot) for _ in range(ROUNDS)]
    texts = [await _ms(lambda: catalog.call("browser", {"action": "text"})) for _ in range(ROUNDS)]
    navigations = [
        await _ms(lambda: catalog.call("browser", {"action": "navigate", "url": url}))
        for _ in range(ROUNDS)
    ]
    assert isinstance(tool.execute, BrowserPool)
    await tool.execute.aclose()
    rows = [
        ("cold start: first `open` of a new tool", statistics.median(cold)),
        ("new session: first `open` while Chromium runs", statistics.median(sessions)),
        ("`snapshot` of the whole page", statistics.median(snapshots)),
        ("`text` of the page's <main>", statistics.median(texts)),
        ("`navigate` to the page again", statistics.median(navigations)),
    ]
    size = {"snapshotChars": int(snap["totalChars"]), "pageBytes": len(PAGE)}
    return rows, size


def main() -> None:
    """Measure, print the table and write the result files."""
    with serve_html(PAGE) as url:
        rows, size = asyncio.run(_measure(url))
    table = median_table(("step", "median ms"), rows, 0)
    print(size)
    meta = machine_meta(cold_rounds=COLD_ROUNDS, rounds=ROUNDS, **size)
    data = {"meta": meta, "rows": [{"step": name, "median_ms": round(v, 1)} for name, v in rows]}
    note = (
        f"Medians ({COLD_ROUNDS} cold starts, {ROUNDS} of the rest) at a 1-minute load average of "
        f"{meta['load_average_1m']} on {meta['cpus']} shared cores; the page is "
        f"{size['pageBytes']:,} bytes and its snapshot {size['snapshotChars']:,} characters.\n"
    )
    write_results("browser", data, f"# `browser` tool benchmark\n\n{note}\n{table}\n")


if __name__ == "__main__":
    main()
