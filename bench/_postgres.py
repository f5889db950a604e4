"""What the benchmarks that need PostgreSQL share: the test database's address (or a
throwaway cluster when none is set), schemas dropped after use, two store objects per backend
standing for two workers, and the p50/p99 latency rows they report. Not a benchmark itself.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from clawcell.store import PostgresStore, SessionStore, SQLiteStore

DSN_VARIABLE = "CLAWCELL_TEST_POSTGRES_DSN"
PG_TEST_ENV = Path(__file__).resolve().parents[1] / "scripts" / "pg-test-env"

StoreMakers = dict[str, Callable[[], SessionStore]]


def postgres_dsn_or_rerun(script: str) -> str:
    """The database address to measure on. Without one, `script` runs again under
    `scripts/pg-test-env` (a throwaway local cluster, same arguments) and this process exits
    with its status."""
    dsn = os.environ.get(DSN_VARIABLE)
    if dsn:
        return dsn
    done = subprocess.run([str(PG_TEST_ENV), sys.executable, script, *sys.argv[1:]], check=False)
    raise SystemExit(done.returncode)


def drop_schema(dsn: str, schema: str) -> None:
    """Removes a schema a benchmark made, with everything in it."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def on_both_backends(
    dsn: str, bench: Callable[[StoreMakers], Coroutine[Any, Any, dict[str, Any]]]
) -> dict[str, Any]:
    """Runs `bench` with a maker of store objects per backend: each call makes another
    object on one SQLite file or one fresh PostgreSQL schema (another "worker")."""
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "bench.db"
        makers: StoreMakers = {
            "sqlite": lambda: SQLiteStore(path),
            "postgres": lambda: PostgresStore(dsn, schema=schema, max_size=4),
        }
        try:
            return asyncio.run(bench(makers))
        finally:
            drop_schema(dsn, schema)


def latency_stats(seconds: list[float]) -> dict[str, float]:
    """The count, median and 99th percentile (nearest rank) of samples, in milliseconds."""
    ordered = sorted(seconds)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p99_ms": round(p99 * 1000, 2),
    }


def backends_table(results: dict[str, Any], rows: list[tuple[str, str]]) -> str:
    """A markdown table of p50/p99 per operation on both backends, printed and returned;
    `rows` pairs each label with its key in `results[backend]`."""
    lines = [
        "| operation | SQLite p50 | p99 | PostgreSQL p50 | p99 |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for label, key in rows:
        s, p = results["sqlite"][key], results["postgres"][key]
        lines.append(
            f"| {label} | {s['p50_ms']} ms | {s['p99_ms']} ms | {p['p50_ms']} ms "
            f"| {p['p99_ms']} ms |"
        )
    table = "\n".join(lines)
    print(table)
    return table
