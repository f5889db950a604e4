"""`sessions_search` visibility: filtered after the store's search (before issue 36) or inside
its query (now), on SQLite (FTS5) and PostgreSQL, in alternated rounds (a script).

Run: `scripts/pg-test-env .venv/bin/python bench/compare_sessions_search.py` (SQLite alone
without the DSN). Seeds 100 sessions of 100 messages (`bench_sessions.py`'s corpus); each round
times both ways once, in turn, for a caller that sees every session and one that sees only
itself; prints the medians and their ratio and writes `bench/results/sessions_search_filter.*`.
"""

from __future__ import annotations

import asyncio
import functools
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from _common import machine_meta, write_results
from bench_sessions import MESSAGES, SESSIONS, _entry  # pyright: ignore[reportPrivateUsage]
from clawcell.store import PostgresStore, SQLiteStore, TranscriptSearch

ROUNDS = 15
LIMIT = 20
TOKENS = ["quokka", "canary"]


async def _after(store: TranscriptSearch, visible: set[str]) -> int:
    found = await store.search_transcripts(TOKENS, limit=LIMIT * 4 + 20)
    return len([h for h in found.hits if h.session_id in visible][:LIMIT])


async def _inside(store: SQLiteStore | PostgresStore, visible: set[str]) -> int:
    shown = [info.session_id for info in await store.list_sessions()]
    chosen = [s for s in shown if s in visible]
    found = await store.search_transcripts(TOKENS, limit=LIMIT, sessions=chosen)
    return len(found.hits)


async def _time(call: Callable[[], Awaitable[int]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


async def _measure(name: str, store: SQLiteStore | PostgresStore) -> list[tuple[str, float, float]]:
    for session in range(SESSIONS):
        await store.append_transcript(
            f"s{session:03d}", [_entry(n, session) for n in range(MESSAGES)]
        )
    await store.search_transcripts(["zebra"], limit=1)  # SQLite builds its index here
    rows: list[tuple[str, float, float]] = []
    for label, visible in (
        ("sees all 100 sessions", {f"s{n:03d}" for n in range(SESSIONS)}),
        ("sees only itself", {"s000"}),
    ):
        before: list[float] = []
        now: list[float] = []
        for _ in range(ROUNDS):
            before.append(await _time(functools.partial(_after, store, visible)))
            now.append(await _time(functools.partial(_inside, store, visible)))
        rows.append((f"{name}, {label}", statistics.median(before), statistics.median(now)))
    await store.close()
    return rows


async def _all() -> list[tuple[str, float, float]]:
    with tempfile.TemporaryDirectory() as scratch:
        rows = await _measure("SQLite", SQLiteStore(Path(scratch) / "s.db"))
    dsn = os.environ.get("CLAWCELL_TEST_POSTGRES_DSN")
    if dsn:
        schema = f"bench_{uuid.uuid4().hex[:12]}"
        rows += await _measure("PostgreSQL", PostgresStore(dsn, schema=schema))
    return rows


def main() -> None:
    """Measure, print the table and write the result files."""
    rows = asyncio.run(_all())
    lines = [
        "| backend, caller | filter after, median ms | filter in query, median ms | ratio |",
        "| --- | ---: | ---: | ---: |",
    ]
    lines += [f"| {n} | {a:.2f} | {b:.2f} | {b / a:.2f}× |" for n, a, b in rows]
    table = "\n".join(lines)
    print(table)
    meta = machine_meta(messages=SESSIONS * MESSAGES, rounds=ROUNDS, limit=LIMIT)
    data = {
        "meta": meta,
        "rows": [
            {"case": n, "filter_after_ms": round(a, 3), "filter_in_query_ms": round(b, 3)}
            for n, a, b in rows
        ],
    }
    note = (
        f"{SESSIONS * MESSAGES:,} messages in {SESSIONS} sessions, query `quokka canary`, "
        f"limit {LIMIT}; medians of {ROUNDS} alternated rounds at a 1-minute load average of "
        f"{meta['load_average_1m']} on {meta['cpus']} shared cores."
    )
    write_results(
        "sessions_search_filter",
        data,
        f"# `sessions_search`: visibility filtered after or in the query\n\n{note}\n\n{table}\n",
    )


if __name__ == "__main__":
    main()
