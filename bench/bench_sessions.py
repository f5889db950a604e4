"""Latency of `sessions_search` over 10,000 transcript messages, per store backend (a script).

Run: `.venv/bin/python bench/bench_sessions.py` (add PostgreSQL by running it under
`scripts/pg-test-env`, which sets `CLAWCELL_TEST_POSTGRES_DSN`). Seeds 100 sessions of 100
messages, calls the tool through a `Catalog`, prints a table and writes
`bench/results/sessions.json` and `.md`. The first search of a SQLite store builds its FTS5
index; it is reported apart.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import statistics
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clawcell.catalog import Catalog, call_session
from clawcell.store import MemoryStore, PostgresStore, SessionStore, SQLiteStore
from clawcell.tools import sessions

RESULTS = Path(__file__).resolve().parent / "results"
SESSIONS, MESSAGES, ROUNDS = 100, 100, 9
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "deploy",
    "canary",
    "quokka",
    "build",
    "review",
    "merge",
    "ticket",
    "flag",
]


def _entry(n: int, session: int) -> dict[str, Any]:
    words = " ".join(WORDS[(n * 7 + session * 3 + k) % len(WORDS)] for k in range(12))
    text = f"message {n} of session {session}: {words}" + (" zebra" if n == 42 else "")
    role = "user" if n % 2 == 0 else "assistant"
    return {"role": role, "content": [{"type": "text", "text": text}], "timestamp": n}


class _Host:
    def __init__(self, store: SessionStore) -> None:
        self.store = store

    model: Any = None

    def mode(self, session_id: str) -> Any:
        raise NotImplementedError

    def run(self, session_id: str, text: str, *, sender: Mapping[str, Any] | None = None) -> Any:
        raise NotImplementedError

    async def transcript(self, session_id: str) -> list[dict[str, Any]]:
        return await self.store.read_transcript(session_id)

    async def sessions(self) -> Any:
        return await self.store.list_sessions()


async def _measure(name: str, store: SessionStore) -> list[tuple[str, float]]:
    for session in range(SESSIONS):
        entries = [_entry(n, session) for n in range(MESSAGES)]
        await store.append_transcript(f"s{session:03d}", entries)
    catalog = Catalog(sessions(_Host(store)))

    async def search(query: str) -> float:
        async def call() -> Any:
            call_session.set("s000")
            return await catalog.call("sessions_search", {"query": query, "limit": 20})

        started = time.perf_counter()
        await asyncio.create_task(call())
        return (time.perf_counter() - started) * 1000

    first = await search("zebra")
    rare = statistics.median([await search("zebra") for _ in range(ROUNDS)])
    common = statistics.median([await search("quokka canary") for _ in range(ROUNDS)])
    await store.close()
    return [
        (f"{name}: first search", first),
        (f"{name}: rare word (100 hits, 20 returned)", rare),
        (f"{name}: two common words", common),
    ]


async def _all() -> list[tuple[str, float]]:
    rows = await _measure("memory (scan)", MemoryStore())
    with tempfile.TemporaryDirectory() as scratch:
        rows += await _measure("SQLite (FTS5)", SQLiteStore(Path(scratch) / "s.db"))
    dsn = os.environ.get("CLAWCELL_TEST_POSTGRES_DSN")
    if dsn:
        schema = f"bench_{uuid.uuid4().hex[:12]}"
        rows += await _measure("PostgreSQL (text search)", PostgresStore(dsn, schema=schema))
    return rows


def main() -> None:
    """Measure, print the table and write the result files."""
    rows = asyncio.run(_all())
    lines = ["| search | median ms |", "| --- | ---: |"]
    lines += [f"| {name} | {value:.1f} |" for name, value in rows]
    table = "\n".join(lines)
    print(table)
    meta = {
        "python": platform.python_version(),
        "messages": SESSIONS * MESSAGES,
        "rounds": ROUNDS,
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    data = {"meta": meta, "rows": [{"search": n, "median_ms": round(v, 2)} for n, v in rows]}
    (RESULTS / "sessions.json").write_text(json.dumps(data, indent=2) + "\n")
    note = (
        f"{SESSIONS * MESSAGES:,} messages in {SESSIONS} sessions; medians of {ROUNDS} searches "
        f"at a 1-minute load average of {meta['load_average_1m']} on {meta['cpus']} shared cores."
    )
    (RESULTS / "sessions.md").write_text(f"# `sessions_search` benchmark\n\n{note}\n\n{table}\n")


if __name__ == "__main__":
    main()
