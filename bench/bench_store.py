"""Saved-results descriptor and session-store (SQLite) timings.

Run: `.venv/bin/python bench/bench_store.py`. Prints a table of medians and writes
`bench/results/store.json`. A script, not a test: timings never gate anything.

* `describe` of a ~5 MB JSON array of objects: with parsing (what `ResultsStore.save` pays)
  and with the value already parsed.
* SQLite (WAL, `synchronous=NORMAL`, a file in a temporary directory): one-key `apply` (a
  put), `get`, a `SessionView` commit of 10 buffered writes, `save_run`/`load_run`/`delete_run`
  of a 64 KiB snapshot blob, appending a 3-entry batch to a transcript, reading a 300-entry
  transcript, and `put_document` of a 3-file canvas document.

Lease operations and PostgreSQL are measured by `bench_scale_out.py`.
"""

from __future__ import annotations

import asyncio
import json
import platform
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from clawcell._jsjson import dumps, utf8_len
from clawcell.envelope import describe
from clawcell.store import SessionView, SQLiteStore, StoredValue

RESULTS = Path(__file__).parent / "results" / "store.json"


def _median_ms(action: Callable[[], object], repeat: int) -> float:
    samples: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


async def _median_ms_async(action: Callable[[], Awaitable[object]], repeat: int) -> float:
    samples: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        await action()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def bench_descriptor() -> dict[str, Any]:
    rows = [
        {"id": i, "name": f"row {i}", "tags": ["a", "b"], "amount": i * 0.5} for i in range(90_000)
    ]
    text = dumps(rows)
    value = json.loads(text)
    return {
        "describe_5mb_parse_ms": _median_ms(lambda: describe(text), 7),
        "describe_5mb_parsed_ms": _median_ms(lambda: describe(text, value=value), 7),
        "json_bytes": utf8_len(text),
    }


async def bench_sqlite(directory: Path) -> dict[str, Any]:
    async with SQLiteStore(directory / "bench.db") as store:
        counter = iter(range(1_000_000))
        value = StoredValue(json=dumps({"status": "ok", "rows": list(range(50))}))
        await store.apply("s", {"warm": value})

        async def put() -> None:
            await store.apply("s", {f"k{next(counter)}": value})

        async def commit() -> None:
            view = SessionView(store, "c")
            for i in range(10):
                await view.store(f"k{i}", value.json)
            await view.commit()

        blob = bytes(range(256)) * 256

        async def park_and_resume() -> None:
            run_id = f"cm_{next(counter)}"
            await store.save_run("s", run_id, blob, {"deadline": 1.0})
            await store.load_run("s", run_id)
            await store.delete_run("s", run_id)

        turn = [{"role": "user", "text": "hello " * 20}, {"role": "assistant", "text": "hi"}]
        turn.append({"type": "cell", "runId": "cm_1", "status": "completed"})

        async def append() -> None:
            await store.append_transcript("t", turn)

        files = {"index.html": b"<p>x</p>" * 200, "app.js": b"x" * 8000, "app.css": b"p{}"}

        return {
            "sqlite_append_transcript_3_ms": await _median_ms_async(append, 100),
            "sqlite_read_transcript_300_ms": await _median_ms_async(
                lambda: store.read_transcript("t"), 50
            ),
            "sqlite_put_document_3_files_ms": await _median_ms_async(
                lambda: store.put_document("doc", files), 100
            ),
            "sqlite_put_ms": await _median_ms_async(put, 200),
            "sqlite_get_ms": await _median_ms_async(lambda: store.get("s", "warm"), 200),
            "sqlite_view_commit_10_ms": await _median_ms_async(commit, 100),
            "sqlite_save_load_delete_run_64k_ms": await _median_ms_async(park_and_resume, 100),
        }


def main() -> None:
    results: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine()}
    results.update(bench_descriptor())
    with tempfile.TemporaryDirectory() as directory:
        results.update(asyncio.run(bench_sqlite(Path(directory))))
    print(f"{'measure':<36} {'median':>12}")
    for key, number in results.items():
        if key.endswith("_ms"):
            print(f"{key:<36} {number:>9.3f} ms")
    print(f"{'json_bytes':<36} {results['json_bytes']:>12,}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
